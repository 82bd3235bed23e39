//! The combination heuristic (section 3.5) for a proportional-share policy relaxed by tau:
//! the larger of the seek rule's wait ([`cost_benefit_wait_ns`]) and the proportional rule's
//! wait with condition (c) against minclock + tau; and no wait at all if the last process's
//! clock already exceeds minclock + tau (its next request would not be eligible, so waiting
//! for it is pointless).

use super::proportional::proportional_wait_ns;
use super::seek::cost_benefit_wait_ns;
use super::{Heuristic, Situation};
use crate::sched::share::ProportionalShare;
use crate::time::Nanos;

#[derive(Default)]
pub struct CombinedHeuristic;

impl<P: ProportionalShare> Heuristic<P> for CombinedHeuristic {
    fn name(&self) -> &'static str {
        "combined"
    }

    fn wait_ns(&mut self, policy: &P, s: &Situation) -> Nanos {
        let tau = policy.tau();
        if let (Some(clock), Some(minclock)) = (policy.virtual_clock(s.last_pid), policy.min_backlogged_clock()) {
            if clock > minclock + tau {
                return 0;
            }
        }
        cost_benefit_wait_ns(s).max(proportional_wait_ns(policy, s, tau))
    }
}
