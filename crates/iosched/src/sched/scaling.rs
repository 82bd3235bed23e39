//! A driver for measuring a scheduler's own cost per request as the number of backlogged
//! processes grows (`iosched bench --sched-scaling`, docs/benchmarks.md): N processes, each
//! keeping `depth` random reads outstanding, served one at a time by a device that takes a
//! fixed time per request and that schedulers see as flat (no seek, no rotation). Every call
//! goes through the [`Scheduler`] API (add, next, completed), as the engine makes them, but
//! without the engine, the disk model or the metrics: what is left is the scheduler.
//!
//! With `depth >= 2` a process always has a request queued when its previous one completes
//! (the replacement is added at the completion), so all N queues stay busy: in BFQ, all N
//! entities are in B-WF2Q+'s active trees at all times.
//!
//! No clock here (the caller times [`ScalingDriver::run`]); the run is deterministic.

use super::registry;
use super::{Completion, Context, Decision, ProcessEvent, Scheduler};
use crate::device::DeviceView;
use crate::request::{Op, Principal, Request};
use crate::time::Nanos;
use std::collections::BTreeMap;

/// 1 TiB of 512-byte sectors.
const CAPACITY_SECTORS: u64 = 1 << 31;
/// Every request is 4 KiB.
const REQUEST_SECTORS: u32 = 8;

/// A device view with no geometry to speak of: one cylinder, positioning always 0.
struct FlatDisk;

impl DeviceView for FlatDisk {
    fn name(&self) -> &str {
        "flat"
    }
    fn capacity_sectors(&self) -> u64 {
        CAPACITY_SECTORS
    }
    fn cylinders(&self) -> u32 {
        1
    }
    fn cylinder_of(&self, _sector: u64) -> u32 {
        0
    }
    fn head_cylinder(&self) -> u32 {
        0
    }
    fn head_sector(&self) -> u64 {
        0
    }
    fn seek_time_ns(&self, _d: u32) -> Nanos {
        0
    }
    fn positioning_time_ns(&self, _sector: u64, _sectors: u32, _op: Op, _now: Nanos) -> Nanos {
        0
    }
}

/// What a run did (the caller divides its time by `requests`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ScalingCounts {
    /// Requests dispatched and completed in the measured run.
    pub requests: u64,
    /// `next` calls that answered WaitUntil (the driver moves time to the answer and asks again).
    pub waits: u64,
    /// Simulated time the run covered.
    pub simulated_ns: Nanos,
    /// The scheduler's own counters (totals since it was built, e.g. BFQ's `slots`: service
    /// slots begun) at the start of the run and at its end.
    pub counters_at_start: Vec<(String, u64)>,
    pub counters: Vec<(String, u64)>,
}

pub struct ScalingDriver {
    sched: Box<dyn Scheduler>,
    disk: FlatDisk,
    processes: u32,
    service_ns: Nanos,
    now: Nanos,
    next_id: u64,
    rng: u64,
}

impl ScalingDriver {
    /// Builds `scheduler` (with `tunables`), starts `processes` processes (pids 1..=N, one group)
    /// and queues `depth` requests for each. `service_ns`: the device's time per request.
    pub fn new(scheduler: &str, tunables: &BTreeMap<String, f64>, processes: u32, depth: u32, service_ns: Nanos) -> Result<Self, String> {
        if processes == 0 || depth == 0 || service_ns == 0 {
            return Err("processes, depth and service time must be at least 1".into());
        }
        let sched = registry::build(scheduler, None, tunables)?;
        let mut d = ScalingDriver { sched, disk: FlatDisk, processes, service_ns, now: 0, next_id: 0, rng: 0x9E37_79B9_7F4A_7C15 };
        for pid in 1..=processes {
            let cx = Context { now_ns: 0, device: &d.disk, in_flight: 0 };
            d.sched.process_event(ProcessEvent::Started { principal: Principal { pid, group: 0 }, weight: 1 }, &cx);
        }
        for _ in 0..depth {
            for pid in 1..=processes {
                d.submit(pid);
            }
        }
        Ok(d)
    }

    fn submit(&mut self, pid: u32) {
        // xorshift64*: a random 4 KiB-aligned place on the disk.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let start = (r % (CAPACITY_SECTORS / REQUEST_SECTORS as u64)) * REQUEST_SECTORS as u64;
        self.next_id += 1;
        let req =
            Request { principal: Principal { pid, group: 0 }, ..Request::new(self.next_id, Op::Read, start, REQUEST_SECTORS, self.now) };
        let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
        self.sched.add(req, &cx);
    }

    /// Serves `requests` requests, one at a time: next (until a dispatch), then, `service_ns`
    /// later, completed and the same process's replacement added.
    pub fn run(&mut self, requests: u64) -> Result<ScalingCounts, String> {
        let (start_ns, mut waits) = (self.now, 0u64);
        let counters_at_start = self.counters();
        for _ in 0..requests {
            let req = loop {
                let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
                match self.sched.next(&cx) {
                    Decision::Dispatch(r, _) => break r,
                    Decision::WaitUntil(t) => {
                        waits += 1;
                        self.now = t.max(self.now + 1);
                    }
                    Decision::Empty => {
                        return Err(format!("{}: nothing queued with {} processes backlogged", self.sched.name(), self.processes))
                    }
                }
            };
            let dispatch_ns = self.now;
            self.now += self.service_ns;
            let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 1 };
            self.sched.completed(&Completion { request: req, dispatch_ns, positioning_ns: 0 }, &cx);
            self.submit(req.principal.pid);
        }
        Ok(ScalingCounts { requests, waits, simulated_ns: self.now - start_ns, counters_at_start, counters: self.counters() })
    }

    fn counters(&self) -> Vec<(String, u64)> {
        self.sched.counters().into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scheduler_in_the_benchmark_keeps_serving() {
        for name in ["bfq", "bfq-plus", "bfq-original", "cfq", "deadline"] {
            let mut d = ScalingDriver::new(name, &BTreeMap::new(), 50, 2, 1_000_000).unwrap();
            d.run(500).unwrap();
            let c = d.run(1000).unwrap();
            assert_eq!(c.requests, 1000, "{name}");
            assert_eq!(d.sched.queued(), 100, "{name}: both requests of every process queued between requests");
        }
    }
}
