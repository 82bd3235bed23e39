//! The merge index: the requests waiting in the scheduler, found by their first sector (front
//! merges) and by the sector after their last (back merges) in O(1), as Linux's elevator hash.
//! Only requests not yet dispatched are in it.

use crate::fast_hash::FastMap;
use crate::request::{Op, Request, RequestId};

#[derive(Default, Debug)]
pub struct MergeIndex {
    by_id: FastMap<RequestId, Request>,
    by_start: FastMap<u64, RequestId>,
    by_end: FastMap<u64, RequestId>,
}

impl MergeIndex {
    pub fn insert(&mut self, req: Request) {
        // Two queued requests may start (or end) at one sector (a re-read, say): the index
        // keeps the latest, as a hash bucket's head would be found first.
        self.by_start.insert(req.start_sector, req.id);
        self.by_end.insert(req.end_sector(), req.id);
        self.by_id.insert(req.id, req);
    }

    pub fn remove(&mut self, id: RequestId) -> Option<Request> {
        let req = self.by_id.remove(&id)?;
        if self.by_start.get(&req.start_sector) == Some(&id) {
            self.by_start.remove(&req.start_sector);
        }
        if self.by_end.get(&req.end_sector()) == Some(&id) {
            self.by_end.remove(&req.end_sector());
        }
        Some(req)
    }

    /// Replaces a queued request by its grown self (same id).
    pub fn replace(&mut self, grown: Request) {
        self.remove(grown.id);
        self.insert(grown);
    }

    /// The queued request ending where `sector` begins (a back-merge candidate).
    pub fn ending_at(&self, sector: u64) -> Option<Request> {
        self.by_end.get(&sector).and_then(|id| self.by_id.get(id)).copied()
    }

    /// The queued request starting where `sector` is (a front-merge candidate).
    pub fn starting_at(&self, sector: u64) -> Option<Request> {
        self.by_start.get(&sector).and_then(|id| self.by_id.get(id)).copied()
    }
}

/// Whether two pieces of I/O may become one request: same direction and kind, same
/// synchrony and priority, metadata with metadata (Linux: blk_rq_merge_ok), no flush, and the
/// result within `max_sectors` (the caller gives `max_discard_sectors` for discards). Discards
/// merge with discards when contiguous, as Linux does where `max_discard_segments` is 1 (SCSI
/// and ATA disks): a back or front merge (`blk_try_merge`). Where it is larger (NVMe: 256
/// ranges) Linux also merges discards that are not contiguous into one multi-range command
/// (ELEVATOR_DISCARD_MERGE); a request here is one range, so that is not modelled.
pub fn compatible(a: &Request, b: &Request, max_sectors: u32) -> bool {
    a.op == b.op
        && a.op != Op::Flush
        && a.sync == b.sync
        && a.prio == b.prio
        && a.is_meta() == b.is_meta()
        && a.size_sectors as u64 + b.size_sectors as u64 <= max_sectors as u64
}
