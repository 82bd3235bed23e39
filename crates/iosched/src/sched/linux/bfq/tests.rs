//! BFQ's rules on hand-built cases through the Scheduler API (a child module of bfq/mod.rs, so it can
//! look at the elevator's state). Requests are 16 sectors unless said; time in ms.

use super::*;
use crate::request::{IoPrio, Principal};
use crate::testkit::ToyDisk;
use std::cell::Cell;

const MS: Nanos = NS_PER_MS;
const P: u32 = 1;
const Q: u32 = 2;

struct Bench {
    s: Bfq,
    disk: ToyDisk,
    now: Nanos,
    next_id: u64,
}

impl Bench {
    fn new(variant: Variant, tunables: &[(&str, f64)]) -> Self {
        let given = tunables.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let declared = match variant {
            Variant::Original => ORIGINAL_TUNABLES,
            Variant::Plus => PLUS_TUNABLES,
            Variant::Linux => LINUX_TUNABLES,
        };
        let s = Bfq::new(variant, &TunableValues::resolve(declared, &given).unwrap()).unwrap();
        Bench { s, disk: ToyDisk { head: Cell::new(0) }, now: 0, next_id: 0 }
    }

    fn submit(&mut self, pid: u32, op: Op, start: u64, sectors: u32) -> Request {
        self.next_id += 1;
        let r = Request {
            principal: Principal { pid, group: pid },
            sync: op == Op::Read,
            prio: IoPrio::default(),
            ..Request::new(self.next_id, op, start, sectors, self.now)
        };
        let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
        self.s.add(r, &cx);
        r
    }

    fn read(&mut self, pid: u32, start: u64) -> Request {
        self.submit(pid, Op::Read, start, 16)
    }

    fn next(&mut self) -> Decision {
        let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
        self.s.next(&cx)
    }

    fn dispatch(&mut self) -> Request {
        match self.next() {
            Decision::Dispatch(r, _) => r,
            d => panic!("expected a dispatch at {} ms, got {d:?}", self.now / MS),
        }
    }

    fn complete(&mut self, r: Request) {
        let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
        self.s.completed(&Completion { request: r, dispatch_ns: self.now, positioning_ns: 0 }, &cx);
    }

    /// Dispatches (waiting out idle timers) and completes after `service_ms`.
    fn serve(&mut self, service_ms: u64) -> Request {
        let r = loop {
            match self.next() {
                Decision::Dispatch(r, _) => break r,
                Decision::WaitUntil(t) => self.now = t,
                Decision::Empty => panic!("nothing to serve at {} ms", self.now / MS),
            }
        };
        self.now += service_ms * MS;
        self.complete(r);
        r
    }

    /// Ends the hw_tag detection with "no queueing" (a depth-1 drive): 33 samples with enough
    /// requests around.
    fn settle_hw_tag(&mut self) {
        for i in 0..40u64 {
            for k in 0..8u64 {
                self.read(100 + (k % 4) as u32, 1_000_000 + i * 64 + k * 10_000_000);
            }
            for _ in 0..8 {
                self.serve(1);
            }
        }
        if self.s.rules.variant != Variant::Linux {
            assert_eq!(self.s.hw_tag, Some(false));
        }
        self.now += 10_000 * MS;
        let _ = self.next();
    }
}

#[test]
fn a_sync_reader_is_waited_for_deceptive_idleness() {
    for v in [Variant::Original, Variant::Plus, Variant::Linux] {
        // Without weight raising (two raised newcomers would make Linux's BFQ stop idling).
        let mut b = Bench::new(v, &[("low_latency", 0.0)]);
        b.settle_hw_tag();
        let r = b.read(P, 0);
        assert_eq!(b.serve(1), r);
        // Q arrives while P thinks: P's queue is kept and the disk idles.
        b.read(Q, 50_000_000);
        assert!(matches!(b.next(), Decision::WaitUntil(_)), "{v:?} idles for P");
        assert!(b.s.idle_timer.is_some());
        b.now += MS;
        let r2 = b.read(P, 16);
        assert_eq!(b.dispatch(), r2, "{v:?}: P's next request first");
    }
}

#[test]
fn the_idle_timer_expires_a_queue_too_idle() {
    let mut b = Bench::new(Variant::Plus, &[]);
    b.settle_hw_tag();
    let r = b.read(P, 0);
    b.serve(1);
    let q = b.read(Q, 50_000_000);
    assert!(matches!(b.next(), Decision::WaitUntil(_)));
    let too_idle = b.s.counts.too_idle;
    b.now += 9 * MS;
    assert_eq!(b.dispatch(), q, "after slice_idle (8 ms) Q is served");
    assert_eq!(b.s.counts.too_idle, too_idle + 1);
    let _ = r;
}

#[test]
fn the_idle_wait_is_short_for_a_seeky_queue() {
    let mut b = Bench::new(Variant::Original, &[]);
    b.settle_hw_tag();
    // P seeks far on every request: its mean distance goes above 8192 sectors.
    for i in 0..30u64 {
        b.read(P, (i % 2) * 400_000_000 + i * 100);
        b.serve(1);
        b.now += MS;
    }
    let pq = b.s.queue_of(P).unwrap();
    assert!(pq.seeky(&b.s.rules));
    b.read(P, 7);
    b.serve(1);
    b.read(Q, 1);
    let _ = b.next();
    let t = b.s.idle_timer.expect("armed");
    assert_eq!(t - b.now, MIN_TT_NS, "seeky: 2 ms");
}

#[test]
fn budget_exhaustion_grows_the_budget_four_times_in_plus_and_by_a_step_in_original() {
    for (v, factor) in [(Variant::Plus, 4.0), (Variant::Original, 0.0)] {
        let mut b = Bench::new(v, &[]);
        b.settle_hw_tag();
        // P has many requests queued; Q one, so P's queue expires on exhaustion.
        for i in 0..2000u64 {
            b.submit(P, Op::Read, i * 256, 256);
        }
        b.read(Q, 900_000_000);
        let q_start = b.s.queue_of(P).unwrap().max_budget;
        let exhausted = b.s.counts.budget_exhausted;
        while b.s.counts.budget_exhausted == exhausted {
            if b.s.queued() == 0 {
                panic!("{v:?}: all served, counts {:?} budget {} max {}", b.s.counts, q_start, b.s.max_budget());
            }
            b.serve(1);
        }
        let after = b.s.queue_of(P).unwrap().max_budget;
        if factor > 0.0 {
            assert_eq!(after, (q_start * 4).min(b.s.raw_max_budget), "{v:?}");
        } else {
            assert_eq!(after, (q_start + 1024).min(b.s.raw_max_budget), "{v:?}");
        }
    }
}

#[test]
fn initial_budgets_follow_the_variant() {
    let b = Bench::new(Variant::Original, &[]);
    let mut b = b;
    b.read(P, 0);
    assert_eq!(b.s.queue_of(P).unwrap().max_budget, DEFAULT_MAX_BUDGET);
    let mut b = Bench::new(Variant::Plus, &[]);
    b.read(P, 0);
    assert_eq!(b.s.queue_of(P).unwrap().max_budget, DEFAULT_MAX_BUDGET / 2);
    let mut b = Bench::new(Variant::Linux, &[]);
    b.read(P, 0);
    assert_eq!(b.s.queue_of(P).unwrap().max_budget, 2 * DEFAULT_MAX_BUDGET / 3);
}

#[test]
fn a_slow_queue_is_charged_its_full_budget_on_timeout() {
    for (v, h_fairness) in [(Variant::Original, 0.0), (Variant::Plus, 1.0)] {
        let mut b = Bench::new(v, &[("h_fairness", h_fairness)]);
        b.settle_hw_tag();
        for i in 0..400u64 {
            b.read(P, i * 1_000_000);
        }
        b.read(Q, 7);
        let charges = b.s.counts.full_charges;
        let timeouts = b.s.counts.budget_timeouts;
        // 20 ms per request: the budget (8 Ki sectors at 16 a request) cannot be used in 125 ms.
        while b.s.counts.budget_timeouts == timeouts {
            b.serve(20);
        }
        assert_eq!(b.s.counts.full_charges, charges + 1, "{v:?}: slow and timed out: charged the full budget");
    }
}

#[test]
fn h_fairness_spares_a_queue_that_used_two_thirds_of_its_budget() {
    for (h, charged) in [(1.0, false), (0.0, true)] {
        // Raising off: a raised queue's timeout is ten times longer (BFQ-v1), this is about the
        // charge at a timeout.
        let mut b = Bench::new(Variant::Plus, &[("max_budget", 1600.0), ("h_fairness", h), ("low_latency", 0.0)]);
        b.settle_hw_tag();
        // Budget B_max/2 = 800 sectors; a 16-sector request every 3 ms uses 656 (more than
        // 2/3) in the 125 ms timeout: slow, timed out, but most of the budget used.
        for i in 0..1000u64 {
            b.read(P, i * 16);
        }
        b.read(Q, 900_000_000);
        let e = b.s.queue_of(P).unwrap().entity;
        while b.s.in_service_pid() != Some(P) {
            b.serve(1);
        }
        assert_eq!(b.s.wf.entities[e].budget, 800);
        let charges = b.s.counts.full_charges;
        let timeouts = b.s.counts.budget_timeouts;
        while b.s.counts.budget_timeouts == timeouts {
            b.serve(3);
        }
        assert_eq!(b.s.counts.full_charges > charges, charged, "h_fairness = {h}");
    }
}

#[test]
fn write_charge_coefficient_throttles_async_writes() {
    let b = Bench::new(Variant::Plus, &[]);
    assert_eq!(b.s.rules.charge(8, false, false), 80);
    assert_eq!(b.s.rules.charge(8, true, false), 8);
    // BFQ-v1 charges an async queue the factor whether raised or not; Linux spares a raised one.
    assert_eq!(b.s.rules.charge(8, false, true), 80, "BFQ+: a raised async queue is over-charged too");
    let b = Bench::new(Variant::Plus, &[("h_write_throt", 0.0)]);
    assert_eq!(b.s.rules.charge(8, false, false), 8);
    let b = Bench::new(Variant::Linux, &[]);
    assert_eq!(b.s.rules.charge(8, false, false), 24);
    assert_eq!(b.s.rules.charge(8, false, true), 8, "Linux: a raised queue is not over-charged");
}

#[test]
fn plus_raises_a_new_queue_and_lowers_it_linearly() {
    let mut b = Bench::new(Variant::Plus, &[]);
    b.settle_hw_tag();
    b.read(P, 0);
    let pq = b.s.queue_of(P).unwrap();
    assert_eq!(pq.wr.coeff, PLUS_WR_COEFF);
    let e = pq.entity;
    assert_eq!(b.s.wf.entities[e].weight, 400, "40 x C_rais");
    // Serve half of B_rais: the weight is halfway back.
    let mut sector = 16;
    let mut served = 0u64;
    b.serve(1);
    served += 16;
    while served < PLUS_WR_BUDGET_SECTORS / 2 {
        b.submit(P, Op::Read, sector, 256);
        sector += 256;
        b.serve(1);
        served += 256;
    }
    let w = b.s.wf.entities[e].new_weight;
    assert!((210..=230).contains(&w), "halfway: about 40 + 360/2 = 220, got {w}");
    while b.s.queue_of(P).unwrap().raised() {
        b.submit(P, Op::Read, sector, 256);
        sector += 256;
        b.serve(1);
    }
    assert_eq!(b.s.wf.entities[e].new_weight, 40);
    assert!(b.s.counts.wr_ends >= 1);
    // Idle for more than T_idle: raised again.
    b.now += 2_100 * MS;
    let _ = b.next();
    b.read(P, sector);
    assert!(b.s.queue_of(P).unwrap().raised(), "raised again after 2 s idle");
}

#[test]
fn plus_raising_ends_after_t_rais() {
    let mut b = Bench::new(Variant::Plus, &[]);
    b.settle_hw_tag();
    b.read(P, 0);
    b.serve(1);
    b.now += 6_001 * MS;
    b.read(P, 16);
    b.serve(1);
    assert!(!b.s.queue_of(P).unwrap().raised());
}

#[test]
fn original_and_low_latency_off_never_raise() {
    let mut b = Bench::new(Variant::Original, &[]);
    b.read(P, 0);
    assert!(!b.s.queue_of(P).unwrap().raised());
    let mut b = Bench::new(Variant::Plus, &[("low_latency", 0.0)]);
    b.read(P, 0);
    assert!(!b.s.queue_of(P).unwrap().raised());
}

#[test]
fn linux_raises_x30_for_its_duration_and_preempts() {
    let mut b = Bench::new(Variant::Linux, &[]);
    // A greedy reader in service...
    for i in 0..200u64 {
        b.submit(Q, Op::Read, i * 256, 256);
    }
    b.serve(1);
    // ...interactive P arrives (new queue: idle for long): raised, higher weight, preempts.
    let before = b.s.counts.preemptions;
    // Q's own raising (7 s x 3/2 = 10.5 s at the initial 2/3 x ref_rate estimate) is over by then.
    let d = b.s.wr_duration_ns();
    assert!((10_400 * MS..=10_600 * MS).contains(&d), "{d}");
    b.now += 20_000 * MS;
    b.serve(1);
    let r = b.read(P, 900_000_000);

    let pq = b.s.queue_of(P).unwrap();
    assert_eq!(pq.wr.coeff, LINUX_WR_COEFF);
    assert!(b.s.counts.preemptions > before || b.s.in_service_pid() != Some(Q));
    assert_eq!(b.dispatch(), r, "the raised queue goes first");
    // The duration at the initial peak rate estimate: clamped to at least 3 s.
    assert!(b.s.queue_of(P).unwrap().wr.max_time_ns >= 3_000 * MS);
}

#[test]
fn hw_tag_detection_disables_idling_in_the_papers_bfq() {
    let mut b = Bench::new(Variant::Plus, &[]);
    // A deep drive: one process's 12 requests at the drive before any completes.
    for round in 0..10u64 {
        let mut out = Vec::new();
        for i in 0..12u64 {
            b.read(10, round * 1000 + i * 16);
        }
        for _ in 0..12 {
            if let Decision::Dispatch(r, _) = b.next() {
                out.push(r);
            }
        }
        assert!(out.len() > 4, "a lone queue may have up to 4 x quantum at the drive");
        b.now += MS;
        for r in out {
            b.complete(r);
        }
        b.now += 20 * MS;
        let _ = b.next();
    }
    assert_eq!(b.s.hw_tag, Some(true), "queueing seen");
    b.read(P, 0);
    b.serve(1);
    let q = b.read(Q, 50_000_000);
    assert_eq!(b.next(), Decision::Dispatch(q, ArmPath::Direct), "no idling with a queueing drive");
}

#[test]
fn an_exited_process_is_not_waited_for() {
    let mut b = Bench::new(Variant::Plus, &[]);
    b.settle_hw_tag();
    b.read(P, 0);
    b.serve(1);
    let ev = ProcessEvent::Exited(Principal { pid: P, group: P });
    let disk = ToyDisk { head: Cell::new(0) };
    let cx = Context { now_ns: b.now, device: &disk, in_flight: 0 };
    b.s.process_event(ev, &cx);
    let q = b.read(Q, 50_000_000);
    assert_eq!(b.dispatch(), q);
}

#[test]
fn linux_does_not_raise_a_large_burst_of_new_queues() {
    let mut b = Bench::new(Variant::Linux, &[]);
    // Ten processes start within a few ms (S's background workload): from the 8th the burst is
    // large and all its queues lose (or never get) raising.
    for pid in 10..20u32 {
        b.read(pid, pid as u64 * 1_000_000);
        b.now += 5 * MS;
    }
    for pid in 10..20u32 {
        let q = b.s.queue_of(pid).unwrap();
        assert!(q.in_large_burst, "pid {pid}");
    }
    assert!(!b.s.queue_of(19).unwrap().raised(), "a queue joining a large burst is not raised");
    // One more, 2 s later: a new burst, an interactive application: raised.
    b.now += 2_000 * MS;
    b.read(P, 900_000_000);
    assert!(b.s.queue_of(P).unwrap().raised());
    assert!(!b.s.queue_of(P).unwrap().in_large_burst);
}

#[test]
fn plus_soft_real_time_detection_is_a_switch() {
    for (on, expect) in [(1.0, true), (0.0, false)] {
        let mut b = Bench::new(Variant::Plus, &[("h_soft_rt", on)]);
        b.settle_hw_tag();
        // A player: 16 sectors every 100 ms (160 sectors/s, far below 7000). Its raising as a new
        // queue ends after T_rais (6 s); then only the soft real-time rule can raise it again.
        let start = b.now;
        let mut i = 0u64;
        let mut soft = false;
        while b.now < start + 7_000 * MS {
            b.read(P, i * 16);
            let q = b.s.queue_of(P).unwrap();
            if b.now > start + 6_100 * MS && q.raised() && q.wr.soft_rt {
                soft = true;
                assert_eq!(q.wr.max_time_ns, LINUX_WR_RT_MAX_TIME_NS);
            }
            b.serve(1);
            b.now += 99 * MS;
            let _ = b.next();
            i += 1;
        }
        assert_eq!(soft, expect, "h_soft_rt = {on}");
    }
}

// ---- BFQ-v1's rules where the paper is silent (issue 24; docs/schedulers/bfq.md) ----

#[test]
fn plus_raises_the_shared_async_queue_too() {
    // BFQ-v1 block/bfq-iosched.c:372-392: any queue's idle-to-busy switch may raise it.
    let mut b = Bench::new(Variant::Plus, &[]);
    b.settle_hw_tag();
    b.submit(P, Op::Write, 0, 16);
    let aq = *b.s.async_qs.values().next().expect("an async queue");
    assert_eq!(b.s.queues[&aq].wr.coeff, PLUS_WR_COEFF);
    let mut b = Bench::new(Variant::Linux, &[]);
    b.submit(P, Op::Write, 0, 16);
    let aq = *b.s.async_qs.values().next().expect("an async queue");
    assert_eq!(b.s.queues[&aq].wr.coeff, 1, "Linux raises sync queues only");
}

#[test]
fn plus_gives_a_raised_queue_a_timeout_scaled_by_its_weight() {
    // BFQ-v1 block/bfq-iosched.c:617-627: timeout_sync x weight / orig_weight.
    for (low_latency, want_ms) in [(1.0, 1250), (0.0, 125)] {
        let mut b = Bench::new(Variant::Plus, &[("low_latency", low_latency)]);
        b.settle_hw_tag();
        let start = b.now;
        b.read(P, 0);
        b.read(P, 16);
        b.serve(1);
        let c = b.s.queue_of(P).unwrap();
        assert_eq!((c.budget_timeout_ns - start) / MS, want_ms + 1, "low_latency = {low_latency}");
    }
}

#[test]
fn plus_serves_a_small_request_of_the_waited_for_queue_at_once() {
    // BFQ-v1 block/bfq-iosched.c:1625-1643: a request of the queue being waited for stops the
    // timer (no small-request wait, which Linux has).
    let mut b = Bench::new(Variant::Plus, &[("low_latency", 0.0)]);
    b.settle_hw_tag();
    b.read(P, 0);
    b.serve(1);
    b.read(Q, 50_000_000);
    assert!(matches!(b.next(), Decision::WaitUntil(_)));
    b.now += MS;
    let small = b.submit(P, Op::Read, 16, 8);
    assert!(b.s.idle_timer.is_none(), "the request stopped the timer");
    assert_eq!(b.dispatch(), small, "dispatched at once, not at the timer");
}

#[test]
fn plus_arms_the_idle_timer_only_when_nothing_is_at_the_drive() {
    // BFQ-v1 block/bfq-iosched.c:1714-1718: rq_in_driver == 0, whichever queue's requests.
    let mut b = Bench::new(Variant::Plus, &[("low_latency", 0.0)]);
    b.settle_hw_tag();
    let w = b.submit(Q, Op::Write, 90_000_000, 16);
    let rw = b.dispatch();
    assert_eq!(rw, w);
    let r = b.read(P, 0);
    assert_eq!(b.dispatch(), r);
    b.now += MS;
    b.complete(r);
    assert!(b.s.idle_timer.is_none(), "Q's write is still at the drive");
    b.complete(w);
}

/// `bfq_schedule_dispatch` (the queue run from kblockd, which behind blk-mq brings a pending
/// delayed run forward): at a completion that leaves nothing in the driver while requests are
/// queued, not at one after which BFQ idles for the in-service queue; and when the idle timer
/// fires.
#[test]
fn bfq_runs_the_queue_from_kblockd_where_linux_does() {
    let mut b = Bench::new(Variant::Linux, &[("low_latency", 0.0)]);
    b.settle_hw_tag();
    let _ = b.s.take_async_queue_run();
    // P's request completes with Q's queued and nothing else in the driver; P is sync and
    // thinks: BFQ idles for it (an early return in bfq_completed_request), no run.
    let r = b.read(P, 0);
    b.read(Q, 50_000_000);
    assert_eq!(b.dispatch(), r);
    b.now += MS;
    b.complete(r);
    assert!(b.s.idle_timer.is_some(), "idling for P");
    assert!(!b.s.take_async_queue_run(), "no run where BFQ idles");
    // The idle timer fires (at the next call): expired, then the run.
    b.now += 20 * MS;
    let q = b.dispatch();
    assert_eq!(q.principal.pid, Q);
    assert!(b.s.take_async_queue_run(), "the idle timer's body ends in bfq_schedule_dispatch");
    assert!(!b.s.take_async_queue_run(), "taken once");
    // Q's read completes (BFQ idles for Q) and the timer fires with nothing queued: no run
    // (`bfq_schedule_dispatch` runs the queue only with requests queued).
    b.now += MS;
    b.complete(q);
    b.now += 50 * MS;
    assert!(matches!(b.next(), Decision::Empty));
    assert!(!b.s.take_async_queue_run(), "nothing queued: no run");
    // An asynchronous write completes with Q's read queued: BFQ does not idle for an async
    // queue, so the completion, leaving nothing in the driver, runs the queue.
    let w = b.submit(P, Op::Write, 80_000, 16);
    assert_eq!(b.dispatch(), w);
    b.read(Q, 60_000_000);
    b.now += MS;
    b.complete(w);
    assert!(b.s.idle_timer.is_none(), "no idling for an async queue");
    assert!(b.s.take_async_queue_run(), "the completion ends in bfq_schedule_dispatch");
}
