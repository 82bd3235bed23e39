//! kyber (Linux block/kyber-iosched.c, as in 6.x kernels): latency targets met by throttling
//! how many requests of each kind may be at the device at once.
//!
//! Requests fall into scheduling domains by operation: READ (every read, synchronous or not),
//! WRITE (every write), DISCARD (every discard, `Op::Discard`: its own 64 tokens, a batch of one
//! and a 5 s latency target, so a burst of trims cannot take the read or write domains' tokens)
//! and OTHER (flushes). A
//! domain holds at most `depth` tokens; a request needs one to be dispatched and gives it back
//! when it completes. Dispatch goes round the domains, up to a batch of 16 reads, 8 writes,
//! 1 discard or 1 other request in a row, and skips a domain that is empty or out of tokens.
//!
//! Every completed READ, WRITE and DISCARD request adds its total latency (insertion to
//! completion) and its I/O latency (dispatch to completion) to its domain's two histograms of
//! 8 buckets, each a quarter of the domain's latency target wide (the last one open-ended).
//! 100 ms after the first completion since the last evaluation the histograms are evaluated
//! (Linux's `kyber_timer_fn`): if any domain's p90 I/O latency is above its target the device
//! is congested; each domain's depth is then scaled by (p99 bucket + 1) / 4 of its total latency
//! (clamped to [1, the domain's maximum]) when the domain misses its target (it grows) or when
//! the device is congested (a domain meeting its target shrinks). A percentile is only taken
//! from 500 samples, or once a second has passed since it was first tried.
//!
//! Lists per hardware queue (`kyber_hctx_data`), as Linux keeps them: behind blk-mq
//! (`attach_hw_queues`) each hardware queue has, per domain, its software queues' lists (the
//! `kcq`s, one per submitting CPU: requests wait there, and bios may merge into them, among the
//! last 8 of their own CPU's list, as `blk_bio_list_merge` scans) and a dispatch list (`rqs`):
//! when the domain gets a token with nothing already moved, every CPU's list is spliced onto it
//! in CPU order (`kyber_flush_busy_kcqs`), no more merges, and requests leave it in order. Each
//! hardware queue has its own current domain and batch count; tokens, depths and latency
//! histograms are device-wide (`kyber_queue_data`). Without blk-mq there is one hardware queue
//! and one software queue (the legacy request queue).
//!
//! Differences from Linux, all forced by the simulator's shape:
//! - Linux runs each hardware queue on its own (at an insertion on the submitting CPU's queue,
//!   when a token frees, from kblockd); the engine asks the scheduler once per dispatch, and
//!   kyber serves the hardware queues blk-mq would ask (nothing on their dispatch list; on NVMe
//!   a queue without a free tag included: its request waits there for one, holding its token,
//!   as in Linux; on SATA and disks the SCSI budget stops blk-mq first) that have work, in turn,
//!   starting after the one served last.
//! - Tokens are a count: a domain may dispatch while fewer than `depth` of its requests are in
//!   flight. Linux's sbitmap, shrunk below the bits in use, lets a new token be taken as soon as
//!   any bit below the new depth frees, which depends on which bits were taken.
//! - The timer: Linux arms a 100 ms timer at a completion (`timer_reduce`) and evaluates when it
//!   fires. Here the deadline is set the same way and the evaluation runs, as of the deadline,
//!   at the first call into the scheduler at or after it (a completion, an insertion or a
//!   dispatch). Nothing reaches the scheduler between the deadline and that call, so the
//!   histograms, the time used for the one-second timeout and every later decision are the
//!   same; the only difference is that jiffies are not rounded.
//! - Asynchronous requests may hold at most 75% of `nr_requests` (Linux's
//!   KYBER_DEFAULT_ASYNC_PERCENT, applied by the block layer's request pool through
//!   `limit_depth`).

use crate::block::mq::queue_map::QueueMap;
use crate::device::ArmPath;
use crate::fast_hash::FastMap;
use crate::request::{Op, Request, RequestId};
use crate::sched::tunables::{Tunable, TunableValues};
use crate::sched::{Completion, Context, Decision, Scheduler};
use crate::time::Nanos;
use std::collections::{BTreeMap, VecDeque};

/// Scheduling domains, in Linux's order (the dispatch rotation follows it).
pub const READ: usize = 0;
pub const WRITE: usize = 1;
pub const DISCARD: usize = 2;
pub const OTHER: usize = 3;
pub const NUM_DOMAINS: usize = 4;
/// Domains with a latency target and histograms (all but OTHER).
const TIMED_DOMAINS: usize = 3;
pub const DOMAIN_NAMES: [&str; NUM_DOMAINS] = ["READ", "WRITE", "DISCARD", "OTHER"];

/// Largest (and initial) token depth of each domain (`kyber_depth[]`).
pub const MAX_DEPTH: [u32; NUM_DOMAINS] = [256, 128, 64, 16];
/// Requests dispatched from one domain in a row (`kyber_batch_size[]`).
pub const BATCH_SIZE: [u32; NUM_DOMAINS] = [16, 8, 1, 1];
/// Default latency targets (`kyber_latency_targets[]`): 2 ms, 10 ms, 5 s. Only READ and WRITE
/// can be changed (sysfs `read_lat_nsec`, `write_lat_nsec`).
pub const DEFAULT_TARGET_NS: [u64; TIMED_DOMAINS] = [2_000_000, 10_000_000, 5_000_000_000];

/// Histogram buckets are target >> LATENCY_SHIFT wide (`KYBER_LATENCY_SHIFT`).
pub const LATENCY_SHIFT: u32 = 2;
/// Buckets at or below the target (`KYBER_GOOD_BUCKETS`).
pub const GOOD_BUCKETS: usize = 1 << LATENCY_SHIFT;
/// All buckets (`KYBER_LATENCY_BUCKETS`): 4 good, 4 bad, the last one open-ended.
pub const LATENCY_BUCKETS: usize = 2 << LATENCY_SHIFT;
/// Histogram kinds.
pub const TOTAL_LATENCY: usize = 0;
pub const IO_LATENCY: usize = 1;

/// Evaluation delay after a completion (`timer_reduce(&kqd->timer, jiffies + HZ / 10)`).
pub const TIMER_NS: Nanos = 100_000_000;
/// A percentile is taken from this many samples ... (`calculate_percentile`)
pub const MIN_SAMPLES: u32 = 500;
/// ... or once this long has passed since it was first tried with samples (`jiffies + HZ`).
pub const PERCENTILE_TIMEOUT_NS: Nanos = 1_000_000_000;
/// Asynchronous requests may take this percentage of the request pool.
pub const ASYNC_PERCENT: u32 = 75;
/// `blk_bio_list_merge` tries the last 8 requests of a software queue.
pub const MERGE_SCAN: usize = 8;

/// Linux's sysfs attributes (kstrtoull: any u64 nanoseconds).
pub const TUNABLES: &[Tunable] = &[
    Tunable {
        name: "read_lat_nsec",
        integer: true,
        default: 2_000_000.0,
        unit: "ns",
        min: 0.0,
        max: u64::MAX as f64,
        help: "latency target of the READ domain (Linux default 2 ms)",
    },
    Tunable {
        name: "write_lat_nsec",
        integer: true,
        default: 10_000_000.0,
        unit: "ns",
        min: 0.0,
        max: u64::MAX as f64,
        help: "latency target of the WRITE domain (Linux default 10 ms)",
    },
];

/// The domain a request belongs to (`kyber_sched_domain`).
pub fn domain_of(req: &Request) -> usize {
    match req.op {
        Op::Read => READ,
        Op::Write => WRITE,
        // kyber_sched_domain: REQ_OP_DISCARD has its own domain (depth 64, batch 1, 5 s target).
        Op::Discard => DISCARD,
        Op::Flush => OTHER,
    }
}

/// The histogram bucket of a latency (`add_latency_sample`): bucket i holds latencies in
/// (i, i+1] quarters of the target; 0 goes to bucket 0, everything past 7/4 to the last.
pub fn latency_bucket(latency_ns: u64, target_ns: u64) -> usize {
    if latency_ns == 0 {
        return 0;
    }
    let width = (target_ns >> LATENCY_SHIFT).max(1);
    ((latency_ns - 1) / width).min(LATENCY_BUCKETS as u64 - 1) as usize
}

/// The bucket holding the `percentile`-th ranked sample (`calculate_percentile` once it has
/// enough samples): the rank is ceil(samples x percentile / 100).
pub fn percentile_bucket(buckets: &[u32; LATENCY_BUCKETS], percentile: u32) -> usize {
    let samples: u64 = buckets.iter().map(|&b| b as u64).sum();
    let mut rank = (samples * percentile as u64).div_ceil(100);
    for (bucket, &n) in buckets.iter().enumerate().take(LATENCY_BUCKETS - 1) {
        if n as u64 >= rank {
            return bucket;
        }
        rank -= n as u64;
    }
    LATENCY_BUCKETS - 1
}

/// The new depth of a domain whose p99 total latency fell in `p99_bucket`
/// (`kyber_timer_fn` + `kyber_resize_domain`): depth x (bucket + 1) / 4, in [1, max].
pub fn scaled_depth(depth: u32, p99_bucket: usize, max: u32) -> u32 {
    let d = (depth as u64 * (p99_bucket as u64 + 1)) >> LATENCY_SHIFT;
    d.clamp(1, max as u64) as u32
}

/// The two latency histograms of each timed domain and the state of their evaluation.
#[derive(Clone, Debug, Default)]
pub struct LatencyStats {
    /// [domain][TOTAL_LATENCY | IO_LATENCY][bucket]
    pub buckets: [[[u32; LATENCY_BUCKETS]; 2]; TIMED_DOMAINS],
    /// When a percentile of the domain may be taken with fewer than 500 samples. One per domain,
    /// shared by its two histograms, as in Linux (`latency_timeout[]`).
    pub timeout_ns: [Option<Nanos>; TIMED_DOMAINS],
    /// The last p99 bucket seen while the device was not congested (`domain_p99[]`).
    pub domain_p99: [Option<usize>; TIMED_DOMAINS],
}

impl LatencyStats {
    pub fn add(&mut self, domain: usize, kind: usize, latency_ns: u64, target_ns: u64) {
        self.buckets[domain][kind][latency_bucket(latency_ns, target_ns)] += 1;
    }

    /// `calculate_percentile` at time `now`: None without samples, or with fewer than 500
    /// before the domain's timeout; otherwise the bucket, and the histogram starts again.
    pub fn percentile(&mut self, domain: usize, kind: usize, percentile: u32, now: Nanos) -> Option<usize> {
        let samples: u32 = self.buckets[domain][kind].iter().sum();
        if samples == 0 {
            return None;
        }
        let timeout = *self.timeout_ns[domain].get_or_insert(now + PERCENTILE_TIMEOUT_NS);
        if samples < MIN_SAMPLES && timeout > now {
            return None;
        }
        self.timeout_ns[domain] = None;
        let b = percentile_bucket(&self.buckets[domain][kind], percentile);
        self.buckets[domain][kind] = [0; LATENCY_BUCKETS];
        Some(b)
    }
}

/// What one evaluation did (for tests and counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Evaluation {
    pub congested: bool,
    /// The p99 bucket used for each timed domain (None: no adjustment).
    pub p99: [Option<usize>; TIMED_DOMAINS],
}

#[derive(Clone, Copy, Debug, Default)]
struct DomainCounters {
    dispatched: u64,
    depth_increases: u64,
    depth_decreases: u64,
    min_depth: u32,
    max_in_flight: u32,
}

/// Where a queued request is: its domain, its hardware queue and, while in `pending`, its
/// software queue (the submitting CPU) and insertion number.
#[derive(Clone, Copy, Debug)]
struct Slot {
    domain: usize,
    hctx: usize,
    key: Option<(u32, u64)>,
}

/// One hardware queue's lists and dispatch state (`kyber_hctx_data`).
#[derive(Default)]
struct HctxLists {
    /// Per domain, requests not yet given a token, by (submitting CPU, insertion number): the
    /// software queues' lists (`kcq`s), flushed in CPU order.
    pending: [BTreeMap<(u32, u64), Request>; NUM_DOMAINS],
    /// Per domain, requests moved out of `pending` when the domain got a token (`khd->rqs`).
    ready: [VecDeque<Request>; NUM_DOMAINS],
    cur_domain: usize,
    batching: u32,
}

impl HctxLists {
    /// `kyber_has_work`: a request waits in some domain.
    fn has_work(&self) -> bool {
        self.pending.iter().any(|p| !p.is_empty()) || self.ready.iter().any(|r| !r.is_empty())
    }
}

pub struct Kyber {
    targets_ns: [u64; TIMED_DOMAINS],
    /// Per hardware queue (one without blk-mq).
    hctxs: Vec<HctxLists>,
    /// blk-mq's map of requests onto hardware and software queues (None: one of each).
    map: Option<QueueMap>,
    /// The hardware queue served first at the next dispatch.
    next_hctx: usize,
    slots: FastMap<RequestId, Slot>,
    next_seq: u64,
    queued: usize,
    /// When each request was inserted (Linux's start_time_ns), until it completes.
    inserted_ns: FastMap<RequestId, Nanos>,
    depth: [u32; NUM_DOMAINS],
    in_flight: [u32; NUM_DOMAINS],
    pub stats: LatencyStats,
    /// The evaluation timer's deadline, if armed.
    timer_ns: Option<Nanos>,
    counters: [DomainCounters; NUM_DOMAINS],
    evaluations: u64,
    congested_evaluations: u64,
    /// Calls to `next` answered Empty with requests queued (every domain with work out of tokens).
    token_waits: u64,
}

impl Kyber {
    pub fn new(t: &TunableValues) -> Self {
        Kyber::with_targets(t.get("read_lat_nsec") as u64, t.get("write_lat_nsec") as u64)
    }

    pub fn with_targets(read_lat_nsec: u64, write_lat_nsec: u64) -> Self {
        let mut counters = [DomainCounters::default(); NUM_DOMAINS];
        for (c, max) in counters.iter_mut().zip(MAX_DEPTH) {
            c.min_depth = max;
        }
        Kyber {
            targets_ns: [read_lat_nsec, write_lat_nsec, DEFAULT_TARGET_NS[DISCARD]],
            hctxs: vec![HctxLists::default()],
            map: None,
            next_hctx: 0,
            slots: FastMap::default(),
            next_seq: 0,
            queued: 0,
            inserted_ns: FastMap::default(),
            depth: MAX_DEPTH,
            in_flight: [0; NUM_DOMAINS],
            stats: LatencyStats::default(),
            timer_ns: None,
            counters,
            evaluations: 0,
            congested_evaluations: 0,
            token_waits: 0,
        }
    }

    /// Token depth of each domain now.
    pub fn depths(&self) -> [u32; NUM_DOMAINS] {
        self.depth
    }

    /// Requests of each domain at the device now.
    pub fn in_flight(&self) -> [u32; NUM_DOMAINS] {
        self.in_flight
    }

    /// Sets a domain's depth as `kyber_resize_domain` would (clamped to [1, max]).
    pub fn resize(&mut self, domain: usize, depth: u32) {
        let depth = depth.clamp(1, MAX_DEPTH[domain]);
        let old = self.depth[domain];
        let c = &mut self.counters[domain];
        if depth > old {
            c.depth_increases += 1;
        } else if depth < old {
            c.depth_decreases += 1;
        }
        c.min_depth = c.min_depth.min(depth);
        self.depth[domain] = depth;
    }

    /// The timer's work (`kyber_timer_fn`) as of `now`.
    #[allow(clippy::needless_range_loop)] // domains index several tables
    pub fn evaluate(&mut self, now: Nanos) -> Evaluation {
        self.evaluations += 1;
        let mut ev = Evaluation::default();
        // Congestion: any domain's p90 I/O latency beyond its target.
        for d in 0..TIMED_DOMAINS {
            if let Some(p90) = self.stats.percentile(d, IO_LATENCY, 90, now) {
                if p90 >= GOOD_BUCKETS {
                    ev.congested = true;
                }
            }
        }
        self.congested_evaluations += ev.congested as u64;
        for d in 0..TIMED_DOMAINS {
            let mut p99 = self.stats.percentile(d, TOTAL_LATENCY, 99, now);
            // A p99 from a quiet window waits for the next congestion, and is used once.
            if ev.congested {
                if p99.is_none() {
                    p99 = self.stats.domain_p99[d];
                }
                self.stats.domain_p99[d] = None;
            } else if p99.is_some() {
                self.stats.domain_p99[d] = p99;
            }
            let Some(p99) = p99 else { continue };
            // A domain missing its target is throttled less; one meeting it is throttled more
            // only when the device is congested.
            if ev.congested || p99 >= GOOD_BUCKETS {
                ev.p99[d] = Some(p99);
                let depth = scaled_depth(self.depth[d], p99, MAX_DEPTH[d]);
                self.resize(d, depth);
            }
        }
        ev
    }

    /// Runs the evaluation if its deadline has passed (see the module notes on the timer).
    fn run_timer(&mut self, now: Nanos) {
        if let Some(t) = self.timer_ns {
            if now >= t {
                self.timer_ns = None;
                self.evaluate(t);
            }
        }
    }

    /// The hardware queue and software queue (submitting CPU) of a request.
    fn queues_of(&self, req: &Request) -> (usize, u32) {
        self.map.as_ref().map_or((0, 0), |m| (m.hwq_of(req), m.cpu_of(req) as u32))
    }

    /// Whether `bio` would go to the software queue holding `rq` in its domain's pending list,
    /// and `rq` is among the last `MERGE_SCAN` there.
    fn mergeable(&self, rq: &Request, bio: &Request) -> bool {
        let Some(Slot { domain, hctx, key: Some((cpu, seq)) }) = self.slots.get(&rq.id).copied() else {
            return false;
        };
        if self.queues_of(bio) != (hctx, cpu) {
            return false;
        }
        self.hctxs[hctx].pending[domain].range((cpu, seq + 1)..=(cpu, u64::MAX)).take(MERGE_SCAN).count() < MERGE_SCAN
    }

    /// `kyber_dispatch_cur_domain` on hardware queue `h`: its current domain's next request, if
    /// it has one and the domain a token.
    fn dispatch_cur_domain(&mut self, h: usize) -> Option<Request> {
        let hc = &mut self.hctxs[h];
        let d = hc.cur_domain;
        if hc.ready[d].is_empty() && hc.pending[d].is_empty() {
            return None;
        }
        if self.in_flight[d] >= self.depth[d] {
            return None;
        }
        if hc.ready[d].is_empty() {
            // Got a token: move every software queue's pending requests, in CPU order
            // (merges into them end here).
            let pending = std::mem::take(&mut hc.pending[d]);
            for (_, r) in pending {
                if let Some(s) = self.slots.get_mut(&r.id) {
                    s.key = None;
                }
                hc.ready[d].push_back(r);
            }
        }
        let rq = hc.ready[d].pop_front()?;
        hc.batching += 1;
        self.slots.remove(&rq.id);
        self.queued -= 1;
        self.in_flight[d] += 1;
        let c = &mut self.counters[d];
        c.dispatched += 1;
        c.max_in_flight = c.max_in_flight.max(self.in_flight[d]);
        Some(rq)
    }

    /// `kyber_dispatch_request` on hardware queue `h`: finish its current batch if the domain has
    /// a request and a token, else start a batch at its next domain that has both.
    fn dispatch_hctx(&mut self, h: usize) -> Option<Request> {
        let hc = &self.hctxs[h];
        if hc.batching < BATCH_SIZE[hc.cur_domain] {
            if let Some(rq) = self.dispatch_cur_domain(h) {
                return Some(rq);
            }
        }
        self.hctxs[h].batching = 0;
        for _ in 0..NUM_DOMAINS {
            let hc = &mut self.hctxs[h];
            hc.cur_domain = (hc.cur_domain + 1) % NUM_DOMAINS;
            if let Some(rq) = self.dispatch_cur_domain(h) {
                return Some(rq);
            }
        }
        None
    }

    fn take_out(&mut self, req: &Request) -> bool {
        let Some(slot) = self.slots.remove(&req.id) else {
            return false;
        };
        let hc = &mut self.hctxs[slot.hctx];
        let found = match slot.key {
            Some(key) => hc.pending[slot.domain].remove(&key).is_some(),
            None => {
                let q = &mut hc.ready[slot.domain];
                match q.iter().position(|r| r.id == req.id) {
                    Some(i) => q.remove(i).is_some(),
                    None => false,
                }
            }
        };
        if found {
            self.queued -= 1;
        }
        found
    }
}

impl Default for Kyber {
    fn default() -> Self {
        Kyber::with_targets(DEFAULT_TARGET_NS[READ], DEFAULT_TARGET_NS[WRITE])
    }
}

impl Scheduler for Kyber {
    fn name(&self) -> &str {
        "kyber"
    }

    fn add(&mut self, req: Request, cx: &Context) {
        self.run_timer(cx.now_ns);
        let domain = domain_of(&req);
        let (hctx, cpu) = self.queues_of(&req);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.hctxs[hctx].pending[domain].insert((cpu, seq), req);
        self.slots.insert(req.id, Slot { domain, hctx, key: Some((cpu, seq)) });
        self.inserted_ns.insert(req.id, cx.now_ns);
        self.queued += 1;
    }

    fn next(&mut self, cx: &Context) -> Decision {
        self.next_for_hw_queues(cx, &|_| true)
    }

    /// Keeps blk-mq's map: lists per hardware queue from now on (before the first request).
    fn attach_hw_queues(&mut self, map: &QueueMap) {
        debug_assert_eq!(self.queued, 0, "hardware queues attached before any request");
        self.hctxs = (0..map.nr_hw_queues()).map(|_| HctxLists::default()).collect();
        self.map = Some(map.clone());
        self.next_hctx = 0;
    }

    /// The hardware queues that can take a request, in turn from the one after the last served:
    /// the first that `kyber_dispatch_request` gives a request for.
    fn next_for_hw_queues(&mut self, cx: &Context, can_take: &dyn Fn(usize) -> bool) -> Decision {
        self.run_timer(cx.now_ns);
        let n = self.hctxs.len();
        let mut waited = false;
        for i in 0..n {
            let h = (self.next_hctx + i) % n;
            // blk-mq asks only a queue with work (`kyber_has_work`): an empty queue keeps its
            // current domain and batch count.
            if !can_take(h) || !self.hctxs[h].has_work() {
                continue;
            }
            if let Some(rq) = self.dispatch_hctx(h) {
                self.next_hctx = (h + 1) % n;
                return Decision::Dispatch(rq, ArmPath::Direct);
            }
            waited = true;
        }
        if waited {
            self.token_waits += 1;
        }
        Decision::Empty
    }

    /// `kyber_completed_request` and `kyber_finish_request`: the token comes back; the latency
    /// samples go to the histograms (not for OTHER); the evaluation timer is armed.
    fn completed(&mut self, done: &Completion, cx: &Context) {
        self.run_timer(cx.now_ns);
        let req = &done.request;
        let d = domain_of(req);
        self.in_flight[d] = self.in_flight[d].saturating_sub(1);
        let inserted = self.inserted_ns.remove(&req.id).unwrap_or(req.issue_ns);
        if d == OTHER {
            return;
        }
        let target = self.targets_ns[d];
        self.stats.add(d, TOTAL_LATENCY, cx.now_ns.saturating_sub(inserted), target);
        self.stats.add(d, IO_LATENCY, cx.now_ns.saturating_sub(done.dispatch_ns), target);
        if self.timer_ns.is_none() {
            self.timer_ns = Some(cx.now_ns + TIMER_NS);
        }
    }

    fn queued(&self) -> usize {
        self.queued
    }

    fn remove(&mut self, req: &Request, cx: &Context) -> bool {
        self.run_timer(cx.now_ns);
        let found = self.take_out(req);
        if found {
            self.inserted_ns.remove(&req.id);
        }
        found
    }

    /// A bio may join a request still in its domain's pending list, among the last 8 there
    /// (`kyber_bio_merge` -> `blk_bio_list_merge`). Two queued requests are never joined: kyber
    /// has no request-merge hook, so Linux never merges requests under it.
    fn allow_merge(&self, rq: &Request, bio: &Request) -> bool {
        domain_of(rq) == domain_of(bio) && self.mergeable(rq, bio)
    }

    fn allow_request_merge(&self, _low: &Request, _high: &Request) -> bool {
        false
    }

    /// kyber_bio_merge: `blk_bio_list_merge` over the bio's CPU list in its domain.
    fn merges_by_list(&self) -> bool {
        true
    }

    /// The request keeps its place; it grew.
    fn merged(&mut self, _old: &Request, grown: Request, _cx: &Context) {
        let Some(slot) = self.slots.get(&grown.id).copied() else {
            return;
        };
        let hc = &mut self.hctxs[slot.hctx];
        match slot.key {
            Some(key) => {
                if let Some(r) = hc.pending[slot.domain].get_mut(&key) {
                    *r = grown;
                }
            }
            None => {
                if let Some(r) = hc.ready[slot.domain].iter_mut().find(|r| r.id == grown.id) {
                    *r = grown;
                }
            }
        }
    }

    fn requests_merged(&mut self, into: &Request, grown: Request, absorbed: &Request, cx: &Context) {
        self.remove(absorbed, cx);
        self.merged(into, grown, cx);
    }

    /// Asynchronous requests may take 75% of the request pool (KYBER_DEFAULT_ASYNC_PERCENT).
    fn limit_depth(&self, req: &Request, nr_requests: u32) -> u32 {
        if req.sync {
            nr_requests
        } else {
            // Never 0: Linux's shallow depth is per bitmap word and at least 1.
            ((nr_requests as u64 * ASYNC_PERCENT as u64 / 100) as u32).max(1)
        }
    }

    /// Kyber holds requests while their domain has no token.
    fn is_work_conserving(&self) -> bool {
        false
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        const NAMES: [[&str; 6]; NUM_DOMAINS] = [
            ["read_dispatched", "read_depth_final", "read_depth_min", "read_depth_increases", "read_depth_decreases", "read_max_in_flight"],
            [
                "write_dispatched",
                "write_depth_final",
                "write_depth_min",
                "write_depth_increases",
                "write_depth_decreases",
                "write_max_in_flight",
            ],
            [
                "discard_dispatched",
                "discard_depth_final",
                "discard_depth_min",
                "discard_depth_increases",
                "discard_depth_decreases",
                "discard_max_in_flight",
            ],
            [
                "other_dispatched",
                "other_depth_final",
                "other_depth_min",
                "other_depth_increases",
                "other_depth_decreases",
                "other_max_in_flight",
            ],
        ];
        let mut out = vec![
            ("evaluations", self.evaluations),
            ("congested_evaluations", self.congested_evaluations),
            ("token_waits", self.token_waits),
        ];
        for (d, n) in NAMES.iter().enumerate() {
            let c = &self.counters[d];
            out.push((n[0], c.dispatched));
            out.push((n[1], self.depth[d] as u64));
            out.push((n[2], c.min_depth as u64));
            out.push((n[3], c.depth_increases));
            out.push((n[4], c.depth_decreases));
            out.push((n[5], c.max_in_flight as u64));
        }
        out
    }
}

#[cfg(test)]
mod tests;
