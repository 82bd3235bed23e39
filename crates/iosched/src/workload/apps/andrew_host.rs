//! The whole Andrew benchmark on the simulated host (Iyer & Druschel 2001, section 4.3): each
//! of k clients runs five phases one after another on its own repository of n directories:
//! (a) mkdir: the n directories; (b) cp: the standard set of 71 C files copied into each;
//! (c) stat: every directory listed with every entry stat()ed (`ls -l`); (d) scan: grep, then
//! wc, over each directory, each a new process; (e) gcc: each file compiled (read, CPU, an
//! object written), then each directory's objects linked.
//!
//! The source set lives in /src (created before the run, its sizes drawn as in
//! [`super::andrew`]); repositories are /client{c}/d{NNN}. Computation (assumptions, on the
//! paper's 550 MHz Pentium III): fork + exec and open as in the scan-only model, grep and wc
//! per KiB read, gcc per KiB of source, an object a third of its source's size.

use super::andrew::AndrewConfig;
use super::normal_quantile;
use crate::host::fs::{Tree, ROOT_INO};
use crate::host::kernel::{Start, TaskDef};
use crate::host::syscall::{Program, Syscall, WriteMode};
use crate::host::Ino;
use crate::time::Nanos;
use crate::workload::commands::{read_file, CopyFile};
use rand::Rng;
use rand_pcg::Pcg64;
use std::collections::VecDeque;

/// The phases, in order; a task per client and phase is named `{phase}{client}`.
pub const PHASES: [&str; 5] = ["mkdir", "cp", "stat", "scan", "gcc"];

#[derive(Clone, Debug, PartialEq)]
pub struct AndrewHostConfig {
    pub base: AndrewConfig,
    /// gcc's computation per KiB of source (assumption, kept small so the phase does not
    /// dominate the run's length: the verdict is on the scan phase).
    pub gcc_ns_per_kib: f64,
    /// The linker's computation per object (assumption).
    pub link_ns_per_object: Nanos,
    /// The phases run, in order (a subset of [`PHASES`]); the repositories a skipped mkdir
    /// or cp would have made exist at the start.
    pub phases: Vec<String>,
}

impl Default for AndrewHostConfig {
    fn default() -> Self {
        AndrewHostConfig {
            base: AndrewConfig::default(),
            gcc_ns_per_kib: 2_000_000.0,
            link_ns_per_object: 1_000_000,
            phases: PHASES.iter().map(|p| p.to_string()).collect(),
        }
    }
}

/// The source set: /src/f00..f70 with the scan-only model's sizes.
fn sources(cfg: &AndrewConfig, tree: &mut Tree, rng: &mut Pcg64) -> Result<Vec<Ino>, String> {
    let mu = cfg.file_mean_bytes.ln() - cfg.file_size_sigma * cfg.file_size_sigma / 2.0;
    (0..cfg.files_per_dir)
        .map(|f| {
            let size = (mu + cfg.file_size_sigma * normal_quantile(rng.gen::<f64>())).exp().round().max(1.0) as u64;
            tree.add_file(&format!("/src/f{f:02}.c"), size)
        })
        .collect()
}

fn dir_name(d: u32) -> String {
    format!("d{d:03}")
}

/// The directory `/client{c}/dNNN`, once it exists.
fn repo_dir(tree: &Tree, client: u32, d: u32) -> Option<Ino> {
    let top = tree.child(ROOT_INO, &format!("client{client}"))?;
    tree.child(top, &dir_name(d))
}

/// One phase of one client, a directory at a time.
struct Phase {
    phase: &'static str,
    client: u32,
    cfg: AndrewHostConfig,
    srcs: Vec<Ino>,
    next_dir: u32,
    /// mkdir: the client's top directory is made first.
    started: bool,
    /// Pieces run inline by this process (cp's copies of one directory).
    inline: VecDeque<CopyFile>,
}

impl Program for Phase {
    fn next(&mut self, tree: &Tree, rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        while let Some(c) = self.inline.front_mut() {
            if c.next(tree, rng, out) {
                return true;
            }
            self.inline.pop_front();
        }
        let b = &self.cfg.base;
        if self.phase == "mkdir" && !self.started {
            self.started = true;
            out.push_back(Syscall::Compute(b.exec_ns));
            out.push_back(Syscall::Create { parent: ROOT_INO, name: format!("client{}", self.client), dir: true });
            return true;
        }
        if self.next_dir >= b.directories {
            return false;
        }
        let d = self.next_dir;
        self.next_dir += 1;
        let top = tree.child(ROOT_INO, &format!("client{}", self.client));
        match self.phase {
            "mkdir" => {
                let Some(top) = top else { return false };
                out.push_back(Syscall::Create { parent: top, name: dir_name(d), dir: true });
            }
            "cp" => {
                let Some(dir) = repo_dir(tree, self.client, d) else { return true };
                // cp of the 71 files: each source opened and read, the copy created and written.
                out.push_back(Syscall::Compute(b.exec_ns));
                for (f, &src) in self.srcs.iter().enumerate() {
                    self.inline.push_back(CopyFile::new(src, dir, format!("f{f:02}.c"), b.read_bytes, b.open_ns));
                }
            }
            "stat" => {
                let Some(dir) = repo_dir(tree, self.client, d) else { return true };
                out.push_back(Syscall::Compute(b.exec_ns));
                out.push_back(Syscall::Readdir(dir));
                for &c in tree.children(dir) {
                    out.push_back(Syscall::Lookup(c));
                }
            }
            "scan" => {
                let Some(dir) = repo_dir(tree, self.client, d) else { return true };
                for (tool, per_kib) in [("grep", b.grep_ns_per_kib), ("wc", b.wc_ns_per_kib)] {
                    let mut calls = vec![Syscall::Compute(b.exec_ns), Syscall::Readdir(dir)];
                    let mut q = VecDeque::new();
                    for &c in tree.children(dir) {
                        if !tree.is_dir(c) && tree.name(c).ends_with(".c") {
                            q.push_back(Syscall::Compute(b.open_ns));
                            read_file(tree, c, b.read_bytes, false, per_kib, &mut q);
                        }
                    }
                    calls.extend(q);
                    out.push_back(Syscall::Spawn {
                        name: format!("{tool}{}.{d}", self.client),
                        program: Box::new(crate::host::syscall::Script(calls)),
                        wait: true,
                    });
                }
            }
            _ => {
                // gcc: each file compiled to an object, then the directory's objects linked.
                let Some(dir) = repo_dir(tree, self.client, d) else { return true };
                let sources: Vec<Ino> = tree.children(dir).iter().copied().filter(|&c| tree.name(c).ends_with(".c")).collect();
                for src in sources {
                    out.push_back(Syscall::Spawn {
                        name: "cc".into(),
                        program: Box::new(Compile { dir, src, cfg: self.cfg.clone(), step: 0 }),
                        wait: true,
                    });
                }
                out.push_back(Syscall::Spawn {
                    name: "ld".into(),
                    program: Box::new(Link { dir, cfg: self.cfg.clone(), step: 0 }),
                    wait: true,
                });
            }
        }
        true
    }
}

struct Compile {
    dir: Ino,
    src: Ino,
    cfg: AndrewHostConfig,
    step: u8,
}

impl Program for Compile {
    fn next(&mut self, tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        let obj = format!("{}.o", tree.name(self.src).trim_end_matches(".c"));
        match self.step {
            0 => {
                self.step = 1;
                out.push_back(Syscall::Compute(self.cfg.base.exec_ns));
                read_file(tree, self.src, self.cfg.base.read_bytes, false, self.cfg.gcc_ns_per_kib, out);
                out.push_back(Syscall::Create { parent: self.dir, name: obj, dir: false });
                true
            }
            1 => {
                self.step = 2;
                let Some(o) = tree.child(self.dir, &obj) else { return false };
                let len = (tree.size(self.src) / 3).max(1);
                out.push_back(Syscall::Write { ino: o, off: 0, len, mode: WriteMode::Buffered });
                true
            }
            _ => false,
        }
    }
}

struct Link {
    dir: Ino,
    cfg: AndrewHostConfig,
    step: u8,
}

impl Program for Link {
    fn next(&mut self, tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        match self.step {
            0 => {
                self.step = 1;
                out.push_back(Syscall::Compute(self.cfg.base.exec_ns));
                let objs: Vec<Ino> = tree.children(self.dir).iter().copied().filter(|&c| tree.name(c).ends_with(".o")).collect();
                for &o in &objs {
                    read_file(tree, o, self.cfg.base.read_bytes, false, 0.0, out);
                    out.push_back(Syscall::Compute(self.cfg.link_ns_per_object));
                }
                out.push_back(Syscall::Create { parent: self.dir, name: "a.out".into(), dir: false });
                true
            }
            1 => {
                self.step = 2;
                let Some(a) = tree.child(self.dir, "a.out") else { return false };
                let bytes: u64 = tree.children(self.dir).iter().filter(|&&c| tree.name(c).ends_with(".o")).map(|&c| tree.size(c)).sum();
                out.push_back(Syscall::Write { ino: a, off: 0, len: bytes.max(1), mode: WriteMode::Buffered });
                true
            }
            _ => false,
        }
    }
}

/// The source set in `tree`, and per client its five phases as tasks chained one after
/// another (task index `client * 5 + phase`).
pub fn build(cfg: &AndrewHostConfig, tree: &mut Tree, rng: &mut Pcg64) -> Result<Vec<TaskDef>, String> {
    let srcs = sources(&cfg.base, tree, rng)?;
    let runs = |p: &str| cfg.phases.iter().any(|q| q == p);
    // What skipped phases would have made: the directories (mkdir), their files (cp).
    if !runs("mkdir") || !runs("cp") {
        for c in 1..=cfg.base.clients {
            for d in 0..cfg.base.directories {
                let dir = format!("/client{c}/{}", dir_name(d));
                tree.make_dirs(&dir)?;
                if !runs("cp") {
                    for (f, &src) in srcs.iter().enumerate() {
                        tree.add_file(&format!("{dir}/f{f:02}.c"), tree.size(src))?;
                    }
                }
            }
        }
    }
    let mut defs = Vec::new();
    for c in 1..=cfg.base.clients {
        let mut first = true;
        for &phase in PHASES.iter().filter(|p| runs(p)) {
            let index = defs.len();
            let p = if first { 0 } else { 1 };
            first = false;
            defs.push(TaskDef {
                name: format!("{phase}{c}"),
                program: Box::new(Phase {
                    phase,
                    client: c,
                    cfg: cfg.clone(),
                    srcs: srcs.clone(),
                    next_dir: 0,
                    started: false,
                    inline: VecDeque::new(),
                }),
                start: if p == 0 { Start::At(cfg.base.start_ns) } else { Start::After { index: index - 1, delay_ns: 0 } },
                prio: Default::default(),
                weight: 1,
                ends_run: false,
            });
        }
    }
    Ok(defs)
}
