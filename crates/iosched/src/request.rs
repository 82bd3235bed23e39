//! The unit of work a scheduler orders: one block request from one principal.

use crate::time::Nanos;

/// Bytes in one sector: every address and size in the toolkit is in 512-byte sectors.
pub const SECTOR_BYTES: u64 = 512;

pub type RequestId = u64;

/// Who issued a request: the process, and the group it belongs to (process group / session,
/// or a cgroup-like class) for schedulers that share among groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Principal {
    pub pid: u32,
    pub group: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Read,
    Write,
    /// Write back the drive's cache (no data; `size_sectors` 0). The drive serves it once every
    /// command accepted before it has completed.
    Flush,
    /// Discard (TRIM / UNMAP / NVMe Dataset Management deallocate) the sector range: no data
    /// moves. Linux's REQ_OP_DISCARD (include/linux/blk_types.h: op 3, so `op_is_write` is true
    /// and a discard takes the write direction wherever a scheduler splits by direction; from
    /// `blkdev_issue_discard` (fstrim, BLKDISCARD) it is REQ_SYNC, set by `submit_bio_wait`; a
    /// file system's online discard is not).
    Discard,
}

impl Op {
    /// Linux's `op_is_write`: writes, flushes and discards take the write direction.
    pub fn is_write(self) -> bool {
        self != Op::Read
    }

    /// Whether the request moves data (a flush and a discard do not).
    pub fn moves_data(self) -> bool {
        matches!(self, Op::Read | Op::Write)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Flush => "flush",
            Op::Discard => "discard",
        }
    }

    pub fn parse(s: &str) -> Option<Op> {
        match s {
            "read" => Some(Op::Read),
            "write" => Some(Op::Write),
            "flush" => Some(Op::Flush),
            "discard" => Some(Op::Discard),
            _ => None,
        }
    }
}

/// I/O priority class, as Linux's ioprio (include/uapi/linux/ioprio.h): real-time before
/// best-effort before idle. `None` is "no class set": best-effort at a level derived from the
/// process's nice value in Linux; level 4 here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum PrioClass {
    #[default]
    None,
    RealTime,
    BestEffort,
    Idle,
}

impl PrioClass {
    pub const NAMES: [&'static str; 4] = ["none", "rt", "be", "idle"];

    pub fn parse(s: &str) -> Option<PrioClass> {
        match s {
            "none" => Some(PrioClass::None),
            "rt" | "realtime" | "real-time" => Some(PrioClass::RealTime),
            "be" | "best-effort" => Some(PrioClass::BestEffort),
            "idle" => Some(PrioClass::Idle),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PrioClass::None => "none",
            PrioClass::RealTime => "rt",
            PrioClass::BestEffort => "be",
            PrioClass::Idle => "idle",
        }
    }

    /// The class a scheduler serves this request in (`None` counts as best-effort).
    pub fn effective(self) -> PrioClass {
        if self == PrioClass::None {
            PrioClass::BestEffort
        } else {
            self
        }
    }
}

/// A request's I/O priority: class and level 0 (highest) to 7 (lowest).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IoPrio {
    pub class: PrioClass,
    pub level: u8,
}

impl Default for IoPrio {
    fn default() -> Self {
        IoPrio { class: PrioClass::None, level: 4 }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub id: RequestId,
    pub principal: Principal,
    pub op: Op,
    /// A synchronous request blocks its issuer until it completes (reads, fsync'd writes).
    pub sync: bool,
    pub start_sector: u64,
    pub size_sectors: u32,
    /// When the request reached the scheduler.
    pub issue_ns: Nanos,
    /// Bit set of `Request::SPLIT`, `Request::META` ... (0 = a plain request).
    pub flags: u8,
    /// I/O priority (class and level).
    pub prio: IoPrio,
}

impl Request {
    /// One part of a larger read that the file system split at its maximum transfer size: all
    /// parts of that read are issued at the same instant and the process waits for all of them,
    /// so a scheduler may treat them as one request (Iyer & Druschel 2001, section 4.2.4).
    pub const SPLIT: u8 = 1;
    /// File-system metadata (inode, directory, indirect blocks): CFQ and BFQ may favour it.
    pub const META: u8 = 2;

    /// A synchronous request of the default principal, no flags, default priority (what tests,
    /// tools and fuzz targets build; change fields with struct update syntax).
    pub fn new(id: RequestId, op: Op, start_sector: u64, size_sectors: u32, issue_ns: Nanos) -> Request {
        Request {
            id,
            principal: Principal::default(),
            op,
            sync: true,
            start_sector,
            size_sectors,
            issue_ns,
            flags: 0,
            prio: IoPrio::default(),
        }
    }

    pub fn is_split(&self) -> bool {
        self.flags & Request::SPLIT != 0
    }

    pub fn is_meta(&self) -> bool {
        self.flags & Request::META != 0
    }

    /// First sector after the request.
    pub fn end_sector(&self) -> u64 {
        self.start_sector + self.size_sectors as u64
    }

    pub fn bytes(&self) -> u64 {
        self.size_sectors as u64 * SECTOR_BYTES
    }
}
