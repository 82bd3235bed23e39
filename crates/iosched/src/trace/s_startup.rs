//! The S suite's start-up traces (comm_startup_lat/*.trace) as a record stream. A line is
//! `comm-pid delta_s size_sectors start_sector Seq|Rand distance_sectors seq_offset_sectors
//! action time_s C|START` (whitespace-separated).
//!
//! Each line is one request of the original capture: time_ns from time_s (decimal seconds,
//! exact), pid from the number after the last `-` of comm-pid (comm itself may hold dashes:
//! `jbd2/sdb1-8-268`; [`RecordReader::process_names`] gives it), sector = start_sector,
//! size = size_sectors, device 0, sync. The action is blktrace's RWBS: R, RA (readahead), RM
//! (metadata) read; W, WS write; S, A, M and F are accepted after R or W. delta_s,
//! distance_sectors, seq_offset_sectors, Seq/Rand and C/START are checked but not kept: they
//! are how S's replayer re-times and re-places the requests
//! ([`crate::workload::replay_startup`] replays them that way).

use super::input::TraceInput;
use super::lines::Lines;
use super::reader::{ReadError, RecordReader};
use super::record::{TraceOp, TraceRecord};
use super::units::decimal_s_to_ns;
use super::MAX_TRACE_SPAN_NS;
use std::collections::HashMap;

const COLUMNS: &str = "comm-pid delta_s size_sectors start_sector Seq|Rand distance_sectors seq_offset_sectors action time_s C|START";

/// More distinct processes than this is taken for a malformed trace (each costs memory).
pub const MAX_PROCESSES: usize = 1 << 16;

/// `comm-pid` split at its last dash: (comm, pid).
fn comm_pid(s: &str) -> Option<(&str, u32)> {
    let (comm, pid) = s.rsplit_once('-')?;
    if comm.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((comm, pid.parse().ok()?))
}

/// A first line of ten fields with a comm-pid, Seq or Rand fifth and C or START last.
pub fn looks_like(first_line: &str) -> bool {
    let f: Vec<&str> = first_line.split_whitespace().collect();
    f.len() == 10 && comm_pid(f[0]).is_some() && matches!(f[4], "Seq" | "Rand") && matches!(f[9], "C" | "START")
}

pub struct SStartupReader {
    lines: Lines,
    /// Process names by pid, in order of first appearance.
    names: Vec<(u32, String)>,
    seen: HashMap<u32, usize>,
}

pub fn reader(input: TraceInput) -> Box<dyn RecordReader> {
    Box::new(SStartupReader { lines: Lines::new(input.reader, &input.source), names: Vec::new(), seen: HashMap::new() })
}

impl SStartupReader {
    fn parse(&mut self, line: &str) -> Result<TraceRecord, ReadError> {
        let n = self.lines.line;
        let bad = |m: String, t: &str| ReadError::Bad(self.lines.error(n, m, t));
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 10 {
            return Err(bad(format!("expected 10 fields `{COLUMNS}`, found {}", f.len()), line));
        }
        let (comm, pid) =
            comm_pid(f[0]).ok_or_else(|| bad("comm-pid: expected a name, a dash and a process id below 2^32".into(), f[0]))?;
        decimal_s_to_ns(f[1], MAX_TRACE_SPAN_NS).ok_or_else(|| bad("delta_s: expected a number in [0, 1e6]".into(), f[1]))?;
        let (sector, size) = super::parse_extent(f[3], f[2]).map_err(|(m, t)| bad(m, t))?;
        if !matches!(f[4], "Seq" | "Rand") {
            return Err(bad("expected Seq or Rand".into(), f[4]));
        }
        for i in [5, 6] {
            f[i].parse::<i64>().map_err(|_| {
                bad(format!("{}: expected an integer", if i == 5 { "distance_sectors" } else { "seq_offset_sectors" }), f[i])
            })?;
        }
        let action = f[7];
        let op = match action.as_bytes().first() {
            Some(b'R') => TraceOp::Read,
            Some(b'W') => TraceOp::Write,
            _ => return Err(bad("action: expected R, RA, RM, W or WS (blktrace's RWBS)".into(), action)),
        };
        if !action[1..].bytes().all(|b| matches!(b, b'A' | b'S' | b'M' | b'F')) {
            return Err(bad("action: expected R, RA, RM, W or WS (blktrace's RWBS)".into(), action));
        }
        let time = decimal_s_to_ns(f[8], MAX_TRACE_SPAN_NS).ok_or_else(|| bad("time_s: expected a number in [0, 1e6]".into(), f[8]))?;
        if !matches!(f[9], "C" | "START") {
            return Err(bad("expected C or START".into(), f[9]));
        }
        if !self.seen.contains_key(&pid) {
            if self.names.len() >= MAX_PROCESSES {
                return Err(bad(format!("more than {MAX_PROCESSES} processes"), f[0]));
            }
            self.seen.insert(pid, self.names.len());
            self.names.push((pid, comm.to_string()));
        }
        let mut r = TraceRecord::new(n, time, op, sector, size);
        r.pid = Some(pid);
        r.sync = true;
        r.readahead = action[1..].contains('A');
        r.meta = action[1..].contains('M');
        Ok(r)
    }
}

impl RecordReader for SStartupReader {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, ReadError> {
        let Some(line) = self.lines.next_content_line()? else { return Ok(None) };
        self.parse(&line).map(Some)
    }

    fn process_names(&self) -> Vec<(u32, String)> {
        self.names.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::format::Format;
    use crate::trace::reader::{ReadOptions, TraceReader};

    const LINES: &str = "xterm-31657 \t   0     8   113314048  Rand    -427336      0        RM   4.666589 START\n\
                         xterm-31657  .015820     8   113248520  Rand     -65536      0        RA   4.682409   C\n\
                         jbd2/sdb1-8-268  .000040  16   80  Seq   0  8   WS   4.682515   C\n";

    fn open(text: &str, skip_bad: bool) -> TraceReader {
        TraceReader::from_bytes(text.as_bytes().to_vec(), "x.trace", ReadOptions { format: None, skip_bad }).unwrap()
    }

    #[test]
    fn lines_become_records() {
        let mut rd = open(LINES, false);
        assert_eq!(rd.format, Format::SStartup);
        let r: Vec<_> = rd.by_ref().map(Result::unwrap).collect();
        let got: Vec<_> = r.iter().map(|r| (r.at, r.time_ns, r.pid, r.op, r.sector, r.size_sectors, r.meta, r.readahead, r.sync)).collect();
        assert_eq!(
            got,
            vec![
                (1, 4_666_589_000, Some(31657), TraceOp::Read, 113314048, 8, true, false, true),
                (2, 4_682_409_000, Some(31657), TraceOp::Read, 113248520, 8, false, true, true),
                (3, 4_682_515_000, Some(268), TraceOp::Write, 80, 16, false, false, true),
            ]
        );
        assert_eq!(rd.process_names(), vec![(31657, "xterm".to_string()), (268, "jbd2/sdb1-8".to_string())]);
    }

    #[test]
    fn looks_like_the_first_line_only() {
        assert!(looks_like(LINES.lines().next().unwrap()));
        assert!(!looks_like("11413000 0 657728 16 1"));
        assert!(!looks_like("xterm 0 8 1 Rand 0 0 R 4.6 C"));
        assert!(!looks_like("259,0 1 2 0.000000184 21279 Q RA 2348060440 + 8 [proc]"));
    }

    #[test]
    fn errors_name_file_line_and_text() {
        let e = |t: &str| {
            TraceReader::from_bytes(t.as_bytes().to_vec(), "x.trace", ReadOptions { format: Some(Format::SStartup), skip_bad: false })
                .unwrap()
                .read_all()
                .unwrap_err()
                .to_string()
        };
        assert_eq!(e("x-1 0 8 0 Seq 0 0 D 1.0 C\n"), "x.trace:1: action: expected R, RA, RM, W or WS (blktrace's RWBS): `D`");
        assert_eq!(e("x-1 0 8 0 Seq 0 0 RX 1.0 C\n"), "x.trace:1: action: expected R, RA, RM, W or WS (blktrace's RWBS): `RX`");
        assert_eq!(
            e("x-1 0 8 0 Seq 0 0 R 1.0 C\nx-p 0 8 0 Seq 0 0 R 1.0 C\n"),
            "x.trace:2: comm-pid: expected a name, a dash and a process id below 2^32: `x-p`"
        );
        assert_eq!(e("x-1 0 0 0 Seq 0 0 R 1.0 C\n"), "x.trace:1: size: a request must have at least one block: `0`");
        assert_eq!(e("x-1 0 8 0 Seq 0 0 R -1 C\n"), "x.trace:1: time_s: expected a number in [0, 1e6]: `-1`");
        assert_eq!(e("x-1 0 8 0 Sequential 0 0 R 1 C\n"), "x.trace:1: expected Seq or Rand: `Sequential`");
        assert_eq!(e("x-1 0 8 0 Seq 0 0 R 1 Q\n"), "x.trace:1: expected C or START: `Q`");
        assert_eq!(e("x-1 0 8 0 Seq 0 0 R 1\n"), "x.trace:1: expected 10 fields `comm-pid delta_s size_sectors start_sector Seq|Rand distance_sectors seq_offset_sectors action time_s C|START`, found 9: `x-1 0 8 0 Seq 0 0 R 1`");
    }

    #[test]
    fn skip_bad_counts_and_goes_on() {
        let mut rd = open("x-1 0 8 0 Seq 0 0 R 1.0 C\nx-1 0 8 0 Seq 0 0 Q 1.0 C\nx-1 0 8 8 Seq 0 0 R 1.5 C\n", true);
        let n = rd.by_ref().map(Result::unwrap).count();
        assert_eq!((n, rd.skipped()), (2, 1));
    }

    #[test]
    fn the_shared_samples_read_whole() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
        for (name, n, procs) in
            [("s_startup_xterm.trace", 718, 2), ("s_startup_gnometerm.trace", 2_781, 0), ("s_startup_lowriter.trace", 1_268, 0)]
        {
            let p = dir.join(name);
            if !p.exists() {
                eprintln!("skipped: {} not present", p.display());
                continue;
            }
            let mut rd = TraceReader::open(&p, ReadOptions::default()).unwrap();
            assert_eq!(rd.format, Format::SStartup, "{name}");
            let r: Vec<_> = rd.by_ref().map(Result::unwrap).collect();
            assert_eq!(r.len(), n, "{name}");
            assert!(r.windows(2).all(|w| w[0].time_ns <= w[1].time_ns), "{name}: capture times in order");
            if procs > 0 {
                assert_eq!(rd.process_names().len(), procs, "{name}");
            }
            // The README: 5.9, 20.1 and 46.4 MiB.
            let mib = r.iter().map(|r| r.bytes()).sum::<u64>() as f64 / (1 << 20) as f64;
            let want = match name {
                "s_startup_xterm.trace" => 5.9,
                "s_startup_gnometerm.trace" => 20.1,
                _ => 46.4,
            };
            assert!((mib - want).abs() < 0.06, "{name}: {mib} MiB");
        }
    }
}
