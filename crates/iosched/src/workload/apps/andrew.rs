//! The scan phase of the Andrew benchmark (Iyer & Druschel 2001, section 4.3): each of k
//! clients has its own repository of n directories, each holding a copy of the same 71 small C
//! files; the scan phase runs grep and then wc over every directory in turn, each a new process
//! reading the directory's files whole through read().
//!
//! Layout (FFS as in FreeBSD 4.3): a new directory goes to a cylinder group with few
//! directories, so the directories of a repository are spread over the file system, while the
//! files of one directory are allocated next to each other in its cylinder group. We give every
//! directory its own slot of the file system, slots assigned by a seeded shuffle, and lay its
//! files out contiguously in name order (the order `cp` created them and `grep *` reads them).

use super::{normal_quantile, File, ProcDef, Script, Step, PAGE_BYTES};
use crate::request::SECTOR_BYTES;
use crate::time::Nanos;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_pcg::Pcg64;

#[derive(Clone, Debug, PartialEq)]
pub struct AndrewConfig {
    /// k: clients, each with its own repository (the paper: 2).
    pub clients: u32,
    /// n: directories per repository (the paper: 500).
    pub directories: u32,
    /// Files per directory (the paper: 71 C source files).
    pub files_per_dir: u32,
    /// Mean size of the standard file set (assumption: the Andrew benchmark's source tree is
    /// about 70 files totalling about 200 KB, Howard et al. 1988, so about 2.9 KB a file).
    pub file_mean_bytes: f64,
    /// Shape (sigma of the log) of the lognormal file sizes (assumption).
    pub file_size_sigma: f64,
    /// The file system: `[fs_start_sector, fs_start_sector + fs_sectors)`.
    pub fs_start_sector: u64,
    pub fs_sectors: u64,
    /// fork + exec of each grep or wc (assumption).
    pub exec_ns: Nanos,
    /// open + close of each file (assumption).
    pub open_ns: Nanos,
    /// grep's and wc's computation per KiB read (assumption).
    pub grep_ns_per_kib: f64,
    pub wc_ns_per_kib: f64,
    /// Bytes each read() asks for (GNU grep's 32 KiB buffer).
    pub read_bytes: u64,
    pub start_ns: Nanos,
}

impl Default for AndrewConfig {
    fn default() -> Self {
        AndrewConfig {
            clients: 2,
            directories: 500,
            files_per_dir: 71,
            file_mean_bytes: 200_000.0 / 70.0,
            file_size_sigma: 1.0,
            fs_start_sector: 0,
            fs_sectors: 4 << 21, // 4 GiB
            exec_ns: 1_000_000,
            open_ns: 30_000,
            grep_ns_per_kib: 20_000.0,
            wc_ns_per_kib: 30_000.0,
            read_bytes: 32 * 1024,
            start_ns: 0,
        }
    }
}

/// The repositories: files (client-major, then directory, then name order) and each
/// directory's place.
pub struct AndrewLayout {
    pub files: Vec<File>,
    /// The standard file set's sizes (bytes), the same in every directory.
    pub sizes: Vec<u64>,
}

impl AndrewLayout {
    /// Index of file `f` of directory `d` of client `c`.
    pub fn file_index(cfg: &AndrewConfig, c: u32, d: u32, f: u32) -> usize {
        ((c * cfg.directories + d) * cfg.files_per_dir + f) as usize
    }
}

/// Sectors a directory of the standard set occupies.
fn dir_sectors(sizes: &[u64]) -> u64 {
    sizes.iter().map(|&b| b.div_ceil(PAGE_BYTES).max(1) * PAGE_BYTES / SECTOR_BYTES).sum()
}

pub fn layout(cfg: &AndrewConfig, rng: &mut Pcg64) -> Result<AndrewLayout, String> {
    let mu = cfg.file_mean_bytes.ln() - cfg.file_size_sigma * cfg.file_size_sigma / 2.0;
    let sizes: Vec<u64> = (0..cfg.files_per_dir)
        .map(|_| (mu + cfg.file_size_sigma * normal_quantile(rng.gen::<f64>())).exp().round().max(1.0) as u64)
        .collect();
    let slots = cfg.clients as u64 * cfg.directories as u64;
    let slot = cfg.fs_sectors / slots / 8 * 8;
    let need = dir_sectors(&sizes);
    if slot < need {
        return Err(format!(
            "the file system ({} MiB) is too small for {slots} directories of {} KiB each",
            cfg.fs_sectors >> 11,
            need / 2
        ));
    }
    let mut order: Vec<u64> = (0..slots).collect();
    order.shuffle(rng);
    let mut files = Vec::with_capacity((slots * cfg.files_per_dir as u64) as usize);
    for &s in &order {
        let mut at = cfg.fs_start_sector / 8 * 8 + s * slot;
        for &b in &sizes {
            let f = File { start_sector: at, bytes: b };
            at = f.end_sector();
            files.push(f);
        }
    }
    Ok(AndrewLayout { files, sizes })
}

/// The scan phase: per client, grep then wc over each directory, each a process started when
/// the previous one exits. Process names: `grep{c}.{d}`, `wc{c}.{d}` (client from 1).
pub fn build(cfg: &AndrewConfig, rng: &mut Pcg64) -> Result<(Vec<File>, Vec<ProcDef>), String> {
    let lay = layout(cfg, rng)?;
    let mut defs = Vec::new();
    for c in 0..cfg.clients {
        for d in 0..cfg.directories {
            for (tool, per_kib) in [("grep", cfg.grep_ns_per_kib), ("wc", cfg.wc_ns_per_kib)] {
                let mut steps = vec![Step::Compute(cfg.exec_ns)];
                for (f, &size) in lay.sizes.iter().enumerate() {
                    steps.push(Step::Compute(cfg.open_ns));
                    let file = AndrewLayout::file_index(cfg, c, d, f as u32) as u32;
                    let mut off = 0;
                    while off < size {
                        let len = cfg.read_bytes.min(size - off);
                        steps.push(Step::Read { file, off, len });
                        steps.push(Step::Compute((per_kib * len as f64 / 1024.0).round() as Nanos));
                        off += len;
                    }
                }
                let first = defs.is_empty() || (d == 0 && tool == "grep");
                let index = defs.len();
                defs.push(ProcDef {
                    name: format!("{tool}{}.{d}", c + 1),
                    group: None,
                    weight: 1,
                    start_ns: first.then_some(cfg.start_ns),
                    next: None,
                    program: Box::new(Script(steps)),
                });
                if !first {
                    defs[index - 1].next = Some(index);
                }
            }
        }
    }
    Ok((lay.files, defs))
}
