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

/// Requests sorted by (cylinder, id): the index of SSTF and the SPTF family.
#[derive(Default, Clone, Debug)]
pub struct CylinderQueue {
    pub map: BTreeMap<(u32, RequestId), Placed>,
}

impl CylinderQueue {
    pub fn insert(&mut self, req: Request, device: &dyn DeviceView) {
        let pos = device.position_of(req.start_sector);
        self.map.insert((pos.cylinder, req.id), Placed { req, pos });
    }

    /// Removes a request inserted earlier (its cylinder is looked up again from `device`).
    pub fn remove(&mut self, req: &Request, device: &dyn DeviceView) -> Option<Request> {
        self.map.remove(&(device.cylinder_of(req.start_sector), req.id)).map(|p| p.req)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The oldest request on the nearest cylinder at or above `cylinder`.
    pub fn first_at_or_above(&self, cylinder: u32) -> Option<(u32, &Request)> {
        self.map.range((cylinder, 0)..).next().map(|(&(c, _), p)| (c, &p.req))
    }

    /// The oldest request on the nearest cylinder strictly below `cylinder`.
    pub fn first_below(&self, cylinder: u32) -> Option<(u32, &Request)> {
        let (&(c, _), _) = self.map.range(..(cylinder, 0)).next_back()?;
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
