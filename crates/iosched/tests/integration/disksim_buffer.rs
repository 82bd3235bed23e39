//! DiskSim buffer mechanisms on small hand-checked drives: how far read-ahead goes (`Buffer
//! continuous read`), and the SCSI disconnect/reselect costs of writes.

use crate::tiny_disksim::{req, tiny_drive, MS};
use iosched::device::disksim::DiskSimDrive;
use iosched::device::ArmPath;
use iosched::request::Op;

/// The tiny drive with one zone of 8 cylinders, 10 sectors per track (1 ms each), no skew; a
/// 32-block segment.
fn drive(disk_extra: &str) -> DiskSimDrive {
    let zone = "        dm_layout_g1_zone { First cylinder number = 0, Last cylinder number = 7, Blocks per track = 10,
          Offset of first block = 0, Empty space at zone front = 0, Skew for track switch = 0,
          Skew for cylinder switch = 0, Number of spares = 0, slips = [], defects = [] }";
    tiny_drive(8, 160, 0, zone, &format!("Segment size (in blks) = 32,\n  Allow read hits on write data = 0,\n  {disk_extra}"))
}

/// After a read of `first` (start, size) at 0, is a read of one block at `probe` 100 ms later
/// (read-ahead long finished) served from the buffer?
fn hit_after(d: &DiskSimDrive, first: (u64, u32), probe: u64) -> bool {
    let mut dev = d.build().unwrap();
    dev.service(&req(0, Op::Read, first.0, first.1), ArmPath::Direct, 0);
    dev.service(&req(1, Op::Read, probe, 1), ArmPath::Direct, 100 * MS).cache_hit
}

#[test]
fn dec_prefetch_scheme_reads_ahead_to_the_end_of_the_track() {
    let dec = drive("Buffer continuous read = 4, Maximum read-ahead (blks) = 24, Fast write level = 0,");
    assert!(dec.ext.readahead_to_track_end);
    assert!(dec.unsupported.iter().all(|u| !u.starts_with("Buffer continuous read")), "{:?}", dec.unsupported);
    // A read of blocks 2..4 (track 0 holds 0..10): read-ahead to the end of track 0, not the
    // 24 blocks Maximum read-ahead would allow.
    assert!(hit_after(&dec, (2, 2), 9));
    assert!(!hit_after(&dec, (2, 2), 10));
    // A read of 8..12 crosses into track 1 (10..20): the segment starts before the track of the
    // block after the request, so read-ahead goes one more track: to 30.
    assert!(hit_after(&dec, (8, 4), 29));
    assert!(!hit_after(&dec, (8, 4), 30));
    // Level 3 (until the segment's end): Maximum read-ahead past the request.
    let seg_end = drive("Buffer continuous read = 3, Maximum read-ahead (blks) = 24, Fast write level = 0,");
    assert!(!seg_end.ext.readahead_to_track_end);
    assert!(seg_end.unsupported.iter().all(|u| !u.starts_with("Buffer continuous read")), "{:?}", seg_end.unsupported);
    assert!(hit_after(&seg_end, (2, 2), 27));
    assert!(!hit_after(&seg_end, (2, 2), 28));
    // Level 1: Maximum read-ahead past the request, but never across a head switch (DiskSim's
    // disk_initiate_seek refuses a background read that needs one): 2..4 reads ahead to the
    // end of track 0 (10); 8..12 ends on track 1 and reads ahead to its end (20); 8..10 ends
    // at track 0's end: no read-ahead at all.
    let track = drive("Buffer continuous read = 1, Maximum read-ahead (blks) = 24, Fast write level = 0,");
    assert_eq!(track.ext.readahead_stop_at, 1);
    assert!(track.unsupported.iter().all(|u| !u.starts_with("Buffer continuous read")), "{:?}", track.unsupported);
    assert!(hit_after(&track, (2, 2), 9));
    assert!(!hit_after(&track, (2, 2), 10));
    assert!(hit_after(&track, (8, 4), 19));
    assert!(!hit_after(&track, (8, 4), 20));
    assert!(!hit_after(&track, (8, 2), 10));
    // Level 2: never across a seek: to the end of cylinder 0 (two tracks, 0..20), within
    // Maximum read-ahead (4 + 24 = 28).
    let cyl = drive("Buffer continuous read = 2, Maximum read-ahead (blks) = 24, Fast write level = 0,");
    assert_eq!(cyl.ext.readahead_stop_at, 2);
    assert!(hit_after(&cyl, (2, 2), 19));
    assert!(!hit_after(&cyl, (2, 2), 20));
}

#[test]
fn dec_prefetch_scheme_extends_read_ahead_from_a_hit_on_the_stream() {
    // Read 2..4 at 0: on track 0 from 2 ms to 4 ms; read-ahead to 10 ends at 10 ms. A hit while
    // read-ahead runs recomputes the limit from the hit: 4..6 at 5 ms ends on track 0 (the
    // block after it, 6, is there): still 10. 8..10 at 9 ms: the block after it (10) is on
    // track 1 and the segment (from 2) starts before that track: one more track, to 30.
    let dec = drive("Buffer continuous read = 4, Maximum read-ahead (blks) = 0, Fast write level = 0,");
    for (hit_at, hit_start, probe, expect) in [(5, 4, 9, true), (5, 4, 10, false), (9, 8, 29, true), (9, 8, 30, false)] {
        let mut dev = dec.build().unwrap();
        dev.service(&req(0, Op::Read, 2, 2), ArmPath::Direct, 0);
        assert!(dev.service(&req(1, Op::Read, hit_start, 2), ArmPath::Direct, hit_at * MS).cache_hit);
        assert_eq!(dev.service(&req(2, Op::Read, probe, 1), ArmPath::Direct, 100 * MS).cache_hit, expect, "{hit_start} {probe}");
    }
}

const WRITE_THROUGH: &str = "Buffer continuous read = 0, Maximum read-ahead (blks) = 0, Fast write level = 0,
  Bulk sector transfer time = 0.2, Write miss over. after read = 0.5, Write miss over. after write = 0.5,
  Data preparation overhead = 0.1, Write completion overhead = 0.05, Write disconnect overhead = 0.1,
  First reselect overhead = 0.3, Other reselect overhead = 0.12, Extradisc command overhead = 0.6,
  Extradisc disconnect overhead = 0.05, Extradisc inter-disconnect delay = 0.4, Extradisc seek delta = 0.25,";

#[test]
fn a_write_through_write_takes_its_data_first_then_reselects_after_the_media_write() {
    let d = drive(&format!("{WRITE_THROUGH} Extra write disconnect = 0,"));
    assert!(d.unsupported.iter().all(|u| !u.contains("reselect") && !u.contains("Extradisc")), "{:?}", d.unsupported);
    let mut dev = d.build().unwrap();
    // Write 2 blocks at LBA 5 (slot 5 of track 0, the head's track) at 0: the mechanism may
    // start after the write-miss overhead (0.5 ms); the data phase starts after it and the data
    // preparation (0.6 ms) and lasts 2 x 0.2 ms; the first block is in at 0.8 ms; the head
    // waits for slot 5 (5 ms) and writes until 7 ms; reselect 0.3 + completion 0.05 = 7.35 ms.
    let w = dev.service(&req(0, Op::Write, 5, 2), ArmPath::Direct, 0);
    assert!(!w.cache_hit);
    assert_eq!(w.completion_ns, 7_350_000);
    // The next write at 20 ms, 2 blocks at slot 7: first block in at 20.8 ms, slot 7 passes at
    // 27 ms, written by 29 ms; + 0.35.
    let w = dev.service(&req(1, Op::Write, 7, 2), ArmPath::Direct, 20 * MS);
    assert_eq!(w.completion_ns, 29_350_000);
}

#[test]
fn the_extra_write_disconnect_of_a_write_that_does_not_continue_the_previous_one() {
    let d = drive(&format!("{WRITE_THROUGH} Extra write disconnect = 1,"));
    let mut dev = d.build().unwrap();
    assert_eq!(dev.service(&req(0, Op::Write, 5, 2), ArmPath::Direct, 0).completion_ns, 7_350_000);
    // At 20 ms, 2 blocks at LBA 2 (not where the previous write ended): extra command 0.6 +
    // disconnect 0.05 + inter-disconnect 0.4 + reselect (first) 0.3 + data preparation 0.1:
    // data from 21.45 ms, both blocks (fewer than 10) in at 21.85; slot 2 passes at 22 ms;
    // written by 24; reselect (other) 0.12 + completion 0.05 = 24.17 ms.
    let w = dev.service(&req(1, Op::Write, 2, 2), ArmPath::Direct, 20 * MS);
    assert_eq!(w.completion_ns, 24_170_000);
    // A write that continues the previous one (4) takes the ordinary path: data from 40.6, in
    // from 40.8 (first block); slot 4 at 44 ms, done 46 + 0.35.
    let w = dev.service(&req(2, Op::Write, 4, 2), ArmPath::Direct, 40 * MS);
    assert_eq!(w.completion_ns, 46_350_000);
}

/// A drive whose reads hold the bus from the water mark on: 0.2 ms a block on the bus, read-miss
/// overhead 0.5, data preparation 0.1, first reselect 0.3, read completion 0.05.
fn held_reads(extra: &str) -> DiskSimDrive {
    drive(&format!(
        "Buffer continuous read = 0, Maximum read-ahead (blks) = 0, Fast write level = 0,
  Bulk sector transfer time = 0.2, Read miss over. after read = 0.5, Read miss over. after write = 0.5,
  Data preparation overhead = 0.1, Read completion overhead = 0.05, First reselect overhead = 0.3,
  Hold bus entire read xfer = 1, High (read) water mark = 0.75, {extra}"
    ))
}

#[test]
fn a_media_read_reselects_the_host_at_the_water_mark() {
    // 4 blocks at LBA 5 at 0 (the head's track): the mechanism starts at 0.5 ms, slot 5 passes
    // at 5 ms; 75% of 4 blocks truncated = 3 blocks are in at 8 ms; the disconnection (0.5 +
    // 0.05) is long over; reselect 0.3 + data preparation 0.1: the transfer runs 8.4 to 9.2 ms
    // (the media ends at 9); + completion 0.05 = 9.25 ms.
    let d = held_reads("Set watermark by reqsize = 1, Read disconnect afterread = 0.05,");
    assert!(d.unsupported.iter().all(|u| !u.contains("disconnect") && !u.contains("watermark")), "{:?}", d.unsupported);
    assert_eq!(d.build().unwrap().service(&req(0, Op::Read, 5, 4), ArmPath::Direct, 0).completion_ns, 9_250_000);
    // A disconnection still under way when the water mark is in delays the reselection: 0.5 + 9
    // = 9.5 ms; 9.5 + 0.4 + 0.8 + 0.05 = 10.75 ms.
    let d = held_reads("Set watermark by reqsize = 1, Read disconnect afterread = 9,");
    assert_eq!(d.build().unwrap().service(&req(0, Op::Read, 5, 4), ArmPath::Direct, 0).completion_ns, 10_750_000);
    // Without `Set watermark by reqsize` the water mark is 75% of the 32-block segment, more
    // than the request: all 4 blocks (9 ms); 9 + 0.4 + 0.8 + 0.05 = 10.25 ms.
    let d = held_reads("Set watermark by reqsize = 0,");
    assert_eq!(d.build().unwrap().service(&req(0, Op::Read, 5, 4), ArmPath::Direct, 0).completion_ns, 10_250_000);
}

#[test]
fn a_write_positions_for_at_least_the_minimum_seek_delay() {
    // As in the write-through test above: 2 blocks at LBA 5 at 0, mechanism from 0.5 ms, slot 5
    // at 5 ms, done 7.35 ms. A minimum positioning of 4.4 ms still makes slot 5 (4.9 ms); 4.8
    // ms misses it (5.3 ms): the next pass is at 15 ms, written by 17, done 17.35.
    for (min, done) in [(4.4, 7_350_000), (4.8, 17_350_000)] {
        let d = drive(&format!("{WRITE_THROUGH} Extra write disconnect = 0, Minimum seek delay = {min},"));
        assert!(d.unsupported.iter().all(|u| !u.starts_with("Minimum seek delay")), "{:?}", d.unsupported);
        assert_eq!(d.build().unwrap().service(&req(0, Op::Write, 5, 2), ArmPath::Direct, 0).completion_ns, done, "{min}");
    }
}

#[test]
fn a_media_write_that_outruns_the_bus_waits_a_revolution_for_the_block() {
    // The bus takes 2 ms a block, the media 1 ms. 3 blocks at LBA 3 at 0: the data phase starts
    // at 0.6 ms; blocks in at 2.6, 4.6, 6.6 ms. Slot 3 passes at 3 ms: block 0 is written 3-4
    // ms; block 1 is not in at 4 ms: slot 4 comes round at 14 ms; blocks 1 and 2 are written
    // 14-16 ms; reselect 0.3 + completion 0.05 = 16.35 ms.
    let d = drive(&WRITE_THROUGH.replace("Bulk sector transfer time = 0.2", "Bulk sector transfer time = 2.0"));
    assert_eq!(d.build().unwrap().service(&req(0, Op::Write, 3, 3), ArmPath::Direct, 0).completion_ns, 16_350_000);
}

#[test]
fn the_extra_write_disconnect_ends_with_the_second_disconnect_overhead() {
    // The extra-disconnect write of the test above (data in from 21.45 to 21.85 ms, written by
    // 24 ms), with a 5 ms second disconnection after the data: 21.85 + 5 + 0.12 + 0.05.
    let d = drive(&format!("{WRITE_THROUGH} Extra write disconnect = 1, Extradisc 2nd disconnect overhead = 5,"));
    assert!(d.unsupported.iter().all(|u| !u.starts_with("Extradisc 2nd")), "{:?}", d.unsupported);
    let mut dev = d.build().unwrap();
    dev.service(&req(0, Op::Write, 5, 2), ArmPath::Direct, 0);
    assert_eq!(dev.service(&req(1, Op::Write, 2, 2), ArmPath::Direct, 20 * MS).completion_ns, 27_020_000);
}

#[test]
fn a_hit_on_an_idle_segment_restarts_read_ahead() {
    // Level 3, 4 blocks of read-ahead: a read of 2..4 reads ahead to 8. A hit on 6..8 long
    // after read-ahead stopped restarts it (to 8 + 4 = 12) with `Read-ahead on idle hit = 1`.
    for (idle, expect) in [(1, true), (0, false)] {
        let d = drive(&format!(
            "Buffer continuous read = 3, Maximum read-ahead (blks) = 4, Fast write level = 0, Read-ahead on idle hit = {idle},"
        ));
        assert!(d.unsupported.iter().all(|u| !u.starts_with("Read-ahead on idle hit")), "{:?}", d.unsupported);
        let mut dev = d.build().unwrap();
        dev.service(&req(0, Op::Read, 2, 2), ArmPath::Direct, 0);
        dev.service(&req(0, Op::Read, 2, 2), ArmPath::Direct, 0);
        assert!(dev.service(&req(1, Op::Read, 6, 2), ArmPath::Direct, 100 * MS).cache_hit);
        assert_eq!(dev.service(&req(2, Op::Read, 11, 1), ArmPath::Direct, 200 * MS).cache_hit, expect, "idle hit {idle}");
    }
}
