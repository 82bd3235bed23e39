//! Run summaries: throughput, both utilizations, response-time percentiles, seeks, per process.

use super::RequestRecord;
use crate::request::SECTOR_BYTES;
use crate::sim::engine::InvariantReport;
use crate::time::{ns_to_ms, ns_to_s, Nanos};
use crate::workload::ProcessInfo;
use serde::Serialize;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LatencyMs {
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl LatencyMs {
    /// From unsorted nanosecond samples (reordered in place). Percentiles are nearest-rank,
    /// found by selection (linear time) rather than a full sort.
    pub fn from_ns(samples: &mut [Nanos]) -> LatencyMs {
        if samples.is_empty() {
            return LatencyMs::default();
        }
        let n = samples.len();
        let sum: u128 = samples.iter().map(|&x| x as u128).sum();
        let max = *samples.iter().max().unwrap();
        // Select from the highest rank down so each selection works on a shorter prefix.
        let mut rank = |p: f64, upto: usize| {
            let k = (((p * n as f64).ceil() as usize).clamp(1, n) - 1).min(upto.saturating_sub(1));
            samples[..upto].select_nth_unstable(k);
            (samples[k], k + 1)
        };
        let (p99, u) = rank(0.99, n);
        let (p95, u) = rank(0.95, u);
        let (p50, _) = rank(0.50, u);
        LatencyMs { mean: sum as f64 / n as f64 / 1e6, p50: ns_to_ms(p50), p95: ns_to_ms(p95), p99: ns_to_ms(p99), max: ns_to_ms(max) }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SeekStats {
    pub mean_cylinders: f64,
    pub mean_ms: f64,
    /// Fraction of media accesses that needed no seek.
    pub zero_fraction: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ProcessSummary {
    pub pid: u32,
    pub name: String,
    pub requests: u64,
    pub bytes: u64,
    pub throughput_mb_s: f64,
    pub response_ms: LatencyMs,
    /// Disk time its requests took (dispatch to completion): the unit of proportional shares.
    pub disk_time_s: f64,
    /// Its last completion (seconds from the start): when a finite job finished.
    pub last_completion_s: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunSummary {
    /// The label of this run (the scheduler's label, or its name).
    pub scheduler: String,
    pub scheduler_name: String,
    pub device: String,
    pub workload: String,
    pub seed: u64,
    pub requests: u64,
    pub bytes: u64,
    pub elapsed_s: f64,
    /// MB = 10^6 bytes.
    pub throughput_mb_s: f64,
    pub iops: f64,
    /// Fraction of time the disk was busy with a request (Iyer & Druschel's sense).
    pub utilization_busy: f64,
    /// Fraction of time the disk was transferring data (Seltzer's sense).
    pub utilization_transfer: f64,
    pub response_ms: LatencyMs,
    /// Time from dispatch to completion ("I/O time").
    pub service_ms: LatencyMs,
    pub seek: SeekStats,
    pub cache_hit_fraction: f64,
    pub processes: Vec<ProcessSummary>,
    pub invariants: InvariantReport,
    /// The scheduler's own event counts (anticipation: waits, waits_rewarded, waits_timed_out).
    pub scheduler_counters: std::collections::BTreeMap<String, u64>,
}

/// Summarizes a run. `elapsed_ns` is the run's length (the last completion).
pub fn summarize(records: &[RequestRecord], elapsed_ns: Nanos, processes: &[ProcessInfo], invariants: InvariantReport) -> RunSummary {
    let n = records.len();
    let elapsed_s = ns_to_s(elapsed_ns).max(1e-12);
    // Processes are looked up by pid through a dense table (pids are small integers).
    let max_pid = processes.iter().map(|p| p.pid as usize).max().unwrap_or(0);
    let mut slot_of_pid = vec![usize::MAX; max_pid + 1];
    for (i, p) in processes.iter().enumerate() {
        slot_of_pid[p.pid as usize] = i;
    }
    // Per process: bytes, response times, disk time, last completion.
    let mut per_process: Vec<(u64, Vec<Nanos>, u128, Nanos)> = vec![(0, Vec::new(), 0, 0); processes.len()];
    let (mut bytes, mut busy, mut transfer) = (0u64, 0u128, 0u128);
    let (mut media, mut seek_cyl, mut seek_ns, mut zero_seeks, mut hits) = (0u64, 0u64, 0u128, 0u64, 0u64);
    let mut response = Vec::with_capacity(n);
    let mut service = Vec::with_capacity(n);
    for r in records {
        let b = r.size_sectors as u64 * SECTOR_BYTES;
        bytes += b;
        busy += r.service_ns() as u128;
        transfer += r.transfer_ns as u128;
        response.push(r.response_ns());
        service.push(r.service_ns());
        if r.cache_hit {
            hits += 1;
        } else {
            media += 1;
            seek_cyl += r.seek_cylinders as u64;
            seek_ns += r.seek_ns as u128;
            zero_seeks += (r.seek_cylinders == 0) as u64;
        }
        if let Some(&i) = slot_of_pid.get(r.pid as usize) {
            if i != usize::MAX {
                let p = &mut per_process[i];
                p.0 += b;
                p.1.push(r.response_ns());
                p.2 += r.service_ns() as u128;
                p.3 = p.3.max(r.complete_ns);
            }
        }
    }
    let m = media.max(1) as f64;
    let seek = SeekStats { mean_cylinders: seek_cyl as f64 / m, mean_ms: seek_ns as f64 / 1e6 / m, zero_fraction: zero_seeks as f64 / m };
    let procs = processes
        .iter()
        .zip(per_process)
        .map(|(p, (b, mut resp, disk_ns, last_ns))| ProcessSummary {
            pid: p.pid,
            name: p.name.clone(),
            requests: resp.len() as u64,
            bytes: b,
            throughput_mb_s: b as f64 / 1e6 / elapsed_s,
            response_ms: LatencyMs::from_ns(&mut resp),
            disk_time_s: disk_ns as f64 / 1e9,
            last_completion_s: ns_to_s(last_ns),
        })
        .collect();
    RunSummary {
        requests: n as u64,
        bytes,
        elapsed_s,
        throughput_mb_s: bytes as f64 / 1e6 / elapsed_s,
        iops: n as f64 / elapsed_s,
        utilization_busy: busy as f64 / elapsed_ns.max(1) as f64,
        utilization_transfer: transfer as f64 / elapsed_ns.max(1) as f64,
        response_ms: LatencyMs::from_ns(&mut response),
        service_ms: LatencyMs::from_ns(&mut service),
        seek,
        cache_hit_fraction: hits as f64 / n.max(1) as f64,
        processes: procs,
        invariants,
        ..RunSummary::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<Nanos> = (1..=100).map(|i| i * 1_000_000).collect();
        let l = LatencyMs::from_ns(&mut v);
        assert_eq!(l.p50, 50.0);
        assert_eq!(l.p95, 95.0);
        assert_eq!(l.p99, 99.0);
        assert_eq!(l.max, 100.0);
        assert_eq!(l.mean, 50.5);
    }
}
