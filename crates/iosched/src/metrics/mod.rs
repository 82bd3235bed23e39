//! Per-request records and the summaries computed from them. A run's summary is accumulated as
//! requests complete (accumulator.rs), in constant memory; per-request records are kept only when
//! asked for, in memory or streamed to a sink (a CSV file, say) as they complete.

pub mod accumulator;
pub mod csv;
mod hdr_buckets;
pub mod histogram;
mod index_sort;
pub mod invariants;
pub mod summary;

use crate::device::Service;
use crate::request::{Op, Request};
use crate::time::Nanos;

pub use accumulator::RunAccumulator;
pub use histogram::LatencyHistogram;
pub use invariants::InvariantReport;
pub use summary::{summarize, LatencyMs, ProcessSummary, RunSummary, SeekStats, ServiceParts};

/// One completed request: the row of the per-request table. Times: `issue_ns` its first bio
/// was submitted, `insert_ns` it got a request structure and entered the scheduler (later than
/// issue only if its process slept for a request, or it was plugged), `dispatch_ns` the host
/// sent it to the drive, `start_ns` the mechanism began it (later than dispatch only when the
/// drive queues commands), `complete_ns` it completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestRecord {
    pub id: u64,
    pub pid: u32,
    pub group: u32,
    pub op: Op,
    pub sync: bool,
    pub start_sector: u64,
    pub size_sectors: u32,
    /// Bios the request carried (merged ones: more than 1).
    pub bios: u32,
    pub issue_ns: Nanos,
    pub insert_ns: Nanos,
    pub dispatch_ns: Nanos,
    pub start_ns: Nanos,
    pub complete_ns: Nanos,
    pub seek_cylinders: u32,
    pub seek_ns: Nanos,
    pub rotation_ns: Nanos,
    pub transfer_ns: Nanos,
    pub cache_hit: bool,
}

impl RequestRecord {
    pub fn response_ns(&self) -> Nanos {
        self.complete_ns - self.issue_ns
    }

    /// From dispatch to completion: the I/O time the host sees (Linux's D2C).
    pub fn service_ns(&self) -> Nanos {
        self.complete_ns - self.dispatch_ns
    }

    /// The mechanism's time on it (start to completion); equals `service_ns` at drive depth 1.
    pub fn device_ns(&self) -> Nanos {
        self.complete_ns - self.start_ns
    }

    /// Waiting for a request structure (its process slept) or in a plug.
    pub fn request_wait_ns(&self) -> Nanos {
        self.insert_ns - self.issue_ns
    }

    /// In the scheduler's queue.
    pub fn scheduler_ns(&self) -> Nanos {
        self.dispatch_ns - self.insert_ns
    }
}

impl RequestRecord {
    /// The record of `req`, served as `s` (whose `dispatch_ns` is when the mechanism began it),
    /// with the times the driver knows (`t`).
    pub fn new(req: &Request, s: &Service, t: RecordTimes) -> RequestRecord {
        RequestRecord {
            id: req.id,
            pid: req.principal.pid,
            group: req.principal.group,
            op: req.op,
            sync: req.sync,
            start_sector: req.start_sector,
            size_sectors: req.size_sectors,
            bios: t.bios,
            issue_ns: req.issue_ns,
            insert_ns: t.insert_ns,
            dispatch_ns: t.dispatch_ns,
            start_ns: s.dispatch_ns,
            complete_ns: s.completion_ns,
            seek_cylinders: s.seek_cylinders,
            seek_ns: s.seek_ns,
            rotation_ns: s.rotation_ns,
            transfer_ns: s.transfer_ns,
            cache_hit: s.cache_hit,
        }
    }
}

/// Times the engine knows about a completed request beyond the device's `Service`.
#[derive(Clone, Copy, Debug)]
pub struct RecordTimes {
    pub insert_ns: Nanos,
    /// When the host dispatched it to the drive.
    pub dispatch_ns: Nanos,
    pub bios: u32,
}

/// Where per-request records go as they complete (a file writer, a channel, ...).
pub trait RecordSink {
    /// A new run begins (one per scheduler of a scenario): `index` in scenario order, `label`.
    fn begin_run(&mut self, _index: usize, _label: &str) {}
    fn record(&mut self, r: &RequestRecord);
}

/// What a run keeps of each completion: always the summary's accumulator; the records
/// themselves only when asked (`keep_records`), and each one to `sink` when given.
#[derive(Default)]
pub struct Collector<'a> {
    pub accumulator: RunAccumulator,
    records: Option<Vec<RequestRecord>>,
    sink: Option<&'a mut dyn RecordSink>,
}

impl<'a> Collector<'a> {
    pub fn new(keep_records: bool, sink: Option<&'a mut dyn RecordSink>) -> Self {
        Collector { accumulator: RunAccumulator::default(), records: keep_records.then(Vec::new), sink }
    }

    pub fn record(&mut self, req: &Request, s: &Service, t: RecordTimes) {
        let r = RequestRecord::new(req, s, t);
        self.accumulator.record(&r);
        if let Some(v) = &mut self.records {
            v.push(r);
        }
        if let Some(sink) = &mut self.sink {
            sink.record(&r);
        }
    }

    /// The accumulator and the kept records (empty unless `keep_records`).
    pub fn finish(self) -> (RunAccumulator, Vec<RequestRecord>) {
        (self.accumulator, self.records.unwrap_or_default())
    }
}
