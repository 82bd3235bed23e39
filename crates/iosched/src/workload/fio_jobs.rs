//! The greedy readers and writers of the S benchmark suite's background workloads (Valente
//! 2014, section 7.2; S's `start_readers_writers` in utilities/lib_utils.sh): fio jobs with
//! fio's defaults, `ioengine=psync` (one synchronous call at a time), `bs=4k`, buffered I/O,
//! `loops=10000` (in effect: until the run ends), one process per job (`thread=0`).
//!
//! - `rand-read` ([`RandRead`]): `readwrite=randread`: `bs`-byte read()s at random
//!   `bs`-aligned offsets of the file (buffered; O_DIRECT with `direct`).
//! - `rand-write` ([`GreedyWrite`] random): `readwrite=randwrite`: buffered `bs`-byte write()s
//!   at random aligned offsets below `size`.
//! - `seq-write` ([`GreedyWrite`] sequential): `readwrite=write`: buffered `bs`-byte write()s
//!   from offset 0 to `size` (the file grows to it), then again from 0.
//! - `seq-read` ([`SeqRead`]): `readwrite=read`: `bs`-byte read()s from 0 to the end, again.
//!
//! fio's `rate=` cap (S limits the writers' total rate on rotational disks in its start-up and
//! video benchmarks) is kept as fio keeps it: after each write, if the job is ahead of
//! `rate` bytes per second since it started, it sleeps until it is not.
//!
//! Simplification: fio's random offsets come from a random map that visits every block once
//! per loop; here they are uniform with replacement (over a 15 s run of a 5 GiB file the two
//! differ in a handful of blocks).

use crate::host::fs::Tree;
use crate::host::syscall::{Clock, Program, Syscall, WriteMode};
use crate::host::Ino;
use rand::Rng;
use rand_pcg::Pcg64;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;

/// Calls produced per turn by a greedy job without a rate cap.
const BATCH: usize = 64;
/// CPU time of one `bs`-sized read() or write() system call that the page cache serves
/// (entry, copy of 4 KiB, exit: about 2 us on the paper's 2010 Athlon 64; an assumption).
/// Charged per batch; without it a job whose pages are all cached would loop in no time.
pub const SYSCALL_NS: u64 = 2_000;

/// fio `readwrite=randread`: greedy `bs`-byte reads at random aligned offsets.
pub struct RandRead {
    pub ino: Ino,
    pub bs_bytes: u64,
    pub direct: bool,
    opened: bool,
}

impl RandRead {
    pub fn new(ino: Ino, bs_bytes: u64, direct: bool) -> Self {
        RandRead { ino, bs_bytes: bs_bytes.max(1), direct, opened: false }
    }
}

impl Program for RandRead {
    fn next(&mut self, tree: &Tree, rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        let size = tree.size(self.ino);
        let blocks = size / self.bs_bytes;
        if blocks == 0 {
            return false;
        }
        if !self.opened {
            self.opened = true;
            out.push_back(Syscall::Lookup(self.ino));
        }
        for _ in 0..BATCH {
            let (ino, off, len) = (self.ino, rng.gen_range(0..blocks) * self.bs_bytes, self.bs_bytes);
            out.push_back(if self.direct { Syscall::DirectRead { ino, off, len } } else { Syscall::Read { ino, off, len } });
        }
        out.push_back(Syscall::Compute(SYSCALL_NS * BATCH as u64));
        true
    }
}

/// fio `readwrite=read`: greedy sequential `bs`-byte read()s, from 0 again at the end (fio's
/// loops). `cat` with `loops = 0` makes the same calls but charges no CPU per call, so a file
/// the page cache holds whole would loop in no simulated time.
pub struct SeqRead {
    pub ino: Ino,
    pub bs_bytes: u64,
    off: u64,
    opened: bool,
}

impl SeqRead {
    pub fn new(ino: Ino, bs_bytes: u64) -> Self {
        SeqRead { ino, bs_bytes: bs_bytes.max(1), off: 0, opened: false }
    }
}

impl Program for SeqRead {
    fn next(&mut self, tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        let size = tree.size(self.ino);
        if size == 0 {
            return false;
        }
        if !self.opened {
            self.opened = true;
            out.push_back(Syscall::Lookup(self.ino));
        }
        for _ in 0..BATCH {
            if self.off >= size {
                self.off = 0;
            }
            let len = self.bs_bytes.min(size - self.off);
            out.push_back(Syscall::Read { ino: self.ino, off: self.off, len });
            self.off += len;
        }
        out.push_back(Syscall::Compute(SYSCALL_NS * BATCH as u64));
        true
    }
}

/// fio `readwrite=write` (sequential) or `randwrite` (random): greedy buffered writes of
/// `bs` bytes below `size`, optionally capped at `rate` bytes/s.
pub struct GreedyWrite {
    pub ino: Ino,
    pub bs_bytes: u64,
    pub size_bytes: u64,
    pub random: bool,
    /// fio's `rate=` in bytes per second (0: none).
    pub rate_bytes_s: u64,
    off: u64,
    written: u64,
    clock: Clock,
    start_ns: Option<u64>,
    opened: bool,
}

impl GreedyWrite {
    pub fn new(ino: Ino, bs_bytes: u64, size_bytes: u64, random: bool, rate_bytes_s: u64) -> Self {
        GreedyWrite {
            ino,
            bs_bytes: bs_bytes.max(1),
            size_bytes,
            random,
            rate_bytes_s,
            off: 0,
            written: 0,
            clock: Clock::default(),
            start_ns: None,
            opened: false,
        }
    }

    fn one(&mut self, rng: &mut Pcg64, out: &mut VecDeque<Syscall>) {
        let blocks = (self.size_bytes / self.bs_bytes).max(1);
        let off = if self.random {
            rng.gen_range(0..blocks) * self.bs_bytes
        } else {
            if self.off + self.bs_bytes > self.size_bytes {
                self.off = 0;
            }
            let o = self.off;
            self.off += self.bs_bytes;
            o
        };
        out.push_back(Syscall::Write { ino: self.ino, off, len: self.bs_bytes, mode: WriteMode::Buffered });
        self.written += self.bs_bytes;
    }
}

impl Program for GreedyWrite {
    fn next(&mut self, _tree: &Tree, rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        if self.size_bytes < self.bs_bytes {
            return false;
        }
        if !self.opened {
            self.opened = true;
            out.push_back(Syscall::Lookup(self.ino));
            if self.rate_bytes_s > 0 {
                out.push_back(Syscall::Now(self.clock.clone()));
            }
            return true;
        }
        if self.rate_bytes_s == 0 {
            for _ in 0..BATCH {
                self.one(rng, out);
            }
            out.push_back(Syscall::Compute(SYSCALL_NS * BATCH as u64));
            return true;
        }
        // Rate-capped: one write, then the time, then (next turn) a sleep if ahead.
        let now = self.clock.load(Ordering::Relaxed);
        let start = *self.start_ns.get_or_insert(now);
        let due = start + (self.written as u128 * 1_000_000_000 / self.rate_bytes_s as u128) as u64;
        if due > now {
            out.push_back(Syscall::Sleep(due - now));
        }
        self.one(rng, out);
        out.push_back(Syscall::Now(self.clock.clone()));
        true
    }
}
