//! The block layer and the drive's queue end to end: invariants at drive depth > 1, merged
//! requests complete every bio once, request limits, and "no block layer" = the engine of before.

use iosched::scenario::Scenario;
use std::collections::HashSet;

fn run(text: &str) -> Vec<iosched::scenario::RunResult> {
    Scenario::parse(text, "t.toml").unwrap_or_else(|e| panic!("{e}")).run(Some(3)).unwrap()
}

const NCQ: &str = r#"
[device]
preset = "wd-ultrastar-hc310"
queue_depth = 32
[workload]
kind = "closed-queue"
queue_depth = 32
request_kib = 4
requests = 5000
[[scheduler]]
name = "noop"
[[scheduler]]
name = "clook"
[[scheduler]]
name = "anticipatory"
[[scheduler]]
name = "las"
[[scheduler]]
name = "cas"
"#;

#[test]
fn at_depth_32_every_request_completes_exactly_once() {
    for r in run(NCQ) {
        let s = &r.summary;
        assert_eq!(s.invariants, Default::default(), "{}: {:?}", s.scheduler, s.invariants);
        assert_eq!(s.requests, 5000, "{}", s.scheduler);
        let ids: HashSet<u64> = r.records.iter().map(|x| x.id).collect();
        assert_eq!(ids.len(), r.records.len(), "{}: a request completed twice", s.scheduler);
        // Completions come back out of order: the drive reorders.
        let out_of_order = r.records.windows(2).filter(|w| w[1].dispatch_ns < w[0].dispatch_ns).count();
        assert!(out_of_order > 100, "{}: only {out_of_order} completions out of dispatch order", s.scheduler);
        for x in &r.records {
            assert!(
                x.issue_ns <= x.insert_ns && x.insert_ns <= x.dispatch_ns && x.dispatch_ns <= x.start_ns && x.start_ns <= x.complete_ns
            );
        }
    }
}

#[test]
fn drive_depth_raises_random_read_throughput_and_fifo_does_not() {
    let iops = |depth: u32, order: &str| {
        let text = format!(
            "[device]\npreset = \"wd-ultrastar-hc310\"\nqueue_depth = {depth}\nqueue_order = \"{order}\"\n[workload]\nkind = \"closed-queue\"\nqueue_depth = {depth}\nrequests = 4000\n[[scheduler]]\nname = \"noop\"\n"
        );
        run(&text)[0].summary.iops
    };
    let (d1, d8, d32) = (iops(1, "rpo"), iops(8, "rpo"), iops(32, "rpo"));
    assert!(d1 < d8 && d8 < d32, "{d1} {d8} {d32}");
    assert!(d32 > 2.0 * d1, "RPO at depth 32: {d32} vs {d1}");
    let f32 = iops(32, "fifo");
    assert!((f32 / d1 - 1.0).abs() < 0.05, "a FIFO drive gains nothing: {f32} vs {d1}");
}

#[test]
fn merged_bios_all_complete_and_records_show_their_count() {
    let text = r#"
[device]
preset = "wd-ultrastar-hc310"
[block]
[[process]]
name = "reader"
access = "direct"
request_kib = 4
iodepth = 32
requests = 3200
[[scheduler]]
name = "noop"
"#;
    let r = &run(text)[0];
    let s = &r.summary;
    assert_eq!(s.invariants, Default::default());
    assert_eq!(s.bios, 3200, "every bio completed once");
    let bios: u64 = r.records.iter().map(|x| x.bios as u64).sum();
    assert_eq!(bios, 3200);
    let sectors: u64 = r.records.iter().map(|x| x.size_sectors as u64).sum();
    assert_eq!(sectors, 3200 * 8, "the merged requests cover exactly the bios");
    assert!(r.records.iter().all(|x| x.size_sectors == x.bios * 8));
    assert!(s.requests <= 3200 / 16, "merging: {} requests for 3200 bios", s.requests);
    let b = s.block.unwrap();
    assert!(b.plug_merges > 0);
}

#[test]
fn a_greedy_writer_makes_the_reader_wait_for_a_tag_under_blk_mq_but_not_under_2_6() {
    let text = |tags: &str| {
        format!(
            r#"
[device]
preset = "wd-ultrastar-hc310"
[block]
nr_requests = 128
tags = "{tags}"
[[process]]
name = "writer"
op = "write"
access = "direct"
sync = false
request_kib = 64
iodepth = 4096
file_mib = 100000
[[process]]
name = "reader"
pattern = "random"
request_kib = 4
file_mib = 100000
file_offset_mib = 200000
[run]
duration_s = 5
[[scheduler]]
name = "noop"
"#
        )
    };
    let mq = &run(&text("blk-mq"))[0].summary;
    let legacy = &run(&text("legacy"))[0].summary;
    for s in [mq, legacy] {
        assert_eq!(s.invariants, Default::default(), "{:?}", s.invariants);
        assert!(s.block.unwrap().waited_bios > 1000, "the writer sleeps for requests");
    }
    let reader = |s: &iosched::metrics::RunSummary| s.processes.iter().find(|p| p.name == "reader").unwrap().clone();
    assert!(reader(mq).request_wait_ms.max > 0.0, "blk-mq: the reader waited for a tag");
    assert_eq!(reader(legacy).request_wait_ms.max, 0.0, "2.6: reads have their own request list");
}

#[test]
fn the_same_scenario_gives_the_same_records() {
    let a = run(NCQ);
    let b = run(NCQ);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.records, y.records);
    }
}

#[test]
fn bad_queue_and_block_settings_name_the_field_and_value() {
    let err = |t: &str| Scenario::parse(t, "bad.toml").map(|_| ()).unwrap_err().to_string();
    let base = "[workload]\nkind = \"closed-queue\"\n";
    let e = err(&format!("[device]\nqueue_depth = 4\n{base}"));
    assert!(e.contains("field `device.queue_depth` must be in [1, 1]") && e.contains("got 4"), "{e}");
    let e = err(&format!("[device]\npreset = \"wd-ultrastar-hc310\"\nqueue_depth = 0\n{base}"));
    assert!(e.contains("must be in [1, 32]") && e.contains("got 0"), "{e}");
    let e = err(&format!("[device]\npreset = \"wd-ultrastar-hc310\"\nqueue_order = \"elevator\"\n{base}"));
    assert!(e.contains("unknown order `elevator`"), "{e}");
    let e = err(&format!("{base}[block]\nnomerges = 3\n"));
    assert!(e.contains("field `block.nomerges` must be 0, 1 or 2, got 3"), "{e}");
    let e = err(&format!("{base}[block]\ntags = \"magic\"\n"));
    assert!(e.contains("field `block.tags`: unknown model `magic`"), "{e}");
    let e = err("[[process]]\nprio_class = \"urgent\"\n");
    assert!(e.contains("field `process[0].prio_class`: unknown I/O priority class `urgent`"), "{e}");
    let e = err("[[process]]\nprio_level = 8\n");
    assert!(e.contains("field `process[0].prio_level` must be in [0, 7], got 8"), "{e}");
    let e = err("[[process]]\naccess = \"read\"\niodepth = 4\n");
    assert!(e.contains("field `process[0].iodepth` = 4"), "{e}");
}

#[test]
fn anticipation_keeps_waiting_when_its_requests_merge() {
    // A merge is not an arrival: before the fix every merge counted the process as having one
    // more request outstanding, forever, and anticipation stopped waiting for it.
    let text = |plug: bool| {
        format!(
            r#"
[device]
preset = "ibm-deskstar-34gxp"
[block]
nr_requests = 0
plug = {plug}
[[process]]
name = "seq"
request_kib = 64
max_transfer_kib = 32
think_us = 300
[[process]]
name = "rand"
pattern = "random"
request_kib = 4
[run]
duration_s = 5
[[scheduler]]
name = "anticipatory"
"#
        )
    };
    for plug in [true, false] {
        let s = &run(&text(plug))[0].summary;
        let waits = s.scheduler_counters["waits"];
        let seq = s.processes.iter().find(|p| p.name == "seq").unwrap();
        assert!(waits > 500, "plug {plug}: {waits} waits");
        assert!(seq.throughput_mb_s > 5.0, "plug {plug}: sequential reader {} MB/s", seq.throughput_mb_s);
        assert_eq!(s.invariants, Default::default());
    }
}

#[test]
fn kyber_with_one_request_lets_asynchronous_writes_in() {
    let text = "[device]\npreset = \"wd-ultrastar-hc310\"\n[block]\nnr_requests = 1\n[[process]]\nname = \"w\"\nop = \"write\"\naccess = \"direct\"\nsync = false\nrequests = 50\n[[scheduler]]\nname = \"kyber\"\n";
    let s = &run(text)[0].summary;
    assert_eq!(s.requests, 50);
    assert_eq!(s.invariants, Default::default());
}

#[test]
fn a_process_with_many_bios_behind_a_tiny_pool_is_woken_in_linear_time() {
    // Found by the fuzzer: 40 accesses of ~1 GB, split into 64 KiB parts (640,000 bios), behind
    // 4 requests. Waking used to move every remaining bio of the process each time (quadratic:
    // it never finished); now a woken process takes its bios from the front.
    let text = r#"
[device]
preset = "wd-ultrastar-hc310"
queue_depth = 8
[block]
nr_requests = 4
tags = "blk-mq"
max_sectors_kb = 64
[[process]]
name = "writer"
op = "write"
access = "direct"
sync = false
iodepth = 8
request_kib = 100000
file_mib = 4000
requests = 40
[run]
duration_s = 100000
[[scheduler]]
name = "noop"
"#;
    let s = &run(text)[0].summary;
    assert_eq!(s.invariants, Default::default());
    assert_eq!(s.block.unwrap().split_bios, 40);
    assert_eq!(s.bios, 40 * 1563, "every part of every bio completed");
}

/// `device.command_latency_us`: each command starts at the drive its latency after its dispatch
/// (at depth 1 after the previous completion: the drive idles that long even with the next
/// request queued), a list is taken in order per command, cycling; absent, nothing changes.
#[test]
fn the_host_paths_latency_delays_each_command_at_the_drive() {
    let scenario = |latency: &str| {
        format!(
            r#"
[device]
preset = "wd-ultrastar-hc310"
{latency}
[workload]
kind = "closed-queue"
queue_depth = 4
request_kib = 4
requests = 40
[[scheduler]]
name = "fcfs"
"#
        )
    };
    let plain = run(&scenario("")).remove(0).records;
    let by_start = |mut r: Vec<iosched::metrics::RequestRecord>| {
        r.sort_by_key(|x| x.start_ns);
        r
    };
    let plain = by_start(plain);
    // Without a latency the mechanism starts a command as it is dispatched, at the previous
    // completion (the queue is never empty).
    assert!(plain.iter().all(|x| x.start_ns == x.dispatch_ns));
    assert!(plain.windows(2).all(|w| w[1].dispatch_ns == w[0].complete_ns));
    let zero = by_start(run(&scenario("command_latency_us = 0")).remove(0).records);
    assert_eq!(zero, plain, "a latency of 0 is no latency");

    let constant = by_start(run(&scenario("command_latency_us = 250")).remove(0).records);
    assert_eq!(constant[0].start_ns, constant[0].dispatch_ns + 250_000);
    for w in constant.windows(2) {
        assert_eq!(w[1].dispatch_ns, w[0].complete_ns, "dispatched at the completion");
        assert_eq!(w[1].start_ns, w[0].complete_ns + 250_000, "started one latency later");
    }

    let listed = by_start(run(&scenario("command_latency_us = [100, 0, 1000.5]")).remove(0).records);
    let gaps: Vec<u64> = listed.iter().map(|x| x.start_ns - x.dispatch_ns).collect();
    assert_eq!(gaps[..7], [100_000, 0, 1_000_500, 100_000, 0, 1_000_500, 100_000]);

    let err = |t: &str| Scenario::parse(&scenario(t), "bad.toml").map(|_| ()).unwrap_err().to_string();
    assert!(err("command_latency_us = -1").contains("`device.command_latency_us` must be in [0, 1000000] microseconds, got -1"));
    assert!(
        err("command_latency_us = [1, 2e7]").contains("`device.command_latency_us[1]` must be in [0, 1000000] microseconds, got 20000000")
    );
    assert!(err("command_latency_us = []").contains("a list needs 1 to 10000000 latencies, got 0"));
}
