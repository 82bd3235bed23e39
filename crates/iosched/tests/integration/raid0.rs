//! RAID-0 arrays (`[array]`): every bio comes back once whatever the member queues do, the
//! array serves random reads in parallel, results are deterministic, and a bad array is a clear
//! error.

use iosched::scenario::Scenario;

fn random_reads(array: &str, scheduler: &str, block: &str) -> String {
    format!(
        "[device]\npreset = \"ibm-deskstar-34gxp\"\n{array}\n{block}\n[workload]\nkind = \"closed-queue\"\nqueue_depth = 16\n\
         request_kib = 64\nrequests = 2000\n[[scheduler]]\nname = \"{scheduler}\"\n"
    )
}

const ARRAY4: &str = "[array]\nmembers = 4\nchunk_kib = 64";

#[test]
fn every_bio_completes_once_on_an_array_under_every_kind_of_scheduler() {
    for sched in ["fcfs", "deadline", "las", "cas", "anticipatory", "kyber", "noop"] {
        for block in ["", "[block]\nnr_requests = 32"] {
            let scn = Scenario::parse(&random_reads(ARRAY4, sched, block), "t.toml").unwrap();
            let run = scn.run(Some(3)).unwrap().pop().unwrap();
            let inv = run.summary.invariants;
            assert_eq!(
                (inv.idled_with_work, inv.left_behind, inv.bad_completions, inv.bios_unaccounted),
                (0, 0, 0, 0),
                "{sched} {block:?}: {inv:?}"
            );
            // A 64 KiB bio not aligned to a chunk is two pieces: at least one request each.
            assert!(run.records.len() >= 2000, "{sched}: {} requests", run.records.len());
            assert!(run.summary.device.starts_with("raid0 of 4 x"), "{}", run.summary.device);
        }
    }
}

#[test]
fn four_members_serve_random_reads_about_four_times_as_fast_as_one() {
    let one = Scenario::parse(&random_reads("", "fcfs", ""), "t.toml").unwrap().run(Some(1)).unwrap().pop().unwrap();
    let four = Scenario::parse(&random_reads(ARRAY4, "fcfs", ""), "t.toml").unwrap().run(Some(1)).unwrap().pop().unwrap();
    let speedup = one.summary.elapsed_s / four.summary.elapsed_s;
    // Not 4: a bio split over two members waits for the slower piece, and the members' queues
    // are unequal at any moment.
    assert!((2.5..4.2).contains(&speedup), "speedup {speedup:.2} ({} s vs {} s)", one.summary.elapsed_s, four.summary.elapsed_s);
}

#[test]
fn an_array_run_is_deterministic() {
    let scn = Scenario::parse(&random_reads(ARRAY4, "las", "[block]\nnr_requests = 32"), "t.toml").unwrap();
    let a = scn.run(Some(5)).unwrap();
    let b = scn.run(Some(5)).unwrap();
    assert_eq!(a[0].records, b[0].records);
    assert_eq!(a[0].summary, b[0].summary);
}

#[test]
fn host_tasks_run_on_an_array() {
    let text = r#"
[device]
preset = "ibm-deskstar-34gxp"
[array]
members = 3
chunk_kib = 32
[block]
[host]
memory_mib = 64
fs_mib = 512
file = [{ path = "/big", size_mib = 48 }]
[[task]]
name = "writer"
command = "dd"
path = "/out"
size_mib = 64
[[task]]
name = "reader"
command = "cat"
path = "/big"
[[scheduler]]
name = "las"
"#;
    let run = Scenario::parse(text, "t.toml").unwrap().run(None).unwrap().pop().unwrap();
    let inv = run.summary.invariants;
    assert_eq!((inv.left_behind, inv.bad_completions, inv.bios_unaccounted), (0, 0, 0), "{inv:?}");
    let host = run.summary.host.expect("host report");
    for t in &host.tasks {
        assert!(t.error.is_none(), "{}: {:?}", t.name, t.error);
        assert!(t.exit_s.is_some(), "{} did not finish", t.name);
    }
}

#[test]
fn a_bad_array_names_its_field() {
    for (array, field) in [
        ("[array]\nmembers = 1", "array.members"),
        ("[array]\nmembers = 4\nchunk_kib = 48", "array.chunk_kib"),
        ("[array]\nlevel = \"raid5\"\nmembers = 4", "array.level"),
        ("[array]\nmembers = 4\nstripe = 3", "stripe"),
    ] {
        let e = Scenario::parse(&random_reads(array, "fcfs", ""), "t.toml").err().expect(array).to_string();
        assert!(e.contains(field), "{array}: {e}");
    }
}
