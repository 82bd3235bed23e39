//! The process workloads of Iyer & Druschel 2001: read() with read-ahead against mmap, requests
//! split at the maximum transfer size, the adversary's think times.

use iosched::device::presets::preset;
use iosched::device::RotationalDisk;
use iosched::metrics::RequestRecord;
use iosched::request::{Op, Principal, Request};
use iosched::scenario::Scenario;
use iosched::sched::registry;
use iosched::sim::simulate;
use iosched::workload::pattern::Pattern;
use iosched::workload::process::{Access, AccessStats, ProcessSpec, Processes, ReadModel};
use iosched::workload::think::Think;
use iosched::workload::{Emit, Workload};
use std::collections::BTreeMap;

fn spec(pid: u32, pattern: Pattern, access: Access, think_us: u64) -> ProcessSpec {
    ProcessSpec {
        name: format!("p{pid}"),
        principal: Principal { pid, group: pid },
        op: Op::Read,
        pattern,
        request_sectors: 128, // 64 KiB
        file_start_sector: pid as u64 * 4_000_000,
        file_sectors: 2 * 1024 * 1024, // 1 GiB
        think: Think::Fixed(think_us * 1000),
        start_ns: 0,
        after: None,
        max_requests: None,
        exit_ns: 0,
        weight: 1,
        access,
        max_transfer_sectors: 0,
        iodepth: 1,
        sync: true,
        prio: Default::default(),
        meta: false,
        group_weight: None,
        read_fraction: None,
        rate_iops: None,
        runtime_ns: None,
        think_every: 1,
    }
}

fn read_access() -> Access {
    Access::Read(ReadModel { readahead_sectors: 256, cache_pages: 8192, copy_ns_per_kib: 0.0 })
}

/// Runs processes on the IBM Deskstar under `scheduler`: records and per-process statistics.
fn run(specs: Vec<ProcessSpec>, duration_ms: u64, scheduler: &str) -> (Vec<RequestRecord>, Vec<AccessStats>) {
    let mut device = RotationalDisk::new(preset("ibm-deskstar-34gxp").unwrap()).unwrap();
    let mut sched = registry::build(scheduler, None, &BTreeMap::new()).unwrap();
    let mut work = Processes::new(specs, duration_ms * 1_000_000, 1);
    let out = simulate(&mut device, sched.as_mut(), &mut work);
    assert_eq!(out.invariants.left_behind + out.invariants.bad_completions + out.invariants.idled_with_work, 0);
    (out.records, work.stats().into_iter().map(|(_, s)| s).collect())
}

#[test]
fn sequential_read_prefetches_and_hits_the_page_cache() {
    // Think time longer than a request's service: read-ahead finishes before the next read().
    let mut s = spec(1, Pattern::Sequential, read_access(), 20_000);
    s.max_requests = Some(100);
    let (records, stats) = run(vec![s], 10_000, "fcfs");
    let st = stats[0];
    assert_eq!(st.accesses, 100);
    assert_eq!(st.sync_requests, 1, "only the first read() goes to the disk synchronously: {st:?}");
    assert!(st.cache_hits >= 98, "{st:?}");
    assert!(st.prefetch_requests >= 90, "{st:?}");
    let sync = records.iter().filter(|r| r.sync).count();
    let asynch = records.iter().filter(|r| !r.sync).count() as u64;
    assert_eq!(sync, 1);
    assert_eq!(asynch, st.prefetch_requests);
    // Once the window is full, each read() tops it up by one read's worth: one request per read.
    assert!(records.len() <= 101, "{} disk requests for 100 reads", records.len());
    // Every sector was read once, and read-ahead ran at most one window past the last read.
    let sectors: u64 = records.iter().map(|r| r.size_sectors as u64).sum();
    assert!((100 * 128..=100 * 128 + 256).contains(&sectors), "{sectors} sectors");
}

#[test]
fn completions_reach_their_process_whatever_its_pid_and_group() {
    // Two processes of one pid in two groups, a pid beyond the dense range, a sparse one: each
    // completion must reach the process that issued it, or that process would stop.
    let mut specs = Vec::new();
    for (pid, group) in [(1, 1), (1, 2), (70_000, 70_000), (9, 3)] {
        let mut s = spec(pid, Pattern::Random, Access::Mmap, 100);
        s.principal = Principal { pid, group };
        s.file_start_sector = specs.len() as u64 * 4_000_000;
        s.max_requests = Some(20);
        specs.push(s);
    }
    let (records, stats) = run(specs, 10_000, "fcfs");
    assert_eq!(stats.iter().map(|s| s.accesses).collect::<Vec<_>>(), vec![20; 4]);
    assert_eq!(records.len(), 80);
}

#[test]
fn sequential_read_with_short_think_waits_on_prefetch_not_sync_requests() {
    let specs = vec![spec(1, Pattern::Sequential, read_access(), 200), spec(2, Pattern::Sequential, read_access(), 200)];
    let (records, stats) = run(specs, 2_000, "aged-sptf");
    for st in &stats {
        assert!(st.accesses > 50, "{st:?}");
        assert_eq!(st.sync_requests, 1, "{st:?}");
        assert_eq!(st.accesses, 1 + st.cache_hits + st.prefetch_waits, "{st:?}");
    }
    assert!(records.iter().filter(|r| !r.sync).count() as u64 >= stats.iter().map(|s| s.accesses).sum::<u64>() / 2 - 2);
}

#[test]
fn random_and_alternate_reads_issue_no_prefetch() {
    for pattern in [Pattern::Random, Pattern::Alternate] {
        let mut s = spec(1, pattern, read_access(), 0);
        s.max_requests = Some(300);
        let (records, stats) = run(vec![s], 20_000, "fcfs");
        // The first read at offset 0 (alternate) continues the file's start, which FreeBSD's
        // heuristic counts as sequential: one prefetch of the next block, then nothing more.
        let first_at_zero = pattern == Pattern::Alternate;
        let prefetches: Vec<_> = records.iter().filter(|r| !r.sync).collect();
        assert_eq!(prefetches.len(), first_at_zero as usize, "{pattern:?}");
        assert_eq!(stats[0].prefetch_requests, first_at_zero as u64, "{pattern:?}: {:?}", stats[0]);
        // A random block read before is still cached (300 of 16384 blocks: a few repeats).
        assert_eq!(stats[0].sync_requests + stats[0].cache_hits, 300, "{:?}", stats[0]);
        assert!(stats[0].cache_hits < 10);
    }
}

const TWO_READERS: &str = r#"
[device]
preset = "ibm-deskstar-34gxp"
[[process]]
name = "seq"
count = 2
request_kib = 64
think_us = 200
ACCESS
[[process]]
name = "rand"
pattern = "random"
request_kib = 8
think = "uniform"
think_us = 3000
ACCESS
[run]
duration_s = 1
[[scheduler]]
name = "aged-sptf"
[[scheduler]]
name = "clook"
"#;

fn records_of(access: &str, seed: u64) -> Vec<Vec<RequestRecord>> {
    let scn = Scenario::parse(&TWO_READERS.replace("ACCESS", access), "t.toml").unwrap();
    scn.run(Some(seed)).unwrap().into_iter().map(|r| r.records).collect()
}

#[test]
fn mmap_is_the_default_and_unchanged() {
    let omitted = records_of("", 3);
    assert_eq!(omitted, records_of("access = \"mmap\"", 3));
    assert_eq!(omitted, records_of("access = \"mmap\"\nmax_transfer_kib = 64", 3), "no access is longer than the limit");
    for recs in &omitted {
        assert!(recs.iter().all(|r| r.sync));
        assert!(recs.len() > 50);
    }
}

#[test]
fn read_access_is_deterministic() {
    let a = records_of("access = \"read\"", 5);
    assert_eq!(a, records_of("access = \"read\"", 5));
    assert_ne!(a, records_of("access = \"read\"", 6));
    assert!(a[0].iter().any(|r| !r.sync));
}

#[test]
fn a_large_read_is_split_into_flagged_parts_issued_together() {
    let mut s = spec(1, Pattern::Sequential, Access::Mmap, 100);
    s.request_sectors = 512; // 256 KiB
    s.max_transfer_sectors = 128; // 64 KiB
    s.max_requests = Some(3);
    // The parts as the workload emits them.
    let mut w = Processes::new(vec![s.clone()], u64::MAX, 1);
    let mut out = Emit::default();
    w.start(&mut out);
    w.on_timer(out.timers[0].1, 0, &mut out);
    assert_eq!(out.arrivals.len(), 4);
    for (k, (at, r)) in out.arrivals.iter().enumerate() {
        assert_eq!(*at, 0);
        assert!(r.sync && r.flags & Request::SPLIT != 0);
        assert_eq!((r.start_sector, r.size_sectors), (s.file_start_sector + 128 * k as u64, 128));
    }
    let req = out.arrivals[0].1.into_request(0, 0);
    assert!(req.is_split());
    // The process goes on only when every part has completed.
    let (records, stats) = run(vec![s], 10_000, "fcfs");
    assert_eq!(records.len(), 12);
    assert_eq!(stats[0].split_requests, 12);
    for access in records.chunks(4) {
        assert!(access.iter().all(|r| r.issue_ns == access[0].issue_ns && r.size_sectors == 128));
    }
    for k in 1..3 {
        let done = records[4 * (k - 1)..4 * k].iter().map(|r| r.complete_ns).max().unwrap();
        assert_eq!(records[4 * k].issue_ns, done + 100_000);
    }
}

#[test]
fn a_split_read_through_the_page_cache_is_flagged_and_prefetch_is_not() {
    let mut s = spec(1, Pattern::Sequential, read_access(), 100);
    s.request_sectors = 512; // 256 KiB reads, 64 KiB transfers
    s.max_transfer_sectors = 128;
    s.max_requests = Some(1);
    let (records, stats) = run(vec![s], 10_000, "fcfs");
    assert_eq!(stats[0].split_requests, 4);
    assert_eq!(records.iter().filter(|r| r.sync).count(), 4);
    // read-ahead of 128 KiB after the read, in 64 KiB requests
    assert_eq!(records.iter().filter(|r| !r.sync).count(), 2);
}

#[test]
fn adversary_think_times_are_n_quick_then_one_long() {
    let scn = Scenario::parse(
        r#"
[[process]]
name = "adversary"
request_kib = 64
think = "adversary"
think_us = 100
adversary_quick = 2
adversary_wait_us = 5000
requests = 10
[[scheduler]]
name = "fcfs"
"#,
        "t.toml",
    )
    .unwrap();
    let recs = &scn.run(None).unwrap()[0].records;
    assert_eq!(recs.len(), 10);
    let thinks: Vec<u64> = recs.windows(2).map(|w| (w[1].issue_ns - w[0].complete_ns) / 1000).collect();
    assert_eq!(thinks, vec![100, 100, 5000, 100, 100, 5000, 100, 100, 5000]);
    let t = Think::Adversary { quick_ns: 1, quick: 0, wait_ns: 9 };
    let mut rng = iosched::workload::rng_stream(1, 1);
    assert!((0..5).all(|n| t.sample(n, &mut rng) == 9), "n = 0: every think is the long one");
}

fn parse_err(process_fields: &str) -> String {
    let text = format!("[[process]]\n{process_fields}\n");
    Scenario::parse(&text, "bad.toml").map(|_| ()).unwrap_err().to_string()
}

#[test]
fn new_fields_are_validated_with_field_and_value() {
    let cases = [
        ("access = \"buffered\"", "process[0].access"),
        ("readahead_kib = 64", "process[0].readahead_kib` = 64 is only used with access = \"read\""),
        ("access = \"read\"\nreadahead_kib = 6", "process[0].readahead_kib` = 6 must be a multiple"),
        ("access = \"read\"\nreadahead_kib = -4", "process[0].readahead_kib` must be in"),
        ("access = \"read\"\npage_cache_mib = 0.1", "process[0].page_cache_mib` = 0.1"),
        ("access = \"read\"\ncopy_us_per_kib = -1", "process[0].copy_us_per_kib` must be in"),
        ("access = \"read\"\nrequest_kib = 2", "process[0].request_kib` = 2 must be a multiple"),
        ("access = \"read\"\nop = \"write\"", "process[0].op` = `write`"),
        ("max_transfer_kib = 0.3", "process[0].max_transfer_kib"),
        ("max_transfer_kib = -64", "process[0].max_transfer_kib` must be a positive number, got -64"),
        ("think = \"adversary\"\nadversary_wait_us = 10", "process[0].adversary_quick` is required"),
        ("think = \"adversary\"\nadversary_quick = 2", "process[0].adversary_wait_us` is required"),
        ("think = \"adversary\"\nadversary_quick = 2\nadversary_wait_us = -1", "process[0].adversary_wait_us` must be in"),
        ("adversary_quick = 3", "process[0].adversary_quick` = 3 is only used with think = \"adversary\""),
        ("think = \"sometimes\"", "adversary"),
    ];
    for (fields, want) in cases {
        let e = parse_err(fields);
        assert!(e.contains(want) && e.starts_with("bad.toml: "), "{fields:?}: got {e:?}, want {want:?}");
    }
    assert!(Scenario::parse("[[process]]\naccess = \"read\"\nreadahead_kib = 0\nmax_transfer_kib = 128\n", "ok.toml").is_ok());
}

#[test]
fn a_chain_runs_its_instances_one_after_another_on_consecutive_files() {
    // Three one-request processes chained with a 2 ms gap, files of 64 KiB from 100 MiB: each
    // starts 2 ms after the previous one's completion, reads its own file, and exits.
    let toml = r#"
[device]
preset = "ibm-deskstar-34gxp"
[[process]]
name = "cat"
count = 3
chain = true
chain_gap_us = 2000
start_us = 500
requests = 1
request_kib = 64
file_mib = 0.0625
file_offset_mib = 100
[run]
duration_s = 1
[[scheduler]]
name = "fcfs"
"#;
    let run = Scenario::parse(toml, "chain.toml").unwrap().run(Some(1)).unwrap().remove(0);
    let mut r = run.records.clone();
    r.sort_by_key(|x| x.issue_ns);
    assert_eq!(r.len(), 3);
    assert_eq!(r[0].issue_ns, 500_000);
    for w in r.windows(2) {
        assert_eq!(w[1].issue_ns, w[0].complete_ns + 2_000_000, "next instance starts its gap after the exit");
        assert_eq!(w[1].start_sector, w[0].start_sector + 128, "consecutive 64 KiB files");
        assert_ne!(w[1].pid, w[0].pid);
    }
    assert_eq!(r[0].start_sector, 100 * 2048);
}

#[test]
fn a_chain_needs_a_request_count() {
    let toml = "[[process]]\ncount = 2\nchain = true\n[run]\nduration_s = 1\n";
    let e = Scenario::parse(toml, "c.toml").err().expect("rejected").to_string();
    assert!(e.contains("chain") && e.contains("requests"), "{e}");
}

#[test]
fn a_process_announces_its_group_weight_and_carries_its_io_attributes() {
    use iosched::request::{IoPrio, PrioClass};
    use iosched::sched::ProcessEvent;

    let mut s = spec(3, Pattern::Sequential, Access::Mmap, 0);
    s.principal.group = 7;
    s.group_weight = Some(300);
    s.prio = IoPrio { class: PrioClass::Idle, level: 2 };
    s.meta = true;
    s.sync = false;
    let mut w = Processes::new(vec![s], 1_000_000_000, 1);
    let mut out = Emit::default();
    w.start(&mut out);
    let (at, token) = out.timers[0];
    let mut out = Emit::default();
    w.on_timer(token, at, &mut out);
    assert_eq!(out.process_events[0], ProcessEvent::GroupWeight { group: 7, weight: 300 });
    assert!(matches!(out.process_events[1], ProcessEvent::Started { .. }));
    let nr = out.arrivals[0].1;
    assert_eq!(nr.prio, IoPrio { class: PrioClass::Idle, level: 2 });
    assert!(nr.flags & iosched::request::Request::META != 0 && !nr.sync);
}

#[test]
fn a_chain_stopped_by_the_runs_end_starts_no_successor() {
    // The run ends (50 ms) while the chain's first process is still reading: the next ones must
    // not start (and exit) while the queue drains. A scheduler that records process events sees.
    use iosched::device::ArmPath;
    use iosched::sched::{Context, Decision, ProcessEvent, Scheduler};
    #[derive(Default)]
    struct Recorder {
        queue: std::collections::VecDeque<Request>,
        started: Vec<u32>,
    }
    impl Scheduler for Recorder {
        fn name(&self) -> &str {
            "recorder"
        }
        fn add(&mut self, req: Request, _cx: &Context) {
            self.queue.push_back(req);
        }
        fn next(&mut self, _cx: &Context) -> Decision {
            self.queue.pop_front().map_or(Decision::Empty, |r| Decision::Dispatch(r, ArmPath::Direct))
        }
        fn queued(&self) -> usize {
            self.queue.len()
        }
        fn process_event(&mut self, ev: ProcessEvent, _cx: &Context) {
            if let ProcessEvent::Started { principal, .. } = ev {
                self.started.push(principal.pid);
            }
        }
    }
    let mut specs: Vec<ProcessSpec> = (1..=3).map(|pid| spec(pid, Pattern::Sequential, Access::Mmap, 100)).collect();
    for (k, s) in specs.iter_mut().enumerate() {
        s.max_requests = Some(1000);
        s.after = k.checked_sub(1);
    }
    let mut w = Processes::new(specs, 50_000_000, 1);
    let mut disk = RotationalDisk::new(preset("ibm-deskstar-34gxp").unwrap()).unwrap();
    let mut rec = Recorder::default();
    simulate(&mut disk, &mut rec, &mut w);
    assert_eq!(rec.started, vec![1], "only the first process of the chain started");
}

// fio's job controls on a process (issue 23, fio job files): a read/write mix, a rate cap, a
// runtime of its own, thinking after every N-th access.

fn records_of_scenario(toml: &str) -> Vec<RequestRecord> {
    let mut r = Scenario::parse(toml, "fio.toml").unwrap().run(Some(1)).unwrap().remove(0).records;
    r.sort_by_key(|x| (x.issue_ns, x.id));
    r
}

#[test]
fn a_mixed_process_reads_with_its_read_fraction_and_keeps_a_position_per_direction() {
    let random = records_of_scenario(
        "[[process]]\nname = \"mix\"\npattern = \"random\"\nop = \"mixed\"\nread_fraction = 0.7\nrequest_kib = 4\n\
         requests = 4000\n[run]\nduration_s = 1000\n",
    );
    let reads = random.iter().filter(|r| r.op == Op::Read).count() as f64 / random.len() as f64;
    // 4000 Bernoulli(0.7) draws: standard deviation 0.0072.
    assert!((reads - 0.7).abs() < 0.03, "read fraction {reads}");
    let seq = records_of_scenario(
        "[[process]]\nname = \"mix\"\nop = \"mixed\"\nrequest_kib = 4\nrequests = 400\nfile_offset_mib = 10\n\
         [run]\nduration_s = 1000\n",
    );
    for op in [Op::Read, Op::Write] {
        let starts: Vec<u64> = seq.iter().filter(|r| r.op == op).map(|r| r.start_sector).collect();
        assert!(starts.len() > 150, "{op:?}: {} of 400 (default fraction 0.5)", starts.len());
        assert_eq!(starts[0], 10 * 2048, "{op:?} starts at the file's start");
        assert!(starts.windows(2).all(|w| w[1] == w[0] + 8), "{op:?}: sequential within its direction");
    }
}

#[test]
fn a_rate_cap_paces_issues_from_the_first_access() {
    // 50 accesses/s of 4 KiB (each served in ~10 ms): access n goes at n x 20 ms.
    let r = records_of_scenario(
        "[[process]]\nname = \"paced\"\npattern = \"random\"\nrequest_kib = 4\nrate_iops = 50\nstart_us = 1000\n\
         [run]\nduration_s = 1\n",
    );
    assert_eq!(r.len(), 50, "issues at 1 ms + k x 20 ms before 1 s");
    for (k, x) in r.iter().enumerate() {
        assert_eq!(x.issue_ns, 1_000_000 + k as u64 * 20_000_000, "access {k}");
    }
    // Several slots in flight: the cap still holds (pacing, not a burst of iodepth).
    let deep = records_of_scenario(
        "[[process]]\nname = \"paced\"\npattern = \"random\"\nrequest_kib = 4\nrate_iops = 50\naccess = \"direct\"\n\
         iodepth = 8\n[run]\nduration_s = 1\n",
    );
    assert_eq!(deep.len(), 50);
    assert!(deep.iter().enumerate().all(|(k, x)| x.issue_ns >= k as u64 * 20_000_000));
}

#[test]
fn a_runtime_ends_a_process_and_starts_its_successor() {
    let r = records_of_scenario(
        "[[process]]\nname = \"first\"\nrequest_kib = 64\nruntime_s = 0.2\nstart_us = 5000\n\
         [[process]]\nname = \"second\"\nrequest_kib = 64\nafter = \"first\"\nstart_us = 1000\n\
         [run]\nduration_s = 0.5\n",
    );
    let first: Vec<&RequestRecord> = r.iter().filter(|x| x.pid == 1).collect();
    let second: Vec<&RequestRecord> = r.iter().filter(|x| x.pid == 2).collect();
    let last_first = first.last().unwrap();
    assert!(last_first.issue_ns < 205_000_000, "nothing issued 200 ms after its first access (5 ms)");
    assert!(first.len() > 50, "{} requests", first.len());
    // The second starts 1 ms after the first exits (at its last completion).
    assert_eq!(second[0].issue_ns, last_first.complete_ns + 1_000_000);
    assert!(second.last().unwrap().issue_ns < 500_000_000);
}

#[test]
fn every_process_waiting_for_an_exit_starts_its_gap_then() {
    // Two wait for "a", one for "b" (an exit finds its followers by a search: each must start).
    let r = records_of_scenario(
        "[[process]]\nname = \"a\"\nrequest_kib = 64\nrequests = 3\n\
         [[process]]\nname = \"b\"\nrequest_kib = 64\nrequests = 2\nafter = \"a\"\nstart_us = 1000\n\
         [[process]]\nname = \"c\"\nrequest_kib = 64\nrequests = 2\nafter = \"a\"\nstart_us = 3000\n\
         [[process]]\nname = \"d\"\nrequest_kib = 64\nrequests = 2\nafter = \"b\"\nstart_us = 500\n\
         [run]\nduration_s = 1\n",
    );
    let of = |pid: u32| -> Vec<&RequestRecord> { r.iter().filter(|x| x.pid == pid).collect() };
    let (a, b, c, d) = (of(1), of(2), of(3), of(4));
    assert_eq!((a.len(), b.len(), c.len(), d.len()), (3, 2, 2, 2));
    let a_exit = a.iter().map(|x| x.complete_ns).max().unwrap();
    let b_exit = b.iter().map(|x| x.complete_ns).max().unwrap();
    assert_eq!(b[0].issue_ns, a_exit + 1_000_000);
    assert_eq!(c[0].issue_ns, a_exit + 3_000_000);
    assert_eq!(d[0].issue_ns, b_exit + 500_000);
}

#[test]
fn think_every_n_thinks_only_after_every_nth_access() {
    let r = records_of_scenario(
        "[[process]]\nname = \"bursty\"\nrequest_kib = 64\nthink_us = 10000\nthink_every = 4\nrequests = 12\n\
         [run]\nduration_s = 10\n",
    );
    let gaps: Vec<u64> = r.windows(2).map(|w| (w[1].issue_ns - w[0].complete_ns) / 1000).collect();
    assert_eq!(gaps, vec![0, 0, 0, 10000, 0, 0, 0, 10000, 0, 0, 0]);
}

#[test]
fn the_fio_controls_are_validated_with_field_and_value() {
    let cases = [
        ("op = \"both\"", "process[0].op`: expected \"read\", \"write\", \"mixed\" or \"discard\", got `both`"),
        ("read_fraction = 0.5", "process[0].read_fraction` = 0.5 is only used with op = \"mixed\""),
        ("op = \"mixed\"\nread_fraction = 1.5", "process[0].read_fraction` must be in"),
        ("op = \"mixed\"\naccess = \"read\"", "process[0].op` = `mixed`"),
        ("rate_iops = 0", "process[0].rate_iops` must be in"),
        ("runtime_s = -1", "process[0].runtime_s` must be in"),
        ("think_every = 0", "process[0].think_every` must be in"),
    ];
    for (fields, want) in cases {
        let e = parse_err(fields);
        assert!(e.contains(want) && e.starts_with("bad.toml: "), "{fields:?}: got {e:?}, want {want:?}");
    }
    // `after` accepts a predecessor that ends by its runtime.
    let ok = "[[process]]\nname = \"a\"\nruntime_s = 1\n[[process]]\nname = \"b\"\nafter = \"a\"\n";
    assert!(Scenario::parse(ok, "ok.toml").is_ok());
    let bad = "[[process]]\nname = \"a\"\n[[process]]\nname = \"b\"\nafter = \"a\"\n";
    assert!(Scenario::parse(bad, "bad.toml").unwrap_err().to_string().contains("`requests` or `runtime_s`"));
}
