//! The run summary computed as requests complete, in memory that does not grow with the run's
//! length: sums and counts, latency histograms (see histogram.rs), and one small accumulator
//! per process.

use super::histogram::LatencyHistogram;
use super::invariants::InvariantReport;
use super::summary::{ProcessSummary, RunSummary, SeekStats, ServiceParts};
use super::RequestRecord;
use crate::pid_map::PidMap;
use crate::request::{Op, SECTOR_BYTES};

fn op_index(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Flush => 2,
        Op::Discard => 3,
    }
}
use crate::time::{ns_to_s, Nanos};
use crate::workload::ProcessInfo;

#[derive(Clone, Debug, Default)]
pub struct ProcessAccumulator {
    pub bytes: u64,
    pub response: LatencyHistogram,
    /// Waiting for a request structure (its process asleep in the block layer).
    pub request_wait: LatencyHistogram,
    /// Disk time (mechanism start to completion) of its requests.
    pub disk_ns: u128,
    pub last_completion_ns: Nanos,
}

#[derive(Clone, Debug, Default)]
pub struct RunAccumulator {
    requests: u64,
    bytes: u64,
    busy_ns: u128,
    transfer_ns: u128,
    /// Over every request (cache hits count as zero), for `RunSummary::per_request_ms`.
    seek_all_ns: u128,
    rotation_ns: u128,
    media: u64,
    seek_cylinders: u64,
    seek_ns: u128,
    zero_seeks: u64,
    cache_hits: u64,
    // The run's response and request-wait distributions are its processes' merged when the run
    // finishes (every request is some process's): two histogram updates per request fewer.
    service: LatencyHistogram,
    scheduler_wait: LatencyHistogram,
    bios: u64,
    /// Requests by `Op` (read, write, flush, discard), reported when the run had a discard.
    by_op: [u64; 4],
    processes: PidMap<Box<ProcessAccumulator>>,
}

impl RunAccumulator {
    pub fn record(&mut self, r: &RequestRecord) {
        // A discard moves no data: its range is not bytes transferred (nor throughput).
        let bytes = if r.op.moves_data() { r.size_sectors as u64 * SECTOR_BYTES } else { 0 };
        let (response, service, device) = (r.response_ns(), r.service_ns(), r.device_ns());
        self.requests += 1;
        self.by_op[op_index(r.op)] += 1;
        self.bytes += bytes;
        self.busy_ns += device as u128;
        self.transfer_ns += r.transfer_ns as u128;
        self.seek_all_ns += r.seek_ns as u128;
        self.rotation_ns += r.rotation_ns as u128;
        if r.cache_hit {
            self.cache_hits += 1;
        } else {
            self.media += 1;
            self.seek_cylinders += r.seek_cylinders as u64;
            self.seek_ns += r.seek_ns as u128;
            self.zero_seeks += (r.seek_cylinders == 0) as u64;
        }
        self.service.record(service);
        self.scheduler_wait.record(r.scheduler_ns());
        self.bios += r.bios as u64;
        let p = self.process_mut(r.pid);
        p.bytes += bytes;
        p.response.record(response);
        p.request_wait.record(r.request_wait_ns());
        p.disk_ns += device as u128;
        p.last_completion_ns = p.last_completion_ns.max(r.complete_ns);
    }

    fn process_mut(&mut self, pid: u32) -> &mut ProcessAccumulator {
        self.processes.get_or_insert_with(pid, Default::default)
    }

    pub fn process(&self, pid: u32) -> Option<&ProcessAccumulator> {
        self.processes.get(pid).map(|p| &**p)
    }

    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// The summary of a run that started at `start_ns` and ended at `end_ns` (its last
    /// completion); rates are over that span, processes' last completions counted from the start.
    pub fn finish(&self, start_ns: Nanos, end_ns: Nanos, processes: &[ProcessInfo], invariants: InvariantReport) -> RunSummary {
        let elapsed_ns = end_ns.saturating_sub(start_ns);
        let elapsed_s = ns_to_s(elapsed_ns).max(1e-12);
        let media = self.media.max(1) as f64;
        let seek = SeekStats {
            mean_cylinders: self.seek_cylinders as f64 / media,
            mean_ms: self.seek_ns as f64 / 1e6 / media,
            zero_fraction: self.zero_seeks as f64 / media,
        };
        let (mut response, mut request_wait) = (LatencyHistogram::default(), LatencyHistogram::default());
        for p in self.processes.values() {
            response.merge(&p.response);
            request_wait.merge(&p.request_wait);
        }
        let empty = ProcessAccumulator::default();
        let procs = processes
            .iter()
            .map(|info| {
                let p = self.process(info.pid).unwrap_or(&empty);
                let (response_ms, response_cdf_ms) = p.response.summary_and_quantiles_ms();
                ProcessSummary {
                    pid: info.pid,
                    name: info.name.clone(),
                    requests: p.response.count(),
                    bytes: p.bytes,
                    throughput_mb_s: p.bytes as f64 / 1e6 / elapsed_s,
                    response_ms,
                    response_cdf_ms,
                    request_wait_ms: p.request_wait.summary_ms(),
                    disk_time_s: p.disk_ns as f64 / 1e9,
                    last_completion_s: ns_to_s(p.last_completion_ns.saturating_sub(start_ns)),
                }
            })
            .collect();
        let (response_ms, response_cdf_ms) = response.summary_and_quantiles_ms();
        RunSummary {
            requests: self.requests,
            bytes: self.bytes,
            elapsed_s,
            throughput_mb_s: self.bytes as f64 / 1e6 / elapsed_s,
            iops: self.requests as f64 / elapsed_s,
            utilization_busy: self.busy_ns as f64 / elapsed_ns.max(1) as f64,
            utilization_transfer: self.transfer_ns as f64 / elapsed_ns.max(1) as f64,
            response_ms,
            service_ms: self.service.summary_ms(),
            request_wait_ms: request_wait.summary_ms(),
            scheduler_ms: self.scheduler_wait.summary_ms(),
            bios: self.bios,
            requests_by_op: (self.by_op[op_index(Op::Discard)] > 0).then(|| {
                [Op::Read, Op::Write, Op::Flush, Op::Discard]
                    .into_iter()
                    .map(|op| (op.as_str().to_string(), self.by_op[op_index(op)]))
                    .collect()
            }),
            response_cdf_ms,
            per_request_ms: {
                let n = self.requests.max(1) as f64 * 1e6;
                ServiceParts {
                    seek: self.seek_all_ns as f64 / n,
                    rotation: self.rotation_ns as f64 / n,
                    transfer: self.transfer_ns as f64 / n,
                }
            },
            seek,
            cache_hit_fraction: self.cache_hits as f64 / self.requests.max(1) as f64,
            processes: procs,
            invariants,
            ..RunSummary::default()
        }
    }
}
