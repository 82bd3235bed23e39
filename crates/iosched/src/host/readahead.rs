//! On-demand readahead, modelled on Linux's mm/readahead.c (`ondemand_readahead` as of v5.10;
//! 2.6.32 differs in context readahead and the self-marker merge, see docs/host-readahead.md).
//!
//! A pure, deterministic module: no clock, no I/O. The page cache is seen only through a
//! [`CacheProbe`]; each call returns the [`RaWindow`] the caller must submit.
//!
//! # The state
//!
//! [`RaState`] is Linux's `struct file_ra_state`, one per open file: the most recent readahead
//! window `[start, start + size)`, of which the last `async_size` pages are the asynchronous
//! part, and the page of the previous read() (`prev_pos >> PAGE_SHIFT`):
//!
//! ```text
//!                        |<----- async_size ---------|
//!     |------------------- size -------------------->|
//!     |==================#===========================|
//!     ^start             ^page marked PG_readahead (start + size - async_size)
//! ```
//!
//! # The caller's protocol (Linux's filemap read loop)
//!
//! For one read() of pages `[index, index + n)` (`last = index + n`):
//!
//! 1. for each page `i` in `[index, last)`:
//!    - missing from the cache → [`sync_readahead`]`(.., i, last - i, ..)`; submit the window's
//!      pages that are not cached and set PG_readahead on `window.marker`. The window always
//!      covers `i` when `i` is inside the file (with readahead off it is that one page, as
//!      Linux's forced one-page read);
//!    - present and carrying PG_readahead → clear the mark, then
//!      [`async_readahead`]`(.., i, last - i, ..)` and submit its window the same way;
//! 2. after the read, [`update_prev`]`(ra, last - 1)` (Linux stores `prev_pos`, the last byte
//!    read; only its page matters here).
//!
//! [`MemFile`] runs this protocol over an in-memory cache whose I/O completes at once;
//! [`simulate_sequential`] uses it for the window sequence of a sequential reader.
//!
//! # The decisions (`ondemand_readahead`)
//!
//! In order, with `max = RaConfig::max_pages` (raised to `min(req, io_pages)` for a request
//! larger than max when the device's optimal I/O size allows, v4.10+):
//!
//! 1. `index == 0` (start of file) → initial window;
//! 2. `index` is the expected one (`start + size - async_size`, the marker, or `start + size`)
//!    → ramp up: `start += size`, `size = next(size)`, `async_size = size`;
//! 3. a marked page hit without matching state (interleaved streams) → the pages cached after
//!    `index` up to the first hole are taken as the old async part: `start` = that hole,
//!    `size = next(hole - index + req)`, `async_size = size` (nothing when the hole is more than
//!    max away);
//! 4. request larger than max (oversize read) → initial window;
//! 5. sequential miss (`index` is the previous read's last page or the next one) → initial
//!    window;
//! 6. context readahead: `h` = pages cached contiguously just before `index` (at most max); if
//!    `h > req`, `h` doubles when the cache holds the file from its start, and the window is
//!    `[index, index + min(h + req, max))` with `async_size = 1`;
//! 7. otherwise a small random read: exactly the request, no marker, state untouched.
//!
//! The initial window is `init(req)`: `req` rounded up to a power of two, x4 if at most max/32,
//! x2 if at most max/4, else max; `async_size = size - req` (or `size` when the request fills
//! it). The ramp-up `next(size)` is x4 below max/16, x2 up to max/2, else max. Finally, when the
//! window starts at `index` and is all asynchronous (the read would hit its own marker at once),
//! the next window is merged in: `size += next(size)`, `async_size = next(size)`; if that exceeds
//! max, `size = max`, `async_size = max / 2` (v4.10+; 2.6.32 merged without the cap).
//!
//! The window is clipped to the file: no page past EOF, and no marker when the window reaches
//! the file's last page. The marker is only set on a page this window reads (never on a page
//! already cached).

/// Readahead tunables of one block device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RaConfig {
    /// Maximum window in pages: `read_ahead_kb / 4` (`/sys/block/<dev>/queue/read_ahead_kb`,
    /// default 128 KiB = 32 pages). 0 turns readahead off.
    pub max_pages: u64,
    /// The device's optimal I/O size in pages (`bdi->io_pages`, max_sectors_kb / 4): a request
    /// larger than `max_pages` may get a window up to `min(request, io_pages)` (Linux v4.10+).
    /// 0 (the default) disables this, as in 2.6.32-4.9.
    pub io_pages: u64,
}

/// Linux's default `read_ahead_kb` (VM_READAHEAD_PAGES = 128 KiB).
pub const DEFAULT_READ_AHEAD_KB: u64 = 128;

impl RaConfig {
    /// From `read_ahead_kb` (KiB); 0 turns readahead off.
    pub fn from_kb(read_ahead_kb: u64) -> Self {
        RaConfig { max_pages: read_ahead_kb * 1024 / super::PAGE_BYTES, io_pages: 0 }
    }

    /// With the device's optimal I/O size (`max_sectors_kb`, KiB).
    pub fn with_io_kb(self, io_kb: u64) -> Self {
        RaConfig { io_pages: io_kb * 1024 / super::PAGE_BYTES, ..self }
    }

    /// The window limit for a request of `req` pages.
    fn max_for(&self, req: u64) -> u64 {
        if req > self.max_pages && self.io_pages > self.max_pages {
            req.min(self.io_pages)
        } else {
            self.max_pages
        }
    }
}

impl Default for RaConfig {
    fn default() -> Self {
        RaConfig::from_kb(DEFAULT_READ_AHEAD_KB)
    }
}

/// Linux's `file_ra_state`: the last readahead window and the previous read's page.
/// `Default` is a freshly opened file (Linux: zeroed, `prev_pos = -1`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RaState {
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
    /// Page of the last byte of the previous read() (`prev_pos >> PAGE_SHIFT`); `None` before
    /// the first read.
    pub prev_index: Option<u64>,
}

/// The page cache as readahead sees it.
pub trait CacheProbe {
    /// Page `index` of this file is in the cache (in any state, including under I/O).
    fn cached(&self, index: u64) -> bool;
}

/// What triggered a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaKind {
    /// A cache miss (`page_cache_sync_readahead`).
    Sync,
    /// A page carrying PG_readahead (`page_cache_async_readahead`).
    Async,
}

/// A readahead decision: read the pages of `[start, start + pages)` that are not cached and set
/// PG_readahead on `marker`. `pages == 0`: nothing to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RaWindow {
    pub start: u64,
    pub pages: u64,
    pub marker: Option<u64>,
    /// The page whose access made this window, and how.
    pub trigger: u64,
    pub kind: RaKind,
}

impl RaWindow {
    pub fn end(&self) -> u64 {
        self.start + self.pages
    }

    pub fn is_empty(&self) -> bool {
        self.pages == 0
    }
}

/// `get_init_ra_size`: the first window for a request of `req` pages.
pub fn init_size(req: u64, max: u64) -> u64 {
    let n = req.max(1).next_power_of_two();
    if n <= max / 32 {
        n * 4
    } else if n <= max / 4 {
        n * 2
    } else {
        max
    }
}

/// `get_next_ra_size`: the window after one of `cur` pages.
pub fn next_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

/// Pages cached contiguously just before `index`, looking back at most `max` pages
/// (`count_history_pages`).
fn history_pages(probe: &dyn CacheProbe, index: u64, max: u64) -> u64 {
    let mut n = 0;
    while n < max && n < index && probe.cached(index - 1 - n) {
        n += 1;
    }
    n
}

/// The first page at or after `from` not cached, looking at most `max` pages
/// (`page_cache_next_miss`); `None` when all `max` are cached.
fn next_miss(probe: &dyn CacheProbe, from: u64, max: u64) -> Option<u64> {
    (from..from.saturating_add(max)).find(|&i| !probe.cached(i))
}

/// The window `[start, start + size)` with `async_size`, clipped to the file (`do_page_cache_ra`).
fn submit(probe: &dyn CacheProbe, start: u64, size: u64, async_size: u64, file_pages: u64, trigger: u64, kind: RaKind) -> RaWindow {
    let mut w = RaWindow { start, pages: 0, marker: None, trigger, kind };
    if start >= file_pages || size == 0 {
        return w;
    }
    let mut lookahead = async_size;
    w.pages = size;
    if size >= file_pages - start {
        // Reaching the file's last page: no marker, nothing to read ahead next.
        w.pages = file_pages - start;
        lookahead = 0;
    }
    if lookahead > 0 && lookahead <= w.pages {
        let m = start + w.pages - lookahead;
        if !probe.cached(m) {
            w.marker = Some(m);
        }
    }
    w
}

fn ondemand(cfg: &RaConfig, ra: &mut RaState, probe: &dyn CacheProbe, hit_marker: bool, index: u64, req: u64, file_pages: u64) -> RaWindow {
    let kind = if hit_marker { RaKind::Async } else { RaKind::Sync };
    let max = cfg.max_for(req);
    let expected = index == ra.start + ra.size - ra.async_size || index == ra.start + ra.size;
    let initial = if index == 0 {
        true
    } else if expected {
        ra.start += ra.size;
        ra.size = next_size(ra.size, max);
        ra.async_size = ra.size;
        false
    } else if hit_marker {
        match next_miss(probe, index + 1, max) {
            Some(hole) if hole - index <= max => {
                ra.start = hole;
                ra.size = next_size(hole - index + req, max);
                ra.async_size = ra.size;
                false
            }
            _ => return submit(probe, index, 0, 0, file_pages, index, kind),
        }
    } else if req > max || ra.prev_index.is_some_and(|p| index == p || index == p + 1) {
        true
    } else {
        let mut h = history_pages(probe, index, max);
        if h <= req {
            // Standalone small random read: just the request, the state untouched.
            return submit(probe, index, req, 0, file_pages, index, kind);
        }
        if h >= index {
            h *= 2;
        }
        ra.start = index;
        ra.size = (h + req).min(max);
        ra.async_size = 1;
        false
    };
    if initial {
        ra.start = index;
        ra.size = init_size(req, max);
        ra.async_size = if ra.size > req { ra.size - req } else { ra.size };
    }
    // The read would hit this window's own marker at once: merge the next window in.
    if index == ra.start && ra.size == ra.async_size {
        let add = next_size(ra.size, max);
        if ra.size + add <= max {
            ra.async_size = add;
            ra.size += add;
        } else {
            ra.size = max;
            ra.async_size = max / 2;
        }
    }
    submit(probe, ra.start, ra.size, ra.async_size, file_pages, index, kind)
}

/// A read of `req_pages` (the rest of the read() from `index`) missed the cache at page `index`
/// (`page_cache_sync_readahead`). With readahead off the window is the one page `index`.
pub fn sync_readahead(cfg: &RaConfig, ra: &mut RaState, probe: &dyn CacheProbe, index: u64, req_pages: u64, file_pages: u64) -> RaWindow {
    let req = req_pages.max(1);
    if cfg.max_pages == 0 {
        return submit(probe, index, 1, 0, file_pages, index, RaKind::Sync);
    }
    ondemand(cfg, ra, probe, false, index, req, file_pages)
}

/// A read hit page `index` carrying PG_readahead (`page_cache_async_readahead`); the caller has
/// cleared the mark. `req_pages` is the rest of the read() from `index`.
pub fn async_readahead(cfg: &RaConfig, ra: &mut RaState, probe: &dyn CacheProbe, index: u64, req_pages: u64, file_pages: u64) -> RaWindow {
    if cfg.max_pages == 0 {
        return submit(probe, index, 0, 0, file_pages, index, RaKind::Async);
    }
    ondemand(cfg, ra, probe, true, index, req_pages.max(1), file_pages)
}

/// After a read() whose last page was `last_index` (Linux: `ra->prev_pos`).
pub fn update_prev(ra: &mut RaState, last_index: u64) {
    ra.prev_index = Some(last_index);
}

/// One file in an in-memory page cache whose I/O completes at once, read through the caller's
/// protocol. Several [`RaState`]s may read the same `MemFile` (separate opens), or one state
/// several streams (one shared descriptor).
#[derive(Clone, Debug, Default)]
pub struct MemFile {
    /// Cached pages; `true` = carries PG_readahead.
    pub pages: std::collections::BTreeMap<u64, bool>,
    pub file_pages: u64,
}

impl CacheProbe for MemFile {
    fn cached(&self, index: u64) -> bool {
        self.pages.contains_key(&index)
    }
}

impl MemFile {
    pub fn new(file_pages: u64) -> Self {
        MemFile { pages: Default::default(), file_pages }
    }

    fn apply(&mut self, w: &RaWindow) {
        for i in w.start..w.end() {
            self.pages.entry(i).or_insert(false);
        }
        if let Some(m) = w.marker {
            self.pages.insert(m, true);
        }
    }

    /// A read() of `n` pages at `index` (clipped to the file): the windows it caused, in order.
    pub fn read(&mut self, cfg: &RaConfig, ra: &mut RaState, index: u64, n: u64) -> Vec<RaWindow> {
        let last = (index + n).min(self.file_pages);
        let mut out = Vec::new();
        if index >= last {
            return out;
        }
        for i in index..last {
            let w = match self.pages.get(&i).copied() {
                None => sync_readahead(cfg, ra, self, i, last - i, self.file_pages),
                Some(true) => {
                    self.pages.insert(i, false);
                    async_readahead(cfg, ra, self, i, last - i, self.file_pages)
                }
                Some(false) => continue,
            };
            if !w.is_empty() {
                self.apply(&w);
                out.push(w);
            }
            debug_assert!(self.cached(i));
        }
        update_prev(ra, last - 1);
        out
    }
}

/// The windows of a reader doing `reads` sequential reads of `read_pages` pages from offset 0
/// of a file of `file_pages` pages, with every I/O completing at once.
pub fn simulate_sequential(cfg: &RaConfig, read_pages: u64, reads: u64, file_pages: u64) -> Vec<RaWindow> {
    let mut file = MemFile::new(file_pages);
    let mut ra = RaState::default();
    let mut out = Vec::new();
    for r in 0..reads {
        out.extend(file.read(cfg, &mut ra, r * read_pages, read_pages));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (start, pages, marker, trigger) of each window.
    fn shape(ws: &[RaWindow]) -> Vec<(u64, u64, Option<u64>, u64)> {
        ws.iter().map(|w| (w.start, w.pages, w.marker, w.trigger)).collect()
    }

    #[test]
    fn from_kb_default_is_32_pages() {
        assert_eq!(RaConfig::default().max_pages, 32);
        assert_eq!(RaConfig::from_kb(512).max_pages, 128);
        assert_eq!(RaConfig::from_kb(0).max_pages, 0);
    }

    /// The comment above get_init_ra_size (v5.10+): "for 128k (32 page) max ra
    /// 1-2 page = 16k, 3-4 page 32k, 5-8 page = 64k, > 8 page = 128k initial".
    /// (2.6.x-5.9 said "1-8 page = 32k initial, > 8 page = 128k initial", which the same code
    /// never did.)
    #[test]
    fn initial_sizes_match_the_kernel_comment() {
        let kib = |req| init_size(req, 32) * 4;
        for req in 1..=2 {
            assert_eq!(kib(req), 16);
        }
        for req in 3..=4 {
            assert_eq!(kib(req), 32);
        }
        for req in 5..=8 {
            assert_eq!(kib(req), 64);
        }
        for req in [9, 16, 31, 32, 64, 256] {
            assert_eq!(kib(req), 128);
        }
        // Ramp-up: x4 below max/16, x2 up to max/2, then max.
        assert_eq!(next_size(1, 32), 4);
        assert_eq!(next_size(2, 32), 4);
        assert_eq!(next_size(8, 32), 16);
        assert_eq!(next_size(16, 32), 32);
        assert_eq!(next_size(32, 32), 32);
        assert_eq!(next_size(4, 128), 16);
        assert_eq!(next_size(64, 128), 128);
    }

    /// The first sequential read of each size in the comment, as a whole read() from offset 0
    /// (128 KiB max): the first window is init(req) marked at the page after the read; a read of
    /// 32+ pages fills it, so the next window is merged in, capped at max with the marker at
    /// max/2.
    #[test]
    fn first_window_of_each_read_size() {
        let cfg = RaConfig::default();
        for (req, pages, marker) in [
            (1, 4, Some(1)),
            (2, 4, Some(2)),
            (3, 8, Some(3)),
            (4, 8, Some(4)),
            (5, 16, Some(5)),
            (8, 16, Some(8)),
            (9, 32, Some(9)),
            (16, 32, Some(16)),
            (32, 32, Some(16)),
        ] {
            let w = simulate_sequential(&cfg, req, 1, 1 << 20)[0];
            assert_eq!((w.start, w.pages, w.marker), (0, pages, marker), "req {req}");
        }
    }

    /// 4-page reads, read_ahead_kb 128 (max 32): init(4) = 8 (4 <= 32/4: x2, not x4), marker at
    /// 8 - 4 = 4; at page 4: [8, 24) (next(8) = 16); at 8: [24, 56) (next(16) = 32); then 32
    /// pages every 32 pages, each marked at its first page.
    #[test]
    fn sequential_4_page_reads_128k() {
        let ws = simulate_sequential(&RaConfig::default(), 4, 38, 1 << 20);
        assert_eq!(
            shape(&ws),
            vec![
                (0, 8, Some(4), 0),
                (8, 16, Some(8), 4),
                (24, 32, Some(24), 8),
                (56, 32, Some(56), 24),
                (88, 32, Some(88), 56),
                (120, 32, Some(120), 88),
                (152, 32, Some(152), 120),
            ]
        );
        assert_eq!(ws[0].kind, RaKind::Sync);
        assert!(ws[1..].iter().all(|w| w.kind == RaKind::Async));
    }

    /// 4-page reads, read_ahead_kb 512 (max 128): the x4 case, init(4) = 16 with async 12
    /// (marker at 4), then 32, 64, 128, 128.
    #[test]
    fn sequential_4_page_reads_512k() {
        let ws = simulate_sequential(&RaConfig::from_kb(512), 4, 70, 1 << 20);
        assert_eq!(
            shape(&ws),
            vec![
                (0, 16, Some(4), 0),
                (16, 32, Some(16), 4),
                (48, 64, Some(48), 16),
                (112, 128, Some(112), 48),
                (240, 128, Some(240), 112),
                (368, 128, Some(368), 240),
            ]
        );
    }

    /// A 1 MiB read (256 pages) at offset 0 with max 32: init = max, the request fills it, so
    /// the merge caps it at [0, 32) marked at 16; the read then walks into the marks: 32-page
    /// windows [32, 64) ... [256, 288), each triggered half a window ahead. With an optimal I/O
    /// size of 1280 KiB (v4.10+), the limit becomes min(256, 320) = 256: one 256-page window.
    #[test]
    fn one_mib_read() {
        let ws = simulate_sequential(&RaConfig::default(), 256, 1, 1 << 20);
        let mut want = vec![(0, 32, Some(16), 0)];
        want.push((32, 32, Some(32), 16));
        for k in 2..=8 {
            want.push((32 * k, 32, Some(32 * k), 32 * (k - 1)));
        }
        assert_eq!(shape(&ws), want);
        assert!(ws.iter().all(|w| w.pages <= 32));

        let io = RaConfig::default().with_io_kb(1280);
        let ws = simulate_sequential(&io, 256, 1, 1 << 20);
        // [0, 256) marked at 128; at 128 the request left is 128 pages: limit 128.
        assert_eq!(shape(&ws), vec![(0, 256, Some(128), 0), (256, 128, Some(256), 128)]);
    }

    /// Small reads far apart: exactly the request, no marker, the window state untouched.
    #[test]
    fn random_reads_read_only_the_request() {
        let cfg = RaConfig::default();
        let mut f = MemFile::new(1 << 20);
        let mut ra = RaState::default();
        let mut x: u64 = 12345;
        for _ in 0..200 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let index = 1 + (x >> 33) % ((1 << 20) - 8);
            let n = 1 + (x >> 20) % 4;
            let before = (ra.start, ra.size, ra.async_size);
            let ws = f.read(&cfg, &mut ra, index, n);
            let read: u64 = ws.iter().map(|w| w.pages).sum();
            assert!(read <= n, "read {read} for a {n}-page read at {index}: {ws:?}");
            assert!(ws.iter().all(|w| w.marker.is_none()));
            assert_eq!(before, (ra.start, ra.size, ra.async_size));
        }
    }

    /// An oversize read away from the start, not sequential: handled like a first read (Linux
    /// "oversize read"): a max window marked at max/2.
    #[test]
    fn oversize_random_read() {
        let cfg = RaConfig::default();
        let mut f = MemFile::new(1 << 20);
        let mut ra = RaState::default();
        let ws = f.read(&cfg, &mut ra, 5000, 40);
        assert_eq!(shape(&ws), vec![(5000, 32, Some(5016), 5000), (5032, 32, Some(5032), 5016), (5064, 32, Some(5064), 5032)]);
    }

    /// Two sequential streams through one descriptor (one RaState), alternating 4-page reads:
    /// each overwrites the other's state, yet both keep ramping up to max: stream B through
    /// context readahead (the pages cached before it), both through marked pages found without
    /// matching state.
    #[test]
    fn interleaved_streams_both_ramp() {
        let cfg = RaConfig::default();
        let mut f = MemFile::new(1 << 20);
        let mut ra = RaState::default();
        let (a0, b0) = (0u64, 100_000u64);
        let mut a_windows = Vec::new();
        let mut b_windows = Vec::new();
        for r in 0..200 {
            a_windows.extend(f.read(&cfg, &mut ra, a0 + 4 * r, 4));
            b_windows.extend(f.read(&cfg, &mut ra, b0 + 4 * r, 4));
        }
        // A: [0, 8) then, at its marks, 16 and 32.
        assert_eq!(a_windows[0].pages, 8);
        assert!(a_windows.iter().rev().take(10).all(|w| w.pages == 32));
        // B: two random reads of 4, then context readahead [b0+8, b0+20) (8 history + 4).
        assert_eq!(shape(&b_windows[..3]), vec![(b0, 4, None, b0), (b0 + 4, 4, None, b0 + 4), (b0 + 8, 12, Some(b0 + 19), b0 + 8)]);
        assert!(b_windows.iter().rev().take(10).all(|w| w.pages == 32));
        // Both read far ahead of their requests: 800 pages each were asked for.
        let a_read: u64 = a_windows.iter().map(|w| w.pages).sum();
        let b_read: u64 = b_windows.iter().map(|w| w.pages).sum();
        assert!(a_read >= 800 && b_read >= 800);
        // Everything asked for was read exactly once.
        for i in 0..800 {
            assert!(f.cached(a0 + i) && f.cached(b0 + i));
        }
    }

    /// The same two streams through separate opens (their own RaState): plain sequential.
    #[test]
    fn two_opens_each_sequential() {
        let cfg = RaConfig::default();
        let mut f = MemFile::new(1 << 20);
        let (mut ra, mut rb) = (RaState::default(), RaState::default());
        let mut b = Vec::new();
        for r in 0..40 {
            f.read(&cfg, &mut ra, 4 * r, 4);
            b.extend(f.read(&cfg, &mut rb, 50_000 + 4 * r, 4));
        }
        // B's first read is not at offset 0 and has no history: a random read; its second is
        // sequential to its own previous read: initial window init(4) = 8.
        assert_eq!(shape(&b[..2]), vec![(50_000, 4, None, 50_000), (50_004, 8, Some(50_008), 50_004)]);
    }

    #[test]
    fn never_past_eof() {
        for kb in [16, 128, 512, 4096] {
            let cfg = RaConfig::from_kb(kb);
            for file_pages in [1, 3, 7, 8, 9, 50, 100, 257] {
                for read in [1, 4, 16, 256] {
                    let ws = simulate_sequential(&cfg, read, 1000, file_pages);
                    assert!(ws.iter().all(|w| w.end() <= file_pages), "{kb} {file_pages}");
                    // A window reaching the last page carries no marker.
                    for w in &ws {
                        if w.end() == file_pages {
                            assert_eq!(w.marker, None);
                        }
                    }
                    // The whole file was read, each page once.
                    let total: u64 = ws.iter().map(|w| w.pages).sum();
                    assert_eq!(total, file_pages, "{kb} KiB, {file_pages} pages, reads of {read}");
                }
            }
        }
        // A 10-page file, 4-page reads: [0, 8) marked at 4, then at 4: [8, 10) unmarked.
        let ws = simulate_sequential(&RaConfig::default(), 4, 5, 10);
        assert_eq!(shape(&ws), vec![(0, 8, Some(4), 0), (8, 2, None, 4)]);
        // Reads past EOF do nothing.
        let mut ra = RaState::default();
        let w = sync_readahead(&RaConfig::default(), &mut ra, &MemFile::new(10), 10, 4, 10);
        assert!(w.is_empty());
    }

    #[test]
    fn read_ahead_kb_0_disables() {
        let cfg = RaConfig::from_kb(0);
        let ws = simulate_sequential(&cfg, 4, 10, 1 << 20);
        assert_eq!(ws.len(), 40);
        for (i, w) in ws.iter().enumerate() {
            assert_eq!((w.start, w.pages, w.marker), (i as u64, 1, None));
        }
        // A marked page (from an earlier setting) triggers nothing.
        let mut ra = RaState::default();
        assert!(async_readahead(&cfg, &mut ra, &MemFile::new(100), 5, 4, 100).is_empty());
    }

    /// Unaligned reads (the same page twice) stay sequential: index == prev.
    #[test]
    fn rereading_the_previous_page_is_sequential() {
        let cfg = RaConfig::default();
        let mut f = MemFile::new(1 << 20);
        let mut ra = RaState::default();
        f.read(&cfg, &mut ra, 1000, 1); // random: 1 page
        f.pages.clear();
        let ws = f.read(&cfg, &mut ra, 1000, 2); // index == prev: initial window init(2) = 4
        assert_eq!(shape(&ws), vec![(1000, 4, Some(1002), 1000)]);
    }
}
