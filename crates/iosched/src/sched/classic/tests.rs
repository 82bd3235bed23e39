//! Hand-checked orders for every policy on a toy device: 100 sectors per cylinder, seek of d
//! cylinders = d ms, and a rotational delay of (sector mod 100) x 0.1 ms (as if the platter were
//! at angle 0 at every decision).

use super::*;
use crate::request::{Op, Principal, Request};
use crate::sched::registry::build;
use crate::sched::*;
use crate::testkit::ToyDisk;
use crate::time::{Nanos, NS_PER_MS};
use std::cell::Cell;
use std::collections::BTreeMap;

fn req(id: u64, sector: u64, issue_ns: Nanos) -> Request {
    Request { principal: Principal { pid: 1, group: 1 }, ..Request::new(id, Op::Read, sector, 8, issue_ns) }
}

/// Queues `sectors` (ids 0..) at time 0 with the head at `head`, then drains the scheduler,
/// moving the head to each dispatched request and advancing time by `step_ns` per dispatch.
fn order_with(name: &str, tunables: &[(&str, f64)], head: u32, sectors: &[u64], step_ns: Nanos) -> (Vec<u64>, Vec<ArmPath>) {
    let disk = ToyDisk { head: Cell::new(head) };
    let t: BTreeMap<String, f64> = tunables.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let mut s = build(name, None, &t).unwrap();
    let mut now = 0;
    for (i, &sec) in sectors.iter().enumerate() {
        s.add(req(i as u64, sec, 0), &Context { now_ns: now, device: &disk, in_flight: 0 });
    }
    let (mut order, mut paths) = (vec![], vec![]);
    loop {
        let cx = Context { now_ns: now, device: &disk, in_flight: 0 };
        match s.next(&cx) {
            Decision::Dispatch(r, p) => {
                order.push(r.start_sector);
                paths.push(p);
                disk.head.set(disk.cylinder_of(r.start_sector));
                now += step_ns;
            }
            Decision::Empty => break,
            Decision::WaitUntil(_) => panic!("{name} is work-conserving"),
        }
    }
    assert_eq!(s.queued(), 0);
    (order, paths)
}

fn order(name: &str, head: u32, sectors: &[u64]) -> Vec<u64> {
    order_with(name, &[], head, sectors, NS_PER_MS).0
}

// Cylinders of the classic textbook queue: 98 183 37 122 14 124 65 67, head at 53.
const QUEUE: [u64; 8] = [9800, 18300, 3700, 12200, 1400, 12400, 6500, 6700];

#[test]
fn fcfs_serves_arrival_order() {
    assert_eq!(order("fcfs", 53, &QUEUE), QUEUE.to_vec());
    assert_eq!(order("noop", 53, &QUEUE), QUEUE.to_vec());
}

#[test]
fn sstf_nearest_cylinder_each_time() {
    assert_eq!(order("sstf", 53, &QUEUE), vec![6500, 6700, 3700, 1400, 9800, 12200, 12400, 18300]);
}

#[test]
fn look_sweeps_up_then_down() {
    assert_eq!(order("look", 53, &QUEUE[..]).first(), Some(&6500));
    assert_eq!(order("look", 53, &QUEUE), vec![6500, 6700, 9800, 12200, 12400, 18300, 3700, 1400]);
}

#[test]
fn scan_same_order_as_look_but_travels_to_the_edge() {
    let (o, paths) = order_with("scan", &[], 53, &QUEUE, NS_PER_MS);
    assert_eq!(o, vec![6500, 6700, 9800, 12200, 12400, 18300, 3700, 1400]);
    // Reversal after 183: the arm goes to the last cylinder first.
    assert_eq!(paths[6], ArmPath::Through(999));
    assert!(paths.iter().enumerate().all(|(i, p)| i == 6 || *p == ArmPath::Direct));
}

#[test]
fn clook_and_cscan_wrap_to_the_lowest() {
    let expect = vec![6500, 6700, 9800, 12200, 12400, 18300, 1400, 3700];
    assert_eq!(order("clook", 53, &QUEUE), expect);
    let (o, paths) = order_with("cscan", &[], 53, &QUEUE, NS_PER_MS);
    assert_eq!(o, expect);
    assert_eq!(paths[6], ArmPath::Wrap { edge: 999, start: 0 });
    let (_, clook_paths) = order_with("clook", &[], 53, &QUEUE, NS_PER_MS);
    assert!(clook_paths.iter().all(|p| *p == ArmPath::Direct));
}

#[test]
fn sptf_trades_seek_for_rotation() {
    // Head at cylinder 10. Same cylinder but 9.9 ms of rotation (sector 1099) loses to one
    // cylinder away with no rotation (1100: 1 ms); from there 1305 costs 2 + 0.5 ms against
    // 1 + 9.9 ms for 1099.
    let q = [1099, 1305, 1100];
    assert_eq!(order("sptf", 10, &q), vec![1100, 1305, 1099]);
    assert_eq!(order("stf", 10, &q), vec![1100, 1305, 1099]);
    // SSTF would take the same-cylinder one first.
    assert_eq!(order("sstf", 10, &q), vec![1099, 1100, 1305]);
}

#[test]
fn sptf_bounded_search_finds_the_global_best() {
    // Many requests; brute force over the queue must agree with the bounded search at each step.
    let sectors: Vec<u64> = (0..300u64).map(|i| (i * 7919) % 100_000).collect();
    let got = order("sptf", 500, &sectors);
    let disk = ToyDisk { head: Cell::new(500) };
    let mut left: Vec<u64> = sectors.clone();
    let mut want = vec![];
    while !left.is_empty() {
        let (i, _) = left.iter().enumerate().min_by_key(|(_, &s)| disk.positioning_time_ns(s, 8, Op::Read, 0)).unwrap();
        let s = left.remove(i);
        disk.head.set(disk.cylinder_of(s));
        want.push(s);
    }
    assert_eq!(got, want);
}

#[test]
fn aged_sptf_promotes_old_requests() {
    // With weight 0 it is SPTF. With weight 1, the oldest (issued at t=0) beats a fresh
    // near request once it has waited longer than the positioning difference.
    let disk = ToyDisk { head: Cell::new(0) };
    let t: BTreeMap<String, f64> = [("age_weight".to_string(), 1.0), ("max_latency_ms".to_string(), 0.0)].into();
    let mut s = aged_sptf::AgedSptf::new(&tunables::TunableValues::resolve(aged_sptf::TUNABLES, &t).unwrap());
    let cx0 = Context { now_ns: 0, device: &disk, in_flight: 0 };
    Policy::add(&mut s, req(0, 50_000, 0), &cx0); // 500 ms away
    let now = 600 * NS_PER_MS;
    let cx = Context { now_ns: now, device: &disk, in_flight: 0 };
    Policy::add(&mut s, req(1, 100, now), &cx); // 1 ms away, fresh
    assert_eq!(s.peek(&cx).unwrap().id, 0, "600 ms of age outweighs 499 ms of extra seek");
    assert!(s.aging_overrode());
    let cx_early = Context { now_ns: 100 * NS_PER_MS, device: &disk, in_flight: 0 };
    assert_eq!(s.peek(&cx_early).unwrap().id, 1);
    assert!(!s.aging_overrode());
}

#[test]
fn aged_sptf_bounds_latency() {
    // Default: plain SPTF until a request has waited 1 s; then it goes first.
    let disk = ToyDisk { head: Cell::new(0) };
    let mut s = aged_sptf::AgedSptf::new(&tunables::TunableValues::resolve(aged_sptf::TUNABLES, &BTreeMap::new()).unwrap());
    let cx0 = Context { now_ns: 0, device: &disk, in_flight: 0 };
    Policy::add(&mut s, req(0, 50_000, 0), &cx0);
    let near = Context { now_ns: 999 * NS_PER_MS, device: &disk, in_flight: 0 };
    Policy::add(&mut s, req(1, 100, 999 * NS_PER_MS), &near);
    assert_eq!(s.peek(&near).unwrap().id, 1);
    assert!(!s.aging_overrode());
    let late = Context { now_ns: 1000 * NS_PER_MS, device: &disk, in_flight: 0 };
    assert_eq!(s.peek(&late).unwrap().id, 0);
    assert!(s.aging_overrode());
}

#[test]
fn wstf_weights_by_remaining_time() {
    // M = 1000 ms. A request that waited 900 ms has weight 0.1: 300 ms x 0.1 = 30 ms beats a
    // fresh 50 ms request.
    let disk = ToyDisk { head: Cell::new(0) };
    let t: BTreeMap<String, f64> = [("max_response_ms".to_string(), 1000.0)].into();
    let mut s = wstf::Wstf::new(&tunables::TunableValues::resolve(wstf::TUNABLES, &t).unwrap());
    let cx0 = Context { now_ns: 0, device: &disk, in_flight: 0 };
    Policy::add(&mut s, req(0, 30_000, 0), &cx0);
    let now = 900 * NS_PER_MS;
    let cx = Context { now_ns: now, device: &disk, in_flight: 0 };
    Policy::add(&mut s, req(1, 5_000, now), &cx);
    assert_eq!(s.peek(&cx).unwrap().id, 0);
    let cx_early = Context { now_ns: 100 * NS_PER_MS, device: &disk, in_flight: 0 };
    assert_eq!(s.peek(&cx_early).unwrap().id, 1);
    // Past the limit, overdue requests go oldest first, whatever their positioning time.
    Policy::add(&mut s, req(2, 200, 50 * NS_PER_MS), &cx);
    let late = Context { now_ns: 1200 * NS_PER_MS, device: &disk, in_flight: 0 };
    assert_eq!(s.peek(&late).unwrap().id, 0);
}

#[test]
fn gstf_finishes_a_group_before_moving_on() {
    // Groups of 250 cylinders. Head at 100 (group 0). Group 0 requests are served (STF order)
    // before the nearer-by-STF request just across the boundary in group 1.
    let q = [26_000, 1_000, 24_900, 60_000];
    let o = order_with("gstf", &[("group_cylinders", 250.0)], 240, &q, NS_PER_MS).0;
    assert_eq!(o, vec![24_900, 1_000, 26_000, 60_000]);
    // Group size = whole disk: plain STF from cylinder 240 -> 249 -> 260 -> ...
    let o = order_with("gstf", &[("group_cylinders", 1000.0)], 240, &q, NS_PER_MS).0;
    assert_eq!(o, order("sptf", 240, &q));
}

#[test]
fn gstf_frozen_defers_late_arrivals_to_the_next_visit() {
    let disk = ToyDisk { head: Cell::new(0) };
    let t: BTreeMap<String, f64> = [("group_cylinders".to_string(), 250.0), ("frozen".to_string(), 1.0)].into();
    let mut s = gstf::Gstf::new(&tunables::TunableValues::resolve(gstf::TUNABLES, &t).unwrap());
    let cx = Context { now_ns: 0, device: &disk, in_flight: 0 };
    Policy::add(&mut s, req(0, 1_000, 0), &cx);
    Policy::add(&mut s, req(1, 30_000, 0), &cx);
    let first = s.peek(&cx).unwrap();
    Policy::take(&mut s, &first, &cx);
    assert_eq!(first.id, 0);
    disk.head.set(10);
    // A new group-0 request arrives after the group was frozen: group 1 goes first.
    Policy::add(&mut s, req(2, 1_100, 0), &cx);
    assert_eq!(s.peek(&cx).unwrap().id, 1);
    // Unfrozen GSTF would serve the newcomer first.
    let mut u =
        gstf::Gstf::new(&tunables::TunableValues::resolve(gstf::TUNABLES, &[("group_cylinders".to_string(), 250.0)].into()).unwrap());
    disk.head.set(0);
    Policy::add(&mut u, req(0, 1_000, 0), &cx);
    Policy::add(&mut u, req(1, 30_000, 0), &cx);
    let f = u.peek(&cx).unwrap();
    Policy::take(&mut u, &f, &cx);
    disk.head.set(10);
    Policy::add(&mut u, req(2, 1_100, 0), &cx);
    assert_eq!(u.peek(&cx).unwrap().id, 2);
}
