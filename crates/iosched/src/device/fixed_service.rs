//! Tests' device: every request takes exactly 10 ms, wherever it is (replay timing tests).

use super::{ArmPath, Device, DeviceView, Service};
use crate::request::{Op, Request};
use crate::time::Nanos;

/// Every request takes exactly 10 ms; `1 << 30` sectors.
pub struct FixedService10ms;

impl DeviceView for FixedService10ms {
    fn name(&self) -> &str {
        "fixed"
    }
    fn capacity_sectors(&self) -> u64 {
        1 << 30
    }
    fn cylinders(&self) -> u32 {
        1
    }
    fn cylinder_of(&self, _: u64) -> u32 {
        0
    }
    fn head_cylinder(&self) -> u32 {
        0
    }
    fn head_sector(&self) -> u64 {
        0
    }
    fn seek_time_ns(&self, _: u32) -> Nanos {
        0
    }
    fn positioning_time_ns(&self, _: u64, _: u32, _: Op, _: Nanos) -> Nanos {
        0
    }
}

impl Device for FixedService10ms {
    fn service(&mut self, _: &Request, _: ArmPath, now: Nanos) -> Service {
        Service { dispatch_ns: now, completion_ns: now + 10_000_000, ..Service::default() }
    }
    fn as_view(&self) -> &dyn DeviceView {
        self
    }
}
