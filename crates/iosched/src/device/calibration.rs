//! Positioning time by calibration: Iyer & Druschel's own estimator (SOSP 2001, section 3.6).
//!
//! The paper did not model the disk: "a user-level program performs some measurements to capture
//! the mapping between the logical block number difference between two requests and the
//! corresponding head positioning time, and fits a smooth curve through these points [...] This
//! method automatically accounts for seek time, average rotational latency and track buffers. It
//! has an accuracy of about 75%".
//!
//! Here:
//! - [`Probe`] is all the measurement needs from a device: issue a small read now and learn when
//!   it completed, and stay idle for a while. [`SimProbe`] drives a simulated [`Device`]; a real
//!   file or block device (a later issue) implements the same trait with `pread` and a clock.
//! - [`measure`] times pairs of reads at log-spaced signed LBA distances; [`fit`] turns the means
//!   into a [`PositioningCurve`].
//! - [`CalibratedView`] / [`CalibratedDevice`] answer `positioning_time_ns` from the curve and
//!   everything else from the device.
//! - [`calibrate_spec`] calibrates a fresh copy of a simulated drive and measures the curve's
//!   accuracy on held-out pairs (`iosched calibrate`).
//!
//! **Distance** is `target start − end of the previous request`, in sectors, signed: 0 is the
//! contiguous next read, +d lies ahead, −d behind. Signed, because the two directions differ on a
//! real disk: a short forward jump is served by the read-ahead buffer (or waits a fraction of a
//! revolution), a short backward jump on the same track has just passed under the head and waits
//! almost a whole revolution.
//!
//! **Positioning** is what a completion time alone lets a driver measure: the service time of the
//! second read minus the mean service time of a same-size contiguous read issued right after a
//! read (distance 0, measured the same way). That subtracts the command overhead and the
//! transfer, so the estimate is the head's time to reach the data: seek + rotational latency, or
//! the wait for read-ahead to bring it in. This is the quantity the engine reports as a
//! completion's measured positioning (`seek_ns + rotation_ns`), which the anticipation heuristic
//! averages per process, and what the mechanical [`DeviceView::positioning_time_ns`] estimates
//! (neither counts the command overhead).

use super::{ArmPath, Device, DeviceView, RotationalDisk, RotationalSpec, SectorPosition, Service};
use crate::request::{Op, Principal, Request};
use crate::time::{ms_to_ns, Nanos, NS_PER_MS};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::Serialize;
use std::sync::Arc;

/// The seed scenarios calibrate with: calibration is a property of the drive, done once (the
/// paper: "at disk installation time"), not of a run.
pub const DEFAULT_CALIBRATION_SEED: u64 = 2001;

/// Where schedulers' positioning-time estimates come from (scenario field
/// `device.positioning_estimator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PositioningEstimator {
    /// The device model's mechanical estimate ([`DeviceView::positioning_time_ns`]).
    #[default]
    Model,
    /// A curve calibrated on a fresh copy of the device before the run ([`CalibratedDevice`]).
    Calibrated,
}

impl PositioningEstimator {
    pub const NAMES: [&'static str; 2] = ["model", "calibrated"];

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "model" => Some(PositioningEstimator::Model),
            "calibrated" => Some(PositioningEstimator::Calibrated),
            _ => None,
        }
    }
}

/// What the measurement needs from a device.
pub trait Probe {
    fn capacity_sectors(&self) -> u64;
    /// Issues a read of `sectors` sectors at `sector` now, waits for it, and returns the time
    /// from issue to completion.
    fn read(&mut self, sector: u64, sectors: u32) -> Nanos;
    /// Leaves the device idle for `ns`.
    fn idle(&mut self, ns: Nanos);
    /// Simulated devices only: the mechanical model's positioning estimate, command overhead
    /// excluded, for a read of `sectors` at `sector` issued now.
    fn model_estimate_ns(&mut self, _sector: u64, _sectors: u32) -> Option<Nanos> {
        None
    }
    /// Simulated devices only: the true positioning time of the last read (service time minus
    /// command overhead minus transfer: seek + rotation, or the wait for read-ahead).
    fn last_positioning_ns(&self) -> Option<Nanos> {
        None
    }
}

/// A [`Probe`] over a simulated device with its own clock (starting at 0).
pub struct SimProbe<'a> {
    device: &'a mut dyn Device,
    overhead_ns: Nanos,
    now: Nanos,
    next_id: u64,
    last: Option<Service>,
}

impl<'a> SimProbe<'a> {
    /// `overhead_ns` is the drive's command overhead (for `last_positioning_ns` only; the
    /// measurement itself never uses it).
    pub fn new(device: &'a mut dyn Device, overhead_ns: Nanos) -> Self {
        SimProbe { device, overhead_ns, now: 0, next_id: 0, last: None }
    }

    pub fn now(&self) -> Nanos {
        self.now
    }
}

impl Probe for SimProbe<'_> {
    fn capacity_sectors(&self) -> u64 {
        self.device.capacity_sectors()
    }

    fn read(&mut self, sector: u64, sectors: u32) -> Nanos {
        let req = Request {
            id: self.next_id,
            principal: Principal::default(),
            op: Op::Read,
            sync: true,
            start_sector: sector,
            size_sectors: sectors,
            issue_ns: self.now,
            flags: 0,
            prio: Default::default(),
        };
        self.next_id += 1;
        self.device.advance_to(self.now);
        let s = self.device.service(&req, ArmPath::Direct, self.now);
        self.now = s.completion_ns;
        self.last = Some(s);
        s.completion_ns - s.dispatch_ns
    }

    fn idle(&mut self, ns: Nanos) {
        self.now += ns;
    }

    fn model_estimate_ns(&mut self, sector: u64, sectors: u32) -> Option<Nanos> {
        self.device.advance_to(self.now);
        Some(self.device.positioning_time_ns(sector, sectors, Op::Read, self.now))
    }

    fn last_positioning_ns(&self) -> Option<Nanos> {
        self.last.map(|s| (s.completion_ns - s.dispatch_ns).saturating_sub(s.transfer_ns + self.overhead_ns))
    }
}

/// How to calibrate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CalibrationOptions {
    /// Pairs per distance, direction and timing (immediate / after an idle delay).
    pub samples: u32,
    /// Size of every read (8 sectors = 4 KiB, a page: small, so transfer differences are small).
    pub read_sectors: u32,
    /// Log-spaced distances per factor of ten.
    pub points_per_decade: u32,
    /// The idle delay before a delayed second read is uniform on [0, this]; 25 ms spans several
    /// revolutions of any preset (3 at 7200 rpm), so the rotational phase is close to uniform.
    pub max_idle_ns: Nanos,
}

impl Default for CalibrationOptions {
    fn default() -> Self {
        CalibrationOptions { samples: 32, read_sectors: 8, points_per_decade: 8, max_idle_ns: 25 * NS_PER_MS }
    }
}

impl CalibrationOptions {
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=100_000).contains(&self.samples) {
            return Err(format!("samples must be in [1, 100000], got {}", self.samples));
        }
        if !(1..=2048).contains(&self.read_sectors) {
            return Err(format!("read_sectors must be in [1, 2048], got {}", self.read_sectors));
        }
        if !(1..=100).contains(&self.points_per_decade) {
            return Err(format!("points_per_decade must be in [1, 100], got {}", self.points_per_decade));
        }
        if self.max_idle_ns > 10_000 * NS_PER_MS {
            return Err(format!("max_idle_ns must be at most 10 s, got {}", self.max_idle_ns));
        }
        Ok(())
    }
}

/// Measured positioning at one signed distance (ns; means over `samples` pairs per timing).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CalibrationPoint {
    pub distance: i64,
    pub samples: u32,
    /// Second read issued the moment the first completed.
    pub immediate_ns: f64,
    /// Second read issued after a random idle delay.
    pub delayed_ns: f64,
    /// Mean of both: what the curve is fitted to.
    pub mean_ns: f64,
    /// Simulated devices: the mechanical model's mean estimate for the same pairs.
    pub model_ns: Option<f64>,
    /// Simulated devices: the mean true positioning time of the same second reads.
    pub actual_ns: Option<f64>,
}

/// A fitted curve: positioning time against signed LBA distance.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct PositioningCurve {
    /// Distance 0 (the contiguous read).
    pub zero_ns: f64,
    /// `(ln d, ns)` for d ≥ 1 ahead, ascending in d.
    pub forward: Vec<(f64, f64)>,
    /// `(ln d, ns)` for d ≥ 1 behind, ascending in d.
    pub backward: Vec<(f64, f64)>,
}

impl PositioningCurve {
    /// The estimate for a read `distance` sectors after the end of the previous request:
    /// piecewise linear in ln |distance| between the fitted points, constant beyond the last.
    pub fn estimate_ns(&self, distance: i64) -> f64 {
        if distance == 0 {
            return self.zero_ns;
        }
        let pts = if distance > 0 { &self.forward } else { &self.backward };
        let Some(&(x0, y0)) = pts.first() else {
            return self.zero_ns;
        };
        let x = (distance.unsigned_abs() as f64).ln();
        if x <= x0 {
            return y0;
        }
        let i = pts.partition_point(|&(xi, _)| xi <= x);
        if i >= pts.len() {
            return pts[pts.len() - 1].1;
        }
        let ((xa, ya), (xb, yb)) = (pts[i - 1], pts[i]);
        ya + (yb - ya) * (x - xa) / (xb - xa)
    }
}

/// The longest positioning time (and contiguous-read baseline) a curve may hold: 10 s, some
/// hundred times any disk's full stroke plus a revolution.
pub const MAX_CURVE_NS: f64 = 1e10;
/// The largest `ln d` a curve point may have: ln(2^63), the largest signed distance.
pub const MAX_CURVE_LN_DISTANCE: f64 = 43.668_272_375_276_55;

impl PositioningCurve {
    /// Checks a curve read from a file: every time finite and in [0, [`MAX_CURVE_NS`]] ns,
    /// every `ln d` in [0, ln 2^63] and strictly ascending. The error names the field and value.
    pub fn validate(&self) -> Result<(), String> {
        let time = |field: String, v: f64| {
            if v.is_finite() && (0.0..=MAX_CURVE_NS).contains(&v) {
                Ok(())
            } else {
                Err(format!("`{field}` = {v} must be a time in [0, 1e10] ns (10 s)"))
            }
        };
        time("zero_ns".into(), self.zero_ns)?;
        for (side, pts) in [("forward", &self.forward), ("backward", &self.backward)] {
            let mut prev: Option<f64> = None;
            for (i, &(x, y)) in pts.iter().enumerate() {
                if !(x.is_finite() && (0.0..=MAX_CURVE_LN_DISTANCE).contains(&x)) {
                    return Err(format!("`{side}[{i}][0]` = {x} must be ln(distance) in [0, {MAX_CURVE_LN_DISTANCE}] (ln 2^63)"));
                }
                if prev.is_some_and(|p| x <= p) {
                    return Err(format!("`{side}[{i}][0]` = {x}: the points must be in strictly ascending distance"));
                }
                prev = Some(x);
                time(format!("{side}[{i}][1]"), y)?;
            }
        }
        Ok(())
    }
}

/// A calibration file: the JSON `iosched calibrate --real PATH --curve FILE` writes (the curve at
/// `/calibration/curve`, the baseline at `/calibration/baseline_ns`), or a bare curve (baseline
/// 0). Returns the validated curve and the baseline (ns); errors name `source`, the field and
/// the value (JSON syntax errors: the line and column), control characters quoted from the file
/// escaped.
pub fn parse_calibration(text: &str, source: &str) -> Result<(PositioningCurve, f64), String> {
    parse_calibration_unescaped(text, source).map_err(|e| crate::input::escape_controls(&e))
}

fn parse_calibration_unescaped(text: &str, source: &str) -> Result<(PositioningCurve, f64), String> {
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("{source}: not JSON: {e}"))?;
    let baseline_ns = match doc.pointer("/calibration/baseline_ns") {
        None => 0.0,
        Some(v) => match v.as_f64() {
            Some(b) if b.is_finite() && (0.0..=MAX_CURVE_NS).contains(&b) => b,
            _ => return Err(format!("{source}: `calibration.baseline_ns` = {v} must be a time in [0, 1e10] ns (10 s)")),
        },
    };
    let (curve, at) = match doc.pointer("/calibration/curve") {
        Some(c) => (c.clone(), "calibration.curve."),
        None => (doc, ""),
    };
    let curve: PositioningCurve = serde_json::from_value(curve)
        .map_err(|e| format!("{source}: no positioning curve in it ({e}); make one with `iosched calibrate --real PATH`"))?;
    curve.validate().map_err(|e| format!("{source}: {}", e.replacen('`', &format!("`{at}"), 1)))?;
    Ok((curve, baseline_ns))
}

/// Reads and checks a calibration file (see [`parse_calibration`]); only a regular file of at
/// most [`crate::input::MAX_DESCRIPTION_BYTES`] is read.
pub fn load_calibration(path: &std::path::Path) -> Result<(PositioningCurve, f64), String> {
    let source = path.display().to_string();
    let text = crate::input::read_text(path, crate::input::MAX_DESCRIPTION_BYTES).map_err(|e| match e.line() {
        0 => format!("{source}: cannot read: {e}"),
        line => format!("{source}:{line}: {e}"),
    })?;
    parse_calibration(&text, &source)
}

/// A calibration: the measured points, the baseline they are relative to, and the fitted curve.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Calibration {
    pub options: CalibrationOptions,
    /// Mean service time of a contiguous read issued right after a read (subtracted from every
    /// measurement).
    pub baseline_ns: f64,
    /// Ascending in signed distance.
    pub points: Vec<CalibrationPoint>,
    pub curve: PositioningCurve,
}

/// Log-spaced distances 1 ..= `max`, about `per_decade` per factor of ten, no repeats.
pub fn log_distances(max: u64, per_decade: u32) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    let mut k = 0u32;
    loop {
        let d = 10f64.powf(k as f64 / per_decade as f64).round() as u64;
        if d > max {
            break;
        }
        if out.last() != Some(&d) {
            out.push(d);
        }
        k += 1;
    }
    if max >= 1 && out.last() != Some(&max) {
        out.push(max);
    }
    out
}

/// Issues a first read at a random place such that a second read `distance` sectors after its
/// end fits on the disk, then (after `idle`) the second; returns the second read's service time,
/// with the model estimate and true positioning the probe may know.
fn time_pair(probe: &mut dyn Probe, rng: &mut Pcg64, distance: i64, rs: u64, idle: Nanos) -> (Nanos, Option<Nanos>, Option<Nanos>) {
    let cap = probe.capacity_sectors();
    // First read [s, s + rs), target t = s + rs + distance, both within [0, cap).
    let lo = (-distance).max(0) as u64; // t >= 0  <=>  s + rs >= -distance
    let lo = lo.saturating_sub(rs);
    let hi = cap.saturating_sub(2 * rs + distance.max(0) as u64); // t + rs <= cap
    let s = if hi > lo { rng.gen_range(lo..=hi) } else { lo };
    let t = (s + rs).checked_add_signed(distance).expect("target on the disk");
    probe.read(s, rs as u32);
    if idle > 0 {
        probe.idle(idle);
    }
    let model = probe.model_estimate_ns(t, rs as u32);
    let took = probe.read(t, rs as u32);
    (took, model, probe.last_positioning_ns())
}

/// Measures positioning time against signed LBA distance and fits the curve. Deterministic for a
/// given probe state and `rng`.
pub fn measure(probe: &mut dyn Probe, opts: &CalibrationOptions, rng: &mut Pcg64) -> Result<Calibration, String> {
    opts.validate()?;
    let rs = opts.read_sectors as u64;
    let cap = probe.capacity_sectors();
    if cap < 4 * rs + 2 {
        return Err(format!("the device ({cap} sectors) is too small to calibrate with {rs}-sector reads"));
    }
    // Baseline: a contiguous read issued the moment the previous one completes.
    let mut base = 0.0;
    for _ in 0..opts.samples {
        base += time_pair(probe, rng, 0, rs, 0).0 as f64;
    }
    let baseline_ns = base / opts.samples as f64;

    // Up to 95% of the disk: at the very longest distances both reads would fall on nearly the
    // same sectors every time and be served from the cache.
    let max_d = ((cap - 2 * rs) as f64 * 0.95) as u64;
    let mut signed: Vec<i64> = vec![0];
    for d in log_distances(max_d, opts.points_per_decade) {
        signed.push(d as i64);
        signed.push(-(d as i64));
    }
    signed.sort_unstable();
    let mut points = Vec::with_capacity(signed.len());
    for &distance in &signed {
        let (mut imm, mut del, mut model, mut actual) = (0.0, 0.0, 0.0, 0.0);
        let (mut have_model, mut have_actual) = (true, true);
        for _ in 0..opts.samples {
            for delayed in [false, true] {
                let idle = if delayed { rng.gen_range(0..=opts.max_idle_ns) } else { 0 };
                let (took, m, a) = time_pair(probe, rng, distance, rs, idle);
                let pos = took as f64 - baseline_ns;
                if delayed {
                    del += pos;
                } else {
                    imm += pos;
                }
                match m {
                    Some(m) => model += m as f64,
                    None => have_model = false,
                }
                match a {
                    Some(a) => actual += a as f64,
                    None => have_actual = false,
                }
            }
        }
        let n = opts.samples as f64;
        points.push(CalibrationPoint {
            distance,
            samples: opts.samples,
            immediate_ns: imm / n,
            delayed_ns: del / n,
            mean_ns: (imm + del) / (2.0 * n),
            model_ns: have_model.then_some(model / (2.0 * n)),
            actual_ns: have_actual.then_some(actual / (2.0 * n)),
        });
    }
    let curve = fit(&points, opts.read_sectors);
    Ok(Calibration { options: opts.clone(), baseline_ns, points, curve })
}

/// Weighted pool-adjacent-violators: the non-decreasing sequence closest to `y` in weighted
/// least squares.
pub fn isotonic(y: &[f64], w: &[f64]) -> Vec<f64> {
    // Blocks of (mean, weight, count).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::with_capacity(y.len());
    for (&yi, &wi) in y.iter().zip(w) {
        blocks.push((yi, wi, 1));
        while blocks.len() >= 2 && blocks[blocks.len() - 2].0 > blocks[blocks.len() - 1].0 {
            let (m2, w2, c2) = blocks.pop().unwrap();
            let (m1, w1, c1) = blocks.pop().unwrap();
            let wt = w1 + w2;
            let m = if wt > 0.0 { (m1 * w1 + m2 * w2) / wt } else { (m1 + m2) / 2.0 };
            blocks.push((m, wt, c1 + c2));
        }
    }
    blocks.into_iter().flat_map(|(m, _, c)| std::iter::repeat_n(m, c)).collect()
}

/// Fits one direction: `ys` are the means at distances `ds` (ascending). The monotone part
/// starts at the least mean among distances longer than one read (`min_d`); before it the means
/// are kept as measured: that is where the track buffer and the rotational position of the
/// previous request show (cheap short jumps ahead while read-ahead brings the data in, nearly a
/// revolution for short jumps behind on the same track; a jump behind by less than one read
/// re-reads what that read just put in the buffer, so it is excluded from the choice of the
/// minimum). From there on, positioning is made non-decreasing by isotonic regression: once the
/// seek dominates a longer jump is never cheaper, and pooling removes the sampling noise of the
/// rotational latency without assuming a seek-curve shape.
fn fit_direction(ds: &[u64], ys: &[f64], ws: &[f64], min_d: u64) -> Vec<(f64, f64)> {
    if ds.is_empty() {
        return Vec::new();
    }
    let first = ds.iter().position(|&d| d > min_d).unwrap_or(0);
    let argmin = (first..ys.len()).fold(first, |best, i| if ys[i] < ys[best] { i } else { best });
    let mut fitted: Vec<f64> = ys[..argmin].to_vec();
    fitted.extend(isotonic(&ys[argmin..], &ws[argmin..]));
    ds.iter().zip(fitted).map(|(&d, y)| ((d as f64).ln(), y.max(0.0))).collect()
}

/// The curve through measured points (see [`fit_direction`]) of reads of `read_sectors`;
/// interpolation is linear in ln |distance|.
pub fn fit(points: &[CalibrationPoint], read_sectors: u32) -> PositioningCurve {
    let zero_ns = points.iter().find(|p| p.distance == 0).map(|p| p.mean_ns.max(0.0)).unwrap_or(0.0);
    let side = |forward: bool| {
        let mut sel: Vec<&CalibrationPoint> = points.iter().filter(|p| if forward { p.distance > 0 } else { p.distance < 0 }).collect();
        sel.sort_by_key(|p| p.distance.unsigned_abs());
        let ds: Vec<u64> = sel.iter().map(|p| p.distance.unsigned_abs()).collect();
        let ys: Vec<f64> = sel.iter().map(|p| p.mean_ns).collect();
        let ws: Vec<f64> = sel.iter().map(|p| p.samples as f64).collect();
        fit_direction(&ds, &ys, &ws, read_sectors as u64)
    };
    PositioningCurve { zero_ns, forward: side(true), backward: side(false) }
}

/// A [`DeviceView`] whose positioning estimates come from a calibrated curve, measured from
/// `from_sector` (the end of the previous request); everything else is the device's.
pub struct CalibratedView<'a> {
    pub inner: &'a dyn DeviceView,
    pub curve: &'a PositioningCurve,
    pub from_sector: u64,
}

impl<'a> CalibratedView<'a> {
    /// Distances measured from the device's head sector (the end of its last media access).
    pub fn new(inner: &'a dyn DeviceView, curve: &'a PositioningCurve) -> Self {
        CalibratedView { inner, curve, from_sector: inner.head_sector() }
    }

    fn estimate(&self, sector: u64) -> Nanos {
        let d = sector as i128 - self.from_sector as i128;
        let d = d.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        self.curve.estimate_ns(d).max(0.0).round() as Nanos
    }
}

impl DeviceView for CalibratedView<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn capacity_sectors(&self) -> u64 {
        self.inner.capacity_sectors()
    }
    fn cylinders(&self) -> u32 {
        self.inner.cylinders()
    }
    fn cylinder_of(&self, sector: u64) -> u32 {
        self.inner.cylinder_of(sector)
    }
    fn head_cylinder(&self) -> u32 {
        self.inner.head_cylinder()
    }
    fn head_sector(&self) -> u64 {
        self.inner.head_sector()
    }
    fn seek_time_ns(&self, distance_cylinders: u32) -> Nanos {
        self.inner.seek_time_ns(distance_cylinders)
    }
    fn seek_lower_bound_ns(&self, distance_cylinders: u32) -> Nanos {
        self.inner.seek_lower_bound_ns(distance_cylinders)
    }
    /// From the curve: ignores `op` (the curve is measured with reads) and `now` (the curve
    /// averages over rotational position).
    fn positioning_time_ns(&self, sector: u64, _sectors: u32, _op: Op, _now: Nanos) -> Nanos {
        self.estimate(sector)
    }
    fn position_of(&self, sector: u64) -> SectorPosition {
        self.inner.position_of(sector)
    }
    fn positioning_time_at_ns(&self, pos: &SectorPosition, _sectors: u32, _op: Op, _now: Nanos) -> Nanos {
        self.estimate(pos.sector)
    }
}

/// A device whose view answers positioning from a calibrated curve, measured from the end of the
/// last request it served, as a driver knows it (the paper's "logical block number difference
/// between two requests"); serving is the wrapped device's.
pub struct CalibratedDevice<D> {
    inner: D,
    curve: Arc<PositioningCurve>,
    last_end: u64,
}

impl<D: Device> CalibratedDevice<D> {
    pub fn new(inner: D, curve: Arc<PositioningCurve>) -> Self {
        let last_end = inner.head_sector();
        CalibratedDevice { inner, curve, last_end }
    }

    fn view(&self) -> CalibratedView<'_> {
        CalibratedView { inner: &self.inner, curve: &self.curve, from_sector: self.last_end }
    }
}

impl<D: Device> DeviceView for CalibratedDevice<D> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn capacity_sectors(&self) -> u64 {
        self.inner.capacity_sectors()
    }
    fn cylinders(&self) -> u32 {
        self.inner.cylinders()
    }
    fn cylinder_of(&self, sector: u64) -> u32 {
        self.inner.cylinder_of(sector)
    }
    fn head_cylinder(&self) -> u32 {
        self.inner.head_cylinder()
    }
    fn head_sector(&self) -> u64 {
        self.inner.head_sector()
    }
    fn seek_time_ns(&self, distance_cylinders: u32) -> Nanos {
        self.inner.seek_time_ns(distance_cylinders)
    }
    fn seek_lower_bound_ns(&self, distance_cylinders: u32) -> Nanos {
        self.inner.seek_lower_bound_ns(distance_cylinders)
    }
    fn positioning_time_ns(&self, sector: u64, sectors: u32, op: Op, now: Nanos) -> Nanos {
        self.view().positioning_time_ns(sector, sectors, op, now)
    }
    fn position_of(&self, sector: u64) -> SectorPosition {
        self.inner.position_of(sector)
    }
    fn positioning_time_at_ns(&self, pos: &SectorPosition, sectors: u32, op: Op, now: Nanos) -> Nanos {
        self.view().positioning_time_at_ns(pos, sectors, op, now)
    }
}

impl<D: Device> Device for CalibratedDevice<D> {
    fn service(&mut self, req: &Request, path: ArmPath, now: Nanos) -> Service {
        self.last_end = req.end_sector();
        self.inner.service(req, path, now)
    }
    fn resume(&mut self, req: &Request, now: Nanos) -> Service {
        self.inner.resume(req, now)
    }
    fn woken(&mut self) -> Option<crate::request::RequestId> {
        self.inner.woken()
    }
    fn as_view(&self) -> &dyn DeviceView {
        self
    }
    fn advance_to(&mut self, now: Nanos) {
        self.inner.advance_to(now)
    }
}

/// How well an estimator predicts the true positioning time of held-out pairs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Accuracy {
    /// Which pairs: "uniform" (both reads at uniformly random places) or "log-distance"
    /// (signed distances log-uniform from 1 sector to the whole disk).
    pub pairs_kind: String,
    pub pairs: u32,
    pub mean_actual_ms: f64,
    /// The calibrated curve: fraction of pairs within 25% of the true positioning time.
    pub fitted_within_25: f64,
    pub fitted_mean_abs_error_ms: f64,
    /// The mechanical model (command overhead excluded), on the same pairs.
    pub model_within_25: f64,
    pub model_mean_abs_error_ms: f64,
}

/// Measures `curve` (and the mechanical model) on `pairs` held-out pairs on a simulated probe;
/// half of the second reads are issued at once, half after an idle delay, as in calibration.
pub fn evaluate(
    probe: &mut dyn Probe,
    curve: &PositioningCurve,
    opts: &CalibrationOptions,
    pairs: u32,
    log_distance: bool,
    rng: &mut Pcg64,
) -> Accuracy {
    let rs = opts.read_sectors as u64;
    let cap = probe.capacity_sectors();
    let max_d = cap - 2 * rs - 1;
    let (mut fit_ok, mut fit_err, mut mod_ok, mut mod_err, mut act_sum) = (0u32, 0.0, 0u32, 0.0, 0.0);
    let within = |est: f64, act: f64| (est - act).abs() <= 0.25 * act;
    for i in 0..pairs {
        let idle = if i % 2 == 1 { rng.gen_range(0..=opts.max_idle_ns) } else { 0 };
        let distance = if log_distance {
            let d = (rng.gen_range(0.0..(max_d as f64).ln())).exp().round().max(1.0) as i64;
            if rng.gen_bool(0.5) {
                d
            } else {
                -d
            }
        } else {
            let s = rng.gen_range(0..=cap - 2 * rs) as i64;
            let t = rng.gen_range(0..=cap - rs) as i64;
            t - (s + rs as i64)
        };
        let (_, model, actual) = time_pair(probe, rng, distance, rs, idle);
        let act = actual.expect("evaluation needs a simulated probe") as f64;
        let model = model.expect("evaluation needs a simulated probe") as f64;
        let est = curve.estimate_ns(distance);
        act_sum += act;
        fit_err += (est - act).abs();
        mod_err += (model - act).abs();
        fit_ok += within(est, act) as u32;
        mod_ok += within(model, act) as u32;
    }
    let n = pairs.max(1) as f64;
    Accuracy {
        pairs_kind: if log_distance { "log-distance" } else { "uniform" }.into(),
        pairs,
        mean_actual_ms: act_sum / n / 1e6,
        fitted_within_25: fit_ok as f64 / n,
        fitted_mean_abs_error_ms: fit_err / n / 1e6,
        model_within_25: mod_ok as f64 / n,
        model_mean_abs_error_ms: mod_err / n / 1e6,
    }
}

/// `iosched calibrate`: a calibration of a fresh copy of `spec` plus its accuracy on held-out
/// pairs (on another fresh copy, another random stream).
#[derive(Clone, Debug, Serialize)]
pub struct CalibrationReport {
    pub device: String,
    pub seed: u64,
    pub calibration: Calibration,
    /// The fitted curve at every measured distance (same order as `calibration.points`).
    pub fitted_ns: Vec<f64>,
    pub accuracy: Vec<Accuracy>,
}

/// Calibrates a fresh `RotationalDisk` built from `spec` (the disk's clock starts at 0).
pub fn calibrate_spec(spec: &RotationalSpec, opts: &CalibrationOptions, seed: u64) -> Result<Calibration, String> {
    let mut disk = RotationalDisk::new(spec.clone())?;
    let mut probe = SimProbe::new(&mut disk, ms_to_ns(spec.command_overhead_ms));
    measure(&mut probe, opts, &mut Pcg64::seed_from_u64(seed))
}

/// [`calibrate_spec`] plus held-out accuracy (`eval_pairs` uniform pairs and as many
/// log-distance pairs).
pub fn calibration_report(
    spec: &RotationalSpec,
    opts: &CalibrationOptions,
    seed: u64,
    eval_pairs: u32,
) -> Result<CalibrationReport, String> {
    let calibration = calibrate_spec(spec, opts, seed)?;
    let fitted_ns = calibration.points.iter().map(|p| calibration.curve.estimate_ns(p.distance)).collect();
    let mut accuracy = Vec::new();
    for (k, log_distance) in [false, true].into_iter().enumerate() {
        let mut disk = RotationalDisk::new(spec.clone())?;
        let mut probe = SimProbe::new(&mut disk, ms_to_ns(spec.command_overhead_ms));
        let mut rng = Pcg64::seed_from_u64(seed ^ (0x9E37_79B9_7F4A_7C15u64.wrapping_mul(k as u64 + 1)));
        accuracy.push(evaluate(&mut probe, &calibration.curve, opts, eval_pairs, log_distance, &mut rng));
    }
    Ok(CalibrationReport { device: spec.name.clone(), seed, calibration, fitted_ns, accuracy })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isotonic_pools_violators() {
        assert_eq!(isotonic(&[1.0, 3.0, 2.0, 4.0], &[1.0; 4]), vec![1.0, 2.5, 2.5, 4.0]);
        assert_eq!(isotonic(&[3.0, 1.0], &[1.0, 3.0]), vec![1.5, 1.5]);
        let y = [5.0, 1.0, 2.0, 0.5, 7.0];
        let f = isotonic(&y, &[1.0; 5]);
        assert!(f.windows(2).all(|w| w[0] <= w[1]));
        assert!((f.iter().sum::<f64>() - y.iter().sum::<f64>()).abs() < 1e-9, "PAVA keeps the total");
    }

    #[test]
    fn curve_interpolates_on_log_distance() {
        let c = PositioningCurve { zero_ns: 0.5, forward: vec![(0.0, 1.0), (100f64.ln(), 3.0)], backward: vec![(0.0, 8.0)] };
        assert_eq!(c.estimate_ns(0), 0.5);
        assert_eq!(c.estimate_ns(1), 1.0);
        assert!((c.estimate_ns(10) - 2.0).abs() < 1e-9, "10 is halfway between 1 and 100 in log");
        assert_eq!(c.estimate_ns(1_000_000), 3.0);
        assert_eq!(c.estimate_ns(-5), 8.0);
    }

    #[test]
    fn log_distances_are_log_spaced_and_end_at_max() {
        let d = log_distances(1000, 4);
        assert_eq!(d, vec![1, 2, 3, 6, 10, 18, 32, 56, 100, 178, 316, 562, 1000]);
        assert_eq!(*log_distances(1234, 4).last().unwrap(), 1234);
    }

    #[test]
    fn fit_keeps_the_short_range_and_is_monotone_after_the_minimum() {
        let mk = |distance: i64, mean_ns: f64| CalibrationPoint {
            distance,
            samples: 1,
            immediate_ns: mean_ns,
            delayed_ns: mean_ns,
            mean_ns,
            model_ns: None,
            actual_ns: None,
        };
        let pts = vec![mk(-100, 6.0), mk(-10, 5.0), mk(-1, 8.0), mk(0, 0.0), mk(1, 0.1), mk(10, 4.0), mk(100, 3.0), mk(1000, 9.0)];
        let c = fit(&pts, 1);
        assert_eq!(c.backward.iter().map(|p| p.1).collect::<Vec<_>>(), vec![8.0, 5.0, 6.0]);
        assert_eq!(c.forward.iter().map(|p| p.1).collect::<Vec<_>>(), vec![0.1, 4.0, 3.0, 9.0]);
        // Behind by at most one read (here 10 sectors): re-read from the buffer, not the minimum.
        let c = fit(&[mk(-100, 6.0), mk(-20, 4.0), mk(-10, 7.0), mk(-1, 0.0)], 10);
        assert_eq!(c.backward.iter().map(|p| p.1).collect::<Vec<_>>(), vec![0.0, 7.0, 4.0, 6.0]);
        let c = fit(&pts[..7], 0);
        assert_eq!(c.forward.iter().map(|p| p.1).collect::<Vec<_>>(), vec![0.1, 3.5, 3.5]);
    }
}
