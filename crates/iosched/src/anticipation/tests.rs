//! The anticipation core's transitions and the heuristics' decisions on hand-built situations
//! (toy disk: seek of d cylinders = d ms, rotation (sector mod 100) x 0.1 ms; 100 sectors per
//! cylinder).

use super::core::{Anticipatory, CoreState, TUNABLES};
use super::heuristics::cscan::CscanHeuristic;
use super::heuristics::seek::{AgedSeekHeuristic, SeekHeuristic};
use super::heuristics::Heuristic;
use crate::request::{Op, Principal, Request};
use crate::sched::classic::aged_sptf::{self, AgedSptf};
use crate::sched::classic::clook::CLook;
use crate::sched::classic::sptf::Sptf;
use crate::sched::tunables::TunableValues;
use crate::sched::{Completion, Context, Decision, Policy, Scheduler};
use crate::testkit::ToyDisk;
use crate::time::{Nanos, NS_PER_MS, NS_PER_US};
use std::cell::Cell;
use std::collections::BTreeMap;

const TICK: Nanos = 500 * NS_PER_US;

fn core_tunables() -> TunableValues {
    TunableValues::resolve(TUNABLES, &BTreeMap::new()).unwrap()
}

fn read(id: u64, pid: u32, sector: u64, now: Nanos) -> Request {
    Request {
        id,
        principal: Principal { pid, group: pid },
        op: Op::Read,
        sync: true,
        start_sector: sector,
        size_sectors: 8,
        issue_ns: now,
        flags: 0,
        prio: Default::default(),
    }
}

struct Bench<P: Policy, H: Heuristic<P>> {
    s: Anticipatory<P, H>,
    disk: ToyDisk,
    next_id: u64,
}

impl<P: Policy, H: Heuristic<P>> Bench<P, H> {
    fn new(policy: P, h: H) -> Self {
        Bench { s: Anticipatory::new(policy, h, &core_tunables()), disk: ToyDisk { head: Cell::new(10) }, next_id: 0 }
    }

    fn add(&mut self, pid: u32, sector: u64, now: Nanos) -> Request {
        self.add_issued(pid, sector, now, now)
    }

    /// Adds a request that was issued at `issued` (earlier than `now`: it waited elsewhere).
    fn add_issued(&mut self, pid: u32, sector: u64, issued: Nanos, now: Nanos) -> Request {
        let r = read(self.next_id, pid, sector, issued);
        self.next_id += 1;
        let cx = Context { now_ns: now, device: &self.disk, in_flight: 0 };
        self.s.add(r, &cx);
        r
    }

    fn next(&mut self, now: Nanos) -> Decision {
        let cx = Context { now_ns: now, device: &self.disk, in_flight: 0 };
        let d = self.s.next(&cx);
        if let Decision::Dispatch(r, _) = d {
            self.disk.head.set((r.start_sector / 100) as u32);
        }
        d
    }

    fn complete(&mut self, r: Request, now: Nanos, positioning_ns: Nanos) {
        let cx = Context { now_ns: now, device: &self.disk, in_flight: 0 };
        self.s.completed(&Completion { request: r, dispatch_ns: now - NS_PER_MS, positioning_ns }, &cx);
    }

    /// Process `pid` reads `n` blocks from `start`, `step` sectors apart (use +-100: one
    /// cylinder, no rotation on the toy disk), each taking 1 ms with no positioning, thinking
    /// 200 us between them. Returns the time of the last completion.
    fn train(&mut self, pid: u32, start: u64, step: i64, n: u64, mut t: Nanos) -> Nanos {
        for i in 0..n {
            let r = self.add(pid, (start as i64 + step * i as i64) as u64, t);
            match self.next(t) {
                Decision::Dispatch(d, _) => assert_eq!(d.id, r.id, "the trained process's own request goes first"),
                other => panic!("expected a dispatch, got {other:?}"),
            }
            t += NS_PER_MS;
            self.complete(r, t, 0);
            if i + 1 < n {
                t += 200 * NS_PER_US;
            }
        }
        t
    }
}

fn sptf_bench() -> Bench<Sptf, SeekHeuristic> {
    Bench::new(Sptf::default(), SeekHeuristic)
}

#[test]
fn no_history_no_wait() {
    let mut b = sptf_bench();
    let r = b.add(1, 1000, 0);
    assert!(matches!(b.next(0), Decision::Dispatch(..)));
    b.complete(r, NS_PER_MS, 0);
    b.add(2, 50_000, NS_PER_MS);
    assert!(matches!(b.next(NS_PER_MS), Decision::Dispatch(d, _) if d.principal.pid == 2));
    assert_eq!(b.s.waits, 0);
}

#[test]
fn waits_for_a_close_thinker_then_serves_it() {
    let mut b = sptf_bench();
    b.add(2, 50_000, 0); // far away, queued all along
    let t = b.train(1, 1000, 100, 10, 0);
    // Decision point right after process 1's completion: wait for its next request, until the
    // tick after its 95th-percentile think time (<= 500 us).
    let d = b.next(t);
    let deadline = (t + 500 * NS_PER_US).div_ceil(TICK) * TICK;
    assert_eq!(d, Decision::WaitUntil(deadline));
    assert_eq!(b.s.state(), CoreState::Wait);
    // Another process's request arrives: re-evaluated, still waiting, timeout not re-armed.
    b.add(3, 70_000, t + 100 * NS_PER_US);
    assert_eq!(b.next(t + 100 * NS_PER_US), Decision::WaitUntil(deadline));
    // Process 1 issues its next (sequential) request: it is served at once.
    let mine = b.add(1, 2000, t + 200 * NS_PER_US);
    assert!(matches!(b.next(t + 200 * NS_PER_US), Decision::Dispatch(d, _) if d.id == mine.id));
    assert_eq!((b.s.waits, b.s.waits_rewarded, b.s.state()), (1, 1, CoreState::Busy));
}

#[test]
fn timeout_dispatches_the_candidate() {
    let mut b = sptf_bench();
    let far = b.add(2, 50_000, 0);
    let t = b.train(1, 1000, 100, 10, 0);
    let Decision::WaitUntil(deadline) = b.next(t) else { panic!("should wait") };
    assert!(matches!(b.next(deadline), Decision::Dispatch(d, _) if d.id == far.id));
    assert_eq!(b.s.waits_timed_out, 1);
}

#[test]
fn no_wait_when_the_candidate_is_already_close() {
    let mut b = sptf_bench();
    // The other process's request is on the head's cylinder, 0.1 ms of rotation away: the
    // benefit (0.1 ms) does not exceed the cost (median think 0.5 ms).
    let t = b.train(1, 1000, 100, 10, 0);
    b.add(2, 1901, t); // head on cylinder 19 after training
    assert!(matches!(b.next(t), Decision::Dispatch(d, _) if d.principal.pid == 2));
}

#[test]
fn no_wait_for_a_process_that_thinks_long() {
    let mut b = sptf_bench();
    // The other request is 10 cylinders from where the trained process ends (cylinder 19):
    // 10 ms of benefit against a median think time of 15 ms (the table's last bucket).
    b.add(2, 2900, 0);
    // Ten requests with 20 ms think times.
    let mut t = 0;
    for i in 0..10 {
        let r = b.add(1, 1000 + i * 100, t);
        assert!(matches!(b.next(t), Decision::Dispatch(x, _) if x.id == r.id));
        t += NS_PER_MS;
        b.complete(r, t, 0);
        t += 20 * NS_PER_MS;
    }
    t -= 20 * NS_PER_MS;
    assert!(matches!(b.next(t), Decision::Dispatch(..)));
}

#[test]
fn aged_variant_does_not_wait_when_aging_overrode_sptf() {
    let t_aged: BTreeMap<String, f64> = [("age_weight".to_string(), 10.0), ("max_latency_ms".to_string(), 0.0)].into();
    let aged = || AgedSptf::new(&TunableValues::resolve(aged_sptf::TUNABLES, &t_aged).unwrap());
    // Process 2's old request (20 ms away) has aged past process 3's fresh one (5 ms away).
    // After training the head is on cylinder 19 at t = 11.8 ms. Process 2's request (issued at
    // 0, 20 cylinders away: 20 ms) has aged 118 ms of credit and beats process 3's fresh one
    // (5 cylinders away: 5 ms), which plain SPTF would pick.
    let mut b = Bench::new(aged(), AgedSeekHeuristic);
    let t = b.train(1, 1000, 100, 10, 0);
    b.add_issued(2, 3900, 0, t);
    b.add(3, 2400, t);
    assert!(matches!(b.next(t), Decision::Dispatch(d, _) if d.principal.pid == 2), "aging overrides: no wait");
    assert_eq!(b.s.waits, 0);
    // The plain seek heuristic on the same policy would have waited.
    let mut p = Bench::new(aged(), SeekHeuristic);
    let t = p.train(1, 1000, 100, 10, 0);
    p.add_issued(2, 3900, 0, t);
    p.add(3, 2400, t);
    assert!(matches!(p.next(t), Decision::WaitUntil(_)));
}

#[test]
fn cscan_variant_does_not_wait_for_a_backward_reader() {
    // Process 1 reads backward (descending sectors): more than 80% of its seeks go backward.
    let mut b = Bench::new(CLook::default(), CscanHeuristic);
    let t = b.train(1, 5000, -100, 10, 0);
    b.add(2, 50_000, t); // ahead of the head
    assert!(matches!(b.next(t), Decision::Dispatch(d, _) if d.principal.pid == 2));
    // A forward reader is waited for.
    let mut f = Bench::new(CLook::default(), CscanHeuristic);
    let t = f.train(1, 1000, 100, 10, 0);
    f.add(2, 50_000, t);
    assert!(matches!(f.next(t), Decision::WaitUntil(_)));
}

#[test]
fn empty_queue_is_idle_not_waiting() {
    let mut b = sptf_bench();
    let t = b.train(1, 1000, 100, 10, 0);
    assert_eq!(b.next(t), Decision::Empty);
    assert_eq!(b.s.state(), CoreState::Idle);
}
