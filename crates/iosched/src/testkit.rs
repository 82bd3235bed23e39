//! A toy device for hand-checked scheduler tests: 100 sectors per cylinder, seek of d cylinders
//! = d ms, and a rotational delay of (sector mod 100) x 0.1 ms (as if the platter were at angle 0
//! at every decision).

use crate::device::DeviceView;
use crate::request::{Op, Principal, Request};
use crate::time::{Nanos, NS_PER_MS};
use std::cell::Cell;

pub struct ToyDisk {
    pub head: Cell<u32>,
}

impl DeviceView for ToyDisk {
    fn name(&self) -> &str {
        "toy"
    }
    fn capacity_sectors(&self) -> u64 {
        100_000
    }
    fn cylinders(&self) -> u32 {
        1000
    }
    fn cylinder_of(&self, sector: u64) -> u32 {
        (sector / 100) as u32
    }
    fn head_cylinder(&self) -> u32 {
        self.head.get()
    }
    fn head_sector(&self) -> u64 {
        self.head.get() as u64 * 100
    }
    fn seek_time_ns(&self, d: u32) -> Nanos {
        d as Nanos * NS_PER_MS
    }
    fn positioning_time_ns(&self, sector: u64, _sectors: u32, _op: Op, _now: Nanos) -> Nanos {
        self.seek_time_ns(self.head.get().abs_diff(self.cylinder_of(sector))) + (sector % 100) * NS_PER_MS / 10
    }
}

/// A synchronous 8-sector read of process `pid` (its own group) at `sector`.
pub fn read(id: u64, pid: u32, sector: u64) -> Request {
    Request {
        id,
        principal: Principal { pid, group: pid },
        op: Op::Read,
        sync: true,
        start_sector: sector,
        size_sectors: 8,
        issue_ns: 0,
        flags: 0,
        prio: Default::default(),
    }
}
