//! Bad scenarios get one clear message naming the file, the field and the value.

use iosched::scenario::Scenario;

fn err(text: &str) -> String {
    Scenario::parse(text, "bad.toml").err().expect("should be rejected").to_string()
}

const OK_WORKLOAD: &str = "[workload]\nkind = \"closed-queue\"\n";

#[test]
fn unknown_field() {
    let e = err(&format!("{OK_WORKLOAD}queue_lenght = 5\n"));
    assert!(e.starts_with("bad.toml: "), "{e}");
    assert!(e.contains("queue_lenght") && e.contains("line 3"), "{e}");
}

#[test]
fn wrong_type() {
    let e = err(&format!("{OK_WORKLOAD}queue_depth = \"ten\"\n"));
    assert!(e.contains("workload.queue_depth") && e.contains("ten"), "{e}");
}

#[test]
fn unknown_scheduler_device_and_tunable() {
    let e = err(&format!("{OK_WORKLOAD}[[scheduler]]\nname = \"elevator9\"\n"));
    assert!(e.contains("scheduler[0].name") && e.contains("elevator9") && e.contains("sstf"), "{e}");
    let e = err(&format!("[device]\npreset = \"floppy\"\n{OK_WORKLOAD}"));
    assert!(e.contains("device.preset") && e.contains("floppy"), "{e}");
    let e = err(&format!("{OK_WORKLOAD}[[scheduler]]\nname = \"gstf\"\ngroup_size = 3\n"));
    assert!(e.contains("scheduler[0]") && e.contains("group_size"), "{e}");
    let e = err(&format!("{OK_WORKLOAD}[[scheduler]]\nname = \"aged-sptf\"\nage_weight = -2\n"));
    assert!(e.contains("age_weight") && e.contains("-2"), "{e}");
}

#[test]
fn impossible_values() {
    let e = err("[workload]\nkind = \"closed-queue\"\nrequest_kib = -4\n");
    assert!(e.contains("workload.request_kib") && e.contains("-4"), "{e}");
    let e = err("[workload]\nkind = \"closed-queue\"\nqueue_depth = 0\n");
    assert!(e.contains("workload.queue_depth"), "{e}");
    let e = err("[device]\npreset = \"fujitsu-m2361a\"\n[[process]]\nfile_mib = 100\nfile_offset_mib = 500\n");
    assert!(e.contains("process[0].file_offset_mib") && e.contains("500") && e.contains("beyond the disk"), "{e}");
    let e = err("[[process]]\nrequest_kib = 0.3\n");
    assert!(e.contains("process[0].request_kib") && e.contains("0.3"), "{e}");
    let e = err("[[process]]\npattern = \"zigzag\"\n");
    assert!(e.contains("process[0].pattern") && e.contains("zigzag"), "{e}");
    let e = err("");
    assert!(e.contains("no workload"), "{e}");
}

#[test]
fn the_two_public_examples_parse_as_written() {
    for f in ["seltzer-q100.toml", "two-readers.toml"] {
        let path = format!("{}/../../experiments/examples/{f}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let scn = Scenario::parse(&text, f).unwrap();
        assert_eq!(scn.schedulers().unwrap().len(), 2);
    }
}

#[test]
fn values_that_would_overflow_simulated_time_are_rejected() {
    let e = err("[[process]]\nthink_us = 1e17\n");
    assert!(e.contains("process[0].think_us") && e.contains("100000000000000000"), "{e}");
    let e = err("[workload]\nkind = \"poisson\"\nrate_iops = 1e-12\n");
    assert!(e.contains("workload.rate_iops"), "{e}");
    let e = err("[device]\ncommand_overhead_ms = 1e20\n[[process]]\n");
    assert!(e.contains("command_overhead_ms"), "{e}");
    let e = err("[device]\ncache_segments = 4000000000\n[[process]]\n");
    assert!(e.contains("cache"), "{e}");
}

#[test]
fn regions_and_requests_must_fit() {
    let e = err("[workload]\nkind = \"closed-queue\"\nrequest_kib = 65536\nregion_start_fraction = 0.9999999\n");
    assert!(e.contains("region") && e.contains("smaller than one request"), "{e}");
    let e = err("[device]\npreset = \"wd-ultrastar-hc310\"\n[workload]\nkind = \"closed-queue\"\nrequest_kib = 3221225472\n");
    assert!(e.contains("workload.request_kib") && e.contains("2 TiB"), "{e}");
    let e = err("[[process]]\nstart_us = 20000000\n[run]\nduration_s = 10\n");
    assert!(e.contains("process[0].start_us"), "{e}");
}

/// Issue 23: each range alone was fine, their product was not, and the clock saturated into a
/// result (elapsed 2^64 ns, response p50 0). The product is checked, and the engine stops with an
/// error at the end of its clock instead of reporting it.
#[test]
fn sparse_poisson_arrivals_beyond_the_clock_are_refused() {
    let e = err("[workload]\nkind = \"poisson\"\nrate_iops = 0.001\nrequests = 18500000\n");
    assert!(e.contains("workload.requests") && e.contains("workload.rate_iops") && e.contains("beyond the simulator's clock"), "{e}");
    // Within the clock: accepted.
    Scenario::parse("[workload]\nkind = \"poisson\"\nrate_iops = 0.001\nrequests = 1000\n", "ok.toml").expect("within the clock");
}

#[test]
fn a_trace_stretched_beyond_the_clock_is_an_error_not_a_result() {
    let dir = std::env::temp_dir().join(format!("iosched-horizon-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // MQSim: time_ns device sector size type; a day between the two requests.
    std::fs::write(dir.join("day.trace"), "0 0 0 8 1\n86400000000000 0 800 8 1\n").unwrap();
    let text =
        "[workload]\nkind = \"trace\"\ntrace = \"day.trace\"\nformat = \"mqsim\"\ntime_scale = 1e6\n[[scheduler]]\nname = \"noop\"\n";
    let path = dir.join("s.toml");
    std::fs::write(&path, text).unwrap();
    let scn = Scenario::read(&path).expect("the scenario itself is valid");
    let e = scn.run(None).err().expect("must not report a saturated clock").to_string();
    assert!(e.contains("day.trace") && e.contains("beyond the simulator's clock"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 23: GnuLD with 64 instances of 10^6 objects (each field within its range) was accepted,
/// allocated 7 GB and aborted. Every workload builder's memory is estimated before building.
#[test]
fn workloads_too_large_to_build_are_refused_before_allocating() {
    let e = err("[app]\nkind = \"gnuld\"\ninstances = 64\nobjects = 1000000\n");
    assert!(e.contains("GnuLD objects") && e.contains("GiB of memory") && e.contains("64000000"), "{e}");
    let e = err("[[process]]\nname = \"p\"\ncount = 100000\npattern = \"random\"\nrequest_kib = 4\nfile_mib = 0.25\n");
    assert!(e.contains("100000 processes") && e.contains("GiB"), "{e}");
    let e = err("[app]\nkind = \"andrew\"\nclients = 10000\ndirectories = 100000\nfiles_per_dir = 100000\n");
    assert!(e.contains("Andrew files"), "{e}");
    let e = err("[host]\n[[host.tree]]\npath = \"/t\"\ndepth = 10\ndirs_per_dir = 100\nfiles_per_dir = 100\n[[task]]\nname = \"ls\"\ncommand = \"ls-lR\"\npath = \"/t\"\n");
    assert!(e.contains("[host] tree entries") && !e.contains("18446744073709551615"), "{e}");
    // Within the budget: accepted as before.
    Scenario::parse("[app]\nkind = \"gnuld\"\ninstances = 2\nobjects = 1000\n", "ok.toml").expect("small GnuLD");
}

/// serde's Rust type names (`expected f64`, `expected u32`) never reach a user: the message says
/// what the field takes in words (issue 23, naming).
#[test]
fn type_errors_say_what_the_field_takes_in_words() {
    let e = err("[[process]]\nthink_us = \"fast\"\n");
    assert!(e.contains("`process[0].think_us`: expected a number, got \"fast\""), "{e}");
    let e = err("[[process]]\ncount = 1.5\n");
    assert!(e.contains("expected a whole number from 0 to 4294967295, got 1.5"), "{e}");
    let e = err("[[process]]\ncount = -1\n");
    assert!(e.contains("expected a whole number from 0 to 4294967295, got -1"), "{e}");
    let e = err("[run]\nseed = \"a\"\n[[process]]\n");
    assert!(e.contains("run.seed") && e.contains("expected a whole number from 0 to"), "{e}");
    let e = err("[[process]]\nfile_mib = [1]\n");
    assert!(e.contains("expected a number, got a list"), "{e}");
    for text in ["[[process]]\nthink_us = \"fast\"\n", "[[process]]\ncount = 1.5\n", "[run]\nseed = true\n[[process]]\n"] {
        let e = err(text);
        for rust in ["f64", "u32", "u64", "invalid type", "floating point", "integer `"] {
            assert!(!e.contains(rust), "`{rust}` in: {e}");
        }
    }
}

/// A bad tunable value names the tunable's unit and range, whatever is wrong with it.
#[test]
fn tunable_errors_name_the_unit_and_range() {
    let e = err(&format!("{OK_WORKLOAD}[[scheduler]]\nname = \"deadline\"\nread_expire = \"soon\"\n"));
    assert!(e.contains("scheduler[0].read_expire") && e.contains("takes a whole number from 0 to 2147483647 ms"), "{e}");
    assert!(e.contains("soon"), "{e}");
    let e = err(&format!("{OK_WORKLOAD}[[scheduler]]\nname = \"deadline\"\nread_expire = -5\n"));
    assert!(e.contains("read_expire") && e.contains("out of range: it takes a whole number from 0 to") && e.contains(" ms"), "{e}");
    let e = err(&format!("{OK_WORKLOAD}[[scheduler]]\nname = \"deadline\"\nfifo_batch = 1.5\n"));
    assert!(e.contains("fifo_batch") && e.contains("is not a whole number: it takes a whole number from"), "{e}");
    // An unknown tunable: the known ones are listed with their units.
    let e = err(&format!("{OK_WORKLOAD}[[scheduler]]\nname = \"deadline\"\nread_expiry = 5\n"));
    assert!(e.contains("unknown tunable `read_expiry`") && e.contains("read_expire (ms), write_expire (ms)"), "{e}");
    let e = err(&format!("{OK_WORKLOAD}[[scheduler]]\nname = \"anticipatory\"\nmax_wait = 5\n"));
    assert!(e.contains("max_wait_us (us)") && e.contains("age_weight"), "{e}");
    // A wrapped policy's tunable, looked up through the wrapper.
    let e = err(&format!("{OK_WORKLOAD}[[scheduler]]\nname = \"anticipatory\"\npolicy = \"aged-sptf\"\nage_weight = \"old\"\n"));
    assert!(e.contains("age_weight") && e.contains("takes a number from"), "{e}");
}

/// The simulator and real mode label a wrapper the same way, with its policy.
#[test]
fn a_wrappers_default_label_names_its_policy() {
    use iosched::sched::registry::default_label;
    assert_eq!(default_label("anticipatory", None), "anticipatory(aged-sptf)");
    assert_eq!(default_label("as", Some("clook")), "anticipatory(clook)");
    assert_eq!(default_label("clook", None), "clook");
    let s = Scenario::parse(&format!("{OK_WORKLOAD}[[scheduler]]\nname = \"anticipatory\"\n"), "t.toml").unwrap();
    assert_eq!(s.schedulers().unwrap()[0].label, "anticipatory(aged-sptf)");
}
