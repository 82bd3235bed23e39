//! Per-request records and the summaries computed from them.

pub mod summary;

use crate::device::Service;
use crate::request::{Op, Request};
use crate::time::Nanos;

pub use summary::{summarize, LatencyMs, ProcessSummary, RunSummary, SeekStats};

/// One completed request: the row of the per-request table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestRecord {
    pub id: u64,
    pub pid: u32,
    pub group: u32,
    pub op: Op,
    pub sync: bool,
    pub start_sector: u64,
    pub size_sectors: u32,
    pub issue_ns: Nanos,
    pub dispatch_ns: Nanos,
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

    pub fn service_ns(&self) -> Nanos {
        self.complete_ns - self.dispatch_ns
    }
}

#[derive(Default)]
pub struct Collector {
    records: Vec<RequestRecord>,
}

impl Collector {
    pub fn record(&mut self, req: &Request, s: &Service) {
        self.records.push(RequestRecord {
            id: req.id,
            pid: req.principal.pid,
            group: req.principal.group,
            op: req.op,
            sync: req.sync,
            start_sector: req.start_sector,
            size_sectors: req.size_sectors,
            issue_ns: req.issue_ns,
            dispatch_ns: s.dispatch_ns,
            complete_ns: s.completion_ns,
            seek_cylinders: s.seek_cylinders,
            seek_ns: s.seek_ns,
            rotation_ns: s.rotation_ns,
            transfer_ns: s.transfer_ns,
            cache_hit: s.cache_hit,
        });
    }

    pub fn into_records(self) -> Vec<RequestRecord> {
        self.records
    }
}
