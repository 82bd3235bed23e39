//! MQSim's device description (its `ssdconfig.xml`: `Execution_Parameter_Set` with
//! `Host_Parameter_Set`, `Device_Parameter_Set` and `Flash_Parameter_Set`) mapped onto the flash
//! model's [`FlashSpec`]. `[device] mqsim = "ssdconfig.xml"`; `[device.flash]` then overrides
//! fields as it does a preset's.
//!
//! Every element is either mapped or recorded in `ignored` (no timing effect in the model, or a
//! mechanism it does not have) with the reason; unknown elements go to `unsupported`. An element
//! absent from the file takes MQSim's default, as MQSim itself does (its
//! `exec/*_Parameter_Set.cpp` initialisers, MQSim @ 7ec40e3), recorded in `notes`.
//! Written from MQSim's documentation and parameter files (Tavakkol et al., FAST'18), not its code.

use super::die_scheduling::DieScheduling;
use super::dram::DramTiming;
use super::gc::GcPolicy;
use super::geometry::FlashGeometry;
use super::hot_data::HotDataConfig;
use super::mapping_cache::MappingCacheConfig;
use super::spec::{FlashSpec, Precondition};
use super::timing::FlashTiming;
use crate::device::disksim::Ignored;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// A malformed or unusable MQSim description: the file, the element and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MqsimError {
    pub file: PathBuf,
    /// The element (or elements, joined by " x ") the problem is in; empty for the file itself.
    pub element: String,
    pub value: String,
    pub message: String,
}

impl fmt::Display for MqsimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = if self.element.is_empty() {
            format!("{}: {}", self.file.display(), self.message)
        } else {
            format!("{}: <{}> = `{}`: {}", self.file.display(), self.element, self.value, self.message)
        };
        f.write_str(&crate::input::escape_controls(&s))
    }
}

impl std::error::Error for MqsimError {}

/// A drive read from an MQSim description.
#[derive(Debug, Clone)]
pub struct MqsimDrive {
    pub source: PathBuf,
    pub spec: FlashSpec,
    /// MQSim's `Queue_Fetch_Size`: commands the controller takes from the SQs at once (its
    /// counterpart is `[device.nvme] controller_commands`; not applied by the reader).
    pub queue_fetch_size: u32,
    /// Elements read that the model does not use, with the reason.
    pub ignored: Vec<Ignored>,
    /// Elements with a timing effect the model lacks or approximates, or unknown elements.
    pub unsupported: Vec<String>,
    /// Defaults taken for absent elements, and conversions worth knowing.
    pub notes: Vec<String>,
}

/// MQSim's defaults for absent elements (exec/Host_Parameter_Set.cpp, Device_Parameter_Set.cpp,
/// Flash_Parameter_Set.cpp at 7ec40e3).
const DEFAULTS: &[(&str, &str)] = &[
    ("PCIe_Lane_Bandwidth", "0.4"),
    ("PCIe_Lane_Count", "4"),
    ("SATA_Processing_Delay", "0"),
    ("Enabled_Preconditioning", "true"),
    ("Memory_Type", "FLASH"),
    ("HostInterface_Type", "NVME"),
    ("IO_Queue_Depth", "1024"),
    ("Queue_Fetch_Size", "512"),
    ("Caching_Mechanism", "ADVANCED"),
    ("Data_Cache_Capacity", "536870912"),
    ("Data_Cache_DRAM_Row_Size", "8192"),
    ("Data_Cache_DRAM_Data_Rate", "800"),
    ("Data_Cache_DRAM_Data_Busrt_Size", "4"),
    ("Data_Cache_DRAM_tRCD", "13"),
    ("Data_Cache_DRAM_tCL", "13"),
    ("Data_Cache_DRAM_tRP", "13"),
    ("Address_Mapping", "PAGE_LEVEL"),
    ("Ideal_Mapping_Table", "false"),
    ("CMT_Capacity", "2097152"),
    ("Plane_Allocation_Scheme", "CWDP"),
    ("Transaction_Scheduling_Policy", "OUT_OF_ORDER"),
    ("Overprovisioning_Ratio", "0.07"),
    ("GC_Exec_Threshold", "0.05"),
    ("GC_Block_Selection_Policy", "RGA"),
    ("Use_Copyback_for_GC", "false"),
    ("Preemptible_GC_Enabled", "true"),
    ("Flash_Channel_Count", "8"),
    ("Flash_Channel_Width", "1"),
    ("Channel_Transfer_Rate", "300"),
    ("Chip_No_Per_Channel", "4"),
    ("Flash_Technology", "MLC"),
    ("CMD_Suspension_Support", "ERASE"),
    ("Page_Read_Latency_LSB", "75000"),
    ("Page_Read_Latency_CSB", "75000"),
    ("Page_Read_Latency_MSB", "75000"),
    ("Page_Program_Latency_LSB", "750000"),
    ("Page_Program_Latency_CSB", "750000"),
    ("Page_Program_Latency_MSB", "750000"),
    ("Block_Erase_Latency", "3800000"),
    ("Die_No_Per_Chip", "2"),
    ("Plane_No_Per_Die", "2"),
    ("Block_No_Per_Plane", "2048"),
    ("Page_No_Per_Block", "256"),
    ("Page_Capacity", "8192"),
];

/// Elements read and not used by the model, with the reason.
const IGNORED: &[(&str, &str)] = &[
    ("Enable_ResponseTime_Logging", "MQSim's output (response time log), no effect on timing"),
    ("ResponseTime_Logging_Period_Length", "MQSim's output (response time log), no effect on timing"),
    ("Seed", "MQSim's device random generator; the scenario's seed drives the model"),
    ("Data_Cache_Sharing_Mode", "per-flow partitions of the data cache not modelled (one shared buffer)"),
    (
        "CMT_Sharing_Mode",
        "one flow: every mode gives it the whole CMT (SHARED builds one table per stream, Address_Mapping_Unit_Page_Level.cpp)",
    ),
    ("GC_Hard_Threshold", "preemptible GC not modelled (GC runs to completion)"),
    ("Dynamic_Wearleveling_Enabled", "wear is not modelled"),
    ("Static_Wearleveling_Enabled", "wear is not modelled"),
    ("Static_Wearleveling_Threshold", "wear is not modelled"),
    ("Block_PE_Cycles_Limit", "wear is not modelled"),
    (
        "Preferred_suspend_erase_time_for_read",
        "MQSim's minimum remaining time to suspend: the model suspends when more than the suspend latency remains",
    ),
    ("Preferred_suspend_erase_time_for_write", "writes do not suspend erases in the model"),
    (
        "Preferred_suspend_write_time_for_read",
        "MQSim's minimum remaining time to suspend: the model suspends when more than the suspend latency remains",
    ),
    ("Suspend_Erase_Time", "mapped to erase_suspend_us, used only with [device.flash] suspend (off: MQSim never suspends)"),
    ("Suspend_Program_Time", "mapped to suspend_us, used only with [device.flash] suspend (off: MQSim never suspends)"),
    (
        "Flash_Comm_Protocol",
        "the channel's rate (Channel_Transfer_Rate x Flash_Channel_Width) carries the interface; MQSim's NVDDR2 chips have no cache register (a read holds its chip until its data is out, a program from its data's transfer: ssd/NVM_PHY_ONFI_NVDDR2.cpp), so the reader sets cache_registers = false; its transfers carry only a transaction's sectors, so it sets sector_transfers = true (each can be set back in [device.flash]); each read and program first takes its command and address cycles on the channel (ONFI_Channel_NVDDR2.cpp: 290 ns before a read, 361 ns before a one-plane program): [device.flash] command_cycles = true charges them, not set by the reader (on the model's channel, reserved ahead, they slow MQSim's TPC-C trace by 44%: docs/reproductions/flash/mqsim.md)",
    ),
    ("Page_Metadat_Capacity", "spare (OOB) bytes: the model transfers the data only"),
];

/// MQSim's PCIe link (host/PCIe_Link.h defaults): TLPs of at most 128 B payload, each with 28 B
/// of overhead (20 B TLP header, 6 B DLLP, 2 B physical framing).
const MQSIM_TLP_PAYLOAD: f64 = 128.0;
const MQSIM_TLP_OVERHEAD: f64 = 28.0;
/// Protocol bytes per NVMe command on MQSim's link, in payload terms: SQ doorbell (4 B), command
/// fetch request and the 64 B command, 16 B completion, CQ doorbell, each a TLP of 28 B overhead
/// (~232 B on the wire, x 128/156).
const NVME_PROTOCOL_BYTES: u32 = 190;
/// SATA: the model's per-command FIS estimate (presets.rs).
const SATA_PROTOCOL_BYTES: u32 = 240;
/// SATA 3.0's payload rate (MQSim's SATA HBA has no link rate parameter).
const SATA3_MB_S: f64 = 600.0;

/// Loads and maps an MQSim `ssdconfig.xml`.
pub fn load(path: &Path) -> Result<MqsimDrive, MqsimError> {
    let fail = |message: String| MqsimError { file: path.to_path_buf(), element: String::new(), value: String::new(), message };
    // A regular file of at most 4 MiB (MQSim's own are 4 KB): never a FIFO or a device.
    let bytes = crate::input::read_regular(path, 4 << 20).map_err(|e| fail(format!("cannot read: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|_| fail("not UTF-8 text".into()))?;
    parse_str(&text, path)
}

/// Maps an MQSim description given as text (`path` names it in errors).
pub fn parse_str(text: &str, path: &Path) -> Result<MqsimDrive, MqsimError> {
    let file = path.to_path_buf();
    let doc = roxmltree::Document::parse(text).map_err(|e| MqsimError {
        file: file.clone(),
        element: String::new(),
        value: String::new(),
        message: format!("not well-formed XML: {e}"),
    })?;
    let root = doc.root_element();
    if root.tag_name().name() != "Execution_Parameter_Set" {
        return Err(MqsimError {
            file,
            element: root.tag_name().name().into(),
            value: String::new(),
            message: "the root element must be <Execution_Parameter_Set> (an MQSim ssdconfig.xml)".into(),
        });
    }
    let mut r = Reader { file, values: BTreeMap::new(), unsupported: Vec::new(), notes: Vec::new(), ignored: Vec::new() };
    for set in root.children().filter(|n| n.is_element()) {
        match set.tag_name().name() {
            "Host_Parameter_Set" | "Device_Parameter_Set" => r.collect(set)?,
            other => r.unsupported.push(format!("<{other}>: unknown parameter set")),
        }
    }
    r.map()
}

struct Reader {
    file: PathBuf,
    values: BTreeMap<String, String>,
    unsupported: Vec<String>,
    notes: Vec<String>,
    ignored: Vec<Ignored>,
}

impl Reader {
    fn collect(&mut self, set: roxmltree::Node) -> Result<(), MqsimError> {
        for el in set.children().filter(|n| n.is_element()) {
            let name = el.tag_name().name();
            if name == "Flash_Parameter_Set" {
                self.collect(el)?;
                continue;
            }
            let text = el.text().unwrap_or("").trim().to_string();
            if self.values.insert(name.to_string(), text.clone()).is_some() {
                return Err(self.err(name, &text, "given twice"));
            }
        }
        Ok(())
    }

    fn err(&self, element: &str, value: &str, message: impl Into<String>) -> MqsimError {
        MqsimError { file: self.file.clone(), element: element.into(), value: value.into(), message: message.into() }
    }

    /// The element's text, or MQSim's default (noted) when absent.
    fn raw(&mut self, name: &str) -> String {
        if let Some(v) = self.values.get(name) {
            return v.clone();
        }
        let d = DEFAULTS.iter().find(|(n, _)| *n == name).map(|(_, d)| *d).unwrap_or("");
        self.notes.push(format!("<{name}> absent: MQSim's default `{d}`"));
        self.values.insert(name.into(), d.into());
        d.into()
    }

    fn num(&mut self, name: &str, lo: f64, hi: f64) -> Result<f64, MqsimError> {
        let v = self.raw(name);
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() && (lo..=hi).contains(&x) => Ok(x),
            Ok(_) => Err(self.err(name, &v, format!("must be in [{lo}, {hi}]"))),
            Err(_) => Err(self.err(name, &v, "not a number")),
        }
    }

    fn int(&mut self, name: &str, lo: u64, hi: u64) -> Result<u64, MqsimError> {
        let v = self.raw(name);
        match v.parse::<u64>() {
            Ok(x) if (lo..=hi).contains(&x) => Ok(x),
            Ok(_) => Err(self.err(name, &v, format!("must be in [{lo}, {hi}]"))),
            Err(_) => Err(self.err(name, &v, "not a whole number")),
        }
    }

    fn boolean(&mut self, name: &str) -> Result<bool, MqsimError> {
        let v = self.raw(name);
        match v.to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(self.err(name, &v, "must be true or false")),
        }
    }

    fn word(&mut self, name: &str, known: &[&str]) -> Result<String, MqsimError> {
        let v = self.raw(name);
        if known.contains(&v.as_str()) {
            Ok(v)
        } else {
            Err(self.err(name, &v, format!("unknown value (MQSim's: {})", known.join(", "))))
        }
    }

    /// MQSim's cached mapping table (Address_Mapping_Unit_Page_Level.cpp, its constructor): a
    /// cached entry of ceil((2 log2(physical pages) + sectors per page) / 8) bytes (logical and
    /// physical page numbers and a sector bitmap), a translation page entry of
    /// ceil((log2(physical pages) + sectors per page) / 8) bytes.
    fn mapping_cache(&mut self, cmt_bytes: u64, g: &FlashGeometry, page_bytes: u64) -> Result<MappingCacheConfig, MqsimError> {
        let pages = g.physical_bytes() as f64 / page_bytes as f64;
        let sectors = (page_bytes / 512) as f64;
        let entry_bytes = ((2.0 * pages.log2() + sectors) / 8.0).ceil() as u32;
        let translation_entry_bytes = ((pages.log2() + sectors) / 8.0).ceil() as u32;
        // An entry maps one of MQSim's logical pages (LPA), the flash page's size.
        let units_per_entry = (page_bytes / 4096).max(1) as u32;
        let c = MappingCacheConfig { capacity_kib: (cmt_bytes / 1024) as u32, entry_bytes, translation_entry_bytes, units_per_entry };
        if c.is_off() {
            return Err(self.err(
                "CMT_Capacity",
                &cmt_bytes.to_string(),
                "is under 1 KiB: the model's mapping cache takes whole KiB (Ideal_Mapping_Table = true keeps the whole table in DRAM)",
            ));
        }
        c.validate().map_err(|e| self.err("CMT_Capacity", &cmt_bytes.to_string(), e))?;
        if !cmt_bytes.is_multiple_of(1024) {
            self.unsupported("CMT_Capacity", &format!("{cmt_bytes} B: the model takes whole KiB ({} KiB)", c.capacity_kib));
        }
        self.unsupported(
            "Ideal_Mapping_Table",
            &format!(
                "the mapping cached in {} KiB of {entry_bytes}-byte entries each mapping an {} KiB logical page (mapping_entry_kib), translation pages of {translation_entry_bytes}-byte entries; \
                 MQSim's translation-page writes never run (its TSUs never serve MappingWriteTRQueue), the model's do",
                c.capacity_kib,
                units_per_entry * 4
            ),
        );
        Ok(c)
    }

    /// The data cache's DRAM channel (dram.rs), with MQSim's access estimate. MQSim computes
    /// its transfer time in 32-bit arithmetic, which wraps above 4,294 MT/s: noted, not copied.
    fn dram(&mut self) -> Result<DramTiming, MqsimError> {
        let d = DramTiming {
            mt_s: self.int("Data_Cache_DRAM_Data_Rate", 1, 1_000_000)? as f64,
            burst_bytes: self.int("Data_Cache_DRAM_Data_Busrt_Size", 1, 4096)? as u32,
            row_bytes: self.int("Data_Cache_DRAM_Row_Size", 1, 1 << 20)? as u32,
            trcd_ns: self.int("Data_Cache_DRAM_tRCD", 0, 1_000_000)? as u32,
            tcl_ns: self.int("Data_Cache_DRAM_tCL", 0, 1_000_000)? as u32,
            trp_ns: self.int("Data_Cache_DRAM_tRP", 0, 1_000_000)? as u32,
        };
        if d.mt_s > 4294.0 {
            self.notes.push(format!(
                "Data_Cache_DRAM_Data_Rate {}: MQSim's transfer time, 10^9 / (rate x 10^6) with the product in 32-bit unsigned arithmetic, wraps above 4,294 MT/s (its time is then that of another rate); the model takes the rate as given",
                d.mt_s
            ));
        }
        Ok(d)
    }

    fn unsupported(&mut self, name: &str, why: &str) {
        let v = self.values.get(name).cloned().unwrap_or_default();
        self.unsupported.push(format!("<{name}> = {v}: {why}"));
    }

    fn map(mut self) -> Result<MqsimDrive, MqsimError> {
        // Host interface and link.
        let interface = match self.word("HostInterface_Type", &["NVME", "SATA"])?.as_str() {
            "NVME" => "nvme",
            _ => "sata",
        };
        let memory = self.raw("Memory_Type");
        if memory != "FLASH" {
            return Err(self.err("Memory_Type", &memory, "only FLASH is modelled"));
        }
        let lane_gb_s = self.num("PCIe_Lane_Bandwidth", 0.001, 1000.0)?;
        let lanes = self.int("PCIe_Lane_Count", 1, 32)?;
        let sata_delay_ns = self.num("SATA_Processing_Delay", 0.0, 1e9)?;
        let (link_mb_s, link_bytes, overhead_us) = if interface == "nvme" {
            self.ignored.push(Ignored {
                parameter: "SATA_Processing_Delay".into(),
                reason: "SATA's processing delay: the host interface is NVMe".into(),
            });
            // MQSim's link moves TLPs of 128 B payload with 28 B overhead each over lanes x
            // lane rate; the model's link is a payload rate: the raw rate x 128/156.
            let raw = lane_gb_s * 1000.0 * lanes as f64;
            (raw * MQSIM_TLP_PAYLOAD / (MQSIM_TLP_PAYLOAD + MQSIM_TLP_OVERHEAD), NVME_PROTOCOL_BYTES, 0.0)
        } else {
            for p in ["PCIe_Lane_Bandwidth", "PCIe_Lane_Count"] {
                self.ignored.push(Ignored { parameter: p.into(), reason: "PCIe link: the host interface is SATA (600 MB/s)".into() });
            }
            self.notes
                .push("SATA_Processing_Delay: MQSim charges it per SATA message; mapped as one controller latency per command".into());
            (SATA3_MB_S, SATA_PROTOCOL_BYTES, sata_delay_ns / 1e3)
        };
        let qd = self.int("IO_Queue_Depth", 1, 65535)?;
        let max_qd = if interface == "sata" { qd.min(32) } else { qd.min(1024) } as u32;
        if max_qd as u64 != qd {
            self.notes.push(format!("IO_Queue_Depth {qd}: the model's {interface} queue holds at most {max_qd}"));
        }
        let fetch = self.int("Queue_Fetch_Size", 1, 65535)? as u32;
        if interface == "nvme" {
            self.unsupported(
                "Queue_Fetch_Size",
                "commands the controller takes at once: not applied by the reader (its counterpart is [device.nvme] controller_commands)",
            );
        } else {
            self.ignored.push(Ignored { parameter: "Queue_Fetch_Size".into(), reason: "NVMe's fetch size: the interface is SATA".into() });
        }

        // Data cache: MQSim's DRAM cache writes data not written within the last second (cold)
        // back to flash at once, and takes a host write only while the sectors the host wrote
        // that are being written back stay below one page per plane (its back-pressure:
        // ssd/Data_Cache_Manager_Flash_Advanced.cpp 281-282, the depth set in
        // exec/SSD_Device.cpp 334-339): a write waits for flash once that many are outstanding,
        // whatever the cache's capacity. The model's write buffer is that bound (set below, from
        // the geometry); the capacity holds data rewritten within the second (hot), which MQSim
        // keeps in DRAM: the model's hot data (hot_data.rs), set below.
        let caching = self.word("Caching_Mechanism", &["SIMPLE", "ADVANCED"])?;
        if caching == "SIMPLE" {
            // Its write-caching modes fall through to an error
            // (ssd/Data_Cache_Manager_Flash_Simple.cpp 66, 109: MQSim exits); with caching off a
            // write waits for its program, which the model's buffer does not do.
            self.unsupported(
                "Caching_Mechanism",
                "SIMPLE: MQSim runs it only with the flows' caching TURNED_OFF (its write-caching modes exit with an error), where a write waits for its program; the model buffers writes as ADVANCED does",
            );
        } else {
            self.ignored.push(Ignored {
                parameter: "Caching_Mechanism".into(),
                reason: "ADVANCED: a DRAM write cache writing cold data back at once, bounded by MQSim's back-pressure (the write buffer), and keeping hot data (written back within its 1 s window) in DRAM (hot_window_ms = 1000)"
                    .into(),
            });
        }
        let cache_bytes = self.int("Data_Cache_Capacity", 0, u32::MAX as u64)?;
        if caching == "ADVANCED" {
            self.ignored.push(Ignored {
                parameter: "Data_Cache_Capacity".into(),
                reason: "the DRAM holding hot data (hot_cache_kib), the least recently used page written back when full; MQSim also counts there the cold pages being written back (at most its back-pressure bound, one page per plane), the model does not".into(),
            });
        } else {
            self.unsupported("Data_Cache_Capacity", "with SIMPLE caching the model keeps no hot data");
        }
        let hot = if caching == "ADVANCED" {
            HotDataConfig { window_ms: 1000.0, capacity_kib: (cache_bytes / 1024) as u32 }
        } else {
            HotDataConfig::default()
        };
        let dram = self.dram()?;

        // Mapping.
        let mapping = self.word("Address_Mapping", &["PAGE_LEVEL", "HYBRID"])?;
        if mapping != "PAGE_LEVEL" {
            return Err(self.err("Address_Mapping", &mapping, "only PAGE_LEVEL mapping is modelled"));
        }
        let ideal = self.boolean("Ideal_Mapping_Table")?;
        let cmt_bytes = self.int("CMT_Capacity", 0, u32::MAX as u64)?;
        if ideal {
            self.ignored.push(Ignored {
                parameter: "CMT_Capacity".into(),
                reason: "Ideal_Mapping_Table: the whole table in DRAM, as the model holds it".into(),
            });
        }
        let alloc = self.word(
            "Plane_Allocation_Scheme",
            &[
                "CWDP", "CWPD", "CDWP", "CDPW", "CPWD", "CPDW", "WCDP", "WCPD", "WDCP", "WDPC", "WPCD", "WPDC", "DCWP", "DCPW", "DWCP",
                "DWPC", "DPCW", "DPWC", "PCWD", "PCDW", "PWCD", "PWDC", "PDCW", "PDWC",
            ],
        )?;
        if alloc == "CWDP" {
            self.ignored.push(Ignored {
                parameter: "Plane_Allocation_Scheme".into(),
                reason: "CWDP: static allocation striping channels first, then ways, as the model does".into(),
            });
        } else {
            self.unsupported("Plane_Allocation_Scheme", "the model stripes channel first, then way (CWDP); other orders not modelled");
        }
        // The two transaction schedulers MQSim can run serve a chip's queued reads before its
        // writes and erases (TSU_OutofOrder.cpp, TSU_Priority_OutOfOrder.cpp:
        // service_read_transaction first): the model's read priority, set below.
        let policy = self.word("Transaction_Scheduling_Policy", &["OUT_OF_ORDER", "PRIORITY_OUT_OF_ORDER", "FLIN"])?;
        match policy.as_str() {
            "FLIN" => self.unsupported(
                "Transaction_Scheduling_Policy",
                "FLIN: MQSim (7ec40e3) cannot run it (exec/SSD_Device.cpp has FLIN's construction commented out and throws \"No implementation is available\"); read as OUT_OF_ORDER, reads before programs and erases (read_priority = true)",
            ),
            "PRIORITY_OUT_OF_ORDER" => self.unsupported(
                "Transaction_Scheduling_Policy",
                "per-chip transaction queues, reads before programs and erases (read_priority = true); MQSim's priority classes between flows are not modelled (the model's flows share one class)",
            ),
            _ => {} // OUT_OF_ORDER: read_priority = true, nothing left out
        }

        // Over-provisioning: MQSim's ratio is the spare share of the physical pages (logical =
        // physical x (1 - ratio)); the model's is spare / logical.
        let op = self.num("Overprovisioning_Ratio", 0.0, 0.9)?;
        let over_provisioning = 1.0 / (1.0 - op) - 1.0;

        // Geometry.
        let channels = self.int("Flash_Channel_Count", 1, 64)? as u32;
        let width = self.int("Flash_Channel_Width", 1, 8)?;
        let rate = self.int("Channel_Transfer_Rate", 1, 100_000)?;
        let chips = self.int("Chip_No_Per_Channel", 1, 64)? as u32;
        let dies_per_chip = self.int("Die_No_Per_Chip", 1, 64)? as u32;
        if chips * dies_per_chip > 64 {
            return Err(self.err(
                "Chip_No_Per_Channel x Die_No_Per_Chip",
                &format!("{chips} x {dies_per_chip}"),
                "the model holds at most 64 dies per channel",
            ));
        }
        // MQSim's transaction scheduler starts a command on a chip only when the chip is idle,
        // one die's at a time (ssd/TSU_Base.cpp): dies_per_chip = Die_No_Per_Chip, set below.
        let planes = self.int("Plane_No_Per_Die", 1, 16)? as u32;
        let blocks = self.int("Block_No_Per_Plane", 4, 1 << 20)? as u32;
        let pages = self.int("Page_No_Per_Block", 1, 1 << 14)? as u32;
        let page_bytes = self.int("Page_Capacity", 4096, 65536)?;
        if page_bytes % 4096 != 0 {
            return Err(self.err("Page_Capacity", &page_bytes.to_string(), "must be a multiple of 4096 (the model maps 4 KiB units)"));
        }
        if cache_bytes < page_bytes {
            return Err(self.err(
                "Data_Cache_Capacity",
                &cache_bytes.to_string(),
                "MQSim's cache must hold at least one page (Page_Capacity)",
            ));
        }
        // MQSim's back-pressure bound: one page per plane of the host's data being written back.
        let write_buffer_kib = channels * chips * dies_per_chip * planes * (page_bytes / 1024) as u32;
        if write_buffer_kib as u64 * 1024 == 1 << 32 {
            // exec/SSD_Device.cpp multiplies the factors by Page_Capacity in bytes in 32 bits;
            // every factor at the reader's largest makes exactly 2^32 (no larger product is read).
            self.notes.push(format!(
                "MQSim's back-pressure bound (channels x chips x dies x planes x Page_Capacity = {write_buffer_kib} KiB) wraps in its 32-bit arithmetic to 0 KiB: MQSim then takes no write at all; the model keeps the bound as written"
            ));
        }
        let geometry = FlashGeometry {
            channels,
            dies_per_channel: chips * dies_per_chip,
            planes_per_die: planes,
            blocks_per_plane: blocks,
            pages_per_block: pages,
            page_kib: (page_bytes / 1024) as u32,
        };
        if let Err(e) = geometry.validate() {
            return Err(self.err(
                "Flash_Channel_Count x Chip_No_Per_Channel x Die_No_Per_Chip x Plane_No_Per_Die x Block_No_Per_Plane x Page_No_Per_Block",
                &format!("{channels} x {chips} x {dies_per_chip} x {planes} x {blocks} x {pages}"),
                e,
            ));
        }

        // Flash timing: the technology's page types' latencies (MQSim's pages alternate between
        // them: SLC LSB only, MLC LSB/MSB, TLC LSB/CSB/MSB); the model has one of each.
        let tech = self.word("Flash_Technology", &["SLC", "MLC", "TLC"])?;
        let kinds: &[&str] = match tech.as_str() {
            "SLC" => &["LSB"],
            "MLC" => &["LSB", "MSB"],
            _ => &["LSB", "CSB", "MSB"],
        };
        let mut reads = Vec::new();
        let mut progs = Vec::new();
        for k in ["LSB", "CSB", "MSB"] {
            if kinds.contains(&k) {
                reads.push(self.num(&format!("Page_Read_Latency_{k}"), 100.0, 1e7)?);
                progs.push(self.num(&format!("Page_Program_Latency_{k}"), 1000.0, 1e8)?);
            } else {
                for e in [format!("Page_Read_Latency_{k}"), format!("Page_Program_Latency_{k}")] {
                    self.ignored.push(Ignored { parameter: e, reason: format!("{tech} has no {k} pages") });
                }
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let spread = |v: &[f64]| v.iter().cloned().fold(f64::MIN, f64::max) - v.iter().cloned().fold(f64::MAX, f64::min);
        if spread(&reads) > 0.0 || spread(&progs) > 0.0 {
            self.unsupported.push(format!(
                "<Page_Read_Latency_*>/<Page_Program_Latency_*> differ by page type ({tech}): the model uses their means, {:.1} / {:.1} us",
                mean(&reads) / 1e3,
                mean(&progs) / 1e3
            ));
        }
        let erase_ns = self.num("Block_Erase_Latency", 1e4, 1e9)?;
        let suspension = self.word("CMD_Suspension_Support", &["NONE", "PROGRAM", "PROGRAM_ERASE", "ERASE"])?;
        if suspension != "NONE" {
            self.unsupported(
                "CMD_Suspension_Support",
                &format!("{suspension}: MQSim's TSUs never suspend (service_read_transaction's switch in TSU_OutofOrder.cpp and TSU_Priority_OutOfOrder.cpp falls through every busy case to `default: return false`, so no read is issued to a busy chip); the model's suspension stays off: [device.flash] suspend = \"{}\" turns it on (read_priority, which it needs, is set from Transaction_Scheduling_Policy)", suspension.to_lowercase().replace('_', "-")),
            );
        } else {
            self.ignored.push(Ignored { parameter: "CMD_Suspension_Support".into(), reason: "NONE: as the model".into() });
        }
        // The suspend latencies (ns) become the model's, used when suspension is turned on.
        let mut die_scheduling = DieScheduling { read_priority: true, ..DieScheduling::default() };
        if self.values.contains_key("Suspend_Program_Time") {
            die_scheduling.suspend_us = self.num("Suspend_Program_Time", 0.0, 1e8)? / 1e3;
        }
        if self.values.contains_key("Suspend_Erase_Time") {
            die_scheduling.erase_suspend_us = self.num("Suspend_Erase_Time", 0.0, 1e8)? / 1e3;
        }
        let timing = FlashTiming {
            read_us: mean(&reads) / 1e3,
            program_us: mean(&progs) / 1e3,
            erase_ms: erase_ns / 1e6,
            channel_mb_s: (width * rate) as f64,
            link_mb_s,
            link_bytes_per_command: link_bytes,
            command_overhead_us: overhead_us,
        };
        if let Err(e) = timing.validate() {
            return Err(self.err("Execution_Parameter_Set", "", format!("maps to timing the model refuses: {e}")));
        }

        // Garbage collection.
        let threshold = self.num("GC_Exec_Threshold", 0.0, 0.5)?;
        // MQSim: GC in a plane when its free blocks fall below threshold x blocks (at least 1).
        let gc_free = ((threshold * blocks as f64) as u32).max(1);
        if gc_free > 1000 {
            return Err(self.err(
                "GC_Exec_Threshold",
                &threshold.to_string(),
                format!("{gc_free} free blocks per plane: the model allows at most 1000"),
            ));
        }
        let policy = self.word("GC_Block_Selection_Policy", &["GREEDY", "RGA", "RANDOM", "RANDOM_P", "RANDOM_PP", "FIFO"])?;
        let gc_policy = match policy.as_str() {
            "GREEDY" => {
                self.ignored
                    .push(Ignored { parameter: "GC_Block_Selection_Policy".into(), reason: "GREEDY: as the model's greedy".into() });
                GcPolicy::Greedy
            }
            "FIFO" => {
                self.unsupported("GC_Block_Selection_Policy", "FIFO: approximated by cost-benefit (age-weighted)");
                GcPolicy::CostBenefit
            }
            _ => {
                self.unsupported("GC_Block_Selection_Policy", "randomised victim choice: approximated by greedy (the fewest valid pages)");
                GcPolicy::Greedy
            }
        };
        if self.boolean("Use_Copyback_for_GC")? {
            self.ignored.push(Ignored {
                parameter: "Use_Copyback_for_GC".into(),
                reason: "true: the model's GC copies back inside the die".into(),
            });
        } else {
            self.unsupported(
                "Use_Copyback_for_GC",
                "MQSim moves GC data over the channel (read out, write in); the model's GC copies back inside the die",
            );
        }
        if self.boolean("Preemptible_GC_Enabled")? {
            self.unsupported("Preemptible_GC_Enabled", "preemptible GC not modelled (GC runs to completion)");
        } else {
            self.ignored.push(Ignored { parameter: "Preemptible_GC_Enabled".into(), reason: "false: as the model".into() });
        }

        // The starting state.
        let preconditioned = self.boolean("Enabled_Preconditioning")?;
        let precondition = if preconditioned {
            self.unsupported(
                "Enabled_Preconditioning",
                "true: MQSim fills the workload's Initial_Occupancy_Percentage in steady state (computed, not written); mapped to `aged` (the whole drive), which writes twice the logical capacity through GC: minutes for a drive of hundreds of GiB, once per scenario ([device.flash] precondition = \"full\" is quick)",
            );
            Precondition::Aged
        } else {
            self.notes.push(
                "Enabled_Preconditioning false: precondition `none`; MQSim reads unwritten pages from flash (it creates their mapping on the fly, at the page's plane's write frontier) where the model returns zeroes: for reads set [device.flash] precondition = \"full\" (a page's first read is then mapped at its plane's frontier as MQSim's is: on_the_fly_read_mapping, set here)".into(),
            );
            Precondition::None
        };

        for (name, why) in IGNORED {
            if self.values.contains_key(*name) {
                self.ignored.push(Ignored { parameter: (*name).into(), reason: (*why).into() });
            }
        }
        let known: Vec<&str> = DEFAULTS.iter().map(|(n, _)| *n).chain(IGNORED.iter().map(|(n, _)| *n)).collect();
        let unknown: Vec<String> = self.values.keys().filter(|k| !known.contains(&k.as_str())).cloned().collect();
        for k in unknown {
            let v = self.values[&k].clone();
            self.unsupported.push(format!("<{k}> = {v}: unknown element"));
        }

        let mapping = if ideal { MappingCacheConfig::default() } else { self.mapping_cache(cmt_bytes, &geometry, page_bytes)? };
        if page_bytes > 4096 {
            self.notes.push(format!(
                "MQSim maps logical pages of Page_Capacity: mapping_unit_kib = {}, so a write covering part of one programs all of it. \
                 MQSim reads the rest first only for sectors in the page's status (those its workload has read or written: it maps \
                 a never-written page on its first read); so does the model, per 4 KiB unit (workload_page_status = true, set here unless Enabled_Preconditioning)",
                page_bytes / 1024
            ));
        }
        let name = self.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "mqsim".into());
        let spec = FlashSpec {
            name: format!("mqsim:{name}"),
            interface: interface.into(),
            mapping_unit_kib: geometry.page_kib,
            geometry,
            timing,
            over_provisioning,
            write_buffer_kib,
            gc_policy,
            gc_free_superblocks: gc_free,
            precondition,
            max_queue_depth: max_qd,
            die_scheduling,
            slc: Default::default(),
            mapping,
            dram,
            hot,
            plane_frontiers: true,
            mqsim_back_pressure: true,
            dies_per_chip,
            cache_registers: false,
            sector_transfers: true,
            // Without preconditioning MQSim's mapping starts empty and its workload makes the pages'
            // status (touched_units.rs) and maps pages on their first read; preconditioned, every
            // address the workload uses is mapped before the run (its FTL's
            // Perform_preconditioning), so neither rule applies.
            workload_page_status: !preconditioned,
            on_the_fly_read_mapping: !preconditioned,
            // MQSim's command cycles (command_cycles.rs) are not set: on the model's channel,
            // reserved ahead, a read's command slots into gaps MQSim's channel, deciding at each
            // instant, would not offer it, and MQSim's TPC-C runs 44% slower with them
            // (docs/reproductions/flash/mqsim.md, the twenty-fourth session).
            command_cycles: false,
        };
        if let Err(e) = spec.validate() {
            // (The write buffer, one page per plane, always holds a superpage and fits the limit.)
            let (el, v) = if e.contains("over_provisioning") {
                ("Overprovisioning_Ratio", op.to_string())
            } else if e.contains("dram_row_bytes") {
                (
                    "Data_Cache_DRAM_Row_Size x Data_Cache_DRAM_Data_Busrt_Size",
                    format!("{} x {}", spec.dram.row_bytes, spec.dram.burst_bytes),
                )
            } else {
                ("Execution_Parameter_Set", String::new())
            };
            return Err(self.err(el, &v, format!("maps to a drive the model refuses: {e}")));
        }
        if let Err(e) = super::ftl::logical_units_for(&spec.geometry, spec.over_provisioning, spec.gc_free_superblocks) {
            return Err(self.err(
                "Overprovisioning_Ratio",
                &op.to_string(),
                format!("too little spare for GC_Exec_Threshold's reserve: {e}"),
            ));
        }
        Ok(MqsimDrive {
            source: self.file,
            spec,
            queue_fetch_size: fetch,
            ignored: self.ignored,
            unsupported: self.unsupported,
            notes: self.notes,
        })
    }
}
