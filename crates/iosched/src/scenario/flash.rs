//! `[device]` for a flash drive: `preset = "<flash preset>"` (or `kind = "flash"` with one),
//! and `[device.flash]` overriding the preset field by field. Rotational-only fields are
//! refused with a flash drive, naming the field.

use super::DeviceSection;
use crate::device::flash::die_scheduling::SuspendMode;
use crate::device::flash::gc::GcPolicy;
use crate::device::flash::presets::{flash_preset, FLASH_PRESET_NAMES};
use crate::device::flash::slc_cache::FoldPolicy;
use crate::device::flash::spec::Precondition;
use crate::device::flash::FlashSpec;
use crate::device::presets::PRESET_NAMES;
use serde::{Deserialize, Serialize};

/// `[device.flash]`: each field replaces the preset's (docs/devices-flash.md).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlashSection {
    pub channels: Option<u32>,
    pub dies_per_channel: Option<u32>,
    pub planes_per_die: Option<u32>,
    pub blocks_per_plane: Option<u32>,
    pub pages_per_block: Option<u32>,
    pub page_kib: Option<u32>,
    pub read_us: Option<f64>,
    pub program_us: Option<f64>,
    pub erase_ms: Option<f64>,
    pub channel_mb_s: Option<f64>,
    pub link_mb_s: Option<f64>,
    pub link_bytes_per_command: Option<u32>,
    pub command_overhead_us: Option<f64>,
    pub over_provisioning: Option<f64>,
    pub write_buffer_kib: Option<u32>,
    /// KiB per mapping unit (4: the FTL's unit; larger: partial writes rewrite the whole unit).
    pub mapping_unit_kib: Option<u32>,
    /// "greedy" or "cost-benefit".
    pub gc_policy: Option<String>,
    pub gc_free_superblocks: Option<u32>,
    /// "none", "full" or "aged".
    pub precondition: Option<String>,
    /// Reads before background programs/erases not begun on their die.
    pub read_priority: Option<bool>,
    /// "none", "program", "erase" or "program-erase": what a read may suspend.
    pub suspend: Option<String>,
    pub suspend_us: Option<f64>,
    pub erase_suspend_us: Option<f64>,
    pub resume_us: Option<f64>,
    /// Suspensions per operation (0: no limit).
    pub max_suspensions: Option<u32>,
    /// The SLC write cache: its fixed part (GiB of data; 0 with slc_dynamic_gib 0: off).
    pub slc_cache_gib: Option<f64>,
    /// Its dynamic part at most (GiB of data), while free user space allows.
    pub slc_dynamic_gib: Option<f64>,
    pub slc_program_us: Option<f64>,
    pub slc_read_us: Option<f64>,
    /// "idle" or "idle-and-full": when the cache is folded to TLC.
    pub slc_fold: Option<String>,
    /// Host idle time before folding starts (ms).
    pub slc_fold_idle_ms: Option<f64>,
    /// The cached mapping table's DRAM (KiB; 0: off, the whole table in DRAM).
    pub mapping_cache_kib: Option<u32>,
    /// Bytes per cached entry.
    pub mapping_entry_bytes: Option<u32>,
    /// Bytes per entry in a translation page on flash.
    pub translation_entry_bytes: Option<u32>,
    /// Logical KiB one mapping entry maps (a multiple of 4; 4: a unit; MQSim: its page).
    pub mapping_entry_kib: Option<u32>,
    /// The data cache's DRAM channel (0: no DRAM timing): transfers per second, millions.
    pub dram_mt_s: Option<f64>,
    pub dram_burst_bytes: Option<u32>,
    pub dram_row_bytes: Option<u32>,
    pub dram_trcd_ns: Option<u32>,
    pub dram_tcl_ns: Option<u32>,
    pub dram_trp_ns: Option<u32>,
    /// Hot data kept in the write cache: how long a mapping unit written back stays recent
    /// (ms; 0: off), and the DRAM holding hot data (KiB).
    pub hot_window_ms: Option<f64>,
    pub hot_cache_kib: Option<u32>,
    /// Each plane its own write frontier (one page per program, planes paired at equal page
    /// index); off: whole superpages.
    pub plane_frontiers: Option<bool>,
    /// The write buffer as MQSim's back-pressure (sectors counted, page by page); off: whole
    /// 4 KiB units, a write taken when all of it fits.
    pub mqsim_back_pressure: Option<bool>,
    /// Dies per chip taking one command at a time between them (MQSim's chips); 1: independent.
    pub dies_per_chip: Option<u32>,
    /// Whether each die has a cache register (true: ONFI cache read/program); false: a read
    /// holds the die until its data is out, a program from its data's transfer (MQSim's chips).
    pub cache_registers: Option<bool>,
    /// Channel transfers of only the sectors a command asks for (MQSim's); off: whole units/pages.
    pub sector_transfers: Option<bool>,
    /// MQSim's page status from the workload: a unit is read before a write beside it rewrites
    /// it only once the run has read or written it; off: whenever it holds data.
    pub workload_page_status: Option<bool>,
    /// A mapping unit's first read maps it to a page at its plane's frontier, without a
    /// program (MQSim's on-the-fly mapping of a never-written page).
    pub on_the_fly_read_mapping: Option<bool>,
    /// The command and address cycles of reads and programs on the channel (MQSim's NV-DDR2
    /// figures); needs cache_registers = false.
    pub command_cycles: Option<bool>,
}

/// Whether `[device]` describes a flash drive (then its spec), checking `kind` against the
/// preset and refusing fields that only a rotational drive has.
pub fn flash_spec(d: &DeviceSection, mqsim: Option<&std::path::Path>) -> Result<Option<FlashSpec>, String> {
    let preset_is_flash = d.preset.as_deref().is_some_and(|p| FLASH_PRESET_NAMES.contains(&p)) || mqsim.is_some();
    let flash = match d.kind.as_deref() {
        None => preset_is_flash || d.flash.is_some(),
        Some("flash") => true,
        Some("rotational") => {
            if mqsim.is_some() {
                return Err("field `device.kind`: `rotational` with an MQSim description (`device.mqsim`: a flash drive)".into());
            }
            if preset_is_flash {
                let p = d.preset.as_deref().unwrap_or_default();
                return Err(format!("field `device.kind`: `rotational` with the flash preset `{p}` (a flash drive: kind = \"flash\")"));
            }
            if d.flash.is_some() {
                return Err("field `device.flash`: a rotational drive (`device.kind` = \"rotational\") has no flash parameters".into());
            }
            false
        }
        Some(other) => return Err(format!("field `device.kind`: unknown kind `{other}` (known: rotational, flash)")),
    };
    if !flash {
        return Ok(None);
    }
    if d.disksim.is_some() {
        return Err(
            "field `device.disksim`: a DiskSim description is a rotational drive, not a flash one (`device.kind` / flash preset)".into()
        );
    }
    if let (Some(_), Some(p)) = (mqsim, d.preset.as_deref()) {
        return Err(format!("fields `device.preset` (`{p}`) and `device.mqsim` are mutually exclusive: give one"));
    }
    let loaded = match mqsim {
        Some(path) => Some(crate::device::flash::mqsim_config::load(path).map_err(|e| format!("field `device.mqsim`: {e}"))?),
        None => None,
    };
    let name = match d.preset.as_deref() {
        _ if loaded.is_some() => "mqsim",
        Some(p) if preset_is_flash => p,
        Some(p) if PRESET_NAMES.contains(&p) => {
            return Err(format!(
                "field `device.preset`: `{p}` is a rotational drive; a flash drive needs one of: {}",
                FLASH_PRESET_NAMES.join(", ")
            ))
        }
        Some(p) => return Err(format!("field `device.preset`: unknown flash preset `{p}` (known: {})", FLASH_PRESET_NAMES.join(", "))),
        None => {
            return Err(format!("field `device.preset`: a flash drive starts from a preset (known: {})", FLASH_PRESET_NAMES.join(", ")))
        }
    };
    let rotational_only = d.first_preset_override().or_else(|| {
        [
            ("positioning_estimator", d.positioning_estimator.is_some()),
            ("queue_order", d.queue_order.is_some()),
            ("queue_aging_ms", d.queue_aging_ms.is_some()),
        ]
        .into_iter()
        .find_map(|(f, set)| set.then_some(f))
    });
    if let Some(f) = rotational_only {
        return Err(format!(
            "field `device.{f}`: a rotational drive's field, not a flash drive's (`{name}`; flash parameters go in [device.flash])"
        ));
    }
    let mut s = match loaded {
        Some(drive) => drive.spec,
        None => flash_preset(name).expect("listed preset"),
    };
    // The preset's logical capacity (its SLC cache is sized as a share of it).
    let preset_logical = crate::device::flash::ftl::logical_units_for(&s.geometry, s.over_provisioning, s.gc_free_superblocks).ok();
    if let Some(f) = &d.flash {
        let g = &mut s.geometry;
        set(&mut g.channels, f.channels);
        set(&mut g.dies_per_channel, f.dies_per_channel);
        set(&mut g.planes_per_die, f.planes_per_die);
        set(&mut g.blocks_per_plane, f.blocks_per_plane);
        set(&mut g.pages_per_block, f.pages_per_block);
        set(&mut g.page_kib, f.page_kib);
        let t = &mut s.timing;
        set(&mut t.read_us, f.read_us);
        set(&mut t.program_us, f.program_us);
        set(&mut t.erase_ms, f.erase_ms);
        set(&mut t.channel_mb_s, f.channel_mb_s);
        set(&mut t.link_mb_s, f.link_mb_s);
        set(&mut t.link_bytes_per_command, f.link_bytes_per_command);
        set(&mut t.command_overhead_us, f.command_overhead_us);
        set(&mut s.over_provisioning, f.over_provisioning);
        set(&mut s.write_buffer_kib, f.write_buffer_kib);
        set(&mut s.mapping_unit_kib, f.mapping_unit_kib);
        set(&mut s.gc_free_superblocks, f.gc_free_superblocks);
        if let Some(p) = &f.gc_policy {
            s.gc_policy = GcPolicy::parse(p)
                .ok_or_else(|| format!("field `device.flash.gc_policy`: unknown policy `{p}` (known: {})", GcPolicy::NAMES.join(", ")))?;
        }
        let ds = &mut s.die_scheduling;
        set(&mut ds.read_priority, f.read_priority);
        set(&mut ds.suspend_us, f.suspend_us);
        set(&mut ds.erase_suspend_us, f.erase_suspend_us);
        set(&mut ds.resume_us, f.resume_us);
        set(&mut ds.max_suspensions, f.max_suspensions);
        if let Some(m) = &f.suspend {
            ds.suspend = SuspendMode::parse(m)
                .ok_or_else(|| format!("field `device.flash.suspend`: unknown mode `{m}` (known: {})", SuspendMode::NAMES.join(", ")))?;
        }
        // A geometry or over-provisioning of another capacity keeps the preset's SLC cache as
        // the same share of the user capacity, unless its sizes are given.
        let logical = crate::device::flash::ftl::logical_units_for(&s.geometry, s.over_provisioning, s.gc_free_superblocks).ok();
        if let (Some(before), Some(after)) = (preset_logical, logical) {
            if before != after && f.slc_cache_gib.is_none() && f.slc_dynamic_gib.is_none() {
                let k = after as f64 / before as f64;
                s.slc.static_gib *= k;
                s.slc.dynamic_gib *= k;
            }
        }
        let c = &mut s.slc;
        set(&mut c.static_gib, f.slc_cache_gib);
        set(&mut c.dynamic_gib, f.slc_dynamic_gib);
        set(&mut c.program_us, f.slc_program_us);
        set(&mut c.read_us, f.slc_read_us);
        set(&mut c.fold_idle_ms, f.slc_fold_idle_ms);
        if let Some(p) = &f.slc_fold {
            c.fold = FoldPolicy::parse(p)
                .ok_or_else(|| format!("field `device.flash.slc_fold`: unknown policy `{p}` (known: {})", FoldPolicy::NAMES.join(", ")))?;
        }
        let m = &mut s.mapping;
        set(&mut m.capacity_kib, f.mapping_cache_kib);
        set(&mut m.entry_bytes, f.mapping_entry_bytes);
        set(&mut m.translation_entry_bytes, f.translation_entry_bytes);
        if let Some(kib) = f.mapping_entry_kib {
            if kib == 0 || kib % 4 != 0 || kib > 1024 {
                return Err(format!("field `device.flash.mapping_entry_kib` must be a multiple of 4 in [4, 1024], got {kib}"));
            }
            m.units_per_entry = kib / 4;
        }
        let d = &mut s.dram;
        set(&mut d.mt_s, f.dram_mt_s);
        set(&mut d.burst_bytes, f.dram_burst_bytes);
        set(&mut d.row_bytes, f.dram_row_bytes);
        set(&mut d.trcd_ns, f.dram_trcd_ns);
        set(&mut d.tcl_ns, f.dram_tcl_ns);
        set(&mut d.trp_ns, f.dram_trp_ns);
        set(&mut s.hot.window_ms, f.hot_window_ms);
        set(&mut s.hot.capacity_kib, f.hot_cache_kib);
        set(&mut s.plane_frontiers, f.plane_frontiers);
        set(&mut s.mqsim_back_pressure, f.mqsim_back_pressure);
        set(&mut s.dies_per_chip, f.dies_per_chip);
        set(&mut s.cache_registers, f.cache_registers);
        set(&mut s.sector_transfers, f.sector_transfers);
        set(&mut s.workload_page_status, f.workload_page_status);
        set(&mut s.on_the_fly_read_mapping, f.on_the_fly_read_mapping);
        set(&mut s.command_cycles, f.command_cycles);
        if let Some(p) = &f.precondition {
            s.precondition = Precondition::parse(p).ok_or_else(|| {
                format!("field `device.flash.precondition`: unknown state `{p}` (known: {})", Precondition::NAMES.join(", "))
            })?;
        }
    }
    // An NVMe drive's PCIe link given as generation x lanes replaces the preset's link rate.
    if let Some(link) = d.nvme.as_ref().map(|n| n.pcie()).transpose()?.flatten() {
        if d.flash.as_ref().is_some_and(|f| f.link_mb_s.is_some()) {
            return Err("fields `device.flash.link_mb_s` and `device.nvme.pcie_gen`/`pcie_lanes` both set the link's rate: give one".into());
        }
        s.timing.link_mb_s = link.payload_mb_s();
    }
    s.validate().map_err(|e| {
        // A rule the MQSim reader set that a field given here now contradicts: say where the
        // value came from and how to set it back.
        let given = |pick: fn(&FlashSection) -> bool| d.flash.as_ref().is_some_and(pick);
        if mqsim.is_none() {
            e
        } else if e.contains("`device.flash.on_the_fly_read_mapping`") && !given(|f| f.on_the_fly_read_mapping.is_some()) {
            format!("{e} (on_the_fly_read_mapping was set by the MQSim description's reader: set on_the_fly_read_mapping = false too)")
        } else if e.contains("`device.flash.dies_per_chip`") && !given(|f| f.dies_per_chip.is_some()) {
            format!("{e} (dies_per_chip is the MQSim description's Die_No_Per_Chip: set dies_per_chip too)")
        } else if e.contains("mapping_unit_kib") && !given(|f| f.mapping_unit_kib.is_some()) {
            // The reader set the mapping unit from MQSim's page size.
            format!("{e} (the MQSim description's Page_Capacity; set mapping_unit_kib with page_kib or planes_per_die)")
        } else {
            e
        }
    })?;
    // The FTL's own checks (spare space for GC), without allocating its tables.
    crate::device::flash::ftl::logical_units_for(&s.geometry, s.over_provisioning, s.gc_free_superblocks)?;
    if !s.slc.is_off() {
        // The static SLC region's superblocks come out of the spare space.
        let g = &s.geometry;
        let n = s.slc.static_superblocks_per_die(g.dies(), g.units_per_superblock());
        crate::device::flash::ftl::check_reserve(g, s.over_provisioning, s.gc_free_superblocks, n)?;
    }
    Ok(Some(s))
}

fn set<T>(field: &mut T, v: Option<T>) {
    if let Some(v) = v {
        *field = v;
    }
}
