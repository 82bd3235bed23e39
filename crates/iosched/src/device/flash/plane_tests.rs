//! A write frontier per plane (plane_frontiers.rs) through the drive: allocation, one page per
//! program, pairing at equal page index, invariants.

use super::spec::Precondition;
use super::tests::small_spec;
use super::*;
use proptest::prelude::*;

/// The small drive (2 channels x 2 dies x 2 planes, 8 KiB pages) with a frontier per plane.
fn per_plane(precondition: Precondition) -> FlashSpec {
    let mut s = small_spec(precondition);
    s.plane_frontiers = true;
    s
}

fn write_page(ssd: &mut FlashSsd, id: u64, page: u64, at: Nanos) -> Nanos {
    ssd.service(&Request::new(id, Op::Write, page * 16, 16, at), ArmPath::Direct, at).completion_ns
}

/// Consecutive 8 KiB pages go to channels first, then dies, then planes (MQSim's CWDP): the
/// FTL's die `k` for page `k` of the first eight, plane `k / 4` of array die `k % 4`.
#[test]
fn pages_are_allocated_channels_first_then_ways_then_planes() {
    let ssd = FlashSsd::new(per_plane(Precondition::None), 1).unwrap();
    assert_eq!(ssd.ftl().geometry().dies(), 8);
    assert_eq!(ssd.ftl().geometry().planes_per_die, 1);
    for page in 0..16u64 {
        let ftl_die = ssd.ftl().die_of(page * 2);
        assert_eq!(ftl_die, (page % 8) as u32);
        assert_eq!(ssd.ftl().die_of(page * 2 + 1), ftl_die, "a page's two units together");
        assert_eq!(ssd.die_of_plane(ftl_die), (page % 4) as u32);
    }
    // The logical capacity is the same as with superpages.
    let plain = FlashSsd::new(small_spec(Precondition::None), 1).unwrap();
    assert_eq!(ssd.ftl().logical_units(), plain.ftl().logical_units());
}

/// An 8 KiB write is programmed at once (a page), where superpages wait for a second page.
#[test]
fn a_page_is_programmed_without_waiting_for_a_superpage() {
    let mut ssd = FlashSsd::new(per_plane(Precondition::None), 1).unwrap();
    write_page(&mut ssd, 0, 0, 0);
    let c = ssd.run_counters();
    assert_eq!((c.host_units, c.padding_units), (2, 0), "{c:?}");
    let mut plain = FlashSsd::new(small_spec(Precondition::None), 1).unwrap();
    write_page(&mut plain, 0, 0, 0);
    assert_eq!(plain.run_counters().host_units, 0, "half a superpage waits");
}

/// Die 0 programs page 0 (plane 0, index 0); page 4 (plane 1, index 0) arrives after it
/// started and goes next; page 8 (plane 0, index 1) after that; page 12 (plane 1, index 1)
/// arrives before page 8's program starts: it joins it. Three program times, not four.
#[test]
fn a_page_joins_a_waiting_program_of_another_plane_at_its_page_index() {
    let run = |last_page: u64| {
        let mut ssd = FlashSsd::new(per_plane(Precondition::None), 1).unwrap();
        let mut now = 0;
        for (i, page) in [0, 4, 8, last_page].into_iter().enumerate() {
            now = write_page(&mut ssd, i as u64, page, now);
        }
        let start_of_first = ssd.spec().timing.overhead_ns(); // never later than the first program's start
        (ssd.flush_done_ns(now), ssd.run_counters(), start_of_first, ssd.spec().timing.program_ns())
    };
    let (end, c, t0, prog) = run(12);
    assert_eq!(c.paired_programs, 1, "{c:?}");
    assert!(end < t0 + 3 * prog + prog / 2, "three program times: {end}");
    // A last page on another die (page 13: die 1) pairs with nothing and leaves die 0 three
    // programs.
    let (end2, c2, _, _) = run(13);
    assert_eq!(c2.paired_programs, 0, "{c2:?}");
    assert!(end2 >= t0 + 3 * prog, "die 0 programs three times: {end2}");
    // Two writes to plane 0 of die 0 (pages 0 and 8) never pair: the same plane.
    let mut ssd = FlashSsd::new(per_plane(Precondition::None), 1).unwrap();
    let mut now = 0;
    for (i, page) in [0, 8, 16, 24].into_iter().enumerate() {
        now = write_page(&mut ssd, i as u64, page, now);
    }
    ssd.flush_done_ns(now);
    assert_eq!(ssd.run_counters().paired_programs, 0);
}

/// Under read priority a joined page frees its buffer slot with the program it joined, also
/// when reads push that program back; the buffer holds four pages, so the last writes wait for
/// those slots.
#[test]
fn a_joined_page_frees_its_slot_with_its_program_under_read_priority() {
    let mut s = per_plane(Precondition::Full);
    s.die_scheduling.read_priority = true;
    s.write_buffer_kib = 32; // eight units: four pages
    let mut ssd = FlashSsd::new(s, 1).unwrap();
    let mut now = 0;
    for (i, page) in [0, 4, 8, 12].into_iter().enumerate() {
        now = write_page(&mut ssd, i as u64, page, now);
    }
    assert_eq!(ssd.run_counters().paired_programs, 1, "{:?}", ssd.run_counters());
    // Reads of die 0 go before its queued programs (the joined one among them).
    for i in 0..3 {
        now = ssd.service(&Request::new(100 + i, Op::Read, (32 + 8 * i) * 16, 16, now), ArmPath::Direct, now).completion_ns;
    }
    for (i, page) in [16, 20].into_iter().enumerate() {
        now = write_page(&mut ssd, 200 + i as u64, page, now);
    }
    let end = ssd.flush_done_ns(now);
    assert_eq!(ssd.buffer.admit(end, 64), end);
    assert_eq!(ssd.buffer.held_sectors(), 0, "every slot free once the programs are over");
    ssd.check().unwrap();
}

#[test]
fn the_mapping_unit_must_divide_a_page_and_the_slc_cache_is_refused() {
    let mut s = per_plane(Precondition::None);
    s.mapping_unit_kib = 16; // a superpage, but two pages
    let e = s.validate().unwrap_err();
    assert!(e.contains("device.flash.mapping_unit_kib") && e.contains("got 16"), "{e}");
    let mut s = per_plane(Precondition::None);
    s.slc.static_gib = 0.001;
    let e = s.validate().unwrap_err();
    assert!(e.contains("plane_frontiers") && e.contains("SLC"), "{e}");
    let ok = tests::scenario_flash_spec("plane_frontiers = true\nslc_cache_gib = 0\nslc_dynamic_gib = 0").unwrap().unwrap();
    assert!(ok.plane_frontiers);
}

/// Runs `ops` (kind: 0 discard, 1 flush, 2-4 read, else write; a position `sector_of` maps to a
/// sector; a length in sectors) back to back, checking the pairing invariant after each; then
/// flushes: the FTL's invariants hold and the whole buffer is free.
fn random_stream_keeps_the_invariants(
    mut ssd: FlashSsd,
    ops: Vec<(u8, u64, u32)>,
    sector_of: impl Fn(u64) -> u64,
) -> Result<(), TestCaseError> {
    let cap = ssd.capacity_sectors();
    let mut now = 0;
    for (i, (kind, at, len)) in ops.into_iter().enumerate() {
        let sector = sector_of(at) % cap;
        let len = len.min(((cap - sector) as u32).max(1));
        let op = match kind {
            0 => Op::Discard,
            1 => {
                now = ssd.flush_done_ns(now);
                continue;
            }
            2..=4 => Op::Read,
            _ => Op::Write,
        };
        now = ssd.service(&Request::new(i as u64, op, sector, len, now), ArmPath::Direct, now).completion_ns;
        prop_assert!(ssd.check_pairing().is_ok(), "{:?}", ssd.check_pairing());
    }
    let end = ssd.flush_done_ns(now);
    prop_assert!(ssd.check().is_ok(), "{:?}", ssd.check());
    prop_assert_eq!(ssd.buffer.admit(end, ssd.buffer.capacity_sectors()), end);
    prop_assert_eq!(ssd.buffer.held_sectors(), 0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Writes, reads, trims and flushes with a frontier per plane (GC per plane, read priority
    /// on or off) keep the mapping's invariants, and the buffer drains.
    #[test]
    fn plane_frontiers_keep_the_invariants_over_random_streams(
        ops in proptest::collection::vec((0u8..10, 0u64..4096, 1u32..64), 1..400),
        prio in any::<bool>(),
    ) {
        let mut s = per_plane(Precondition::Full);
        s.die_scheduling.read_priority = prio;
        random_stream_keeps_the_invariants(FlashSsd::new(s, 1).unwrap(), ops, |at| at * 8)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Overlapping commands (a few microseconds apart, so programs queue on the dies and reads
    /// under read priority lay the queues out again): no program a page joined is laid out to
    /// start before that page's data is in.
    #[test]
    fn a_joined_program_never_starts_before_its_pages_data(
        ops in proptest::collection::vec((0u8..4, 0u64..512, 0u64..40), 1..300),
    ) {
        let mut s = per_plane(Precondition::Full);
        s.die_scheduling.read_priority = true;
        s.write_buffer_kib = 4096;
        let mut ssd = FlashSsd::new(s, 1).unwrap();
        let mut now = 0;
        for (i, (kind, page, gap_us)) in ops.into_iter().enumerate() {
            now += gap_us * 1_000;
            let op = if kind == 0 { Op::Read } else { Op::Write };
            ssd.service(&Request::new(i as u64, op, page * 16, 16, now), ArmPath::Direct, now);
            prop_assert!(ssd.check_pairing().is_ok(), "{:?}", ssd.check_pairing());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Every MQSim rule at once (hot data, a frontier per plane, its back pressure, 8 KiB mapping
    /// units, read priority, chips of two dies without cache registers, sector transfers) with a
    /// buffer smaller than many of the writes (taken part by part): the mapping's invariants hold,
    /// no joined program starts before its page's data, and everything drains.
    #[test]
    fn mqsim_rules_together_keep_the_invariants_with_writes_larger_than_the_buffer(
        ops in proptest::collection::vec((0u8..10, 0u64..4096, 1u32..512), 1..200),
    ) {
        let mut s = per_plane(Precondition::Full);
        s.die_scheduling.read_priority = true;
        s.mqsim_back_pressure = true;
        s.mapping_unit_kib = 8;
        s.hot = super::hot_data::HotDataConfig { window_ms: 5.0, capacity_kib: 32 };
        s.dies_per_chip = 2;
        s.cache_registers = false;
        s.sector_transfers = true;
        s.write_buffer_kib = 32;
        // Unaligned starts (up to 6 sectors into a unit).
        random_stream_keeps_the_invariants(FlashSsd::new(s, 1).unwrap(), ops, |at| at * 8 + at % 7)?;
    }
}

/// MQSim's on-the-fly read mapping (`on_the_fly_read_mapping`): on a full drive, a page's first
/// read maps it to a page at its plane's frontier (the frontier moves on, the old page is
/// invalid, nothing is programmed) and takes as long as without the rule; a second read, or a
/// read of a page the run wrote, maps nothing. Off: frontiers stay.
#[test]
fn a_first_read_maps_its_page_at_its_planes_frontier_without_a_program() {
    let spec = |on: bool| {
        let mut s = per_plane(Precondition::Full);
        s.mapping_unit_kib = 8;
        s.workload_page_status = on;
        s.on_the_fly_read_mapping = on;
        s
    };
    let (mut on, mut off) = (FlashSsd::new(spec(true), 1).unwrap(), FlashSsd::new(spec(false), 1).unwrap());
    let die = on.ftl().die_of(6); // page 3's plane
    let (page_before, old) = (on.ftl().frontier_page(die), on.ftl().lookup(6));
    let read = |ssd: &mut FlashSsd, id: u64, at: Nanos| ssd.service(&Request::new(id, Op::Read, 3 * 16, 16, at), ArmPath::Direct, at);
    let (a, b) = (read(&mut on, 0, 0), read(&mut off, 0, 0));
    assert_eq!(a.completion_ns, b.completion_ns, "the read costs what it did: no program");
    let c = on.run_counters();
    assert_eq!((c.read_mapped_units, c.host_units, c.padding_units), (2, 0, 0), "{c:?}");
    assert_ne!(on.ftl().lookup(6), old, "moved to the frontier");
    assert_ne!(on.ftl().frontier_page(die), page_before);
    assert_eq!(off.ftl().lookup(6), old);
    on.ftl().check().unwrap();
    // Read again: already mapped by the run.
    let page_after = on.ftl().frontier_page(die);
    read(&mut on, 1, a.completion_ns);
    assert_eq!((on.run_counters().read_mapped_units, on.ftl().frontier_page(die)), (2, page_after));
    // A page the run wrote is not mapped again by its read.
    let w = write_page(&mut on, 2, 5, a.completion_ns);
    on.flush_done_ns(w);
    on.service(&Request::new(3, Op::Read, 5 * 16, 16, w), ArmPath::Direct, w);
    assert_eq!(on.run_counters().read_mapped_units, 2);
    on.ftl().check().unwrap();
}

#[test]
fn on_the_fly_read_mapping_needs_the_page_status_frontiers_per_plane_and_page_sized_units() {
    let base =
        "slc_cache_gib = 0\nslc_dynamic_gib = 0\nplane_frontiers = true\nworkload_page_status = true\non_the_fly_read_mapping = true";
    let page_kib = tests::scenario_flash_spec("slc_cache_gib = 0\nslc_dynamic_gib = 0").unwrap().unwrap().geometry.page_kib;
    let ok = tests::scenario_flash_spec(&format!("{base}\nmapping_unit_kib = {page_kib}")).unwrap().unwrap();
    assert!(ok.on_the_fly_read_mapping);
    for bad in [
        base.replace("workload_page_status = true", "workload_page_status = false"),
        base.replace("plane_frontiers = true", "plane_frontiers = false"),
    ] {
        let e = tests::scenario_flash_spec(&format!("{bad}\nmapping_unit_kib = {page_kib}")).unwrap_err();
        assert!(e.contains("device.flash.on_the_fly_read_mapping"), "{e}");
    }
    let e = tests::scenario_flash_spec(base).unwrap_err();
    assert!(e.contains("mapping_unit_kib = page_kib"), "{e}");
}
