//! Application workloads of Iyer & Druschel 2001, sections 4.3-4.7, modelled by mechanism:
//! processes that run a script of steps (read() or page-fault accesses to byte ranges of files,
//! computation, delayed writes) through a small kernel model (a shared page cache filled in
//! file-system blocks, FreeBSD-like sequential read-ahead for read(), none for faults).
//!
//! - [`andrew`]: the Andrew benchmark's scan phase (grep and wc over directories of small files).
//! - [`apache`]: a multi-process web server (mmap below 4 MB, read() above).
//! - [`gnuld`]: the GNU linker (headers of all object files, then a few sections of each).
//! - [`tpcb`]: TPC-B-like clients (a random 4 KiB record per transaction; update or select).
//!
//! The kernel model mirrors `process.rs`'s read(): a read that continues where the previous read
//! of the same open file ended (or restarts at offset 0 of a file read sequentially) is
//! sequential; the read-ahead window is the sequential run so far, capped at `readahead`; pages
//! of the window after the read that are neither cached nor on their way are read
//! asynchronously. Unlike `process.rs`, a miss reads the whole file-system block around it
//! (clipped to the end of the file: UFS reads whole blocks, and a small file's tail is its
//! fragments), the cache is shared by all processes of the workload, and a page on its way for
//! another process is waited for, not read twice.

pub mod andrew;
pub mod apache;
pub mod gnuld;
pub mod tpcb;

use super::page_cache::PageCache;
use super::process::PAGE_SECTORS;
use super::{rng_stream, Emit, NewRequest, ProcessInfo, Workload};
use crate::request::{Op, Principal, Request, SECTOR_BYTES};
use crate::sched::ProcessEvent;
use crate::time::Nanos;
use rand_pcg::Pcg64;
use std::collections::{HashMap, VecDeque};

/// Bytes in one page of the page cache.
pub const PAGE_BYTES: u64 = PAGE_SECTORS * SECTOR_BYTES;

/// A file: a contiguous extent starting on a page boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct File {
    pub start_sector: u64,
    pub bytes: u64,
}

impl File {
    pub fn pages(&self) -> u64 {
        self.bytes.div_ceil(PAGE_BYTES).max(1)
    }

    /// Sectors the file occupies on disk (whole pages).
    pub fn sectors(&self) -> u64 {
        self.pages() * PAGE_SECTORS
    }

    pub fn end_sector(&self) -> u64 {
        self.start_sector + self.sectors()
    }
}

/// One step of a process's script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// read() of bytes `[off, off + len)` of `file`: page cache, read-ahead when sequential.
    Read { file: u32, off: u64, len: u64 },
    /// A page-fault access to bytes `[off, off + len)` of a mapped file: missing blocks are
    /// read synchronously, nothing is prefetched (FreeBSD's VM system, section 4).
    Fault { file: u32, off: u64, len: u64 },
    /// Computation.
    Compute(Nanos),
    /// A write of bytes `[off, off + len)` that the kernel delays: the process goes on at once,
    /// the syncer writes the pages back asynchronously `delay_ns` later.
    DelayedWrite { file: u32, off: u64, len: u64, delay_ns: Nanos },
}

/// A process's behaviour: appends its next steps (false: the process has ended).
pub trait Program: Send {
    fn refill(&mut self, rng: &mut Pcg64, steps: &mut VecDeque<Step>) -> bool;
}

/// A fixed script.
pub struct Script(pub Vec<Step>);

impl Program for Script {
    fn refill(&mut self, _rng: &mut Pcg64, steps: &mut VecDeque<Step>) -> bool {
        if self.0.is_empty() {
            return false;
        }
        steps.extend(self.0.drain(..));
        true
    }
}

/// A process to run: its program, when it starts, and who runs after it.
pub struct ProcDef {
    pub name: String,
    pub group: Option<u32>,
    pub weight: u32,
    /// Start time; None: started when the process whose `next` names it exits.
    pub start_ns: Option<Nanos>,
    /// The process started when this one exits (index into the list), as a shell script's next command.
    pub next: Option<usize>,
    pub program: Box<dyn Program>,
}

/// The kernel side: block size, read-ahead cap, largest transfer, page cache size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelModel {
    /// File-system block (pages): a miss reads the whole block, clipped to the end of the file.
    pub block_pages: u64,
    /// Largest read-ahead window (pages); 0 = none.
    pub readahead_pages: u64,
    /// Longer requests are split into parts (sectors; 0 = never).
    pub max_transfer_sectors: u64,
    /// Pages the shared page cache keeps (LRU).
    pub cache_pages: usize,
}

/// What a process did, counted by the workload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct AppStats {
    /// read() calls and faulting accesses.
    pub accesses: u64,
    /// Accesses whose pages were all cached: no wait.
    pub cache_hits: u64,
    pub sync_requests: u64,
    pub prefetch_requests: u64,
    pub delayed_writes: u64,
    /// Bytes the process asked for.
    pub bytes: u64,
    pub start_ns: Option<Nanos>,
    pub exit_ns: Option<Nanos>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    NotStarted,
    Running,
    Done,
}

struct Proc {
    info: ProcessInfo,
    principal: Principal,
    weight: u32,
    start_ns: Option<Nanos>,
    next: Option<usize>,
    program: Box<dyn Program>,
    steps: VecDeque<Step>,
    rng: Pcg64,
    /// Requests the current access waits for.
    waiting: u32,
    /// Per open file: (offset where the previous read ended, sequential run in bytes).
    seq: HashMap<u32, (u64, u64)>,
    state: State,
    stats: AppStats,
}

struct Kernel {
    model: KernelModel,
    cache: PageCache,
    /// Absolute page -> start sector of the read bringing it in.
    inflight: HashMap<u64, u64>,
    /// Start sector of a read in flight -> processes waiting for it.
    waiters: HashMap<u64, Vec<usize>>,
}

const WRITE_TOKEN: u64 = 1 << 63;

/// Processes running programs against a shared kernel model.
pub struct AppWorkload {
    files: Vec<File>,
    procs: Vec<Proc>,
    kernel: Kernel,
    by_pid: HashMap<u32, usize>,
    syncer: Principal,
    writes: Vec<Option<NewRequest>>,
    /// No process starts a step at or after this time; delayed writes due after it are dropped.
    pub stop_ns: Nanos,
}

impl AppWorkload {
    /// `first_pid`: the pid of the first process (the others follow; the syncer comes last).
    /// Process i draws from PCG stream `stream_base + i`.
    pub fn new(files: Vec<File>, defs: Vec<ProcDef>, model: KernelModel, stop_ns: Nanos, seed: u64, stream_base: u64) -> Self {
        let n = defs.len() as u32;
        let procs: Vec<Proc> = defs
            .into_iter()
            .enumerate()
            .map(|(i, d)| {
                let pid = i as u32 + 1;
                Proc {
                    info: ProcessInfo { pid, name: d.name },
                    principal: Principal { pid, group: d.group.unwrap_or(pid) },
                    weight: d.weight,
                    start_ns: d.start_ns,
                    next: d.next,
                    program: d.program,
                    steps: VecDeque::new(),
                    rng: rng_stream(seed, stream_base + i as u64),
                    waiting: 0,
                    seq: HashMap::new(),
                    state: State::NotStarted,
                    stats: AppStats::default(),
                }
            })
            .collect();
        let by_pid = procs.iter().enumerate().map(|(i, p)| (p.principal.pid, i)).collect();
        AppWorkload {
            files,
            procs,
            kernel: Kernel { model, cache: PageCache::new(model.cache_pages), inflight: HashMap::new(), waiters: HashMap::new() },
            by_pid,
            syncer: Principal { pid: n + 1, group: n + 1 },
            writes: Vec::new(),
            stop_ns,
        }
    }

    pub fn files(&self) -> &[File] {
        &self.files
    }

    /// Per-process statistics, in process order (the syncer is not included).
    pub fn stats(&self) -> Vec<(ProcessInfo, AppStats)> {
        self.procs.iter().map(|p| (p.info.clone(), p.stats)).collect()
    }

    /// The pid of the syncer, which issues the delayed writes.
    pub fn syncer_pid(&self) -> u32 {
        self.syncer.pid
    }

    fn begin(&mut self, i: usize, now: Nanos, out: &mut Emit) {
        let p = &mut self.procs[i];
        p.state = State::Running;
        p.stats.start_ns = Some(now);
        out.process_event(ProcessEvent::Started { principal: p.principal, weight: p.weight });
        self.run(i, now, out);
    }

    fn exit(&mut self, i: usize, now: Nanos, out: &mut Emit) {
        let p = &mut self.procs[i];
        p.state = State::Done;
        p.stats.exit_ns = Some(now);
        out.process_event(ProcessEvent::Exited(p.principal));
        if let Some(n) = p.next {
            if now < self.stop_ns && self.procs[n].state == State::NotStarted {
                self.begin(n, now, out);
            }
        }
    }

    /// Runs process `i` until it waits for the disk, computes, or ends.
    fn run(&mut self, i: usize, now: Nanos, out: &mut Emit) {
        loop {
            if now >= self.stop_ns {
                return self.exit(i, now, out);
            }
            let p = &mut self.procs[i];
            let Some(step) = p.steps.pop_front() else {
                if !p.program.refill(&mut p.rng, &mut p.steps) || p.steps.is_empty() {
                    return self.exit(i, now, out);
                }
                continue;
            };
            match step {
                Step::Compute(d) => {
                    if d > 0 {
                        out.timer(now + d, i as u64);
                        return;
                    }
                }
                Step::Read { file, off, len } => {
                    if self.access(i, file, off, len, true, now, out) {
                        return;
                    }
                }
                Step::Fault { file, off, len } => {
                    if self.access(i, file, off, len, false, now, out) {
                        return;
                    }
                }
                Step::DelayedWrite { file, off, len, delay_ns } => {
                    let f = self.files[file as usize];
                    let (p0, p1) = page_range(&f, off, len);
                    for pg in p0..p1 {
                        self.kernel.cache.insert(f.start_sector / PAGE_SECTORS + pg);
                    }
                    self.procs[i].stats.delayed_writes += 1;
                    let at = now.saturating_add(delay_ns);
                    if at < self.stop_ns {
                        let req = NewRequest {
                            principal: self.syncer,
                            op: Op::Write,
                            sync: false,
                            start_sector: f.start_sector + p0 * PAGE_SECTORS,
                            size_sectors: ((p1 - p0) * PAGE_SECTORS) as u32,
                            flags: 0,
                        };
                        out.timer(at, WRITE_TOKEN | self.writes.len() as u64);
                        self.writes.push(Some(req));
                    }
                }
            }
        }
    }

    /// One read() (`readahead`) or faulting access. True if the process now waits for the disk.
    #[allow(clippy::too_many_arguments)]
    fn access(&mut self, i: usize, file: u32, off: u64, len: u64, read: bool, now: Nanos, out: &mut Emit) -> bool {
        let f = self.files[file as usize];
        let k = &mut self.kernel;
        let p = &mut self.procs[i];
        p.stats.accesses += 1;
        p.stats.bytes += len.min(f.bytes.saturating_sub(off));
        let base = f.start_sector / PAGE_SECTORS;
        let (p0, p1) = page_range(&f, off, len);
        let mut sequential = false;
        let mut seq_bytes = 0;
        if read {
            let e = p.seq.entry(file).or_insert((0, 0));
            sequential = off == e.0 || (off == 0 && e.1 > 0);
            e.1 = if sequential { e.1 + len } else { 0 };
            e.0 = off + len;
            seq_bytes = e.1;
        }
        // The access's own pages: cached ones are used, ones on their way are waited for, the
        // blocks holding missing ones are read synchronously.
        let mut keys: Vec<u64> = Vec::new();
        let mut missing_blocks: Vec<u64> = Vec::new();
        for pg in p0..p1 {
            if k.cache.touch(base + pg) {
                continue;
            }
            if let Some(&key) = k.inflight.get(&(base + pg)) {
                if !keys.contains(&key) {
                    keys.push(key);
                }
                continue;
            }
            let b = pg / k.model.block_pages;
            if missing_blocks.last() != Some(&b) {
                missing_blocks.push(b);
            }
        }
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for b in missing_blocks {
            for pg in b * k.model.block_pages..((b + 1) * k.model.block_pages).min(f.pages()) {
                let abs = base + pg;
                if k.cache.contains(abs) || k.inflight.contains_key(&abs) {
                    continue;
                }
                match runs.last_mut() {
                    Some((s, n)) if *s + *n == abs => *n += 1,
                    _ => runs.push((abs, 1)),
                }
            }
        }
        let max = k.model.max_transfer_sectors;
        let parts: u64 = runs.iter().map(|&(_, n)| if max == 0 { 1 } else { (n * PAGE_SECTORS).div_ceil(max) }).sum();
        let before = out.arrivals.len();
        for (abs, n) in runs {
            submit(k, out, now, p.principal, abs, n, true, parts > 1, &mut keys);
        }
        // Read-ahead after a sequential read().
        let window = seq_bytes.min(k.model.readahead_pages * PAGE_BYTES);
        if sequential && window > 0 {
            let end = (off + len).min(f.bytes);
            let from = end.div_ceil(PAGE_BYTES);
            let to = (end + window).min(f.bytes).div_ceil(PAGE_BYTES);
            let mut run: Option<(u64, u64)> = None;
            let mut ignore = Vec::new();
            for pg in from..to.max(from) {
                let abs = base + pg;
                if k.cache.contains(abs) || k.inflight.contains_key(&abs) {
                    if let Some((s, n)) = run.take() {
                        submit(k, out, now, p.principal, s, n, false, false, &mut ignore);
                    }
                    continue;
                }
                run = Some(match run {
                    Some((s, n)) => (s, n + 1),
                    None => (abs, 1),
                });
            }
            if let Some((s, n)) = run {
                submit(k, out, now, p.principal, s, n, false, false, &mut ignore);
            }
        }
        for (_, r) in &out.arrivals[before..] {
            if r.sync {
                p.stats.sync_requests += 1;
            } else {
                p.stats.prefetch_requests += 1;
            }
        }
        if keys.is_empty() {
            p.stats.cache_hits += 1;
            return false;
        }
        p.waiting = keys.len() as u32;
        for key in keys {
            k.waiters.entry(key).or_default().push(i);
        }
        true
    }
}

/// Pages `[p0, p1)` of `f` holding bytes `[off, off + len)` (at least one page, within the file).
fn page_range(f: &File, off: u64, len: u64) -> (u64, u64) {
    let p0 = (off / PAGE_BYTES).min(f.pages() - 1);
    let p1 = (off + len.max(1)).div_ceil(PAGE_BYTES).clamp(p0 + 1, f.pages());
    (p0, p1)
}

/// Submits absolute pages `[abs, abs + n)` split at the maximum transfer; records them as on
/// their way and pushes each part's start sector on `keys`.
#[allow(clippy::too_many_arguments)]
fn submit(
    k: &mut Kernel,
    out: &mut Emit,
    now: Nanos,
    principal: Principal,
    abs: u64,
    n: u64,
    sync: bool,
    split: bool,
    keys: &mut Vec<u64>,
) {
    let max = if k.model.max_transfer_sectors == 0 { n * PAGE_SECTORS } else { k.model.max_transfer_sectors };
    let mut at = abs * PAGE_SECTORS;
    let end = (abs + n) * PAGE_SECTORS;
    while at < end {
        let size = max.min(end - at);
        for pg in at / PAGE_SECTORS..(at + size) / PAGE_SECTORS {
            k.inflight.insert(pg, at);
        }
        keys.push(at);
        out.submit(
            now,
            NewRequest {
                principal,
                op: Op::Read,
                sync,
                start_sector: at,
                size_sectors: size as u32,
                flags: if split { Request::SPLIT } else { 0 },
            },
        );
        at += size;
    }
}

impl Workload for AppWorkload {
    fn start(&mut self, out: &mut Emit) {
        out.process_event(ProcessEvent::Started { principal: self.syncer, weight: 1 });
        for (i, p) in self.procs.iter().enumerate() {
            if let Some(t) = p.start_ns {
                out.timer(t, i as u64);
            }
        }
    }

    fn on_complete(&mut self, req: &Request, now: Nanos, out: &mut Emit) {
        if req.op != Op::Read {
            return;
        }
        let k = &mut self.kernel;
        for pg in req.start_sector / PAGE_SECTORS..req.end_sector().div_ceil(PAGE_SECTORS) {
            if k.inflight.get(&pg) == Some(&req.start_sector) {
                k.inflight.remove(&pg);
            }
            k.cache.insert(pg);
        }
        for i in k.waiters.remove(&req.start_sector).unwrap_or_default() {
            let p = &mut self.procs[i];
            p.waiting -= 1;
            if p.waiting == 0 {
                self.run(i, now, out);
            }
        }
    }

    fn on_timer(&mut self, token: u64, now: Nanos, out: &mut Emit) {
        if token & WRITE_TOKEN != 0 {
            if let Some(req) = self.writes[(token & !WRITE_TOKEN) as usize].take() {
                out.submit(now, req);
            }
            return;
        }
        let i = token as usize;
        match self.procs[i].state {
            State::NotStarted => self.begin(i, now, out),
            State::Running => self.run(i, now, out),
            State::Done => {}
        }
    }

    fn processes(&self) -> Vec<ProcessInfo> {
        let mut v: Vec<ProcessInfo> = self.procs.iter().map(|p| p.info.clone()).collect();
        v.push(ProcessInfo { pid: self.syncer.pid, name: "syncer".into() });
        v
    }
}

impl AppWorkload {
    /// The process with this pid, if it is one of the workload's.
    pub fn index_of(&self, pid: u32) -> Option<usize> {
        self.by_pid.get(&pid).copied()
    }
}

/// Standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9).
#[allow(clippy::excessive_precision)]
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] =
        [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.383577518672690e2, -3.066479806614716e1, 2.506628277459239];
    const B: [f64; 5] = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
    const C: [f64; 6] =
        [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let pl = 0.02425;
    if p < pl {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - pl {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    }
}

/// Standard normal CDF (via erfc, Numerical Recipes' Chebyshev fit, |error| < 1.2e-7).
pub fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.26551223
            + t * (1.00002368
                + t * (0.37409196
                    + t * (0.09678418
                        + t * (-0.18628806
                            + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
            .exp();
    if x >= 0.0 {
        1.0 - 0.5 * r
    } else {
        0.5 * r
    }
}

/// `n` stratified uniform draws ((i + U) / n, shuffled): a sample whose empirical quantiles
/// match the distribution's to within 1/n.
pub fn stratified_uniforms(n: usize, rng: &mut Pcg64) -> Vec<f64> {
    use rand::seq::SliceRandom;
    use rand::Rng;
    let mut v: Vec<f64> = (0..n).map(|i| (i as f64 + rng.gen::<f64>()) / n as f64).collect();
    v.shuffle(rng);
    v
}
