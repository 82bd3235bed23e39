//! blktrace's binary per-CPU files (`dev.blktrace.N`), read as [`BlkEvent`]s in constant memory.
//!
//! A file is a sequence of records: a 48-byte header (magic, sequence, time_ns, sector, bytes,
//! action, pid, device, cpu, error, pdu_len) and pdu_len payload bytes. Records are in the
//! recording machine's byte order, told by the first record's magic (0x65617400 | version);
//! only version 7 is read (version 8, blk_io_trace2, is refused with a clear error). Remap
//! payloads, unplug counts and split sectors are big-endian whatever the order.
//!
//! The per-CPU files of one trace are merged by time ([`BlktraceEvents`]: a k-way merge holding
//! one event per file; ties broken by cpu, then sequence, then file), and times are made relative
//! to the first event that is not a notify record, as blkparse prints them (a notify record
//! before it reads as time 0). The cpu is the record's, not the file name's.
//!
//! Errors name the file, the record (1-based) and its byte offset. A record whose framing is
//! intact but whose content is not understood (an unknown action, a short remap payload) is
//! [`ReadError::Bad`] and skippable; a wrong magic, a truncated record or an absurd payload
//! length is [`ReadError::Fatal`]: the framing can no longer be trusted.

use super::blk_events::{category, code, BlkEvent, BlkPdu, EventSource};
use super::blk_requests::BlkRequests;
use super::input::TraceInput;
use super::reader::{ReadError, RecordReader};
use super::TraceError;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::io::BufRead;
use std::path::{Path, PathBuf};

pub const HEADER_BYTES: usize = 48;
pub const MAGIC: u32 = 0x6561_7400;
pub const VERSION: u8 = 7;
/// The largest payload accepted: the kernel's are at most a few hundred bytes (a SCSI command,
/// a 128-byte message); a larger length means the file is corrupt.
pub const MAX_PDU_BYTES: u16 = 1024;

/// Whether `head` starts with a blktrace record's magic (either byte order).
pub fn has_magic(head: &[u8]) -> bool {
    head.len() >= 4 && (head[..4] == [0x07, 0x74, 0x61, 0x65] || head[..4] == [0x65, 0x61, 0x74, 0x07])
}

/// One per-CPU file's records as events, with raw kernel times.
pub struct BinaryEvents {
    reader: Box<dyn BufRead + Send>,
    source: String,
    /// Whether the file's order is the opposite of little-endian (decided by the first record).
    big_endian: Option<bool>,
    /// Records read so far (the next one is `record + 1`).
    record: u64,
    /// Byte offset of the next record.
    offset: u64,
    pdu: Vec<u8>,
    names: BTreeMap<u32, String>,
    done: bool,
}

/// Reads until `buf` is full or the stream ends: how many bytes were read.
fn read_full(r: &mut dyn BufRead, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Text of a NUL-padded name or message.
fn c_string(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

fn be_u64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[..8].try_into().expect("8 bytes"))
}

fn be_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().expect("4 bytes"))
}

impl BinaryEvents {
    pub fn new(input: TraceInput) -> BinaryEvents {
        BinaryEvents {
            reader: input.reader,
            source: input.source,
            big_endian: None,
            record: 0,
            offset: 0,
            pdu: Vec::new(),
            names: BTreeMap::new(),
            done: false,
        }
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    fn error(&self, record: u64, offset: u64, message: String) -> TraceError {
        TraceError {
            file: self.source.clone(),
            line: record as usize,
            message: format!("record {record} at byte {offset}: {message}"),
            text: String::new(),
        }
    }

    fn fatal(&mut self, record: u64, offset: u64, message: String) -> ReadError {
        self.done = true;
        ReadError::Fatal(self.error(record, offset, message))
    }

    fn u32_at(&self, h: &[u8; HEADER_BYTES], at: usize) -> u32 {
        let b: [u8; 4] = h[at..at + 4].try_into().expect("4 bytes");
        if self.big_endian == Some(true) {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }

    fn u64_at(&self, h: &[u8; HEADER_BYTES], at: usize) -> u64 {
        let b: [u8; 8] = h[at..at + 8].try_into().expect("8 bytes");
        if self.big_endian == Some(true) {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        }
    }

    fn u16_at(&self, h: &[u8; HEADER_BYTES], at: usize) -> u16 {
        let b: [u8; 2] = h[at..at + 2].try_into().expect("2 bytes");
        if self.big_endian == Some(true) {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    }

    /// The next record, raw time. Notify records are events too (category NOTIFY).
    pub fn next_event(&mut self) -> Result<Option<BlkEvent>, ReadError> {
        if self.done {
            return Ok(None);
        }
        let record = self.record.saturating_add(1);
        let offset = self.offset;
        let mut h = [0u8; HEADER_BYTES];
        let n = match read_full(&mut *self.reader, &mut h) {
            Ok(n) => n,
            Err(e) => return Err(self.fatal(record, offset, format!("cannot read the trace: {e}"))),
        };
        if n == 0 {
            self.done = true;
            return Ok(None);
        }
        if n < HEADER_BYTES {
            return Err(self.fatal(
                record,
                offset,
                format!("truncated: the file ends {n} bytes into the record's {HEADER_BYTES}-byte header"),
            ));
        }
        let le = u32::from_le_bytes(h[..4].try_into().expect("4 bytes"));
        let be = u32::from_be_bytes(h[..4].try_into().expect("4 bytes"));
        let (is_be, magic) = if le & 0xffff_ff00 == MAGIC {
            (false, le)
        } else if be & 0xffff_ff00 == MAGIC {
            (true, be)
        } else {
            return Err(self.fatal(
                record,
                offset,
                format!("wrong magic 0x{le:08x} (a blktrace record starts with 0x{:08x})", MAGIC | VERSION as u32),
            ));
        };
        match self.big_endian {
            None => self.big_endian = Some(is_be),
            Some(b) if b != is_be => return Err(self.fatal(record, offset, "the byte order changes: the file is corrupt".into())),
            Some(_) => {}
        }
        let version = (magic & 0xff) as u8;
        if version != VERSION {
            let what = if version == 8 { " (blk_io_trace2, written by newer kernels)" } else { "" };
            return Err(self.fatal(record, offset, format!("blktrace version {version}{what} is not supported: only version {VERSION}")));
        }
        let pdu_len = self.u16_at(&h, 46);
        if pdu_len > MAX_PDU_BYTES {
            return Err(self.fatal(
                record,
                offset,
                format!("payload length {pdu_len} bytes: more than {MAX_PDU_BYTES}, the file is corrupt"),
            ));
        }
        self.pdu.resize(pdu_len as usize, 0);
        let got = match read_full(&mut *self.reader, &mut self.pdu) {
            Ok(n) => n,
            Err(e) => return Err(self.fatal(record, offset, format!("cannot read the trace: {e}"))),
        };
        if got < pdu_len as usize {
            return Err(self.fatal(
                record,
                offset,
                format!("truncated: the file ends {got} bytes into the record's {pdu_len}-byte payload"),
            ));
        }
        self.record = record;
        self.offset = offset.saturating_add(HEADER_BYTES as u64 + pdu_len as u64);
        let raw_action = self.u32_at(&h, 28);
        let raw_code = (raw_action & 0xffff) as u16;
        let cgroup = raw_code & code::CGROUP_FLAG != 0;
        let code = raw_code & !code::CGROUP_FLAG;
        let action = (raw_action & 0xffff_0000) | code as u32;
        // With the cgroup flag the payload starts with the cgroup's 8-byte id.
        let payload: &[u8] = if cgroup && self.pdu.len() >= 8 { &self.pdu[8..] } else { &self.pdu };
        let pid = self.u32_at(&h, 32);
        let notify = (raw_action >> 16) as u16 & category::NOTIFY != 0;
        let short = |what: &str, need: usize| format!("{what} record with a {}-byte payload ({need} expected)", payload.len());
        let pdu = if notify {
            match code {
                code::TN_PROCESS => BlkPdu::Process(c_string(payload)),
                code::TN_TIMESTAMP if payload.len() >= 8 => {
                    let (a, b): ([u8; 4], [u8; 4]) = (payload[..4].try_into().expect("4"), payload[4..8].try_into().expect("4"));
                    let (seconds, nanoseconds) =
                        if is_be { (u32::from_be_bytes(a), u32::from_be_bytes(b)) } else { (u32::from_le_bytes(a), u32::from_le_bytes(b)) };
                    BlkPdu::Timestamp { seconds, nanoseconds }
                }
                code::TN_TIMESTAMP => return Err(ReadError::Bad(self.error(record, offset, short("timestamp", 8)))),
                code::TN_MESSAGE => BlkPdu::Message(c_string(payload)),
                other => return Err(ReadError::Bad(self.error(record, offset, format!("unknown notify code {other}")))),
            }
        } else {
            match code {
                code::REMAP if payload.len() >= 16 => {
                    BlkPdu::Remap { dev_from: be_u32(payload), dev_to: be_u32(&payload[4..]), sector_from: be_u64(&payload[8..]) }
                }
                code::REMAP => return Err(ReadError::Bad(self.error(record, offset, short("remap", 16)))),
                code::UNPLUG_IO | code::UNPLUG_TIMER if payload.len() >= 8 => BlkPdu::Unplug { count: be_u64(payload) },
                code::UNPLUG_IO | code::UNPLUG_TIMER => return Err(ReadError::Bad(self.error(record, offset, short("unplug", 8)))),
                code::SPLIT if payload.len() >= 8 => BlkPdu::Split { new_sector: be_u64(payload) },
                code::SPLIT => return Err(ReadError::Bad(self.error(record, offset, short("split", 8)))),
                c if (code::QUEUE..=code::ZONE_LAST).contains(&c) => {
                    if payload.is_empty() {
                        BlkPdu::None
                    } else {
                        BlkPdu::Raw { len: payload.len() as u16 }
                    }
                }
                other => {
                    return Err(ReadError::Bad(self.error(
                        record,
                        offset,
                        format!("unknown action code {other} (action 0x{raw_action:08x})"),
                    )))
                }
            }
        };
        if let BlkPdu::Process(name) = &pdu {
            if !name.is_empty() {
                self.names.insert(pid, name.clone());
            }
        }
        Ok(Some(BlkEvent {
            at: record,
            sequence: self.u32_at(&h, 4),
            time_ns: self.u64_at(&h, 8),
            sector: self.u64_at(&h, 16),
            bytes: self.u32_at(&h, 24),
            action,
            pid,
            device: self.u32_at(&h, 36),
            cpu: self.u32_at(&h, 40),
            error: self.u16_at(&h, 44),
            pdu,
        }))
    }
}

/// The per-CPU files of the trace `path` belongs to: for `X.blktrace.N`, every `X.blktrace.M`
/// (M digits) beside it, by M; any other name is a trace of its own.
pub fn per_cpu_files(path: &Path) -> Vec<PathBuf> {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return vec![path.to_path_buf()];
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let Some(i) = name.rfind(".blktrace.") else {
        return vec![path.to_path_buf()];
    };
    let prefix = &name[..i + ".blktrace.".len()];
    if !digits(&name[prefix.len()..]) {
        return vec![path.to_path_buf()];
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return vec![path.to_path_buf()];
    };
    let mut found: Vec<(u64, String)> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| {
            let cpu = n.strip_prefix(prefix).filter(|s| digits(s))?.parse().unwrap_or(u64::MAX);
            Some((cpu, n))
        })
        .collect();
    found.sort();
    let files: Vec<PathBuf> = found.into_iter().map(|(_, n)| path.with_file_name(n)).collect();
    if files.iter().any(|f| f == path) {
        files
    } else {
        vec![path.to_path_buf()]
    }
}

/// Events of one trace's per-CPU files, merged by time, times since the first event.
pub struct BlktraceEvents {
    files: Vec<BinaryEvents>,
    heads: Vec<Option<BlkEvent>>,
    /// (time, cpu, sequence, file) of each file's next event.
    order: BinaryHeap<Reverse<(u64, u32, u32, usize)>>,
    /// Files whose next event is still to be read (all at first; then the last one taken).
    refill: Vec<usize>,
    /// The first non-notify event's time, which blkparse counts from.
    genesis_ns: Option<u64>,
    /// Notify records met before that event (their times are relative to it too).
    held: std::collections::VecDeque<BlkEvent>,
}

/// Notify records held while looking for the first event, at most; past this the first of them
/// gives the time origin.
const MAX_HELD_NOTIFY: usize = 4096;

impl BlktraceEvents {
    pub fn new(files: Vec<BinaryEvents>) -> BlktraceEvents {
        let n = files.len();
        BlktraceEvents {
            files,
            heads: vec![None; n],
            order: BinaryHeap::new(),
            refill: (0..n).rev().collect(),
            genesis_ns: None,
            held: Default::default(),
        }
    }

    /// A trace read from its per-CPU files: `input` is `path`'s, the others are opened beside it.
    pub fn open(input: TraceInput, path: Option<&Path>) -> Result<BlktraceEvents, TraceError> {
        let Some(path) = path else {
            return Ok(BlktraceEvents::new(vec![BinaryEvents::new(input)]));
        };
        let mut input = Some(input);
        let mut files = Vec::new();
        for p in per_cpu_files(path) {
            let inp = if p == path {
                input.take().expect("the path is listed once")
            } else {
                let mut i = TraceInput::open(&p)?;
                if !has_magic(&i.peek(4)?) {
                    return Err(TraceError {
                        file: i.source.clone(),
                        line: 0,
                        message: "a per-CPU file of this trace does not start with blktrace's magic".into(),
                        text: String::new(),
                    });
                }
                i
            };
            files.push(BinaryEvents::new(inp));
        }
        Ok(BlktraceEvents::new(files))
    }

    pub fn file_count(&self) -> usize {
        self.files.len()
    }
}

impl BlktraceEvents {
    /// The next event in time order, raw time.
    fn next_raw(&mut self) -> Result<Option<BlkEvent>, ReadError> {
        while let Some(&i) = self.refill.last() {
            // A bad record leaves the file in `refill`: the next call reads on after it.
            if let Some(e) = self.files[i].next_event()? {
                self.order.push(Reverse((e.time_ns, e.cpu, e.sequence, i)));
                self.heads[i] = Some(e);
            }
            self.refill.pop();
        }
        let Some(Reverse((_, _, _, i))) = self.order.pop() else {
            return Ok(None);
        };
        self.refill.push(i);
        Ok(Some(self.heads[i].take().expect("a queued file has its event")))
    }
}

impl EventSource for BlktraceEvents {
    fn next_event(&mut self) -> Result<Option<BlkEvent>, ReadError> {
        // As blkparse, times count from the first event that is not a notify record: notify
        // records (a process's name is noted just before its first event) wait for it.
        while self.genesis_ns.is_none() {
            match self.next_raw()? {
                Some(e) if e.is_notify() && self.held.len() < MAX_HELD_NOTIFY => self.held.push_back(e),
                Some(e) => {
                    self.genesis_ns = Some(self.held.front().filter(|_| e.is_notify()).map_or(e.time_ns, |h| h.time_ns));
                    self.held.push_back(e);
                }
                None => self.genesis_ns = Some(self.held.front().map_or(0, |h| h.time_ns)),
            }
        }
        let genesis = self.genesis_ns.unwrap_or(0);
        let mut e = match self.held.pop_front() {
            Some(e) => e,
            None => match self.next_raw()? {
                Some(e) => e,
                None => return Ok(None),
            },
        };
        e.time_ns = e.time_ns.saturating_sub(genesis);
        Ok(Some(e))
    }

    fn process_names(&self) -> Vec<(u32, String)> {
        let mut all = BTreeMap::new();
        for f in &self.files {
            all.extend(f.names.iter().map(|(&p, n)| (p, n.clone())));
        }
        all.into_iter().collect()
    }
}

pub fn reader(input: TraceInput, path: Option<&Path>) -> Result<Box<dyn RecordReader>, TraceError> {
    let source = input.source.clone();
    Ok(Box::new(BlkRequests::with_source(BlktraceEvents::open(input, path)?, source)))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// One little-endian version-7 record.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(seq: u32, time: u64, sector: u64, bytes: u32, action: u32, pid: u32, cpu: u32, pdu: &[u8]) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&(MAGIC | VERSION as u32).to_le_bytes());
        r.extend_from_slice(&seq.to_le_bytes());
        r.extend_from_slice(&time.to_le_bytes());
        r.extend_from_slice(&sector.to_le_bytes());
        r.extend_from_slice(&bytes.to_le_bytes());
        r.extend_from_slice(&action.to_le_bytes());
        r.extend_from_slice(&pid.to_le_bytes());
        r.extend_from_slice(&(259u32 << 20).to_le_bytes());
        r.extend_from_slice(&cpu.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        r.extend_from_slice(&(pdu.len() as u16).to_le_bytes());
        r.extend_from_slice(pdu);
        r
    }

    fn events(bytes: Vec<u8>) -> Vec<Result<BlkEvent, String>> {
        let mut ev = BlktraceEvents::new(vec![BinaryEvents::new(TraceInput::from_bytes(bytes, "t.blktrace.0").unwrap())]);
        let mut out = Vec::new();
        loop {
            match ev.next_event() {
                Ok(None) => break,
                Ok(Some(e)) => out.push(Ok(e)),
                Err(ReadError::Bad(e)) => out.push(Err(format!("bad: {e}"))),
                Err(ReadError::Fatal(e)) => {
                    out.push(Err(format!("fatal: {e}")));
                    break;
                }
            }
        }
        out
    }

    const Q_READ: u32 = ((category::READ | category::QUEUE) as u32) << 16 | code::QUEUE as u32;

    #[test]
    fn times_are_relative_and_payloads_parsed() {
        let notify = (category::NOTIFY as u32) << 16;
        // A process's name noted before the first event: times count from the event.
        let mut b = record(0, 900, 0, 0, notify, 7, 0, b"dd\0");
        b.extend(record(1, 1000, 8, 4096, Q_READ, 7, 0, &[]));
        b.extend(record(0, 1500, 0, 0, notify, 7, 0, b"cat\0\0\0\0\0\0\0\0\0\0\0\0\0"));
        b.extend(record(2, 2000, 0, 0, code::UNPLUG_IO as u32, 7, 0, &3u64.to_be_bytes()));
        let mut remap = Vec::new();
        remap.extend_from_slice(&(259u32 << 20 | 3).to_be_bytes());
        remap.extend_from_slice(&(259u32 << 20).to_be_bytes());
        remap.extend_from_slice(&77u64.to_be_bytes());
        b.extend(record(3, 2500, 8, 4096, code::REMAP as u32, 7, 0, &remap));
        let mut e: Vec<BlkEvent> = events(b).into_iter().map(Result::unwrap).collect();
        assert_eq!((e[0].time_ns, &e[0].pdu), (0, &BlkPdu::Process("dd".into())));
        e.remove(0);
        assert_eq!(e.iter().map(|e| e.time_ns).collect::<Vec<_>>(), [0, 500, 1000, 1500]);
        assert_eq!(e[0].rwbs(), "R");
        assert_eq!(e[1].pdu, BlkPdu::Process("cat".into()));
        assert_eq!(e[2].pdu, BlkPdu::Unplug { count: 3 });
        assert_eq!(e[3].pdu, BlkPdu::Remap { dev_from: 259 << 20 | 3, dev_to: 259 << 20, sector_from: 77 });
        assert_eq!(e[3].at, 5);
    }

    #[test]
    fn framing_errors_are_fatal_and_name_record_and_offset() {
        let one = record(1, 10, 8, 4096, Q_READ, 7, 0, &[]);
        let mut truncated = one.clone();
        truncated.extend_from_slice(&one[..20]);
        let r = events(truncated);
        assert_eq!(
            r[1].as_ref().unwrap_err(),
            "fatal: t.blktrace.0:2: record 2 at byte 48: truncated: the file ends 20 bytes into the record's 48-byte header"
        );
        let mut magic = one.clone();
        magic.extend_from_slice(&[0u8; 48]);
        assert!(events(magic)[1].as_ref().unwrap_err().starts_with("fatal: t.blktrace.0:2: record 2 at byte 48: wrong magic 0x00000000"));
        let mut big = one.clone();
        let mut rec2 = record(2, 11, 8, 4096, Q_READ, 7, 0, &[]);
        rec2[46..48].copy_from_slice(&60000u16.to_le_bytes());
        big.extend(rec2);
        assert!(events(big)[1].as_ref().unwrap_err().contains("payload length 60000 bytes"));
        let mut v8 = one.clone();
        v8[0] = 8;
        assert!(events(v8)[0].as_ref().unwrap_err().contains("version 8 (blk_io_trace2"));
        let mut short_pdu = one.clone();
        short_pdu.extend(record(2, 11, 8, 4096, Q_READ, 7, 0, &[1, 2, 3]));
        short_pdu.truncate(short_pdu.len() - 1);
        assert!(events(short_pdu)[1].as_ref().unwrap_err().ends_with("truncated: the file ends 2 bytes into the record's 3-byte payload"));
    }

    #[test]
    fn content_errors_are_bad_and_reading_goes_on() {
        let mut b = record(1, 10, 8, 4096, 99, 7, 0, &[]);
        b.extend(record(2, 11, 8, 4096, code::REMAP as u32, 7, 0, &[0; 4]));
        b.extend(record(3, 12, 8, 4096, Q_READ, 7, 0, &[]));
        let r = events(b);
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].as_ref().unwrap_err(), "bad: t.blktrace.0:1: record 1 at byte 0: unknown action code 99 (action 0x00000063)");
        assert!(r[1].as_ref().unwrap_err().ends_with("remap record with a 4-byte payload (16 expected)"));
        assert_eq!(r[2].as_ref().unwrap().sequence, 3);
    }

    #[test]
    fn per_cpu_siblings_are_found_by_name() {
        let dir = std::env::temp_dir().join(format!("iosched-blk-siblings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for n in ["sda.blktrace.0", "sda.blktrace.1", "sda.blktrace.10", "sda.blktrace.x", "sdb.blktrace.0"] {
            std::fs::write(dir.join(n), b"").unwrap();
        }
        let names: Vec<String> =
            per_cpu_files(&dir.join("sda.blktrace.1")).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["sda.blktrace.0", "sda.blktrace.1", "sda.blktrace.10"]);
        assert_eq!(per_cpu_files(&dir.join("sda.blktrace.x")), vec![dir.join("sda.blktrace.x")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
