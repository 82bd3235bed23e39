//! iosched's own per-request table (`iosched run --requests-csv`) read back as a trace, so that a
//! simulated run can be converted to fio's iolog or blkparse text and replayed on a real device.
//! Each row is a request as the simulated workload issued it: time = `issue_ns`, pid, operation,
//! sector, size, sync; dispatch = `dispatch_ns`, completion = `complete_ns`. The scenario's runs
//! (one per scheduler) are told apart by `device` = the `run` column. Rows are in completion
//! order: a reader wanting issue order sorts (`iosched trace convert` does, in a bounded window).

use super::input::TraceInput;
use super::lines::Lines;
use super::reader::{ReadError, RecordReader};
use super::record::{TraceOp, TraceRecord};

/// The columns this reader needs, by name (the table has more).
const NEEDED: [&str; 10] = ["run", "pid", "op", "sync", "start_sector", "size_sectors", "issue_ns", "dispatch_ns", "complete_ns", "req_id"];

pub struct RequestsCsvReader {
    lines: Lines,
    /// Index of each needed column, once the header is read.
    columns: Option<[usize; 10]>,
}

pub fn reader(input: TraceInput) -> Box<dyn RecordReader> {
    Box::new(RequestsCsvReader { lines: Lines::new(input.reader, &input.source), columns: None })
}

/// The table's header line.
pub fn looks_like(first_line: &str) -> bool {
    first_line.starts_with("run,scheduler,req_id,pid,")
}

/// The CSV fields of a line (the scheduler label may be quoted, with doubled quotes inside).
fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// One run (one scheduler) of a requests table: its `run` number, its scheduler label and how
/// many rows it has.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RunInfo {
    pub run: u32,
    pub scheduler: String,
    pub requests: u64,
}

/// The runs a requests table holds, in `run` order: one pass over the file, reading only the
/// first two columns (`run`, `scheduler`) of each row.
pub fn runs(input: TraceInput) -> Result<Vec<RunInfo>, super::TraceError> {
    let mut lines = Lines::new(input.reader, &input.source);
    let mut found: std::collections::BTreeMap<u32, RunInfo> = std::collections::BTreeMap::new();
    let mut header = true;
    loop {
        let line = match lines.next_content_line() {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => return Err(e.into_error()),
        };
        let n = lines.line;
        if std::mem::take(&mut header) {
            if !looks_like(&line) {
                return Err(lines.error(n, "not iosched's per-request table (its header starts `run,scheduler,req_id,pid,`)", &line));
            }
            continue;
        }
        let f = fields(&line);
        let run =
            f.first().and_then(|r| r.parse::<u32>().ok()).ok_or_else(|| lines.error(n, "run: expected an integer below 2^32", &line))?;
        let label = f.get(1).cloned().unwrap_or_default();
        let entry = found.entry(run).or_insert_with(|| RunInfo { run, scheduler: label.clone(), requests: 0 });
        if entry.scheduler != label {
            return Err(lines.error(n, format!("run {run} is `{}` above and `{label}` here", entry.scheduler), &line));
        }
        entry.requests += 1;
    }
    Ok(found.into_values().collect())
}

impl RecordReader for RequestsCsvReader {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, ReadError> {
        loop {
            let Some(line) = self.lines.next_content_line()? else { return Ok(None) };
            let line = line.as_str();
            let n = self.lines.line;
            let f = fields(line);
            let Some(cols) = self.columns else {
                let mut cols = [0usize; 10];
                for (i, name) in NEEDED.iter().enumerate() {
                    cols[i] = f.iter().position(|h| h == name).ok_or_else(|| {
                        ReadError::Fatal(self.lines.error(
                            n,
                            format!("not iosched's per-request table: no `{name}` column in the header"),
                            line,
                        ))
                    })?;
                }
                self.columns = Some(cols);
                continue;
            };
            let get = |i: usize| f.get(cols[i]).map(String::as_str).unwrap_or("");
            let int = |i: usize| -> Result<u64, ReadError> {
                get(i)
                    .parse::<u64>()
                    .map_err(|_| ReadError::Bad(self.lines.error(n, format!("{}: expected a non-negative integer", NEEDED[i]), get(i))))
            };
            let run = int(0)?;
            let op = match get(2) {
                "read" => TraceOp::Read,
                "write" => TraceOp::Write,
                "flush" => TraceOp::Flush,
                "discard" => TraceOp::Discard,
                other => return Err(ReadError::Bad(self.lines.error(n, "op: expected read, write, flush or discard", other))),
            };
            let sync = match get(3) {
                "true" => true,
                "false" => false,
                other => return Err(ReadError::Bad(self.lines.error(n, "sync: expected true or false", other))),
            };
            // A flush has no extent: size 0, which parse_extent refuses.
            let (sector, size) = if op == TraceOp::Flush {
                (int(4)?.min(super::MAX_TRACE_BLOCK - 1), 0)
            } else {
                super::parse_extent(get(4), get(5)).map_err(|(m, t)| ReadError::Bad(self.lines.error(n, m, t)))?
            };
            let (issue, dispatch, complete) = (int(6)?, int(7)?, int(8)?);
            let pid = u32::try_from(int(1)?).map_err(|_| ReadError::Bad(self.lines.error(n, "pid: at most 2^32 - 1", get(1))))?;
            let mut r = TraceRecord::new(n, issue, op, sector, size);
            r.pid = Some(pid);
            r.device = u32::try_from(run).map_err(|_| ReadError::Bad(self.lines.error(n, "run: at most 2^32 - 1", get(0))))?;
            r.sync = sync;
            r.issue_ns = Some(dispatch);
            r.complete_ns = Some(complete);
            return Ok(Some(r));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::csv::CsvRecordWriter;
    use crate::scenario::{RunOptions, Scenario};
    use crate::trace::{Format, ReadOptions, TraceReader};

    #[test]
    fn runs_lists_each_scheduler_with_its_requests() {
        let text = "run,scheduler,req_id,pid,op\n0,sptf,1,1,read\n1,\"a,b\",2,1,read\n0,sptf,3,1,read\n";
        let input = crate::trace::input::TraceInput::from_bytes(text.as_bytes().to_vec(), "req.csv").unwrap();
        let runs = super::runs(input).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!((runs[0].run, runs[0].scheduler.as_str(), runs[0].requests), (0, "sptf", 2));
        assert_eq!((runs[1].run, runs[1].scheduler.as_str(), runs[1].requests), (1, "a,b", 1));
        let sel = |s: Option<&str>, d: Option<u32>| crate::trace::convert::select_run(&runs, s, d);
        assert_eq!(sel(Some("a,b"), None), Ok(Some(1)));
        assert_eq!(sel(None, Some(0)), Ok(Some(0)));
        assert!(sel(None, None).unwrap_err().contains("holds 2 runs"));
        assert!(sel(Some("cfq"), None).unwrap_err().contains("`sptf` (run 0, 2 requests)"));
        assert!(sel(None, Some(7)).unwrap_err().contains("no run 7"));
        let bad =
            crate::trace::input::TraceInput::from_bytes(b"run,scheduler,req_id,pid,op\n0,sptf,1\n0,fcfs,2\n".to_vec(), "r.csv").unwrap();
        assert!(super::runs(bad).unwrap_err().to_string().contains("r.csv:3"));
    }

    #[test]
    fn a_simulated_run_reads_back_request_for_request() {
        let scn = Scenario::parse(
            "[workload]\nkind = \"closed-queue\"\nqueue_depth = 4\nrequests = 50\nread_fraction = 0.5\n[[scheduler]]\nname = \"sptf\"\n[[scheduler]]\nname = \"fcfs\"\n",
            "t.toml",
        )
        .unwrap();
        let mut csv = CsvRecordWriter::new(Vec::new());
        let runs = scn.run_with(RunOptions { keep_records: true, sink: Some(&mut csv), ..Default::default() }).unwrap();
        let bytes = csv.into_inner();
        let reader = TraceReader::from_bytes(bytes, "req.csv", ReadOptions::default()).unwrap();
        assert_eq!(reader.format, Format::RequestsCsv);
        let recs = reader.read_all().unwrap();
        assert_eq!(recs.len(), 100);
        for (run, result) in runs.iter().enumerate() {
            let mine: Vec<_> = recs.iter().filter(|r| r.device == run as u32).collect();
            assert_eq!(mine.len(), result.records.len());
            for (a, b) in mine.iter().zip(&result.records) {
                assert_eq!((a.time_ns, a.sector, a.size_sectors, a.pid), (b.issue_ns, b.start_sector, b.size_sectors, Some(b.pid)));
                assert_eq!((a.issue_ns, a.complete_ns), (Some(b.dispatch_ns), Some(b.complete_ns)));
            }
        }
    }

    #[test]
    fn a_table_without_its_columns_or_with_a_bad_row_is_named() {
        let e = TraceReader::from_bytes(b"run,scheduler,req_id,pid,x\n".to_vec(), "r.csv", ReadOptions::default())
            .unwrap()
            .read_all()
            .unwrap_err();
        assert!(e.to_string().starts_with("r.csv:1: not iosched's per-request table: no `op` column"), "{e}");
    }
}
