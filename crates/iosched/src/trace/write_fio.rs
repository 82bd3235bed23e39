//! Writing records as a fio version 3 iolog that fio's `read_iolog` replays (`--read_iolog=`)
//! and [`super::fio_iolog`] reads back.
//!
//! The log is: `fio version 3 iolog`, `0 FILE add`, `0 FILE open`, one line per record
//! `ts FILE read|write|trim|sync offset length` (bytes), and `ts FILE close` at the end. Every
//! record goes to the one file the caller names (a device such as `/dev/sdX`, or a path): pid and
//! device are not written, so reading back gives pid 0 (the file's stream) and device 0.
//!
//! Timestamps are microseconds, relative to the first record, plus 1: fio's replay
//! (`delay_since_ttime`) takes a previous timestamp of 0 for "none" and would drop the gap after
//! a record at 0, so the first record is written at 1 µs. (Checked with fio built from
//! axboe/fio f5344384: a log of this form with two 200 ms gaps replays in 401 ms; the same log
//! with its first I/O at 0 in 206 ms.) A record at `t` ns is written at
//! `1 + round((t - t_first) / 1000)` µs, and reads back at that many µs: records whose first
//! time is 1,000 ns and whose times are whole µs read back unchanged. A record before the
//! first one is an error (it has no place in a log relative to the first), as is a length fio
//! cannot read (4 GiB or more: fio reads it with `%u`) or a file name fio would split (empty,
//! with white space, or longer than fio's 256 bytes).

use super::record::{TraceOp, TraceRecord};
use std::io::{self, Write};

/// fio reads a file name with `%256s`.
pub const MAX_FILE_NAME_BYTES: usize = 256;

pub struct FioV3Writer<W: Write> {
    out: W,
    file: String,
    first_ns: Option<u64>,
    last_us: u64,
}

fn invalid(m: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, m)
}

impl<W: Write> FioV3Writer<W> {
    /// Starts a log of I/O on `file`: writes the header and the file's add and open.
    pub fn new(mut out: W, file: &str) -> io::Result<FioV3Writer<W>> {
        if file.is_empty() || file.len() > MAX_FILE_NAME_BYTES || file.chars().any(char::is_whitespace) {
            return Err(invalid(format!(
                "fio iolog: the file name must be 1 to {MAX_FILE_NAME_BYTES} bytes without white space: `{}`",
                crate::input::escape_controls(file)
            )));
        }
        write!(out, "fio version 3 iolog\n0 {file} add\n0 {file} open\n")?;
        Ok(FioV3Writer { out, file: file.to_string(), first_ns: None, last_us: 0 })
    }

    /// The timestamp (µs) a record at `time_ns` is written with, once the first is known.
    fn ts_us(&self, time_ns: u64) -> Option<u64> {
        let first = self.first_ns?;
        let rel = time_ns.checked_sub(first)?;
        Some(1 + rel / 1_000 + u64::from(rel % 1_000 >= 500))
    }

    /// Appends one record.
    pub fn write(&mut self, r: &TraceRecord) -> io::Result<()> {
        self.first_ns.get_or_insert(r.time_ns);
        let ts = self
            .ts_us(r.time_ns)
            .ok_or_else(|| invalid(format!("fio iolog: record {} at {} ns is before the first record", r.at, r.time_ns)))?;
        let (action, offset, length) = match r.op {
            TraceOp::Read => ("read", r.sector * 512, r.bytes()),
            TraceOp::Write => ("write", r.sector * 512, r.bytes()),
            TraceOp::Discard => ("trim", r.sector * 512, r.bytes()),
            TraceOp::Flush => ("sync", 0, 0),
        };
        if length > u32::MAX as u64 {
            return Err(invalid(format!("fio iolog: record {} has {length} bytes; fio reads at most 2^32 - 1", r.at)));
        }
        writeln!(self.out, "{ts} {} {action} {offset} {length}", self.file)?;
        self.last_us = ts;
        Ok(())
    }

    /// Closes the file in the log (at the last record's time), flushes, and gives back the output.
    pub fn finish(mut self) -> io::Result<W> {
        writeln!(self.out, "{} {} close", self.last_us, self.file)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::format::Format;
    use crate::trace::reader::{ReadOptions, TraceReader};

    fn rec(at: u64, time_ns: u64, op: TraceOp, sector: u64, size: u32) -> TraceRecord {
        let mut r = TraceRecord::new(at, time_ns, op, sector, size);
        r.pid = Some(0);
        r.sync = matches!(op, TraceOp::Read | TraceOp::Flush);
        r
    }

    #[test]
    fn writes_what_fio_reads() {
        let mut w = FioV3Writer::new(Vec::new(), "/dev/sdX").unwrap();
        w.write(&rec(1, 5_000_000, TraceOp::Read, 8, 8)).unwrap();
        w.write(&rec(2, 5_250_400, TraceOp::Write, 0, 1)).unwrap();
        w.write(&rec(3, 5_250_600, TraceOp::Flush, 0, 0)).unwrap();
        w.write(&rec(4, 6_000_000, TraceOp::Discard, 1 << 20, 2048)).unwrap();
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(
            text,
            "fio version 3 iolog\n0 /dev/sdX add\n0 /dev/sdX open\n1 /dev/sdX read 4096 4096\n\
             251 /dev/sdX write 0 512\n252 /dev/sdX sync 0 0\n1001 /dev/sdX trim 536870912 1048576\n1001 /dev/sdX close\n"
        );
    }

    #[test]
    fn round_trip_reads_back_identically() {
        // Times from 1 µs in whole µs, ids as the reader gives them (pid 0, lines from 4).
        let ops = [TraceOp::Read, TraceOp::Write, TraceOp::Flush, TraceOp::Discard];
        let mut t = 1_000;
        let records: Vec<TraceRecord> = (0..200u64)
            .map(|i| {
                t += (i * 7919 % 3001) * 1_000;
                let op = ops[(i % 4) as usize];
                let (sector, size) = if op == TraceOp::Flush { (0, 0) } else { (i * 1_000_003 % (1 << 40), 1 + (i * 31 % 2048) as u32) };
                rec(4 + i, t, op, sector, size)
            })
            .collect();
        let mut w = FioV3Writer::new(Vec::new(), "/tmp/file.dat").unwrap();
        for r in &records {
            w.write(r).unwrap();
        }
        let bytes = w.finish().unwrap();
        let rd = TraceReader::from_bytes(bytes, "rt.iolog", ReadOptions::default()).unwrap();
        assert_eq!(rd.format, Format::FioV3);
        assert_eq!(rd.read_all().unwrap(), records);
    }

    #[test]
    fn refuses_what_fio_cannot_read() {
        assert!(FioV3Writer::new(Vec::new(), "a b").is_err());
        assert!(FioV3Writer::new(Vec::new(), "").is_err());
        assert!(FioV3Writer::new(Vec::new(), &"x".repeat(257)).is_err());
        let mut w = FioV3Writer::new(Vec::new(), "f").unwrap();
        w.write(&rec(1, 10_000, TraceOp::Read, 0, 8)).unwrap();
        assert!(w.write(&rec(2, 9_000, TraceOp::Read, 0, 8)).unwrap_err().to_string().contains("before the first record"));
        assert!(w.write(&rec(3, 20_000, TraceOp::Write, 0, 1 << 23)).unwrap_err().to_string().contains("at most 2^32 - 1"));
        // A record earlier than the previous (but not the first) is written as it is: fio
        // replays the step back as no delay.
        w.write(&rec(4, 30_000, TraceOp::Read, 0, 8)).unwrap();
        w.write(&rec(5, 20_000, TraceOp::Read, 0, 8)).unwrap();
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        assert!(text.ends_with("21 f read 0 4096\n11 f read 0 4096\n11 f close\n"), "{text}");
    }
}
