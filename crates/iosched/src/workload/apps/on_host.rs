//! Iyer & Druschel's applications on the simulated host: the same programs (their access
//! patterns and computation) as system calls against the host's page cache, FreeBSD read path,
//! FFS layout with metadata, and shared CPU, instead of the workload's own kernel model.
//!
//! The translation of a program's steps:
//! - a read() or page-fault access at offset 0, or a process's first access to a file, is
//!   preceded by the open() (a path lookup: directory and inode blocks when not cached);
//! - `Read` / `Fault` become the host's read() / mapping copy; `Compute` runs on the CPUs;
//! - `DelayedWrite` becomes a buffered write() (the host's writeback decides when it reaches
//!   the disk, as FreeBSD's syncer does);
//! - Apache's processes append a line to the access log at each request (`log`).
//!
//! Where the files lie: each file goes in a directory of the host's tree chosen by the
//! application (`AppFiles::dir_of`), named so that the order of names (the order the file
//! system allocates them in) is the order the workload's own model placed them on the disk;
//! the host's allocator then lays them out.

use super::{File, ProcDef, Program as AppProgram, Step};
use crate::host::fs::Tree;
use crate::host::kernel::{Start, TaskDef};
use crate::host::syscall::{Program, Syscall, WriteMode};
use crate::host::Ino;
use rand_pcg::Pcg64;
use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};

/// The files of an application placed in a tree: `inos[i]` is file i's inode.
pub struct AppFiles {
    pub inos: Arc<Vec<Ino>>,
}

/// Adds `files` to `tree`, file i in directory `dir_of(i)` (an absolute path), named so that
/// within a directory the name order is the order of the files' start sectors.
pub fn place(tree: &mut Tree, files: &[File], dir_of: impl Fn(usize) -> String) -> Result<AppFiles, String> {
    let mut by_dir: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for i in 0..files.len() {
        by_dir.entry(dir_of(i)).or_default().push(i);
    }
    let mut inos = vec![0; files.len()];
    for (dir, mut members) in by_dir {
        members.sort_by_key(|&i| (files[i].start_sector, i));
        for (rank, &i) in members.iter().enumerate() {
            let path = format!("{}/f{rank:06}", dir.trim_end_matches('/'));
            inos[i] = tree.add_file(&path, files[i].bytes)?;
        }
    }
    Ok(AppFiles { inos: Arc::new(inos) })
}

/// An access log shared by the processes that append to it.
#[derive(Clone)]
pub struct AccessLog {
    pub ino: Ino,
    pub line_bytes: u64,
    pub end: Arc<Mutex<u64>>,
}

/// One application process's program, as system calls.
pub struct Translated {
    inner: Box<dyn AppProgram>,
    inos: Arc<Vec<Ino>>,
    opened: BTreeSet<u32>,
    log: Option<AccessLog>,
    steps: VecDeque<Step>,
}

impl Translated {
    pub fn new(inner: Box<dyn AppProgram>, files: &AppFiles, log: Option<AccessLog>) -> Self {
        Translated { inner, inos: files.inos.clone(), opened: BTreeSet::new(), log, steps: VecDeque::new() }
    }

    fn open(&mut self, file: u32, off: u64, out: &mut VecDeque<Syscall>) -> Ino {
        let ino = self.inos[file as usize];
        if self.opened.insert(file) || off == 0 {
            out.push_back(Syscall::Lookup(ino));
            if let Some(log) = &self.log {
                let mut end = log.end.lock().expect("the log's offset is not poisoned");
                out.push_back(Syscall::Write { ino: log.ino, off: *end, len: log.line_bytes, mode: WriteMode::Buffered });
                *end += log.line_bytes;
            }
        }
        ino
    }
}

impl Program for Translated {
    fn next(&mut self, _tree: &Tree, rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        if self.steps.is_empty() && (!self.inner.refill(rng, &mut self.steps) || self.steps.is_empty()) {
            return false;
        }
        while let Some(step) = self.steps.pop_front() {
            match step {
                Step::Read { file, off, len } => {
                    let ino = self.open(file, off, out);
                    out.push_back(Syscall::Read { ino, off, len });
                }
                Step::Fault { file, off, len } => {
                    let ino = self.open(file, off, out);
                    out.push_back(Syscall::Fault { ino, off, len });
                }
                Step::Compute(ns) => out.push_back(Syscall::Compute(ns)),
                Step::DelayedWrite { file, off, len, .. } => {
                    let ino = self.inos[file as usize];
                    out.push_back(Syscall::Write { ino, off, len, mode: WriteMode::Buffered });
                }
            }
        }
        true
    }
}

/// The application's processes as host tasks (a process started by another's exit keeps that
/// order).
pub fn tasks(defs: Vec<ProcDef>, files: &AppFiles, log: Option<AccessLog>) -> Vec<TaskDef> {
    let mut after: Vec<Option<usize>> = vec![None; defs.len()];
    for (i, d) in defs.iter().enumerate() {
        if let Some(n) = d.next {
            after[n] = Some(i);
        }
    }
    defs.into_iter()
        .enumerate()
        .map(|(i, d)| TaskDef {
            name: d.name,
            program: Box::new(Translated::new(d.program, files, log.clone())),
            start: match (d.start_ns, after[i]) {
                (Some(t), _) => Start::At(t),
                (None, Some(p)) => Start::After { index: p, delay_ns: 0 },
                (None, None) => Start::At(0),
            },
            prio: Default::default(),
            weight: d.weight,
            ends_run: false,
        })
        .collect()
}
