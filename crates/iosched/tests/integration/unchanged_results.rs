//! Every run's result stays what it was: the summaries of the project's scenario files (the
//! examples, experiments/perf27, experiments/flash, and one in eight of the reproductions'
//! scenarios), each cut short (at most 0.5 s simulated and 2,000 requests per workload), digested
//! and compared with `unchanged_results.txt`. A change meant to be exact (the speed-ups of
//! issue 27) must leave every digest as it is; a change that moves a result by design rewrites
//! the file and says in its commit which results moved and why:
//!
//! ```sh
//! IOSCHED_BLESS=1 cargo test --test integration unchanged_results
//! ```
//!
//! Scenarios that read ../shared (the traces, DiskSim's drives, MQSim's files) are skipped where
//! it is absent, and their lines are kept.

use iosched::scenario::{RunOptions, Scenario};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Longest simulated time and most requests of one cut-short run.
const MAX_DURATION_S: f64 = 0.5;
const MAX_REQUESTS: u64 = 2_000;
/// One reproduction scenario in this many (by sorted path) is run.
const REPRODUCTION_STRIDE: usize = 8;
/// Left out: the same aged PM9A3 as `pm9a3-randwrite-qd1.toml` at other depths (its aging
/// pass, about 10 s in a test build, runs before any request whatever the run's length).
const LEFT_OUT: &[&str] = &[
    "experiments/flash/pm9a3-randwrite-qd4.toml",
    "experiments/flash/pm9a3-randwrite-qd32.toml",
    "experiments/flash/pm9a3-randwrite-qd128.toml",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the repository")
}

fn shared() -> PathBuf {
    repo().join("../shared")
}

fn golden_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/unchanged_results.txt")
}

fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            toml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

/// The scenario files checked, as paths relative to the repository.
fn scenario_files() -> Vec<PathBuf> {
    let root = repo();
    let mut chosen = Vec::new();
    for dir in ["experiments/examples", "experiments/perf27", "experiments/flash"] {
        let mut files = Vec::new();
        toml_files(&root.join(dir), &mut files);
        chosen.extend(files);
    }
    let mut reproductions = Vec::new();
    toml_files(&root.join("docs/reproductions"), &mut reproductions);
    reproductions.sort();
    chosen.extend(reproductions.into_iter().step_by(REPRODUCTION_STRIDE));
    let mut rel: Vec<PathBuf> = chosen
        .iter()
        .map(|p| p.strip_prefix(&root).expect("under the repository").to_path_buf())
        .filter(|p| !LEFT_OUT.iter().any(|l| Path::new(l) == p))
        .collect();
    rel.sort();
    rel
}

/// FNV-1a, 64 bits: a digest that is the same on every platform and Rust version.
fn digest(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

enum Outcome {
    /// (label, digest, requests, mean response ms) per run.
    Ran(Vec<(String, String, u64, f64)>),
    Skipped(String),
}

fn run_file(rel: &Path) -> Outcome {
    let path = repo().join(rel);
    let mut text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", rel.display()));
    let uses_shared = text.contains("{traces}") || text.contains("shared/");
    if text.contains("{traces}") {
        let traces = shared().join("traces");
        if !traces.is_dir() {
            return Outcome::Skipped(format!("{} not found", traces.display()));
        }
        text = text.replace("{traces}", &traces.display().to_string());
    }
    let mut scn = match Scenario::parse(&text, &path.display().to_string()) {
        Ok(s) => s,
        Err(e) if uses_shared && !shared().is_dir() => return Outcome::Skipped(format!("../shared absent ({e})")),
        Err(e) => panic!("{}: {e}", rel.display()),
    };
    if let Some(w) = scn.workload.as_mut() {
        w.requests = w.requests.min(MAX_REQUESTS);
    }
    for p in &mut scn.process {
        p.requests = p.requests.map(|n| n.min(MAX_REQUESTS));
    }
    if scn.run.duration_s.is_some() || scn.workload.is_none() {
        scn.run.duration_s = Some(scn.run.duration_s().min(MAX_DURATION_S));
    }
    let runs =
        scn.run_with(RunOptions { keep_records: false, ..RunOptions::default() }).unwrap_or_else(|e| panic!("{}: {e}", rel.display()));
    Outcome::Ran(
        runs.iter()
            .map(|r| {
                let s = &r.summary;
                // Paths in a summary (a trace's) are named from the repository, wherever it is.
                let json = serde_json::to_string(s).expect("a summary serializes").replace(&repo().display().to_string(), "<repo>");
                (s.scheduler.clone(), digest(&json), s.requests, s.response_ms.mean)
            })
            .collect(),
    )
}

/// `path | label` -> the rest of its line.
fn read_golden() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(golden_path()).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut parts = l.splitn(3, " | ");
            let (p, label, rest) = (parts.next()?, parts.next()?, parts.next()?);
            Some((format!("{p} | {label}"), rest.to_string()))
        })
        .collect()
}

#[test]
fn every_scenario_files_results_are_unchanged() {
    let bless = std::env::var_os("IOSCHED_BLESS").is_some();
    let golden = read_golden();
    let mut now: BTreeMap<String, String> = BTreeMap::new();
    let mut skipped: Vec<String> = Vec::new();
    for rel in scenario_files() {
        let name = rel.display().to_string();
        match run_file(&rel) {
            Outcome::Ran(runs) => {
                for (i, (label, d, requests, mean)) in runs.into_iter().enumerate() {
                    // Two runs may share a label (a scheduler listed twice): number them.
                    now.insert(format!("{name} | {i}:{label}"), format!("{d} | {requests} requests, mean {mean:.6} ms"));
                }
            }
            Outcome::Skipped(why) => {
                // Keep the lines recorded where ../shared was present.
                for (k, v) in golden.range(format!("{name} | ")..format!("{name} |~")) {
                    now.insert(k.clone(), v.clone());
                }
                skipped.push(format!("{name}: {why}"));
            }
        }
    }
    if !skipped.is_empty() {
        eprintln!("skipped (what they read is absent here; their recorded lines are kept):\n  {}", skipped.join("\n  "));
    }
    if bless {
        let mut out = String::from(
            "# Digests of every checked run's summary (tests/integration/unchanged_results.rs): path | run | digest | headline.\n\
             # Rewritten by `IOSCHED_BLESS=1 cargo test --test integration unchanged_results`; say why in the commit.\n",
        );
        for (k, v) in &now {
            out.push_str(&format!("{k} | {v}\n"));
        }
        std::fs::write(golden_path(), out).expect("write the golden file");
        return;
    }
    let mut problems = Vec::new();
    for (k, v) in &now {
        match golden.get(k) {
            None => problems.push(format!("new: {k} | {v}")),
            Some(old) if old != v => problems.push(format!("moved: {k}\n    was {old}\n    now {v}")),
            Some(_) => {}
        }
    }
    for k in golden.keys().filter(|k| !now.contains_key(*k)) {
        problems.push(format!("gone: {k}"));
    }
    assert!(
        problems.is_empty(),
        "{} of {} runs differ from tests/integration/unchanged_results.txt (a result moved: if by design, \
         rerun with IOSCHED_BLESS=1 and say which and why in the commit):\n{}",
        problems.len(),
        now.len(),
        problems.join("\n")
    );
}
