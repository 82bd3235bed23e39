//! Python bindings: the only crate that depends on PyO3. Results cross as JSON summaries plus
//! per-request columns as raw little-endian buffers (numpy reads them without copying row by row).

use iosched::device::calibration::{calibration_report, CalibrationOptions};
use iosched::device::describe::describe;
use iosched::device::presets::{preset, PRESET_NAMES};
use iosched::metrics::csv::CsvRecordWriter;
use iosched::metrics::{RecordSink, RequestRecord};
use iosched::request::Op;
use iosched::scenario::{RunOptions, Scenario, DEFAULT_SCENARIO};
use iosched::sched::registry::SCHEDULERS;
use iosched::sim::RunControl;
use iosched::trace::validate::{validate_with, Drive, ValidateError as CoreValidateError};
use iosched::trace::Trace;
use iosched::workload::replay::ReplayTiming;
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::Arc;

mod trace_py;

create_exception!(_native, ScenarioError, PyValueError, "A scenario file or value is wrong; the message names the file, field and value.");

create_exception!(
    _native,
    ValidateError,
    PyValueError,
    "A drive description or trace is wrong or unreadable; the message names the file, line and text."
);

fn column<T: Copy>(
    py: Python<'_>,
    records: &[RequestRecord],
    f: impl Fn(&RequestRecord) -> T,
    to_le: impl Fn(T) -> Vec<u8>,
) -> Py<PyBytes> {
    let mut buf = Vec::with_capacity(records.len() * std::mem::size_of::<T>());
    for r in records {
        buf.extend_from_slice(&to_le(f(r)));
    }
    PyBytes::new(py, &buf).unbind()
}

fn records_to_columns<'py>(py: Python<'py>, records: &[RequestRecord]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let u64c = |f: fn(&RequestRecord) -> u64| column(py, records, f, |x: u64| x.to_le_bytes().to_vec());
    let u32c = |f: fn(&RequestRecord) -> u32| column(py, records, f, |x: u32| x.to_le_bytes().to_vec());
    let u8c = |f: fn(&RequestRecord) -> u8| column(py, records, f, |x: u8| vec![x]);
    d.set_item("req_id", ("<u8", u64c(|r| r.id)))?;
    d.set_item("pid", ("<u4", u32c(|r| r.pid)))?;
    d.set_item("group", ("<u4", u32c(|r| r.group)))?;
    d.set_item(
        "op_code",
        (
            "u1",
            u8c(|r| match r.op {
                Op::Read => 0,
                Op::Write => 1,
                Op::Flush => 2,
                Op::Discard => 3,
            }),
        ),
    )?;
    d.set_item("sync", ("u1", u8c(|r| r.sync as u8)))?;
    d.set_item("start_sector", ("<u8", u64c(|r| r.start_sector)))?;
    d.set_item("size_sectors", ("<u4", u32c(|r| r.size_sectors)))?;
    d.set_item("bios", ("<u4", u32c(|r| r.bios)))?;
    d.set_item("issue_ns", ("<u8", u64c(|r| r.issue_ns)))?;
    d.set_item("insert_ns", ("<u8", u64c(|r| r.insert_ns)))?;
    d.set_item("dispatch_ns", ("<u8", u64c(|r| r.dispatch_ns)))?;
    d.set_item("start_ns", ("<u8", u64c(|r| r.start_ns)))?;
    d.set_item("complete_ns", ("<u8", u64c(|r| r.complete_ns)))?;
    d.set_item("seek_cylinders", ("<u4", u32c(|r| r.seek_cylinders)))?;
    d.set_item("seek_ns", ("<u8", u64c(|r| r.seek_ns)))?;
    d.set_item("rotation_ns", ("<u8", u64c(|r| r.rotation_ns)))?;
    d.set_item("transfer_ns", ("<u8", u64c(|r| r.transfer_ns)))?;
    d.set_item("cache_hit", ("u1", u8c(|r| r.cache_hit as u8)))?;
    Ok(d)
}

/// Parses and validates scenario text; raises ScenarioError naming the file, field and value.
/// Returns its `name` field (None when absent) and how many `[[scheduler]]` tables it has, so
/// that Python needs no TOML reader of its own to run it.
#[pyfunction]
fn check_scenario(text: &str, source: &str) -> PyResult<(Option<String>, usize)> {
    let scn = Scenario::parse(text, source).map_err(|e| ScenarioError::new_err(e.to_string()))?;
    Ok((scn.name.clone(), scn.scheduler.len()))
}

/// A running scenario as seen from Python: progress counters and a cancel switch, shared with
/// the simulation (which may run on another thread).
#[pyclass(frozen)]
struct RunHandle {
    control: Arc<RunControl>,
}

#[pymethods]
impl RunHandle {
    #[new]
    fn new() -> Self {
        RunHandle { control: Arc::new(RunControl::default()) }
    }

    /// Stops the run at its next check (within a few thousand events); results so far are kept.
    fn cancel(&self) {
        self.control.cancel();
    }

    /// Requests completed in the current run (one run per scheduler).
    #[getter]
    fn completed(&self) -> u64 {
        self.control.completed()
    }

    /// Simulated time reached in the current run, in ns.
    #[getter]
    fn simulated_ns(&self) -> u64 {
        self.control.simulated_ns()
    }

    /// Runs (schedulers) finished.
    #[getter]
    fn runs_done(&self) -> u64 {
        self.control.runs_done()
    }
}

/// Runs every scheduler of a scenario. Returns a list of (summary JSON, columns or None);
/// columns map name -> (numpy dtype, bytes), present with `records`. `requests_csv`: a path to
/// stream every record to as it completes (opened before the run starts). `handle`: progress
/// and cancellation.
#[pyfunction]
#[pyo3(signature = (text, source, seed=None, records=true, requests_csv=None, handle=None))]
fn run_scenario<'py>(
    py: Python<'py>,
    text: &str,
    source: &str,
    seed: Option<u64>,
    records: bool,
    requests_csv: Option<std::path::PathBuf>,
    handle: Option<&RunHandle>,
) -> PyResult<Vec<(String, Option<Bound<'py, PyDict>>)>> {
    let scn = Scenario::parse(text, source).map_err(|e| ScenarioError::new_err(e.to_string()))?;
    let mut csv = match &requests_csv {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| PyOSError::new_err(format!("{}: cannot write: {e}", path.display())))?;
            Some(CsvRecordWriter::new(std::io::BufWriter::with_capacity(1 << 20, file)))
        }
        None => None,
    };
    let control = handle.map(|h| h.control.clone());
    let runs = py
        .allow_threads(|| {
            let options = RunOptions {
                seed,
                keep_records: records,
                sink: csv.as_mut().map(|w| w as &mut dyn RecordSink),
                control: control.as_deref(),
            };
            scn.run_with(options)
        })
        .map_err(|e| ScenarioError::new_err(e.to_string()))?;
    if let (Some(w), Some(path)) = (csv, &requests_csv) {
        w.finish().map_err(|e| PyOSError::new_err(format!("{}: cannot write: {e}", path.display())))?;
    }
    runs.into_iter()
        .map(|r| {
            let summary = serde_json::to_string(&r.summary).expect("summary serializes");
            let cols = if records { Some(records_to_columns(py, &r.records)?) } else { None };
            Ok((summary, cols))
        })
        .collect()
}

/// The scenario with every default filled in (JSON): sections, the device's parameters, each
/// scheduler's tunables.
#[pyfunction]
fn resolved_scenario(text: &str, source: &str) -> PyResult<String> {
    let scn = Scenario::parse(text, source).map_err(|e| ScenarioError::new_err(e.to_string()))?;
    let v = scn.resolved().map_err(|e| ScenarioError::new_err(e.to_string()))?;
    // to_string, not Display: Display writes through a fmt::Formatter adapter (the Atlas 10K's
    // resolved scenario: 33.5 M -> 19.8 M instructions in the serializer, callgrind).
    Ok(serde_json::to_string(&v).expect("a JSON value serializes"))
}

/// JSON list of schedulers with their tunables.
#[pyfunction]
fn list_schedulers() -> String {
    serde_json::to_string(SCHEDULERS).expect("serializes")
}

/// JSON list of device presets with their derived figures.
#[pyfunction]
fn list_devices() -> PyResult<String> {
    let all: Result<Vec<_>, _> = PRESET_NAMES.iter().map(|n| describe(&preset(n).expect("listed preset exists"))).collect();
    let all = all.map_err(PyValueError::new_err)?;
    Ok(serde_json::to_string(&all).expect("serializes"))
}

/// JSON list of flash presets: each spec (geometry, timing, over-provisioning, buffer, GC,
/// precondition, queue depth) with the logical capacity the model exposes.
#[pyfunction]
fn list_flash_devices() -> PyResult<String> {
    use iosched::device::flash::{ftl::logical_units_for, geometry::UNIT_BYTES, presets};
    let mut out = Vec::new();
    for name in presets::FLASH_PRESET_NAMES {
        let spec = presets::flash_preset(name).expect("listed preset exists");
        let units = logical_units_for(&spec.geometry, spec.over_provisioning, spec.gc_free_superblocks).map_err(PyValueError::new_err)?;
        let mut v = serde_json::to_value(&spec).expect("serializes");
        v["capacity_gb"] = serde_json::json!(units as f64 * UNIT_BYTES as f64 / 1e9);
        v["dies"] = serde_json::json!(spec.geometry.dies());
        let doc = presets::flash_preset_doc(name).expect("every listed preset has its description");
        v["description"] = serde_json::json!(doc.description);
        v["source"] = serde_json::json!(doc.source);
        v["estimated"] = serde_json::json!(doc.estimated());
        v["queue_source"] = serde_json::json!(presets::flash_queue_source(&spec));
        out.push(v);
    }
    Ok(serde_json::to_string(&out).expect("serializes"))
}

/// Calibrates a simulated preset's positioning-time curve (Iyer & Druschel 2001, section 3.6)
/// and measures it on `eval_pairs` held-out pairs; returns the report as JSON.
#[pyfunction]
#[pyo3(signature = (device, samples=32, seed=2001, eval_pairs=2000))]
fn calibrate_device(py: Python<'_>, device: &str, samples: u32, seed: u64, eval_pairs: u32) -> PyResult<String> {
    let spec = preset(device)
        .ok_or_else(|| PyValueError::new_err(format!("unknown device preset `{device}` (known: {})", PRESET_NAMES.join(", "))))?;
    let opts = CalibrationOptions { samples, ..CalibrationOptions::default() };
    let report = py.allow_threads(|| calibration_report(&spec, &opts, seed, eval_pairs)).map_err(PyValueError::new_err)?;
    Ok(serde_json::to_string(&report).expect("serializes"))
}

/// What the loader made of a DiskSim drive description, as JSON: `drive`, `source`, `ignored`
/// (`[{parameter, reason}]`: read and with no timing effect, and why), `unsupported` (read, with
/// a timing effect the model lacks) and `notes` (how inconsistencies were reconciled).
/// An MQSim `ssdconfig.xml` (its root element `Execution_Parameter_Set`) gives the same object
/// with `spec` (the flash spec it maps to) and `queue_fetch_size`.
#[pyfunction]
fn explain_drive(drive: &str) -> PyResult<String> {
    let path = std::path::Path::new(drive);
    let head = std::fs::read(path).map(|b| String::from_utf8_lossy(&b[..b.len().min(512)]).into_owned()).unwrap_or_default();
    if head.contains("<Execution_Parameter_Set") {
        let d = iosched::device::flash::mqsim_config::load(path).map_err(|e| ValidateError::new_err(e.to_string()))?;
        let ignored: Vec<serde_json::Value> =
            d.ignored.iter().map(|i| serde_json::json!({"parameter": i.parameter, "reason": i.reason})).collect();
        return Ok(serde_json::json!({
            "drive": d.spec.name,
            "source": d.source.display().to_string(),
            "spec": d.spec,
            "queue_fetch_size": d.queue_fetch_size,
            "ignored": ignored,
            "unsupported": d.unsupported,
            "notes": d.notes,
        })
        .to_string());
    }
    let d = iosched::device::disksim::load_drive(std::path::Path::new(drive)).map_err(|e| ValidateError::new_err(e.to_string()))?;
    let ignored: Vec<serde_json::Value> =
        d.ignored.iter().map(|i| serde_json::json!({"parameter": i.parameter, "reason": i.reason})).collect();
    Ok(serde_json::json!({
        "drive": d.name,
        "source": d.source.display().to_string(),
        "ignored": ignored,
        "unsupported": d.unsupported,
        "notes": d.notes,
    })
    .to_string())
}

/// Replays a DiskSim validate trace on a drive (a DiskSim `.parv` file, or a preset name when
/// no such file exists) and compares simulated with measured response times. `timing`:
/// "after-completion" (DiskSim's: each request `gap` after the previous completion) or
/// "arrival" (open loop, gaps between arrivals). Returns the result as JSON; with
/// `per_request`, also `measured_ms` and `simulated_ms` in trace order.
#[pyfunction]
#[pyo3(signature = (drive, trace, timing="after-completion", per_request=false, scheduler=None))]
fn validate_trace(py: Python<'_>, drive: &str, trace: &str, timing: &str, per_request: bool, scheduler: Option<&str>) -> PyResult<String> {
    let timing = match timing {
        "after-completion" => ReplayTiming::AfterCompletion,
        "arrival" => ReplayTiming::Arrival,
        other => return Err(PyValueError::new_err(format!("unknown timing `{other}` (known: after-completion, arrival)"))),
    };
    let (drive, trace) = (std::path::PathBuf::from(drive), std::path::PathBuf::from(trace));
    let scheduler_name = scheduler.unwrap_or("fcfs").to_string();
    // Checked here (a clear error before any work); built again inside: a scheduler is not Send.
    iosched::sched::registry::build(&scheduler_name, None, &Default::default())
        .map_err(|e| ValidateError::new_err(format!("--scheduler: {e}")))?;
    let result = py.allow_threads(|| -> Result<_, CoreValidateError> {
        let mut sched = iosched::sched::registry::build(&scheduler_name, None, &Default::default()).map_err(CoreValidateError::Other)?;
        let trace = Trace::read(&trace)?;
        let mut drive = Drive::load(&drive)?;
        validate_with(&mut drive, &trace, timing, sched.as_mut())
    });
    let r = result.map_err(|e| ValidateError::new_err(e.to_string()))?;
    let mut v = serde_json::to_value(&r).expect("serializes");
    v["scheduler"] = serde_json::Value::from(scheduler_name);
    if per_request {
        let ms = |x: &[u64]| serde_json::Value::from(x.iter().map(|&n| n as f64 / 1e6).collect::<Vec<f64>>());
        v["measured_ms"] = ms(&r.measured_ns);
        v["simulated_ms"] = ms(&r.simulated_ns);
    }
    Ok(v.to_string())
}

/// Real mode's command line (`iosched-fuse mount|umount|calibrate ...`, run in this process);
/// `self_command` starts it again (the daemon re-executes itself). Returns the exit status.
#[pyfunction]
fn fuse_main(py: Python<'_>, args: Vec<String>, self_command: Vec<String>) -> u8 {
    py.allow_threads(|| iosched_fuse::cli::run(&args, &self_command))
}

/// An empty run summary as JSON (its fields, for checking metric names before a run).
/// The readahead windows of a sequential reader (Linux's mm/readahead.c model): `reads` reads
/// of `read_pages` pages from offset 0 of a file of `file_pages`, every I/O completing at once.
#[pyfunction]
fn readahead_windows(read_ahead_kb: u64, read_pages: u64, reads: u64, file_pages: u64) -> String {
    use iosched::host::readahead::{simulate_sequential, RaConfig, RaKind};
    let windows = simulate_sequential(&RaConfig::from_kb(read_ahead_kb), read_pages.max(1), reads.min(1 << 20), file_pages);
    let v: Vec<serde_json::Value> = windows
        .iter()
        .map(|w| {
            serde_json::json!({
                "start": w.start, "pages": w.pages, "marker": w.marker, "trigger": w.trigger,
                "kind": match w.kind { RaKind::Sync => "sync", RaKind::Async => "async" },
            })
        })
        .collect();
    serde_json::to_string(&v).expect("windows serialize")
}

/// A scheduler's own cost per request with `processes` backlogged processes, each keeping
/// `depth` random 4 KiB reads outstanding on a device that serves one at a time in `service_us`
/// (iosched::sched::scaling). Builds the scheduler and queues the first requests, serves
/// `warmup` requests (default: `requests` / 10, at least `processes`), then measures the thread
/// CPU time (Python's `time.thread_time`, read before and after) of serving `requests` more
/// (add + next + completed per request). Returns JSON: cpu_s, requests, waits, simulated_ns,
/// counters_at_start and counters (the scheduler's totals before and after the measured run).
#[pyfunction]
#[pyo3(signature = (scheduler, processes, requests, depth=2, tunables=None, service_us=1000, warmup=None))]
fn sched_scaling(
    py: Python<'_>,
    scheduler: &str,
    processes: u32,
    requests: u64,
    depth: u32,
    tunables: Option<std::collections::BTreeMap<String, f64>>,
    service_us: u64,
    warmup: Option<u64>,
) -> PyResult<String> {
    use iosched::sched::scaling::ScalingDriver;
    let tunables = tunables.unwrap_or_default();
    let mut d =
        ScalingDriver::new(scheduler, &tunables, processes, depth, service_us.saturating_mul(1000)).map_err(PyValueError::new_err)?;
    d.run(warmup.unwrap_or((requests / 10).max(processes as u64))).map_err(PyValueError::new_err)?;
    let clock = py.import("time")?.getattr("thread_time")?;
    let t0: f64 = clock.call0()?.extract()?;
    let c = d.run(requests).map_err(PyValueError::new_err)?;
    let t1: f64 = clock.call0()?.extract()?;
    let mut v = serde_json::to_value(&c).expect("serializes");
    v["cpu_s"] = serde_json::Value::from(t1 - t0);
    let map = |cs: &[(String, u64)]| -> serde_json::Value {
        cs.iter().map(|(k, n)| (k.clone(), serde_json::Value::from(*n))).collect::<serde_json::Map<_, _>>().into()
    };
    v["counters_at_start"] = map(&c.counters_at_start);
    v["counters"] = map(&c.counters);
    Ok(v.to_string())
}

#[pyfunction]
fn empty_summary() -> String {
    serde_json::to_string(&iosched::metrics::RunSummary::default()).expect("summary serializes")
}

/// The built-in default scenario's TOML text.
#[pyfunction]
fn default_scenario() -> &'static str {
    DEFAULT_SCENARIO
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(check_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(resolved_scenario, m)?)?;
    m.add_class::<RunHandle>()?;
    m.add_function(wrap_pyfunction!(list_schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(list_devices, m)?)?;
    m.add_function(wrap_pyfunction!(list_flash_devices, m)?)?;
    m.add_function(wrap_pyfunction!(default_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate_device, m)?)?;
    m.add("ValidateError", m.py().get_type::<ValidateError>())?;
    m.add_function(wrap_pyfunction!(validate_trace, m)?)?;
    m.add_function(wrap_pyfunction!(explain_drive, m)?)?;
    m.add_function(wrap_pyfunction!(fuse_main, m)?)?;
    m.add_function(wrap_pyfunction!(empty_summary, m)?)?;
    m.add_function(wrap_pyfunction!(sched_scaling, m)?)?;
    m.add_function(wrap_pyfunction!(readahead_windows, m)?)?;
    trace_py::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_SCENARIO_BYTES", iosched::input::MAX_DESCRIPTION_BYTES)?;
    m.add("CDF_QUANTILES", iosched::metrics::histogram::CDF_QUANTILES.to_vec())?;
    m.add("PERCENTILE_RELATIVE_ERROR", iosched::metrics::histogram::PERCENTILE_RELATIVE_ERROR)?;
    Ok(())
}
