//! BFQ end to end on the engine: weights 1:2 and 1:1:3 between sequential readers are honoured
//! whatever the budgets, cgroup weights likewise, every request comes back, and runs are
//! deterministic. (The paper's benchmark suite is `iosched reproduce valente2014`.)

use iosched::scenario::Scenario;

/// Sequential 128 KiB readers of neighbouring files (same zone), with these process weights
/// and (group, group weight) pairs.
fn readers(scheduler: &str, tunables: &str, procs: &[(u32, Option<(u32, u32)>)], seconds: u32) -> String {
    let mut s = format!("[device]\npreset = \"maxtor-stm332061\"\n[block]\n[run]\nduration_s = {seconds}\nseed = 1\n");
    for (i, (w, g)) in procs.iter().enumerate() {
        s += &format!(
            "[[process]]\nname = \"r{i}\"\npattern = \"sequential\"\nrequest_kib = 128\nfile_mib = 4000\nfile_offset_mib = {}\nweight = {w}\n",
            i * 4000
        );
        if let Some((group, gw)) = g {
            s += &format!("group = {group}\ngroup_weight = {gw}\n");
        }
    }
    s += &format!("[[scheduler]]\nname = \"{scheduler}\"\n{tunables}\n");
    s
}

fn shares(text: &str) -> Vec<f64> {
    let run = Scenario::parse(text, "t.toml").unwrap().run(Some(1)).unwrap().pop().unwrap();
    let inv = run.summary.invariants;
    assert_eq!((inv.idled_with_work, inv.left_behind, inv.bad_completions, inv.bios_unaccounted), (0, 0, 0, 0), "{inv:?}");
    let bytes: Vec<f64> = run.summary.processes.iter().map(|p| p.bytes as f64).collect();
    let total: f64 = bytes.iter().sum();
    bytes.iter().map(|b| b / total).collect()
}

fn assert_shares(got: &[f64], want: &[f64], what: &str) {
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 0.04, "{what}: shares {got:.3?}, want {want:.3?}");
    }
}

#[test]
fn weights_one_to_two_and_one_one_three_whatever_the_budgets() {
    for sched in ["bfq", "bfq-plus", "bfq-original"] {
        for budget in ["", "max_budget = 2048", "max_budget = 16384"] {
            // low_latency off: weight raising of the new readers would blur the first seconds.
            let t = format!("low_latency = 0\n{budget}");
            let got = shares(&readers(sched, &t, &[(1, None), (2, None)], 20));
            assert_shares(&got, &[1.0 / 3.0, 2.0 / 3.0], &format!("{sched} 1:2 {budget}"));
            let got = shares(&readers(sched, &t, &[(1, None), (1, None), (3, None)], 20));
            assert_shares(&got, &[0.2, 0.2, 0.6], &format!("{sched} 1:1:3 {budget}"));
        }
    }
}

#[test]
fn cgroup_weights_are_honoured_above_the_processes() {
    // Group 1 (weight 100): one reader; group 2 (weight 200): two readers. Groups share 1:2,
    // the two readers of group 2 share their group's part equally.
    for sched in ["bfq", "bfq-plus"] {
        let procs = [(1, Some((1, 100))), (1, Some((2, 200))), (1, Some((2, 200)))];
        let got = shares(&readers(sched, "low_latency = 0", &procs, 20));
        assert_shares(&got, &[1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0], &format!("{sched} groups 1:2, 1 + 2 readers"));
        let procs = [(1, Some((1, 100))), (1, Some((1, 100))), (1, Some((2, 100)))];
        let got = shares(&readers(sched, "low_latency = 0", &procs, 20));
        assert_shares(&got, &[0.25, 0.25, 0.5], &format!("{sched} groups 1:1, 2 + 1 readers"));
    }
}

#[test]
fn bfq_runs_are_deterministic_and_complete_under_a_queueing_drive() {
    for sched in ["bfq", "bfq-plus", "bfq-original"] {
        let text = readers(sched, "", &[(1, None), (1, None), (1, None)], 5)
            .replace("preset = \"maxtor-stm332061\"", "preset = \"maxtor-7l250s0\"\nqueue_depth = 32");
        let scn = Scenario::parse(&text, "t.toml").unwrap();
        let a = scn.run(Some(3)).unwrap().pop().unwrap();
        let b = scn.run(Some(3)).unwrap().pop().unwrap();
        assert_eq!(a.summary, b.summary, "{sched}");
        let inv = a.summary.invariants;
        assert_eq!((inv.idled_with_work, inv.left_behind, inv.bad_completions, inv.bios_unaccounted), (0, 0, 0, 0), "{sched}: {inv:?}");
    }
}

/// Issue 24: two cgroups 100:200, one sequential reader each, low_latency on (both queues
/// weight-raised at the start). Linux idles for the in-service queue: the groups are asymmetric
/// while both have pending requests, and a group counts while its queue is busy or has requests
/// at the drive. Ours dropped the in-service queue's group at its last completion, just before
/// the idling decision, so it never idled (1 idle wait in 4 s, 22 MB/s). Measured on Linux's own
/// BFQ on the emulated drive: the heavier group gets about 2/3 (0.658), with idling.
#[test]
fn two_cgroups_one_to_two_idle_while_raised() {
    let text = readers("bfq", "", &[(1, Some((1, 100))), (1, Some((2, 200)))], 4);
    let run = Scenario::parse(&text, "t.toml").unwrap().run(Some(1)).unwrap().pop().unwrap();
    let c = &run.summary.scheduler_counters;
    assert!(c["wr_starts"] >= 2, "both queues raised: {c:?}");
    assert!(c["idle_waits"] > 100, "idles for the in-service group's reader: {c:?}");
    let bytes: Vec<f64> = run.summary.processes.iter().map(|p| p.bytes as f64).collect();
    let heavy = bytes[1] / (bytes[0] + bytes[1]);
    assert!((heavy - 2.0 / 3.0).abs() < 0.04, "heavier group's share {heavy:.3}");
    assert!(run.summary.throughput_mb_s > 40.0, "sequential runs kept: {} MB/s", run.summary.throughput_mb_s);
}
