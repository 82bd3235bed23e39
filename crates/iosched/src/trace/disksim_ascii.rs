//! DiskSim's two text formats and MQSim's, as record streams (see the module documentation of
//! [`super`] for the columns; ranges in docs/traces.md):
//! - ascii: `arrival_ms device block size flags` (flags hex, bit 0x1 = read);
//! - MQSim: `arrival_ns device block size type` (type 1 = read, 0 = write), integers;
//! - validate: `R|W tag block size response_us gap_us`: the measured timeline is rebuilt, each
//!   request arriving `gap` after the previous one's completion (arrival + response), so a
//!   dependent replay gives back DiskSim's own timing.

use super::format::Format;
use super::input::TraceInput;
use super::lines::Lines;
use super::reader::{ReadError, RecordReader};
use super::record::{TraceOp, TraceRecord};
use crate::time::Nanos;

pub struct DisksimReader {
    lines: Lines,
    format: Format,
    /// validate: when the next request arrives (the previous completion + its gap).
    next_arrival_ns: Nanos,
}

pub fn reader(input: TraceInput, format: Format) -> Box<dyn RecordReader> {
    Box::new(DisksimReader { lines: Lines::new(input.reader, &input.source), format, next_arrival_ns: 0 })
}

/// Whitespace-separated lines of five fields are DiskSim ascii or MQSim: MQSim when every time
/// in the sample is an integer and every type 0 or 1 (DiskSim writes times in ms with a
/// fraction); six fields starting R or W are validate.
pub fn detect(sample: &[&str], _name: &str) -> Option<Format> {
    let fields: Vec<Vec<&str>> = sample.iter().map(|l| l.split_whitespace().collect()).collect();
    if fields.iter().all(|f| f.len() == 6 && matches!(f[0], "R" | "W")) {
        return Some(Format::DisksimValidate);
    }
    if !fields.iter().all(|f| f.len() == 5 && f[1..4].iter().all(|x| x.bytes().all(|b| b.is_ascii_digit()))) {
        return None;
    }
    let integer_times = fields.iter().all(|f| f[0].bytes().all(|b| b.is_ascii_digit()));
    let binary_types = fields.iter().all(|f| matches!(f[4], "0" | "1"));
    Some(if integer_times && binary_types { Format::Mqsim } else { Format::DisksimAscii })
}

impl DisksimReader {
    fn parse(&mut self, line: &str) -> Result<TraceRecord, ReadError> {
        let n = self.lines.line;
        let bad = |m: String, t: &str| ReadError::Bad(self.lines.error(n, m, t));
        let f: Vec<&str> = line.split_whitespace().collect();
        match self.format {
            Format::DisksimValidate => {
                if f.len() != 6 {
                    return Err(bad(
                        format!("expected 6 fields `R|W Hit|Miss|Doub|Trip start_block size_blocks response_us gap_us`, found {}", f.len()),
                        line,
                    ));
                }
                let op = match f[0] {
                    "R" => TraceOp::Read,
                    "W" => TraceOp::Write,
                    _ => return Err(bad("the first field must be R or W".into(), f[0])),
                };
                if super::BufferTag::parse(f[1]).is_none() {
                    return Err(bad(format!("the second field must be one of {}", super::BufferTag::NAMES.join(", ")), f[1]));
                }
                let (start, size) = super::parse_extent(f[2], f[3]).map_err(|(m, t)| bad(m, t))?;
                let resp = super::parse_time(f[4], "response time (µs)").map_err(|m| bad(m, f[4]))?;
                let gap = super::parse_time(f[5], "gap to the next arrival (µs)").map_err(|m| bad(m, f[5]))?;
                let at = self.next_arrival_ns;
                let done = at + crate::time::us_to_ns(resp);
                let next = done + crate::time::us_to_ns(gap);
                if next > super::MAX_TRACE_SPAN_NS {
                    return Err(ReadError::Fatal(self.lines.error(
                        n,
                        "the trace spans more than 1e9 ms (11.6 days), the longest accepted",
                        f[5],
                    )));
                }
                self.next_arrival_ns = next;
                let mut r = TraceRecord::new(n, at, op, start, size);
                r.sync = true;
                r.complete_ns = Some(done);
                Ok(r)
            }
            Format::DisksimAscii | Format::Mqsim => {
                let mqsim = self.format == Format::Mqsim;
                if f.len() != 5 {
                    let cols = if mqsim {
                        "arrival_ns device start_sector size_sectors type"
                    } else {
                        "arrival_ms device start_block size_blocks flags"
                    };
                    return Err(bad(format!("expected 5 fields `{cols}`, found {}", f.len()), line));
                }
                let at = if mqsim {
                    let ns: u64 = f[0].parse().map_err(|_| bad("arrival time (ns): expected a non-negative integer".into(), f[0]))?;
                    if ns > super::MAX_TRACE_SPAN_NS {
                        return Err(bad("arrival time (ns): at most 1e15 (11.6 days)".into(), f[0]));
                    }
                    ns
                } else {
                    crate::time::ms_to_ns(super::parse_time(f[0], "arrival time (ms)").map_err(|m| bad(m, f[0]))?)
                };
                let device: u32 = f[1].parse().map_err(|_| bad("device: expected an integer in [0, 2^32)".into(), f[1]))?;
                let (start, size) = super::parse_extent(f[2], f[3]).map_err(|(m, t)| bad(m, t))?;
                let op = if mqsim {
                    match f[4] {
                        "1" => TraceOp::Read,
                        "0" => TraceOp::Write,
                        _ => return Err(bad("type: expected 1 (read) or 0 (write)".into(), f[4])),
                    }
                } else {
                    let hex = f[4].strip_prefix("0x").or_else(|| f[4].strip_prefix("0X")).unwrap_or(f[4]);
                    let flags = u32::from_str_radix(hex, 16).map_err(|_| bad("flags: expected a hexadecimal number".into(), f[4]))?;
                    if flags & 1 != 0 {
                        TraceOp::Read
                    } else {
                        TraceOp::Write
                    }
                };
                let mut r = TraceRecord::new(n, at, op, start, size);
                r.device = device;
                Ok(r)
            }
            other => unreachable!("not a DiskSim format: {other:?}"),
        }
    }
}

impl RecordReader for DisksimReader {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, ReadError> {
        let Some(line) = self.lines.next_content_line()? else { return Ok(None) };
        self.parse(&line).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::reader::{ReadOptions, TraceReader};

    fn read(text: &str, format: Option<Format>) -> Result<Vec<TraceRecord>, String> {
        TraceReader::from_bytes(text.as_bytes().to_vec(), "t", ReadOptions { format, skip_bad: false })
            .map_err(|e| e.to_string())?
            .read_all()
            .map_err(|e| e.to_string())
    }

    #[test]
    fn mqsim_lines_are_ns_and_detected() {
        let r = read("11413000 0 657728 16 1\n11565000 1 31244784 64 0\n", None).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].time_ns, r[0].device, r[0].sector, r[0].size_sectors, r[0].op), (11_413_000, 0, 657728, 16, TraceOp::Read));
        assert_eq!((r[1].time_ns, r[1].device, r[1].op, r[1].at), (11_565_000, 1, TraceOp::Write, 2));
    }

    #[test]
    fn disksim_ascii_is_ms_and_detected() {
        let r = read("13.191135\t30\t0\t5\t1\n17.829285 20 576560 6 0x0\n", None).unwrap();
        assert_eq!((r[0].time_ns, r[0].device, r[0].op), (13_191_135, 30, TraceOp::Read));
        assert_eq!(r[1].op, TraceOp::Write);
    }

    #[test]
    fn validate_rebuilds_the_measured_timeline() {
        let r = read("R Hit 0 4 1000 4000\nW Miss 8 4 2000 0\n", None).unwrap();
        assert_eq!((r[0].time_ns, r[0].complete_ns), (0, Some(1_000_000)));
        assert_eq!((r[1].time_ns, r[1].complete_ns), (5_000_000, Some(7_000_000)));
    }

    #[test]
    fn bad_lines_name_file_line_and_text() {
        assert_eq!(
            read("1 0 1 4 1\n2 0 x 4 1\n", Some(Format::Mqsim)).unwrap_err(),
            "t:2: start block: expected a non-negative integer: `x`"
        );
        assert_eq!(read("1 0 1 4 7\n", Some(Format::Mqsim)).unwrap_err(), "t:1: type: expected 1 (read) or 0 (write): `7`");
        let mut rd = TraceReader::from_bytes(
            b"1 0 1 4 1\n2 0 x 4 1\n3 0 1 4 1\n".to_vec(),
            "t",
            ReadOptions { format: Some(Format::Mqsim), skip_bad: true },
        )
        .unwrap();
        let n = rd.by_ref().count();
        assert_eq!((n, rd.skipped()), (2, 1));
        assert_eq!(rd.skipped_examples(), ["t:2: start block: expected a non-negative integer: `x`"]);
    }

    #[test]
    fn the_shared_samples_read_whole() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
        // The README's 24,782 for WebSearch is `wc -l`: its last line has no newline.
        for (name, n) in [("mqsim_wsrch-small.trace", 24_783usize), ("mqsim_tpcc-small.trace", 6_999)] {
            let p = dir.join(name);
            if !p.exists() {
                eprintln!("skipped: {} not present", p.display());
                continue;
            }
            let rd = TraceReader::open(&p, ReadOptions::default()).unwrap();
            assert_eq!(rd.format, Format::Mqsim);
            assert_eq!(rd.read_all().unwrap().len(), n);
        }
    }
}
