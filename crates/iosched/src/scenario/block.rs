//! `[block]` (the block layer) and the drive's command queue (`device.queue_depth`,
//! `device.queue_order`, `device.queue_aging_ms`). A scenario with neither runs as before
//! they existed: no merging, no request limit, depth 1.

use super::{DeviceSection, LatencyUs};
use crate::block::request_pool::TagModel;
use crate::block::BlockConfig;
use crate::device::command_latency::CommandLatency;
use crate::device::drive_queue::{DriveQueueConfig, FirmwareOrder};
use crate::device::presets::command_queue;
use crate::time::Nanos;
use serde::{Deserialize, Serialize};

/// Linux's default `max_sectors_kb` for many drives (512 KiB since 4.x; 2.6 had the drive's
/// max_hw_sectors, often 512 KiB too).
pub const DEFAULT_MAX_SECTORS_KB: u32 = 512;
/// Linux's NVME_DSM_MAX_RANGES (include/linux/nvme.h): the ranges one Dataset Management
/// command carries, and the NVMe driver's `max_discard_segments` when the controller gives no
/// DMRL.
pub const NVME_DSM_MAX_RANGES: u32 = 256;
/// The largest `[block] max_discard_segments` accepted.
pub const MAX_DISCARD_SEGMENTS: u32 = NVME_DSM_MAX_RANGES;
/// Linux 2.6's BLKDEV_MAX_RQ: the default `nr_requests`.
pub const DEFAULT_NR_REQUESTS: u32 = 128;
/// How long a command may wait inside an RPO drive before the firmware serves it first.
/// Firmware does not publish this; 500 ms is an estimate (tunable).
pub const DEFAULT_QUEUE_AGING_MS: f64 = 500.0;

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BlockSection {
    /// Request structures per queue (default 128, Linux 2.6's; with blk-mq's hardware queues and
    /// tags, per hardware queue and by default Linux's for the scheduler: 2 x min(queue depth,
    /// 128) with an elevator, the queue depth with `none`); 0 = unlimited.
    pub nr_requests: Option<u32>,
    /// "legacy" (Linux 2.6: counted per direction, batching wake-ups) or "blk-mq" (one pool
    /// of scheduler tags).
    pub tags: Option<String>,
    /// Linux's nomerges: 0 every merge (default), 1 only into the last merged request, 2 none.
    pub nomerges: Option<u8>,
    /// Largest request merges may build (default 512 KiB).
    pub max_sectors_kb: Option<u32>,
    /// Plug each process's bios of one instant and merge them first (default true).
    pub plug: Option<bool>,
    /// Largest discard request in sectors (Linux's `max_discard_sectors`; default: no limit).
    /// Linux's figures: 4,194,240 on SATA (libata's Block Limits VPD page, 65535 x 64 TRIM
    /// range entries), UINT_MAX on NVMe unless the controller sets DMRSL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_discard_sectors: Option<u32>,
    /// Ranges one discard request may carry (Linux's `max_discard_segments`: read-only in sysfs,
    /// the driver's; here the drive's, to compare). Default from the drive: 256 on an NVMe
    /// drive (`nvme_config_discard`: NVME_DSM_MAX_RANGES), 1 otherwise (SATA: libata sends
    /// one TRIM range per request; disks take no discard). 1 to 256 (a Dataset Management
    /// command carries at most 256 ranges). Above 1 a discard joins a queued discard wherever
    /// it lies (docs/devices-flash.md, "Discard (TRIM)").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_discard_segments: Option<u32>,
    /// blk-mq: the host's CPUs (submitting CPU = pid mod cpus). Setting any of the three
    /// blk-mq fields turns blk-mq's hardware queues and the scheduler's CPU cost on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    /// blk-mq: hardware queues (default: min(cpus, the NVMe drive's queue pairs); 1 otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_hw_queues: Option<u32>,
    /// blk-mq: the scheduler's CPU time per request in microseconds (default: Linux's figure for
    /// the scheduler: bfq 1.9, mq-deadline 0.7, kyber 0.83, none 0; block/mq/cpu_cost.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_cost_us: Option<f64>,
}

impl BlockSection {
    pub fn config(&self) -> Result<BlockConfig, String> {
        let nr = self.nr_requests.unwrap_or(DEFAULT_NR_REQUESTS);
        if nr > 1_000_000 {
            return Err(format!("field `block.nr_requests` must be in [0, 1000000] (0: unlimited), got {nr}"));
        }
        let tags = match self.tags.as_deref().unwrap_or("legacy") {
            "legacy" => TagModel::Legacy,
            "blk-mq" => TagModel::BlkMq,
            other => return Err(format!("field `block.tags`: unknown model `{other}` (known: {})", TagModel::NAMES.join(", "))),
        };
        let nomerges = self.nomerges.unwrap_or(0);
        if nomerges > 2 {
            return Err(format!("field `block.nomerges` must be 0, 1 or 2, got {nomerges}"));
        }
        let kb = self.max_sectors_kb.unwrap_or(DEFAULT_MAX_SECTORS_KB);
        if !(4..=65_536).contains(&kb) {
            return Err(format!("field `block.max_sectors_kb` must be in [4, 65536], got {kb}"));
        }
        if self.max_discard_sectors == Some(0) {
            return Err("field `block.max_discard_sectors` must be at least 1 (omit it for no limit), got 0".into());
        }
        if let Some(n) = self.max_discard_segments {
            if !(1..=MAX_DISCARD_SEGMENTS).contains(&n) {
                return Err(format!(
                    "field `block.max_discard_segments` must be in [1, {MAX_DISCARD_SEGMENTS}] (ranges per discard command; omit it for the drive's), got {n}"
                ));
            }
        }
        Ok(BlockConfig {
            nr_requests: (nr > 0).then_some(nr),
            tags,
            nomerges,
            max_sectors: kb * 2,
            plug: self.plug.unwrap_or(true),
            max_discard_sectors: self.max_discard_sectors,
            // The drive's default is filled in by `config_for_drive`.
            max_discard_segments: self.max_discard_segments.unwrap_or(1),
        })
    }

    /// `config` with an unset `max_discard_segments` taken from the drive: `nvme` for an NVMe
    /// drive (256 ranges), else 1.
    pub fn config_for_drive(&self, nvme: bool) -> Result<BlockConfig, String> {
        let cfg = self.config()?;
        Ok(match self.max_discard_segments {
            None if nvme => BlockConfig { max_discard_segments: NVME_DSM_MAX_RANGES, ..cfg },
            _ => cfg,
        })
    }
}

/// Latencies (µs) a list may hold: a run's worth of measured ones, not a file's.
const MAX_LATENCY_SAMPLES: usize = 10_000_000;

/// The host path's latency per command from `device.command_latency_us`: a number or a list,
/// each in [0, 10^6] µs (a second), rounded to whole nanoseconds.
pub fn command_latency(d: &DeviceSection) -> Result<CommandLatency, String> {
    let check = |i: Option<usize>, us: f64| -> Result<Nanos, String> {
        if us.is_finite() && (0.0..=1_000_000.0).contains(&us) {
            return Ok((us * 1e3).round() as Nanos);
        }
        let at = i.map_or(String::new(), |i| format!("[{i}]"));
        Err(format!("field `device.command_latency_us{at}` must be in [0, 1000000] microseconds, got {us}"))
    };
    match &d.command_latency_us {
        None => Ok(CommandLatency::default()),
        Some(LatencyUs::One(us)) => Ok(CommandLatency::constant(check(None, *us)?)),
        Some(LatencyUs::Many(list)) => {
            if list.is_empty() || list.len() > MAX_LATENCY_SAMPLES {
                return Err(format!(
                    "field `device.command_latency_us`: a list needs 1 to {MAX_LATENCY_SAMPLES} latencies, got {}",
                    list.len()
                ));
            }
            let ns = list.iter().enumerate().map(|(i, &us)| check(Some(i), us)).collect::<Result<Vec<_>, _>>()?;
            Ok(CommandLatency::sequence(ns))
        }
    }
}

/// The drive's command queue from `[device]`: depth (1 .. the preset's maximum), firmware
/// order (default RPO when depth > 1) and aging bound.
pub fn drive_queue(d: &DeviceSection, preset_name: Option<&str>) -> Result<DriveQueueConfig, String> {
    let depth = d.queue_depth.unwrap_or(1);
    let (max, why) = match preset_name.and_then(command_queue) {
        Some(q) => (q.max_depth, q.source.to_string()),
        None => (256, "a DiskSim drive: up to 256".to_string()),
    };
    if depth == 0 || depth > max {
        return Err(format!("field `device.queue_depth` must be in [1, {max}] for this drive ({why}), got {depth}"));
    }
    let aging_ms = d.queue_aging_ms.unwrap_or(DEFAULT_QUEUE_AGING_MS);
    if !(aging_ms.is_finite() && (0.0..=3_600_000.0).contains(&aging_ms)) {
        return Err(format!("field `device.queue_aging_ms` must be in [0, 3600000], got {aging_ms}"));
    }
    let order = match d.queue_order.as_deref() {
        None | Some("rpo") => FirmwareOrder::Rpo { aging_ns: (aging_ms * 1e6) as u64 },
        Some("fifo") => FirmwareOrder::Fifo,
        Some(other) => {
            return Err(format!("field `device.queue_order`: unknown order `{other}` (known: {})", FirmwareOrder::NAMES.join(", ")))
        }
    };
    Ok(DriveQueueConfig { depth, order })
}
