//! Run summaries: throughput, both utilizations, response-time percentiles, seeks, per process.

use super::invariants::InvariantReport;
use super::RequestRecord;
use crate::device::flash::ftl::FtlCounters;
use crate::time::{ns_to_ms, Nanos};
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

/// Mean seek, rotation and transfer time per request (cache hits count as zero).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ServiceParts {
    pub seek: f64,
    pub rotation: f64,
    pub transfer: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ProcessSummary {
    pub pid: u32,
    pub name: String,
    pub requests: u64,
    pub bytes: u64,
    pub throughput_mb_s: f64,
    pub response_ms: LatencyMs,
    /// Its response-time distribution at `histogram::CDF_QUANTILES` (ms).
    pub response_cdf_ms: Vec<f64>,
    /// Time its bios waited for a request structure (the block layer's request limit).
    pub request_wait_ms: LatencyMs,
    /// Disk time its requests took (mechanism start to completion): the unit of proportional shares.
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
    /// Bytes read and written (a discard's range moves no data: not counted, nor in throughput).
    pub bytes: u64,
    /// Requests by operation (read, write, flush, discard); given when the run had a discard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests_by_op: Option<std::collections::BTreeMap<String, u64>>,
    pub elapsed_s: f64,
    /// MB = 10^6 bytes.
    pub throughput_mb_s: f64,
    pub iops: f64,
    /// Fraction of time the disk's mechanism was busy with a request (Iyer & Druschel's sense).
    pub utilization_busy: f64,
    /// Fraction of time the disk was transferring data (Seltzer's sense).
    pub utilization_transfer: f64,
    /// Percentiles within 0.05% of the exact nearest-rank values (metrics/histogram.rs); mean
    /// and max exact.
    pub response_ms: LatencyMs,
    /// The response-time distribution in ms at `histogram::CDF_QUANTILES` (for CDF plots).
    pub response_cdf_ms: Vec<f64>,
    /// Time from dispatch to completion ("I/O time"; with a queueing drive it includes the
    /// wait inside the drive).
    pub service_ms: LatencyMs,
    /// From a request's first bio to its request structure (the process slept for one, or
    /// its bios were plugged): the block layer's part of the response time.
    pub request_wait_ms: LatencyMs,
    /// From entering the scheduler to dispatch: the scheduler's part.
    pub scheduler_ms: LatencyMs,
    /// Bios the completed requests carried (more than `requests` when bios merged; the parts
    /// of a bio split at max_sectors count one each; `block.bios` counts bios as submitted).
    pub bios: u64,
    /// The block layer's counts (merges, waits), when the scenario has a block layer.
    pub block: Option<crate::block::BlockCounters>,
    /// Bytes the application's reads returned (cache hits included), for workloads that count
    /// them (applications and hosts): the application-observed throughput is this over
    /// `elapsed_s`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_served: Option<u64>,
    /// The host's report (page cache, writeback, tasks), when the scenario has a `[host]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<crate::host::report::HostReport>,
    /// `adaptive`: the selection table it measured on this device before the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selection: Option<crate::sched::adaptive::SelectionTable>,
    /// A trace replay's counts (records read, replayed, skipped, out of order, folded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_replay: Option<crate::workload::trace_replay::ReplayCounts>,
    pub seek: SeekStats,
    /// Mean seek, rotation and transfer per request, in ms (over every request).
    pub per_request_ms: ServiceParts,
    pub cache_hit_fraction: f64,
    pub processes: Vec<ProcessSummary>,
    pub invariants: InvariantReport,
    /// The scheduler's own event counts (anticipation: waits, waits_rewarded, waits_timed_out).
    pub scheduler_counters: std::collections::BTreeMap<String, u64>,
    /// Sentences for the user: a scheduler's own rule that switched off its defining behaviour
    /// in this run (`sched::notices`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// Why the run ended before its workload (cancelled by the user), if it did.
    pub stopped: Option<String>,
    /// A flash drive's FTL during the run (writes, GC, write amplification); absent for disks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flash: Option<FlashReport>,
    /// blk-mq and NVMe queue pairs, when the scenario asks for them: the shape and the host
    /// CPU time the scheduler was charged; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_queues: Option<HostQueuesReport>,
}

/// blk-mq's shape in a run and the scheduler's CPU time (block/mq/cpu_cost.rs).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HostQueuesReport {
    pub cpus: u32,
    pub nr_hw_queues: u32,
    pub tags_per_hw_queue: u32,
    /// The scheduler's CPU time per request (us) and whether it runs under one device lock.
    pub sched_cost_us: f64,
    pub sched_serialized: bool,
    /// "rr" or "wrr" on an NVMe drive's queue pairs; absent for a single command queue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arbitration: Option<String>,
    /// CPU time charged to the scheduler over the run (ms, summed over CPUs).
    pub sched_cpu_ms: f64,
    /// Time requests waited for a CPU or the scheduler's lock before their CPU work (ms, summed).
    pub sched_wait_ms: f64,
    /// The ceiling the CPU cost sets: cpus / cost, or 1 / cost under a lock (None: no cost).
    pub cpu_iops_ceiling: Option<f64>,
}

/// What a flash drive's FTL did in a run (after preconditioning), summed over an array's drives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct FlashReport {
    /// What the FTL programmed, erased and trimmed in the run (flattened: its fields are the
    /// report's).
    #[serde(flatten)]
    pub counters: FtlCounters,
    /// (host + GC + padding units programmed) / host units.
    pub write_amplification: f64,
    /// The same over preconditioning (an aged drive's steady state).
    pub precondition_write_amplification: f64,
}

impl FlashReport {
    /// The report of the run's counters `run` and preconditioning's `pre` (each summed over an
    /// array's drives).
    pub fn new(run: FtlCounters, pre: FtlCounters) -> FlashReport {
        FlashReport {
            counters: run,
            write_amplification: run.write_amplification(),
            precondition_write_amplification: pre.write_amplification(),
        }
    }
}

/// Summarizes a run from its records (`elapsed_ns`: the run's length, its last completion).
/// Runs accumulate the same summary as they go (`RunAccumulator`); this is for records at hand.
pub fn summarize(records: &[RequestRecord], elapsed_ns: Nanos, processes: &[ProcessInfo], invariants: InvariantReport) -> RunSummary {
    let mut acc = super::RunAccumulator::default();
    records.iter().for_each(|r| acc.record(r));
    acc.finish(0, elapsed_ns, processes, invariants)
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
