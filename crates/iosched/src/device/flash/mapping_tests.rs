//! The cached mapping table through the flash drive (mapping_cache.rs): a miss reads its
//! translation page before the data, a hit costs nothing, misses on one translation page share
//! its read, an evicted dirty entry is written back; off, nothing changes.

use super::mapping_cache::MappingCacheConfig;
use super::spec::Precondition;
use super::tests::{scenario_flash_spec, small_spec};
use super::*;

/// The small drive, full, with a mapping cache of `kib` (8-byte entries, 4-byte translation
/// entries: 2,048 per 8 KiB translation page).
fn drive(kib: u32) -> FlashSsd {
    drive_with(
        Precondition::Full,
        MappingCacheConfig { capacity_kib: kib, entry_bytes: 8, translation_entry_bytes: 4, units_per_entry: 1 },
        false,
    )
}

/// The small drive in state `pre` with the mapping cache `mapping` (and read priority).
fn drive_with(pre: Precondition, mapping: MappingCacheConfig, read_priority: bool) -> FlashSsd {
    let mut s = small_spec(pre);
    s.mapping = mapping;
    s.die_scheduling.read_priority = read_priority;
    FlashSsd::new(s, 1).unwrap()
}

fn read(ssd: &mut FlashSsd, id: u64, lpn: u64, units: u32, now: Nanos) -> Nanos {
    let req = Request::new(id, Op::Read, lpn * UNIT_SECTORS, units * UNIT_SECTORS as u32, now);
    ssd.service(&req, ArmPath::Direct, now).completion_ns - now
}

#[test]
fn a_miss_reads_its_translation_page_first_and_a_hit_costs_nothing() {
    let (mut off, mut on) = (drive(0), drive(1));
    let t = off.spec().timing;
    let ideal = read(&mut off, 1, 100, 1, 0);
    // Idle drive: the translation page's read (tR, one 512-byte sector over its channel)
    // comes before the data's.
    assert_eq!(read(&mut on, 1, 100, 1, 0), ideal + t.read_ns() + t.channel_ns(512));
    let c = on.ftl().counters;
    assert_eq!((c.map_hits, c.map_misses, c.map_reads, c.map_writes), (0, 1, 1, 0));
    // Later, idle again: the entry is cached.
    let later = 10_000_000;
    assert_eq!(read(&mut on, 2, 100, 1, later), read(&mut off, 2, 100, 1, later));
    assert_eq!(on.ftl().counters.map_hits, 1);
    // The expected service time counts the miss too.
    let (a, b) = (
        on.positioning_time_ns(101 * UNIT_SECTORS, 8, Op::Read, 2 * later),
        off.positioning_time_ns(101 * UNIT_SECTORS, 8, Op::Read, 2 * later),
    );
    assert_eq!(a, b + t.read_ns() + t.channel_ns(512));
}

#[test]
fn misses_on_one_translation_page_share_its_read() {
    let mut on = drive(1);
    // Units 0..4 share translation page 0: four misses, one read.
    read(&mut on, 1, 0, 4, 0);
    let c = on.ftl().counters;
    assert_eq!((c.map_misses, c.map_reads), (4, 1));
    // A miss on that page while its read is under way shares it as well.
    let mut on2 = drive(1);
    read(&mut on2, 1, 0, 1, 0);
    read(&mut on2, 2, 1, 1, 1_000);
    assert_eq!((on2.ftl().counters.map_misses, on2.ftl().counters.map_reads), (2, 1));
}

#[test]
fn an_evicted_dirty_entry_is_written_back_with_its_page_and_a_clean_one_dropped() {
    // 1 KiB of 64-byte entries: 16 entries; translation pages of 128 entries (8 KiB / 64 B).
    let mut on = drive_with(
        Precondition::Full,
        MappingCacheConfig { capacity_kib: 1, entry_bytes: 64, translation_entry_bytes: 64, units_per_entry: 1 },
        false,
    );
    // 17 writes to units 0..17 (translation page 0): programmed, each entry updated (dirty).
    let mut now = 0;
    for lpn in 0..17u64 {
        let req = Request::new(lpn, Op::Write, lpn * UNIT_SECTORS, UNIT_SECTORS as u32, now);
        now = on.service(&req, ArmPath::Direct, now).completion_ns;
    }
    now = on.flush_done_ns(now);
    let c = on.ftl().counters;
    // The 17th entry pushes out the first (dirty): page 0 is written back with the 15 other
    // cached entries of the page, which are clean from then on; the 17th stays dirty. (Each
    // miss reads page 0 unless a read of it is under way: a fetch brings only its own entry.)
    assert_eq!((c.map_misses, c.map_writes), (17, 1));
    // Reads of units on page 1 push out the 15 clean entries (no write-back), then the dirty one.
    for i in 0..15u64 {
        now += read(&mut on, 100 + i, 128 + i, 1, now);
    }
    assert_eq!(on.ftl().counters.map_writes, 1);
    now += read(&mut on, 115, 143, 1, now);
    assert_eq!(on.ftl().counters.map_writes, 2);
    assert!(now > 0);
    on.check().unwrap();
}

#[test]
fn an_entry_of_two_units_misses_once_for_both() {
    // 8 KiB entries (MQSim's: its logical page): units 100 and 101 share entry 50.
    let cfg = MappingCacheConfig { capacity_kib: 1, entry_bytes: 8, translation_entry_bytes: 4, units_per_entry: 2 };
    let (mut unit, mut pair) = (drive(1), drive_with(Precondition::Full, cfg, false));
    let t = unit.spec().timing;
    read(&mut pair, 1, 100, 2, 0);
    read(&mut unit, 1, 100, 2, 0);
    let (p, u) = (pair.ftl().counters, unit.ftl().counters);
    assert_eq!((p.map_hits, p.map_misses), (1, 1), "the second unit finds the first's entry");
    assert_eq!((u.map_hits, u.map_misses), (0, 2));
    // Later, idle: unit 101 alone hits (its entry came with unit 100's), unit 102 misses.
    let later = 10_000_000;
    let off = read(&mut drive(0), 1, 101, 1, later);
    assert_eq!(read(&mut pair, 2, 101, 1, later), off);
    let miss = t.read_ns() + t.channel_ns(512);
    assert_eq!(read(&mut pair, 3, 102, 1, 2 * later), read(&mut drive(0), 1, 102, 1, 2 * later) + miss);
    // The expected service time looks up the unit's entry too.
    let at = 3 * later;
    assert_eq!(
        pair.positioning_time_ns(103 * UNIT_SECTORS, 8, Op::Read, at),
        unit.positioning_time_ns(103 * UNIT_SECTORS, 8, Op::Read, at) - miss
    );
    pair.check().unwrap();
}

/// A look-up computed ahead of time (a buffered program's, when its write arrives) issues its
/// translation read at that later time; an access computed after it but earlier in time does not
/// wait for that read: it reads the page itself, and the entry is usable from the earlier read.
#[test]
fn an_access_does_not_wait_for_a_translation_read_issued_later() {
    let mut on = drive(1);
    let t = on.spec().timing;
    let miss = t.read_ns() + t.channel_ns(512);
    let later = 5_000_000;
    // Entry 100 looked up for an access at 5 ms: its read is issued then.
    assert_eq!(on.map_entry(100, later, true), (later + miss, true));
    // An access at 0 reads the page itself (idle die): usable after one read, not at 5 ms.
    assert_eq!(on.map_entry(100, 0, false), (miss, true));
    // The entry now holds the earlier read: a look-up at 1 ms finds it ready.
    assert_eq!(on.map_entry(100, 1_000_000, false), (1_000_000, false));
    // Unit 101 (same translation page, not cached) at 0 shares the read issued at 0, under way.
    assert_eq!(on.map_entry(101, 0, false), (miss, true));
    // A page whose only read is issued later is read again for an access before it.
    assert!(on.map_entry(5_000, later, false).0 >= later + miss);
    assert_eq!(on.map_entry(5_001, 1_000, false), (1_000 + miss, true));
    let c = on.ftl().counters;
    assert_eq!((c.map_hits, c.map_misses, c.map_reads), (1, 5, 4));
}

#[test]
fn mapping_fields_in_a_scenario() {
    let spec = scenario_flash_spec;
    let s = spec("mapping_cache_kib = 2048\nmapping_entry_bytes = 9\ntranslation_entry_bytes = 6").unwrap().unwrap();
    assert_eq!(s.mapping, MappingCacheConfig { capacity_kib: 2048, entry_bytes: 9, translation_entry_bytes: 6, units_per_entry: 1 });
    assert!(spec("").unwrap().unwrap().mapping.is_off(), "the presets hold the whole table in DRAM");
    let e = spec("mapping_entry_bytes = 0").unwrap_err();
    assert!(e.contains("`device.flash.mapping_entry_bytes` must be in [1, 64], got 0"), "{e}");
    let small = spec("mapping_cache_kib = 1\nmapping_entry_bytes = 64\ntranslation_entry_bytes = 4").unwrap().unwrap();
    assert_eq!(small.mapping.capacity_entries(), 16, "16 entries of 64 bytes in 1 KiB");
    let e = spec("mapping_cache_kib = 16777217").unwrap_err();
    assert!(e.contains("`device.flash.mapping_cache_kib` must be in [0, 16777216], got 16777217"), "{e}");
    assert_eq!(spec("mapping_cache_kib = 8\nmapping_entry_kib = 8").unwrap().unwrap().mapping.units_per_entry, 2);
    for bad in ["0", "6", "1028"] {
        let e = spec(&format!("mapping_entry_kib = {bad}")).unwrap_err();
        assert!(e.contains(&format!("`device.flash.mapping_entry_kib` must be a multiple of 4 in [4, 1024], got {bad}")), "{e}");
    }
    let e = spec("translation_entry_bytes = 65").unwrap_err();
    assert!(e.contains("`device.flash.translation_entry_bytes` must be in [1, 64], got 65"), "{e}");
}

/// Review of 2026-11-29: with read priority, a translation read issued while programming (a
/// write's entry) pushes back programs queued on its die; the buffer must learn their new ends
/// at once, as it does after a read.
#[test]
fn programs_pushed_back_by_mapping_reads_are_known_to_the_buffer() {
    let mut ssd = drive_with(
        Precondition::Full,
        MappingCacheConfig { capacity_kib: 1, entry_bytes: 64, translation_entry_bytes: 64, units_per_entry: 1 },
        true,
    );
    let units = ssd.ftl().logical_units();
    let (mut now, mut left) = (0, Vec::new());
    for i in 0..400u64 {
        let lpn = (i * 37) % units;
        let req = Request::new(i, Op::Write, lpn * UNIT_SECTORS, UNIT_SECTORS as u32, now);
        now = ssd.service(&req, ArmPath::Direct, now).completion_ns;
        ssd.res.take_moved(&mut left);
        assert!(left.is_empty(), "after write {i}: {} pushed-back programs not applied", left.len());
    }
    assert!(ssd.ftl().counters.map_reads > 0 && ssd.ftl().counters.map_writes > 0);
    ssd.check().unwrap();
}

/// GC's moves update their entries without reading translation pages (MQSim's
/// Allocate_new_page_for_gc): hot writes over 64 units of an aged drive make GC move cold
/// units, which end up cached (dirty) while only the 64 written units ever missed.
#[test]
fn gc_moves_cache_their_entries_without_a_read() {
    let mut ssd = drive_with(
        Precondition::Aged,
        MappingCacheConfig { capacity_kib: 64, entry_bytes: 8, translation_entry_bytes: 4, units_per_entry: 1 },
        false,
    );
    assert!(ssd.ftl().logical_units() < 8192, "every entry fits: nothing is pushed out");
    let gc_before = ssd.ftl().counters.gc_units;
    let mut now = 0;
    for i in 0..3_000u64 {
        let lpn = (i * 7) % 64;
        let req = Request::new(i, Op::Write, lpn * UNIT_SECTORS, UNIT_SECTORS as u32, now);
        now = ssd.service(&req, ArmPath::Direct, now).completion_ns;
    }
    ssd.flush_done_ns(now);
    let c = ssd.ftl().counters;
    assert!(c.gc_units > gc_before, "the hot writes made GC move data");
    assert_eq!((c.map_misses, c.map_writes), (64, 0));
    let cached = ssd.mapping.as_ref().unwrap().len();
    assert!(cached > 64, "GC's moved units are cached beside the 64 written: {cached}");
    ssd.check().unwrap();
}

/// A TRIM changes the entries of units holding data (to unmapped): cached ones become dirty,
/// missing ones are cached dirty without a read.
#[test]
fn a_trim_dirties_the_entries_of_units_holding_data() {
    let mut ssd = drive(64);
    // Units 0..4 read: their entries cached clean (one translation read, shared).
    let now = read(&mut ssd, 1, 0, 4, 0);
    let before = ssd.ftl().counters;
    assert_eq!((before.map_misses, before.map_reads), (4, 1));
    // A TRIM of units 0..8: 0..4 cached (now dirty), 4..8 not (cached dirty, no read).
    let trim = Request::new(2, Op::Discard, 0, 8 * UNIT_SECTORS as u32, now);
    ssd.service(&trim, ArmPath::Direct, now);
    let c = ssd.ftl().counters;
    assert_eq!((c.map_reads, c.map_misses), (1, 4), "no translation read for a TRIM");
    assert_eq!(c.trimmed_units, 8);
    // Every entry pushed out (8,192 fit in 64 KiB): the eight are dirty.
    let mut m = ssd.mapping.take().unwrap();
    let out: Vec<(u32, bool)> = (0..8192u32).filter_map(|i| m.insert(100_000 + i, 0, 0, false)).map(|e| (e.entry, e.dirty)).collect();
    assert_eq!(out, (0..8u32).map(|l| (l, true)).collect::<Vec<_>>());
}

/// `service`, then `resume` whenever the drive asks, as the engine does: the final timing.
fn serve_to_end(ssd: &mut FlashSsd, req: &Request, now: Nanos) -> Service {
    let mut s = ssd.service(req, ArmPath::Direct, now);
    while let Some(at) = s.resume_ns {
        s = ssd.resume(req, at);
    }
    s
}

/// The defect of the ninth session, mended: under read priority a read whose entry is being
/// read from flash (a miss) is placed on its data's die when the entry arrives, not when it
/// starts, so a read that starts later but reaches the die earlier goes first. Read A misses
/// (its translation page on another die); read B, its entry cached, starts 1 us later on A's
/// data's die: B is served as on a drive without A, and A's page read follows B's.
#[test]
fn under_read_priority_a_read_waiting_for_its_entry_does_not_hold_the_die() {
    let cfg = MappingCacheConfig { capacity_kib: 64, entry_bytes: 8, translation_entry_bytes: 4, units_per_entry: 1 };
    let make = || drive_with(Precondition::Full, cfg, true);
    let (mut ssd, mut alone) = (make(), make());
    let dies = ssd.spec().geometry.dies() as u64;
    // B: unit 0 (its entry cached by a first read). A: a unit on B's die whose translation page
    // (entry / 2,048: 8 KiB pages of 4-byte entries) lies on another die.
    let b_lpn = 0u64;
    let die = ssd.ftl().die_of(b_lpn);
    let a_lpn = (2048..ssd.ftl().logical_units())
        .find(|&l| ssd.ftl().die_of(l) == die && (l / 2048) % dies != die as u64)
        .expect("a unit on B's die with its translation page elsewhere");
    for d in [&mut ssd, &mut alone] {
        serve_to_end(d, &Request::new(1, Op::Read, b_lpn * UNIT_SECTORS, UNIT_SECTORS as u32, 0), 0);
    }
    let t = 10_000_000;
    let a = Request::new(2, Op::Read, a_lpn * UNIT_SECTORS, UNIT_SECTORS as u32, t);
    let first = ssd.service(&a, ArmPath::Direct, t);
    assert!(first.resume_ns.is_some_and(|r| r > t), "A waits for its entry: {first:?}");
    let b = Request::new(3, Op::Read, b_lpn * UNIT_SECTORS, UNIT_SECTORS as u32, t + 1_000);
    let with_a = serve_to_end(&mut ssd, &b, t + 1_000);
    let without = serve_to_end(&mut alone, &b, t + 1_000);
    assert_eq!(with_a.completion_ns, without.completion_ns, "B is not held by A's page read");
    // A, resumed: its page read after its translation read, and after B's on the die.
    let mut s = first;
    while let Some(at) = s.resume_ns {
        s = ssd.resume(&a, at);
    }
    let timing = ssd.spec().timing;
    assert!(s.completion_ns >= t + timing.overhead_ns() + 2 * timing.read_ns(), "{s:?}");
    assert_eq!(s.dispatch_ns, t);
    assert!(ssd.deferred_reads.is_empty());
}

/// Under read priority with a mapping cache, a read whose flash half waits for its entry (a
/// deferred read, resumed when the entry comes) still waits for its buffered half's DRAM read:
/// with a slow DRAM, exactly the latency, the DRAM read and the link.
#[test]
fn a_deferred_read_waits_for_its_buffered_part_in_dram() {
    let cfg = MappingCacheConfig { capacity_kib: 64, entry_bytes: 8, translation_entry_bytes: 4, units_per_entry: 1 };
    let mut s = small_spec(Precondition::Full);
    s.mapping = cfg;
    s.die_scheduling.read_priority = true;
    s.dram = super::dram::DramTiming { mt_s: 1.0, burst_bytes: 1, row_bytes: 8192, trcd_ns: 13, tcl_ns: 13, trp_ns: 13 };
    let mut ssd = FlashSsd::new(s, 1).unwrap();
    let t = ssd.spec().timing;
    let w = Request::new(0, Op::Write, 0, 8, 0);
    let at = serve_to_end(&mut ssd, &w, 0).completion_ns + 1_000_000;
    let misses = ssd.ftl().counters.map_misses;
    let r = Request::new(1, Op::Read, 0, 16, at);
    let first = ssd.service(&r, ArmPath::Direct, at);
    assert!(first.resume_ns.is_some(), "deferred: unit 1's entry is read first");
    let mut s = first;
    while let Some(when) = s.resume_ns {
        s = ssd.resume(&r, when);
    }
    assert_eq!(ssd.ftl().counters.map_misses, misses + 1);
    let dram_ns = ssd.spec().dram.access_ns(4096);
    assert!(dram_ns > 3 * (t.read_ns() + t.channel_ns(4096)), "the DRAM is the longer");
    assert_eq!(s.completion_ns, at + t.overhead_ns() + dram_ns + t.link_ns(8192));
}
