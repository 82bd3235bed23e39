//! fio's iolog, versions 2 and 3, as a record stream (what fio's `read_iolog` in iolog.c
//! accepts; the writer is [`super::write_fio`]).
//!
//! - The first line is `fio version 2 iolog` or `fio version 3 iolog`.
//! - v2 lines: `file add|open|close` and `file read|write|sync|datasync|trim|wait offset length`;
//!   v3 lines: the same preceded by a timestamp, and no `wait`.
//! - Offsets and lengths are bytes in the file (not the device): the start is rounded down and
//!   the end up to 512 B sectors. Each file is a stream: its pid is its index in order of `add`
//!   (0, 1, ...), and [`RecordReader::process_names`] gives the file names; device is 0. A file
//!   must be added before it is used (fio cannot replay an I/O on a file it has not added).
//! - sync and datasync become [`TraceOp::Flush`] (sector 0, size 0); trim [`TraceOp::Discard`].
//!   Only reads and flushes are marked sync: the log does not say how writes were issued.
//! - Time, v3: the timestamp, microseconds since fio opened the log (fio's `log_io_u` writes
//!   `utime_since_now(&td->io_log_start_time)`). Taken as written: fio's replay waits
//!   `ts - previous ts` before each entry, none when that is negative or the previous was 0.
//! - Time, v2: `wait` lines. In fio's code (`read_iolog_get`, since 2009) a wait's offset field
//!   is a deadline in **milliseconds since fio started**: replay sleeps until then, not at all if
//!   it has passed. (fio's HOWTO says "microseconds, relative to the previous wait"; the code
//!   does not do that, and the code is followed here.) A request's time is the latest deadline
//!   before it, and 0 for all requests of a log without waits.
//! - The length of a request must fit fio's 32-bit `%u` (below 4 GiB).

use super::input::TraceInput;
use super::lines::Lines;
use super::reader::{ReadError, RecordReader};
use super::record::{TraceOp, TraceRecord};
use super::units::{byte_extent, int_units_to_ns};
use super::MAX_TRACE_SPAN_NS;
use std::collections::HashMap;

/// More distinct files than this in one log is taken for a malformed log (each costs memory).
pub const MAX_FILES: usize = 1 << 16;

pub struct FioReader {
    lines: Lines,
    version: u32,
    header_seen: bool,
    /// Stream id (index) of each added file, and the names in order of `add`.
    ids: HashMap<String, u32>,
    names: Vec<String>,
    /// v2: the latest `wait` deadline, ns since fio started.
    wait_ns: u64,
}

pub fn reader(input: TraceInput, version: u32) -> Box<dyn RecordReader> {
    Box::new(FioReader::new(input, version))
}

impl FioReader {
    pub fn new(input: TraceInput, version: u32) -> FioReader {
        FioReader {
            lines: Lines::new(input.reader, &input.source),
            version,
            header_seen: false,
            ids: HashMap::new(),
            names: Vec::new(),
            wait_ns: 0,
        }
    }

    /// One line after the header: a record, or None for a file action or a wait.
    fn parse(&mut self, line: &str) -> Result<Option<TraceRecord>, ReadError> {
        let n = self.lines.line;
        let bad = |m: String, t: &str| ReadError::Bad(self.lines.error(n, m, t));
        let f: Vec<&str> = line.split_whitespace().collect();
        let (time_ns, rest) = if self.version == 3 {
            let Some((ts, rest)) = f.split_first() else { return Ok(None) };
            let t = int_units_to_ns(ts, 1_000, MAX_TRACE_SPAN_NS)
                .ok_or_else(|| bad("timestamp (µs): expected an integer in [0, 1e12] (11.6 days)".into(), ts))?;
            (t, rest)
        } else {
            (self.wait_ns, &f[..])
        };
        let shape = if self.version == 3 {
            "`ts file add|open|close` or `ts file op offset length`"
        } else {
            "`file add|open|close` or `file op offset length`"
        };
        match rest {
            [file, action] => {
                match *action {
                    "add" => {
                        if !self.ids.contains_key(*file) {
                            if self.names.len() >= MAX_FILES {
                                return Err(bad(format!("more than {MAX_FILES} files in one log"), file));
                            }
                            self.ids.insert(file.to_string(), self.names.len() as u32);
                            self.names.push(file.to_string());
                        }
                    }
                    "open" | "close" => {
                        if !self.ids.contains_key(*file) {
                            return Err(bad(format!("{action} of a file not added before"), file));
                        }
                    }
                    _ => return Err(bad("file action: expected add, open or close".into(), action)),
                }
                Ok(None)
            }
            [file, action, offset, length] => {
                let op = match *action {
                    "read" => TraceOp::Read,
                    "write" => TraceOp::Write,
                    "trim" => TraceOp::Discard,
                    "sync" | "datasync" => TraceOp::Flush,
                    "wait" if self.version == 3 => {
                        return Err(bad("`wait` is not allowed in a version 3 log (fio ignores it: timestamps time the log)".into(), line));
                    }
                    "wait" => {
                        // fio reads the deadline with %llu and the length with %u; the length is unused.
                        length.parse::<u32>().map_err(|_| bad("length: expected an integer below 2^32".into(), length))?;
                        let at = int_units_to_ns(offset, crate::time::NS_PER_MS, MAX_TRACE_SPAN_NS)
                            .ok_or_else(|| bad("wait (ms since fio started): expected an integer in [0, 1e9]".into(), offset))?;
                        self.wait_ns = self.wait_ns.max(at);
                        return Ok(None);
                    }
                    _ => return Err(bad("operation: expected read, write, sync, datasync, trim or wait".into(), action)),
                };
                let Some(&id) = self.ids.get(*file) else {
                    return Err(bad(format!("{action} on a file not added before"), file));
                };
                if length.parse::<u32>().is_err() {
                    return Err(bad("length (bytes): expected an integer below 2^32 (fio reads it as 32 bits)".into(), length));
                }
                let (sector, size) = if op == TraceOp::Flush {
                    offset.parse::<u64>().map_err(|_| bad("offset (bytes): expected a non-negative integer".into(), offset))?;
                    (0, 0)
                } else {
                    byte_extent(offset, length).map_err(|(m, t)| bad(m, t))?
                };
                let mut r = TraceRecord::new(n, time_ns, op, sector, size);
                r.pid = Some(id);
                r.sync = matches!(op, TraceOp::Read | TraceOp::Flush);
                Ok(Some(r))
            }
            _ => Err(bad(format!("expected {shape}, found {} fields", f.len()), line)),
        }
    }
}

impl RecordReader for FioReader {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, ReadError> {
        loop {
            let Some(line) = self.lines.next_content_line()? else { return Ok(None) };
            if !self.header_seen {
                let want = format!("fio version {} iolog", self.version);
                if !line.starts_with(&want) {
                    return Err(ReadError::Fatal(self.lines.error(self.lines.line, format!("expected the header `{want}`"), &line)));
                }
                self.header_seen = true;
                continue;
            }
            if let Some(r) = self.parse(&line)? {
                return Ok(Some(r));
            }
        }
    }

    /// Each file's stream id (used as the pid) and its name.
    fn process_names(&self) -> Vec<(u32, String)> {
        self.names.iter().enumerate().map(|(i, n)| (i as u32, n.clone())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::format::Format;
    use crate::trace::reader::{ReadOptions, TraceReader};

    fn open(text: &str, skip_bad: bool) -> TraceReader {
        TraceReader::from_bytes(text.as_bytes().to_vec(), "t.iolog", ReadOptions { format: None, skip_bad }).unwrap()
    }

    fn read(text: &str) -> Result<Vec<TraceRecord>, String> {
        open(text, false).read_all().map_err(|e| e.to_string())
    }

    #[test]
    fn v3_lines_become_records_in_us() {
        let text = "fio version 3 iolog\n14 /a add\n15 /b add\n394 /a open\n395 /b open\n\
                    399 /a write 122880 4096\n426 /b read 1765376 8192\n500 /a sync 0 0\n\
                    501 /b datasync 0 0\n600 /a trim 1048576 65536\n700 /a close\n";
        let mut rd = open(text, false);
        assert_eq!(rd.format, Format::FioV3);
        let r: Vec<_> = rd.by_ref().map(Result::unwrap).collect();
        let got: Vec<_> = r.iter().map(|r| (r.at, r.time_ns, r.pid, r.op, r.sector, r.size_sectors, r.sync)).collect();
        assert_eq!(
            got,
            vec![
                (6, 399_000, Some(0), TraceOp::Write, 240, 8, false),
                (7, 426_000, Some(1), TraceOp::Read, 3448, 16, true),
                (8, 500_000, Some(0), TraceOp::Flush, 0, 0, true),
                (9, 501_000, Some(1), TraceOp::Flush, 0, 0, true),
                (10, 600_000, Some(0), TraceOp::Discard, 2048, 128, false),
            ]
        );
        assert_eq!(rd.process_names(), vec![(0, "/a".to_string()), (1, "/b".to_string())]);
        assert!(r.iter().all(|r| r.device == 0 && r.complete_ns.is_none()));
    }

    #[test]
    fn v2_time_is_the_latest_wait_deadline_in_ms() {
        let text = "fio version 2 iolog\nf add\nf open\nf read 0 4096\nf wait 250 0\nf read 4096 512\n\
                    f wait 100 0\nf write 1000 100\nf wait 300 0\nf write 0 512\n";
        let r = read(text).unwrap();
        let got: Vec<_> = r.iter().map(|r| (r.time_ns, r.sector, r.size_sectors)).collect();
        // A deadline already passed (100 ms after 250 ms) does not move time back; an unaligned
        // extent (bytes 1000..1100) covers sectors 1 and 2.
        assert_eq!(got, vec![(0, 0, 8), (250_000_000, 8, 1), (250_000_000, 1, 2), (300_000_000, 0, 1)]);
    }

    #[test]
    fn v2_without_waits_is_all_at_zero() {
        let r = read("fio version 2 iolog\nf add\nf open\nf write 0 4096\nf read 8192 4096\nf close\n").unwrap();
        assert_eq!(r.iter().map(|r| r.time_ns).collect::<Vec<_>>(), vec![0, 0]);
    }

    #[test]
    fn errors_name_file_line_and_text() {
        let e = |t: &str| read(t).unwrap_err();
        assert_eq!(e("fio version 3 iolog\n1 f add\n2 g read 0 512\n"), "t.iolog:3: read on a file not added before: `g`");
        assert_eq!(
            e("fio version 3 iolog\n1 f add\nx f read 0 512\n"),
            "t.iolog:3: timestamp (µs): expected an integer in [0, 1e12] (11.6 days): `x`"
        );
        assert_eq!(
            e("fio version 3 iolog\n1 f add\n2 f read 0 0\n"),
            "t.iolog:3: size (bytes): a request must have at least one byte: `0`"
        );
        assert_eq!(
            e("fio version 3 iolog\n1 f add\n2 f erase 0 512\n"),
            "t.iolog:3: operation: expected read, write, sync, datasync, trim or wait: `erase`"
        );
        assert_eq!(
            e("fio version 3 iolog\n1 f add\n2 f wait 10 0\n"),
            "t.iolog:3: `wait` is not allowed in a version 3 log (fio ignores it: timestamps time the log): `2 f wait 10 0`"
        );
        assert_eq!(
            e("fio version 3 iolog\n1 f add\n2 f read 0\n"),
            "t.iolog:3: expected `ts file add|open|close` or `ts file op offset length`, found 4 fields: `2 f read 0`"
        );
        assert_eq!(e("fio version 2 iolog\nf add\nf read -5 512\n"), "t.iolog:3: offset (bytes): expected a non-negative integer: `-5`");
        assert_eq!(
            e("fio version 2 iolog\nf add\nf read 0 4294967296\n"),
            "t.iolog:3: length (bytes): expected an integer below 2^32 (fio reads it as 32 bits): `4294967296`"
        );
        assert_eq!(e("fio version 2 iolog\nf open\n"), "t.iolog:2: open of a file not added before: `f`");
        assert_eq!(
            e("fio version 2 iolog\nf add\nf wait soon 0\n"),
            "t.iolog:3: wait (ms since fio started): expected an integer in [0, 1e9]: `soon`"
        );
        // The version given and the header disagree: fatal, even with skip_bad.
        let mut rd = TraceReader::from_bytes(
            b"fio version 2 iolog\nf add\n".to_vec(),
            "t.iolog",
            ReadOptions { format: Some(Format::FioV3), skip_bad: true },
        )
        .unwrap();
        assert_eq!(
            rd.next_record().unwrap_err().to_string(),
            "t.iolog:1: expected the header `fio version 3 iolog`: `fio version 2 iolog`"
        );
    }

    #[test]
    fn skip_bad_counts_and_goes_on() {
        let mut rd = open("fio version 3 iolog\n1 f add\n2 f read 0 512\n3 f read x 512\n4 g read 0 512\n5 f write 512 512\n", true);
        let n = rd.by_ref().map(Result::unwrap).count();
        assert_eq!((n, rd.skipped(), rd.records()), (2, 2, 2));
        assert_eq!(rd.skipped_examples()[1], "t.iolog:5: read on a file not added before: `g`");
    }

    #[test]
    fn the_shared_samples_read_whole() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
        // 516 lines: the header, add, open, close and 512 I/Os (354 reads, 158 writes, 4 KiB).
        for (name, format) in [("fio33_generated_v2.iolog", Format::FioV2), ("fio33_generated_v3.iolog", Format::FioV3)] {
            let p = dir.join(name);
            if !p.exists() {
                eprintln!("skipped: {} not present", p.display());
                continue;
            }
            let mut rd = TraceReader::open(&p, ReadOptions::default()).unwrap();
            assert_eq!(rd.format, format);
            let r: Vec<_> = rd.by_ref().map(Result::unwrap).collect();
            assert_eq!(r.len(), 512);
            assert_eq!(r.iter().filter(|r| r.op == TraceOp::Read).count(), 354);
            assert_eq!(r.iter().filter(|r| r.op == TraceOp::Write).count(), 158);
            assert!(r.iter().all(|r| r.size_sectors == 8 && r.pid == Some(0) && r.end_sector() <= 4096));
            assert_eq!(rd.process_names(), vec![(0, "fio-sample.dat".to_string())]);
            assert_eq!((r[0].op, r[0].sector), (TraceOp::Write, 240));
            if format == Format::FioV3 {
                assert_eq!((r[0].time_ns, r[511].time_ns), (399_000, 26_759_000));
                assert!(r.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
            } else {
                assert!(r.iter().all(|r| r.time_ns == 0));
            }
        }
    }
}
