//! What schedulers see of a real backing device: its address space, where the last request
//! ended, and, when the device was calibrated (`iosched calibrate --real`), positioning
//! estimates from the calibrated curve of time against LBA distance from the end of the last
//! request (Iyer & Druschel's estimator). Without a calibration the estimates are 0 for every
//! request: address-ordering policies (C-LOOK, SCAN, deadline) work as on any disk; SPTF-family
//! policies see all requests as equally close (arrival order decides), and the anticipation's
//! seek heuristic sees no benefit in waiting.

use iosched::device::calibration::PositioningCurve;
use iosched::device::DeviceView;
use iosched::request::Op;
use iosched::time::Nanos;

/// Sectors per pseudo-cylinder: 1 MiB, so "seek distance" in the records reads as MiB.
pub const SECTORS_PER_CYLINDER: u64 = 2048;

/// A device calibration: the fitted curve and the contiguous-read service time it is relative to.
#[derive(Clone, Debug)]
pub struct DeviceCalibration {
    pub curve: PositioningCurve,
    pub baseline_ns: f64,
}

pub struct AddressView {
    capacity_sectors: u64,
    head_sector: u64,
    calibration: Option<DeviceCalibration>,
}

impl AddressView {
    pub fn new(capacity_sectors: u64, calibration: Option<DeviceCalibration>) -> AddressView {
        AddressView { capacity_sectors: capacity_sectors.max(1), head_sector: 0, calibration }
    }

    /// The positioning part of a measured service time, as the calibration measured it: the
    /// time beyond a contiguous read's (0 without a calibration, like the estimates).
    pub fn positioning_of_service(&self, service_ns: Nanos) -> Nanos {
        match &self.calibration {
            Some(c) => (service_ns as f64 - c.baseline_ns).max(0.0).round() as Nanos,
            None => 0,
        }
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
    fn positioning_time_ns(&self, sector: u64, _sectors: u32, _op: Op, _now: Nanos) -> Nanos {
        let Some(DeviceCalibration { curve, .. }) = &self.calibration else { return 0 };
        let d = (sector as i128 - self.head_sector as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        curve.estimate_ns(d).max(0.0).round() as Nanos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cylinders_are_mebibytes_and_the_head_follows_requests() {
        let mut v = AddressView::new(10 * SECTORS_PER_CYLINDER + 1, None);
        assert_eq!(v.cylinders(), 11);
        assert_eq!(v.cylinder_of(2 * SECTORS_PER_CYLINDER + 5), 2);
        assert_eq!(v.cylinder_of(u64::MAX), 10, "clamped to the last cylinder");
        v.served(3 * SECTORS_PER_CYLINDER);
        assert_eq!((v.head_sector(), v.head_cylinder()), (3 * SECTORS_PER_CYLINDER, 3));
    }
}

#[cfg(test)]
mod curve_tests {
    use super::*;

    #[test]
    fn a_calibrated_view_estimates_from_the_end_of_the_last_request() {
        // 1 ms at distance 1 ahead rising to 7 ms at 1e6 (log scale), 9 ms behind.
        let curve = PositioningCurve { zero_ns: 0.0, forward: vec![(0.0, 1e6), (1e6f64.ln(), 7e6)], backward: vec![(0.0, 9e6)] };
        let mut v = AddressView::new(1 << 30, Some(DeviceCalibration { curve, baseline_ns: 80_000.0 }));
        v.served(5000);
        assert_eq!(v.positioning_time_ns(5000, 8, Op::Read, 0), 0);
        assert_eq!(v.positioning_time_ns(5001, 8, Op::Read, 0), 1_000_000);
        assert_eq!(v.positioning_time_ns(6000, 8, Op::Read, 0), 4_000_000, "halfway in log distance");
        assert_eq!(v.positioning_time_ns(4000, 8, Op::Read, 0), 9_000_000);
        assert_eq!(AddressView::new(100, None).positioning_time_ns(50, 8, Op::Read, 0), 0);
        assert_eq!(v.positioning_of_service(1_080_000), 1_000_000, "service beyond the contiguous-read baseline");
        assert_eq!(v.positioning_of_service(50_000), 0);
        assert_eq!(AddressView::new(100, None).positioning_of_service(1_000_000), 0);
    }
}
