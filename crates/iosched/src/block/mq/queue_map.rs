//! Which hardware queue (and software queue, the submitting CPU's) a request goes to: blk-mq's
//! map of CPUs onto hardware queues (`blk_mq_map_queues` over `group_cpus_evenly`), or, with
//! `SqSelect::IoPrio`, the NVMe SQ class of the request's I/O priority. Shared by blk-mq's tags
//! and by a scheduler that keeps its lists per hardware queue (kyber's `kyber_hctx_data`; `none`'s
//! software queues, which also count each queue's tags).

use super::{class_of_prio, map_cpus, MqConfig};
use crate::device::nvme::{SqClass, SqSelect};
use crate::request::Request;

#[derive(Clone, Debug, PartialEq)]
pub struct QueueMap {
    cpus: u32,
    nr_hw_queues: u32,
    cpu_to_hwq: Vec<u32>,
    /// Driver tags per hardware queue (`MqConfig::tags_per_hw_queue`).
    pub tags_per_hw_queue: u32,
    pub sq_select: SqSelect,
    /// Each hardware queue's SQ class (NVMe weighted round robin; empty otherwise).
    pub sq_classes: Vec<SqClass>,
}

impl QueueMap {
    pub fn new(cfg: &MqConfig) -> QueueMap {
        QueueMap {
            cpus: cfg.cpus.max(1),
            nr_hw_queues: cfg.nr_hw_queues.max(1),
            cpu_to_hwq: map_cpus(cfg.cpus, cfg.nr_hw_queues),
            tags_per_hw_queue: cfg.tags_per_hw_queue,
            sq_select: cfg.sq_select,
            sq_classes: cfg.sq_classes.clone(),
        }
    }

    pub fn nr_hw_queues(&self) -> usize {
        self.nr_hw_queues as usize
    }

    /// CPUs (software queues).
    pub fn cpus(&self) -> usize {
        self.cpus as usize
    }

    /// The submitting CPU (its software queue): `pid mod cpus` (processes do not migrate).
    pub fn cpu_of(&self, req: &Request) -> usize {
        (req.principal.pid % self.cpus) as usize
    }

    /// The hardware queue (and NVMe queue pair) a request goes to.
    pub fn hwq_of(&self, req: &Request) -> usize {
        let cpu = self.cpu_of(req);
        let by_cpu = self.cpu_to_hwq[cpu] as usize;
        match self.sq_select {
            SqSelect::Cpu => by_cpu,
            SqSelect::IoPrio => {
                let want = class_of_prio(req);
                let n = self.sq_classes.iter().filter(|&&c| c == want).count();
                if n == 0 {
                    return by_cpu;
                }
                let k = cpu % n;
                self.sq_classes.iter().enumerate().filter(|(_, &c)| c == want).nth(k).map_or(by_cpu, |(i, _)| i)
            }
        }
    }
}
