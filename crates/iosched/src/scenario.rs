//! Scenario files (TOML): every field has a default, units are in field names, unknown fields
//! and impossible values are errors that name the file, the field and the value.
//! The format is documented in docs/scenarios.md.

use crate::device::calibration::{calibrate_spec, CalibratedDevice, CalibrationOptions, PositioningEstimator, DEFAULT_CALIBRATION_SEED};
use crate::device::disksim::load_cache::load_drive_cached;
use crate::device::drive_queue::DriveQueueConfig;
use crate::device::flash::ftl::logical_units_for;
use crate::device::flash::geometry::UNIT_SECTORS;
use crate::device::flash::presets::flash_queue_source;
use crate::device::flash::spec::Precondition;
use crate::device::flash::{FlashSpec, FlashSsd};
use crate::device::presets::{preset, PRESET_NAMES};
use crate::device::raid0::Raid0;
use crate::device::rotational::DiskExtensions;
use crate::device::{Device, RotationalDisk, RotationalSpec};
use crate::metrics::summary::FlashReport;
use crate::metrics::{RecordSink, RequestRecord, RunSummary};
use crate::request::{IoPrio, Op, Principal, PrioClass, SECTOR_BYTES};
use crate::sched::adaptive::{self, Adaptive};
use crate::sched::registry;
use crate::sched::tunables::TunableValues;
use crate::sim::{simulate_array, simulate_with, RunControl, SimOptions, Stop};
use crate::time::{us_to_ns, NS_PER_S};
use crate::workload::apps::{self, AppWorkload, File, KernelModel, ProcDef};
use crate::workload::closed_queue::ClosedQueue;
use crate::workload::pattern::Pattern;
use crate::workload::poisson::Poisson;
use crate::workload::process::{Access, ProcessSpec, Processes, ReadModel, PAGE_SECTORS};
use crate::workload::think::Think;
use crate::workload::Workload;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

mod app;
mod array;
mod block;
mod ffsb;
mod flash;
mod host;
mod memory;
mod nvme;
mod prepared;
mod process;
mod s_suite;
mod selection;
mod task;
mod trace;
pub use app::{AppSection, APP_KINDS, DEFAULT_APP_FS_BLOCK_KIB, DEFAULT_APP_MAX_TRANSFER_KIB, DEFAULT_APP_PAGE_CACHE_MIB};
pub use array::ArraySection;
pub use block::{drive_queue, BlockSection, DEFAULT_MAX_SECTORS_KB, DEFAULT_NR_REQUESTS, DEFAULT_QUEUE_AGING_MS};
pub use flash::FlashSection;
pub use host::{FileSection, HostSection, TreeSection};
pub use process::{ProcessSection, DEFAULT_PAGE_CACHE_MIB, DEFAULT_READAHEAD_KIB, DEFAULT_READ_FRACTION};
pub use task::TaskSection;

/// A user mistake in a scenario, with where it is.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct ScenarioError {
    pub file: String,
    pub message: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub device: DeviceSection,
    #[serde(default)]
    pub workload: Option<WorkloadSection>,
    #[serde(default)]
    pub process: Vec<ProcessSection>,
    /// An application workload (Iyer & Druschel 2001 sections 4.3-4.7).
    #[serde(default)]
    pub app: Option<AppSection>,
    #[serde(default)]
    pub run: RunSection,
    /// The block layer (merging, plugging, request limits); absent: none.
    #[serde(default)]
    pub block: Option<BlockSection>,
    /// A RAID-0 array of copies of the `[device]` drive; absent: the drive alone.
    #[serde(default)]
    pub array: Option<ArraySection>,
    /// A simulated host (page cache, writeback, file system, CPUs) whose `[[task]]`s run
    /// commands; absent: none.
    #[serde(default)]
    pub host: Option<HostSection>,
    #[serde(default)]
    pub task: Vec<TaskSection>,
    /// Each table: `name`, optional `label`, and the scheduler's tunables.
    #[serde(default)]
    pub scheduler: Vec<toml::Table>,
    /// Where the scenario came from (for error messages); not a TOML field.
    #[serde(skip)]
    pub source: String,
    /// The DiskSim drive last loaded, keyed by its path: a run asks for the drive six times (its
    /// capacity, the checks, the device), and reading and mapping a drive's files is about 8 M
    /// instructions each time.
    #[serde(skip)]
    disksim_loaded: DiskSimMemo,
    /// The host kernel validation built, for the first run (`scenario/prepared.rs`).
    #[serde(skip)]
    prepared: prepared::PreparedKernel,
}

type DriveModel = (RotationalSpec, DiskExtensions, u64);

/// A loaded DiskSim drive (or the error loading it gave) by path; a clone keeps it.
#[derive(Debug, Clone, Default)]
struct DiskSimMemo(std::sync::OnceLock<(std::path::PathBuf, Result<DriveModel, String>)>);

impl DiskSimMemo {
    fn get_or_load(&self, path: &std::path::Path) -> Result<DriveModel, String> {
        let load = || {
            load_drive_cached(path).map_err(|e| format!("field `device.disksim`: {e}")).map(|drive| {
                let cap = drive.capacity_sectors();
                (drive.spec, drive.ext, cap)
            })
        };
        let (key, out) = self.0.get_or_init(|| (path.to_path_buf(), load()));
        if key == path {
            out.clone()
        } else {
            load() // the scenario now names another drive: read it, not kept
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSection {
    /// A preset name (default `ibm-deskstar-34gxp`); exclusive with `disksim`.
    #[serde(default)]
    pub preset: Option<String>,
    /// A DiskSim drive description (`.parv`/`.diskspecs`), relative to the scenario file's
    /// directory (to the working directory for a scenario not read from a file).
    #[serde(default)]
    pub disksim: Option<String>,
    /// An MQSim device description (`ssdconfig.xml`): a flash drive, relative as `disksim`.
    /// Skipped in the resolved scenario when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mqsim: Option<String>,
    pub command_overhead_ms: Option<f64>,
    pub head_switch_ms: Option<f64>,
    pub cache_segments: Option<u32>,
    pub cache_segment_kib: Option<u32>,
    pub readahead_kib: Option<u32>,
    /// "model" (default) or "calibrated": see `device::calibration`.
    pub positioning_estimator: Option<String>,
    /// Commands the drive holds at once (NCQ/TCQ): 1 (default) to the preset's maximum.
    pub queue_depth: Option<u32>,
    /// The drive's order among held commands: "rpo" (default) or "fifo".
    pub queue_order: Option<String>,
    /// RPO: a command waiting longer than this is served first (default 500 ms, an estimate).
    pub queue_aging_ms: Option<f64>,
    /// The host path's latency per command: from the host's dispatch to the command reaching
    /// the drive (interrupt, controller, transport; default 0): one value, or a list taken in
    /// order per started command (`device/command_latency.rs`). Skipped in the resolved
    /// scenario when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_latency_us: Option<LatencyUs>,
    /// A preset's write-back cache (default false: write-through): a write completes once its
    /// data is in the drive's buffer and is written to the media when the mechanism is free,
    /// as ATA drives do with write caching enabled (their default).
    pub write_cache: Option<bool>,
    /// "rotational" or "flash" (default: the preset's kind). Skipped in the resolved scenario
    /// when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `[device.flash]`: a flash preset's parameters overridden (docs/devices-flash.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flash: Option<FlashSection>,
    /// `[device.nvme]`: an NVMe drive's queue pairs, arbitration and PCIe link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme: Option<nvme::NvmeSection>,
}

impl DeviceSection {
    /// The first of a preset's cache and mechanism overrides that is set: fields only a
    /// preset-built rotational drive takes (a DiskSim drive has its own, a flash drive none).
    pub(crate) fn first_preset_override(&self) -> Option<&'static str> {
        [
            ("command_overhead_ms", self.command_overhead_ms.is_some()),
            ("head_switch_ms", self.head_switch_ms.is_some()),
            ("cache_segments", self.cache_segments.is_some()),
            ("cache_segment_kib", self.cache_segment_kib.is_some()),
            ("readahead_kib", self.readahead_kib.is_some()),
            ("write_cache", self.write_cache.is_some()),
        ]
        .into_iter()
        .find_map(|(f, set)| set.then_some(f))
    }
}

/// `device.command_latency_us`: one latency or a list of them (µs).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum LatencyUs {
    One(f64),
    Many(Vec<f64>),
}

impl Default for DeviceSection {
    fn default() -> Self {
        DeviceSection {
            preset: None,
            disksim: None,
            mqsim: None,
            command_overhead_ms: None,
            head_switch_ms: None,
            cache_segments: None,
            cache_segment_kib: None,
            readahead_kib: None,
            positioning_estimator: None,
            queue_depth: None,
            queue_order: None,
            queue_aging_ms: None,
            command_latency_us: None,
            write_cache: None,
            kind: None,
            flash: None,
            nvme: None,
        }
    }
}

fn default_preset() -> String {
    "ibm-deskstar-34gxp".into()
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSection {
    /// "closed-queue" or "poisson".
    pub kind: String,
    #[serde(default = "d_queue_depth")]
    pub queue_depth: u32,
    #[serde(default = "d_request_kib")]
    pub request_kib: f64,
    #[serde(default = "d_requests")]
    pub requests: u64,
    #[serde(default = "d_rate")]
    pub rate_iops: f64,
    #[serde(default = "d_read_fraction")]
    pub read_fraction: f64,
    /// Part of the disk the requests fall in, as fractions of its capacity.
    #[serde(default)]
    pub region_start_fraction: f64,
    #[serde(default = "d_one")]
    pub region_end_fraction: f64,
    /// kind = "trace": the trace file (relative to the scenario's directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// kind = "trace": its format (default: detected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// kind = "trace": "open" (default), "closed" (at `queue_depth`) or "dependent".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<String>,
    /// kind = "trace": the trace's times are multiplied by this (0.5: twice as fast).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_scale: Option<f64>,
    /// kind = "trace": skip malformed records (counted) instead of stopping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_bad: Option<bool>,
    /// kind = "trace": sectors beyond the disk: "error" (default), "fold" or "scale".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sector_map: Option<String>,
    /// kind = "trace": replay only these trace devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<Vec<u32>>,
    /// kind = "trace": replay at most this many requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_requests: Option<u64>,
}

fn d_queue_depth() -> u32 {
    100
}
fn d_request_kib() -> f64 {
    4.0
}
fn d_requests() -> u64 {
    10_000
}
fn d_rate() -> f64 {
    50.0
}
fn d_read_fraction() -> f64 {
    1.0
}
fn d_one() -> f64 {
    1.0
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    /// Simulated time the run lasts. Processes and apps: default 10 s. Closed-queue and Poisson
    /// workloads run their `requests` when it is not given, and stop issuing at it when it is.
    #[serde(default)]
    pub duration_s: Option<f64>,
    #[serde(default = "d_seed")]
    pub seed: u64,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection { duration_s: None, seed: d_seed() }
    }
}

/// `run.duration_s` of process and app workloads when not given.
pub const DEFAULT_DURATION_S: f64 = 10.0;

impl RunSection {
    /// The run's length in simulated seconds (the default where none is given).
    pub fn duration_s(&self) -> f64 {
        self.duration_s.unwrap_or(DEFAULT_DURATION_S)
    }

    pub fn duration_ns(&self) -> u64 {
        (self.duration_s() * NS_PER_S as f64) as u64
    }
}
fn d_seed() -> u64 {
    1
}

/// One scheduler to run, resolved from a `[[scheduler]]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedulerChoice {
    pub name: String,
    /// The policy a wrapper scheduler (anticipatory) wraps.
    pub policy: Option<String>,
    pub label: String,
    pub tunables: BTreeMap<String, f64>,
}

/// The result of one scheduler on the scenario.
pub struct RunResult {
    pub summary: RunSummary,
    pub records: Vec<RequestRecord>,
}

impl Scenario {
    /// Parses and validates scenario text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Scenario, ScenarioError> {
        // Values quoted in messages may hold control characters: show them escaped.
        let err = |message: String| ScenarioError { file: source.to_string(), message: message.chars().flat_map(escape_control).collect() };
        let de = toml::Deserializer::new(text);
        let mut scn: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let line = inner.span().map(|s| format!(" (line {})", line_of(text, s.start)));
            let field = if path.is_empty() || path == "." { String::new() } else { format!("field `{path}`: ") };
            err(format!("{field}{}{}", describe_toml_error(text, inner.message(), inner.span()), line.unwrap_or_default()))
        })?;
        scn.source = source.to_string();
        scn.validate().map_err(|m| err(with_field_line(text, m)))?;
        Ok(scn)
    }

    /// Reads and parses a scenario file: only a regular file (a device, FIFO or directory is
    /// refused by its type) of at most 64 MiB.
    pub fn read(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
        let source = path.display().to_string();
        let text = crate::input::read_text(path, crate::input::MAX_DESCRIPTION_BYTES).map_err(|e| ScenarioError {
            file: source.clone(),
            message: match e.line() {
                0 => format!("cannot read: {e}"),
                line => format!("{e} (line {line})"),
            },
        })?;
        Scenario::parse(&text, &source)
    }

    /// The built-in default scenario: two synchronous sequential readers on the IBM Deskstar
    /// (Iyer & Druschel's deceptive-idleness example) under C-LOOK, Aged-SPTF and anticipatory
    /// scheduling around Aged-SPTF.
    pub fn builtin_default() -> Scenario {
        Scenario::parse(DEFAULT_SCENARIO, "<built-in default scenario>").expect("built-in scenario is valid")
    }

    pub fn device_spec(&self) -> Result<RotationalSpec, String> {
        Ok(self.device_model()?.0)
    }

    /// Where `device.disksim` points: relative to the scenario file's directory when the
    /// scenario came from an existing file, else to the working directory.
    pub fn disksim_path(&self) -> Option<std::path::PathBuf> {
        self.relative_path(self.device.disksim.as_ref()?)
    }

    /// Where `device.mqsim` points (resolved as `device.disksim`).
    pub fn mqsim_path(&self) -> Option<std::path::PathBuf> {
        self.relative_path(self.device.mqsim.as_ref()?)
    }

    fn relative_path(&self, rel: &str) -> Option<std::path::PathBuf> {
        let rel = std::path::Path::new(rel);
        let src = std::path::Path::new(&self.source);
        Some(match src.parent() {
            Some(dir) if src.is_file() && rel.is_relative() => dir.join(rel),
            _ => rel.to_path_buf(),
        })
    }

    /// The flash drive `[device]` describes (None: a rotational one).
    pub fn flash_spec(&self) -> Result<Option<FlashSpec>, String> {
        flash::flash_spec(&self.device, self.mqsim_path().as_deref())
    }

    /// One drive's LBA count (rotational or flash).
    pub fn member_capacity_sectors(&self) -> Result<u64, String> {
        match self.flash_spec()? {
            Some(f) => Ok(logical_units_for(&f.geometry, f.over_provisioning, f.gc_free_superblocks)? * UNIT_SECTORS),
            None => Ok(self.device_model()?.2),
        }
    }

    /// The drive's name when it takes no discard (a rotational disk, preset or DiskSim); None for
    /// a flash drive (`Device::discard`).
    fn disk_without_discard(&self) -> Result<Option<String>, String> {
        if self.flash_spec()?.is_some() {
            return Ok(None);
        }
        Ok(Some(match self.disksim_path() {
            Some(path) => path.display().to_string(),
            None => self.device.preset.clone().unwrap_or_else(default_preset),
        }))
    }

    /// The drive: its spec, the mechanisms beyond it (DiskSim drives), and its LBA count.
    pub fn device_model(&self) -> Result<(RotationalSpec, DiskExtensions, u64), String> {
        let d = &self.device;
        if let Some(f) = self.flash_spec()? {
            return Err(format!("field `device.preset`: `{}` is a flash drive, which has no rotational model", f.name));
        }
        if let Some(path) = self.disksim_path() {
            if d.preset.is_some() {
                return Err("fields `device.preset` and `device.disksim` are mutually exclusive: give one".into());
            }
            if let Some(f) = d.first_preset_override() {
                return Err(format!("field `device.{f}`: overrides apply to presets only, not to a DiskSim drive (`device.disksim`)"));
            }
            if matches!(self.positioning_estimator()?, PositioningEstimator::Calibrated) {
                return Err("field `device.positioning_estimator`: `calibrated` is not available for a DiskSim drive".into());
            }
            return self.disksim_loaded.get_or_load(&path);
        }
        let name = d.preset.clone().unwrap_or_else(default_preset);
        let mut spec = preset(&name)
            .ok_or_else(|| format!("field `device.preset`: unknown device preset `{name}` (known: {})", PRESET_NAMES.join(", ")))?;
        if let Some(v) = d.command_overhead_ms {
            spec.command_overhead_ms = v;
        }
        if let Some(v) = d.head_switch_ms {
            spec.head_switch_ms = v;
        }
        if let Some(v) = d.cache_segments {
            spec.cache_segments = v;
        }
        if let Some(v) = d.cache_segment_kib {
            spec.cache_segment_kib = v;
        }
        if let Some(v) = d.readahead_kib {
            spec.readahead_kib = v;
        }
        spec.validate().map_err(|e| format!("field `device`: {e}"))?;
        let cap = spec.capacity_sectors();
        let mut ext = DiskExtensions::default();
        if d.write_cache == Some(true) {
            // The buffer's segments hold written data as DiskSim's write-back does (one write per
            // segment); a drive without a cache cannot buffer writes.
            if spec.cache_segments == 0 {
                return Err(format!("field `device.write_cache`: `{name}` with cache_segments = 0 has no buffer to hold writes"));
            }
            ext.write_back_segments = spec.cache_segments;
        }
        Ok((spec, ext, cap))
    }

    /// The host path's latency per command (none unless `device.command_latency_us` is given).
    pub fn command_latency(&self) -> Result<crate::device::command_latency::CommandLatency, String> {
        block::command_latency(&self.device)
    }

    /// blk-mq (CPUs, hardware queues, the scheduler's CPU cost) and NVMe queue pairs for a run
    /// under `scheduler` (None, None: one queue, no CPU cost, as before).
    pub fn host_queues(
        &self,
        scheduler: &str,
    ) -> Result<(Option<crate::block::mq::MqConfig>, Option<crate::device::nvme::NvmeConfig>), String> {
        nvme::host_queues(self, scheduler)
    }

    /// The drive's command queue (depth 1 unless `device.queue_depth` says otherwise).
    pub fn drive_queue(&self) -> Result<DriveQueueConfig, String> {
        if let Some(f) = self.flash_spec()? {
            let depth = self.device.queue_depth.unwrap_or(1);
            if depth == 0 || depth > f.max_queue_depth {
                return Err(format!(
                    "field `device.queue_depth` must be in [1, {}] for this drive ({}), got {depth}",
                    f.max_queue_depth,
                    flash_queue_source(&f)
                ));
            }
            // The drive starts every command it holds: its firmware's order is moot.
            return Ok(DriveQueueConfig { depth, order: crate::device::drive_queue::FirmwareOrder::Fifo });
        }
        let preset = if self.device.disksim.is_some() { None } else { Some(self.device.preset.clone().unwrap_or_else(default_preset)) };
        drive_queue(&self.device, preset.as_deref())
    }

    /// The striping when `[array]` is given (None: a single drive).
    pub fn array_layout(&self) -> Result<Option<Raid0>, String> {
        let Some(a) = &self.array else { return Ok(None) };
        let member = self.member_capacity_sectors()?;
        a.layout(member).map(Some)
    }

    /// Sectors the workload addresses: the drive's, or the array's.
    pub fn capacity_sectors(&self) -> Result<u64, String> {
        match self.array_layout()? {
            Some(a) => Ok(a.capacity_sectors()),
            None => self.member_capacity_sectors(),
        }
    }

    /// `device.positioning_estimator`: "model" (default) or "calibrated".
    pub fn positioning_estimator(&self) -> Result<PositioningEstimator, String> {
        match &self.device.positioning_estimator {
            None => Ok(PositioningEstimator::default()),
            Some(s) => PositioningEstimator::parse(s).ok_or_else(|| {
                format!("field `device.positioning_estimator`: unknown estimator `{s}` (known: {})", PositioningEstimator::NAMES.join(", "))
            }),
        }
    }

    /// The schedulers to compare, in file order (default: fcfs alone).
    pub fn schedulers(&self) -> Result<Vec<SchedulerChoice>, String> {
        if self.scheduler.is_empty() {
            return Ok(vec![SchedulerChoice { name: "fcfs".into(), policy: None, label: "fcfs".into(), tunables: BTreeMap::new() }]);
        }
        self.scheduler
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let at = format!("scheduler[{i}]");
                let name = match t.get("name") {
                    Some(toml::Value::String(s)) => s.clone(),
                    Some(v) => return Err(format!("field `{at}.name`: expected a string, got {v}")),
                    None => return Err(format!("field `{at}.name` is missing (known schedulers: {})", registry::names().join(", "))),
                };
                let info = registry::info(&name)
                    .ok_or_else(|| format!("field `{at}.name`: unknown scheduler `{name}` (known: {})", registry::names().join(", ")))?;
                let mut label = None;
                let mut policy = None;
                let mut tunables = BTreeMap::new();
                for (k, v) in t {
                    match (k.as_str(), v) {
                        ("name", _) => {}
                        ("label", toml::Value::String(s)) => label = Some(s.clone()),
                        ("label", v) => return Err(format!("field `{at}.label`: expected a string, got {v}")),
                        ("policy", toml::Value::String(s)) => policy = Some(s.clone()),
                        ("policy", v) => return Err(format!("field `{at}.policy`: expected a policy name, got {v}")),
                        (_, toml::Value::Integer(x)) => {
                            tunables.insert(k.clone(), *x as f64);
                        }
                        (_, toml::Value::Float(x)) => {
                            tunables.insert(k.clone(), *x);
                        }
                        (_, toml::Value::Boolean(b)) => {
                            tunables.insert(k.clone(), *b as u8 as f64);
                        }
                        (_, v) => {
                            let takes = registry::tunable(&name, t.get("policy").and_then(|v| v.as_str()), k)
                                .map_or_else(|| "a number or true/false".to_string(), |d| d.accepted());
                            return Err(format!("field `{at}.{k}`: tunable `{k}` takes {takes}, got {v}"));
                        }
                    }
                }
                if info.name == "adaptive" {
                    // Built at run time, once its table is measured on this scenario's device.
                    if policy.is_some() {
                        return Err(format!("field `{at}.policy`: `adaptive` wraps no policy"));
                    }
                    TunableValues::resolve(info.tunables, &tunables).map_err(|e| format!("field `{at}`: {e}"))?;
                } else {
                    registry::build(&name, policy.as_deref(), &tunables).map_err(|e| format!("field `{at}`: {e}"))?;
                }
                let policy = registry::resolved_policy(info, policy.as_deref());
                let label = label.unwrap_or_else(|| registry::default_label(info.name, policy.as_deref()));
                Ok(SchedulerChoice { name: info.name.to_string(), policy, label, tunables })
            })
            .collect::<Result<Vec<_>, String>>()
            .and_then(|choices| {
                // Runs are told apart by label (tables, plots, sweeps): two alike would merge.
                for (i, c) in choices.iter().enumerate() {
                    if let Some(j) = choices[..i].iter().position(|d| d.label == c.label) {
                        return Err(format!(
                            "field `scheduler[{i}]`: label `{}` is already used by scheduler[{j}]; give one of them a distinct `label`",
                            c.label
                        ));
                    }
                }
                Ok(choices)
            })
    }

    fn validate(&self) -> Result<(), String> {
        let capacity_sectors = self.capacity_sectors()?;
        self.positioning_estimator()?;
        self.drive_queue()?;
        self.command_latency()?;
        if let Some(b) = &self.block {
            b.config()?;
        }
        self.host_queues("noop")?;
        let capacity_bytes = capacity_sectors * SECTOR_BYTES;
        self.schedulers()?;
        // Every number is bounded: finite values far outside these would overflow simulated time.
        let within = |field: &str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && v >= lo && v <= hi {
                Ok(())
            } else {
                Err(format!("field `{field}` must be in [{lo}, {hi}], got {v}"))
            }
        };
        let count = |field: &str, v: u64, lo: u64, hi: u64| {
            if v >= lo && v <= hi {
                Ok(())
            } else {
                Err(format!("field `{field}` must be in [{lo}, {hi}], got {v}"))
            }
        };
        let sectors_of = |field: &str, kib: f64| -> Result<(), String> {
            if !(kib.is_finite() && kib > 0.0) {
                return Err(format!("field `{field}` must be a positive number, got {kib}"));
            }
            let bytes = kib * 1024.0;
            if bytes % SECTOR_BYTES as f64 != 0.0 {
                return Err(format!("field `{field}` must be a whole number of 512-byte sectors, got {kib} KiB"));
            }
            if bytes > capacity_bytes as f64 {
                return Err(format!("field `{field}` = {kib} KiB is larger than the disk ({} MiB)", capacity_bytes >> 20));
            }
            if bytes / SECTOR_BYTES as f64 > u32::MAX as f64 {
                return Err(format!("field `{field}` = {kib} KiB: one request can be at most 2 TiB"));
            }
            Ok(())
        };
        within("run.duration_s", self.run.duration_s(), 1e-6, 1e6)?;
        // Before anything below builds the workload: counts each allowed can still ask for more
        // memory together than a run may take.
        memory::check(self)?;
        match (&self.host, self.task.is_empty()) {
            (None, false) => return Err("[[task]] entries need a [host] table".into()),
            (Some(h), true) if self.app.is_some() => {
                if self.workload.is_some() || !self.process.is_empty() {
                    return Err("an [app] on a [host] is the workload: give no [workload] or [[process]]".into());
                }
                let app = self.app.as_ref().expect("checked");
                app.validate(capacity_bytes)?;
                let capacity = capacity_bytes / SECTOR_BYTES;
                let opened = crate::input::files_opened();
                let kernel = h.build_app(app, capacity, self.scenario_dir().as_deref(), self.run.seed, self.run.duration_ns())?;
                self.keep_prepared(capacity, kernel, opened);
                return Ok(());
            }
            (Some(_), true) => return Err("[host] has no [[task]] entries (nor an [app]): add at least one task".into()),
            (Some(h), false) => {
                if self.workload.is_some() || !self.process.is_empty() || self.app.is_some() {
                    return Err("a [host] with [[task]]s is the workload: give no [workload], [[process]] or [app]".into());
                }
                let mut names = std::collections::BTreeSet::new();
                for t in &self.task {
                    if !names.insert(t.name.as_str()) {
                        return Err(format!("task `{}`: two tasks have this name", t.name));
                    }
                }
                let capacity = capacity_bytes / SECTOR_BYTES;
                let opened = crate::input::files_opened();
                let kernel = h.build(&self.task, capacity, self.scenario_dir().as_deref(), self.run.seed, self.run.duration_ns())?;
                self.keep_prepared(capacity, kernel, opened);
                return Ok(());
            }
            (None, true) => {}
        }
        match (&self.workload, self.process.is_empty(), &self.app) {
            (Some(_), false, _) => return Err("give either [workload] or [[process]] entries, not both".into()),
            (Some(_), _, Some(_)) => return Err("give either [workload] or [app], not both".into()),
            (_, false, Some(_)) => return Err("give either [[process]] entries or [app], not both".into()),
            (None, true, None) => {
                return Err("no workload: add a [workload] table (closed-queue or poisson), [[process]] entries or an [app] table".into())
            }
            _ => {}
        }
        if let Some(a) = &self.app {
            a.validate(capacity_bytes)?;
            a.build(capacity_bytes / SECTOR_BYTES, self.run.seed, self.run.duration_ns())?;
        }
        if let Some(w) = &self.workload {
            trace::check_fields(w)?;
            if w.kind == "trace" {
                count("workload.queue_depth", w.queue_depth as u64, 1, 10_000_000)?;
                trace::config(w, self.scenario_dir().as_deref(), None)?.check()?;
                return Ok(());
            }
            if w.kind != "closed-queue" && w.kind != "poisson" {
                return Err(format!("field `workload.kind`: unknown workload `{}` (known: closed-queue, poisson, trace)", w.kind));
            }
            count("workload.queue_depth", w.queue_depth as u64, 1, 10_000_000)?;
            count("workload.requests", w.requests, 1, 1_000_000_000)?;
            sectors_of("workload.request_kib", w.request_kib)?;
            within("workload.rate_iops", w.rate_iops, 1e-3, 1e9)?;
            if w.kind == "poisson" {
                // Each range alone is fine; their quotient may not be: the arrivals' mean span
                // (twice it, for the exponential gaps' spread) must fit the clock.
                let span_s = w.requests as f64 / w.rate_iops;
                if 2.0 * span_s >= crate::time::HORIZON_NS as f64 / 1e9 {
                    return Err(format!(
                        "fields `workload.requests` = {} and `workload.rate_iops` = {}: the arrivals would span about {:.3e} s \
                         ({:.0} years), beyond the simulator's clock (2^62 ns, about 146 years)",
                        w.requests,
                        w.rate_iops,
                        span_s,
                        span_s / 3.156e7
                    ));
                }
            }
            within("workload.read_fraction", w.read_fraction, 0.0, 1.0)?;
            if !(0.0 <= w.region_start_fraction && w.region_start_fraction < w.region_end_fraction && w.region_end_fraction <= 1.0) {
                return Err(format!(
                    "fields `workload.region_start_fraction` = {} and `region_end_fraction` = {} must satisfy 0 <= start < end <= 1",
                    w.region_start_fraction, w.region_end_fraction
                ));
            }
            let region_bytes = (w.region_end_fraction - w.region_start_fraction) * capacity_bytes as f64;
            if region_bytes < w.request_kib * 1024.0 {
                return Err(format!(
                    "fields `workload.region_start_fraction`/`region_end_fraction`: the region ({:.0} KiB) is smaller than one request ({} KiB)",
                    region_bytes / 1024.0,
                    w.request_kib
                ));
            }
        }
        for (i, p) in self.process.iter().enumerate() {
            let at = format!("process[{i}]");
            count(&format!("{at}.count"), p.count as u64, 1, 100_000)?;
            if Pattern::parse(&p.pattern).is_none() {
                return Err(format!("field `{at}.pattern`: unknown pattern `{}` (known: sequential, alternate, random)", p.pattern));
            }
            if !["read", "write", "mixed", "discard"].contains(&p.op.as_str()) {
                return Err(format!("field `{at}.op`: expected \"read\", \"write\", \"mixed\" or \"discard\", got `{}`", p.op));
            }
            match p.read_fraction {
                Some(f) if p.op == "mixed" => within(&format!("{at}.read_fraction"), f, 0.0, 1.0)?,
                Some(f) => return Err(format!("field `{at}.read_fraction` = {f} is only used with op = \"mixed\" (op is `{}`)", p.op)),
                None => {}
            }
            if let Some(r) = p.rate_iops {
                within(&format!("{at}.rate_iops"), r, 1e-3, 1e9)?;
            }
            if let Some(r) = p.runtime_s {
                within(&format!("{at}.runtime_s"), r, 1e-6, 1e6)?;
            }
            if let Some(n) = p.think_every {
                count(&format!("{at}.think_every"), n as u64, 1, 1_000_000_000)?;
            }
            if !["fixed", "uniform", "exponential", "adversary"].contains(&p.think.as_str()) {
                return Err(format!(
                    "field `{at}.think`: unknown distribution `{}` (known: fixed, uniform, exponential, adversary)",
                    p.think
                ));
            }
            if p.think == "adversary" {
                match p.adversary_quick {
                    Some(n) => count(&format!("{at}.adversary_quick"), n as u64, 0, 1_000_000)?,
                    None => return Err(format!("field `{at}.adversary_quick` is required with think = \"adversary\"")),
                }
                match p.adversary_wait_us {
                    Some(w) => within(&format!("{at}.adversary_wait_us"), w, 0.0, 3.6e9)?,
                    None => return Err(format!("field `{at}.adversary_wait_us` is required with think = \"adversary\"")),
                }
            } else if let Some((field, value)) = p
                .adversary_quick
                .map(|n| ("adversary_quick", n.to_string()))
                .or(p.adversary_wait_us.map(|w| ("adversary_wait_us", w.to_string())))
            {
                return Err(format!("field `{at}.{field}` = {value} is only used with think = \"adversary\" (think is `{}`)", p.think));
            }
            if !["mmap", "direct", "read"].contains(&p.access.as_str()) {
                return Err(format!("field `{at}.access`: expected \"mmap\", \"direct\" or \"read\", got `{}`", p.access));
            }
            let iodepth = p.iodepth.unwrap_or(1);
            if !(1..=4096).contains(&iodepth) {
                return Err(format!("field `{at}.iodepth` must be in [1, 4096], got {iodepth}"));
            }
            if iodepth > 1 && p.access == "read" {
                return Err(format!(
                    "field `{at}.iodepth` = {iodepth}: several accesses in flight need access = \"direct\" (asynchronous direct I/O), not read()"
                ));
            }
            if let Some(c) = &p.prio_class {
                if PrioClass::parse(c).is_none() {
                    return Err(format!(
                        "field `{at}.prio_class`: unknown I/O priority class `{c}` (known: {})",
                        PrioClass::NAMES.join(", ")
                    ));
                }
            }
            if let Some(l) = p.prio_level {
                if l > 7 {
                    return Err(format!("field `{at}.prio_level` must be in [0, 7], got {l}"));
                }
            }
            if let Some(w) = p.group_weight {
                if p.group.is_none() {
                    return Err(format!("field `{at}.group_weight` = {w} needs `{at}.group` (the cgroup it weighs)"));
                }
                if !(1..=1000).contains(&w) {
                    return Err(format!("field `{at}.group_weight` must be in [1, 1000] (cgroup io.weight), got {w}"));
                }
            }
            let page_kib = (PAGE_SECTORS * SECTOR_BYTES) as f64 / 1024.0;
            let pages = |field: &str, kib: f64| {
                if kib % page_kib != 0.0 {
                    Err(format!("field `{field}` = {kib} must be a multiple of the {page_kib} KiB page with access = \"read\""))
                } else {
                    Ok(())
                }
            };
            if p.access == "read" {
                if p.op != "read" {
                    return Err(format!(
                        "field `{at}.op` = `{}`: access = \"read\" models read(); use op = \"read\" or access = \"mmap\"",
                        p.op
                    ));
                }
                pages(&format!("{at}.request_kib"), p.request_kib)?;
                let ra = p.readahead_kib.unwrap_or(DEFAULT_READAHEAD_KIB);
                within(&format!("{at}.readahead_kib"), ra, 0.0, 1048576.0)?;
                pages(&format!("{at}.readahead_kib"), ra)?;
                let cache = p.page_cache_mib.unwrap_or(DEFAULT_PAGE_CACHE_MIB);
                within(&format!("{at}.page_cache_mib"), cache, 0.0, 1048576.0)?;
                if cache * 1024.0 < p.request_kib + ra {
                    return Err(format!(
                        "field `{at}.page_cache_mib` = {cache}: the cache must hold one request and the read-ahead window ({} KiB)",
                        p.request_kib + ra
                    ));
                }
                within(&format!("{at}.copy_us_per_kib"), p.copy_us_per_kib.unwrap_or(0.0), 0.0, 1e6)?;
            } else if let Some((field, value)) = p
                .readahead_kib
                .map(|v| ("readahead_kib", v))
                .or(p.page_cache_mib.map(|v| ("page_cache_mib", v)))
                .or(p.copy_us_per_kib.map(|v| ("copy_us_per_kib", v)))
            {
                return Err(format!("field `{at}.{field}` = {value} is only used with access = \"read\" (access is `{}`)", p.access));
            }
            if p.max_transfer_kib != 0.0 {
                sectors_of(&format!("{at}.max_transfer_kib"), p.max_transfer_kib)?;
                if p.access == "read" {
                    pages(&format!("{at}.max_transfer_kib"), p.max_transfer_kib)?;
                }
            }
            sectors_of(&format!("{at}.request_kib"), p.request_kib)?;
            within(&format!("{at}.file_mib"), p.file_mib, 1.0 / 2048.0, (capacity_bytes >> 20) as f64)?;
            if p.file_mib * 1024.0 < p.request_kib {
                return Err(format!("field `{at}.file_mib` = {} is smaller than one request ({} KiB)", p.file_mib, p.request_kib));
            }
            within(&format!("{at}.think_us"), p.think_us, 0.0, 3.6e9)?;
            count(&format!("{at}.weight"), p.weight as u64, 1, 1_000_000)?;
            within(&format!("{at}.start_us"), p.start_us, 0.0, 3.6e9)?;
            if p.start_us >= self.run.duration_s() * 1e6 {
                return Err(format!(
                    "field `{at}.start_us` = {}: the process would start after the run ends (run.duration_s = {})",
                    p.start_us,
                    self.run.duration_s()
                ));
            }
            if let Some(n) = p.requests {
                count(&format!("{at}.requests"), n, 1, 1_000_000_000)?;
            }
            if p.chain {
                if p.requests.is_none() {
                    return Err(format!(
                        "field `{at}.chain` = true needs `{at}.requests` (each instance must finish for the next to start)"
                    ));
                }
                within(&format!("{at}.chain_gap_us"), p.chain_gap_us, 0.0, 3.6e9)?;
            } else if p.chain_gap_us != 0.0 {
                return Err(format!("field `{at}.chain_gap_us` = {} is only used with chain = true", p.chain_gap_us));
            }
            if let Some(off) = p.file_offset_mib {
                within(&format!("{at}.file_offset_mib"), off, 0.0, (capacity_bytes >> 20) as f64)?;
                // A chain's files lie one after another from the offset.
                let files = if p.chain { p.count as f64 } else { 1.0 };
                if (off + files * p.file_mib) * 1048576.0 > capacity_bytes as f64 {
                    return Err(format!(
                        "field `{at}.file_offset_mib` = {off}: the file{} ({} MiB) would end beyond the disk ({} MiB)",
                        if p.chain { "s of the chain" } else { "" },
                        files * p.file_mib,
                        capacity_bytes >> 20
                    ));
                }
            }
        }
        for (i, p) in self.process.iter().enumerate() {
            let at = format!("process[{i}]");
            within(&format!("{at}.exit_us"), p.exit_us, 0.0, 3.6e9)?;
            if let Some(name) = &p.after {
                let Some(q) = self.process[..i].iter().find(|q| &q.name == name) else {
                    return Err(format!("field `{at}.after`: no earlier [[process]] is named `{name}`"));
                };
                if q.count != 1 || (q.requests.is_none() && q.runtime_s.is_none()) {
                    return Err(format!(
                        "field `{at}.after`: process `{name}` must have count = 1 and `requests` or `runtime_s` (it must finish, as one process)"
                    ));
                }
                if p.chain {
                    return Err(format!("field `{at}.after`: not with chain = true"));
                }
            }
            if let Some(j) = self.process[..i].iter().position(|q| q.name == p.name) {
                return Err(format!(
                    "field `process[{i}].name`: `{}` is already the name of process[{j}]; per-process results are told apart by name",
                    p.name
                ));
            }
        }
        let total: u64 = self.process.iter().map(|p| p.count as u64).sum();
        if total > 0 {
            let region_mib = (capacity_bytes >> 20) as f64 / total as f64;
            if let Some((i, p)) = self.process.iter().enumerate().find(|(_, p)| p.file_offset_mib.is_none() && p.file_mib > region_mib) {
                return Err(format!(
                    "field `process[{i}].file_mib` = {}: {total} files spread evenly over the disk ({} MiB) get {region_mib:.0} MiB each; set file_offset_mib or shrink the files",
                    p.file_mib,
                    capacity_bytes >> 20
                ));
            }
        }
        Ok(())
    }

    /// The scenario file's directory, if it came from a file (relative paths start there).
    pub fn scenario_dir(&self) -> Option<std::path::PathBuf> {
        let src = std::path::Path::new(&self.source);
        match src.parent() {
            Some(dir) if src.is_file() => Some(dir.to_path_buf()),
            _ => None,
        }
    }

    /// What a host kernel is built from: the scenario as it stands (its TOML fields and where it
    /// was read from), the capacity and the seed. None if the fields cannot be written out (then
    /// nothing is kept).
    fn prepared_key(&self, capacity: u64, seed: u64) -> Option<String> {
        let fields = serde_json::to_string(self).ok()?;
        Some(format!("{seed} {capacity} {} {fields}", self.source))
    }

    /// Keeps the host kernel validation built (with the run's seed) for the first run, unless
    /// building it opened a file: `files_opened_before` is `input::files_opened()` before the build.
    fn keep_prepared(&self, capacity: u64, kernel: crate::host::kernel::Kernel, files_opened_before: u64) {
        if crate::input::files_opened() != files_opened_before {
            return;
        }
        if let Some(key) = self.prepared_key(capacity, self.run.seed) {
            self.prepared.keep(key, kernel);
        }
    }

    fn workload(&self, capacity: u64, seed: u64) -> Result<Box<dyn Workload>, String> {
        if let Some(h) = &self.host {
            if let Some(kernel) = self.prepared.take(|| self.prepared_key(capacity, seed)) {
                return Ok(Box::new(kernel));
            }
            if let Some(a) = &self.app {
                return Ok(Box::new(h.build_app(a, capacity, self.scenario_dir().as_deref(), seed, self.run.duration_ns())?));
            }
            return Ok(Box::new(h.build(&self.task, capacity, self.scenario_dir().as_deref(), seed, self.run.duration_ns())?));
        }
        if let Some(a) = &self.app {
            return Ok(Box::new(a.build(capacity, seed, self.run.duration_ns())?));
        }
        let kib_sectors = |kib: f64| (kib * 1024.0 / SECTOR_BYTES as f64).round() as u32;
        if let Some(w) = &self.workload {
            let region = ((capacity as f64 * w.region_start_fraction) as u64, (capacity as f64 * w.region_end_fraction) as u64);
            let size = kib_sectors(w.request_kib);
            // Queue workloads stop issuing at run.duration_s only when it is given.
            let stop_ns = self.run.duration_s.map(|_| self.run.duration_ns());
            return Ok(match w.kind.as_str() {
                "trace" => {
                    let config = trace::config(w, self.scenario_dir().as_deref(), stop_ns)?;
                    let replay = crate::workload::trace_replay::TraceReplay::new(config, capacity)?;
                    match self.disk_without_discard()? {
                        Some(name) => Box::new(replay.refusing_discards(&name)),
                        None => Box::new(replay),
                    }
                }
                "closed-queue" => {
                    Box::new(ClosedQueue::new(w.queue_depth, w.requests, size, region, w.read_fraction, seed).stop_at(stop_ns))
                }
                _ => Box::new(Poisson::new(w.rate_iops, w.requests, size, region, w.read_fraction, seed).stop_at(stop_ns)),
            });
        }
        if let Some(i) = self.process.iter().position(|p| p.op == "discard") {
            if let Some(name) = self.disk_without_discard()? {
                return Err(format!(
                    "field `process[{i}].op` = \"discard\": the device `{name}` is a rotational disk, which has no discard \
                     (TRIM); use a flash preset"
                ));
            }
        }
        let total: u64 = self.process.iter().map(|p| p.count as u64).sum();
        let mut specs = Vec::new();
        for p in &self.process {
            for k in 0..p.count {
                let index = specs.len() as u64;
                let pid = index as u32 + 1;
                let request_sectors = kib_sectors(p.request_kib);
                let file_sectors = (p.file_mib * 2048.0) as u64 / request_sectors as u64 * request_sectors as u64;
                // Default placement: process i of n gets the start of the i-th n-th of the disk.
                let start = match p.file_offset_mib {
                    Some(off) if p.chain => ((off + k as f64 * p.file_mib) * 2048.0) as u64,
                    Some(off) => (off * 2048.0) as u64,
                    None => capacity / total * index,
                };
                let start = start / 8 * 8; // 4 KiB aligned, as a file system allocates
                let think_ns = us_to_ns(p.think_us);
                specs.push(ProcessSpec {
                    name: if p.count > 1 { format!("{}{}", p.name, k + 1) } else { p.name.clone() },
                    principal: Principal { pid, group: p.group.unwrap_or(pid) },
                    op: match p.op.as_str() {
                        "write" => Op::Write,
                        "discard" => Op::Discard,
                        _ => Op::Read,
                    },
                    read_fraction: (p.op == "mixed").then(|| p.read_fraction.unwrap_or(DEFAULT_READ_FRACTION)),
                    rate_iops: p.rate_iops,
                    runtime_ns: p.runtime_s.map(|s| (s * NS_PER_S as f64) as u64),
                    think_every: p.think_every.unwrap_or(1),
                    pattern: Pattern::parse(&p.pattern).unwrap(),
                    request_sectors,
                    file_start_sector: start,
                    file_sectors: file_sectors.min(capacity - start),
                    think: match p.think.as_str() {
                        "uniform" => Think::Uniform(think_ns),
                        "exponential" => Think::Exponential { mean_ns: think_ns as f64 },
                        "adversary" => Think::Adversary {
                            quick_ns: think_ns,
                            quick: p.adversary_quick.unwrap_or(0),
                            wait_ns: us_to_ns(p.adversary_wait_us.unwrap_or(0.0)),
                        },
                        _ => Think::Fixed(think_ns),
                    },
                    start_ns: us_to_ns(if p.chain && k > 0 { p.chain_gap_us } else { p.start_us }),
                    after: match &p.after {
                        // The named entry has count 1: its one instance, by name.
                        Some(name) => specs.iter().position(|s: &ProcessSpec| &s.name == name),
                        None => (p.chain && k > 0).then(|| index as usize - 1),
                    },
                    max_requests: p.requests,
                    exit_ns: us_to_ns(p.exit_us),
                    weight: p.weight,
                    access: match p.access.as_str() {
                        "read" => Access::Read(ReadModel {
                            readahead_sectors: (p.readahead_kib.unwrap_or(DEFAULT_READAHEAD_KIB) * 2.0) as u64,
                            cache_pages: (p.page_cache_mib.unwrap_or(DEFAULT_PAGE_CACHE_MIB) * 2048.0 / PAGE_SECTORS as f64) as usize,
                            copy_ns_per_kib: p.copy_us_per_kib.unwrap_or(0.0) * 1e3,
                        }),
                        _ => Access::Mmap,
                    },
                    max_transfer_sectors: kib_sectors(p.max_transfer_kib),
                    iodepth: p.iodepth.unwrap_or(1),
                    // Synchronous by default, discards too: blkdev_issue_discard (fstrim, and
                    // fio's trims through the BLKDISCARD ioctl) submits with submit_bio_wait,
                    // which sets REQ_SYNC (block/bio.c); `sync = false` gives a file system's
                    // online discard (`-o discard`: plain submit_bio).
                    sync: p.sync.unwrap_or(true),
                    prio: IoPrio {
                        class: p.prio_class.as_deref().and_then(PrioClass::parse).unwrap_or_default(),
                        level: p.prio_level.unwrap_or(IoPrio::default().level),
                    },
                    meta: p.meta,
                    group_weight: p.group_weight,
                });
            }
        }
        let stop = self.run.duration_ns();
        Ok(Box::new(Processes::new(specs, stop, seed)))
    }

    fn workload_label(&self) -> String {
        if self.host.is_some() {
            return match &self.app {
                Some(a) => format!("{} (host)", a.kind),
                None => "host".into(),
            };
        }
        match (&self.workload, &self.app) {
            (Some(w), _) if w.kind == "trace" => {
                let file = w.trace.as_deref().map(|t| Path::new(t).file_name().map_or(t.to_string(), |n| n.to_string_lossy().into_owned()));
                format!("trace {} ({})", file.unwrap_or_default(), w.replay.as_deref().unwrap_or("open"))
            }
            (Some(w), _) => w.kind.clone(),
            (None, Some(a)) => a.kind.clone(),
            _ => "processes".into(),
        }
    }

    /// The scenario with every default filled in, as JSON: its sections as parsed (serde
    /// defaults applied), the device's full parameters, and each scheduler with all its
    /// tunables (defaults where not given). What a user keeps to know exactly what ran.
    pub fn resolved(&self) -> Result<serde_json::Value, ScenarioError> {
        let err = |message: String| ScenarioError { file: self.source.clone(), message };
        let mut v = serde_json::to_value(self).map_err(|e| err(e.to_string()))?;
        let flash = self.flash_spec().map_err(err)?;
        let schedulers: Vec<serde_json::Value> = self
            .schedulers()
            .map_err(err)?
            .into_iter()
            .map(|c| {
                let mut tunables = BTreeMap::new();
                let infos = [Some(c.name.as_str()), c.policy.as_deref()];
                for info in infos.into_iter().flatten().filter_map(registry::info) {
                    for t in info.tunables {
                        tunables.insert(t.name.to_string(), t.default);
                    }
                }
                tunables.extend(c.tunables.clone());
                serde_json::json!({"name": c.name, "label": c.label, "policy": c.policy, "tunables": tunables})
            })
            .collect();
        v["scheduler"] = serde_json::Value::from(schedulers);
        v["device"]["resolved"] = match flash {
            Some(f) => {
                let capacity_sectors = self.member_capacity_sectors().map_err(err)?;
                serde_json::json!({"flash": f, "capacity_sectors": capacity_sectors})
            }
            None => {
                let (spec, _, capacity_sectors) = self.device_model().map_err(err)?;
                serde_json::json!({"spec": spec, "capacity_sectors": capacity_sectors})
            }
        };
        if let Some(a) = self.array_layout().map_err(err)? {
            v["array"]["resolved"] = serde_json::json!({"chunk_sectors": a.chunk_sectors, "member_sectors": a.member_sectors, "capacity_sectors": a.capacity_sectors()});
        }
        v["source"] = serde_json::Value::from(self.source.clone());
        Ok(v)
    }

    /// Runs every listed scheduler on this scenario, keeping every record. `seed` overrides
    /// `run.seed`.
    pub fn run(&self, seed: Option<u64>) -> Result<Vec<RunResult>, ScenarioError> {
        self.run_with(RunOptions { seed, keep_records: true, ..RunOptions::default() })
    }

    /// Runs every listed scheduler with `options` (what to keep, where records go, who
    /// watches). A cancelled run ends the scenario: the runs so far are returned, the last one
    /// marked `stopped`.
    pub fn run_with(&self, options: RunOptions<'_>) -> Result<Vec<RunResult>, ScenarioError> {
        let RunOptions { seed, keep_records, mut sink, control } = options;
        let err = |message: String| ScenarioError { file: self.source.clone(), message };
        let seed = seed.unwrap_or(self.run.seed);
        let flash = self.flash_spec().map_err(err)?;
        // The rotational drive's spec and extensions (None: a flash drive).
        let rot = match &flash {
            Some(_) => None,
            None => {
                let (spec, ext, _) = self.device_model().map_err(err)?;
                Some((spec, ext))
            }
        };
        let choices = self.schedulers().map_err(err)?;
        // Calibrated once, on a fresh copy of the drive with a fixed seed (a property of the
        // drive, as if measured at installation), shared by every scheduler's run.
        let curve = match (self.positioning_estimator().map_err(err)?, &rot) {
            (PositioningEstimator::Calibrated, Some((spec, _))) => {
                let cal = calibrate_spec(spec, &CalibrationOptions::default(), DEFAULT_CALIBRATION_SEED).map_err(err)?;
                Some(std::sync::Arc::new(cal.curve))
            }
            _ => None,
        };
        let nvme_drive = flash.as_ref().is_some_and(|f| f.interface == "nvme");
        let block = self.block.as_ref().map(|b| b.config_for_drive(nvme_drive)).transpose().map_err(err)?;
        let drive = self.drive_queue().map_err(err)?;
        let command_latency = self.command_latency().map_err(err)?;
        let array = self.array_layout().map_err(err)?;
        let capacity = self.capacity_sectors().map_err(err)?;
        let drive_name = match (&flash, &rot) {
            (Some(f), _) => f.name.clone(),
            (None, Some((spec, _))) => spec.name.clone(),
            (None, None) => unreachable!("a drive is flash or rotational"),
        };
        let device_name = match array {
            None => drive_name,
            Some(a) => format!("raid0 of {} x {}, chunk {} KiB", a.members, drive_name, a.chunk_sectors * SECTOR_BYTES / 1024),
        };
        let mut out = Vec::with_capacity(choices.len());
        let mut selection: Option<std::sync::Arc<adaptive::SelectionTable>> = None;
        // An aged flash drive is aged once (seconds to minutes of FTL work, the same state for
        // every run and array member: a function of the spec and the seed) and copied for each;
        // the last use takes it. A full or fresh one is built each time (laid out by arithmetic,
        // its maps untouched until written: a copy would touch them all).
        let mut flash_uses_left = choices.len() * array.map_or(1, |a| a.members as usize);
        let mut aged_flash: Option<FlashSsd> = None;
        for (index, choice) in choices.into_iter().enumerate() {
            // Ctrl-C between runs: the next scheduler's run does not start.
            if control.is_some_and(|c| c.is_cancelled()) && !out.is_empty() {
                break;
            }
            // adaptive's table: measured once, on this device, before its run.
            if choice.name == "adaptive" && selection.is_none() {
                let t = TunableValues::resolve(adaptive::TUNABLES, &choice.tunables).map_err(err)?;
                let table =
                    selection::measure(self, &t).map_err(|e| err(format!("scheduler `{}`: measuring its table: {e}", choice.label)))?;
                selection = Some(std::sync::Arc::new(table));
            }
            // A drive and a scheduler per member (one of each without an array).
            let members = array.map_or(1, |a| a.members as usize);
            let mut devices: Vec<Box<dyn Device>> = Vec::with_capacity(members);
            let mut schedulers = Vec::with_capacity(members);
            for _ in 0..members {
                if let Some(f) = &flash {
                    flash_uses_left -= 1;
                    let cancelled = || control.is_some_and(|c| c.is_cancelled());
                    let built = match f.precondition {
                        Precondition::Aged => {
                            if aged_flash.is_none() {
                                aged_flash = FlashSsd::new_unless(f.clone(), seed, &cancelled).map_err(err)?;
                            }
                            if flash_uses_left == 0 {
                                aged_flash.take()
                            } else {
                                aged_flash.clone()
                            }
                        }
                        _ => Some(FlashSsd::new(f.clone(), seed).map_err(err)?),
                    };
                    // Ctrl-C while aging the drive: nothing of this run can start.
                    let Some(ssd) = built else { return Ok(out) };
                    devices.push(Box::new(ssd));
                } else if let Some((spec, ext)) = &rot {
                    let disk = RotationalDisk::with_extensions(spec.clone(), ext.clone()).map_err(err)?;
                    devices.push(match &curve {
                        None => Box::new(disk),
                        Some(c) => Box::new(CalibratedDevice::new(disk, c.clone())),
                    });
                }
                schedulers.push(match &selection {
                    Some(table) if choice.name == "adaptive" => {
                        let t = TunableValues::resolve(adaptive::TUNABLES, &choice.tunables).map_err(err)?;
                        Box::new(Adaptive::new(table.clone(), build_candidate, &t).map_err(err)?)
                    }
                    _ => registry::build(&choice.name, choice.policy.as_deref(), &choice.tunables).map_err(err)?,
                });
            }
            let mut workload = self.workload(capacity, seed).map_err(err)?;
            let (mq, nvme) = self.host_queues(&choice.name).map_err(err)?;
            // Behind blk-mq with its tags, an unset `nr_requests` is Linux's for this scheduler.
            let block = match (&mq, &block) {
                (Some(m), Some(b))
                    if b.tags == crate::block::request_pool::TagModel::BlkMq
                        && self.block.as_ref().is_some_and(|s| s.nr_requests.is_none()) =>
                {
                    let nr = crate::block::mq::default_nr_requests(m.tags_per_hw_queue, &choice.name);
                    Some(crate::block::BlockConfig { nr_requests: Some(nr), ..*b })
                }
                _ => block,
            };
            if let Some(s) = sink.as_deref_mut() {
                s.begin_run(index, &choice.label);
            }
            let options = SimOptions {
                keep_records,
                sink: sink.as_deref_mut().map(|s| s as &mut dyn RecordSink),
                control,
                block,
                drive,
                command_latency: command_latency.clone(),
                mq: mq.clone(),
                nvme: nvme.clone(),
            };
            let sim = match array {
                None => simulate_with(devices[0].as_mut(), schedulers[0].as_mut(), workload.as_mut(), options),
                Some(a) => {
                    let lanes: Vec<(&mut dyn Device, &mut dyn crate::sched::Scheduler)> = devices
                        .iter_mut()
                        .zip(schedulers.iter_mut())
                        .map(|(d, s)| (d.as_mut() as &mut dyn Device, s.as_mut() as &mut dyn crate::sched::Scheduler))
                        .collect();
                    simulate_array(lanes, a, workload.as_mut(), options)
                }
            };
            if let Some(failure) = workload.failure() {
                return Err(err(format!("scheduler `{}`: {failure}", choice.label)));
            }
            if let Some(Stop::Horizon { at_ns }) = sim.stop {
                return Err(err(format!(
                    "scheduler `{}`: simulated time ran past the end of the simulator's clock (2^62 ns, about 146 years; \
                     the next event at {at_ns} ns): a time in this scenario is out of range, e.g. a trace stretched by \
                     its time_scale, arrivals too sparse for their count, or think times that add up beyond it",
                    choice.label
                )));
            }
            if let Some(Stop::NoProgress { at_ns, events }) = sim.stop {
                return Err(err(format!(
                    "scheduler `{}`: the simulation makes no progress: {events} events at t = {:.6} s without simulated time \
                     advancing (a process whose reads the page cache serves in zero time with zero think time? give it \
                     `think_us` or `copy_us_per_kib`)",
                    choice.label,
                    at_ns as f64 / 1e9
                )));
            }
            let mut summary = sim.accumulator.finish(0, sim.end_ns, &workload.processes(), sim.invariants);
            summary.scheduler = choice.label.clone();
            summary.scheduler_name = choice.name.clone();
            summary.device = device_name.clone();
            summary.workload = self.workload_label();
            summary.seed = seed;
            summary.scheduler_counters = sim.scheduler_counters.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            summary.notices = crate::sched::notices::notices(&choice.name, &summary.scheduler_counters);
            summary.block = sim.block;
            summary.host = workload.host_report();
            if choice.name == "adaptive" {
                summary.selection = selection.as_deref().cloned();
            }
            summary.bytes_served = workload.bytes_served();
            summary.trace_replay = workload.replay_counts();
            // Flash drives: their FTLs' counts, summed over an array's members.
            summary.flash = devices
                .iter()
                .filter_map(|d| d.flash_counters())
                .reduce(|(r, p), (r2, p2)| (r.zip(r2, u64::saturating_add), p.zip(p2, u64::saturating_add)))
                .map(|(run, pre)| FlashReport::new(run, pre));
            summary.host_queues = mq.as_ref().map(|m| {
                let (busy, wait) = sim.host_cpu.unwrap_or_default();
                let cost_s = m.cost.per_request_ns as f64 / 1e9;
                let parallel = if m.cost.serialized { 1.0 } else { m.cpus as f64 };
                crate::metrics::summary::HostQueuesReport {
                    cpus: m.cpus,
                    nr_hw_queues: m.nr_hw_queues,
                    tags_per_hw_queue: m.tags_per_hw_queue,
                    sched_cost_us: m.cost.per_request_ns as f64 / 1e3,
                    sched_serialized: m.cost.serialized,
                    arbitration: nvme.as_ref().map(|n| match n.arbitration {
                        crate::device::nvme::Arbitration::RoundRobin => "rr".to_string(),
                        crate::device::nvme::Arbitration::WeightedRoundRobin { .. } => "wrr".to_string(),
                    }),
                    sched_cpu_ms: busy as f64 / 1e6,
                    sched_wait_ms: wait as f64 / 1e6,
                    cpu_iops_ceiling: (cost_s > 0.0).then(|| parallel / cost_s),
                }
            });
            if let Some(Stop::Cancelled { at_ns }) = sim.stop {
                summary.stopped = Some(format!("cancelled at {:.3} s of simulated time", at_ns as f64 / 1e9));
            }
            if let Some(c) = control {
                c.finish_run();
            }
            let cancelled = sim.stop.is_some();
            out.push(RunResult { summary, records: sim.records });
            if cancelled {
                break;
            }
        }
        Ok(out)
    }
}

/// What `Scenario::run_with` keeps and who watches.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Overrides `run.seed`.
    pub seed: Option<u64>,
    /// Keep every record in memory (`RunResult::records`).
    pub keep_records: bool,
    /// Every record of every run, as it completes.
    pub sink: Option<&'a mut dyn RecordSink>,
    pub control: Option<&'a RunControl>,
}

/// A validation message naming a field (`field `process[1].think_us` ...`) gets the line of that
/// field in `text` (or of its table, when the field is left at its default): `... (line 12)`.
fn with_field_line(text: &str, message: String) -> String {
    let field =
        message.split_once("field `").or_else(|| message.split_once("fields `")).and_then(|(_, rest)| rest.split_once('`')).map(|(f, _)| f);
    match field.and_then(|f| field_line(text, f)) {
        Some(line) if !message.contains("(line ") => format!("{message} (line {line})"),
        _ => message,
    }
}

/// The 1-based line of `path` (`table.key`, `table[i].key`, `table[i]`) in scenario text written
/// with `[table]` / `[[table]]` headers and `key = value` lines; the table's header line when the
/// key is absent; None when the table is not found that way. A dotted table is tried first
/// (`device.flash.page_kib` is key `page_kib` of `[device.flash]`), then its parents.
fn field_line(text: &str, path: &str) -> Option<usize> {
    let mut cut = path.len();
    while let Some(dot) = path[..cut].rfind('.') {
        let (head, rest) = (&path[..dot], &path[dot + 1..]);
        if let Some(line) = field_line_in(text, head, Some(rest.split(['.', '[']).next().unwrap_or(rest))) {
            return Some(line);
        }
        cut = dot;
    }
    field_line_in(text, path, None)
}

/// `field_line` for the table `head` (`table` or `table[i]`) and its `key`.
fn field_line_in(text: &str, head: &str, key: Option<&str>) -> Option<usize> {
    let (table, index) = match head.split_once('[') {
        Some((t, i)) => (t, i.trim_end_matches(']').parse::<usize>().ok()?),
        None => (head, 0),
    };
    let mut seen = 0usize;
    let mut header = None;
    let mut inside = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(name) = line.strip_prefix("[[").and_then(|l| l.split_once("]]")).map(|(n, _)| n.trim()) {
            inside = name == table && {
                seen += 1;
                seen - 1 == index
            };
        } else if let Some(name) = line.strip_prefix('[').and_then(|l| l.split_once(']')).map(|(n, _)| n.trim()) {
            inside = name == table && index == 0;
        } else if inside {
            if let (Some(k), Some((lhs, _))) = (key, line.split_once('=')) {
                if lhs.trim().trim_matches('"') == k {
                    return Some(i + 1);
                }
            }
            continue;
        } else {
            continue;
        }
        if inside && header.is_none() {
            header = Some(i + 1);
        }
    }
    header
}

fn escape_control(c: char) -> Vec<char> {
    if c.is_control() {
        c.escape_unicode().collect()
    } else {
        vec![c]
    }
}

/// The TOML parser's message on one line, never empty: the parser gives no message for some
/// errors (a control character in a comment), which are then described from the offending text.
fn describe_toml_error(text: &str, message: &str, span: Option<std::ops::Range<usize>>) -> String {
    let message = message.split('\n').map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ");
    let message: String = message.chars().map(|c| if c.is_control() { '?' } else { c }).collect();
    if message.contains("number too large to fit in target type") {
        // TOML's integers are signed 64-bit: a larger literal never reaches the field.
        return format!("a number beyond TOML's integers (at most {})", i64::MAX);
    }
    if !message.is_empty() {
        return plain_type_words(&message);
    }
    let bad = span.and_then(|s| text.get(s.start.min(text.len())..)).and_then(|rest| rest.chars().next());
    match bad {
        Some(c) if c.is_control() && c != '\n' && c != '\t' => {
            format!("control character U+{:04X} is not allowed here (TOML allows only tab among control characters)", c as u32)
        }
        Some(c) => format!("invalid TOML at `{}`", c.escape_default()),
        None => "invalid TOML".to_string(),
    }
}

/// serde's "invalid type: string \"fast\", expected f64" in the words of the scenario's reader:
/// "expected a number, got \"fast\"" (Rust type names mean nothing to a user); other messages
/// are returned unchanged.
fn plain_type_words(message: &str) -> String {
    for kind in ["invalid type: ", "invalid value: "] {
        if let Some(at) = message.find(kind) {
            let rest = &message[at + kind.len()..];
            if let Some((got, expected)) = rest.split_once(", expected ") {
                return format!("{}expected {}, got {}", &message[..at], plain_expected(expected), plain_got(got));
            }
        }
    }
    message.to_string()
}

fn plain_expected(expected: &str) -> String {
    match expected {
        "f32" | "f64" => "a number".to_string(),
        "u8" => format!("a whole number from 0 to {}", u8::MAX),
        "u16" => format!("a whole number from 0 to {}", u16::MAX),
        "u32" => format!("a whole number from 0 to {}", u32::MAX),
        // TOML's integers stop at i64::MAX.
        "u64" | "usize" => format!("a whole number from 0 to {}", i64::MAX),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".to_string(),
        "a boolean" => "true or false".to_string(),
        "a sequence" => "a list".to_string(),
        "a map" => "a table".to_string(),
        e if e.starts_with("struct ") => "a table".to_string(),
        e => e.to_string(),
    }
}

fn plain_got(got: &str) -> String {
    for prefix in ["floating point ", "integer ", "boolean ", "string "] {
        if let Some(v) = got.strip_prefix(prefix) {
            return v.trim_matches('`').to_string();
        }
    }
    match got {
        "sequence" => "a list".to_string(),
        "map" => "a table".to_string(),
        g => g.to_string(),
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].bytes().filter(|&b| b == b'\n').count() + 1
}

/// The scenario `iosched run` uses when given no file.
pub const DEFAULT_SCENARIO: &str = r#"# Two synchronous sequential readers (Iyer & Druschel 2001, section 2): deceptive idleness
# under the work-conserving C-LOOK and Aged-SPTF, and its cure, anticipatory scheduling.
name = "two-readers"
[device]
preset = "ibm-deskstar-34gxp"
[[process]]
name = "reader"
count = 2
pattern = "sequential"
request_kib = 64
file_mib = 1024
think_us = 200
[run]
duration_s = 10
seed = 1
[[scheduler]]
name = "clook"
[[scheduler]]
name = "aged-sptf"
[[scheduler]]
name = "anticipatory"
policy = "aged-sptf"
"#;

/// Builds one of adaptive's candidates with its default tunables.
fn build_candidate(name: &str) -> Result<Box<dyn crate::sched::Scheduler>, String> {
    registry::build(name, None, &BTreeMap::new())
}
