//! las and cas: Linux 2.6's anticipatory I/O scheduler (block/as-iosched.c, read in its last
//! version, Linux 2.6.32; Nick Piggin and Jens Axboe) and the cooperative anticipatory scheduler
//! of Seelam et al. 2005 (section 4, with the anticipation-consumption statistic of section 7 as
//! an option), which changes only the rules that decide whether to keep waiting.
//!
//! What LAS is, in short: deadline's per-direction sort lists and FIFOs (here the directions are
//! sync and async, as in 2.6.32: `rq_is_sync`), run in time-limited batches (a read batch lasts
//! `read_batch_expire`; a write batch is limited to `write_batch_count` requests, a count tuned
//! after each write batch toward `write_batch_expire`), the next request chosen by a one-way
//! elevator that allows backward seeks up to MAXBACK at twice the cost (`as_choose_req`), and,
//! during a read batch, anticipation: after a sync request of process P is dispatched, keep the
//! disk idle until P's request completes and then up to `antic_expire` more, unless a rule of
//! `as_can_break_anticipation` says the waiting is pointless. Per process (Linux: the
//! io_context's `as_io_context`) it keeps exponentially decayed means of think time and seek
//! distance; globally the exit probability, the probability that an exited process is not
//! followed by a cooperating request (`exit_no_coop`), and the think time and seek distance
//! of new processes.
//!
//! Time. Linux counts jiffies; here time is ns and HZ = 1000 (1 jiffy = 1 ms), converted thus:
//! - tunables are ms as in sysfs (msecs_to_jiffies is the identity at HZ = 1000) and become ns;
//!   FIFO and batch expiries, the FIFO check's rate limit and the anticipation timer are compared
//!   in ns (`time_after(jiffies, t)` becomes `now > t`; the timer fires at antic_start +
//!   antic_expire exactly);
//! - the statistics stay in jiffies as in Linux: a think-time sample is the whole milliseconds
//!   elapsed since the process's last sync completion (floor), capped at MAX_THINKTIME - 1 =
//!   19; its mean is compared with antic_expire in ms; the close-request window grows with the
//!   whole milliseconds already waited.
//!
//! The per-process state lives as long as Linux's io_context would: it is created at the
//! process's first request (a new process, e.g. one per file, starts with no history) and is
//! dropped once the process has exited (`ProcessEvent::Exited`, Linux: exit_as_io_context
//! clears AS_TASK_RUNNING), has nothing queued or at the drive, and is not the process
//! anticipated on (which holds a reference in Linux: `ad->io_context`).

use super::deadline::{whole, DirQueue, Queued, INT_MAX};
use crate::device::ArmPath;
use crate::pid_map::PidMap;
use crate::request::{Op, Request, RequestId};
use crate::sched::tunables::{Tunable, TunableValues};
use crate::sched::{Completion, Context, Decision, ProcessEvent, Scheduler};
use crate::time::{Nanos, NS_PER_MS};
use std::collections::VecDeque;

// ---- Constants (2.6.32 block/as-iosched.c; HZ = 1000) ----

/// `default_read_expire = HZ / 8`: a read's FIFO deadline, ms.
pub const READ_EXPIRE_MS: u64 = 125;
/// `default_write_expire = HZ / 4`: a write's FIFO deadline, ms.
pub const WRITE_EXPIRE_MS: u64 = 250;
/// `default_read_batch_expire = HZ / 2`: how long a read batch may run, ms.
pub const READ_BATCH_EXPIRE_MS: u64 = 500;
/// `default_write_batch_expire = HZ / 8`: target length of a write batch, ms.
pub const WRITE_BATCH_EXPIRE_MS: u64 = 125;
/// `default_antic_expire = HZ / 150` (at least 1 jiffy): 6 jiffies = 6 ms at HZ = 1000.
pub const ANTIC_EXPIRE_MS: u64 = 6;
/// `MAX_THINKTIME = HZ / 50`: a think-time sample is at most MAX_THINKTIME - 1 jiffies.
pub const MAX_THINKTIME: u64 = 20;
/// `MAXBACK`: the farthest (sectors) the head goes backward for a request.
pub const MAXBACK: u64 = 1024 * 1024;
/// `BACK_PENALTY`: a backward distance counts this many times its length.
pub const BACK_PENALTY: u64 = 2;
/// The close-request window at no waiting (sectors).
pub const CLOSE_WINDOW: u64 = 8192;
/// Linux 2.6.9's close-request window at no or 1 ms of waiting (sectors): 32 KiB, doubling
/// with each further ms to 1 MiB at 6 ms.
pub const CLOSE_WINDOW_2_6_9: u64 = 64;
/// Fixed point of the probabilities and filters: 1.0 = 256.
pub const FX: u64 = 256;

/// Index of the sync queue (reads, and writes marked sync) and of the async queue.
pub(super) const SYNC: usize = 0;
pub(super) const ASYNC: usize = 1;

/// The queue of a request (Linux: `rq_is_sync`: reads are always sync).
pub(super) fn dir_of(req: &Request) -> usize {
    if req.op == Op::Read || req.sync {
        SYNC
    } else {
        ASYNC
    }
}

/// Which as-iosched.c the rules follow. Linux 2.6.9-2.6.15 (the kernels of Seelam et al.'s
/// experiments: 2.6.9 and 2.6.11) had a close window of 64 sectors growing to 1 MiB, let an
/// exited process end the anticipation at once, never let another process's close request
/// update the anticipated process's history, and tested the seek distance after the think
/// time; by 2.6.18 the window was 8192 sectors growing to 256 MiB, with `exit_no_coop`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    V2_6_9,
    V2_6_32,
}

/// One of the two schedulers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Linux 2.6.32's rules.
    Las,
    /// Seelam et al.'s rules; `consume_limit_pct` > 0 turns on the section 7 statistic.
    Cas { consume_limit_pct: u64 },
}

/// Linux `enum anticipation_status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnticStatus {
    /// Not anticipating.
    Off,
    /// Anticipating; the last sync request of the process is still at the drive.
    WaitReq,
    /// Anticipating; that request has completed and the timer runs.
    WaitNext,
    /// A request broke the anticipation or the timer fired; the next dispatch goes ahead.
    Finished,
}

/// Which rule ended an anticipation (or kept it from starting), for counters and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Break {
    /// 1. A request of the process anticipated on.
    SameProcess,
    /// 2. Its last request has finished and antic_expire has passed.
    Expired,
    /// 3. The process still has requests queued.
    Queued,
    /// 4 (LAS) / step 3 (CAS). A close sync request of another process.
    Close,
    /// 5 (LAS) / step 4 (CAS). The process has exited.
    Exited,
    /// 6 (LAS) / step 5 (CAS). The process has no think-time history and is likely to exit
    /// (LAS 6 also: new processes think too long).
    NewProcess,
    /// 7 (LAS) / step 6 (CAS). The process thinks longer than antic_expire.
    ThinkTime,
    /// CAS section 7: the process's anticipations keep timing out.
    Consumed,
    /// 2.6.9's last rule: the request is nearer than the process's mean seek distance (2.6.32
    /// folds this into the close test).
    SeekDistance,
}

impl Break {
    pub fn name(self) -> &'static str {
        match self {
            Break::SameProcess => "break_same_process",
            Break::Expired => "break_expired",
            Break::Queued => "break_queued",
            Break::Close => "break_close",
            Break::Exited => "break_exited",
            Break::NewProcess => "break_new_process",
            Break::ThinkTime => "break_think_time",
            Break::Consumed => "break_consumed",
            Break::SeekDistance => "break_seek_distance",
        }
    }

    const ALL: [Break; 9] = [
        Break::SameProcess,
        Break::Expired,
        Break::Queued,
        Break::Close,
        Break::Exited,
        Break::NewProcess,
        Break::ThinkTime,
        Break::Consumed,
        Break::SeekDistance,
    ];
}

/// Linux `struct as_io_context`: one process's history.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Aic {
    /// AS_TASK_RUNNING: the process has not exited.
    pub running: bool,
    /// AS_TASK_IOSTARTED: it has issued a sync request.
    pub io_started: bool,
    /// AS_TASK_IORUNNING: one of its sync requests has completed.
    pub io_running: bool,
    /// Requests in the scheduler (Linux nr_queued).
    pub nr_queued: u32,
    /// Requests at the drive (only for the state's lifetime; Linux's nr_dispatched counts
    /// requests not yet taken by the driver, always 0 here: a dispatch goes to the drive).
    pub at_drive: u32,
    /// Completion time of its last sync request.
    pub last_end_request_ns: Nanos,
    /// Decayed think time (jiffies), fixed point: samples and total x256, mean in jiffies.
    pub ttime_total: u64,
    pub ttime_samples: u64,
    pub ttime_mean: u64,
    /// Decayed seek distance (sectors), likewise.
    pub seek_total: u64,
    pub seek_samples: u64,
    pub seek_mean: u64,
    /// End of its last sync request.
    pub last_request_pos: u64,
    /// CAS section 7: decayed fraction (x256) of its anticipations that timed out.
    pub consumed: u64,
}

/// The global estimates (part of Linux `struct as_data`), fixed point 1.0 = 256.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Estimates {
    /// Probability that the process waited on exits (or has no history when the wait ends).
    pub exit_prob: u64,
    /// Probability that an exited process is not followed by a cooperating request.
    pub exit_no_coop: u64,
    /// Think time (jiffies) and seek distance (sectors) of new processes: first samples.
    pub new_ttime_total: u64,
    pub new_ttime_mean: u64,
    pub new_seek_total: u64,
    pub new_seek_mean: u64,
    /// CAS: the cooperative probability (a close request of another process "saved" an
    /// anticipation); rises at each such rescue, decays at each timeout.
    pub coop_prob: u64,
}

/// Linux as_update_thinktime: the 7/8 filter of think time (jiffies).
pub fn update_thinktime(est: &mut Estimates, aic: &mut Aic, ttime: u64) {
    if aic.ttime_samples == 0 {
        est.new_ttime_total = (7 * est.new_ttime_total + FX * ttime) / 8;
        est.new_ttime_mean = est.new_ttime_total / FX;
        est.exit_prob = 7 * est.exit_prob / 8;
    }
    aic.ttime_samples = (7 * aic.ttime_samples + FX) / 8;
    aic.ttime_total = (7 * aic.ttime_total + FX * ttime) / 8;
    aic.ttime_mean = (aic.ttime_total + FX / 2) / aic.ttime_samples;
}

/// Linux as_update_seekdist: the 7/8 filter of seek distance, each sample clamped to
/// 4 x mean + 2 Mi sectors while samples <= 60 (x256), then 4 x mean + 128 Ki.
pub fn update_seekdist(est: &mut Estimates, aic: &mut Aic, sdist: u64) {
    if aic.seek_samples == 0 {
        est.new_seek_total = (7 * est.new_seek_total + FX * sdist) / 8;
        est.new_seek_mean = est.new_seek_total / FX;
    }
    let cap = if aic.seek_samples <= 60 { aic.seek_mean * 4 + 2 * 1024 * 1024 } else { aic.seek_mean * 4 + 2 * 1024 * 64 };
    let sdist = sdist.min(cap);
    aic.seek_samples = (7 * aic.seek_samples + FX) / 8;
    aic.seek_total = (7 * aic.seek_total + FX * sdist) / 8;
    aic.seek_mean = (aic.seek_total + aic.seek_samples / 2) / aic.seek_samples;
}

/// Linux as_update_iohist: a sync request updates `aic`'s think time (only if the process has
/// nothing queued and one of its sync requests has completed; else the sample is 0) and its
/// seek distance from the end of its previous request. `queued` is the requests of the
/// process in the scheduler besides this one.
pub fn update_iohist(est: &mut Estimates, aic: &mut Aic, req: &Request, now: Nanos) {
    if dir_of(req) != SYNC {
        return;
    }
    if aic.io_running || aic.io_started {
        let mut thinktime = 0;
        if aic.io_running && aic.nr_queued == 0 {
            thinktime = (now.saturating_sub(aic.last_end_request_ns) / NS_PER_MS).min(MAX_THINKTIME - 1);
        }
        update_thinktime(est, aic, thinktime);
        update_seekdist(est, aic, aic.last_request_pos.abs_diff(req.start_sector));
    }
    aic.last_request_pos = req.end_sector();
    aic.io_started = true;
}

/// Moves a fixed-point probability 1/8 of the way toward 1.0.
fn rise(p: &mut u64) {
    *p = (7 * *p + FX) / 8;
}

/// Decays a fixed-point probability by 7/8.
fn decay(p: &mut u64) {
    *p = 7 * *p / 8;
}

/// Linux `struct as_data`.
pub struct As {
    variant: Variant,
    kernel: Kernel,
    // run time data
    dirs: [DirQueue; 2],
    seq: u64,
    /// Flushes go out ahead of the queues (in Linux they never reach the elevator).
    flushes: VecDeque<Request>,
    /// Next request in sort order (Linux next_rq[2]), by (sector, id).
    next_rq: [Option<(u64, RequestId)>; 2],
    /// End of the last dispatched sync / async request.
    last_sector: [u64; 2],
    pub est: Estimates,
    current_batch_expires: Nanos,
    last_check_fifo: [Nanos; 2],
    /// Waiting for the old batch's requests to complete.
    changed_batch: bool,
    /// A read batch starts: its time counts from its first completion.
    new_batch: bool,
    batch_dir: usize,
    write_batch_count: u64,
    current_write_count: u64,
    write_batch_idled: bool,
    antic_status: AnticStatus,
    antic_start: Nanos,
    /// The process anticipated on: the one of the last sync dispatch (None after an async one).
    io_context: Option<u32>,
    /// A request of that process has completed since the last dispatch.
    ioc_finished: bool,
    /// Requests dispatched and not completed (flushes aside).
    nr_dispatched: u32,
    // settings
    fifo_expire: [Nanos; 2],
    batch_expire: [Nanos; 2],
    antic_expire_ns: Nanos,
    antic_expire_jiffies: u64,
    procs: PidMap<Aic>,
    // counts
    waits: u64,
    timeouts: u64,
    breaks: [u64; 9],
    batches: [u64; 2],
}

impl As {
    pub fn new(variant: Variant, t: &TunableValues) -> Result<Self, String> {
        Self::for_kernel(variant, Kernel::V2_6_32, t)
    }

    pub fn for_kernel(variant: Variant, kernel: Kernel, t: &TunableValues) -> Result<Self, String> {
        let ms = |name| whole(t, name).map(|v| v.saturating_mul(NS_PER_MS));
        let batch_expire = [ms("read_batch_expire")?, ms("write_batch_expire")?];
        let antic = whole(t, "antic_expire")?;
        Ok(As {
            variant,
            kernel,
            dirs: Default::default(),
            seq: 0,
            flushes: VecDeque::new(),
            next_rq: [None; 2],
            last_sector: [0; 2],
            est: Estimates::default(),
            current_batch_expires: batch_expire[SYNC],
            last_check_fifo: [0; 2],
            changed_batch: false,
            new_batch: false,
            batch_dir: SYNC,
            // as_init_queue: write_batch_expire / 10 (in jiffies), at least 2.
            write_batch_count: (whole(t, "write_batch_expire")? / 10).max(2),
            current_write_count: 0,
            write_batch_idled: false,
            antic_status: AnticStatus::Off,
            antic_start: 0,
            io_context: None,
            ioc_finished: false,
            nr_dispatched: 0,
            fifo_expire: [ms("read_expire")?, ms("write_expire")?],
            batch_expire,
            antic_expire_ns: antic.saturating_mul(NS_PER_MS),
            antic_expire_jiffies: antic,
            procs: PidMap::default(),
            waits: 0,
            timeouts: 0,
            breaks: [0; 9],
            batches: [0; 2],
        })
    }

    // ---- Inspection (tests, reports) ----

    pub fn aic(&self, pid: u32) -> Option<&Aic> {
        self.procs.get(pid)
    }

    pub fn antic_status(&self) -> AnticStatus {
        self.antic_status
    }

    pub fn anticipated(&self) -> Option<u32> {
        self.io_context
    }

    pub fn write_batch_count(&self) -> u64 {
        self.write_batch_count
    }

    pub fn breaks(&self, b: Break) -> u64 {
        self.breaks[b as usize]
    }

    // ---- The elevator ----

    /// Linux as_choose_req: of two requests of one direction, the one nearer ahead of the
    /// head (a backward distance within MAXBACK costs BACK_PENALTY times; farther back is a
    /// wrap); both wrapped: the lower; a tie: the higher.
    fn choose_req(&self, dir: usize, a: Option<(u64, RequestId)>, b: Option<(u64, RequestId)>) -> Option<(u64, RequestId)> {
        let (a, b) = match (a, b) {
            (None, b) => return b,
            (a, None) => return a,
            (Some(a), Some(b)) if a == b => return Some(b),
            (Some(a), Some(b)) => (a, b),
        };
        let last = self.last_sector[dir];
        // Cost, or None when the request lies behind the head beyond MAXBACK.
        let cost = |s: u64| {
            if s >= last {
                Some(s - last)
            } else if s + MAXBACK >= last {
                Some((last - s) * BACK_PENALTY)
            } else {
                None
            }
        };
        Some(match (cost(a.0), cost(b.0)) {
            (Some(_), None) => a,
            (None, Some(_)) => b,
            (None, None) => {
                if a.0 <= b.0 {
                    a
                } else {
                    b
                }
            }
            (Some(d1), Some(d2)) => {
                if d1 < d2 || (d1 == d2 && a.0 >= b.0) {
                    a
                } else {
                    b
                }
            }
        })
    }

    /// Linux as_find_next_rq: of the neighbours of `key` in sort order (the successor, or
    /// the lowest if there is none), the one `choose_req` prefers.
    fn find_next_rq(&self, dir: usize, key: (u64, RequestId)) -> Option<(u64, RequestId)> {
        let prev = self.dirs[dir].before(key);
        let next = self.dirs[dir].after(key).or_else(|| self.dirs[dir].lowest().filter(|&k| k != key));
        self.choose_req(dir, next, prev)
    }

    /// Linux as_remove_queued_request.
    fn remove_queued(&mut self, dir: usize, id: RequestId) -> Option<Queued> {
        let q = *self.dirs[dir].get(id)?;
        if let Some(aic) = self.procs.get_mut(q.req.principal.pid) {
            aic.nr_queued = aic.nr_queued.saturating_sub(1);
        }
        let key = (q.req.start_sector, id);
        if self.next_rq[dir] == Some(key) {
            self.next_rq[dir] = self.find_next_rq(dir, key);
        }
        self.dirs[dir].take(id)
    }

    /// Drops a process's state when its io_context would be gone.
    fn maybe_drop(&mut self, pid: Option<u32>) {
        let Some(pid) = pid else { return };
        if self.io_context == Some(pid) {
            return;
        }
        if self.procs.get(pid).is_some_and(|a| !a.running && a.nr_queued == 0 && a.at_drive == 0) {
            self.procs.remove(pid);
        }
    }

    /// Linux as_move_to_dispatch.
    fn move_to_dispatch(&mut self, dir: usize, key: (u64, RequestId)) -> Request {
        self.antic_status = AnticStatus::Off;
        let req = self.dirs[dir].get(key.1).expect("a queued request").req;
        self.last_sector[dir] = req.end_sector();
        let old = self.io_context;
        if dir == SYNC {
            self.io_context = Some(req.principal.pid);
        } else {
            self.io_context = None;
            self.current_write_count = self.current_write_count.saturating_sub(1);
        }
        self.ioc_finished = false;
        self.next_rq[dir] = self.find_next_rq(dir, key);
        self.remove_queued(dir, key.1);
        if let Some(aic) = self.procs.get_mut(req.principal.pid) {
            aic.at_drive += 1;
        }
        self.nr_dispatched += 1;
        if old != self.io_context {
            self.maybe_drop(old);
        }
        req
    }

    // ---- Anticipation ----

    fn timer_at(&self) -> Nanos {
        self.antic_start.saturating_add(self.antic_expire_ns)
    }

    /// Linux as_antic_expired.
    fn antic_expired(&self, now: Nanos) -> bool {
        now.abs_diff(self.antic_start) >= self.antic_expire_ns
    }

    /// Linux as_antic_stop: waiting -> FINISHED.
    fn antic_stop(&mut self) {
        if matches!(self.antic_status, AnticStatus::WaitReq | AnticStatus::WaitNext) {
            self.antic_status = AnticStatus::Finished;
        }
    }

    /// Linux as_antic_timeout, run when time reaches the timer (there is no timer callback:
    /// every entry point calls this first).
    fn tick(&mut self, now: Nanos) {
        if self.antic_status != AnticStatus::WaitNext || now < self.timer_at() {
            return;
        }
        self.antic_status = AnticStatus::Finished;
        self.timeouts += 1;
        let cas = matches!(self.variant, Variant::Cas { .. });
        let Some(aic) = self.io_context.and_then(|p| self.procs.get_mut(p)) else { return };
        if aic.ttime_samples == 0 {
            // The process anticipated on has exited or timed out.
            rise(&mut self.est.exit_prob);
        }
        if !aic.running && self.kernel == Kernel::V2_6_32 {
            // Not "saved" by a cooperating request (2.6.9 has no such estimate).
            rise(&mut self.est.exit_no_coop);
        }
        if cas {
            rise(&mut aic.consumed);
            decay(&mut self.est.coop_prob);
        }
    }

    /// Linux as_antic_waitreq / as_antic_waitnext: start waiting.
    fn antic_waitreq(&mut self) {
        if self.antic_status == AnticStatus::Off {
            self.waits += 1;
            self.antic_status = if self.io_context.is_none() || self.ioc_finished { AnticStatus::WaitNext } else { AnticStatus::WaitReq };
        }
    }

    /// Linux as_close_req: is `req` close to where the batch is (the window grows with the
    /// whole ms already waited), or nearer than the process's mean seek distance?
    fn close_req(&self, aic: &Aic, req: &Request, now: Nanos) -> bool {
        let last = self.last_sector[self.batch_dir];
        let next = req.start_sector;
        let delay =
            if self.antic_status == AnticStatus::Off || !self.ioc_finished { 0 } else { now.saturating_sub(self.antic_start) / NS_PER_MS };
        if self.kernel == Kernel::V2_6_9 {
            let delta = if delay <= 1 {
                CLOSE_WINDOW_2_6_9
            } else if delay <= 20 && delay <= self.antic_expire_jiffies {
                CLOSE_WINDOW_2_6_9 << (delay - 1)
            } else {
                return true;
            };
            // Linux's `last - (delta >> 1) <= next` (an unsigned wrap near sector 0 aside).
            return last <= next + delta / 2 && next <= last + delta;
        }
        let delta = if delay == 0 {
            CLOSE_WINDOW
        } else if delay <= 20 && delay <= self.antic_expire_jiffies {
            CLOSE_WINDOW << delay
        } else {
            return true;
        };
        if last <= next + delta / 2 && next <= last + delta {
            return true;
        }
        let s = last.abs_diff(next);
        let mean = if aic.seek_samples == 0 { self.est.new_seek_mean } else { aic.seek_mean };
        mean > s
    }

    /// Linux as_can_break_anticipation (LAS) or Seelam et al.'s steps (CAS): Some(rule) if
    /// waiting on the anticipated process should stop (for `req`, the new or next request).
    fn can_break(&mut self, req: Option<&Request>, now: Nanos) -> Option<Break> {
        let pid = self.io_context?;
        let b = self.break_rule(pid, req, now)?;
        self.breaks[b as usize] += 1;
        Some(b)
    }

    fn break_rule(&mut self, pid: u32, req: Option<&Request>, now: Nanos) -> Option<Break> {
        let cas = matches!(self.variant, Variant::Cas { .. });
        if req.is_some_and(|r| r.principal.pid == pid) {
            // 1. A request of the process anticipated on.
            if cas {
                if let Some(aic) = self.procs.get_mut(pid) {
                    decay(&mut aic.consumed);
                }
            }
            return Some(Break::SameProcess);
        }
        if self.ioc_finished && self.antic_expired(now) {
            // 2. Anticipated long enough (the timer has not run yet).
            return Some(Break::Expired);
        }
        let aic = self.procs.get(pid)?.clone();
        if self.kernel == Kernel::V2_6_9 && matches!(self.variant, Variant::Las) {
            return self.las_2_6_9_rules(aic, req, now);
        }
        if aic.nr_queued > 0 {
            // 3. The process has more requests queued.
            return Some(Break::Queued);
        }
        match self.variant {
            Variant::Las => self.las_rules(pid, aic, req, now),
            Variant::Cas { consume_limit_pct } => self.cas_rules(pid, aic, req, now, consume_limit_pct),
        }
    }

    /// LAS rules 4-7, in 2.6.32's order.
    fn las_rules(&mut self, pid: u32, aic: Aic, req: Option<&Request>, now: Nanos) -> Option<Break> {
        if let Some(r) = req.filter(|r| dir_of(r) == SYNC && self.close_req(&aic, r, now)) {
            // 4. A close request that is not the process's: it updates the process's history
            // (cooperating processes working in the same area).
            if !aic.running {
                if aic.ttime_samples == 0 {
                    rise(&mut self.est.exit_prob);
                }
                decay(&mut self.est.exit_no_coop);
            }
            let aic = self.procs.get_mut(pid).expect("present");
            update_iohist(&mut self.est, aic, r, now);
            return Some(Break::Close);
        }
        if !aic.running {
            // 5. The process anticipated on has exited.
            if aic.ttime_samples == 0 {
                rise(&mut self.est.exit_prob);
            }
            if self.est.exit_no_coop > FX / 2 {
                return Some(Break::Exited);
            }
        }
        if aic.ttime_samples == 0 {
            // 6. No history: new processes' think time, or they tend to exit uncooperated.
            if self.est.new_ttime_mean > self.antic_expire_jiffies || self.est.exit_prob * self.est.exit_no_coop > (FX / 2) * FX {
                return Some(Break::NewProcess);
            }
        } else if aic.ttime_mean > self.antic_expire_jiffies {
            // 7. The process thinks too long between requests.
            return Some(Break::ThinkTime);
        }
        None
    }

    /// Linux 2.6.9's rules after 1-2, in its order: exited (at once), queued, close (which only
    /// restarts the anticipated process's think-time clock), no history (new processes' think
    /// time, or exit_prob > 1/2), think time, then a request nearer the batch's position than
    /// the process's mean seek distance.
    fn las_2_6_9_rules(&mut self, aic: Aic, req: Option<&Request>, now: Nanos) -> Option<Break> {
        if !aic.running {
            if aic.ttime_samples == 0 {
                rise(&mut self.est.exit_prob);
            }
            return Some(Break::Exited);
        }
        if aic.nr_queued > 0 {
            return Some(Break::Queued);
        }
        if req.is_some_and(|r| dir_of(r) == SYNC && self.close_req(&aic, r, now)) {
            // A cooperating process: the anticipated one's think time restarts from now.
            if let Some(a) = self.io_context.and_then(|pid| self.procs.get_mut(pid)) {
                a.last_end_request_ns = now;
            }
            return Some(Break::Close);
        }
        if aic.ttime_samples == 0 {
            if self.est.new_ttime_mean > self.antic_expire_jiffies || self.est.exit_prob > FX / 2 {
                return Some(Break::NewProcess);
            }
        } else if aic.ttime_mean > self.antic_expire_jiffies {
            return Some(Break::ThinkTime);
        }
        let r = req?;
        let s = r.start_sector.abs_diff(self.last_sector[SYNC]);
        let mean = if aic.seek_samples == 0 { self.est.new_seek_mean } else { aic.seek_mean };
        if mean > s {
            return Some(Break::SeekDistance);
        }
        None
    }

    /// CAS steps 3-6 (steps 1-2 are LAS's: the FIFO check before anticipating, rule 2) and
    /// the section 7 statistic.
    fn cas_rules(&mut self, pid: u32, aic: Aic, req: Option<&Request>, now: Nanos, consume_limit_pct: u64) -> Option<Break> {
        if let Some(r) = req.filter(|r| dir_of(r) == SYNC && self.close_req(&aic, r, now)) {
            // Step 3. A close read of any process, the anticipated one alive or dead: dispatch
            // it (it becomes the batch's next request) and anticipate on its process. The
            // requester's statistics were updated at its arrival; a live anticipated process
            // also learns from it; the cooperative probability rises.
            if aic.running {
                let aic = self.procs.get_mut(pid).expect("present");
                update_iohist(&mut self.est, aic, r, now);
            }
            rise(&mut self.est.coop_prob);
            if self.dirs[SYNC].get(r.id).is_some() {
                self.next_rq[SYNC] = Some((r.start_sector, r.id));
            }
            return Some(Break::Close);
        }
        if !aic.running {
            // Step 4. The anticipated process is dead: update the system exit probability;
            // if it is below 50%, dispatch.
            rise(&mut self.est.exit_prob);
            if self.est.exit_prob < FX / 2 {
                return Some(Break::Exited);
            }
        }
        if aic.ttime_samples == 0 {
            // Step 5. It has just started I/O: processes tend to exit (> 50%) and rarely have
            // cooperators (< 50%). Step 6 for a new process: LAS's estimate, new processes'
            // mean think time.
            if self.est.exit_prob > FX / 2 && self.est.coop_prob < FX / 2 {
                return Some(Break::NewProcess);
            }
            if self.est.new_ttime_mean > self.antic_expire_jiffies {
                return Some(Break::ThinkTime);
            }
        } else if aic.ttime_mean > self.antic_expire_jiffies {
            // Step 6. It thinks longer than the anticipation time.
            return Some(Break::ThinkTime);
        }
        if consume_limit_pct > 0 && aic.consumed * 100 > consume_limit_pct * FX {
            // Section 7: its anticipations keep timing out.
            return Some(Break::Consumed);
        }
        None
    }

    /// Linux as_can_anticipate.
    fn can_anticipate(&mut self, key: Option<(u64, RequestId)>, now: Nanos) -> bool {
        if self.io_context.is_none() {
            // The last request dispatched was async.
            return false;
        }
        if self.antic_status == AnticStatus::Finished {
            return false;
        }
        let req = key.map(|k| self.dirs[SYNC].get(k.1).expect("queued").req);
        self.can_break(req.as_ref(), now).is_none()
    }

    // ---- Batches ----

    /// Linux update_write_batch: tune the write batch's request count toward its time target.
    fn update_write_batch(&mut self, now: Nanos) {
        let batch = self.batch_expire[ASYNC];
        let write_time = (now + batch).saturating_sub(self.current_batch_expires);
        if write_time > batch && !self.write_batch_idled {
            if write_time > batch * 3 {
                self.write_batch_count /= 2;
            } else {
                self.write_batch_count = self.write_batch_count.saturating_sub(1);
            }
        } else if write_time < batch && self.current_write_count == 0 {
            if batch > write_time * 3 {
                self.write_batch_count *= 2;
            } else {
                self.write_batch_count += 1;
            }
        }
        self.write_batch_count = self.write_batch_count.max(1);
    }

    /// Linux as_fifo_expired: checked at most once per fifo_expire.
    fn fifo_expired(&mut self, dir: usize, now: Nanos) -> bool {
        if now.abs_diff(self.last_check_fifo[dir]) < self.fifo_expire[dir] {
            return false;
        }
        self.last_check_fifo[dir] = now;
        self.dirs[dir].fifo_head().is_some_and(|q| now > q.deadline_ns)
    }

    fn fifo_head(&self, dir: usize) -> (u64, RequestId) {
        let q = self.dirs[dir].fifo_head().expect("non-empty");
        (q.req.start_sector, q.req.id)
    }

    /// Linux as_batch_expired.
    fn batch_expired(&self, now: Nanos) -> bool {
        if self.changed_batch || self.new_batch {
            return false;
        }
        if self.batch_dir == SYNC {
            now > self.current_batch_expires
        } else {
            now > self.current_batch_expires || self.current_write_count == 0
        }
    }

    /// A wait with nothing to time it: for a request at the drive to complete. Linux's
    /// as_dispatch_request returns nothing and the queue runs again at the completion; so does
    /// the engine after `Empty` (no wake-up of its own, which would only ask again to no avail).
    fn wait_for_completion() -> Decision {
        Decision::Empty
    }

    /// The wait answered while anticipating.
    fn antic_wait(&self) -> Decision {
        match self.antic_status {
            AnticStatus::WaitNext => Decision::WaitUntil(self.timer_at()),
            _ => Self::wait_for_completion(),
        }
    }

    /// Linux as_dispatch_request (not forced).
    fn dispatch(&mut self, now: Nanos) -> Decision {
        let reads = !self.dirs[SYNC].is_empty();
        let writes = !self.dirs[ASYNC].is_empty();
        if self.batch_dir == ASYNC && !reads && (self.current_write_count == 0 || !writes) {
            // The write batch was uncontended: it cannot be timed.
            self.write_batch_idled = true;
        }
        if !(reads || writes) {
            return Decision::Empty;
        }
        if matches!(self.antic_status, AnticStatus::WaitReq | AnticStatus::WaitNext) {
            return self.antic_wait();
        }
        if self.changed_batch {
            return Self::wait_for_completion();
        }
        // (request, whether the FIFO check is already done)
        let mut chosen: Option<((u64, RequestId), bool)> = None;
        if !(reads && writes && self.batch_expired(now)) {
            // The batch is still running, or only one direction has requests.
            let rq = self.next_rq[self.batch_dir];
            if self.batch_dir == SYNC && self.antic_expire_ns > 0 {
                if self.fifo_expired(SYNC, now) {
                    chosen = Some((self.fifo_head(SYNC), true));
                } else if self.can_anticipate(rq, now) {
                    self.antic_waitreq();
                    return self.antic_wait();
                }
            }
            if chosen.is_none() {
                if let Some(k) = rq {
                    if reads && !writes {
                        self.current_batch_expires = now + self.batch_expire[SYNC];
                    }
                    chosen = Some((k, false));
                }
            }
        }
        let (key, fifo_checked) = match chosen {
            Some(c) => c,
            None => {
                // Not running a batch: choose a direction.
                if reads && !(writes && self.batch_dir == SYNC) {
                    if self.batch_dir == ASYNC {
                        self.changed_batch = true;
                    }
                    self.batch_dir = SYNC;
                    self.last_check_fifo[SYNC] = now;
                    self.batches[SYNC] += 1;
                    (self.fifo_head(SYNC), false)
                } else {
                    // Writes: the last batch was a read one, or there are no reads.
                    if self.batch_dir == SYNC {
                        self.changed_batch = true;
                        self.new_batch = false;
                    }
                    self.batch_dir = ASYNC;
                    self.current_write_count = self.write_batch_count;
                    self.write_batch_idled = false;
                    self.last_check_fifo[ASYNC] = now;
                    self.batches[ASYNC] += 1;
                    (self.fifo_head(ASYNC), false)
                }
            }
        };
        let dir = self.batch_dir;
        let key = if !fifo_checked && self.fifo_expired(dir, now) { self.fifo_head(dir) } else { key };
        if self.changed_batch {
            if self.nr_dispatched > 0 {
                // The new batch starts when the old one's requests have completed.
                return Self::wait_for_completion();
            }
            if dir == ASYNC {
                self.current_batch_expires = now + self.batch_expire[ASYNC];
            } else {
                self.new_batch = true;
            }
            self.changed_batch = false;
        }
        Decision::Dispatch(self.move_to_dispatch(dir, key), ArmPath::Direct)
    }
}

impl Scheduler for As {
    fn name(&self) -> &str {
        match (self.variant, self.kernel) {
            (Variant::Las, Kernel::V2_6_32) => "las",
            (Variant::Las, Kernel::V2_6_9) => "las-2.6.9",
            (Variant::Cas { .. }, Kernel::V2_6_32) => "cas",
            (Variant::Cas { .. }, Kernel::V2_6_9) => "cas-2.6.9",
        }
    }

    /// Linux as_add_request: history, then sort list and FIFO, then as_update_rq (the next
    /// request, and whether this request breaks the anticipation).
    fn add(&mut self, req: Request, cx: &Context) {
        let now = cx.now_ns;
        self.tick(now);
        if req.op == Op::Flush {
            self.flushes.push_back(req);
            return;
        }
        let dir = dir_of(&req);
        let aic = self.procs.get_or_insert_with(req.principal.pid, || Aic { running: true, ..Aic::default() });
        update_iohist(&mut self.est, aic, &req, now);
        aic.nr_queued += 1;
        self.seq += 1;
        self.dirs[dir].insert(Queued { req, deadline_ns: now + self.fifo_expire[dir], seq: self.seq });
        let key = (req.start_sector, req.id);
        self.next_rq[dir] = self.choose_req(dir, Some(key), self.next_rq[dir]);
        if matches!(self.antic_status, AnticStatus::WaitReq | AnticStatus::WaitNext) && self.can_break(Some(&req), now).is_some() {
            self.antic_stop();
        }
    }

    fn next(&mut self, cx: &Context) -> Decision {
        self.tick(cx.now_ns);
        if let Some(f) = self.flushes.pop_front() {
            return Decision::Dispatch(f, ArmPath::Direct);
        }
        self.dispatch(cx.now_ns)
    }

    /// Linux as_completed_request and as_put_io_context.
    fn completed(&mut self, done: &Completion, cx: &Context) {
        let now = cx.now_ns;
        self.tick(now);
        let req = &done.request;
        if req.op == Op::Flush {
            return;
        }
        if self.changed_batch && self.nr_dispatched == 1 {
            self.current_batch_expires = now + self.batch_expire[self.batch_dir];
            self.changed_batch = false;
            if self.batch_dir == SYNC {
                self.new_batch = true;
            }
        }
        self.nr_dispatched = self.nr_dispatched.saturating_sub(1);
        // A batch's time counts from its first completion.
        if self.new_batch && self.batch_dir == dir_of(req) {
            self.update_write_batch(now);
            self.current_batch_expires = now + self.batch_expire[SYNC];
            self.new_batch = false;
        }
        let pid = req.principal.pid;
        if self.io_context == Some(pid) {
            self.antic_start = now;
            self.ioc_finished = true;
            if self.antic_status == AnticStatus::WaitReq {
                self.antic_status = AnticStatus::WaitNext;
            }
        }
        if let Some(aic) = self.procs.get_mut(pid) {
            aic.at_drive = aic.at_drive.saturating_sub(1);
            if dir_of(req) == SYNC {
                aic.io_running = true;
                aic.last_end_request_ns = now;
            }
        }
        self.maybe_drop(Some(pid));
    }

    fn process_event(&mut self, ev: ProcessEvent, cx: &Context) {
        self.tick(cx.now_ns);
        if let ProcessEvent::Exited(p) = ev {
            if let Some(aic) = self.procs.get_mut(p.pid) {
                aic.running = false;
            }
            self.maybe_drop(Some(p.pid));
        }
    }

    fn queued(&self) -> usize {
        self.flushes.len() + self.dirs[SYNC].len() + self.dirs[ASYNC].len()
    }

    fn remove(&mut self, req: &Request, _cx: &Context) -> bool {
        let pid = req.principal.pid;
        let gone = self.remove_queued(dir_of(req), req.id).is_some();
        self.maybe_drop(Some(pid));
        gone
    }

    fn allow_merge(&self, _rq: &Request, _bio: &Request) -> bool {
        true
    }

    /// Linux as_merged_request: a front merge re-sorts the request (the next-request pointer
    /// follows it); its FIFO place stays.
    fn merged(&mut self, old: &Request, grown: Request, _cx: &Context) {
        let dir = dir_of(old);
        if self.dirs[dir].regrow(grown) && self.next_rq[dir] == Some((old.start_sector, old.id)) {
            self.next_rq[dir] = Some((grown.start_sector, grown.id));
        }
    }

    /// Linux as_merged_requests: the survivor takes the earlier FIFO time; the absorbed request
    /// leaves, and as_put_io_context counts it as a completed sync request of its process.
    fn requests_merged(&mut self, into: &Request, grown: Request, absorbed: &Request, cx: &Context) {
        let dir = dir_of(absorbed);
        if let Some(gone) = self.dirs[dir].get(absorbed.id).copied() {
            self.dirs[dir_of(into)].inherit_fifo_place(into.id, &gone);
        }
        self.remove_queued(dir, absorbed.id);
        if dir == SYNC {
            if let Some(aic) = self.procs.get_mut(absorbed.principal.pid) {
                aic.io_running = true;
                aic.last_end_request_ns = cx.now_ns;
            }
        }
        self.maybe_drop(Some(absorbed.principal.pid));
        self.merged(into, grown, cx);
    }

    fn is_work_conserving(&self) -> bool {
        false
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = vec![
            ("antic_waits", self.waits),
            ("antic_timeouts", self.timeouts),
            ("read_batches", self.batches[SYNC]),
            ("write_batches", self.batches[ASYNC]),
            ("write_batch_count", self.write_batch_count),
            ("exit_prob_fx", self.est.exit_prob),
            ("exit_no_coop_fx", self.est.exit_no_coop),
        ];
        if matches!(self.variant, Variant::Cas { .. }) {
            v.push(("coop_prob_fx", self.est.coop_prob));
        }
        v.extend(Break::ALL.iter().map(|&b| (b.name(), self.breaks[b as usize])));
        v
    }
}

// ---- Tunables (sysfs names of 2.6.32; stored in ms, 0 to INT_MAX) ----

const fn ms_tunable(name: &'static str, default: u64, help: &'static str) -> Tunable {
    Tunable { name, integer: true, default: default as f64, unit: "ms", min: 0.0, max: INT_MAX, help }
}

pub const LAS_TUNABLES: &[Tunable] = &[
    ms_tunable("read_expire", READ_EXPIRE_MS, "a read's (sync request's) FIFO deadline after its insertion"),
    ms_tunable("write_expire", WRITE_EXPIRE_MS, "a write's (async request's) FIFO deadline after its insertion"),
    ms_tunable("read_batch_expire", READ_BATCH_EXPIRE_MS, "how long a read batch runs before writes get a turn"),
    ms_tunable(
        "write_batch_expire",
        WRITE_BATCH_EXPIRE_MS,
        "target length of a write batch (write_batch_count is tuned toward it; starts at this / 10, at least 2)",
    ),
    ms_tunable(
        "antic_expire",
        ANTIC_EXPIRE_MS,
        "longest wait for the anticipated process after its request completes; 0 = no anticipation",
    ),
];

pub const CAS_TUNABLES: &[Tunable] = &[
    LAS_TUNABLES[0],
    LAS_TUNABLES[1],
    LAS_TUNABLES[2],
    LAS_TUNABLES[3],
    LAS_TUNABLES[4],
    Tunable {
        name: "antic_consume_limit",
        integer: true,
        default: 0.0,
        unit: "percent",
        min: 0.0,
        max: 100.0,
        help: "Seelam et al. section 7: stop anticipating on a process whose decayed fraction of timed-out anticipations exceeds this; 0 = off",
    },
];

pub fn new_las(t: &TunableValues) -> Result<As, String> {
    As::new(Variant::Las, t)
}

pub fn new_cas(t: &TunableValues) -> Result<As, String> {
    As::new(Variant::Cas { consume_limit_pct: whole(t, "antic_consume_limit")? }, t)
}

pub fn new_las_2_6_9(t: &TunableValues) -> Result<As, String> {
    As::for_kernel(Variant::Las, Kernel::V2_6_9, t)
}

/// CAS on the kernel Seelam et al. extended: its steps with 2.6.9's close test.
pub fn new_cas_2_6_9(t: &TunableValues) -> Result<As, String> {
    As::for_kernel(Variant::Cas { consume_limit_pct: whole(t, "antic_consume_limit")? }, Kernel::V2_6_9, t)
}

#[cfg(test)]
mod cas_tests;
#[cfg(test)]
mod tests;
