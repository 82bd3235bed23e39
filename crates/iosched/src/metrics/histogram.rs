//! Latency distributions in constant memory: an HdrHistogram with three significant digits
//! (every recorded value lands in a bucket no wider than 1/1024 of its value; a percentile is
//! reported as its bucket's midpoint, so it is within 0.05% of the exact nearest-rank value),
//! plus the exact count, sum, minimum and maximum.

use super::LatencyMs;
use crate::time::{ns_to_ms, Nanos};
use hdrhistogram::Histogram;

/// Significant decimal digits the histogram keeps (3: relative bucket width at most 1/1024).
pub const SIGNIFICANT_DIGITS: u8 = 3;
/// The largest relative error of a reported percentile against the exact nearest-rank value:
/// half the widest relative bucket width.
pub const PERCENTILE_RELATIVE_ERROR: f64 = 1.0 / 2048.0;

/// Quantiles at which `LatencyHistogram::quantiles_ms` samples a distribution (for CDF plots):
/// every half percent, then the far tail.
pub const CDF_QUANTILES: [f64; 205] = {
    let mut q = [0.0; 205];
    let mut i = 0;
    while i <= 200 {
        q[i] = i as f64 / 200.0;
        i += 1;
    }
    // Replace the last point (1.0) by the tail, then end on 1.0.
    q[200] = 0.999;
    q[201] = 0.9995;
    q[202] = 0.9999;
    q[203] = 0.99999;
    q[204] = 1.0;
    q
};

#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
    count: u64,
    sum_ns: u128,
    min_ns: Nanos,
    max_ns: Nanos,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            // Auto-resizing: it grows with the largest value recorded, never with the count.
            hist: Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits are valid"),
            count: 0,
            sum_ns: 0,
            min_ns: Nanos::MAX,
            max_ns: 0,
        }
    }
}

impl LatencyHistogram {
    pub fn record(&mut self, ns: Nanos) {
        // An auto-resizing histogram grows to take any u64 (its counts saturate); should a resize
        // ever fail, the value is clamped to the tracked range rather than lost.
        if self.hist.record(ns).is_err() {
            self.hist.saturating_record(ns);
        }
        self.count += 1;
        self.sum_ns += ns as u128;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max_ns(&self) -> Nanos {
        self.max_ns
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }

    /// The nearest-rank `q` quantile (0 < q <= 1), as its bucket's midpoint clamped to the exact
    /// minimum and maximum (so q = 1 is the exact maximum). 0 when empty.
    pub fn quantile_ns(&self, q: f64) -> Nanos {
        if self.count == 0 {
            return 0;
        }
        if q >= 1.0 {
            return self.max_ns;
        }
        if q <= 0.0 {
            return self.min_ns;
        }
        let v = self.hist.value_at_quantile(q);
        self.hist.median_equivalent(v).clamp(self.min_ns, self.max_ns)
    }

    /// `quantile_ns` at each of `qs` (ascending), in one pass over the histogram's buckets
    /// (`Histogram::value_at_quantiles` gives exactly what `value_at_quantile` gives for each).
    fn quantiles_ns(&self, qs: &[f64]) -> Vec<Nanos> {
        debug_assert!(qs.windows(2).all(|w| w[0] <= w[1]), "quantiles must ascend");
        if self.count == 0 {
            return vec![0; qs.len()];
        }
        let inner: Vec<f64> = qs.iter().copied().filter(|&q| q > 0.0 && q < 1.0).collect();
        let mut values = self.hist.value_at_quantiles(inner);
        qs.iter()
            .map(|&q| {
                if q >= 1.0 {
                    self.max_ns
                } else if q <= 0.0 {
                    self.min_ns
                } else {
                    let v = values.next().expect("one value per quantile");
                    self.hist.median_equivalent(v).clamp(self.min_ns, self.max_ns)
                }
            })
            .collect()
    }

    /// Mean, p50, p95, p99 (within `PERCENTILE_RELATIVE_ERROR`) and the exact maximum.
    pub fn summary_ms(&self) -> LatencyMs {
        if self.count == 0 {
            return LatencyMs::default();
        }
        let p = self.quantiles_ns(&[0.50, 0.95, 0.99]);
        LatencyMs { mean: self.mean_ns() / 1e6, p50: ns_to_ms(p[0]), p95: ns_to_ms(p[1]), p99: ns_to_ms(p[2]), max: ns_to_ms(self.max_ns) }
    }

    /// The distribution sampled at `CDF_QUANTILES`, in ms (empty when nothing was recorded).
    pub fn quantiles_ms(&self) -> Vec<f64> {
        if self.count == 0 {
            return Vec::new();
        }
        self.quantiles_ns(&CDF_QUANTILES).into_iter().map(ns_to_ms).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact nearest-rank percentile of a sorted slice.
    fn nearest_rank(sorted: &[Nanos], q: f64) -> Nanos {
        let k = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
        sorted[k]
    }

    #[test]
    fn percentiles_are_within_the_stated_error_of_nearest_rank() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        // Spread over six decades, as response times are (1 us .. 10 s).
        let mut v: Vec<Nanos> = (0..200_000).map(|_| 10f64.powf(rng.gen_range(3.0..10.0)) as Nanos).collect();
        let mut h = LatencyHistogram::default();
        v.iter().for_each(|&x| h.record(x));
        v.sort_unstable();
        for q in [0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999] {
            let exact = nearest_rank(&v, q) as f64;
            let got = h.quantile_ns(q) as f64;
            assert!((got - exact).abs() <= exact * PERCENTILE_RELATIVE_ERROR + 1.0, "q {q}: {got} vs exact {exact}");
        }
        assert_eq!(h.quantile_ns(1.0), *v.last().unwrap());
        assert_eq!(h.count(), v.len() as u64);
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
        assert!((h.mean_ns() - mean).abs() < 1e-6 * mean);
    }

    #[test]
    fn hand_checked_small_sample() {
        let mut h = LatencyHistogram::default();
        (1..=100).for_each(|i| h.record(i * 1_000_000));
        let l = h.summary_ms();
        for (got, want) in [(l.p50, 50.0), (l.p95, 95.0), (l.p99, 99.0)] {
            assert!((got - want).abs() <= want * PERCENTILE_RELATIVE_ERROR, "{got} vs {want}");
        }
        assert_eq!(l.max, 100.0);
        assert_eq!(l.mean, 50.5);
    }

    #[test]
    fn memory_does_not_grow_with_the_count() {
        let mut h = LatencyHistogram::default();
        (0..1_000u64).for_each(|i| h.record(1_000 + i * 10_000_000));
        let before = h.hist.distinct_values();
        (0..1_000_000u64).for_each(|i| h.record(1_000 + (i % 1_000) * 10_000_000));
        assert_eq!(h.hist.distinct_values(), before, "the bucket array depends on the range only");
    }

    #[test]
    fn extreme_values_saturate_instead_of_failing() {
        let mut h = LatencyHistogram::default();
        h.record(u64::MAX);
        h.record(0);
        assert_eq!(h.max_ns(), u64::MAX);
        assert_eq!(h.quantile_ns(0.0), 0);
    }

    #[test]
    fn one_pass_quantiles_equal_the_quantiles_one_by_one() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        for n in [1usize, 2, 7, 1000, 50_000] {
            let mut h = LatencyHistogram::default();
            (0..n).for_each(|_| h.record(10f64.powf(rng.gen_range(2.0..9.5)) as Nanos));
            let one_pass = h.quantiles_ns(&CDF_QUANTILES);
            let one_by_one: Vec<Nanos> = CDF_QUANTILES.iter().map(|&q| h.quantile_ns(q)).collect();
            assert_eq!(one_pass, one_by_one, "n = {n}");
            let s = h.summary_ms();
            assert_eq!((s.p50, s.p95, s.p99), (ns_to_ms(h.quantile_ns(0.5)), ns_to_ms(h.quantile_ns(0.95)), ns_to_ms(h.quantile_ns(0.99))));
        }
        assert_eq!(LatencyHistogram::default().quantiles_ns(&[0.5, 1.0]), [0, 0]);
    }
}
