//! The public block traces distributed as comma-separated lines, as record streams. Columns,
//! units and what becomes pid and device (docs/traces.md has the same as tables):
//!
//! | format | columns | time | extent |
//! |---|---|---|---|
//! | MSR Cambridge | Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime | FILETIME (100 ns ticks since 1601) to Unix ns; response in ticks | bytes |
//! | UMass SPC | ASU,LBA,Size,Opcode,Timestamp[,...] | s (decimal) since the trace began | LBA in sectors, size in bytes |
//! | Alibaba 2020 | device_id,opcode,offset,length,timestamp | µs since the Unix epoch | bytes |
//! | Tencent CBS | Timestamp,Offset,Size,IOType,VolumeID | s since the Unix epoch | sectors |
//! | Systor '17 | Timestamp,Response,IOType,LUN,Offset,Size | s (decimal) since the Unix epoch; response in s | bytes |
//!
//! pid (the stream): UMass's ASU, Alibaba's device_id, Tencent's VolumeID; None for MSR and
//! Systor. device: MSR's DiskNumber, Alibaba's device_id, Tencent's VolumeID, Systor's LUN; 0
//! for UMass (its LBAs are per ASU: tell the streams apart by pid). MSR's Hostname is not kept.
//! complete_ns: arrival + response for MSR and Systor.
//!
//! Byte extents not on 512 B boundaries cover every byte touched: start rounded down, end up;
//! a size in bytes alone (UMass) is rounded up. A request of zero bytes is a bad record. Decimal
//! seconds are converted exactly (no float). Fields may have spaces around them; a line equal
//! to the format's column names (a header, any case) is skipped wherever it appears.

use super::format::Format;
use super::input::TraceInput;
use super::lines::Lines;
use super::reader::{ReadError, RecordReader};
use super::record::{TraceOp, TraceRecord};
use super::units::{byte_extent, decimal_s_to_ns, int_units_to_ns, sector_bytes_extent, MAX_EPOCH_NS};
use super::MAX_TRACE_SPAN_NS;

/// FILETIME (100 ns ticks since 1601-01-01) of the Unix epoch.
pub const FILETIME_UNIX_EPOCH: u64 = 116_444_736_000_000_000;

/// The formats of this module, in the order detection tries them.
const FORMATS: [Format; 5] = [Format::Msr, Format::Systor, Format::Alibaba, Format::Tencent, Format::UmassSpc];

/// The column names (the header, when a file has one).
pub fn columns(format: Format) -> &'static [&'static str] {
    match format {
        Format::Msr => &["Timestamp", "Hostname", "DiskNumber", "Type", "Offset", "Size", "ResponseTime"],
        Format::UmassSpc => &["ASU", "LBA", "Size", "Opcode", "Timestamp"],
        Format::Alibaba => &["device_id", "opcode", "offset", "length", "timestamp"],
        Format::Tencent => &["Timestamp", "Offset", "Size", "IOType", "VolumeID"],
        Format::Systor => &["Timestamp", "Response", "IOType", "LUN", "Offset", "Size"],
        other => unreachable!("not a CSV format: {other:?}"),
    }
}

fn fields(line: &str) -> Vec<&str> {
    line.split(',').map(str::trim).collect()
}

fn is_header(format: Format, f: &[&str]) -> bool {
    let cols = columns(format);
    let n_ok = if format == Format::UmassSpc { f.len() >= cols.len() } else { f.len() == cols.len() };
    n_ok && cols.iter().zip(f).all(|(c, x)| c.eq_ignore_ascii_case(x))
}

fn uint(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn decimal(s: &str) -> bool {
    let (i, f) = s.split_once('.').unwrap_or((s, ""));
    !(i.is_empty() && f.is_empty()) && i.bytes().chain(f.bytes()).all(|b| b.is_ascii_digit())
}

/// Whether a data line has the column shapes of `format`.
fn shape(format: Format, f: &[&str]) -> bool {
    match format {
        // A FILETIME of this century has 18 digits.
        Format::Msr => {
            f.len() == 7
                && uint(f[0])
                && f[0].len() >= 15
                && uint(f[2])
                && (f[3].eq_ignore_ascii_case("read") || f[3].eq_ignore_ascii_case("write"))
                && f[4..].iter().all(|x| uint(x))
        }
        Format::UmassSpc => f.len() >= 5 && f[..3].iter().all(|x| uint(x)) && matches!(f[3], "r" | "R" | "w" | "W") && decimal(f[4]),
        Format::Alibaba => f.len() == 5 && uint(f[0]) && matches!(f[1], "R" | "W") && f[2..].iter().all(|x| uint(x)),
        Format::Tencent => f.len() == 5 && decimal(f[0]) && uint(f[1]) && uint(f[2]) && matches!(f[3], "0" | "1") && uint(f[4]),
        Format::Systor => {
            f.len() == 6 && decimal(f[0]) && decimal(f[1]) && matches!(f[2], "R" | "W" | "") && f[3..].iter().all(|x| uint(x))
        }
        _ => false,
    }
}

/// The CSV format whose header or column shapes every sample line fits (lines that are that
/// format's header aside), or None. The file name is not needed: the shapes do not overlap.
pub fn detect(sample: &[&str], _name: &str) -> Option<Format> {
    let rows: Vec<Vec<&str>> = sample.iter().map(|l| fields(l)).collect();
    if rows.is_empty() || rows.iter().any(|f| f.len() < 5) {
        return None;
    }
    FORMATS.into_iter().find(|&format| {
        let headers = rows.iter().filter(|f| is_header(format, f)).count();
        let data: Vec<_> = rows.iter().filter(|f| !is_header(format, f)).collect();
        (headers > 0 || !data.is_empty()) && data.iter().all(|f| shape(format, f))
    })
}

pub struct CsvReader {
    lines: Lines,
    format: Format,
}

pub fn reader(input: TraceInput, format: Format) -> Box<dyn RecordReader> {
    Box::new(CsvReader { lines: Lines::new(input.reader, &input.source), format })
}

impl CsvReader {
    /// One non-empty line: a record, or None for a header.
    fn parse(&self, line: &str) -> Result<Option<TraceRecord>, ReadError> {
        let n = self.lines.line;
        let bad = |m: String, t: &str| ReadError::Bad(self.lines.error(n, m, t));
        let f = fields(line);
        if is_header(self.format, &f) {
            return Ok(None);
        }
        let cols = columns(self.format);
        let count_ok = if self.format == Format::UmassSpc { f.len() >= cols.len() } else { f.len() == cols.len() };
        if !count_ok {
            let at_least = if self.format == Format::UmassSpc { "at least " } else { "" };
            return Err(bad(format!("expected {at_least}{} fields `{}`, found {}", cols.len(), cols.join(","), f.len()), line));
        }
        let id = |s: &str, what: &str| s.parse::<u32>().map_err(|_| bad(format!("{what}: expected an integer in [0, 2^32)"), s));
        let epoch_s = |s: &str| {
            decimal_s_to_ns(s, MAX_EPOCH_NS).ok_or_else(|| bad("timestamp (s since 1970): expected a number in [0, 1e10]".into(), s))
        };
        let extent = |r: Result<(u64, u32), (String, &str)>| r.map_err(|(m, t)| bad(m, t));
        let record = match self.format {
            Format::Msr => {
                let ticks: u64 = f[0].parse().map_err(|_| bad("timestamp (FILETIME): expected a non-negative integer".into(), f[0]))?;
                let time =
                    ticks.checked_sub(FILETIME_UNIX_EPOCH).and_then(|t| t.checked_mul(100)).filter(|&t| t <= MAX_EPOCH_NS).ok_or_else(
                        || bad("timestamp (FILETIME, 100 ns since 1601): must fall between 1970 and 1e10 s after".into(), f[0]),
                    )?;
                let device = id(f[2], "disk number")?;
                let op = match f[3] {
                    t if t.eq_ignore_ascii_case("read") => TraceOp::Read,
                    t if t.eq_ignore_ascii_case("write") => TraceOp::Write,
                    _ => return Err(bad("type: expected Read or Write".into(), f[3])),
                };
                let (sector, size) = extent(byte_extent(f[4], f[5]))?;
                let resp = int_units_to_ns(f[6], 100, MAX_TRACE_SPAN_NS)
                    .ok_or_else(|| bad("response time (100 ns): expected an integer in [0, 1e13] (11.6 days)".into(), f[6]))?;
                let mut r = TraceRecord::new(n, time, op, sector, size);
                r.device = device;
                r.complete_ns = Some(time + resp); // < 1e19 + 1e15: no overflow.
                r
            }
            Format::UmassSpc => {
                let asu = id(f[0], "ASU")?;
                let (sector, size) = extent(sector_bytes_extent(f[1], f[2]))?;
                let op = match f[3] {
                    "r" | "R" => TraceOp::Read,
                    "w" | "W" => TraceOp::Write,
                    _ => return Err(bad("opcode: expected r, R, w or W".into(), f[3])),
                };
                let time = decimal_s_to_ns(f[4], MAX_TRACE_SPAN_NS)
                    .ok_or_else(|| bad("timestamp (s): expected a number in [0, 1e6] (11.6 days)".into(), f[4]))?;
                let mut r = TraceRecord::new(n, time, op, sector, size);
                r.pid = Some(asu);
                r
            }
            Format::Alibaba => {
                let dev = id(f[0], "device_id")?;
                let op = match f[1] {
                    "R" => TraceOp::Read,
                    "W" => TraceOp::Write,
                    _ => return Err(bad("opcode: expected R or W".into(), f[1])),
                };
                let (sector, size) = extent(byte_extent(f[2], f[3]))?;
                let time = int_units_to_ns(f[4], 1_000, MAX_EPOCH_NS)
                    .ok_or_else(|| bad("timestamp (µs since 1970): expected an integer in [0, 1e16]".into(), f[4]))?;
                let mut r = TraceRecord::new(n, time, op, sector, size);
                (r.pid, r.device) = (Some(dev), dev);
                r
            }
            Format::Tencent => {
                let time = epoch_s(f[0])?;
                let (sector, size) = extent(super::parse_extent(f[1], f[2]))?;
                let op = match f[3] {
                    "0" => TraceOp::Read,
                    "1" => TraceOp::Write,
                    _ => return Err(bad("IOType: expected 0 (read) or 1 (write)".into(), f[3])),
                };
                let vol = id(f[4], "VolumeID")?;
                let mut r = TraceRecord::new(n, time, op, sector, size);
                (r.pid, r.device) = (Some(vol), vol);
                r
            }
            Format::Systor => {
                let time = epoch_s(f[0])?;
                let resp = decimal_s_to_ns(f[1], MAX_TRACE_SPAN_NS)
                    .ok_or_else(|| bad("response (s): expected a number in [0, 1e6] (11.6 days)".into(), f[1]))?;
                let op = match f[2] {
                    "R" => TraceOp::Read,
                    "W" => TraceOp::Write,
                    "" => return Err(bad("IOType is blank: neither read nor write".into(), line)),
                    _ => return Err(bad("IOType: expected R or W".into(), f[2])),
                };
                let lun = id(f[3], "LUN")?;
                let (sector, size) = extent(byte_extent(f[4], f[5]))?;
                let mut r = TraceRecord::new(n, time, op, sector, size);
                r.device = lun;
                r.complete_ns = Some(time + resp); // < 1e19 + 1e15: no overflow.
                r
            }
            other => unreachable!("not a CSV format: {other:?}"),
        };
        Ok(Some(record))
    }
}

impl RecordReader for CsvReader {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, ReadError> {
        loop {
            let Some(line) = self.lines.next_content_line()? else { return Ok(None) };
            if let Some(r) = self.parse(&line)? {
                return Ok(Some(r));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::reader::{ReadOptions, TraceReader};

    fn open(text: &str, format: Option<Format>, skip_bad: bool) -> TraceReader {
        TraceReader::from_bytes(text.as_bytes().to_vec(), "t.csv", ReadOptions { format, skip_bad }).unwrap()
    }

    fn read(text: &str, format: Option<Format>) -> Result<Vec<TraceRecord>, String> {
        open(text, format, false).read_all().map_err(|e| e.to_string())
    }

    fn det(text: &str) -> Option<Format> {
        let lines: Vec<&str> = text.lines().collect();
        detect(&lines, "")
    }

    const MSR: &str = "128166372003061629,hm,1,Read,1034977280,4096,1217\n128166372016382155,hm,0,Write,1000,100,41374\n";
    const UMASS: &str = "0,20941264,8192,W,0.551706\n1,20939840,513,r,0.554041,extra,fields\n";
    const ALIBABA: &str = "0,R,126703644672,4096,1577808000000626\n7,W,4096,8192,1577808000001000\n";
    const TENCENT: &str = "1538323199,105352008,584,1,1576\n1538323200,8,8,0,3\n";
    const SYSTOR: &str = "Timestamp,Response,IOType,LUN,Offset,Size\n1456095145.133076000,0.000806000,R,0,899056122368,131072\n";

    #[test]
    fn detection_by_column_shapes() {
        assert_eq!(det(MSR), Some(Format::Msr));
        assert_eq!(det(UMASS), Some(Format::UmassSpc));
        assert_eq!(det(ALIBABA), Some(Format::Alibaba));
        assert_eq!(det(TENCENT), Some(Format::Tencent));
        assert_eq!(det(SYSTOR), Some(Format::Systor));
        assert_eq!(det("1456095145.133076000,0.000806000,W,4,0,4096\n"), Some(Format::Systor));
        assert_eq!(det("Timestamp,Offset,Size,IOType,VolumeID\n"), Some(Format::Tencent));
        assert_eq!(det("ASU,LBA,Size,Opcode,Timestamp\n0,1,512,r,0.5\n"), Some(Format::UmassSpc));
        // Not CSV, or shapes that fit nothing (mixed formats, a DiskSim line, a bad opcode).
        assert_eq!(det("11413000 0 657728 16 1\n"), None);
        assert_eq!(det(&format!("{MSR}{TENCENT}")), None);
        assert_eq!(det("0,R,1,1,1\n0,X,1,1,1\n"), None);
        assert_eq!(det("a,b,c,d,e\n"), None);
        assert_eq!(det(""), None);
        // Through Format::detect, from the file's first bytes.
        for (text, f) in [
            (MSR, Format::Msr),
            (UMASS, Format::UmassSpc),
            (ALIBABA, Format::Alibaba),
            (TENCENT, Format::Tencent),
            (SYSTOR, Format::Systor),
        ] {
            assert_eq!(open(text, None, false).format, f);
        }
    }

    #[test]
    fn msr_filetime_bytes_and_response() {
        let r = read(MSR, None).unwrap();
        // (128166372003061629 - 116444736000000000) ticks of 100 ns since 1970.
        assert_eq!(r[0].time_ns, 1_172_163_600_306_162_900);
        assert_eq!((r[0].device, r[0].op, r[0].sector, r[0].size_sectors, r[0].pid), (1, TraceOp::Read, 2_021_440, 8, None));
        assert_eq!(r[0].complete_ns, Some(1_172_163_600_306_162_900 + 121_700));
        // Bytes 1000..1100: sectors 1 and 2.
        assert_eq!((r[1].device, r[1].op, r[1].sector, r[1].size_sectors), (0, TraceOp::Write, 1, 2));
        assert_eq!(r[1].complete_ns.unwrap() - r[1].time_ns, 4_137_400);
    }

    #[test]
    fn umass_asu_is_the_stream_and_sizes_round_up() {
        let r = read(UMASS, None).unwrap();
        let got: Vec<_> = r.iter().map(|r| (r.pid, r.device, r.sector, r.size_sectors, r.op, r.time_ns)).collect();
        assert_eq!(
            got,
            vec![(Some(0), 0, 20941264, 16, TraceOp::Write, 551_706_000), (Some(1), 0, 20939840, 2, TraceOp::Read, 554_041_000)]
        );
    }

    #[test]
    fn alibaba_us_since_epoch() {
        let r = read(ALIBABA, None).unwrap();
        assert_eq!((r[0].pid, r[0].device, r[0].sector, r[0].size_sectors), (Some(0), 0, 247_468_056, 8));
        assert_eq!(r[0].time_ns, 1_577_808_000_000_626_000);
        assert_eq!((r[1].pid, r[1].device, r[1].op, r[1].sector, r[1].size_sectors), (Some(7), 7, TraceOp::Write, 8, 16));
    }

    #[test]
    fn tencent_sectors_and_volume() {
        let r = read(TENCENT, None).unwrap();
        assert_eq!((r[0].time_ns, r[0].sector, r[0].size_sectors, r[0].op), (1_538_323_199_000_000_000, 105352008, 584, TraceOp::Write));
        assert_eq!((r[0].pid, r[0].device), (Some(1576), 1576));
        assert_eq!((r[1].op, r[1].pid), (TraceOp::Read, Some(3)));
    }

    #[test]
    fn systor_header_skipped_and_response_kept() {
        let r = read(&format!("{SYSTOR}{SYSTOR}"), None).unwrap();
        assert_eq!(r.len(), 2, "the repeated header is skipped too");
        assert_eq!(r[0].at, 2);
        assert_eq!(r[0].time_ns, 1_456_095_145_133_076_000);
        assert_eq!(r[0].complete_ns, Some(1_456_095_145_133_882_000));
        assert_eq!((r[0].device, r[0].op, r[0].sector, r[0].size_sectors), (0, TraceOp::Read, 1_755_968_989, 256));
    }

    #[test]
    fn errors_name_file_line_and_text() {
        let e = |t: &str, f: Format| read(t, Some(f)).unwrap_err();
        assert_eq!(
            e("128166372003061629,hm,1,Read,0,4096,1\n128166372003061629,hm,1,Erase,0,4096,1\n", Format::Msr),
            "t.csv:2: type: expected Read or Write: `Erase`"
        );
        assert_eq!(
            e("100,hm,1,Read,0,4096,1\n", Format::Msr),
            "t.csv:1: timestamp (FILETIME, 100 ns since 1601): must fall between 1970 and 1e10 s after: `100`"
        );
        assert_eq!(
            e("128166372003061629,hm,1,Read,0,0,1\n", Format::Msr),
            "t.csv:1: size (bytes): a request must have at least one byte: `0`"
        );
        assert_eq!(e("0,1,2\n", Format::UmassSpc), "t.csv:1: expected at least 5 fields `ASU,LBA,Size,Opcode,Timestamp`, found 3: `0,1,2`");
        assert_eq!(e("0,1,512,x,0.5\n", Format::UmassSpc), "t.csv:1: opcode: expected r, R, w or W: `x`");
        assert_eq!(e("0,1,512,r,-0.5\n", Format::UmassSpc), "t.csv:1: timestamp (s): expected a number in [0, 1e6] (11.6 days): `-0.5`");
        assert_eq!(
            e("0,281474976710656,512,r,0.5\n", Format::UmassSpc),
            "t.csv:1: start block: must be below 2^48 = 281474976710656: `281474976710656`"
        );
        assert_eq!(e("4294967296,R,0,512,1\n", Format::Alibaba), "t.csv:1: device_id: expected an integer in [0, 2^32): `4294967296`");
        assert_eq!(
            e("0,R,0,512,18446744073709551615\n", Format::Alibaba),
            "t.csv:1: timestamp (µs since 1970): expected an integer in [0, 1e16]: `18446744073709551615`"
        );
        assert_eq!(e("1,0,8,2,1\n", Format::Tencent), "t.csv:1: IOType: expected 0 (read) or 1 (write): `2`");
        assert_eq!(e("1,0,0,0,1\n", Format::Tencent), "t.csv:1: size: a request must have at least one block: `0`");
        assert_eq!(e("1.5,0.1,,0,0,512\n", Format::Systor), "t.csv:1: IOType is blank: neither read nor write: `1.5,0.1,,0,0,512`");
        assert_eq!(
            e("99999999999,0.1,R,0,0,512\n", Format::Systor),
            "t.csv:1: timestamp (s since 1970): expected a number in [0, 1e10]: `99999999999`"
        );
    }

    #[test]
    fn skip_bad_counts_and_goes_on() {
        let mut rd =
            open("1,0,8,1,1\n1,0,8,7,1\nTimestamp,Offset,Size,IOType,VolumeID\n2,x,8,0,1\n3,0,8,0,1\n", Some(Format::Tencent), true);
        let r: Vec<_> = rd.by_ref().map(Result::unwrap).collect();
        assert_eq!(r.iter().map(|r| r.at).collect::<Vec<_>>(), vec![1, 5]);
        assert_eq!(rd.skipped(), 2);
        assert_eq!(rd.skipped_examples()[1], "t.csv:4: start block: expected a non-negative integer: `x`");
    }
}
