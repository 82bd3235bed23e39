//! `[workload] kind = "trace"`: a block trace replayed under the scenario's schedulers
//! (workload/trace_replay.rs). Fields: docs/scenarios.md#trace-replay.

use super::WorkloadSection;
use crate::time::Nanos;
use crate::trace::{Format, ReadOptions, TraceReader};
use crate::workload::trace_replay::{ReplayMode, SectorMap, TraceReplayConfig};
use std::path::Path;

/// The replay modes' names.
pub const REPLAY_MODES: &[&str] = &["open", "closed", "dependent"];

/// Trace fields on another kind of workload are a mistake, not something to ignore.
pub fn check_fields(w: &WorkloadSection) -> Result<(), String> {
    if w.kind == "trace" {
        return Ok(());
    }
    let given = [
        ("trace", w.trace.is_some()),
        ("format", w.format.is_some()),
        ("replay", w.replay.is_some()),
        ("time_scale", w.time_scale.is_some()),
        ("skip_bad", w.skip_bad.is_some()),
        ("sector_map", w.sector_map.is_some()),
        ("devices", w.devices.is_some()),
        ("max_requests", w.max_requests.is_some()),
    ];
    match given.iter().find(|(_, g)| *g) {
        Some((f, _)) => Err(format!("field `workload.{f}`: applies to kind = \"trace\" only (this workload is `{}`)", w.kind)),
        None => Ok(()),
    }
}

/// The replay's configuration from `[workload]`; `dir`: the scenario file's directory, where a
/// relative trace path starts.
pub fn config(w: &WorkloadSection, dir: Option<&Path>, stop_ns: Option<Nanos>) -> Result<TraceReplayConfig, String> {
    let Some(trace) = &w.trace else {
        return Err("field `workload.trace`: kind = \"trace\" needs the trace file's path".into());
    };
    let path = match dir {
        Some(d) if Path::new(trace).is_relative() => d.join(trace),
        _ => Path::new(trace).to_path_buf(),
    };
    let format = match &w.format {
        None => None,
        Some(f) => Some(
            Format::parse(f)
                .ok_or_else(|| format!("field `workload.format`: unknown trace format `{f}` (known: {})", Format::names().join(", ")))?,
        ),
    };
    let time_scale = w.time_scale.unwrap_or(1.0);
    if !(time_scale.is_finite() && (1e-6..=1e6).contains(&time_scale)) {
        return Err(format!("field `workload.time_scale` must be in [1e-6, 1e6], got {time_scale}"));
    }
    let mode = match w.replay.as_deref().unwrap_or("open") {
        "open" => ReplayMode::Open { time_scale },
        "closed" => {
            if w.time_scale.is_some() {
                return Err("field `workload.time_scale`: a closed replay ignores the trace's times; remove it".into());
            }
            ReplayMode::Closed { depth: w.queue_depth }
        }
        "dependent" => ReplayMode::Dependent { time_scale },
        m => return Err(format!("field `workload.replay`: unknown replay mode `{m}` (known: {})", REPLAY_MODES.join(", "))),
    };
    let sector_map = match &w.sector_map {
        None => SectorMap::Error,
        Some(s) => SectorMap::parse(s)
            .ok_or_else(|| format!("field `workload.sector_map`: unknown mapping `{s}` (known: {})", SectorMap::NAMES.join(", ")))?,
    };
    if w.max_requests == Some(0) {
        return Err("field `workload.max_requests` must be at least 1".into());
    }
    Ok(TraceReplayConfig {
        path,
        format,
        skip_bad: w.skip_bad.unwrap_or(false),
        mode,
        sector_map,
        devices: w.devices.clone(),
        max_requests: w.max_requests,
        stop_ns,
    })
}

impl TraceReplayConfig {
    /// What can be checked without reading the whole trace: it opens, its format is known, and
    /// its first record reads.
    pub fn check(&self) -> Result<(), String> {
        let mut r = TraceReader::open(&self.path, ReadOptions { format: self.format, skip_bad: self.skip_bad })
            .map_err(|e| format!("field `workload.trace`: {e}"))?;
        match r.next_record() {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(format!("field `workload.trace`: {}: the trace has no requests", r.source)),
            Err(e) => Err(format!("field `workload.trace`: {e}")),
        }
    }
}
