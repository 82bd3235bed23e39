//! `[host]`, `[[host.tree]]`, `[[host.file]]` and `[[task]]`: a simulated host (page cache,
//! writeback, readahead, a file system with metadata, CPUs) whose tasks run commands. A
//! scenario without `[host]` never builds one.

use super::task::TaskSection;
use crate::host::config::{HostConfig, KernelKind, RaAlgorithm};
use crate::host::cpu::CpuModel;
use crate::host::fs::{FsKind, Layout, SizeDist, Tree, TreeSpec};
use crate::host::kernel::{Kernel, Start, TaskDef};
use crate::host::readahead::RaConfig;
use crate::host::syscall::{Syscall, WriteMode};
use crate::host::writeback::{Throttle, WritebackConfig};
use crate::host::{Ino, PAGE_BYTES};
use crate::request::{IoPrio, PrioClass};
use crate::time::{ms_to_ns, us_to_ns, Nanos};
use crate::workload::commands::{self, Cat, CopyTree, Dd, FindExecCat, ListRecursive, ReadAccess, ReadAll, Reader};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HostSection {
    /// "linux" (default) or "freebsd".
    pub kernel: Option<String>,
    /// Memory for the page cache (default 1024 MiB).
    pub memory_mib: Option<f64>,
    /// Linux's /sys/block/<dev>/queue/read_ahead_kb (default 128).
    pub read_ahead_kb: Option<u64>,
    /// Linux's readahead algorithm: "ondemand" (default) or "2.6.9".
    pub readahead: Option<String>,
    /// vm.dirty_background_ratio (default 10), vm.dirty_ratio (20), vm.dirty_background_bytes
    /// and vm.dirty_bytes (0: use the ratios), vm.dirty_expire_centisecs (3000),
    /// vm.dirty_writeback_centisecs (500).
    pub dirty_background_ratio: Option<u32>,
    pub dirty_ratio: Option<u32>,
    pub dirty_background_bytes: Option<u64>,
    pub dirty_bytes: Option<u64>,
    pub dirty_expire_centisecs: Option<u32>,
    pub dirty_writeback_centisecs: Option<u32>,
    /// "io-less" (Linux 3.2+, default), "2.6" (balance_dirty_pages of 2.6.32) or "2.6.9"
    /// (2.6.9's; its dirty_ratio default is 40).
    pub dirty_throttle: Option<String>,
    /// "2.6.9": the defaults of `readahead` and `dirty_throttle` become "2.6.9".
    pub kernel_release: Option<String>,
    /// CPUs the tasks' compute steps share (0: unlimited, the default).
    pub cpus: Option<u32>,
    /// "ps" (processor sharing, default) or "rr" (round robin).
    pub cpu_sched: Option<String>,
    /// Round robin's quantum (default 10 ms).
    pub cpu_quantum_ms: Option<f64>,
    /// "ext2" (default with linux), "ext3" (ext2 with Linux 2.6.9's journal, ordered data) or
    /// "ffs" (default with freebsd).
    pub fs: Option<String>,
    /// The file system's partition (default: the whole disk).
    pub fs_start_mib: Option<f64>,
    pub fs_mib: Option<f64>,
    /// Record the dirty-page level every this many ms (a timeline in the host report).
    pub sample_ms: Option<f64>,
    /// CPU time of a system call's entry and exit (lmbench `lat_syscall null`; default 0).
    pub syscall_us: Option<f64>,
    /// Copy bandwidth between user and kernel memory, MB (10^6 B) per second (lmbench
    /// `bw_mem bcopy`); a read's or write's bytes cost CPU at this rate (default: free).
    pub copy_mb_s: Option<f64>,
    /// Trees of files present at the start, each under its `path`.
    #[serde(default)]
    pub tree: Vec<TreeSection>,
    /// Single files present at the start (or created empty: `size_mib = 0`).
    #[serde(default)]
    pub file: Vec<FileSection>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TreeSection {
    /// Where the tree's root goes (a directory, created with its parents).
    pub path: String,
    /// A listing as `find . -printf '%s %p\n'` prints it (relative to the scenario's directory).
    pub listing: Option<String>,
    /// Or a description: levels of directories below the root, directories per directory,
    /// files per directory, lognormal file sizes (mean and sigma of the log).
    pub depth: Option<u32>,
    pub dirs_per_dir: Option<u32>,
    pub files_per_dir: Option<u32>,
    pub file_mean_kib: Option<f64>,
    pub file_size_sigma: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileSection {
    pub path: String,
    #[serde(default)]
    pub size_mib: f64,
}

pub const DEFAULT_MEMORY_MIB: f64 = 1024.0;
pub const DEFAULT_TASK_BS_KIB: f64 = 128.0;
pub const DEFAULT_EXEC_US: f64 = 1000.0;
pub const COMMANDS: [&str; 11] = ["cat", "find-exec-cat", "ls-lR", "cat-all", "tar", "cp-r", "dd", "reader", "ffsb", "drop-caches", "sync"];

fn positive(field: &str, v: f64, max: f64) -> Result<f64, String> {
    if !(v.is_finite() && v > 0.0 && v <= max) {
        return Err(format!("field `{field}` must be in (0, {max}], got {v}"));
    }
    Ok(v)
}

impl HostSection {
    pub fn kernel(&self) -> Result<KernelKind, String> {
        match self.kernel.as_deref().unwrap_or("linux") {
            "linux" => Ok(KernelKind::Linux),
            "freebsd" => Ok(KernelKind::FreeBsd),
            other => Err(format!("field `host.kernel`: unknown kernel `{other}` (known: linux, freebsd)")),
        }
    }

    pub fn config(&self) -> Result<HostConfig, String> {
        let kernel = self.kernel()?;
        let memory_mib = positive("host.memory_mib", self.memory_mib.unwrap_or(DEFAULT_MEMORY_MIB), 16_777_216.0)?;
        let memory_pages = (memory_mib * (1 << 20) as f64 / PAGE_BYTES as f64).floor() as u64;
        if memory_pages < 1 {
            return Err(format!("field `host.memory_mib` = {memory_mib}: smaller than one 4 KiB page"));
        }
        let ra_kb = self.read_ahead_kb.unwrap_or(crate::host::readahead::DEFAULT_READ_AHEAD_KB);
        if ra_kb > 1 << 20 {
            return Err(format!("field `host.read_ahead_kb` must be in [0, 1048576], got {ra_kb}"));
        }
        let release_269 = match self.kernel_release.as_deref() {
            None => false,
            Some("2.6.9") if kernel == KernelKind::Linux => true,
            Some("2.6.9") => {
                return Err("field `host.kernel_release` = \"2.6.9\": a Linux release, not for `kernel = \"freebsd\"`".to_string())
            }
            Some(other) => return Err(format!("field `host.kernel_release`: unknown `{other}` (known: 2.6.9)")),
        };
        let ra_default = if release_269 { "2.6.9" } else { "ondemand" };
        let ra_algorithm = match self.readahead.as_deref().unwrap_or(ra_default) {
            "ondemand" => RaAlgorithm::OnDemand,
            "2.6.9" if kernel == KernelKind::Linux => RaAlgorithm::Linux269,
            "2.6.9" => return Err("field `host.readahead` = \"2.6.9\": a Linux readahead, not for `kernel = \"freebsd\"`".to_string()),
            other => return Err(format!("field `host.readahead`: unknown `{other}` (known: ondemand, 2.6.9)")),
        };
        let throttle = match self.dirty_throttle.as_deref().unwrap_or(if release_269 { "2.6.9" } else { "io-less" }) {
            "io-less" => Throttle::IoLess,
            "2.6" => Throttle::Legacy26,
            "2.6.9" => Throttle::Legacy269,
            other => return Err(format!("field `host.dirty_throttle`: unknown `{other}` (known: io-less, 2.6, 2.6.9)")),
        };
        let d = WritebackConfig::default();
        let writeback = WritebackConfig {
            dirty_background_ratio: self.dirty_background_ratio.unwrap_or(d.dirty_background_ratio),
            // 2.6.9's vm_dirty_ratio is 40 (mm/page-writeback.c of 2.6.9); 20 is later kernels'.
            dirty_ratio: self.dirty_ratio.unwrap_or(if throttle == Throttle::Legacy269 { 40 } else { d.dirty_ratio }),
            dirty_background_bytes: self.dirty_background_bytes.unwrap_or(d.dirty_background_bytes),
            dirty_bytes: self.dirty_bytes.unwrap_or(d.dirty_bytes),
            dirty_expire_centisecs: self.dirty_expire_centisecs.unwrap_or(d.dirty_expire_centisecs),
            // FreeBSD's syncer visits its worklist every second (files 30 s after dirtying).
            dirty_writeback_centisecs: self.dirty_writeback_centisecs.unwrap_or(if kernel == KernelKind::FreeBsd {
                100
            } else {
                d.dirty_writeback_centisecs
            }),
            throttle,
        };
        writeback.validate(memory_pages)?;
        let cpus = self.cpus.unwrap_or(0);
        if cpus > 4096 {
            return Err(format!("field `host.cpus` must be in [0, 4096] (0: unlimited), got {cpus}"));
        }
        let cpu = match (cpus, self.cpu_sched.as_deref().unwrap_or("ps")) {
            (0, _) => CpuModel::Unlimited,
            (c, "ps") => CpuModel::ProcessorSharing { cpus: c },
            (c, "rr") => {
                let q = positive("host.cpu_quantum_ms", self.cpu_quantum_ms.unwrap_or(10.0), 10_000.0)?;
                CpuModel::RoundRobin { cpus: c, quantum_ns: ms_to_ns(q) }
            }
            (_, other) => return Err(format!("field `host.cpu_sched`: unknown `{other}` (known: ps, rr)")),
        };
        let sample_ns = match self.sample_ms {
            None => None,
            Some(ms) => Some(ms_to_ns(positive("host.sample_ms", ms, 3_600_000.0)?)),
        };
        let syscall_ns = match self.syscall_us {
            None => 0,
            Some(us) if us.is_finite() && (0.0..=1e6).contains(&us) => crate::time::us_to_ns(us),
            Some(us) => return Err(format!("field `host.syscall_us` must be in [0, 1000000], got {us}")),
        };
        let copy_bytes_per_s = match self.copy_mb_s {
            None => 0,
            Some(mb) => (positive("host.copy_mb_s", mb, 1e9)? * 1e6).round() as u64,
        };
        Ok(HostConfig {
            kernel,
            memory_pages,
            readahead: RaConfig::from_kb(ra_kb),
            ra_algorithm,
            writeback,
            cpu,
            // Linux's BIO_MAX_PAGES (1 MiB); FreeBSD 4's MAXPHYS (128 KiB).
            max_bio_pages: if kernel == KernelKind::FreeBsd { crate::host::FREEBSD_MAXPHYS_PAGES } else { 256 },
            meta_block_pages: 1,
            sample_ns,
            syscall_cost: crate::host::syscall_cost::SyscallCost { syscall_ns, copy_bytes_per_s },
        })
    }

    fn fs_kind(&self, kernel: KernelKind) -> Result<FsKind, String> {
        match self.fs.as_deref().unwrap_or(if kernel == KernelKind::FreeBsd { "ffs" } else { "ext2" }) {
            "ext2" => Ok(FsKind::ext2()),
            "ext3" => Ok(FsKind::ext3()),
            "ffs" => Ok(FsKind::ffs()),
            other => Err(format!("field `host.fs`: unknown file system `{other}` (known: ext2, ext3, ffs)")),
        }
    }

    /// The file tree at the start: every `[[host.tree]]` and `[[host.file]]`.
    pub fn tree(&self, scenario_dir: Option<&Path>, seed: u64) -> Result<Tree, String> {
        let mut tree = Tree::new();
        for (i, t) in self.tree.iter().enumerate() {
            let field = format!("host.tree[{i}]");
            let sub = match &t.listing {
                Some(listing) => {
                    if t.depth.is_some() || t.dirs_per_dir.is_some() || t.files_per_dir.is_some() || t.file_mean_kib.is_some() {
                        return Err(format!(
                            "field `{field}.listing`: give a listing or a description (depth, dirs_per_dir, ...), not both"
                        ));
                    }
                    let rel = Path::new(listing);
                    let path = match scenario_dir {
                        Some(dir) if rel.is_relative() => dir.join(rel),
                        _ => rel.to_path_buf(),
                    };
                    let text = crate::input::read_text(&path, 1 << 30).map_err(|e| format!("field `{field}.listing`: {e}"))?;
                    crate::host::fs::parse_listing(&text, &path.display().to_string())?
                }
                None => {
                    let spec = TreeSpec {
                        depth: t.depth.unwrap_or(2),
                        dirs_per_dir: t.dirs_per_dir.unwrap_or(4),
                        files_per_dir: t.files_per_dir.unwrap_or(16),
                        file_size: SizeDist::Lognormal {
                            mean_bytes: positive(&format!("{field}.file_mean_kib"), t.file_mean_kib.unwrap_or(12.0), 1e9)? * 1024.0,
                            sigma: t.file_size_sigma.unwrap_or(1.0),
                        },
                        ..TreeSpec::default()
                    };
                    spec.build(&mut crate::workload::rng_stream(seed, 10_000 + i as u64)).map_err(|e| format!("field `{field}`: {e}"))?
                }
            };
            tree.graft(&t.path, &sub).map_err(|e| format!("field `{field}.path`: {e}"))?;
        }
        for (i, f) in self.file.iter().enumerate() {
            if !(f.size_mib.is_finite() && f.size_mib >= 0.0 && f.size_mib <= 16_777_216.0) {
                return Err(format!("field `host.file[{i}].size_mib` must be in [0, 16777216], got {}", f.size_mib));
            }
            tree.add_file(&f.path, (f.size_mib * (1 << 20) as f64) as u64).map_err(|e| format!("field `host.file[{i}].path`: {e}"))?;
        }
        Ok(tree)
    }

    /// The host with its tasks: the tree laid out on `[fs_start, fs_start + fs_sectors)` of a
    /// disk of `capacity` sectors.
    pub fn build(
        &self,
        tasks: &[TaskSection],
        capacity: u64,
        scenario_dir: Option<&Path>,
        seed: u64,
        stop_ns: Nanos,
    ) -> Result<Kernel, String> {
        let mut tree = self.tree(scenario_dir, seed)?;
        // FFSB's file sets exist before the run (its creation phase is not timed).
        for (i, t) in tasks.iter().enumerate() {
            match (t.command.as_str(), &t.ffsb) {
                ("ffsb", Some(f)) => {
                    let path = t.path.as_deref().ok_or_else(|| format!("task `{}`: command `ffsb` needs `path`", t.name))?;
                    f.build_files(&t.name, path, &mut tree, &mut crate::workload::rng_stream(seed, 30_000 + i as u64))?;
                }
                ("ffsb", None) => return Err(format!("task `{}`: command `ffsb` needs a `[task.ffsb]` table", t.name)),
                (c, Some(_)) => return Err(format!("task `{}`: table `ffsb` is for command `ffsb`, not `{c}`", t.name)),
                _ => {}
            }
        }
        // Output files named by tasks exist before the run (dd's, tar's): created empty.
        for t in tasks {
            let out = match t.command.as_str() {
                "dd" => t.path.as_deref(),
                "tar" => t.to.as_deref(),
                _ => None,
            };
            if let Some(p) = out {
                if tree.lookup(p).is_none() {
                    tree.add_file(p, 0).map_err(|e| format!("task `{}`: {e}", t.name))?;
                }
            }
        }
        // The S suite's commands make their files and build their programs now.
        let mut prepared = super::s_suite::prepare(tasks, &mut tree, scenario_dir)?;
        let defs = task_defs(tasks, &tree, &mut prepared)?;
        self.finish(tree, defs, capacity, seed, stop_ns)
    }
}

impl HostSection {
    /// An `[app]` of Iyer & Druschel run on this host: its files placed in the tree (Andrew's
    /// repositories are made by its own phases), its processes as tasks.
    pub fn build_app(
        &self,
        app: &super::AppSection,
        capacity: u64,
        scenario_dir: Option<&Path>,
        seed: u64,
        stop_ns: Nanos,
    ) -> Result<Kernel, String> {
        use crate::workload::apps::{andrew_host, on_host};
        let mut tree = self.tree(scenario_dir, seed)?;
        let mut rng = crate::workload::rng_stream(seed, 0);
        let defs = match app.kind.as_str() {
            "andrew" => {
                let base = app.andrew_config(0, 0);
                let phases = app.phases.clone().unwrap_or_else(|| andrew_host::PHASES.iter().map(|p| p.to_string()).collect());
                check_andrew_phases(&phases)?;
                andrew_host::build(&andrew_host::AndrewHostConfig { base, phases, ..Default::default() }, &mut tree, &mut rng)?
            }
            kind => {
                let (files, defs, _) = app.parts(capacity, seed)?;
                let objects = app.objects.unwrap_or(crate::workload::apps::gnuld::GnuldConfig::default().objects).max(1) as usize;
                let placed = on_host::place(&mut tree, &files, |i| match kind {
                    "apache" => "/www".to_string(),
                    "gnuld" => format!("/ld{}", i / objects + 1),
                    _ => format!("/db{}", i + 1),
                })?;
                let log = if kind == "apache" {
                    let ino = tree.add_file("/www-logs/access_log", 0)?;
                    Some(on_host::AccessLog { ino, line_bytes: APACHE_LOG_LINE_BYTES, end: Default::default() })
                } else {
                    None
                };
                on_host::tasks(defs, &placed, log)
            }
        };
        self.finish(tree, defs, capacity, seed, stop_ns)
    }
}

/// `app.phases`: known phases, each once, in the benchmark's order.
fn check_andrew_phases(phases: &[String]) -> Result<(), String> {
    {
        use crate::workload::apps::andrew_host::PHASES;
        if phases.is_empty() {
            return Err("field `app.phases`: give at least one phase".into());
        }
        let mut last = None;
        for p in phases {
            let Some(i) = PHASES.iter().position(|q| q == p) else {
                return Err(format!("field `app.phases`: unknown phase `{p}` (known: {})", PHASES.join(", ")));
            };
            if last.is_some_and(|l| i <= l) {
                return Err(format!("field `app.phases`: `{p}` is out of order (the order is {})", PHASES.join(", ")));
            }
            last = Some(i);
        }
        Ok(())
    }
}

impl HostSection {
    /// Lays the tree out on the partition and builds the kernel.
    fn finish(&self, tree: Tree, defs: Vec<TaskDef>, capacity: u64, seed: u64, stop_ns: Nanos) -> Result<Kernel, String> {
        let mut cfg = self.config()?;
        let start = (self.fs_start_mib.unwrap_or(0.0) * 2048.0) as u64;
        let sectors = match self.fs_mib {
            Some(m) => (positive("host.fs_mib", m, 1e9)? * 2048.0) as u64,
            None => capacity.saturating_sub(start),
        };
        if start.checked_add(sectors).is_none_or(|end| end > capacity) || sectors == 0 {
            return Err(format!(
                "fields `host.fs_start_mib`/`host.fs_mib`: the partition [{} MiB, {} MiB) does not fit the disk ({} MiB)",
                start / 2048,
                (start + sectors) / 2048,
                capacity / 2048
            ));
        }
        let kind = self.fs_kind(cfg.kernel)?;
        cfg.meta_block_pages = match kind {
            FsKind::Ffs { .. } => 4, // 16 KiB blocks: inode and directory blocks are read whole
            FsKind::Ext2 { .. } => 1,
        };
        let layout = Layout::build(&tree, kind, start, sectors, crate::workload::rng_stream(seed, 20_000))?;
        Ok(Kernel::new(cfg, tree, layout, defs, stop_ns, seed))
    }
}

/// An access-log line of Apache's common log format (about 100 bytes).
pub const APACHE_LOG_LINE_BYTES: u64 = 100;

fn lookup(tree: &Tree, task: &TaskSection, field: &str, path: Option<&str>) -> Result<Ino, String> {
    let p = path.ok_or_else(|| format!("task `{}`: command `{}` needs `{field}`", task.name, task.command))?;
    tree.lookup(p).ok_or_else(|| format!("task `{}`: field `{field}` = `{p}`: no such file or directory in the host's tree", task.name))
}

/// The program of task `t`, its paths looked up in `tree`.
fn program_for(t: &TaskSection, tree: &Tree) -> Result<Box<dyn crate::host::syscall::Program>, String> {
    let bs =
        (positive(&format!("task `{}`: field `bs_kib`", t.name), t.bs_kib.unwrap_or(DEFAULT_TASK_BS_KIB), 1_048_576.0)? * 1024.0) as u64;
    let exec_ns = us_to_ns(t.exec_us.unwrap_or(DEFAULT_EXEC_US).max(0.0));
    let dir = |ino: Ino, field: &str| -> Result<Ino, String> {
        if tree.is_dir(ino) {
            Ok(ino)
        } else {
            Err(format!("task `{}`: field `{field}` must name a directory", t.name))
        }
    };
    let file = |ino: Ino, field: &str| -> Result<Ino, String> {
        if tree.is_dir(ino) {
            Err(format!("task `{}`: field `{field}` must name a regular file", t.name))
        } else {
            Ok(ino)
        }
    };
    Ok(match t.command.as_str() {
        "cat" => {
            let ino = file(lookup(tree, t, "path", t.path.as_deref())?, "path")?;
            let direct = match t.flag.as_deref() {
                None => false,
                Some("direct") => true,
                Some(o) => return Err(format!("task `{}`: field `flag` = `{o}`: cat takes only \"direct\"", t.name)),
            };
            Box::new(Cat::new(ino, bs, t.loops.unwrap_or(1), direct, 0))
        }
        "find-exec-cat" => Box::new(FindExecCat::new(dir(lookup(tree, t, "path", t.path.as_deref())?, "path")?, bs, exec_ns)),
        "ls-lR" => Box::new(ListRecursive::new(dir(lookup(tree, t, "path", t.path.as_deref())?, "path")?)),
        "cat-all" => Box::new(ReadAll::new(dir(lookup(tree, t, "path", t.path.as_deref())?, "path")?, bs, None)),
        "tar" => {
            let root = dir(lookup(tree, t, "path", t.path.as_deref())?, "path")?;
            let archive = file(lookup(tree, t, "to", t.to.as_deref())?, "to")?;
            Box::new(ReadAll::new(root, bs, Some(archive)))
        }
        "cp-r" => {
            let src = dir(lookup(tree, t, "path", t.path.as_deref())?, "path")?;
            let to = t.to.as_deref().ok_or_else(|| format!("task `{}`: command `cp-r` needs `to`", t.name))?;
            let (parent_path, name) = match to.trim_end_matches('/').rsplit_once('/') {
                Some((p, n)) if !n.is_empty() => (if p.is_empty() { "/" } else { p }, n),
                _ => return Err(format!("task `{}`: field `to` = `{to}`: give an absolute path such as /copy", t.name)),
            };
            let parent = tree
                .lookup(parent_path)
                .ok_or_else(|| format!("task `{}`: field `to` = `{to}`: directory `{parent_path}` does not exist", t.name))?;
            if tree.lookup(to).is_some() {
                return Err(format!("task `{}`: field `to` = `{to}` exists already", t.name));
            }
            Box::new(CopyTree::new(src, dir(parent, "to")?, name.to_string(), bs))
        }
        "dd" => {
            let ino = file(lookup(tree, t, "path", t.path.as_deref())?, "path")?;
            let size = positive(&format!("task `{}`: field `size_mib`", t.name), t.size_mib.unwrap_or(0.0), 16_777_216.0)?;
            let mode = match t.flag.as_deref() {
                None => WriteMode::Buffered,
                Some("direct") => WriteMode::Direct,
                Some("sync") => WriteMode::Sync,
                Some(o) => return Err(format!("task `{}`: field `flag` = `{o}` (known: direct, sync)", t.name)),
            };
            Box::new(Dd::new(ino, bs, (size * (1 << 20) as f64) as u64, mode, t.fsync))
        }
        "reader" => {
            use crate::workload::think::Think;
            let ino = file(lookup(tree, t, "path", t.path.as_deref())?, "path")?;
            let access = match t.access.as_deref().unwrap_or("mmap") {
                "mmap" => ReadAccess::Mmap,
                "read" => ReadAccess::Read,
                o => return Err(format!("task `{}`: field `access` = `{o}` (known: mmap, read)", t.name)),
            };
            let think_us = t.think_us.unwrap_or(0.0);
            if !(think_us.is_finite() && (0.0..=3.6e9).contains(&think_us)) {
                return Err(format!("task `{}`: field `think_us` must be in [0, 3600000000], got {think_us}", t.name));
            }
            let think_ns = us_to_ns(think_us);
            let think = match t.think.as_deref().unwrap_or("fixed") {
                "fixed" => Think::Fixed(think_ns),
                "uniform" => Think::Uniform(think_ns),
                "adversary" => Think::Adversary {
                    quick_ns: think_ns,
                    quick: t.adversary_quick.unwrap_or(0),
                    wait_ns: us_to_ns(t.adversary_wait_us.unwrap_or(0.0).clamp(0.0, 3.6e9)),
                },
                o => return Err(format!("task `{}`: field `think` = `{o}` (known: fixed, uniform, adversary)", t.name)),
            };
            Box::new(Reader::new(ino, bs, access, think))
        }
        "ffsb" => {
            let root = dir(lookup(tree, t, "path", t.path.as_deref())?, "path")?;
            let section = t.ffsb.as_ref().ok_or_else(|| format!("task `{}`: command `ffsb` needs a `[task.ffsb]` table", t.name))?;
            let dirs: Vec<Ino> = tree.children(root).iter().copied().filter(|&c| tree.is_dir(c)).collect();
            Box::new(crate::workload::ffsb::Ffsb::new(section.config(&t.name)?, dirs))
        }
        "drop-caches" => commands::once(vec![Syscall::DropCaches]),
        _ => commands::once(vec![Syscall::Sync]),
    })
}

/// A task whose paths are looked up when it starts (they name what an earlier task makes).
struct Deferred {
    task: TaskSection,
    inner: Option<Box<dyn crate::host::syscall::Program>>,
}

impl crate::host::syscall::Program for Deferred {
    fn next(&mut self, tree: &Tree, rng: &mut rand_pcg::Pcg64, out: &mut std::collections::VecDeque<Syscall>) -> bool {
        if self.inner.is_none() {
            match program_for(&self.task, tree) {
                Ok(p) => self.inner = Some(p),
                Err(e) => {
                    // Reported in the task's results; the task ends.
                    out.push_back(Syscall::Fail(e));
                    self.inner = Some(commands::once(Vec::new()));
                    return true;
                }
            }
        }
        self.inner.as_mut().expect("built above").next(tree, rng, out)
    }
}

fn task_defs(
    tasks: &[TaskSection],
    tree: &Tree,
    prepared: &mut [Option<Box<dyn crate::host::syscall::Program>>],
) -> Result<Vec<TaskDef>, String> {
    let mut defs = Vec::new();
    for (i, t) in tasks.iter().enumerate() {
        if !COMMANDS.contains(&t.command.as_str()) && !super::s_suite::is_s_command(&t.command) {
            return Err(format!(
                "task `{}`: field `command`: unknown command `{}` (known: {}, {}, {})",
                t.name,
                t.command,
                COMMANDS.join(", "),
                super::s_suite::COMMANDS.join(", "),
                super::s_suite::GIT_CHECKOUT
            ));
        }
        // A task that runs after another may name what that one makes (cp -r's copy): its
        // paths are then looked up when it starts.
        let deferred = t.after.is_some()
            && [t.path.as_deref(), t.to.as_deref()].iter().flatten().any(|p| tree.lookup(p).is_none())
            && t.command != "cp-r";
        let program: Box<dyn crate::host::syscall::Program> = match prepared.get_mut(i).and_then(Option::take) {
            Some(p) => p,
            None if deferred => Box::new(Deferred { task: t.clone(), inner: None }),
            None => program_for(t, tree)?,
        };
        let start = match &t.after {
            None => Start::At(ms_to_ns(t.start_ms.max(0.0))),
            Some(name) => {
                let index = tasks
                    .iter()
                    .position(|o| &o.name == name)
                    .ok_or_else(|| format!("task `{}`: field `after` = `{name}`: no task of that name", t.name))?;
                Start::After { index, delay_ns: ms_to_ns(t.start_ms.max(0.0)) }
            }
        };
        let prio = IoPrio {
            class: match t.prio_class.as_deref() {
                None => PrioClass::None,
                Some(c) => PrioClass::parse(c).ok_or_else(|| {
                    format!("task `{}`: field `prio_class`: unknown class `{c}` (known: {})", t.name, PrioClass::NAMES.join(", "))
                })?,
            },
            level: t.prio_level.unwrap_or(IoPrio::default().level),
        };
        if prio.level > 7 {
            return Err(format!("task `{}`: field `prio_level` must be in [0, 7], got {}", t.name, prio.level));
        }
        defs.push(TaskDef { name: t.name.clone(), program, start, prio, weight: t.weight.max(1), ends_run: t.ends_run });
    }
    // `after` must not make a cycle (a task that never starts).
    for (i, t) in tasks.iter().enumerate() {
        let mut seen = vec![false; tasks.len()];
        let mut at = i;
        while let Some(name) = &tasks[at].after {
            if seen[at] {
                return Err(format!("task `{}`: the `after` fields make a cycle", t.name));
            }
            seen[at] = true;
            at = tasks.iter().position(|o| &o.name == name).unwrap_or(at);
        }
    }
    Ok(defs)
}
