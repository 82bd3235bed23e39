//! cfq-2.6.9 on hand-built cases through the Scheduler API. Requests are 8 sectors; pids 1, 2, 3
//! are processes A, B, C.

use super::*;
use crate::request::{Op, Principal};
use crate::sched::registry;
use crate::testkit::ToyDisk;
use std::cell::Cell;

fn rq(id: u64, pid: u32, start: u64) -> Request {
    Request { principal: Principal { pid, group: 1 }, ..Request::new(id, Op::Read, start, 8, 0) }
}

fn build(tunables: &[(&str, f64)]) -> Cfq269 {
    let given: BTreeMap<String, f64> = tunables.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    Cfq269::new(&TunableValues::resolve(TUNABLES, &given).unwrap()).unwrap()
}

fn disk() -> ToyDisk {
    ToyDisk { head: Cell::new(0) }
}

/// Dispatches until `n` requests went out (or Empty); the start sectors in order.
fn drain(s: &mut Cfq269, cx: &Context, n: usize) -> Vec<u64> {
    let mut out = Vec::new();
    while out.len() < n {
        match s.next(cx) {
            Decision::Dispatch(r, _) => out.push(r.start_sector),
            Decision::WaitUntil(_) => panic!("cfq-2.6.9 never idles"),
            Decision::Empty => break,
        }
    }
    out
}

/// A, B, C each queue three requests (in that order) before the driver asks. rr_list is
/// [C, B, A] (cfq_enqueue puts a newly busy queue at the head). First refill (quantum 4):
/// pass 1 (3 steps) takes C's 300, 310, 320 (C empties and leaves); pass 2 (2 steps, 3 < 4
/// moved) takes B's 200 and 210, each put before the dispatch list's last request (cfq_dispatch_sort:
/// below the first): 300 310 200 210 320. Second refill: pass 1 takes B's 220 (B leaves) and
/// A's 100 (before the last: 100 220); passes 2 and 3 take A's 110 and 120 (before 220).
#[test]
fn three_processes_hand_order() {
    let d = disk();
    let cx = Context { now_ns: 0, device: &d, in_flight: 0 };
    let mut s = build(&[]);
    let mut id = 0;
    for (pid, base) in [(1, 100), (2, 200), (3, 300)] {
        for k in 0..3 {
            id += 1;
            s.add(rq(id, pid, base + 10 * k), &cx);
        }
    }
    assert_eq!(s.rr_list(), vec![3, 2, 1], "newest busy queue at the head");
    assert_eq!(drain(&mut s, &cx, 1), vec![300]);
    assert_eq!(s.dispatch_list(), vec![310, 200, 210, 320], "first refill moved 5 (>= quantum 4)");
    assert_eq!(s.rr_list(), vec![2, 1], "C emptied and left rr_list");
    assert_eq!(drain(&mut s, &cx, 4), vec![310, 200, 210, 320]);
    assert_eq!(drain(&mut s, &cx, 1), vec![100]);
    assert_eq!(s.dispatch_list(), vec![110, 120, 220]);
    assert!(s.rr_list().is_empty());
    assert_eq!(drain(&mut s, &cx, 10), vec![110, 120, 220]);
    assert_eq!(s.next(&cx), Decision::Empty);
    assert_eq!(s.queued(), 0);
    assert_eq!(s.counters(), vec![("dispatch_refills", 2), ("alias_dispatches", 0)]);
}

/// The head queue is drained before the next one is touched: with 2 busy queues of 6 each and
/// quantum 4, a refill is 2 passes of 2 steps, all from the head (B), never alternating. The
/// second refill: pass 1 takes B's 5040 and 5050 (B leaves), passes 2 and 3 A's 1000 and 1010,
/// each put before the last request of the list (below its first, 5040): 5040 1000 1010 5050.
#[test]
fn head_queue_is_drained_not_rotated() {
    let d = disk();
    let cx = Context { now_ns: 0, device: &d, in_flight: 0 };
    let mut s = build(&[]);
    for k in 0..6 {
        s.add(rq(k + 1, 1, 1000 + 10 * k), &cx);
    }
    for k in 0..6 {
        s.add(rq(k + 11, 2, 5000 + 10 * k), &cx);
    }
    assert_eq!(s.rr_list(), vec![2, 1]);
    assert_eq!(drain(&mut s, &cx, 4), vec![5000, 5010, 5020, 5030]);
    assert_eq!(drain(&mut s, &cx, 1), vec![5040]);
    assert_eq!(s.dispatch_list(), vec![1000, 1010, 5050]);
    assert_eq!(s.rr_list(), vec![1]);
    assert_eq!(drain(&mut s, &cx, 20), vec![1000, 1010, 5050, 1020, 1030, 1040, 1050]);
}

/// An emptied queue leaves rr_list (the pass goes on with the next head); the process's next
/// request makes a new queue at the head.
#[test]
fn emptied_queue_leaves_and_returns_at_head() {
    let d = disk();
    let cx = Context { now_ns: 0, device: &d, in_flight: 0 };
    let mut s = build(&[]);
    s.add(rq(1, 1, 100), &cx);
    s.add(rq(2, 2, 200), &cx);
    s.add(rq(3, 2, 210), &cx);
    assert_eq!(s.rr_list(), vec![2, 1]);
    // Pass 1 (2 steps, both from the head B): 200, 210 (B empties and leaves); 2 < 4 moved and
    // step 1 left B busy, so pass 2 (1 step): A's 100, below the first (200): before the last.
    assert_eq!(drain(&mut s, &cx, 1), vec![200]);
    assert_eq!(s.dispatch_list(), vec![100, 210]);
    assert!(s.rr_list().is_empty());
    s.add(rq(4, 2, 220), &cx);
    assert_eq!(s.rr_list(), vec![2]);
    s.add(rq(5, 1, 110), &cx);
    assert_eq!(s.rr_list(), vec![1, 2], "A busy again, at the head");
    // The dispatch list is served before any refill; then A's 110 (A leaves), B's 220.
    assert_eq!(drain(&mut s, &cx, 5), vec![100, 210, 110, 220]);
}

/// quantum is a minimum per refill: with 3 busy queues, quantum 1 still moves 3 (one whole
/// pass, all from the head queue C); with one queue of 10, quantum 8 moves 8.
#[test]
fn quantum_counts_whole_passes() {
    let d = disk();
    let cx = Context { now_ns: 0, device: &d, in_flight: 0 };
    let mut s = build(&[("quantum", 1.0)]);
    for (id, pid) in [(1, 1), (2, 2), (3, 3), (4, 3), (5, 3)] {
        s.add(rq(id, pid, 100 * id), &cx);
    }
    assert_eq!(drain(&mut s, &cx, 1), vec![300]);
    assert_eq!(s.dispatch_list(), vec![400, 500]);
    assert_eq!(s.rr_list(), vec![2, 1]);
    let mut s = build(&[("quantum", 8.0)]);
    for k in 0..10 {
        s.add(rq(k + 1, 1, 100 + 10 * k), &cx);
    }
    drain(&mut s, &cx, 1);
    assert_eq!(s.dispatch_list().len(), 7);
}

/// Never WaitUntil while requests are queued; Empty only when nothing is held.
#[test]
fn never_idles() {
    let d = disk();
    let mut s = build(&[]);
    let mut id = 0;
    let mut now = 0;
    for round in 0..50u64 {
        let cx = Context { now_ns: now, device: &d, in_flight: 0 };
        for pid in 1..=(1 + round % 4) as u32 {
            id += 1;
            s.add(rq(id, pid, (id * 7919) % 90_000), &cx);
        }
        for _ in 0..(round % 3) {
            match s.next(&cx) {
                Decision::Dispatch(..) => {}
                other => panic!("{other:?} with {} queued", s.queued()),
            }
        }
        now += 1_000_000;
    }
    let cx = Context { now_ns: now, device: &d, in_flight: 0 };
    while s.queued() > 0 {
        assert!(matches!(s.next(&cx), Decision::Dispatch(..)));
    }
    assert_eq!(s.next(&cx), Decision::Empty);
    assert!(s.is_work_conserving());
}

/// cfq_add_crq_rb: a second request at a queued request's sector pushes the first to the
/// dispatch list.
#[test]
fn alias_goes_to_dispatch() {
    let d = disk();
    let cx = Context { now_ns: 0, device: &d, in_flight: 0 };
    let mut s = build(&[]);
    s.add(rq(1, 1, 500), &cx);
    s.add(rq(2, 1, 500), &cx);
    assert_eq!(s.dispatch_list(), vec![500]);
    assert_eq!(s.queued(), 2);
    match s.next(&cx) {
        Decision::Dispatch(r, _) => assert_eq!(r.id, 1),
        other => panic!("{other:?}"),
    }
    assert_eq!(s.counters()[1], ("alias_dispatches", 1));
}

/// Merges: only into requests still in a tree; a front merge re-sorts; an absorbed request
/// that empties its queue takes the queue off rr_list.
#[test]
fn merges() {
    let d = disk();
    let cx = Context { now_ns: 0, device: &d, in_flight: 0 };
    let mut s = build(&[("quantum", 1.0)]);
    s.add(rq(1, 1, 100), &cx);
    s.add(rq(2, 1, 300), &cx);
    s.add(rq(3, 2, 50), &cx);
    // Refill (quantum 1, 2 busy queues: one pass of 2 steps from B then A): 50 out, 100 listed.
    assert_eq!(drain(&mut s, &cx, 1), vec![50]);
    assert_eq!(s.dispatch_list(), vec![100]);
    assert!(!s.allow_merge(&rq(1, 1, 100), &rq(9, 1, 108)), "dispatch list takes no merges");
    assert!(s.allow_merge(&rq(2, 1, 300), &rq(9, 1, 308)));
    // Front merge: 300 grows down to 40 and is re-sorted; B's new 60 sits above it.
    s.add(rq(4, 2, 60), &cx);
    s.merged(&rq(2, 1, 300), Request { start_sector: 40, size_sectors: 268, ..rq(2, 1, 300) }, &cx);
    assert!(!s.allow_request_merge(&rq(2, 1, 40), &rq(4, 2, 60)), "different trees");
    assert!(s.remove(&rq(4, 2, 60), &cx));
    assert_eq!(s.rr_list(), vec![1], "B emptied by the removal");
    assert_eq!(drain(&mut s, &cx, 5), vec![100, 40]);
}

#[test]
fn registry_builds_and_rejects() {
    let none = BTreeMap::new();
    let s = registry::build("cfq-2.6.9", None, &none).unwrap();
    assert_eq!(s.name(), "cfq-2.6.9");
    assert!(s.is_work_conserving());
    let t = |k: &str, v: f64| -> BTreeMap<String, f64> { [(k.to_string(), v)].into() };
    let e = registry::build("cfq-2.6.9", None, &t("slice_idle", 8.0)).err().unwrap();
    assert!(e.contains("unknown tunable `slice_idle`") && e.contains("quantum (requests)"), "{e}");
    let e = registry::build("cfq-2.6.9", None, &t("quantum", 0.0)).err().unwrap();
    assert!(e.contains("tunable `quantum` = 0 is out of range"), "{e}");
    let e = registry::build("cfq-2.6.9", None, &t("queued", 2.5)).err().unwrap();
    assert!(e.contains("not a whole number"), "{e}");
    assert!(registry::build("cfq-2.6.9", None, &t("quantum", 16.0)).is_ok());
}

/// `cfq_may_queue` (2.6.9) as the block layer asks it with the pool full: A has 130 writes in
/// its tree and B one; with two busy queues and nr_requests 8192 the limit is
/// clamp((8192 - 8) / 2, 3, 128) = 128, so A (130 > 128) must wait and B may allocate; a process
/// without a queue may; with no busy queue everyone may; with 100 busy queues the limit is
/// (8192 - 8) / 100 = 81.
#[test]
fn may_queue_exempts_all_but_processes_over_their_share() {
    let mut s = build(&[]);
    let d = disk();
    let cx = Context { now_ns: 0, device: &d, in_flight: 0 };
    let wr = |id: u64, pid: u32, start: u64| Request { op: Op::Write, ..rq(id, pid, start) };
    assert!(s.may_queue_when_full(&wr(0, 1, 0), 8192), "no busy queue: may");
    for i in 0..130 {
        s.add(wr(i, 1, 1_000 + i * 8), &cx);
    }
    s.add(wr(500, 2, 900_000), &cx);
    assert!(!s.may_queue_when_full(&wr(600, 1, 5), 8192), "A: 130 writes queued > 128");
    assert!(s.may_queue_when_full(&rq(601, 1, 5), 8192), "A's reads: none queued");
    assert!(s.may_queue_when_full(&wr(602, 2, 5), 8192), "B: 1 write");
    assert!(s.may_queue_when_full(&wr(603, 3, 5), 8192), "C has no queue");
    // Dispatching moves requests out of the trees: A's count falls.
    drain(&mut s, &cx, 8);
    assert!(s.may_queue_when_full(&wr(604, 1, 5), 8192), "A: at most 128 left in its tree");
    let mut many = build(&[]);
    for p in 0..100u32 {
        for i in 0..82u64 {
            many.add(wr(p as u64 * 1000 + i, p + 10, (p as u64 * 1000 + i) * 8), &cx);
        }
    }
    assert!(!many.may_queue_when_full(&wr(1, 10, 0), 8192), "82 > (8192 - 8) / 100 = 81");
    assert!(many.may_queue_when_full(&wr(1, 10, 0), 8292), "82 <= (8292 - 8) / 100 = 82");
}
