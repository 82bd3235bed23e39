//! What the host tells about a run: per task (a top-level process with its children), the
//! page cache and writeback totals, and (when asked) the dirty-page timeline.

use super::page_cache::CacheStats;

/// One top-level task and every child it spawned (their I/O and time count here).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct TaskReport {
    pub name: String,
    pub pid: u32,
    pub start_s: Option<f64>,
    /// When it ran to its end (None: stopped by the run's end, or never started).
    pub exit_s: Option<f64>,
    /// exit - start (None if it had not finished when the run ended).
    pub elapsed_s: Option<f64>,
    /// Processes it spawned (each `cat` of a `find -exec cat`).
    pub children: u64,
    /// Bytes returned by read() and written by write() calls.
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Pages of file data it caused to be read from disk (its own misses and its readahead).
    pub data_pages_read: u64,
    /// Of `data_pages_read`, pages read ahead asynchronously (nobody waited for them then).
    pub prefetch_pages: u64,
    /// Pages of metadata (inode-table, directory and indirect blocks) it caused to be read.
    pub meta_pages_read: u64,
    /// Pages it wrote to disk itself (O_DIRECT, fsync, O_SYNC, or throttled writeback in 2.6).
    pub pages_written: u64,
    /// Time spent paused by dirty-page throttling (balance_dirty_pages).
    pub throttled_s: f64,
    /// CPU time its compute steps asked for.
    pub cpu_s: f64,
    /// Calls that failed (creating a file on a full file system, a path missing when the task
    /// started).
    pub errors: u64,
    /// The first failure's message.
    pub error: Option<String>,
    /// Per-iteration times the program measured (replay-startup's start-up times), in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub iterations_s: Vec<f64>,
    /// Named counts the program kept (video: frames, dropped; make: files compiled).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub counts: std::collections::BTreeMap<String, u64>,
}

/// One sample of the writeback state (`[host] sample_ms`).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Sample {
    pub t_s: f64,
    pub dirty_mib: f64,
    pub writeback_mib: f64,
    pub cached_mib: f64,
    pub background_mib: f64,
    pub limit_mib: f64,
    /// Bytes write() calls have put in the cache so far.
    pub written_mib: f64,
    /// Bytes of writes the disk has completed so far.
    pub disk_written_mib: f64,
    /// Bytes of reads the disk has completed so far (file data, metadata, direct reads).
    pub disk_read_mib: f64,
    /// Tasks paused by dirty throttling at this instant.
    pub throttled: u32,
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct HostReport {
    pub kernel: String,
    pub tasks: Vec<TaskReport>,
    pub cache: CacheStats,
    /// Pages the flusher wrote back.
    pub flusher_pages: u64,
    /// Dirty pages left when the run ended.
    pub dirty_pages_at_end: u64,
    pub timeline: Vec<Sample>,
}
