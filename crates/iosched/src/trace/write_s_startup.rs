//! Writing records as an S suite start-up trace (`comm_startup_lat/*.trace`), the format
//! [`super::s_startup`] reads and S's replay-startup-io replays: a start-up recorded here (a
//! block trace of a cold-cache application start) becomes a trace like S's own.
//!
//! One line per record, in the order given (time order: `iosched trace convert` sorts):
//! `comm-pid delta_s size_sectors start_sector Seq|Rand distance seq_offset action time_s C|START`,
//! with the columns derived as they are in every line of S's three traces (checked against
//! them, docs/s-suite.md): `delta_s` = this line's time minus the previous line's (0 on the
//! first); `distance` = start - (previous line's start + this line's size), 0 on the first;
//! `Seq` when |distance| < 8192 sectors (BFQ's seek threshold), else `Rand`; `seq_offset` = the
//! previous line's plus this line's size after a `Seq` line, else 0; the action is blktrace's
//! RWBS (`R`, `RA` readahead, `RM` metadata, `W`, `WS` synchronous write); `time_s` is seconds
//! since the first record; `START` where the process differs from the previous line's (and on
//! the first), else `C`. Times are written with 6 decimals (S's resolution, µs).

use super::record::{TraceOp, TraceRecord};
use std::collections::HashMap;
use std::io::{self, Write};

/// Sectors within which a request counts as sequential (S's traces, BFQ's seek threshold).
pub const SEQ_DISTANCE_SECTORS: i64 = 8192;

pub struct SStartupWriter<W: Write> {
    out: W,
    names: HashMap<u32, String>,
    first_ns: Option<u64>,
    previous: Option<Previous>,
}

#[derive(Clone, Copy)]
struct Previous {
    time_ns: u64,
    sector: u64,
    seq_offset: i64,
    pid: u32,
}

impl<W: Write> SStartupWriter<W> {
    pub fn new(out: W) -> SStartupWriter<W> {
        SStartupWriter { out, names: HashMap::new(), first_ns: None, previous: None }
    }

    /// Process names (a command per pid) learned by the reader.
    pub fn add_process_names(&mut self, names: impl IntoIterator<Item = (u32, String)>) {
        self.names.extend(names);
    }

    pub fn knows(&self, pid: u32) -> bool {
        self.names.contains_key(&pid)
    }

    /// Appends one record. Flushes and discards have no place in a start-up trace (S's replayer
    /// reads and writes blocks) and are an error, as is a record before the first one.
    pub fn write(&mut self, r: &TraceRecord) -> io::Result<()> {
        let letter = match r.op {
            TraceOp::Read => 'R',
            TraceOp::Write => 'W',
            other => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("record {}: a {} has no place in an S start-up trace", r.at, other.as_str()),
                ))
            }
        };
        let first = *self.first_ns.get_or_insert(r.time_ns);
        let time_ns = r
            .time_ns
            .checked_sub(first)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("record {}: earlier than the first record", r.at)))?;
        let pid = r.pid.unwrap_or(0);
        let size = i64::from(r.size_sectors);
        let (delta_ns, distance, start) = match self.previous {
            None => (0, 0, true),
            Some(p) => (time_ns - p.time_ns.min(time_ns), r.sector as i64 - (p.sector as i64 + size), p.pid != pid),
        };
        let seq = self.previous.is_some() && distance.abs() < SEQ_DISTANCE_SECTORS;
        let seq_offset = if seq { self.previous.map_or(0, |p| p.seq_offset) + size } else { 0 };
        let mut action = String::from(letter);
        if r.readahead {
            action.push('A');
        }
        if r.op == TraceOp::Write && r.sync {
            action.push('S');
        }
        if r.meta {
            action.push('M');
        }
        let comm = self.names.get(&pid).map(String::as_str).unwrap_or("unknown");
        // S's comm-pid: the command with white space (never in a comm-pid field) made dashes.
        let comm: String = comm.chars().map(|c| if c.is_whitespace() { '-' } else { c }).collect();
        writeln!(
            self.out,
            "{comm}-{pid} {} {size} {} {} {distance} {seq_offset} {action} {} {}",
            seconds(delta_ns),
            r.sector,
            if seq { "Seq" } else { "Rand" },
            seconds(time_ns),
            if start { "START" } else { "C" }
        )?;
        self.previous = Some(Previous { time_ns, sector: r.sector, seq_offset, pid });
        Ok(())
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Nanoseconds as seconds with 6 decimals (rounded to the µs).
fn seconds(ns: u64) -> String {
    let us = ns / 1_000 + u64::from(ns % 1_000 >= 500);
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::reader::{ReadOptions, TraceReader};
    use crate::trace::Format;

    fn rec(at: u64, t_us: u64, pid: u32, sector: u64, size: u32, ra: bool) -> TraceRecord {
        let mut r = TraceRecord::new(at, t_us * 1_000, TraceOp::Read, sector, size);
        r.pid = Some(pid);
        r.readahead = ra;
        r
    }

    #[test]
    fn the_columns_are_derived_as_in_s_traces_and_read_back() {
        let mut w = SStartupWriter::new(Vec::new());
        w.add_process_names([(7, "bash".to_string()), (9, "ld linux".to_string())]);
        w.write(&rec(1, 100, 7, 1000, 8, false)).unwrap();
        w.write(&rec(2, 150, 7, 1008, 8, true)).unwrap();
        w.write(&rec(3, 160, 7, 1016, 8, true)).unwrap();
        w.write(&rec(4, 1_160, 9, 900_000, 16, false)).unwrap();
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // distance = start - (previous start + this size): 1008 - (1000 + 8) = 0: Seq, offset 8.
        assert_eq!(lines[0], "bash-7 0.000000 8 1000 Rand 0 0 R 0.000000 START");
        assert_eq!(lines[1], "bash-7 0.000050 8 1008 Seq 0 8 RA 0.000050 C");
        assert_eq!(lines[2], "bash-7 0.000010 8 1016 Seq 0 16 RA 0.000060 C");
        assert_eq!(lines[3], "ld-linux-9 0.001000 16 900000 Rand 898968 0 R 0.001060 START");
        let back = TraceReader::from_bytes(text.into_bytes(), "w.trace", ReadOptions::default()).unwrap();
        assert_eq!(back.format, Format::SStartup);
        let recs = back.read_all().unwrap();
        assert_eq!(recs.len(), 4);
        assert_eq!((recs[3].pid, recs[3].sector, recs[3].size_sectors, recs[3].time_ns), (Some(9), 900_000, 16, 1_060_000));
        assert!(recs[1].readahead && !recs[0].readahead);
    }

    #[test]
    fn a_flush_is_refused() {
        let mut w = SStartupWriter::new(Vec::new());
        let f = TraceRecord::new(1, 0, TraceOp::Flush, 0, 0);
        assert!(w.write(&f).unwrap_err().to_string().contains("flush"));
    }
}
