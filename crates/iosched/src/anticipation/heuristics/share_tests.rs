//! The proportional-share heuristic (section 3.4) and the combination heuristic (section 3.5)
//! on hand-built situations: a Stride policy with set clocks, hand-filled statistics of the last
//! process, the toy disk (seek of d cylinders = d ms, 100 sectors per cylinder).

use super::combined::CombinedHeuristic;
use super::proportional::ProportionalHeuristic;
use super::seek::SeekHeuristic;
use super::{Heuristic, Situation};
use crate::anticipation::stats::ProcessStats;
use crate::request::{Principal, Request};
use crate::sched::share::stride::{self, Stride};
use crate::sched::tunables::TunableValues;
use crate::sched::{Completion, Context, Policy, ProcessEvent};
use crate::testkit::{read, ToyDisk};
use crate::time::{Nanos, NS_PER_MS, NS_PER_US};
use std::cell::Cell;
use std::collections::BTreeMap;

/// A Stride policy (weights: 1 -> 1, 2 -> 2) where process 1 was served `p_ms` and process 2
/// `q_ms` of disk time, so the clocks are p_ms and q_ms / 2. Then process 1 queues a request
/// at cylinder 500 (the candidate) and, if `q_pending`, process 2 one at cylinder 20.
fn stride_with(tau_ms: f64, p_ms: f64, q_ms: f64, q_pending: bool, disk: &ToyDisk) -> (Stride, Request) {
    let t: BTreeMap<String, f64> = [("tau_ms".to_string(), tau_ms)].into();
    let mut s = stride::new(&TunableValues::resolve(stride::TUNABLES, &t).unwrap());
    let cx = |now| Context { now_ns: now, device: disk, in_flight: 0 };
    s.process_event(ProcessEvent::Started { principal: Principal { pid: 1, group: 1 }, weight: 1 }, &cx(0));
    s.process_event(ProcessEvent::Started { principal: Principal { pid: 2, group: 2 }, weight: 2 }, &cx(0));
    // Both served at once (dispatched together); 1's candidate is queued before its request
    // completes, so 1 never leaves and 2 has just left: neither clock is moved by a return.
    let (a, b) = (read(0, 1, 1000), read(1, 2, 1100));
    s.add(a, &cx(0));
    s.add(b, &cx(0));
    s.take(&a, &cx(0));
    s.take(&b, &cx(0));
    let candidate = read(2, 1, 50_000);
    s.add(candidate, &cx(0));
    let ns = |ms: f64| (ms * NS_PER_MS as f64) as Nanos;
    s.completed(&Completion { request: a, dispatch_ns: 0, positioning_ns: 0 }, &cx(ns(p_ms)));
    s.completed(&Completion { request: b, dispatch_ns: 0, positioning_ns: 0 }, &cx(ns(q_ms)));
    if q_pending {
        s.add(read(3, 2, 2000), &cx(0));
    }
    (s, candidate)
}

/// Statistics of the last process (2): ten think times of `think_us`, expected positioning 0.
fn last_stats(think_us: u64) -> ProcessStats {
    let mut st = ProcessStats::default();
    for _ in 0..10 {
        st.think.record(think_us * NS_PER_US);
    }
    st.positioning_ns.record(0.0);
    st
}

fn wait<H: Heuristic<Stride>>(h: &mut H, s: &Stride, candidate: &Request, last: &ProcessStats, disk: &ToyDisk) -> Nanos {
    let cx = Context { now_ns: 10 * NS_PER_MS, device: disk, in_flight: 0 };
    let sit = Situation { candidate, last_pid: 2, last, elapsed_ns: 100 * NS_PER_US, cx: &cx };
    h.wait_ns(s, &sit)
}

fn disk() -> ToyDisk {
    ToyDisk { head: Cell::new(10) }
}

#[test]
fn proportional_waits_for_a_lagging_quick_process() {
    // Clocks: 1 at 2 ms, 2 at 1 ms (2 ms of service / weight 2). 2 thinks 200 us (median and
    // 95th percentile: the 500 us bucket's edge); 100 us have elapsed: wait 400 us.
    let d = disk();
    let (s, c) = stride_with(0.0, 2.0, 2.0, false, &d);
    assert_eq!(wait(&mut ProportionalHeuristic, &s, &c, &last_stats(200), &d), 400 * NS_PER_US);
}

#[test]
fn proportional_does_not_wait_if_the_process_has_a_pending_request() {
    // (a): its next request is already queued.
    let d = disk();
    let (s, c) = stride_with(0.0, 2.0, 2.0, true, &d);
    assert_eq!(wait(&mut ProportionalHeuristic, &s, &c, &last_stats(200), &d), 0);
}

#[test]
fn proportional_does_not_wait_for_a_slow_thinker() {
    // (b): median think 4.5 ms > 3 ms. At 2.7 ms the median bucket ends at 3 ms: still waits.
    let d = disk();
    let (s, c) = stride_with(0.0, 2.0, 2.0, false, &d);
    assert_eq!(wait(&mut ProportionalHeuristic, &s, &c, &last_stats(4200), &d), 0);
    assert_eq!(wait(&mut ProportionalHeuristic, &s, &c, &last_stats(2700), &d), 3 * NS_PER_MS - 100 * NS_PER_US);
}

#[test]
fn proportional_does_not_wait_for_a_process_ahead_of_minclock() {
    // (c): 2's clock (2 ms, then 3 ms) is not below 1's 2 ms.
    let d = disk();
    for q_ms in [4.0, 6.0] {
        let (s, c) = stride_with(0.0, 2.0, q_ms, false, &d);
        assert_eq!(wait(&mut ProportionalHeuristic, &s, &c, &last_stats(200), &d), 0, "q served {q_ms} ms");
    }
}

#[test]
fn combined_uses_minclock_plus_tau_for_the_proportional_part() {
    // tau = 2 ms. 2's clock 3 ms, 1's 2 ms: above minclock but below minclock + tau. The
    // candidate (1's request, 490 ms of seek away) is far, so to see the proportional part alone
    // 2 is given a huge expected positioning time: the seek rule sees no benefit.
    let d = disk();
    let (s, c) = stride_with(2.0, 2.0, 6.0, false, &d);
    let mut no_seek_gain = last_stats(200);
    no_seek_gain.positioning_ns = Default::default();
    no_seek_gain.positioning_ns.record(1e12);
    assert_eq!(wait(&mut CombinedHeuristic, &s, &c, &no_seek_gain, &d), 400 * NS_PER_US);
    // The strict rule (minclock alone) would not wait.
    assert_eq!(wait(&mut ProportionalHeuristic, &s, &c, &no_seek_gain, &d), 0);
}

#[test]
fn combined_waits_for_seek_gain_within_tau() {
    // tau = 1 ms. 2's clock 3 ms equals minclock + tau, so the proportional part (clock <
    // minclock + tau) says no; but the candidate is 490 ms of seek away and 2 expects 0 ms of
    // positioning: the seek rule waits, and the combination takes the larger wait.
    let d = disk();
    let (s, c) = stride_with(1.0, 2.0, 6.0, false, &d);
    assert_eq!(wait(&mut ProportionalHeuristic, &s, &c, &last_stats(200), &d), 0);
    assert_eq!(wait(&mut CombinedHeuristic, &s, &c, &last_stats(200), &d), 400 * NS_PER_US);
}

#[test]
fn combined_never_waits_beyond_minclock_plus_tau() {
    // 2 at 4 ms > 2 + 1: its next request would not be eligible; the seek rule alone would wait.
    let d = disk();
    let (s, c) = stride_with(1.0, 2.0, 8.0, false, &d);
    assert_eq!(wait(&mut SeekHeuristic, &s, &c, &last_stats(200), &d), 400 * NS_PER_US);
    assert_eq!(wait(&mut CombinedHeuristic, &s, &c, &last_stats(200), &d), 0);
}
