//! Sorted request queues shared by the seek-reducing policies.

use crate::device::{DeviceView, SectorPosition};
use crate::request::{Request, RequestId};
use std::collections::BTreeMap;

/// A queued request with where it lies on the disk (mapped once, at insertion).
#[derive(Clone, Copy, Debug)]
pub struct Placed {
    pub req: Request,
    pub pos: SectorPosition,
}

/// Requests sorted by (cylinder, id): the index of SSTF and the SPTF family. A short queue (the
/// common case: a few requests) is a sorted vector, searched and shifted in place; a long one a
/// B-tree. Both iterate in the same order, so which one holds the queue changes no decision.
#[derive(Clone, Debug)]
pub struct CylinderQueue {
    index: CylinderIndex,
}

type CylinderKey = (u32, RequestId);

#[derive(Clone, Debug)]
enum CylinderIndex {
    Short(Vec<(CylinderKey, Placed)>),
    Long(BTreeMap<CylinderKey, Placed>),
}

/// Past this many requests the queue moves to a B-tree; below `SHORT_AGAIN` it moves back (the
/// gap keeps a queue hovering near the limit from converting on every request).
const SHORT_MAX: usize = 48;
const SHORT_AGAIN: usize = 24;

impl Default for CylinderQueue {
    fn default() -> Self {
        CylinderQueue { index: CylinderIndex::Short(Vec::new()) }
    }
}

/// The queue's requests between two keys, in key order or reversed.
pub enum CylinderRange<'a> {
    Empty,
    Short(std::slice::Iter<'a, (CylinderKey, Placed)>),
    ShortRev(std::iter::Rev<std::slice::Iter<'a, (CylinderKey, Placed)>>),
    Long(std::collections::btree_map::Range<'a, CylinderKey, Placed>),
    LongRev(std::iter::Rev<std::collections::btree_map::Range<'a, CylinderKey, Placed>>),
}

impl<'a> Iterator for CylinderRange<'a> {
    type Item = (u32, &'a Placed);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            CylinderRange::Empty => None,
            CylinderRange::Short(i) => i.next().map(|(k, p)| (k.0, p)),
            CylinderRange::ShortRev(i) => i.next().map(|(k, p)| (k.0, p)),
            CylinderRange::Long(i) => i.next().map(|(k, p)| (k.0, p)),
            CylinderRange::LongRev(i) => i.next().map(|(k, p)| (k.0, p)),
        }
    }
}

impl CylinderQueue {
    pub fn insert(&mut self, req: Request, device: &dyn DeviceView) {
        let pos = device.position_of(req.start_sector);
        let key = (pos.cylinder, req.id);
        match &mut self.index {
            CylinderIndex::Short(v) => {
                let at = v.partition_point(|(k, _)| *k < key);
                v.insert(at, (key, Placed { req, pos }));
                if v.len() > SHORT_MAX {
                    self.index = CylinderIndex::Long(std::mem::take(v).into_iter().collect());
                }
            }
            CylinderIndex::Long(m) => {
                m.insert(key, Placed { req, pos });
            }
        }
    }

    /// Removes a request inserted earlier (in a long queue its cylinder is looked up again from
    /// `device`; a short one is scanned for its id).
    pub fn remove(&mut self, req: &Request, device: &dyn DeviceView) -> Option<Request> {
        match &mut self.index {
            CylinderIndex::Short(v) => {
                let at = v.iter().position(|(k, _)| k.1 == req.id)?;
                Some(v.remove(at).1.req)
            }
            CylinderIndex::Long(m) => {
                let out = m.remove(&(device.cylinder_of(req.start_sector), req.id)).map(|p| p.req);
                if m.len() < SHORT_AGAIN {
                    self.index = CylinderIndex::Short(std::mem::take(m).into_iter().collect());
                }
                out
            }
        }
    }

    pub fn len(&self) -> usize {
        match &self.index {
            CylinderIndex::Short(v) => v.len(),
            CylinderIndex::Long(m) => m.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The requests on cylinders `[lo, hi]`, nearest `lo` first.
    pub fn ascending(&self, lo: u32, hi: u32) -> CylinderRange<'_> {
        if lo > hi {
            return CylinderRange::Empty;
        }
        match &self.index {
            CylinderIndex::Short(v) => CylinderRange::Short(v[Self::short_bounds(v, lo, hi)].iter()),
            CylinderIndex::Long(m) => CylinderRange::Long(m.range((lo, 0)..=(hi, RequestId::MAX))),
        }
    }

    /// The requests on cylinders `[lo, hi]`, nearest `hi` first.
    pub fn descending(&self, lo: u32, hi: u32) -> CylinderRange<'_> {
        if lo > hi {
            return CylinderRange::Empty;
        }
        match &self.index {
            CylinderIndex::Short(v) => CylinderRange::ShortRev(v[Self::short_bounds(v, lo, hi)].iter().rev()),
            CylinderIndex::Long(m) => CylinderRange::LongRev(m.range((lo, 0)..=(hi, RequestId::MAX)).rev()),
        }
    }

    fn short_bounds(v: &[(CylinderKey, Placed)], lo: u32, hi: u32) -> std::ops::Range<usize> {
        let start = v.partition_point(|(k, _)| k.0 < lo);
        start..v.partition_point(|(k, _)| k.0 <= hi)
    }

    /// The oldest request on the nearest cylinder at or above `cylinder`.
    pub fn first_at_or_above(&self, cylinder: u32) -> Option<(u32, &Request)> {
        self.ascending(cylinder, u32::MAX).next().map(|(c, p)| (c, &p.req))
    }

    /// The oldest request on the nearest cylinder strictly below `cylinder`.
    pub fn first_below(&self, cylinder: u32) -> Option<(u32, &Request)> {
        let (c, _) = self.descending(0, cylinder.checked_sub(1)?).next()?;
        self.first_at_or_above(c)
    }
}

/// Requests sorted by (start sector, id): the index of the elevator policies.
#[derive(Default, Clone, Debug)]
pub struct SectorQueue {
    pub map: BTreeMap<(u64, RequestId), Request>,
}

impl SectorQueue {
    pub fn insert(&mut self, req: Request) {
        self.map.insert((req.start_sector, req.id), req);
    }

    pub fn remove(&mut self, req: &Request) -> Option<Request> {
        self.map.remove(&(req.start_sector, req.id))
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// First request at or after `sector` (lowest sector, then oldest).
    pub fn at_or_after(&self, sector: u64) -> Option<&Request> {
        self.map.range((sector, 0)..).next().map(|(_, r)| r)
    }

    /// Last request at or before `sector` (the highest such sector; oldest among equals).
    pub fn at_or_before(&self, sector: u64) -> Option<&Request> {
        let (&(s, _), _) = self.map.range(..=(sector, RequestId::MAX)).next_back()?;
        self.map.range((s, 0)..).next().map(|(_, r)| r)
    }

    pub fn lowest(&self) -> Option<&Request> {
        self.map.values().next()
    }

    pub fn highest(&self) -> Option<&Request> {
        self.at_or_before(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::presets::preset;
    use crate::device::rotational::RotationalDisk;
    use crate::request::Op;

    /// Against a B-tree of the same keys, through growth past the vector's limit and shrinking
    /// back: the same order in both directions and the same nearest requests.
    #[test]
    fn short_and_long_forms_answer_as_one_b_tree() {
        let disk = RotationalDisk::new(preset("ibm-deskstar-34gxp").unwrap()).unwrap();
        let cap = disk.geometry().capacity_sectors;
        let (mut q, mut reference) = (CylinderQueue::default(), BTreeMap::new());
        let mut x: u64 = 12345;
        let mut live: Vec<Request> = Vec::new();
        for id in 0..3_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Grow to about 120 requests, shrink to a few, grow again.
            let grow = (id / 400) % 2 == 0;
            if (grow && !x.is_multiple_of(4)) || live.is_empty() || (!grow && x.is_multiple_of(4)) {
                let r = Request::new(id, Op::Read, (x >> 16) % (cap - 8), 8, 0);
                q.insert(r, &disk);
                reference.insert((disk.cylinder_of(r.start_sector), r.id), r);
                live.push(r);
            } else {
                let r = live.swap_remove((x >> 32) as usize % live.len());
                assert_eq!(q.remove(&r, &disk).map(|r| r.id), Some(r.id));
                reference.remove(&(disk.cylinder_of(r.start_sector), r.id));
            }
            assert_eq!(q.len(), reference.len());
            let c = ((x >> 8) % disk.geometry().cylinders as u64) as u32;
            let (lo, hi) = (c.saturating_sub(500), c + 300);
            let up: Vec<_> = q.ascending(lo, hi).map(|(c, p)| (c, p.req.id)).collect();
            let want: Vec<_> = reference.range((lo, 0)..=(hi, u64::MAX)).map(|(k, _)| *k).collect();
            assert_eq!(up, want);
            let down: Vec<_> = q.descending(lo, hi).map(|(c, p)| (c, p.req.id)).collect();
            assert_eq!(down, want.iter().rev().copied().collect::<Vec<_>>());
            let above = reference.range((c, 0)..).next().map(|(k, _)| *k);
            assert_eq!(q.first_at_or_above(c).map(|(c, r)| (c, r.id)), above);
            let below = reference.range(..(c, 0)).next_back().map(|(k, _)| k.0);
            let below = below.and_then(|b| reference.range((b, 0)..).next().map(|(k, _)| *k));
            assert_eq!(q.first_below(c).map(|(c, r)| (c, r.id)), below);
        }
    }
}
