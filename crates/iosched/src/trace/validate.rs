//! Validation of a drive model against a trace measured on the real drive: replay the trace on
//! the model the way DiskSim does (FCFS, one request at the drive at a time, each request
//! `gap` after the previous completion), then compare the simulated response times with the
//! measured ones: means, the demerit figure and a per-class breakdown.
//!
//! **Demerit** (Ruemmler & Wilkes 1994): the root-mean-square horizontal distance between the
//! measured and the simulated response-time distributions, taken at the quantiles 0.0001,
//! 0.0002, ..., 1.0 (nearest rank). With 10,000 requests on each side this is exactly the RMS
//! of the differences between the sorted samples. DiskSim's `rms` tool computes it from binned,
//! interpolated CDFs, so its figures can differ from ours slightly for the same samples.
//!
//! **Demerit, DiskSim's method** ([`demerit_disksim_method_ns`]): the same figure computed the
//! way DiskSim's published numbers were (`valid/runvalid`: `rms X.outv X.outv -1 -1 1`, which
//! compares the simulated "IOdriver Physical access time distribution" with the measured
//! "VALIDATE Trace access time distribution" of the same output file). Each sample is binned as
//! DiskSim's statistics do (`statdefs`: 1,750 buckets, scale 1000, start 0, step 1, grow 1%:
//! whole-microsecond buckets up to 100 µs, then each 1% wider than the one before, truncated),
//! the cumulative fractions are printed to six decimals, and `rms` interpolates both printed
//! CDFs linearly at 0.0001, 0.0002, ... (a running floating-point sum, while it is ≤ 1.0) and
//! takes the RMS of the differences. With a queue of one request at the drive and no driver
//! delays (`Constant access time = 0`), DiskSim's physical access time is the response time.

use super::{BufferTag, Trace, TraceError, TraceFormat};
use crate::device::disksim::{load_drive, DiskSimError};
use crate::device::presets::preset;
use crate::device::{Device, RotationalDisk};
use crate::metrics::{InvariantReport, RequestRecord};
use crate::sched::classic::fcfs::Fcfs;
use crate::sim::engine::simulate;
use crate::time::Nanos;
use crate::workload::replay::{Replay, ReplayTiming};
use serde::Serialize;
use std::fmt;
use std::path::Path;

/// Number of quantiles the demerit is taken at (0.0001 .. 1.0).
pub const DEMERIT_QUANTILES: u64 = 10_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValidateError {
    Drive(DiskSimError),
    Trace(TraceError),
    /// Anything else, already naming what it concerns.
    Other(String),
}

impl fmt::Display for ValidateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValidateError::Drive(e) => e.fmt(f),
            ValidateError::Trace(e) => e.fmt(f),
            ValidateError::Other(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ValidateError {}

impl From<TraceError> for ValidateError {
    fn from(e: TraceError) -> Self {
        ValidateError::Trace(e)
    }
}

impl From<DiskSimError> for ValidateError {
    fn from(e: DiskSimError) -> Self {
        ValidateError::Drive(e)
    }
}

/// One class of requests in the breakdown: how many, and their mean measured and simulated
/// response times and the demerit within the class.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassRow {
    /// What the classes split by: `buffer` (the trace's Hit/Miss/Doub/Trip tag), `op`,
    /// `seek` (cylinder distance from the previous request's last block), `size` (blocks),
    /// `simulated` (served from the model's cache or from the media).
    pub by: &'static str,
    pub class: String,
    pub requests: usize,
    pub measured_mean_ms: f64,
    pub simulated_mean_ms: f64,
    /// simulated - measured.
    pub difference_ms: f64,
    pub demerit_ms: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ValidationResult {
    pub drive: String,
    pub drive_source: String,
    pub trace: String,
    pub timing: &'static str,
    pub requests: usize,
    pub measured_mean_ms: f64,
    pub simulated_mean_ms: f64,
    pub demerit_ms: f64,
    /// Demerit as a percentage of the measured mean.
    pub demerit_percent: f64,
    /// The demerit computed as DiskSim's `rms` tool computes its published figures (binned,
    /// interpolated CDFs; see the module documentation), for a like-for-like comparison.
    pub demerit_disksim_method_ms: f64,
    pub classes: Vec<ClassRow>,
    /// Drive parameters the loader recognised but the model does not implement.
    pub unsupported: Vec<String>,
    pub invariants: InvariantReport,
    /// Per request, in trace order (not serialized).
    #[serde(skip)]
    pub measured_ns: Vec<Nanos>,
    #[serde(skip)]
    pub simulated_ns: Vec<Nanos>,
}

/// A drive ready to be validated.
pub struct Drive {
    pub name: String,
    pub source: String,
    pub capacity_sectors: u64,
    pub unsupported: Vec<String>,
    pub device: Box<dyn Device>,
}

impl Drive {
    /// A DiskSim drive description, or (when `path` is not a file) a built-in preset's name.
    pub fn load(path: &Path) -> Result<Drive, ValidateError> {
        if !path.exists() {
            if let Some(spec) = path.to_str().and_then(preset) {
                let capacity_sectors = spec.capacity_sectors();
                let name = spec.name.clone();
                let device = RotationalDisk::new(spec).map_err(|e| ValidateError::Other(format!("preset {name}: {e}")))?;
                return Ok(Drive {
                    source: format!("preset {name}"),
                    name,
                    capacity_sectors,
                    unsupported: vec![],
                    device: Box::new(device),
                });
            }
        }
        let d = load_drive(path)?;
        let device = d.build().map_err(|e| ValidateError::Other(format!("{}: {}: {e}", path.display(), d.name)))?;
        Ok(Drive {
            name: d.name.clone(),
            source: path.display().to_string(),
            capacity_sectors: d.capacity_sectors(),
            unsupported: d.unsupported.clone(),
            device,
        })
    }
}

/// Validates the drive at `drive_path` (DiskSim `.parv`, or a preset name) against the
/// validate trace at `trace_path`, with DiskSim's timing.
pub fn validate(drive_path: &Path, trace_path: &Path) -> Result<ValidationResult, ValidateError> {
    let trace = Trace::read(trace_path)?;
    let mut drive = Drive::load(drive_path)?;
    validate_on(&mut drive, &trace, ReplayTiming::AfterCompletion)
}

/// Replays `trace` on `drive` (FCFS, one request at the device at a time) and compares.
pub fn validate_on(drive: &mut Drive, trace: &Trace, timing: ReplayTiming) -> Result<ValidationResult, ValidateError> {
    validate_with(drive, trace, timing, &mut Fcfs::default())
}

/// [`validate_on`] under another scheduler (`iosched validate --scheduler`): with DiskSim's
/// timing one request is outstanding at a time, so only a scheduler that idles (anticipation)
/// can change the result; with open-loop timing requests queue and the order matters.
pub fn validate_with(
    drive: &mut Drive,
    trace: &Trace,
    timing: ReplayTiming,
    scheduler: &mut dyn crate::sched::Scheduler,
) -> Result<ValidationResult, ValidateError> {
    if trace.format != TraceFormat::Validate {
        return Err(ValidateError::Trace(TraceError {
            file: trace.source.clone(),
            line: 0,
            message: format!(
                "the trace is in DiskSim's {} format, which has no measured response times (validation needs the validate format)",
                trace.format.as_str()
            ),
            text: String::new(),
        }));
    }
    trace.check_capacity(drive.capacity_sectors, &drive.name)?;
    let (records, invariants) = replay_with(drive.device.as_mut(), trace, timing, scheduler);
    let mut simulated_ns = vec![0; trace.requests.len()];
    let mut sim_hit = vec![false; trace.requests.len()];
    for r in &records {
        simulated_ns[r.id as usize] = r.response_ns();
        sim_hit[r.id as usize] = r.cache_hit;
    }
    if records.len() != trace.requests.len() {
        return Err(ValidateError::Other(format!(
            "{}: {} of {} requests completed in the simulation",
            trace.source,
            records.len(),
            trace.requests.len()
        )));
    }
    let measured_ns: Vec<Nanos> = trace.requests.iter().map(|r| r.measured_response_ns.unwrap_or(0)).collect();
    let classes = breakdown(trace, drive.device.as_ref(), &measured_ns, &simulated_ns, &sim_hit);
    let measured_mean_ms = mean_ms(&measured_ns);
    let demerit_ms = demerit_ns(&measured_ns, &simulated_ns) / 1e6;
    Ok(ValidationResult {
        drive: drive.name.clone(),
        drive_source: drive.source.clone(),
        trace: trace.source.clone(),
        timing: timing.as_str(),
        requests: trace.requests.len(),
        measured_mean_ms,
        simulated_mean_ms: mean_ms(&simulated_ns),
        demerit_ms,
        demerit_percent: if measured_mean_ms > 0.0 { demerit_ms / measured_mean_ms * 100.0 } else { 0.0 },
        demerit_disksim_method_ms: demerit_disksim_method_ns(&measured_ns, &simulated_ns) / 1e6,
        classes,
        unsupported: drive.unsupported.clone(),
        invariants,
        measured_ns,
        simulated_ns,
    })
}

/// Replays any trace on `device` under FCFS; records come back in completion order (their ids
/// are trace indices).
pub fn replay(device: &mut dyn Device, trace: &Trace, timing: ReplayTiming) -> (Vec<RequestRecord>, InvariantReport) {
    replay_with(device, trace, timing, &mut Fcfs::default())
}

/// [`replay`] under `scheduler`.
pub fn replay_with(
    device: &mut dyn Device,
    trace: &Trace,
    timing: ReplayTiming,
    scheduler: &mut dyn crate::sched::Scheduler,
) -> (Vec<RequestRecord>, InvariantReport) {
    let mut workload = Replay::new(trace, timing);
    let out = simulate(device, scheduler, &mut workload);
    (out.records, out.invariants)
}

fn mean_ms(ns: &[Nanos]) -> f64 {
    if ns.is_empty() {
        return 0.0;
    }
    ns.iter().map(|&x| x as f64).sum::<f64>() / ns.len() as f64 / 1e6
}

/// RMS horizontal distance (in ns) between the two samples' distributions at the quantiles
/// k / 10,000, k = 1..=10,000, each taken by nearest rank. 0 if either sample is empty.
pub fn demerit_ns(measured: &[Nanos], simulated: &[Nanos]) -> f64 {
    if measured.is_empty() || simulated.is_empty() {
        return 0.0;
    }
    let mut a = measured.to_vec();
    let mut b = simulated.to_vec();
    a.sort_unstable();
    b.sort_unstable();
    let at = |s: &[Nanos], k: u64| {
        let n = s.len() as u64;
        let rank = (k * n).div_ceil(DEMERIT_QUANTILES).clamp(1, n);
        s[(rank - 1) as usize] as f64
    };
    let sum: f64 = (1..=DEMERIT_QUANTILES)
        .map(|k| {
            let d = at(&a, k) - at(&b, k);
            d * d
        })
        .sum();
    (sum / DEMERIT_QUANTILES as f64).sqrt()
}

/// DiskSim's "Physical access time" / "Trace access time" distribution (`statdefs`): 1,750
/// buckets, values scaled by 1000 (ms to whole µs, truncated), starting at 0, step 1, each
/// further step grown by 1% of the bucket's start (truncated).
const DISKSIM_BUCKETS: usize = 1750;

fn disksim_bucket_starts() -> Vec<i64> {
    let mut starts = Vec::with_capacity(DISKSIM_BUCKETS);
    let mut v: i64 = 0;
    for _ in 0..DISKSIM_BUCKETS {
        starts.push(v);
        v += 1 + (v.abs() as f64 / 100.0) as i64;
    }
    starts
}

/// The CDF DiskSim prints for `values_ms` and `rms` reads back: x (ms) and the cumulative
/// fraction (to six decimals) at each bucket's upper edge, up to the first fraction ≥ 1.
fn disksim_printed_cdf(values_ms: &[f64], starts: &[i64]) -> (Vec<f64>, Vec<f64>) {
    let mut counts = vec![0u64; DISKSIM_BUCKETS];
    for &v in values_ms {
        // `stat_update`: intval = (int)(value * scale); a value lands in the bucket after the
        // last start not above it (below 0: bucket 0).
        let intval = (v * 1000.0) as i64;
        let i = if intval < starts[0] { 0 } else { starts.partition_point(|&s| s <= intval).min(DISKSIM_BUCKETS - 1) };
        counts[i] += 1;
    }
    let n = values_ms.len() as f64;
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    let mut dist = 0.0f64;
    for (i, &c) in counts.iter().enumerate() {
        dist += c as f64 / n;
        // Printed with "%6.3f" and "%f", read back with "%lf".
        let y: f64 = format!("{dist:.6}").parse().unwrap();
        xs.push(starts[i] as f64 / 1000.0);
        ys.push(y);
        if y >= 1.0 {
            break;
        }
    }
    (xs, ys)
}

/// The demerit (in ns) as DiskSim's `rms` tool computes it (`compute_rms` in src/rms.c) from the
/// distributions DiskSim prints: see the module documentation. 0 if either sample is empty.
pub fn demerit_disksim_method_ns(measured: &[Nanos], simulated: &[Nanos]) -> f64 {
    if measured.is_empty() || simulated.is_empty() {
        return 0.0;
    }
    let starts = disksim_bucket_starts();
    // The trace's response times are read as µs and divided by 1000; the simulated ones are ms.
    let measured_ms: Vec<f64> = measured.iter().map(|&ns| ns as f64 / 1000.0 / 1000.0).collect();
    let simulated_ms: Vec<f64> = simulated.iter().map(|&ns| ns as f64 / 1e6).collect();
    let (x1, y1) = disksim_printed_cdf(&simulated_ms, &starts);
    let (x2, y2) = disksim_printed_cdf(&measured_ms, &starts);
    let at = |x: &[f64], y: &[f64], i: &mut usize, p: f64| -> f64 {
        while *i + 1 < y.len() && y[*i] < p {
            *i += 1;
        }
        let j = (*i).max(1);
        let frac = (p - y[j - 1]) / (y[j] - y[j - 1]);
        x[j - 1] + frac * (x[j] - x[j - 1])
    };
    let (mut i1, mut i2, mut count, mut squares) = (0usize, 0usize, 0u64, 0.0f64);
    let mut p = 0.0001f64;
    while p <= 1.0 {
        let d = at(&x1, &y1, &mut i1, p) - at(&x2, &y2, &mut i2, p);
        squares += d * d;
        count += 1;
        p += 0.0001;
    }
    (squares / count as f64).sqrt() * 1e6
}

/// Seek-distance class of a request, from where the previous request of the trace ended.
fn seek_class(prev_end: Option<u64>, start: u64, device: &dyn Device) -> &'static str {
    let from = prev_end.map(|e| e.saturating_sub(1)).unwrap_or(0);
    if prev_end == Some(start) {
        return "sequential";
    }
    let d = device.cylinder_of(from).abs_diff(device.cylinder_of(start));
    match d {
        0 => "0 (same cylinder)",
        1..=9 => "1-9",
        10..=99 => "10-99",
        100..=999 => "100-999",
        1000..=9999 => "1000-9999",
        _ => "10000+",
    }
}

fn size_class(blocks: u32) -> &'static str {
    match blocks {
        0..=4 => "1-4",
        5..=8 => "5-8",
        9..=16 => "9-16",
        17..=64 => "17-64",
        _ => "65+",
    }
}

const SEEK_ORDER: &[&str] = &["sequential", "0 (same cylinder)", "1-9", "10-99", "100-999", "1000-9999", "10000+"];
const SIZE_ORDER: &[&str] = &["1-4", "5-8", "9-16", "17-64", "65+"];

fn breakdown(trace: &Trace, device: &dyn Device, measured: &[Nanos], simulated: &[Nanos], sim_hit: &[bool]) -> Vec<ClassRow> {
    let n = trace.requests.len();
    let mut prev_end = None;
    let mut seek = Vec::with_capacity(n);
    for r in &trace.requests {
        seek.push(seek_class(prev_end, r.start_sector, device));
        prev_end = Some(r.end_sector());
    }
    let mut rows = Vec::new();
    let mut add = |by: &'static str, classes: &[&str], keys: &[&str]| {
        for &c in classes {
            let (m, s): (Vec<Nanos>, Vec<Nanos>) = (0..n).filter(|&i| keys[i] == c).map(|i| (measured[i], simulated[i])).unzip();
            if m.is_empty() {
                continue;
            }
            let (mm, sm) = (mean_ms(&m), mean_ms(&s));
            rows.push(ClassRow {
                by,
                class: c.to_string(),
                requests: m.len(),
                measured_mean_ms: mm,
                simulated_mean_ms: sm,
                difference_ms: sm - mm,
                demerit_ms: demerit_ns(&m, &s) / 1e6,
            });
        }
    };
    let reqs = &trace.requests;
    let keys: Vec<&str> = reqs.iter().map(|r| r.tag.map(|t| t.as_str()).unwrap_or("-")).collect();
    add("buffer", BufferTag::NAMES, &keys);
    let keys: Vec<&str> = reqs.iter().map(|r| r.op.as_str()).collect();
    add("op", &["read", "write"], &keys);
    add("seek", SEEK_ORDER, &seek);
    let keys: Vec<&str> = reqs.iter().map(|r| size_class(r.size_sectors)).collect();
    add("size", SIZE_ORDER, &keys);
    let keys: Vec<&str> = sim_hit.iter().map(|&h| if h { "cache hit" } else { "media" }).collect();
    add("simulated", &["cache hit", "media"], &keys);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demerit_of_equal_samples_is_zero_and_of_a_shift_is_the_shift() {
        let a: Vec<Nanos> = (0..1000).map(|i| i * 1000).collect();
        assert_eq!(demerit_ns(&a, &a), 0.0);
        let b: Vec<Nanos> = a.iter().rev().map(|x| x + 500).collect();
        assert!((demerit_ns(&a, &b) - 500.0).abs() < 1e-9);
    }

    #[test]
    fn demerit_with_equal_counts_is_rms_of_sorted_differences() {
        // 10,000 samples: quantile k is exactly the k-th smallest.
        let a: Vec<Nanos> = (0..10_000u64).map(|i| (i * 7919) % 10_007).collect();
        let b: Vec<Nanos> = (0..10_000u64).map(|i| (i * 104_729) % 20_011).collect();
        let (mut sa, mut sb) = (a.clone(), b.clone());
        sa.sort();
        sb.sort();
        let rms = (sa.iter().zip(&sb).map(|(x, y)| (*x as f64 - *y as f64).powi(2)).sum::<f64>() / 10_000.0).sqrt();
        assert!((demerit_ns(&a, &b) - rms).abs() < 1e-6);
    }

    #[test]
    fn demerit_of_one_outlier_among_four() {
        // Quantiles 0.0001..0.75 pair equal values, 0.7501..1.0 (2,500 of them) differ by 4 ms.
        let a = [1, 2, 3, 4].map(|x| x * 1_000_000);
        let b = [1, 2, 3, 8].map(|x| x * 1_000_000);
        assert!((demerit_ns(&a, &b) - 4e6 * 0.5).abs() < 1e-6);
    }

    #[test]
    fn disksim_buckets_are_whole_microseconds_then_one_percent_wider() {
        let s = disksim_bucket_starts();
        assert_eq!(&s[..3], &[0, 1, 2]);
        assert_eq!(&s[99..104], &[99, 100, 102, 104, 106]);
        assert_eq!(s.len(), 1750);
        assert!(s.windows(2).all(|w| w[0] < w[1]) && s[1749] < i32::MAX as i64);
    }

    #[test]
    fn disksim_method_by_hand() {
        // Two samples of 10 µs-wide values, all in the whole-µs buckets: measured 0.010 ms
        // twice, simulated 0.020 ms twice. Each CDF goes from 0 to 1 across one bucket
        // (0.010 -> 0.011 and 0.020 -> 0.021 ms), so every quantile differs by 0.010 ms.
        let d = demerit_disksim_method_ns(&[10_000, 10_000], &[20_000, 20_000]);
        assert!((d - 10_000.0).abs() < 1e-6, "{d}");
        assert_eq!(demerit_disksim_method_ns(&[5_000, 7_000], &[5_000, 7_000]), 0.0);
        // Values inside one bucket are indistinguishable: 10.0 and 10.9 µs share [10, 11).
        assert_eq!(demerit_disksim_method_ns(&[10_000], &[10_900]), 0.0);
        // With a spread, interpolation within the bucket: measured uniform over 0..=9 µs
        // buckets, simulated 9 µs: the measured CDF rises linearly from 0 µs to 10 µs, the
        // simulated within [9, 10): RMS of (9 + p - 10 p) over p in (0, 1] = sqrt(27) µs.
        let m: Vec<Nanos> = (0..10).map(|u| u * 1000).collect();
        let d = demerit_disksim_method_ns(&m, &[9_000; 10]);
        assert!((d - 27f64.sqrt() * 1000.0).abs() < 1.0, "{d}");
    }

    #[test]
    fn validate_on_a_preset_reports_means_and_classes() {
        let trace = Trace::parse("R Hit 1000 8 5000 20000\nR Hit 1008 8 600 20000\nW Miss 900000 8 9000 0\n", "t.trace").unwrap();
        let mut drive = Drive::load(Path::new("ibm-deskstar-34gxp")).unwrap();
        let v = validate_on(&mut drive, &trace, ReplayTiming::AfterCompletion).unwrap();
        assert_eq!(v.requests, 3);
        assert_eq!(v.invariants, InvariantReport::default());
        assert!((v.measured_mean_ms - 14.6 / 3.0).abs() < 1e-9);
        assert!(v.simulated_ns.iter().all(|&s| s > 0));
        assert!((v.simulated_mean_ms - v.simulated_ns.iter().sum::<u64>() as f64 / 3e6).abs() < 1e-9);
        let seek: Vec<(&str, usize)> = v.classes.iter().filter(|c| c.by == "seek").map(|c| (c.class.as_str(), c.requests)).collect();
        assert_eq!(seek[0], ("sequential", 1));
        let ops: Vec<(&str, usize)> = v.classes.iter().filter(|c| c.by == "op").map(|c| (c.class.as_str(), c.requests)).collect();
        assert_eq!(ops, vec![("read", 2), ("write", 1)]);
        let buf: Vec<(&str, usize)> = v.classes.iter().filter(|c| c.by == "buffer").map(|c| (c.class.as_str(), c.requests)).collect();
        assert_eq!(buf, vec![("Hit", 2), ("Miss", 1)]);
        // The second read follows the first on the media: the drive's read-ahead serves it.
        assert!(v.simulated_ns[1] < v.simulated_ns[0]);
    }

    #[test]
    fn ascii_traces_and_oversized_requests_are_refused() {
        let mut drive = Drive::load(Path::new("fujitsu-m2361a")).unwrap();
        let ascii = Trace::parse("0.0 0 0 4 1\n", "a.trace").unwrap();
        let e = validate_on(&mut drive, &ascii, ReplayTiming::AfterCompletion).unwrap_err().to_string();
        assert!(e.starts_with("a.trace: the trace is in DiskSim's ascii format, which has no measured"), "{e}");
        let big = Trace::parse("R Hit 0 4 1 1\nR Hit 999999999 4 1 1\n", "v.trace").unwrap();
        let e = validate_on(&mut drive, &big, ReplayTiming::AfterCompletion).unwrap_err().to_string();
        assert!(e.starts_with("v.trace:2: request ends at block 1000000003 beyond the"), "{e}");
    }
}
