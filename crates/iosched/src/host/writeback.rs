//! Dirty limits, the flusher's choice of work, and writer throttling, after Linux's
//! mm/page-writeback.c and fs/fs-writeback.c.
//!
//! **Thresholds** (`global_dirty_limits`; `get_dirty_limits` in 2.6.32): `dirty_*_bytes`
//! rounded up to pages when set, else `ratio * dirtyable / 100`. Dirtyable memory is the page
//! cache's capacity: the host models no other memory use (no anonymous memory, no free-page
//! reserve). An invalid pair (background not below the limit) is refused by `validate`; Linux
//! would halve the background threshold instead, which `thresholds` still does as a guard.
//!
//! **The flusher** (fs/fs-writeback.c, `wb_writeback`, `queue_io`, `writeback_sb_inodes`,
//! `requeue_inode`, 2.6.32 to 6.x): dirty inodes wait in `dirtied_when` order (`b_dirty`).
//! When the work list (`b_io`) is empty, inodes requeued earlier (`b_more_io`) come first,
//! then the eligible inodes of `b_dirty`, oldest first: for kupdate, those dirtied more than
//! `dirty_expire_centisecs` ago; for background writeback (dirty pages above the background
//! threshold) or a sync, all of them. Each inode gets at most `MAX_WRITEBACK_PAGES` (1024
//! pages, 4 MiB) per pass, in file-offset order from its cyclic `writeback_index` wrapping to 0
//! (`write_cache_pages` with `range_cyclic`); an inode with pages left goes to `b_more_io`.
//!
//! **Throttling, `Throttle::Legacy26`** (2.6.32 `balance_dirty_pages_ratelimited_nr` and
//! `balance_dirty_pages`): a task is checked every `ratelimit_pages` pages it dirties (8 once
//! the limit was exceeded); the check's `write_chunk` is `sync_writeback_pages` = 1.5 x the
//! pages dirtied since the last check (at least 1.5 x `ratelimit_pages`). While dirty + writeback
//! exceeds the limit (and is above the midpoint of the background threshold and the limit), the
//! writer itself moves up to `write_chunk` dirty pages to writeback (the oldest inodes first,
//! not its own file) when dirty pages alone exceed the limit, and stops if it wrote its whole
//! chunk; otherwise it sleeps `io_schedule_timeout(pause)`, pause starting at one jiffy and
//! doubling to HZ/10 = 100 ms, and looks again. (Kernels before 2.6.32 slept a flat
//! `congestion_wait(HZ/10)`.) A writer that wrote its whole chunk does not sleep in 2.6.32: it
//! is throttled by the block layer's request allocation while it submits.
//!
//! **Throttling, `Throttle::IoLess`** (3.2+ I/O-less dirty throttling, Fengguang Wu; the shape
//! of 4.x `balance_dirty_pages`, `wb_position_ratio`, `wb_update_dirty_ratelimit`,
//! `wb_max_pause`, `wb_min_pause`): the writer never submits I/O. Below the freerun ceiling
//! (midway between the background threshold and the limit) it runs free and is checked again
//! after `dirty_poll_interval` pages. Above, its rate is `task_ratelimit = dirty_ratelimit x
//! pos_ratio`, where `pos_ratio = 1 + ((setpoint - dirty) / (limit - setpoint))^3` (2 at the
//! freerun ceiling, 1 at the setpoint midway to the limit, 0 at the limit) and
//! `dirty_ratelimit` tracks `task_ratelimit x write_bandwidth / dirty_rate` every 200 ms. It
//! sleeps `pages_dirtied / task_ratelimit` less the time since its last pause (think time),
//! between `min_pause` (no sleep below it) and `max_pause` (at most 200 ms, and about 1/8 of
//! the time to write the dirty pages); at or above the limit it sleeps `max_pause` and looks
//! again. Write bandwidth is estimated from `on_written` as Linux does (200 ms samples averaged
//! over ~4 s, one more smoothing level). Simplifications: one device, so the per-bdi (per-wb)
//! control line and thresholds equal the global ones (no `wb_setpoint` correction, no
//! `strictlimit`); the hard limit does not lag a lowered threshold (thresholds are fixed);
//! no per-CPU leak counters (`bdp_ratelimits`, `dirty_throttle_leaks`); no cgroup writeback.
//!
//! Common simplifications: time in ns with HZ = 1000 where Linux counts jiffies; a task is
//! identified by the caller's pid; 2.6.32's per-CPU ratelimit counter is kept per task (as if
//! each writer ran on its own CPU) and `ratelimit_pages` is computed for one CPU from the
//! cache's capacity (`writeback_set_ratelimit`: pages / 32, clamped to 16..=1024); no
//! `task_dirty_limit` discount of heavy dirtiers and no `PF_LESS_THROTTLE`/real-time boost; no
//! laptop mode; no unstable (NFS) pages. The caller kicks the flusher: after `balance` (and
//! after any write) it checks `need_background`, as `balance_dirty_pages` does on its way out.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

use super::page_cache::PageCache;

mod balance_2_6_9;
use super::{Ino, PAGE_BYTES};
use crate::fast_hash::FastSet;

/// Pages per inode per flusher pass (fs/fs-writeback.c; mm/page-writeback.c in 2.6.32).
pub const MAX_WRITEBACK_PAGES: u64 = 1024;
/// A jiffy at HZ = 1000.
const JIFFY_NS: u64 = 1_000_000;
const SEC_NS: u64 = 1_000_000_000;
/// 2.6.32's longest throttling sleep, HZ/10.
const LEGACY_MAX_PAUSE_NS: u64 = 100 * JIFFY_NS;
/// The ratelimit once `dirty_exceeded` is set (2.6.32: 8 pages; 3.2+: 32 KiB = 8 pages).
const EXCEEDED_RATELIMIT_PAGES: u64 = 8;
/// `MAX_PAUSE` (3.2+): max(HZ/5, 1) = 200 ms.
pub const MAX_PAUSE_NS: u64 = 200 * JIFFY_NS;
/// `BANDWIDTH_INTERVAL` (3.2+): bandwidth and dirty rate are sampled every 200 ms.
const BANDWIDTH_INTERVAL_NS: u64 = 200 * JIFFY_NS;
/// The write bandwidth averaging period, `roundup_pow_of_two(3 * HZ)` jiffies.
const BANDWIDTH_PERIOD_NS: u64 = 4096 * JIFFY_NS;
/// `INIT_BW` (3.2+): 100 MB/s in pages/s until measured.
const INIT_BW_PAGES_PER_S: u64 = (100 << 20) / PAGE_BYTES;
/// `DIRTY_POLL_THRESH` (3.2+): 128 KiB in pages.
const DIRTY_POLL_THRESH_PAGES: u64 = 32;
/// `RATELIMIT_CALC_SHIFT`: fixed-point bits of `pos_ratio`.
const RATELIMIT_CALC_SHIFT: u32 = 10;
/// `roundup_pow_of_two(HZ)` at HZ = 1000, used where Linux divides jiffies by it.
const HZ_POW2: u64 = 1024;

/// Which kernel's writer throttling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Throttle {
    /// 2.6.32's `balance_dirty_pages`: the writer writes back a chunk itself, then sleeps.
    #[serde(rename = "legacy26")]
    Legacy26,
    /// 2.6.9's `balance_dirty_pages` (writeback/balance_2_6_9.rs): the same shape, a fixed
    /// chunk, no midpoint exit, flat 100 ms sleeps.
    #[serde(rename = "legacy269")]
    Legacy269,
    /// 3.2+ I/O-less dirty throttling: the writer only sleeps, paced to the write bandwidth.
    #[serde(rename = "ioless")]
    IoLess,
}

/// Linux's vm writeback tunables (`/proc/sys/vm/dirty_*`), by their names and defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WritebackConfig {
    /// Percent of dirtyable memory at which background writeback starts (10).
    pub dirty_background_ratio: u32,
    /// Percent of dirtyable memory at which writers are throttled (20).
    pub dirty_ratio: u32,
    /// Background threshold in bytes; 0 = use the ratio (0).
    pub dirty_background_bytes: u64,
    /// Throttling limit in bytes; 0 = use the ratio (0).
    pub dirty_bytes: u64,
    /// Age at which dirty data is written by periodic writeback, centiseconds (3000 = 30 s).
    pub dirty_expire_centisecs: u32,
    /// Period of the flusher's periodic (kupdate) wake-ups, centiseconds (500 = 5 s); 0 = no
    /// periodic writeback.
    pub dirty_writeback_centisecs: u32,
    pub throttle: Throttle,
}

impl Default for WritebackConfig {
    fn default() -> Self {
        WritebackConfig {
            dirty_background_ratio: 10,
            dirty_ratio: 20,
            dirty_background_bytes: 0,
            dirty_bytes: 0,
            dirty_expire_centisecs: 3000,
            dirty_writeback_centisecs: 500,
            throttle: Throttle::IoLess,
        }
    }
}

impl WritebackConfig {
    /// Checks the tunables against a cache of `capacity_pages` pages. Errors name the field.
    pub fn validate(&self, capacity_pages: u64) -> Result<(), String> {
        if self.dirty_background_ratio > 100 {
            return Err(format!(
                "field `host.dirty_background_ratio` = {} is above 100 (a percentage of the page cache)",
                self.dirty_background_ratio
            ));
        }
        if self.dirty_ratio == 0 || self.dirty_ratio > 100 {
            return Err(format!(
                "field `host.dirty_ratio` = {} is out of range: 1 to 100 (a percentage of the page cache)",
                self.dirty_ratio
            ));
        }
        let capacity_bytes = capacity_pages.saturating_mul(PAGE_BYTES);
        if self.dirty_bytes != 0 && self.dirty_bytes < 2 * PAGE_BYTES {
            return Err(format!(
                "field `host.dirty_bytes` = {} is below {} (two pages; 0 means use `host.dirty_ratio`)",
                self.dirty_bytes,
                2 * PAGE_BYTES
            ));
        }
        if self.dirty_bytes > capacity_bytes {
            return Err(format!(
                "field `host.dirty_bytes` = {} is above the page cache's size, {} bytes",
                self.dirty_bytes, capacity_bytes
            ));
        }
        let t = raw_thresholds(self, capacity_pages);
        let (lim_field, lim_value) =
            if self.dirty_bytes != 0 { ("host.dirty_bytes", self.dirty_bytes) } else { ("host.dirty_ratio", u64::from(self.dirty_ratio)) };
        if t.limit_pages == 0 {
            return Err(format!(
                "field `{lim_field}` = {lim_value} gives a dirty limit of 0 pages for a page cache of {capacity_pages} pages"
            ));
        }
        let (bg_field, bg_value) = if self.dirty_background_bytes != 0 {
            ("host.dirty_background_bytes", self.dirty_background_bytes)
        } else {
            ("host.dirty_background_ratio", u64::from(self.dirty_background_ratio))
        };
        if t.background_pages >= t.limit_pages {
            let how = if t.background_pages > t.limit_pages { "is above" } else { "is not below" };
            let pages = if (self.dirty_background_bytes != 0) != (self.dirty_bytes != 0) {
                format!(" ({} pages against {} pages)", t.background_pages, t.limit_pages)
            } else {
                String::new()
            };
            return Err(format!(
                "field `{bg_field}` = {bg_value} {how} `{lim_field}` = {lim_value}{pages}: the background threshold must be below the limit"
            ));
        }
        Ok(())
    }

    fn expire_ns(&self) -> u64 {
        u64::from(self.dirty_expire_centisecs) * 10 * JIFFY_NS
    }

    fn writeback_interval_ns(&self) -> u64 {
        u64::from(self.dirty_writeback_centisecs) * 10 * JIFFY_NS
    }
}

/// Dirty thresholds in pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Thresholds {
    /// Background writeback runs while dirty pages exceed this.
    pub background_pages: u64,
    /// Writers are throttled around this (dirty + writeback pages).
    pub limit_pages: u64,
}

/// The thresholds with Linux's guard: a background threshold not below the limit is halved.
fn thresholds_of(cfg: &WritebackConfig, dirtyable_pages: u64) -> Thresholds {
    let mut t = raw_thresholds(cfg, dirtyable_pages);
    if t.background_pages >= t.limit_pages {
        t.background_pages = t.limit_pages / 2;
    }
    t
}

/// The thresholds as configured (what `validate` checks).
fn raw_thresholds(cfg: &WritebackConfig, dirtyable_pages: u64) -> Thresholds {
    let of_ratio = |ratio: u32| u64::from(ratio).saturating_mul(dirtyable_pages) / 100;
    let limit_pages = if cfg.dirty_bytes != 0 { cfg.dirty_bytes.div_ceil(PAGE_BYTES) } else { of_ratio(cfg.dirty_ratio) };
    let background_pages = if cfg.dirty_background_bytes != 0 {
        cfg.dirty_background_bytes.div_ceil(PAGE_BYTES)
    } else {
        of_ratio(cfg.dirty_background_ratio)
    };
    Thresholds { background_pages, limit_pages }
}

/// A run of one inode's pages, already moved dirty -> writeback in the cache: the caller
/// submits it as write bios and calls `PageCache::end_writeback` when they complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub ino: Ino,
    pub first_index: u64,
    pub pages: u64,
}

/// What `balance` tells a writer that has just dirtied pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Balance {
    /// The writer may go on.
    Continue,
    /// The writer submits `write` itself (Legacy26 only; empty for IoLess), then sleeps
    /// `sleep_ns` (possibly 0), then calls `balance` again with `pages_dirtied` = 0.
    Pause { sleep_ns: u64, write: Vec<Chunk> },
}

/// Where a task is in `balance_dirty_pages`'s loop between a `Pause` and the next call.
#[derive(Clone, Copy, Debug)]
enum LoopState {
    /// Legacy26: mid-loop.
    Legacy { write_chunk: u64, pages_written: u64, pause_ns: u64 },
    /// The loop ended with this pause: the next call returns `Continue`.
    Done,
    /// IoLess: paused at the limit (task_ratelimit 0); look again with these pages.
    IoLessAgain { pages: u64 },
}

/// Per-task throttling state (`current->nr_dirtied` and friends; 2.6.32's per-CPU counter).
#[derive(Clone, Copy, Debug)]
struct Task {
    nr_dirtied: u64,
    /// IoLess: check again after this many pages (`nr_dirtied_pause`).
    nr_dirtied_pause: u64,
    /// IoLess: when the last pause ended (`dirty_paused_when`); 0 = never.
    paused_when_ns: u64,
    in_loop: Option<LoopState>,
}

impl Default for Task {
    fn default() -> Self {
        Task { nr_dirtied: 0, nr_dirtied_pause: DIRTY_POLL_THRESH_PAGES, paused_when_ns: 0, in_loop: None }
    }
}

/// IoLess's estimates (`bdi_writeback`'s bandwidth fields), rates in pages per second.
#[derive(Clone, Copy, Debug)]
struct Bandwidth {
    stamp_ns: Option<u64>,
    written_total: u64,
    written_stamp: u64,
    dirtied_total: u64,
    dirtied_stamp: u64,
    write_bw: u64,
    avg_write_bw: u64,
    dirty_ratelimit: u64,
    balanced_dirty_ratelimit: u64,
}

/// The flusher's queues, the sync requests and the writers' throttling state.
#[derive(Debug)]
pub struct Writeback {
    cfg: WritebackConfig,
    /// `b_io`: inodes of the current pass.
    io: VecDeque<Ino>,
    /// `b_more_io`: inodes requeued with pages left.
    more_io: VecDeque<Ino>,
    /// Inodes in `io` or `more_io`.
    queued: FastSet<Ino>,
    /// Runs of the last pass not yet handed out by `next_chunk`.
    pending: VecDeque<Chunk>,
    /// `mapping->writeback_index` per inode.
    writeback_index: BTreeMap<Ino, u64>,
    /// A sync of every inode dirtied at or before this time is in progress.
    sync_cutoff_ns: Option<u64>,
    /// fsync requests, in order.
    inode_syncs: Vec<Ino>,
    tasks: BTreeMap<u32, Task>,
    /// `bdi->dirty_exceeded`: lowers every task's ratelimit to 8 pages.
    dirty_exceeded: bool,
    bw: Bandwidth,
}

impl Writeback {
    pub fn new(cfg: WritebackConfig) -> Self {
        Writeback {
            cfg,
            io: VecDeque::new(),
            more_io: VecDeque::new(),
            queued: FastSet::default(),
            pending: VecDeque::new(),
            writeback_index: BTreeMap::new(),
            sync_cutoff_ns: None,
            inode_syncs: Vec::new(),
            tasks: BTreeMap::new(),
            dirty_exceeded: false,
            bw: Bandwidth {
                stamp_ns: None,
                written_total: 0,
                written_stamp: 0,
                dirtied_total: 0,
                dirtied_stamp: 0,
                write_bw: INIT_BW_PAGES_PER_S,
                avg_write_bw: INIT_BW_PAGES_PER_S,
                dirty_ratelimit: INIT_BW_PAGES_PER_S,
                balanced_dirty_ratelimit: INIT_BW_PAGES_PER_S,
            },
        }
    }

    pub fn config(&self) -> &WritebackConfig {
        &self.cfg
    }

    /// The thresholds for `cache`: dirtyable memory is its capacity (the host models no other
    /// memory use).
    pub fn thresholds(&self, cache: &PageCache) -> Thresholds {
        thresholds_of(&self.cfg, cache.capacity_pages())
    }

    /// Whether a writer should wake the flusher for background writeback: dirty pages above
    /// the background threshold (`over_bground_thresh`).
    pub fn need_background(&self, cache: &PageCache) -> bool {
        cache.dirty_pages() > self.thresholds(cache).background_pages
    }

    /// The flusher's next periodic (kupdate) wake-up after `now_ns`: multiples of
    /// `dirty_writeback_centisecs`; None if periodic writeback is off. (3.x+ flushers sleep
    /// when nothing is dirty: the caller may skip wake-ups while `cache.dirty_pages()` is 0.)
    pub fn next_periodic_wakeup_ns(&self, now_ns: u64) -> Option<u64> {
        let interval = self.cfg.writeback_interval_ns();
        if interval == 0 {
            return None;
        }
        Some((now_ns / interval + 1).saturating_mul(interval))
    }

    /// `sync`: write every inode dirtied at or before `now_ns` (later dirtying does not
    /// prolong it, as Linux's livelock avoidance). The caller asks `next_chunk` until None and
    /// waits for writeback while `sync_in_progress`.
    pub fn sync_all(&mut self, now_ns: u64) {
        self.sync_cutoff_ns = Some(self.sync_cutoff_ns.map_or(now_ns, |c| c.max(now_ns)));
    }

    /// `fsync(ino)`: `next_chunk` hands out all the inode's dirty pages first, from offset 0,
    /// until it has none. The fsync is complete when the inode has no dirty and no writeback
    /// pages (`inode_sync_done`).
    pub fn start_inode_sync(&mut self, ino: Ino) {
        if !self.inode_syncs.contains(&ino) {
            self.inode_syncs.push(ino);
        }
    }

    /// Whether an fsync of `ino` would have nothing left to wait for.
    pub fn inode_sync_done(&self, cache: &PageCache, ino: Ino) -> bool {
        cache.inode_dirty_pages(ino) == 0 && cache.inode_writeback_pages(ino) == 0
    }

    /// Whether a `sync_all` or an fsync still has dirty pages to hand out (some may be waiting
    /// for their earlier writeback to end).
    pub fn sync_in_progress(&self) -> bool {
        self.sync_cutoff_ns.is_some() || !self.inode_syncs.is_empty()
    }

    /// The flusher's next piece of work, already moved to writeback in the cache; None: nothing
    /// to do now. Order: runs left from the last pass; fsync'ed inodes; then the inode queue
    /// (see the module documentation) with the widest eligibility of: kupdate (inodes dirtied
    /// more than `dirty_expire_centisecs` before `now_ns`; only when periodic writeback is
    /// on), background (all, while dirty pages exceed the background threshold), sync (inodes
    /// dirtied up to the sync's start).
    pub fn next_chunk(&mut self, cache: &mut PageCache, now_ns: u64) -> Option<Chunk> {
        if let Some(c) = self.pending.pop_front() {
            return Some(c);
        }
        let mut out = Vec::new();
        self.inode_sync_pass(cache, &mut out);
        if out.is_empty() {
            let cutoff = self.eligible_cutoff(cache, now_ns)?;
            self.write_inodes(cache, cutoff, MAX_WRITEBACK_PAGES, true, &mut out);
        }
        self.pending.extend(out);
        self.pending.pop_front()
    }

    /// Writes completed (`pages` pages), for IoLess's bandwidth estimate.
    pub fn on_written(&mut self, pages: u64, now_ns: u64) {
        self.bw.written_total += pages;
        self.update_bandwidth(now_ns, None);
    }

    /// The estimated write bandwidth (pages/s; IoLess's `avg_write_bandwidth`).
    pub fn write_bandwidth_pages_per_s(&self) -> u64 {
        self.bw.avg_write_bw
    }

    /// `balance_dirty_pages_ratelimited`: called by task `pid` after dirtying `pages_dirtied`
    /// pages (newly dirtied ones, as `PageCache::write` reports), and again with 0 after each
    /// `Pause`.
    pub fn balance(&mut self, cache: &mut PageCache, pid: u32, pages_dirtied: u64, now_ns: u64) -> Balance {
        self.bw.dirtied_total += pages_dirtied;
        match self.cfg.throttle {
            Throttle::Legacy26 => self.balance_legacy(cache, pid, pages_dirtied),
            Throttle::Legacy269 => self.balance_2_6_9(cache, pid, pages_dirtied),
            Throttle::IoLess => self.balance_ioless(cache, pid, pages_dirtied, now_ns),
        }
    }

    // ----- the flusher -----

    /// The widest `dirtied_when` eligible now, or None if no writeback is due.
    fn eligible_cutoff(&mut self, cache: &PageCache, now_ns: u64) -> Option<u64> {
        if let Some(cutoff) = self.sync_cutoff_ns {
            let pending = cache.dirty_inodes().next().is_some_and(|(_, when)| when <= cutoff);
            if !pending {
                self.sync_cutoff_ns = None;
            }
        }
        let mut cutoff = self.sync_cutoff_ns;
        if self.need_background(cache) {
            cutoff = Some(u64::MAX);
        }
        if self.cfg.dirty_writeback_centisecs != 0 {
            if let Some(expired) = now_ns.checked_sub(self.cfg.expire_ns()) {
                cutoff = Some(cutoff.map_or(expired, |c| c.max(expired)));
            }
        }
        cutoff
    }

    /// One pass over the fsync'ed inodes: the first with writable dirty pages gives up to
    /// `MAX_WRITEBACK_PAGES` from offset 0. Inodes with no dirty page left are done.
    fn inode_sync_pass(&mut self, cache: &mut PageCache, out: &mut Vec<Chunk>) {
        self.inode_syncs.retain(|&ino| cache.inode_dirty_pages(ino) > 0);
        for &ino in &self.inode_syncs {
            let runs = cache.start_writeback(ino, 0, MAX_WRITEBACK_PAGES);
            if !runs.is_empty() {
                out.extend(runs.into_iter().map(|(first_index, pages)| Chunk { ino, first_index, pages }));
                break;
            }
        }
        self.inode_syncs.retain(|&ino| cache.inode_dirty_pages(ino) > 0);
    }

    /// `queue_io`: `b_more_io` first, then eligible `b_dirty` inodes, oldest first.
    fn queue_io(&mut self, cache: &PageCache, cutoff_ns: u64) {
        self.io.extend(self.more_io.drain(..));
        for (ino, when) in cache.dirty_inodes() {
            if when > cutoff_ns {
                break;
            }
            if self.queued.insert(ino) {
                self.io.push_back(ino);
            }
        }
    }

    /// Writes inodes dirtied at or before `cutoff_ns` from the queue, up to `budget` pages, at
    /// most `MAX_WRITEBACK_PAGES` per inode if `one_inode` (the flusher's pass, which stops
    /// after one inode that gave pages), else the whole budget (2.6.32's writer). Returns the
    /// pages moved to writeback.
    fn write_inodes(&mut self, cache: &mut PageCache, cutoff_ns: u64, mut budget: u64, one_inode: bool, out: &mut Vec<Chunk>) -> u64 {
        let mut written = 0;
        let mut refilled = false;
        while budget > 0 {
            let Some(ino) = self.io.pop_front() else {
                if refilled {
                    break;
                }
                self.queue_io(cache, cutoff_ns);
                refilled = true;
                continue;
            };
            self.queued.remove(&ino);
            // Clean now, or not eligible under the current work: dropped (a later queue_io
            // brings it back from the dirty list).
            match cache.inode_dirtied_when_ns(ino) {
                Some(when) if when <= cutoff_ns => {}
                _ => continue,
            }
            let n = self.write_inode(cache, ino, budget, out);
            budget -= n;
            written += n;
            if cache.inode_dirty_pages(ino) > 0 {
                self.more_io.push_back(ino);
                self.queued.insert(ino);
            }
            if n > 0 && one_inode {
                break;
            }
        }
        written
    }

    /// `write_cache_pages` with `range_cyclic`: from `writeback_index` to the end, then from 0.
    fn write_inode(&mut self, cache: &mut PageCache, ino: Ino, max_pages: u64, out: &mut Vec<Chunk>) -> u64 {
        let start = self.writeback_index.get(&ino).copied().unwrap_or(0);
        let mut runs = cache.start_writeback(ino, start, max_pages);
        let first_part: u64 = runs.iter().map(|r| r.1).sum();
        if first_part < max_pages && start > 0 {
            runs.extend(cache.start_writeback_range(ino, 0, start, max_pages - first_part));
        }
        let mut n = 0;
        for &(first_index, pages) in &runs {
            n += pages;
            out.push(Chunk { ino, first_index, pages });
        }
        if let Some(&(first, pages)) = runs.last() {
            self.writeback_index.insert(ino, first + pages);
        }
        n
    }

    // ----- Legacy26 -----

    /// 2.6.32 `writeback_set_ratelimit` for one CPU: pages / 32, clamped to 16..=1024 (4 MiB).
    fn ratelimit_pages(&self, cache: &PageCache) -> u64 {
        (cache.capacity_pages() / 32).clamp(16, (4096 * 1024) / PAGE_BYTES)
    }

    fn balance_legacy(&mut self, cache: &mut PageCache, pid: u32, pages_dirtied: u64) -> Balance {
        let ratelimit_pages = self.ratelimit_pages(cache);
        let task = self.tasks.entry(pid).or_default();
        task.nr_dirtied += pages_dirtied;
        let (write_chunk, mut pages_written, pause_ns) = match task.in_loop.take() {
            Some(LoopState::Legacy { write_chunk, pages_written, pause_ns }) => (write_chunk, pages_written, pause_ns),
            Some(_) => return Balance::Continue,
            None => {
                let ratelimit = if self.dirty_exceeded { EXCEEDED_RATELIMIT_PAGES } else { ratelimit_pages };
                if task.nr_dirtied < ratelimit {
                    return Balance::Continue;
                }
                // sync_writeback_pages
                let dirtied = task.nr_dirtied.max(ratelimit_pages);
                task.nr_dirtied = 0;
                (dirtied + dirtied / 2, 0, JIFFY_NS)
            }
        };
        // One iteration of balance_dirty_pages' loop.
        let t = self.thresholds(cache);
        let mut write = Vec::new();
        let over = |cache: &PageCache| cache.dirty_pages() + cache.writeback_pages() > t.limit_pages;
        let done = if !over(cache) || cache.dirty_pages() + cache.writeback_pages() < (t.background_pages + t.limit_pages) / 2 {
            true
        } else {
            self.dirty_exceeded = true;
            if cache.dirty_pages() > t.limit_pages {
                // writeback_inodes_wbc: any dirty inode, oldest first, write_chunk in all.
                pages_written += self.write_inodes(cache, u64::MAX, write_chunk - pages_written, false, &mut write);
            }
            !over(cache) || pages_written >= write_chunk
        };
        let task = self.tasks.get_mut(&pid).expect("task entry made above");
        if done {
            if cache.dirty_pages() + cache.writeback_pages() < t.limit_pages {
                self.dirty_exceeded = false;
            }
            if write.is_empty() {
                Balance::Continue
            } else {
                task.in_loop = Some(LoopState::Done);
                Balance::Pause { sleep_ns: 0, write }
            }
        } else {
            task.in_loop = Some(LoopState::Legacy { write_chunk, pages_written, pause_ns: (pause_ns * 2).min(LEGACY_MAX_PAUSE_NS) });
            Balance::Pause { sleep_ns: pause_ns, write }
        }
    }

    // ----- IoLess -----

    fn balance_ioless(&mut self, cache: &mut PageCache, pid: u32, pages_dirtied: u64, now_ns: u64) -> Balance {
        let dirty_exceeded = self.dirty_exceeded;
        let task = self.tasks.entry(pid).or_default();
        task.nr_dirtied += pages_dirtied;
        let pages = match task.in_loop.take() {
            Some(LoopState::IoLessAgain { pages }) => pages,
            Some(_) => return Balance::Continue,
            None => {
                let mut ratelimit = task.nr_dirtied_pause;
                if dirty_exceeded {
                    ratelimit = ratelimit.min(EXCEEDED_RATELIMIT_PAGES);
                }
                if task.nr_dirtied < ratelimit {
                    return Balance::Continue;
                }
                task.nr_dirtied
            }
        };
        let t = self.thresholds(cache);
        let dirty = cache.dirty_pages() + cache.writeback_pages();
        let freerun = (t.limit_pages + t.background_pages) / 2;
        if dirty <= freerun {
            let task = self.tasks.get_mut(&pid).expect("task entry made above");
            task.paused_when_ns = now_ns;
            task.nr_dirtied = 0;
            task.nr_dirtied_pause = dirty_poll_interval(dirty, t.limit_pages);
            self.dirty_exceeded = false;
            return Balance::Continue;
        }
        self.dirty_exceeded = dirty > t.limit_pages;
        self.update_bandwidth(now_ns, Some((t, dirty)));
        let dirty_ratelimit = self.bw.dirty_ratelimit;
        let pos_ratio = position_ratio(t, dirty);
        let task_ratelimit = (dirty_ratelimit * pos_ratio) >> RATELIMIT_CALC_SHIFT;
        let max_pause_ns = self.max_pause_ns(dirty);
        let (min_pause_ns, next_pause_pages) = self.min_pause(max_pause_ns, task_ratelimit, dirty_ratelimit);
        let task = self.tasks.get_mut(&pid).expect("task entry made above");
        let sleep_ns = if task_ratelimit == 0 {
            max_pause_ns
        } else {
            let period_ns = i128::from(pages) * i128::from(SEC_NS) / i128::from(task_ratelimit);
            let mut pause_ns = period_ns;
            if task.paused_when_ns != 0 {
                pause_ns -= i128::from(now_ns) - i128::from(task.paused_when_ns);
            }
            if pause_ns < i128::from(min_pause_ns) {
                // Too short to sleep: think time paid for it, or let the task dirty more.
                if pause_ns < -(i128::from(SEC_NS)) {
                    task.paused_when_ns = now_ns;
                    task.nr_dirtied = 0;
                } else if period_ns > 0 {
                    task.paused_when_ns += period_ns as u64;
                    task.nr_dirtied = 0;
                } else if task.nr_dirtied_pause <= pages {
                    task.nr_dirtied_pause += pages;
                }
                return Balance::Continue;
            }
            (pause_ns as u64).min(max_pause_ns)
        };
        task.paused_when_ns = now_ns + sleep_ns;
        task.nr_dirtied = 0;
        task.nr_dirtied_pause = next_pause_pages.max(1);
        task.in_loop = Some(if task_ratelimit > 0 { LoopState::Done } else { LoopState::IoLessAgain { pages } });
        Balance::Pause { sleep_ns, write: Vec::new() }
    }

    /// `wb_max_pause` (3.3+): about 1/8 of the time to write the dirty pages, plus a jiffy,
    /// at most `MAX_PAUSE`.
    fn max_pause_ns(&self, dirty_pages: u64) -> u64 {
        let bw = self.bw.avg_write_bw;
        // roundup_pow_of_two(1 + HZ / 8) = 128 at HZ = 1000
        let t_jiffies = dirty_pages / (1 + bw / 128) + 1;
        t_jiffies.saturating_mul(JIFFY_NS).min(MAX_PAUSE_NS)
    }

    /// `wb_min_pause` (3.3+): the shortest pause worth sleeping and the pages the task may
    /// dirty before its next check.
    fn min_pause(&self, max_pause_ns: u64, task_ratelimit: u64, dirty_ratelimit: u64) -> (u64, u64) {
        let max_pause = max_pause_ns / JIFFY_NS; // jiffies
        let hi = ilog2(self.bw.avg_write_bw);
        let lo = ilog2(dirty_ratelimit);
        // 10 ms for one dirtier, + 10 ms per doubling of concurrent dirtiers.
        let mut t = 10u64;
        if hi > lo {
            t += (hi - lo) * 10 * 1000 / 1024;
        }
        t = t.min(1 + max_pause / 2);
        let mut pages = dirty_ratelimit * t / HZ_POW2;
        if pages < DIRTY_POLL_THRESH_PAGES {
            t = max_pause;
            pages = dirty_ratelimit * t / HZ_POW2;
            if pages > DIRTY_POLL_THRESH_PAGES {
                pages = DIRTY_POLL_THRESH_PAGES;
                t = 1000 * DIRTY_POLL_THRESH_PAGES / dirty_ratelimit.max(1);
            }
        }
        let pause = 1000 * pages / (task_ratelimit + 1);
        if pause > max_pause {
            t = max_pause;
            pages = task_ratelimit * t / HZ_POW2;
        }
        let min_pause = if pages >= DIRTY_POLL_THRESH_PAGES { 1 + t / 2 } else { t };
        (min_pause * JIFFY_NS, pages)
    }

    /// `__wb_update_bandwidth`: every 200 ms, the write bandwidth, and with `ctx` (called from
    /// a throttled writer) the dirty ratelimit.
    fn update_bandwidth(&mut self, now_ns: u64, ctx: Option<(Thresholds, u64)>) {
        let Some(stamp) = self.bw.stamp_ns else {
            self.snapshot_bandwidth(now_ns);
            return;
        };
        let elapsed = now_ns.saturating_sub(stamp);
        if elapsed < BANDWIDTH_INTERVAL_NS {
            return;
        }
        // After an idle second the samples would mostly measure idleness: start afresh.
        if elapsed > SEC_NS {
            self.snapshot_bandwidth(now_ns);
            return;
        }
        if let Some((t, dirty)) = ctx {
            self.update_dirty_ratelimit(t, dirty, elapsed);
        }
        self.update_write_bandwidth(elapsed);
        self.snapshot_bandwidth(now_ns);
    }

    fn snapshot_bandwidth(&mut self, now_ns: u64) {
        self.bw.stamp_ns = Some(now_ns);
        self.bw.written_stamp = self.bw.written_total;
        self.bw.dirtied_stamp = self.bw.dirtied_total;
    }

    /// `wb_update_write_bandwidth`: the last sample weighted by its length into a ~4 s
    /// average, then a second smoothing that filters spikes.
    fn update_write_bandwidth(&mut self, elapsed_ns: u64) {
        let written = u128::from(self.bw.written_total - self.bw.written_stamp);
        let old = self.bw.write_bw;
        let mut avg = self.bw.avg_write_bw;
        let bw = if elapsed_ns > BANDWIDTH_PERIOD_NS {
            let bw = (written * u128::from(SEC_NS) / u128::from(elapsed_ns)) as u64;
            avg = bw;
            bw
        } else {
            let sum = written * u128::from(SEC_NS) + u128::from(old) * u128::from(BANDWIDTH_PERIOD_NS - elapsed_ns);
            let bw = (sum / u128::from(BANDWIDTH_PERIOD_NS)) as u64;
            if avg > old && old >= bw {
                avg -= (avg - old) >> 3;
            }
            if avg < old && old <= bw {
                avg += (old - avg) >> 3;
            }
            bw
        };
        self.bw.write_bw = bw.max(1);
        self.bw.avg_write_bw = avg.max(1);
    }

    /// `wb_update_dirty_ratelimit`: the balanced rate is what would have held the dirty
    /// pages steady (`task_ratelimit * write_bw / dirty_rate`); `dirty_ratelimit` steps
    /// toward it, cautiously, only where the position ratio agrees.
    fn update_dirty_ratelimit(&mut self, t: Thresholds, dirty: u64, elapsed_ns: u64) {
        let dirtied = u128::from(self.bw.dirtied_total - self.bw.dirtied_stamp);
        let dirty_rate = (dirtied * u128::from(SEC_NS) / u128::from(elapsed_ns)) as u64;
        let dirty_ratelimit = self.bw.dirty_ratelimit;
        let pos_ratio = position_ratio(t, dirty);
        let task_ratelimit = ((dirty_ratelimit * pos_ratio) >> RATELIMIT_CALC_SHIFT) + 1;
        let balanced = (u128::from(task_ratelimit) * u128::from(self.bw.write_bw) / u128::from(dirty_rate | 1)) as u64;
        let balanced = balanced.min(self.bw.write_bw);
        let freerun = (t.limit_pages + t.background_pages) / 2;
        let setpoint = (freerun + t.limit_pages) / 2;
        let mut step = 0;
        if dirty < setpoint {
            let x = self.bw.balanced_dirty_ratelimit.min(balanced).min(task_ratelimit);
            if dirty_ratelimit < x {
                step = x - dirty_ratelimit;
            }
        } else {
            let x = self.bw.balanced_dirty_ratelimit.max(balanced).max(task_ratelimit);
            if dirty_ratelimit > x {
                step = dirty_ratelimit - x;
            }
        }
        // Slow down near the target, and limit the speed to avoid overshooting.
        let shift = dirty_ratelimit / (2 * step + 1);
        step = u32::try_from(shift).ok().and_then(|s| step.checked_shr(s)).unwrap_or(0);
        step = step.div_ceil(8);
        let new = if dirty_ratelimit < balanced { dirty_ratelimit + step } else { dirty_ratelimit.saturating_sub(step) };
        self.bw.dirty_ratelimit = new.max(1);
        self.bw.balanced_dirty_ratelimit = balanced;
    }
}

/// `dirty_poll_interval`: below the freerun ceiling, check again after about the square root of
/// the distance to the limit.
fn dirty_poll_interval(dirty: u64, limit: u64) -> u64 {
    if limit > dirty {
        1 << (ilog2(limit - dirty) >> 1)
    } else {
        1
    }
}

/// The global control line (`wb_position_ratio`'s first part), fixed point with
/// `RATELIMIT_CALC_SHIFT` bits: 1 + ((setpoint - dirty) / (limit - setpoint))^3, in 0..=2.
fn position_ratio(t: Thresholds, dirty: u64) -> u64 {
    let limit = t.limit_pages;
    if dirty >= limit {
        return 0;
    }
    let freerun = (limit + t.background_pages) / 2;
    let setpoint = ((freerun + limit) / 2) as i128;
    let one = 1i128 << RATELIMIT_CALC_SHIFT;
    let x = ((setpoint - dirty as i128) << RATELIMIT_CALC_SHIFT) / ((limit as i128 - setpoint) | 1);
    let mut pos = x;
    pos = (pos * x) >> RATELIMIT_CALC_SHIFT;
    pos = (pos * x) >> RATELIMIT_CALC_SHIFT;
    pos += one;
    pos.clamp(0, 2 * one) as u64
}

fn ilog2(v: u64) -> u64 {
    u64::from(v.max(1).ilog2())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::PageKey;

    const S: u64 = SEC_NS;

    fn dirty(cache: &mut PageCache, ino: Ino, indices: impl IntoIterator<Item = u64>, now_ns: u64) {
        for i in indices {
            cache.write(PageKey::new(ino, i), now_ns);
        }
    }

    fn chunk(ino: Ino, first_index: u64, pages: u64) -> Chunk {
        Chunk { ino, first_index, pages }
    }

    fn cfg(throttle: Throttle) -> WritebackConfig {
        WritebackConfig { throttle, ..WritebackConfig::default() }
    }

    #[test]
    fn thresholds_from_ratios_and_bytes() {
        let cache = PageCache::new(1000);
        let wb = Writeback::new(WritebackConfig::default());
        assert_eq!(wb.thresholds(&cache), Thresholds { background_pages: 100, limit_pages: 200 });
        let wb = Writeback::new(WritebackConfig {
            dirty_bytes: 100 * PAGE_BYTES + 1,
            dirty_background_bytes: 10 * PAGE_BYTES,
            ..WritebackConfig::default()
        });
        assert_eq!(wb.thresholds(&cache), Thresholds { background_pages: 10, limit_pages: 101 });
        // Bytes for one, ratio for the other.
        let wb = Writeback::new(WritebackConfig { dirty_background_bytes: 40 * PAGE_BYTES, ..WritebackConfig::default() });
        assert_eq!(wb.thresholds(&cache).background_pages, 40);
        assert_eq!(wb.thresholds(&cache).limit_pages, 200);
    }

    #[test]
    fn validation_names_the_field() {
        assert_eq!(WritebackConfig::default().validate(1000), Ok(()));
        let bad = WritebackConfig { dirty_background_ratio: 30, ..WritebackConfig::default() };
        assert_eq!(
            bad.validate(1000).unwrap_err(),
            "field `host.dirty_background_ratio` = 30 is above `host.dirty_ratio` = 20: the \
             background threshold must be below the limit"
        );
        let equal = WritebackConfig { dirty_background_ratio: 20, ..WritebackConfig::default() };
        assert!(equal.validate(1000).unwrap_err().contains("is not below"));
        let e = WritebackConfig { dirty_ratio: 101, ..WritebackConfig::default() }.validate(1000).unwrap_err();
        assert!(e.starts_with("field `host.dirty_ratio` = 101"), "{e}");
        let e = WritebackConfig { dirty_background_ratio: 150, ..WritebackConfig::default() }.validate(1000).unwrap_err();
        assert!(e.starts_with("field `host.dirty_background_ratio` = 150 is above 100"), "{e}");
        let e = WritebackConfig { dirty_ratio: 0, ..WritebackConfig::default() }.validate(1000).unwrap_err();
        assert!(e.starts_with("field `host.dirty_ratio` = 0"), "{e}");
        let e = WritebackConfig { dirty_bytes: 100, ..WritebackConfig::default() }.validate(1000).unwrap_err();
        assert!(e.starts_with("field `host.dirty_bytes` = 100 is below 8192"), "{e}");
        let e = WritebackConfig { dirty_bytes: 2000 * PAGE_BYTES, ..WritebackConfig::default() }.validate(1000).unwrap_err();
        assert!(e.contains("above the page cache's size"), "{e}");
        let e = WritebackConfig { dirty_background_bytes: 300 * PAGE_BYTES, ..WritebackConfig::default() }.validate(1000).unwrap_err();
        assert!(
            e.starts_with("field `host.dirty_background_bytes` = 1228800 is above `host.dirty_ratio` = 20 (300 pages against 200 pages)"),
            "{e}"
        );
        // A cache too small for a limit of one page.
        let e = WritebackConfig::default().validate(4).unwrap_err();
        assert!(e.contains("gives a dirty limit of 0 pages"), "{e}");
    }

    #[test]
    fn kupdate_writes_expired_inodes_oldest_first_1024_pages_each() {
        let mut cache = PageCache::new(100_000);
        let mut wb = Writeback::new(WritebackConfig::default());
        dirty(&mut cache, 1, 0..3000, 0);
        dirty(&mut cache, 2, [5, 1, 3, 2], S);
        dirty(&mut cache, 3, 0..5, 40 * S);
        assert!(!wb.need_background(&cache));
        // Nothing has been dirty for 30 s yet.
        assert_eq!(wb.next_chunk(&mut cache, 20 * S), None);
        assert_eq!(wb.next_chunk(&mut cache, 30 * S - 1), None);
        let at = 35 * S;
        let got: Vec<Chunk> = std::iter::from_fn(|| wb.next_chunk(&mut cache, at)).collect();
        assert_eq!(got, vec![chunk(1, 0, 1024), chunk(2, 1, 3), chunk(2, 5, 1), chunk(1, 1024, 1024), chunk(1, 2048, 952),]);
        // Inode 3 (dirtied at 40 s) waits until 70 s.
        assert_eq!(wb.next_chunk(&mut cache, 69 * S), None);
        assert_eq!(wb.next_chunk(&mut cache, 70 * S), Some(chunk(3, 0, 5)));
        assert_eq!(wb.next_chunk(&mut cache, 70 * S), None);
        assert_eq!(cache.dirty_pages(), 0);
        assert_eq!(cache.writeback_pages(), 3009);
    }

    #[test]
    fn background_writeback_runs_only_above_the_threshold() {
        let mut cache = PageCache::new(1000); // background 100 pages
        let mut wb = Writeback::new(WritebackConfig::default());
        dirty(&mut cache, 1, 0..150, 0);
        dirty(&mut cache, 2, 0..10, S / 2);
        assert!(wb.need_background(&cache));
        assert_eq!(wb.next_chunk(&mut cache, S), Some(chunk(1, 0, 150)));
        // 10 dirty pages, not expired: left for kupdate.
        assert!(!wb.need_background(&cache));
        assert_eq!(wb.next_chunk(&mut cache, S), None);
        assert_eq!(wb.next_chunk(&mut cache, 31 * S), Some(chunk(2, 0, 10)));
    }

    #[test]
    fn no_periodic_writeback_when_its_interval_is_zero() {
        let mut cache = PageCache::new(1000);
        let mut wb = Writeback::new(WritebackConfig { dirty_writeback_centisecs: 0, ..WritebackConfig::default() });
        dirty(&mut cache, 1, 0..10, 0);
        assert_eq!(wb.next_chunk(&mut cache, 100 * S), None);
        assert_eq!(wb.next_periodic_wakeup_ns(0), None);
        let wb = Writeback::new(WritebackConfig::default());
        assert_eq!(wb.next_periodic_wakeup_ns(0), Some(5 * S));
        assert_eq!(wb.next_periodic_wakeup_ns(7 * S), Some(10 * S));
    }

    #[test]
    fn writeback_index_is_cyclic() {
        let mut cache = PageCache::new(100_000);
        let mut wb = Writeback::new(WritebackConfig::default());
        dirty(&mut cache, 1, 0..1500, 0);
        assert_eq!(wb.next_chunk(&mut cache, 31 * S), Some(chunk(1, 0, 1024)));
        cache.end_writeback(1, 0, 1024);
        dirty(&mut cache, 1, 0..10, 31 * S);
        // From where the last pass stopped to the end, then from 0.
        assert_eq!(wb.next_chunk(&mut cache, 32 * S), Some(chunk(1, 1024, 476)));
        assert_eq!(wb.next_chunk(&mut cache, 32 * S), Some(chunk(1, 0, 10)));
    }

    #[test]
    fn sync_all_and_fsync() {
        let mut cache = PageCache::new(100_000);
        let mut wb = Writeback::new(WritebackConfig::default());
        dirty(&mut cache, 1, 0..20, 0);
        dirty(&mut cache, 2, 0..2000, S);
        // fsync(2) first, in offset order, though inode 1 is older.
        wb.start_inode_sync(2);
        assert!(wb.sync_in_progress());
        assert_eq!(wb.next_chunk(&mut cache, 2 * S), Some(chunk(2, 0, 1024)));
        assert_eq!(wb.next_chunk(&mut cache, 2 * S), Some(chunk(2, 1024, 976)));
        assert!(!wb.inode_sync_done(&cache, 2));
        assert_eq!(wb.next_chunk(&mut cache, 2 * S), None); // nothing expired
        assert!(!wb.sync_in_progress());
        cache.end_writeback(2, 0, 2000);
        assert!(wb.inode_sync_done(&cache, 2));
        // sync: everything dirtied up to now, expired or not.
        dirty(&mut cache, 3, 0..5, 3 * S);
        wb.sync_all(3 * S);
        let got: Vec<Chunk> = std::iter::from_fn(|| wb.next_chunk(&mut cache, 3 * S)).collect();
        assert_eq!(got, vec![chunk(1, 0, 20), chunk(3, 0, 5)]);
        assert!(!wb.sync_in_progress());
    }

    #[test]
    fn legacy26_writer_under_the_limit_continues() {
        let mut cache = PageCache::new(10_000); // limit 2000, ratelimit 312
        let mut wb = Writeback::new(cfg(Throttle::Legacy26));
        dirty(&mut cache, 1, 0..1900, 0);
        assert_eq!(wb.balance(&mut cache, 7, 1900, 0), Balance::Continue);
        assert_eq!(wb.balance(&mut cache, 7, 400, 0), Balance::Continue);
        assert_eq!(cache.writeback_pages(), 0);
    }

    #[test]
    fn legacy26_writer_over_the_limit_writes_its_chunk_then_sleeps_up_to_100ms() {
        let mut cache = PageCache::new(10_000); // background 1000, limit 2000, ratelimit 312
        let mut wb = Writeback::new(cfg(Throttle::Legacy26));
        dirty(&mut cache, 1, 0..2500, 0);
        // Below the ratelimit: not even checked.
        assert_eq!(wb.balance(&mut cache, 7, 300, 0), Balance::Continue);
        // 400 pages since the last check: write_chunk = 600, written by the writer itself (the
        // oldest inode); with the whole chunk written it does not sleep (2.6.32).
        assert_eq!(wb.balance(&mut cache, 7, 100, 0), Balance::Pause { sleep_ns: 0, write: vec![chunk(1, 0, 600)] });
        assert_eq!(wb.balance(&mut cache, 7, 0, 0), Balance::Continue);
        // Now dirty_exceeded: checked every 8 pages. 1900 dirty + 600 under writeback: over the
        // limit, nothing to write (dirty alone is under it): sleeps 1, 2, 4 ... 100 ms.
        let mut sleeps = Vec::new();
        let mut r = wb.balance(&mut cache, 8, 8, 0);
        while let Balance::Pause { sleep_ns, write } = r {
            assert!(write.is_empty());
            sleeps.push(sleep_ns / JIFFY_NS);
            if sleeps.len() == 9 {
                cache.end_writeback(1, 0, 600);
            }
            r = wb.balance(&mut cache, 8, 0, 0);
        }
        assert_eq!(sleeps, vec![1, 2, 4, 8, 16, 32, 64, 100, 100]);
        // Under the limit again: the ratelimit is back to 312 pages.
        assert_eq!(wb.balance(&mut cache, 8, 100, 0), Balance::Continue);
        assert!(wb.need_background(&cache));
    }

    #[test]
    fn legacy26_writer_with_too_little_to_write_sleeps_after_writing() {
        let mut cache = PageCache::new(10_000);
        let mut wb = Writeback::new(cfg(Throttle::Legacy26));
        dirty(&mut cache, 1, 0..2100, 0);
        let mut flusher = Vec::new();
        // The flusher took 2000 pages to writeback; 100 dirty + 2000 writeback > limit.
        while cache.writeback_pages() < 2000 {
            flusher.push(wb.next_chunk(&mut cache, 0).unwrap());
        }
        dirty(&mut cache, 1, 2100..2200, 0);
        let r = wb.balance(&mut cache, 1, 400, 0);
        // Dirty (200) is under the limit: no writing, 1 jiffy's sleep.
        assert_eq!(r, Balance::Pause { sleep_ns: JIFFY_NS, write: vec![] });
    }

    /// IoLess: one task at each dirty level, with the same bandwidth estimate.
    fn ioless_pause_at(dirty_pages: u64) -> Balance {
        let mut cache = PageCache::new(100_000); // background 10000, limit 20000
        let mut wb = Writeback::new(cfg(Throttle::IoLess));
        dirty(&mut cache, 1, 0..dirty_pages, 0);
        wb.balance(&mut cache, 1, 1024, S)
    }

    #[test]
    fn ioless_pauses_grow_with_the_dirty_level_up_to_200ms() {
        // Below the freerun ceiling (15000): no pause.
        assert_eq!(ioless_pause_at(14_000), Balance::Continue);
        let mut last = 0;
        for level in [15_500, 17_000, 18_500, 19_500, 19_900, 20_000, 30_000, 60_000] {
            let Balance::Pause { sleep_ns, write } = ioless_pause_at(level) else {
                panic!("no pause at {level} dirty pages");
            };
            assert!(write.is_empty(), "an I/O-less writer got chunks");
            assert!(sleep_ns >= last, "pause fell at {level}: {sleep_ns} < {last}");
            assert!(sleep_ns <= MAX_PAUSE_NS);
            last = sleep_ns;
        }
        assert_eq!(last, MAX_PAUSE_NS);
        let Balance::Pause { sleep_ns: first, .. } = ioless_pause_at(15_500) else { unreachable!() };
        assert!(first < last / 2);
    }

    #[test]
    fn ioless_writer_at_the_limit_pauses_until_under_it() {
        let mut cache = PageCache::new(100_000);
        let mut wb = Writeback::new(cfg(Throttle::IoLess));
        dirty(&mut cache, 1, 0..21_000, 0);
        let mut now = S;
        let r = wb.balance(&mut cache, 1, 1024, now);
        let Balance::Pause { sleep_ns, .. } = r else { panic!("{r:?}") };
        now += sleep_ns;
        // Still over the limit: pauses again.
        let Balance::Pause { sleep_ns, .. } = wb.balance(&mut cache, 1, 0, now) else { panic!("no second pause over the limit") };
        assert_eq!(sleep_ns, 105 * JIFFY_NS); // max_pause: 21000 / (1 + 25600 / 128) + 1 jiffies
        now += sleep_ns;
        // The flusher wrote it all; 16000 dirtied again: under the limit, the loop ends after
        // this pause.
        wb.sync_all(now);
        while wb.next_chunk(&mut cache, now).is_some() {}
        cache.end_writeback(1, 0, 21_000);
        dirty(&mut cache, 1, 0..16_000, now);
        let r = wb.balance(&mut cache, 1, 0, now);
        assert!(matches!(r, Balance::Pause { .. }), "{r:?}");
        assert_eq!(wb.balance(&mut cache, 1, 0, now), Balance::Continue);
    }

    #[test]
    fn write_bandwidth_estimate_follows_completions() {
        let mut wb = Writeback::new(cfg(Throttle::IoLess));
        // 12,800 pages/s (50 MiB/s) in 200 ms steps for 20 s.
        for step in 0..=100u64 {
            wb.on_written(2560, step * BANDWIDTH_INTERVAL_NS);
        }
        let bw = wb.write_bandwidth_pages_per_s();
        assert!((11_500..=14_100).contains(&bw), "{bw}");
    }
}
