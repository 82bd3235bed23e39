//! The rotational model on a tiny hand-checkable disk: 6000 rpm (10 ms per revolution), 10
//! sectors per track (1 ms each), 2 surfaces, 100 cylinders; head switch 0.5 ms (so a 1-sector
//! track skew), seek(d) = 1 + 9 (d-1)/98 ms (so seek(1) = 1 ms and a 1-sector cylinder skew).

use iosched::device::geometry::ZoneSpec;
use iosched::device::seek::SeekCurve;
use iosched::device::{ArmPath, Device, DeviceView, RotationalDisk, RotationalSpec};
use iosched::request::{Op, Request};
use iosched::time::NS_PER_MS;

fn spec(cache_segments: u32) -> RotationalSpec {
    RotationalSpec {
        name: "tiny".into(),
        description: String::new(),
        source: String::new(),
        estimated: String::new(),
        rpm: 6000,
        surfaces: 2,
        zones: vec![ZoneSpec { cylinders: 100, sectors_per_track: 10, track_skew_sectors: None, cylinder_skew_sectors: None }],
        seek: SeekCurve::Table { distances: vec![1, 99], times_ms: vec![1.0, 10.0] },
        head_switch_ms: 0.5,
        cylinder_switch_ms: None,
        write_settle_ms: 0.0,
        command_overhead_ms: 0.0,
        bus_mb_s: 0.0,
        cache_segments,
        cache_segment_kib: 64,
        readahead_kib: 32,
    }
}

fn req(id: u64, op: Op, start: u64, size: u32, at_ms: f64) -> Request {
    Request::new(id, op, start, size, (at_ms * 1e6) as u64)
}

fn ms(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS as f64
}

#[test]
fn rotational_phase_is_exact() {
    let d = RotationalDisk::new(spec(0)).unwrap();
    assert_eq!(d.revolution_ns(), 10_000_000.0);
    // After 2.5 ms the platter has turned a quarter; waiting for angle 0.3 takes 0.5 ms.
    let quarter = iosched::device::geometry::REV_UNITS / 4;
    assert_eq!(d.phase_at(2_500_000), quarter);
    assert_eq!(d.phase_at(10_000_000 * 12345 + 2_500_000), quarter);
    assert_eq!(d.rotational_wait_ns(2_500_000, iosched::device::geometry::REV_UNITS * 3 / 10), 500_000);
}

#[test]
fn same_track_then_head_switch_by_hand() {
    let mut d = RotationalDisk::new(spec(0)).unwrap();
    // Sector 3 of track (0,0): wait 3 ms for it, read it in 1 ms.
    let s = d.service(&req(0, Op::Read, 3, 1, 0.0), ArmPath::Direct, 0);
    assert_eq!((ms(s.seek_ns), ms(s.rotation_ns), ms(s.transfer_ns), ms(s.completion_ns)), (0.0, 3.0, 1.0, 4.0));
    // Sector 12 = track (0,1), logical 2, physical slot 3 (one sector of track skew).
    // Head switch 0.5 ms -> at 4.5 ms the platter is at 0.45; slot 3 (0.3) comes at 13 ms.
    let s = d.service(&req(1, Op::Read, 12, 1, 4.0), ArmPath::Direct, 4 * NS_PER_MS);
    assert_eq!((ms(s.seek_ns), ms(s.rotation_ns), ms(s.completion_ns)), (0.5, 8.5, 14.0));
}

#[test]
fn track_skew_hides_the_head_switch() {
    let mut d = RotationalDisk::new(spec(0)).unwrap();
    // Two whole tracks: 10 ms, switch 0.5 ms, the skewed first sector 0.5 ms later, 10 ms.
    let s = d.service(&req(0, Op::Read, 0, 20, 0.0), ArmPath::Direct, 0);
    assert_eq!((ms(s.transfer_ns), ms(s.rotation_ns), ms(s.completion_ns)), (20.0, 1.0, 21.0));
    // Crossing to the next cylinder (sector 20 is cylinder 1): a 1 ms cylinder switch and a
    // 1-sector cylinder skew on top of the track skew of the head switch.
    let mut d = RotationalDisk::new(spec(0)).unwrap();
    let s = d.service(&req(0, Op::Read, 10, 20, 0.0), ArmPath::Direct, 0);
    // Track (0,1) starts at slot 1: 0.5 ms head switch, 0.5 ms wait, 10 ms to 11 ms; cylinder
    // switch 1 ms -> 12 ms, when slot 2 of (1,0) (track skew 1 + cylinder skew 1) arrives; 10 ms.
    assert_eq!((ms(s.seek_ns), ms(s.completion_ns)), (0.5, 22.0));
}

#[test]
fn seek_and_arm_path_waypoints() {
    let mut d = RotationalDisk::new(spec(0)).unwrap();
    // Cylinder 50 (sector 1000): seek 1 + 9*49/98 = 5.5 ms.
    let s = d.service(&req(0, Op::Read, 1000, 1, 0.0), ArmPath::Direct, 0);
    assert_eq!(s.seek_cylinders, 50);
    assert_eq!(ms(s.seek_ns), 5.5);
    // From 50 back to 40 through the last cylinder: 49 + 59 cylinders.
    let s = d.service(&req(1, Op::Read, 800, 1, 0.0), ArmPath::Through(99), s.completion_ns);
    assert_eq!(s.seek_cylinders, 49 + 59);
    assert!((ms(s.seek_ns) - (1.0 + 9.0 * 48.0 / 98.0 + 1.0 + 9.0 * 58.0 / 98.0)).abs() < 1e-5);
}

#[test]
fn track_buffer_serves_sequential_reads_without_a_new_rotation() {
    let mut d = RotationalDisk::new(spec(1)).unwrap();
    let a = d.service(&req(0, Op::Read, 0, 10, 0.0), ArmPath::Direct, 0);
    assert_eq!(ms(a.completion_ns), 10.0);
    // At 15 ms read-ahead has read 4 sectors of track (0,1) (switch, skew, from 11 ms); the
    // next request is served as the stream reaches its end: 21 ms, no new rotation.
    let b = d.service(&req(1, Op::Read, 10, 10, 15.0), ArmPath::Direct, 15 * NS_PER_MS);
    assert!(b.cache_hit);
    assert_eq!(ms(b.completion_ns), 21.0);
    // Already-read data is served at once (no bus delay configured).
    let c = d.service(&req(2, Op::Read, 12, 4, 30.0), ArmPath::Direct, 30 * NS_PER_MS);
    assert!(c.cache_hit);
    assert_eq!(c.completion_ns, 30 * NS_PER_MS);
    // Without a cache the same request would wait for the platter.
    let mut n = RotationalDisk::new(spec(0)).unwrap();
    n.service(&req(0, Op::Read, 0, 10, 0.0), ArmPath::Direct, 0);
    let m = n.service(&req(1, Op::Read, 10, 10, 15.0), ArmPath::Direct, 15 * NS_PER_MS);
    assert!(!m.cache_hit);
    assert!(m.completion_ns > 25 * NS_PER_MS);
}

#[test]
fn a_write_invalidates_cached_copies() {
    let mut d = RotationalDisk::new(spec(1)).unwrap();
    d.service(&req(0, Op::Read, 0, 10, 0.0), ArmPath::Direct, 0);
    d.service(&req(1, Op::Write, 2, 2, 12.0), ArmPath::Direct, 12 * NS_PER_MS);
    let r = d.service(&req(2, Op::Read, 2, 2, 40.0), ArmPath::Direct, 40 * NS_PER_MS);
    assert!(!r.cache_hit);
}

#[test]
fn positioning_estimate_matches_service_start() {
    let mut d = RotationalDisk::new(spec(0)).unwrap();
    d.service(&req(0, Op::Read, 0, 1, 0.0), ArmPath::Direct, 0);
    let now = 3 * NS_PER_MS + 123_456;
    for sector in [5u64, 17, 455, 1999] {
        let est = d.positioning_time_ns(sector, 1, Op::Read, now);
        let mut probe = RotationalDisk::new(spec(0)).unwrap();
        probe.service(&req(0, Op::Read, 0, 1, 0.0), ArmPath::Direct, 0);
        let s = probe.service(&req(1, Op::Read, sector, 1, 0.0), ArmPath::Direct, now);
        assert_eq!(est, s.seek_ns + s.rotation_ns, "sector {sector}");
    }
}

fn cached(segment_kib: u32, readahead_kib: u32) -> RotationalSpec {
    RotationalSpec { cache_segments: 1, cache_segment_kib: segment_kib, readahead_kib, ..spec(1) }
}

#[test]
fn looking_at_the_stream_does_not_change_it() {
    // Read-ahead crosses to track (0,1) (switch 0.5 ms, wait to its skewed first sector at
    // 11 ms). A hit observed at 11.5 ms, between the switch and the first whole sector, must
    // not make the stream pay the switch again: [12, 13) arrives at 14 ms either way.
    let run = |peek: bool| {
        let mut d = RotationalDisk::new(cached(64, 32)).unwrap();
        d.service(&req(0, Op::Read, 0, 8, 0.0), ArmPath::Direct, 0);
        if peek {
            assert!(d.service(&req(1, Op::Read, 2, 4, 11.0), ArmPath::Direct, 11 * NS_PER_MS).cache_hit);
        }
        d.service(&req(2, Op::Read, 12, 1, 11.5), ArmPath::Direct, 11 * NS_PER_MS + NS_PER_MS / 2)
    };
    let (a, b) = (run(false), run(true));
    assert!(a.cache_hit && b.cache_hit);
    assert_eq!(a.completion_ns, b.completion_ns);
    assert_eq!(ms(a.completion_ns), 14.0);
}

#[test]
fn data_pushed_out_by_read_ahead_is_not_a_hit() {
    // A 16 KiB (32-sector) segment with 64 KiB of read-ahead: long after the first read the
    // segment holds only the last 32 sectors the stream read, not [0, 8).
    let mut d = RotationalDisk::new(cached(16, 64)).unwrap();
    d.service(&req(0, Op::Read, 0, 8, 0.0), ArmPath::Direct, 0);
    assert!(!d.service(&req(1, Op::Read, 0, 8, 500.0), ArmPath::Direct, 500 * NS_PER_MS).cache_hit);
    // Whether the stream was stopped first or not makes no difference.
    let mut d = RotationalDisk::new(cached(64, 32)).unwrap();
    d.service(&req(0, Op::Read, 0, 128, 0.0), ArmPath::Direct, 0);
    assert!(!d.service(&req(1, Op::Read, 0, 8, 500.0), ArmPath::Direct, 500 * NS_PER_MS).cache_hit);
}

#[test]
fn estimates_start_where_read_ahead_left_the_head() {
    // After read-ahead has carried the head onward, the estimate for a miss equals the
    // positioning the disk then does (the engine calls advance_to before each decision).
    for target in 66u64..200 {
        let mut d = RotationalDisk::new(RotationalSpec { cache_segments: 4, ..cached(64, 32) }).unwrap();
        d.service(&req(0, Op::Read, 0, 1, 0.0), ArmPath::Direct, 0);
        let now = 500 * NS_PER_MS;
        d.advance_to(now);
        let est = d.positioning_time_ns(target, 1, Op::Read, now);
        let s = d.service(&req(1, Op::Read, target, 1, 500.0), ArmPath::Direct, now);
        assert!(!s.cache_hit);
        assert_eq!(est, s.seek_ns + s.rotation_ns, "target {target}");
    }
}

#[test]
fn no_revolution_is_lost_at_track_cylinder_or_zone_boundaries() {
    use iosched::device::presets::{preset, PRESET_NAMES};
    for name in PRESET_NAMES {
        let mut sp = preset(name).unwrap();
        sp.cache_segments = 0;
        let probe = RotationalDisk::new(sp.clone()).unwrap();
        let g = probe.geometry().clone();
        let rev = probe.revolution_ns() as u64;
        // Zone boundaries, plus a few track and cylinder boundaries inside zone 0.
        let mut starts: Vec<u64> = g.zones.iter().skip(1).map(|z| z.first_sector).collect();
        let spt0 = g.zones[0].sectors_per_track as u64;
        starts.extend([spt0, 2 * spt0, spt0 * sp.surfaces as u64, 3 * spt0 * sp.surfaces as u64]);
        for b in starts {
            let mut d = RotationalDisk::new(sp.clone()).unwrap();
            // Position the head just before the boundary, then read across it at once.
            let first = d.service(&req(0, Op::Read, b - 2, 1, 0.0), ArmPath::Direct, 0);
            let t = first.completion_ns;
            let s = d.service(&req(1, Op::Read, b - 1, 2, 0.0), ArmPath::Direct, t);
            let overhead = (sp.command_overhead_ms * 1e6).round() as u64;
            // Overhead makes the head miss sector b-1 once; after that nothing may be lost:
            // one revolution at most in all.
            assert!(s.completion_ns - t < overhead + rev + rev / 2, "{name}: crossing {b} took {} ns (rev {rev})", s.completion_ns - t);
            // And reading the two sectors as part of one longer request costs no extra turn.
            let mut d = RotationalDisk::new(sp.clone()).unwrap();
            let est = d.positioning_time_ns(b - 2, 4, Op::Read, 0);
            let s = d.service(&req(0, Op::Read, b - 2, 4, 0.0), ArmPath::Direct, 0);
            let initial_wait = est - s.seek_ns;
            let at_boundary = s.rotation_ns - initial_wait;
            assert!(at_boundary < rev / 2, "{name}: boundary {b}: switch + wait {at_boundary} ns (rev {rev})");
        }
    }
}

#[test]
fn estimate_and_measured_positioning_agree_with_command_overhead() {
    // The Deskstar has 0.3 ms of command overhead: the estimate excludes it, as the measured
    // positioning (seek + rotation) a completion reports does.
    use iosched::device::presets::preset;
    let mut sp = preset("ibm-deskstar-34gxp").unwrap();
    sp.cache_segments = 0;
    let mut d = RotationalDisk::new(sp).unwrap();
    let mut now = 0;
    for i in 0..20u64 {
        let target = (i * 2_654_435_761) % (d.capacity_sectors() - 8);
        let est = d.positioning_time_ns(target, 1, Op::Read, now);
        let s = d.service(&req(i, Op::Read, target, 1, 0.0), ArmPath::Direct, now);
        assert_eq!(est, s.seek_ns + s.rotation_ns, "read {i}");
        now = s.completion_ns + 1000;
    }
}

#[test]
fn estimate_knows_the_buffer_and_read_ahead() {
    // After [0, 10) (done at 10 ms) read-ahead reads track (0,1) from 11 ms (switch + skew):
    // sector 10 arrives in the buffer at 12 ms. At 10.2 ms its estimate is the 1.8 ms until then,
    // not a revolution; at 15 ms it is already buffered: 0. Sector 50 is beyond the read-ahead.
    let mut d = RotationalDisk::new(cached(64, 32)).unwrap();
    d.service(&req(0, Op::Read, 0, 10, 0.0), ArmPath::Direct, 0);
    assert_eq!(d.positioning_time_ns(10, 1, Op::Read, 10_200_000), 1_800_000);
    assert_eq!(d.positioning_time_ns(10, 1, Op::Read, 15 * NS_PER_MS), 0);
    assert_eq!(d.positioning_time_ns(5, 1, Op::Read, 15 * NS_PER_MS), 0);
    assert!(d.positioning_time_ns(500, 1, Op::Read, 15 * NS_PER_MS) > 0);
    // A write goes to the media whatever the buffer holds.
    assert!(d.positioning_time_ns(10, 1, Op::Write, 15 * NS_PER_MS) > 0);
}

#[test]
fn a_partial_hit_reads_only_the_missing_blocks_and_is_estimated_as_that_media_access() {
    // Read [0, 8); read-ahead runs on for 1.1 ms (one sector: 1 ms each), then a far read
    // freezes the segment holding [0, 9). A later read of [8, 10) is a partial hit (DiskSim's
    // BUFFER_PARTIAL): sector 8 goes to the host at once, the media reads only sector 9. Its
    // estimate is that media part's positioning, not 0 (an estimate of 0 made an anticipation
    // heuristic take a far request for a free one, docs/real-mode.md), and it is what the
    // completion reports.
    let mut d = RotationalDisk::new(RotationalSpec { cache_segments: 2, ..cached(64, 32) }).unwrap();
    let first = d.service(&req(0, Op::Read, 0, 8, 0.0), ArmPath::Direct, 0);
    let t = first.completion_ns + 1_100_000;
    d.advance_to(t);
    let far = d.service(&req(1, Op::Read, 1500, 8, 0.0), ArmPath::Direct, t);
    let now = far.completion_ns;
    d.advance_to(now);
    // Its first sector is buffered ...
    assert_eq!(d.positioning_time_ns(8, 1, Op::Read, now), 0);
    assert!(d.service(&req(2, Op::Read, 8, 1, 0.0), ArmPath::Direct, now).cache_hit);
    // ... but not all of it.
    let est = d.positioning_time_ns(8, 2, Op::Read, now);
    let s = d.service(&req(3, Op::Read, 8, 2, 0.0), ArmPath::Direct, now);
    assert!(!s.cache_hit);
    assert!(est > 0);
    assert_eq!(est, s.seek_ns + s.rotation_ns);
    // Only sector 9 comes off the media: 1 ms after positioning; no bus, no overheads.
    assert_eq!(ms(s.transfer_ns), 1.0);
    assert_eq!(s.completion_ns, now + est + NS_PER_MS);
    // Sector 9 was sought from the far cylinder (75: sector 1500 at 20 a cylinder) to cylinder 0.
    assert_eq!(s.seek_cylinders, 75);
    // Read-ahead continues in the same segment: [8, 10) is now a whole hit, and so is sector 10
    // once the stream has read it.
    assert!(d.service(&req(4, Op::Read, 8, 2, 0.0), ArmPath::Direct, s.completion_ns).cache_hit);
    let later = s.completion_ns + 5 * NS_PER_MS;
    d.advance_to(later);
    assert_eq!(d.positioning_time_ns(10, 1, Op::Read, later), 0);
}

#[test]
fn a_buffered_write_completes_at_once_and_a_read_waits_for_its_destage() {
    // Write-through: a 2-sector write at sector 55 (cylinder 2, head 1, sectors 5..7 with the
    // 1-sector skews) from cylinder 0 at t = 0: seek 1.09 ms, then the rotation to sector 5+2.
    let mut through = RotationalDisk::new(spec(2)).unwrap();
    let w = through.service(&req(0, Op::Write, 55, 2, 0.0), ArmPath::Direct, 0);
    assert!(ms(w.completion_ns) > 1.0, "{}", ms(w.completion_ns));
    // Write-back (the preset's two segments hold writes): the write completes at once (no bus
    // time, no overhead here) and is destaged as the write-through one was.
    let ext = iosched::device::rotational::DiskExtensions { write_back_segments: 2, ..Default::default() };
    let mut back = RotationalDisk::with_extensions(spec(2), ext).unwrap();
    let b = back.service(&req(0, Op::Write, 55, 2, 0.0), ArmPath::Direct, 0);
    assert_eq!(b.completion_ns, 0);
    assert!(b.cache_hit);
    // A read right after must wait for the destage: it starts no earlier than the media write
    // ended in the write-through drive.
    let r = back.service(&req(1, Op::Read, 0, 1, 0.0), ArmPath::Direct, 0);
    assert!(r.completion_ns > w.completion_ns, "read {} ms, destage ended {} ms", ms(r.completion_ns), ms(w.completion_ns));
}

#[test]
fn a_presets_write_cache_is_a_scenario_option_and_off_by_default() {
    use iosched::scenario::Scenario;
    let parse = |device: &str| Scenario::parse(&format!("[device]\n{device}\n[[process]]\npattern = \"random\"\n"), "wc.toml");
    let off = parse("preset = \"maxtor-stm332061\"").unwrap();
    assert_eq!(off.device_model().unwrap().1.write_back_segments, 0);
    let on = parse("preset = \"maxtor-stm332061\"\nwrite_cache = true").unwrap();
    let (spec, ext, _) = on.device_model().unwrap();
    assert_eq!(ext.write_back_segments, spec.cache_segments);
    assert_eq!(ext, iosched::device::rotational::DiskExtensions { write_back_segments: spec.cache_segments, ..Default::default() });
    // Refused when the scenario is read, naming the field.
    let e = parse("preset = \"maxtor-stm332061\"\ncache_segments = 0\nwrite_cache = true").err().expect("an error").to_string();
    assert!(e.contains("wc.toml") && e.contains("device.write_cache") && e.contains("cache_segments = 0"), "{e}");
}
