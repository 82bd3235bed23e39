//! read() with Linux 2.6.9's readahead (`[host] readahead = "2.6.9"`): mm/filemap.c's
//! `do_generic_mapping_read` of 2.6.9, page by page: `page_cache_readahead` for every page the
//! read touches (its window submitted), then the page looked up; a missing page calls
//! `handle_ra_miss` and is read alone (`readpage`), and the task waits for it. The decisions are
//! host/readahead_2_6_9.rs's.

use super::kernel::Kernel;
use super::page_cache::Lookup;
use super::read::Probe;
use super::readahead::{RaKind, RaWindow};
use super::readahead_2_6_9::{handle_ra_miss, page_cache_readahead, RaState269};
use super::{Ino, PageKey, PAGE_BYTES};
use crate::time::Nanos;
use crate::workload::Emit;

impl Kernel {
    /// Submits `w` and counts an ahead window's pages as prefetched; true if the task waits for
    /// an indirect block (the window is kept, see `submit_window`).
    fn submit_window_269(&mut self, t: usize, ino: Ino, w: RaWindow, now: Nanos, out: &mut Emit) -> bool {
        let before = self.tasks[t].report.data_pages_read;
        if self.submit_window(t, ino, w, now, out) {
            return true;
        }
        if w.kind == RaKind::Async {
            let task = &mut self.tasks[t];
            task.report.prefetch_pages += task.report.data_pages_read - before;
        }
        false
    }

    /// read() of `[off, off + len)`, resumed from where it stopped (`progress`). Asking
    /// readahead again about the page a blocked read stopped at changes nothing (2.6.9 returns
    /// at once for the page it last inspected), so the retry is idempotent.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn read_2_6_9(&mut self, t: usize, ino: Ino, off: u64, len: u64, now: Nanos, out: &mut Emit) -> bool {
        if let Some((wino, w)) = self.tasks[t].pending_window.take() {
            if self.submit_window_269(t, wino, w, now, out) {
                return true;
            }
        }
        // The file's readahead state, taken out of the task's map for the loop (one lookup per
        // read(), not per page) and put back when the loop ends, whichever way.
        let mut ra: Option<RaState269> = None;
        let blocked = self.read_pages_2_6_9(t, ino, off, len, &mut ra, now, out);
        if let Some(state) = ra {
            self.tasks[t].ra269.insert(ino, state);
        }
        blocked
    }

    /// The page loop of `read_2_6_9`, with the file's readahead state in `ra` (None until the
    /// first page asks for it).
    #[allow(clippy::too_many_arguments)]
    fn read_pages_2_6_9(
        &mut self,
        t: usize,
        ino: Ino,
        off: u64,
        len: u64,
        ra: &mut Option<RaState269>,
        now: Nanos,
        out: &mut Emit,
    ) -> bool {
        let size = self.tree.size(ino);
        let end = off.saturating_add(len).min(size);
        let file_pages = size.div_ceil(PAGE_BYTES);
        let cfg = self.cfg.readahead;
        loop {
            let pos = off + self.tasks[t].progress;
            if pos >= end {
                self.tasks[t].report.bytes_read += end.saturating_sub(off);
                return false;
            }
            let index = pos / PAGE_BYTES;
            let state = ra.get_or_insert_with(|| self.tasks[t].ra269.get(&ino).copied().unwrap_or_else(|| RaState269::open(&cfg)));
            let w = page_cache_readahead(&cfg, state, &Probe { cache: &self.cache, ino }, index, file_pages);
            if !w.is_empty() && self.submit_window_269(t, ino, w, now, out) {
                return true;
            }
            let key = PageKey::new(ino, index);
            match self.cache.find(key) {
                Lookup::Uptodate => {
                    let next = ((index + 1) * PAGE_BYTES).min(end);
                    self.tasks[t].progress = next - off;
                }
                Lookup::Locked => return self.wait_page(t, key),
                Lookup::Miss => {
                    handle_ra_miss(&cfg, state, index);
                    let one = RaWindow { start: index, pages: 1, marker: None, trigger: index, kind: RaKind::Sync };
                    if self.submit_window(t, ino, one, now, out) {
                        return true;
                    }
                    return self.wait_page(t, key);
                }
            }
        }
    }
}
