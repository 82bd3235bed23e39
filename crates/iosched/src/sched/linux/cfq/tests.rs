//! CFQ on hand-built cases through the Scheduler API (a child module of cfq/mod.rs, so it can look
//! at the elevator's state). Time in ms unless said; requests are 16 sectors (8 KiB: larger than a page, so
//! a request arriving during an idle wait ends it at once).

use super::*;
use crate::request::{IoPrio, Principal, PrioClass};
use crate::testkit::ToyDisk;
use std::cell::Cell;

const P: u32 = 1;
const Q: u32 = 2;
const R: u32 = 3;

fn rq(id: u64, pid: u32, op: Op, start: u64, prio: IoPrio) -> Request {
    Request { principal: Principal { pid, group: 1 }, sync: op == Op::Read, prio, ..Request::new(id, op, start, 16, 0) }
}

fn be(level: u8) -> IoPrio {
    IoPrio { class: PrioClass::BestEffort, level }
}

const RT_PRIO: IoPrio = IoPrio { class: PrioClass::RealTime, level: 4 };
const IDLE_PRIO: IoPrio = IoPrio { class: PrioClass::Idle, level: 7 };

struct Bench {
    s: Cfq,
    disk: ToyDisk,
    now: Nanos,
    next_id: u64,
}

impl Bench {
    fn new(tunables: &[(&str, f64)]) -> Self {
        let given = tunables.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let s = Cfq::new(&TunableValues::resolve(TUNABLES, &given).unwrap()).unwrap();
        Bench { s, disk: ToyDisk { head: Cell::new(0) }, now: 0, next_id: 0 }
    }

    fn submit(&mut self, pid: u32, op: Op, start: u64, prio: IoPrio) -> Request {
        self.next_id += 1;
        let r = rq(self.next_id, pid, op, start, prio);
        let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
        self.s.add(r, &cx);
        r
    }

    fn read(&mut self, pid: u32, start: u64) -> Request {
        self.submit(pid, Op::Read, start, IoPrio::default())
    }

    fn next(&mut self) -> Decision {
        let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
        self.s.next(&cx)
    }

    fn dispatch(&mut self) -> Request {
        match self.next() {
            Decision::Dispatch(r, _) => r,
            d => panic!("expected a dispatch at {} ns, got {d:?}", self.now),
        }
    }

    fn complete(&mut self, r: Request) {
        let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
        self.s.completed(&Completion { request: r, dispatch_ns: self.now, positioning_ns: 0 }, &cx);
    }

    /// `pid` reads `n` requests alone from `start`, `step` sectors apart: each dispatched at
    /// once, served in 1 ms, the next one `think_ms` after the completion.
    fn history(&mut self, pid: u32, start: u64, step: u64, n: u64, think_ms: u64) -> u64 {
        for i in 0..n {
            if i > 0 {
                self.now += think_ms * MS;
            }
            let r = self.read(pid, start + step * i);
            assert_eq!(self.dispatch(), r, "history request {i}");
            self.now += MS;
            self.complete(r);
        }
        start + step * n
    }
}

#[test]
fn prio_slices_follow_cfq_prio_slice() {
    let b = Bench::new(&[]);
    // base + base/5 x (4 - level): sync 180 / 100 / 40 ms at levels 0 / 4 / 7; async 72 / 40 / 16.
    let sync: Vec<u64> = [0, 4, 7].iter().map(|&l| b.s.prio_slice_ms(true, l)).collect();
    let asyn: Vec<u64> = [0, 4, 7].iter().map(|&l| b.s.prio_slice_ms(false, l)).collect();
    assert_eq!((sync, asyn), (vec![180, 100, 40], vec![72, 40, 16]));
}

/// The slice the first of `n` busy BE sync queues (level `level`) gets at its first completion.
fn first_slice(n: u32, level: u8, tunables: &[(&str, f64)]) -> u64 {
    let mut b = Bench::new(tunables);
    for pid in 0..n {
        b.submit(10 + pid, Op::Read, 1_000_000 * pid as u64, be(level));
    }
    let r = b.dispatch();
    b.now += MS;
    b.complete(r);
    b.s.queue(b.s.sync_queue_of(r.principal.pid).unwrap()).unwrap().allocated_slice_ms
}

#[test]
fn low_latency_scales_slices_to_target_latency() {
    // Alone: the full slice by priority.
    assert_eq!(first_slice(1, 0, &[]), 180);
    assert_eq!(first_slice(1, 4, &[]), 100);
    // 5 busy queues: average (3 x 5 + 0 + 2) / 4 = 4 queues x 100 ms > 300 ms: 100 x 300 / 400.
    assert_eq!(first_slice(5, 4, &[]), 75);
    // Not below 2 x slice_idle scaled by priority: level 7 (40 ms) -> max(40 x 300/400, 16 x 40/100).
    assert_eq!(first_slice(5, 7, &[]), 30);
    assert_eq!(first_slice(5, 7, &[("slice_idle", 20.0)]), 30);
    assert_eq!(first_slice(5, 7, &[("slice_idle", 40.0)]), 32);
    // 4 busy queues average 3: 300 ms fits, no scaling.
    assert_eq!(first_slice(4, 4, &[]), 100);
    // low_latency off, or a target_latency that fits them all: the full slice.
    assert_eq!(first_slice(5, 4, &[("low_latency", 0.0)]), 100);
    assert_eq!(first_slice(5, 4, &[("target_latency", 1000.0)]), 100);
    assert_eq!(first_slice(5, 4, &[("target_latency", 200.0)]), 50);
}

#[test]
fn idles_for_a_sequential_reader_with_short_think_time() {
    let mut b = Bench::new(&[]);
    let end = b.history(P, 1_000_000, 8, 4, 1);
    // P's queue is empty after its completion: the idle timer is armed for slice_idle.
    assert!(b.s.idle_timer.is_some());
    let far = b.read(Q, 5_000_000);
    assert_eq!(b.next(), Decision::WaitUntil(b.now + 8 * MS), "Q waits while P may still come");
    let hits = b.s.counts.idle_hits;
    // P's next request within the window is served at once, ahead of Q.
    b.now += MS;
    let p = b.read(P, end);
    assert_eq!(b.dispatch(), p);
    assert_eq!(b.s.counts.idle_hits, hits + 1);
    // If P does not come back, the timer ends its slice and Q is served.
    b.now += MS;
    b.complete(p);
    assert_eq!(b.next(), Decision::WaitUntil(b.now + 8 * MS));
    b.now += 8 * MS;
    assert_eq!(b.dispatch(), far);
    assert_eq!(b.s.counts.idle_timeouts, 1);
}

/// P reads alone as in `history`, then Q queues a far read while P's last request is at the
/// drive; returns what the scheduler does when P's request completes.
fn after_p_completes(step: u64, think_ms: u64) -> (Decision, Request, Cfq) {
    let mut b = Bench::new(&[]);
    let end = b.history(P, 1_000_000, step, 8, think_ms);
    b.now += think_ms * MS;
    let p = b.read(P, end);
    assert_eq!(b.dispatch(), p);
    let far = b.read(Q, 9_000_000);
    b.now += MS;
    b.complete(p);
    (b.next(), far, b.s)
}

#[test]
fn no_idling_for_a_seeky_reader_or_one_that_thinks_long() {
    // Sequential, thinking 1 ms: the disk waits for P.
    let (d, _, s) = after_p_completes(8, 1);
    assert!(matches!(d, Decision::WaitUntil(_)), "{d:?}");
    assert!(s.queue(s.sync_queue_of(P).unwrap()).unwrap().idle_window);
    // Seeky (each request 10,000 sectors from the last > CFQQ_SEEK_THR): no idle window; Q's
    // queue shares P's tree, so no workload idling either: Q is served at once.
    let (d, far, s) = after_p_completes(10_000, 1);
    assert!(s.queue(s.sync_queue_of(P).unwrap()).unwrap().seeky());
    assert_eq!(d, Decision::Dispatch(far, ArmPath::Direct));
    // Sequential but thinking 12 ms (> slice_idle 8 ms, with > 80 samples): no idle window.
    let (d, far, s) = after_p_completes(8, 12);
    let pq = s.queue(s.sync_queue_of(P).unwrap()).unwrap();
    assert!(!pq.seeky() && !pq.idle_window);
    assert_eq!(s.cics.get(P).expect("cic").ttime.mean_ms, 12);
    assert_eq!(d, Decision::Dispatch(far, ArmPath::Direct));
}

#[test]
fn workload_type_goes_to_the_tree_waiting_longest_and_async_drains_first() {
    let mut b = Bench::new(&[]);
    // Both arrive at 0: the async queue is keyed 0 - (1 - 1)... its offset (nr_cfqq - 1) x
    // (180 - 40) = -140 ms puts it ahead of the sync queue (key 0).
    let w = b.submit(P, Op::Write, 500_000, IoPrio::default());
    let r = b.read(Q, 10_000);
    let keys: Vec<i64> = [b.s.async_qs[&(BE, 4)], b.s.sync_queue_of(Q).unwrap()].iter().map(|q| b.s.queue(*q).unwrap().rb_key).collect();
    assert_eq!(keys, vec![-140 * MS as i64, 0]);
    assert_eq!(b.dispatch(), w);
    assert_eq!(b.s.serving_type, ASYNC);
    // Async workload slice: min(300 x 1/2, 300 x 1/2) x 40/100 = 60 ms.
    assert_eq!(b.s.workload_expires, 60 * MS as i64);
    // The write is at the drive: the sync queue (which idles) waits for it to drain.
    assert_eq!(b.next(), Decision::Empty, "asked again when the write completes");
    assert_eq!(b.s.serving_type, SYNC);
    b.now += MS;
    b.complete(w);
    assert_eq!(b.dispatch(), r);
    // Sync workload alone in its class: the whole target latency.
    assert_eq!(b.s.workload_expires, signed(b.now - MS) + 300 * MS as i64);
}

#[test]
fn classes_are_served_rt_then_be_then_idle() {
    // slice_idle = 0: no idling, so the order is the classes' alone.
    let mut b = Bench::new(&[("slice_idle", 0.0)]);
    let i = b.submit(P, Op::Read, 100, IDLE_PRIO);
    let e = b.submit(Q, Op::Read, 200, be(0));
    let t = b.submit(R, Op::Read, 300_000, RT_PRIO);
    let mut order = vec![];
    for _ in 0..3 {
        let d = b.dispatch();
        order.push(d.id);
        b.now += MS;
        b.complete(d);
    }
    assert_eq!(order, vec![t.id, e.id, i.id]);
    // The idle class waits while best effort keeps coming.
    let i2 = b.submit(P, Op::Read, 108, IDLE_PRIO);
    let e2 = b.submit(Q, Op::Read, 208, be(0));
    assert_eq!(b.dispatch(), e2);
    b.now += MS;
    b.complete(e2);
    assert_eq!(b.dispatch(), i2);
}

#[test]
fn fifo_expiry_serves_an_old_request_first_once_per_slice() {
    let run = |late_ms: u64| {
        let mut b = Bench::new(&[]);
        let a = b.read(P, 90_000);
        b.now = late_ms * MS;
        let near = b.read(P, 0);
        (b.dispatch(), a, near, b.s.counts.fifo_expired)
    };
    // 100 ms: nothing expired (fifo_expire_sync 125 ms); the request nearest the head first.
    let (d, _, near, n) = run(100);
    assert_eq!((d, n), (near, 0));
    // 200 ms: the first request's deadline has passed: it goes first.
    let (d, a, _, n) = run(200);
    assert_eq!((d, n), (a, 1));
}

#[test]
fn an_rt_request_preempts_an_idle_wait_but_a_far_be_one_does_not() {
    let mut b = Bench::new(&[]);
    b.history(P, 1_000_000, 8, 4, 1);
    assert!(b.s.idle_timer.is_some());
    // A far best-effort read: no preemption, the wait goes on.
    let wait = Decision::WaitUntil(b.now + 8 * MS);
    b.now += MS;
    let q = b.read(Q, 9_000_000);
    assert_eq!(b.next(), wait);
    assert_eq!(b.s.counts.preemptions, 0);
    // A real-time read: P's slice ends at once and the RT queue is served.
    let t = b.submit(R, Op::Read, 7_000_000, RT_PRIO);
    assert_eq!(b.s.counts.preemptions, 1);
    assert_eq!(b.dispatch(), t);
    let _ = q;
    // A best-effort read close to the head (within CFQQ_CLOSE_THR) preempts the wait too.
    let mut b = Bench::new(&[]);
    let end = b.history(P, 1_000_000, 8, 4, 1);
    assert!(b.s.idle_timer.is_some());
    b.now += MS;
    let near = b.read(Q, end + 4_000);
    assert_eq!(b.s.counts.preemptions, 1);
    assert_eq!(b.dispatch(), near);
}

#[test]
fn a_close_queue_of_another_process_is_served_instead_of_idling_and_merged() {
    let mut b = Bench::new(&[]);
    let end = b.history(P, 1_000_000, 8, 4, 1);
    b.now += MS;
    let p = b.read(P, end);
    assert_eq!(b.dispatch(), p);
    // Q reads right after where P is: a cooperator.
    let q = b.read(Q, end + 8);
    b.now += MS;
    b.complete(p);
    assert!(b.s.idle_timer.is_none(), "no idling with a close cooperator");
    assert_eq!(b.dispatch(), q);
    assert_eq!(b.s.counts.coop_setups, 1);
    // P's next sync request is queued with Q's (queues merged).
    let (pq, qq) = (b.s.sync_queue_of(P).unwrap(), b.s.sync_queue_of(Q).unwrap());
    assert_ne!(pq, qq);
    b.now += MS;
    b.read(P, end + 16);
    assert_eq!(b.s.sync_queue_of(P), Some(qq));
    assert!(b.s.queue(qq).unwrap().coop);
    assert_eq!(b.s.counts.coop_merges, 1);
    // A far queue is no cooperator: with P far away, the disk idles for P instead.
    let mut b = Bench::new(&[]);
    let end = b.history(P, 1_000_000, 8, 4, 1);
    b.now += MS;
    let p = b.read(P, end);
    assert_eq!(b.dispatch(), p);
    b.read(Q, end + 9_000);
    b.now += MS;
    b.complete(p);
    assert!(b.s.idle_timer.is_some());
}

#[test]
fn back_seeks_within_back_seek_max_cost_back_seek_penalty_times() {
    let run = |ahead: u64, tunables: &[(&str, f64)]| {
        let mut b = Bench::new(tunables);
        let first = b.read(P, 9_992); // ends at 10,000
        assert_eq!(b.dispatch(), first);
        let back = b.read(P, 9_000);
        let fwd = b.read(P, ahead);
        b.now += MS;
        b.complete(first);
        let d = b.dispatch();
        (d == back, d == fwd)
    };
    // Back 1,000 sectors cost 2,000: forward 1,500 wins, forward 2,500 loses.
    assert_eq!(run(11_500, &[]), (false, true));
    assert_eq!(run(12_500, &[]), (true, false));
    // Penalty 1: back 1,000 beats forward 1,500.
    assert_eq!(run(11_500, &[("back_seek_penalty", 1.0)]), (true, false));
    // back_seek_max 256 KiB = 512 sectors: 1,000 back is a wrap, served after the forward one.
    assert_eq!(run(12_500, &[("back_seek_max", 256.0)]), (false, true));
    // The rule itself: both wrapped -> the lower one; a sync request beats an async one.
    let (lo, hi) = (rq(1, P, Op::Read, 10, be(4)), rq(2, P, Op::Read, 20, be(4)));
    assert_eq!(choose_req(Some(&hi), Some(&lo), 1_000_000, 0, 2).unwrap().id, 1);
    let w = rq(3, P, Op::Write, 1_000_000, be(4));
    assert_eq!(choose_req(Some(&w), Some(&lo), 1_000_000, 0, 2).unwrap().id, 1);
}

#[test]
fn an_async_queue_ends_its_slice_after_its_request_quota() {
    // Level 4: 2 x slice_async_rq x (8 - 4) = 16 requests, then another queue gets its turn.
    let mut b = Bench::new(&[("slice_idle", 0.0)]);
    for i in 0..20 {
        b.submit(P, Op::Write, 1_000 + 8 * i, IoPrio::default());
    }
    // Another async queue (level 3: its own queue) waits for P's quota to run out.
    b.now += MS;
    let q = b.submit(Q, Op::Write, 5_000_000, be(3));
    let mut writes = 0;
    loop {
        let d = b.dispatch();
        if d == q {
            break;
        }
        assert_eq!(d.principal.pid, P);
        writes += 1;
        b.now += MS;
        b.complete(d);
    }
    assert_eq!(writes, 16);
    // With slice_async_rq 1: 8 requests.
    let mut b = Bench::new(&[("slice_idle", 0.0), ("slice_async_rq", 1.0)]);
    for i in 0..20 {
        b.submit(P, Op::Write, 1_000 + 8 * i, IoPrio::default());
    }
    b.now += MS;
    let q = b.submit(Q, Op::Write, 5_000_000, be(3));
    let mut writes = 0;
    loop {
        let d = b.dispatch();
        if d == q {
            break;
        }
        writes += 1;
        b.now += MS;
        b.complete(d);
    }
    assert_eq!(writes, 8);
}

#[test]
fn same_input_same_decisions() {
    use crate::scenario::Scenario;
    let text = r#"
[device]
preset = "ibm-deskstar-34gxp"
[[process]]
name = "seq"
count = 3
pattern = "sequential"
request_kib = 64
think_us = 300
[[process]]
name = "rand"
count = 2
pattern = "random"
request_kib = 8
think = "exponential"
think_us = 2000
[run]
duration_s = 2
[[scheduler]]
name = "cfq"
"#;
    let scn = Scenario::parse(text, "t.toml").unwrap();
    let a = scn.run(Some(3)).unwrap().pop().unwrap();
    let b = scn.run(Some(3)).unwrap().pop().unwrap();
    assert!(!a.records.is_empty());
    assert_eq!(a.records, b.records);
    assert_eq!(a.summary, b.summary);
    // It idled, and never needed the stall rescue (a state Linux cannot reach).
    let c = |k: &str| a.summary.scheduler_counters.get(k).copied().unwrap_or(u64::MAX);
    assert!(c("idle_waits") > 0 && c("slices") > 0, "{:?}", a.summary.scheduler_counters);
    assert_eq!(c("stall_rescues"), 0);
}

// ---- Drive-queue (NCQ) detection: cfq_update_hw_tag, and what it gates ----

/// P reads sequentially with `depth` requests at the drive and `queued` more waiting in CFQ;
/// each step completes the oldest (1 ms later) and submits and dispatches one more. Returns
/// hw_tag after each completion.
fn hw_tag_run(depth: usize, queued: usize, completions: usize) -> (Vec<i8>, Bench) {
    let mut b = Bench::new(&[]);
    let mut sector = 1_000_000;
    let mut at_drive = VecDeque::new();
    for _ in 0..depth + queued {
        b.read(P, sector);
        sector += 16;
    }
    for _ in 0..depth {
        at_drive.push_back(b.dispatch());
    }
    let mut seen = Vec::new();
    for _ in 0..completions {
        b.now += MS;
        b.complete(at_drive.pop_front().unwrap());
        seen.push(b.s.hw_tag());
        b.read(P, sector);
        sector += 16;
        at_drive.push_back(b.dispatch());
    }
    (seen, b)
}

#[test]
fn hw_tag_is_detected_after_fifty_samples_with_a_deep_drive_queue() {
    // 8 at the drive (> CFQ_HW_QUEUE_MIN): every completion is a sample; the 51st decides.
    let (seen, b) = hw_tag_run(8, 4, 60);
    assert!(seen[..50].iter().all(|&t| t == -1), "{seen:?}");
    assert!(seen[50..].iter().all(|&t| t == 1), "{seen:?}");
    assert_eq!(b.s.hw_tag_est_depth(), 8);
    let c: BTreeMap<_, _> = b.s.counters().into_iter().collect();
    assert_eq!((c["hw_tag"], c["hw_tag_est_depth"]), (1, 8));
    // 5 at the drive is the threshold for the depth (>= CFQ_HW_QUEUE_MIN), but not enough
    // load for a sample by itself: 5 in the driver and few queued are no sample.
    let (seen, _) = hw_tag_run(5, 0, 200);
    assert!(seen.iter().all(|&t| t == -1), "{seen:?}");
    // With more than 5 queued, the same depth is sampled and found deep enough.
    let (seen, _) = hw_tag_run(5, 8, 60);
    assert_eq!((seen[49], seen[50]), (-1, 1));
}

#[test]
fn hw_tag_is_never_set_at_queue_depth_1() {
    // One command at the drive, many queued: samples count, the depth is 1: hw_tag = 0.
    let (seen, b) = hw_tag_run(1, 20, 120);
    assert!(seen[..50].iter().all(|&t| t == -1), "{seen:?}");
    assert!(seen[50..].iter().all(|&t| t == 0), "{seen:?}");
    assert_eq!(b.s.hw_tag_est_depth(), 1);
    // One command at the drive and one queued (a lone sync reader): no load, no sample.
    let (seen, _) = hw_tag_run(1, 1, 120);
    assert!(seen.iter().all(|&t| t == -1), "{seen:?}");
}

/// P queues 8 far-apart reads at once (seeky, and deep: 4 or more queued); Q queues a far
/// read. With `qd1` the drive holds one command: `next` is asked only when it is free. Else
/// `next` is asked until it dispatches nothing (a queueing drive with room). Each step
/// completes the oldest command 1 ms later, until P's 8 are done. Returns what `next` says
/// then, Q's request, and whether Q's request was dispatched before that.
fn deep_seeky(qd1: bool) -> (Decision, Request, bool, Bench) {
    let mut b = Bench::new(&[]);
    for i in 0..8 {
        b.read(P, 1_000_000 + 50_000 * i);
    }
    let far = b.read(Q, 90_000_000);
    let pq = b.s.sync_queue_of(P).unwrap();
    assert!(b.s.queue(pq).unwrap().deep, "8 queued: deep");
    let (mut p_left, mut far_sent) = (8, false);
    let mut at_drive = VecDeque::new();
    while p_left > 0 {
        while !(qd1 && !at_drive.is_empty()) {
            match b.next() {
                Decision::Dispatch(r, _) => {
                    far_sent |= r == far;
                    at_drive.push_back(r);
                }
                _ => break,
            }
        }
        b.now += MS;
        let r = at_drive.pop_front().expect("a command at the drive");
        p_left -= (r.principal.pid == P) as u32;
        b.complete(r);
    }
    (b.next(), far, far_sent, b)
}

#[test]
fn a_deep_seeky_queue_keeps_idling_on_a_drive_that_holds_one_command() {
    let (d, _, far_sent, b) = deep_seeky(true);
    let pq = b.s.queue(b.s.sync_queue_of(P).unwrap()).unwrap();
    assert!(pq.seeky() && pq.deep && pq.idle_window);
    assert!(!far_sent);
    assert!(matches!(d, Decision::WaitUntil(_)), "P's queue idles: {d:?}");
    assert!(b.s.idle_timer.is_some());
}

#[test]
fn a_seeky_queue_stops_idling_when_the_drive_takes_its_requests_faster_than_it_issues() {
    // cfq_select_queue (4.4): the active queue is empty early in its slice with requests at
    // the drive, seeky and idling: deep and idle_window are cleared, and Q is served without
    // an idle wait. This is how a queueing drive ends CFQ's idling for a deep seeky process
    // in 4.4 on a rotational disk (not through hw_tag).
    let (d, far, far_sent, b) = deep_seeky(false);
    let pq = b.s.queue(b.s.sync_queue_of(P).unwrap());
    assert!(pq.is_none_or(|c| !c.deep && !c.idle_window));
    assert!(far_sent || d == Decision::Dispatch(far, ArmPath::Direct), "{d:?}");
    assert_eq!(b.s.counts.idle_waits, 0);
    // A seeky queue that never was deep: no idle window from its arrivals on (as in
    // no_idling_for_a_seeky_reader_or_one_that_thinks_long), whatever hw_tag says.
    for tag in [-1, 0, 1] {
        let mut b = Bench::new(&[]);
        b.s.hw_tag = tag;
        let end = b.history(P, 1_000_000, 10_000, 8, 1);
        b.now += MS;
        let p = b.read(P, end);
        assert_eq!(b.dispatch(), p);
        let far = b.read(Q, 9_000_000);
        b.now += MS;
        b.complete(p);
        assert_eq!(b.next(), Decision::Dispatch(far, ArmPath::Direct), "hw_tag {tag}");
    }
}

#[test]
fn hw_tag_changes_idling_only_on_a_non_rotational_device() {
    // A sequential reader (idle window on) empties its queue while Q waits: it idles unless
    // the device is non-rotational with queueing (hw_tag 1, or -1 not yet decided), and
    // group_idle is 0 (with group_idle, cfq_arm_slice_timer goes on to the group rule).
    for (nonrot, tag, idles) in
        [(false, -1, true), (false, 0, true), (false, 1, true), (true, 0, true), (true, 1, false), (true, -1, false)]
    {
        let mut b = Bench::new(&[("group_idle", 0.0)]);
        let end = b.history(P, 1_000_000, 8, 8, 1);
        b.s.hw_tag = tag;
        b.s.nonrot = nonrot;
        b.now += MS;
        let p = b.read(P, end);
        assert_eq!(b.dispatch(), p);
        let far = b.read(Q, 9_000_000);
        // (P's one request under the nonrot seek rule is one seek: P stays non-seeky.) With
        // nonrot and hw_tag, P's empty queue should not idle, so Q preempts it at once.
        let pq = b.s.sync_queue_of(P).unwrap();
        assert!(b.s.queues[&pq].idle_window && !b.s.queues[&pq].seeky());
        assert_eq!(b.s.active == Some(pq), idles, "nonrot {nonrot} hw_tag {tag}");
        b.now += MS;
        b.complete(p);
        let d = b.next();
        if idles {
            assert!(matches!(d, Decision::WaitUntil(_)), "nonrot {nonrot} hw_tag {tag}: {d:?}");
        } else {
            assert_eq!(d, Decision::Dispatch(far, ArmPath::Direct), "nonrot {nonrot} hw_tag {tag}");
        }
    }
}
