//! The C-SCAN (C-LOOK) heuristic (section 3.3): the seek rule, except that if the candidate
//! lies ahead of the head and the last process's next request is more than 80% likely to lie
//! behind it (which C-SCAN would not serve until the next sweep), do not wait.

use super::seek::cost_benefit_wait_ns;
use super::{Heuristic, Situation};
use crate::sched::Policy;
use crate::time::Nanos;

/// Probability of a backward seek above which waiting is pointless.
pub const BACKWARD_THRESHOLD: f64 = 0.8;

#[derive(Default)]
pub struct CscanHeuristic;

impl<P: Policy> Heuristic<P> for CscanHeuristic {
    fn name(&self) -> &'static str {
        "cscan"
    }

    fn wait_ns(&mut self, _policy: &P, s: &Situation) -> Nanos {
        let forward = s.candidate.start_sector >= s.cx.device.head_sector();
        let backward_likely = s.last.backward.get().is_some_and(|p| p > BACKWARD_THRESHOLD);
        if forward && backward_likely {
            0
        } else {
            cost_benefit_wait_ns(s)
        }
    }
}
