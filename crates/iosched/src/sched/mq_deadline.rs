//! mq-deadline: today's Linux deadline scheduler (block/mq-deadline.c, 6.x). The core is 2.6's
//! deadline after Linux 2.6.25: per direction a sector-sorted list and a FIFO by deadline; a
//! batch goes on in sector order while it has dispatched fewer than `fifo_batch` requests (no
//! contiguity test); between batches reads are preferred unless writes have been passed over
//! `writes_starved` times; in the chosen direction a batch starts at the FIFO head if its
//! deadline has come or there is no request at or after the last dispatched position, else at
//! that next request. Since 5.14 there is one such set of queues per I/O priority class (RT, BE,
//! IDLE; "none" counts as BE), served in strict order: a class is served only when no request of
//! a higher class is queued or at the device. `prio_aging_expire` bounds that: when requests of
//! two or more classes are pending, a BE or IDLE request inserted more than prio_aging_expire
//! ago is served first. `async_depth` caps how many requests other than reads may be allocated
//! (`limit_depth`).
//!
//! Linux's elevator alias for mq-deadline is "deadline"; here `deadline` is the 2.6 scheduler,
//! so mq-deadline has no alias.

use super::deadline::{dir_of, whole, DirQueue, Queued, INT_MAX, READ, WRITE};
use super::tunables::{Tunable, TunableValues};
use super::{Completion, Context, Decision, Scheduler};
use crate::device::ArmPath;
use crate::request::{Op, PrioClass, Request};
use crate::time::{Nanos, NS_PER_MS};
use std::collections::VecDeque;

// ---- Defaults (block/mq-deadline.c, top of the file) ----

/// `read_expire = HZ / 2`, ms.
pub const READ_EXPIRE_MS: u64 = 500;
/// `write_expire = 5 * HZ`, ms.
pub const WRITE_EXPIRE_MS: u64 = 5_000;
/// `prio_aging_expire = 10 * HZ`, ms: after this, a lower-priority request is served first.
pub const PRIO_AGING_EXPIRE_MS: u64 = 10_000;
/// `writes_starved = 2`.
pub const WRITES_STARVED: u64 = 2;
/// `fifo_batch = 16`, requests.
pub const FIFO_BATCH: u64 = 16;
/// `dd->front_merges = 1` (dd_init_sched).
pub const FRONT_MERGES: bool = true;
/// `async_depth` 0 here means Linux's default: nr_requests since 6.10 (dd_depth_updated after
/// commit 39823b47bbd4, "Fix the tag reservation code"); 5.14-6.9 used max(1, 3/4 of it).
pub const ASYNC_DEPTH: u64 = 0;

/// Priority levels (Linux enum dd_prio).
const RT: usize = 0;
const BE: usize = 1;
const IDLE: usize = 2;
const PRIO_COUNT: usize = 3;

// ---- State ----

/// Linux struct dd_per_prio: one class's queues, where its last dispatch in each direction
/// started (latest_pos), and its requests inserted and not yet completed (dd_queued: the
/// queued ones and those at the device).
#[derive(Default, Debug)]
struct PerPrio {
    dirs: [DirQueue; 2],
    latest_pos: [u64; 2],
    in_use: u64,
}

pub struct MqDeadline {
    // run time data
    /// Flushes (Linux inserts them at the head, on dd->dispatch), served first.
    dispatch: VecDeque<Request>,
    per_prio: [PerPrio; PRIO_COUNT],
    /// Direction of the last dispatched request (Linux starts with DD_WRITE).
    last_dir: usize,
    batching: u64,
    starved: u64,
    seq: u64,
    // settings
    fifo_expire_ns: [Nanos; 2],
    fifo_batch: u64,
    writes_starved: u64,
    front_merges: bool,
    async_depth: u32,
    prio_aging_expire_ns: Nanos,
}

// ---- Helpers ----

/// Linux ioprio_class_to_prio.
fn prio_of(req: &Request) -> usize {
    match req.prio.class.effective() {
        PrioClass::RealTime => RT,
        PrioClass::Idle => IDLE,
        PrioClass::None | PrioClass::BestEffort => BE,
    }
}

impl MqDeadline {
    pub fn new(t: &TunableValues) -> Result<Self, String> {
        Ok(MqDeadline {
            dispatch: VecDeque::new(),
            per_prio: Default::default(),
            last_dir: WRITE,
            batching: 0,
            starved: 0,
            seq: 0,
            fifo_expire_ns: [whole(t, "read_expire")? * NS_PER_MS, whole(t, "write_expire")? * NS_PER_MS],
            fifo_batch: whole(t, "fifo_batch")?,
            writes_starved: whole(t, "writes_starved")?,
            front_merges: t.get("front_merges") != 0.0,
            async_depth: whole(t, "async_depth")?.min(u32::MAX as u64) as u32,
            prio_aging_expire_ns: whole(t, "prio_aging_expire")? * NS_PER_MS,
        })
    }

    /// Requests of class `prio` inserted and not yet completed (Linux dd_queued).
    fn dd_queued(&self, prio: usize) -> u64 {
        self.per_prio[prio].in_use
    }

    /// The first request of `prio` in `dir` at or after that class's latest position (Linux
    /// deadline_next_request / deadline_from_pos).
    fn next_request(&self, prio: usize, dir: usize) -> Option<(u64, u64)> {
        let pp = &self.per_prio[prio];
        pp.dirs[dir].at_or_after(pp.latest_pos[dir])
    }

    /// Whether the FIFO head of `prio`/`dir` has reached its deadline (time_is_before_eq_jiffies).
    fn fifo_expired(&self, prio: usize, dir: usize, now: Nanos) -> bool {
        self.per_prio[prio].dirs[dir].fifo_head().is_some_and(|q| q.deadline_ns <= now)
    }

    /// Linux __dd_dispatch_request for one class: the batch goes on, or a direction and a
    /// starting request are chosen; the request is served only if it was inserted at or before
    /// `latest_start` (Linux started_after; deadlines are checked against `now`). Like Linux, choosing updates the batch state even
    /// when the request is then refused.
    fn dispatch_prio(&mut self, prio: usize, now: Nanos, latest_start: i128) -> Option<Request> {
        let mut dir = self.last_dir;
        let mut key = self.next_request(prio, dir).filter(|_| self.batching < self.fifo_batch);
        if key.is_none() {
            // Not running a batch: choose a direction.
            let pp = &self.per_prio[prio];
            let (reads, writes) = (!pp.dirs[READ].is_empty(), !pp.dirs[WRITE].is_empty());
            dir = if reads {
                let forced = writes && {
                    self.starved += 1;
                    self.starved - 1 >= self.writes_starved
                };
                if forced {
                    self.starved = 0;
                    WRITE
                } else {
                    READ
                }
            } else if writes {
                self.starved = 0;
                WRITE
            } else {
                return None;
            };
            let next = self.next_request(prio, dir);
            key = if self.fifo_expired(prio, dir, now) || next.is_none() {
                self.per_prio[prio].dirs[dir].fifo_head().map(|q| (q.req.start_sector, q.req.id))
            } else {
                next
            };
            key?;
            self.last_dir = dir;
            self.batching = 0;
        }
        let (_, id) = key?;
        let q = *self.per_prio[prio].dirs[dir].get(id).expect("queued");
        // The request's insertion time: its deadline less its direction's expiry.
        let start = q.deadline_ns as i128 - self.fifo_expire_ns[dir] as i128;
        if start > latest_start {
            return None;
        }
        self.batching += 1;
        let pp = &mut self.per_prio[prio];
        pp.dirs[dir].take(id);
        pp.latest_pos[dir] = q.req.start_sector;
        Some(q.req)
    }

    /// Linux dd_dispatch_request.
    fn dispatch(&mut self, now: Nanos) -> Option<Request> {
        if let Some(rq) = self.dispatch.pop_front() {
            let prio = prio_of(&rq);
            self.per_prio[prio].latest_pos[dir_of(&rq)] = rq.start_sector;
            return Some(rq);
        }
        // Aged requests of a lower class first, when two or more classes have requests.
        let classes = (0..PRIO_COUNT).filter(|&p| self.dd_queued(p) > 0).count();
        if classes >= 2 {
            let latest = now as i128 - self.prio_aging_expire_ns as i128;
            for prio in [BE, IDLE] {
                if let Some(rq) = self.dispatch_prio(prio, now, latest) {
                    return Some(rq);
                }
            }
        }
        // Then by class: a lower class waits while a higher one has requests queued or in flight.
        for prio in 0..PRIO_COUNT {
            let rq = self.dispatch_prio(prio, now, now as i128);
            if rq.is_some() || self.dd_queued(prio) > 0 {
                return rq;
            }
        }
        None
    }

    /// A request leaves without being served (merged into another, or taken out).
    fn forget(&mut self, req: &Request) -> Option<Queued> {
        let prio = prio_of(req);
        let q = self.per_prio[prio].dirs[dir_of(req)].take(req.id)?;
        self.per_prio[prio].in_use = self.per_prio[prio].in_use.saturating_sub(1);
        Some(q)
    }
}

// ---- Hooks ----

impl Scheduler for MqDeadline {
    fn name(&self) -> &str {
        "mq-deadline"
    }

    /// Linux dd_insert_request: counted in its class; into the sort list and at the FIFO's tail
    /// with deadline = now + expire (flushes: at the head, on the dispatch list).
    fn add(&mut self, req: Request, cx: &Context) {
        let prio = prio_of(&req);
        self.per_prio[prio].in_use += 1;
        if req.op == Op::Flush {
            self.dispatch.push_back(req);
            return;
        }
        let dir = dir_of(&req);
        self.seq += 1;
        self.per_prio[prio].dirs[dir].insert(Queued { req, deadline_ns: cx.now_ns + self.fifo_expire_ns[dir], seq: self.seq });
    }

    fn next(&mut self, cx: &Context) -> Decision {
        match self.dispatch(cx.now_ns) {
            Some(req) => Decision::Dispatch(req, ArmPath::Direct),
            None => Decision::Empty,
        }
    }

    /// Linux dd_finish_request: the class has one request fewer.
    fn completed(&mut self, done: &Completion, _cx: &Context) {
        let pp = &mut self.per_prio[prio_of(&done.request)];
        pp.in_use = pp.in_use.saturating_sub(1);
    }

    fn queued(&self) -> usize {
        self.dispatch.len() + self.per_prio.iter().map(|p| p.dirs[READ].len() + p.dirs[WRITE].len()).sum::<usize>()
    }

    fn remove(&mut self, req: &Request, _cx: &Context) -> bool {
        self.forget(req).is_some()
    }

    fn allow_merge(&self, _rq: &Request, _bio: &Request) -> bool {
        true
    }

    fn front_merges(&self) -> bool {
        self.front_merges
    }

    /// Linux dd_request_merged: a front merge re-sorts the request; FIFO place and deadline stay.
    fn merged(&mut self, old: &Request, grown: Request, _cx: &Context) {
        self.per_prio[prio_of(old)].dirs[dir_of(old)].regrow(grown);
    }

    /// Linux dd_merged_requests: the survivor takes the absorbed request's deadline and FIFO
    /// place if that came first; the absorbed request is freed (finish_request counts it).
    fn requests_merged(&mut self, into: &Request, grown: Request, absorbed: &Request, cx: &Context) {
        self.merged(into, grown, cx);
        if let Some(gone) = self.forget(absorbed) {
            self.per_prio[prio_of(into)].dirs[dir_of(into)].inherit_fifo_place(into.id, &gone);
        }
    }

    /// Linux dd_limit_depth: reads are never throttled (op_is_sync is true for every read);
    /// everything else may hold at most async_depth of the nr_requests tags.
    fn limit_depth(&self, req: &Request, nr_requests: u32) -> u32 {
        if req.op == Op::Read || self.async_depth == 0 {
            nr_requests
        } else {
            self.async_depth.min(nr_requests)
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("starved", self.starved)]
    }
}

// ---- Tunables (Linux's sysfs names and STORE_INT/STORE_JIFFIES bounds) ----

pub const TUNABLES: &[Tunable] = &[
    Tunable {
        name: "read_expire",
        default: READ_EXPIRE_MS as f64,
        unit: "ms",
        min: 0.0,
        max: INT_MAX,
        help: "a read's deadline after its insertion",
    },
    Tunable {
        name: "write_expire",
        default: WRITE_EXPIRE_MS as f64,
        unit: "ms",
        min: 0.0,
        max: INT_MAX,
        help: "a write's deadline after its insertion",
    },
    Tunable {
        name: "writes_starved",
        default: WRITES_STARVED as f64,
        unit: "count",
        min: 0.0,
        max: INT_MAX,
        help: "times reads may be chosen over waiting writes before a write batch",
    },
    Tunable {
        name: "front_merges",
        default: FRONT_MERGES as u8 as f64,
        unit: "bool",
        min: 0.0,
        max: 1.0,
        help: "merge bios ending where a queued request starts",
    },
    Tunable {
        name: "async_depth",
        default: ASYNC_DEPTH as f64,
        unit: "requests",
        min: 0.0,
        max: INT_MAX,
        help: "requests other than reads that may be allocated at once (0: nr_requests, Linux 6.10+)",
    },
    Tunable {
        name: "fifo_batch",
        default: FIFO_BATCH as f64,
        unit: "requests",
        min: 0.0,
        max: INT_MAX,
        help: "requests per batch, in sector order",
    },
    Tunable {
        name: "prio_aging_expire",
        default: PRIO_AGING_EXPIRE_MS as f64,
        unit: "ms",
        min: 0.0,
        max: INT_MAX,
        help: "a BE or IDLE request older than this is served before higher classes",
    },
];
