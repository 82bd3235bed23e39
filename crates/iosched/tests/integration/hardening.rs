//! Issue 10 (hardening): every crasher found by fuzzing, and every silent wrap-around, is an
//! error naming the file, the line, the parameter and the value. Each test here failed (wrong
//! answer, panic, stack overflow or hang) on the code before the fix.

use iosched::device::disksim::parse::parse_str;
use iosched::device::disksim::{map_document, DiskSimDrive, DiskSimError};

use iosched::request::{Op, Request};
use iosched::scenario::Scenario;
use iosched::trace::Trace;
use std::path::Path;

/// A small but complete DiskSim description (topology, bus, controller, overheads, two zones,
/// an HPL seek curve): each test changes one parameter.
const DRIVE: &str = r#"
disksim_bus BUS0 {
  type = 1,
  Arbitration type = 1,
  Arbitration time = 0.0,
  Read block transfer time = 0.0,
  Write block transfer time = 0.0,
  Print stats = 0
}
disksim_ctlr CTLR0 {
  type = 1,
  Scale for delays = 0.0,
  Bulk sector transfer time = 0.0,
  Maximum queue length = 0,
  Print stats = 1
}
disksim_disk HARD {
  Model = dm_disk HARD.model {
    Number of data surfaces = 2,
    Number of cylinders = 200,
    Block count = 36000,
    Layout Model = dm_layout_g1 {
      LBN-to-PBN mapping scheme = 0,
      Sparing scheme used = 9,
      Rangesize for sparing = 1,
      Zones = [
        dm_layout_g1_zone {
          First cylinder number = 0,
          Last cylinder number = 99,
          Blocks per track = 100,
          Offset of first block = 0,
          Empty space at zone front = 0,
          Skew for track switch = 5,
          Skew for cylinder switch = 10,
          Number of spares = 10,
          slips = [ 7 ],
          defects = [ ]
        },
        dm_layout_g1_zone {
          First cylinder number = 100,
          Last cylinder number = 199,
          Blocks per track = 80,
          Offset of first block = 0,
          Empty space at zone front = 0,
          Skew for track switch = 4,
          Skew for cylinder switch = 8,
          Number of spares = 0,
          slips = [ ],
          defects = [ ]
        }
      ]
    },
    Mechanical Model = dm_mech_g1 {
      Access time type = trackSwitchPlusRotation,
      Seek type = hpl,
      Single cylinder seek time = 1.0,
      HPL seek equation values = [ 50, 1.0, 0.2, 2.0, 0.02, 0 ],
      Add. write settling delay = 0.5,
      Head switch time = 0.3,
      Rotation speed (in rpms) = 6000,
      Percent error in rpms = 0
    }
  },
  Per-request overhead time = 0.01,
  Time scale for overheads = 1.0,
  Bulk sector transfer time = 0.05,
  Hold bus entire read xfer = 0,
  Hold bus entire write xfer = 0,
  Allow read hits on write data = 1,
  Number of buffer segments = 4,
  Maximum number of write segments = 1,
  Segment size (in blks) = 200,
  Enable caching in buffer = 1,
  Buffer continuous read = 3,
  Maximum read-ahead (blks) = 100,
  Fast write level = 0,
  Read hit over. after read = 0.1,
  Read hit over. after write = 0.1,
  Read miss over. after read = 0.2,
  Read miss over. after write = 0.2,
  Write hit over. after read = 0.2,
  Write hit over. after write = 0.2,
  Write miss over. after read = 0.3,
  Write miss over. after write = 0.3,
  Read completion overhead = 0.0,
  Write completion overhead = 0.0,
  Data preparation overhead = 0.0,
  First reselect overhead = 0.0,
  Other reselect overhead = 0.0,
  Write disconnect overhead = 0.0,
  Extra write disconnect = 0,
  Minimum seek delay = 0.0
}
instantiate [ bus0, bus1 ] as BUS0
instantiate [ ctlr0 ] as CTLR0
instantiate [ disk0 ] as HARD
topology disksim_iodriver driver0 [
  disksim_bus bus0 [ disksim_ctlr ctlr0 [ disksim_bus bus1 [ disksim_disk disk0 [ ] ] ] ]
]
"#;

/// The drive with `name = old` replaced by `name = new` (the parameter's first occurrence).
fn with(name: &str, new: &str) -> String {
    let start = DRIVE.find(&format!("{name} = ")).unwrap_or_else(|| panic!("no `{name}` in the test drive"));
    let end = start + DRIVE[start..].find([',', '\n']).unwrap();
    format!("{}{name} = {new}{}", &DRIVE[..start], &DRIVE[end..])
}

fn load(text: &str) -> Result<DiskSimDrive, DiskSimError> {
    let doc = parse_str(text, Path::new("hard.parv"))?;
    map_document(&doc, Path::new("hard.parv"))
}

/// The error for the drive with one parameter changed; it must name the file, the parameter's
/// line, the parameter and the value.
fn param_err(name: &str, value: &str) -> String {
    let text = with(name, value);
    let e = match load(&text) {
        Ok(_) => panic!("`{name} = {value}` was accepted"),
        Err(e) => e,
    };
    let line = text.lines().position(|l| l.contains(&format!("{name} = {value}"))).unwrap() + 1;
    let s = e.to_string();
    assert!(s.starts_with(&format!("hard.parv:{line}: ")), "{name} = {value}: wrong place: {s}");
    assert!(s.contains(name), "{name} = {value}: parameter not named: {s}");
    s
}

fn req(id: u64, op: Op, start: u64, size: u32, at: u64) -> Request {
    Request::new(id, op, start, size, at)
}

#[test]
fn the_test_drive_loads_and_serves() {
    let d = load(DRIVE).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = d.build().unwrap();
    let s = dev.service(&req(0, Op::Read, 1000, 8, 0), Default::default(), 0);
    assert!(s.completion_ns > 0 && s.completion_ns < 100_000_000);
}

// ---- 1. Values the parser accepted that wrapped (or saturated) simulated time or sectors ----

#[test]
fn huge_overheads_are_rejected_not_wrapped() {
    // Release builds gave the unmodified drive's results for this (the sum wrapped around).
    for name in [
        "Read miss over. after read",
        "Read hit over. after read",
        "Write miss over. after write",
        "Write hit over. after read",
        "Per-request overhead time",
        "Read completion overhead",
        "Data preparation overhead",
        "First reselect overhead",
        "Write disconnect overhead",
    ] {
        for v in ["1e308", "9.2e18", "3.6e7"] {
            let e = param_err(name, v);
            let max = if name == "Per-request overhead time" { "1000" } else { "3600000" };
            assert!(e.contains(&format!("[0, {max}] ms")), "range not stated: {e}");
        }
    }
}

#[test]
fn huge_transfer_times_are_rejected() {
    for name in ["Bulk sector transfer time", "Read block transfer time", "Write block transfer time"] {
        for v in ["1e308", "9.2e18", "1e4"] {
            param_err(name, v);
        }
    }
}

#[test]
fn time_scale_for_overheads_is_bounded_and_so_is_the_scaled_overhead() {
    param_err("Time scale for overheads", "1e308");
    param_err("Time scale for overheads", "9.2e18");
    // In range, but it scales a 0.3 ms overhead past an hour: the overhead is named.
    let text = with("Time scale for overheads", "1000").replace("Write miss over. after read = 0.3", "Write miss over. after read = 3601");
    let e = load(&text).unwrap_err().to_string();
    assert!(e.contains("Write miss over. after read") && e.contains("Time scale for overheads"), "{e}");
}

#[test]
fn minimum_seek_delay_of_1e25_is_rejected() {
    param_err("Minimum seek delay", "1e25");
}

#[test]
fn mechanical_times_are_bounded() {
    param_err("Head switch time", "1e308");
    param_err("Add. write settling delay", "1e20");
    param_err("Single cylinder seek time", "1e30");
}

#[test]
fn blocks_per_track_beyond_millions_is_rejected_not_truncated() {
    param_err("Blocks per track", "334000000");
    // 1e18 used to be truncated to a u32 without a word.
    param_err("Blocks per track", "1e18");
    param_err("Blocks per track", "4294967296");
}

#[test]
fn cylinder_numbers_beyond_2_32_are_rejected_not_truncated() {
    param_err("Last cylinder number", "9223372036854775807");
    param_err("Last cylinder number", "4294967296");
    param_err("First cylinder number", "4294967296");
}

#[test]
fn counts_are_not_truncated() {
    param_err("Number of buffer segments", "4294967297");
    param_err("Maximum number of write segments", "1e12");
    param_err("Segment size (in blks)", "1e15");
    param_err("Maximum read-ahead (blks)", "1e15");
    param_err("Number of spares", "1e18");
    param_err("Empty space at zone front", "1e18");
    param_err("Block count", "1e19");
    param_err("Skew for track switch", "1e12");
}

#[test]
fn every_numeric_parameter_of_the_test_drive_has_an_upper_bound() {
    // Any numeric parameter set to 1e300 is an error naming it (none is silently accepted).
    let names: Vec<String> = DRIVE
        .lines()
        .filter_map(|l| {
            let (n, v) = l.split_once(" = ")?;
            let v = v.trim().trim_end_matches(',');
            v.parse::<f64>().ok().map(|_| n.trim().to_string())
        })
        .collect();
    assert!(names.len() > 50, "{}", names.len());
    for n in names {
        param_err(&n, "1e300");
    }
}

#[test]
fn bounded_extremes_serve_without_overflow() {
    // The largest values the ranges allow still give finite, ordered times (no overflow panic
    // in this overflow-checked build, no wrap in release).
    let mut text = DRIVE.to_string();
    for (n, v) in [
        ("Read miss over. after read", "3600000"),
        ("Write miss over. after read", "3600000"),
        ("Write miss over. after write", "3600000"),
        ("Read hit over. after read", "3600000"),
        ("Per-request overhead time", "1000"),
        ("Minimum seek delay", "3600000"),
        ("Bulk sector transfer time", "1000"),
        ("Head switch time", "1000"),
        ("Data preparation overhead", "3600000"),
        ("Write completion overhead", "3600000"),
        ("First reselect overhead", "3600000"),
    ] {
        let start = text.find(&format!("{n} = ")).unwrap();
        let end = start + text[start..].find([',', '\n']).unwrap();
        text = format!("{}{n} = {v}{}", &text[..start], &text[end..]);
    }
    let d = load(&text).unwrap_or_else(|e| panic!("{e}"));
    let cap = d.capacity_sectors();
    let mut dev = d.build().unwrap();
    let mut now = 0u64;
    for (i, (op, start, size)) in
        [(Op::Read, 0, 8), (Op::Write, 5000, 64), (Op::Read, cap - 300, 300), (Op::Write, 0, 1)].into_iter().enumerate()
    {
        let s = dev.service(&req(i as u64, op, start, size, now), Default::default(), now);
        assert!(s.completion_ns >= now, "{s:?}");
        now = s.completion_ns;
    }
}

// ---- 2. A trace start block near 2^64 ----

#[test]
fn trace_start_block_near_2_64_is_an_error() {
    for line in ["R Hit 18446744073709551615 4 1000 1000", "R Hit 18446744073709551612 4 1000 1000"] {
        let e = Trace::parse(line, "t.trace").unwrap_err().to_string();
        assert!(e.starts_with("t.trace:1: start block") && e.contains("18446744073709551"), "{e}");
    }
    let e = Trace::parse("0.0 0 18446744073709551615 4 1\n", "a.trace").unwrap_err().to_string();
    assert!(e.starts_with("a.trace:1: start block"), "{e}");
    // Sizes are bounded too.
    let e = Trace::parse("R Hit 0 4294967295 1000 1000", "t.trace").unwrap_err().to_string();
    assert!(e.starts_with("t.trace:1: size"), "{e}");
}

#[test]
fn a_trace_beyond_the_drive_is_an_error_not_a_panic() {
    let dir = tempdir("capacity");
    let parv = dir.join("hard.parv");
    std::fs::write(&parv, DRIVE).unwrap();
    let trace = dir.join("t.trace");
    std::fs::write(&trace, "R Hit 0 4 1000 1000\nR Hit 18446744073709551615 4 1000 1000\n").unwrap();
    let e = iosched::trace::validate::validate(&parv, &trace).err().expect("beyond the drive").to_string();
    assert!(e.contains("t.trace:2: start block"), "{e}");
}

// ---- 3. Deep nesting: no recursion depth under the input's control ----

fn nested_lists(n: usize) -> String {
    format!("disksim_disk D {{ x = {}{} }}", "[".repeat(n), "]".repeat(n))
}

#[test]
fn deeply_nested_lists_are_an_error_not_a_stack_overflow() {
    for n in [30_000, 100_000] {
        let e = parse_str(&nested_lists(n), Path::new("deep.parv")).unwrap_err().to_string();
        assert!(e.starts_with("deep.parv:1: ") && e.contains("nested"), "{e}");
    }
    // Moderate nesting still parses.
    assert!(parse_str(&nested_lists(50), Path::new("ok.parv")).is_ok());
}

#[test]
fn deeply_nested_blocks_are_an_error_not_a_stack_overflow() {
    let n = 10_000;
    let text = format!("disksim_disk D {{ {} 1 {} }}", "a = {".repeat(n), "}".repeat(n));
    let e = parse_str(&text, Path::new("deep.parv")).unwrap_err().to_string();
    assert!(e.contains("deep.parv:1") && e.contains("nested"), "{e}");
    let text = format!("disksim_disk D {{ {} 1 {} }}", "a = T N {".repeat(n), "}".repeat(n));
    let e = parse_str(&text, Path::new("deep.parv")).unwrap_err().to_string();
    assert!(e.contains("nested"), "{e}");
}

#[test]
fn a_deep_topology_is_an_error_not_a_stack_overflow() {
    let n = 100_000;
    let text = format!("topology disksim_iodriver d0 [ {} ]", "disksim_bus b [ ".repeat(n) + &"] ".repeat(n));
    let e = parse_str(&text, Path::new("topo.parv")).unwrap_err().to_string();
    assert!(e.contains("topo.parv:1") && e.contains("nested"), "{e}");
}

#[test]
fn a_deep_topology_through_a_scenario_is_an_error() {
    let dir = tempdir("scenario-deep");
    let n = 50_000;
    let text = format!("{DRIVE}\ntopology disksim_iodriver d0 [ {} ]", "disksim_bus b [ ".repeat(n) + &"] ".repeat(n));
    std::fs::write(dir.join("deep.parv"), text).unwrap();
    let scn = dir.join("s.toml");
    std::fs::write(&scn, "[device]\ndisksim = \"deep.parv\"\n[workload]\nkind = \"closed-queue\"\nrequests = 10\n").unwrap();
    let text = std::fs::read_to_string(&scn).unwrap();
    let e = Scenario::parse(&text, scn.to_str().unwrap()).err().expect("rejected").to_string();
    assert!(e.contains("device.disksim") && e.contains("nested"), "{e}");
}

// ---- 6. Every scenario error has a description ----

#[test]
fn control_characters_in_a_scenario_give_a_described_error() {
    for text in
        ["# a comment \u{1}\n[workload]\nkind = \"closed-queue\"\n", "\u{7f}", "name = \"a\u{0}b\"\n", "[workload]\nkind = \"x\" # \u{8}\n"]
    {
        let e = Scenario::parse(text, "c.toml").err().expect("rejected").to_string();
        assert!(e.starts_with("c.toml: "), "{e:?}");
        let message = e.trim_start_matches("c.toml: ");
        let description = message.split(" (line").next().unwrap().trim();
        assert!(description.len() > 10, "no description: {e:?}");
        assert!(!e.chars().any(|c| c.is_control()), "control character in the message: {e:?}");
    }
}

// ---- Issue 9: integer tunables ----

#[test]
fn fractional_integer_tunables_are_errors_naming_scheduler_tunable_and_value() {
    let cases = [("gstf", "group_cylinders", "1.5"), ("lottery", "seed", "1.99")];
    for (sched, tunable, value) in cases {
        let text = format!("[workload]\nkind = \"closed-queue\"\nrequests = 10\n[[scheduler]]\nname = \"{sched}\"\n{tunable} = {value}\n");
        let e = Scenario::parse(&text, "t.toml").err().unwrap_or_else(|| panic!("{sched}.{tunable} = {value} accepted")).to_string();
        assert!(e.contains(sched) && e.contains(tunable) && e.contains(value) && e.contains("whole number"), "{e}");
    }
    // Whole values (written as floats too) are fine.
    let text = "[workload]\nkind = \"closed-queue\"\nrequests = 10\n[[scheduler]]\nname = \"gstf\"\ngroup_cylinders = 2.0\n";
    Scenario::parse(text, "t.toml").unwrap();
    // Through the anticipatory wrapper too.
    let text =
        "[workload]\nkind = \"closed-queue\"\nrequests = 10\n[[scheduler]]\nname = \"anticipatory\"\npolicy = \"lottery\"\nseed = 0.5\n";
    let e = Scenario::parse(text, "t.toml").err().expect("rejected").to_string();
    assert!(e.contains("lottery") && e.contains("seed") && e.contains("0.5"), "{e}");
}

// ---- The DiskSim validation figures do not move ----

fn shared(name: &str) -> Option<std::path::PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/disksim-validation").join(name);
    p.exists().then_some(p)
}

#[test]
fn published_disksim_demerits_are_unchanged() {
    for (drive, trace, demerit) in [
        ("atlas10k.parv", "atlas10k.trace", 0.2676),
        ("cheetah9LP.parv", "cheetah9LP.trace", 0.1065),
        ("hp_c2247a.parv", "hp_c2247a.trace", 0.0899),
    ] {
        let (Some(d), Some(t)) = (shared(drive), shared(trace)) else {
            eprintln!("skipped: {drive} not found");
            continue;
        };
        let v = iosched::trace::validate::validate(&d, &t).unwrap();
        assert!((v.demerit_disksim_method_ms - demerit).abs() < 0.00005, "{drive}: {}", v.demerit_disksim_method_ms);
    }
}

fn tempdir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("iosched-hardening-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

// ---- 5. Calibration curves are validated; special files are refused by type ----

mod calibration_files {
    use iosched::device::calibration::{load_calibration, parse_calibration};
    use std::path::Path;

    const GOOD: &str = r#"{"zero_ns": 100.0, "forward": [[0.0, 1000.0], [6.9, 7000.0]], "backward": [[0.0, 9000.0]]}"#;

    #[test]
    fn a_good_curve_and_a_calibrate_document_load() {
        let (c, b) = parse_calibration(GOOD, "c.json").unwrap();
        assert_eq!((c.forward.len(), b), (2, 0.0));
        let doc = format!(r#"{{"path": "/dev/sda", "calibration": {{"baseline_ns": 150000.0, "curve": {GOOD}}}}}"#);
        assert_eq!(parse_calibration(&doc, "c.json").unwrap().1, 150000.0);
    }

    #[test]
    fn extreme_negative_and_unsorted_values_are_errors_naming_the_field() {
        for (text, field, value) in [
            (r#"{"zero_ns": 1e308, "forward": [], "backward": []}"#, "zero_ns", "1e308"),
            (r#"{"zero_ns": 0, "forward": [[0.0, -5.0]], "backward": []}"#, "forward[0][1]", "-5"),
            (r#"{"zero_ns": 0, "forward": [[0.0, 1.0], [5.0, 1e308]], "backward": []}"#, "forward[1][1]", "1e308"),
            (r#"{"zero_ns": 0, "forward": [], "backward": [[3.0, 1.0], [1.0, 2.0]]}"#, "backward[1][0]", "1"),
            (r#"{"zero_ns": 0, "forward": [[-1.0, 1.0]], "backward": []}"#, "forward[0][0]", "-1"),
            (r#"{"zero_ns": 0, "forward": [[1e300, 1.0]], "backward": []}"#, "forward[0][0]", "1e300"),
            (
                r#"{"calibration": {"baseline_ns": -3, "curve": {"zero_ns": 0, "forward": [], "backward": []}}}"#,
                "calibration.baseline_ns",
                "-3",
            ),
            (
                r#"{"calibration": {"baseline_ns": 0, "curve": {"zero_ns": 1e20, "forward": [], "backward": []}}}"#,
                "calibration.curve.zero_ns",
                "1e20",
            ),
        ] {
            let e = parse_calibration(text, "c.json").expect_err(text);
            let value_shown = e.contains(value) || e.contains(&value.replace("e", "00000"));
            assert!(e.starts_with("c.json: ") && e.contains(&format!("`{field}`")), "{text}: {e}");
            assert!(value_shown || e.contains("1000000000"), "{text}: {e}");
        }
    }

    /// Found by the fuzzer (calibration target, seed 20261130): a baseline that is an object
    /// with a DEL in a key was quoted raw in the message.
    #[test]
    fn control_characters_quoted_from_the_file_are_escaped() {
        for text in [
            "{\"calibration\": {\"baseline_ns\": {\"ba\u{7f}ck\": 1}, \"curve\": {}}}",
            "{\"zero_ns\": 0, \"forward\": [], \"backward\": [], \"x\u{1}\": 1, \"zero_ns\": 0}",
            "{\"calibration\": {\"baseline_ns\": \"\u{7}\\u0007\", \"curve\": {}}}",
        ] {
            let e = parse_calibration(text, "c.json").expect_err(text);
            assert!(!e.chars().any(|c| c.is_control() && c != '\n'), "{e:?}");
            assert!(e.starts_with("c.json: "), "{e}");
        }
        let e = parse_calibration("{\"calibration\": {\"baseline_ns\": {\"ba\u{7f}ck\": 1}}}", "c.json").unwrap_err();
        assert!(e.contains("`calibration.baseline_ns`") && e.contains("ba\\u{7f}ck"), "{e}");
    }

    #[test]
    fn special_files_are_refused_before_reading() {
        let e = load_calibration(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(e, "/dev/zero: cannot read: not a regular file (it is a character device)");
        let e = load_calibration(Path::new("/")).unwrap_err();
        assert!(e.contains("a directory"), "{e}");
    }
}

mod special_files {
    use iosched::device::disksim::load_drive;
    use iosched::trace::validate::Drive;
    use iosched::trace::Trace;
    use std::path::Path;

    #[test]
    fn dev_zero_as_a_trace_or_a_drive_is_refused_by_type() {
        let e = Trace::read(Path::new("/dev/zero")).unwrap_err().to_string();
        assert_eq!(e, "/dev/zero: cannot read the trace: not a regular file (it is a character device)");
        let e = load_drive(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("/dev/zero") && e.contains("character device"), "{e}");
        let e = Drive::load(Path::new("/dev/zero")).err().unwrap().to_string();
        assert!(e.contains("/dev/zero") && e.contains("character device"), "{e}");
        let e = Trace::read(Path::new("/tmp")).unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = super::tempdir("fifo");
        let fifo = dir.join("pipe");
        let _ = std::fs::remove_file(&fifo);
        let ok = std::process::Command::new("mkfifo").arg(&fifo).status().map(|s| s.success()).unwrap_or(false);
        if !ok {
            eprintln!("skipped: no mkfifo");
            return;
        }
        // Opening a FIFO for reading blocks until a writer comes: the type check must come first.
        let e = Trace::read(&fifo).unwrap_err().to_string();
        assert!(e.contains("a FIFO"), "{e}");
        let e = load_drive(&fifo).unwrap_err().to_string();
        assert!(e.contains("a FIFO"), "{e}");
        // `source` of a FIFO inside a description, too.
        std::fs::write(dir.join("d.parv"), "source pipe\n").unwrap();
        let e = load_drive(&dir.join("d.parv")).unwrap_err().to_string();
        assert!(e.contains("a FIFO"), "{e}");
    }
}

// ---- `source`: cycles and exponential re-reading end with an error, not a hang ----

#[test]
fn source_cycles_and_fan_out_are_errors_not_hangs() {
    let dir = tempdir("source");
    // A file sourcing itself six times per level (6^16 reads before: a hang).
    std::fs::write(dir.join("self.parv"), "source self.parv\n".repeat(6)).unwrap();
    let t = std::time::Instant::now();
    let e = iosched::device::disksim::load_drive(&dir.join("self.parv")).unwrap_err().to_string();
    assert!(e.contains("cycle"), "{e}");
    // Two files sourcing each other.
    std::fs::write(dir.join("a.parv"), "source b.parv\n").unwrap();
    std::fs::write(dir.join("b.parv"), "source a.parv\n").unwrap();
    let e = iosched::device::disksim::load_drive(&dir.join("a.parv")).unwrap_err().to_string();
    assert!(e.contains("cycle") && e.contains("b.parv:1"), "{e}");
    // No cycle, but each of 12 files sources the next 8 times: 8^12 reads before.
    for i in 0..12 {
        std::fs::write(dir.join(format!("f{i}.parv")), format!("source f{}.parv\n", i + 1).repeat(8)).unwrap();
    }
    std::fs::write(dir.join("f12.parv"), "").unwrap();
    let e = iosched::device::disksim::load_drive(&dir.join("f0.parv")).unwrap_err().to_string();
    assert!(e.contains("more than 256 files sourced"), "{e}");
    assert!(t.elapsed().as_secs() < 10);
}

#[test]
fn scenario_range_errors_name_the_line() {
    let text = "[[process]]\nname = \"a\"\nfile_mib = 10\n[[process]]\nname = \"b\"\nfile_mib = 10\nthink_us = 1e17\n";
    let e = Scenario::parse(text, "l.toml").err().unwrap().to_string();
    assert!(e.starts_with("l.toml: field `process[1].think_us`") && e.ends_with("(line 7)"), "{e}");
    let e = Scenario::parse("[workload]\nkind = \"closed-queue\"\n[run]\nduration_s = 1e9\n", "l.toml").err().unwrap().to_string();
    assert!(e.contains("run.duration_s") && e.ends_with("(line 4)"), "{e}");
    let e = Scenario::parse("[workload]\nkind = \"closed-queue\"\n[[scheduler]]\nname = \"gstf\"\ngroup_cylinders = 1.5\n", "l.toml")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("group_cylinders") && e.ends_with("(line 3)"), "{e}");
    // A field of a dotted table (`[device.flash]`) is found in it, not at `[device]`'s header.
    let text = "[device]\npreset = \"samsung-970-evo-plus-1tb\"\n[device.flash]\nread_us = 50\nmapping_entry_bytes = 0\n[workload]\nkind = \"closed-queue\"\nrequests = 10\n[[scheduler]]\nname = \"fcfs\"\n";
    let e = Scenario::parse(text, "l.toml").err().unwrap().to_string();
    assert!(e.contains("`device.flash.mapping_entry_bytes`") && e.ends_with("(line 5)"), "{e}");
}

#[test]
fn a_scenario_path_that_is_a_device_is_refused() {
    let e = Scenario::read(Path::new("/dev/zero")).err().unwrap().to_string();
    assert_eq!(e, "/dev/zero: cannot read: not a regular file (it is a character device)");
    let e = Scenario::read(Path::new("/nonexistent.toml")).err().unwrap().to_string();
    assert_eq!(e, "/nonexistent.toml: cannot read: no such file");
}
