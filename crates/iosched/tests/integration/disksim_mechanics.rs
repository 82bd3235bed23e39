//! DiskSim descriptions: parser errors, and the mechanics each mapped parameter controls, on
//! small hand-checked drives.

use crate::tiny_disksim::{req, tiny_drive, MS};
use iosched::device::disksim::parse::parse_str;
use iosched::device::disksim::{load_drive, map_document, DiskSimDrive};
use iosched::device::geometry::Chs;
use iosched::device::ArmPath;
use iosched::request::Op;
use std::path::Path;

/// The tiny drive with two zones: cylinders 0-1 with 10 sectors per track (1 ms each, track skew
/// 2, cylinder skew 3), cylinders 2-3 with 8 (offset 5, skews 1); a 16-block segment, no
/// read-ahead.
fn drive(sparing: u32, zone0_extra: &str, disk_extra: &str) -> DiskSimDrive {
    let zones = format!(
        "        dm_layout_g1_zone {{ First cylinder number = 0, Last cylinder number = 1, Blocks per track = 10,
          Offset of first block = 0, Empty space at zone front = 0, Skew for track switch = 2,
          Skew for cylinder switch = 3, {zone0_extra} defects = [] }},
        dm_layout_g1_zone {{ First cylinder number = 2, Last cylinder number = 3, Blocks per track = 8,
          Offset of first block = 5, Empty space at zone front = 0, Skew for track switch = 1,
          Skew for cylinder switch = 1, Number of spares = 0, slips = [], defects = [] }}"
    );
    let disk = format!(
        "Bulk sector transfer time = 0.0,
  Segment size (in blks) = 16,
  Buffer continuous read = 0,
  Maximum read-ahead (blks) = 0,
  Allow read hits on write data = 1,
  {disk_extra}"
    );
    tiny_drive(4, 100000, sparing, &zones, &disk)
}

#[test]
fn sector_sparing_per_zone_slips_lbas_past_a_defect() {
    // Zone 0: 2 cylinders x 2 surfaces x 10 = 40 sectors, 3 spares, physical sector 5 slipped.
    let d = drive(9, "Number of spares = 3, slips = [ 5 ],", "Fast write level = 0,");
    let disk = d.disk().unwrap();
    let g = disk.geometry();
    assert_eq!(g.capacity_sectors, 37 + 2 * 2 * 8);
    assert_eq!(g.locate(4).chs, Chs { cylinder: 0, head: 0, sector: 4 });
    assert_eq!(g.locate(5).chs, Chs { cylinder: 0, head: 0, sector: 6 }, "LBA 5 slips past the defect");
    // Track 0 holds 9 LBAs; LBA 9 is the first sector of track 1 (head 1).
    assert_eq!(g.locate(0).track_end_sector, 9);
    assert_eq!(g.locate(9).chs, Chs { cylinder: 0, head: 1, sector: 0 });
    // The last LBA of zone 0 is physical sector 37 (cylinder 1, head 1, sector 7); 38, 39 are spares.
    assert_eq!(g.locate(36).chs, Chs { cylinder: 1, head: 1, sector: 7 });
    assert_eq!(g.to_lba(Chs { cylinder: 0, head: 0, sector: 5 }), None);
    assert_eq!(g.to_lba(Chs { cylinder: 1, head: 1, sector: 8 }), None);
    // Zone boundary: LBA 37 is zone 1's first sector, at its offset of 5 slots (of 8).
    let z1 = g.locate(37);
    assert_eq!(z1.chs, Chs { cylinder: 2, head: 0, sector: 0 });
    assert_eq!(z1.slot, 5);
    // Reading LBAs 4..6 passes over the slipped slot: 3 slots = 3 ms of transfer.
    let mut dev = d.build().unwrap();
    let s = dev.service(&req(0, Op::Read, 4, 2), ArmPath::Direct, 0);
    assert_eq!(s.transfer_ns, 3 * MS);
}

#[test]
fn track_sparing_skips_a_whole_track() {
    // Track 1 (cylinder 0, head 1) is slipped: LBAs 10.. go to track 2 (cylinder 1, head 0).
    let d = drive(1, "Number of spares = 1, slips = [ 1 ],", "Fast write level = 0,");
    let g = d.disk().unwrap().geometry().clone();
    assert_eq!(g.capacity_sectors, 30 + 32);
    assert_eq!(g.locate(9).track_end_sector, 10);
    assert_eq!(g.locate(10).chs, Chs { cylinder: 1, head: 0, sector: 0 });
    // Skew counts physical tracks: cylinder 1 head 0 is 1 head switch (2) + 1 cylinder switch (3) in.
    assert_eq!(g.locate(10).slot, 5);
}

#[test]
fn head_switch_and_skew_in_a_sequential_read() {
    let d = drive(0, "Number of spares = 0, slips = [],", "Fast write level = 0,");
    let mut dev = d.build().unwrap();
    // LBAs 8..12 cross from head 0 to head 1: slots 8, 9, then the track skew of 2 puts LBA 10 at
    // slot 2 of head 1; after the 0.3 ms head switch the head waits for slot 2: read at 0 ms
    // starts at slot 8 (8 ms wait), transfers 2 ms, switches 0.3, waits to slot 2 (1.7 ms), 2 ms.
    let s = dev.service(&req(0, Op::Read, 8, 4), ArmPath::Direct, 0);
    assert_eq!(s.seek_ns, 0);
    assert_eq!(s.transfer_ns, 4 * MS);
    assert_eq!(s.completion_ns, 8 * MS + 2 * MS + 2 * MS + 2 * MS);
}

#[test]
fn write_back_completes_in_the_buffer_and_destages_when_idle() {
    let d = drive(
        0,
        "Number of spares = 0, slips = [],",
        "Fast write level = 2, Write hit over. after read = 0.2, Write hit over. after write = 0.2, Read miss over. after write = 0.1, Read hit over. after write = 0.05, Bulk sector transfer time = 0.01,",
    );
    assert_eq!(d.ext.write_back_segments, 1);
    let mut dev = d.build().unwrap();
    // Write 2 sectors at cylinder 1: completes after 0.2 ms overhead + 2 x 0.01 ms bus.
    let w = dev.service(&req(0, Op::Write, 20, 2), ArmPath::Direct, 0);
    assert!(w.cache_hit);
    assert_eq!(w.completion_ns, 220_000);
    // Reading what was written is a hit on write data: 0.05 ms + 2 x 0.01 ms.
    let r = dev.service(&req(1, Op::Read, 20, 2), ArmPath::Direct, 300_000);
    assert!(r.cache_hit);
    assert_eq!(r.completion_ns, 300_000 + 50_000 + 20_000);
    // The destage started at 0.22 ms: seek 2 ms (seek(1)) + 0.5 settle, then the rotation to slot
    // 3 (cylinder 1 head 0: skew 2 + 3) at 5 ms... ends at 7 ms. A read miss at 1 ms waits for it.
    let m = dev.service(&req(2, Op::Read, 0, 1), ArmPath::Direct, MS);
    assert!(!m.cache_hit);
    assert!(m.completion_ns > 7 * MS, "{m:?}");
}

#[test]
fn malformed_files_name_file_line_and_text() {
    let cases = [
        ("disksim_disk X {\n  Number of buffer segments 10,\n}\n", 2, "Number of buffer segments 10"),
        ("disksim_disk X {\n  a = 1,\n  b = [ 1, 2\n", 4, ""),
        ("disksim_disk X {\n  a = 1.2.3\n}\n", 2, "1.2.3"),
        ("disksim_disk X\n  a = 1 }\n", 2, "a = 1 }"),
        ("source missing.model\n", 1, "missing.model"),
    ];
    for (text, line, offending) in cases {
        let e = parse_str(text, Path::new("bad.parv")).unwrap_err();
        assert_eq!(e.line, line, "{text:?}: {e}");
        assert!(e.text.contains(offending), "{text:?}: {e}");
        let shown = e.to_string();
        assert!(shown.starts_with(&format!("bad.parv:{line}: ")), "{shown}");
    }
    // A value of the wrong type is reported with the parameter.
    let doc = parse_str("disksim_disk X { Model = 3 }", Path::new("bad.parv")).unwrap();
    let e = map_document(&doc, Path::new("bad.parv")).unwrap_err();
    assert!(e.to_string().contains("Model = 3"), "{e}");
    // An unreadable file.
    let e = load_drive(Path::new("/nonexistent/x.parv")).unwrap_err();
    assert!(e.to_string().starts_with("/nonexistent/x.parv:0: cannot read"), "{e}");
}

#[test]
fn unknown_parameters_are_reported_by_name() {
    let d = drive(0, "Number of spares = 0, slips = [],", "Fast write level = 0, Frobnication level = 3,");
    assert!(d.unsupported.iter().any(|u| u.starts_with("Frobnication level = 3 (tiny.parv:")), "{:?}", d.unsupported);
}

#[test]
fn read_water_mark_with_the_bus_held_delays_the_host_transfer() {
    // 8 sectors from sector 0 at 1 ms each (6000 rpm, 10 per track): the media finishes at 8 ms.
    // The bus moves a sector in 2 ms. Streaming behind the media, the host transfer starts once
    // the first sector is in the buffer (at 1 ms: DiskSim reconnects for a read at the end of
    // its first sector, not when the head reaches it) and is done at 1 + 16 = 17 ms; with the
    // transfer held until 75% (6 sectors, at 6 ms) is buffered, at 6 + 16 = 22 ms.
    let base = "Fast write level = 0, Bulk sector transfer time = 2.0,";
    let streaming = drive(0, "Number of spares = 0, slips = [],", base);
    let s = streaming.build().unwrap().service(&req(0, Op::Read, 0, 8), ArmPath::Direct, 0);
    assert_eq!(s.completion_ns, 17 * MS);
    // A 1-sector read: the sector comes off the media at 1 ms, then 2 ms on the bus.
    let s = streaming.build().unwrap().service(&req(0, Op::Read, 0, 1), ArmPath::Direct, 0);
    assert_eq!(s.completion_ns, 3 * MS);
    // `Set watermark by reqsize = 1`: the water mark is 75% of the request (otherwise of the segment).
    let held = drive(
        0,
        "Number of spares = 0, slips = [],",
        &format!("{base} High (read) water mark = 0.75, Set watermark by reqsize = 1, Hold bus entire read xfer = 1,"),
    );
    assert!(held.unsupported.iter().all(|u| !u.contains("water mark")), "{:?}", held.unsupported);
    let s = held.build().unwrap().service(&req(0, Op::Read, 0, 8), ArmPath::Direct, 0);
    assert_eq!(s.completion_ns, 22 * MS);
    // Without holding the bus the water mark is reported as not modelled.
    let loose =
        drive(0, "Number of spares = 0, slips = [],", &format!("{base} High (read) water mark = 0.75, Hold bus entire read xfer = 0,"));
    assert!(loose.unsupported.iter().any(|u| u.contains("water mark")), "{:?}", loose.unsupported);
}

#[test]
fn a_read_streams_to_the_host_with_the_bus_idle_across_a_track_switch() {
    // LBAs 8..12 cross from head 0 to head 1 (see `head_switch_and_skew_in_a_sequential_read`):
    // sectors 8 and 9 are in the buffer at 9 and 10 ms, 10 and 11 (after the head switch and the
    // wait for slot 2) at 13 and 14 ms. The bus moves a sector in 1.5 ms, each only once it is
    // in: 8 at 9-10.5, 9 at 10.5-12, then the bus idles until 10 is in: 13-14.5, 11 at 14.5-16.
    // Done at 16 ms, not at 9 + 4 x 1.5 = 15 (a bus that never idles) nor 14 + 1.5 = 15.5 (the
    // last sector's end plus one transfer).
    let d = drive(0, "Number of spares = 0, slips = [],", "Fast write level = 0, Bulk sector transfer time = 1.5,");
    let s = d.build().unwrap().service(&req(0, Op::Read, 8, 4), ArmPath::Direct, 0);
    assert_eq!(s.completion_ns, 16 * MS);
    // Within one track the bus, slower than the media, never idles: 2 sectors from 0, the
    // first in at 1 ms, done at 1 + 2 x 1.5 = 4 ms.
    let s = d.build().unwrap().service(&req(0, Op::Read, 0, 2), ArmPath::Direct, 0);
    assert_eq!(s.completion_ns, 4 * MS);
}

#[test]
fn a_negative_write_settle_shortens_a_writes_head_switch_or_seek_never_below_zero() {
    // DiskSim's dm_seek_time_g1: for a write, max(seek, head switch) + the settle delay, signed,
    // when that maximum is nonzero. Head switch 0.3 ms, settle -0.2 ms: a write one track over
    // positions in 0.1 ms, a read in 0.3 ms; a settle of -0.5 ms leaves 0.
    for (credit_ns, write_ns) in [(200_000, 100_000), (500_000, 0)] {
        let mut d = drive(0, "Number of spares = 0, slips = [],", "Fast write level = 0,");
        d.spec.write_settle_ms = 0.0;
        d.ext.write_settle_credit_ns = credit_ns;
        let mut dev = d.build().unwrap();
        let w = dev.service(&req(0, Op::Write, 10, 1), ArmPath::Direct, 0);
        assert_eq!(w.seek_ns, write_ns, "{w:?}");
        let mut dev = d.build().unwrap();
        let r = dev.service(&req(0, Op::Read, 10, 1), ArmPath::Direct, 0);
        assert_eq!(r.seek_ns, 300_000, "{r:?}");
    }
    // Loaded from a description: the settle stays 0 and the credit holds the magnitude.
    let doc = parse_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/tiny_disksim.rs"))
            .unwrap()
            .split("r#\"")
            .nth(1)
            .unwrap()
            .split("\"#")
            .next()
            .unwrap()
            .replace("{{", "{")
            .replace("}}", "}")
            .replace("{cylinders}", "4")
            .replace("{blocks}", "72")
            .replace("{sparing}", "0")
            .replace("{disk_lines}", "")
            .replace(
                "{zones}",
                "dm_layout_g1_zone { First cylinder number = 0, Last cylinder number = 3, Blocks per track = 9, Offset of first block = 0, Empty space at zone front = 0, Skew for track switch = 0, Skew for cylinder switch = 0, Number of spares = 0, slips = [], defects = [] }",
            )
            .replace("Add. write settling delay = 0.5,", "Add. write settling delay = -0.642,"),
        Path::new("neg.parv"),
    );
    let d = map_document(&doc.unwrap(), Path::new("neg.parv")).unwrap();
    assert_eq!(d.spec.write_settle_ms, 0.0);
    assert_eq!(d.ext.write_settle_credit_ns, 642_000);
}
