//! The NVMe host interface: submission/completion queue pairs, the controller's command
//! arbitration (NVMe Base Specification 1.4, section 4.13) and the PCIe link's bandwidth. A
//! SATA drive keeps its NCQ queue of 32 (`device/drive_queue.rs`); an NVMe preset uses these
//! only when the scenario asks for blk-mq or NVMe settings (`[device.nvme]`, `block.cpus`), so
//! that every earlier scenario runs as before. docs/devices-flash.md, "NVMe and blk-mq".

pub mod arbitration;
pub mod controller;
pub mod pcie;

pub use arbitration::{Arbiter, Arbitration, SqClass};
pub use controller::{NvmeController, Submitted};
pub use pcie::PcieLink;

/// Linux's nvme driver: module parameter `io_queue_depth` defaults to 1024 entries per queue;
/// a ring of N entries holds N - 1 commands (full when tail + 1 = head), so blk-mq gets 1023
/// tags per hardware queue (drivers/nvme/host/pci.c: tagset queue_depth = q_depth - 1).
pub const LINUX_IO_QUEUE_DEPTH: u32 = 1023;

/// Which SQ a request goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum SqSelect {
    /// blk-mq's map: the submitting CPU's hardware queue, one SQ per hardware queue (Linux).
    Cpu,
    /// By I/O priority class, for weighted round robin: RT -> urgent SQs, BE levels 0-3 ->
    /// high, BE 4-7 (and no class) -> medium, IDLE -> low; among a class's SQs by CPU. Linux's
    /// nvme driver does not do this: upstream it never enables WRR (a 2019 patch series adding
    /// WRR queue types selected by a cgroup's setting was not merged); this is a model of what
    /// a host could do.
    IoPrio,
}

impl SqSelect {
    pub const NAMES: [&'static str; 2] = ["cpu", "ioprio"];
}

/// `[device.nvme]` resolved.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct NvmeConfig {
    /// I/O queue pairs the controller offers (nr_hw_queues is at most this).
    pub queues: u32,
    /// Commands per queue pair (the tags of its hardware queue).
    pub queue_depth: u32,
    pub arbitration: Arbitration,
    /// Arbitration burst (0: no limit).
    pub burst: u32,
    /// Each SQ's class (weighted round robin).
    pub sq_classes: Vec<SqClass>,
    pub sq_select: SqSelect,
    /// Commands the controller executes at once (0: no limit).
    pub controller_commands: u32,
    /// The PCIe link, when the scenario gives one (else the preset's `link_mb_s`).
    pub pcie: Option<PcieLink>,
}

#[cfg(test)]
mod tests;
