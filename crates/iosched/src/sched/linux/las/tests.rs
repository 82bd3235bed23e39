//! LAS on hand-built cases through the Scheduler API (a child module of las/mod.rs, so it can look
//! at the scheduler's state). Time in ms unless said; requests are 8 sectors.

use super::*;
use crate::request::Principal;
use crate::testkit::ToyDisk;
use std::cell::Cell;
use std::collections::BTreeMap;

pub(super) const MS: Nanos = NS_PER_MS;
/// The anticipated process and the others.
pub(super) const P: u32 = 1;
pub(super) const Q: u32 = 2;

pub(super) fn rq(id: u64, pid: u32, op: Op, start: u64) -> Request {
    Request { principal: Principal { pid, group: 1 }, sync: op == Op::Read, ..Request::new(id, op, start, 8, 0) }
}

pub(super) fn rd(id: u64, pid: u32, start: u64) -> Request {
    rq(id, pid, Op::Read, start)
}

pub(super) fn wr(id: u64, pid: u32, start: u64) -> Request {
    rq(id, pid, Op::Write, start)
}

/// A scheduler with a clock.
pub(super) struct Bench {
    pub s: As,
    pub disk: ToyDisk,
    pub now: Nanos,
    pub next_id: u64,
}

impl Bench {
    pub fn new(name: &str, tunables: &[(&str, f64)]) -> Self {
        let given: BTreeMap<String, f64> = tunables.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let s = match name {
            "las" => new_las(&TunableValues::resolve(LAS_TUNABLES, &given).unwrap()).unwrap(),
            "cas" => new_cas(&TunableValues::resolve(CAS_TUNABLES, &given).unwrap()).unwrap(),
            "las-2.6.9" => new_las_2_6_9(&TunableValues::resolve(LAS_TUNABLES, &given).unwrap()).unwrap(),
            "cas-2.6.9" => new_cas_2_6_9(&TunableValues::resolve(CAS_TUNABLES, &given).unwrap()).unwrap(),
            _ => unreachable!(),
        };
        Bench { s, disk: ToyDisk { head: Cell::new(0) }, now: 0, next_id: 0 }
    }

    pub fn add(&mut self, r: Request) -> Request {
        let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
        self.s.add(r, &cx);
        r
    }

    /// A read of `pid` at `start` with the next id.
    pub fn read(&mut self, pid: u32, start: u64) -> Request {
        self.next_id += 1;
        self.add(rd(self.next_id, pid, start))
    }

    pub fn write(&mut self, pid: u32, start: u64) -> Request {
        self.next_id += 1;
        self.add(wr(self.next_id, pid, start))
    }

    pub fn next(&mut self) -> Decision {
        let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
        self.s.next(&cx)
    }

    /// The next decision must be a dispatch: its request.
    pub fn dispatch(&mut self) -> Request {
        match self.next() {
            Decision::Dispatch(r, _) => r,
            d => panic!("expected a dispatch at {} ns, got {d:?}", self.now),
        }
    }

    pub fn complete(&mut self, r: Request) {
        let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
        self.s.completed(&Completion { request: r, dispatch_ns: self.now, positioning_ns: 0 }, &cx);
    }

    pub fn exit(&mut self, pid: u32) {
        let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
        self.s.process_event(ProcessEvent::Exited(Principal { pid, group: 1 }), &cx);
    }

    /// `pid` reads `n` contiguous requests from `start`, alone: each is dispatched at once,
    /// served in 1 ms, and the next one comes `think_ms` after the completion. Returns the
    /// sector after the last one; time ends at the last completion.
    pub fn history(&mut self, pid: u32, start: u64, n: u64, think_ms: u64) -> u64 {
        for i in 0..n {
            if i > 0 {
                self.now += think_ms * MS;
            }
            let r = self.read(pid, start + 8 * i);
            assert_eq!(self.dispatch(), r);
            self.now += MS;
            self.complete(r);
        }
        start + 8 * n
    }

    /// P with 4 requests of history (think time 1 ms) from sector 1,000,000, then P's fifth
    /// read is dispatched, a far read of Q (sector 50,000,000) is queued, and P's read completes 1 ms
    /// later: the scheduler waits on P (WAIT_NEXT) until the completion + antic_expire. Returns
    /// Q's request and the end of P's last request.
    pub fn anticipating_on_p(&mut self) -> (Request, u64) {
        let end = self.history(P, 1_000_000, 4, 1);
        self.now += MS;
        let r = self.read(P, end);
        assert_eq!(self.dispatch(), r);
        let far = self.read(Q, 50_000_000);
        // P's request is still at the drive: wait for it (WAIT_REQ).
        assert_eq!(self.next(), Decision::Empty);
        assert_eq!(self.s.antic_status(), AnticStatus::WaitReq);
        self.now += MS;
        self.complete(r);
        assert_eq!(self.s.antic_status(), AnticStatus::WaitNext);
        assert_eq!(self.next(), Decision::WaitUntil(self.now + 6 * MS));
        (far, end + 8)
    }
}

// ---- Statistics ----

#[test]
fn think_time_filter_matches_a_direct_computation() {
    // Linux's fixed point by hand: samples (7s + 256)/8, total (7t + 256x)/8,
    // mean (total + 128)/samples. Samples 3, 3: s = 32, t = 96, mean = (96+128)/32 = 7; then
    // s = 60, t = 180, mean = 308/60 = 5.
    let (mut est, mut aic) = (Estimates::default(), Aic::default());
    update_thinktime(&mut est, &mut aic, 3);
    assert_eq!((aic.ttime_samples, aic.ttime_total, aic.ttime_mean), (32, 96, 7));
    // The first sample also feeds the new-process estimate: (7*0 + 256*3)/8 = 96 -> 96/256 = 0.
    assert_eq!((est.new_ttime_total, est.new_ttime_mean), (96, 0));
    update_thinktime(&mut est, &mut aic, 3);
    assert_eq!((aic.ttime_samples, aic.ttime_total, aic.ttime_mean), (60, 180, 5));
    assert_eq!(est.new_ttime_total, 96, "only a process's first sample feeds it");
    // Against the recurrence in floating point: the decayed weights sum, after n samples, to
    // 1 - (7/8)^n (up to the integer divisions), and a constant x gives a mean near x.
    let mut aic = Aic::default();
    for n in 1..=60u32 {
        update_thinktime(&mut est, &mut aic, 4);
        let weight = 256.0 * (1.0 - 0.875f64.powi(n as i32));
        assert!((aic.ttime_samples as f64 - weight).abs() <= 8.0, "n = {n}: {} vs {weight}", aic.ttime_samples);
    }
    assert_eq!((aic.ttime_samples, aic.ttime_mean), (249, 4));
    // A first think-time sample of a process decays the exit probability by 7/8.
    est.exit_prob = 200;
    update_thinktime(&mut est, &mut Aic::default(), 0);
    assert_eq!(est.exit_prob, 175);
}

#[test]
fn seek_filter_matches_a_direct_computation_and_clamps() {
    let (mut est, mut aic) = (Estimates::default(), Aic::default());
    update_seekdist(&mut est, &mut aic, 1000);
    // s = 32, t = 256*1000/8 = 32000, mean = (32000 + 16)/32 = 1000.
    assert_eq!((aic.seek_samples, aic.seek_total, aic.seek_mean), (32, 32_000, 1000));
    assert_eq!((est.new_seek_total, est.new_seek_mean), (32_000, 125));
    update_seekdist(&mut est, &mut aic, 3000);
    // s = 60, t = (7*32000 + 256*3000)/8 = 124000, mean = (124000 + 30)/60 = 2067.
    assert_eq!((aic.seek_samples, aic.seek_total, aic.seek_mean), (60, 124_000, 2067));
    // While samples <= 60 a sample is clamped to 4*mean + 2 Mi sectors.
    let before = aic.clone();
    update_seekdist(&mut est, &mut aic, 100_000_000);
    let x = 4 * 2067 + 2 * 1024 * 1024;
    assert_eq!(aic.seek_total, (7 * before.seek_total + 256 * x) / 8);
    assert_eq!(aic.seek_samples, 84);
    // Beyond 60 samples: 4*mean + 128 Ki sectors.
    let before = aic.clone();
    update_seekdist(&mut est, &mut aic, 100_000_000);
    let x = 4 * before.seek_mean + 2 * 1024 * 64;
    assert_eq!(aic.seek_total, (7 * before.seek_total + 256 * x) / 8);
    assert_eq!(aic.seek_mean, (aic.seek_total + aic.seek_samples / 2) / aic.seek_samples);
}

#[test]
fn arrivals_feed_the_filters_in_whole_jiffies() {
    // P: reads at 1000, 1008 (think 2.6 ms: 2 jiffies... counted from the completion), then
    // one at 5000 (think 0.4 ms: 0 jiffies; seek 5000 - 1016 = 3984).
    let mut b = Bench::new("las", &[]);
    let r = b.read(P, 1000);
    assert_eq!(b.dispatch(), r);
    b.now = MS;
    b.complete(r);
    assert_eq!(b.s.aic(P).unwrap().ttime_samples, 0, "the first request gives no sample");
    b.now = 3 * MS + 600_000; // 2.6 ms after the completion
    let r = b.read(P, 1008);
    let mut want = Aic { running: true, io_started: true, io_running: true, ..Aic::default() };
    let mut est = Estimates::default();
    update_thinktime(&mut est, &mut want, 2);
    update_seekdist(&mut est, &mut want, 0);
    let got = b.s.aic(P).unwrap();
    assert_eq!((got.ttime_total, got.ttime_mean, got.seek_total), (want.ttime_total, want.ttime_mean, want.seek_total));
    assert_eq!(b.dispatch(), r);
    b.now += MS;
    b.complete(r);
    b.now += 400_000;
    b.read(P, 5000);
    update_thinktime(&mut est, &mut want, 0);
    update_seekdist(&mut est, &mut want, 5000 - 1016);
    let got = b.s.aic(P).unwrap();
    assert_eq!((got.ttime_mean, got.seek_mean), (want.ttime_mean, want.seek_mean));
    assert_eq!(b.s.est, est);
}

#[test]
fn think_time_sample_is_capped_at_19_jiffies() {
    let mut b = Bench::new("las", &[]);
    b.history(P, 0, 2, 500);
    let mut want = Aic::default();
    update_thinktime(&mut Estimates::default(), &mut want, 19);
    assert_eq!(b.s.aic(P).unwrap().ttime_total, want.ttime_total);
}

#[test]
fn a_new_process_starts_with_no_history_and_its_state_goes_with_it() {
    let mut b = Bench::new("las", &[]);
    b.history(P, 1000, 5, 1);
    assert!(b.s.aic(P).unwrap().ttime_samples > 0);
    // P exits; it is the process anticipated on, so its io_context is still referenced.
    b.exit(P);
    assert!(b.s.aic(P).is_some_and(|a| !a.running));
    // Another process's read is dispatched: P is no longer referenced and its state goes.
    b.now += 50 * MS;
    let r = b.read(Q, 2000);
    assert_eq!(b.dispatch(), r);
    assert_eq!(b.s.anticipated(), Some(Q));
    assert!(b.s.aic(P).is_none());
    // Q, new, has no history; a later process with P's pid starts from nothing as well.
    assert_eq!(b.s.aic(Q).unwrap().ttime_samples, 0);
    b.now += MS;
    b.complete(r);
    b.read(P, 1040);
    let p = b.s.aic(P).unwrap();
    assert_eq!((p.ttime_samples, p.seek_samples, p.running), (0, 0, true));
}

#[test]
fn an_exited_process_keeps_its_state_while_its_requests_are_queued_or_at_the_drive() {
    let mut b = Bench::new("las", &[]);
    let a = b.read(P, 1000);
    let w = b.write(P, 9000);
    assert_eq!(b.dispatch(), a);
    b.exit(P);
    assert!(b.s.aic(P).is_some(), "a read at the drive, a write queued");
    b.complete(a);
    let got = b.dispatch();
    assert_eq!(got, w);
    // The write went: P is no longer anticipated on (async dispatch) but the write is at the
    // drive.
    assert_eq!(b.s.anticipated(), None);
    assert!(b.s.aic(P).is_some());
    b.complete(w);
    assert!(b.s.aic(P).is_none());
}

// ---- The close window ----

#[test]
fn close_window_grows_with_the_time_waited() {
    let mut b = Bench::new("las", &[]);
    let (_, last) = b.anticipating_on_p();
    let aic = b.s.aic(P).unwrap().clone();
    assert_eq!(aic.seek_mean, 0, "P is sequential: only the window can make a request close");
    let start = b.now; // the completion: antic_start
    let close = |b: &mut Bench, waited_ms: u64, sector: u64| {
        b.now = start + waited_ms * MS;
        b.s.close_req(&aic, &rd(99, Q, sector), b.now)
    };
    for w in 0..=6u64 {
        let delta = 8192u64 << w;
        assert!(close(&mut b, w, last + delta), "waited {w} ms: {delta} ahead is close");
        assert!(!close(&mut b, w, last + delta + 1), "waited {w} ms: {} ahead is not", delta + 1);
        assert!(close(&mut b, w, last - delta / 2), "waited {w} ms: {} behind is close", delta / 2);
        assert!(!close(&mut b, w, last - delta / 2 - 1));
        // Part of a ms counts as nothing.
        b.now = start + w * MS + MS - 1;
        assert!(!b.s.close_req(&aic, &rd(99, Q, last + (8192 << (w + 1))), b.now));
    }
    // Past antic_expire (or 20 ms) every request is close.
    assert!(close(&mut b, 7, 90_000_000));
    // Before the anticipated request completes the window is the base one.
    b.s.ioc_finished = false;
    assert!(!b.s.close_req(&aic, &rd(99, Q, last + 8193), start + 3 * MS));
    // The process's mean seek distance widens it: nearer than the mean is close.
    let mut seeky = aic.clone();
    seeky.seek_mean = 20_000;
    assert!(b.s.close_req(&seeky, &rd(99, Q, last + 19_999), start));
    assert!(!b.s.close_req(&seeky, &rd(99, Q, last + 20_000), start));
}

#[test]
fn a_close_request_arriving_later_breaks_where_it_would_not_have_earlier() {
    // 32768 sectors ahead: close once 2 ms have been waited (8192 << 2), not at 1 ms.
    for (waited, breaks) in [(1, false), (2, true)] {
        let mut b = Bench::new("las", &[]);
        let (_, last) = b.anticipating_on_p();
        b.now += waited * MS;
        let r = b.read(Q, last + 32_768);
        assert_eq!(b.s.breaks(Break::Close), breaks as u64, "waited {waited} ms");
        if breaks {
            assert_eq!(b.dispatch(), r);
        } else {
            assert!(matches!(b.next(), Decision::WaitUntil(_)));
        }
    }
}

// ---- The rules that break anticipation, in order ----

#[test]
fn rule_1_a_request_of_the_anticipated_process() {
    let mut b = Bench::new("las", &[]);
    let (_, last) = b.anticipating_on_p();
    b.now += 2 * MS;
    // Far away, but P's: dispatched at once.
    let before = b.s.breaks(Break::SameProcess);
    let r = b.read(P, last + 9_000_000);
    assert_eq!(b.s.breaks(Break::SameProcess), before + 1);
    assert_eq!(b.s.antic_status(), AnticStatus::Finished);
    assert_eq!(b.dispatch(), r);
}

#[test]
fn rule_2_the_anticipation_has_expired_before_the_timer_ran() {
    // P's read completes with nothing else queued (no anticipation started); 10 ms later the
    // scheduler is asked with a far read queued: P finished long ago, so no wait.
    let mut b = Bench::new("las", &[]);
    b.history(P, 1000, 4, 1);
    b.now += 10 * MS;
    let far = b.read(Q, 500_000);
    assert_eq!(b.dispatch(), far);
    assert_eq!(b.s.breaks(Break::Expired), 1);
    assert_eq!(b.s.counters()[0], ("antic_waits", 0));
}

#[test]
fn rule_3_the_process_has_requests_queued_before_rule_4() {
    // P queues A (1000) and B (900,000); Q's C (1100) is close to A. After A goes, the next
    // request is C (nearest ahead), and P still has B queued: rule 3 fires, before the close
    // rule could.
    let mut b = Bench::new("las", &[]);
    let a = b.read(P, 1000);
    b.read(P, 900_000);
    let c = b.read(Q, 1100);
    assert_eq!(b.dispatch(), a);
    assert_eq!(b.dispatch(), c);
    assert_eq!((b.s.breaks(Break::Queued), b.s.breaks(Break::Close)), (1, 0));
}

#[test]
fn rule_4_a_close_read_of_another_process_updates_the_anticipated_history() {
    let mut b = Bench::new("las", &[]);
    let (far, last) = b.anticipating_on_p();
    b.now += MS;
    let before = b.s.aic(P).unwrap().clone();
    let c = b.read(Q, last + 100);
    assert_eq!(b.s.breaks(Break::Close), 1);
    // P's history learned from Q's request (think time 1 ms, seek 100 from P's last end).
    let mut want = before.clone();
    update_iohist(&mut Estimates::default(), &mut want, &c, b.now);
    let after = b.s.aic(P).unwrap();
    assert_eq!((after.last_request_pos, after.ttime_total, after.seek_total), (want.last_request_pos, want.ttime_total, want.seek_total));
    assert_eq!(b.dispatch(), c);
    // Anticipation now concerns Q, the process of the last sync dispatch.
    assert_eq!(b.s.anticipated(), Some(Q));
    let _ = far;
}

#[test]
fn rule_5_the_anticipated_process_exited_and_exits_rarely_meet_cooperation() {
    // The rules are looked at when a request arrives (while waiting, a dispatch just waits).
    let mut b = Bench::new("las", &[]);
    b.anticipating_on_p();
    b.exit(P);
    // exit_no_coop <= 128: still waiting (P has a short think time).
    b.s.est.exit_no_coop = 128;
    b.now += MS;
    b.read(Q, 60_000_000);
    assert!(matches!(b.next(), Decision::WaitUntil(_)));
    assert_eq!(b.s.breaks(Break::Exited), 0);
    b.s.est.exit_no_coop = 129;
    b.read(Q, 70_000_000);
    assert_eq!(b.s.breaks(Break::Exited), 1);
    assert_eq!(b.dispatch().principal.pid, Q);
}

#[test]
fn rule_4_comes_before_rule_5() {
    let mut b = Bench::new("las", &[]);
    let (_, last) = b.anticipating_on_p();
    b.exit(P);
    b.s.est.exit_no_coop = 200;
    let c = b.read(Q, last);
    assert_eq!((b.s.breaks(Break::Close), b.s.breaks(Break::Exited)), (1, 0));
    // A cooperating request "saved" the exited process: exit_no_coop decays by 7/8.
    assert_eq!(b.s.est.exit_no_coop, 175);
    assert_eq!(b.dispatch(), c);
}

/// P with a single request (no think-time sample yet), completed at 1 ms; Q's far read is
/// queued. Returns the bench and Q's request.
fn new_process_anticipated() -> (Bench, Request) {
    let mut b = Bench::new("las", &[]);
    let r = b.read(P, 1000);
    assert_eq!(b.dispatch(), r);
    let far = b.read(Q, 500_000);
    b.now = MS;
    b.complete(r);
    (b, far)
}

#[test]
fn rule_6_a_process_without_history() {
    // With default estimates LAS waits on a new process.
    let (mut b, far) = new_process_anticipated();
    assert_eq!(b.next(), Decision::WaitUntil(7 * MS));
    // New processes think longer than antic_expire: no wait.
    let (mut b, _) = new_process_anticipated();
    b.s.est.new_ttime_mean = 7;
    assert_eq!(b.dispatch(), far);
    assert_eq!(b.s.breaks(Break::NewProcess), 1);
    // They tend to exit without a cooperator: exit_prob * exit_no_coop > 128 * 256.
    let (mut b, _) = new_process_anticipated();
    b.s.est.exit_prob = 200;
    b.s.est.exit_no_coop = 164; // 32800 > 32768
    assert_eq!(b.dispatch(), far);
    let (mut b, _) = new_process_anticipated();
    b.s.est.exit_prob = 200;
    b.s.est.exit_no_coop = 163; // 32600
    assert!(matches!(b.next(), Decision::WaitUntil(_)));
}

#[test]
fn rule_7_a_process_that_thinks_longer_than_antic_expire() {
    for (think, waits) in [(6, true), (9, false)] {
        let mut b = Bench::new("las", &[]);
        let end = b.history(P, 1000, 12, think);
        b.now += think * MS;
        let r = b.read(P, end);
        assert_eq!(b.dispatch(), r);
        let far = b.read(Q, 500_000);
        b.now += MS;
        b.complete(r);
        let mean = b.s.aic(P).unwrap().ttime_mean;
        if waits {
            assert!(mean <= 6, "{mean}");
            assert!(matches!(b.next(), Decision::WaitUntil(_)));
        } else {
            assert!(mean > 6, "{mean}");
            assert_eq!(b.dispatch(), far);
            assert_eq!(b.s.breaks(Break::ThinkTime), 1);
        }
    }
}

#[test]
fn no_rule_holds_the_wait_lasts_antic_expire_then_the_timer_fires() {
    let mut b = Bench::new("las", &[]);
    let (far, _) = b.anticipating_on_p();
    let timer = b.now + 6 * MS;
    b.now = timer - 1;
    assert_eq!(b.next(), Decision::WaitUntil(timer));
    b.now = timer;
    assert_eq!(b.dispatch(), far);
    let c: BTreeMap<_, _> = b.s.counters().into_iter().collect();
    assert_eq!((c["antic_waits"], c["antic_timeouts"]), (1, 1));
    // P has history and is alive: the timeout moves neither probability.
    assert_eq!((b.s.est.exit_prob, b.s.est.exit_no_coop), (0, 0));
}

#[test]
fn a_timeout_on_an_exited_process_raises_exit_no_coop() {
    let mut b = Bench::new("las", &[]);
    b.anticipating_on_p();
    b.exit(P);
    b.now += 6 * MS;
    b.next();
    assert_eq!(b.s.est.exit_no_coop, 32);
    // A timeout on a process without samples raises exit_prob.
    let (mut b, _) = new_process_anticipated();
    assert_eq!(b.next(), Decision::WaitUntil(7 * MS));
    b.now = 7 * MS;
    b.next();
    assert_eq!(b.s.est.exit_prob, 32);
}

#[test]
fn antic_expire_zero_never_waits() {
    let mut b = Bench::new("las", &[("antic_expire", 0.0)]);
    let r = b.read(P, 1000);
    assert_eq!(b.dispatch(), r);
    let far = b.read(Q, 500_000);
    assert_eq!(b.dispatch(), far);
}

// ---- Writes and batches ----

#[test]
fn a_read_after_a_write_gets_no_anticipation() {
    // After P's read: a far read of Q waits. After P's write: it goes at once.
    for (first_is_write, waits) in [(false, true), (true, false)] {
        let mut b = Bench::new("las", &[]);
        let first = if first_is_write { b.write(P, 1000) } else { b.read(P, 1000) };
        assert_eq!(b.dispatch(), first);
        b.now = MS;
        b.complete(first);
        let far = b.read(Q, 500_000);
        if waits {
            assert!(matches!(b.next(), Decision::WaitUntil(_)));
        } else {
            assert_eq!(b.s.anticipated(), None);
            assert_eq!(b.dispatch(), far);
        }
    }
}

#[test]
fn choose_req_charges_backward_seeks_twice_within_maxback() {
    let mut b = Bench::new("las", &[]);
    b.s.last_sector[SYNC] = 10_000_000;
    let k = |s: u64| Some((s, s));
    // 100 behind costs 200 > 150 ahead.
    assert_eq!(b.s.choose_req(SYNC, k(10_000_000 - 100), k(10_000_150)), k(10_000_150));
    assert_eq!(b.s.choose_req(SYNC, k(10_000_000 - 100), k(10_000_250)), k(9_999_900));
    // A tie goes to the higher sector.
    assert_eq!(b.s.choose_req(SYNC, k(10_000_000 - 100), k(10_000_200)), k(10_000_200));
    // Beyond MAXBACK behind is a wrap: anything ahead wins, however far.
    assert_eq!(b.s.choose_req(SYNC, k(10_000_000 - MAXBACK - 1), k(90_000_000)), k(90_000_000));
    assert_eq!(b.s.choose_req(SYNC, k(10_000_000 - MAXBACK), k(90_000_000)), k(10_000_000 - MAXBACK));
    // Both wrapped: the lower.
    assert_eq!(b.s.choose_req(SYNC, k(5), k(3)), k(3));
    // End to end: head at 10,000,008 after a read there; queued 9,999,900 (back 108 -> 216)
    // and 10,000,200 (192 ahead): the forward one first.
    let r = b.read(P, 10_000_000);
    assert_eq!(b.dispatch(), r);
    b.complete(r);
    let back = b.read(P, 9_999_900);
    let ahead = b.read(P, 10_000_200);
    assert_eq!(b.dispatch(), ahead);
    assert_eq!(b.dispatch(), back);
}

#[test]
fn write_batch_count_tunes_itself_toward_write_batch_expire() {
    let b = Bench::new("las", &[]);
    assert_eq!(b.s.write_batch_count(), 12, "125 / 10");
    let batch = 125 * MS;
    // A write batch started (current_batch_expires = start + 125 ms) and lasted `took`.
    let run = |count: u64, took: Nanos, used_up: bool, idled: bool| {
        let mut b = Bench::new("las", &[]);
        b.s.write_batch_count = count;
        b.s.current_batch_expires = 1000 * MS + batch;
        b.now = 1000 * MS + took;
        b.s.current_write_count = if used_up { 0 } else { 3 };
        b.s.write_batch_idled = idled;
        b.s.update_write_batch(b.now);
        b.s.write_batch_count
    };
    assert_eq!(run(12, 400 * MS, false, false), 6, "over 3x the target: halved");
    assert_eq!(run(12, 200 * MS, false, false), 11, "over: one less");
    assert_eq!(run(12, 200 * MS, false, true), 12, "an idle batch cannot be timed");
    assert_eq!(run(12, 100 * MS, true, false), 13, "under, count used up: one more");
    assert_eq!(run(12, 40 * MS, true, false), 24, "under a third: doubled");
    assert_eq!(run(12, 40 * MS, false, false), 12, "under, count not used up: unchanged");
    assert_eq!(run(1, 400 * MS, false, false), 1, "at least 1");
}

#[test]
fn write_batches_end_after_write_batch_count_and_tune_at_the_next_read_batch() {
    // write_batch_expire 20 ms -> write_batch_count 2. Reads and writes queued; writes are
    // async. Each request takes 1 ms.
    let mut b = Bench::new("las", &[("write_batch_expire", 20.0), ("antic_expire", 0.0)]);
    assert_eq!(b.s.write_batch_count(), 2);
    for i in 0..6 {
        b.write(Q, 100_000 + 8 * i);
    }
    let r0 = b.read(P, 1000);
    let r1 = b.read(P, 1008);
    // Read batch first (the batch direction starts as sync), then its time runs out only at
    // 500 ms: both reads go, then writes.
    let mut order = vec![];
    let mut added = false;
    for _ in 0..8 {
        let r = b.dispatch();
        order.push(r.op);
        if r.op == Op::Write && !added {
            // A new read arrives while the write batch runs.
            b.read(P, 2000);
            added = true;
        }
        b.now += MS;
        b.complete(r);
    }
    let _ = (r0, r1);
    // reads r0 r1, then a write batch of 2 writes, then (a read is waiting) the read batch,
    // then writes again.
    use Op::{Read as R, Write as W};
    assert_eq!(order, vec![R, R, W, W, R, W, W, W]);
    // The write batch took 2 ms of its 20: under a third with its count used up: doubled
    // when the read batch's first request completed.
    assert_eq!(b.s.write_batch_count(), 4);
}

#[test]
fn a_batch_switch_waits_for_the_dispatched_requests_to_drain() {
    let mut b = Bench::new("las", &[("antic_expire", 0.0)]);
    let r = b.read(P, 1000);
    let w = b.write(Q, 90_000);
    assert_eq!(b.dispatch(), r);
    // The read is at the drive; no more reads: the write batch must wait for it.
    assert_eq!(b.next(), Decision::Empty);
    assert!(b.s.changed_batch);
    b.now = MS;
    b.complete(r);
    assert_eq!(b.dispatch(), w);
}

#[test]
fn an_expired_read_is_served_before_the_batch_order() {
    // Reads keep coming near the head; a far read F waits past read_expire (125 ms). The FIFO
    // is looked at once per read_expire: F goes at the first check after its deadline.
    let mut b = Bench::new("las", &[("antic_expire", 0.0)]);
    let mut sector = 1000;
    let f = b.read(Q, 900_000);
    let mut served_f_at = None;
    for t in 0..400u64 {
        b.now = t * MS;
        b.read(P, sector);
        sector += 8;
        let r = b.dispatch();
        b.now += MS / 2;
        b.complete(r);
        if r == f {
            served_f_at = Some(t);
            break;
        }
    }
    // Deadline 125 ms (strictly after: 126); checks at 125 (last_check_fifo 0 + 125) -> not
    // yet expired, then next check at 250.
    assert_eq!(served_f_at, Some(250));
}

#[test]
fn registry_builds_las_and_cas_with_linux_tunable_names() {
    use crate::sched::registry::{build, info};
    let t = |pairs: &[(&str, f64)]| -> BTreeMap<String, f64> { pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect() };
    let names: Vec<_> = info("las").unwrap().tunables.iter().map(|t| t.name).collect();
    assert_eq!(names, ["read_expire", "write_expire", "read_batch_expire", "write_batch_expire", "antic_expire"]);
    assert_eq!(info("as-2.6").unwrap().name, "las");
    assert_eq!(info("cas").unwrap().tunables.last().unwrap().name, "antic_consume_limit");
    assert_eq!(build("las", None, &t(&[("antic_expire", 10.0)])).unwrap().name(), "las");
    assert_eq!(build("cas", None, &t(&[("antic_consume_limit", 50.0)])).unwrap().name(), "cas");
    assert!(build("las", None, &t(&[("antic_consume_limit", 50.0)])).is_err(), "CAS's tunable only");
    assert!(build("las", None, &t(&[("fifo_batch", 16.0)])).err().unwrap().contains("unknown tunable"));
    assert!(build("las", None, &t(&[("antic_expire", 1.5)])).is_err());
    assert!(!build("las", None, &BTreeMap::new()).unwrap().is_work_conserving());
    // A scenario names them too.
    let text = "[device]\npreset = \"fujitsu-m2361a\"\n[workload]\nkind = \"closed-queue\"\nqueue_depth = 4\nrequest_kib = 4\nrequests = 50\n[[scheduler]]\nname = \"las\"\nantic_expire = 3\nread_expire = 100\n[[scheduler]]\nname = \"cas\"\nantic_consume_limit = 40\n";
    let runs = crate::scenario::Scenario::parse(text, "t.toml").unwrap().run(None).unwrap();
    assert!(runs.iter().all(|r| r.summary.requests == 50));
}

#[test]
fn end_to_end_chains_and_a_writer_at_drive_depth_1_and_32() {
    // Two find -exec cat chains (a process per file, exits), a random reader and an async
    // direct-I/O writer, through the block layer: every request completes once, no idling
    // without a WaitUntil, for both schedulers at both drive depths.
    for depth in [1, 32] {
        let text = format!(
            r#"
[device]
preset = "wd-ultrastar-hc310"
queue_depth = {depth}
[block]
[[process]]
name = "chainA"
count = 40
chain = true
pattern = "sequential"
request_kib = 16
requests = 8
file_mib = 1
think_us = 200
file_offset_mib = 1000
[[process]]
name = "chainB"
count = 40
chain = true
pattern = "sequential"
request_kib = 16
requests = 8
file_mib = 1
think_us = 200
file_offset_mib = 9000
[[process]]
name = "rand"
pattern = "random"
request_kib = 8
think = "exponential"
think_us = 3000
file_mib = 4000
file_offset_mib = 12000
[[process]]
name = "writer"
op = "write"
access = "direct"
sync = false
iodepth = 4
pattern = "sequential"
request_kib = 256
file_mib = 4000
file_offset_mib = 20000
[run]
duration_s = 3
[[scheduler]]
name = "las"
[[scheduler]]
name = "cas"
"#
        );
        let runs = crate::scenario::Scenario::parse(&text, "t.toml").unwrap().run(Some(2)).unwrap();
        for r in runs {
            let s = &r.summary;
            assert_eq!(s.invariants, Default::default(), "{} depth {depth}: {:?}", s.scheduler, s.invariants);
            let ids: std::collections::HashSet<u64> = r.records.iter().map(|x| x.id).collect();
            assert_eq!(ids.len(), r.records.len(), "{}: a request completed twice", s.scheduler);
            let c: BTreeMap<_, _> = s.scheduler_counters.iter().map(|(k, v)| (k.as_str(), *v)).collect();
            assert!(c["antic_waits"] > 0 && c["write_batches"] > 0, "{} depth {depth}: {c:?}", s.scheduler);
        }
    }
}

// ---- Linux 2.6.9's rules (las-2.6.9) ----

#[test]
fn close_window_of_2_6_9_is_64_sectors_doubling_from_the_second_ms() {
    let mut b = Bench::new("las-2.6.9", &[]);
    let (_, last) = b.anticipating_on_p();
    let aic = b.s.aic(P).unwrap().clone();
    let start = b.now;
    for w in 0..=6u64 {
        let delta = if w <= 1 { 64 } else { 64u64 << (w - 1) };
        b.now = start + w * MS;
        assert!(b.s.close_req(&aic, &rd(99, Q, last + delta), b.now), "waited {w} ms: {delta} ahead is close");
        assert!(!b.s.close_req(&aic, &rd(99, Q, last + delta + 1), b.now), "waited {w} ms");
        assert!(b.s.close_req(&aic, &rd(99, Q, last - delta / 2), b.now));
        assert!(!b.s.close_req(&aic, &rd(99, Q, last - delta / 2 - 1), b.now));
    }
    b.now = start + 7 * MS;
    assert!(b.s.close_req(&aic, &rd(99, Q, 90_000_000), b.now), "past antic_expire every request is close");
    // The mean seek distance is not part of 2.6.9's close test.
    let mut seeky = aic.clone();
    seeky.seek_mean = 20_000;
    assert!(!b.s.close_req(&seeky, &rd(99, Q, last + 19_999), start));
}

#[test]
fn in_2_6_9_a_close_read_only_restarts_the_think_time_clock() {
    let mut b = Bench::new("las-2.6.9", &[]);
    let (_, last) = b.anticipating_on_p();
    b.now += MS;
    let before = b.s.aic(P).unwrap().clone();
    let c = b.read(Q, last + 10);
    assert_eq!(b.s.breaks(Break::Close), 1);
    let after = b.s.aic(P).unwrap();
    assert_eq!(
        (after.ttime_total, after.seek_total, after.last_request_pos),
        (before.ttime_total, before.seek_total, before.last_request_pos)
    );
    assert_eq!(after.last_end_request_ns, b.now);
    assert_eq!(b.dispatch(), c);
}

#[test]
fn in_2_6_9_an_exited_process_ends_the_wait_at_once() {
    let mut b = Bench::new("las-2.6.9", &[]);
    b.anticipating_on_p();
    b.exit(P);
    b.now += MS;
    b.read(Q, 60_000_000);
    assert_eq!(b.s.breaks(Break::Exited), 1);
    assert_eq!(b.dispatch().principal.pid, Q);
    assert_eq!(b.s.est.exit_no_coop, 0, "2.6.9 has no exit_no_coop");
}

#[test]
fn in_2_6_9_a_far_read_of_a_new_process_keeps_waiting_until_the_timer() {
    // 200,000 sectors ahead after 5 ms: within 2.6.32's window (8192 << 5), far outside
    // 2.6.9's (64 << 4).
    let mut b = Bench::new("las-2.6.9", &[]);
    let (_, last) = b.anticipating_on_p();
    b.now += 5 * MS;
    b.read(Q, last + 200_000);
    assert_eq!(b.s.breaks(Break::Close), 0);
    assert!(matches!(b.next(), Decision::WaitUntil(_)));
    let mut l = Bench::new("las", &[]);
    let (_, last) = l.anticipating_on_p();
    l.now += 5 * MS;
    l.read(Q, last + 200_000);
    assert_eq!(l.s.breaks(Break::Close), 1);
}

#[test]
fn in_2_6_9_the_seek_rule_comes_last_and_uses_the_process_mean() {
    let mut b = Bench::new("las-2.6.9", &[]);
    let (_, last) = b.anticipating_on_p();
    b.s.procs.get_mut(P).unwrap().seek_mean = 5_000;
    b.now += MS;
    // Not close (64 sectors), but nearer than P's mean seek of 5,000 sectors.
    let r = b.read(Q, last + 4_000);
    assert_eq!((b.s.breaks(Break::Close), b.s.breaks(Break::SeekDistance)), (0, 1));
    assert_eq!(b.dispatch(), r);
}

#[test]
fn in_2_6_9_a_new_process_is_not_waited_on_once_exits_are_likely() {
    for (exit_prob, waits) in [(128, true), (129, false)] {
        let mut b = Bench::new("las-2.6.9", &[]);
        let r = b.read(P, 1000);
        assert_eq!(b.dispatch(), r);
        let far = b.read(Q, 500_000);
        b.now = MS;
        b.complete(r);
        // exit_prob alone decides (2.6.32 multiplies it by exit_no_coop).
        b.s.est.exit_prob = exit_prob;
        if waits {
            assert!(matches!(b.next(), Decision::WaitUntil(_)));
        } else {
            assert_eq!(b.dispatch(), far);
            assert_eq!(b.s.breaks(Break::NewProcess), 1);
        }
    }
}
