//! Synchronous processes: each accesses its file (at its own place on the disk), waits for the
//! data, thinks, accesses the next block.
//!
//! Two ways in, as in Iyer & Druschel 2001 (section 4.1):
//! - `Access::Mmap`: page faults on a mapped file. Each access is one synchronous request and
//!   nothing is prefetched (FreeBSD's VM system issues no read-ahead for faults).
//! - `Access::Read`: read() through the kernel's page cache with FreeBSD-like sequential
//!   read-ahead (`vfs_cluster.c`, `cluster_read`): a read that continues where the previous one
//!   ended (or restarts at offset 0 of a file being read sequentially) is sequential; the
//!   read-ahead window is the length of the sequential run so far, capped at `readahead`
//!   (FreeBSD: `vfs.read_max` = 8 blocks of 16 KiB = 128 KiB); after a sequential read the kernel
//!   issues asynchronous requests for the pages of the window after the read that are neither
//!   cached nor on their way. A non-sequential read cancels the window. The process waits only
//!   for the pages of its own read that are not in the cache: a missing run becomes a
//!   synchronous request, a page being prefetched is waited for. Simplifications: read-ahead is
//!   topped up on every sequential read (FreeBSD re-triggers it at marked buffers), the window
//!   counts from the end of the read, and the file is one contiguous extent.
//!
//! Either way a request longer than `max_transfer_sectors` is split into parts issued at the
//! same instant and flagged `Request::SPLIT`; the process continues when all have completed.

use super::page_cache::PageCache;
use super::pattern::Pattern;
use super::think::Think;
use super::{rng_stream, Emit, NewRequest, ProcessInfo, Workload};
use crate::fast_hash::FastMap;
use crate::request::{IoPrio, Op, Principal, Request};
use crate::sched::ProcessEvent;
use crate::time::Nanos;
use rand::Rng;
use rand_pcg::Pcg64;

/// Sectors in one page (4 KiB): the page cache's unit.
pub const PAGE_SECTORS: u64 = 8;

/// How a process reaches its file's data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Access {
    /// Page faults on a mapped file: one synchronous request per access, no prefetch.
    Mmap,
    /// read() through a page cache with sequential read-ahead.
    Read(ReadModel),
}

/// The kernel side of read(): read-ahead cap, page cache size, copy cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReadModel {
    /// Largest read-ahead window (0: no read-ahead); a multiple of `PAGE_SECTORS`.
    pub readahead_sectors: u64,
    /// Pages of this file the cache keeps (LRU).
    pub cache_pages: usize,
    /// Time to copy one KiB from the cache to the process, charged on every read.
    pub copy_ns_per_kib: f64,
}

#[derive(Clone, Debug)]
pub struct ProcessSpec {
    pub name: String,
    pub principal: Principal,
    pub op: Op,
    pub pattern: Pattern,
    pub request_sectors: u32,
    pub file_start_sector: u64,
    pub file_sectors: u64,
    pub think: Think,
    /// When the first access is issued; with `after`, the time from that process's exit.
    pub start_ns: Nanos,
    /// Start when the process at this index exits (a chain such as `find -exec cat`).
    pub after: Option<usize>,
    /// Time from its last access's completion to its exit (a real process returns from read,
    /// closes and exits: the scheduler hears of the exit later than of the completion).
    pub exit_ns: Nanos,
    /// Stop after this many accesses (None: run until the deadline).
    pub max_requests: Option<u64>,
    /// Share for proportional-share schedulers.
    pub weight: u32,
    pub access: Access,
    /// Largest request the file system issues; longer ones are split (0: never split).
    pub max_transfer_sectors: u32,
    /// Accesses kept outstanding at once (asynchronous direct I/O, like fio's iodepth with
    /// libaio); 1: one at a time. Each completed access is followed (after its think time) by
    /// the next one. Only without a page cache (`Access::Mmap`).
    pub iodepth: u32,
    /// Requests are synchronous (reads, O_DIRECT writes) or not (buffered writeback).
    pub sync: bool,
    /// I/O priority of every request.
    pub prio: IoPrio,
    /// Requests carry `Request::META` (file-system metadata).
    pub meta: bool,
    /// The weight of its group (cgroup), announced when it starts.
    pub group_weight: Option<u32>,
    /// Some(f): each access is a read with probability f, else a write (`op` is then unused);
    /// sequential and alternate patterns keep one position per direction, as fio keeps one
    /// last position per direction.
    pub read_fraction: Option<f64>,
    /// Access n is issued no earlier than n / rate_iops seconds after the first (fio's rate).
    pub rate_iops: Option<f64>,
    /// Nothing is issued after this long from the first access (fio's runtime).
    pub runtime_ns: Option<Nanos>,
    /// Think only after every this many accesses (fio's thinktime_blocks); 1: after each.
    pub think_every: u32,
}

/// The kernel's state for one process's file under read().
struct Kernel {
    model: ReadModel,
    /// File offset (sectors) where the previous read ended.
    next_off: u64,
    /// Length of the current sequential run (sectors); 0 = not sequential.
    seq_sectors: u64,
    cache: PageCache,
    /// Page (file-relative) -> absolute start sector of the request bringing it in.
    inflight: FastMap<u64, u64>,
}

/// What one process's accesses cost, counted by the workload (not visible to schedulers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct AccessStats {
    /// Accesses (read() calls or faulting accesses) issued.
    pub accesses: u64,
    /// read()s whose pages were all in the cache: no disk request, no wait.
    pub cache_hits: u64,
    /// read()s that waited for a prefetch already on its way (and issued nothing synchronous).
    pub prefetch_waits: u64,
    /// Synchronous disk requests (parts of a split access count one each).
    pub sync_requests: u64,
    /// Asynchronous read-ahead requests.
    pub prefetch_requests: u64,
    /// Synchronous requests flagged `Request::SPLIT`.
    pub split_requests: u64,
}

struct ProcessState {
    spec: ProcessSpec,
    stats: AccessStats,
    /// Accesses issued.
    issued: u64,
    rng: Pcg64,
    /// Per outstanding access ("lane", `iodepth` of them): start sectors of the requests it
    /// waits for. Lane 0 is the only one of a synchronous process.
    lanes: Vec<Vec<u64>>,
    /// Lanes that have stopped (the run's end or the request limit).
    lanes_done: u32,
    /// Copy time charged when the current access is satisfied.
    copy_ns: Nanos,
    /// When its first access was due (the origin of `rate_iops` and `runtime_ns`).
    started_ns: Option<Nanos>,
    /// Accesses issued per direction (read, write) by a mixed process.
    issued_by_op: [u64; 2],
    kernel: Option<Kernel>,
}

pub struct Processes {
    procs: Vec<ProcessState>,
    /// (the process waited for, the process) of each process that starts after another's exit,
    /// in that order: an exit finds its followers by a binary search, not a pass over every
    /// process (a cache miss each with a thousand of them).
    followers: Vec<(usize, usize)>,
    by_pid: FastMap<Principal, usize>,
    /// No new request is issued at or after this time.
    pub stop_issuing_ns: Nanos,
}

impl Processes {
    pub fn new(specs: Vec<ProcessSpec>, stop_issuing_ns: Nanos, seed: u64) -> Self {
        let procs: Vec<ProcessState> = specs
            .into_iter()
            .enumerate()
            .map(|(i, spec)| ProcessState {
                lanes: vec![Vec::new(); spec.iodepth.max(1) as usize],
                lanes_done: 0,
                kernel: match spec.access {
                    Access::Mmap => None,
                    Access::Read(model) => Some(Kernel {
                        model,
                        next_off: 0,
                        seq_sectors: 0,
                        cache: PageCache::new(model.cache_pages),
                        inflight: FastMap::default(),
                    }),
                },
                spec,
                stats: AccessStats::default(),
                issued: 0,
                rng: rng_stream(seed, i as u64 + 1),
                copy_ns: 0,
                started_ns: None,
                issued_by_op: [0; 2],
            })
            .collect();
        let mut by_pid = FastMap::default();
        for (i, p) in procs.iter().enumerate() {
            by_pid.entry(p.spec.principal).or_insert(i);
        }
        let mut followers: Vec<(usize, usize)> = procs.iter().enumerate().filter_map(|(j, p)| p.spec.after.map(|a| (a, j))).collect();
        followers.sort_unstable();
        Processes { procs, followers, by_pid, stop_issuing_ns }
    }

    /// Per-process access statistics, in process order.
    pub fn stats(&self) -> Vec<(ProcessInfo, AccessStats)> {
        self.procs.iter().map(|p| (ProcessInfo { pid: p.spec.principal.pid, name: p.spec.name.clone() }, p.stats)).collect()
    }

    /// Issues process `i`'s next access on `lane` (or ends the lane).
    fn issue(&mut self, i: usize, lane: usize, now: Nanos, out: &mut Emit) {
        let stop = self.stop_issuing_ns;
        let p = &mut self.procs[i];
        if p.issued == 0 && lane == 0 {
            if let Some(weight) = p.spec.group_weight {
                out.process_event(ProcessEvent::GroupWeight { group: p.spec.principal.group, weight });
            }
            out.process_event(ProcessEvent::Started { principal: p.spec.principal, weight: p.spec.weight });
        }
        let started = *p.started_ns.get_or_insert(now);
        // Its own end (runtime) or the run's, whichever comes first.
        let own_stop = p.spec.runtime_ns.map_or(stop, |r| stop.min(started.saturating_add(r)));
        if now >= own_stop || p.spec.max_requests.is_some_and(|m| p.issued >= m) {
            // Nothing this lane waits for is outstanding now (prefetches may be). A process
            // stopped by the run's end starts no successor in its chain.
            let by_limit = now < stop;
            self.lane_done(i, now, by_limit, out);
            return;
        }
        if let Some(rate) = p.spec.rate_iops {
            // Ahead of its rate: this lane waits until the next access is due (or the end).
            let due = started.saturating_add(crate::time::round_ns(p.issued as f64 * 1e9 / rate));
            if now < due {
                out.timer(due.min(own_stop), token(i, lane));
                return;
            }
        }
        let s = &p.spec;
        let len = s.request_sectors as u64;
        let blocks = (s.file_sectors / len).max(1);
        let (op, n) = match s.read_fraction {
            None => (s.op, p.issued),
            Some(f) => {
                let op = if p.rng.gen::<f64>() < f { Op::Read } else { Op::Write };
                let k = (op == Op::Write) as usize;
                p.issued_by_op[k] += 1;
                (op, p.issued_by_op[k] - 1)
            }
        };
        let block = s.pattern.block(n, blocks, &mut p.rng);
        p.issued += 1;
        let off = block * len;
        let pending = &mut p.lanes[lane];
        pending.clear();
        let before = out.arrivals.len();
        let waited = match p.kernel.as_mut() {
            None => {
                submit_parts(out, now, s, op, off, len, s.sync, pending, None);
                0
            }
            Some(k) => {
                p.copy_ns = crate::time::round_ns(k.model.copy_ns_per_kib * (len as f64 / 2.0));
                kernel_read(k, s, off, len, now, out, pending)
            }
        };
        let st = &mut p.stats;
        st.accesses += 1;
        for (_, r) in &out.arrivals[before..] {
            if r.sync || p.kernel.is_none() {
                st.sync_requests += 1;
                st.split_requests += (r.flags & Request::SPLIT != 0) as u64;
            } else {
                st.prefetch_requests += 1;
            }
        }
        let pending = &p.lanes[lane];
        if pending.is_empty() {
            st.cache_hits += 1;
        } else if waited == pending.len() {
            st.prefetch_waits += 1;
        }
        if pending.is_empty() {
            self.satisfied(i, lane, now, out);
        }
    }

    /// A lane of process `i` issues nothing more; when all have, the process exits, and if it
    /// ended by reaching its request limit (`by_limit`, not the run's end) the next process of
    /// its chain starts its gap.
    fn lane_done(&mut self, i: usize, now: Nanos, by_limit: bool, out: &mut Emit) {
        let p = &mut self.procs[i];
        p.lanes_done += 1;
        if p.lanes_done < p.lanes.len() as u32 {
            return;
        }
        if by_limit && p.spec.exit_ns > 0 {
            out.timer(now.saturating_add(p.spec.exit_ns), token(i, EXIT_LANE));
            return;
        }
        self.exited(i, now, by_limit, out);
    }

    /// Process `i` exits; if it ended by its request limit, the processes waiting for it start
    /// their gap.
    fn exited(&mut self, i: usize, now: Nanos, by_limit: bool, out: &mut Emit) {
        out.process_event(ProcessEvent::Exited(self.procs[i].spec.principal));
        if !by_limit {
            return;
        }
        let first = self.followers.partition_point(|&(a, _)| a < i);
        for &(_, j) in self.followers[first..].iter().take_while(|&&(a, _)| a == i) {
            out.timer(now.saturating_add(self.procs[j].spec.start_ns), token(j, 0));
        }
    }

    /// The access on `lane` has its data: copy, think, go on (or end the lane).
    fn satisfied(&mut self, i: usize, lane: usize, now: Nanos, out: &mut Emit) {
        let p = &mut self.procs[i];
        if p.spec.max_requests.is_some_and(|m| p.issued >= m) {
            self.lane_done(i, now, true, out);
            return;
        }
        // With think_every = N the process thinks after accesses N, 2N, ... only.
        let every = p.spec.think_every.max(1) as u64;
        let think = if p.issued % every == 0 { p.spec.think.sample(p.issued - 1, &mut p.rng) } else { 0 };
        out.timer(now.saturating_add(p.copy_ns).saturating_add(think), token(i, lane));
    }
}

/// A timer's token: the process index and the lane.
/// The timer token's lane for a process's delayed exit.
const EXIT_LANE: usize = 0xffff_ffff;

fn token(process: usize, lane: usize) -> u64 {
    process as u64 | (lane as u64) << 32
}

/// read() of `len` sectors at file offset `off`: sequential detection, cache lookup, the
/// synchronous requests for what is missing, then read-ahead. Returns how many requests
/// already on their way the read waits for.
fn kernel_read(k: &mut Kernel, s: &ProcessSpec, off: u64, len: u64, now: Nanos, out: &mut Emit, pending: &mut Vec<u64>) -> usize {
    let sequential = off == k.next_off || (off == 0 && k.seq_sectors > 0);
    k.seq_sectors = if sequential { k.seq_sectors.saturating_add(len) } else { 0 };
    k.next_off = off + len;
    // The read's own pages: cached ones are used, ones on their way are waited for, missing
    // runs are read synchronously.
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for page in off / PAGE_SECTORS..(off + len).div_ceil(PAGE_SECTORS) {
        if k.cache.touch(page) {
            continue;
        }
        if let Some(&key) = k.inflight.get(&page) {
            if !pending.contains(&key) {
                pending.push(key);
            }
            continue;
        }
        match runs.last_mut() {
            Some((start, n)) if *start + *n == page => *n += 1,
            _ => runs.push((page, 1)),
        }
    }
    let waited = pending.len();
    let parts: u64 = runs.iter().map(|&(_, n)| parts_of(n * PAGE_SECTORS, s.max_transfer_sectors)).sum();
    let split = parts > 1;
    for (page, n) in runs {
        submit_run(out, now, s, page, n, true, split, pending, &mut k.inflight);
    }
    // Read-ahead: the window after the read, minus what is cached or on its way.
    let window = k.seq_sectors.min(k.model.readahead_sectors);
    if !sequential || window == 0 {
        return waited;
    }
    let from = (off + len).div_ceil(PAGE_SECTORS);
    let to = (off + len + window).min(s.file_sectors) / PAGE_SECTORS;
    let mut run: Option<(u64, u64)> = None;
    let mut ignore = Vec::new();
    for page in from..to.max(from) {
        if k.cache.contains(page) || k.inflight.contains_key(&page) {
            if let Some((p0, n)) = run.take() {
                submit_run(out, now, s, p0, n, false, false, &mut ignore, &mut k.inflight);
            }
            continue;
        }
        run = Some(match run {
            Some((p0, n)) => (p0, n + 1),
            None => (page, 1),
        });
    }
    if let Some((p0, n)) = run {
        submit_run(out, now, s, p0, n, false, false, &mut ignore, &mut k.inflight);
    }
    waited
}

/// How many requests `sectors` become at a maximum transfer of `max` (0: no limit).
fn parts_of(sectors: u64, max: u32) -> u64 {
    if max == 0 {
        1
    } else {
        sectors.div_ceil(max as u64)
    }
}

/// Submits pages `[page, page + n)` of the file and records them as on their way.
#[allow(clippy::too_many_arguments)]
fn submit_run(
    out: &mut Emit,
    now: Nanos,
    s: &ProcessSpec,
    page: u64,
    n: u64,
    sync: bool,
    split: bool,
    keys: &mut Vec<u64>,
    inflight: &mut FastMap<u64, u64>,
) {
    submit_parts(out, now, s, s.op, page * PAGE_SECTORS, n * PAGE_SECTORS, sync, keys, Some(split));
    // Each part's pages map to that part's start sector.
    let mut off = page * PAGE_SECTORS;
    let end = (page + n) * PAGE_SECTORS;
    while off < end {
        let size = if s.max_transfer_sectors == 0 { end - off } else { (s.max_transfer_sectors as u64).min(end - off) };
        let key = s.file_start_sector + off;
        for pg in off / PAGE_SECTORS..(off + size).div_ceil(PAGE_SECTORS) {
            inflight.insert(pg, key);
        }
        off += size;
    }
}

/// Submits file sectors `[off, off + len)`, split at the maximum transfer; pushes each part's
/// start sector on `keys`. `split`: flag the parts (None: flag them when there are several).
#[allow(clippy::too_many_arguments)]
fn submit_parts(
    out: &mut Emit,
    now: Nanos,
    s: &ProcessSpec,
    op: Op,
    off: u64,
    len: u64,
    sync: bool,
    keys: &mut Vec<u64>,
    split: Option<bool>,
) {
    let max = if s.max_transfer_sectors == 0 { len } else { s.max_transfer_sectors as u64 };
    let flag = split.unwrap_or(len > max);
    let mut at = off;
    while at < off + len {
        let size = max.min(off + len - at);
        let start_sector = s.file_start_sector + at;
        keys.push(start_sector);
        out.submit(
            now,
            NewRequest {
                principal: s.principal,
                op,
                sync,
                start_sector,
                size_sectors: size as u32,
                flags: if flag { Request::SPLIT } else { 0 } | if s.meta { Request::META } else { 0 },
                prio: s.prio,
            },
        );
        at += size;
    }
}

impl Workload for Processes {
    fn start(&mut self, out: &mut Emit) {
        for (i, p) in self.procs.iter().enumerate().filter(|(_, p)| p.spec.after.is_none()) {
            out.timer(p.spec.start_ns, token(i, 0));
        }
    }

    fn on_complete(&mut self, req: &Request, now: Nanos, out: &mut Emit) {
        let Some(&i) = self.by_pid.get(&req.principal) else {
            return;
        };
        let p = &mut self.procs[i];
        if let Some(k) = p.kernel.as_mut() {
            let rel = req.start_sector - p.spec.file_start_sector;
            for page in rel / PAGE_SECTORS..(rel + req.size_sectors as u64).div_ceil(PAGE_SECTORS) {
                if k.inflight.get(&page) == Some(&req.start_sector) {
                    k.inflight.remove(&page);
                }
                k.cache.insert(page);
            }
        }
        let found = p.lanes.iter().enumerate().find_map(|(l, pend)| pend.iter().position(|&s| s == req.start_sector).map(|at| (l, at)));
        let Some((lane, at)) = found else {
            return; // a prefetch nobody waits for yet
        };
        p.lanes[lane].swap_remove(at);
        if p.lanes[lane].is_empty() {
            self.satisfied(i, lane, now, out);
        }
    }

    fn on_timer(&mut self, token: u64, now: Nanos, out: &mut Emit) {
        let (i, lane) = ((token & 0xffff_ffff) as usize, (token >> 32) as usize);
        if lane == EXIT_LANE {
            self.exited(i, now, true, out);
            return;
        }
        let first = self.procs[i].issued == 0 && lane == 0;
        self.issue(i, lane, now, out);
        // An asynchronous process fills its other lanes at its start.
        if first {
            for l in 1..self.procs[i].lanes.len() {
                self.issue(i, l, now, out);
            }
        }
    }

    fn processes(&self) -> Vec<ProcessInfo> {
        self.procs.iter().map(|p| ProcessInfo { pid: p.spec.principal.pid, name: p.spec.name.clone() }).collect()
    }
}
