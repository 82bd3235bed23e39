//! The trace formats read, their names, and how one is recognised from a file's first bytes.
//! Formats: ../../../../docs/traces.md.

use super::input::TraceInput;
use super::reader::RecordReader;
use super::TraceError;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// blktrace's binary per-CPU files (`dev.blktrace.N`), either byte order, version 7.
    Blktrace,
    /// blkparse's default text output.
    Blkparse,
    /// The kernel's `blk` ftrace tracer's text (`/sys/kernel/tracing/trace`): blktrace's events
    /// without the blktrace tools.
    FtraceBlk,
    /// fio's iolog version 2 (no timestamps).
    FioV2,
    /// fio's iolog version 3 (µs timestamps).
    FioV3,
    /// MSR Cambridge (SNIA IOTTA) CSV: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime.
    Msr,
    /// UMass Trace Repository SPC (Financial, WebSearch): ASU,LBA,Size,Opcode,Timestamp.
    UmassSpc,
    /// Alibaba block traces 2020: device_id,opcode,offset,length,timestamp.
    Alibaba,
    /// Tencent CBS: Timestamp,Offset,Size,IOType,VolumeID.
    Tencent,
    /// SNIA Systor '17: Timestamp,Response,IOType,LUN,Offset,Size.
    Systor,
    /// DiskSim's ascii input: arrival_ms device block size flags.
    DisksimAscii,
    /// DiskSim's validate format (measured response times and gaps).
    DisksimValidate,
    /// MQSim's traces: DiskSim's ascii columns with times in nanoseconds.
    Mqsim,
    /// The S suite's start-up traces (comm_startup_lat/*.trace).
    SStartup,
    /// iosched's own per-request table (`iosched run --requests-csv`): a simulated run as a trace.
    RequestsCsv,
}

/// How many bytes of a file detection looks at.
pub const DETECT_BYTES: usize = 8192;

impl Format {
    pub const ALL: &'static [Format] = &[
        Format::Blktrace,
        Format::Blkparse,
        Format::FtraceBlk,
        Format::FioV2,
        Format::FioV3,
        Format::Msr,
        Format::UmassSpc,
        Format::Alibaba,
        Format::Tencent,
        Format::Systor,
        Format::DisksimAscii,
        Format::DisksimValidate,
        Format::Mqsim,
        Format::SStartup,
        Format::RequestsCsv,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Blktrace => "blktrace",
            Format::Blkparse => "blkparse",
            Format::FtraceBlk => "ftrace-blk",
            Format::FioV2 => "fio-v2",
            Format::FioV3 => "fio-v3",
            Format::Msr => "msr",
            Format::UmassSpc => "umass-spc",
            Format::Alibaba => "alibaba",
            Format::Tencent => "tencent",
            Format::Systor => "systor",
            Format::DisksimAscii => "disksim-ascii",
            Format::DisksimValidate => "disksim-validate",
            Format::Mqsim => "mqsim",
            Format::SStartup => "s-startup",
            Format::RequestsCsv => "requests-csv",
        }
    }

    pub fn names() -> Vec<&'static str> {
        Format::ALL.iter().map(|f| f.name()).collect()
    }

    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// The format of a trace from its first bytes (decompressed) and its name, or why none fits.
    /// Binary blktrace by its magic; fio by its header; the text formats by the shape of their
    /// first record line (see docs/traces.md). A name is used only to tell apart formats whose
    /// lines look alike.
    pub fn detect(path: &Path, head: &[u8]) -> Result<Format, String> {
        if super::blktrace::has_magic(head) {
            return Ok(Format::Blktrace);
        }
        let text = String::from_utf8_lossy(head);
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
        let Some(first) = lines.next() else {
            return Err("cannot tell the trace's format: it is empty (give --format)".into());
        };
        if first.starts_with("fio version 2 iolog") {
            return Ok(Format::FioV2);
        }
        if first.starts_with("fio version 3 iolog") {
            return Ok(Format::FioV3);
        }
        if super::requests_csv::looks_like(first) {
            return Ok(Format::RequestsCsv);
        }
        let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
        let sample: Vec<&str> = std::iter::once(first).chain(lines.take(20)).collect();
        if let Some(f) = super::csv_traces::detect(&sample, &name) {
            return Ok(f);
        }
        // The S traces' test (ten fields, Seq/Rand fifth, C/START last) is the narrower one:
        // tried before blkparse's.
        if super::s_startup::looks_like(first) {
            return Ok(Format::SStartup);
        }
        if super::blkparse::looks_like(first) {
            return Ok(Format::Blkparse);
        }
        if super::blkparse::ftrace_looks_like(first) {
            return Ok(Format::FtraceBlk);
        }
        if let Some(f) = super::disksim_ascii::detect(&sample, &name) {
            return Ok(f);
        }
        Err(format!(
            "cannot tell the trace's format from its first line `{}` (give --format, one of: {})",
            crate::input::escape_controls(&first.chars().take(80).collect::<String>()),
            Format::names().join(", ")
        ))
    }

    /// A reader of this format over `input`. `path`: where the input came from, when from a file
    /// (blktrace finds the other per-CPU files beside it).
    pub fn reader(self, input: TraceInput, path: Option<&Path>) -> Result<Box<dyn RecordReader>, TraceError> {
        use super::{blkparse, blktrace, csv_traces, disksim_ascii, fio_iolog, s_startup};
        Ok(match self {
            Format::Blktrace => blktrace::reader(input, path)?,
            Format::Blkparse => blkparse::reader(input),
            Format::FtraceBlk => blkparse::ftrace_reader(input),
            Format::FioV2 => fio_iolog::reader(input, 2),
            Format::FioV3 => fio_iolog::reader(input, 3),
            Format::Msr | Format::UmassSpc | Format::Alibaba | Format::Tencent | Format::Systor => csv_traces::reader(input, self),
            Format::DisksimAscii | Format::DisksimValidate | Format::Mqsim => disksim_ascii::reader(input, self),
            Format::SStartup => s_startup::reader(input),
            Format::RequestsCsv => super::requests_csv::reader(input),
        })
    }
}
