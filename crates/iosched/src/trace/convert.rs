//! `iosched trace convert`: any trace read, written as blkparse text or fio's iolog v3, in time
//! order. Records that arrive out of time order (a simulated run's table is in completion order;
//! merged traces may be slightly out of order) are put back in order within a bounded window.

use super::reader::TraceReader;
use super::record::TraceRecord;
use super::write_blkparse::BlkparseWriter;
use super::write_fio::FioV3Writer;
use super::write_s_startup::SStartupWriter;
use super::TraceError;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;

/// The formats written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Blkparse,
    FioV3,
    /// The S suite's start-up traces (a start-up recorded here, replayed like S's own).
    SStartup,
}

impl OutputFormat {
    pub const NAMES: &'static [&'static str] = &["blkparse", "fio-v3", "s-startup"];
    pub fn parse(s: &str) -> Option<OutputFormat> {
        match s {
            "blkparse" => Some(OutputFormat::Blkparse),
            "fio-v3" => Some(OutputFormat::FioV3),
            "s-startup" => Some(OutputFormat::SStartup),
            _ => None,
        }
    }
}

/// Records in, records out in time order, holding at most `capacity` of them: a record is
/// released once one `window_ns` later has been seen (or the buffer is full, or at the end).
/// One released after a later one went out is counted as `late` (it keeps its own time).
pub struct ReorderWindow {
    heap: BinaryHeap<Reverse<(u64, u64, Keyed)>>,
    window_ns: u64,
    capacity: usize,
    sequence: u64,
    latest_seen_ns: u64,
    last_released_ns: u64,
    pub late: u64,
}

/// A record ordered by nothing (the heap orders by time, then arrival sequence).
#[derive(Clone, Copy, Debug)]
struct Keyed(TraceRecord);
impl PartialEq for Keyed {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for Keyed {}
impl PartialOrd for Keyed {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Keyed {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl ReorderWindow {
    pub fn new(window_ns: u64, capacity: usize) -> ReorderWindow {
        ReorderWindow {
            heap: BinaryHeap::new(),
            window_ns,
            capacity: capacity.max(1),
            sequence: 0,
            latest_seen_ns: 0,
            last_released_ns: 0,
            late: 0,
        }
    }

    /// Adds `r`; returns the records now released, in time order.
    pub fn push(&mut self, r: TraceRecord, out: &mut Vec<TraceRecord>) {
        self.latest_seen_ns = self.latest_seen_ns.max(r.time_ns);
        self.heap.push(Reverse((r.time_ns, self.sequence, Keyed(r))));
        self.sequence += 1;
        while let Some(Reverse((t, _, _))) = self.heap.peek() {
            if self.heap.len() > self.capacity || t.saturating_add(self.window_ns) < self.latest_seen_ns {
                let Reverse((_, _, Keyed(r))) = self.heap.pop().expect("peeked");
                self.release(r, out);
            } else {
                break;
            }
        }
    }

    /// Everything still held, in time order.
    pub fn finish(&mut self, out: &mut Vec<TraceRecord>) {
        while let Some(Reverse((_, _, Keyed(r)))) = self.heap.pop() {
            self.release(r, out);
        }
    }

    fn release(&mut self, r: TraceRecord, out: &mut Vec<TraceRecord>) {
        if r.time_ns < self.last_released_ns {
            self.late += 1;
        }
        self.last_released_ns = self.last_released_ns.max(r.time_ns);
        out.push(r);
    }
}

/// What a conversion did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ConvertReport {
    pub records_read: u64,
    pub written: u64,
    pub skipped_bad: u64,
    pub skipped_other_device: u64,
    /// Released after a later record (beyond the reorder window).
    pub late: u64,
}

/// The default reorder window: 10 s of trace time, at most 1,000,000 records held.
pub const DEFAULT_WINDOW_NS: u64 = 10_000_000_000;
pub const DEFAULT_WINDOW_RECORDS: usize = 1_000_000;

/// Reads `reader` to its end and writes its records (of `device` only, when given) to `out`.
/// `fio_file`: the file name fio's log names (the device to replay on).
pub fn convert(
    reader: &mut TraceReader,
    out: &mut dyn Write,
    format: OutputFormat,
    device: Option<u32>,
    fio_file: &str,
) -> Result<ConvertReport, TraceError> {
    let io =
        |e: std::io::Error| TraceError { file: "<output>".into(), line: 0, message: format!("cannot write: {e}"), text: String::new() };
    let mut report = ConvertReport::default();
    let mut window = ReorderWindow::new(DEFAULT_WINDOW_NS, DEFAULT_WINDOW_RECORDS);
    let mut ready = Vec::new();
    enum Writer<'a> {
        Blk(BlkparseWriter<&'a mut dyn Write>),
        Fio(FioV3Writer<&'a mut dyn Write>),
        S(SStartupWriter<&'a mut dyn Write>),
    }
    let mut writer = match format {
        OutputFormat::Blkparse => Writer::Blk(BlkparseWriter::new(out).with_process_names(reader.process_names())),
        OutputFormat::FioV3 => Writer::Fio(FioV3Writer::new(out, fio_file).map_err(io)?),
        OutputFormat::SStartup => {
            let mut w = SStartupWriter::new(out);
            w.add_process_names(reader.process_names());
            Writer::S(w)
        }
    };
    let write = |w: &mut Writer, rs: &mut Vec<TraceRecord>, report: &mut ConvertReport| -> Result<(), TraceError> {
        for r in rs.drain(..) {
            match w {
                Writer::Blk(b) => b.write(&r),
                Writer::Fio(f) => f.write(&r),
                Writer::S(s) => s.write(&r),
            }
            .map_err(io)?;
            report.written += 1;
        }
        Ok(())
    };
    // Pids whose command was looked up in the reader (it learns names as it reads): once each.
    let mut looked_up = std::collections::HashSet::new();
    while let Some(r) = reader.next_record()? {
        report.records_read += 1;
        if device.is_some_and(|d| d != r.device) {
            report.skipped_other_device += 1;
            continue;
        }
        if let Some(pid) = r.pid {
            match &mut writer {
                Writer::Blk(b) if !b.knows(pid) && looked_up.insert(pid) => b.add_process_names(reader.process_names()),
                Writer::S(s) if !s.knows(pid) && looked_up.insert(pid) => s.add_process_names(reader.process_names()),
                _ => {}
            }
        }
        window.push(r, &mut ready);
        write(&mut writer, &mut ready, &mut report)?;
    }
    window.finish(&mut ready);
    write(&mut writer, &mut ready, &mut report)?;
    match writer {
        Writer::Blk(b) => b.finish().map(|_| ()),
        Writer::Fio(f) => f.finish().map(|_| ()),
        Writer::S(s) => s.finish().map(|_| ()),
    }
    .map_err(io)?;
    report.skipped_bad = reader.skipped();
    report.late = window.late;
    Ok(report)
}

/// The run of a requests table (`iosched run --requests-csv`, one run per scheduler) to convert:
/// the one labelled `scheduler`, or `device` (the run number), or the table's only run. A table
/// of several runs with none chosen is refused with the runs listed: merging every scheduler's
/// run into one log is never what is meant.
pub fn select_run(runs: &[super::requests_csv::RunInfo], scheduler: Option<&str>, device: Option<u32>) -> Result<Option<u32>, String> {
    let listed =
        || runs.iter().map(|r| format!("`{}` (run {}, {} requests)", r.scheduler, r.run, r.requests)).collect::<Vec<_>>().join(", ");
    match (scheduler, device) {
        (Some(_), Some(_)) => Err("give --scheduler or --device, not both".to_string()),
        (Some(label), None) => match runs.iter().find(|r| r.scheduler == label) {
            Some(r) => Ok(Some(r.run)),
            None => Err(format!("--scheduler {label}: no run of that scheduler in the table (its runs: {})", listed())),
        },
        (None, Some(d)) => match runs.iter().any(|r| r.run == d) {
            true => Ok(Some(d)),
            false => Err(format!("--device {d}: the table has no run {d} (its runs: {})", listed())),
        },
        (None, None) if runs.len() > 1 => {
            Err(format!("the table holds {} runs: choose one with --scheduler LABEL: {}", runs.len(), listed()))
        }
        (None, None) => Ok(None),
    }
}

/// [`convert`] from the trace at `path` to the file `out_path`, written as `OUT.part` and renamed
/// once complete, so nothing half-written stands under the name asked for (removed on error).
pub fn convert_file(
    reader: &mut TraceReader,
    out_path: &std::path::Path,
    format: OutputFormat,
    device: Option<u32>,
    fio_file: &str,
) -> Result<ConvertReport, String> {
    let mut part = out_path.as_os_str().to_owned();
    part.push(".part");
    let part = std::path::PathBuf::from(part);
    let written = (|| {
        let file = std::fs::File::create(&part).map_err(|e| format!("{}: {e}", part.display()))?;
        let mut out = std::io::BufWriter::new(file);
        let report = convert(reader, &mut out, format, device, fio_file).map_err(|e| e.to_string())?;
        out.flush().map_err(|e| format!("{}: {e}", part.display()))?;
        std::fs::rename(&part, out_path).map_err(|e| format!("{}: {e}", out_path.display()))?;
        Ok(report)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{TraceOp, TraceReader};

    #[test]
    fn the_window_puts_records_back_in_time_order() {
        let mut w = ReorderWindow::new(10, 100);
        let mut out = Vec::new();
        for (i, t) in [5u64, 3, 9, 1, 30, 2, 50].into_iter().enumerate() {
            w.push(TraceRecord::new(i as u64 + 1, t, TraceOp::Read, 0, 8), &mut out);
        }
        w.finish(&mut out);
        let times: Vec<u64> = out.iter().map(|r| r.time_ns).collect();
        // 1..9 released in order once 30 is seen; 2 came after 30, beyond the window: late.
        assert_eq!(times, vec![1, 3, 5, 9, 2, 30, 50]);
        assert_eq!(w.late, 1);
    }

    #[test]
    fn names_learned_while_reading_reach_the_blkparse_output() {
        let log = "fio version 3 iolog\n10 /data/a add\n11 /data/a open\n20 /data/a read 0 4096\n30 /data/a write 8192 4096\n";
        let mut reader = TraceReader::from_bytes(log.as_bytes().to_vec(), "a.iolog", Default::default()).unwrap();
        let mut out = Vec::new();
        let report = convert(&mut reader, &mut out, OutputFormat::Blkparse, None, "x").unwrap();
        assert_eq!(report.written, 2);
        let text = String::from_utf8(out).unwrap();
        assert!(text.lines().all(|l| l.ends_with("[/data/a]")), "{text}");
        // And back: the same two requests, in order.
        let back = TraceReader::from_bytes(text.into_bytes(), "b.txt", Default::default()).unwrap().read_all().unwrap();
        assert_eq!(
            back.iter().map(|r| (r.op, r.sector, r.size_sectors)).collect::<Vec<_>>(),
            vec![(TraceOp::Read, 0, 8), (TraceOp::Write, 16, 8)]
        );
    }

    #[test]
    fn a_full_buffer_releases_the_earliest() {
        let mut w = ReorderWindow::new(u64::MAX, 2);
        let mut out = Vec::new();
        for t in [3u64, 1, 2, 0] {
            w.push(TraceRecord::new(1, t, TraceOp::Read, 0, 8), &mut out);
        }
        w.finish(&mut out);
        // Holding 2: the third push releases 1; the fourth (0) is itself the earliest, and late.
        assert_eq!(out.iter().map(|r| r.time_ns).collect::<Vec<_>>(), vec![1, 0, 2, 3]);
        assert_eq!(w.late, 1);
    }
}
