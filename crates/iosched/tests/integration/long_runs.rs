//! Runs of any length: the streamed summary equals the one from kept records, records are kept
//! only when asked (or streamed to a sink), a run can be cancelled with what it has, and a
//! workload stuck at one simulated instant ends with an error instead of running forever.

use iosched::metrics::csv::CsvRecordWriter;
use iosched::metrics::{summarize, RecordSink};
use iosched::scenario::{RunOptions, Scenario};
use iosched::sim::RunControl;

const TWO_SCHEDULERS: &str = r#"
[device]
preset = "ibm-deskstar-34gxp"
[[process]]
name = "seq"
count = 2
request_kib = 64
think_us = 300
[[process]]
name = "rand"
pattern = "random"
request_kib = 8
think = "exponential"
think_us = 2000
[run]
duration_s = 2
[[scheduler]]
name = "clook"
[[scheduler]]
name = "anticipatory"
"#;

#[test]
fn streamed_summary_equals_the_summary_of_the_kept_records() {
    let scn = Scenario::parse(TWO_SCHEDULERS, "t.toml").unwrap();
    let kept = scn.run(Some(3)).unwrap();
    let streamed = scn.run_with(RunOptions { seed: Some(3), ..RunOptions::default() }).unwrap();
    for (k, s) in kept.iter().zip(&streamed) {
        assert!(!k.records.is_empty());
        assert!(s.records.is_empty(), "records are kept only when asked");
        assert_eq!(k.summary, s.summary);
        let from_records = summarize(&k.records, s.summary.elapsed_s.mul_add(1e9, 0.0).round() as u64, &[], k.summary.invariants);
        assert_eq!(from_records.response_ms, s.summary.response_ms);
        assert_eq!(from_records.requests, s.summary.requests);
    }
}

#[test]
fn records_stream_to_a_sink_as_the_kept_records_with_their_run() {
    let scn = Scenario::parse(TWO_SCHEDULERS, "t.toml").unwrap();
    let kept = scn.run(Some(3)).unwrap();
    let mut streamed = Vec::<u8>::new();
    let mut w = CsvRecordWriter::new(&mut streamed);
    let runs = scn.run_with(RunOptions { seed: Some(3), sink: Some(&mut w as &mut dyn RecordSink), ..RunOptions::default() }).unwrap();
    let total: u64 = runs.iter().map(|r| r.summary.requests).sum();
    assert_eq!(w.finish().unwrap(), total);
    // The same rows, written from the records a run kept in memory.
    let mut expected = Vec::<u8>::new();
    let mut w2 = CsvRecordWriter::new(&mut expected);
    for (i, r) in kept.iter().enumerate() {
        w2.begin_run(i, &r.summary.scheduler);
        r.records.iter().for_each(|x| w2.record(x));
    }
    w2.finish().unwrap();
    assert_eq!(String::from_utf8(streamed).unwrap(), String::from_utf8(expected.clone()).unwrap());
    let text = String::from_utf8(expected).unwrap();
    assert!(text.lines().nth(1).unwrap().starts_with("0,clook,"));
    assert!(text.lines().last().unwrap().starts_with("1,anticipatory(aged-sptf),"));
}

#[test]
fn a_cancelled_run_returns_what_it_has_and_ends_the_scenario() {
    let long = TWO_SCHEDULERS.replace("duration_s = 2", "duration_s = 100000");
    let scn = Scenario::parse(&long, "t.toml").unwrap();
    let control = RunControl::default();
    control.cancel();
    let runs = scn.run_with(RunOptions { control: Some(&control), ..RunOptions::default() }).unwrap();
    assert_eq!(runs.len(), 1, "the scenario stops at the cancelled run");
    let s = &runs[0].summary;
    assert!(s.stopped.as_deref().is_some_and(|m| m.starts_with("cancelled at")), "{:?}", s.stopped);
    assert!(s.elapsed_s < 100.0, "stopped early: {} s", s.elapsed_s);
    assert_eq!(s.invariants.left_behind, 0, "work left by a cancel is not a broken invariant");
}

#[test]
fn a_workload_stuck_at_one_instant_is_an_error_not_an_endless_run() {
    // issue 10: a read() process whose file fits in its page cache, with zero think time: its
    // cached reads take no simulated time, so run.duration_s was never reached.
    let scn = Scenario::parse("[[process]]\nname = \"cached\"\naccess = \"read\"\nfile_mib = 1\nthink_us = 0\n", "zero.toml").unwrap();
    let err = scn.run_with(RunOptions::default()).err().expect("stuck run must fail");
    assert!(err.to_string().contains("makes no progress"), "{err}");
    assert!(err.to_string().starts_with("zero.toml: scheduler `fcfs`"), "{err}");
}

#[test]
fn queue_workloads_stop_issuing_at_a_given_duration() {
    let poisson = "[workload]\nkind = \"poisson\"\nrate_iops = 100\nrequests = 100000\n";
    let unlimited = Scenario::parse(poisson, "p.toml").unwrap().run_with(RunOptions::default()).unwrap();
    assert_eq!(unlimited[0].summary.requests, 100_000, "without run.duration_s, `requests` ends the run");
    let timed = Scenario::parse(&format!("{poisson}[run]\nduration_s = 5\n"), "p.toml").unwrap().run_with(RunOptions::default()).unwrap();
    let n = timed[0].summary.requests;
    assert!((400..=600).contains(&n), "about 100 IOPS for 5 s, got {n}");
    let closed = "[workload]\nkind = \"closed-queue\"\nqueue_depth = 4\nrequests = 100000\n[run]\nduration_s = 1\n";
    let c = Scenario::parse(closed, "c.toml").unwrap().run_with(RunOptions::default()).unwrap();
    assert!(
        c[0].summary.requests < 1000 && c[0].summary.elapsed_s < 1.2,
        "{} requests in {} s",
        c[0].summary.requests,
        c[0].summary.elapsed_s
    );
}

#[test]
fn duplicate_scheduler_labels_and_process_names_are_errors() {
    let two_fcfs = "[workload]\nkind = \"closed-queue\"\n[[scheduler]]\nname = \"fcfs\"\n[[scheduler]]\nname = \"fcfs\"\n";
    let e = Scenario::parse(two_fcfs, "d.toml").unwrap_err().to_string();
    assert!(e.contains("label `fcfs` is already used by scheduler[0]"), "{e}");
    let labelled = two_fcfs.replacen("name = \"fcfs\"\n", "name = \"fcfs\"\nlabel = \"a\"\n", 1);
    Scenario::parse(&labelled, "d.toml").expect("distinct labels are fine");
    let procs = "[[process]]\nname = \"p\"\n[[process]]\nname = \"p\"\n";
    let e = Scenario::parse(procs, "d.toml").unwrap_err().to_string();
    assert!(e.contains("field `process[1].name`: `p` is already the name of process[0]"), "{e}");
}
