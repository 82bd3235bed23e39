//! An Apache-like web server (Iyer & Druschel 2001, section 4.4): 48 server processes, each
//! serving one request after another from a trace-like stream. Apache 1.3's default handler
//! either mmap()s the file (files below 4 MB) and writes it to the socket in MMAP_SEGMENT_SIZE
//! (32 KiB) pieces (ap_send_mmap), the copy into the socket faulting the pages in, or reads it
//! with stdio (ap_send_fd_length: fread() of IOBUFSIZE, 8 KiB), whose buffer is the file's
//! st_blksize, so the kernel sees read()s of one 16 KiB file-system block each; each piece is
//! followed by its send to the client. The kernel side (FreeBSD 4's read-ahead, none for
//! faults) is the shared model of `super`.
//!
//! Request sizes: the paper gives the Berkeley CS trace's median (4768 B), mean (86 KB) and mean
//! without the largest 5% (13 KB), and that 1000 requests target 745 distinct files. We build a
//! document tree of `files` files requested with equal probability (1600 files give 745 distinct
//! in 1000 draws: 1600 (1 - (1 - 1/1600)^1000) = 744) whose sizes are the distribution's
//! quantiles at (i + 1/2) / files: a lognormal body (median 4768 B; sigma set so the smallest
//! 95% average 13 KB) below the 95th percentile and a Pareto tail above it, its index set so the
//! tree's mean is 86 KB. Heavy-tailed web file sizes with a lognormal body and a Pareto tail are
//! Barford & Crovella's SURGE model (1998).

use super::{normal_cdf, normal_quantile, File, ProcDef, Program, Step};
use crate::time::Nanos;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_pcg::Pcg64;
use std::collections::VecDeque;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every file through read().
    Read,
    /// Every file through mmap().
    Mmap,
    /// Apache's default: mmap below `mmap_limit_bytes`, read() above.
    Default,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ApacheConfig {
    /// Server processes, one per client connection (the paper: 3 machines x 16 clients).
    pub clients: u32,
    pub mode: Mode,
    /// Files in the document tree.
    pub files: u32,
    pub median_bytes: f64,
    pub mean_bytes: f64,
    /// Mean of the smallest 95% of requests.
    pub body_mean_bytes: f64,
    pub mmap_limit_bytes: u64,
    /// read(): bytes per read() system call: stdio's buffer, the file's st_blksize (the 16 KiB
    /// file-system block), which Apache's 8 KiB fread()s (IOBUFSIZE) go through.
    pub read_bytes: u64,
    /// mmap: bytes per write() from the mapping (Apache 1.3's MMAP_SEGMENT_SIZE, 32 KiB); the
    /// copy faults the pages in (the kernel model reads 9-16 pages per fault).
    pub fault_bytes: u64,
    /// Computation per request: accept, parse, stat/open, log (assumption).
    pub request_ns: Nanos,
    /// Computation per KiB sent: copy and checksum into the socket (assumption; the network is
    /// assumed not to be the bottleneck, as the paper's workload is disk-bound).
    pub send_ns_per_kib: f64,
    /// The document tree lies in `[fs_start_sector, fs_start_sector + fs_sectors)`, files in
    /// random order with random gaps (other files of the file system between them).
    pub fs_start_sector: u64,
    pub fs_sectors: u64,
    pub start_ns: Nanos,
}

impl Default for ApacheConfig {
    fn default() -> Self {
        ApacheConfig {
            clients: 48,
            mode: Mode::Default,
            files: 1600,
            median_bytes: 4768.0,
            mean_bytes: 86.0 * 1024.0,
            body_mean_bytes: 13.0 * 1024.0,
            mmap_limit_bytes: 4 << 20,
            read_bytes: 16 * 1024,
            fault_bytes: 32 * 1024,
            request_ns: 500_000,
            send_ns_per_kib: 10_000.0,
            fs_start_sector: 0,
            fs_sectors: 2 << 21, // 2 GiB
            start_ns: 0,
        }
    }
}

/// The size distribution: lognormal body below the 95th percentile, Pareto tail above.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeModel {
    pub mu: f64,
    pub sigma: f64,
    /// The 95th percentile, where the tail starts.
    pub tail_start: f64,
    pub alpha: f64,
}

const Z95: f64 = 1.6448536269514722;

impl SizeModel {
    pub fn quantile(&self, u: f64) -> f64 {
        if u < 0.95 {
            (self.mu + self.sigma * normal_quantile(u)).exp()
        } else {
            self.tail_start * (0.05 / (1.0 - u).max(1e-300)).powf(1.0 / self.alpha)
        }
    }

    /// Solves the body from the median and the mean of the smallest 95%, then the tail index so
    /// that a tree of `n` files at the quantiles (i + 1/2) / n has mean `mean`.
    pub fn solve(median: f64, body_mean: f64, mean: f64, n: u32) -> Result<SizeModel, String> {
        let mu = median.ln();
        // Mean of a lognormal below its 95th percentile: e^(mu + s^2/2) Phi(z95 - s) / 0.95.
        let body = |s: f64| (mu + s * s / 2.0).exp() * normal_cdf(Z95 - s) / 0.95;
        let (mut lo, mut hi) = (1e-3, 3.0);
        if !(body(lo) < body_mean && body_mean < body(hi)) {
            return Err(format!("no lognormal body has median {median} B and 95% mean {body_mean} B"));
        }
        for _ in 0..200 {
            let m = (lo + hi) / 2.0;
            if body(m) < body_mean {
                lo = m
            } else {
                hi = m
            }
        }
        let sigma = (lo + hi) / 2.0;
        let tail_start = (mu + sigma * Z95).exp();
        let tree_mean = |alpha: f64| {
            let m = SizeModel { mu, sigma, tail_start, alpha };
            (0..n).map(|i| m.quantile((i as f64 + 0.5) / n as f64)).sum::<f64>() / n as f64
        };
        let (mut lo, mut hi) = (0.2, 20.0);
        if !(tree_mean(hi) < mean && mean < tree_mean(lo)) {
            return Err(format!("no Pareto tail gives {n} files a mean of {mean} B"));
        }
        for _ in 0..200 {
            let m = (lo + hi) / 2.0;
            if tree_mean(m) > mean {
                lo = m
            } else {
                hi = m
            }
        }
        Ok(SizeModel { mu, sigma, tail_start, alpha: (lo + hi) / 2.0 })
    }
}

/// The document tree: file sizes at the quantiles, laid out in random order.
pub fn tree(cfg: &ApacheConfig, rng: &mut Pcg64) -> Result<(SizeModel, Vec<File>), String> {
    let model = SizeModel::solve(cfg.median_bytes, cfg.body_mean_bytes, cfg.mean_bytes, cfg.files)?;
    let mut sizes: Vec<u64> = (0..cfg.files).map(|i| model.quantile((i as f64 + 0.5) / cfg.files as f64).round().max(1.0) as u64).collect();
    sizes.shuffle(rng);
    let used: u64 = sizes.iter().map(|&b| b.div_ceil(4096).max(1) * 8).sum();
    if used > cfg.fs_sectors {
        return Err(format!("the document tree ({} MiB) does not fit in the file system ({} MiB)", used >> 11, cfg.fs_sectors >> 11));
    }
    // Gaps uniform on [0, 2 g] with g the free space per file: the tree spans the file system.
    // A gap never leaves too little room for the files still to place.
    let gap = (cfg.fs_sectors - used) / cfg.files as u64 / 8;
    let fs_start = cfg.fs_start_sector.div_ceil(8) * 8;
    let fs_end = cfg.fs_start_sector + cfg.fs_sectors;
    let mut still_needed = used;
    let mut at = fs_start;
    let mut files = Vec::with_capacity(sizes.len());
    for b in sizes {
        let room = fs_end.saturating_sub(at + still_needed) / 8;
        at += rng.gen_range(0..=2 * gap).min(room) * 8;
        let f = File { start_sector: at, bytes: b };
        still_needed -= b.div_ceil(4096).max(1) * 8;
        at = f.end_sector();
        files.push(f);
    }
    Ok((model, files))
}

struct Server {
    tree: Arc<Vec<File>>,
    cfg: ApacheConfig,
}

impl Program for Server {
    fn refill(&mut self, rng: &mut Pcg64, steps: &mut VecDeque<Step>) -> bool {
        let file = rng.gen_range(0..self.tree.len());
        let size = self.tree[file].bytes;
        let mmap = match self.cfg.mode {
            Mode::Read => false,
            Mode::Mmap => true,
            Mode::Default => size < self.cfg.mmap_limit_bytes,
        };
        let chunk = if mmap { self.cfg.fault_bytes } else { self.cfg.read_bytes };
        steps.push_back(Step::Compute(self.cfg.request_ns));
        let mut off = 0;
        while off < size {
            let len = chunk.min(size - off);
            let file = file as u32;
            steps.push_back(if mmap { Step::Fault { file, off, len } } else { Step::Read { file, off, len } });
            steps.push_back(Step::Compute((self.cfg.send_ns_per_kib * len as f64 / 1024.0).round() as Nanos));
            off += len;
        }
        true
    }
}

/// Files: the document tree. Processes: `httpd1`, `httpd2`, ...
pub fn build(cfg: &ApacheConfig, rng: &mut Pcg64) -> Result<(Vec<File>, Vec<ProcDef>), String> {
    let (_, files) = tree(cfg, rng)?;
    let shared = Arc::new(files.clone());
    let defs = (0..cfg.clients)
        .map(|c| ProcDef {
            name: format!("httpd{}", c + 1),
            group: None,
            weight: 1,
            start_ns: Some(cfg.start_ns),
            next: None,
            program: Box::new(Server { tree: shared.clone(), cfg: cfg.clone() }) as Box<dyn Program>,
        })
        .collect();
    Ok((files, defs))
}

/// Draws `n` request sizes as the servers do (uniform over the tree).
pub fn sample_request_sizes(files: &[File], n: usize, rng: &mut Pcg64) -> Vec<u64> {
    (0..n).map(|_| files[rng.gen_range(0..files.len())].bytes).collect()
}
