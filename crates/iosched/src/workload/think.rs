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
}

impl Think {
    pub fn sample(&self, rng: &mut Pcg64) -> Nanos {
        match *self {
            Think::Fixed(t) => t,
            Think::Uniform(max) => rng.gen_range(0..=max),
            Think::Exponential { mean_ns } => (-(1.0 - rng.gen::<f64>()).ln() * mean_ns).round() as Nanos,
        }
    }
}
