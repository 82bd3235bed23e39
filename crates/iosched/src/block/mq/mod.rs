//! blk-mq as Linux has it for flash drives (block/blk-mq.c, blk-mq-cpumap.c, blk-mq-sched.c):
//! per-CPU software queues mapped onto `nr_hw_queues` hardware queues, a tag set per hardware
//! queue (`tags_per_hw_queue` commands in flight on it: the drive's queue depth, or an NVMe
//! queue pair's), and the host CPU time of the I/O scheduler (`cpu_cost.rs`).
//!
//! - **CPUs to hardware queues** (`blk_mq_map_queues`, via `group_cpus_evenly`): the CPUs are
//!   cut into `nr_hw_queues` groups of consecutive CPUs, the first `cpus mod nr_hw_queues`
//!   groups one CPU larger; a request goes to its submitting CPU's hardware queue. The
//!   submitting CPU of a process is `pid mod cpus` (processes do not migrate).
//! - **One scheduler per request queue**, shared by every hardware queue: `blk_mq_init_sched`
//!   calls the elevator's `init_sched` once per request queue (mq-deadline's `deadline_data`,
//!   BFQ's `bfq_data`, kyber's `kyber_queue_data` with its device-wide domain tokens); only
//!   per-hardware-queue helpers (`init_hctx`: kyber's per-hctx lists, BFQ's depth limits) are
//!   per queue. So the engine keeps the one scheduler instance and asks it while a hardware
//!   queue's dispatch list is empty; on NVMe whether or not a tag is free:
//!   `__blk_mq_do_dispatch_sched` takes a request from the elevator first and asks for its
//!   driver tag after (`blk_mq_get_driver_tag`); a request that gets none waits on that queue's
//!   dispatch list (`hctx->dispatch`), holding what the elevator gave it (a kyber token, BFQ's
//!   in-driver count), and goes first when a tag frees; the elevator is not asked for that queue
//!   meanwhile. On SATA and disks only while a tag is free: SCSI and ATA take a budget, the
//!   device's queue depth, before the elevator is asked (`MqConfig::budget_before_elevator`).
//! - **Tags**: with blk-mq tags the scheduler's requests (`nr_requests`) are a pool per hardware
//!   queue (block/request_pool.rs), as Linux's sched tags (or its driver tags without an
//!   elevator), of Linux's size when unset (`default_nr_requests`).

pub mod cpu_cost;
pub mod queue_map;

use crate::device::nvme::{SqClass, SqSelect};
use crate::device::ArmPath;
use crate::request::{PrioClass, Request};
use crate::time::Nanos;
use cpu_cost::{CpuClock, SchedCost};
use queue_map::QueueMap;
use serde::Serialize;
use std::collections::VecDeque;

/// blk-mq's shape for one device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MqConfig {
    pub cpus: u32,
    pub nr_hw_queues: u32,
    /// Driver tags per hardware queue (its commands in flight).
    pub tags_per_hw_queue: u32,
    pub cost: SchedCost,
    pub sq_select: SqSelect,
    /// Each hardware queue's SQ class (NVMe weighted round robin; empty otherwise).
    pub sq_classes: Vec<SqClass>,
    /// Whether the scheduler keeps its requests per hardware queue in Linux (kyber's
    /// `kyber_init_hctx`; `none`, each CPU's software queue draining to its own hardware
    /// queue): then a full hardware queue holds only its own requests, and the others are still
    /// served. Otherwise (mq-deadline, BFQ: one list per request queue) a request that finds its
    /// queue full stops dispatching until a tag frees.
    #[serde(skip)]
    pub per_hw_queue_lists: bool,
    /// When the elevator gives no request while it holds some (BFQ idling, kyber out of
    /// tokens), blk-mq runs the queue again this much later (`blk_mq_delay_run_hw_queues(q,
    /// BLK_MQ_BUDGET_DELAY)` in `__blk_mq_do_dispatch_sched`, 3 ms); 0 without an elevator.
    #[serde(skip)]
    pub null_dispatch_rerun_ns: u64,
    /// SCSI and ATA (SATA drives, disks): a command takes a budget, the device's queue depth,
    /// before blk-mq asks the elevator (`blk_mq_get_dispatch_budget`, `scsi_mq_get_budget`), so
    /// with every one taken the elevator is not asked. NVMe has none: the elevator gives its
    /// request first and the driver tag is asked for after.
    #[serde(skip)]
    pub budget_before_elevator: bool,
}

/// Linux's `BLK_MQ_BUDGET_DELAY` (3 ms), in ns.
pub const BLK_MQ_BUDGET_DELAY_NS: u64 = 3_000_000;

/// The delayed re-run after an empty dispatch under Linux's scheduler `name`: none has no
/// elevator to ask.
pub fn linux_null_dispatch_rerun_ns(name: &str) -> u64 {
    if matches!(name, "noop" | "none") {
        0
    } else {
        BLK_MQ_BUDGET_DELAY_NS
    }
}

/// Whether Linux's scheduler `name` (a registry name) keeps its requests per hardware queue.
pub fn linux_per_hw_queue_lists(name: &str) -> bool {
    matches!(name, "noop" | "none" | "kyber")
}

/// Linux's `BLKDEV_DEFAULT_RQ`.
pub const BLKDEV_DEFAULT_RQ: u32 = 128;

/// Each hardware queue's request pool (`nr_requests`) with blk-mq tags when the scenario does
/// not set it: with an elevator, sched tags of `2 x min(queue depth, 128)`
/// (`blk_mq_default_nr_requests`); without one (`none`), a request is allocated with its driver
/// tag, so the queue depth.
pub fn default_nr_requests(tags_per_hw_queue: u32, scheduler: &str) -> u32 {
    if matches!(scheduler, "noop" | "none") {
        tags_per_hw_queue
    } else {
        2 * tags_per_hw_queue.min(BLKDEV_DEFAULT_RQ)
    }
}

/// Hardware queue of each CPU (`blk_mq_map_queues` over `group_cpus_evenly`).
pub fn map_cpus(cpus: u32, nr_hw_queues: u32) -> Vec<u32> {
    let (cpus, h) = (cpus.max(1), nr_hw_queues.clamp(1, cpus.max(1)));
    let (per, extra) = (cpus / h, cpus % h);
    let mut map = Vec::with_capacity(cpus as usize);
    for q in 0..h {
        let size = per + u32::from(q < extra);
        map.extend(std::iter::repeat_n(q, size as usize));
    }
    map
}

/// The SQ class a request's I/O priority selects (`SqSelect::IoPrio`).
pub fn class_of_prio(req: &Request) -> SqClass {
    match req.prio.class {
        PrioClass::RealTime => SqClass::Urgent,
        PrioClass::Idle => SqClass::Low,
        PrioClass::BestEffort if req.prio.level <= 3 => SqClass::High,
        _ => SqClass::Medium,
    }
}

#[derive(Debug)]
pub struct BlkMq {
    cfg: MqConfig,
    pub map: QueueMap,
    in_flight: Vec<u32>,
    /// Requests the scheduler dispatched for a hardware queue without a free tag.
    parked: VecDeque<(Request, ArmPath)>,
    /// When each hardware queue last handed a command on: commands leave one hardware queue in
    /// order (its submission is serialised: the NVMe SQ's lock, the AHCI port's).
    last_ready: Vec<Nanos>,
    pub clock: CpuClock,
}

impl BlkMq {
    pub fn new(cfg: MqConfig) -> BlkMq {
        // The budget is the device's (one SCSI device, one hardware queue).
        debug_assert!(!cfg.budget_before_elevator || cfg.nr_hw_queues <= 1, "a per-device budget with several hardware queues");
        let map = QueueMap::new(&cfg);
        let clock = CpuClock::new(cfg.cpus, cfg.cost);
        let n = cfg.nr_hw_queues.max(1) as usize;
        BlkMq { in_flight: vec![0; n], map, parked: VecDeque::new(), last_ready: vec![0; n], clock, cfg }
    }

    pub fn config(&self) -> &MqConfig {
        &self.cfg
    }

    pub fn cpu_of(&self, req: &Request) -> usize {
        self.map.cpu_of(req)
    }

    /// The hardware queue (and NVMe queue pair) a request goes to.
    pub fn hwq_of(&self, req: &Request) -> usize {
        self.map.hwq_of(req)
    }

    pub fn has_tag(&self, hwq: usize) -> bool {
        self.in_flight[hwq] < self.cfg.tags_per_hw_queue
    }

    /// blk-mq would ask the elevator now: a scheduler with one list per request queue while
    /// no request waits on any dispatch list (one that could not get its tag stops dispatching);
    /// one with lists per hardware queue while some queue's dispatch list is empty.
    pub fn can_ask(&self) -> bool {
        if self.cfg.budget_before_elevator && !(0..self.in_flight.len()).any(|q| self.has_tag(q)) {
            return false;
        }
        if self.cfg.per_hw_queue_lists {
            return (0..self.in_flight.len()).any(|q| self.can_take(q));
        }
        self.parked.is_empty()
    }

    /// Hardware queue `hwq` asks the elevator for a request: nothing waits on its dispatch list
    /// (blk-mq serves that list first). The request then gets a tag, or waits on that list.
    pub fn can_take(&self, hwq: usize) -> bool {
        !self.parked.iter().any(|(r, _)| self.hwq_of(r) == hwq)
    }

    /// Whether a request that found its hardware queue full leaves the others to be served.
    pub fn per_hw_queue_lists(&self) -> bool {
        self.cfg.per_hw_queue_lists
    }

    /// See [`MqConfig::null_dispatch_rerun_ns`].
    pub fn null_dispatch_rerun_ns(&self) -> u64 {
        self.cfg.null_dispatch_rerun_ns
    }

    pub fn take_tag(&mut self, hwq: usize) {
        debug_assert!(self.has_tag(hwq));
        self.in_flight[hwq] += 1;
    }

    pub fn release_tag(&mut self, hwq: usize) {
        debug_assert!(self.in_flight[hwq] > 0);
        self.in_flight[hwq] -= 1;
    }

    pub fn in_flight(&self) -> u32 {
        self.in_flight.iter().sum()
    }

    pub fn in_flight_on(&self, hwq: usize) -> u32 {
        self.in_flight[hwq]
    }

    pub fn park(&mut self, req: Request, path: ArmPath) {
        // With a budget before the elevator, it is asked only with a tag free: nothing parks.
        debug_assert!(!self.cfg.budget_before_elevator, "a request parked behind a budget");
        self.parked.push_back((req, path));
    }

    pub fn parked(&self) -> usize {
        self.parked.len()
    }

    /// The first waiting request whose hardware queue now has a tag (in waiting order).
    pub fn unpark(&mut self) -> Option<(Request, ArmPath)> {
        let i = self.parked.iter().position(|(r, _)| self.has_tag(self.hwq_of(r)))?;
        self.parked.remove(i)
    }

    /// Charges the scheduler's CPU time for `req` dispatched at `now` for hardware queue `hwq`:
    /// when its command leaves the host (its CPU work done, and after the queue's previous one).
    pub fn charge(&mut self, req: &Request, hwq: usize, now: Nanos) -> Nanos {
        let cpu = self.cpu_of(req);
        let ready = self.clock.charge(cpu, now).max(self.last_ready[hwq]);
        self.last_ready[hwq] = ready;
        ready
    }
}

#[cfg(test)]
mod tests;
