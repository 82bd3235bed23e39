//! Per-request records as CSV rows, written as they complete (so a run of any length can keep
//! them). The columns are those of `Results.requests` in Python (run, scheduler, then the
//! record's fields; times in ns from the run's start).

use super::{RecordSink, RequestRecord};
use std::io::Write;

/// The record's own columns (real mode's CSV has these alone).
pub const RECORD_COLUMNS: &str = "req_id,pid,group,op,sync,start_sector,size_sectors,bios,issue_ns,insert_ns,dispatch_ns,start_ns,complete_ns,seek_cylinders,seek_ns,rotation_ns,transfer_ns,cache_hit";

/// Writes one row per record to `out`, prefixed by the run's index and scheduler label. The
/// first write error is kept (and later rows dropped) for the caller to report once the run
/// ends, so a full disk does not lose the summary.
pub struct CsvRecordWriter<W: Write> {
    out: W,
    /// "run,label," of the current run, quoted as CSV needs.
    prefix: String,
    rows: u64,
    error: Option<std::io::Error>,
}

impl<W: Write> CsvRecordWriter<W> {
    pub fn new(mut out: W) -> Self {
        let error = writeln!(out, "run,scheduler,{RECORD_COLUMNS}").err();
        CsvRecordWriter { out, prefix: "0,,".into(), rows: 0, error }
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The output (tests write to a Vec).
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Flushes; returns the rows written, or the first error.
    pub fn finish(mut self) -> std::io::Result<u64> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()?;
        Ok(self.rows)
    }
}

/// A CSV field: quoted (quotes doubled) when it holds a comma, quote or line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The record's columns (`RECORD_COLUMNS`) as one line.
pub fn write_record(out: &mut impl Write, r: &RequestRecord) -> std::io::Result<()> {
    writeln!(
        out,
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
        r.id,
        r.pid,
        r.group,
        r.op.as_str(),
        r.sync,
        r.start_sector,
        r.size_sectors,
        r.bios,
        r.issue_ns,
        r.insert_ns,
        r.dispatch_ns,
        r.start_ns,
        r.complete_ns,
        r.seek_cylinders,
        r.seek_ns,
        r.rotation_ns,
        r.transfer_ns,
        r.cache_hit
    )
}

impl<W: Write> RecordSink for CsvRecordWriter<W> {
    fn begin_run(&mut self, index: usize, label: &str) {
        self.prefix = format!("{index},{},", field(label));
    }

    fn record(&mut self, r: &RequestRecord) {
        if self.error.is_some() {
            return;
        }
        let written = self.out.write_all(self.prefix.as_bytes()).and_then(|()| write_record(&mut self.out, r));
        match written {
            Ok(()) => self.rows += 1,
            Err(e) => self.error = Some(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Op;

    #[test]
    fn rows_carry_the_run_and_a_quoted_label() {
        let mut w = CsvRecordWriter::new(Vec::new());
        w.begin_run(1, "a,\"b\"");
        let r = RequestRecord {
            id: 7,
            pid: 1,
            group: 2,
            op: Op::Write,
            sync: true,
            start_sector: 8,
            size_sectors: 16,
            bios: 2,
            issue_ns: 10,
            insert_ns: 15,
            dispatch_ns: 20,
            start_ns: 25,
            complete_ns: 30,
            seek_cylinders: 3,
            seek_ns: 4,
            rotation_ns: 5,
            transfer_ns: 6,
            cache_hit: false,
        };
        w.record(&r);
        assert_eq!(w.rows(), 1);
        let text = String::from_utf8(w.out.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], format!("run,scheduler,{RECORD_COLUMNS}"));
        assert_eq!(lines[1], "1,\"a,\"\"b\"\"\",7,1,2,write,true,8,16,2,10,15,20,25,30,3,4,5,6,false");
    }
}
