//! FFSB (the Flexible File System Benchmark) as a host program: one process whose threads
//! each run a number of operations, every operation picked by weight and applied to a random
//! file of the thread's directories (Seelam et al. 2005, section 5.1: four threads, 20,000
//! operations each, on files in different directories).
//!
//! Operations, as FFSB's (ffsb's `read`/`readall`, `write`, `create`, `append`, `delete`):
//!
//! - read: open, then the whole file in `read_bs`-byte read()s (FFSB's readall).
//! - write: open, then `write_bytes` overwritten at a random `write_bs`-aligned offset inside
//!   the file (the whole file when it is smaller), in `write_bs`-byte buffered write()s.
//! - create: a new file (a fresh name) in a random directory of the thread's, its size drawn
//!   uniformly from `[min_bytes, max_bytes]`, written from 0 in `write_bs` pieces.
//! - append: open, then `append_bytes` written at the file's end.
//! - delete: unlink of a random file.
//!
//! With `fsync`, every write, create and append ends with an fsync() of the file. The file is
//! picked uniformly among the files of the thread's directories as they are when the operation
//! starts (files created by the thread included, deleted ones gone); an operation that finds
//! no file counts as done and does nothing. Every random choice comes from the thread's own
//! stream (the task's seeded PCG), and a thread only sees its own directories, so a thread's
//! sequence of operations is the same whatever the scheduler does.
//!
//! Threads: each is a task of its own (a pid of its own for the I/O scheduler), in the
//! process's group. In Linux 2.6.9 every task has its own io_context (allocated per task by
//! get_io_context; CLONE_IO, to share one between threads, came in 2.6.25), so the
//! anticipatory scheduler keeps think-time and seek statistics per thread.

use crate::host::fs::Tree;
use crate::host::syscall::{Program, Syscall, WriteMode};
use crate::host::Ino;
use rand::Rng;
use rand_pcg::Pcg64;
use std::collections::VecDeque;
use std::sync::Arc;

/// FFSB's operations, in the order of [`FfsbConfig::weights`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FfsbOp {
    Read,
    Write,
    Create,
    Append,
    Delete,
}

pub const FFSB_OPS: [FfsbOp; 5] = [FfsbOp::Read, FfsbOp::Write, FfsbOp::Create, FfsbOp::Append, FfsbOp::Delete];

/// One FFSB run's parameters (the files exist already: built with the tree).
#[derive(Clone, Debug, PartialEq)]
pub struct FfsbConfig {
    pub threads: u32,
    pub ops_per_thread: u64,
    /// Weights of read, write, create, append, delete (not all 0).
    pub weights: [u32; 5],
    pub read_bs: u64,
    pub write_bs: u64,
    pub write_bytes: u64,
    pub append_bytes: u64,
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub fsync: bool,
}

impl FfsbConfig {
    /// The operation for a draw in `0..total weight`.
    fn op_of(&self, mut x: u32) -> FfsbOp {
        for (op, &w) in FFSB_OPS.iter().zip(&self.weights) {
            if x < w {
                return *op;
            }
            x -= w;
        }
        FfsbOp::Read
    }

    fn total_weight(&self) -> u32 {
        self.weights.iter().fold(0u32, |s, &w| s.saturating_add(w))
    }
}

/// The FFSB process: spawns its threads, each with its share of the directories (contiguous
/// blocks: thread i has directories `[i * d / n, (i + 1) * d / n)`), and waits for them.
pub struct Ffsb {
    cfg: Arc<FfsbConfig>,
    dirs: Vec<Ino>,
    started: bool,
}

impl Ffsb {
    pub fn new(cfg: FfsbConfig, dirs: Vec<Ino>) -> Self {
        Ffsb { cfg: Arc::new(cfg), dirs, started: false }
    }
}

impl Program for Ffsb {
    fn next(&mut self, _tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        if self.started {
            return false;
        }
        self.started = true;
        let n = self.cfg.threads.max(1) as usize;
        let d = self.dirs.len();
        for i in 0..n {
            let mine = self.dirs[i * d / n..(i + 1) * d / n].to_vec();
            out.push_back(Syscall::Spawn {
                name: format!("thread{i}"),
                program: Box::new(FfsbThread::new(i as u32, self.cfg.clone(), mine)),
                wait: false,
            });
        }
        out.push_back(Syscall::WaitChildren);
        true
    }
}

/// One FFSB thread: `ops_per_thread` operations on the files of `dirs`.
pub struct FfsbThread {
    id: u32,
    cfg: Arc<FfsbConfig>,
    dirs: Vec<Ino>,
    done: u64,
    created: u64,
    /// A file just created, to be written next: (directory, name, size).
    pending: Option<(Ino, String, u64)>,
    /// Operations run, by kind (read, write, create, append, delete), and those that found no
    /// file.
    pub counts: [u64; 5],
    pub empty: u64,
}

impl FfsbThread {
    pub fn new(id: u32, cfg: Arc<FfsbConfig>, dirs: Vec<Ino>) -> Self {
        FfsbThread { id, cfg, dirs, done: 0, created: 0, pending: None, counts: [0; 5], empty: 0 }
    }

    /// A file uniformly among the regular files of the thread's directories: an entry drawn
    /// uniformly among all their entries, and if it is a directory (FFSB's directories hold
    /// none, but a tree may), a second draw among the files only (each file then has the same
    /// chance, 1/files, overall).
    fn pick_file(&self, tree: &Tree, rng: &mut Pcg64) -> Option<Ino> {
        let total: usize = self.dirs.iter().map(|&d| tree.children(d).len()).sum();
        if total == 0 {
            return None;
        }
        let mut k = rng.gen_range(0..total);
        for &d in &self.dirs {
            let ch = tree.children(d);
            if k < ch.len() {
                if !tree.is_dir(ch[k]) {
                    return Some(ch[k]);
                }
                break;
            }
            k -= ch.len();
        }
        let files: Vec<Ino> = self.dirs.iter().flat_map(|&d| tree.children(d).iter().copied()).filter(|&c| !tree.is_dir(c)).collect();
        if files.is_empty() {
            return None;
        }
        Some(files[rng.gen_range(0..files.len())])
    }

    /// Buffered writes of `[off, off + len)` in `write_bs` pieces, then fsync if asked.
    fn writes(&self, ino: Ino, off: u64, len: u64, out: &mut VecDeque<Syscall>) {
        let bs = self.cfg.write_bs.max(1);
        let mut at = off;
        let end = off.saturating_add(len);
        while at < end {
            let n = bs.min(end - at);
            out.push_back(Syscall::Write { ino, off: at, len: n, mode: WriteMode::Buffered });
            at += n;
        }
        if self.cfg.fsync {
            out.push_back(Syscall::Fsync(ino));
        }
    }

    /// The calls of one operation; false if it found no file (nothing pushed).
    fn op(&mut self, op: FfsbOp, tree: &Tree, rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        match op {
            FfsbOp::Create => {
                if self.dirs.is_empty() {
                    return false;
                }
                let dir = self.dirs[rng.gen_range(0..self.dirs.len())];
                let size = rng.gen_range(self.cfg.min_bytes..=self.cfg.max_bytes.max(self.cfg.min_bytes));
                let name = format!("t{}-{}", self.id, self.created);
                self.created += 1;
                out.push_back(Syscall::Create { parent: dir, name: name.clone(), dir: false });
                self.pending = Some((dir, name, size));
                true
            }
            _ => {
                let Some(f) = self.pick_file(tree, rng) else {
                    return false;
                };
                let size = tree.size(f);
                match op {
                    FfsbOp::Read => crate::workload::commands::read_file(tree, f, self.cfg.read_bs, false, 0.0, out),
                    FfsbOp::Write => {
                        out.push_back(Syscall::Lookup(f));
                        let len = if size == 0 { self.cfg.write_bytes } else { self.cfg.write_bytes.min(size) };
                        let bs = self.cfg.write_bs.max(1);
                        let slots = size.saturating_sub(len) / bs;
                        let off = if slots > 0 { rng.gen_range(0..=slots) * bs } else { 0 };
                        self.writes(f, off, len, out);
                    }
                    FfsbOp::Append => {
                        out.push_back(Syscall::Lookup(f));
                        self.writes(f, size, self.cfg.append_bytes, out);
                    }
                    _ => out.push_back(Syscall::Unlink(f)),
                }
                true
            }
        }
    }
}

impl Program for FfsbThread {
    fn next(&mut self, tree: &Tree, rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        if let Some((dir, name, size)) = self.pending.take() {
            // The file exists now (unless the file system was full: then nothing to write).
            if let Some(f) = tree.child(dir, &name) {
                if size > 0 {
                    self.writes(f, 0, size, out);
                    return true;
                }
            }
        }
        let total = self.cfg.total_weight();
        while self.done < self.cfg.ops_per_thread && total > 0 {
            self.done += 1;
            let op = self.cfg.op_of(rng.gen_range(0..total));
            let k = FFSB_OPS.iter().position(|&o| o == op).unwrap_or(0);
            self.counts[k] += 1;
            if self.op(op, tree, rng, out) {
                return true;
            }
            self.empty += 1;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::fs::Kind;

    fn cfg(weights: [u32; 5]) -> FfsbConfig {
        FfsbConfig {
            threads: 2,
            ops_per_thread: 200,
            weights,
            read_bs: 4096,
            write_bs: 4096,
            write_bytes: 4096,
            append_bytes: 4096,
            min_bytes: 4096,
            max_bytes: 65536,
            fsync: false,
        }
    }

    fn tree() -> (Tree, Vec<Ino>) {
        let mut t = Tree::new();
        let mut dirs = Vec::new();
        for d in 0..4 {
            let dir = t.make_dirs(&format!("/ffsb/d{d}")).unwrap();
            for f in 0..10 {
                t.add(dir, &format!("f{f}"), Kind::File, 8192).unwrap();
            }
            dirs.push(dir);
        }
        (t, dirs)
    }

    /// The calls a thread makes, with the tree left unchanged (a description, not a run).
    fn trace(seed: u64, weights: [u32; 5]) -> (Vec<String>, [u64; 5]) {
        let (t, dirs) = tree();
        let mut th = FfsbThread::new(0, Arc::new(cfg(weights)), dirs[..2].to_vec());
        let mut rng = crate::workload::rng_stream(seed, 7);
        let mut out = VecDeque::new();
        let mut v = Vec::new();
        while th.next(&t, &mut rng, &mut out) {
            for c in out.drain(..) {
                v.push(match c {
                    Syscall::Lookup(i) => format!("L{i}"),
                    Syscall::Read { ino, off, len } => format!("R{ino}:{off}:{len}"),
                    Syscall::Write { ino, off, len, .. } => format!("W{ino}:{off}:{len}"),
                    Syscall::Create { parent, name, .. } => format!("C{parent}:{name}"),
                    Syscall::Unlink(i) => format!("U{i}"),
                    _ => "?".into(),
                });
            }
        }
        (v, th.counts)
    }

    #[test]
    fn same_seed_same_operations() {
        let w = [40, 10, 20, 10, 20];
        assert_eq!(trace(3, w), trace(3, w));
        assert_ne!(trace(3, w).0, trace(4, w).0);
    }

    #[test]
    fn the_mix_follows_the_weights() {
        let (_, counts) = trace(5, [40, 0, 40, 0, 20]);
        assert_eq!(counts.iter().sum::<u64>(), 200);
        assert_eq!((counts[1], counts[3]), (0, 0));
        // 200 draws: each share within a few standard deviations of its weight.
        assert!((60..=100).contains(&counts[0]), "{counts:?}");
        assert!((60..=100).contains(&counts[2]), "{counts:?}");
        assert!((20..=60).contains(&counts[4]), "{counts:?}");
    }

    #[test]
    fn operations_touch_only_the_threads_directories() {
        let (t, dirs) = tree();
        let (calls, _) = trace(9, [1, 1, 0, 1, 1]);
        for c in calls {
            let ino: Ino = c[1..].split(':').next().unwrap().parse().unwrap();
            let parent = t.parent(ino).unwrap();
            assert!(parent == dirs[0] || parent == dirs[1], "{c}");
        }
    }

    #[test]
    fn the_process_splits_directories_among_threads() {
        let (t, dirs) = tree();
        let mut p = Ffsb::new(cfg([1, 0, 0, 0, 0]), dirs);
        let mut out = VecDeque::new();
        let mut rng = crate::workload::rng_stream(1, 1);
        assert!(p.next(&t, &mut rng, &mut out));
        assert_eq!(out.len(), 3);
        assert!(matches!(out.back(), Some(Syscall::WaitChildren)));
        assert!(!p.next(&t, &mut rng, &mut out));
    }
}
