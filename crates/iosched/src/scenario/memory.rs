//! What a scenario's workload would take in memory to build, estimated from its counts before
//! anything is allocated: a scenario whose ranges are each allowed can still ask for tens of
//! gigabytes together (GnuLD: 64 instances x 10^6 objects; 100,000 processes, each with its own
//! latency statistics), and an allocation that fails aborts the process. Above `MAX_BUILD_BYTES`
//! the scenario is refused with the estimate and its largest part named.
//!
//! The per-unit costs were measured (peak RSS of `iosched run` with the count at two sizes, the
//! difference over the units; docs/scenarios.md#memory) and rounded up; the estimate is of the
//! tables built before the run and of what grows with the number of processes, not of the page
//! cache a [host] fills as it runs (bounded by `host.memory_mib`).

use super::Scenario;

/// The most a scenario's built workload may take: what a run must leave of a 16 GiB machine.
pub const MAX_BUILD_BYTES: u64 = 8 << 30;

/// A process (or a task, a thread, an application's client): its latency statistics (two
/// HdrHistograms of three significant digits) and state. Measured 216 KB.
pub const PROCESS_BYTES: u64 = 240_000;
/// A GnuLD object file with its sections' reads. Measured 1,530 B.
pub const GNULD_OBJECT_BYTES: u64 = 1_700;
/// An Andrew file (a repository's file and its plan). Measured 456 B.
pub const ANDREW_FILE_BYTES: u64 = 520;
/// An Apache document. Measured 32 B.
pub const APACHE_FILE_BYTES: u64 = 48;
/// An entry (directory or file) of a [host] tree, laid out. Measured 654 B.
pub const TREE_ENTRY_BYTES: u64 = 720;
/// A file of an FFSB file set. Measured 488 B.
pub const FFSB_FILE_BYTES: u64 = 560;
/// A closed queue's slot (a request in flight). Measured 88 B.
pub const QUEUE_SLOT_BYTES: u64 = 100;

/// The estimate, in parts: (what, units, bytes per unit).
pub fn parts(s: &Scenario) -> Vec<(String, u64, u64)> {
    let mut out: Vec<(String, u64, u64)> = Vec::new();
    let procs: u64 = s.process.iter().map(|p| p.count as u64).sum();
    if procs > 0 {
        out.push(("processes ([[process]] count)".into(), procs, PROCESS_BYTES));
    }
    if let Some(w) = &s.workload {
        if w.kind == "closed-queue" {
            out.push(("closed-queue slots (workload.queue_depth)".into(), w.queue_depth as u64, QUEUE_SLOT_BYTES));
        }
    }
    if let Some(a) = &s.app {
        let clients = a.clients.unwrap_or(2) as u64;
        match a.kind.as_str() {
            "gnuld" => {
                let n = (a.instances.unwrap_or(1) as u64).saturating_mul(a.objects.unwrap_or(385) as u64);
                out.push(("GnuLD objects (app.instances x app.objects)".into(), n, GNULD_OBJECT_BYTES));
                out.push(("GnuLD instances".into(), a.instances.unwrap_or(1) as u64, PROCESS_BYTES));
            }
            "andrew" => {
                let n = clients.saturating_mul(a.directories.unwrap_or(500) as u64).saturating_mul(a.files_per_dir.unwrap_or(71) as u64);
                out.push(("Andrew files (app.clients x app.directories x app.files_per_dir)".into(), n, ANDREW_FILE_BYTES));
                out.push(("Andrew clients".into(), clients, PROCESS_BYTES));
            }
            "apache" => {
                out.push(("Apache documents (app.files)".into(), a.files.unwrap_or(1) as u64, APACHE_FILE_BYTES));
                out.push(("Apache clients".into(), clients, PROCESS_BYTES));
            }
            _ => out.push(("clients".into(), clients, PROCESS_BYTES)),
        }
    }
    if let Some(h) = &s.host {
        let entries: u64 = h
            .tree
            .iter()
            .map(|t| {
                let spec = crate::host::fs::TreeSpec {
                    depth: t.depth.unwrap_or(2),
                    dirs_per_dir: t.dirs_per_dir.unwrap_or(4),
                    files_per_dir: t.files_per_dir.unwrap_or(16),
                    ..Default::default()
                };
                spec.dir_count().saturating_add(spec.file_count())
            })
            .fold(0u64, u64::saturating_add);
        if entries > 0 {
            out.push(("[host] tree entries".into(), entries, TREE_ENTRY_BYTES));
        }
    }
    let mut tasks = 0u64;
    for t in &s.task {
        tasks += 1;
        if let Some(f) = &t.ffsb {
            out.push((format!("FFSB files (task {}: ffsb.files)", t.name), f.files.unwrap_or(100_000), FFSB_FILE_BYTES));
            tasks += f.threads.unwrap_or(4) as u64;
        }
        // The S suite's background loads run ten jobs; make runs `jobs` compilers.
        tasks += t.jobs.unwrap_or(0) as u64 + if t.command == "s-background" { 10 } else { 0 };
    }
    if tasks > 0 {
        out.push(("tasks and their threads".into(), tasks, PROCESS_BYTES));
    }
    out
}

/// Refuses a scenario whose estimate exceeds `MAX_BUILD_BYTES`, naming the total and its largest
/// part, before anything is built.
pub fn check(s: &Scenario) -> Result<(), String> {
    let parts = parts(s);
    let bytes = |units: u64, each: u64| units as u128 * each as u128;
    let total: u128 = parts.iter().map(|(_, n, b)| bytes(*n, *b)).sum();
    if total <= MAX_BUILD_BYTES as u128 {
        return Ok(());
    }
    let (what, n, each) = parts.iter().max_by_key(|(_, n, b)| bytes(*n, *b)).expect("a total above 0 has parts");
    // A count that saturated is only known from below.
    let (about, count) = if *n == u64::MAX { ("at least", format!("more than {}", u64::MAX - 1)) } else { ("about", n.to_string()) };
    Err(format!(
        "the workload would take {about} {:.1} GiB of memory to build, more than the {} GiB a scenario may use: \
         {count} {what} at about {} bytes each = {about} {:.1} GiB (docs/scenarios.md#memory)",
        total as f64 / (1u64 << 30) as f64,
        MAX_BUILD_BYTES >> 30,
        each,
        bytes(*n, *each) as f64 / (1u64 << 30) as f64
    ))
}
