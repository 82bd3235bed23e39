//! Garbage collection's choice of victim superblock on a die: greedy (fewest valid units) or
//! cost-benefit (Kawaguchi, Nishioka & Motoda, USENIX 1995, after LFS's cleaner, Rosenblum &
//! Ousterhout 1992: the greatest age x (1 - u) / 2u, where u is the block's valid fraction and
//! age the time since it was last written; here time is counted in units written).

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum GcPolicy {
    Greedy,
    CostBenefit,
}

impl GcPolicy {
    pub const NAMES: [&'static str; 2] = ["greedy", "cost-benefit"];
    pub fn parse(s: &str) -> Option<GcPolicy> {
        match s {
            "greedy" => Some(GcPolicy::Greedy),
            "cost-benefit" => Some(GcPolicy::CostBenefit),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            GcPolicy::Greedy => "greedy",
            GcPolicy::CostBenefit => "cost-benefit",
        }
    }
}

/// A closed superblock GC may take: its index, valid units, and when it was closed.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub superblock: u32,
    pub valid: u32,
    pub closed_at: u64,
}

/// The victim among `candidates` (None if there are none or none would free any space).
/// Ties go to the lowest index (deterministic).
pub fn pick(policy: GcPolicy, candidates: impl Iterator<Item = Candidate>, units_per_superblock: u32, now: u64) -> Option<u32> {
    let mut best: Option<(f64, u32)> = None;
    for c in candidates.filter(|c| c.valid < units_per_superblock) {
        let score = match policy {
            GcPolicy::Greedy => -(c.valid as f64),
            GcPolicy::CostBenefit => {
                let u = c.valid as f64 / units_per_superblock as f64;
                if c.valid == 0 {
                    f64::INFINITY
                } else {
                    (now.saturating_sub(c.closed_at) as f64 + 1.0) * (1.0 - u) / (2.0 * u)
                }
            }
        };
        if best.is_none_or(|(s, i)| score > s || (score == s && c.superblock < i)) {
            best = Some((score, c.superblock));
        }
    }
    best.map(|(_, i)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(superblock: u32, valid: u32, closed_at: u64) -> Candidate {
        Candidate { superblock, valid, closed_at }
    }

    #[test]
    fn greedy_takes_the_fewest_valid_and_cost_benefit_weighs_age() {
        let cands = [c(0, 50, 90), c(1, 40, 99), c(2, 100, 0)];
        assert_eq!(pick(GcPolicy::Greedy, cands.into_iter(), 100, 100), Some(1));
        // Block 0 is old (closed at 90 vs 99): age 11 x 0.5/1.0 = 5.5 beats 2 x 0.6/0.8 = 1.5.
        assert_eq!(pick(GcPolicy::CostBenefit, cands.into_iter(), 100, 100), Some(0));
        // A full block frees nothing: never a victim.
        assert_eq!(pick(GcPolicy::Greedy, [c(2, 100, 0)].into_iter(), 100, 100), None);
    }
}
