//! `make` and `git-checkout`: the code-development tasks of the S suite's kern_dev_tasks_vs_rw
//! (Valente 2014, section 7.5), by mechanism on a host tree rather than on a Linux clone.
//!
//! [`Make`] (`make -j5`): `jobs` job slots (sub-shells of make), each starting one compiler
//! process after another (each its own pid) on the next source file in `find` order of the
//! source tree: fork + exec, open and read the source whole, open and read `headers_per_file`
//! headers picked at random from the header tree (the page cache keeps them after their first
//! read, so most are hits), compute (`cpu_ms`), create `NAME.o` beside the source and write
//! it (buffered, `obj_ratio` times the source's size). Progress: `compiled` (every file) and
//! `compiled_in_window` (files finished in `[warmup, warmup + window)` after the task
//! started: S counts make's output lines over its test after waiting for the compilation
//! proper to begin).
//!
//! [`GitCheckout`]: one `git` process writing a working tree from its objects: for every
//! object file of the objects tree, in `find` order, open and read it whole, inflate it
//! (`inflate_us_per_kib` of CPU per KiB of output), and write the file (`inflate_ratio` times
//! the object's size) into the same place of the working tree under `to` (directories created
//! as met). Progress: `files_total`, `files_done`, `done_in_window`; S reports the percentage
//! of "Checking out files" done during its test.

use crate::host::fs::Tree;
use crate::host::syscall::{Clock, Program, ReportItem, Syscall, WriteMode};
use crate::host::Ino;
use crate::time::Nanos;
use rand::Rng;
use rand_pcg::Pcg64;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// The progress window, relative to the task's start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub warmup_ns: Nanos,
    pub window_ns: Nanos,
}

impl Window {
    fn contains(&self, start: Nanos, now: Nanos) -> bool {
        let from = start + self.warmup_ns;
        now >= from && now - from < self.window_ns
    }
}

/// Regular files below `root`, in `find`'s order (pre-order, names in order).
pub fn files_below(tree: &Tree, root: Ino) -> Vec<Ino> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for &c in tree.children(d) {
            if !tree.is_dir(c) {
                out.push(c);
            }
        }
        for &c in tree.children(d).iter().rev() {
            if tree.is_dir(c) {
                stack.push(c);
            }
        }
    }
    out
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MakeConfig {
    pub jobs: u32,
    pub headers_per_file: u32,
    pub cpu_ns: Nanos,
    pub exec_ns: Nanos,
    pub obj_ratio: f64,
    pub window: Window,
}

struct MakeShared {
    sources: Mutex<VecDeque<Ino>>,
    headers: Vec<Ino>,
    start: Clock,
    cfg: MakeConfig,
}

/// make itself: starts the job slots and waits for them.
pub struct Make {
    shared: Arc<MakeShared>,
    step: u8,
}

impl Make {
    pub fn new(sources: Vec<Ino>, headers: Vec<Ino>, cfg: MakeConfig) -> Self {
        Make { shared: Arc::new(MakeShared { sources: Mutex::new(sources.into()), headers, start: Clock::default(), cfg }), step: 0 }
    }
}

impl Program for Make {
    fn next(&mut self, _tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        if self.step > 0 {
            return false;
        }
        self.step = 1;
        out.push_back(Syscall::Now(self.shared.start.clone()));
        for j in 0..self.shared.cfg.jobs {
            out.push_back(Syscall::Spawn { name: format!("make-job{j}"), program: Box::new(JobSlot(self.shared.clone())), wait: false });
        }
        out.push_back(Syscall::WaitChildren);
        true
    }
}

/// One of make's job slots: compiles the next file, waits, again.
struct JobSlot(Arc<MakeShared>);

impl Program for JobSlot {
    fn next(&mut self, _tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        let Some(src) = self.0.sources.lock().expect("not poisoned").pop_front() else {
            return false;
        };
        out.push_back(Syscall::Spawn {
            name: "cc".into(),
            program: Box::new(Compile { src, shared: self.0.clone(), step: 0, clock: Clock::default() }),
            wait: true,
        });
        true
    }
}

/// One compiler process.
struct Compile {
    src: Ino,
    shared: Arc<MakeShared>,
    step: u8,
    clock: Clock,
}

impl Compile {
    fn object_name(tree: &Tree, src: Ino) -> String {
        format!("{}.o", tree.name(src))
    }
}

impl Program for Compile {
    fn next(&mut self, tree: &Tree, rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        let cfg = self.shared.cfg;
        let Some(dir) = tree.parent(self.src) else {
            return false;
        };
        match self.step {
            0 => {
                if cfg.exec_ns > 0 {
                    out.push_back(Syscall::Compute(cfg.exec_ns));
                }
                super::commands::read_file(tree, self.src, tree.size(self.src).max(1), false, 0.0, out);
                let h = &self.shared.headers;
                if !h.is_empty() {
                    for _ in 0..cfg.headers_per_file {
                        let ino = h[rng.gen_range(0..h.len())];
                        super::commands::read_file(tree, ino, tree.size(ino).max(1), false, 0.0, out);
                    }
                }
                if cfg.cpu_ns > 0 {
                    out.push_back(Syscall::Compute(cfg.cpu_ns));
                }
                out.push_back(Syscall::Create { parent: dir, name: Self::object_name(tree, self.src), dir: false });
                self.step = 1;
                true
            }
            1 => {
                self.step = 2;
                if let Some(obj) = tree.child(dir, &Self::object_name(tree, self.src)) {
                    let len = ((tree.size(self.src) as f64 * cfg.obj_ratio) as u64).max(1);
                    out.push_back(Syscall::Write { ino: obj, off: 0, len, mode: WriteMode::Buffered });
                }
                out.push_back(Syscall::Now(self.clock.clone()));
                true
            }
            2 => {
                self.step = 3;
                out.push_back(Syscall::Report(ReportItem::Count("compiled", 1)));
                let start = self.shared.start.load(Ordering::Relaxed);
                if cfg.window.contains(start, self.clock.load(Ordering::Relaxed)) {
                    out.push_back(Syscall::Report(ReportItem::Count("compiled_in_window", 1)));
                }
                true
            }
            _ => false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CheckoutConfig {
    pub inflate_ratio: f64,
    pub inflate_ns_per_kib: f64,
    pub bs_bytes: u64,
    pub window: Window,
}

/// `git checkout`: objects read and inflated, the working tree written.
pub struct GitCheckout {
    cfg: CheckoutConfig,
    /// Directories still to check out: (objects directory, destination parent, name).
    pending: Vec<(Ino, Ino, String)>,
    /// The destination directory just created (its objects come next).
    created: Option<(Ino, Ino, String)>,
    /// The objects of the current directory, and where they go.
    files: VecDeque<Ino>,
    dest: Ino,
    /// The file just created, to be written.
    writing: Option<Ino>,
    clock: Clock,
    start: Option<Nanos>,
    total: u64,
    judged: bool,
}

impl GitCheckout {
    pub fn new(objects: Ino, dst_parent: Ino, dst_name: String, total: u64, cfg: CheckoutConfig) -> Self {
        GitCheckout {
            cfg,
            pending: vec![(objects, dst_parent, dst_name)],
            created: None,
            files: VecDeque::new(),
            dest: dst_parent,
            writing: None,
            clock: Clock::default(),
            start: None,
            total,
            judged: true,
        }
    }
}

impl Program for GitCheckout {
    fn next(&mut self, tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        if self.start.is_none() {
            // The first turn: the time the checkout starts.
            if !self.judged {
                self.start = Some(self.clock.load(Ordering::Relaxed));
                self.judged = true;
            } else {
                self.judged = false;
                out.push_back(Syscall::Report(ReportItem::Count("files_total", self.total)));
                out.push_back(Syscall::Now(self.clock.clone()));
                return true;
            }
        }
        if !self.judged {
            // A file has just been written.
            self.judged = true;
            out.push_back(Syscall::Report(ReportItem::Count("files_done", 1)));
            if self.cfg.window.contains(self.start.unwrap_or(0), self.clock.load(Ordering::Relaxed)) {
                out.push_back(Syscall::Report(ReportItem::Count("done_in_window", 1)));
            }
        }
        if let Some(obj) = self.writing.take() {
            let name = tree.name(obj).to_string();
            if let Some(f) = tree.child(self.dest, &name) {
                let len = ((tree.size(obj) as f64 * self.cfg.inflate_ratio) as u64).max(1);
                let bs = self.cfg.bs_bytes.max(1);
                let mut off = 0;
                while off < len {
                    let n = bs.min(len - off);
                    out.push_back(Syscall::Write { ino: f, off, len: n, mode: WriteMode::Buffered });
                    off += n;
                }
            }
            out.push_back(Syscall::Now(self.clock.clone()));
            self.judged = false;
            return true;
        }
        if let Some(obj) = self.files.pop_front() {
            super::commands::read_file(tree, obj, self.cfg.bs_bytes, false, 0.0, out);
            let kib = tree.size(obj) as f64 * self.cfg.inflate_ratio / 1024.0;
            let ns = (kib * self.cfg.inflate_ns_per_kib).round() as Nanos;
            if ns > 0 {
                out.push_back(Syscall::Compute(ns));
            }
            out.push_back(Syscall::Create { parent: self.dest, name: tree.name(obj).to_string(), dir: false });
            self.writing = Some(obj);
            return true;
        }
        if let Some((src, parent, name)) = self.created.take() {
            if let Some(dst) = tree.child(parent, &name) {
                self.dest = dst;
                out.push_back(Syscall::Readdir(src));
                for &c in tree.children(src).iter().rev() {
                    if tree.is_dir(c) {
                        self.pending.push((c, dst, tree.name(c).to_string()));
                    }
                }
                self.files = tree.children(src).iter().copied().filter(|&c| !tree.is_dir(c)).collect();
                return true;
            }
        }
        let Some((src, parent, name)) = self.pending.pop() else {
            return false;
        };
        out.push_back(Syscall::Create { parent, name: name.clone(), dir: true });
        self.created = Some((src, parent, name));
        true
    }
}
