//! The flash drive through the engine: concurrency, determinism, IOPS against queue depth,
//! FTL invariants after random streams.

use super::gc::GcPolicy;
use super::geometry::FlashGeometry;
use super::presets::flash_preset;
use super::spec::Precondition;
use super::*;
use crate::device::drive_queue::{DriveQueueConfig, FirmwareOrder};
use crate::device::presets::preset;
use crate::device::RotationalDisk;
use crate::metrics::RequestRecord;
use crate::sched::registry;
use crate::sim::{simulate_with, SimOptions};
use crate::workload::closed_queue::ClosedQueue;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// A small drive: 2 channels x 2 dies, 2 planes, 16 blocks of 16 pages of 8 KiB (4 MiB).
pub(super) fn small_spec(precondition: Precondition) -> FlashSpec {
    let mut s = flash_preset("samsung-970-evo-plus-1tb").unwrap();
    s.geometry =
        FlashGeometry { channels: 2, dies_per_channel: 2, planes_per_die: 2, blocks_per_plane: 16, pages_per_block: 16, page_kib: 8 };
    s.over_provisioning = 0.25;
    s.write_buffer_kib = 256;
    s.precondition = precondition;
    // No SLC cache unless a test turns it on (the preset's is sized for its own geometry).
    s.slc = slc_cache::SlcConfig::default();
    s
}

/// The flash spec of a one-line scenario on the 970 EVO Plus preset with `extra` in
/// `[device.flash]` (or the scenario's error).
pub(super) fn scenario_flash_spec(extra: &str) -> Result<Option<FlashSpec>, String> {
    let text = format!(
        "[device]\npreset = \"samsung-970-evo-plus-1tb\"\n[device.flash]\n{extra}\n[workload]\nkind = \"closed-queue\"\nqueue_depth = 1\nrequests = 10\n[[scheduler]]\nname = \"fcfs\"\n"
    );
    crate::scenario::Scenario::parse(&text, "t.toml").map_err(|e| e.to_string())?.flash_spec()
}

/// Runs a closed queue of 4 KiB random requests at `qd` (drive depth `qd`) under FCFS.
fn run(dev: &mut dyn Device, qd: u32, requests: u64, read_fraction: f64, seed: u64) -> Vec<RequestRecord> {
    let cap = dev.capacity_sectors();
    let mut wl = ClosedQueue::new(qd, requests, 8, (0, cap), read_fraction, seed);
    let mut sched = registry::build("fcfs", None, &BTreeMap::new()).unwrap();
    let opts =
        SimOptions { keep_records: true, drive: DriveQueueConfig { depth: qd, order: FirmwareOrder::Fifo }, ..SimOptions::default() };
    let out = simulate_with(dev, sched.as_mut(), &mut wl, opts);
    assert_eq!(out.invariants.bad_completions, 0);
    assert_eq!(out.invariants.left_behind, 0);
    out.records
}

/// The most commands in service at one instant ([start, complete) intervals).
fn max_in_service(records: &[RequestRecord]) -> usize {
    let mut ev: Vec<(u64, i32)> = records.iter().flat_map(|r| [(r.start_ns, 1), (r.complete_ns, -1)]).collect();
    ev.sort_by_key(|&(t, d)| (t, d));
    let (mut cur, mut best) = (0i32, 0i32);
    for (_, d) in ev {
        cur += d;
        best = best.max(cur);
    }
    best as usize
}

fn iops(records: &[RequestRecord]) -> f64 {
    let end = records.iter().map(|r| r.complete_ns).max().unwrap();
    records.len() as f64 / (end as f64 / 1e9)
}

#[test]
fn the_engine_serves_n_commands_at_once_on_flash_and_one_on_a_disk() {
    let mut ssd = FlashSsd::new(small_spec(Precondition::Full), 1).unwrap();
    let recs = run(&mut ssd, 8, 400, 1.0, 7);
    assert_eq!(max_in_service(&recs), 8, "8 commands in service at once with depth 8");
    let mut disk = RotationalDisk::new(preset("wd-ultrastar-hc310").unwrap()).unwrap();
    let recs = run(&mut disk, 8, 200, 1.0, 7);
    assert_eq!(max_in_service(&recs), 1, "a disk serves one at a time even with 8 queued");
}

#[test]
fn same_seed_same_result() {
    let go = |seed| {
        let mut ssd = FlashSsd::new(small_spec(Precondition::Aged), seed).unwrap();
        let recs = run(&mut ssd, 16, 3000, 0.5, seed);
        (recs.iter().map(|r| (r.id, r.complete_ns)).collect::<Vec<_>>(), ssd.run_counters())
    };
    assert_eq!(go(3), go(3));
    assert_ne!(go(3).0, go(4).0);
}

#[test]
fn iops_rise_with_queue_depth_up_to_saturation() {
    let mut prev = 0.0;
    for qd in [1, 2, 4, 8, 16, 32, 64] {
        let mut ssd = FlashSsd::new(small_spec(Precondition::Full), 1).unwrap();
        let x = iops(&run(&mut ssd, qd, 4000, 1.0, 11));
        assert!(x >= prev * 0.98, "QD {qd}: {x:.0} IOPS below QD/2's {prev:.0}");
        prev = prev.max(x);
    }
    // 4 dies: reads saturate near 4 / (tR + data out) (+ the link), well above QD 1's rate.
    let mut one = FlashSsd::new(small_spec(Precondition::Full), 1).unwrap();
    assert!(prev > 3.0 * iops(&run(&mut one, 1, 2000, 1.0, 11)));
}

#[test]
fn random_writes_on_an_aged_drive_amplify_and_keep_the_invariants() {
    for policy in [GcPolicy::Greedy, GcPolicy::CostBenefit] {
        let mut spec = small_spec(Precondition::Aged);
        spec.gc_policy = policy;
        let mut ssd = FlashSsd::new(spec, 5).unwrap();
        ssd.ftl().check().unwrap();
        let pre = ssd.precondition_counters();
        assert!(pre.write_amplification() > 1.2, "{policy:?}: aging ran GC ({:?})", pre);
        run(&mut ssd, 32, 5000, 0.0, 5);
        ssd.ftl().check().unwrap();
        let c = ssd.run_counters();
        assert!(c.gc_units > 0 && c.erases > 0, "{policy:?}: {c:?}");
        assert!(c.write_amplification() > 1.0 && c.write_amplification() < 10.0, "{policy:?}: {c:?}");
    }
}

#[test]
fn trim_then_reads_touch_no_flash() {
    let mut ssd = FlashSsd::new(small_spec(Precondition::Full), 1).unwrap();
    let cap = ssd.capacity_sectors();
    ssd.trim(0, cap);
    ssd.ftl().check().unwrap();
    assert_eq!(ssd.ftl().counters.trimmed_units, ssd.ftl().logical_units());
    let recs = run(&mut ssd, 4, 200, 1.0, 2);
    let t = &ssd.spec().timing;
    assert!(recs.iter().all(|r| r.complete_ns - r.start_ns < t.read_ns()), "no read waited for tR");
}

#[test]
fn a_flush_waits_for_the_buffered_writes_to_be_programmed() {
    let mut ssd = FlashSsd::new(small_spec(Precondition::None), 1).unwrap();
    let w = Request::new(0, Op::Write, 0, 8, 0);
    let s = ssd.service(&w, ArmPath::Direct, 0);
    assert!(s.completion_ns < ssd.spec().timing.program_ns(), "a write completes once buffered");
    let done = ssd.flush_done_ns(s.completion_ns);
    assert!(done >= s.completion_ns + ssd.spec().timing.program_ns(), "the flush waits for the program");
    assert_eq!(ssd.ftl().counters.padding_units as u32 + 1, ssd.spec().geometry.units_per_superpage());
}

fn with_scheduling(mut s: FlashSpec, suspend: die_scheduling::SuspendMode) -> FlashSpec {
    s.die_scheduling.read_priority = true;
    s.die_scheduling.suspend = suspend;
    s.die_scheduling.suspend_us = 20.0;
    s.die_scheduling.resume_us = 10.0;
    s
}

/// One die: a program starts, then a read of another page of the die arrives 100 us later.
fn read_behind_a_program(spec: FlashSpec) -> (Nanos, Nanos, Nanos) {
    let mut spec = spec;
    spec.geometry =
        FlashGeometry { channels: 1, dies_per_channel: 1, planes_per_die: 2, blocks_per_plane: 16, pages_per_block: 16, page_kib: 8 };
    spec.write_buffer_kib = 64;
    let mut ssd = FlashSsd::new(spec, 1).unwrap();
    let ups = ssd.spec().geometry.units_per_superpage() as u64;
    // Fill one superpage's worth in the buffer (units 64..): the die programs it.
    let w = ssd.service(&Request::new(0, Op::Write, 64 * 8, (ups * 8) as u32, 0), ArmPath::Direct, 0);
    let prog_start = w.completion_ns + ssd.spec().timing.channel_ns(ups * geometry::UNIT_BYTES);
    let at = prog_start + 100_000;
    let r = ssd.service(&Request::new(1, Op::Read, 0, 8, at), ArmPath::Direct, at);
    (prog_start, r.completion_ns - at, ssd.buffer.drained_ns())
}

/// One die, read priority, a buffer of one superpage: a write fills it (its program queued), a
/// second write finds it full at the first's completion, and (with `read`) a read arriving 1 ns
/// later goes before the program, which ends later. The second write's completion, and the
/// program's end once the read is placed.
fn write_behind_a_full_buffer(read: bool) -> (Nanos, Nanos) {
    let mut ssd = one_die_one_superpage_buffer();
    let ups = ssd.spec().geometry.units_per_superpage() as u64;
    let first = ssd.service(&Request::new(0, Op::Write, 64 * 8, (ups * 8) as u32, 0), ArmPath::Direct, 0);
    assert!(first.resume_ns.is_none(), "room at once");
    let at = first.completion_ns;
    let second = Request::new(1, Op::Write, 200 * 8, 8, at);
    let mut s = ssd.service(&second, ArmPath::Direct, at);
    assert!(s.resume_ns.is_some_and(|t| t != AWAITS_WAKE), "a full buffer: the write waits for the program's end");
    if read {
        ssd.service(&Request::new(2, Op::Read, 0, 8, at + 1), ArmPath::Direct, at + 1);
    }
    let program_end = ssd.buffer.drained_ns();
    while let Some(t) = s.resume_ns {
        assert!(t > at && t != AWAITS_WAKE);
        s = ssd.resume(&second, t);
    }
    assert_eq!(s.dispatch_ns, at);
    assert_eq!(ssd.woken(), None, "nobody else waits");
    (s.completion_ns, program_end)
}

/// A drive of one die with read priority and a write buffer of one superpage.
fn one_die_one_superpage_buffer() -> FlashSsd {
    let mut spec = with_scheduling(small_spec(Precondition::Full), die_scheduling::SuspendMode::None);
    spec.geometry =
        FlashGeometry { channels: 1, dies_per_channel: 1, planes_per_die: 2, blocks_per_plane: 16, pages_per_block: 16, page_kib: 8 };
    spec.write_buffer_kib = spec.geometry.units_per_superpage() * 4;
    FlashSsd::new(spec, 1).unwrap()
}

/// Under read priority a program's end moves later when a read goes first: a write waiting for
/// its room is taken once the program has really ended, not at the end laid out when the write
/// started (which it would beat by the read's time).
#[test]
fn a_write_waiting_for_room_waits_for_the_programs_real_end() {
    let (alone, end) = write_behind_a_full_buffer(false);
    let (behind_a_read, moved_end) = write_behind_a_full_buffer(true);
    assert!(moved_end > end, "the read moved the program: {end} -> {moved_end}");
    assert!(alone > end && behind_a_read > moved_end, "taken after the program's end");
    assert_eq!(behind_a_read - moved_end, alone - end, "and as long after it");
}

/// Writes finding the buffer full wait in line: only the first is armed, the others wait to be
/// woken (no event each); each is woken once, when the one before it is taken, and they are
/// taken in the order they arrived.
#[test]
fn writes_waiting_for_room_are_taken_in_line_each_woken_once() {
    let mut ssd = one_die_one_superpage_buffer();
    let ups = ssd.spec().geometry.units_per_superpage() as u64;
    let first = ssd.service(&Request::new(0, Op::Write, 64 * 8, (ups * 8) as u32, 0), ArmPath::Direct, 0);
    let at = first.completion_ns;
    let writes: Vec<Request> = (1..=3).map(|i| Request::new(i, Op::Write, (200 + 8 * i) * 8, (ups * 8) as u32, at)).collect();
    let mut armed: Vec<Service> = writes.iter().map(|w| ssd.service(w, ArmPath::Direct, at)).collect();
    assert!(armed[0].resume_ns.is_some_and(|t| t != AWAITS_WAKE), "the first in line waits for a program's end");
    assert!(armed[1..].iter().all(|s| s.resume_ns == Some(AWAITS_WAKE)), "the others wait to be woken");
    // The engine's part: resume whoever is due, earliest first; a woken write at once.
    let mut due: Vec<(Nanos, usize)> = vec![(armed[0].resume_ns.unwrap(), 0)];
    let mut taken = Vec::new();
    let mut wakes = 0;
    while let Some(i) = (0..due.len()).min_by_key(|&i| due[i]) {
        let (now, w) = due.swap_remove(i);
        let s = ssd.resume(&writes[w], now);
        armed[w] = s;
        match s.resume_ns {
            Some(t) => {
                assert!(t > now && t != AWAITS_WAKE, "re-armed later, never polled");
                due.push((t, w));
            }
            None => taken.push((w, s.completion_ns)),
        }
        while let Some(id) = ssd.woken() {
            wakes += 1;
            due.push((now, id as usize - 1));
        }
    }
    assert_eq!(taken.iter().map(|t| t.0).collect::<Vec<_>>(), vec![0, 1, 2], "in arrival order");
    assert!(taken.windows(2).all(|p| p[0].1 < p[1].1), "each after the one before: {taken:?}");
    assert_eq!(wakes, 2, "the second and the third, once each");
    assert!(armed.iter().all(|s| s.dispatch_ns == at), "counted from their commands' start");
}

/// A woken write whose command reaches the drive after the engine's clock (a per-command
/// latency put its start ahead) is resumed at its own start, where the room is looked at as it
/// then stands; it is not taken at the engine's clock with the room looked at ahead, and it
/// leaves the head where the last command started left it. Nor does it hold up the line: the
/// line is in the order the writes' commands reached the drive, so a write whose command
/// reached it earlier, though sent to the drive model later, goes first; the one passed keeps
/// its event at its start and is taken then.
#[test]
fn a_woken_write_is_resumed_at_its_own_start_and_holds_up_no_write_that_reached_the_drive_first() {
    let mut ssd = one_die_one_superpage_buffer();
    let ups = ssd.spec().geometry.units_per_superpage() as u64;
    let first = ssd.service(&Request::new(0, Op::Write, 64 * 8, (ups * 8) as u32, 0), ArmPath::Direct, 0);
    let at = first.completion_ns;
    let head = Request::new(1, Op::Write, 200 * 8, (ups * 8) as u32, at);
    let mut s = ssd.service(&head, ArmPath::Direct, at);
    let due = s.resume_ns.expect("the first in line waits for the program's end");
    let late_start = due + 50_000_000;
    let second = Request::new(2, Op::Write, 300 * 8, (ups * 8) as u32, at);
    assert_eq!(ssd.service(&second, ArmPath::Direct, late_start).resume_ns, Some(AWAITS_WAKE));
    let read = Request::new(3, Op::Read, 0, 8, at);
    ssd.service(&read, ArmPath::Direct, at);
    let head_after_read = ssd.head_sector();
    let mut now = at;
    while let Some(t) = s.resume_ns {
        now = t;
        s = ssd.resume(&head, now);
    }
    assert!(now < late_start, "the head is taken at {now}, before the second write's start");
    assert_eq!(ssd.head_sector(), head_after_read, "a resumed write does not move the head");
    assert_eq!(ssd.woken(), Some(2));
    let s = ssd.resume(&second, now);
    assert_eq!((s.resume_ns, s.dispatch_ns), (Some(late_start), late_start), "resumed at its own start");
    // A fourth write, its command at the drive just after the head was taken: it goes first.
    let fourth = Request::new(4, Op::Write, 400 * 8, (ups * 8) as u32, now);
    let mut s = ssd.service(&fourth, ArmPath::Direct, now + 1);
    while let Some(t) = s.resume_ns {
        assert!(t < late_start && t != AWAITS_WAKE, "armed at a program's end, not behind the second write");
        s = ssd.resume(&fourth, t);
    }
    assert!(s.completion_ns < late_start, "taken before the second write's command reaches the drive");
    assert_eq!(ssd.woken(), None, "the second keeps its event at its start");
    let s = ssd.resume(&second, late_start);
    assert!(s.resume_ns.is_none_or(|t| t > late_start && t != AWAITS_WAKE));
    assert_eq!(s.dispatch_ns, late_start);
}

/// Two dies on one channel, read priority, a buffer of 40 sectors, full: reads of die 0 queued
/// first delay a program of die 0 (write 0: a superpage) far ahead; a write to die 1 (write 1)
/// waits as a partial superpage. The drive and die 0's program end.
fn die0_program_behind_reads_and_a_full_buffer() -> (FlashSsd, Nanos) {
    let mut spec = with_scheduling(small_spec(Precondition::Full), die_scheduling::SuspendMode::None);
    spec.geometry =
        FlashGeometry { channels: 1, dies_per_channel: 2, planes_per_die: 2, blocks_per_plane: 16, pages_per_block: 16, page_kib: 8 };
    spec.write_buffer_kib = 20;
    let mut ssd = FlashSsd::new(spec, 1).unwrap();
    let ups = ssd.spec().geometry.units_per_superpage() as u64;
    assert_eq!(ups, 4);
    // Units 8k (k >= 1) are in chunks 2k: die 0.
    for k in 1..=20u64 {
        let r = ssd.service(&Request::new(100 + k, Op::Read, k * 8 * 8, 8, 0), ArmPath::Direct, 0);
        assert!(r.resume_ns.is_none());
    }
    let w0 = ssd.service(&Request::new(0, Op::Write, 0, (ups * 8) as u32, 1), ArmPath::Direct, 1);
    assert!(w0.resume_ns.is_none(), "room at once");
    // Unit 4 is in chunk 1: die 1, waiting for three more units.
    let w1 = ssd.service(&Request::new(1, Op::Write, 4 * 8, 8, 2), ArmPath::Direct, 2);
    assert!(w1.resume_ns.is_none(), "room at once");
    let die0_end = ssd.buffer.drained_ns();
    (ssd, die0_end)
}

/// The drive of [`die0_program_behind_reads_and_a_full_buffer`]: a third write finds the buffer
/// full and is armed at die 0's program end. A flush at `flush_at` (None: none) programs die
/// 1's waiting unit on its idle die. The third write's completion, the end it was armed at, and
/// whether the drive woke it.
fn write_armed_far_then_a_flush(flush_at: Option<Nanos>) -> (Nanos, Nanos, bool) {
    let (mut ssd, armed_end) = die0_program_behind_reads_and_a_full_buffer();
    let third = Request::new(2, Op::Write, 12 * 8, 8, 3);
    let mut s = ssd.service(&third, ArmPath::Direct, 3);
    let first_due = s.resume_ns.expect("a full buffer: armed at die 0's program end");
    assert!(first_due < armed_end && first_due + ssd.spec().timing.overhead_ns() == armed_end);
    let mut woken = false;
    let mut now = 3;
    if let Some(at) = flush_at {
        ssd.flush_done_ns(at);
        if ssd.woken() == Some(2) {
            // The engine resumes it at once and drops the event armed before.
            woken = true;
            now = at;
            s = ssd.resume(&third, now);
        }
    }
    while let Some(t) = s.resume_ns {
        assert!(t > now && t != AWAITS_WAKE);
        now = t;
        s = ssd.resume(&third, now);
    }
    assert_eq!(ssd.woken(), None);
    ssd.ftl().check().unwrap();
    (s.completion_ns, armed_end, woken)
}

/// A program end earlier than the one the first write in line waits for (a flush programs a
/// waiting unit on an idle die while the program the write was armed at waits behind reads on
/// another) wakes the write, which is then taken when that earlier program ends, not at the end
/// it was armed at. Without the flush it is taken after the end it was armed at.
#[test]
fn a_write_in_line_is_woken_by_a_program_that_ends_earlier_than_its_armed_end() {
    let (alone, armed_end, woken) = write_armed_far_then_a_flush(None);
    assert!(!woken && alone > armed_end, "no flush: taken after die 0's program, {alone} > {armed_end}");
    let (flushed, same_end, woken) = write_armed_far_then_a_flush(Some(10));
    assert_eq!(same_end, armed_end);
    assert!(woken, "the flush's program on die 1 ends first: the write is woken");
    assert!(flushed < armed_end, "taken when die 1's program ends ({flushed}), before die 0's ({armed_end})");
}

/// With a command latency the drive is called ahead of the engine's clock by varying amounts:
/// a write whose command reaches the drive at 1 ms finds the buffer full and is armed at die 0's
/// program end (1.51 ms); then a flush whose command reached the drive at 10 ns programs die 1's
/// waiting unit, ending at about 0.51 ms. The write is woken (its start is ahead: it looks again
/// then, and is taken at its start, not at 1.51 ms); and the look at the line frees no room ahead
/// of time: a write whose command reached the drive at 20 ns, called next instead, still waits
/// for the flush's program to end (freed when the look was made at 1 ms, it would be taken at
/// once).
#[test]
fn a_look_at_the_line_wakes_for_an_end_before_its_start_and_frees_no_room_ahead() {
    // The drive with the late write armed and the flush's program queued: (drive, die 0's end,
    // die 1's end, the late write).
    let setup = || {
        let (mut ssd, die0_end) = die0_program_behind_reads_and_a_full_buffer();
        let late = Request::new(2, Op::Write, 12 * 8, 8, 3);
        let armed = ssd.service(&late, ArmPath::Direct, 1_000_000);
        assert!(armed.resume_ns.is_some_and(|t| t + ssd.spec().timing.overhead_ns() == die0_end), "armed at die 0's end");
        ssd.flush_done_ns(10);
        let die1_end = ssd.buffer.earliest_release().expect("the flush's program");
        assert!(die1_end < 1_000_000, "die 1's program ends ({die1_end}) before the write's start");
        (ssd, die0_end, die1_end, late)
    };
    let (mut ssd, die0_end, _, late) = setup();
    assert_eq!(ssd.woken(), Some(2), "woken by the earlier end");
    // The engine resumes it at its clock (10 ns): its command has not reached the drive yet.
    let s = ssd.resume(&late, 10);
    assert_eq!(s.resume_ns, Some(1_000_000), "looked at again at its own start");
    let s = ssd.resume(&late, 1_000_000);
    assert!(s.resume_ns.is_none() && s.completion_ns < die0_end, "taken at its start ({}), not after {die0_end}", s.completion_ns);
    ssd.ftl().check().unwrap();
    // A write whose command reached the drive at 20 ns goes ahead of it, and waits for room.
    let (mut ssd, _, die1_end, _) = setup();
    let early = Request::new(3, Op::Write, 28 * 8, 8, 20);
    let mut e = ssd.service(&early, ArmPath::Direct, 20);
    assert!(e.resume_ns.is_some(), "no room at 20 ns: die 1's program has not ended");
    while let Some(t) = e.resume_ns {
        assert!(t != AWAITS_WAKE);
        e = ssd.resume(&early, t);
    }
    assert!(e.completion_ns >= die1_end, "taken once die 1's program ends: {} < {die1_end}", e.completion_ns);
    ssd.ftl().check().unwrap();
}

/// Random reads, writes and discards (which program buffered units at once) arriving in bursts
/// on a small drive with read priority and a buffer of one superpage (16 KiB), through the engine with
/// and without a per-command latency that varies: writes wait in line, some first writes in
/// line are woken by a program ending earlier than the one they were armed at, and whatever
/// happens every request completes once, every invariant zero, the FTL consistent, the run
/// deterministic.
#[test]
fn writes_in_line_woken_by_earlier_programs_through_the_engine_complete_once() {
    use crate::trace::TraceRequest;
    use crate::workload::replay::{Replay, ReplayTiming};
    let go = |seed: u64, latency: Vec<Nanos>| {
        let mut spec = with_scheduling(small_spec(Precondition::Full), die_scheduling::SuspendMode::None);
        spec.write_buffer_kib = 4 * spec.geometry.units_per_superpage();
        let mut ssd = FlashSsd::new(spec, seed).unwrap();
        let units = 256u64;
        let mut rng = crate::workload::rng_stream(seed, 0);
        let mut next = |n: u64| rand::Rng::gen_range(&mut rng, 0..n);
        let mut at = 0;
        let requests: Vec<TraceRequest> = (0..3000u32)
            .map(|line| {
                at += next(40_000);
                let (op, len) = match next(20) {
                    0..=8 => (Op::Write, 1 + next(4)),
                    9..=17 => (Op::Read, 1 + next(2)),
                    _ => (Op::Discard, 2 + next(8)),
                };
                let start = next(units - len) * 8;
                TraceRequest {
                    line,
                    arrival_ns: at,
                    op,
                    start_sector: start,
                    size_sectors: (len * 8) as u32,
                    device: 0,
                    measured_response_ns: None,
                    gap_ns: 0,
                    tag: None,
                }
            })
            .collect();
        let mut wl = Replay::from_requests(&requests, ReplayTiming::Arrival);
        let mut sched = registry::build("fcfs", None, &BTreeMap::new()).unwrap();
        let opts = SimOptions {
            keep_records: true,
            drive: DriveQueueConfig { depth: 32, order: FirmwareOrder::Fifo },
            command_latency: crate::device::command_latency::CommandLatency::sequence(latency),
            ..SimOptions::default()
        };
        let out = simulate_with(&mut ssd, sched.as_mut(), &mut wl, opts);
        assert_eq!(out.invariants, Default::default(), "seed {seed}");
        assert_eq!(out.records.len(), 3000);
        ssd.ftl().check().unwrap();
        let recs: Vec<(u64, Nanos)> = out.records.iter().map(|r| (r.id, r.complete_ns)).collect();
        (recs, ssd.waiting_writes.resumptions(), ssd.waiting_writes.rewakes())
    };
    let mut rewakes = 0;
    for seed in 1..=4 {
        for latency in [vec![0], vec![50_000, 900_000, 3_000_000, 400_000]] {
            let (recs, resumptions, r) = go(seed, latency.clone());
            assert!(resumptions > 0, "writes waited (seed {seed})");
            assert_eq!(go(seed, latency).0, recs, "deterministic");
            rewakes += r;
        }
    }
    assert!(rewakes > 0, "some first writes in line were woken by an earlier program");
}

/// With `command_cycles` a read on an idle drive of MQSim's chips takes 290 ns more (its command
/// on the channel before tR) and a one-superpage program's end comes 1,177 ns later (a
/// two-plane program command before its data); nothing else moves.
#[test]
fn command_cycles_add_the_command_before_tr_and_before_a_programs_data() {
    let go = |cycles: bool| {
        let mut spec = small_spec(Precondition::Full);
        spec.cache_registers = false;
        spec.command_cycles = cycles;
        let mut ssd = FlashSsd::new(spec, 1).unwrap();
        let read = ssd.service(&Request::new(0, Op::Read, 0, 8, 0), ArmPath::Direct, 0).completion_ns;
        let ups = ssd.spec().geometry.units_per_superpage() as u64;
        let at = 10_000_000;
        ssd.service(&Request::new(1, Op::Write, 64 * 8, (ups * 8) as u32, at), ArmPath::Direct, at);
        (read, ssd.buffer.drained_ns())
    };
    let (read, program) = go(false);
    let (read_c, program_c) = go(true);
    assert_eq!(read_c - read, command_cycles::read_command_ns(1));
    assert_eq!(program_c - program, command_cycles::program_command_ns(2), "two planes per superpage");
}

/// Through the engine, on a SATA lane whose per-command latency varies widely (the device is
/// called ahead of the engine's clock, commands reach it out of their dispatch order), with
/// read priority and a small buffer: every request completes once, the run is deterministic,
/// and the waiting writes' resumptions stay within one per write woken and taken, plus one per
/// program end or move the first in line waits for (no re-arming at the same instant).
#[test]
fn waiting_writes_through_the_engine_with_a_varying_command_latency() {
    let go = || {
        let mut spec = with_scheduling(small_spec(Precondition::Aged), die_scheduling::SuspendMode::None);
        spec.write_buffer_kib = 4 * spec.geometry.units_per_superpage();
        let mut ssd = FlashSsd::new(spec, 5).unwrap();
        let cap = ssd.capacity_sectors();
        let mut wl = ClosedQueue::new(32, 3000, 8, (0, cap), 0.5, 5);
        let mut sched = registry::build("fcfs", None, &BTreeMap::new()).unwrap();
        let latency = crate::device::command_latency::CommandLatency::sequence(vec![50_000, 900_000, 100_000_000, 400_000]);
        let opts = SimOptions {
            keep_records: true,
            drive: DriveQueueConfig { depth: 32, order: FirmwareOrder::Fifo },
            command_latency: latency,
            ..SimOptions::default()
        };
        let out = simulate_with(&mut ssd, sched.as_mut(), &mut wl, opts);
        assert_eq!((out.invariants.bad_completions, out.invariants.left_behind), (0, 0));
        assert_eq!(out.records.len(), 3000);
        ssd.ftl().check().unwrap();
        let writes = out.records.iter().filter(|r| r.op == Op::Write).count() as u64;
        (
            out.records.iter().map(|r| (r.id, r.complete_ns)).collect::<Vec<_>>(),
            ssd.waiting_writes.resumptions(),
            writes,
            ssd.run_counters(),
        )
    };
    let (recs, resumptions, writes, c) = go();
    assert_eq!(go().0, recs, "deterministic");
    let programs = (c.host_units + c.gc_units + c.padding_units) / 4;
    assert!(resumptions > 0, "writes waited");
    assert!(resumptions <= 2 * writes + programs, "{resumptions} resumptions, {writes} writes, {programs} programs");
}

#[test]
fn a_read_waits_for_the_program_or_suspends_it() {
    let base = small_spec(Precondition::Full);
    let t = base.timing;
    let around = t.overhead_ns() + t.channel_ns(geometry::UNIT_BYTES) + t.link_ns(4096);
    let (p0, fcfs, fcfs_end) = read_behind_a_program(base.clone());
    assert_eq!(fcfs_end, p0 + t.program_ns());
    // First come: the read reaches the die at 100 us + overhead, waits for the program's end.
    assert_eq!(fcfs, t.program_ns() - 100_000 + t.read_ns() + around - t.overhead_ns());
    let (_, prio, prio_end) = read_behind_a_program(with_scheduling(base.clone(), die_scheduling::SuspendMode::None));
    assert_eq!((prio, prio_end), (fcfs, fcfs_end), "read priority alone: the program had begun");
    let (_, susp, susp_end) = read_behind_a_program(with_scheduling(base, die_scheduling::SuspendMode::Program));
    assert_eq!(susp, 20_000 + t.read_ns() + around, "suspend + tR");
    assert_eq!(susp_end, fcfs_end + 20_000 + t.read_ns() + 10_000, "the program ends later by suspend + tR + resume");
}

#[test]
fn read_priority_and_suspension_keep_the_mapping_and_are_deterministic() {
    for mode in [die_scheduling::SuspendMode::None, die_scheduling::SuspendMode::ProgramErase] {
        let go = |seed| {
            let mut ssd = FlashSsd::new(with_scheduling(small_spec(Precondition::Aged), mode), seed).unwrap();
            let recs = run(&mut ssd, 16, 3000, 0.5, seed);
            ssd.ftl().check().unwrap();
            (recs.iter().map(|r| (r.id, r.complete_ns)).collect::<Vec<_>>(), ssd.run_counters(), ssd.res.suspensions())
        };
        let a = go(3);
        assert_eq!(a, go(3));
        assert!(a.1.erases > 0, "GC ran");
        if mode != die_scheduling::SuspendMode::None {
            assert!(a.2 > 0, "reads suspended programs");
        }
        // Reads wait less than first come on the same stream.
        let mut plain = FlashSsd::new(small_spec(Precondition::Aged), 3).unwrap();
        let p = run(&mut plain, 16, 3000, 0.5, 3);
        let mean = |r: &[RequestRecord]| {
            let v: Vec<u64> = r.iter().filter(|x| x.op == Op::Read).map(|x| x.complete_ns - x.start_ns).collect();
            v.iter().sum::<u64>() as f64 / v.len() as f64
        };
        let mut on = FlashSsd::new(with_scheduling(small_spec(Precondition::Aged), mode), 3).unwrap();
        let q = run(&mut on, 16, 3000, 0.5, 3);
        assert!(mean(&q) < mean(&p), "{mode:?}: {} vs {}", mean(&q), mean(&p));
    }
}

#[test]
fn die_scheduling_errors_name_the_field() {
    let mut s = small_spec(Precondition::Full);
    s.die_scheduling.suspend = die_scheduling::SuspendMode::Program;
    assert!(FlashSsd::new(s.clone(), 1).err().unwrap().contains("`device.flash.suspend`"));
    s.die_scheduling.read_priority = true;
    s.die_scheduling.suspend_us = f64::NAN;
    assert!(FlashSsd::new(s, 1).err().unwrap().contains("`device.flash.suspend_us`"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Any stream of writes, trims and flushes keeps the mapping's invariants.
    #[test]
    fn ftl_invariants_hold_over_random_streams(ops in proptest::collection::vec((0u8..10, 0u64..4096, 1u32..64), 1..400)) {
        let mut ssd = FlashSsd::new(small_spec(Precondition::Full), 1).unwrap();
        let mut prio = FlashSsd::new(with_scheduling(small_spec(Precondition::Full), die_scheduling::SuspendMode::ProgramErase), 1).unwrap();
        let cap = ssd.capacity_sectors();
        let mut now = 0;
        let mut now2 = 0;
        for (i, (kind, at, len)) in ops.into_iter().enumerate() {
            let sector = (at * 8) % cap;
            let len = len.min(((cap - sector) as u32).max(1));
            match kind {
                0 => { ssd.trim(sector, len as u64); prio.trim(sector, len as u64); }
                1 => { now = ssd.flush_done_ns(now); now2 = prio.flush_done_ns(now2); }
                2..=4 => {
                    now = ssd.service(&Request::new(i as u64, Op::Read, sector, len, now), ArmPath::Direct, now).completion_ns;
                    now2 = prio.service(&Request::new(i as u64, Op::Read, sector, len, now2), ArmPath::Direct, now2).completion_ns;
                }
                _ => {
                    now = ssd.service(&Request::new(i as u64, Op::Write, sector, len, now), ArmPath::Direct, now).completion_ns;
                    now2 = prio.service(&Request::new(i as u64, Op::Write, sector, len, now2), ArmPath::Direct, now2).completion_ns;
                }
            }
        }
        ssd.flush_done_ns(now);
        prio.flush_done_ns(now2);
        prop_assert!(prio.ftl().check().is_ok(), "{:?}", prio.ftl().check());
        prop_assert!(ssd.ftl().check().is_ok(), "{:?}", ssd.ftl().check());
    }
}

#[test]
fn die_scheduling_fields_in_a_scenario() {
    let spec = scenario_flash_spec;
    let s = spec("read_priority = true\nsuspend = \"program-erase\"\nsuspend_us = 30\nresume_us = 5").unwrap().unwrap();
    assert_eq!(s.die_scheduling.suspend, die_scheduling::SuspendMode::ProgramErase);
    assert_eq!((s.die_scheduling.suspend_us, s.die_scheduling.erase_suspend_us, s.die_scheduling.resume_us), (30.0, 700.0, 5.0));
    let e = spec("read_priority = true\nsuspend = \"always\"").unwrap_err();
    assert!(e.contains("field `device.flash.suspend`: unknown mode `always`"), "{e}");
    let e = spec("suspend = \"program\"").unwrap_err();
    assert!(e.contains("needs `device.flash.read_priority` = true"), "{e}");
    let e = spec("read_priority = true\nerase_suspend_us = -3").unwrap_err();
    assert!(e.contains("`device.flash.erase_suspend_us` must be in [0, 100000], got -3"), "{e}");
    assert!(spec("").unwrap().unwrap().die_scheduling.is_off(), "off by default");
}

/// A 128 KiB write and a 128 KiB read of unwritten units (no flash: only the link) started at
/// the same instant: the read's data goes device -> host while the write's goes host -> device.
fn read_beside_a_write(interface: &str) -> (Nanos, Nanos) {
    let mut s = small_spec(Precondition::None);
    s.interface = interface.into();
    let mut ssd = FlashSsd::new(s, 1).unwrap();
    let w = ssd.service(&Request::new(0, Op::Write, 0, 256, 0), ArmPath::Direct, 0);
    let r = ssd.service(&Request::new(1, Op::Read, 4096, 256, 0), ArmPath::Direct, 0);
    (w.completion_ns, r.completion_ns)
}

#[test]
fn the_link_is_full_duplex_on_nvme_and_half_duplex_on_sata() {
    let t = small_spec(Precondition::None).timing;
    let one = t.overhead_ns() + t.link_ns(128 * 1024);
    assert_eq!(read_beside_a_write("nvme"), (one, one), "NVMe: the two transfers overlap");
    assert_eq!(read_beside_a_write("sata"), (one, one + t.link_ns(128 * 1024)), "SATA: the read's data waits for the write's");
    // The read's expected service time sees only its own direction's backlog on NVMe.
    let mut ssd = FlashSsd::new(small_spec(Precondition::None), 1).unwrap();
    ssd.service(&Request::new(0, Op::Write, 0, 256, 0), ArmPath::Direct, 0);
    assert_eq!(ssd.positioning_time_ns(4096, 8, Op::Read, t.overhead_ns()), t.link_ns(4096));
    assert_eq!(ssd.positioning_time_ns(4096, 8, Op::Write, t.overhead_ns()), t.link_ns(4096) + t.link_ns(128 * 1024));
}

/// One die (2 planes of 8 KiB pages: superpages of 4 units), a write buffer of one superpage,
/// spare space for a static SLC region of 8 superpages (32 units).
fn slc_spec(precondition: Precondition) -> FlashSpec {
    let mut s = small_spec(precondition);
    s.geometry.channels = 1;
    s.geometry.dies_per_channel = 1;
    s.over_provisioning = 1.0;
    s.write_buffer_kib = 16;
    s.slc.static_gib = 32.0 * 4096.0 / (1u64 << 30) as f64;
    s
}

#[test]
fn a_burst_within_the_slc_cache_runs_at_the_slc_rate_beyond_it_at_the_tlc_rate_and_idle_folds_it() {
    let mut ssd = FlashSsd::new(slc_spec(Precondition::Full), 1).unwrap();
    let (t, c) = (ssd.spec().timing, ssd.spec().slc.clone());
    // 12 writes of one superpage each, one at a time: each waits for the previous program.
    let mut done = vec![0];
    for i in 0..12u64 {
        let now = *done.last().unwrap();
        done.push(ssd.service(&Request::new(i, Op::Write, i * 32, 32, now), ArmPath::Direct, now).completion_ns);
    }
    let period = |prog: Nanos| t.channel_ns(16 * 1024) + prog + t.link_ns(16 * 1024);
    let deltas: Vec<Nanos> = done.windows(2).skip(1).map(|w| w[1] - w[0]).collect();
    // Programs 1-8 in SLC mode (the cache's 32 units), then direct to TLC.
    assert_eq!(deltas[..8], [period(c.program_ns()); 8], "{deltas:?}");
    assert_eq!(deltas[8..], [period(t.program_ns()); 3], "{deltas:?}");
    let slc = ssd.slc().unwrap();
    assert_eq!((slc.used(0), slc.valid_units()), (32, 32));
    ssd.check().unwrap();
    let run = ssd.run_counters();
    assert_eq!((run.host_units, run.slc_units, run.fold_units), (48, 32, 0));
    // A unit in SLC reads at the SLC tR (the die idle, the host not idle long enough to fold).
    let last = *done.last().unwrap() + 1_000_000;
    let r = ssd.service(&Request::new(20, Op::Read, 0, 8, last), ArmPath::Direct, last);
    assert_eq!(r.completion_ns - last, t.overhead_ns() + c.read_ns() + t.channel_ns(4096) + t.link_ns(4096));
    assert_eq!(ssd.slc().unwrap().used(0), 32, "no fold within slc_fold_idle_ms");
    // A second later the host has been idle: the cache was folded to TLC (8 TLC superpages).
    let later = last + 1_000_000_000;
    let r = ssd.service(&Request::new(21, Op::Read, 0, 8, later), ArmPath::Direct, later);
    assert_eq!(ssd.slc().unwrap().used(0), 0, "folded in idle time");
    assert_eq!(r.completion_ns - later, t.overhead_ns() + t.read_ns() + t.channel_ns(4096) + t.link_ns(4096), "now a TLC read");
    ssd.check().unwrap();
    let run = ssd.run_counters();
    assert_eq!((run.fold_units, run.slc_erases), (32, 1));
    assert!((run.write_amplification() - 80.0 / 48.0).abs() < 1e-12, "folding counts: (48 + 32) / 48");
    // The cache takes writes at the SLC rate again.
    let a = ssd.service(&Request::new(30, Op::Write, 0, 32, later + 1_000_000), ArmPath::Direct, later + 1_000_000);
    let b = ssd.service(&Request::new(31, Op::Write, 32, 32, a.completion_ns), ArmPath::Direct, a.completion_ns);
    let c2 = ssd.service(&Request::new(32, Op::Write, 64, 32, b.completion_ns), ArmPath::Direct, b.completion_ns);
    assert_eq!(c2.completion_ns - b.completion_ns, period(c.program_ns()));
}

#[test]
fn a_full_cache_folds_first_under_idle_and_full() {
    let mut s = slc_spec(Precondition::Full);
    s.slc.fold = slc_cache::FoldPolicy::IdleAndFull;
    let mut ssd = FlashSsd::new(s, 1).unwrap();
    let mut now = 0;
    for i in 0..12u64 {
        now = ssd.service(&Request::new(i, Op::Write, i * 32, 32, now), ArmPath::Direct, now).completion_ns;
    }
    ssd.flush_done_ns(now);
    ssd.check().unwrap();
    let run = ssd.run_counters();
    // Every host superpage went to SLC; 4 folds of one TLC superpage made room.
    assert_eq!((run.host_units, run.slc_units, run.fold_units), (48, 48, 16));
    assert_eq!(ssd.slc().unwrap().used(0), 32);
}

#[test]
fn the_dynamic_part_grows_the_cache_on_a_fresh_drive() {
    let mut s = slc_spec(Precondition::None);
    s.slc.dynamic_gib = 64.0 * 4096.0 / (1u64 << 30) as f64;
    let mut ssd = FlashSsd::new(s, 1).unwrap();
    let mut now = 0;
    for i in 0..30u64 {
        now = ssd.service(&Request::new(i, Op::Write, i * 32, 32, now), ArmPath::Direct, now).completion_ns;
    }
    // 32 static + 64 dynamic units (the fresh drive's free space / 3 allows them): 24 superpages.
    assert_eq!(ssd.run_counters().slc_units, 96);
    ssd.check().unwrap();
}

#[test]
fn the_slc_cache_is_deterministic_and_keeps_the_mapping() {
    for fold in [slc_cache::FoldPolicy::Idle, slc_cache::FoldPolicy::IdleAndFull] {
        let go = |seed| {
            let mut s = small_spec(Precondition::None);
            s.over_provisioning = 0.5;
            s.slc.static_gib = 64.0 * 4096.0 / (1u64 << 30) as f64;
            s.slc.dynamic_gib = 256.0 * 4096.0 / (1u64 << 30) as f64;
            s.slc.fold = fold;
            let mut ssd = FlashSsd::new(s, seed).unwrap();
            let recs = run(&mut ssd, 16, 3000, 0.5, seed);
            ssd.check().unwrap();
            (recs.iter().map(|r| (r.id, r.complete_ns)).collect::<Vec<_>>(), ssd.run_counters())
        };
        let a = go(3);
        assert_eq!(a, go(3), "{fold:?}");
        assert_ne!(a.0, go(4).0);
        assert!(a.1.slc_units > 0, "{fold:?}: {:?}", a.1);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Writes, reads, trims, flushes and idle gaps with the SLC cache on keep every logical unit
    /// mapped at most once (FTL or cache) and the counts right.
    #[test]
    fn slc_cache_invariants_hold_over_random_streams(ops in proptest::collection::vec((0u8..11, 0u64..4096, 1u32..64), 1..400), full in any::<bool>()) {
        let mut s = small_spec(Precondition::Full);
        s.over_provisioning = 0.5;
        s.slc.static_gib = 32.0 * 4096.0 / (1u64 << 30) as f64;
        s.slc.dynamic_gib = 128.0 * 4096.0 / (1u64 << 30) as f64;
        if full {
            s.slc.fold = slc_cache::FoldPolicy::IdleAndFull;
        }
        let mut ssd = FlashSsd::new(s, 1).unwrap();
        let cap = ssd.capacity_sectors();
        ssd.trim(0, cap / 2);
        let mut now = 0;
        for (i, (kind, at, len)) in ops.into_iter().enumerate() {
            let sector = (at * 8) % cap;
            let len = len.min(((cap - sector) as u32).max(1));
            match kind {
                0 => ssd.trim(sector, len as u64),
                1 => now = ssd.flush_done_ns(now),
                2..=4 => now = ssd.service(&Request::new(i as u64, Op::Read, sector, len, now), ArmPath::Direct, now).completion_ns,
                10 => now += 50_000_000,
                _ => now = ssd.service(&Request::new(i as u64, Op::Write, sector, len, now), ArmPath::Direct, now).completion_ns,
            }
        }
        ssd.flush_done_ns(now);
        prop_assert!(ssd.check().is_ok(), "{:?}", ssd.check());
        let c = ssd.run_counters();
        prop_assert!(c.fold_units <= c.slc_units);
    }
}

#[test]
fn slc_fields_in_a_scenario() {
    let spec = scenario_flash_spec;
    let s = spec("slc_cache_gib = 0.05\nslc_dynamic_gib = 0.2\nslc_program_us = 150\nslc_read_us = 20\nslc_fold = \"idle-and-full\"\nslc_fold_idle_ms = 2").unwrap().unwrap();
    assert_eq!((s.slc.static_gib, s.slc.dynamic_gib, s.slc.program_us, s.slc.read_us, s.slc.fold_idle_ms), (0.05, 0.2, 150.0, 20.0, 2.0));
    assert_eq!(s.slc.fold, slc_cache::FoldPolicy::IdleAndFull);
    let e = spec("slc_fold = \"never\"").unwrap_err();
    assert!(e.contains("field `device.flash.slc_fold`: unknown policy `never`"), "{e}");
    let e = spec("slc_program_us = 0").unwrap_err();
    assert!(e.contains("`device.flash.slc_program_us` must be in [1, 100000], got 0"), "{e}");
    let e = spec("slc_cache_gib = 5").unwrap_err();
    assert!(e.contains("field `device.flash.slc_cache_gib`: the static SLC region takes"), "{e}");
    let off = spec("slc_cache_gib = 0\nslc_dynamic_gib = 0").unwrap().unwrap();
    assert!(off.slc.is_off());
}

/// Review of 2026-11-29: a discard of units the SLC cache holds counts them as trimmed (they are
/// not mapped in the FTL), a discard's expected service time is the command latency (no data
/// crosses the link), and a static SLC region larger than the drive is refused, not wrapped.
#[test]
fn discards_of_units_in_the_slc_cache_count_and_cost_a_command_and_huge_regions_are_refused() {
    let mut ssd = FlashSsd::new(slc_spec(Precondition::None), 1).unwrap();
    let mut now = 0;
    for i in 0..4u64 {
        now = ssd.service(&Request::new(i, Op::Write, i * 32, 32, now), ArmPath::Direct, now).completion_ns;
    }
    assert_eq!(ssd.slc().unwrap().valid_units(), 16, "the writes are held in the SLC cache");
    let before = ssd.ftl().counters.trimmed_units;
    ssd.service(&Request::new(9, Op::Discard, 0, 128, now), ArmPath::Direct, now);
    assert_eq!(ssd.ftl().counters.trimmed_units - before, 16);
    assert_eq!(ssd.slc().unwrap().valid_units(), 0);
    ssd.check().unwrap();
    let t = ssd.spec().timing;
    assert_eq!(ssd.positioning_time_ns(0, 2_097_152, Op::Discard, now), t.overhead_ns(), "a 1 GiB discard moves no data");

    let mut huge = slc_spec(Precondition::None);
    huge.slc.static_gib = 87_381.333_333_333_33; // 3x this in units wraps a u32 count of superblocks
    let e = FlashSsd::new(huge, 1).err().expect("a static region beyond the drive is refused");
    assert!(e.contains("slc_cache_gib"), "{e}");
}

/// MQSim's default DRAM (dram.rs): 100 MT/s, 1-byte bursts, 8 KiB rows, 13 ns each.
fn with_mqsim_dram(mut s: FlashSpec) -> FlashSpec {
    s.dram = dram::DramTiming { mt_s: 100.0, burst_bytes: 1, row_bytes: 8192, trcd_ns: 13, tcl_ns: 13, trp_ns: 13 };
    s
}

/// A write completes once its data is in DRAM: the link's time, then the DRAM access (26 ns +
/// 2,048 transfers of 10 ns for 4 KiB). Two writes arriving together take the DRAM channel in
/// turn; without DRAM timing both complete at the link's end. A write that fills a superpage
/// starts its program when its data has crossed the link, DRAM or not.
#[test]
fn with_dram_timing_writes_complete_once_in_dram_one_at_a_time() {
    let dram_ns = 26 + 2048 * 10;
    let mut plain = FlashSsd::new(small_spec(Precondition::None), 1).unwrap();
    let mut timed = FlashSsd::new(with_mqsim_dram(small_spec(Precondition::None)), 1).unwrap();
    let (a, b) = (Request::new(0, Op::Write, 0, 8, 0), Request::new(1, Op::Write, 8, 8, 0));
    let (pa, pb) = (plain.service(&a, ArmPath::Direct, 0), plain.service(&b, ArmPath::Direct, 0));
    let (ta, tb) = (timed.service(&a, ArmPath::Direct, 0), timed.service(&b, ArmPath::Direct, 0));
    assert_eq!(ta.completion_ns, pa.completion_ns + dram_ns, "the first: link, then DRAM");
    assert!(pb.completion_ns < pa.completion_ns + dram_ns, "the second's link ends before the first's DRAM write does");
    assert_eq!(tb.completion_ns, ta.completion_ns + dram_ns, "the second waits for the DRAM channel");
    // Units 2 and 3 fill die 0's superpage (4 units): its program starts in this write.
    let c = Request::new(2, Op::Write, 16, 16, 0);
    let (pc, tc) = (plain.service(&c, ArmPath::Direct, 0), timed.service(&c, ArmPath::Direct, 0));
    assert_eq!(tc.completion_ns, tb.completion_ns + 26 + 4096 * 10, "8 KiB after the others");
    assert_eq!((timed.run_counters().host_units, plain.run_counters().host_units), (4, 4), "the program has started");
    let programmed = |ssd: &mut FlashSsd| ssd.flush_done_ns(0);
    assert!(programmed(&mut timed) > tc.completion_ns.max(pc.completion_ns));
    assert_eq!(programmed(&mut timed), programmed(&mut plain), "the program does not wait for DRAM");
    assert_eq!(timed.run_counters(), plain.run_counters());
}

/// The expected service time of a write adds the DRAM access and the DRAM's backlog.
#[test]
fn with_dram_timing_a_writes_estimate_counts_dram() {
    let mut plain = FlashSsd::new(small_spec(Precondition::None), 1).unwrap();
    let mut timed = FlashSsd::new(with_mqsim_dram(small_spec(Precondition::None)), 1).unwrap();
    let dram_ns = 26 + 2048 * 10;
    let estimate = |ssd: &FlashSsd| ssd.positioning_time_ns(64, 8, Op::Write, 0);
    assert_eq!(estimate(&timed), estimate(&plain) + dram_ns, "idle");
    let w = Request::new(0, Op::Write, 0, 8, 0);
    let (p, t) = (plain.service(&w, ArmPath::Direct, 0), timed.service(&w, ArmPath::Direct, 0));
    // When the write's data has crossed the link, the DRAM is busy with it for dram_ns more.
    let now = p.completion_ns;
    assert_eq!(t.completion_ns, now + dram_ns);
    let estimate = |ssd: &FlashSsd| ssd.positioning_time_ns(64, 8, Op::Write, now);
    assert_eq!(estimate(&timed), estimate(&plain) + dram_ns + dram_ns, "the access and the backlog");
}

/// A read of data the write buffer holds reads it from DRAM (its sectors, 2 KiB of a 4 KiB
/// unit here) before the link; a read of flash data does not touch DRAM.
#[test]
fn with_dram_timing_a_read_of_buffered_data_reads_dram() {
    let mut plain = FlashSsd::new(small_spec(Precondition::Full), 1).unwrap();
    let mut timed = FlashSsd::new(with_mqsim_dram(small_spec(Precondition::Full)), 1).unwrap();
    let w = Request::new(0, Op::Write, 0, 8, 0);
    let at = plain.service(&w, ArmPath::Direct, 0).completion_ns.max(timed.service(&w, ArmPath::Direct, 0).completion_ns) + 1_000_000;
    let hit = Request::new(1, Op::Read, 4, 4, at);
    let (p, t) = (plain.service(&hit, ArmPath::Direct, at), timed.service(&hit, ArmPath::Direct, at));
    assert!(p.cache_hit && t.cache_hit, "served from the buffer");
    assert_eq!(t.completion_ns, p.completion_ns + 26 + 1024 * 10, "2 KiB from DRAM first");
    let later = at + 1_000_000;
    let far = Request::new(2, Op::Read, 4096, 8, later);
    let (p, t) = (plain.service(&far, ArmPath::Direct, later), timed.service(&far, ArmPath::Direct, later));
    assert!(!t.cache_hit);
    assert_eq!(t.completion_ns, p.completion_ns, "a flash read does not go through DRAM");
}

/// `[device.flash] dram_*` set the DRAM channel field by field; a bad one is named.
#[test]
fn dram_fields_are_read_and_checked() {
    let s = scenario_flash_spec(
        "dram_mt_s = 100\ndram_burst_bytes = 1\ndram_row_bytes = 8192\ndram_trcd_ns = 13\ndram_tcl_ns = 13\ndram_trp_ns = 13",
    )
    .unwrap()
    .unwrap();
    assert_eq!(s.dram.access_ns(8192), 26 + 4096 * 10);
    assert!(scenario_flash_spec("").unwrap().unwrap().dram.is_off(), "off in the presets");
    let e = scenario_flash_spec("dram_mt_s = 100\ndram_burst_bytes = 0").unwrap_err();
    assert!(e.contains("`device.flash.dram_burst_bytes`") && e.contains("got 0"), "{e}");
    let e = scenario_flash_spec("dram_mt_s = -1").unwrap_err();
    assert!(e.contains("`device.flash.dram_mt_s`") && e.contains("-1"), "{e}");
}

/// A read half in the buffer and half on flash: the buffered half is read from DRAM from the
/// command's start (after the controller's latency), beside the flash read, and the data goes
/// over the link once both are in. With a slow DRAM (1 MT/s: 2.05 ms for 4 KiB) the DRAM
/// decides: exactly the latency, the DRAM read and the link.
#[test]
fn with_dram_timing_a_read_partly_buffered_waits_for_both() {
    let mut spec = small_spec(Precondition::Full);
    spec.dram = dram::DramTiming { mt_s: 1.0, burst_bytes: 1, row_bytes: 8192, trcd_ns: 13, tcl_ns: 13, trp_ns: 13 };
    let mut ssd = FlashSsd::new(spec, 1).unwrap();
    let t = ssd.spec().timing;
    let w = Request::new(0, Op::Write, 0, 8, 0);
    let at = ssd.service(&w, ArmPath::Direct, 0).completion_ns + 1_000_000;
    let dram_ns = ssd.spec().dram.access_ns(4096);
    assert_eq!(dram_ns, 26 + 2048 * 1000);
    let r = Request::new(1, Op::Read, 0, 16, at);
    let s = ssd.service(&r, ArmPath::Direct, at);
    assert!(dram_ns > t.read_ns() + t.channel_ns(4096), "the DRAM is the longer");
    assert_eq!(s.completion_ns, at + t.overhead_ns() + dram_ns + t.link_ns(8192));
}

// Mapping units larger than 4 KiB (mapping_unit.rs). The small drive's superpage is 16 KiB
// (two planes of 8 KiB): four units, two mapping units of 8 KiB.

fn with_mapping_unit(precondition: Precondition, kib: u32) -> FlashSsd {
    let mut s = small_spec(precondition);
    s.mapping_unit_kib = kib;
    FlashSsd::new(s, 1).unwrap()
}

#[test]
fn a_write_covering_part_of_a_mapping_unit_programs_all_of_it() {
    // A fresh drive: 4 KiB at unit 1 is programmed with unit 0, a hole (no data: no read, its
    // place programmed empty, left unmapped).
    let mut ssd = with_mapping_unit(Precondition::None, 8);
    let s = ssd.service(&Request::new(0, Op::Write, 8, 8, 0), ArmPath::Direct, 0);
    ssd.flush_done_ns(s.completion_ns);
    let c = ssd.run_counters();
    assert_eq!((c.host_units, c.merged_units, c.update_reads, c.padding_units), (1, 0, 0, 3), "{c:?}");
    assert_eq!(c.write_amplification(), 4.0, "four units programmed for one written");
    assert_eq!(ssd.ftl().lookup(0), None, "a hole stays unmapped");
    ssd.ftl().check().unwrap();
    // Rewriting unit 1 then reads nothing: its mapping unit's other half holds no data.
    let s2 = ssd.service(&Request::new(1, Op::Write, 8, 8, s.completion_ns), ArmPath::Direct, s.completion_ns);
    ssd.flush_done_ns(s2.completion_ns);
    assert_eq!(ssd.run_counters().update_reads, 0);
    // With data in unit 0, the write of unit 1 reads it and programs it again.
    let s3 = ssd.service(&Request::new(2, Op::Write, 0, 8, s2.completion_ns), ArmPath::Direct, s2.completion_ns);
    ssd.flush_done_ns(s3.completion_ns);
    let s4 = ssd.service(&Request::new(3, Op::Write, 8, 8, s3.completion_ns), ArmPath::Direct, s3.completion_ns);
    ssd.flush_done_ns(s4.completion_ns);
    let c = ssd.run_counters();
    assert_eq!((c.host_units, c.merged_units, c.update_reads), (6, 2, 2), "{c:?}");
    assert!(ssd.ftl().lookup(0).is_some() && ssd.ftl().lookup(1).is_some());
    ssd.ftl().check().unwrap();
    // With 4 KiB mapping units the same write programs its own unit only.
    let mut plain = with_mapping_unit(Precondition::None, 4);
    let s = plain.service(&Request::new(0, Op::Write, 8, 8, 0), ArmPath::Direct, 0);
    plain.flush_done_ns(s.completion_ns);
    let c = plain.run_counters();
    assert_eq!((c.host_units, c.merged_units, c.update_reads, c.padding_units), (1, 0, 0, 3), "{c:?}");
    assert_eq!(plain.ftl().lookup(0), None);
}

/// MQSim's page status from the workload (touched_units.rs): on a full drive, a 4 KiB write
/// beside a unit the run has not touched reads nothing (the unit is rewritten with it, still
/// mapped); once the unit is read, a write beside it reads it first; without the rule every
/// unit holding data is read.
#[test]
fn with_the_workloads_page_status_only_touched_units_are_read_before_a_write_beside_them() {
    let drive = |status: bool| {
        let mut s = small_spec(Precondition::Full);
        s.mapping_unit_kib = 8;
        s.workload_page_status = status;
        FlashSsd::new(s, 1).unwrap()
    };
    for status in [false, true] {
        let mut ssd = drive(status);
        // Unit 1 written: unit 0 (preconditioned, never touched) is merged.
        let s = ssd.service(&Request::new(0, Op::Write, 8, 8, 0), ArmPath::Direct, 0);
        ssd.flush_done_ns(s.completion_ns);
        let c = ssd.run_counters();
        assert_eq!((c.merged_units, c.update_reads), (1, u64::from(!status)), "status {status}: {c:?}");
        assert!(ssd.ftl().lookup(0).is_some(), "merged, not a hole: unit 0 stays mapped");
        ssd.ftl().check().unwrap();
        // Unit 2 read, then unit 3 written: unit 2 is touched, so read first either way.
        let r = ssd.service(&Request::new(1, Op::Read, 16, 8, s.completion_ns), ArmPath::Direct, s.completion_ns);
        let w = ssd.service(&Request::new(2, Op::Write, 24, 8, r.completion_ns), ArmPath::Direct, r.completion_ns);
        ssd.flush_done_ns(w.completion_ns);
        let c = ssd.run_counters();
        assert_eq!((c.merged_units, c.update_reads), (2, 1 + u64::from(!status)), "status {status}: {c:?}");
        ssd.ftl().check().unwrap();
    }
}

/// The write buffer counts the host's units: with 16 KiB mapping units and a buffer of one
/// superpage (four units), a 4 KiB write's program holds one slot, so a second 4 KiB write (to
/// another mapping unit) is taken at once; counting the three merged units too, it would wait
/// for the first program.
#[test]
fn merged_units_take_no_room_in_the_write_buffer() {
    let mut spec = small_spec(Precondition::None);
    spec.mapping_unit_kib = 16;
    spec.write_buffer_kib = 16;
    let mut ssd = FlashSsd::new(spec, 1).unwrap();
    let s1 = ssd.service(&Request::new(0, Op::Write, 0, 8, 0), ArmPath::Direct, 0);
    let at = s1.completion_ns;
    let s2 = ssd.service(&Request::new(1, Op::Write, 32, 8, at), ArmPath::Direct, at);
    assert_eq!(s2.completion_ns - at, s1.completion_ns, "the second write waited for the first program");
    let flushed = ssd.flush_done_ns(s2.completion_ns);
    assert!(flushed > s2.completion_ns + small_spec(Precondition::None).timing.program_ns() / 2, "the programs are under way");
    let c = ssd.run_counters();
    assert_eq!((c.host_units, c.padding_units), (2, 6), "{c:?}");
    ssd.ftl().check().unwrap();
}

/// MQSim's back-pressure counts the sectors the host wrote: an unaligned 8 KiB write (6, 8 and
/// 2 sectors of three units) weighs 16 sectors, not 24, and a write is taken while what is in
/// flight before its last page is below the bound. With a 16 KiB buffer (32 sectors) a second
/// such write is taken at once; counting whole units (24 + 24 > 32) it waits for the first
/// write's program.
#[test]
fn mqsim_back_pressure_counts_the_sectors_written() {
    assert_eq!(unit_weight(false, 0, &(2..18)), 8);
    assert_eq!((unit_weight(true, 0, &(2..18)), unit_weight(true, 1, &(2..18)), unit_weight(true, 2, &(2..18))), (6, 8, 2));
    assert_eq!(unit_weight(true, 5, &(40..40)), 1, "a write of no sectors still weighs one");
    // A 16 KiB buffer (32 sectors), 8 KiB mapping units; an unaligned 8 KiB write first, then
    // `second` (start sector, sectors): how long the second waits, and when the first completed.
    // With hot data kept (as MQSim's descriptions have it) writes take another path: both.
    let two_writes = |mqsim: bool, hot: bool, second: (u64, u32)| {
        let mut spec = small_spec(Precondition::Full);
        spec.mapping_unit_kib = 8;
        spec.write_buffer_kib = 16;
        spec.mqsim_back_pressure = mqsim;
        if hot {
            spec.hot = hot_data::HotDataConfig { window_ms: 1000.0, capacity_kib: 1024 };
        }
        let mut ssd = FlashSsd::new(spec, 1).unwrap();
        let a = ssd.service(&Request::new(0, Op::Write, 2, 16, 0), ArmPath::Direct, 0).completion_ns;
        let b = ssd.service(&Request::new(1, Op::Write, second.0, second.1, a), ArmPath::Direct, a).completion_ns;
        ssd.flush_done_ns(b);
        ssd.check().unwrap();
        (b - a, a)
    };
    let program = small_spec(Precondition::Full).timing.program_ns();
    for hot in [false, true] {
        let (mqsim_wait, first) = two_writes(true, hot, (32 + 2, 16));
        let (units_wait, _) = two_writes(false, hot, (32 + 2, 16));
        assert!(mqsim_wait <= first, "taken at once: {mqsim_wait} ns");
        assert!(units_wait >= program / 2, "waited for the first program: {units_wait} ns");
        // Page by page: with 16 sectors in flight, a 24-sector write whose last page holds 14 of
        // them is taken at once (16 + 10 is below 32 when the last page is taken), though all of
        // it (16 + 24) would not fit.
        let (page_by_page, _) = two_writes(true, hot, (70, 24));
        assert!(page_by_page <= first + program / 100, "taken at once (hot data {hot}): {page_by_page} ns");
    }
}

/// Under MQSim's back pressure a write is taken in calls (write_calls.rs), each writing what it
/// took to DRAM in one access. MQSim's DRAM timing (8 KiB rows): 26 ns + 4,096 transfers of
/// 10 ns for one 8 KiB page, and by MQSim's formula one row's 40,999 ns + 26 ns for 16 or 24
/// KiB. A 16 KiB write (32 sectors) fills one die's superpage, whose program ends at R; then a
/// 24 KiB write of three 8 KiB pages arrives. With a 1 MiB buffer it is taken in one call: its
/// data over the link, then one access. With a 24 KiB buffer (48 sectors, 32 held) the first
/// call takes its first page at once (16 sectors below the bound, 48 with it); the second call
/// comes when the program ends at R, freeing 32: the other two pages, their data already in
/// the drive, one access from R. Taken whole (before), it waited for R, then crossed the link.
#[test]
fn under_mqsim_back_pressure_a_write_is_taken_in_calls_each_its_own_dram_access() {
    let write_after_a_superpage = |buffer_kib: u32| {
        let mut spec = with_mqsim_dram(small_spec(Precondition::Full));
        spec.mapping_unit_kib = 8;
        spec.write_buffer_kib = buffer_kib;
        spec.mqsim_back_pressure = true;
        let t = spec.timing;
        let mut ssd = FlashSsd::new(spec, 1).unwrap();
        let a = ssd.service(&Request::new(0, Op::Write, 0, 32, 0), ArmPath::Direct, 0).completion_ns;
        let program_end = ssd.buffer.drained_ns();
        assert_eq!(ssd.buffer.held_sectors(), 32);
        let b = ssd.service(&Request::new(1, Op::Write, 64, 48, a), ArmPath::Direct, a).completion_ns;
        ssd.flush_done_ns(b);
        ssd.check().unwrap();
        (a, b, program_end, a + t.overhead_ns() + t.link_ns(48 * 512), ssd.run_counters().host_units)
    };
    let (a, b, program_end, data_in, units_one) = write_after_a_superpage(1024);
    assert!(program_end > data_in + 2 * 41_025, "the program ends well after the second write's data is in");
    assert_eq!(b, data_in + 41_025, "one call, one access (a at {a})");
    let (a, b, program_end, _, units_two) = write_after_a_superpage(24);
    assert_eq!(b, program_end + 41_025, "the second call at the program's end, one access (a at {a})");
    assert_eq!(units_one, units_two, "the same units written");
}

#[test]
fn merging_data_on_flash_reads_it_first_and_the_program_waits_for_the_read() {
    let write_then_flush = |kib| {
        let mut ssd = with_mapping_unit(Precondition::Full, kib);
        let s = ssd.service(&Request::new(0, Op::Write, 8, 8, 0), ArmPath::Direct, 0);
        (s.completion_ns, ssd.flush_done_ns(s.completion_ns), ssd.run_counters())
    };
    let (done4, flushed4, c4) = write_then_flush(4);
    let (done8, flushed8, c8) = write_then_flush(8);
    assert_eq!(done4, done8, "the write itself completes in DRAM either way");
    assert_eq!((c4.update_reads, c8.update_reads, c8.merged_units), (0, 1, 1));
    let t = small_spec(Precondition::Full).timing;
    // The update read (tR, then 4 KiB over the channel) ends after the data is in the drive.
    assert!(flushed8 >= t.overhead_ns() + t.read_ns() + t.channel_ns(4096) + t.program_ns(), "{flushed8}");
    assert!(flushed8 > flushed4, "{flushed8} vs {flushed4}");
}

#[test]
fn a_unit_the_host_writes_itself_is_no_longer_merged() {
    let mut ssd = with_mapping_unit(Precondition::Full, 8);
    let a = ssd.service(&Request::new(0, Op::Write, 8, 8, 0), ArmPath::Direct, 0);
    let b = ssd.service(&Request::new(1, Op::Write, 0, 8, a.completion_ns), ArmPath::Direct, a.completion_ns);
    ssd.flush_done_ns(b.completion_ns);
    let c = ssd.run_counters();
    // Unit 0 was read for the first write's merge, then the host sent it: host data.
    assert_eq!((c.host_units, c.merged_units, c.update_reads), (2, 0, 1), "{c:?}");
    assert_eq!(c.write_amplification(), 2.0, "two units written, padding to the superpage");
}

#[test]
fn random_4k_writes_on_16k_mapping_units_amplify_by_four_and_keep_the_invariants() {
    let mut ssd = with_mapping_unit(Precondition::Full, 16);
    let recs = run(&mut ssd, 8, 600, 0.0, 9);
    ssd.flush_done_ns(recs.iter().map(|r| r.complete_ns).max().unwrap());
    ssd.ftl().check().unwrap();
    let c = ssd.run_counters();
    // Each write rewrites its 16 KiB (one superpage: a program of its own) and reads the three
    // units it did not send: two pages (its own unit's page holds one of them).
    assert_eq!((c.host_units, c.merged_units, c.update_reads), (2400, 1800, 1200), "{c:?}");
    // Over the 600 units the host wrote: (2,400 + GC's copies) / 600.
    assert_eq!(c.write_amplification(), (2400 + c.gc_units + c.padding_units) as f64 / 600.0, "{c:?}");
    assert!(c.gc_units > 0, "GC on top of the merges: {c:?}");
    let mut plain = FlashSsd::new(small_spec(Precondition::Full), 1).unwrap();
    let plain_recs = run(&mut plain, 8, 600, 0.0, 9);
    assert!(iops(&plain_recs) > iops(&recs), "read-modify-write costs throughput");
}

#[test]
fn mapping_unit_kib_is_validated_against_the_superpage() {
    let s = scenario_flash_spec("mapping_unit_kib = 16").unwrap().unwrap();
    assert_eq!((s.mapping_unit_kib, s.workload_page_status), (16, false));
    let s = scenario_flash_spec("mapping_unit_kib = 16\nworkload_page_status = true").unwrap().unwrap();
    assert!(s.workload_page_status);
    for bad in ["mapping_unit_kib = 12", "mapping_unit_kib = 0", "mapping_unit_kib = 1024"] {
        let e = scenario_flash_spec(bad).unwrap_err();
        assert!(e.contains("device.flash.mapping_unit_kib") && e.contains(bad.rsplit(' ').next().unwrap()), "{e}");
    }
}

/// One entry per unit, cached in 1 KiB: a cache that misses often.
const SMALL_MAPPING_CACHE: mapping_cache::MappingCacheConfig =
    mapping_cache::MappingCacheConfig { capacity_kib: 1, entry_bytes: 8, translation_entry_bytes: 4, units_per_entry: 1 };

/// Unit 18 written (`sectors` from its start), then units 16-18, then a flush: the drive with
/// 8 KiB mapping units from a fresh state.
fn unit_18_then_16_to_18(sectors: u32) -> FlashSsd {
    let mut ssd = with_mapping_unit(Precondition::None, 8);
    let a = ssd.service(&Request::new(0, Op::Write, 18 * 8, sectors, 0), ArmPath::Direct, 0);
    let b = ssd.service(&Request::new(1, Op::Write, 16 * 8, 24, a.completion_ns), ArmPath::Direct, a.completion_ns);
    ssd.flush_done_ns(b.completion_ns);
    ssd
}

/// Random writes (any sector range), reads, discards and flushes on drives with mapping units of
/// 8 and 16 KiB, fresh or full, with and without the SLC cache, the mapping cache, read priority
/// and MQSim's DRAM timing: after a flush, a unit holds data exactly when the host wrote it and
/// did not discard it since (a hole never becomes data, a merged unit never loses it), and the
/// FTL's and the SLC cache's invariants hold.
#[test]
fn mapping_units_keep_exactly_the_units_the_host_wrote() {
    let (mut merges, mut update_reads, mut resumed) = (0, 0, 0);
    // (KiB, precondition, SLC cache, mapping cache, read priority, DRAM timing)
    let configs = [
        (8, Precondition::None, false, false, false, false),
        (16, Precondition::None, false, true, false, false),
        (8, Precondition::Full, false, false, false, false),
        (16, Precondition::Full, false, true, false, false),
        (8, Precondition::None, true, false, false, false),
        (16, Precondition::None, true, true, false, false),
        (8, Precondition::Full, true, true, false, false),
        (8, Precondition::Full, false, true, true, false),
        (16, Precondition::None, true, true, true, true),
        (8, Precondition::None, false, false, false, true),
    ];
    for (case, (config, seed)) in configs.into_iter().flat_map(|c| (0..300).map(move |seed| (c, seed))).enumerate() {
        let (kib, pre, slc, cached, prio, dram) = config;
        let mut spec = if slc { slc_spec(pre) } else { small_spec(pre) };
        spec.mapping_unit_kib = kib;
        if cached {
            spec.mapping = SMALL_MAPPING_CACHE;
        }
        spec.die_scheduling.read_priority = prio;
        if dram {
            spec = with_mqsim_dram(spec);
        }
        let mut ssd = FlashSsd::new(spec, 1).unwrap();
        // A small region, so that writes meet waiting units, merges and holes often.
        let units = 48u64.min(ssd.ftl().logical_units());
        let mut data: Vec<bool> = (0..units).map(|u| ssd.holds_data(u)).collect();
        let mut x: u64 = 0x9e37_79b9 + seed;
        let mut now = 0;
        // Few requests per drive: a unit wrongly given data is rarely written later, which
        // would hide it.
        for id in 0..30u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let start = (x >> 20) % (units * 8);
            let sectors = ((x >> 40) % 24 + 1).min(units * 8 - start);
            let op = match (x >> 8) % 10 {
                0 => Op::Discard,
                1 => Op::Flush,
                2 | 3 => Op::Read,
                _ => Op::Write,
            };
            let r = Request::new(id, op, start, sectors as u32, now);
            let mut s = ssd.service(&r, ArmPath::Direct, now);
            // A read deferred for its mapping entries (read priority) goes on when asked.
            while let Some(at) = s.resume_ns {
                s = ssd.resume(&r, at);
                resumed += 1;
            }
            now = now.max(s.completion_ns) + 1_000;
            match op {
                Op::Write => (start / 8..(start + sectors).div_ceil(8)).for_each(|u| data[u as usize] = true),
                // A discard unmaps the units wholly inside its range.
                Op::Discard => (start.div_ceil(8)..(start + sectors) / 8).for_each(|u| data[u as usize] = false),
                _ => {}
            }
        }
        now = ssd.flush_done_ns(now);
        ssd.check().unwrap_or_else(|e| panic!("case {case}: {e}"));
        for u in 0..units {
            assert_eq!(ssd.holds_data(u), data[u as usize], "case {case} ({config:?}): unit {u}");
        }
        let c = ssd.run_counters();
        merges += c.merged_units;
        update_reads += c.update_reads;
        assert!(now > 0);
    }
    assert!(merges > 0 && update_reads > 0 && resumed > 0, "merges {merges}, update reads {update_reads}, deferred reads {resumed}");
}

#[test]
fn a_hole_waiting_in_the_buffer_and_programmed_by_the_next_write_stays_a_hole() {
    // Unit 18 written (unit 19 waits as a hole), then units 16-18: its program at the end of
    // mapping unit 16-17 takes 18 and the hole; 19 is then a hole again, never data.
    let ssd = unit_18_then_16_to_18(8);
    assert_eq!(ssd.ftl().lookup(19), None, "never written");
    assert!((16..19).all(|u| ssd.ftl().lookup(u).is_some()));
    let c = ssd.run_counters();
    assert_eq!((c.host_units, c.merged_units), (4, 0), "{c:?}");
    ssd.check().unwrap();
}

#[test]
fn holes_take_no_place_in_the_slc_cache_and_merges_read_from_it() {
    // Unit 0 written into the SLC cache (with unit 1 a hole), then unit 1: unit 0's data is
    // read back from SLC and both are programmed.
    let mut spec = slc_spec(Precondition::None);
    spec.mapping_unit_kib = 8;
    let mut ssd = FlashSsd::new(spec, 1).unwrap();
    let a = ssd.service(&Request::new(0, Op::Write, 0, 8, 0), ArmPath::Direct, 0);
    ssd.flush_done_ns(a.completion_ns);
    let slc = ssd.slc().unwrap();
    assert!(slc.contains(0) && !slc.contains(1), "the hole is not in the SLC cache");
    assert_eq!(slc.valid_units(), 1);
    let t = a.completion_ns + 1_000;
    let b = ssd.service(&Request::new(1, Op::Write, 8, 8, t), ArmPath::Direct, t);
    ssd.flush_done_ns(b.completion_ns);
    let c = ssd.run_counters();
    assert_eq!((c.merged_units, c.update_reads), (1, 1), "{c:?}");
    assert!(ssd.holds_data(0) && ssd.holds_data(1));
    ssd.check().unwrap();
}

#[test]
fn with_a_mapping_cache_holes_need_no_entry() {
    let mut spec = small_spec(Precondition::None);
    spec.mapping_unit_kib = 8;
    spec.mapping = SMALL_MAPPING_CACHE;
    let mut ssd = FlashSsd::new(spec, 1).unwrap();
    let a = ssd.service(&Request::new(0, Op::Write, 8, 8, 0), ArmPath::Direct, 0);
    ssd.flush_done_ns(a.completion_ns);
    let c = ssd.run_counters();
    // One entry looked up and made dirty: unit 1's (unit 0 is a hole).
    assert_eq!(c.map_hits + c.map_misses, 1, "{c:?}");
}

#[test]
fn data_waiting_in_the_buffer_and_programmed_by_the_next_write_is_merged_from_dram() {
    // Units 18-19 written (both wait in the buffer), then units 16-18: its program at the end of
    // mapping unit 16-17 takes 18 and 19 with it; 19 is merged again into 18's new program from
    // DRAM (its data stays there until that program ends): no update read, and it keeps its data.
    let ssd = unit_18_then_16_to_18(16);
    assert!((16..20).all(|u| ssd.ftl().lookup(u).is_some()));
    let c = ssd.run_counters();
    assert_eq!((c.host_units, c.merged_units, c.update_reads), (6, 1, 0), "{c:?}");
    ssd.check().unwrap();
}

/// The small drive cut to one die, with or without cache registers.
fn one_die(precondition: Precondition, cache_registers: bool) -> FlashSsd {
    let mut s = small_spec(precondition);
    s.geometry.channels = 1;
    s.geometry.dies_per_channel = 1;
    s.cache_registers = cache_registers;
    FlashSsd::new(s, 1).unwrap()
}

/// One die: two reads of units on different pages arrive together; (the second's completion).
fn two_reads_on_one_die(cache_registers: bool) -> Nanos {
    let mut ssd = one_die(Precondition::Full, cache_registers);
    let upp = ssd.spec().geometry.units_per_superpage() as u64;
    ssd.service(&Request::new(0, Op::Read, 0, 8, 0), ArmPath::Direct, 0);
    ssd.service(&Request::new(1, Op::Read, upp * 8, 8, 0), ArmPath::Direct, 0).completion_ns
}

#[test]
fn without_cache_registers_a_die_reads_its_next_page_once_the_last_is_out() {
    let t = small_spec(Precondition::Full).timing;
    let out = t.channel_ns(geometry::UNIT_BYTES);
    // With a cache register the second page is read while the first goes out; without, after.
    assert_eq!(two_reads_on_one_die(false) - two_reads_on_one_die(true), out);
}

#[test]
fn chips_and_cache_registers_keep_the_mapping_are_deterministic_and_cost_time() {
    let spec = |chips: bool, registers: bool| {
        let mut s = with_scheduling(small_spec(Precondition::Aged), die_scheduling::SuspendMode::None);
        s.dies_per_chip = if chips { 2 } else { 1 };
        s.cache_registers = registers;
        s
    };
    let go = |chips, registers, seed| {
        let mut ssd = FlashSsd::new(spec(chips, registers), seed).unwrap();
        let recs = run(&mut ssd, 16, 3000, 0.5, seed);
        ssd.ftl().check().unwrap();
        (recs.iter().map(|r| r.complete_ns).max().unwrap(), ssd.run_counters())
    };
    let both = go(true, false, 3);
    assert_eq!(both, go(true, false, 3), "deterministic");
    assert!(both.1.erases > 0, "GC ran");
    // The same stream takes longer as the dies lose their parallelism and their registers.
    let plain = go(false, true, 3).0;
    let chips = go(true, true, 3).0;
    assert!(plain < chips && chips < both.0, "{plain} < {chips} < {}", both.0);
}

#[test]
fn chip_and_register_fields_are_read_and_checked() {
    let spec = scenario_flash_spec;
    let s = spec("dies_per_chip = 2\ncache_registers = false\nslc_cache_gib = 0\nslc_dynamic_gib = 0").unwrap().unwrap();
    assert_eq!((s.dies_per_chip, s.cache_registers), (2, false));
    assert_eq!(s.chips(), s.geometry.dies() / 2);
    let d = spec("").unwrap().unwrap();
    assert_eq!((d.dies_per_chip, d.cache_registers), (1, true), "every die independent, with registers, by default");
    let e = spec("dies_per_chip = 3").unwrap_err();
    assert!(e.contains("field `device.flash.dies_per_chip` must divide dies_per_channel"), "{e}");
    let e = spec("dies_per_chip = 0").unwrap_err();
    assert!(e.contains("got 0"), "{e}");
    let e = spec("cache_registers = false").unwrap_err();
    assert!(e.contains("`device.flash.cache_registers` = false and the SLC cache"), "{e}");
}

/// A 2 KiB read of a written unit and a flushed 2 KiB write, with or without sector transfers:
/// (the read's completion, when the write's program ends).
fn two_kib(sector_transfers: bool) -> (Nanos, Nanos) {
    let mut s = small_spec(Precondition::Full);
    s.mqsim_back_pressure = true;
    s.sector_transfers = sector_transfers;
    let mut ssd = FlashSsd::new(s.clone(), 1).unwrap();
    let read = ssd.service(&Request::new(0, Op::Read, 0, 4, 0), ArmPath::Direct, 0).completion_ns;
    let mut ssd = FlashSsd::new(s, 1).unwrap();
    let w = ssd.service(&Request::new(1, Op::Write, 0, 4, 0), ArmPath::Direct, 0);
    (read, ssd.flush_done_ns(w.completion_ns))
}

#[test]
fn sector_transfers_move_only_the_sectors_asked_for() {
    let s = small_spec(Precondition::Full);
    let t = s.timing;
    let ((read_units, prog_units), (read_sectors, prog_sectors)) = (two_kib(false), two_kib(true));
    // The read moves 2 KiB instead of its 4 KiB unit; the program 2 KiB (the sectors the buffer
    // counts) instead of a whole superpage.
    assert_eq!(read_units - read_sectors, t.channel_ns(4096) - t.channel_ns(2048));
    let superpage = s.geometry.units_per_superpage() as u64 * geometry::UNIT_BYTES;
    assert_eq!(prog_units - prog_sectors, t.channel_ns(superpage) - t.channel_ns(2048));
    // Sectors 6..10 straddle two units of one page: 2 KiB move, not the two units' 8 KiB.
    let read = |sector_transfers: bool| {
        let mut s = small_spec(Precondition::Full);
        s.sector_transfers = sector_transfers;
        let mut ssd = FlashSsd::new(s, 1).unwrap();
        ssd.service(&Request::new(0, Op::Read, 6, 4, 0), ArmPath::Direct, 0).completion_ns
    };
    assert_eq!(read(false) - read(true), t.channel_ns(8192) - t.channel_ns(2048));
    let field = scenario_flash_spec("sector_transfers = true").unwrap().unwrap();
    assert!(field.sector_transfers);
    assert!(!scenario_flash_spec("").unwrap().unwrap().sector_transfers, "off by default");
}

/// One die: two superpages written at once, then flushed: when the second program ends.
fn two_programs_on_one_die(cache_registers: bool) -> Nanos {
    let mut ssd = one_die(Precondition::None, cache_registers);
    let ups = ssd.spec().geometry.units_per_superpage();
    let w = ssd.service(&Request::new(0, Op::Write, 0, 2 * ups * 8, 0), ArmPath::Direct, 0);
    ssd.flush_done_ns(w.completion_ns)
}

#[test]
fn without_cache_registers_a_die_takes_a_programs_data_once_the_last_program_ends() {
    let s = small_spec(Precondition::None);
    let superpage = s.geometry.units_per_superpage() as u64 * geometry::UNIT_BYTES;
    // With a register the second superpage's data comes in while the first is programmed;
    // without, after it.
    assert_eq!(two_programs_on_one_die(false) - two_programs_on_one_die(true), s.timing.channel_ns(superpage));
}

#[test]
fn a_write_larger_than_the_buffer_is_taken_as_room_frees() {
    // A 1 MiB write into a 64 KiB buffer on a fresh drive: taken whole it would complete at the
    // link's rate; taken part by part it waits for all but a buffer's worth to be programmed.
    let mut s = small_spec(Precondition::None);
    s.write_buffer_kib = 64;
    let dies = s.geometry.dies() as u64;
    let superpage = s.geometry.units_per_superpage() as u64 * geometry::UNIT_BYTES;
    let (t, size) = (s.timing, 1u64 << 20);
    let mut ssd = FlashSsd::new(s, 1).unwrap();
    let w = ssd.service(&Request::new(0, Op::Write, 0, (size / 512) as u32, 0), ArmPath::Direct, 0);
    // The dies program at most `dies` superpages per tPROG.
    let programs_before_done = (size - 64 * 1024) / superpage / dies;
    assert!(w.completion_ns >= programs_before_done * t.program_ns(), "{} ns", w.completion_ns);
    assert!(w.completion_ns > 10 * t.link_ns(size), "far slower than the link");
    // Nothing lost: every unit programmed once the buffer drains, the FTL consistent.
    let done = ssd.flush_done_ns(w.completion_ns);
    assert!(done >= w.completion_ns);
    assert_eq!(ssd.ftl().counters.host_units, size / geometry::UNIT_BYTES);
    ssd.ftl().check().unwrap();
    // A write that fits is taken at once, as before.
    let mut small = small_spec(Precondition::None);
    small.write_buffer_kib = 64;
    let mut ssd = FlashSsd::new(small, 1).unwrap();
    let w = ssd.service(&Request::new(0, Op::Write, 0, 64 * 2, 0), ArmPath::Direct, 0);
    assert_eq!(w.completion_ns, t.overhead_ns() + t.link_ns(64 * 1024));
}
