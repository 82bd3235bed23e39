//! CAS against LAS on hand-built cases (a child module of las/mod.rs; helpers from las/tests.rs).

use super::tests::{Bench, MS, P, Q};
use super::*;

#[test]
fn cas_dispatches_a_close_read_of_another_process_and_anticipates_on_it() {
    for name in ["cas", "las"] {
        let mut b = Bench::new(name, &[]);
        let (far, last) = b.anticipating_on_p();
        b.now += MS;
        // R, a third process, reads close to P's last request.
        let c = b.read(Q + 1, last + 100);
        assert_eq!(b.s.breaks(Break::Close), 1, "{name}");
        assert_eq!(b.s.antic_status(), AnticStatus::Finished);
        assert_eq!(b.dispatch(), c, "{name}");
        // Anticipation has moved to R: when R's read completes, Q's far read waits for R.
        assert_eq!(b.s.anticipated(), Some(Q + 1));
        b.now += MS;
        b.complete(c);
        assert_eq!(b.next(), Decision::WaitUntil(b.now + 6 * MS), "{name}");
        b.now += 6 * MS;
        assert_eq!(b.dispatch(), far);
    }
    // Linux 2.6.32's rule 4 is already this cooperating rule (with P alive, both learn from
    // the close request); CAS also counts the rescue in its cooperative probability.
    let mut b = Bench::new("cas", &[]);
    let (_, last) = b.anticipating_on_p();
    b.read(Q, last + 100);
    assert_eq!(b.s.est.coop_prob, 32);
    assert_eq!(b.s.aic(P).unwrap().last_request_pos, last + 108, "P, alive, learned from Q's request");
}

#[test]
fn the_anticipated_process_has_exited_cas_waits_for_a_cooperator_where_las_seeks_away() {
    // Processes have been exiting (exit_prob 200) without cooperators (exit_no_coop 200).
    // P, anticipated on, exits; a far read of another instance arrives.
    let setup = |name: &str| {
        let mut b = Bench::new(name, &[]);
        let (far, last) = b.anticipating_on_p();
        b.exit(P);
        b.s.est.exit_prob = 200;
        b.s.est.exit_no_coop = 200;
        b.now += MS;
        let far2 = b.read(Q + 1, 60_000_000);
        (b, far, far2, last)
    };
    // LAS rule 5: the process exited and exits are seldom followed by cooperation: go.
    let (mut las, _, _, _) = setup("las");
    assert_eq!(las.s.breaks(Break::Exited), 1);
    assert_ne!(las.dispatch().principal.pid, P);
    // CAS step 4: exit_prob (now 207) is not below 50%: keep waiting; then a close read of a
    // cooperating process arrives and is dispatched, and anticipation moves to it.
    let (mut cas, _, _, last) = setup("cas");
    assert_eq!(cas.s.breaks(Break::Exited), 0);
    assert_eq!(cas.s.est.exit_prob, (7 * 200 + 256) / 8);
    assert!(matches!(cas.next(), Decision::WaitUntil(_)));
    cas.now += MS;
    let p_before = cas.s.aic(P).unwrap().clone();
    let coop = cas.read(Q + 2, last + 50);
    assert_eq!(cas.s.breaks(Break::Close), 1);
    assert_eq!(cas.dispatch(), coop);
    assert_eq!(cas.s.anticipated(), Some(Q + 2));
    // The dead process's history is left alone; the cooperative probability rose.
    assert_eq!(cas.s.aic(P), None, "P's state went once anticipation left it");
    assert_eq!(p_before.last_request_pos, last);
    assert_eq!(cas.s.est.coop_prob, 32);
}

#[test]
fn the_anticipated_process_has_exited_cas_stops_waiting_when_exits_are_rare() {
    // Default estimates (no exits seen): LAS keeps waiting on an exited process (exit_no_coop
    // 0 <= 128, think time short); CAS step 4 (exit_prob 32 < 128) dispatches.
    for (name, waits) in [("las", true), ("cas", false)] {
        let mut b = Bench::new(name, &[]);
        b.anticipating_on_p();
        b.exit(P);
        b.now += MS;
        let far2 = b.read(Q, 60_000_000);
        if waits {
            assert!(matches!(b.next(), Decision::WaitUntil(_)), "{name}");
        } else {
            assert_eq!(b.s.breaks(Break::Exited), 1);
            assert_eq!(b.dispatch().principal.pid, Q);
            let _ = far2;
        }
    }
}

/// P with one request (no think-time sample), completed at 1 ms, a far read of Q queued.
fn new_process(name: &str, exit_prob: u64, exit_no_coop: u64, coop_prob: u64) -> Bench {
    let mut b = Bench::new(name, &[]);
    let r = b.read(P, 1000);
    assert_eq!(b.dispatch(), r);
    b.read(Q, 500_000);
    b.now = MS;
    b.complete(r);
    b.s.est.exit_prob = exit_prob;
    b.s.est.exit_no_coop = exit_no_coop;
    b.s.est.coop_prob = coop_prob;
    b
}

#[test]
fn step_5_a_new_process_likely_to_exit_without_cooperators() {
    // exit_prob 200 (> 50%), exit_no_coop 100: LAS's product 20000 <= 32768 waits; CAS
    // with no cooperators seen (coop_prob 0 < 50%) does not.
    let mut las = new_process("las", 200, 100, 0);
    assert!(matches!(las.next(), Decision::WaitUntil(_)));
    let mut cas = new_process("cas", 200, 100, 0);
    assert_eq!(cas.dispatch().principal.pid, Q);
    assert_eq!(cas.s.breaks(Break::NewProcess), 1);
    // Cooperators have been common (coop_prob 200): CAS waits for one.
    let mut cas = new_process("cas", 200, 100, 200);
    assert!(matches!(cas.next(), Decision::WaitUntil(_)));
    // Processes seldom exit (exit_prob 100): CAS waits.
    let mut cas = new_process("cas", 100, 255, 0);
    assert!(matches!(cas.next(), Decision::WaitUntil(_)));
}

#[test]
fn step_6_think_time() {
    // As LAS rule 7: a process thinking longer than antic_expire is not waited on.
    let mut b = Bench::new("cas", &[]);
    let end = b.history(P, 1000, 12, 9);
    b.now += 9 * MS;
    let r = b.read(P, end);
    assert_eq!(b.dispatch(), r);
    let far = b.read(Q, 500_000);
    b.now += MS;
    b.complete(r);
    assert_eq!(b.dispatch(), far);
    assert_eq!(b.s.breaks(Break::ThinkTime), 1);
}

#[test]
fn timeouts_are_counted_per_process_and_decay_the_cooperative_probability() {
    let mut b = Bench::new("cas", &[]);
    b.anticipating_on_p();
    b.s.est.coop_prob = 200;
    b.now += 6 * MS;
    b.next();
    assert_eq!(b.s.aic(P).unwrap().consumed, 32);
    assert_eq!(b.s.est.coop_prob, 175);
    // A request of P arriving during a wait counts the other way: 7/8.
    b.s.procs.get_mut(P).unwrap().consumed = 200;
    let mut b2 = Bench::new("cas", &[]);
    b2.anticipating_on_p();
    b2.s.procs.get_mut(P).unwrap().consumed = 200;
    b2.read(P, 1_000_040);
    assert_eq!(b2.s.aic(P).unwrap().consumed, 175);
}

#[test]
fn section_7_a_process_whose_anticipations_time_out_is_not_anticipated() {
    // P's anticipations have mostly timed out (consumed 140/256 = 55%).
    for (name, limit, waits) in [("cas", 0.0, true), ("cas", 50.0, false), ("cas", 60.0, true), ("las", 0.0, true)] {
        let t: &[(&str, f64)] = if name == "cas" { &[("antic_consume_limit", limit)] } else { &[] };
        let mut b = Bench::new(name, t);
        let end = b.history(P, 1000, 4, 1);
        b.now += MS;
        let r = b.read(P, end);
        assert_eq!(b.dispatch(), r);
        let far = b.read(Q, 500_000);
        b.now += MS;
        b.complete(r);
        b.s.procs.get_mut(P).unwrap().consumed = 140;
        if waits {
            assert!(matches!(b.next(), Decision::WaitUntil(_)), "{name} limit {limit}");
        } else {
            assert_eq!(b.dispatch(), far);
            assert_eq!(b.s.breaks(Break::Consumed), 1);
        }
    }
    // Timeouts alone: each moves the fraction 1/8 toward 1; the sixth passes 50%.
    let mut c = 0;
    let seq: Vec<u64> = (0..6)
        .map(|_| {
            rise(&mut c);
            c
        })
        .collect();
    assert_eq!(seq, vec![32, 60, 84, 105, 123, 139]);
}
