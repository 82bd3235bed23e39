//! blkparse's default text output (`%D %2c %8s %5T.%9t %5p %2a %3d` and per action its
//! details), read as [`BlkEvent`]s line by line in constant memory, and as requests through
//! [`BlkRequests`].
//!
//! After the header (`maj,min cpu sequence seconds.nanoseconds pid action RWBS`):
//! - Q, I, D, B: `sector + n [comm]` (SCSI pass-through: `bytes [(cdb)] [comm]`);
//! - M, F, G, S: `sector + n [comm]`;
//! - C, R: `sector + n [error]` or `sector [error]` (no sectors), pass-through `[(cdb)] [error]`;
//! - P: `[comm]`; U, UT: `[comm] count`; X: `sector / new_sector [comm]`;
//! - A: `sector + n <- (maj,min) from_sector` (the line's device is where the bio went);
//! - m: a notify message.
//!
//! blkparse -t's `(elapsed)` before the brackets is accepted and ignored. The summary blkparse
//! prints at the end (from a `CPUn (...)` or `Total (...)` line on) is not events and is
//! skipped, as are blank lines and blkparse's `Input file X added` notes. Process names come
//! from `[comm]` (blkparse's `(null)`: none).

use super::blk_events::{categories_of_rwbs, category, code, code_of_letters, make_dev, BlkEvent, BlkPdu, EventSource};
use super::blk_requests::BlkRequests;
use super::input::TraceInput;
use super::lines::Lines;
use super::reader::{ReadError, RecordReader};
use std::collections::BTreeMap;

/// Whether a trace's first line is a blkparse event line.
pub fn looks_like(first_line: &str) -> bool {
    parse_line(first_line, 1).is_ok()
}

/// The start of blkparse's summary: `CPU3 (sda):`, `Total (sda):`, or where those are left out
/// (blkparse -s off, one CPU), `Throughput (R/W): ...` or `Events (sda): n entries`.
fn is_summary(line: &str) -> bool {
    let cpu = line.strip_prefix("CPU").is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit())) && line.contains(" (");
    cpu || ["Total (", "Throughput (", "Events ("].iter().any(|p| line.starts_with(p))
}

/// The next whitespace-separated field of `rest`, and what follows it.
fn field<'a>(rest: &mut &'a str) -> Option<&'a str> {
    let s = rest.trim_start();
    if s.is_empty() {
        return None;
    }
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    *rest = &s[end..];
    Some(&s[..end])
}

fn number<T: std::str::FromStr>(s: Option<&str>, what: &str) -> Result<T, String> {
    let s = s.ok_or_else(|| format!("{what}: missing"))?;
    s.parse().map_err(|_| format!("{what}: expected a non-negative integer, found `{s}`"))
}

/// `seconds.nanoseconds` (up to 9 digits after the point) in ns, without overflow.
fn parse_time(s: &str) -> Result<u64, String> {
    let bad = || format!("time: expected seconds.nanoseconds, found `{s}`");
    let (sec, frac) = s.split_once('.').ok_or_else(bad)?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) || !sec.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let sec: u64 = sec.parse().map_err(|_| bad())?;
    let ns = 10u64.pow(9 - frac.len() as u32) * frac.parse::<u64>().map_err(|_| bad())?;
    sec.checked_mul(1_000_000_000).and_then(|t| t.checked_add(ns)).ok_or_else(|| format!("time: too large, `{s}`"))
}

/// `maj,min` (or `(maj,min)`) as a dev_t.
fn parse_dev(s: &str) -> Result<u32, String> {
    let bad = || format!("device: expected major,minor, found `{s}`");
    let (a, b) = s.trim_start_matches('(').trim_end_matches(')').split_once(',').ok_or_else(bad)?;
    make_dev(a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?).ok_or_else(bad)
}

/// The text in `[...]` at the start of `rest` (up to the last `]`: a command may hold one), and
/// what follows.
fn bracketed(rest: &str, what: &str) -> Result<(String, String), String> {
    let s = rest.trim_start();
    let bad = || format!("expected [{what}], found `{s}`");
    let inner = s.strip_prefix('[').ok_or_else(bad)?;
    let close = inner.rfind(']').ok_or_else(bad)?;
    Ok((inner[..close].to_string(), inner[close + 1..].trim().to_string()))
}

/// Skips blkparse -t's `(elapsed)` or a pass-through command's `(cdb)`.
fn skip_parenthesized(rest: &str) -> &str {
    let s = rest.trim_start();
    match s.strip_prefix('(').and_then(|r| r.find(')').map(|i| &r[i + 1..])) {
        Some(after) => after,
        None => s,
    }
}

/// `sector + n` at the start of `rest`: (sector, sectors), what follows.
fn extent(rest: &mut &str) -> Result<(u64, u32), String> {
    let sector = number(field(rest), "sector")?;
    if field(rest) != Some("+") {
        return Err("expected `sector + sectors`".into());
    }
    let n: u32 = number(field(rest), "sectors")?;
    Ok((sector, n))
}

fn bytes_of(sectors: u32) -> Result<u32, String> {
    sectors.checked_mul(512).ok_or_else(|| format!("sectors: {sectors} is more than 4 GiB"))
}

/// One event line: the event, and the command it names (not blkparse's `(null)`).
fn parse_line(line: &str, at: u64) -> Result<(BlkEvent, Option<String>), String> {
    let mut rest = line;
    let device = parse_dev(field(&mut rest).ok_or("empty line")?)?;
    let cpu = number(field(&mut rest), "cpu")?;
    let sequence = number(field(&mut rest), "sequence")?;
    let time_ns = parse_time(field(&mut rest).ok_or("time: missing")?)?;
    let pid = number(field(&mut rest), "pid")?;
    let act = field(&mut rest).ok_or("action: missing")?;
    let rwbs = field(&mut rest).ok_or("RWBS: missing")?;
    let mut cat = categories_of_rwbs(rwbs).ok_or_else(|| format!("RWBS: not blkparse's letters: `{rwbs}`"))?;
    let mut e = BlkEvent { at, sequence, time_ns, sector: 0, bytes: 0, action: 0, pid, device, cpu, error: 0, pdu: BlkPdu::None };
    let mut comm = None;
    let code = if act == "m" {
        cat |= category::NOTIFY;
        e.pdu = BlkPdu::Message(rest.trim().to_string());
        code::TN_MESSAGE
    } else {
        code_of_letters(act).ok_or_else(|| format!("action: unknown `{act}`"))?
    };
    let pass_through =
        |rest: &str| !rest.trim_start().starts_with('[') && !rest.split_whitespace().nth(1).is_some_and(|t| t == "+" || t == "/");
    match code {
        code::TN_MESSAGE => {}
        code::QUEUE | code::INSERT | code::ISSUE | code::BOUNCE if pass_through(rest) => {
            cat |= category::PC;
            e.bytes = number(field(&mut rest), "bytes")?;
            comm = Some(bracketed(skip_parenthesized(rest), "command")?.0);
        }
        code::COMPLETE | code::REQUEUE => {
            let s = rest.trim_start();
            if s.starts_with('(') || s.starts_with('[') {
                cat |= category::PC;
            } else {
                e.sector = number(field(&mut rest), "sector")?;
                if rest.trim_start().starts_with('+') {
                    field(&mut rest);
                    e.bytes = bytes_of(number(field(&mut rest), "sectors")?)?;
                }
            }
            let (err, tail) = bracketed(skip_parenthesized(rest), "error")?;
            let v: i64 = err.parse().map_err(|_| format!("error: expected an integer, found `{err}`"))?;
            // blkparse prints the u16 as an int; a negative errno is taken as the kernel stores it.
            e.error = i16::try_from(v).map(|x| x as u16).or_else(|_| u16::try_from(v)).map_err(|_| format!("error: {v} out of range"))?;
            if !tail.is_empty() {
                return Err(format!("unexpected `{tail}` after the error"));
            }
        }
        code::PLUG => comm = Some(bracketed(rest, "command")?.0),
        code::UNPLUG_IO | code::UNPLUG_TIMER => {
            let (c, tail) = bracketed(rest, "command")?;
            comm = Some(c);
            e.pdu = BlkPdu::Unplug { count: number(Some(tail.as_str()), "unplug count")? };
        }
        code::REMAP => {
            let (sector, n) = extent(&mut rest)?;
            (e.sector, e.bytes) = (sector, bytes_of(n)?);
            if field(&mut rest) != Some("<-") {
                return Err("remap: expected `sector + n <- (maj,min) from_sector`".into());
            }
            let dev_from = parse_dev(field(&mut rest).ok_or("remap: source device missing")?)?;
            let sector_from = number(field(&mut rest), "remap: source sector")?;
            e.pdu = BlkPdu::Remap { dev_from, dev_to: device, sector_from };
        }
        code::SPLIT => {
            e.sector = number(field(&mut rest), "sector")?;
            if field(&mut rest) != Some("/") {
                return Err("split: expected `sector / new_sector [comm]`".into());
            }
            e.pdu = BlkPdu::Split { new_sector: number(field(&mut rest), "split: new sector")? };
            comm = Some(bracketed(rest, "command")?.0);
        }
        _ => {
            let (sector, n) = extent(&mut rest)?;
            (e.sector, e.bytes) = (sector, bytes_of(n)?);
            comm = Some(bracketed(skip_parenthesized(rest), "command")?.0);
        }
    }
    e.action = (cat as u32) << 16 | code as u32;
    Ok((e, comm.filter(|c| c != "(null)" && !c.is_empty())))
}

/// The kernel's `blk` ftrace tracer's line (`/sys/kernel/tracing/trace` with
/// `current_tracer = blk`, no blktrace needed): `task-pid [cpu] flags seconds.micros: maj,min
/// action RWBS details`, rewritten as blkparse's `maj,min cpu sequence seconds.micros pid action
/// RWBS details` (the sequence is the line's number), or None when the line is not one.
pub fn ftrace_as_blkparse(line: &str, sequence: u64) -> Option<String> {
    let open = line.find(" [")?;
    let (task_pid, rest) = line.split_at(open);
    let pid = task_pid.trim().rsplit_once('-')?.1;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let rest = rest.trim_start().strip_prefix('[')?;
    let (cpu, rest) = rest.split_once(']')?;
    let cpu = cpu.trim().trim_start_matches('0');
    let cpu = if cpu.is_empty() { "0" } else { cpu };
    if !cpu.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // The flags column (irq-info) may be there or not; the time ends with a colon.
    let (time, details) = rest.split_once(": ")?;
    let time = time.split_whitespace().last()?;
    Some(format!("{} {cpu} {sequence} {time} {pid} {}", details.split_whitespace().next()?, {
        let d = details.trim_start();
        &d[d.find(char::is_whitespace)?..]
    }))
}

/// Whether a trace's first event line is the kernel's blk ftrace tracer's.
pub fn ftrace_looks_like(first_line: &str) -> bool {
    ftrace_as_blkparse(first_line, 1).is_some_and(|l| parse_line(&l, 1).is_ok())
}

/// blkparse text (or the kernel's blk ftrace text) as events.
pub struct BlkparseEvents {
    lines: Lines,
    names: BTreeMap<u32, String>,
    /// The summary has begun: the rest is not events.
    summary: bool,
    /// Lines are ftrace's (`# tracer: blk` comments, `task-pid [cpu] ... time:` prefixes).
    ftrace: bool,
}

impl BlkparseEvents {
    pub fn new(input: TraceInput) -> BlkparseEvents {
        BlkparseEvents { lines: Lines::new(input.reader, &input.source), names: BTreeMap::new(), summary: false, ftrace: false }
    }

    /// Events of the kernel's blk ftrace tracer's text.
    pub fn ftrace(input: TraceInput) -> BlkparseEvents {
        BlkparseEvents { ftrace: true, ..BlkparseEvents::new(input) }
    }
}

impl EventSource for BlkparseEvents {
    fn next_event(&mut self) -> Result<Option<BlkEvent>, ReadError> {
        loop {
            // next_line counts every line it returns.
            let n = self.lines.line + 1;
            let Some(raw) = self.lines.next_line()? else {
                return Ok(None);
            };
            let raw = raw.trim();
            let parsed = if self.ftrace {
                if raw.is_empty() || raw.starts_with('#') {
                    continue;
                }
                match ftrace_as_blkparse(raw, n) {
                    Some(converted) => parse_line(&converted, 0).map_err(|m| (m, raw.to_string())),
                    // `CPU:1 [LOST 12 EVENTS]` and the like: the trace is not whole.
                    None => Err((NOT_AN_FTRACE_LINE.to_string(), raw.to_string())),
                }
            } else {
                if self.summary || raw.is_empty() || raw.starts_with("Input file ") {
                    continue;
                }
                if is_summary(raw) {
                    self.summary = true;
                    continue;
                }
                parse_line(raw, 0).map_err(|m| (m, raw.to_string()))
            };
            return match parsed {
                Ok((mut e, comm)) => {
                    e.at = n;
                    if let Some(c) = comm {
                        // Stored only when a process gets a new name.
                        if self.names.get(&e.pid) != Some(&c) {
                            self.names.insert(e.pid, c);
                        }
                    }
                    Ok(Some(e))
                }
                Err((m, text)) => Err(ReadError::Bad(self.lines.error(n, m, &text))),
            };
        }
    }

    fn process_names(&self) -> Vec<(u32, String)> {
        self.names.iter().map(|(&p, n)| (p, n.clone())).collect()
    }
}

const NOT_AN_FTRACE_LINE: &str = "not a blk tracer event line (`task-pid [cpu] ... seconds: maj,min action RWBS ...`)";

pub fn reader(input: TraceInput) -> Box<dyn RecordReader> {
    let source = input.source.clone();
    Box::new(BlkRequests::with_source(BlkparseEvents::new(input), source))
}

/// The kernel's blk ftrace tracer's text as requests (as blkparse's).
pub fn ftrace_reader(input: TraceInput) -> Box<dyn RecordReader> {
    let source = input.source.clone();
    Box::new(BlkRequests::with_source(BlkparseEvents::ftrace(input), source))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::reader::{ReadOptions, TraceReader};
    use crate::trace::{Format, TraceOp};

    const SAMPLE: &str = "\
259,0    1        1     0.000000000 21279  A  RA 2348060440 + 8 <- (259,3) 2345510680
259,0    1        2     0.000000184 21279  Q  RA 2348060440 + 8 [fio]
259,0    1        3     0.000000949 21279  G  RA 2348060440 + 8 [fio]
259,0    1        4     0.000001100 21279  P   N [fio]
259,0    1        5     0.000001290 21279  U   N [fio] 1
259,0    1        6     0.000001676 21279  D  RA 2348060440 + 8 [fio]
259,0    1        7     0.000056992     0  C  RA 2348060440 + 8 [0]
  8,0    0        8     1.000000000   12  Q FWS 0 + 0 [kworker/0:1H]
  8,0    0        9     1.000000100   12  D  FN 0 + 0 [kworker/0:1H]
  8,0    0       10     1.000000500    0  C  FN 0 [0]
  8,0    0       11     1.5 12  m   N cfq12 idle
  8,0    0       12     1.6 12  X  WS 100 / 104 [Web Content]
Input file sample.blktrace.1 added
CPU1 (sample):
 Reads Queued:         963,     3852KiB	 Writes Queued:           0,        0KiB
Throughput (R/W): 11165KiB/s / 0KiB/s
Events (sample): 6741 entries
";

    fn events(text: &str) -> Vec<Result<BlkEvent, String>> {
        let mut p = BlkparseEvents::new(TraceInput::from_bytes(text.as_bytes().to_vec(), "t").unwrap());
        let mut out = Vec::new();
        loop {
            match p.next_event() {
                Ok(None) => break,
                Ok(Some(e)) => out.push(Ok(e)),
                Err(e) => out.push(Err(e.error().to_string())),
            }
        }
        out
    }

    // The kernel's blk ftrace tracer (loop device over `iosched mount`, bash started cold).
    const FTRACE: &str = "\
# tracer: blk
#
            bash-6265    [001] d..1.  6091.632785:   7,0    Q  RM 33928 + 8 [bash]
            bash-6265    [001] d..1.  6091.632788:   7,0    G  RM 33928 + 8 [bash]
            bash-6265    [001] d..1.  6091.632789:   7,0    P   N [bash]
            bash-6265    [001] d..1.  6091.632789:   7,0    U   N [bash] 1
            bash-6265    [001] d..1.  6091.632791:   7,0    D  RM 33928 + 8 [bash]
     ksoftirqd/0-14      [000] d.s1.  6091.642056:   7,0    C  RM 33928 + 8 [0]
 Web Content-7042    [000] .....  6091.642106:   7,0    Q  RA 1160 + 8 [Web Content]
";

    #[test]
    fn the_kernels_blk_ftrace_text_reads_as_blkparse() {
        let reader = TraceReader::from_bytes(FTRACE.as_bytes().to_vec(), "blk.txt", ReadOptions::default()).unwrap();
        assert_eq!(reader.format, Format::FtraceBlk);
        let mut reader = reader;
        let mut recs = Vec::new();
        while let Some(r) = reader.next_record().unwrap() {
            recs.push(r);
        }
        assert_eq!(recs.len(), 2);
        assert_eq!((recs[0].pid, recs[0].sector, recs[0].size_sectors, recs[0].meta), (Some(6265), 33928, 8, true));
        assert_eq!(recs[0].time_ns, 6_091_632_785_000);
        assert_eq!(recs[0].complete_ns, Some(6_091_642_056_000));
        assert_eq!((recs[1].pid, recs[1].readahead), (Some(7042), true));
        let names = reader.process_names();
        assert!(names.contains(&(6265, "bash".to_string())) && names.contains(&(7042, "Web Content".to_string())));
        let lost = "# tracer: blk\n            bash-1 [001] d..1.  1.000000:   7,0    Q  R 8 + 8 [bash]\nCPU:1 [LOST 3 EVENTS]\n";
        let mut r = TraceReader::from_bytes(lost.as_bytes().to_vec(), "lost.txt", ReadOptions::default()).unwrap();
        let e = std::iter::from_fn(|| Some(r.next_record())).find_map(|x| x.err()).unwrap();
        assert!(e.to_string().contains("lost.txt:3") && e.to_string().contains("LOST"), "{e}");
    }

    #[test]
    fn every_action_line_parses_and_the_summary_is_skipped() {
        let e: Vec<BlkEvent> = events(SAMPLE).into_iter().map(Result::unwrap).collect();
        assert_eq!(e.len(), 12);
        assert_eq!(e[0].pdu, BlkPdu::Remap { dev_from: 259 << 20 | 3, dev_to: 259 << 20, sector_from: 2345510680 });
        assert_eq!((e[1].code(), e[1].time_ns, e[1].bytes, e[1].rwbs()), (code::QUEUE, 184, 4096, "RA".to_string()));
        assert_eq!(e[4].pdu, BlkPdu::Unplug { count: 1 });
        assert_eq!((e[6].code(), e[6].pid, e[6].error), (code::COMPLETE, 0, 0));
        assert_eq!((e[7].rwbs(), e[7].device), ("FWS".to_string(), 8 << 20));
        assert_eq!((e[9].sector, e[9].bytes, e[9].time_ns), (0, 0, 1_000_000_500));
        assert_eq!((e[10].letters(), e[10].pdu.clone(), e[10].time_ns), (Some("m"), BlkPdu::Message("cfq12 idle".into()), 1_500_000_000));
        assert_eq!(e[11].pdu, BlkPdu::Split { new_sector: 104 });
    }

    #[test]
    fn requests_and_process_names() {
        let mut rd = TraceReader::from_bytes(SAMPLE.as_bytes().to_vec(), "t", ReadOptions::default()).unwrap();
        assert_eq!(rd.format, Format::Blkparse);
        let r: Vec<_> = rd.by_ref().map(Result::unwrap).collect();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].op, r[0].readahead, r[0].sync, r[0].time_ns), (TraceOp::Read, true, false, 184));
        assert_eq!((r[0].issue_ns, r[0].complete_ns, r[0].pid, r[0].at), (Some(1676), Some(56992), Some(21279), 2));
        assert_eq!(
            (r[1].op, r[1].size_sectors, r[1].issue_ns, r[1].complete_ns),
            (TraceOp::Flush, 0, Some(1_000_000_100), Some(1_000_000_500))
        );
        assert_eq!(rd.process_names(), vec![(12, "Web Content".to_string()), (21279, "fio".to_string())]);
    }

    #[test]
    fn bad_lines_name_line_and_text_and_can_be_skipped() {
        let text = "259,0 1 1 0.000000184 21279 Q R 8 + 8 [a]\n259,0 1 2 0.0000002 21279 Q R 8 + x [a]\n259,0 1 3 0.1 1 Z R 8 + 8 [a]\n259,0 1 4 0.1 1 Q RQ 8 + 8 [a]\n259,0 1 5 0.1 1 C R 8 + 8 [e]\n259,0 1 6 0.1 1 Q R 8 + 8\n";
        let r = events(text);
        assert_eq!(r.len(), 6);
        assert_eq!(
            r[1].as_ref().unwrap_err(),
            "t:2: sectors: expected a non-negative integer, found `x`: `259,0 1 2 0.0000002 21279 Q R 8 + x [a]`"
        );
        assert!(r[2].as_ref().unwrap_err().starts_with("t:3: action: unknown `Z`"));
        assert!(r[3].as_ref().unwrap_err().starts_with("t:4: RWBS: not blkparse's letters: `RQ`"));
        assert!(r[4].as_ref().unwrap_err().starts_with("t:5: error: expected an integer, found `e`"));
        assert!(r[5].as_ref().unwrap_err().starts_with("t:6: expected [command], found ``"));
        let mut rd =
            TraceReader::from_bytes(text.as_bytes().to_vec(), "t", ReadOptions { format: Some(Format::Blkparse), skip_bad: true }).unwrap();
        assert_eq!(rd.by_ref().count(), 1);
        assert_eq!(rd.skipped(), 5);
        let e = TraceReader::from_bytes(text.as_bytes().to_vec(), "t", ReadOptions::default()).unwrap().read_all().unwrap_err();
        assert_eq!(e.line, 2);
    }

    #[test]
    fn times_and_devices() {
        assert_eq!(parse_time("0.000000184"), Ok(184));
        assert_eq!(parse_time("12.5"), Ok(12_500_000_000));
        assert_eq!(parse_time("18446744073.709551615"), Ok(u64::MAX));
        assert!(parse_time("18446744073.709551616").is_err());
        assert!(parse_time("99999999999999999999.0").is_err());
        assert!(parse_time("1.0000000001").is_err());
        assert!(parse_time("-1.0").is_err());
        assert_eq!(parse_dev("(259,3)"), Ok(259 << 20 | 3));
        assert!(parse_dev("4096,0").is_err());
        assert!(looks_like("  8,0    0        8     1.000000000   12  Q FWS 0 + 0 [kworker/0:1H]"));
        assert!(!looks_like("11413000 0 657728 16 1"));
    }
}
