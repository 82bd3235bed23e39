//! The blktrace readers against a real trace: shared/traces/takeoverjp_sample.blktrace.0 (raw
//! binary, 6,743 records) and blkparse 1.2.0's text of it. Skipped, with a message, where the
//! samples are absent (they are not part of the repository).

use iosched::trace::blk_events::{BlkEvent, BlkPdu, EventSource};
use iosched::trace::blkparse::BlkparseEvents;
use iosched::trace::blktrace::{BinaryEvents, BlktraceEvents, HEADER_BYTES};
use iosched::trace::input::TraceInput;
use iosched::trace::reader::{ReadError, ReadOptions, TraceReader};
use iosched::trace::{Format, TraceOp, TraceRecord};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn samples() -> Option<(PathBuf, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    let (bin, txt) = (dir.join("takeoverjp_sample.blktrace.0"), dir.join("takeoverjp_sample.blkparse.txt"));
    if bin.exists() && txt.exists() {
        Some((bin, txt))
    } else {
        eprintln!("skipped: the blktrace samples are not in {}", dir.display());
        None
    }
}

fn drain(src: &mut dyn EventSource) -> Vec<BlkEvent> {
    let mut v = Vec::new();
    while let Some(e) = src.next_event().unwrap_or_else(|e| panic!("{}", e.error())) {
        v.push(e);
    }
    v
}

fn binary_events(path: &Path) -> Vec<BlkEvent> {
    drain(&mut BlktraceEvents::open(TraceInput::open(path).unwrap(), Some(path)).unwrap())
}

fn binary_events_of(bytes: Vec<u8>) -> Vec<BlkEvent> {
    drain(&mut BlktraceEvents::new(vec![BinaryEvents::new(TraceInput::from_bytes(bytes, "mem.blktrace.0").unwrap())]))
}

fn read(path: &Path) -> Vec<TraceRecord> {
    TraceReader::open(path, ReadOptions::default()).unwrap().read_all().unwrap()
}

/// The sample's records: (byte offset, length), walking the little-endian headers.
fn record_spans(b: &[u8]) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    let mut off = 0;
    while off + HEADER_BYTES <= b.len() {
        let pdu = u16::from_le_bytes([b[off + 46], b[off + 47]]) as usize;
        v.push((off, HEADER_BYTES + pdu));
        off += HEADER_BYTES + pdu;
    }
    v
}

#[test]
fn binary_and_blkparse_text_agree_event_for_event() {
    let Some((bin, txt)) = samples() else { return };
    let all = binary_events(&bin);
    assert_eq!(all.len(), 6743);
    // blkparse prints every record but the notify ones (two process names here).
    let binary: Vec<&BlkEvent> = all.iter().filter(|e| !e.is_notify()).collect();
    let text = drain(&mut BlkparseEvents::new(TraceInput::open(&txt).unwrap()));
    assert_eq!((binary.len(), text.len()), (6741, 6741));
    for (b, t) in binary.iter().zip(&text) {
        let what = format!("binary record {} vs text line {}", b.at, t.at);
        assert_eq!(b.letters(), t.letters(), "{what}");
        assert_eq!(b.code(), t.code(), "{what}");
        assert_eq!((b.sector, b.bytes, b.time_ns, b.pid), (t.sector, t.bytes, t.time_ns, t.pid), "{what}");
        assert_eq!(b.rwbs(), t.rwbs(), "{what}");
        assert_eq!((b.sequence, b.cpu, b.device, b.error), (t.sequence, t.cpu, t.device, t.error), "{what}");
        match (&b.pdu, &t.pdu) {
            (BlkPdu::Remap { .. } | BlkPdu::Unplug { .. }, _) => assert_eq!(b.pdu, t.pdu, "{what}"),
            (BlkPdu::None, BlkPdu::None) => {}
            other => panic!("{what}: payloads {other:?}"),
        }
    }
    eprintln!("compared {} events: action, sector, size, time (ns), pid, RWBS, sequence, cpu, device, error, payload", text.len());
}

#[test]
fn binary_and_text_give_the_same_963_requests() {
    let Some((bin, txt)) = samples() else { return };
    let rd = TraceReader::open(&bin, ReadOptions::default()).unwrap();
    assert_eq!(rd.format, Format::Blktrace);
    let names = rd.process_names();
    let b = rd.read_all().unwrap();
    let rd = TraceReader::open(&txt, ReadOptions::default()).unwrap();
    assert_eq!(rd.format, Format::Blkparse);
    let t = rd.read_all().unwrap();
    assert_eq!((b.len(), t.len()), (963, 963));
    for (x, y) in b.iter().zip(&t) {
        assert_eq!((x.op, x.size_sectors, x.readahead, x.sync, x.device), (TraceOp::Read, 8, true, false, 259 << 20));
        assert_eq!((x.sector, x.time_ns, x.pid, x.issue_ns, x.complete_ns), (y.sector, y.time_ns, y.pid, y.issue_ns, y.complete_ns));
        assert!(x.issue_ns.is_some() && x.complete_ns > x.issue_ns);
    }
    // The first: Q at 184 ns, D at 1,676, C at 56,992 (blkparse's text).
    assert_eq!((b[0].sector, b[0].time_ns, b[0].issue_ns, b[0].complete_ns), (2348060440, 184, Some(1676), Some(56992)));
    // Read after all events, the notify records have been seen (blkparse printed `(null)`).
    let mut rd = TraceReader::open(&bin, ReadOptions::default()).unwrap();
    while rd.next_record().unwrap().is_some() {}
    assert_eq!(rd.process_names(), vec![(0, "swapper/1".to_string()), (10256, "VizCompositorTh".to_string())]);
    assert!(names.len() <= 2);
}

#[test]
fn a_big_endian_copy_reads_the_same() {
    let Some((bin, _)) = samples() else { return };
    let le = std::fs::read(&bin).unwrap();
    let mut be = le.clone();
    for (off, _) in record_spans(&le) {
        // Header fields swapped; the payloads here are big-endian already (remap, unplug) or
        // text (process names).
        for (at, width) in [(0, 4), (4, 4), (8, 8), (16, 8), (24, 4), (28, 4), (32, 4), (36, 4), (40, 4), (44, 2), (46, 2)] {
            be[off + at..off + at + width].reverse();
        }
    }
    assert_ne!(le, be);
    assert_eq!(binary_events_of(be.clone()), binary_events_of(le));
    let dir = temp_dir("be");
    std::fs::write(dir.join("be.blktrace.0"), &be).unwrap();
    assert_eq!(read(&dir.join("be.blktrace.0")), read(&bin));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("iosched-blktrace-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn two_per_cpu_files_merge_back_to_the_same_order() {
    let Some((bin, _)) = samples() else { return };
    let bytes = std::fs::read(&bin).unwrap();
    let mut files = [Vec::new(), Vec::new()];
    for (i, (off, len)) in record_spans(&bytes).into_iter().enumerate() {
        // Runs of 7 records alternate between cpu 0 and cpu 1.
        let cpu = (i / 7) % 2;
        let mut r = bytes[off..off + len].to_vec();
        r[40..44].copy_from_slice(&(cpu as u32).to_le_bytes());
        files[cpu].extend(r);
    }
    let dir = temp_dir("split");
    std::fs::write(dir.join("s.blktrace.0"), &files[0]).unwrap();
    std::fs::write(dir.join("s.blktrace.1"), &files[1]).unwrap();
    let path = dir.join("s.blktrace.1");
    let mut merged = BlktraceEvents::open(TraceInput::open(&path).unwrap(), Some(&path)).unwrap();
    assert_eq!(merged.file_count(), 2);
    let merged = drain(&mut merged);
    let original = binary_events(&bin);
    assert_eq!(merged.len(), original.len());
    for (i, (m, o)) in merged.iter().zip(&original).enumerate() {
        assert_eq!((m.sequence, m.time_ns, m.code(), m.sector), (o.sequence, o.time_ns, o.code(), o.sector), "event {i}");
        assert_eq!(m.cpu as usize, (i / 7) % 2);
    }
    // And as requests, from either file's name.
    assert_eq!(read(&dir.join("s.blktrace.0")), read(&path));
    let r = read(&path);
    assert_eq!(r.len(), 963);
    assert_eq!(
        r.iter().map(|x| (x.sector, x.time_ns, x.complete_ns)).collect::<Vec<_>>(),
        read(&bin).iter().map(|x| (x.sector, x.time_ns, x.complete_ns)).collect::<Vec<_>>()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn read_bytes(bytes: Vec<u8>, format: Format, skip_bad: bool) -> (Result<Vec<TraceRecord>, String>, u64) {
    let mut rd = match TraceReader::from_bytes(bytes, "x", ReadOptions { format: Some(format), skip_bad }) {
        Ok(r) => r,
        Err(e) => return (Err(e.to_string()), 0),
    };
    let mut v = Vec::new();
    loop {
        match rd.next_record() {
            Ok(Some(r)) => v.push(r),
            Ok(None) => return (Ok(v), rd.skipped()),
            Err(e) => return (Err(e.to_string()), rd.skipped()),
        }
    }
}

#[test]
fn truncated_and_corrupt_binaries_name_the_record_and_offset() {
    let Some((bin, _)) = samples() else { return };
    let bytes = std::fs::read(&bin).unwrap();
    let spans = record_spans(&bytes);
    let (last_off, _) = spans[spans.len() - 1];
    let cut = bytes[..bytes.len() - 10].to_vec();
    let e = read_bytes(cut, Format::Blktrace, true).0.unwrap_err();
    assert_eq!(e, format!("x:6743: record 6743 at byte {last_off}: truncated: the file ends 38 bytes into the record's 48-byte header"));
    let mut magic = bytes.clone();
    magic[3] = 0;
    let e = read_bytes(magic, Format::Blktrace, true).0.unwrap_err();
    assert_eq!(e, "x:1: record 1 at byte 0: wrong magic 0x00617407 (a blktrace record starts with 0x65617407)");
    // Not blktrace at all: detection says so.
    let e = TraceReader::from_bytes(b"\x00\x01\x02\x03garbage".to_vec(), "x", ReadOptions::default()).err().unwrap().to_string();
    assert!(e.starts_with("x: cannot tell the trace's format"), "{e}");
    let mut mid = bytes.clone();
    let (off100, _) = spans[99];
    mid[off100..off100 + 4].copy_from_slice(b"junk");
    let e = read_bytes(mid, Format::Blktrace, true).0.unwrap_err();
    assert!(e.starts_with(&format!("x:100: record 100 at byte {off100}: wrong magic")), "{e}");
    // An unknown action is a bad record: skipped and counted.
    let mut unknown = bytes.clone();
    let (off, _) = spans[2]; // a G event
    unknown[off + 28..off + 30].copy_from_slice(&99u16.to_le_bytes());
    let (r, skipped) = read_bytes(unknown.clone(), Format::Blktrace, true);
    assert_eq!((r.unwrap().len(), skipped), (963, 1));
    let e = read_bytes(unknown, Format::Blktrace, false).0.unwrap_err();
    assert!(e.starts_with(&format!("x:3: record 3 at byte {off}: unknown action code 99")), "{e}");
}

#[test]
fn bad_text_lines_name_the_line_and_skip_bad_counts_them() {
    let Some((_, txt)) = samples() else { return };
    let text = std::fs::read_to_string(&txt).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert!(lines[2].contains(" G ") && lines[8].contains(" Q "));
    lines[2] = lines[2].replace(" G ", " G? ");
    lines[8] = lines[8].replace(" + 8 ", " + eight ");
    let bad = lines.join("\n").into_bytes();
    let e = read_bytes(bad.clone(), Format::Blkparse, false).0.unwrap_err();
    assert!(e.starts_with("x:3: action: unknown `G?`: `259,0    1        3"), "{e}");
    let (r, skipped) = read_bytes(bad, Format::Blkparse, true);
    // The bad Q's request is lost; the rest are whole.
    assert_eq!((r.unwrap().len(), skipped), (962, 2));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic_either_reader(mut bytes in proptest::collection::vec(any::<u8>(), 0..600), magic in any::<bool>()) {
        if magic && bytes.len() >= 4 {
            bytes[..4].copy_from_slice(&0x6561_7407u32.to_le_bytes());
        }
        let _ = read_bytes(bytes.clone(), Format::Blktrace, true);
        let _ = read_bytes(bytes.clone(), Format::Blktrace, false);
        let _ = read_bytes(bytes.clone(), Format::Blkparse, true);
        let _ = read_bytes(bytes, Format::Blkparse, false);
    }

    #[test]
    fn mutated_records_never_panic(flips in proptest::collection::vec((0usize..4096, any::<u8>()), 1..12)) {
        // Valid framing around corrupted fields: the paths a random file rarely reaches.
        let mut b = Vec::new();
        for i in 0..40u32 {
            let (action, pdu): (u32, Vec<u8>) = match i % 5 {
                0 => (0x0811_000f, [0x10u8, 0x30, 0, 3, 0x10, 0x30, 0, 0, 0, 0, 0, 0, 0x8b, 0xcd, 0xa7, 0x18].to_vec()),
                1 => (0x0811_0001, Vec::new()),
                2 => (0x0011_000a, 1u64.to_be_bytes().to_vec()),
                3 => (0x0400_0000, b"proc\0\0\0\0".to_vec()),
                _ => (0x0981_0008, Vec::new()),
            };
            let mut h = Vec::new();
            for v in [0x6561_7407u32, i] { h.extend_from_slice(&v.to_le_bytes()); }
            h.extend_from_slice(&(1000 + i as u64 * 10).to_le_bytes());
            h.extend_from_slice(&(4096u64 * (i as u64 % 3)).to_le_bytes());
            for v in [4096u32, action, 77, 259 << 20, 1] { h.extend_from_slice(&v.to_le_bytes()); }
            h.extend_from_slice(&0u16.to_le_bytes());
            h.extend_from_slice(&(pdu.len() as u16).to_le_bytes());
            b.extend(h);
            b.extend(pdu);
        }
        let text: Vec<u8> = b"259,0 1 1 0.000000184 21279 Q RA 2348060440 + 8 [fio]\n259,0 1 2 0.1 0 C RA 2348060440 + 8 [0]\n259,0 1 3 0.2 5 U N [x] 1\n259,0 1 4 0.3 5 A W 8 + 8 <- (259,3) 4\n".to_vec();
        let (mut b2, mut t2) = (b.clone(), text.clone());
        for &(at, v) in &flips {
            let n = b2.len();
            b2[at % n] = v;
            let n = t2.len();
            t2[at % n] = v;
        }
        for skip in [true, false] {
            let _ = read_bytes(b2.clone(), Format::Blktrace, skip);
            let _ = read_bytes(t2.clone(), Format::Blkparse, skip);
        }
        let mut ev = BlktraceEvents::new(vec![BinaryEvents::new(TraceInput::from_bytes(b2, "m").unwrap())]);
        for _ in 0..100 {
            match ev.next_event() {
                Ok(None) | Err(ReadError::Fatal(_)) => break,
                _ => {}
            }
        }
    }
}
