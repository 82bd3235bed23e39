//! Think-time distributions: the computation a process does between requests.

use crate::time::Nanos;
use rand::Rng;
use rand_pcg::Pcg64;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Think {
    Fixed(Nanos),
    /// Uniform on [0, max].
    Uniform(Nanos),
    Exponential {
        mean_ns: f64,
    },
    /// Iyer & Druschel's adversary (section 4.2.4): `quick` think times of `quick_ns`, then one
    /// of `wait_ns` (meant to be just past the anticipation timeout), repeating.
    Adversary {
        quick_ns: Nanos,
        quick: u32,
        wait_ns: Nanos,
    },
}

impl Think {
    /// The think time after the process's request number `n` (0-based). Only the random
    /// distributions draw from `rng`, so adding a deterministic one changes no other stream.
    pub fn sample(&self, n: u64, rng: &mut Pcg64) -> Nanos {
        match *self {
            Think::Fixed(t) => t,
            Think::Uniform(max) => rng.gen_range(0..=max),
            Think::Exponential { mean_ns } => crate::time::round_ns(-(1.0 - rng.gen::<f64>()).ln() * mean_ns),
            Think::Adversary { quick_ns, quick, wait_ns } => {
                if n % (quick as u64 + 1) < quick as u64 {
                    quick_ns
                } else {
                    wait_ns
                }
            }
        }
    }
}
