//! Writing [`TraceRecord`]s as blkparse's default text, so that any trace can be read back by
//! [`super::blkparse`] (and looked at as blkparse output).
//!
//! Each record becomes a Q line at its time, a D line at its issue time and a C line at its
//! completion time, where it has them, on cpu 0, with sequence numbers from 1. Lines are grouped
//! by request, not sorted by time: the reader matches D and C to their Q by device and sectors
//! in file order. A record is read back as written, except that a record without a completion is
//! given a later overlapping record's D or C (blktrace cannot tell them apart); and `at` is the
//! Q line's number.

use super::blk_events::{dev_major, dev_minor};
use super::record::TraceRecord;
use std::collections::BTreeMap;
use std::io::Write;

pub struct BlkparseWriter<W: Write> {
    out: W,
    /// The last sequence number written.
    sequence: u32,
    /// Lines written so far.
    lines: u64,
    names: BTreeMap<u32, String>,
}

impl<W: Write> BlkparseWriter<W> {
    pub fn new(out: W) -> BlkparseWriter<W> {
        BlkparseWriter { out, sequence: 0, lines: 0, names: BTreeMap::new() }
    }

    /// Commands to print for these pids (others: blkparse's `(null)`).
    pub fn with_process_names(mut self, names: impl IntoIterator<Item = (u32, String)>) -> BlkparseWriter<W> {
        self.names.extend(names);
        self
    }

    /// Whether a command is known for `pid`.
    pub fn knows(&self, pid: u32) -> bool {
        self.names.contains_key(&pid)
    }

    /// Adds commands learned later (a streaming reader learns them as it goes).
    pub fn add_process_names(&mut self, names: impl IntoIterator<Item = (u32, String)>) {
        self.names.extend(names);
    }

    /// Lines written so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    fn line(&mut self, r: &TraceRecord, rwbs: &str, act: &str, time_ns: u64, pid: u32, detail: &str) -> std::io::Result<()> {
        // blkparse's sequence is a per-CPU u32 that the kernel lets wrap too.
        self.sequence = self.sequence.wrapping_add(1);
        self.lines = self.lines.saturating_add(1);
        writeln!(
            self.out,
            "{:>3},{:<3} {:>2} {:>8} {:>5}.{:09} {:>5} {:>2} {:>3} {}",
            dev_major(r.device),
            dev_minor(r.device),
            0,
            self.sequence,
            time_ns / 1_000_000_000,
            time_ns % 1_000_000_000,
            pid,
            act,
            rwbs,
            detail
        )
    }

    /// Writes one request: its Q line, and D and C lines where it has issue and completion times.
    pub fn write(&mut self, r: &TraceRecord) -> std::io::Result<()> {
        let pid = r.pid.unwrap_or(0);
        // A name with a newline would break the line format: blkparse's `(null)` instead.
        let comm = self.names.get(&pid).filter(|n| !n.contains(['\n', '\r']) && !n.is_empty()).map_or("(null)", |s| s.as_str());
        let extent = format!("{} + {}", r.sector, r.size_sectors);
        let named = format!("{extent} [{comm}]");
        // Once per record, not per line.
        let rwbs = r.rwbs();
        self.line(r, &rwbs, "Q", r.time_ns, pid, &named)?;
        if let Some(t) = r.issue_ns {
            self.line(r, &rwbs, "D", t, pid, &named)?;
        }
        if let Some(t) = r.complete_ns {
            // As blkparse: a completion without sectors shows only the sector.
            let done = if r.size_sectors == 0 { format!("{} [0]", r.sector) } else { format!("{extent} [0]") };
            self.line(r, &rwbs, "C", t, 0, &done)?;
        }
        Ok(())
    }

    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::reader::{ReadOptions, TraceReader};
    use crate::trace::{Format, TraceOp};

    fn records() -> Vec<TraceRecord> {
        let mut v = Vec::new();
        let ops = [TraceOp::Read, TraceOp::Write, TraceOp::Flush, TraceOp::Discard];
        for i in 0..200u64 {
            let op = ops[(i % 4) as usize];
            let size = if op == TraceOp::Flush { 0 } else { 8 + (i % 5) as u32 * 8 };
            let mut r = TraceRecord::new(0, i * 1_000_123, op, i * 64, size);
            r.pid = Some(100 + (i % 3) as u32);
            r.device = (8 << 20) | ((i % 2) as u32 * 16);
            r.sync = i % 3 == 0;
            r.meta = i % 7 == 0;
            r.readahead = op == TraceOp::Read && i % 5 == 0;
            match i % 6 {
                // Without completion, alone on its sectors: read back as written.
                5 => r.issue_ns = Some(r.time_ns + 10),
                4 => r.complete_ns = Some(r.time_ns + 5_000_000_000),
                _ => {
                    r.issue_ns = Some(r.time_ns + 1000);
                    r.complete_ns = Some(r.time_ns + 3_000_000 + i);
                }
            }
            v.push(r);
        }
        v
    }

    #[test]
    fn written_records_read_back_the_same() {
        let recs = records();
        let mut w = BlkparseWriter::new(Vec::new()).with_process_names([(100, "fio".to_string()), (101, "Web Content".to_string())]);
        for r in &recs {
            w.write(r).unwrap();
        }
        let text = w.finish().unwrap();
        assert!(String::from_utf8_lossy(&text).starts_with("  8,0    0        1     0.000000000   100  Q RASM 0 + 8 [fio]\n"));
        let mut rd = TraceReader::from_bytes(text, "w", ReadOptions::default()).unwrap();
        assert_eq!(rd.format, Format::Blkparse);
        let back: Vec<TraceRecord> = rd.by_ref().map(Result::unwrap).collect();
        assert_eq!(back.len(), recs.len());
        for (a, b) in recs.iter().zip(&back) {
            assert_eq!(TraceRecord { at: b.at, ..*a }, *b);
        }
        assert_eq!(rd.process_names(), vec![(100, "fio".to_string()), (101, "Web Content".to_string())]);
    }
}
