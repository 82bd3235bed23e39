//! Flash drives through scenarios: a preset runs, `[device.flash]` overrides, errors name the
//! field and value, the drive queue's depth is the interface's.

use iosched::scenario::{RunOptions, Scenario};
use iosched::sim::RunControl;

fn err(text: &str) -> String {
    Scenario::parse(text, "bad.toml").err().unwrap_or_else(|| panic!("should be rejected: {text}")).to_string()
}

/// A small drive; its spare space (3.25 superblocks per die) has no room for the preset's static
/// SLC region beside GC's reserve: the cache is off (tested below and in the unit tests).
const SMALL: &str = "[device.flash]\nchannels = 2\ndies_per_channel = 2\nblocks_per_plane = 16\npages_per_block = 16\nover_provisioning = 0.25\nslc_cache_gib = 0\nslc_dynamic_gib = 0\n";

#[test]
fn a_preset_slc_cache_scales_with_the_geometry_and_takes_writes() {
    let small =
        "[device.flash]\nchannels = 2\ndies_per_channel = 2\nblocks_per_plane = 32\npages_per_block = 16\nover_provisioning = 0.5\n";
    let text =
        format!("[device]\npreset = \"samsung-970-evo-plus-1tb\"\nqueue_depth = 8\n{small}precondition = \"none\"\n{}", workload(8, 0.0));
    let scn = Scenario::parse(&text, "slc.toml").unwrap();
    let spec = scn.flash_spec().unwrap().unwrap();
    let preset = iosched::device::flash::presets::flash_preset("samsung-970-evo-plus-1tb").unwrap();
    // The same share of the user capacity as the preset's (6 + 36 GB of 1 TB).
    let share = |s: &iosched::device::flash::FlashSpec| {
        let l = iosched::device::flash::ftl::logical_units_for(&s.geometry, s.over_provisioning, s.gc_free_superblocks).unwrap() as f64;
        (s.slc.static_gib / l, s.slc.dynamic_gib / l)
    };
    let (a, b) = (share(&spec), share(&preset));
    assert!((a.0 / b.0 - 1.0).abs() < 1e-9 && (a.1 / b.1 - 1.0).abs() < 1e-9, "{a:?} {b:?}");
    let runs = scn.run(None).unwrap();
    let f = runs[0].summary.flash.unwrap();
    assert!(f.counters.slc_units > 0 && f.counters.slc_units <= f.counters.host_units, "{f:?}");
}

fn workload(qd: u32, read_fraction: f64) -> String {
    format!("[workload]\nkind = \"closed-queue\"\nqueue_depth = {qd}\nrequests = 2000\nrequest_kib = 4\nread_fraction = {read_fraction}\n")
}

#[test]
fn a_flash_preset_runs_and_reports_its_ftl() {
    let text =
        format!("[device]\npreset = \"samsung-970-evo-plus-1tb\"\nqueue_depth = 32\n{SMALL}precondition = \"aged\"\n{}", workload(32, 0.0));
    let scn = Scenario::parse(&text, "flash.toml").unwrap();
    let runs = scn.run(None).unwrap();
    let s = &runs[0].summary;
    assert_eq!(s.requests, 2000);
    assert_eq!(s.device, "samsung-970-evo-plus-1tb");
    let f = s.flash.expect("a flash drive reports its FTL");
    // Units programmed for the host: the last few may still wait in the write buffer, and an
    // overwrite of a waiting unit is absorbed there.
    assert!(f.counters.host_units <= 2000 && f.counters.host_units > 1900, "{f:?}");
    assert!(f.write_amplification >= 1.0 && f.precondition_write_amplification > 1.0, "{f:?}");
    // The resolved scenario shows the flash spec with the overrides applied.
    let v = scn.resolved().unwrap();
    assert_eq!(v["device"]["resolved"]["flash"]["geometry"]["channels"], 2);
    // Deterministic: the same scenario gives the same summary.
    let again = scn.run(None).unwrap();
    assert_eq!(serde_json::to_string(&again[0].summary).unwrap(), serde_json::to_string(s).unwrap());
}

#[test]
fn rotational_summaries_have_no_flash_report() {
    let scn = Scenario::parse(&format!("[device]\npreset = \"wd-ultrastar-hc310\"\n{}", workload(4, 1.0)), "disk.toml").unwrap();
    let runs = scn.run(None).unwrap();
    assert!(runs[0].summary.flash.is_none());
    assert!(!serde_json::to_string(&runs[0].summary).unwrap().contains("\"flash\""));
}

#[test]
fn bad_flash_fields_are_named() {
    let base = "[device]\npreset = \"samsung-870-evo-1tb\"\n";
    let cases: &[(&str, &[&str])] = &[
        ("[device.flash]\nchannels = 0\n", &["device.flash.channels", "0"]),
        ("[device.flash]\npage_kib = 6\n", &["device.flash.page_kib", "6"]),
        ("[device.flash]\nread_us = -1\n", &["device.flash.read_us", "-1"]),
        ("[device.flash]\ngc_policy = \"lru\"\n", &["device.flash.gc_policy", "lru", "cost-benefit"]),
        ("[device.flash]\nprecondition = \"half\"\n", &["device.flash.precondition", "half", "aged"]),
        ("[device.flash]\nover_provisioning = 0.01\n", &["over-provisioning 0.01", "spare superblocks"]),
        ("[device.flash]\nwrite_buffer_kib = 1\n", &["device.flash.write_buffer_kib", "1"]),
        ("[device.flash]\nchanels = 4\n", &["chanels"]),
        ("queue_depth = 33\n", &["device.queue_depth", "32", "33", "NCQ"]),
        ("write_cache = true\n", &["device.write_cache", "rotational"]),
        ("queue_order = \"rpo\"\n", &["device.queue_order"]),
        ("kind = \"rotational\"\n", &["device.kind", "samsung-870-evo-1tb"]),
        ("kind = \"tape\"\n", &["device.kind", "tape"]),
    ];
    for (extra, want) in cases {
        let e = err(&format!("{base}{extra}{}", workload(1, 1.0)));
        for w in *want {
            assert!(e.contains(w), "{extra:?}: `{w}` not in: {e}");
        }
    }
    let e = err(&format!("[device]\nkind = \"flash\"\npreset = \"wd-ultrastar-hc310\"\n{}", workload(1, 1.0)));
    assert!(e.contains("device.preset") && e.contains("rotational"), "{e}");
    let e = err(&format!("[device]\nkind = \"flash\"\n{}", workload(1, 1.0)));
    assert!(e.contains("device.preset") && e.contains("samsung-870-evo-1tb"), "{e}");
    let e = err(&format!("[device]\npreset = \"samsung-pm9a3-7.68tb\"\nqueue_depth = 1025\n{}", workload(1, 1.0)));
    assert!(e.contains("1024") && e.contains("io_queue_depth"), "{e}");
}

#[test]
fn disk_schedulers_run_on_flash_without_breaking_invariants() {
    // SPTF-like schedulers see the expected service time (die backlog + tR), elevators a
    // single cylinder: each finishes the run with every invariant at zero.
    let mut text = format!("[device]\npreset = \"samsung-970-evo-plus-1tb\"\nqueue_depth = 4\n{SMALL}{}", workload(16, 0.7));
    for s in ["fcfs", "sptf", "aged-sptf", "clook", "mq-deadline", "kyber", "bfq"] {
        text += &format!("[[scheduler]]\nname = \"{s}\"\n");
    }
    let runs = Scenario::parse(&text, "flash.toml").unwrap().run(None).unwrap();
    assert_eq!(runs.len(), 7);
    for r in &runs {
        let s = &r.summary;
        assert_eq!(s.requests, 2000, "{}", s.scheduler);
        let inv = serde_json::to_value(s.invariants).unwrap();
        for (k, v) in inv.as_object().unwrap() {
            assert_eq!(v.as_u64(), Some(0), "{}: invariant {k}", s.scheduler);
        }
    }
}

/// Read priority with a mapping cache: reads whose entries are being read from flash are
/// resumed by the engine when their page reads are due (`Device::resume`). Every request
/// completes once, with every invariant at zero, through the plain drive queue and NVMe queue
/// pairs alike, and the run is deterministic.
#[test]
fn resumed_reads_complete_once_through_the_engine() {
    for (queues, block) in [("queue_depth = 32\n", ""), ("[device.nvme]\nqueues = 4\nqueue_depth = 32\n", "[block]\ncpus = 4\n")] {
        let text = format!(
            "[device]\npreset = \"samsung-970-evo-plus-1tb\"\n{queues}{SMALL}read_priority = true\nmapping_cache_kib = 1\n{}\n{block}[[scheduler]]\nname = \"none\"\n[[scheduler]]\nname = \"mq-deadline\"\n",
            workload(32, 0.7)
        );
        let scn = Scenario::parse(&text, "resume.toml").unwrap();
        let runs = scn.run(None).unwrap();
        for r in &runs {
            let s = &r.summary;
            assert_eq!(s.requests, 2000, "{}", s.scheduler);
            let f = s.flash.unwrap();
            assert!(f.counters.map_reads > 100, "the cache misses: {f:?}");
            let inv = serde_json::to_value(s.invariants).unwrap();
            for (k, v) in inv.as_object().unwrap() {
                assert_eq!(v.as_u64(), Some(0), "{queues} {}: invariant {k}", s.scheduler);
            }
        }
        let again = scn.run(None).unwrap();
        assert_eq!(serde_json::to_string(&again[0].summary).unwrap(), serde_json::to_string(&runs[0].summary).unwrap());
    }
}

/// Read priority with a small write buffer: writes finding it full wait in line, the first for
/// a program's end, the others until the device wakes them (`Device::woken`). Every request
/// completes once with every invariant at zero, on SATA with a per-command latency that varies
/// widely (commands reach the drive out of their dispatch order, the device called ahead of the
/// engine's clock) and through NVMe queue pairs, and the run is deterministic.
#[test]
fn writes_waiting_for_room_complete_once_through_the_engine() {
    let cases = [
        ("samsung-870-evo-1tb", "queue_depth = 32\ncommand_latency_us = [50, 900, 100000, 400]\n", ""),
        ("samsung-970-evo-plus-1tb", "[device.nvme]\nqueues = 4\nqueue_depth = 32\n", "[block]\ncpus = 4\n"),
    ];
    for (preset, queues, block) in cases {
        let text = format!(
            "[device]\npreset = \"{preset}\"\n{queues}{SMALL}read_priority = true\nwrite_buffer_kib = 128\nprecondition = \"aged\"\n{}\n{block}[[scheduler]]\nname = \"none\"\n[[scheduler]]\nname = \"mq-deadline\"\n",
            workload(32, 0.3)
        );
        let scn = Scenario::parse(&text, "wait.toml").unwrap();
        let runs = scn.run(None).unwrap();
        for r in &runs {
            let s = &r.summary;
            assert_eq!(s.requests, 2000, "{preset} {}", s.scheduler);
            let inv = serde_json::to_value(s.invariants).unwrap();
            for (k, v) in inv.as_object().unwrap() {
                assert_eq!(v.as_u64(), Some(0), "{preset} {}: invariant {k}", s.scheduler);
            }
        }
        let again = scn.run(None).unwrap();
        assert_eq!(serde_json::to_string(&again[1].summary).unwrap(), serde_json::to_string(&runs[1].summary).unwrap());
    }
}

/// An aged drive is aged once per scenario and copied for each scheduler's run (and array
/// member): every run's summary is the one the scheduler gets alone.
#[test]
fn an_aged_drive_is_aged_once_and_every_run_is_as_alone() {
    let head = format!("[device]\npreset = \"samsung-970-evo-plus-1tb\"\nqueue_depth = 8\n{SMALL}precondition = \"aged\"\n");
    let array = "[array]\nlevel = \"raid0\"\nmembers = 2\n";
    for arr in ["", array] {
        let both = format!("{head}{arr}{}[[scheduler]]\nname = \"fcfs\"\n[[scheduler]]\nname = \"sptf\"\n", workload(8, 0.5));
        let runs = Scenario::parse(&both, "aged.toml").unwrap().run(None).unwrap();
        assert_eq!(runs.len(), 2);
        for (i, name) in ["fcfs", "sptf"].iter().enumerate() {
            let alone = format!("{head}{arr}{}[[scheduler]]\nname = \"{name}\"\n", workload(8, 0.5));
            let one = Scenario::parse(&alone, "aged.toml").unwrap().run(None).unwrap();
            assert_eq!(serde_json::to_string(&one[0].summary).unwrap(), serde_json::to_string(&runs[i].summary).unwrap(), "{arr}{name}");
        }
        assert!(runs[0].summary.flash.unwrap().precondition_write_amplification > 1.0, "aged: GC ran");
    }
}

/// Ctrl-C while the drive is being aged (minutes for a large one) ends the scenario at once,
/// with no run.
#[test]
fn a_cancel_while_aging_the_drive_returns_no_run() {
    let text =
        format!("[device]\npreset = \"samsung-pm9a3-7.68tb\"\nqueue_depth = 8\n{}[[scheduler]]\nname = \"fcfs\"\n", workload(8, 0.5));
    let scn = Scenario::parse(&text, "pm9a3.toml").unwrap();
    assert_eq!(scn.flash_spec().unwrap().unwrap().precondition, iosched::device::flash::spec::Precondition::Aged);
    let control = RunControl::default();
    control.cancel();
    let runs = scn.run_with(RunOptions { control: Some(&control), ..RunOptions::default() }).unwrap();
    assert!(runs.is_empty(), "no run starts: {}", runs.len());
}

#[test]
fn a_raid0_of_flash_drives_sums_their_ftls() {
    let text = format!(
        "[device]\npreset = \"samsung-970-evo-plus-1tb\"\nqueue_depth = 8\n{SMALL}precondition = \"none\"\n[array]\nlevel = \"raid0\"\nmembers = 2\n{}",
        workload(16, 0.0)
    );
    let runs = Scenario::parse(&text, "raid.toml").unwrap().run(None).unwrap();
    let s = &runs[0].summary;
    assert!(s.device.starts_with("raid0 of 2 x samsung-970-evo-plus-1tb"), "{}", s.device);
    let f = s.flash.unwrap();
    assert!(f.counters.host_units > 1900 && f.counters.host_units <= 2000, "both members' units: {f:?}");
}

/// Through the engine on NVMe queue pairs (a discard is a queued command there), with read
/// priority and a 20 KiB buffer on two dies: reads of die 0 delay its program of a superpage
/// (sectors 0-31); a write to die 1 (sectors 160-167) waits as a partial superpage; a third
/// write (sectors 96-103) finds the buffer full and waits for die 0's program. A discard of the
/// second write's sectors then programs die 1's waiting unit at once (unmap_range): the drive
/// wakes the third write, the engine drops the event it had armed, and the write is taken when
/// die 1's program ends, long before die 0's. Every request completes once, every invariant
/// zero. (Trace replay skips flushes; the unit test `a_write_in_line_is_woken_by_...` flushes.)
#[test]
fn a_discard_wakes_a_write_waiting_for_a_later_program_through_the_engine() {
    let dir = std::env::temp_dir().join(format!("iosched-rewake-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let third_write_response = |discard: bool| {
        let mut trace = String::new();
        let mut n = 0;
        let mut line = |t_ns: u64, rwbs: &str, sector: u64, size: u64| {
            n += 1;
            trace += &format!("259,0 1 {n} 0.{t_ns:09} 100 Q {rwbs} {sector} + {size} [t]\n");
        };
        for k in 1..=20u64 {
            line(0, "R", k * 64, 8);
        }
        line(1_000, "WS", 0, 32);
        line(2_000, "WS", 160, 8);
        line(3_000, "WS", 96, 8);
        if discard {
            line(10_000, "D", 160, 8);
        }
        std::fs::write(dir.join("rewake.blkparse.txt"), trace).unwrap();
        let text = "[device]\npreset = \"samsung-970-evo-plus-1tb\"\n[device.nvme]\nqueues = 4\nqueue_depth = 32\n\
                    [device.flash]\nchannels = 1\ndies_per_channel = 2\nplanes_per_die = 2\nblocks_per_plane = 16\n\
                    pages_per_block = 16\npage_kib = 8\nover_provisioning = 0.25\nslc_cache_gib = 0\nslc_dynamic_gib = 0\n\
                    read_priority = true\nwrite_buffer_kib = 20\nprecondition = \"full\"\n\
                    [block]\ncpus = 4\n[workload]\nkind = \"trace\"\ntrace = \"rewake.blkparse.txt\"\n\
                    [[scheduler]]\nname = \"none\"\n";
        let path = dir.join("rewake.toml");
        std::fs::write(&path, text).unwrap();
        let scn = Scenario::read(&path).unwrap();
        let runs = scn.run_with(RunOptions { keep_records: true, ..RunOptions::default() }).unwrap();
        let r = &runs[0];
        assert_eq!(r.summary.requests, 23 + discard as u64);
        let inv = serde_json::to_value(r.summary.invariants).unwrap();
        for (k, v) in inv.as_object().unwrap() {
            assert_eq!(v.as_u64(), Some(0), "invariant {k}");
        }
        let third = r.records.iter().find(|q| q.start_sector == 96).expect("the third write");
        third.complete_ns - third.issue_ns
    };
    let alone = third_write_response(false);
    let woken = third_write_response(true);
    std::fs::remove_dir_all(&dir).ok();
    // Die 0's program waits behind 20 reads and takes the program time itself.
    assert!(alone > 1_000_000, "without the discard it waits for die 0's program: {alone} ns");
    assert!(woken * 2 < alone, "the discard's program on idle die 1 frees room first: {woken} ns against {alone} ns");
}

/// `command_cycles` is timed for MQSim's chips only: with cache registers (a preset's) it is
/// refused naming both fields; with cache_registers = false it runs.
#[test]
fn command_cycles_need_chips_without_cache_registers() {
    let text = format!("[device]\npreset = \"samsung-970-evo-plus-1tb\"\n{SMALL}command_cycles = true\n{}", workload(8, 0.5));
    let e = err(&text);
    assert!(e.contains("device.flash.command_cycles") && e.contains("cache_registers = false"), "{e}");
    let ok = format!(
        "[device]\npreset = \"samsung-970-evo-plus-1tb\"\n{SMALL}command_cycles = true\ncache_registers = false\n{}",
        workload(8, 0.5)
    );
    let runs = Scenario::parse(&ok, "ok.toml").unwrap().run(None).unwrap();
    assert_eq!(runs[0].summary.requests, 2000);
}
