//! Seek curves: time to move the arm a given number of cylinders (settle included).

use crate::time::Nanos;
use serde::{Deserialize, Serialize};

/// How seek time depends on distance. Distance 0 always costs 0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SeekCurve {
    /// Seltzer et al. 1990, Figure 1: `short_base + short_sqrt * sqrt(d)` up to `boundary`
    /// cylinders, then `long_base + long_per_cylinder * (d - boundary)`.
    Seltzer { short_base_ms: f64, short_sqrt_ms: f64, boundary_cylinders: u32, long_base_ms: f64, long_per_cylinder_ms: f64 },
    /// The 3-point model `t1 + a (d-1) + b sqrt(d-1)` (Lee; Ruemmler & Wilkes 1994),
    /// fitted from single-cylinder, average and full-stroke times (see [`SeekCurve::fit_three_point`]).
    ThreePoint { single_ms: f64, a_ms: f64, b_ms: f64 },
    /// A measured distance -> time table, linearly interpolated; distances ascending.
    Table { distances: Vec<u32>, times_ms: Vec<f64> },
}

impl SeekCurve {
    /// Fits the 3-point model so that seek(1) = `single_ms`, seek(cylinders-1) = `full_ms` and
    /// the mean over uniformly random start/end cylinder pairs (distance > 0) = `average_ms`.
    pub fn fit_three_point(single_ms: f64, average_ms: f64, full_ms: f64, cylinders: u32) -> SeekCurve {
        assert!(cylinders >= 3, "3-point fit needs at least 3 cylinders");
        // For two uniform random cylinders, P(distance = d) is proportional to (C - d) for d >= 1.
        let c = cylinders as f64;
        let (mut weight_sum, mut mean_lin, mut mean_sqrt) = (0.0, 0.0, 0.0);
        for d in 1..cylinders {
            let w = c - d as f64;
            let x = (d - 1) as f64;
            weight_sum += w;
            mean_lin += w * x;
            mean_sqrt += w * x.sqrt();
        }
        mean_lin /= weight_sum;
        mean_sqrt /= weight_sum;
        let x_full = (cylinders - 2) as f64;
        // Solve: a*mean_lin + b*mean_sqrt = avg - t1 ; a*x_full + b*sqrt(x_full) = full - t1
        let (r1, r2) = (average_ms - single_ms, full_ms - single_ms);
        let det = mean_lin * x_full.sqrt() - mean_sqrt * x_full;
        let a = (r1 * x_full.sqrt() - mean_sqrt * r2) / det;
        let b = (mean_lin * r2 - x_full * r1) / det;
        SeekCurve::ThreePoint { single_ms, a_ms: a, b_ms: b }
    }

    /// Seek time in milliseconds (unrounded).
    pub fn time_ms(&self, distance: u32) -> f64 {
        if distance == 0 {
            return 0.0;
        }
        match self {
            SeekCurve::Seltzer { short_base_ms, short_sqrt_ms, boundary_cylinders, long_base_ms, long_per_cylinder_ms } => {
                if distance <= *boundary_cylinders {
                    short_base_ms + short_sqrt_ms * (distance as f64).sqrt()
                } else {
                    long_base_ms + long_per_cylinder_ms * (distance - boundary_cylinders) as f64
                }
            }
            SeekCurve::ThreePoint { single_ms, a_ms, b_ms } => {
                let x = (distance - 1) as f64;
                single_ms + a_ms * x + b_ms * x.sqrt()
            }
            SeekCurve::Table { distances, times_ms } => {
                let i = distances.partition_point(|&d| d < distance);
                if i == 0 {
                    // Below the first measured point: scale linearly from (0, 0).
                    return times_ms[0] * distance as f64 / distances[0].max(1) as f64;
                }
                if i == distances.len() {
                    return *times_ms.last().unwrap();
                }
                let (d0, d1) = (distances[i - 1] as f64, distances[i] as f64);
                let (t0, t1) = (times_ms[i - 1], times_ms[i]);
                t0 + (t1 - t0) * (distance as f64 - d0) / (d1 - d0)
            }
        }
    }

    /// Seek time in nanoseconds, rounded to nearest.
    pub fn time_ns(&self, distance: u32) -> Nanos {
        crate::time::round_ns(self.time_ms(distance) * 1e6)
    }

    /// Checks the curve's parameters; returns a message naming the bad one.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            SeekCurve::Table { distances, times_ms } => {
                if distances.is_empty() || distances.len() != times_ms.len() {
                    return Err("seek table needs equally many distances and times_ms (at least one)".into());
                }
                if distances.windows(2).any(|w| w[0] >= w[1]) || distances[0] == 0 {
                    return Err("seek table distances must be positive and strictly ascending".into());
                }
                if times_ms.iter().any(|t| !t.is_finite() || *t < 0.0) {
                    return Err("seek table times_ms must be finite and non-negative".into());
                }
            }
            SeekCurve::ThreePoint { single_ms, .. } if !(*single_ms >= 0.0) => {
                return Err(format!("single_ms must be >= 0, got {single_ms}"));
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seltzer() -> SeekCurve {
        SeekCurve::Seltzer {
            short_base_ms: 4.6,
            short_sqrt_ms: 0.87,
            boundary_cylinders: 239,
            long_base_ms: 18.0,
            long_per_cylinder_ms: 0.028,
        }
    }

    #[test]
    fn seltzer_formula_by_hand() {
        let s = seltzer();
        assert_eq!(s.time_ns(0), 0);
        assert_eq!(s.time_ns(1), 5_470_000); // 4.6 + 0.87
        assert_eq!(s.time_ns(100), 13_300_000); // 4.6 + 0.87 * 10
        assert_eq!(s.time_ns(240), 18_028_000); // 18 + 0.028
        assert_eq!(s.time_ns(839), 34_800_000); // 18 + 0.028 * 600
    }

    #[test]
    fn three_point_fit_hits_its_three_points() {
        let cyl = 10_000;
        let c = SeekCurve::fit_three_point(1.0, 9.0, 18.0, cyl);
        assert!((c.time_ms(1) - 1.0).abs() < 1e-9);
        assert!((c.time_ms(cyl - 1) - 18.0).abs() < 1e-6);
        // Mean over the random-pair distance distribution equals the average.
        let (mut w, mut m) = (0.0, 0.0);
        for d in 1..cyl {
            let wd = (cyl - d) as f64;
            w += wd;
            m += wd * c.time_ms(d);
        }
        assert!((m / w - 9.0).abs() < 1e-6, "mean {}", m / w);
        // Monotone for a realistic drive.
        let mut prev = 0.0;
        for d in (1..cyl).step_by(97) {
            let t = c.time_ms(d);
            assert!(t >= prev);
            prev = t;
        }
    }

    #[test]
    fn table_interpolates() {
        let t = SeekCurve::Table { distances: vec![1, 11, 101], times_ms: vec![1.0, 2.0, 6.5] };
        assert_eq!(t.time_ms(1), 1.0);
        assert_eq!(t.time_ms(6), 1.5);
        assert_eq!(t.time_ms(56), 4.25);
        assert_eq!(t.time_ms(500), 6.5);
        assert!(t.validate().is_ok());
        let bad = SeekCurve::Table { distances: vec![5, 3], times_ms: vec![1.0, 2.0] };
        assert!(bad.validate().is_err());
    }
}
