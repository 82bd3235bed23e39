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
//! The kernel model follows FreeBSD 4.3 (the paper's kernel): read() uses the sequential
//! heuristic of vfs_vnops.c and ffs_read / cluster_read's read-ahead (vfs_cluster.c), so the
//! first read of a file and any read of its last block never read ahead (see
//! `AppWorkload::read_blocks`); a page fault reads its page with up to 7 pages behind and 8
//! ahead that are not resident, synchronously, and nothing asynchronously (vm_fault). A miss
//! reads the whole file-system block around it, clipped to the end of the file (UFS reads whole
//! blocks, and a small file's tail is its fragments); a read() or a copy out of a mapping that
//! waits goes on where it stopped when its data arrive. The cache is shared by all processes
//! of the workload, and a page on its way for another process is waited for, not read twice.

pub mod andrew;
pub mod andrew_host;
pub mod apache;
pub mod gnuld;
pub mod on_host;
pub mod tpcb;

use super::page_cache::PageCache;
use super::process::PAGE_SECTORS;
use super::{rng_stream, Emit, NewRequest, ProcessInfo, Workload};
use crate::fast_hash::{FastMap, FastSet};
use crate::host::readahead_freebsd as fbsd;
use crate::request::{Op, Principal, Request, SECTOR_BYTES};
use crate::sched::ProcessEvent;
use crate::time::Nanos;
use rand_pcg::Pcg64;
use std::collections::VecDeque;

/// Bytes in one page of the page cache.
pub const PAGE_BYTES: u64 = PAGE_SECTORS * SECTOR_BYTES;
// The FreeBSD read-path decisions (host::readahead_freebsd) count in the host's pages.
const _: () = assert!(PAGE_BYTES == crate::host::PAGE_BYTES);

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
    /// Per open file: FreeBSD's sequential heuristic (vfs_vnops.c).
    seq: FastMap<u32, fbsd::SeqState>,
    /// The current access continues after a wait (its sequential count, for a read()).
    resume: Option<u64>,
    state: State,
    stats: AppStats,
}

struct Kernel {
    model: KernelModel,
    cache: PageCache,
    /// Absolute page -> start sector of the read bringing it in.
    inflight: FastMap<u64, u64>,
    /// Start sector of a read in flight -> processes waiting for it.
    waiters: FastMap<u64, Vec<usize>>,
    /// First pages of blocks carrying a read-ahead mark (FreeBSD's B_RAM).
    ram: FastSet<u64>,
}

const WRITE_TOKEN: u64 = 1 << 63;

/// Processes running programs against a shared kernel model.
pub struct AppWorkload {
    files: Vec<File>,
    procs: Vec<Proc>,
    kernel: Kernel,
    by_pid: FastMap<u32, usize>,
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
                    seq: FastMap::default(),
                    resume: None,
                    state: State::NotStarted,
                    stats: AppStats::default(),
                }
            })
            .collect();
        let by_pid = procs.iter().enumerate().map(|(i, p)| (p.principal.pid, i)).collect();
        AppWorkload {
            files,
            procs,
            kernel: Kernel {
                model,
                cache: PageCache::new(model.cache_pages),
                inflight: FastMap::default(),
                waiters: FastMap::default(),
                ram: FastSet::default(),
            },
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
                            prio: Default::default(),
                        };
                        out.timer(at, WRITE_TOKEN | self.writes.len() as u64);
                        self.writes.push(Some(req));
                    }
                }
            }
        }
    }

    /// One read() (`read`) or page-fault access (`!read`). True if the process now waits for
    /// the disk; the rest of the access then runs when the wait ends (a read() waits block by
    /// block and a copy out of a mapping fault by fault, as in FreeBSD).
    #[allow(clippy::too_many_arguments)]
    fn access(&mut self, i: usize, file: u32, off: u64, len: u64, read: bool, now: Nanos, out: &mut Emit) -> bool {
        let f = self.files[file as usize];
        let p = &mut self.procs[i];
        let resumed = p.resume.take();
        if resumed.is_none() {
            p.stats.accesses += 1;
            p.stats.bytes += len.min(f.bytes.saturating_sub(off));
        }
        let before = out.arrivals.len();
        let waits =
            if read { self.read_blocks(i, file, off, len, resumed, now, out) } else { self.fault_pages(i, file, off, len, now, out) };
        let p = &mut self.procs[i];
        for (_, r) in &out.arrivals[before..] {
            if r.sync {
                p.stats.sync_requests += 1;
            } else {
                p.stats.prefetch_requests += 1;
            }
        }
        if !waits && resumed.is_none() {
            p.stats.cache_hits += 1;
        }
        waits
    }

    /// read(): FreeBSD 4's sequential heuristic (vfs_vnops.c) and ffs_read / cluster_read
    /// (vfs_cluster.c), block by block, as decided by [`crate::host::readahead_freebsd`] (see
    /// there for the rules): the first read of a file never reads ahead and the second does;
    /// the file's last block is read alone; a missing block is read synchronously with the
    /// following blocks the read still needs; read-ahead follows a synchronous read or a cached
    /// block carrying a B_RAM mark. Here: which pages of a block the read needs, waiting for the
    /// ones on their way, and submitting what `cluster_read` asks for (the pages neither cached
    /// nor on their way). A read that waits goes on at the next block when its data arrive.
    #[allow(clippy::too_many_arguments)]
    fn read_blocks(&mut self, i: usize, file: u32, off: u64, len: u64, resumed: Option<u64>, now: Nanos, out: &mut Emit) -> bool {
        let f = self.files[file as usize];
        let k = &mut self.kernel;
        let p = &mut self.procs[i];
        let seqcount = match resumed {
            Some(s) => s,
            None => fbsd::sequential_count(p.seq.entry(file).or_default(), off, len),
        };
        let base = f.start_sector / PAGE_SECTORS;
        let geo = fbsd::BsdGeometry::new(k.model.block_pages, k.model.readahead_pages, f.bytes);
        let end = (off + len.max(1)).min(f.bytes.max(1));
        let (p0, p1) = page_range(&f, off, len);
        let (b0, b1) = fbsd::read_blocks_span(&geo, off, len);
        let mut reads = Vec::new();
        for b in b0..=b1 {
            let (lo, hi) = geo.block_pages_range(b, 1);
            let (lo, hi) = (base + lo, base + hi);
            // Pages of this block the read needs: on their way (wait, then go on here) or missing.
            let need = (lo.max(base + p0), hi.min(base + p1));
            let mut missing = false;
            let mut keys: Vec<u64> = Vec::new();
            for pg in need.0..need.1 {
                if k.cache.touch(pg) {
                    continue;
                }
                match k.inflight.get(&pg) {
                    Some(&key) => {
                        if !keys.contains(&key) {
                            keys.push(key)
                        }
                    }
                    None => missing = true,
                }
            }
            if !keys.is_empty() && !missing {
                let from = off.max((lo - base) * PAGE_BYTES);
                return wait_then_resume(k, p, i, keys, Step::Read { file, off: from, len: end.saturating_sub(from) }, seqcount);
            }
            reads.clear();
            let resid = fbsd::resid_bytes(&geo, off, len, b);
            let mut probe = AppProbe { cache: &k.cache, inflight: &k.inflight, ram: &mut k.ram, base, geo };
            fbsd::cluster_read(&geo, &mut probe, b, missing, resid, seqcount, &mut reads);
            for r in &reads {
                let (a, e) = r.pages(&geo);
                if r.is_sync() {
                    submit_missing(k, out, now, p.principal, base + a, base + e, true, &mut keys);
                } else {
                    let mut ignore = Vec::new();
                    submit_missing(k, out, now, p.principal, base + a, base + e, false, &mut ignore);
                }
            }
            if !keys.is_empty() {
                let from = (hi - base) * PAGE_BYTES;
                return wait_then_resume(k, p, i, keys, Step::Read { file, off: from, len: end.saturating_sub(from) }, seqcount);
            }
        }
        false
    }

    /// A copy out of a mapping: FreeBSD 4's vm_fault at the first page that is not resident
    /// reads it with up to VM_FAULT_READ_BEHIND (7) pages before it and VM_FAULT_READ_AHEAD (8)
    /// after it, within the mapping, that are not resident either (vm_fault_additional_pages
    /// stops at a resident page), in one synchronous request ([`fbsd::fault_window`]); nothing
    /// is read asynchronously. A sequential copy thus faults every 9 pages. A page on its way
    /// is waited for.
    #[allow(clippy::too_many_arguments)]
    fn fault_pages(&mut self, i: usize, file: u32, off: u64, len: u64, now: Nanos, out: &mut Emit) -> bool {
        let f = self.files[file as usize];
        let k = &mut self.kernel;
        let p = &mut self.procs[i];
        let base = f.start_sector / PAGE_SECTORS;
        let pages = f.pages();
        let end = (off + len.max(1)).min(f.bytes.max(1));
        let (p0, p1) = page_range(&f, off, len);
        for pg in p0..p1 {
            if k.cache.touch(base + pg) {
                continue;
            }
            let mut keys = Vec::new();
            match k.inflight.get(&(base + pg)) {
                Some(&key) => keys.push(key),
                None => {
                    let (cache, inflight) = (&k.cache, &k.inflight);
                    let resident = |q: u64| cache.contains(base + q) || inflight.contains_key(&(base + q));
                    let (lo, hi) = fbsd::fault_window(pg, pages, &resident);
                    submit_missing(k, out, now, p.principal, base + lo, base + hi, true, &mut keys);
                }
            }
            let from = pg * PAGE_BYTES;
            return wait_then_resume(k, p, i, keys, Step::Fault { file, off: from, len: end.saturating_sub(from) }, 0);
        }
        false
    }
}

/// The shared page cache as FreeBSD's cluster_read sees one file: block `b` is the file's pages
/// `[b * block_pages, (b + 1) * block_pages)` (clipped to the file) at absolute page `base`;
/// B_RAM marks are kept on a block's first absolute page.
struct AppProbe<'a> {
    cache: &'a PageCache,
    inflight: &'a FastMap<u64, u64>,
    ram: &'a mut FastSet<u64>,
    base: u64,
    geo: fbsd::BsdGeometry,
}

impl AppProbe<'_> {
    fn first_page(&self, block: u64) -> u64 {
        self.base + block * self.geo.block_pages
    }
}

impl fbsd::BlockProbe for AppProbe<'_> {
    fn incore(&self, block: u64) -> bool {
        let (a, b) = self.geo.block_pages_range(block, 1);
        (self.base + a..self.base + b).any(|pg| self.cache.contains(pg) || self.inflight.contains_key(&pg))
    }

    fn take_mark(&mut self, block: u64) -> bool {
        let pg = self.first_page(block);
        self.ram.remove(&pg)
    }

    fn set_mark(&mut self, block: u64) {
        let pg = self.first_page(block);
        self.ram.insert(pg);
    }
}

/// The process waits for `keys`, then runs `rest` of its access, if any (flagged as a
/// continuation).
fn wait_then_resume(k: &mut Kernel, p: &mut Proc, i: usize, keys: Vec<u64>, rest: Step, seqcount: u64) -> bool {
    if let Step::Read { len, .. } | Step::Fault { len, .. } = rest {
        if len > 0 {
            p.steps.push_front(rest);
            p.resume = Some(seqcount);
        }
    }
    p.waiting = keys.len() as u32;
    for key in keys {
        k.waiters.entry(key).or_default().push(i);
    }
    true
}

/// Submits the pages of absolute range `[a, b)` that are neither cached nor on their way, as
/// runs of contiguous pages (each split at the maximum transfer).
#[allow(clippy::too_many_arguments)]
fn submit_missing(k: &mut Kernel, out: &mut Emit, now: Nanos, principal: Principal, a: u64, b: u64, sync: bool, keys: &mut Vec<u64>) {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for pg in a..b {
        if k.cache.contains(pg) || k.inflight.contains_key(&pg) {
            continue;
        }
        match runs.last_mut() {
            Some((s, n)) if *s + *n == pg => *n += 1,
            _ => runs.push((pg, 1)),
        }
    }
    let max = k.model.max_transfer_sectors;
    let parts: u64 = runs.iter().map(|&(_, n)| if max == 0 { 1 } else { (n * PAGE_SECTORS).div_ceil(max) }).sum();
    for (s, n) in runs {
        submit(k, out, now, principal, s, n, sync, sync && parts > 1, keys);
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
                prio: Default::default(),
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

    fn bytes_served(&self) -> Option<u64> {
        Some(self.procs.iter().map(|p| p.stats.bytes).sum())
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

#[cfg(test)]
mod tests {
    //! The FreeBSD 4 kernel model against a disk that completes every request at once, in order.
    use super::*;

    /// (sync, first page in the file, pages) of every request, in issue order, for one process
    /// running `steps` over `file` (placed at sector 0).
    fn requests(file: File, steps: Vec<Step>) -> Vec<(bool, u64, u64)> {
        let model = KernelModel { block_pages: 4, readahead_pages: 32, max_transfer_sectors: 256, cache_pages: 1 << 16 };
        let def = ProcDef { name: "p".into(), group: None, weight: 1, start_ns: Some(0), next: None, program: Box::new(Script(steps)) };
        let mut w = AppWorkload::new(vec![file], vec![def], model, 1 << 60, 1, 0);
        let mut out = Emit::default();
        w.start(&mut out);
        let mut seen = Vec::new();
        let mut id = 0;
        for _ in 0..10_000 {
            let timers = std::mem::take(&mut out.timers);
            let arrivals = std::mem::take(&mut out.arrivals);
            if timers.is_empty() && arrivals.is_empty() {
                break;
            }
            for (_, r) in &arrivals {
                seen.push((r.sync, r.start_sector / PAGE_SECTORS, r.size_sectors as u64 / PAGE_SECTORS));
            }
            for (_, r) in arrivals {
                id += 1;
                let req = Request {
                    id,
                    principal: r.principal,
                    op: r.op,
                    sync: r.sync,
                    start_sector: r.start_sector,
                    size_sectors: r.size_sectors,
                    issue_ns: 0,
                    flags: r.flags,
                    prio: Default::default(),
                };
                w.on_complete(&req, 0, &mut out);
            }
            for (t, token) in timers {
                w.on_timer(token, t, &mut out);
            }
        }
        seen
    }

    fn reads(bytes: u64, chunk: u64) -> Vec<Step> {
        (0..bytes.div_ceil(chunk)).map(|c| Step::Read { file: 0, off: c * chunk, len: chunk.min(bytes - c * chunk) }).collect()
    }

    #[test]
    fn read_ahead_waits_for_the_second_sequential_block_read() {
        // 16 KiB blocks, block-sized reads (Apache's stdio): blocks 0 and 1 are read
        // synchronously; the second read starts read-ahead of seqcount = 2 blocks.
        let r = requests(File { start_sector: 0, bytes: 10 * 16384 }, reads(10 * 16384, 16384));
        assert_eq!(&r[..3], &[(true, 0, 4), (true, 4, 4), (false, 8, 8)], "{r:?}");
        assert_eq!(r.iter().filter(|x| x.0).count(), 2, "{r:?}");
        // Every page is read exactly once.
        assert_eq!(r.iter().map(|x| x.2).sum::<u64>(), 40);
    }

    #[test]
    fn small_files_are_read_block_by_block_without_read_ahead() {
        // A 40 KiB file: block 0, block 1 (read-ahead would need block 2 whole: it is the
        // 8 KiB last block), then the last block alone (ffs_read's bread): three synchronous reads.
        let r = requests(File { start_sector: 0, bytes: 40 * 1024 }, reads(40 * 1024, 16384));
        assert_eq!(r, vec![(true, 0, 4), (true, 4, 4), (true, 8, 2)]);
        // A file of one block: one read.
        assert_eq!(requests(File { start_sector: 0, bytes: 5000 }, reads(5000, 16384)), vec![(true, 0, 2)]);
    }

    #[test]
    fn a_non_sequential_read_gets_no_read_ahead() {
        let steps = vec![Step::Read { file: 0, off: 5 * 16384, len: 16384 }, Step::Read { file: 0, off: 2 * 16384, len: 16384 }];
        let r = requests(File { start_sector: 0, bytes: 10 * 16384 }, steps);
        assert_eq!(r, vec![(true, 20, 4), (true, 8, 4)]);
    }

    #[test]
    fn faults_read_behind_and_ahead_synchronously() {
        // A sequential copy out of a mapping in 32 KiB writes: each fault reads its page and the
        // 8 after it (the pages behind are resident): 9 pages per synchronous request.
        let f = File { start_sector: 0, bytes: 40 * 4096 };
        let steps = (0..5).map(|c| Step::Fault { file: 0, off: c * 32768, len: 32768 }).collect();
        let r = requests(f, steps);
        assert_eq!(r, vec![(true, 0, 9), (true, 9, 9), (true, 18, 9), (true, 27, 9), (true, 36, 4)]);
        // A fault in the middle of a cold mapping also reads the 7 pages behind it.
        let r = requests(f, vec![Step::Fault { file: 0, off: 20 * 4096, len: 1 }]);
        assert_eq!(r, vec![(true, 13, 16)]);
    }
}
