//! The fuzzer itself works: every target's seeds and a fixed number of mutants of them (a count,
//! not a time: the same inputs on every machine) go through the readers without a failure. This
//! builds the fuzzer in the test profile (overflow checks and debug assertions on, as the fuzz
//! profile has them), which is the binary `.ci/fuzz.sh SECONDS SEED test` then runs for longer.

use std::process::Command;

#[test]
fn every_target_passes_its_seeds_and_two_hundred_mutants() {
    let crashes = std::env::temp_dir().join(format!("iosched-fuzz-test-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_iosched-fuzz"))
        .args(["--all", "--runs", "200", "--seconds", "3600", "--seed", "1", "--crashes"])
        .arg(&crashes)
        .output()
        .expect("the fuzzer starts");
    let _ = std::fs::remove_dir_all(&crashes);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the fuzzer failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for target in ["scenario", "disksim", "seek", "trace", "calibration", "trace-readers", "mqsim"] {
        assert!(stdout.lines().any(|l| l.starts_with(target) && l.contains("no failure")), "{target} did not run:\n{stdout}");
    }
}
