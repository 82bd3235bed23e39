//! A flash drive's full description (`[device] preset = "<flash preset>"`, overridden field by
//! field by `[device.flash]`), validated with errors naming the field and value.

use super::die_scheduling::DieScheduling;
use super::dram::DramTiming;
use super::gc::GcPolicy;
use super::geometry::FlashGeometry;
use super::hot_data::HotDataConfig;
use super::mapping_cache::MappingCacheConfig;
use super::slc_cache::SlcConfig;
use super::timing::FlashTiming;
use serde::Serialize;

/// The state a run starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Precondition {
    /// Fresh from a secure erase: nothing mapped (reads of unwritten units touch no flash).
    None,
    /// Every logical unit written once, sequentially (no GC yet).
    Full,
    /// Full, then random 4 KiB overwrites (whole mapping units with a larger `mapping_unit_kib`)
    /// of twice the logical capacity: GC in steady state (SNIA PTS's preconditioning, without
    /// timing: only the FTL's state).
    Aged,
}

impl Precondition {
    pub const NAMES: [&'static str; 3] = ["none", "full", "aged"];
    pub fn parse(s: &str) -> Option<Precondition> {
        match s {
            "none" => Some(Precondition::None),
            "full" => Some(Precondition::Full),
            "aged" => Some(Precondition::Aged),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlashSpec {
    pub name: String,
    /// "sata" or "nvme" (the host interface's queue: NCQ 32, or the NVMe placeholder depth).
    pub interface: String,
    pub geometry: FlashGeometry,
    pub timing: FlashTiming,
    /// Spare flash as a fraction of the logical capacity (raw / user - 1).
    pub over_provisioning: f64,
    pub write_buffer_kib: u32,
    /// KiB the drive maps per entry of its table (4: the FTL's unit; larger, a write covering part
    /// of one rewrites all of it: mapping_unit.rs).
    #[serde(skip_serializing_if = "is_four")]
    pub mapping_unit_kib: u32,
    pub gc_policy: GcPolicy,
    /// GC runs on a die needing a new frontier while it has at most this many free superblocks.
    pub gc_free_superblocks: u32,
    pub precondition: Precondition,
    /// Commands the host may queue (SATA NCQ: 32; NVMe: a placeholder until queue pairs exist).
    pub max_queue_depth: u32,
    /// Read priority and program/erase suspension on the dies (off: first come on each die).
    #[serde(skip_serializing_if = "DieScheduling::is_off")]
    pub die_scheduling: DieScheduling,
    /// The SLC write cache (off: every host write goes to TLC through the DRAM buffer).
    #[serde(skip_serializing_if = "SlcConfig::is_off")]
    pub slc: SlcConfig,
    /// The cached mapping table (off: the whole table in DRAM).
    #[serde(skip_serializing_if = "MappingCacheConfig::is_off")]
    pub mapping: MappingCacheConfig,
    /// The data cache's DRAM channel (off: DRAM accesses take no time).
    #[serde(skip_serializing_if = "DramTiming::is_off")]
    pub dram: DramTiming,
    /// Hot data kept in the write cache (off: every write is written back: hot_data.rs).
    #[serde(skip_serializing_if = "HotDataConfig::is_off")]
    pub hot: HotDataConfig,
    /// Each plane its own write frontier, as MQSim's FTL allocates (plane_frontiers.rs): a
    /// program is one page, and pages of one die's planes at the same page index that wait
    /// together go as one multi-plane program. Off: a die programs whole superpages.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub plane_frontiers: bool,
    /// The write buffer as MQSim's back-pressure: it counts the sectors the host wrote (an
    /// unaligned 8 KiB write weighs 16 sectors, not its three 4 KiB units), and takes a write
    /// while the sectors in flight, with the write's own before its last mapping unit, stay
    /// below the bound (MQSim takes a write page by page while it is below). Off: whole units,
    /// a write taken when all of it fits.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub mqsim_back_pressure: bool,
    /// Dies per chip that take one command at a time between them, as MQSim's transaction
    /// scheduler issues (ssd/TSU_Base.cpp: a chip is sent a command only when idle); 1: every
    /// die independent. The chips of a channel take its dies in CWDP order (die `d` is on chip
    /// `d % (channels x chips per channel)`).
    #[serde(skip_serializing_if = "crate::serde_skip::is_one")]
    pub dies_per_chip: u32,
    /// Each die buffers a page beside the one its array works on (ONFI cache read and cache
    /// program): it is free once a read's page is in the register, and a program's data comes
    /// in while it works. Off (MQSim's chips): a read holds the die until its data is out over
    /// the channel, a program from the start of its data's transfer.
    #[serde(skip_serializing_if = "crate::serde_skip::is_true")]
    pub cache_registers: bool,
    /// Channel transfers carry only the sectors a command asks for, as MQSim's do (a read the
    /// host's sectors in the page, a program the sectors its write buffer counts for it:
    /// ssd/NVM_PHY_ONFI_NVDDR2.cpp, `Data_and_metadata_size_in_byte`). Off: whole 4 KiB units
    /// read, whole pages programmed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sector_transfers: bool,
    /// MQSim's page status from the workload (touched_units.rs): a unit holds data a write
    /// beside it must read first (an update read) only once the run has read or written it; a
    /// unit never touched is rewritten with its mapping unit without a read. Off: every unit
    /// holding data is read (the drive keeps what was written before the run). Only with
    /// mapping units larger than 4 KiB.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub workload_page_status: bool,
    /// A mapping unit's first read in the run maps it to a page at its plane's write frontier,
    /// without a program, as MQSim maps a never-written page on its first read (its plane's
    /// frontier moves on: fewer planes stand at the same page index, fewer two-plane programs).
    /// Needs `workload_page_status` (what "first" means), `plane_frontiers` and a mapping unit
    /// of one page (`mapping_unit_kib` = `page_kib`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub on_the_fly_read_mapping: bool,
    /// A page read's and a program's command and address cycles on the channel before the die
    /// starts (command_cycles.rs: MQSim's NV-DDR2 figures, 290 ns before a read, 361 ns before a
    /// one-plane program's data). Needs `cache_registers = false` (MQSim's chips). Off (every
    /// preset, and the MQSim reader: on this channel, reserved ahead, reads' commands fill gaps
    /// MQSim's would not, docs/reproductions/flash/mqsim.md): the command takes no channel time.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub command_cycles: bool,
}

impl FlashSpec {
    /// Whether the host link carries both directions at once (NVMe over PCIe: each lane is a
    /// pair of one-way differential pairs) or one frame at a time (SATA).
    pub fn full_duplex_link(&self) -> bool {
        self.interface == "nvme"
    }

    /// The array as the FTL allocates it: with a frontier per plane, each plane of a die is one
    /// of the FTL's dies (plane `p` of die `d` is FTL die `d + p x dies`: channels first, then
    /// ways, then planes, MQSim's CWDP order) with one plane; else the geometry itself.
    pub fn ftl_geometry(&self) -> FlashGeometry {
        let g = &self.geometry;
        if !self.plane_frontiers {
            return g.clone();
        }
        FlashGeometry { dies_per_channel: g.dies_per_channel * g.planes_per_die, planes_per_die: 1, ..g.clone() }
    }

    /// The chips: command slots, each shared by `dies_per_chip` dies.
    pub fn chips(&self) -> u32 {
        self.geometry.dies() / self.dies_per_chip.max(1)
    }

    pub fn validate(&self) -> Result<(), String> {
        self.geometry.validate()?;
        self.timing.validate()?;
        self.die_scheduling.validate()?;
        self.slc.validate()?;
        self.mapping.validate()?;
        self.dram.validate()?;
        self.hot.validate()?;
        if !(self.over_provisioning.is_finite() && (0.01..=10.0).contains(&self.over_provisioning)) {
            return Err(format!("field `device.flash.over_provisioning` must be in [0.01, 10], got {}", self.over_provisioning));
        }
        let superpage_kib = self.geometry.units_per_superpage() * 4;
        if self.write_buffer_kib < superpage_kib || self.write_buffer_kib > 16 << 20 {
            return Err(format!(
                "field `device.flash.write_buffer_kib` must be in [{superpage_kib} (one superpage), 16777216], got {}",
                self.write_buffer_kib
            ));
        }
        // A program writes a superpage, or one page with a frontier per plane.
        let program_kib = self.ftl_geometry().units_per_superpage() * 4;
        super::mapping_unit::validate(self.mapping_unit_kib, program_kib)?;
        if !self.hot.is_off() && self.hot.capacity_kib < self.mapping_unit_kib {
            return Err(format!(
                "field `device.flash.hot_cache_kib` must hold one mapping unit ({} KiB: a slot), got {}",
                self.mapping_unit_kib, self.hot.capacity_kib
            ));
        }
        if self.dies_per_chip == 0 || !self.geometry.dies_per_channel.is_multiple_of(self.dies_per_chip) {
            return Err(format!(
                "field `device.flash.dies_per_chip` must divide dies_per_channel ({}), got {}",
                self.geometry.dies_per_channel, self.dies_per_chip
            ));
        }
        if self.command_cycles && self.cache_registers {
            return Err("field `device.flash.command_cycles` = true needs cache_registers = false: the cycles are timed for MQSim's chips, a read holding its die from its command to its data's transfer (set cache_registers = false, or command_cycles = false)".into());
        }
        if !self.cache_registers && !self.slc.is_off() {
            return Err("fields `device.flash.cache_registers` = false and the SLC cache (`slc_cache_gib` / `slc_dynamic_gib`) cannot be combined: SLC programs and folds are not timed without cache registers (set slc_cache_gib = 0 and slc_dynamic_gib = 0)".into());
        }
        if self.on_the_fly_read_mapping
            && !(self.workload_page_status && self.plane_frontiers && self.mapping_unit_kib == self.geometry.page_kib)
        {
            return Err(format!(
                "field `device.flash.on_the_fly_read_mapping` needs workload_page_status = true, plane_frontiers = true and \
                 mapping_unit_kib = page_kib ({}), got workload_page_status = {}, plane_frontiers = {}, mapping_unit_kib = {}",
                self.geometry.page_kib, self.workload_page_status, self.plane_frontiers, self.mapping_unit_kib
            ));
        }
        if self.plane_frontiers && !self.slc.is_off() {
            return Err("fields `device.flash.plane_frontiers` and the SLC cache (`slc_cache_gib` / `slc_dynamic_gib`) cannot be combined: the SLC cache programs whole superpages".into());
        }
        if !(1..=1_000).contains(&self.gc_free_superblocks) {
            return Err(format!("field `device.flash.gc_free_superblocks` must be in [1, 1000], got {}", self.gc_free_superblocks));
        }
        if !["sata", "nvme"].contains(&self.interface.as_str()) {
            return Err(format!("field `device.flash.interface`: unknown interface `{}` (known: sata, nvme)", self.interface));
        }
        Ok(())
    }
}

fn is_four(kib: &u32) -> bool {
    *kib == 4
}

/// Each `(field, value, lo, hi)`: a finite value in [lo, hi], or the error naming
/// `device.flash.<field>`, the range and the value.
pub(super) fn check_ranges(fields: &[(&str, f64, f64, f64)]) -> Result<(), String> {
    for &(name, v, lo, hi) in fields {
        if !(v.is_finite() && (lo..=hi).contains(&v)) {
            return Err(format!("field `device.flash.{name}` must be in [{lo}, {hi}], got {v}"));
        }
    }
    Ok(())
}
