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
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
        }
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
    /// Bit set of `Request::SPLIT`, ... (0 = a plain request).
    pub flags: u8,
}

impl Request {
    /// One part of a larger read that the file system split at its maximum transfer size: all
    /// parts of that read are issued at the same instant and the process waits for all of them,
    /// so a scheduler may treat them as one request (Iyer & Druschel 2001, section 4.2.4).
    pub const SPLIT: u8 = 1;

    pub fn is_split(&self) -> bool {
        self.flags & Request::SPLIT != 0
    }

    /// First sector after the request.
    pub fn end_sector(&self) -> u64 {
        self.start_sector + self.size_sectors as u64
    }

    pub fn bytes(&self) -> u64 {
        self.size_sectors as u64 * SECTOR_BYTES
    }
}
