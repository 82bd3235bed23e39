//! The one request stream every trace reader yields: what a block trace says about one request,
//! whatever format it came in.

use crate::request::Op;

/// What a traced request asked the device to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceOp {
    Read,
    Write,
    /// A cache flush (no data; its size is 0).
    Flush,
    /// A discard/trim of its sectors (no data transferred).
    Discard,
}

impl TraceOp {
    pub fn as_str(self) -> &'static str {
        match self {
            TraceOp::Read => "read",
            TraceOp::Write => "write",
            TraceOp::Flush => "flush",
            TraceOp::Discard => "discard",
        }
    }

    /// The simulator's operation for a replayed request: reads, writes and discards (flushes
    /// are not replayed: the rotational presets' caches write through).
    pub fn request_op(self) -> Option<Op> {
        match self {
            TraceOp::Read => Some(Op::Read),
            TraceOp::Write => Some(Op::Write),
            TraceOp::Discard => Some(Op::Discard),
            TraceOp::Flush => None,
        }
    }
}

/// One request of a trace. Times are nanoseconds in the trace's own epoch (blkparse text: since
/// the first event; MSR: Unix time; fio v3: since the job started; ...): replay and statistics
/// take differences, never absolute values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// Where it is in its input, 1-based: the line of a text trace, the record of a binary one
    /// (for blktrace, of the request's queue event).
    pub at: u64,
    /// When the request was queued (blktrace Q) or arrived (every other format).
    pub time_ns: u64,
    /// The issuing process (blktrace, blkparse, the S traces) or, where a format has no process,
    /// its stream: UMass's ASU, Tencent's volume, Alibaba's device; None where nothing says.
    pub pid: Option<u32>,
    /// The traced device (blktrace's dev_t, MSR's disk number, DiskSim's device); 0 if none.
    pub device: u32,
    pub op: TraceOp,
    /// First sector (512 B).
    pub sector: u64,
    /// Length in 512 B sectors (0 for a flush).
    pub size_sectors: u32,
    /// The request was synchronous (blktrace S flag; reads are always sync in Linux's sense,
    /// and are marked so where the format says nothing).
    pub sync: bool,
    /// Filesystem metadata (blktrace M flag, the S traces' RM).
    pub meta: bool,
    /// Readahead (blktrace A flag, the S traces' RA).
    pub readahead: bool,
    /// When the device was handed the request (blktrace D), where the trace says.
    pub issue_ns: Option<u64>,
    /// When it completed (blktrace C; MSR and Systor: arrival + response time), where the trace says.
    pub complete_ns: Option<u64>,
}

impl TraceRecord {
    /// A read or write with nothing but the essentials; the rest default (sync for reads).
    pub fn new(at: u64, time_ns: u64, op: TraceOp, sector: u64, size_sectors: u32) -> TraceRecord {
        TraceRecord {
            at,
            time_ns,
            pid: None,
            device: 0,
            op,
            sector,
            size_sectors,
            sync: op == TraceOp::Read,
            meta: false,
            readahead: false,
            issue_ns: None,
            complete_ns: None,
        }
    }

    /// One past its last sector (cannot wrap: readers keep sector + size within
    /// [`MAX_TRACE_SECTOR`](super::MAX_TRACE_BLOCK)).
    pub fn end_sector(&self) -> u64 {
        self.sector + self.size_sectors as u64
    }

    pub fn bytes(&self) -> u64 {
        self.size_sectors as u64 * 512
    }

    /// blkparse's RWBS letters: F (flush), then D/W/R/N, then F (FUA: never set here), A, S, M.
    pub fn rwbs(&self) -> String {
        let mut s = String::with_capacity(4);
        match self.op {
            TraceOp::Flush => s.push_str("FN"),
            TraceOp::Discard => s.push('D'),
            TraceOp::Write => s.push('W'),
            TraceOp::Read => s.push('R'),
        }
        if self.readahead {
            s.push('A');
        }
        if self.sync {
            s.push('S');
        }
        if self.meta {
            s.push('M');
        }
        s
    }
}
