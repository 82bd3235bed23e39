//! Requests outstanding over a trace's time, from each request's arrival to its completion, fed
//! in arrival order: the time-weighted mean, the maximum, and a series of at most
//! [`MAX_POINTS`] time buckets for a plot. Memory: the completions still pending (at most the
//! maximum depth) and the buckets; the bucket width doubles (neighbours merged) whenever the
//! trace outgrows the series, so its length need not be known in advance.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The most points the series keeps (it holds between half and all of them once it has grown).
pub const MAX_POINTS: usize = 1000;
/// The first bucket width: 1 µs (doubled as often as needed: 60 doublings reach 36 years).
const FIRST_WIDTH_NS: u64 = 1_000;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Bucket {
    /// Depth integrated over the bucket's time (requests x ns).
    area: u128,
    /// The highest depth reached in the bucket.
    max: u64,
}

#[derive(Clone, Debug)]
struct Series {
    origin_ns: u64,
    width_ns: u64,
    buckets: Vec<Bucket>,
}

impl Series {
    /// The bucket holding time `t` (>= origin), the series coarsened until it fits.
    fn index(&mut self, t: u64) -> usize {
        loop {
            let i = ((t - self.origin_ns) / self.width_ns) as usize;
            if i < MAX_POINTS {
                if i >= self.buckets.len() {
                    self.buckets.resize(i + 1, Bucket::default());
                }
                return i;
            }
            // Twice as wide: bucket k of the new series is buckets 2k and 2k+1 of the old.
            let merged = self
                .buckets
                .chunks(2)
                .map(|p| Bucket { area: p.iter().map(|b| b.area).sum(), max: p.iter().map(|b| b.max).max().unwrap_or(0) })
                .collect();
            self.buckets = merged;
            self.width_ns = self.width_ns.saturating_mul(2);
        }
    }

    /// `depth` held over [a, b).
    fn span(&mut self, mut a: u64, b: u64, depth: u64) {
        if depth == 0 {
            return;
        }
        while a < b {
            let i = self.index(a);
            let bucket_end = self.origin_ns.saturating_add((i as u64 + 1).saturating_mul(self.width_ns));
            let end = b.min(bucket_end);
            self.buckets[i].area += depth as u128 * (end - a) as u128;
            self.buckets[i].max = self.buckets[i].max.max(depth);
            a = end;
        }
    }

    fn peak(&mut self, t: u64, depth: u64) {
        let i = self.index(t);
        self.buckets[i].max = self.buckets[i].max.max(depth);
    }
}

/// One point of the series: the bucket starting `t_s` after the first arrival.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DepthPoint {
    pub t_s: f64,
    /// Time-weighted mean depth over the bucket (over its covered part, for the last one).
    pub mean: f64,
    pub max: u64,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DepthSummary {
    /// Requests with a completion time (the only ones counted).
    pub requests: u64,
    /// Mean requests outstanding, weighted by time, from the first arrival to the last completion.
    pub mean: f64,
    pub max: u64,
    pub bucket_s: f64,
    pub series: Vec<DepthPoint>,
}

#[derive(Clone, Debug)]
pub struct QueueDepth {
    pending: BinaryHeap<Reverse<u64>>,
    clock_ns: u64,
    depth: u64,
    max: u64,
    area: u128,
    requests: u64,
    series: Option<Series>,
}

impl Default for QueueDepth {
    fn default() -> Self {
        QueueDepth { pending: BinaryHeap::new(), clock_ns: 0, depth: 0, max: 0, area: 0, requests: 0, series: None }
    }
}

impl QueueDepth {
    /// A request outstanding from `arrival_ns` to `complete_ns`. An arrival earlier than one
    /// already seen (a trace out of time order) counts from the latest time seen; a completion
    /// before its arrival counts as at its arrival.
    pub fn add(&mut self, arrival_ns: u64, complete_ns: u64) {
        if self.series.is_none() {
            self.series = Some(Series { origin_ns: arrival_ns, width_ns: FIRST_WIDTH_NS, buckets: Vec::new() });
            self.clock_ns = arrival_ns;
        }
        let t = arrival_ns.max(self.clock_ns);
        self.advance_to(t);
        self.pending.push(Reverse(complete_ns.max(t)));
        self.depth += 1;
        self.requests += 1;
        self.max = self.max.max(self.depth);
        let depth = self.depth;
        if let Some(s) = self.series.as_mut() {
            s.peak(t, depth);
        }
    }

    /// Completions up to `t` (inclusive: a request completing as the next arrives is not
    /// counted with it), then the clock moved to `t`.
    fn advance_to(&mut self, t: u64) {
        while let Some(&Reverse(c)) = self.pending.peek() {
            if c > t {
                break;
            }
            self.pending.pop();
            self.hold(c);
            self.depth -= 1;
        }
        self.hold(t);
    }

    /// The current depth held from the clock to `t`.
    fn hold(&mut self, t: u64) {
        if t > self.clock_ns {
            self.area += self.depth as u128 * (t - self.clock_ns) as u128;
            if let Some(s) = self.series.as_mut() {
                s.span(self.clock_ns, t, self.depth);
            }
            self.clock_ns = t;
        }
    }

    /// The summary once every pending request has completed; None if no request had a
    /// completion time.
    pub fn summary(&self) -> Option<DepthSummary> {
        let mut q = self.clone();
        let origin = q.series.as_ref()?.origin_ns;
        let last = q.pending.iter().map(|r| r.0).max().unwrap_or(q.clock_ns);
        q.advance_to(last);
        let end = q.clock_ns;
        let s = q.series.as_ref()?;
        let mean = if end > origin { q.area as f64 / (end - origin) as f64 } else { 0.0 };
        let series = s
            .buckets
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let start = origin + i as u64 * s.width_ns;
                let covered = (start.saturating_add(s.width_ns)).min(end).saturating_sub(start);
                let mean = if covered > 0 { b.area as f64 / covered as f64 } else { 0.0 };
                DepthPoint { t_s: (start - origin) as f64 / 1e9, mean, max: b.max }
            })
            .collect();
        Some(DepthSummary { requests: q.requests, mean, max: q.max, bucket_s: s.width_ns as f64 / 1e9, series })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_requests_give_exact_mean_and_max() {
        // [0, 10 µs) and [5 µs, 15 µs): depth 1, 2, 1 for 5 µs each; the mean over 15 µs is 4/3.
        let mut q = QueueDepth::default();
        q.add(0, 10_000);
        q.add(5_000, 15_000);
        let s = q.summary().unwrap();
        assert_eq!((s.requests, s.max), (2, 2));
        assert!((s.mean - 20_000.0 / 15_000.0).abs() < 1e-12);
        // 1 µs buckets: 15 of them; the fifth to ninth hold depth 2.
        assert_eq!(s.bucket_s, 1e-6);
        assert_eq!(s.series.len(), 15);
        assert_eq!(s.series[4].mean, 1.0);
        assert_eq!((s.series[5].mean, s.series[5].max), (2.0, 2));
        assert_eq!(s.series[14].mean, 1.0);
    }

    #[test]
    fn a_completion_at_the_next_arrival_is_not_counted_with_it() {
        let mut q = QueueDepth::default();
        q.add(0, 1_000);
        q.add(1_000, 2_000);
        let s = q.summary().unwrap();
        assert_eq!(s.max, 1);
        assert_eq!(s.mean, 1.0);
    }

    #[test]
    fn the_series_stays_bounded_and_keeps_the_area() {
        // One request at a time, 1 ms each, back to back for 10 s: depth 1 throughout.
        let mut q = QueueDepth::default();
        for i in 0..10_000u64 {
            q.add(i * 1_000_000, (i + 1) * 1_000_000);
        }
        let s = q.summary().unwrap();
        assert!(s.series.len() <= MAX_POINTS && s.series.len() > MAX_POINTS / 2, "{}", s.series.len());
        assert!(s.series.iter().all(|p| p.mean == 1.0 && p.max == 1));
        assert_eq!(s.mean, 1.0);
        let width = s.bucket_s;
        assert!(s.series.len() as f64 * width >= 10.0);
    }

    #[test]
    fn an_arrival_out_of_order_counts_from_the_latest_time_seen() {
        // The second request says it arrived at 0 but comes after one at 10 µs: it is counted
        // from 10 µs, with its completion at 20 µs.
        let mut q = QueueDepth::default();
        q.add(10_000, 30_000);
        q.add(0, 20_000);
        let s = q.summary().unwrap();
        assert_eq!(s.max, 2);
        // Depth 2 over [10, 20 µs), 1 over [20, 30 µs): mean 1.5 over the 20 µs.
        assert_eq!(s.mean, 1.5);
    }

    #[test]
    fn unix_epoch_times_over_days_do_not_overflow() {
        let t0 = 1_700_000_000_000_000_000u64;
        let mut q = QueueDepth::default();
        for i in 0..1000u64 {
            let t = t0 + i * 600_000_000_000; // every 10 minutes for about a week
            q.add(t, t + 1_000_000);
        }
        let s = q.summary().unwrap();
        assert!(s.series.len() <= MAX_POINTS);
        assert_eq!(s.max, 1);
        assert!(s.series.iter().all(|p| p.max <= 1 && p.mean <= 1.0));
    }

    #[test]
    fn no_completions_no_summary() {
        assert!(QueueDepth::default().summary().is_none());
    }
}
