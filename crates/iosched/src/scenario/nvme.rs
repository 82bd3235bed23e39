//! `[device.nvme]` (an NVMe drive's queue pairs, arbitration and PCIe link) and blk-mq's
//! fields of `[block]` (`cpus`, `nr_hw_queues`, `sched_cost_us`). A scenario with none of them
//! runs as before: one queue, no CPU cost (docs/devices-flash.md, "NVMe and blk-mq").

use super::Scenario;
use crate::block::mq::cpu_cost::SchedCost;
use crate::block::mq::MqConfig;
use crate::device::nvme::{Arbitration, NvmeConfig, PcieLink, SqClass, SqSelect, LINUX_IO_QUEUE_DEPTH};
use serde::{Deserialize, Serialize};

/// `[device.nvme]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NvmeSection {
    /// I/O queue pairs the controller offers (default: one per CPU, `block.cpus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queues: Option<u32>,
    /// Commands per queue pair (default 1023: Linux's io_queue_depth 1024, one entry kept free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
    /// "rr" (default) or "wrr" (weighted round robin with urgent priority class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arbitration: Option<String>,
    /// WRR: commands per round of the high, medium and low classes (default [1, 1, 1]: the
    /// Arbitration feature's reset value, 0's based weights of 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<Vec<u32>>,
    /// Arbitration burst: 1, 2, 4, ... 64, or 0 for no limit (default 1: AB's reset value 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
    /// Each queue pair's class: "urgent", "high", "medium", "low" (default all "medium").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sq_classes: Option<Vec<String>>,
    /// "cpu" (blk-mq's map, default) or "ioprio" (by the request's I/O priority class; WRR).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sq_select: Option<String>,
    /// Commands the controller executes at once (default 0: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_commands: Option<u32>,
    /// PCIe generation 1-5 (with `pcie_lanes`: replaces the preset's `link_mb_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_gen: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_lanes: Option<u32>,
    /// Payload share of the encoded PCIe bandwidth (default 0.908, the presets' estimate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlp_efficiency: Option<f64>,
}

impl NvmeSection {
    /// The PCIe link the section describes, if it gives one.
    pub fn pcie(&self) -> Result<Option<PcieLink>, String> {
        if self.pcie_gen.is_none() && self.pcie_lanes.is_none() && self.tlp_efficiency.is_none() {
            return Ok(None);
        }
        let (Some(generation), Some(lanes)) = (self.pcie_gen, self.pcie_lanes) else {
            let given = if self.tlp_efficiency.is_some() && self.pcie_gen.is_none() && self.pcie_lanes.is_none() {
                "field `device.nvme.tlp_efficiency` needs `device.nvme.pcie_gen` and `device.nvme.pcie_lanes`"
            } else {
                "fields `device.nvme.pcie_gen` and `device.nvme.pcie_lanes` go together"
            };
            return Err(format!("{given} (the link's rate needs both)"));
        };
        let link = PcieLink {
            generation,
            lanes,
            tlp_efficiency: self.tlp_efficiency.unwrap_or(crate::device::nvme::pcie::DEFAULT_TLP_EFFICIENCY),
        };
        link.validate()?;
        Ok(Some(link))
    }
}

/// The most CPUs and queue pairs a scenario may ask for.
const MAX_CPUS: u32 = 1024;

/// blk-mq and NVMe settings for a run under `scheduler` (a registry name): (None, None) when
/// the scenario has none of them.
pub fn host_queues(s: &Scenario, scheduler: &str) -> Result<(Option<MqConfig>, Option<NvmeConfig>), String> {
    let block = s.block.clone().unwrap_or_default();
    let section = s.device.nvme.as_ref();
    let on = block.cpus.is_some() || block.nr_hw_queues.is_some() || block.sched_cost_us.is_some() || section.is_some();
    let flash = s.flash_spec()?;
    let nvme_drive = flash.as_ref().is_some_and(|f| f.interface == "nvme");
    if let Some(_n) = section {
        if !nvme_drive {
            let what = match &flash {
                Some(f) => format!("`{}` is a {} drive", f.name, f.interface.to_uppercase()),
                None => "a rotational drive".to_string(),
            };
            return Err(format!("field `device.nvme`: {what}; queue pairs need an NVMe preset (SATA keeps NCQ: `device.queue_depth`)"));
        }
    }
    if !on {
        return Ok((None, None));
    }
    if s.array.is_some() {
        let field = if section.is_some() { "device.nvme" } else { "block.cpus" };
        return Err(format!(
            "field `{field}`: blk-mq's hardware queues, NVMe queue pairs and the scheduler's CPU cost are not modelled for an [array] (each member would need the host's CPUs)"
        ));
    }
    let cpus = block.cpus.unwrap_or(1);
    if !(1..=MAX_CPUS).contains(&cpus) {
        return Err(format!("field `block.cpus` must be in [1, {MAX_CPUS}], got {cpus}"));
    }
    let cost = match block.sched_cost_us {
        None => SchedCost::linux(scheduler),
        Some(us) => {
            // The clock is in nanoseconds: a cost that would round to 0 ns is refused, not lost.
            if !(us.is_finite() && (us == 0.0 || (0.001..=1000.0).contains(&us))) {
                return Err(format!("field `block.sched_cost_us` must be 0 or in [0.001, 1000] microseconds, got {us}"));
            }
            SchedCost { per_request_ns: (us * 1e3).round() as u64, serialized: SchedCost::linux_serialized(scheduler) }
        }
    };
    if !nvme_drive {
        let hw = block.nr_hw_queues.unwrap_or(1);
        if hw != 1 {
            return Err(format!(
                "field `block.nr_hw_queues` must be 1 for this drive (SATA/AHCI and the disks have one command queue), got {hw}"
            ));
        }
        let tags = s.drive_queue()?.depth;
        let per_hw_queue_lists = crate::block::mq::linux_per_hw_queue_lists(scheduler);
        let mq = MqConfig {
            cpus,
            nr_hw_queues: 1,
            tags_per_hw_queue: tags,
            cost,
            sq_select: SqSelect::Cpu,
            sq_classes: vec![],
            per_hw_queue_lists,
            null_dispatch_rerun_ns: crate::block::mq::linux_null_dispatch_rerun_ns(scheduler),
            budget_before_elevator: true,
        };
        return Ok((Some(mq), None));
    }
    if s.device.queue_depth.is_some() {
        return Err(
            "field `device.queue_depth`: with blk-mq on an NVMe drive the depth is per queue pair: `device.nvme.queue_depth`".into()
        );
    }
    let n = section.cloned().unwrap_or_default();
    let queues = n.queues.unwrap_or(cpus);
    if !(1..=MAX_CPUS).contains(&queues) {
        return Err(format!("field `device.nvme.queues` must be in [1, {MAX_CPUS}], got {queues}"));
    }
    let queue_depth = n.queue_depth.unwrap_or(LINUX_IO_QUEUE_DEPTH);
    if !(1..=65_535).contains(&queue_depth) {
        return Err(format!(
            "field `device.nvme.queue_depth` must be in [1, 65535] (NVMe: at most 64K entries, one kept free), got {queue_depth}"
        ));
    }
    let burst = n.burst.unwrap_or(1);
    if !(burst == 0 || (burst <= 64 && burst.is_power_of_two())) {
        return Err(format!("field `device.nvme.burst` must be 1, 2, 4, 8, 16, 32, 64 or 0 (no limit), got {burst}"));
    }
    let arbitration = match n.arbitration.as_deref().unwrap_or("rr") {
        "rr" => {
            if n.weights.is_some() {
                return Err("field `device.nvme.weights`: weights apply to `arbitration = \"wrr\"` only".into());
            }
            Arbitration::RoundRobin
        }
        "wrr" => {
            let w = n.weights.clone().unwrap_or_else(|| vec![1, 1, 1]);
            if w.len() != 3 {
                return Err(format!("field `device.nvme.weights` must hold 3 weights (high, medium, low), got {}", w.len()));
            }
            if let Some(bad) = w.iter().find(|&&x| !(1..=256).contains(&x)) {
                return Err(format!(
                    "field `device.nvme.weights`: each weight must be in [1, 256] (NVMe's 0's based 8-bit fields), got {bad}"
                ));
            }
            Arbitration::WeightedRoundRobin { weights: [w[0], w[1], w[2]] }
        }
        other => {
            return Err(format!("field `device.nvme.arbitration`: unknown mechanism `{other}` (known: {})", Arbitration::NAMES.join(", ")))
        }
    };
    let sq_classes = match &n.sq_classes {
        None => vec![SqClass::Medium; queues as usize],
        Some(list) => {
            if list.len() != queues as usize {
                return Err(format!("field `device.nvme.sq_classes` must give one class per queue pair ({queues}), got {}", list.len()));
            }
            list.iter()
                .enumerate()
                .map(|(i, c)| {
                    SqClass::parse(c).ok_or_else(|| {
                        format!("field `device.nvme.sq_classes[{i}]`: unknown class `{c}` (known: {})", SqClass::NAMES.join(", "))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?
        }
    };
    let sq_select = match n.sq_select.as_deref().unwrap_or("cpu") {
        "cpu" => SqSelect::Cpu,
        "ioprio" => {
            if arbitration == Arbitration::RoundRobin {
                return Err("field `device.nvme.sq_select`: `ioprio` selects priority classes, which need `arbitration = \"wrr\"`".into());
            }
            SqSelect::IoPrio
        }
        other => return Err(format!("field `device.nvme.sq_select`: unknown choice `{other}` (known: {})", SqSelect::NAMES.join(", "))),
    };
    let nr_hw_queues = match sq_select {
        // Every queue pair is a hardware queue of its own type (urgent, high, ...).
        SqSelect::IoPrio => {
            if let Some(hw) = block.nr_hw_queues.filter(|&hw| hw != queues) {
                return Err(format!(
                    "field `block.nr_hw_queues` = {hw}: with `device.nvme.sq_select = \"ioprio\"` every queue pair is a hardware queue of its class ({queues})"
                ));
            }
            queues
        }
        // Linux: one I/O queue per CPU, as many as the controller grants.
        SqSelect::Cpu => block.nr_hw_queues.unwrap_or(cpus.min(queues)),
    };
    if nr_hw_queues == 0 || nr_hw_queues > queues {
        return Err(format!("field `block.nr_hw_queues` must be in [1, {queues}] (the drive's queue pairs), got {nr_hw_queues}"));
    }
    if sq_select == SqSelect::Cpu && nr_hw_queues > cpus {
        // Linux maps CPUs onto hardware queues: a queue no CPU maps to is never used.
        return Err(format!(
            "field `block.nr_hw_queues` = {nr_hw_queues}: more than `block.cpus` ({cpus}); a queue no CPU maps to is never used"
        ));
    }
    let pcie = n.pcie()?;
    let per_hw_queue_lists = crate::block::mq::linux_per_hw_queue_lists(scheduler);
    let mq = MqConfig {
        cpus,
        nr_hw_queues,
        tags_per_hw_queue: queue_depth,
        cost,
        sq_select,
        sq_classes: sq_classes.clone(),
        per_hw_queue_lists,
        null_dispatch_rerun_ns: crate::block::mq::linux_null_dispatch_rerun_ns(scheduler),
        budget_before_elevator: false,
    };
    let nvme = NvmeConfig {
        queues,
        queue_depth,
        arbitration,
        burst,
        sq_classes,
        sq_select,
        controller_commands: n.controller_commands.unwrap_or(0),
        pcie,
    };
    Ok((Some(mq), Some(nvme)))
}
