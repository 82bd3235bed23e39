//! adaptive on hand-built tables: the lookup by size, a switch when the mean size crosses into
//! another scheduler's range, and the drain (held requests wait for the old queue and the drive).

use super::*;
use crate::request::{Op, Principal};
use crate::sched::registry;
use crate::testkit::ToyDisk;
use std::cell::Cell;
use std::collections::BTreeMap;

fn table() -> Arc<SelectionTable> {
    // noop best for small requests, deadline for large ones.
    let p = |kib: f64, mb_s: [f64; 3]| TablePoint { readers_kib: vec![kib], mean_request_kib: kib, mb_s: mb_s.to_vec() };
    Arc::new(SelectionTable {
        candidates: CANDIDATES.to_vec(),
        points: vec![p(4.0, [3.0, 2.0, 1.0]), p(64.0, [5.0, 6.0, 4.0]), p(512.0, [10.0, 20.0, 15.0])],
    })
}

fn build(name: &str) -> Result<Box<dyn Scheduler>, String> {
    registry::build(name, None, &BTreeMap::new())
}

fn adaptive(window: f64, interval_ms: f64) -> Adaptive {
    let given: BTreeMap<String, f64> = [("window_requests".to_string(), window), ("switch_interval_ms".to_string(), interval_ms)].into();
    Adaptive::new(table(), build, &TunableValues::resolve(TUNABLES, &given).unwrap()).unwrap()
}

fn read(id: u64, kib: u32, start: u64) -> Request {
    Request { principal: Principal { pid: 1, group: 1 }, ..Request::new(id, Op::Read, start, kib * 2, 0) }
}

#[test]
fn lookup_takes_the_nearest_size_in_ratio() {
    let t = table();
    assert_eq!(t.best_for(4.0), 0);
    assert_eq!(t.best_for(12.0), 0, "12 is nearer 4 than 64 in ratio (3x vs 5.3x)");
    assert_eq!(t.best_for(20.0), 1);
    assert_eq!(t.best_for(1000.0), 1);
    assert_eq!(t.points[2].best(), 1);
}

#[test]
fn switches_when_the_mean_size_moves_and_drains_first() {
    let disk = ToyDisk { head: Cell::new(0) };
    let mut a = adaptive(4.0, 0.0);
    assert_eq!(a.current(), "noop");
    let cx = |now, in_flight| Context { now_ns: now, device: &disk, in_flight };
    // Four 64 KiB requests: the mean reaches 64 KiB, deadline's range, at the fourth dispatch.
    for i in 0..4 {
        a.add(read(i, 64, i * 1000), &cx(0, 0));
    }
    a.add(read(10, 64, 50_000), &cx(0, 0));
    for i in 0..4 {
        assert!(matches!(a.next(&cx(i, 0)), Decision::Dispatch(..)));
    }
    assert_eq!(a.switching_to, Some(1));
    // Arrivals during the switch are held; the old queue still dispatches what it has.
    a.add(read(11, 64, 60_000), &cx(5, 1));
    assert_eq!(a.queued(), 2);
    assert!(matches!(a.next(&cx(5, 1)), Decision::Dispatch(r, _) if r.id == 10));
    // The drive still holds a request: wait for it.
    assert_eq!(a.next(&cx(6, 1)), Decision::Empty);
    assert_eq!(a.current(), "noop");
    // Drive idle: deadline takes over with the held request.
    assert!(matches!(a.next(&cx(7, 0)), Decision::Dispatch(r, _) if r.id == 11));
    assert_eq!(a.current(), "deadline");
    let c: BTreeMap<_, _> = a.counters().into_iter().collect();
    assert_eq!((c["switches"], c["dispatched_noop"], c["dispatched_deadline"]), (1, 5, 1));
}

#[test]
fn no_switch_before_the_window_fills_or_within_the_interval() {
    let disk = ToyDisk { head: Cell::new(0) };
    let cx = Context { now_ns: 0, device: &disk, in_flight: 0 };
    let mut a = adaptive(8.0, 0.0);
    for i in 0..4 {
        a.add(read(i, 512, i * 2000), &cx);
        a.next(&cx);
    }
    assert_eq!(a.switching_to, None, "4 of a window of 8");
    let mut b = adaptive(1.0, 1000.0);
    b.add(read(1, 512, 0), &cx);
    b.next(&cx);
    assert_eq!(b.switching_to, None, "within switch_interval_ms of the start");
}

#[test]
fn a_held_request_takes_no_merges() {
    let disk = ToyDisk { head: Cell::new(0) };
    let cx = Context { now_ns: 0, device: &disk, in_flight: 1 };
    let mut a = adaptive(1.0, 0.0);
    a.switching_to = Some(1);
    let r = read(1, 4, 0);
    a.add(r, &cx);
    assert!(!a.allow_merge(&r, &read(2, 4, 8)));
    assert!(a.remove(&r, &cx));
    assert_eq!(a.queued(), 0);
}
