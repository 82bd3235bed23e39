//! read() on the FreeBSD 4 host: the sequential heuristic and ffs_read / cluster_read
//! (decisions in readahead_freebsd.rs), block by block through the host's page cache. A block
//! carries FreeBSD's read-ahead mark (B_RAM) as the page cache's readahead mark on its first
//! page; a block is "in core" when any of its pages is cached or on its way.

use super::kernel::{Kernel, Stage};
use super::page_cache::{Lookup, PageCache};
use super::readahead_freebsd::{cluster_read, read_blocks_span, resid_bytes, sequential_count, BlockProbe, BlockRead, BsdGeometry};
use super::{Ino, PageKey, PAGE_BYTES};
use crate::time::Nanos;
use crate::workload::Emit;

use super::FREEBSD_MAXPHYS_PAGES as MAXPHYS_PAGES;

struct Probe<'a> {
    cache: &'a mut PageCache,
    ino: Ino,
    geo: BsdGeometry,
    /// Marks to set once the blocks are in the cache (a block being read is not there yet).
    marks: Vec<u64>,
}

impl Probe<'_> {
    fn first_page(&self, block: u64) -> PageKey {
        PageKey::new(self.ino, block * self.geo.block_pages)
    }
}

impl BlockProbe for Probe<'_> {
    fn incore(&self, block: u64) -> bool {
        let (a, b) = self.geo.block_pages_range(block, 1);
        (a..b).any(|p| self.cache.contains(PageKey::new(self.ino, p)))
    }

    fn take_mark(&mut self, block: u64) -> bool {
        let key = self.first_page(block);
        self.cache.test_clear_readahead_mark(key)
    }

    fn set_mark(&mut self, block: u64) {
        self.marks.push(block);
    }
}

impl Kernel {
    /// read() of `[off, off + len)` on the FreeBSD host; true if the task waits.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn read_freebsd(&mut self, t: usize, ino: Ino, off: u64, len: u64, now: Nanos, out: &mut Emit) -> bool {
        let size = self.tree.size(ino);
        let geo = BsdGeometry::new(self.cfg.meta_block_pages.max(1), MAXPHYS_PAGES, size);
        if self.tasks[t].stage == Stage::Start {
            let task = &mut self.tasks[t];
            let st = task.bsd_seq.entry(ino).or_default();
            task.bsd_seqcount = sequential_count(st, off, len);
            task.stage = Stage::Pages;
        }
        let seqcount = self.tasks[t].bsd_seqcount;
        let end = off.saturating_add(len).min(size);
        if end <= off {
            return false;
        }
        let (_, last_block) = read_blocks_span(&geo, off, len);
        loop {
            let pos = off + self.tasks[t].progress;
            let block = pos / geo.block_bytes();
            if pos >= end || block > last_block {
                self.tasks[t].report.bytes_read += end - off;
                return false;
            }
            // The mapping of this block and of a cluster after it must be known first.
            let (a, _) = geo.block_pages_range(block, 1);
            let span = (2 * geo.racluster_blocks * geo.block_pages).min(geo.file_pages().saturating_sub(a));
            for s in self.layout.indirect_blocks_for(ino, a, span.max(1)) {
                if self.need_meta(t, s, now, out) {
                    return true;
                }
            }
            // The pages of this block the read needs.
            let p_lo = pos / PAGE_BYTES;
            let p_hi = ((block + 1) * geo.block_bytes()).min(end).div_ceil(PAGE_BYTES);
            let mut missing = false;
            let mut on_way = None;
            for p in p_lo..p_hi {
                let key = PageKey::new(ino, p);
                if !self.cache.contains(key) {
                    missing = true;
                } else if on_way.is_none() && self.cache.find(key) == Lookup::Locked {
                    on_way = Some(key);
                }
            }
            if let (false, Some(key)) = (missing, on_way) {
                return self.wait_page(t, key);
            }
            let resid = resid_bytes(&geo, pos, end - pos, block);
            let mut reads = Vec::new();
            let marks = {
                let mut probe = Probe { cache: &mut self.cache, ino, geo, marks: Vec::new() };
                cluster_read(&geo, &mut probe, block, missing, resid, seqcount, &mut reads);
                probe.marks
            };
            for r in &reads {
                let (a, b) = r.pages(&geo);
                self.read_pages(t, ino, a, b - a, false, now, out);
                if !r.is_sync() {
                    self.tasks[t].report.prefetch_pages += b - a;
                }
            }
            for m in marks {
                let key = PageKey::new(ino, m * geo.block_pages);
                if self.cache.contains(key) {
                    self.cache.set_readahead_mark(key);
                }
            }
            if missing {
                let key = PageKey::new(ino, p_lo);
                if reads.iter().any(BlockRead::is_sync) && self.cache.contains(key) {
                    return self.wait_page(t, key);
                }
                // cluster_read always reads the block it is given; guard against a loop.
                self.read_pages(t, ino, p_lo, p_hi - p_lo, false, now, out);
                return self.wait_page(t, key);
            }
            for p in p_lo..p_hi {
                self.cache.find(PageKey::new(ino, p));
            }
            self.tasks[t].progress = ((block + 1) * geo.block_bytes()).min(end) - off;
        }
    }
}
