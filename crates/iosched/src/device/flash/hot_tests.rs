//! Hot data kept in the write cache (hot_data.rs) through the drive: what is programmed, what is
//! read from DRAM, the window, the capacity, flushes and TRIM.

use super::hot_data::HotDataConfig;
use super::spec::Precondition;
use super::tests::small_spec;
use super::*;
use proptest::prelude::*;

const MS: Nanos = 1_000_000;

fn with_hot(precondition: Precondition, capacity_kib: u32, mapping_unit_kib: u32) -> FlashSsd {
    let mut s = small_spec(precondition);
    s.hot = HotDataConfig { window_ms: 1000.0, capacity_kib };
    s.mapping_unit_kib = mapping_unit_kib;
    FlashSsd::new(s, 1).unwrap()
}

/// Writes `sectors` at `sector` at time `at`: its completion.
fn write(ssd: &mut FlashSsd, id: u64, sector: u64, sectors: u32, at: Nanos) -> Nanos {
    ssd.service(&Request::new(id, Op::Write, sector, sectors, at), ArmPath::Direct, at).completion_ns
}

fn read(ssd: &mut FlashSsd, id: u64, sector: u64, at: Nanos) -> Service {
    ssd.service(&Request::new(id, Op::Read, sector, 8, at), ArmPath::Direct, at)
}

/// MQSim's rule: the first write taken after time 0 restarts the window (so unit 0's first
/// write-back is forgotten), the second is noted, the third is hot: kept in DRAM, not
/// programmed, read from DRAM, written back at the flush.
#[test]
fn a_rewrite_within_the_window_stays_in_dram_until_the_flush() {
    let mut ssd = with_hot(Precondition::Full, 1024, 4);
    let t = ssd.spec().timing;
    let a = write(&mut ssd, 0, 0, 8, 0);
    let b = write(&mut ssd, 1, 0, 8, a + MS);
    let flushed = ssd.flush_done_ns(b);
    assert_eq!(ssd.run_counters().host_units, 1, "the two cold writes of unit 0 waited together: one program");
    let c = write(&mut ssd, 2, 0, 8, flushed + MS);
    let counters = ssd.run_counters();
    assert_eq!((counters.hot_units, counters.host_units), (1, 1), "{counters:?}");
    // Read from DRAM: the controller's latency and the link only (no tR).
    let at = c + MS;
    let r = read(&mut ssd, 3, 0, at);
    assert!(r.cache_hit);
    assert_eq!(r.completion_ns, at + t.overhead_ns() + t.link_ns(4096));
    // A unit on flash pays its page read.
    let on_flash = read(&mut ssd, 4, 64, at);
    assert!(!on_flash.cache_hit && on_flash.completion_ns >= at + t.overhead_ns() + t.read_ns());
    let end = ssd.flush_done_ns(r.completion_ns);
    let counters = ssd.run_counters();
    assert_eq!((counters.hot_units, counters.hot_evictions, counters.host_units), (1, 1, 2), "{counters:?}");
    assert!(end >= r.completion_ns + t.program_ns(), "the flush waits for the write-back");
    assert!(!read(&mut ssd, 5, 0, end).cache_hit, "on flash again");
    ssd.check().unwrap();

    // Off (the presets): every write is written back.
    let mut off = FlashSsd::new(small_spec(Precondition::Full), 1).unwrap();
    let a = write(&mut off, 0, 0, 8, 0);
    let b = write(&mut off, 1, 0, 8, a + MS);
    let flushed = off.flush_done_ns(b);
    write(&mut off, 2, 0, 8, flushed + MS);
    off.flush_done_ns(flushed + 10 * MS);
    assert_eq!((off.run_counters().hot_units, off.run_counters().host_units), (0, 2));
}

/// The set is cleared by the first write taken after its milestone (a window after the write
/// that restarted it); that write is still judged against the old set.
#[test]
fn the_window_restarts_after_its_milestone() {
    let mut ssd = with_hot(Precondition::Full, 1024, 4);
    let a = write(&mut ssd, 0, 0, 8, 0); // restarts the window: milestone about 1 s
    let b = write(&mut ssd, 1, 0, 8, a + MS); // cold, noted
    let c = write(&mut ssd, 2, 0, 8, b + 1500 * MS); // past the milestone: hot, then the set is cleared
    assert_eq!(ssd.run_counters().hot_units, 1);
    write(&mut ssd, 3, 0, 8, c + MS); // cold again
    assert_eq!(ssd.run_counters().hot_units, 1);
}

/// A cold write to a held unit (a later window) takes it back to flash.
#[test]
fn a_cold_write_takes_a_held_unit_back_to_flash() {
    let mut ssd = with_hot(Precondition::Full, 1024, 4);
    let mut now = write(&mut ssd, 0, 0, 8, 0);
    now = write(&mut ssd, 1, 0, 8, now + MS);
    now = write(&mut ssd, 2, 0, 8, now + MS); // hot: held
    assert!(read(&mut ssd, 3, 0, now + MS).cache_hit);
    now = write(&mut ssd, 4, 64, 8, now + 2000 * MS); // restarts the window
    now = write(&mut ssd, 5, 0, 8, now + MS); // cold: written back, no longer held
    now = ssd.flush_done_ns(now);
    let c = ssd.run_counters();
    assert_eq!((c.hot_units, c.hot_evictions), (1, 0), "{c:?}");
    assert!(!read(&mut ssd, 6, 0, now + MS).cache_hit);
    ssd.check().unwrap();
}

/// With room for two held units, a third sends the least recently used back to flash: it is
/// programmed (mapped elsewhere, counted as the host's), read from flash after, while the
/// other two are still read from DRAM.
#[test]
fn held_units_beyond_the_capacity_are_written_back_least_recent_first() {
    let mut ssd = with_hot(Precondition::Full, 8, 4);
    let mut now = write(&mut ssd, 0, 1024, 8, 0); // restarts the window
    for (i, unit) in [0u64, 1, 2].into_iter().enumerate() {
        now = write(&mut ssd, 10 + i as u64, unit * 8, 8, now + MS); // cold, noted
    }
    now = ssd.flush_done_ns(now);
    let before = ssd.run_counters().host_units;
    for (i, unit) in [0u64, 1, 0].into_iter().enumerate() {
        now = write(&mut ssd, 20 + i as u64, unit * 8, 8, now + MS); // hot
    }
    let placed_before = ssd.ftl().lookup(1);
    now = write(&mut ssd, 23, 16, 8, now + MS); // hot: unit 2; unit 1 is the least recent
    let c = ssd.run_counters();
    assert_eq!((c.hot_units, c.hot_evictions), (4, 1), "{c:?}");
    let h = ssd.hot.as_ref().unwrap();
    assert!(!h.holds(1) && h.holds(0) && h.holds(2), "unit 1 evicted (to the write buffer), 0 and 2 held");
    ssd.flush_done_ns(now);
    // The flush wrote 0 and 2 back too; unit 1's program shows in its new place.
    assert_ne!(ssd.ftl().lookup(1), placed_before, "unit 1 was programmed");
    assert_eq!(ssd.run_counters().host_units, before + 3);
    ssd.check().unwrap();
}

/// A read hit makes its slot the most recently used (MQSim's Get_slot): reading unit 0 before
/// the third hot write sends unit 1 back instead of unit 0.
#[test]
fn a_read_hit_keeps_its_slot_in_dram() {
    let mut ssd = with_hot(Precondition::Full, 8, 4);
    let mut now = write(&mut ssd, 0, 1024, 8, 0);
    for (i, unit) in [0u64, 1, 2].into_iter().enumerate() {
        now = write(&mut ssd, 10 + i as u64, unit * 8, 8, now + MS);
    }
    now = ssd.flush_done_ns(now);
    for (i, unit) in [0u64, 1].into_iter().enumerate() {
        now = write(&mut ssd, 20 + i as u64, unit * 8, 8, now + MS); // hot: 0, then 1
    }
    now = read(&mut ssd, 25, 0, now + MS).completion_ns; // 0 is now the most recent
    write(&mut ssd, 26, 16, 8, now + MS); // hot: 2, evicting the least recent
    let h = ssd.hot.as_ref().unwrap();
    assert!(h.holds(0) && h.holds(2), "unit 0 kept");
    assert!(!h.holds(1), "unit 1 written back");
}

/// A slot is a mapping unit: with 8 KiB mapping units, units 0 and 1 held in one slot leave
/// together and are written back whole, without reading either from flash.
#[test]
fn an_evicted_slot_is_written_back_whole() {
    let mut ssd = with_hot(Precondition::Full, 8, 8); // one slot
    let mut now = write(&mut ssd, 0, 1024, 8, 0);
    now = write(&mut ssd, 1, 0, 16, now + MS); // mapping unit 0, cold
    now = write(&mut ssd, 2, 32, 16, now + MS); // mapping unit 2, cold
    now = ssd.flush_done_ns(now);
    let reads_before = ssd.run_counters().update_reads;
    now = write(&mut ssd, 3, 0, 16, now + MS); // hot: units 0 and 1, one slot
    now = write(&mut ssd, 4, 32, 8, now + MS); // hot: unit 4's slot; slot 0 leaves whole
    let c = ssd.run_counters();
    assert_eq!((c.hot_units, c.hot_evictions), (3, 2), "{c:?}");
    ssd.flush_done_ns(now);
    let c = ssd.run_counters();
    // Unit 5 (unit 4's sibling) is read for the flush's write-back of unit 4; slot 0 reads nothing.
    assert_eq!(c.update_reads, reads_before + 1, "{c:?}");
    ssd.check().unwrap();
}

/// A hot write takes no slot, but waits while the buffer is full, as MQSim takes no write then.
#[test]
fn a_hot_write_waits_while_the_buffer_is_full() {
    // Counting whole units, an 18 KiB buffer holds four (the last 2 KiB are no room).
    for kib in [16, 18] {
        let mut s = small_spec(Precondition::Full);
        s.hot = HotDataConfig { window_ms: 1000.0, capacity_kib: 1024 };
        s.write_buffer_kib = kib; // one superpage: four units
        let mut ssd = FlashSsd::new(s, 1).unwrap();
        let t = ssd.spec().timing;
        let mut now = write(&mut ssd, 0, 1024, 8, 0);
        now = write(&mut ssd, 1, 0, 8, now + MS); // unit 0 noted
        now = ssd.flush_done_ns(now) + MS;
        // Four cold units of die 0 fill the buffer and start a program.
        let full = write(&mut ssd, 2, 4 * 16 * 8, 32, now);
        let hot = write(&mut ssd, 3, 0, 8, full);
        assert!(hot >= now + t.program_ns(), "{kib} KiB: waited for the program: {} after", hot - full);
        assert_eq!(ssd.run_counters().hot_units, 1);
    }
}

/// Units a cold write carries back from DRAM weigh nothing in the buffer (MQSim counts the
/// write's own sectors): only the write's 8 sectors are held.
#[test]
fn carried_units_take_no_room_in_the_buffer() {
    let mut s = small_spec(Precondition::Full);
    s.hot = HotDataConfig { window_ms: 1000.0, capacity_kib: 1024 };
    s.mapping_unit_kib = 8;
    s.mqsim_back_pressure = true;
    let mut ssd = FlashSsd::new(s, 1).unwrap();
    let mut now = write(&mut ssd, 0, 1024, 8, 0);
    now = write(&mut ssd, 1, 8, 8, now + MS); // mapping unit 0 noted
    now = ssd.flush_done_ns(now); // programmed: unit 1 no longer waits in the buffer
    now = write(&mut ssd, 2, 8, 8, now + MS); // unit 1 held
    assert!(ssd.hot.as_ref().unwrap().holds(1));
    now = write(&mut ssd, 3, 2048, 8, now + 2000 * MS); // restarts the window
    ssd.buffer.admit(now, 0); // the programs' room freed
    let before = ssd.buffer.held_sectors();
    write(&mut ssd, 4, 0, 8, now + MS); // unit 0 cold, carrying unit 1
    assert!(!ssd.hot.as_ref().unwrap().holds(1));
    assert_eq!(ssd.buffer.held_sectors() - before, 8, "unit 1 carried without weight");
}

/// A cold write in a later window takes its mapping unit's other held units back to flash with
/// it, from DRAM: no update read for them, and their data is not lost. (MQSim reads them from
/// flash and drops the held copy.)
#[test]
fn a_cold_write_carries_its_mapping_units_held_units_back_to_flash() {
    let mut ssd = with_hot(Precondition::Full, 1024, 8);
    let mut now = write(&mut ssd, 0, 1024, 8, 0);
    now = write(&mut ssd, 1, 8, 8, now + MS); // unit 1: mapping unit 0 noted
    now = write(&mut ssd, 2, 8, 8, now + MS); // hot: unit 1 held
    assert!(read(&mut ssd, 3, 8, now + MS).cache_hit);
    let on_flash_before = ssd.ftl().lookup(1);
    now = write(&mut ssd, 4, 2048, 8, now + 2000 * MS); // restarts the window
    let c = ssd.run_counters();
    now = write(&mut ssd, 5, 0, 8, now + MS); // unit 0: cold, mapping unit 0
    assert_eq!(ssd.run_counters().update_reads, c.update_reads, "unit 1 comes from DRAM");
    assert!(!ssd.hot.as_ref().unwrap().holds(1));
    ssd.flush_done_ns(now);
    let after = ssd.run_counters();
    assert_eq!(after.hot_evictions, 0);
    assert_eq!(after.host_units - c.host_units, 4, "units 0 and 1 (and the flush's unit 512, 513 merged)");
    assert_ne!(ssd.ftl().lookup(1), on_flash_before, "unit 1 programmed again");
    ssd.check().unwrap();
}

/// A unit held hot that flash never had (a hole of its mapping unit when that was written
/// back) is not lost when a cold write to its mapping unit comes in a later window.
#[test]
fn held_data_that_flash_lacks_survives_a_cold_write() {
    let mut ssd = with_hot(Precondition::None, 1024, 8);
    let mut now = write(&mut ssd, 0, 1024, 8, 0);
    now = write(&mut ssd, 1, 0, 8, now + MS); // unit 0 cold: unit 1 a hole
    now = write(&mut ssd, 2, 8, 8, now + MS); // unit 1 hot: held, never on flash
    assert!(ssd.hot.as_ref().unwrap().holds(1));
    now = write(&mut ssd, 3, 2048, 8, now + 2000 * MS); // restarts the window
    now = write(&mut ssd, 4, 0, 8, now + MS); // unit 0 cold: carries unit 1
    ssd.flush_done_ns(now);
    assert!(ssd.ftl().lookup(1).is_some(), "unit 1's data reached flash");
    ssd.check().unwrap();
}

/// A discard drops held data: nothing is written back for it.
#[test]
fn a_discard_drops_held_data() {
    let mut ssd = with_hot(Precondition::Full, 1024, 4);
    let mut now = write(&mut ssd, 0, 0, 8, 0);
    now = write(&mut ssd, 1, 0, 8, now + MS);
    now = write(&mut ssd, 2, 0, 8, now + MS);
    assert_eq!(ssd.run_counters().hot_units, 1);
    now = ssd.service(&Request::new(3, Op::Discard, 0, 8, now), ArmPath::Direct, now).completion_ns;
    ssd.flush_done_ns(now);
    assert_eq!(ssd.run_counters().hot_evictions, 0);
    assert_eq!(ssd.ftl().lookup(0), None);
    ssd.check().unwrap();
}

/// Hot is judged per mapping unit (MQSim's logical page): with 8 KiB mapping units, a write of
/// unit 1 after unit 0's write-back in the window is hot.
#[test]
fn hot_is_judged_per_mapping_unit() {
    let mut ssd = with_hot(Precondition::Full, 1024, 8);
    let mut now = write(&mut ssd, 0, 1024, 8, 0); // restarts the window
    now = write(&mut ssd, 1, 0, 8, now + MS); // unit 0: mapping unit 0 written back
    now = write(&mut ssd, 2, 8, 8, now + MS); // unit 1: the same mapping unit, hot
    let c = ssd.run_counters();
    assert_eq!(c.hot_units, 1, "{c:?}");
    assert!(read(&mut ssd, 3, 8, now + MS).cache_hit);
    let mut four = with_hot(Precondition::Full, 1024, 4);
    let mut now = write(&mut four, 0, 1024, 8, 0);
    now = write(&mut four, 1, 0, 8, now + MS);
    write(&mut four, 2, 8, 8, now + MS);
    assert_eq!(four.run_counters().hot_units, 0, "4 KiB mapping units: another unit, cold");
}

#[test]
fn the_fields_are_read_and_checked() {
    let s = tests::scenario_flash_spec("hot_window_ms = 1000\nhot_cache_kib = 4096").unwrap().unwrap();
    assert_eq!(s.hot, HotDataConfig { window_ms: 1000.0, capacity_kib: 4096 });
    for (bad, field) in [
        ("hot_cache_kib = 64", "hot_cache_kib"),
        ("hot_window_ms = 1000", "hot_cache_kib"),
        ("hot_window_ms = -5\nhot_cache_kib = 64", "hot_window_ms"),
    ] {
        let e = tests::scenario_flash_spec(bad).unwrap_err();
        assert!(e.contains(&format!("device.flash.{field}")), "{bad}: {e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Writes, reads, discards, flushes and gaps with hot data kept (a small capacity, 8 or 4 KiB
    /// mapping units) keep the mapping's invariants; a final flush leaves nothing held, and
    /// nothing is lost: every unit the host wrote and did not discard since is on flash.
    #[test]
    fn hot_data_keeps_the_invariants_over_random_streams(
        ops in proptest::collection::vec((0u8..12, 0u64..512, 1u32..40), 1..400),
        mapping_unit_kib in prop_oneof![Just(4u32), Just(8)],
        capacity_kib in prop_oneof![Just(8u32), Just(64), Just(4096)],
    ) {
        let mut ssd = with_hot(Precondition::None, capacity_kib, mapping_unit_kib);
        let cap = ssd.capacity_sectors();
        let mut now = 0;
        let mut written = std::collections::BTreeSet::new();
        for (i, (kind, at, len)) in ops.into_iter().enumerate() {
            let sector = (at * 8) % cap;
            let len = len.min(((cap - sector) as u32).max(1));
            let at_now = now;
            let req = |op| Request::new(i as u64, op, sector, len, at_now);
            match kind {
                0 => {
                    now = ssd.service(&req(Op::Discard), ArmPath::Direct, now).completion_ns;
                    for u in ssd.whole_units(sector, len as u64) {
                        written.remove(&u);
                    }
                }
                1 => now = ssd.flush_done_ns(now),
                2..=4 => now = ssd.service(&req(Op::Read), ArmPath::Direct, now).completion_ns,
                11 => now += 700 * MS,
                _ => {
                    now = write(&mut ssd, i as u64, sector, len, now);
                    written.extend(ssd.units_of(&req(Op::Write)));
                }
            }
            let slots = ssd.hot.as_ref().unwrap().held_slots();
            prop_assert!(slots <= (capacity_kib / mapping_unit_kib) as usize);
        }
        ssd.flush_done_ns(now);
        prop_assert_eq!(ssd.hot.as_ref().unwrap().held_units(), 0);
        prop_assert!(ssd.check().is_ok(), "{:?}", ssd.check());
        for &u in &written {
            prop_assert!(ssd.ftl().lookup(u).is_some(), "unit {} written, not on flash", u);
        }
    }
}
