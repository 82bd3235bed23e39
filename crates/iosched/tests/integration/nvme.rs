//! NVMe queue pairs and blk-mq through scenarios: the schedulers' CPU cost caps IOPS, tags per
//! hardware queue cap the commands in flight, weighted round robin favours an urgent queue,
//! determinism, errors naming field and value, and unchanged runs without the new settings.

use iosched::scenario::Scenario;

fn err(text: &str) -> String {
    Scenario::parse(text, "bad.toml").err().unwrap_or_else(|| panic!("should be rejected: {text}")).to_string()
}

/// A small NVMe drive (the 970 EVO Plus with a sample of blocks), full.
const NVME: &str = "[device]\npreset = \"samsung-970-evo-plus-1tb\"\n[device.flash]\nblocks_per_plane = 64\nprecondition = \"full\"\n";

/// `count` processes of 4 KiB random reads with `iodepth` each, `requests` each.
fn readers(count: u32, iodepth: u32, requests: u32) -> String {
    format!(
        "[[process]]\nname = \"r\"\ncount = {count}\npattern = \"random\"\naccess = \"direct\"\niodepth = {iodepth}\nrequest_kib = 4\nfile_mib = 64\nthink_us = 0\nrequests = {requests}\n[run]\nduration_s = 10\n"
    )
}

fn inv(i: &iosched::metrics::InvariantReport) -> u64 {
    i.idled_with_work + i.left_behind + i.bad_completions + i.bios_unaccounted
}

fn run(text: &str) -> Vec<iosched::scenario::RunResult> {
    Scenario::parse(text, "nvme.toml").unwrap_or_else(|e| panic!("{e}\n{text}")).run(None).unwrap()
}

#[test]
fn cpu_cost_caps_iops_at_cpus_over_cost() {
    // Property: IOPS <= cpus / cost (per-CPU cost) and <= 1 / cost under a device lock, over
    // several shapes; and the cap binds when the drive is faster than the CPUs.
    for (cpus, cost_us, sched) in [(1, 5.0, "kyber"), (2, 5.0, "noop"), (4, 10.0, "noop"), (4, 4.0, "mq-deadline"), (2, 3.0, "bfq")] {
        let text = format!(
            "{NVME}[device.nvme]\nqueues = {cpus}\n[block]\ncpus = {cpus}\nsched_cost_us = {cost_us}\n{}[[scheduler]]\nname = \"{sched}\"\n",
            readers(8, 16, 1000)
        );
        let s = &run(&text)[0].summary;
        let serialized = matches!(sched, "bfq" | "mq-deadline");
        let ceiling = if serialized { 1e6 / cost_us } else { cpus as f64 * 1e6 / cost_us };
        assert!(s.iops <= ceiling * 1.001, "{sched} cpus {cpus} cost {cost_us}: {} IOPS over {ceiling}", s.iops);
        assert!(s.iops >= ceiling * 0.8, "{sched} cpus {cpus} cost {cost_us}: {} IOPS, the CPU should bind near {ceiling}", s.iops);
        let h = s.host_queues.as_ref().expect("blk-mq report");
        assert_eq!(h.sched_serialized, serialized);
        assert!((h.sched_cpu_ms - s.requests as f64 * cost_us / 1e3).abs() < 1e-6);
        assert_eq!(inv(&s.invariants), 0, "{:?}", s.invariants);
    }
}

#[test]
fn bfq_documented_cost_caps_a_fast_drive_below_none() {
    let text = format!("{NVME}[block]\ncpus = 4\n{}[[scheduler]]\nname = \"noop\"\n[[scheduler]]\nname = \"bfq\"\n", readers(8, 32, 2000));
    let runs = run(&text);
    let (none, bfq) = (&runs[0].summary, &runs[1].summary);
    assert!(bfq.iops <= 1e6 / 1.9 * 1.001, "bfq {} IOPS above 1 / 1.9 us", bfq.iops);
    assert!(none.iops > bfq.iops * 1.02, "none {} vs bfq {}", none.iops, bfq.iops);
    assert_eq!(bfq.host_queues.as_ref().unwrap().sched_cost_us, 1.9);
}

/// Most requests in flight at once per hardware queue over a run's records (dispatch to
/// completion: a driver tag is held that long).
fn max_in_flight(records: &[iosched::metrics::RequestRecord], select: impl Fn(u32) -> bool) -> usize {
    let mut ev: Vec<(u64, i32)> = Vec::new();
    for r in records.iter().filter(|r| select(r.pid)) {
        ev.push((r.dispatch_ns, 1));
        ev.push((r.complete_ns, -1));
    }
    ev.sort(); // completions (-1) before dispatches at one instant
    let (mut cur, mut max) = (0i32, 0i32);
    for (_, d) in ev {
        cur += d;
        max = max.max(cur);
    }
    max as usize
}

#[test]
fn tags_per_hardware_queue_limit_requests_in_flight() {
    // 2 CPUs, 2 queue pairs of depth 3: pids 1 and 3 on CPU 1 (queue 1), 2 and 4 on CPU 0.
    let text = format!(
        "{NVME}[device.nvme]\nqueues = 2\nqueue_depth = 3\n[block]\ncpus = 2\n{}[[scheduler]]\nname = \"noop\"\n",
        readers(4, 8, 300)
    );
    let r = &run(&text)[0];
    let odd = max_in_flight(&r.records, |pid| pid % 2 == 1);
    let even = max_in_flight(&r.records, |pid| pid % 2 == 0);
    assert_eq!((odd, even), (3, 3), "each hardware queue holds at most its 3 tags, and fills them");
    assert_eq!(max_in_flight(&r.records, |_| true), 6);
    assert_eq!(inv(&r.summary.invariants), 0);
    // One CPU: both processes' requests share one queue's 3 tags.
    let text = format!("{NVME}[device.nvme]\nqueue_depth = 3\n[block]\ncpus = 1\n{}[[scheduler]]\nname = \"noop\"\n", readers(4, 8, 300));
    assert_eq!(max_in_flight(&run(&text)[0].records, |_| true), 3);
}

#[test]
fn weighted_round_robin_serves_the_urgent_queue_first() {
    // The controller executes 4 commands at once; one real-time reader's commands go to the
    // urgent SQ, seven best-effort readers' to medium SQs.
    let text = |arb: &str| {
        format!(
            "{NVME}[device.nvme]\nqueues = 2\narbitration = \"{arb}\"\nsq_select = \"{}\"\nsq_classes = [\"urgent\", \"medium\"]\ncontroller_commands = 4\n\
             [block]\ncpus = 2\n{}[[process]]\nname = \"rt\"\npattern = \"random\"\naccess = \"direct\"\niodepth = 8\nrequest_kib = 4\nfile_mib = 64\nthink_us = 0\nrequests = 500\nprio_class = \"rt\"\n\
             [[scheduler]]\nname = \"noop\"\n",
            if arb == "wrr" { "ioprio" } else { "cpu" },
            readers(7, 8, 500)
        )
    };
    let wrr = &run(&text("wrr"))[0].summary;
    let rr = &run(&text("rr"))[0].summary;
    let mean = |s: &iosched::metrics::summary::RunSummary, name: &str| {
        let ps: Vec<_> = s.processes.iter().filter(|p| p.name.starts_with(name)).collect();
        ps.iter().map(|p| p.response_ms.mean).sum::<f64>() / ps.len() as f64
    };
    assert!(mean(wrr, "rt") < 0.5 * mean(wrr, "r"), "urgent {} vs best-effort {}", mean(wrr, "rt"), mean(wrr, "r"));
    assert!(mean(wrr, "rt") < 0.5 * mean(rr, "rt"), "urgent under WRR {} vs round robin {}", mean(wrr, "rt"), mean(rr, "rt"));
}

#[test]
fn nvme_runs_are_deterministic() {
    let text = format!(
        "{NVME}[device.nvme]\nqueues = 3\narbitration = \"wrr\"\nweights = [4, 2, 1]\nburst = 2\nsq_classes = [\"high\", \"medium\", \"low\"]\ncontroller_commands = 8\n[block]\ncpus = 3\n{}[[scheduler]]\nname = \"mq-deadline\"\n[[scheduler]]\nname = \"kyber\"\n",
        readers(6, 4, 300)
    );
    let a: Vec<String> = run(&text).iter().map(|r| serde_json::to_string(&r.summary).unwrap()).collect();
    let b: Vec<String> = run(&text).iter().map(|r| serde_json::to_string(&r.summary).unwrap()).collect();
    assert_eq!(a, b);
}

#[test]
fn without_nvme_settings_there_is_no_host_queues_report() {
    // An NVMe preset without [device.nvme] or block.cpus runs on its one drive queue as before
    // (byte-identical runs: experiments/flash/compare_unchanged.sh).
    let plain = format!(
        "{}{}[[scheduler]]\nname = \"noop\"\n",
        NVME.replacen("[device.flash]", "queue_depth = 32\n[device.flash]", 1),
        readers(2, 16, 500)
    );
    let s = &run(&plain)[0].summary;
    assert!(s.host_queues.is_none());
    assert!(!serde_json::to_string(s).unwrap().contains("host_queues"));
    assert_eq!(s.requests, 1000);
}

#[test]
fn pcie_generation_and_lanes_set_the_link() {
    let text = |gen: u32| {
        format!(
            "{NVME}[device.nvme]\npcie_gen = {gen}\npcie_lanes = 1\n[block]\ncpus = 1\n[[process]]\nname = \"s\"\npattern = \"sequential\"\naccess = \"direct\"\niodepth = 16\nrequest_kib = 128\nfile_mib = 512\nthink_us = 0\nrequests = 400\n[run]\nduration_s = 10\n[[scheduler]]\nname = \"noop\"\n"
        )
    };
    let g1 = run(&text(1))[0].summary.throughput_mb_s;
    let g3 = run(&text(3))[0].summary.throughput_mb_s;
    // Gen 1 x1: 2.5 GT/s x 8/10 / 8 x 0.908 = 227 MB/s; the link binds.
    assert!(g1 <= 227.0 * 1.01 && g1 > 200.0, "gen 1 x1: {g1} MB/s");
    assert!(g3 > 3.0 * g1, "gen 3 x1 {g3} vs gen 1 x1 {g1}");
}

#[test]
fn bad_nvme_and_blk_mq_fields_are_named() {
    let nvme = "[device]\npreset = \"samsung-970-evo-plus-1tb\"\n";
    let sata = "[device]\npreset = \"samsung-870-evo-1tb\"\n";
    let cases: &[(String, &[&str])] = &[
        (format!("{nvme}[device.nvme]\narbitration = \"fifo\"\n"), &["device.nvme.arbitration", "fifo", "wrr"]),
        (format!("{nvme}[device.nvme]\nburst = 3\n"), &["device.nvme.burst", "got 3"]),
        (format!("{nvme}[device.nvme]\narbitration = \"wrr\"\nweights = [1, 2]\n"), &["device.nvme.weights", "got 2"]),
        (format!("{nvme}[device.nvme]\narbitration = \"wrr\"\nweights = [4, 0, 1]\n"), &["device.nvme.weights", "got 0"]),
        (format!("{nvme}[device.nvme]\nweights = [4, 2, 1]\n"), &["device.nvme.weights", "wrr"]),
        (format!("{nvme}[device.nvme]\nqueues = 2\nsq_classes = [\"high\", \"hi\"]\n"), &["device.nvme.sq_classes[1]", "hi"]),
        (format!("{nvme}[device.nvme]\nqueues = 2\nsq_classes = [\"high\"]\n"), &["device.nvme.sq_classes", "got 1"]),
        (format!("{nvme}[device.nvme]\nsq_select = \"ioprio\"\n"), &["device.nvme.sq_select", "wrr"]),
        (format!("{nvme}[device.nvme]\nsq_select = \"pid\"\n"), &["device.nvme.sq_select", "pid"]),
        (format!("{nvme}[device.nvme]\nqueues = 0\n"), &["device.nvme.queues", "got 0"]),
        (format!("{nvme}[device.nvme]\nqueue_depth = 70000\n"), &["device.nvme.queue_depth", "70000"]),
        (format!("{nvme}[device.nvme]\npcie_gen = 7\npcie_lanes = 4\n"), &["device.nvme.pcie_gen", "got 7"]),
        (format!("{nvme}[device.nvme]\npcie_gen = 3\npcie_lanes = 3\n"), &["device.nvme.pcie_lanes", "got 3"]),
        (format!("{nvme}[device.nvme]\npcie_gen = 3\n"), &["device.nvme.pcie_lanes"]),
        (format!("{nvme}[device.nvme]\nqueus = 3\n"), &["queus"]),
        (format!("{nvme}queue_depth = 32\n[block]\ncpus = 2\n"), &["device.queue_depth", "device.nvme.queue_depth"]),
        (format!("{nvme}[device.nvme]\nqueues = 2\n[block]\ncpus = 4\nnr_hw_queues = 3\n"), &["block.nr_hw_queues", "got 3"]),
        (format!("{sata}[device.nvme]\nqueues = 2\n"), &["device.nvme", "SATA"]),
        ("[device]\npreset = \"wd-ultrastar-hc310\"\n[device.nvme]\nqueues = 2\n".to_string(), &["device.nvme", "rotational"]),
        (format!("{sata}[block]\ncpus = 2\nnr_hw_queues = 2\n"), &["block.nr_hw_queues", "got 2"]),
        (format!("{sata}[block]\ncpus = 0\n"), &["block.cpus", "got 0"]),
        (format!("{sata}[block]\nsched_cost_us = -1\n"), &["block.sched_cost_us", "-1"]),
        (format!("{sata}[block]\nsched_cost_us = 0.0001\n"), &["block.sched_cost_us", "0.0001"]),
        (format!("{nvme}[device.nvme]\nqueues = 4\n[block]\ncpus = 2\nnr_hw_queues = 4\n"), &["block.nr_hw_queues", "block.cpus"]),
        (
            format!("{nvme}[device.nvme]\nqueues = 2\narbitration = \"wrr\"\nsq_select = \"ioprio\"\nsq_classes = [\"high\", \"low\"]\n[block]\nnr_hw_queues = 1\n"),
            &["block.nr_hw_queues", "ioprio"],
        ),
        (format!("{nvme}[device.nvme]\ntlp_efficiency = 0.9\n"), &["device.nvme.tlp_efficiency", "pcie_gen"]),
        (
            "[array]\nlevel = \"raid0\"\nmembers = 2\nchunk_kib = 64\n[device]\npreset = \"samsung-970-evo-plus-1tb\"\n[device.nvme]\nqueues = 2\n".to_string(),
            &["device.nvme", "[array]"],
        ),
    ];
    for (text, needles) in cases {
        let e = err(&format!("{text}[workload]\nkind = \"closed-queue\"\nrequests = 10\n"));
        for n in *needles {
            assert!(e.contains(n), "error for\n{text}\nshould mention `{n}`: {e}");
        }
    }
}

#[test]
fn sata_with_blk_mq_has_one_hardware_queue_of_its_ncq_depth() {
    let text = format!(
        "[device]\npreset = \"samsung-870-evo-1tb\"\nqueue_depth = 32\n[device.flash]\nblocks_per_plane = 64\nprecondition = \"full\"\n[block]\ncpus = 4\n{}[[scheduler]]\nname = \"mq-deadline\"\n",
        readers(4, 16, 500)
    );
    let r = &run(&text)[0];
    let h = r.summary.host_queues.as_ref().unwrap();
    assert_eq!((h.nr_hw_queues, h.tags_per_hw_queue, h.arbitration.as_deref()), (1, 32, None));
    assert!(max_in_flight(&r.records, |_| true) <= 32);
    assert_eq!(inv(&r.summary.invariants), 0);
}

/// `none` behind blk-mq on SATA (one hardware queue of 32 tags, 4 CPUs, a pool of 64 requests):
/// requests that find no tag wait in their CPUs' software queues and on the dispatch list
/// (blk-mq's own path, no elevator); never more than 32 at the drive, every invariant holds, and
/// two runs give the same records.
#[test]
fn none_on_sata_waits_in_software_queues_and_is_deterministic() {
    let text = format!(
        "[device]\npreset = \"samsung-870-evo-1tb\"\nqueue_depth = 32\n[device.flash]\nblocks_per_plane = 64\nprecondition = \"full\"\n\
         [block]\ncpus = 4\ntags = \"blk-mq\"\nnr_requests = 64\n{}[[scheduler]]\nname = \"none\"\n",
        readers(16, 8, 400)
    );
    let r = &run(&text)[0];
    assert_eq!(r.records.iter().map(|x| x.bios).sum::<u32>(), 6400);
    assert_eq!(inv(&r.summary.invariants), 0, "{:?}", r.summary.invariants);
    assert!(max_in_flight(&r.records, |_| true) <= 32);
    let waited = r.records.iter().filter(|x| x.dispatch_ns > x.insert_ns).count();
    assert!(waited > 1000, "requests waited for a tag: {waited}");
    // Not one FIFO: a flush sends CPU 0's waiting requests before CPU 1's, whatever their
    // arrival (request ids are given in arrival order).
    let mut by_dispatch: Vec<(u64, u64)> = r.records.iter().map(|x| (x.dispatch_ns, x.id)).collect();
    by_dispatch.sort_unstable();
    let overtaken = by_dispatch.windows(2).filter(|w| w[0].0 < w[1].0 && w[0].1 > w[1].1).count();
    assert!(overtaken > 100, "requests leave in CPU order, not arrival order: {overtaken}");
    assert_eq!(run(&text)[0].records, r.records, "deterministic");
}

/// A flooder on hardware queue 1 (pid 1: CPU 1) and a lone reader on queue 0 (pid 2: CPU 0),
/// queue pairs of `depth`: the lone reader's mean response (ms).
fn lone_reader_beside_a_flooder(sched: &str, depth: u32) -> f64 {
    let text = format!(
        "{NVME}[device.nvme]\nqueues = 2\nqueue_depth = {depth}\n[block]\ncpus = 2\n\
[[process]]\nname = \"flood\"\npattern = \"random\"\naccess = \"direct\"\niodepth = 64\nrequest_kib = 4\nfile_mib = 64\nthink_us = 0\nrequests = 4000\n\
[[process]]\nname = \"lone\"\npattern = \"random\"\naccess = \"direct\"\niodepth = 1\nrequest_kib = 4\nfile_mib = 64\nthink_us = 0\nrequests = 300\n[run]\nduration_s = 10\n[[scheduler]]\nname = \"{sched}\"\n"
    );
    let r = &run(&text)[0];
    assert_eq!(inv(&r.summary.invariants), 0, "{sched} depth {depth}: {:?}", r.summary.invariants);
    r.summary.processes.iter().find(|p| p.name == "lone").unwrap().response_ms.mean
}

#[test]
fn a_full_hardware_queue_holds_only_its_own_requests_under_none_and_kyber() {
    // Linux keeps none's and kyber's requests per hardware queue: the flooder filling queue 1
    // does not hold up the lone reader on queue 0, which sees about what it sees with room for
    // everyone (depth 1023). mq-deadline's one list per device does (blk-mq stops dispatching
    // when a request finds no driver tag).
    for sched in ["noop", "kyber"] {
        let (full, roomy) = (lone_reader_beside_a_flooder(sched, 2), lone_reader_beside_a_flooder(sched, 1023));
        assert!(full < 1.5 * roomy, "{sched}: {full} ms with queues of 2, {roomy} ms with 1023");
    }
    let (full, roomy) = (lone_reader_beside_a_flooder("mq-deadline", 2), lone_reader_beside_a_flooder("mq-deadline", 1023));
    assert!(full > 2.0 * roomy, "mq-deadline: {full} ms with queues of 2, {roomy} ms with 1023");
}

/// blk-mq on a disk with NCQ: a request's dispatch is the scheduler's (as on NVMe), and the drive
/// starts it no earlier than its hand-over, when the scheduler's CPU work under the lock ends
/// (review of issue 28, findings 7 and 8): 50 us per request under mq-deadline.
#[test]
fn on_a_disk_behind_blk_mq_the_dispatch_is_the_schedulers_and_the_drive_waits_for_the_hand_over() {
    let text = "[device]\npreset = \"maxtor-stm332061\"\nqueue_depth = 32\n[block]\ncpus = 2\nsched_cost_us = 50\n\
                [[process]]\nname = \"r\"\ncount = 4\npattern = \"random\"\naccess = \"direct\"\niodepth = 4\nrequest_kib = 4\n\
                file_mib = 4096\nthink_us = 0\nrequests = 300\n[run]\nduration_s = 60\n[[scheduler]]\nname = \"mq-deadline\"\n";
    let r = &run(text)[0];
    assert_eq!(r.records.len(), 1200);
    assert_eq!(inv(&r.summary.invariants), 0);
    assert!(r.records.iter().all(|x| x.start_ns >= x.dispatch_ns + 50_000), "no command starts before its CPU work is done");
    // Under one lock the hand-overs are at least 50 us apart; dispatches may come at one instant.
    let mut dispatches: Vec<u64> = r.records.iter().map(|x| x.dispatch_ns).collect();
    dispatches.sort_unstable();
    assert!(dispatches.windows(2).any(|w| w[1] - w[0] < 50_000), "dispatch times are the scheduler's, not the hand-overs");
    assert_eq!(run(text)[0].records, r.records, "deterministic");
}

/// With every tag taken blk-mq still asks the elevator on NVMe (`__blk_mq_do_dispatch_sched`
/// takes the request first, then its driver tag; NVMe has no dispatch budget): one more kyber
/// request than the queue's tags leaves kyber, holding a READ token, and waits on the dispatch
/// list. On SATA (SCSI/ATA take a budget, the device's queue depth, before the elevator is
/// asked) kyber keeps it. One hardware queue of 2 tags, 8 readers of 4 outstanding each.
#[test]
fn with_every_tag_taken_the_elevator_gives_one_more_request_on_nvme_not_on_sata() {
    let readers = "[block]\ncpus = 2\ntags = \"blk-mq\"\nnr_requests = 64\n\
                   [[process]]\nname = \"r\"\ncount = 8\npattern = \"random\"\naccess = \"direct\"\niodepth = 4\nrequest_kib = 4\n\
                   file_mib = 64\nthink_us = 0\nrequests = 200\n[run]\nduration_s = 10\n[[scheduler]]\nname = \"kyber\"\n";
    let nvme = format!(
        "[device]\npreset = \"samsung-970-evo-plus-1tb\"\n[device.nvme]\nqueues = 1\nqueue_depth = 2\n\
         [device.flash]\nprecondition = \"none\"\n{readers}"
    );
    let r = &run(&nvme)[0];
    assert_eq!(inv(&r.summary.invariants), 0);
    assert_eq!(r.summary.scheduler_counters["read_max_in_flight"], 3, "NVMe: 2 at the drive + 1 on the dispatch list");
    let sata = format!("[device]\npreset = \"samsung-870-evo-1tb\"\nqueue_depth = 2\n[device.flash]\nprecondition = \"none\"\n{readers}");
    let r = &run(&sata)[0];
    assert_eq!(inv(&r.summary.invariants), 0);
    assert_eq!(r.summary.scheduler_counters["read_max_in_flight"], 2, "SATA: the budget stops blk-mq before the elevator");
}
