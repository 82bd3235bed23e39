//! The host CPU time each I/O scheduler spends per request, and the CPUs as a resource.
//!
//! Figures (per request: insertion, dispatch and completion hooks together):
//! - **bfq: 1.9 us, under one lock per device.** Documentation/block/bfq-iosched.rst (commit
//!   4438cf50 "doc, block, bfq: add information on bfq execution time"; the release is not
//!   checked here): "the
//!   total, single-lock-protected, per-request processing time of BFQ ... is, e.g., 1.9 us on an
//!   Intel Core i7-2760QM@2.40GHz". The lock is `bfqd->lock`, one per request queue, so BFQ's
//!   ceiling is 1 / 1.9 us = 526K IOPS however many CPUs submit (the same page gives 400K,
//!   250K and 80K IOPS as BFQ's limits on three other CPUs).
//! - **mq-deadline: 0.7 us, under one lock per device** (`dd->lock`): the same paragraph of
//!   bfq-iosched.rst: "the total, single-lock-protected, per-request execution time of the
//!   lightest I/O scheduler available in blk-mq, mq-deadline, is 0.7 us".
//! - **kyber: 0.83 us, not serialised across CPUs**, measured here: no published per-request
//!   figure was found (the ICPE'24 characterisation by Ren, Doekemeijer, Tehrany and Trivedi
//!   reports overheads as throughput losses on its machines, not a time per request), so
//!   `experiments/flash/sched_cost/measure.sh` measures the CPU time spent inside each
//!   scheduler's own functions per 4 KiB read (Linux 6.18, a loop device over tmpfs, `perf
//!   record -a -g`; the median of eight rounds). The same protocol gives mq-deadline 0.63 us (the
//!   documented figure below: 0.7) and BFQ 2.9 us (1.9), so it is of the documented figures'
//!   order (docs/devices-flash.md has every round). Kyber's state is per hardware queue
//!   (`kyber_hctx_data`, per-CPU `kyber_ctx_queue`s) and its tokens are sbitmaps, not one
//!   device-wide lock, so its cost is not serialised across CPUs (its dispatch lock is per
//!   hardware queue: on a device of one queue, as SATA's, Linux serialises kyber's dispatch too;
//!   not modelled). `block.sched_cost_us` sets another cost.
//! - **none: 0.** blk-mq without an elevator inserts into the software or hardware queue
//!   directly; the rest of the I/O stack's CPU time (the same for every scheduler) is not
//!   modelled.
//!
//! The cost is charged when the scheduler dispatches a request, on the CPU that submitted it
//! (`pid mod cpus`), which is busy for that long; a scheduler under a device-wide lock also
//! holds the lock that long, so no other CPU runs it meanwhile. The command reaches the device
//! when its CPU work ends. Hence IOPS <= cpus / cost, and <= 1 / cost under a lock. The one-lock
//! model is that of the kernels before 2024's locking work on BFQ and mq-deadline, which raised
//! both ceilings (docs/devices-flash.md).

use crate::time::Nanos;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SchedCost {
    /// CPU time per request.
    pub per_request_ns: Nanos,
    /// Run under one device-wide lock (serialised across CPUs).
    pub serialized: bool,
}

impl SchedCost {
    pub const NONE: SchedCost = SchedCost { per_request_ns: 0, serialized: false };

    /// Linux's figure for a scheduler of the registry (by its canonical name).
    pub fn linux(name: &str) -> SchedCost {
        match name {
            "bfq" => SchedCost { per_request_ns: 1_900, serialized: true },
            "mq-deadline" => SchedCost { per_request_ns: 700, serialized: true },
            "kyber" => SchedCost { per_request_ns: 830, serialized: false },
            // noop ("none"): no elevator; the others (bfq-plus,
            // bfq-original and the rest of the registry) are not Linux's blk-mq schedulers:
            // no figure, no lock, unless `block.sched_cost_us` gives one (docs/devices-flash.md).
            _ => SchedCost::NONE,
        }
    }

    /// Whether a scheduler's own state sits under one device-wide lock in Linux.
    pub fn linux_serialized(name: &str) -> bool {
        matches!(name, "bfq" | "mq-deadline")
    }
}

/// The host's CPUs and the scheduler's lock as timelines.
#[derive(Clone, Debug)]
pub struct CpuClock {
    cost: SchedCost,
    cpu_free_ns: Vec<Nanos>,
    lock_free_ns: Nanos,
    /// CPU time charged.
    pub busy_ns: Nanos,
    /// Time requests waited for a CPU or the lock.
    pub wait_ns: Nanos,
}

impl CpuClock {
    pub fn new(cpus: u32, cost: SchedCost) -> CpuClock {
        CpuClock { cost, cpu_free_ns: vec![0; cpus.max(1) as usize], lock_free_ns: 0, busy_ns: 0, wait_ns: 0 }
    }

    pub fn cost(&self) -> SchedCost {
        self.cost
    }

    /// Charges one request dispatched at `now` by `cpu`; returns when its CPU work ends.
    pub fn charge(&mut self, cpu: usize, now: Nanos) -> Nanos {
        if self.cost.per_request_ns == 0 {
            return now;
        }
        let mut start = now.max(self.cpu_free_ns[cpu]);
        if self.cost.serialized {
            start = start.max(self.lock_free_ns);
        }
        let end = start + self.cost.per_request_ns;
        self.cpu_free_ns[cpu] = end;
        if self.cost.serialized {
            self.lock_free_ns = end;
        }
        self.busy_ns += self.cost.per_request_ns;
        self.wait_ns += start - now;
        end
    }
}
