//! Traces from Python: `trace_stats` (the streaming summary as JSON, read with the GIL
//! released), `trace_count` (read only: the benchmark's reading speed) and `trace_formats`.
//! Registered by `register` from the module init (kept out of lib.rs, which others edit too).

use iosched::trace::stats::{stats_of_file, DEFAULT_TOP_PROCESSES};
use iosched::trace::{Format, ReadOptions, TraceError as CoreTraceError, TraceReader};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::time::{Duration, Instant};

create_exception!(
    _native,
    TraceError,
    PyValueError,
    "A trace is malformed or unreadable; the message names the file, line (or record) and text."
);

/// How often Python is called back while reading (progress, Ctrl-C).
const CALLBACK_EVERY: Duration = Duration::from_millis(50);

/// Why reading stopped: the trace, or the Python callback (an exception, KeyboardInterrupt).
enum Stop {
    Trace(CoreTraceError),
    Py(PyErr),
}

impl From<CoreTraceError> for Stop {
    fn from(e: CoreTraceError) -> Self {
        Stop::Trace(e)
    }
}

impl From<Stop> for PyErr {
    fn from(s: Stop) -> PyErr {
        match s {
            Stop::Trace(e) => TraceError::new_err(e.to_string()),
            Stop::Py(e) => e,
        }
    }
}

fn read_options(format: Option<&str>, skip_bad: bool) -> PyResult<ReadOptions> {
    let format = match format {
        None => None,
        Some(name) => Some(
            Format::parse(name)
                .ok_or_else(|| TraceError::new_err(format!("unknown trace format `{name}` (known: {})", Format::names().join(", "))))?,
        ),
    };
    Ok(ReadOptions { format, skip_bad })
}

/// A tick for `stats_of_file`: at most every `CALLBACK_EVERY` (and always the first and last
/// time), takes the GIL to call `callback(bytes_read, total_bytes)` and to let Ctrl-C through.
fn ticker(callback: Option<PyObject>) -> impl FnMut(&TraceReader) -> Result<(), Stop> {
    let mut last: Option<Instant> = None;
    move |reader: &TraceReader| {
        let now = Instant::now();
        let done = reader.progress.bytes_read() >= reader.progress.total_bytes;
        if last.is_some_and(|t| now - t < CALLBACK_EVERY) && !done {
            return Ok(());
        }
        last = Some(now);
        Python::with_gil(|py| {
            py.check_signals()?;
            if let Some(cb) = &callback {
                cb.call1(py, (reader.progress.bytes_read(), reader.progress.total_bytes))?;
            }
            Ok(())
        })
        .map_err(Stop::Py)
    }
}

/// Summarizes the trace at `path` (docs/traces.md): returns the summary as JSON. `format`: a
/// name from `trace_formats()` (default: detected); `skip_bad`: count and skip malformed
/// records; `progress_callback(bytes_read, total_bytes)`: called about 20 times a second (file
/// bytes, compressed if the file is); `top`: processes listed. Raises TraceError.
#[pyfunction]
#[pyo3(signature = (path, format=None, skip_bad=false, progress_callback=None, top=DEFAULT_TOP_PROCESSES))]
fn trace_stats(
    py: Python<'_>,
    path: PathBuf,
    format: Option<&str>,
    skip_bad: bool,
    progress_callback: Option<PyObject>,
    top: usize,
) -> PyResult<String> {
    let options = read_options(format, skip_bad)?;
    let summary = py.allow_threads(|| stats_of_file(&path, options, top, ticker(progress_callback)))?;
    Ok(serde_json::to_string(&summary).expect("summary serializes"))
}

/// Reads the trace and counts its records, nothing else (the reader's own speed): returns
/// (records, skipped, file bytes).
#[pyfunction]
#[pyo3(signature = (path, format=None, skip_bad=false))]
fn trace_count(py: Python<'_>, path: PathBuf, format: Option<&str>, skip_bad: bool) -> PyResult<(u64, u64, u64)> {
    let options = read_options(format, skip_bad)?;
    let r = py.allow_threads(|| -> Result<_, CoreTraceError> {
        let mut reader = TraceReader::open(&path, options)?;
        while reader.next_record()?.is_some() {}
        Ok((reader.records(), reader.skipped(), reader.progress.total_bytes))
    });
    r.map_err(|e| TraceError::new_err(e.to_string()))
}

/// Converts the trace at `path` to `to` ("blkparse" or "fio-v3") at `out_path`, in time order
/// (a bounded reorder window: docs/traces.md); `device`: only that trace device (for a
/// requests-csv table: that run); `fio_file`: the file or device the fio log names. Returns the
/// report as JSON. The output is written to `out_path` + ".part" and renamed when complete.
#[pyfunction]
#[pyo3(signature = (path, out_path, to, format=None, skip_bad=false, device=None, fio_file="/dev/sdX", scheduler=None))]
#[allow(clippy::too_many_arguments)]
fn trace_convert(
    py: Python<'_>,
    path: PathBuf,
    out_path: PathBuf,
    to: &str,
    format: Option<&str>,
    skip_bad: bool,
    device: Option<u32>,
    fio_file: &str,
    scheduler: Option<&str>,
) -> PyResult<String> {
    use iosched::trace::convert::{select_run, OutputFormat};
    use iosched::trace::{input::TraceInput, requests_csv};
    let options = read_options(format, skip_bad)?;
    let to = OutputFormat::parse(to)
        .ok_or_else(|| TraceError::new_err(format!("--to: unknown output format `{to}` (known: {})", OutputFormat::NAMES.join(", "))))?;
    let fio_file = fio_file.to_string();
    let scheduler = scheduler.map(str::to_string);
    let report = py.allow_threads(|| -> Result<_, String> {
        let mut reader = TraceReader::open(&path, options).map_err(|e| e.to_string())?;
        let mut device = device;
        if reader.format == Format::RequestsCsv {
            // One run per scheduler: choose one (by label), or refuse to merge several.
            let runs = requests_csv::runs(TraceInput::open(&path).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
            device = select_run(&runs, scheduler.as_deref(), device).map_err(|e| format!("{}: {e}", path.display()))?;
        } else if let Some(label) = &scheduler {
            return Err(format!("--scheduler {label}: only a requests table (iosched run --requests-csv) has runs by scheduler; use --device for a trace's devices"));
        }
        iosched::trace::convert::convert_file(&mut reader, &out_path, to, device, &fio_file)
    });
    let report = report.map_err(TraceError::new_err)?;
    Ok(serde_json::to_string(&report).expect("report serializes"))
}

/// The trace format names `format=` takes.
#[pyfunction]
fn trace_formats() -> Vec<&'static str> {
    Format::names()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("TraceError", m.py().get_type::<TraceError>())?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(trace_count, m)?)?;
    m.add_function(wrap_pyfunction!(trace_formats, m)?)?;
    m.add_function(wrap_pyfunction!(trace_convert, m)?)?;
    Ok(())
}
