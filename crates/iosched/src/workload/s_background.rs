//! `s-background`: one of the S suite's four background workloads (Valente 2014, section
//! 7.2), as S's `start_readers_writers` starts it: one fio process whose jobs are each a process
//! of its own (`thread=0`), every job on its private file.
//!
//! | workload | jobs |
//! |---|---|
//! | `10r-seq` | 10 sequential readers ([`SeqRead`]) |
//! | `10r-rand` | 10 random readers ([`RandRead`]) |
//! | `5r5w-seq` | 5 sequential readers + 5 sequential writers ([`GreedyWrite`]) |
//! | `5r5w-rand` | 5 random readers + 5 random writers |
//!
//! The parent spawns the jobs (each with its own pid: the I/O scheduler sees ten processes)
//! and waits for them; their I/O counts in its task.

use super::fio_jobs::{GreedyWrite, RandRead, SeqRead};
use crate::host::fs::Tree;
use crate::host::syscall::{Program, Syscall};
use crate::host::Ino;
use rand_pcg::Pcg64;
use std::collections::VecDeque;

/// The four workloads: (name, readers, writers, random).
pub const WORKLOADS: [(&str, u32, u32, bool); 4] =
    [("10r-seq", 10, 0, false), ("10r-rand", 10, 0, true), ("5r5w-seq", 5, 5, false), ("5r5w-rand", 5, 5, true)];

/// A background workload's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Background {
    pub readers: u32,
    pub writers: u32,
    pub random: bool,
    pub bs_bytes: u64,
    /// Each writer's file size (it grows to it, or is preallocated for random writes).
    pub size_bytes: u64,
    /// Every writer's rate cap in bytes/s (S: the total divided by the writers), 0: none.
    pub writer_rate_bytes_s: u64,
    /// With writers: a `sync` started in the background this often (S's comm_startup_lat:
    /// every 2 s, "to increase difficulty"), 0: none.
    pub sync_every_ns: u64,
}

/// `while true; do sync & sleep PERIOD; done`.
struct SyncLoop {
    period_ns: u64,
}

impl Program for SyncLoop {
    fn next(&mut self, _tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        out.push_back(Syscall::Spawn { name: "sync".into(), program: super::commands::once(vec![Syscall::Sync]), wait: false });
        out.push_back(Syscall::Sleep(self.period_ns.max(1)));
        true
    }
}

/// The parent: spawns every job, then waits for them.
pub struct SBackground {
    pub cfg: Background,
    pub readers: Vec<Ino>,
    pub writers: Vec<Ino>,
    spawned: bool,
}

impl SBackground {
    pub fn new(cfg: Background, readers: Vec<Ino>, writers: Vec<Ino>) -> Self {
        SBackground { cfg, readers, writers, spawned: false }
    }
}

impl Program for SBackground {
    fn next(&mut self, _tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        if self.spawned {
            return false;
        }
        self.spawned = true;
        let c = &self.cfg;
        let kind = if c.random { "rand" } else { "seq" };
        for (i, &ino) in self.readers.iter().enumerate() {
            let program: Box<dyn Program> =
                if c.random { Box::new(RandRead::new(ino, c.bs_bytes, false)) } else { Box::new(SeqRead::new(ino, c.bs_bytes)) };
            out.push_back(Syscall::Spawn { name: format!("{kind}reader{i}"), program, wait: false });
        }
        for (i, &ino) in self.writers.iter().enumerate() {
            let program = Box::new(GreedyWrite::new(ino, c.bs_bytes, c.size_bytes, c.random, c.writer_rate_bytes_s));
            out.push_back(Syscall::Spawn { name: format!("{kind}writer{i}"), program, wait: false });
        }
        if c.writers > 0 && c.sync_every_ns > 0 {
            out.push_back(Syscall::Spawn {
                name: "sync-loop".into(),
                program: Box::new(SyncLoop { period_ns: c.sync_every_ns }),
                wait: false,
            });
        }
        out.push_back(Syscall::WaitChildren);
        true
    }
}
