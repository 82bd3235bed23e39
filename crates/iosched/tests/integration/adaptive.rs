//! adaptive end to end: a switch in the engine drains the old scheduler with requests at the
//! drive and loses nothing; in a scenario it measures its table on the scenario's device and,
//! when it never switches, runs exactly as the candidate it chose.

use iosched::device::drive_queue::{DriveQueueConfig, FirmwareOrder};
use iosched::device::presets::preset;
use iosched::device::RotationalDisk;
use iosched::scenario::Scenario;
use iosched::sched::adaptive::{Adaptive, SelectionTable, TablePoint, CANDIDATES, TUNABLES};
use iosched::sched::registry;
use iosched::sched::tunables::TunableValues;
use iosched::sched::Scheduler;
use iosched::sim::{simulate_with, SimOptions};
use iosched::workload::closed_queue::ClosedQueue;
use std::collections::BTreeMap;
use std::sync::Arc;

fn build(name: &str) -> Result<Box<dyn Scheduler>, String> {
    registry::build(name, None, &BTreeMap::new())
}

#[test]
fn a_switch_drains_with_commands_at_the_drive_and_loses_nothing() {
    // A hand-made table: noop for small requests (where it starts), deadline at 64 KiB.
    let p = |kib: f64, mb_s: [f64; 3]| TablePoint { readers_kib: vec![kib], mean_request_kib: kib, mb_s: mb_s.to_vec() };
    let table =
        Arc::new(SelectionTable { candidates: CANDIDATES.to_vec(), points: vec![p(4.0, [2.0, 1.0, 1.0]), p(64.0, [1.0, 2.0, 1.0])] });
    let given: BTreeMap<String, f64> = [("window_requests".to_string(), 16.0), ("switch_interval_ms".to_string(), 0.0)].into();
    let mut sched = Adaptive::new(table, build, &TunableValues::resolve(TUNABLES, &given).unwrap()).unwrap();
    let mut disk = RotationalDisk::new(preset("ibm-deskstar-34gxp").unwrap()).unwrap();
    let mut work = ClosedQueue::new(8, 2000, 128, (0, 60_000_000), 1.0, 3);
    let options = SimOptions { drive: DriveQueueConfig { depth: 4, order: FirmwareOrder::Fifo }, ..SimOptions::default() };
    let out = simulate_with(&mut disk, &mut sched, &mut work, options);
    let inv = out.invariants;
    assert_eq!((inv.left_behind, inv.bad_completions, inv.bios_unaccounted), (0, 0, 0), "{inv:?}");
    assert_eq!(out.records.len(), 0, "records not kept by default");
    assert_eq!(out.accumulator.requests(), 2000);
    let c: BTreeMap<_, _> = out.scheduler_counters.into_iter().collect();
    assert_eq!(c["switches"], 1);
    assert_eq!(c["dispatched_noop"] + c["dispatched_deadline"], 2000);
    assert!(c["dispatched_noop"] >= 16 && c["dispatched_deadline"] > 1900, "{c:?}");
    assert_eq!(sched.current(), "deadline");
}

#[test]
fn in_a_scenario_it_measures_its_table_and_without_a_switch_runs_as_its_choice() {
    let text = r#"
[device]
preset = "maxtor-6l080l0"
[block]
tags = "legacy"
[[process]]
name = "r"
count = 4
pattern = "random"
request_kib = 16
requests = 300
access = "mmap"
file_mib = 4096
[[scheduler]]
name = "adaptive"
measure_ms = 500
"#;
    let scn = Scenario::parse(text, "t.toml").unwrap();
    let run = scn.run(None).unwrap().pop().unwrap();
    let table = run.summary.selection.clone().expect("the measured table is reported");
    assert_eq!(table.points.len(), 8);
    assert!(table.points.iter().all(|p| p.mb_s.len() == 3 && p.mb_s.iter().all(|&v| v > 0.0)));
    let c: BTreeMap<_, _> = run.summary.scheduler_counters.iter().map(|(k, v)| (k.clone(), *v)).collect();
    assert_eq!(c["switches"], 0, "16 KiB throughout: one choice");
    let chosen = CANDIDATES[table.best_for(16.0)];
    let fixed = Scenario::parse(&text.replace("name = \"adaptive\"\nmeasure_ms = 500", &format!("name = \"{chosen}\"")), "t.toml")
        .unwrap()
        .run(None)
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(run.records, fixed.records, "adaptive on {chosen} without a switch is {chosen}");
}

#[test]
fn adaptive_is_refused_where_it_cannot_measure() {
    let e = registry::build("adaptive", None, &BTreeMap::new()).err().unwrap();
    assert!(e.contains("measures its selection table"), "{e}");
    let bad = "[device]\npreset = \"maxtor-6l080l0\"\n[[process]]\nname = \"r\"\n[[scheduler]]\nname = \"adaptive\"\nmeasure_ms = 1\n";
    let e = Scenario::parse(bad, "t.toml").err().unwrap().to_string();
    assert!(e.contains("measure_ms"), "{e}");
}
