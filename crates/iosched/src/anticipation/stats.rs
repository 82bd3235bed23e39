//! Per-process statistics of the anticipation heuristics (Iyer & Druschel 2001, section 3.3):
//! a decayed think-time frequency table giving the median and 95th percentile, a decayed mean
//! of positioning time, and a decayed estimate of seek direction.

use crate::pid_map::PidMap;
use crate::request::{Op, Request};
use crate::time::Nanos;

/// Buckets of the think-time table.
pub const THINK_BUCKETS: usize = 30;
/// Width of one bucket: 30 x 500 us covers 0-15 ms.
pub const THINK_BUCKET_NS: Nanos = 500_000;
/// Every bucket is multiplied by this on each new sample of the process.
pub const THINK_DECAY: f64 = 0.9;
/// Weight kept by a decayed mean per sample: forgets 95% of the old value after ten samples
/// (0.05^(1/10)).
pub fn mean_keep() -> f64 {
    0.05f64.powf(0.1)
}

/// A decayed frequency table of think times over 0-15 ms; longer samples count in the last
/// bucket, as in the paper's table (a slow thinker then has a median near 15 ms, and the cost
/// side of the heuristic stops waiting for it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThinkTimeTable {
    buckets: [f64; THINK_BUCKETS],
}

impl ThinkTimeTable {
    pub fn record(&mut self, think_ns: Nanos) {
        for b in &mut self.buckets {
            *b *= THINK_DECAY;
        }
        let i = (think_ns / THINK_BUCKET_NS).min(THINK_BUCKETS as Nanos - 1) as usize;
        self.buckets[i] += 1.0;
    }

    pub fn total(&self) -> f64 {
        self.buckets.iter().sum::<f64>()
    }

    /// The upper edge of the first bucket at which the cumulative weight reaches fraction `q`
    /// of the total (at most 15 ms); `None` if there are no samples.
    pub fn percentile_ns(&self, q: f64) -> Option<Nanos> {
        let total = self.total();
        if total <= 0.0 {
            return None;
        }
        let mut cumulative = 0.0;
        for (i, b) in self.buckets.iter().enumerate() {
            cumulative += b;
            if cumulative >= q * total * (1.0 - 1e-12) {
                return Some((i as Nanos + 1) * THINK_BUCKET_NS);
            }
        }
        Some(THINK_BUCKETS as Nanos * THINK_BUCKET_NS)
    }

    pub fn median_ns(&self) -> Option<Nanos> {
        self.percentile_ns(0.5)
    }

    pub fn p95_ns(&self) -> Option<Nanos> {
        self.percentile_ns(0.95)
    }
}

/// An exponentially decayed mean: `mean = keep * mean + (1 - keep) * x`, seeded by the first sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DecayedMean {
    value: Option<f64>,
}

impl DecayedMean {
    pub fn record(&mut self, x: f64) {
        let k = mean_keep();
        self.value = Some(match self.value {
            Some(m) => k * m + (1.0 - k) * x,
            None => x,
        });
    }

    pub fn get(&self) -> Option<f64> {
        self.value
    }
}

/// What the heuristics know about one process.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcessStats {
    pub think: ThinkTimeTable,
    /// Measured positioning time of its requests (ns).
    pub positioning_ns: DecayedMean,
    /// Probability that its next request seeks backward from its previous one (0..1).
    pub backward: DecayedMean,
    /// Requests of this process queued or in flight.
    pub outstanding: u32,
    pub last_completion_ns: Option<Nanos>,
    /// End sector of its previous request (for seek direction).
    pub last_end_sector: Option<u64>,
    /// Ids of outstanding continuation parts of a split read (they record no statistics).
    continuation_parts: Vec<u64>,
}

/// Statistics of all processes, fed by the scheduler's add/completed events.
#[derive(Clone, Debug, Default)]
pub struct StatsTable {
    by_pid: PidMap<ProcessStats>,
}

impl StatsTable {
    pub fn get(&self, pid: u32) -> Option<&ProcessStats> {
        self.by_pid.get(pid)
    }

    /// A request arrived. Reads feed the think-time table (the paper collects statistics on all
    /// disk reads); a read from a process that already has one outstanding counts as
    /// asynchronous (think time 0). The parts of one large read that the file system split
    /// (flagged `SPLIT`) count as one request: only the first records a think time.
    pub fn on_arrival(&mut self, req: &Request, now: Nanos) {
        let s = self.by_pid.get_or_insert_with(req.principal.pid, Default::default);
        let continues_split = req.is_split() && s.outstanding > 0;
        if continues_split {
            // Part of the same read: no think time, seek direction or positioning of its own.
            s.continuation_parts.push(req.id);
            s.last_end_sector = Some(req.end_sector());
            s.outstanding += 1;
            return;
        }
        if req.op == Op::Read {
            let think = if s.outstanding > 0 { Some(0) } else { s.last_completion_ns.map(|c| now.saturating_sub(c)) };
            if let Some(t) = think {
                s.think.record(t);
            }
        }
        if let Some(prev) = s.last_end_sector {
            s.backward.record(if req.start_sector < prev { 1.0 } else { 0.0 });
        }
        s.last_end_sector = Some(req.end_sector());
        s.outstanding += 1;
    }

    pub fn on_completion(&mut self, req: &Request, positioning_ns: Nanos, now: Nanos) {
        let s = self.by_pid.get_or_insert_with(req.principal.pid, Default::default);
        s.outstanding = s.outstanding.saturating_sub(1);
        s.last_completion_ns = Some(now);
        if let Some(i) = s.continuation_parts.iter().position(|&id| id == req.id) {
            s.continuation_parts.swap_remove(i);
        } else {
            s.positioning_ns.record(positioning_ns as f64);
        }
    }

    /// A queued request was merged into another and will not complete on its own.
    pub fn on_merged_away(&mut self, req: &Request) {
        if let Some(s) = self.by_pid.get_mut(req.principal.pid) {
            s.outstanding = s.outstanding.saturating_sub(1);
            if let Some(i) = s.continuation_parts.iter().position(|&id| id == req.id) {
                s.continuation_parts.swap_remove(i);
            }
        }
    }

    pub fn forget(&mut self, pid: u32) {
        self.by_pid.remove(pid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Direct computation: weight of sample k (of n, oldest first) is 0.9^(n-1-k).
    fn direct_percentile(samples_ns: &[Nanos], q: f64) -> Option<Nanos> {
        let n = samples_ns.len();
        let mut weights = vec![0.0; THINK_BUCKETS];
        for (k, &s) in samples_ns.iter().enumerate() {
            let w = THINK_DECAY.powi((n - 1 - k) as i32);
            let i = ((s / THINK_BUCKET_NS) as usize).min(THINK_BUCKETS - 1);
            weights[i] += w;
        }
        let total: f64 = weights.iter().sum();
        let mut c = 0.0;
        for (i, w) in weights.iter().enumerate() {
            c += w;
            if c >= q * total - 1e-9 {
                return Some((i as Nanos + 1) * THINK_BUCKET_NS);
            }
        }
        None
    }

    #[test]
    fn percentiles_match_a_direct_computation() {
        let samples: Vec<Nanos> = [200, 300, 1200, 250, 700, 9000, 400, 350, 14_900, 600, 20_000, 450].iter().map(|us| us * 1000).collect();
        let mut t = ThinkTimeTable::default();
        for (i, &s) in samples.iter().enumerate() {
            t.record(s);
            for q in [0.5, 0.95] {
                assert_eq!(t.percentile_ns(q), direct_percentile(&samples[..=i], q), "after {} samples, q={q}", i + 1);
            }
        }
        // By hand: the six sub-500 us samples weigh 3.34 of 7.18 (decayed), just under half, so
        // the median is the second bucket's upper edge; the 95th percentile is in the last
        // bucket, where the 14.9 ms and 20 ms samples count.
        assert_eq!(t.median_ns(), Some(1_000_000));
        assert_eq!(t.p95_ns(), Some(15_000_000));
    }

    #[test]
    fn long_thinkers_count_in_the_last_bucket() {
        let mut t = ThinkTimeTable::default();
        for _ in 0..10 {
            t.record(40_000_000);
        }
        assert_eq!(t.median_ns(), Some(15_000_000));
        assert_eq!(ThinkTimeTable::default().median_ns(), None);
    }

    #[test]
    fn split_parts_of_one_read_record_one_think_time() {
        use crate::request::Principal;
        let part = |id: u64, sector: u64, now: Nanos| Request {
            id,
            principal: Principal { pid: 1, group: 1 },
            op: Op::Read,
            sync: true,
            start_sector: sector,
            size_sectors: 256,
            issue_ns: now,
            flags: Request::SPLIT,
            prio: Default::default(),
        };
        let mut t = StatsTable::default();
        // A first read, completed at 1 ms; then a 1 MiB read split in 4 parts at 10 ms.
        t.on_arrival(&part(0, 0, 0), 0);
        t.on_completion(&part(0, 0, 0), 0, 1_000_000);
        for i in 0..4 {
            t.on_arrival(&part(1 + i, 256 * (1 + i), 10_000_000), 10_000_000);
        }
        // One sample: 9 ms (bucket 18, upper edge 9.5 ms), not three extra zeros.
        assert_eq!(t.get(1).unwrap().think.median_ns(), Some(9_500_000));
        assert!((t.get(1).unwrap().think.total() - 1.0).abs() < 1e-12);
        // Only the first part's positioning counts: 10 ms, then 0 for the rest ignored.
        let before = t.get(1).unwrap().positioning_ns.get().unwrap();
        t.on_completion(&part(1, 256, 10_000_000), 10_000_000, 20_000_000);
        for i in 1..4 {
            t.on_completion(&part(1 + i, 256 * (1 + i), 10_000_000), 0, 21_000_000);
        }
        let k = mean_keep();
        let after = t.get(1).unwrap().positioning_ns.get().unwrap();
        assert!((after - (k * before + (1.0 - k) * 10_000_000.0)).abs() < 1e-6, "{after}");
        assert_eq!(t.get(1).unwrap().outstanding, 0);
    }

    #[test]
    fn decayed_mean_forgets_95_percent_in_ten_samples() {
        let mut m = DecayedMean::default();
        m.record(100.0);
        for _ in 0..10 {
            m.record(0.0);
        }
        assert!((m.get().unwrap() - 5.0).abs() < 1e-9);
    }
}
