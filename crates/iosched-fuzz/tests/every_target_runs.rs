//! The fuzzer itself works: every target's seeds and a fixed number of mutants of them (a count,
//! not a time: the same inputs on every machine) go through the readers without a failure. This
//! builds the fuzzer in the test profile (overflow checks and debug assertions on, as the fuzz
//! profile has them), which is the binary `.ci/fuzz.sh SECONDS SEED test` then runs for longer.

use std::process::Command;

fn fuzzer() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iosched-fuzz"))
}

#[test]
fn every_target_passes_its_seeds_and_two_hundred_mutants() {
    // The targets as the fuzzer lists them (`--list`: its own TARGETS), not a copy of the list.
    let list = fuzzer().arg("--list").output().expect("the fuzzer starts");
    let targets: Vec<String> = String::from_utf8_lossy(&list.stdout).lines().map(str::to_string).collect();
    assert!(list.status.success() && !targets.is_empty(), "--list gave no targets");
    let crashes = std::env::temp_dir().join(format!("iosched-fuzz-test-{}", std::process::id()));
    let out = fuzzer()
        .args(["--all", "--runs", "200", "--seconds", "3600", "--seed", "1", "--crashes"])
        .arg(&crashes)
        .output()
        .expect("the fuzzer starts");
    let _ = std::fs::remove_dir_all(&crashes);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the fuzzer failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for target in &targets {
        assert!(stdout.lines().any(|l| l.starts_with(target.as_str()) && l.contains("no failure")), "{target} did not run:\n{stdout}");
    }
}
