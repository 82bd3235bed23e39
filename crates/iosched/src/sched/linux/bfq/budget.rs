//! BFQ's budget feedback (paper 3.3 and 4.3; Linux `__bfq_bfqq_recalc_budget`) and its peak-rate
//! estimators (paper 3.3 and 4.2; Linux `bfq_update_peak_rate`), as pure functions and a small
//! state struct, so each rule can be tested on hand-built cases.

use super::rules::{Rules, Variant, ORIGINAL_BUDGET_STEP};
use crate::time::{Nanos, NS_PER_MS};

/// Why the in-service queue stopped being served (Linux `enum bfqq_expiration`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The idle timer fired: no new request in slice_idle.
    TooIdle,
    /// The budget was not used up within the timeout.
    BudgetTimeout,
    /// The next request does not fit in what is left of the budget.
    BudgetExhausted,
    /// Emptied and not worth idling for.
    NoMoreRequests,
    /// Another queue took over (Linux 6.x only).
    Preempted,
}

/// What the feedback needs to know about the expiring queue.
#[derive(Clone, Copy, Debug)]
pub struct Expiring {
    pub sync: bool,
    pub raised: bool,
    /// The budget it was assigned (Linux bfqq->max_budget).
    pub budget: u64,
    /// Sectors it was charged in this service slot.
    pub service: u64,
    /// Its requests still at the drive.
    pub dispatched: u32,
}

/// The next budget (before the cap at B_max), or None to leave it unchanged.
///
/// - bfq-original (paper 3.3, "the original rules"; the 2008 code for the increment): no more
///   backlog (the idle timer fired) -> the service it consumed; budget timeout -> B_max;
///   exhausted -> + a fixed step (8 x BFQ_BUDGET_STEP = 1024 sectors).
/// - H-throughput (paper 4.3; also Linux): too idle with requests in flight -> x2, with none ->
///   - B_max/8 (4 x min budget; min budget = B_max/32); timeout -> x2; exhausted -> x4.
/// - Linux 6.x adds: no more requests -> the service received (at least the min budget);
///   weight-raised queues get 2 x min budget.
/// Async queues always get B_max.
pub fn next_budget(rules: &Rules, reason: Reason, q: Expiring, min: u64, max: u64) -> Option<u64> {
    if !q.sync {
        return Some(max);
    }
    let b = q.budget;
    if rules.variant == Variant::Linux && q.raised {
        return Some(2 * min);
    }
    if rules.h_throughput {
        return match reason {
            Reason::TooIdle => Some(if q.dispatched > 0 {
                b.saturating_mul(2).min(max)
            } else if b > 5 * min {
                b - 4 * min
            } else {
                min
            }),
            Reason::BudgetTimeout => Some(b.saturating_mul(2).min(max)),
            Reason::BudgetExhausted => Some(b.saturating_mul(4).min(max)),
            Reason::NoMoreRequests if rules.variant == Variant::Linux => Some(q.service.max(min)),
            Reason::NoMoreRequests | Reason::Preempted => None,
        };
    }
    match reason {
        Reason::TooIdle => Some(q.service.max(min)),
        Reason::BudgetTimeout => Some(max),
        Reason::BudgetExhausted => Some(b.saturating_add(8 * ORIGINAL_BUDGET_STEP).min(max)),
        Reason::NoMoreRequests | Reason::Preempted => None,
    }
}

/// `BFQ_RATE_SHIFT`: rates are sectors per microsecond in 16-bit fixed point.
pub const RATE_SHIFT: u32 = 16;
/// `BFQ_PEAK_RATE_SAMPLES`: slot measurements before B_max is computed (old estimator).
pub const PEAK_RATE_SAMPLES: u32 = 32;
/// Linux 6.x: `BFQ_RATE_MIN_SAMPLES`, `BFQ_RATE_MIN_INTERVAL`, `BFQ_RATE_REF_INTERVAL`.
const RATE_MIN_SAMPLES: u32 = 32;
const RATE_MIN_INTERVAL_NS: Nanos = 300 * NS_PER_MS;
const RATE_REF_INTERVAL_NS: Nanos = 1000 * NS_PER_MS;

/// Sectors per µs << 16 of `sectors` over `ns`.
pub fn rate_of(sectors: u64, ns: Nanos) -> u64 {
    let us = (ns / 1000).max(1) as u128;
    (((sectors as u128) << RATE_SHIFT) / us).min(u64::MAX as u128) as u64
}

/// B_max = peak rate x T_max, sectors (paper 3.3; Linux `bfq_calc_max_budget`).
pub fn max_budget_of(rate: u64, timeout_ns: Nanos) -> u64 {
    let timeout_us = (timeout_ns / 1000) as u128;
    ((rate as u128 * timeout_us) >> RATE_SHIFT).min(u64::MAX as u128) as u64
}

/// Sectors per second of a fixed-point rate.
pub fn sectors_per_s(rate: u64) -> u64 {
    ((rate as u128 * 1_000_000) >> RATE_SHIFT) as u64
}

#[derive(Clone, Debug, Default)]
pub struct PeakRate {
    /// The estimate, sectors/µs << 16.
    pub rate: u64,
    /// Old estimator: slots measured (up to 32).
    pub samples: u32,
    // Linux 6.x observation interval.
    first_dispatch_ns: Nanos,
    last_dispatch_ns: Nanos,
    pub last_completion_ns: Nanos,
    interval_samples: u32,
    sequential_samples: u32,
    tot_sectors: u64,
    delta_from_first_ns: Nanos,
}

impl PeakRate {
    /// The estimator of the paper's section 3.3 (`lowpass` false: R_est = max(R_est, R_meas))
    /// or 4.2 (`lowpass` true: a 7/8 low-pass filter, also fed when a sequential queue timed
    /// out), run at the end of a service slot of at least 20 ms. Returns true when B_max should
    /// be recomputed (32 samples taken and the estimate moved).
    pub fn slot_sample(&mut self, service: u64, slot_ns: Nanos, seeky: bool, timed_out: bool, lowpass: bool) -> bool {
        if slot_ns <= 20 * NS_PER_MS {
            return false;
        }
        let bw = rate_of(service, slot_ns);
        let mut update = false;
        if lowpass {
            if bw > self.rate || (!seeky && timed_out) {
                self.rate = self.rate / 8 * 7 + self.rate % 8 * 7 / 8 + bw / 8;
                update = true;
            }
        } else if bw > self.rate {
            self.rate = bw;
            update = true;
        }
        update |= self.samples == PEAK_RATE_SAMPLES - 1;
        if self.samples < PEAK_RATE_SAMPLES {
            self.samples += 1;
        }
        self.samples == PEAK_RATE_SAMPLES && update
    }

    /// Linux 6.x `bfq_update_peak_rate`, at each dispatch: rates measured over observation
    /// intervals of up to 1 s, folded in by a low-pass filter whose weight grows with the share
    /// of sequential dispatches and the interval's length. Returns true when the estimate moved.
    pub fn dispatch_sample(&mut self, now: Nanos, sectors: u64, seeky_rq: bool, rq_in_driver: u32) -> bool {
        if self.interval_samples == 0 {
            self.reset(now, sectors);
            self.last_dispatch_ns = now;
            return false;
        }
        let mut moved = false;
        if now.saturating_sub(self.last_dispatch_ns) > 100 * NS_PER_MS && rq_in_driver == 0 {
            moved = self.close_interval(now, sectors);
        } else {
            self.interval_samples += 1;
            if (rq_in_driver > 0 || now.saturating_sub(self.last_completion_ns) < super::rules::MIN_TT_NS) && !seeky_rq {
                self.sequential_samples += 1;
            }
            self.tot_sectors = self.tot_sectors.saturating_add(sectors);
            self.delta_from_first_ns = now.saturating_sub(self.first_dispatch_ns);
            if self.delta_from_first_ns >= RATE_REF_INTERVAL_NS {
                moved = self.close_interval(now, sectors);
            }
        }
        self.last_dispatch_ns = now;
        moved
    }

    fn reset(&mut self, now: Nanos, sectors: u64) {
        self.first_dispatch_ns = now;
        self.interval_samples = 1;
        self.sequential_samples = 0;
        self.tot_sectors = sectors;
        self.delta_from_first_ns = 0;
    }

    /// Linux `bfq_update_rate_reset`.
    fn close_interval(&mut self, now: Nanos, sectors: u64) -> bool {
        let mut moved = false;
        if self.interval_samples >= RATE_MIN_SAMPLES && self.delta_from_first_ns >= RATE_MIN_INTERVAL_NS {
            let delta = self.delta_from_first_ns.max(self.last_completion_ns.saturating_sub(self.first_dispatch_ns));
            let rate = rate_of(self.tot_sectors, delta);
            let sequential_enough = self.sequential_samples >= (3 * self.interval_samples) >> 2;
            // Not when mostly random and not faster, nor absurd (> 20 M sectors/s).
            if (sequential_enough || rate > self.rate) && rate <= 20 << RATE_SHIFT {
                let weight = (9 * self.sequential_samples) / self.interval_samples;
                let weight = ((weight as u64 * delta) / RATE_REF_INTERVAL_NS).min(8);
                let divisor = 10 - weight;
                self.rate = self.rate / divisor * (divisor - 1) + self.rate % divisor * (divisor - 1) / divisor + rate / divisor;
                self.rate = self.rate.max(1);
                moved = true;
            }
        }
        self.reset(now, sectors);
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::linux::bfq::rules::{Rules, Variant, LINUX_TUNABLES, ORIGINAL_TUNABLES, PLUS_TUNABLES};
    use crate::sched::tunables::TunableValues;
    use std::collections::BTreeMap;

    fn rules(v: Variant) -> Rules {
        let t = match v {
            Variant::Original => ORIGINAL_TUNABLES,
            Variant::Plus => PLUS_TUNABLES,
            Variant::Linux => LINUX_TUNABLES,
        };
        Rules::from_tunables(v, &TunableValues::resolve(t, &BTreeMap::new()).unwrap())
    }

    fn q(budget: u64, service: u64, dispatched: u32) -> Expiring {
        Expiring { sync: true, raised: false, budget, service, dispatched }
    }

    const MAX: u64 = 32768;
    const MIN: u64 = MAX / 32;

    #[test]
    fn original_rules() {
        let r = rules(Variant::Original);
        assert_eq!(next_budget(&r, Reason::TooIdle, q(8000, 300, 0), MIN, MAX), Some(MIN.max(300)));
        assert_eq!(next_budget(&r, Reason::TooIdle, q(8000, 5000, 0), MIN, MAX), Some(5000));
        assert_eq!(next_budget(&r, Reason::BudgetTimeout, q(2000, 100, 0), MIN, MAX), Some(MAX));
        assert_eq!(next_budget(&r, Reason::BudgetExhausted, q(2000, 2000, 1), MIN, MAX), Some(3024));
        assert_eq!(next_budget(&r, Reason::BudgetExhausted, q(32000, 32000, 1), MIN, MAX), Some(MAX));
        assert_eq!(next_budget(&r, Reason::NoMoreRequests, q(2000, 10, 0), MIN, MAX), None);
    }

    #[test]
    fn plus_multiplicative_increase_linear_decrease() {
        let r = rules(Variant::Plus);
        assert_eq!(next_budget(&r, Reason::BudgetExhausted, q(2000, 2000, 1), MIN, MAX), Some(8000));
        assert_eq!(next_budget(&r, Reason::BudgetTimeout, q(2000, 100, 0), MIN, MAX), Some(4000));
        assert_eq!(next_budget(&r, Reason::TooIdle, q(2000, 100, 2), MIN, MAX), Some(4000));
        // Linear decrease by B_max/8 = 4 x min, never below min.
        assert_eq!(next_budget(&r, Reason::TooIdle, q(20000, 100, 0), MIN, MAX), Some(20000 - 4 * MIN));
        assert_eq!(next_budget(&r, Reason::TooIdle, q(4000, 100, 0), MIN, MAX), Some(MIN));
        assert_eq!(next_budget(&r, Reason::NoMoreRequests, q(4000, 100, 0), MIN, MAX), None);
        let async_q = Expiring { sync: false, ..q(10, 10, 0) };
        assert_eq!(next_budget(&r, Reason::TooIdle, async_q, MIN, MAX), Some(MAX));
    }

    #[test]
    fn linux_no_more_requests_and_raised() {
        let r = rules(Variant::Linux);
        assert_eq!(next_budget(&r, Reason::NoMoreRequests, q(4000, 100, 0), MIN, MAX), Some(MIN));
        assert_eq!(next_budget(&r, Reason::NoMoreRequests, q(4000, 3000, 0), MIN, MAX), Some(3000));
        let raised = Expiring { raised: true, ..q(9000, 9000, 0) };
        assert_eq!(next_budget(&r, Reason::BudgetExhausted, raised, MIN, MAX), Some(2 * MIN));
    }

    #[test]
    fn original_estimator_keeps_the_maximum_and_lowpass_follows() {
        let mut max = PeakRate::default();
        let mut lp = PeakRate::default();
        // 10 ms slots are ignored.
        assert!(!max.slot_sample(1000, 10 * NS_PER_MS, false, false, false));
        assert_eq!(max.rate, 0);
        // A cache-hit spike: 20,000 sectors in 25 ms.
        max.slot_sample(20_000, 25 * NS_PER_MS, false, false, false);
        let spike = max.rate;
        for _ in 0..40 {
            max.slot_sample(10_000, 100 * NS_PER_MS, false, true, false);
            lp.slot_sample(10_000, 100 * NS_PER_MS, false, true, true);
        }
        assert_eq!(max.rate, spike, "the max estimator never comes down");
        let true_rate = rate_of(10_000, 100 * NS_PER_MS);
        assert!(lp.rate <= true_rate && lp.rate * 100 >= true_rate * 95, "low-pass {} vs {}", lp.rate, true_rate);
        // And comes down after a spike when sequential queues time out.
        lp.slot_sample(20_000, 25 * NS_PER_MS, false, false, true);
        let after_spike = lp.rate;
        for _ in 0..40 {
            lp.slot_sample(10_000, 100 * NS_PER_MS, false, true, true);
        }
        assert!(lp.rate < after_spike);
        let b = max_budget_of(rate_of(10_000, 100 * NS_PER_MS), 125 * NS_PER_MS);
        assert!((12_490..=12_500).contains(&b), "{b}");
    }

    #[test]
    fn linux_estimator_needs_samples_and_time() {
        let mut p = PeakRate { rate: 1, ..PeakRate::default() };
        // 64 KiB requests back to back, one every 1.5 ms (85 MB/s-ish), for 2 s.
        let mut now = 0;
        let mut moved = 0;
        while now < 2_000 * NS_PER_MS {
            p.last_completion_ns = now;
            if p.dispatch_sample(now, 128, false, 1) {
                moved += 1;
            }
            now += 1_500_000;
        }
        assert!(moved >= 1);
        let expected = rate_of(128, 1_500_000);
        assert!(p.rate > expected / 2, "{} vs {}", p.rate, expected);
    }
}
