//! What schedulers see of a real backing device: its address space and where the last request
//! ended, nothing more. There is no model of its timing, so positioning estimates are 0 for
//! every request: address-ordering policies (C-LOOK, SCAN, deadline) work as on any disk;
//! SPTF-family policies see all requests as equally close (arrival order decides), and the
//! anticipation's seek heuristic sees no benefit in waiting.

use iosched::device::DeviceView;
use iosched::request::Op;
use iosched::time::Nanos;

/// Sectors per pseudo-cylinder: 1 MiB, so "seek distance" in the records reads as MiB.
pub const SECTORS_PER_CYLINDER: u64 = 2048;

pub struct AddressView {
    capacity_sectors: u64,
    head_sector: u64,
}

impl AddressView {
    pub fn new(capacity_sectors: u64) -> AddressView {
        AddressView { capacity_sectors: capacity_sectors.max(1), head_sector: 0 }
    }

    /// The device has just served a request ending at `end_sector`.
    pub fn served(&mut self, end_sector: u64) {
        self.head_sector = end_sector.min(self.capacity_sectors);
    }
}

impl DeviceView for AddressView {
    fn name(&self) -> &str {
        "real"
    }
    fn capacity_sectors(&self) -> u64 {
        self.capacity_sectors
    }
    fn cylinders(&self) -> u32 {
        self.capacity_sectors.div_ceil(SECTORS_PER_CYLINDER).min(u32::MAX as u64) as u32
    }
    fn cylinder_of(&self, sector: u64) -> u32 {
        (sector.min(self.capacity_sectors - 1) / SECTORS_PER_CYLINDER) as u32
    }
    fn head_cylinder(&self) -> u32 {
        self.cylinder_of(self.head_sector)
    }
    fn head_sector(&self) -> u64 {
        self.head_sector
    }
    fn seek_time_ns(&self, _distance_cylinders: u32) -> Nanos {
        0
    }
    fn positioning_time_ns(&self, _sector: u64, _sectors: u32, _op: Op, _now: Nanos) -> Nanos {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cylinders_are_mebibytes_and_the_head_follows_requests() {
        let mut v = AddressView::new(10 * SECTORS_PER_CYLINDER + 1);
        assert_eq!(v.cylinders(), 11);
        assert_eq!(v.cylinder_of(2 * SECTORS_PER_CYLINDER + 5), 2);
        assert_eq!(v.cylinder_of(u64::MAX), 10, "clamped to the last cylinder");
        v.served(3 * SECTORS_PER_CYLINDER);
        assert_eq!((v.head_sector(), v.head_cylinder()), (3 * SECTORS_PER_CYLINDER, 3));
    }
}
