//! `[task.ffsb]`: the parameters of a `command = "ffsb"` task (workload/ffsb.rs) and its file
//! set, built into the host's tree before the run (FFSB's creation phase is not timed).

use crate::host::fs::{Kind, Tree};
use crate::host::Ino;
use crate::workload::ffsb::FfsbConfig;
use rand::Rng;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FfsbSection {
    /// The file set: `files` files spread over `dirs` directories below the task's `path`
    /// (default 100,000 in 100: Seelam et al.'s), sizes uniform in `[min_kib, max_kib]` (4, 64).
    pub dirs: Option<u32>,
    pub files: Option<u64>,
    pub min_kib: Option<f64>,
    pub max_kib: Option<f64>,
    /// Threads (default 4) and operations per thread (default 20,000).
    pub threads: Option<u32>,
    pub ops: Option<u64>,
    /// Operation weights (default 0; at least one must be positive).
    pub read: Option<u32>,
    pub write: Option<u32>,
    pub create: Option<u32>,
    pub append: Option<u32>,
    pub delete: Option<u32>,
    /// read() and write() sizes (default 4 KiB), bytes a write operation overwrites (4 KiB),
    /// bytes an append adds (4 KiB).
    pub read_bs_kib: Option<f64>,
    pub write_bs_kib: Option<f64>,
    pub write_kib: Option<f64>,
    pub append_kib: Option<f64>,
    /// fsync() after every write, create and append (default false).
    #[serde(default)]
    pub fsync: bool,
}

/// The most files a file set may hold, and threads a task may run.
pub const MAX_FFSB_FILES: u64 = 5_000_000;
pub const MAX_FFSB_THREADS: u32 = 1024;

fn kib(task: &str, field: &str, v: Option<f64>, default: f64, min: f64, max: f64) -> Result<u64, String> {
    let v = v.unwrap_or(default);
    if !(v.is_finite() && v >= min && v <= max) {
        return Err(format!("task `{task}`: field `ffsb.{field}` must be in [{min}, {max}], got {v}"));
    }
    Ok((v * 1024.0).round() as u64)
}

impl FfsbSection {
    /// The run's parameters, every field checked.
    pub fn config(&self, task: &str) -> Result<FfsbConfig, String> {
        let threads = self.threads.unwrap_or(4);
        if !(1..=MAX_FFSB_THREADS).contains(&threads) {
            return Err(format!("task `{task}`: field `ffsb.threads` must be in [1, {MAX_FFSB_THREADS}], got {threads}"));
        }
        let ops = self.ops.unwrap_or(20_000);
        if ops > 1 << 32 {
            return Err(format!("task `{task}`: field `ffsb.ops` must be in [0, 2^32], got {ops}"));
        }
        let weights = [self.read, self.write, self.create, self.append, self.delete].map(|w| w.unwrap_or(0));
        for (name, w) in ["read", "write", "create", "append", "delete"].iter().zip(weights) {
            if w > 1_000_000 {
                return Err(format!("task `{task}`: field `ffsb.{name}` must be in [0, 1000000], got {w}"));
            }
        }
        if weights.iter().all(|&w| w == 0) {
            return Err(format!(
                "task `{task}`: table `ffsb`: give at least one positive operation weight (read, write, create, append, delete)"
            ));
        }
        let min_bytes = kib(task, "min_kib", self.min_kib, 4.0, 0.0, 1_048_576.0)?;
        let max_bytes = kib(task, "max_kib", self.max_kib, 64.0, 0.0, 1_048_576.0)?;
        if max_bytes < min_bytes {
            return Err(format!(
                "task `{task}`: field `ffsb.max_kib` ({}) is below `ffsb.min_kib` ({})",
                max_bytes as f64 / 1024.0,
                min_bytes as f64 / 1024.0
            ));
        }
        Ok(FfsbConfig {
            threads,
            ops_per_thread: ops,
            weights,
            read_bs: kib(task, "read_bs_kib", self.read_bs_kib, 4.0, 0.5, 1_048_576.0)?,
            write_bs: kib(task, "write_bs_kib", self.write_bs_kib, 4.0, 0.5, 1_048_576.0)?,
            write_bytes: kib(task, "write_kib", self.write_kib, 4.0, 0.5, 1_048_576.0)?,
            append_bytes: kib(task, "append_kib", self.append_kib, 4.0, 0.5, 1_048_576.0)?,
            min_bytes,
            max_bytes,
            fsync: self.fsync,
        })
    }

    /// Adds the file set below `path` to `tree`: directories `dir000`... and files
    /// `file000000`... dealt to the directories in turn (file i to directory i mod dirs), each
    /// of a size drawn uniformly from `[min, max]` bytes. Returns the directories.
    pub fn build_files(&self, task: &str, path: &str, tree: &mut Tree, rng: &mut rand_pcg::Pcg64) -> Result<Vec<Ino>, String> {
        let cfg = self.config(task)?;
        let ndirs = self.dirs.unwrap_or(100);
        let files = self.files.unwrap_or(100_000);
        if !(1..=100_000).contains(&ndirs) {
            return Err(format!("task `{task}`: field `ffsb.dirs` must be in [1, 100000], got {ndirs}"));
        }
        // Thread i works on directories [i*dirs/threads, (i+1)*dirs/threads): with more threads
        // than directories some would have none and silently do nothing.
        if cfg.threads > ndirs {
            return Err(format!(
                "task `{task}`: field `ffsb.threads` ({}) exceeds `ffsb.dirs` ({ndirs}): every thread needs a directory",
                cfg.threads
            ));
        }
        if files > MAX_FFSB_FILES {
            return Err(format!("task `{task}`: field `ffsb.files` must be in [0, {MAX_FFSB_FILES}], got {files}"));
        }
        let root = tree.make_dirs(path).map_err(|e| format!("task `{task}`: field `path`: {e}"))?;
        if !tree.children(root).is_empty() {
            return Err(format!("task `{task}`: field `path` = `{path}`: the file set's directory must be new or empty"));
        }
        let dirs: Vec<Ino> = (0..ndirs)
            .map(|d| tree.add(root, &format!("dir{d:03}"), Kind::Dir, 0))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("task `{task}`: the file set: {e}"))?;
        for i in 0..files {
            let size = rng.gen_range(cfg.min_bytes..=cfg.max_bytes);
            let dir = dirs[(i % ndirs as u64) as usize];
            tree.add(dir, &format!("file{i:06}"), Kind::File, size).map_err(|e| format!("task `{task}`: the file set: {e}"))?;
        }
        Ok(dirs)
    }
}
