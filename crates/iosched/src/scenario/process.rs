//! `[[process]]`: synthetic processes (patterns, think times, read models) as a scenario section.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessSection {
    #[serde(default = "d_proc_name")]
    pub name: String,
    #[serde(default = "d_count")]
    pub count: u32,
    #[serde(default = "d_pattern")]
    pub pattern: String,
    #[serde(default = "d_op")]
    pub op: String,
    #[serde(default = "d_proc_request_kib")]
    pub request_kib: f64,
    #[serde(default = "d_file_mib")]
    pub file_mib: f64,
    /// Think time between a completion and the next request (mean or maximum, by `think`).
    #[serde(default)]
    pub think_us: f64,
    /// "fixed", "uniform" (on [0, think_us]) or "exponential" (mean think_us).
    #[serde(default = "d_think")]
    pub think: String,
    /// Where the file starts; default: each process's file gets its own region, spread evenly.
    pub file_offset_mib: Option<f64>,
    #[serde(default)]
    pub start_us: f64,
    /// Stop after this many requests (default: run for `run.duration_s`).
    pub requests: Option<u64>,
    /// Group id (process group / session) shared by all instances of this entry; default: own pid.
    pub group: Option<u32>,
    /// Share for proportional-share schedulers (each instance gets this weight).
    #[serde(default = "d_weight")]
    pub weight: u32,
    /// "mmap" (page faults, no prefetch) or "read" (read() through a page cache with read-ahead).
    #[serde(default = "d_access")]
    pub access: String,
    /// read(): largest sequential read-ahead window (default 128 KiB, FreeBSD's vfs.read_max).
    pub readahead_kib: Option<f64>,
    /// read(): pages of this process's file the page cache keeps (default 32 MiB).
    pub page_cache_mib: Option<f64>,
    /// read(): time to copy one KiB from the page cache to the process (default 0).
    pub copy_us_per_kib: Option<f64>,
    /// Largest request the file system issues; longer accesses are split (0: never).
    #[serde(default)]
    pub max_transfer_kib: f64,
    /// think = "adversary": quick think times (think_us) before each long one.
    pub adversary_quick: Option<u32>,
    /// think = "adversary": the long think time, meant to be just past the anticipation timeout.
    pub adversary_wait_us: Option<f64>,
    /// The `count` instances run one after another (like `find -exec cat`: a new process per
    /// file): instance k+1 starts `chain_gap_us` after instance k exits; with
    /// `file_offset_mib`, instance k's file lies right after instance k-1's.
    #[serde(default)]
    pub chain: bool,
    /// chain: time from one instance's exit to the next one's first access.
    #[serde(default)]
    pub chain_gap_us: f64,
    /// Time from the last access's completion to the process's exit (default 0: at once); a
    /// chain's next instance starts `chain_gap_us` after the exit.
    #[serde(default)]
    pub exit_us: f64,
    /// Start only once the named `[[process]]` (an earlier entry with count = 1 and `requests`)
    /// has finished, `start_us` after its exit: phases of a workload.
    pub after: Option<String>,
    /// Accesses kept outstanding at once (asynchronous direct I/O, fio's iodepth); needs
    /// access = "mmap" or "direct" (no page cache). Default 1.
    pub iodepth: Option<u32>,
    /// Whether requests are synchronous (default true: reads, O_DIRECT writes).
    pub sync: Option<bool>,
    /// I/O priority class: "none" (default), "rt", "be" or "idle" (ionice -c).
    pub prio_class: Option<String>,
    /// I/O priority level 0 (highest) to 7 (default 4; ionice -n).
    pub prio_level: Option<u8>,
    /// The weight of this entry's group (cgroup io.weight, 1-1000); needs `group`.
    pub group_weight: Option<u32>,
    /// Requests are file-system metadata (Request::META).
    #[serde(default)]
    pub meta: bool,
    /// op = "mixed": the probability that an access is a read (fio's rwmixread / 100;
    /// default 0.5). Sequential and alternate patterns keep one position per direction.
    pub read_fraction: Option<f64>,
    /// At most this many accesses per second: access n is issued no earlier than n / rate_iops
    /// seconds after the process's first (fio's rate_iops, or rate / bs). Default: no cap.
    pub rate_iops: Option<f64>,
    /// The process issues nothing after this long from its first access (fio's runtime); it
    /// then counts as finished, as by `requests` (a later entry's `after` starts). Default:
    /// until `run.duration_s`.
    pub runtime_s: Option<f64>,
    /// Think only after every this many accesses (fio's thinktime_blocks; default 1).
    pub think_every: Option<u32>,
}

fn d_access() -> String {
    "mmap".into()
}

/// read() defaults. Read-ahead: FreeBSD's cluster read-ahead cap (`vfs.read_max` = 8 blocks of
/// 16 KiB, vfs_cluster.c). Page cache: a quarter of the paper's 128 MB machine per process.
pub const DEFAULT_READAHEAD_KIB: f64 = 128.0;
pub const DEFAULT_PAGE_CACHE_MIB: f64 = 32.0;
/// op = "mixed": fio's rwmixread default (50%).
pub const DEFAULT_READ_FRACTION: f64 = 0.5;

fn d_weight() -> u32 {
    1
}

fn d_proc_name() -> String {
    "process".into()
}
fn d_count() -> u32 {
    1
}
fn d_pattern() -> String {
    "sequential".into()
}
fn d_op() -> String {
    "read".into()
}
fn d_proc_request_kib() -> f64 {
    64.0
}
fn d_file_mib() -> f64 {
    1024.0
}
fn d_think() -> String {
    "fixed".into()
}
