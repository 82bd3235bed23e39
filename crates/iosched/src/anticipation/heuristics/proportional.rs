//! The proportional-share heuristic (section 3.4): wait for the last process if
//! (a) it has no pending request when its request completes,
//! (b) its expected think time is below 3 ms, and
//! (c) its virtual clock is below minclock, the least clock of the processes with queued
//!     requests (so its next request, had it been there, would have been served first);
//! for its 95th-percentile think time minus the time already elapsed.
//!
//! The expected think time is the median of the decayed think-time table, read as the upper edge
//! of the median's 500 us bucket: (b) holds when that edge is at most 3 ms, i.e. the table puts
//! the median below 3 ms at its resolution.

use super::{Heuristic, Situation};
use crate::sched::share::ProportionalShare;
use crate::time::{Nanos, NS_PER_MS};

/// Condition (b): "an expected thinktime smaller than 3ms" ("chosen somewhat arbitrarily").
pub const THINK_THRESHOLD_NS: Nanos = 3 * NS_PER_MS;

/// The rule with condition (c) against `minclock + slack` (slack = 0 here, tau in the combined
/// heuristic of section 3.5).
pub fn proportional_wait_ns<P: ProportionalShare>(policy: &P, s: &Situation, slack: f64) -> Nanos {
    if policy.has_pending(s.last_pid) {
        return 0; // (a)
    }
    let (Some(median), Some(p95)) = (s.last.think.median_ns(), s.last.think.p95_ns()) else {
        return 0; // no history, or a thinker beyond the 15 ms table
    };
    if median > THINK_THRESHOLD_NS {
        return 0; // (b)
    }
    let (Some(clock), Some(minclock)) = (policy.virtual_clock(s.last_pid), policy.min_backlogged_clock()) else {
        return 0;
    };
    if clock >= minclock + slack {
        return 0; // (c)
    }
    p95.saturating_sub(s.elapsed_ns)
}

/// For Stride, YFQ and Lottery in their strict form (tau = 0).
#[derive(Default)]
pub struct ProportionalHeuristic;

impl<P: ProportionalShare> Heuristic<P> for ProportionalHeuristic {
    fn name(&self) -> &'static str {
        "proportional"
    }

    fn wait_ns(&mut self, policy: &P, s: &Situation) -> Nanos {
        proportional_wait_ns(policy, s, 0.0)
    }
}
