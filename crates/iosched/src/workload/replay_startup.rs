//! `replay-startup`: the S suite's replay-startup-io (comm_startup_lat/, Valente 2014 section
//! 7.3): the block I/O of an application's cold start-up, replayed from one of S's traces.
//!
//! A trace line is `comm-pid delta_s size_sectors start_sector Seq|Rand distance_sectors
//! seq_offset_sectors action time_s C|START`. The replayer gives every original process
//! (comm-pid) a thread of its own (its own pid for the I/O scheduler) and a private file of
//! 20,000,000 bytes (S's OUT_FILE_SIZE), then issues the requests in file order, one at a
//! time, each by its process's thread, as O_DIRECT reads: the thread sleeps `delta_s` after
//! the previous request completed (not for the first request), then reads `size_sectors`:
//! `Seq` where that thread's previous request ended (from 0 again when it would pass the end
//! of the file), `Rand` at a random place of its file. When the next request belongs to
//! another thread, the thread hands over (a futex) and sleeps. The replay's elapsed time is
//! the start-up time.
//!
//! An iteration as S's comm_startup_lat runs one: a pause (`sleep 3` then `sleep 1`), `echo 3 >
//! drop_caches`, `sleep 0.2`, then the timed command; after a start-up under 2 s, a further
//! `sleep 2`. Each iteration's start-up time goes to the task's `iterations_s`.
//!
//! By default this is S's replay-startup-io.cc at 27fa2b22 as compiled (docs/s-suite.md): its
//! `nanosleep` of delta is compiled out (`#if 0`), and RA lines are submitted asynchronously
//! with libaio (a later non-RA line of the thread waits for them). The trace README's replayer
//! (deltas slept, every request synchronous) is `deltas = true, async_ra = false`. Random
//! offsets are drawn at 4 KiB granularity (S: 512 bytes): the
//! host's O_DIRECT path works in pages, and every size in S's traces is a multiple of 8
//! sectors, so each request keeps its trace size.

use crate::host::fs::Tree;
use crate::host::syscall::{Clock, Program, ReportItem, Syscall, Word};
use crate::host::Ino;
use crate::time::Nanos;
use rand::Rng;
use rand_pcg::Pcg64;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// S's OUT_FILE_SIZE: each replay thread's file.
pub const FILE_BYTES: u64 = 20_000_000;
/// S's comm_startup_lat: `sleep $SLEEPTIME_ITER` (3) then `sleep 1` before each command.
pub const DEFAULT_PAUSE_S: f64 = 4.0;
/// `{ time sleep 0.2 ; }` between drop_caches and the command (S since 2018; the 2011 script
/// the paper ran had none).
pub const DEFAULT_SETTLE_S: f64 = 0.2;
/// After a start-up under 2 s, comm_startup_lat sleeps 2 s more (S since 2018).
pub const SHORT_STARTUP_NS: Nanos = 2_000_000_000;
pub const DEFAULT_SHORT_STARTUP_PAUSE_S: f64 = 2.0;

/// One line of a trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRequest {
    /// The replay thread (index of the line's comm-pid in order of first appearance).
    pub thread: u32,
    pub delta_ns: Nanos,
    pub size_sectors: u32,
    pub seq: bool,
    /// Action RA (readahead): submitted asynchronously with `async_ra`.
    pub readahead: bool,
}

/// A parsed trace: its requests and its processes' names.
#[derive(Clone, Debug, PartialEq)]
pub struct StartupTrace {
    pub requests: Vec<TraceRequest>,
    pub processes: Vec<String>,
}

impl StartupTrace {
    /// Parses trace text; errors name `source`, the line and the field.
    pub fn parse(text: &str, source: &str) -> Result<StartupTrace, String> {
        const FIELDS: [&str; 10] = [
            "comm-pid",
            "delta_s",
            "size_sectors",
            "start_sector",
            "Seq/Rand",
            "distance_sectors",
            "seq_offset_sectors",
            "action",
            "time_s",
            "C/START",
        ];
        let mut requests = Vec::new();
        let mut processes: Vec<String> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let at = |field: &str, what: String| format!("{source}: line {}: field `{field}`: {what}", n + 1);
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.is_empty() {
                continue;
            }
            if words.len() != FIELDS.len() {
                return Err(format!("{source}: line {}: {} fields, expected {} ({})", n + 1, words.len(), FIELDS.len(), FIELDS.join(" ")));
            }
            let int = |i: usize| -> Result<i64, String> {
                words[i]
                    .parse::<i64>()
                    .map_err(|_| at(FIELDS[i], format!("`{}` is not an integer", crate::input::escape_controls(words[i]))))
            };
            let secs = |i: usize| -> Result<f64, String> {
                let v: f64 = words[i]
                    .parse()
                    .map_err(|_| at(FIELDS[i], format!("`{}` is not a number", crate::input::escape_controls(words[i]))))?;
                if !(v.is_finite() && (0.0..=3600.0).contains(&v)) {
                    return Err(at(FIELDS[i], format!("must be in [0, 3600] s, got {v}")));
                }
                Ok(v)
            };
            let delta = secs(1)?;
            let size = int(2)?;
            if !(1..=(FILE_BYTES / 512 / 2) as i64).contains(&size) {
                return Err(at("size_sectors", format!("must be in [1, {}], got {size}", FILE_BYTES / 512 / 2)));
            }
            if size % 8 != 0 {
                return Err(at("size_sectors", format!("must be a whole number of 4 KiB pages (8 sectors), got {size}")));
            }
            let start = int(3)?;
            if start < 0 {
                return Err(at("start_sector", format!("must not be negative, got {start}")));
            }
            let seq = match words[4] {
                "Seq" => true,
                "Rand" => false,
                o => return Err(at("Seq/Rand", format!("`{}`: expected Seq or Rand", crate::input::escape_controls(o)))),
            };
            int(5)?;
            int(6)?;
            // R, RA, RM (a write, WS, appears once in gnome-terminal's): S replays every line
            // as a read; the action must be a word of capitals.
            if !words[7].chars().all(|c| c.is_ascii_uppercase()) {
                return Err(at(
                    "action",
                    format!("`{}`: expected R, RA, RM or another blktrace action", crate::input::escape_controls(words[7])),
                ));
            }
            secs(8)?;
            if !matches!(words[9], "C" | "START") {
                return Err(at("C/START", format!("`{}`: expected C or START", crate::input::escape_controls(words[9]))));
            }
            let name = words[0];
            let thread = match processes.iter().position(|p| p == name) {
                Some(i) => i,
                None => {
                    processes.push(name.to_string());
                    processes.len() - 1
                }
            };
            requests.push(TraceRequest {
                thread: thread as u32,
                delta_ns: (delta * 1e9).round() as Nanos,
                size_sectors: size as u32,
                seq,
                readahead: words[7] == "RA",
            });
        }
        if requests.is_empty() {
            return Err(format!("{source}: no requests"));
        }
        Ok(StartupTrace { requests, processes })
    }

    /// Reads and parses a trace file (a regular file, at most 64 MiB).
    pub fn read(path: &std::path::Path) -> Result<StartupTrace, String> {
        let text = crate::input::read_text(path, 64 << 20).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(&text, &path.display().to_string())
    }
}

/// How an iteration runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplayConfig {
    pub iterations: u32,
    /// Before each iteration (S: 4 s).
    pub pause_ns: Nanos,
    /// drop_caches before each start-up (S: yes); off for a command run warm.
    pub drop_caches: bool,
    /// Between drop_caches and the start-up (S: 0.2 s).
    pub settle_ns: Nanos,
    /// After a start-up under 2 s, before the next iteration's pause (S: 2 s).
    pub short_startup_pause_ns: Nanos,
    /// Sleep each line's delta before issuing it.
    pub deltas: bool,
    /// As S's replay-startup-io.cc: RA lines (but the last line) submitted asynchronously
    /// (libaio), a thread's next other line first waiting for them.
    pub async_ra: bool,
}

/// No thread's turn: the replay is over.
const DONE: u64 = u64::MAX;

struct Shared {
    requests: Arc<Vec<TraceRequest>>,
    next: AtomicU64,
    turn: Word,
    /// When the iteration's first request completed (0: not measured, the line went async).
    first_done: Clock,
}

/// One replay thread: issues its process's lines when its turn comes.
struct ReplayThread {
    me: u64,
    ino: Ino,
    shared: Arc<Shared>,
    deltas: bool,
    async_ra: bool,
    off: u64,
}

impl Program for ReplayThread {
    fn next(&mut self, _tree: &Tree, rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        let s = &self.shared;
        let turn = s.turn.load(Ordering::Relaxed);
        if turn == DONE {
            return false;
        }
        if turn != self.me {
            out.push_back(Syscall::FutexWait { word: s.turn.clone(), value: turn });
            return true;
        }
        let i = s.next.load(Ordering::Relaxed) as usize;
        let Some(r) = s.requests.get(i) else {
            out.push_back(Syscall::FutexWake { word: s.turn.clone(), value: DONE });
            return true;
        };
        if r.thread as u64 != self.me {
            out.push_back(Syscall::FutexWake { word: s.turn.clone(), value: r.thread as u64 });
            return true;
        }
        s.next.store(i as u64 + 1, Ordering::Relaxed);
        if self.deltas && i > 0 && r.delta_ns > 0 {
            out.push_back(Syscall::Sleep(r.delta_ns));
        }
        let len = r.size_sectors as u64 * 512;
        if r.seq {
            if self.off + len > FILE_BYTES {
                self.off = 0;
            }
        } else {
            self.off = rng.gen_range(0..(FILE_BYTES - len) / 4096) * 4096;
        }
        let (ino, off) = (self.ino, self.off);
        if self.async_ra && r.readahead && i + 1 < s.requests.len() {
            out.push_back(Syscall::DirectReadAsync { ino, off, len });
        } else {
            if self.async_ra {
                out.push_back(Syscall::AioWait);
            }
            out.push_back(Syscall::DirectRead { ino, off, len });
            if i == 0 {
                out.push_back(Syscall::Now(s.first_done.clone()));
            }
        }
        self.off += len;
        true
    }
}

/// The replayer process: iterations of (pause, drop caches, timed replay).
pub struct ReplayStartup {
    pub cfg: ReplayConfig,
    requests: Arc<Vec<TraceRequest>>,
    threads: u32,
    /// Each thread's file.
    files: Vec<Ino>,
    clock: Clock,
    first_done: Clock,
    done: u32,
    step: u8,
    start_ns: Nanos,
}

impl ReplayStartup {
    pub fn new(trace: &StartupTrace, files: Vec<Ino>, cfg: ReplayConfig) -> Self {
        assert_eq!(files.len(), trace.processes.len(), "one file per traced process");
        ReplayStartup {
            cfg,
            requests: Arc::new(trace.requests.clone()),
            threads: trace.processes.len() as u32,
            files,
            clock: Clock::default(),
            first_done: Clock::default(),
            done: 0,
            step: 0,
            start_ns: 0,
        }
    }
}

impl Program for ReplayStartup {
    fn next(&mut self, _tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        match self.step {
            0 => {
                if self.done >= self.cfg.iterations {
                    return false;
                }
                if self.cfg.pause_ns > 0 {
                    out.push_back(Syscall::Sleep(self.cfg.pause_ns));
                }
                if self.cfg.drop_caches {
                    out.push_back(Syscall::DropCaches);
                    if self.cfg.settle_ns > 0 {
                        out.push_back(Syscall::Sleep(self.cfg.settle_ns));
                    }
                }
                out.push_back(Syscall::Now(self.clock.clone()));
                self.step = 1;
            }
            1 => {
                self.start_ns = self.clock.load(Ordering::Relaxed);
                let shared = Arc::new(Shared {
                    requests: self.requests.clone(),
                    next: AtomicU64::new(0),
                    turn: Arc::new(AtomicU64::new(self.requests[0].thread as u64)),
                    first_done: self.first_done.clone(),
                });
                self.first_done.store(0, Ordering::Relaxed);
                for (me, &ino) in self.files.iter().enumerate().take(self.threads as usize) {
                    let program = Box::new(ReplayThread {
                        me: me as u64,
                        ino,
                        shared: shared.clone(),
                        deltas: self.cfg.deltas,
                        async_ra: self.cfg.async_ra,
                        off: 0,
                    });
                    out.push_back(Syscall::Spawn { name: format!("replay-thread{me}"), program, wait: false });
                }
                out.push_back(Syscall::WaitChildren);
                out.push_back(Syscall::Now(self.clock.clone()));
                self.step = 2;
            }
            _ => {
                let elapsed = self.clock.load(Ordering::Relaxed).saturating_sub(self.start_ns);
                out.push_back(Syscall::Report(ReportItem::Iteration(crate::time::ns_to_s(elapsed))));
                // The first request's latency: on a loaded disk, mostly the wait for the queue in
                // service (summed over iterations; a first line submitted async is not counted).
                let first = self.first_done.load(Ordering::Relaxed);
                if first > 0 {
                    let first_us = first.saturating_sub(self.start_ns) / 1_000;
                    out.push_back(Syscall::Report(ReportItem::Count("first_read_us", first_us)));
                    out.push_back(Syscall::Report(ReportItem::Count("first_reads", 1)));
                }
                self.done += 1;
                let short = elapsed < SHORT_STARTUP_NS && self.cfg.short_startup_pause_ns > 0;
                if short && self.done < self.cfg.iterations && self.cfg.pause_ns > 0 {
                    out.push_back(Syscall::Sleep(self.cfg.short_startup_pause_ns));
                }
                self.step = 0;
            }
        }
        true
    }
}
