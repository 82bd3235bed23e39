//! Discards (`Op::Discard`, Linux's REQ_OP_DISCARD) end to end: the flash FTL unmaps the units
//! (a later read touches no flash), `[[process]] op = "discard"` and traces with discards run
//! on flash and are errors naming the field or the trace record on a disk, summaries count them
//! apart from the bytes moved, runs are deterministic.

use iosched::device::flash::presets::flash_preset;
use iosched::device::flash::spec::Precondition;
use iosched::device::flash::FlashSsd;
use iosched::device::{ArmPath, Device};
use iosched::request::{Op, Request};
use iosched::scenario::Scenario;

fn drive(precondition: Precondition) -> FlashSsd {
    let mut spec = flash_preset("samsung-970-evo-plus-1tb").unwrap();
    spec.geometry.blocks_per_plane = 16;
    spec.geometry.pages_per_block = 16;
    spec.over_provisioning = 0.25;
    spec.precondition = precondition;
    // A small sample of blocks: no room for the preset's SLC cache (not what these tests are about).
    spec.slc = Default::default();
    FlashSsd::new(spec, 1).unwrap()
}

#[test]
fn a_discard_unmaps_units_and_a_later_read_touches_no_flash() {
    let mut d = drive(Precondition::Full);
    let overhead = d.spec().timing.overhead_ns();
    // Units 0..8 are on flash: a read of unit 0 goes to a die.
    let read = d.service(&Request::new(0, Op::Read, 0, 8, 0), ArmPath::Direct, 0);
    assert!(!read.cache_hit, "{read:?}");
    assert!(d.ftl().lookup(0).is_some());
    let t = 10_000_000;
    let trimmed_before = d.run_counters().trimmed_units;
    let s = d.service(&Request::new(1, Op::Discard, 0, 64, t), ArmPath::Direct, t);
    assert_eq!((s.dispatch_ns, s.completion_ns, s.transfer_ns), (t, t + overhead, 0), "the controller's latency only");
    assert_eq!(d.run_counters().trimmed_units - trimmed_before, 8);
    assert!((0..8).all(|lpn| d.ftl().lookup(lpn).is_none()));
    assert!(d.ftl().lookup(8).is_some(), "the unit after the range is kept");
    let again = d.service(&Request::new(2, Op::Read, 0, 8, 2 * t), ArmPath::Direct, 2 * t);
    assert!(again.cache_hit, "an unmapped unit is read from no die: {again:?}");
    assert!(again.completion_ns - 2 * t < read.completion_ns, "{again:?} vs {read:?}");
}

#[test]
fn a_discard_of_units_still_in_the_write_buffer_is_not_undone_by_their_program() {
    let mut d = drive(Precondition::None);
    d.service(&Request::new(0, Op::Write, 800, 8, 0), ArmPath::Direct, 0);
    d.service(&Request::new(1, Op::Discard, 800, 8, 1_000), ArmPath::Direct, 1_000);
    assert_eq!(d.ftl().lookup(100), None);
    // Whatever the buffer programs later (a flush drains it), the unit stays unmapped.
    d.flush_done_ns(2_000);
    assert_eq!(d.ftl().lookup(100), None);
    let r = d.service(&Request::new(2, Op::Read, 800, 8, 10_000_000), ArmPath::Direct, 10_000_000);
    assert!(r.cache_hit);
}

fn flash_process(preset: &str, scheduler: &str) -> String {
    format!(
        "[device]\npreset = \"{preset}\"\nqueue_depth = 8\n[device.flash]\nblocks_per_plane = 16\npages_per_block = 16\n\
         over_provisioning = 0.25\nprecondition = \"full\"\nslc_cache_gib = 0\nslc_dynamic_gib = 0\n\
         [[process]]\nname = \"writer\"\nop = \"write\"\npattern = \"random\"\nrequest_kib = 4\nrequests = 300\nfile_mib = 8\n\
         [[process]]\nname = \"trim\"\nop = \"discard\"\nrequest_kib = 64\nrequests = 50\nfile_mib = 8\nthink_us = 100\n\
         [[scheduler]]\nname = \"{scheduler}\"\n"
    )
}

#[test]
fn process_discards_run_on_flash_counted_apart_from_bytes_and_deterministic() {
    for preset in ["samsung-870-evo-1tb", "samsung-970-evo-plus-1tb"] {
        for sched in ["none", "mq-deadline", "kyber", "bfq"] {
            let scn = Scenario::parse(&flash_process(preset, sched), "trim.toml").unwrap();
            let runs = scn.run(None).unwrap();
            let s = &runs[0].summary;
            let by_op = s.requests_by_op.as_ref().expect("a run with discards counts requests by op");
            assert_eq!((by_op["write"], by_op["discard"], by_op["read"]), (300, 50, 0), "{preset} {sched}: {by_op:?}");
            assert_eq!(s.bytes, 300 * 4096, "{preset} {sched}: a discard's range is no bytes moved");
            let trim = s.processes.iter().find(|p| p.name == "trim").unwrap();
            assert_eq!((trim.requests, trim.bytes), (50, 0));
            assert!(s.flash.unwrap().counters.trimmed_units > 0, "{preset} {sched}");
            assert_eq!(s.invariants, Default::default(), "{preset} {sched}");
            let again = scn.run(None).unwrap();
            assert_eq!(serde_json::to_string(&again[0].summary).unwrap(), serde_json::to_string(s).unwrap());
        }
    }
}

#[test]
fn a_discard_process_on_a_disk_is_an_error_naming_the_field() {
    let text = "[device]\npreset = \"ibm-deskstar-34gxp\"\n[[process]]\nname = \"r\"\nrequests = 5\n\
                [[process]]\nname = \"trim\"\nop = \"discard\"\nrequests = 5\n[[scheduler]]\nname = \"noop\"\n";
    let e = match Scenario::parse(text, "disk.toml") {
        Err(e) => e.to_string(),
        Ok(scn) => scn.run(None).err().expect("a discard to a disk must not run").to_string(),
    };
    assert!(e.contains("process[1].op") && e.contains("ibm-deskstar-34gxp") && e.contains("discard"), "{e}");
}

const TRACE: &str = "\
259,0 1 1 0.000001000 100 Q WS 0 + 64 [fio]
259,0 1 2 0.001000000 200 Q D 0 + 64 [fstrim]
259,0 1 3 0.002000000 100 Q R 0 + 8 [fio]
";

fn trace_scenario(dir: &std::path::Path, device: &str) -> Scenario {
    std::fs::write(dir.join("trim.blkparse.txt"), TRACE).unwrap();
    let text = format!(
        "[device]\npreset = \"{device}\"\n[workload]\nkind = \"trace\"\ntrace = \"trim.blkparse.txt\"\n[[scheduler]]\nname = \"noop\"\n"
    );
    let path = dir.join(format!("{device}.toml"));
    std::fs::write(&path, text).unwrap();
    Scenario::read(&path).unwrap()
}

#[test]
fn a_trace_with_discards_replays_them_on_flash_and_skips_them_on_a_disk() {
    let dir = std::env::temp_dir().join(format!("iosched-discard-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let runs = trace_scenario(&dir, "samsung-970-evo-plus-1tb").run(None).unwrap();
    let s = &runs[0].summary;
    assert_eq!(s.requests, 3);
    assert_eq!(s.requests_by_op.as_ref().unwrap()["discard"], 1);
    assert_eq!(s.trace_replay.as_ref().unwrap().skipped_flush_discard, 0);
    assert_eq!(s.bytes, (64 + 8) * 512);
    // A disk has no discard: the record is skipped and counted, as replay always did.
    let runs = trace_scenario(&dir, "ibm-deskstar-34gxp").run(None).unwrap();
    let s = &runs[0].summary;
    assert_eq!(s.requests, 2);
    assert!(s.requests_by_op.is_none(), "no discard ran");
    assert_eq!(s.trace_replay.as_ref().unwrap().skipped_flush_discard, 1);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_multi_range_discard_unmaps_every_range_for_one_commands_latency() {
    // One Dataset Management command with two ranges, not contiguous: the units of both are
    // unmapped, those between them kept; the valid-page counts stay consistent (Ftl::check);
    // the command costs the controller's latency once.
    let mut d = drive(Precondition::Full);
    let overhead = d.spec().timing.overhead_ns();
    let (mapped, trimmed) = (d.ftl().mapped_units(), d.run_counters().trimmed_units);
    let t = 1_000_000;
    let a = Request::new(10, Op::Discard, 0, 64, t);
    let b = Request::new(11, Op::Discard, 4096, 64, t);
    // The request as the block layer hands it: the first range's start, the ranges' total.
    let req = Request { id: 1, size_sectors: 128, ..a };
    let s = d.service_discard(&req, &[a, b], ArmPath::Direct, t);
    assert_eq!((s.dispatch_ns, s.completion_ns, s.transfer_ns), (t, t + overhead, 0));
    assert!((0..8).chain(512..520).all(|lpn| d.ftl().lookup(lpn).is_none()));
    assert!((8..512).all(|lpn| d.ftl().lookup(lpn).is_some()), "the span between the ranges is not a range");
    assert_eq!(mapped - d.ftl().mapped_units(), 16);
    assert_eq!(d.run_counters().trimmed_units - trimmed, 16);
    d.ftl().check().unwrap();
}

/// `count` processes each discarding 64 KiB at random offsets of its own 8 MiB, iodepth 4,
/// behind the block layer, on `preset`.
fn scattered_discards(preset: &str, scheduler: &str, segments: Option<u32>) -> String {
    let segs = segments.map_or(String::new(), |n| format!("max_discard_segments = {n}\n"));
    format!(
        "[device]\npreset = \"{preset}\"\nqueue_depth = 32\n[device.flash]\nblocks_per_plane = 16\npages_per_block = 16\n\
         over_provisioning = 0.25\nprecondition = \"full\"\nslc_cache_gib = 0\nslc_dynamic_gib = 0\n\
         [block]\n{segs}\
         [[process]]\nname = \"trim\"\ncount = 8\nop = \"discard\"\npattern = \"random\"\naccess = \"direct\"\niodepth = 4\n\
         request_kib = 64\nrequests = 200\nfile_mib = 8\nthink_us = 0\n[[scheduler]]\nname = \"{scheduler}\"\n"
    )
}

#[test]
fn scattered_discards_become_multi_range_commands_on_nvme_only() {
    for sched in ["none", "mq-deadline", "kyber", "bfq"] {
        let mut commands = Vec::new();
        for (preset, segments) in [("samsung-970-evo-plus-1tb", None), ("samsung-970-evo-plus-1tb", Some(1)), ("samsung-870-evo-1tb", None)]
        {
            let scn = Scenario::parse(&scattered_discards(preset, sched, segments), "scattered.toml").unwrap();
            let runs = scn.run(None).unwrap();
            let s = &runs[0].summary;
            let block = s.block.unwrap();
            let discards = s.requests_by_op.as_ref().unwrap()["discard"];
            assert_eq!(block.bios, 8 * 200, "{sched} {preset} {segments:?}");
            assert_eq!(discards, block.requests, "{sched} {preset} {segments:?}: every command is a discard");
            // Every bio of every range completed once (the engine's accounting of bios).
            assert_eq!(s.invariants, Default::default(), "{sched} {preset} {segments:?}");
            if preset.contains("970") && segments.is_none() {
                assert!(block.discard_merges > 0, "{sched}: NVMe's 256 ranges per command: {block:?}");
            } else {
                assert_eq!(block.discard_merges, 0, "{sched} {preset}: one range per command");
            }
            let again = scn.run(None).unwrap();
            assert_eq!(serde_json::to_string(&again[0].summary).unwrap(), serde_json::to_string(s).unwrap());
            commands.push(discards);
        }
        assert!(commands[0] < commands[1], "{sched}: fewer commands with multi-range discards: {commands:?}");
    }
}

#[test]
fn max_discard_segments_out_of_range_is_an_error_naming_the_field() {
    for bad in [0, 257] {
        let text = scattered_discards("samsung-970-evo-plus-1tb", "none", Some(bad));
        let e = match Scenario::parse(&text, "bad.toml").map(|scn| scn.run(None)) {
            Err(e) => e.to_string(),
            Ok(Err(e)) => e.to_string(),
            Ok(Ok(_)) => panic!("max_discard_segments = {bad} ran"),
        };
        assert!(e.contains("block.max_discard_segments") && e.contains(&bad.to_string()), "{e}");
    }
}
