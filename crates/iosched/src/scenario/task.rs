//! `[[task]]`: one task of a simulated host: the command it runs and that command's fields.
//! scenario/host.rs builds the host's own commands from it, scenario/s_suite.rs the S suite's,
//! and scenario/ffsb.rs FFSB's file set (the `[task.ffsb]` subtable).

use super::ffsb::FfsbSection;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSection {
    pub name: String,
    /// cat, find-exec-cat, ls-lR, cat-all, tar, cp-r, dd, reader, drop-caches, sync (docs/host.md).
    pub command: String,
    /// The file or directory it works on.
    pub path: Option<String>,
    /// cp-r's destination, tar's archive (created if missing).
    pub to: Option<String>,
    /// Bytes per read() / write() (default 128 KiB: coreutils' cat and cp; dd's bs).
    pub bs_kib: Option<f64>,
    /// dd: bytes to write.
    pub size_mib: Option<f64>,
    /// dd: "direct" (O_DIRECT) or "sync" (O_SYNC); cat: "direct" (iflag=direct).
    pub flag: Option<String>,
    /// dd: fsync() at the end (conv=fsync).
    #[serde(default)]
    pub fsync: bool,
    /// cat: times to read the file (0: until the run ends; default 1).
    pub loops: Option<u64>,
    /// fork + exec of each child process (find -exec's cat), default 1000 us.
    pub exec_us: Option<f64>,
    #[serde(default)]
    pub start_ms: f64,
    /// Start when the task of this name exits (`start_ms` after it): phases of a scenario.
    pub after: Option<String>,
    /// The run ends when this task finishes (a measured task beside endless background ones).
    #[serde(default)]
    pub ends_run: bool,
    /// reader: "mmap" (default) or "read".
    pub access: Option<String>,
    /// reader: think time after each access (a sleep: the paper's pause), and its distribution: "fixed"
    /// (default), "uniform" (on [0, think_us]) or "adversary" (`adversary_quick` quick ones,
    /// then one of `adversary_wait_us`).
    pub think_us: Option<f64>,
    pub think: Option<String>,
    pub adversary_quick: Option<u32>,
    pub adversary_wait_us: Option<f64>,
    pub prio_class: Option<String>,
    pub prio_level: Option<u8>,
    #[serde(default = "d_weight")]
    pub weight: u32,
    /// ffsb: the file set, threads, operations and their weights (scenario/ffsb.rs).
    pub ffsb: Option<FfsbSection>,
    /// The S suite's commands (scenario/s_suite.rs, docs/s-suite.md): s-background's
    /// workload; replay-startup's and periodic's trace, iterations, pause, deltas; the writers'
    /// rate cap; video's fps, bit rate, clip length; periodic's period and first start; make's
    /// jobs, headers, CPU time, object size; git-checkout's inflation; the progress window.
    pub workload: Option<String>,
    pub sync_every_s: Option<f64>,
    pub trace: Option<String>,
    pub iterations: Option<u32>,
    pub pause_s: Option<f64>,
    pub settle_s: Option<f64>,
    pub short_startup_pause_s: Option<f64>,
    pub deltas: Option<bool>,
    pub async_ra: Option<bool>,
    pub rate_kib_s: Option<f64>,
    pub fps: Option<f64>,
    pub bitrate_kbit_s: Option<f64>,
    pub clip_s: Option<f64>,
    pub period_s: Option<f64>,
    pub start_after_s: Option<f64>,
    pub jobs: Option<u32>,
    pub headers: Option<String>,
    pub headers_per_file: Option<u32>,
    pub cpu_ms: Option<f64>,
    pub obj_ratio: Option<f64>,
    pub warmup_s: Option<f64>,
    pub window_s: Option<f64>,
    pub inflate_ratio: Option<f64>,
    pub inflate_us_per_kib: Option<f64>,
}

fn d_weight() -> u32 {
    1
}
