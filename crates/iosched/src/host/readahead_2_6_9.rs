//! Linux 2.6.9's readahead (October 2004), before on-demand readahead: the "current" and "ahead"
//! windows of mm/readahead.c (`page_cache_readahead`, `check_ra_success`, `handle_ra_miss`),
//! driven page by page by mm/filemap.c's `do_generic_mapping_read`. See docs/host-readahead.md.
//!
//! A pure, deterministic module like [`super::readahead`]: no clock, no I/O; the page cache is
//! seen through a [`CacheProbe`] and each call returns the [`RaWindow`] the caller must submit
//! (never a marker: 2.6.9 has no PG_readahead).
//!
//! # The state (include/linux/fs.h of 2.6.9, `struct file_ra_state`)
//!
//! `start, size` (the current window), `next_size` (the next window's size; `u64::MAX` is the
//! kernel's `-1UL`: "maximally shrunk", readahead off), `prev_page` (the page last inspected),
//! `ahead_start, ahead_size` (the ahead window; `ahead_start == 0` means none),
//! `currnt_wnd_hit` (pages read in the current window, the locality of the stream) and
//! `average` (the expected size of the next current window). A fresh open is all zero except
//! `average = ra_pages / 2` (fs/open.c:dentry_open → mm/readahead.c:file_ra_state_init; the
//! struct file is memset to 0 in fs/file_table.c:get_empty_filp, so `prev_page` starts at 0).
//!
//! # The caller's protocol (`do_generic_mapping_read`, mm/filemap.c of 2.6.9)
//!
//! For each page `i` a read() touches, in order:
//! 1. [`page_cache_readahead`]`(.., i, ..)`; submit the window it returns (pages not cached);
//! 2. look the page up: present (under I/O or not) → use it (wait if locked); missing →
//!    [`handle_ra_miss`]`(.., i)`, then read page `i` alone and wait for it.
//!
//! Calling step 1 again for the same page (the host retries a blocked read()) changes nothing:
//! `prev_page == i` returns at once (the kernel's optimisation for sub-page reads).
//!
//! # The decisions (`page_cache_readahead`)
//!
//! With `max = ra_pages` (read_ahead_kb / 4):
//! 1. `i == prev_page` and `next_size != 0` → nothing; `next_size == -1` → nothing (off);
//!    `max == 0` → nothing.
//! 2. first access (`next_size == 0`, any offset): `next_size = max / 2`, current window
//!    `[i, i + max/2)` read at once (`do_io`), no success check.
//! 3. otherwise `prev_page = i`; a hit (`start <= i <= start + size`, inside or one past the
//!    window) adds 2 to `next_size` and counts the page in `currnt_wnd_hit` (up to `2 * max + 1`);
//!    a miss subtracts 2, folds the hits into `average` (`(average' + hits) / 2`, `average'` one
//!    more than `average` if below the hits) and restarts the count at 1. `next_size` is capped
//!    at `max`; at or below 0 readahead turns off (`next_size = -1`, `size = 0`).
//! 4. `i` outside the current window: `i == ahead_start` → the ahead window becomes the current
//!    one (no I/O, `prev_page = start`); else (a seek, or the end of a window with no ahead
//!    window) `do_io`: `next_size = min(a, max)` with `a` = `average`, or
//!    `(hits + average + 1) / 2` if the hits exceed it; current window `[i, i + next_size)`,
//!    ahead window cleared.
//! 5. `i` inside the current window and no ahead window: if `a` (as above) exceeds `max`
//!    ("the io pattern is sequential") the ahead window `[start + size, + next_size)` is read.
//!
//! After each read of a window, `check_ra_success`: if it started no I/O (all cached, or past
//! EOF), `next_size` becomes the value on entry minus 1 (and the ahead window's size with it);
//! at 1 or less readahead turns off. A window is clipped to the file's last page.
//!
//! `handle_ra_miss`: readahead off → count sequential misses in `size` (one more if `i` is
//! `prev_page + 1`, one less otherwise); at `max` of them readahead resumes with a current
//! window `[i - max, i)`, `next_size = max`, `average = max / 2`. Readahead on (the page was
//! evicted or not read) → `next_size -= 3`, at least VM_MIN_READAHEAD (16 KiB = 4 pages).

use super::readahead::{CacheProbe, RaConfig, RaKind, RaWindow};

/// VM_MIN_READAHEAD (include/linux/mm.h of 2.6.9: 16 KiB "includes current page") in pages.
pub const MIN_READAHEAD_PAGES: u64 = 16 * 1024 / super::PAGE_BYTES;

/// `next_size == -1UL`: readahead maximally shrunk (off).
pub const OFF: u64 = u64::MAX;

/// 2.6.9's `struct file_ra_state` (without `ra_pages`, which is [`RaConfig::max_pages`], and the
/// mmap counters, unused by read()).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RaState269 {
    pub start: u64,
    pub size: u64,
    pub next_size: u64,
    pub prev_page: u64,
    pub ahead_start: u64,
    pub ahead_size: u64,
    pub currnt_wnd_hit: u64,
    pub average: u64,
}

impl RaState269 {
    /// A freshly opened file (`file_ra_state_init`: zeroed, `average = ra_pages / 2`).
    pub fn open(cfg: &RaConfig) -> Self {
        RaState269 {
            start: 0,
            size: 0,
            next_size: 0,
            prev_page: 0,
            ahead_start: 0,
            ahead_size: 0,
            currnt_wnd_hit: 0,
            average: cfg.max_pages / 2,
        }
    }

    /// Readahead is maximally shrunk (`next_size == -1UL`).
    pub fn is_off(&self) -> bool {
        self.next_size == OFF
    }

    /// The window's estimate used by `do_io` and the ahead-window test: `average`, or the mean
    /// of it and the current window's hits (rounded up) when they exceed it.
    fn estimate(&self) -> u64 {
        if self.currnt_wnd_hit > self.average {
            (self.currnt_wnd_hit + self.average + 1) / 2
        } else {
            self.average
        }
    }
}

/// Whether a page of `[start, start + n)` inside the file is not cached: whether the window
/// starts I/O (`__do_page_cache_readahead`'s return value is not 0; only that is asked of it).
fn starts_io(probe: &dyn CacheProbe, start: u64, n: u64, file_pages: u64) -> bool {
    let end = start.saturating_add(n).min(file_pages);
    (start..end.max(start)).any(|i| !probe.cached(i))
}

/// `check_ra_success`: a window that started no I/O shrinks `next_size` from its value on entry.
fn check_ra_success(ra: &mut RaState269, started_io: bool, orig_next_size: u64) {
    if !started_io {
        if orig_next_size > 1 {
            ra.next_size = orig_next_size - 1;
            if ra.ahead_size != 0 {
                ra.ahead_size = ra.next_size;
            }
        } else {
            ra.next_size = OFF;
            ra.size = 0;
        }
    }
}

fn window(start: u64, n: u64, file_pages: u64, trigger: u64, kind: RaKind) -> RaWindow {
    let pages = if start >= file_pages { 0 } else { n.min(file_pages - start) };
    RaWindow { start, pages, marker: None, trigger, kind }
}

/// `page_cache_readahead` for page `index` of a file of `file_pages` pages: the window to read
/// (empty: none). `kind` is [`RaKind::Sync`] for a new current window (`do_io`: it holds `index`,
/// which the reader then waits for), [`RaKind::Async`] for an ahead window.
pub fn page_cache_readahead(cfg: &RaConfig, ra: &mut RaState269, probe: &dyn CacheProbe, index: u64, file_pages: u64) -> RaWindow {
    let none = RaWindow { start: index, pages: 0, marker: None, trigger: index, kind: RaKind::Sync };
    // Sub-page reads: the page just inspected.
    if index == ra.prev_page && ra.next_size != 0 {
        return none;
    }
    if ra.next_size == OFF {
        return none;
    }
    let max = cfg.max_pages;
    if max == 0 {
        return none;
    }
    let orig_next_size = ra.next_size;
    if ra.next_size == 0 {
        // First access: assume a whole-file read (any offset, not only 0).
        ra.next_size = max / 2;
        ra.prev_page = index;
        ra.currnt_wnd_hit += 1;
        return do_io(ra, probe, index, max, file_pages, orig_next_size, true);
    }
    ra.prev_page = index;
    if index >= ra.start && index <= ra.start + ra.size {
        // A hit, inside the window or one page past it.
        ra.next_size = ra.next_size.wrapping_add(2);
        if ra.currnt_wnd_hit <= max * 2 {
            ra.currnt_wnd_hit += 1;
        }
    } else {
        // A miss (lseek, pread...).
        ra.next_size = ra.next_size.wrapping_sub(2);
        let mut average = ra.average;
        if average < ra.currnt_wnd_hit {
            average += 1;
        }
        ra.average = (average + ra.currnt_wnd_hit) / 2;
        ra.currnt_wnd_hit = 1;
    }
    // The kernel compares as signed longs here.
    if ra.next_size as i64 > max as i64 {
        ra.next_size = max;
    }
    if ra.next_size as i64 <= 0 {
        ra.next_size = OFF;
        ra.size = 0;
        return none;
    }
    if index < ra.start || index >= ra.start + ra.size {
        if index == ra.ahead_start {
            // Stepped into the ahead window: it becomes the current one; its second page will
            // start the next ahead window.
            ra.start = ra.ahead_start;
            ra.size = ra.ahead_size;
            ra.prev_page = ra.start;
            ra.ahead_start = 0;
            ra.ahead_size = 0;
            return none;
        }
        return do_io(ra, probe, index, max, file_pages, orig_next_size, false);
    }
    if ra.ahead_start == 0 && ra.estimate() > max {
        // Inside the current window, the stream looks sequential: read the ahead window.
        ra.ahead_start = ra.start + ra.size;
        ra.ahead_size = ra.next_size;
        let w = window(ra.ahead_start, ra.ahead_size, file_pages, index, RaKind::Async);
        let io = starts_io(probe, ra.ahead_start, ra.ahead_size, file_pages);
        check_ra_success(ra, io, orig_next_size);
        return w;
    }
    none
}

/// The "unusual path" (`do_io` in `page_cache_readahead`): a new current window at `index`.
#[allow(clippy::too_many_arguments)]
fn do_io(
    ra: &mut RaState269,
    probe: &dyn CacheProbe,
    index: u64,
    max: u64,
    file_pages: u64,
    orig_next_size: u64,
    first_access: bool,
) -> RaWindow {
    if !first_access {
        // "there is a high probability that around ra->average number of pages shall be
        // accessed in the next current window"
        ra.next_size = ra.estimate().min(max);
    }
    ra.start = index;
    ra.size = ra.next_size;
    ra.ahead_start = 0;
    ra.ahead_size = 0;
    let w = window(index, ra.size, file_pages, index, RaKind::Sync);
    if !first_access {
        let io = starts_io(probe, index, ra.size, file_pages);
        check_ra_success(ra, io, orig_next_size);
    }
    w
}

/// `handle_ra_miss`: page `index` was not in the cache after `page_cache_readahead`.
pub fn handle_ra_miss(cfg: &RaConfig, ra: &mut RaState269, index: u64) {
    if ra.next_size == OFF {
        let max = cfg.max_pages;
        if index != ra.prev_page.wrapping_add(1) {
            ra.size = ra.size.saturating_sub(1);
        } else {
            ra.size += 1;
            if ra.size >= max {
                // A run of sequential misses: resume readahead.
                ra.start = index.wrapping_sub(max);
                ra.next_size = max;
                ra.size = max;
                ra.ahead_start = 0;
                ra.ahead_size = 0;
                ra.average = max / 2;
            }
        }
        ra.prev_page = index;
    } else {
        // Thrashing (or a window that did not cover the page): shrink by three pages.
        ra.next_size = ra.next_size.wrapping_sub(3);
        if ra.next_size < MIN_READAHEAD_PAGES {
            ra.next_size = MIN_READAHEAD_PAGES;
        }
    }
}

/// What one read() did in [`MemFile269`]: the readahead windows it submitted, and the pages it
/// had to read alone after a miss (`handle_ra_miss`, then `readpage`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadTrace {
    pub windows: Vec<RaWindow>,
    pub single: Vec<u64>,
}

/// One file in an in-memory page cache whose I/O completes at once, read through 2.6.9's loop.
#[derive(Clone, Debug, Default)]
pub struct MemFile269 {
    pub pages: std::collections::BTreeSet<u64>,
    pub file_pages: u64,
}

impl CacheProbe for MemFile269 {
    fn cached(&self, index: u64) -> bool {
        self.pages.contains(&index)
    }
}

impl MemFile269 {
    pub fn new(file_pages: u64) -> Self {
        MemFile269 { pages: Default::default(), file_pages }
    }

    /// A read() of `n` pages at `index` (clipped to the file).
    pub fn read(&mut self, cfg: &RaConfig, ra: &mut RaState269, index: u64, n: u64) -> ReadTrace {
        let mut t = ReadTrace::default();
        for i in index..(index + n).min(self.file_pages) {
            let w = page_cache_readahead(cfg, ra, self, i, self.file_pages);
            if !w.is_empty() {
                self.pages.extend(w.start..w.end());
                t.windows.push(w);
            }
            if !self.cached(i) {
                handle_ra_miss(cfg, ra, i);
                self.pages.insert(i);
                t.single.push(i);
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (start, pages, trigger, kind) of each window.
    fn shape(ws: &[RaWindow]) -> Vec<(u64, u64, u64, RaKind)> {
        ws.iter().map(|w| (w.start, w.pages, w.trigger, w.kind)).collect()
    }

    /// ((start, size), (ahead_start, ahead_size), next_size, currnt_wnd_hit, average).
    fn windows(ra: &RaState269) -> ((u64, u64), (u64, u64), u64, u64, u64) {
        ((ra.start, ra.size), (ra.ahead_start, ra.ahead_size), ra.next_size, ra.currnt_wnd_hit, ra.average)
    }

    /// A file read in 4 KiB reads from offset 0 to page 127, then a seek to page 1000 and 4 KiB
    /// reads again, read_ahead_kb 128 (max 32, average 16 at open). Traced by hand from
    /// page_cache_readahead (mm/readahead.c of 2.6.9):
    ///
    /// ```text
    /// page 0    first access: next = 32/2 = 16, current [0,16) read (do_io)       hits 1
    /// 1..15     hits: next +2 each (32 from page 8), hits 2..16; the ahead test
    ///           wants (hits + 16 + 1)/2 > 32, i.e. hits >= 49: no ahead window
    /// 16        hit (16 <= 0+16), hits 17; 16 is outside [0,16) and not ahead_start:
    ///           do_io, next = min((17+16+1)/2, 32) = 17: current [16,33)
    /// 33        hits 34, do_io: next = (34+17)/2 = 25: current [33,58)
    /// 34..37    next 27, 29, 31, 33 -> 32
    /// 48        hits 49: (49+17)/2 = 33 > 32: ahead [58,90) (ahead_size = next = 32)
    /// 58        outside [33,58), == ahead_start: current := [58,90), ahead none; no I/O
    /// 59        hits 60 (stops growing at 65 = 2*max+1): ahead [90,122)
    /// 90, 91    current := [90,122); ahead [122,154)
    /// 122, 123  current := [122,154); ahead [154,186)
    /// -- seek --
    /// 1000      miss: next = 32-2 = 30; average: 16 < 65 so 17, (17+65)/2 = 41; hits 1;
    ///           do_io: next = min(41, 32) = 32: current [1000,1032), ahead cleared
    /// 1001      hit, hits 2: estimate = average 41 > 32: ahead [1032,1064) at once
    /// 1032,1033 current := [1032,1064); ahead [1064,1096)
    /// ```
    #[test]
    fn sequential_then_seek_then_sequential_hand_trace() {
        use RaKind::{Async, Sync};
        let cfg = RaConfig::default();
        let mut f = MemFile269::new(1 << 20);
        let mut ra = RaState269::open(&cfg);
        assert_eq!(windows(&ra), ((0, 0), (0, 0), 0, 0, 16));
        let mut ws = Vec::new();
        let mut at = std::collections::BTreeMap::new();
        for p in 0..128 {
            let t = f.read(&cfg, &mut ra, p, 1);
            assert!(t.single.is_empty());
            ws.extend(t.windows);
            at.insert(p, windows(&ra));
        }
        assert_eq!(
            shape(&ws),
            vec![
                (0, 16, 0, Sync),
                (16, 17, 16, Sync),
                (33, 25, 33, Sync),
                (58, 32, 48, Async),
                (90, 32, 59, Async),
                (122, 32, 91, Async),
                (154, 32, 123, Async),
            ]
        );
        assert_eq!(at[&0], ((0, 16), (0, 0), 16, 1, 16));
        assert_eq!(at[&8], ((0, 16), (0, 0), 32, 9, 16));
        assert_eq!(at[&15], ((0, 16), (0, 0), 32, 16, 16));
        assert_eq!(at[&16], ((16, 17), (0, 0), 17, 17, 16));
        assert_eq!(at[&33], ((33, 25), (0, 0), 25, 34, 16));
        assert_eq!(at[&37], ((33, 25), (0, 0), 32, 38, 16));
        assert_eq!(at[&47], ((33, 25), (0, 0), 32, 48, 16));
        assert_eq!(at[&48], ((33, 25), (58, 32), 32, 49, 16));
        assert_eq!(at[&58], ((58, 32), (0, 0), 32, 59, 16));
        assert_eq!(at[&59], ((58, 32), (90, 32), 32, 60, 16));
        assert_eq!(at[&90], ((90, 32), (0, 0), 32, 65, 16));
        assert_eq!(at[&127], ((122, 32), (154, 32), 32, 65, 16));
        // The seek.
        let mut ws = Vec::new();
        let t = f.read(&cfg, &mut ra, 1000, 1);
        ws.extend(t.windows);
        assert_eq!(windows(&ra), ((1000, 32), (0, 0), 32, 1, 41));
        let t = f.read(&cfg, &mut ra, 1001, 1);
        ws.extend(t.windows);
        assert_eq!(windows(&ra), ((1000, 32), (1032, 32), 32, 2, 41));
        for p in 1002..1040 {
            ws.extend(f.read(&cfg, &mut ra, p, 1).windows);
        }
        assert_eq!(shape(&ws), vec![(1000, 32, 1000, Sync), (1032, 32, 1001, Async), (1064, 32, 1033, Async)]);
        assert_eq!(windows(&ra), ((1032, 32), (1064, 32), 32, 40, 41));
    }

    /// The same reads through the read() loop in 16 KiB pieces give the same windows: the
    /// algorithm sees pages, not calls.
    #[test]
    fn read_size_does_not_matter() {
        let cfg = RaConfig::default();
        let (mut a, mut b) = (MemFile269::new(4096), MemFile269::new(4096));
        let (mut ra, mut rb) = (RaState269::open(&cfg), RaState269::open(&cfg));
        let (mut wa, mut wb) = (Vec::new(), Vec::new());
        for p in 0..512 {
            wa.extend(a.read(&cfg, &mut ra, p, 1).windows);
        }
        for r in 0..128 {
            wb.extend(b.read(&cfg, &mut rb, 4 * r, 4).windows);
        }
        assert_eq!(wa, wb);
        assert_eq!(ra, rb);
    }

    /// Random 4 KiB reads from a fresh open: the first access reads max/2 = 16 pages; each
    /// miss halves `average` ((16+1)/2 = 8, 4, 2) and do_io sizes the window by it: 8, 4, 2;
    /// at the fifth read next_size = 2 - 2 = 0: readahead off (window closed), and from then on
    /// each read is its page alone (handle_ra_miss: not sequential, size stays 0).
    #[test]
    fn random_reads_close_the_window() {
        let cfg = RaConfig::default();
        let mut f = MemFile269::new(1 << 20);
        let mut ra = RaState269::open(&cfg);
        let pages = [5000u64, 90_000, 33_333, 700_000, 123_456, 250_000, 9, 640_000];
        let mut sizes = Vec::new();
        let mut singles = Vec::new();
        for &p in &pages {
            let t = f.read(&cfg, &mut ra, p, 1);
            sizes.push(t.windows.iter().map(|w| w.pages).sum::<u64>());
            singles.push(t.single.len());
        }
        assert_eq!(sizes, vec![16, 8, 4, 2, 0, 0, 0, 0]);
        assert_eq!(singles, vec![0, 0, 0, 0, 1, 1, 1, 1]);
        assert!(ra.is_off());
        assert_eq!((ra.size, ra.prev_page), (0, 640_000));
    }

    /// With readahead off, sequential misses are counted (handle_ra_miss); after max = 32 of
    /// them readahead resumes: current [i-32, i), next 32, average 16. The page after is a miss
    /// against it (i+1 > start+size): next 30, average (16+1)/2 = 8, do_io: [i+1, i+9).
    #[test]
    fn sequential_misses_resume_readahead() {
        let cfg = RaConfig::default();
        let mut f = MemFile269::new(1 << 20);
        let mut ra = RaState269::open(&cfg);
        for p in [5000u64, 90_000, 33_333, 700_000, 123_456] {
            f.read(&cfg, &mut ra, p, 1);
        }
        assert!(ra.is_off());
        // 10_000 is not prev_page + 1: size stays 0; then 10_001.. count 1, 2, ...
        for p in 10_000..10_032 {
            let t = f.read(&cfg, &mut ra, p, 1);
            assert!(t.windows.is_empty() && t.single == vec![p]);
        }
        assert_eq!((ra.size, ra.is_off()), (31, true));
        let t = f.read(&cfg, &mut ra, 10_032, 1);
        assert_eq!(t.single, vec![10_032]);
        assert_eq!(windows(&ra), ((10_000, 32), (0, 0), 32, 1, 16));
        let t = f.read(&cfg, &mut ra, 10_033, 1);
        assert_eq!(shape(&t.windows), vec![(10_033, 8, 10_033, RaKind::Sync)]);
        assert_eq!(windows(&ra), ((10_033, 8), (0, 0), 8, 1, 8));
    }

    /// A window that starts no I/O (all cached) shrinks next_size to its value on entry minus 1
    /// (check_ra_success); the first access is not checked.
    #[test]
    fn cached_window_shrinks_next_size() {
        let cfg = RaConfig::default();
        let mut f = MemFile269::new(1000);
        f.pages.extend(0..1000);
        let mut ra = RaState269::open(&cfg);
        for p in 0..16 {
            f.read(&cfg, &mut ra, p, 1);
        }
        assert_eq!(ra.next_size, 32);
        f.read(&cfg, &mut ra, 16, 1); // do_io [16, 33): nothing to read, next = 32 - 1
        assert_eq!(windows(&ra), ((16, 17), (0, 0), 31, 17, 16));
    }

    #[test]
    fn windows_stop_at_eof_and_re_reading_a_page_is_free() {
        let cfg = RaConfig::default();
        let mut f = MemFile269::new(10);
        let mut ra = RaState269::open(&cfg);
        let t = f.read(&cfg, &mut ra, 0, 1);
        assert_eq!(shape(&t.windows), vec![(0, 10, 0, RaKind::Sync)]);
        let before = ra;
        assert!(page_cache_readahead(&cfg, &mut ra, &f, 0, 10).is_empty());
        assert_eq!(ra, before);
        // The whole file, each page once.
        let mut ra = RaState269::open(&cfg);
        let mut f = MemFile269::new(100);
        let mut total = 0;
        for p in 0..100 {
            let t = f.read(&cfg, &mut ra, p, 1);
            total += t.windows.iter().map(|w| w.pages).sum::<u64>() + t.single.len() as u64;
            assert!(t.windows.iter().all(|w| w.end() <= 100));
        }
        assert_eq!(total, 100);
    }

    #[test]
    fn read_ahead_kb_0_reads_page_by_page() {
        let cfg = RaConfig::from_kb(0);
        let mut f = MemFile269::new(100);
        let mut ra = RaState269::open(&cfg);
        for p in 0..10 {
            let t = f.read(&cfg, &mut ra, p, 1);
            assert!(t.windows.is_empty());
            assert_eq!(t.single, vec![p]);
        }
    }
}
