//! Block I/O traces: readers for DiskSim's "validate" and "ascii" formats into a request list,
//! and (in [`validate`]) the replay of a validation trace against a drive model with the demerit
//! figure. Time is read from the trace, never from a clock.
//!
//! Formats (DiskSim 4.0, `src/disksim_iotrace.c`; blocks are 512-byte sectors):
//! - **validate**: `R|W  Hit|Miss|Doub|Trip  start_block  size_blocks  response_us  gap_us`, one
//!   request per line, measured on a real drive. DiskSim issues the first request at time 0
//!   and each next one `gap_us` after the *completion* of the one before (it reads the next
//!   line when the driver sees a completion), so the gap is the host's think time.
//! - **ascii**: `arrival_ms  device  start_block  size_blocks  flags` with `flags` in hex;
//!   bit 0x1 set = read, clear = write. Arrival times are absolute and must not decrease.

pub mod blk_events;
pub mod blk_requests;
pub mod blkparse;
pub mod blktrace;
pub mod convert;
pub mod csv_traces;
pub mod depth;
pub mod disksim_ascii;
pub mod fio_iolog;
pub mod format;
pub mod input;
pub mod lines;
pub mod reader;
pub mod record;
pub mod requests_csv;
pub mod s_startup;
pub mod stats;
mod text_fuzz;
pub mod units;
pub mod validate;
pub mod write_blkparse;
pub mod write_fio;
pub mod write_s_startup;

pub use format::Format;
pub use reader::{ReadOptions, TraceReader};
pub use record::{TraceOp, TraceRecord};

use crate::request::Op;
use crate::time::{ms_to_ns, us_to_ns, Nanos};
use std::fmt;
use std::path::Path;

/// A malformed trace: the file, the 1-based line (0: not tied to a line, and not printed) and
/// the offending text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    pub file: String,
    pub line: usize,
    pub message: String,
    pub text: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = if self.line == 0 {
            format!("{}: {}", self.file, self.message)
        } else {
            format!("{}:{}: {}", self.file, self.line, self.message)
        };
        if !self.text.is_empty() {
            s += &format!(": `{}`", self.text);
        }
        // The quoted input may hold control characters: escaped, never raw.
        f.write_str(&crate::input::escape_controls(&s))
    }
}

impl std::error::Error for TraceError {}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    Validate,
    Ascii,
}

impl TraceFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            TraceFormat::Validate => "validate",
            TraceFormat::Ascii => "ascii",
        }
    }
}

/// What the measuring tool saw the drive's buffer do for a request of a validate trace: a hit,
/// a miss, or a miss during which the drive disconnected from the bus twice or three times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BufferTag {
    Hit,
    Miss,
    Double,
    Triple,
}

impl BufferTag {
    pub const NAMES: &'static [&'static str] = &["Hit", "Miss", "Doub", "Trip"];

    pub fn parse(s: &str) -> Option<BufferTag> {
        Some(match s {
            "Hit" => BufferTag::Hit,
            "Miss" => BufferTag::Miss,
            "Doub" => BufferTag::Double,
            "Trip" => BufferTag::Triple,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            BufferTag::Hit => "Hit",
            BufferTag::Miss => "Miss",
            BufferTag::Double => "Doub",
            BufferTag::Triple => "Trip",
        }
    }
}

/// One request of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRequest {
    /// 1-based line in the trace file.
    pub line: u32,
    /// Arrival time if every request arrives independently of completions: the ascii trace's
    /// time, or for a validate trace the sum of the gaps before it (the trace's own arrival
    /// instants would also contain the measured response times; see [`Trace::format`]).
    pub arrival_ns: Nanos,
    pub op: Op,
    pub start_sector: u64,
    pub size_sectors: u32,
    /// The trace's device number (ascii); 0 for validate traces.
    pub device: u32,
    /// Validate traces: the response time measured on the real drive.
    pub measured_response_ns: Option<Nanos>,
    /// Validate traces: host time between this request's completion and the next arrival.
    pub gap_ns: Nanos,
    /// Validate traces: the buffer action the measurement recorded.
    pub tag: Option<BufferTag>,
}

impl TraceRequest {
    pub fn end_sector(&self) -> u64 {
        self.start_sector + self.size_sectors as u64
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// Where it was read from (used in messages).
    pub source: String,
    pub format: TraceFormat,
    pub requests: Vec<TraceRequest>,
}

impl Trace {
    /// Reads a trace file, detecting its format from the first request line.
    pub fn read(path: &Path) -> Result<Trace, TraceError> {
        let source = path.display().to_string();
        let text = crate::input::read_text(path, crate::input::MAX_TRACE_BYTES).map_err(|e| TraceError {
            file: source.clone(),
            line: e.line(),
            message: match e {
                crate::input::TextError::NotUtf8 { .. } => e.to_string(),
                _ => format!("cannot read the trace: {e}"),
            },
            text: String::new(),
        })?;
        Trace::parse(&text, &source)
    }

    /// Parses trace text, detecting the format: a first field `R` or `W` means validate,
    /// anything else ascii.
    pub fn parse(text: &str, source: &str) -> Result<Trace, TraceError> {
        let first = text.lines().map(str::trim).find(|l| !l.is_empty());
        match first.and_then(|l| l.split_whitespace().next()) {
            Some("R") | Some("W") => Trace::parse_validate(text, source),
            Some(_) => Trace::parse_ascii(text, source),
            None => Err(TraceError { file: source.into(), line: 0, message: "the trace has no requests".into(), text: String::new() }),
        }
    }

    /// DiskSim's "validate" format (see the module documentation).
    pub fn parse_validate(text: &str, source: &str) -> Result<Trace, TraceError> {
        let mut requests = Vec::new();
        let mut arrival: Nanos = 0;
        for (i, line, f) in records(text) {
            let err = |message: String, text: &str| TraceError { file: source.into(), line: i + 1, message, text: text.into() };
            if f.len() != 6 {
                return Err(err(
                    format!("expected 6 fields `R|W Hit|Miss|Doub|Trip start_block size_blocks response_us gap_us`, found {}", f.len()),
                    line,
                ));
            }
            let op = parse_op_letter(f[0]).ok_or_else(|| err("the first field must be R or W".into(), f[0]))?;
            let tag = BufferTag::parse(f[1])
                .ok_or_else(|| err(format!("the second field must be one of {}", BufferTag::NAMES.join(", ")), f[1]))?;
            let (start, size) = parse_extent(f[2], f[3]).map_err(|(m, t)| err(m, t))?;
            let resp = parse_time(f[4], "response time (µs)").map_err(|m| err(m, f[4]))?;
            let gap = parse_time(f[5], "gap to the next arrival (µs)").map_err(|m| err(m, f[5]))?;
            requests.push(TraceRequest {
                line: (i + 1) as u32,
                arrival_ns: arrival,
                op,
                start_sector: start,
                size_sectors: size,
                device: 0,
                measured_response_ns: Some(us_to_ns(resp)),
                gap_ns: us_to_ns(gap),
                tag: Some(tag),
            });
            arrival += us_to_ns(gap);
            if arrival > MAX_TRACE_SPAN_NS {
                return Err(err("the gaps add up to more than 1e9 ms (11.6 days), the longest trace accepted".into(), f[5]));
            }
        }
        check_nonempty(source, requests.len())?;
        Ok(Trace { source: source.into(), format: TraceFormat::Validate, requests })
    }

    /// DiskSim's "ascii" format (see the module documentation).
    pub fn parse_ascii(text: &str, source: &str) -> Result<Trace, TraceError> {
        let mut requests = Vec::new();
        let mut last: Nanos = 0;
        for (i, line, f) in records(text) {
            let err = |message: String, text: &str| TraceError { file: source.into(), line: i + 1, message, text: text.into() };
            if f.len() != 5 {
                return Err(err(format!("expected 5 fields `arrival_ms device start_block size_blocks flags`, found {}", f.len()), line));
            }
            let at = parse_time(f[0], "arrival time (ms)").map_err(|m| err(m, f[0]))?;
            let at = ms_to_ns(at);
            if at < last {
                return Err(err("arrival time goes backwards (the trace must be in arrival order)".into(), f[0]));
            }
            last = at;
            let device: u32 = f[1].parse().map_err(|_| err("device: expected a non-negative integer".into(), f[1]))?;
            let (start, size) = parse_extent(f[2], f[3]).map_err(|(m, t)| err(m, t))?;
            let hex = f[4].strip_prefix("0x").or_else(|| f[4].strip_prefix("0X")).unwrap_or(f[4]);
            let flags = u32::from_str_radix(hex, 16).map_err(|_| err("flags: expected a hexadecimal number".into(), f[4]))?;
            let op = if flags & 1 != 0 { Op::Read } else { Op::Write };
            requests.push(TraceRequest {
                line: (i + 1) as u32,
                arrival_ns: at,
                op,
                start_sector: start,
                size_sectors: size,
                device,
                measured_response_ns: None,
                gap_ns: 0,
                tag: None,
            });
        }
        check_nonempty(source, requests.len())?;
        Ok(Trace { source: source.into(), format: TraceFormat::Ascii, requests })
    }

    /// The first request that does not fit within `capacity_sectors`, as an error.
    pub fn check_capacity(&self, capacity_sectors: u64, drive: &str) -> Result<(), TraceError> {
        match self.requests.iter().find(|r| r.end_sector() > capacity_sectors) {
            None => Ok(()),
            Some(r) => Err(TraceError {
                file: self.source.clone(),
                line: r.line as usize,
                message: format!("request ends at block {} beyond the {capacity_sectors} blocks of {drive}", r.end_sector()),
                text: format!("{} {}", r.start_sector, r.size_sectors),
            }),
        }
    }
}

fn check_nonempty(source: &str, n: usize) -> Result<(), TraceError> {
    if n == 0 {
        return Err(TraceError { file: source.into(), line: 0, message: "the trace has no requests".into(), text: String::new() });
    }
    Ok(())
}

/// The non-empty lines of a trace: (0-based line index, trimmed line, whitespace fields).
fn records(text: &str) -> impl Iterator<Item = (usize, &str, Vec<&str>)> {
    text.lines()
        .enumerate()
        .map(|(i, raw)| (i, raw.trim()))
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| (i, l, l.split_whitespace().collect()))
}

fn parse_op_letter(s: &str) -> Option<Op> {
    match s {
        "R" => Some(Op::Read),
        "W" => Some(Op::Write),
        _ => None,
    }
}

/// The largest block address a trace may name (exclusive): 2^48 blocks of 512 bytes, 128 PiB,
/// far beyond any drive, so that `start + size` and every sector computation stay far from
/// overflow.
pub const MAX_TRACE_BLOCK: u64 = 1 << 48;
/// The largest request a trace may hold: 2^24 blocks (8 GiB).
pub const MAX_TRACE_REQUEST_BLOCKS: u32 = 1 << 24;
/// The longest a trace may span (ascii arrival times; the sum of a validate trace's gaps):
/// 1e9 ms, 11.6 days.
pub const MAX_TRACE_SPAN_NS: Nanos = 1_000_000_000 * crate::time::NS_PER_MS;

/// `start_block size_blocks`: start in [0, 2^48), size in [1, 2^24], and the request ends by 2^48.
pub(crate) fn parse_extent<'a>(start: &'a str, size: &'a str) -> Result<(u64, u32), (String, &'a str)> {
    let s: u64 = start.parse().map_err(|_| ("start block: expected a non-negative integer".to_string(), start))?;
    if s >= MAX_TRACE_BLOCK {
        return Err((format!("start block: must be below 2^48 = {MAX_TRACE_BLOCK}"), start));
    }
    let n = match size.parse::<u32>() {
        Ok(0) => return Err(("size: a request must have at least one block".into(), size)),
        Ok(n) if n <= MAX_TRACE_REQUEST_BLOCKS => n,
        Ok(_) => return Err((format!("size: at most 2^24 = {MAX_TRACE_REQUEST_BLOCKS} blocks (8 GiB) per request"), size)),
        Err(_) => return Err(("size: expected a positive integer number of blocks".into(), size)),
    };
    if s + n as u64 > MAX_TRACE_BLOCK {
        return Err((format!("start block: the request would end past block 2^48 = {MAX_TRACE_BLOCK}"), start));
    }
    Ok((s, n))
}

/// A non-negative, finite time of at most 10^9 units (about 11.6 days in ms, 17 minutes in µs
/// per field: far beyond any disk trace, and overflow-safe once summed).
pub(crate) fn parse_time(s: &str, what: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=1e9).contains(&v) => Ok(v),
        _ => Err(format!("{what}: expected a number in [0, 1e9]")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALIDATE: &str = "W Hit    4583176   4    663.00000  45422.00000\n\
                            R Miss   3962268  12   6657.50000  64047.00000\n\
                            \n\
                            R Doub        10   8   1000        0\n";

    #[test]
    fn validate_lines_become_requests() {
        let t = Trace::parse(VALIDATE, "v.trace").unwrap();
        assert_eq!(t.format, TraceFormat::Validate);
        assert_eq!(t.requests.len(), 3);
        let r = &t.requests[1];
        assert_eq!((r.line, r.op, r.start_sector, r.size_sectors), (2, Op::Read, 3962268, 12));
        assert_eq!(r.measured_response_ns, Some(6_657_500));
        assert_eq!(r.gap_ns, 64_047_000);
        assert_eq!(r.tag, Some(BufferTag::Miss));
        // Open-loop arrivals are the running sum of the gaps.
        assert_eq!(t.requests[0].arrival_ns, 0);
        assert_eq!(r.arrival_ns, 45_422_000);
        assert_eq!(t.requests[2].arrival_ns, 45_422_000 + 64_047_000);
        assert_eq!((t.requests[2].line, t.requests[2].tag), (4, Some(BufferTag::Double)));
    }

    #[test]
    fn ascii_lines_become_requests() {
        let text = "13.191135\t30\t0\t5\t1\n17.829285 20 576560 6 0x0\n17.829285 0 8 24 81\n";
        let t = Trace::parse(text, "a.trace").unwrap();
        assert_eq!(t.format, TraceFormat::Ascii);
        let r: Vec<_> = t.requests.iter().map(|r| (r.arrival_ns, r.device, r.start_sector, r.size_sectors, r.op)).collect();
        assert_eq!(
            r,
            vec![
                (13_191_135, 30, 0, 5, Op::Read),
                (17_829_285, 20, 576560, 6, Op::Write),
                (17_829_285, 0, 8, 24, Op::Read), // 0x81 = synchronous read
            ]
        );
        assert!(t.requests.iter().all(|r| r.measured_response_ns.is_none() && r.tag.is_none()));
    }

    fn err(text: &str) -> String {
        Trace::parse(text, "t.trace").unwrap_err().to_string()
    }

    #[test]
    fn errors_name_file_line_and_text() {
        assert_eq!(err("R Hit 1 4 10 10\nX Hit 1 4 10 10\n"), "t.trace:2: the first field must be R or W: `X`");
        assert_eq!(
            err("R Hit 1 4 10 10\nR Maybe 1 4 10 10\n"),
            "t.trace:2: the second field must be one of Hit, Miss, Doub, Trip: `Maybe`"
        );
        assert_eq!(
            err("R Hit 1 4 10\n"),
            "t.trace:1: expected 6 fields `R|W Hit|Miss|Doub|Trip start_block size_blocks response_us gap_us`, found 5: `R Hit 1 4 10`"
        );
        assert_eq!(err("\n\nR Hit -1 4 10 10\n"), "t.trace:3: start block: expected a non-negative integer: `-1`");
        assert_eq!(err("R Hit 1 0 10 10\n"), "t.trace:1: size: a request must have at least one block: `0`");
        assert_eq!(err("R Hit 1 4 nan 10\n"), "t.trace:1: response time (µs): expected a number in [0, 1e9]: `nan`");
        assert_eq!(err("1.0 0 1 4 1\n0.5 0 1 4 1\n"), "t.trace:2: arrival time goes backwards (the trace must be in arrival order): `0.5`");
        assert_eq!(err("1.0 0 1 4 zz\n"), "t.trace:1: flags: expected a hexadecimal number: `zz`");
        assert_eq!(
            err("1.0 0 1 4\n"),
            "t.trace:1: expected 5 fields `arrival_ms device start_block size_blocks flags`, found 4: `1.0 0 1 4`"
        );
        assert_eq!(err("\n  \n"), "t.trace: the trace has no requests");
    }

    #[test]
    fn capacity_check_names_the_line() {
        let t = Trace::parse("R Hit 0 4 10 10\nW Hit 98 4 10 10\n", "t.trace").unwrap();
        assert!(t.check_capacity(102, "d").is_ok());
        assert_eq!(
            t.check_capacity(100, "d").unwrap_err().to_string(),
            "t.trace:2: request ends at block 102 beyond the 100 blocks of d: `98 4`"
        );
    }

    #[test]
    fn unreadable_file_is_named() {
        let e = Trace::read(Path::new("/nonexistent/x.trace")).unwrap_err();
        assert_eq!(e.to_string(), "/nonexistent/x.trace: cannot read the trace: no such file");
    }
}
