//! The seek-reducing heuristic (section 3.3): wait if the expected gain in positioning time
//! exceeds the expected idle time.
//!
//! benefit = positioning(candidate) - last.expected_positioning
//! cost    = max(0, last.median_think - elapsed)
//! wait    = max(0, last.p95_think - elapsed)   if benefit > cost, else 0
//!
//! It only uses positioning times, so it applies to any policy; Aged-SPTF and C-SCAN have
//! refined variants.

use super::{Heuristic, Situation};
use crate::sched::classic::aged_sptf::AgedSptf;
use crate::sched::Policy;
use crate::time::Nanos;

/// The cost-benefit rule itself, shared by the variants.
pub fn cost_benefit_wait_ns(s: &Situation) -> Nanos {
    let (Some(median), Some(p95), Some(expected_pos)) = (s.last.think.median_ns(), s.last.think.p95_ns(), s.last.positioning_ns.get())
    else {
        return 0; // no history yet: do not wait
    };
    let candidate_pos =
        s.cx.device.positioning_time_ns(s.candidate.start_sector, s.candidate.size_sectors, s.candidate.op, s.cx.now_ns) as f64;
    let benefit = candidate_pos - expected_pos;
    let cost = median.saturating_sub(s.elapsed_ns) as f64;
    if benefit > cost {
        p95.saturating_sub(s.elapsed_ns)
    } else {
        0
    }
}

/// For SPTF and any policy without a variant of its own.
#[derive(Default)]
pub struct SeekHeuristic;

impl<P: Policy> Heuristic<P> for SeekHeuristic {
    fn name(&self) -> &'static str {
        "seek"
    }

    fn wait_ns(&mut self, _policy: &P, s: &Situation) -> Nanos {
        cost_benefit_wait_ns(s)
    }
}

/// Aged-SPTF: when aging overrode the SPTF choice, the old request will be served whatever
/// arrives, so waiting would only waste a think time.
#[derive(Default)]
pub struct AgedSeekHeuristic;

impl Heuristic<AgedSptf> for AgedSeekHeuristic {
    fn name(&self) -> &'static str {
        "aged-seek"
    }

    fn wait_ns(&mut self, policy: &AgedSptf, s: &Situation) -> Nanos {
        if policy.aging_overrode() {
            0
        } else {
            cost_benefit_wait_ns(s)
        }
    }
}
