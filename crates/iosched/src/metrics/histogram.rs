//! Latency distributions in constant memory: an HdrHistogram with three significant digits
//! (every recorded value lands in a bucket no wider than 1/1024 of its value; a percentile is
//! reported as its bucket's midpoint, so it is within 0.05% of the exact nearest-rank value),
//! plus the exact count, sum, minimum and maximum.
//!
//! A distribution starts *sparse*: the counts of the buckets it has touched, keyed by the
//! bucket's lowest value, in a hash map (a process with a few hundred requests costs a few
//! KiB, where the dense array of an auto-resizing HdrHistogram is 16 KiB empty and 200-500 KiB
//! once it has seen milliseconds). Past `SPARSE_MAX_BUCKETS` buckets it becomes dense: the
//! counts array of an HdrHistogram (`DenseCounts`, laid out as the crate lays its out, grown a
//! bucket at a time; a record is an index computation and an increment, where the crate's record
//! cost about 45 instructions). Both give the same percentiles: the buckets are the same
//! (HdrHistogram's bucket of a value depends only on the value, its lowest discernible value and
//! its significant digits), and a percentile is read off the counts by the same rule (the tests
//! check both against the crate's histogram).
//!
//! A sparse distribution's newest values wait, as bucket indices (`hdr_buckets::index_of`, which
//! fits 16 bits), in a short append-only list (`recent`) and are counted into the map when it
//! fills or the counts are read: a process visited once in a thousand requests finds its map
//! cold, and a probe there cost about three cache misses per record, where an append costs one
//! (and a cache line holds 32 of them).

use super::hdr_buckets;
use super::index_sort;
use super::LatencyMs;
use crate::fast_hash::FastMap;
use crate::time::{ns_to_ms, Nanos};

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

/// Buckets a sparse distribution holds before it becomes dense (16 bytes each in a map at most
/// 7/8 full: about 36 KiB at the limit).
const SPARSE_MAX_BUCKETS: usize = 1024;
/// Bucket indices a sparse distribution keeps uncounted before it counts them into its map
/// (512 bytes).
const RECENT_MAX: usize = 256;

#[derive(Clone, Debug)]
enum Counts {
    /// Bucket's lowest value -> count: one probe per record (a sorted vector took a binary
    /// search, several cache misses in a cold process's counts, and a shift per new bucket);
    /// sorted only when percentiles are read.
    Sparse(FastMap<u64, u64>),
    Dense(DenseCounts),
}

/// An HdrHistogram's counts array (`hdr_buckets::index_of`), grown whole buckets at a time as
/// larger values arrive; counts saturate, as the crate's do.
#[derive(Clone, Debug, Default)]
struct DenseCounts {
    counts: Vec<u64>,
}

impl DenseCounts {
    #[inline]
    fn add(&mut self, value: u64, n: u64) {
        let i = hdr_buckets::index_of(value);
        if i >= self.counts.len() {
            self.counts.resize((i | (hdr_buckets::INDEX_GROWTH - 1)) + 1, 0);
        }
        self.counts[i] = self.counts[i].saturating_add(n);
    }

    fn add_all(&mut self, other: &DenseCounts) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (c, &n) in self.counts.iter_mut().zip(&other.counts) {
            *c = c.saturating_add(n);
        }
    }

    /// (bucket's lowest value, count) of every bucket counted, in value order.
    fn recorded(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().enumerate().filter(|&(_, &n)| n > 0).map(|(i, &n)| (hdr_buckets::lowest_at_index(i), n))
    }
}

/// A bucket's index in an HdrHistogram's counts array (at most 56,319: 53 buckets of 1,024
/// beyond bucket 0's 2,048).
type RecentIndex = u16;

#[inline]
fn recent_index(ns: Nanos) -> RecentIndex {
    let index = hdr_buckets::index_of(ns);
    debug_assert!(index <= RecentIndex::MAX as usize);
    index as RecentIndex
}

/// The sparse map's key (the bucket's lowest value) of a recent index.
#[inline]
fn key_at(index: RecentIndex) -> u64 {
    hdr_buckets::lowest_at_index(index as usize)
}

#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    counts: Counts,
    /// Bucket indices recorded but not yet in `counts` (empty unless `counts` is sparse).
    recent: Vec<RecentIndex>,
    /// Values of 0 recorded (kept apart from `counts`, whose bucket of 0 they are: a request
    /// that never waited, the common case, costs an increment).
    zeros: u64,
    count: u64,
    sum_ns: u128,
    min_ns: Nanos,
    max_ns: Nanos,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            counts: Counts::Sparse(FastMap::default()),
            recent: Vec::new(),
            zeros: 0,
            count: 0,
            sum_ns: 0,
            min_ns: Nanos::MAX,
            max_ns: 0,
        }
    }
}

impl LatencyHistogram {
    pub fn record(&mut self, ns: Nanos) {
        if ns == 0 {
            self.zeros += 1;
            self.count += 1;
            self.min_ns = 0;
            return;
        }
        match self.counts {
            // Any value has its bucket in either form (the counts array reaches u64::MAX).
            Counts::Sparse(_) => {
                if self.recent.capacity() == 0 {
                    self.recent.reserve_exact(RECENT_MAX);
                }
                self.recent.push(recent_index(ns));
                if self.recent.len() >= RECENT_MAX {
                    self.count_recent();
                }
            }
            Counts::Dense(_) => self.record_dense(ns),
        }
        self.count += 1;
        self.sum_ns += ns as u128;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Counts the recent keys into the sparse map (which becomes dense should it fill).
    fn count_recent(&mut self) {
        let mut recent = std::mem::take(&mut self.recent);
        for &index in &recent {
            let key = key_at(index);
            match &mut self.counts {
                Counts::Sparse(v) => {
                    let full = v.len() >= SPARSE_MAX_BUCKETS;
                    match v.get_mut(&key) {
                        Some(n) => *n += 1,
                        None if !full => {
                            v.insert(key, 1);
                        }
                        None => {
                            self.make_dense();
                            self.record_dense(key);
                        }
                    }
                }
                // A bucket's lowest value is in the bucket: the count lands where the value's would.
                Counts::Dense(_) => self.record_dense(key),
            }
        }
        recent.clear();
        self.recent = recent;
    }

    #[inline]
    fn record_dense(&mut self, ns: Nanos) {
        let Counts::Dense(dense) = &mut self.counts else { unreachable!("record_dense on a sparse histogram") };
        dense.add(ns, 1);
    }

    /// The dense histogram with the sparse and the recent counts (each bucket's count recorded
    /// at its lowest value, which is in the bucket).
    fn make_dense(&mut self) {
        if let Counts::Sparse(v) = &self.counts {
            let mut dense = DenseCounts::default();
            for (key, n) in v.iter().map(|(&k, &n)| (k, n)).chain(self.recent.iter().map(|&i| (key_at(i), 1))) {
                dense.add(key, n);
            }
            self.counts = Counts::Dense(dense);
            self.recent = Vec::new();
        }
    }

    /// Adds `other`'s values: the result has the counts, sum, minimum and maximum of one
    /// histogram that recorded both (counts are per bucket, so a merge is exact).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.count == 0 {
            return;
        }
        self.count_recent();
        let other_recent = other.recent.iter().map(|&i| (key_at(i), 1));
        match (&mut self.counts, &other.counts) {
            (Counts::Sparse(v), Counts::Sparse(o)) if v.len() + o.len() + other.recent.len() <= SPARSE_MAX_BUCKETS => {
                for (key, n) in o.iter().map(|(&k, &n)| (k, n)).chain(other_recent) {
                    *v.entry(key).or_insert(0) += n;
                }
            }
            _ => {
                self.make_dense();
                let Counts::Dense(dense) = &mut self.counts else { unreachable!("made dense above") };
                match &other.counts {
                    Counts::Sparse(o) => {
                        for (key, n) in o.iter().map(|(&k, &n)| (k, n)).chain(other_recent) {
                            dense.add(key, n);
                        }
                    }
                    Counts::Dense(o) => dense.add_all(o),
                }
            }
        }
        self.zeros += other.zeros;
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    /// Buckets held (sparse) or allocated (dense): what the distribution's memory grows with.
    pub fn buckets_held(&self) -> usize {
        (self.zeros > 0) as usize
            + match &self.counts {
                Counts::Sparse(v) => {
                    let mut new: Vec<u64> = self.recent.iter().map(|&i| key_at(i)).filter(|k| !v.contains_key(k)).collect();
                    new.sort_unstable();
                    new.dedup();
                    v.len() + new.len()
                }
                Counts::Dense(d) => d.counts.len(),
            }
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
        self.quantiles_ns(&[q])[0]
    }

    /// `quantile_ns` at each of `qs` (ascending), in one pass over the histogram's buckets
    /// (`sparse_quantiles` gives for each what HdrHistogram's `value_at_quantile` gives).
    fn quantiles_ns(&self, qs: &[f64]) -> Vec<Nanos> {
        debug_assert!(qs.windows(2).all(|w| w[0] <= w[1]), "quantiles must ascend");
        if self.count == 0 {
            return vec![0; qs.len()];
        }
        let inner: Vec<f64> = qs.iter().copied().filter(|&q| q > 0.0 && q < 1.0).collect();
        let zeros = (self.zeros > 0).then_some((0, self.zeros));
        let sorted = match &self.counts {
            // The zeros' bucket first, then the dense buckets in value order.
            Counts::Dense(dense) => zeros.into_iter().chain(dense.recorded()).collect(),
            Counts::Sparse(v) => sparse_sorted(zeros, v, &self.recent),
        };
        let mut values = sparse_quantiles(&sorted, inner).into_iter();
        qs.iter()
            .map(|&q| {
                if q >= 1.0 {
                    self.max_ns
                } else if q <= 0.0 {
                    self.min_ns
                } else {
                    let v = values.next().expect("one value per quantile");
                    hdr_buckets::median_equivalent(v).clamp(self.min_ns, self.max_ns)
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
        self.summary_of(p[0], p[1], p[2])
    }

    /// The summary with these p50, p95 and p99 (ns).
    fn summary_of(&self, p50: Nanos, p95: Nanos, p99: Nanos) -> LatencyMs {
        LatencyMs { mean: self.mean_ns() / 1e6, p50: ns_to_ms(p50), p95: ns_to_ms(p95), p99: ns_to_ms(p99), max: ns_to_ms(self.max_ns) }
    }

    /// [`Self::summary_ms`] and [`Self::quantiles_ms`] from one pass over the counts (the
    /// summary's p50, p95 and p99 are points of `CDF_QUANTILES`: 100/200, 190/200, 198/200 are
    /// exactly 0.50, 0.95, 0.99 as doubles).
    pub fn summary_and_quantiles_ms(&self) -> (LatencyMs, Vec<f64>) {
        if self.count == 0 {
            return (LatencyMs::default(), Vec::new());
        }
        const P50: usize = 100;
        const P95: usize = 190;
        const P99: usize = 198;
        debug_assert_eq!((CDF_QUANTILES[P50], CDF_QUANTILES[P95], CDF_QUANTILES[P99]), (0.50, 0.95, 0.99));
        let p = self.quantiles_ns(&CDF_QUANTILES);
        let summary = self.summary_of(p[P50], p[P95], p[P99]);
        (summary, p.into_iter().map(ns_to_ms).collect())
    }

    /// The distribution sampled at `CDF_QUANTILES`, in ms (empty when nothing was recorded).
    pub fn quantiles_ms(&self) -> Vec<f64> {
        if self.count == 0 {
            return Vec::new();
        }
        self.quantiles_ns(&CDF_QUANTILES).into_iter().map(ns_to_ms).collect()
    }
}

/// A sparse distribution's (bucket key, count) in key order: the zeros' bucket, the map's counts
/// and the recent keys, a key held in both (or recent more than once) counted in one entry.
/// `sparse_quantiles` reads the same values off it as off one entry per recent value: it only
/// follows the running count, and equal keys give the same value. The recent indices are sorted
/// as plain integers (they ascend with their buckets' lowest values) and merged with the map's
/// sorted counts (sorting them as (key, 1) pairs beside the map's was most of the cost of a
/// run's end with a thousand processes).
fn sparse_sorted(zeros: Option<(u64, u64)>, counted: &FastMap<u64, u64>, recent: &[RecentIndex]) -> Vec<(u64, u64)> {
    let mut indices = recent.to_vec();
    index_sort::sort_indices(&mut indices);
    let mut map: Vec<(u64, u64)> = counted.iter().map(|(&k, &n)| (k, n)).collect();
    map.sort_unstable_by_key(|e| e.0);
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(map.len() + indices.len() + 1);
    let mut push = |k: u64, n: u64| match out.last_mut() {
        Some(last) if last.0 == k => last.1 += n,
        _ => out.push((k, n)),
    };
    if let Some((k, n)) = zeros {
        push(k, n);
    }
    let (mut i, mut j) = (0, 0);
    while i < map.len() || j < indices.len() {
        if j == indices.len() || (i < map.len() && map[i].0 <= key_at(indices[j])) {
            push(map[i].0, map[i].1);
            i += 1;
        } else {
            push(key_at(indices[j]), 1);
            j += 1;
        }
    }
    out
}

/// HdrHistogram's `value_at_quantiles` on sparse counts: for each quantile (ascending, in
/// (0, 1)) the highest value of the first bucket whose running count reaches
/// ceil(q x total), at least 1.
fn sparse_quantiles(v: &[(u64, u64)], qs: Vec<f64>) -> Vec<u64> {
    let total: u64 = v.iter().map(|e| e.1).sum();
    let (mut i, mut running) = (0usize, 0u64);
    let mut out = Vec::with_capacity(qs.len());
    for q in qs {
        let target = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        while running < target && i < v.len() {
            running += v[i].1;
            i += 1;
        }
        out.push(i.checked_sub(1).map_or(0, |j| hdr_buckets::highest_equivalent(v[j].0)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recent index fits 16 bits for every value and names the value's bucket: its key is the
    /// value's lowest equivalent, and indices ascend as keys do.
    #[test]
    fn recent_indices_name_buckets_in_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
        let mut values: Vec<u64> = (0..64).flat_map(|b| [(1u64 << b) - 1, 1u64 << b, (1u64 << b) + 1]).collect();
        values.extend([u64::MAX, u64::MAX - 1, 0, 2047, 2048, 4095, 4096]);
        values.extend((0..100_000).map(|_| rng.gen::<u64>() >> rng.gen_range(0..64)));
        for &v in &values {
            assert!(hdr_buckets::index_of(v) <= RecentIndex::MAX as usize, "{v}");
            assert_eq!(key_at(recent_index(v)), hdr_buckets::lowest_equivalent(v), "{v}");
        }
        values.sort_unstable();
        for w in values.windows(2) {
            assert!(recent_index(w[0]) <= recent_index(w[1]), "{} {}", w[0], w[1]);
            assert_eq!(recent_index(w[0]) == recent_index(w[1]), key_at(recent_index(w[0])) == key_at(recent_index(w[1])));
        }
    }

    /// Exact nearest-rank percentile of a sorted slice.
    fn nearest_rank(sorted: &[Nanos], q: f64) -> Nanos {
        let k = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
        sorted[k]
    }

    /// The summary and the CDF from one pass are exactly the two computed apart, for empty,
    /// sparse (with zeros) and dense distributions.
    #[test]
    fn summary_and_quantiles_from_one_pass_are_the_separate_ones() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        // With and without zeros (their own bucket), sparse and dense (past 1,024 buckets).
        for zeros in [true, false] {
            for n in [0usize, 1, 7, 300, 50_000, 2_000_000] {
                let mut h = LatencyHistogram::default();
                for i in 0..n {
                    h.record(if zeros && i % 13 == 0 { 0 } else { 10f64.powf(rng.gen_range(3.0..9.0)) as Nanos });
                }
                let (summary, cdf) = h.summary_and_quantiles_ms();
                assert_eq!(summary, h.summary_ms(), "{n} values, zeros {zeros}");
                assert_eq!(cdf, h.quantiles_ms(), "{n} values, zeros {zeros}");
            }
        }
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
        let before = h.buckets_held();
        (0..1_000_000u64).for_each(|i| h.record(1_000 + (i % 1_000) * 10_000_000));
        assert_eq!(h.buckets_held(), before, "the buckets depend on the values' range only");
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

    /// The histogram as it was before sparse counts: one dense HdrHistogram (the crate's,
    /// auto-resizing) from the start.
    fn dense_reference(values: &[Nanos]) -> (hdrhistogram::Histogram<u64>, Nanos, Nanos) {
        let mut h = hdrhistogram::Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits are valid");
        values.iter().for_each(|&x| {
            if h.record(x).is_err() {
                h.saturating_record(x)
            }
        });
        (h, *values.iter().min().unwrap(), *values.iter().max().unwrap())
    }

    #[test]
    fn sparse_and_dense_give_the_percentiles_of_one_dense_histogram() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
        // Below, at and far above the sparse limit; with zeros, ties and a wide spread; and
        // narrow, so that recent keys repeat and repeat keys already counted in the map.
        for (n, narrow) in
            [(1usize, false), (3, false), (200, false), (SPARSE_MAX_BUCKETS, false), (5_000, false), (100_000, false), (700, true)]
        {
            let values: Vec<Nanos> = (0..n)
                .map(|k| match k % 17 {
                    0 => 0,
                    _ if narrow => rng.gen_range(5_000..5_200),
                    _ => 10f64.powf(rng.gen_range(1.0..10.5)) as Nanos,
                })
                .collect();
            let mut h = LatencyHistogram::default();
            values.iter().for_each(|&x| h.record(x));
            let (r, lo, hi) = dense_reference(&values);
            let want: Vec<Nanos> = CDF_QUANTILES
                .iter()
                .map(|&q| match q {
                    q if q >= 1.0 => hi,
                    q if q <= 0.0 => lo,
                    q => r.median_equivalent(r.value_at_quantile(q)).clamp(lo, hi),
                })
                .collect();
            assert_eq!(h.quantiles_ns(&CDF_QUANTILES), want, "n = {n}");
            // Sparse while the counted buckets fit (the recent keys counted in at most
            // RECENT_MAX values later); dense only past the limit.
            match h.counts {
                Counts::Sparse(ref v) => assert!(v.len() <= SPARSE_MAX_BUCKETS && h.recent.len() < RECENT_MAX, "n = {n}"),
                Counts::Dense(_) => assert!(n > SPARSE_MAX_BUCKETS && h.recent.is_empty(), "n = {n}"),
            }
        }
    }

    #[test]
    fn merged_histograms_equal_one_that_recorded_everything() {
        // Split a sample over histograms of different sizes (some stay sparse, some go dense)
        // and merge them in two orders: the same summary and CDF as one histogram of it all.
        let mut x: u64 = 7;
        let values: Vec<Nanos> = (0..60_000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                1 + (x >> 20) % 10u64.pow(1 + (x >> 60) as u32 % 9)
            })
            .collect();
        let mut whole = LatencyHistogram::default();
        values.iter().for_each(|&v| whole.record(v));
        let cuts = [0, 10, 300, 5_000, 20_000, 60_000];
        let parts: Vec<LatencyHistogram> = cuts
            .windows(2)
            .map(|w| {
                let mut h = LatencyHistogram::default();
                values[w[0]..w[1]].iter().for_each(|&v| h.record(v));
                h
            })
            .collect();
        for order in [vec![0, 1, 2, 3, 4], vec![4, 2, 0, 3, 1]] {
            let mut merged = LatencyHistogram::default();
            order.iter().for_each(|&i| merged.merge(&parts[i]));
            assert_eq!(merged.count(), whole.count());
            assert_eq!(merged.summary_ms(), whole.summary_ms());
            assert_eq!(merged.quantiles_ms(), whole.quantiles_ms());
        }
        let mut empty = LatencyHistogram::default();
        empty.merge(&LatencyHistogram::default());
        assert_eq!(empty.summary_ms(), LatencyMs::default());
    }

    #[test]
    fn a_few_hundred_requests_cost_kilobytes() {
        let mut h = LatencyHistogram::default();
        (0..300u64).for_each(|i| h.record(2_000_000 + i * 37_123));
        assert!(matches!(h.counts, Counts::Sparse(_)));
        assert!(h.buckets_held() <= 300, "{}", h.buckets_held());
        assert_eq!(LatencyHistogram::default().buckets_held(), 0, "an empty distribution holds nothing");
    }
}
