//! Flash presets: three real SSDs. Every figure is cited or marked estimated with its reasoning
//! (docs/devices-flash.md has the table and the sources).
//!
//! Common estimates (no vendor publishes them):
//! - page 16 KiB, 2 planes per die: the usual 3D TLC organisation of these generations;
//! - tBERS 3.5 ms: 3D TLC erase times are a few ms (ONFI-era data sheets: 3-10 ms); erases
//!   are rare next to programs (one per superblock of 64 superpages), so little rides on it;
//! - blocks: the model keeps a sample of each die, 256 blocks per plane of 64 pages (the real
//!   dies have about 1,000-2,000 blocks per plane of about 1,000-1,500 pages: word lines x
//!   strings x 3 bits); the count of dies, planes, the page size and the over-provisioning
//!   ratio are the drive's, the LBA range is smaller (memory: 8 bytes per 4 KiB simulated).
//!   Many small blocks rather than few large ones: GC's reserve (2 free superblocks and the
//!   frontier per die) then takes little of the spare space, as on the real dies (with 64
//!   superblocks per die it took a third of the PM9A3's and raised the steady-state write
//!   amplification from 4.3 to 6.1); the price is an erase per 64 pages instead of ~1,000
//!   (erases are ~12% of a die's GC time instead of <1%). `device.flash.blocks_per_plane` and
//!   `pages_per_block` set other sizes;
//! - controller latency per command 10 us (firmware decode, map lookup, completion posting):
//!   not published; one figure for every preset, not fitted to any;
//! - link bytes per command: SATA NCQ's FIS exchange (register H2D 20 B, DMA setup 28 B, data
//!   FIS header, set device bits 8 B, each framed by SOF/CRC/EOF and handshakes: ~240 B);
//!   NVMe's 64 B command, 16 B completion, doorbells and TLP headers (~200 B);
//! - GC: greedy, keeps 2 free superblocks per die;
//! - SLC cache (870 EVO, 970 EVO Plus: TurboWrite, 6 GB fixed + 36 GB dynamic on the 1 TB
//!   drives, scaled to the sample's capacity; `with_turbowrite`): SLC tR and tPROG estimated
//!   from the TLC ones; folding after 5 ms of host idle time (estimated: Samsung says only
//!   "idle time"); direct to TLC when full (Samsung's "after TurboWrite" speed). The PM9A3 (a
//!   data centre drive, specified in steady state) has none.

use super::die_scheduling::DieScheduling;
use super::gc::GcPolicy;
use super::geometry::FlashGeometry;
use super::mapping_cache::MappingCacheConfig;
use super::slc_cache::SlcConfig;
use super::spec::{FlashSpec, Precondition};
use super::timing::FlashTiming;

pub const FLASH_PRESET_NAMES: &[&str] = &["samsung-870-evo-1tb", "samsung-970-evo-plus-1tb", "samsung-pm9a3-7.68tb"];

/// SATA 3.0: 6 Gb/s with 8b/10b encoding = 600 MB/s of payload.
const SATA3_MB_S: f64 = 600.0;
/// PCIe 3.0 x4: 8 GT/s x 4 lanes x 128/130 = 3,938 MB/s; TLPs of 256 B payload carry ~26 B of
/// header, framing and LCRC (estimated 0.908 efficiency): 3,575 MB/s.
const PCIE3_X4_MB_S: f64 = 3575.0;
/// PCIe 4.0 x4: twice PCIe 3.0 x4 (16 GT/s): 7,150 MB/s.
const PCIE4_X4_MB_S: f64 = 7150.0;

fn sample_geometry(channels: u32, dies_per_channel: u32) -> FlashGeometry {
    FlashGeometry { channels, dies_per_channel, planes_per_die: 2, blocks_per_plane: 256, pages_per_block: 64, page_kib: 16 }
}

pub fn flash_preset(name: &str) -> Option<FlashSpec> {
    Some(match name {
        // Samsung 870 EVO 1 TB (MZ-77E1T0): data sheet: SATA 6 Gb/s, 560/530 MB/s sequential,
        // 98K/88K IOPS random 4 KiB QD32, 13K/36K QD1; MKX controller, 1 GB LPDDR4, Samsung
        // 128-layer (V6) 512 Gbit TLC: 16 dies for 1 TB (Tom's Hardware's table of the data
        // sheet). V6: tPROG < 450 us, tR < 45 us (Samsung, Aug. 2019, via Hexus). MKX: 8
        // channels (estimated: MJX's successor; MJX is 8-channel), 2 dies per channel; channel
        // 800 MB/s (estimated: Toggle DDR 3.0's rate, the SATA controllers' generation).
        // Over-provisioning: 16 x 64 GiB raw / 10^12 B user = 1.0995.
        "samsung-870-evo-1tb" => FlashSpec {
            name: name.into(),
            interface: "sata".into(),
            geometry: sample_geometry(8, 2),
            timing: FlashTiming {
                read_us: 45.0,
                program_us: 450.0,
                erase_ms: 3.5,
                channel_mb_s: 800.0,
                link_mb_s: SATA3_MB_S,
                link_bytes_per_command: 240,
                command_overhead_us: 10.0,
            },
            over_provisioning: 0.0995,
            write_buffer_kib: 8 * 1024,
            mapping_unit_kib: 4,
            gc_policy: GcPolicy::Greedy,
            gc_free_superblocks: 2,
            precondition: Precondition::Full,
            max_queue_depth: 32,
            die_scheduling: DieScheduling::default(),
            slc: SlcConfig::default(),
            mapping: MappingCacheConfig::default(),
            dram: Default::default(),
            hot: Default::default(),
            plane_frontiers: false,
            mqsim_back_pressure: false,
            dies_per_chip: 1,
            cache_registers: true,
            sector_transfers: false,
            workload_page_status: false,
            on_the_fly_read_mapping: false,
            command_cycles: false,
        }
        .with_turbowrite(6.0, 36.0, 1e12),
        // Samsung 970 EVO Plus 1 TB (MZ-V7S1T0): data sheet: PCIe 3.0 x4 NVMe 1.3, 3,500/3,300
        // MB/s sequential (writes in the SLC TurboWrite region; 1,700 MB/s after it), 600K/550K
        // IOPS 4 KiB QD32, 19K/60K QD1; Phoenix controller (8 channels, as reviews report it),
        // 1 GB LPDDR4, Samsung 9x-layer (V5) 256 Gbit TLC: 32 dies for 1 TB. V5: tPROG 500 us,
        // tR 50 us, Toggle DDR 4.0 at 1.4 Gb/s per pin: 1,400 MB/s per 8-bit channel (Samsung,
        // July 2018). Over-provisioning 1.0995 as above.
        "samsung-970-evo-plus-1tb" => FlashSpec {
            name: name.into(),
            interface: "nvme".into(),
            geometry: sample_geometry(8, 4),
            timing: FlashTiming {
                read_us: 50.0,
                program_us: 500.0,
                erase_ms: 3.5,
                channel_mb_s: 1400.0,
                link_mb_s: PCIE3_X4_MB_S,
                link_bytes_per_command: 200,
                command_overhead_us: 10.0,
            },
            over_provisioning: 0.0995,
            write_buffer_kib: 8 * 1024,
            mapping_unit_kib: 4,
            gc_policy: GcPolicy::Greedy,
            gc_free_superblocks: 2,
            precondition: Precondition::Full,
            max_queue_depth: 1024,
            die_scheduling: DieScheduling::default(),
            slc: SlcConfig::default(),
            mapping: MappingCacheConfig::default(),
            dram: Default::default(),
            hot: Default::default(),
            plane_frontiers: false,
            mqsim_back_pressure: false,
            dies_per_chip: 1,
            cache_registers: true,
            sector_transfers: false,
            workload_page_status: false,
            on_the_fly_read_mapping: false,
            command_cycles: false,
        }
        .with_turbowrite(6.0, 36.0, 1e12),
        // Samsung PM9A3 7.68 TB U.2 (MZQL27T6HBLA): product brief: PCIe 4.0 x4 NVMe, 6,500 /
        // 3,500 MB/s sequential, 900K / 200K IOPS random 4 KiB (steady state, the data centre
        // convention; U.2 figures per heise/ServeTheHome's copy of the data sheet), 1.3 DWPD.
        // V6 128-layer 512 Gbit TLC: 128 dies for 8 TiB raw (V6 timing as for the 870 EVO;
        // channel 1,400 MB/s estimated: Toggle DDR 4.0 as V5). Controller channels: 16
        // (estimated: data centre controllers of this class, 8 dies per channel).
        // Over-provisioning: 8 TiB raw / 7.68 TB = 1.1453. Write buffer 32 MiB (estimated:
        // power-loss capacitors let a data centre drive hold more).
        "samsung-pm9a3-7.68tb" => FlashSpec {
            name: name.into(),
            interface: "nvme".into(),
            geometry: sample_geometry(16, 8),
            timing: FlashTiming {
                read_us: 45.0,
                program_us: 450.0,
                erase_ms: 3.5,
                channel_mb_s: 1400.0,
                link_mb_s: PCIE4_X4_MB_S,
                link_bytes_per_command: 200,
                command_overhead_us: 10.0,
            },
            over_provisioning: 0.1453,
            write_buffer_kib: 32 * 1024,
            mapping_unit_kib: 4,
            gc_policy: GcPolicy::Greedy,
            gc_free_superblocks: 2,
            precondition: Precondition::Aged,
            max_queue_depth: 1024,
            die_scheduling: DieScheduling::default(),
            slc: SlcConfig::default(),
            mapping: MappingCacheConfig::default(),
            dram: Default::default(),
            hot: Default::default(),
            plane_frontiers: false,
            mqsim_back_pressure: false,
            dies_per_chip: 1,
            cache_registers: true,
            sector_transfers: false,
            workload_page_status: false,
            on_the_fly_read_mapping: false,
            command_cycles: false,
        },
        _ => return None,
    })
}

impl FlashSpec {
    /// Samsung's Intelligent TurboWrite: a fixed SLC region of `static_gb` and a dynamic one of
    /// up to `dynamic_gb` (the data sheet's GB, 10^9 B) on a drive of `user_bytes`, scaled to
    /// the model's sample (the same share of the user capacity: the model's LBA range is
    /// smaller than the drive's). SLC-mode latencies: estimates from the TLC ones (tR / 3,
    /// tPROG x 0.22: HP's "SSD technology differences between SLC, MLC and TLC NAND": SLC
    /// read 25 us, program 200-300 us, against TLC ~75 us and ~900-1350 us; midpoints).
    fn with_turbowrite(mut self, static_gb: f64, dynamic_gb: f64, user_bytes: f64) -> FlashSpec {
        let logical = super::ftl::logical_units_for(&self.geometry, self.over_provisioning, self.gc_free_superblocks)
            .expect("a valid preset") as f64
            * super::geometry::UNIT_BYTES as f64;
        let gib = |gb: f64| gb * 1e9 * (logical / user_bytes) / (1u64 << 30) as f64;
        self.slc = SlcConfig {
            static_gib: gib(static_gb),
            dynamic_gib: gib(dynamic_gb),
            program_us: (self.timing.program_us * SLC_PROGRAM_RATIO).round(),
            read_us: (self.timing.read_us / 3.0).round(),
            ..SlcConfig::default()
        };
        self
    }
}

/// SLC-mode tPROG / TLC tPROG: 250 / 1125 us (HP's white paper's midpoints; an estimate).
const SLC_PROGRAM_RATIO: f64 = 250.0 / 1125.0;

/// Where a flash preset's queue depth comes from.
pub fn flash_queue_source(spec: &FlashSpec) -> &'static str {
    match spec.interface.as_str() {
        "sata" => "SATA NCQ: 32 commands",
        _ => "NVMe: 1024, Linux nvme's io_queue_depth default; `[device.nvme]` models the queue pairs (1023 commands each) and their arbitration",
    }
}

/// What a user sees of a flash preset (`iosched list devices`): the drive, the sources of its
/// figures (the comments of `flash_preset` have each figure's) and what is estimated.
pub struct FlashPresetDoc {
    pub description: &'static str,
    pub source: &'static str,
    /// Estimated on this preset (`estimated()` adds what is estimated on every preset).
    own_estimates: &'static str,
}

impl FlashPresetDoc {
    pub fn estimated(&self) -> String {
        format!("{}; and on every preset: {COMMON_ESTIMATES}", self.own_estimates)
    }
}

/// Estimated on every preset (the module's comment has the reasoning).
const COMMON_ESTIMATES: &str = "16 KiB pages, 2 planes per die, tBERS 3.5 ms, a sample of each die (256 blocks of 64 pages), \
controller latency 10 us per command, link bytes per command, greedy GC keeping 2 free superblocks";

pub fn flash_preset_doc(name: &str) -> Option<FlashPresetDoc> {
    Some(match name {
        "samsung-870-evo-1tb" => FlashPresetDoc {
            description: "Samsung 870 EVO 1 TB (MZ-77E1T0), SATA 6 Gb/s, 128-layer V6 TLC, 16 dies",
            source: "Samsung data sheet (560/530 MB/s sequential; 98K/88K IOPS 4 KiB QD32, 13K/36K QD1; 1 GB LPDDR4); \
V6 tR < 45 us, tPROG < 450 us (Samsung, Aug. 2019); 16 dies of 512 Gbit (Tom's Hardware's table of the data sheet); \
TurboWrite 6 + 36 GB (recalled from Samsung's figures); docs/devices-flash.md",
            own_estimates: "8 channels of 800 MB/s (Toggle DDR 3.0), write buffer 8 MiB, SLC-mode tR and tPROG",
        },
        "samsung-970-evo-plus-1tb" => FlashPresetDoc {
            description: "Samsung 970 EVO Plus 1 TB (MZ-V7S1T0), PCIe 3.0 x4 NVMe, 9x-layer V5 TLC, 32 dies",
            source: "Samsung data sheet (3,500/3,300 MB/s sequential, 1,700 after TurboWrite; 600K/550K IOPS 4 KiB QD32, \
19K/60K QD1; 1 GB LPDDR4); V5 tR 50 us, tPROG 500 us, Toggle DDR 4.0 at 1.4 Gb/s per pin (Samsung, July 2018); \
8 channels as reviews report the Phoenix controller; TurboWrite 6 + 36 GB (recalled); docs/devices-flash.md",
            own_estimates: "write buffer 8 MiB, SLC-mode tR and tPROG, TLP efficiency of the link",
        },
        "samsung-pm9a3-7.68tb" => FlashPresetDoc {
            description: "Samsung PM9A3 7.68 TB U.2 (MZQL27T6HBLA), PCIe 4.0 x4 NVMe, 128-layer V6 TLC, 128 dies, steady state",
            source: "Samsung product brief (6,500/3,500 MB/s sequential; 900K/200K IOPS random 4 KiB in steady state; \
1.3 DWPD; U.2 figures per heise's and ServeTheHome's copies of the data sheet); V6 timing as the 870 EVO's; \
docs/devices-flash.md",
            own_estimates: "16 channels of 1,400 MB/s, write buffer 32 MiB, TLP efficiency of the link",
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_valid() {
        for name in FLASH_PRESET_NAMES {
            let s = flash_preset(name).unwrap();
            s.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(flash_preset("nope").is_none());
    }

    #[test]
    fn every_preset_says_where_its_figures_come_from() {
        for name in FLASH_PRESET_NAMES {
            let d = flash_preset_doc(name).unwrap_or_else(|| panic!("{name} has no description"));
            assert!(!d.description.is_empty() && d.source.contains("docs/devices-flash.md"), "{name}");
            assert!(d.estimated().contains("controller latency"), "{name}");
        }
        assert!(flash_preset_doc("nope").is_none());
    }
}
