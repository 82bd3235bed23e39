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
        remove_if(&mut self.by_start, req.start_sector, id);
        remove_if(&mut self.by_end, req.end_sector(), id);
        Some(req)
    }

    /// Replaces a queued request by its grown self (same id).
    pub fn replace(&mut self, grown: Request) {
        self.remove(grown.id);
        self.insert(grown);
    }

    /// The queued request `id`, if it may still be merged into.
    pub fn get(&self, id: RequestId) -> Option<Request> {
        self.by_id.get(&id).copied()
    }

    /// A multi-range discard took one more range (ELEVATOR_DISCARD_MERGE): its start stays,
    /// its size grows, and it is no longer found by its end. Linux hashes a request by
    /// `blk_rq_pos + blk_rq_sectors` when it is inserted and rehashes it only after a back
    /// merge (`elv_merged_request`), which a discard merge does not call, so the hash lookup
    /// (`elv_rqhash_find` compares the current key) finds it no more; the sorted lookup by start
    /// (mq-deadline's and BFQ's front merges) still does.
    pub fn grow_in_place(&mut self, grown: Request) {
        if let Some(old) = self.by_id.get(&grown.id).copied() {
            remove_if(&mut self.by_end, old.end_sector(), grown.id);
            self.by_id.insert(grown.id, grown);
        }
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

/// Removes `sector`'s entry if it names `id` (one probe; another request may hold the sector).
fn remove_if(map: &mut FastMap<u64, RequestId>, sector: u64, id: RequestId) {
    if let std::collections::hash_map::Entry::Occupied(e) = map.entry(sector) {
        if *e.get() == id {
            e.remove();
        }
    }
}

/// Whether two pieces of I/O may become one request: same direction and kind, same
/// synchrony and priority, metadata with metadata (Linux: blk_rq_merge_ok), no flush, and the
/// result within `max_sectors` (the caller gives `max_discard_sectors` for discards). Discards
/// merge with discards only. Where `max_discard_segments` is 1 (SCSI and ATA disks, SATA SSDs)
/// they merge as any request does, when contiguous: a back or front merge (`blk_try_merge`).
/// Where it is larger (NVMe: 256 ranges, NVME_DSM_MAX_RANGES) Linux's `blk_discard_mergable`
/// makes every merge path that reaches a discard request return ELEVATOR_DISCARD_MERGE, whatever
/// the bio's position: the bio becomes one more range of the request
/// (`bio_attempt_discard_merge`), up to `max_discard_segments` ranges and `max_discard_sectors`
/// in all, and the driver sends one Dataset Management command with a range per bio
/// (`nvme_setup_discard`). That is `BlockLayer`'s multi-range path (`try_discard_merge`, the
/// plug in `unplug`); the ranges are the request's bios, which the block layer keeps by request
/// id, so `Request` stays one Copy range. `same_kind` is the first half of this test.
pub fn compatible(a: &Request, b: &Request, max_sectors: u32) -> bool {
    same_kind(a, b) && a.size_sectors as u64 + b.size_sectors as u64 <= max_sectors as u64
}

/// `compatible` without the size limit: may `b` join `a` at all (blk_rq_merge_ok's checks).
pub fn same_kind(a: &Request, b: &Request) -> bool {
    a.op == b.op && a.op != Op::Flush && a.sync == b.sync && a.prio == b.prio && a.is_meta() == b.is_meta()
}
