//! The read side of the host's system calls: read() through the page cache with readahead,
//! O_DIRECT transfers, path lookup and readdir with their metadata reads, and creat/mkdir.

use super::config::{KernelKind, RaAlgorithm};
use super::kernel::{BioInfo, BioKind, Kernel, Stage, Submitter, Wait};
use super::page_cache::{Lookup, PageCache};
use super::readahead::{self, CacheProbe, RaWindow};
use super::readahead_freebsd::fault_window;
use super::{Ino, PageKey, BDEV_INO, PAGE_BYTES, PAGE_SECTORS};
use crate::request::Op;
use crate::time::Nanos;
use crate::workload::{Emit, NewRequest};

/// Readahead's view of one file in the page cache.
pub(super) struct Probe<'a> {
    pub cache: &'a PageCache,
    pub ino: Ino,
}

impl CacheProbe for Probe<'_> {
    fn cached(&self, index: u64) -> bool {
        self.cache.contains(PageKey::new(self.ino, index))
    }
}

impl Kernel {
    /// The metadata block holding `sector` is in the cache; else it is read (or waited for)
    /// and the task blocks (true).
    pub(super) fn need_meta(&mut self, t: usize, sector: u64, now: Nanos, out: &mut Emit) -> bool {
        let per = self.cfg.meta_block_pages.max(1);
        let page = sector / PAGE_SECTORS;
        let key = PageKey::new(BDEV_INO, page);
        match self.cache.find(key) {
            Lookup::Uptodate => false,
            Lookup::Locked => self.wait_page(t, key),
            Lookup::Miss => {
                self.read_pages(t, BDEV_INO, page / per * per, per, true, now, out);
                self.wait_page(t, key)
            }
        }
    }

    /// The path walk to `ino`: per component without a cached dentry, its parent's directory
    /// blocks up to the one holding its entry, then its inode's block.
    pub(super) fn lookup(&mut self, t: usize, ino: Ino, now: Nanos, out: &mut Emit) -> bool {
        let mut path = Vec::new();
        let mut at = ino;
        while let Some(parent) = self.tree.parent(at) {
            if self.dcache.contains(&at) {
                break;
            }
            path.push((parent, at));
            at = parent;
        }
        for &(parent, child) in path.iter().rev() {
            let last = self.layout.dir_block_of_entry(parent, child);
            let blocks: Vec<u64> = self.layout.dir_blocks(parent).to_vec();
            for s in blocks {
                if self.need_meta(t, s, now, out) {
                    return true;
                }
                if s == last {
                    break;
                }
            }
            if self.need_meta(t, self.layout.inode_block(child), now, out) {
                return true;
            }
            self.dcache.insert(child);
        }
        // An open starts with a fresh readahead state (Linux's file_ra_state, FreeBSD's
        // f_seqcount live in the open file).
        let task = &mut self.tasks[t];
        task.ra.remove(&ino);
        task.ra269.remove(&ino);
        task.bsd_seq.remove(&ino);
        false
    }

    /// getdents() over the whole directory (after the walk to it).
    pub(super) fn readdir(&mut self, t: usize, dir: Ino, now: Nanos, out: &mut Emit) -> bool {
        if self.lookup(t, dir, now, out) {
            return true;
        }
        let blocks: Vec<u64> = self.layout.dir_blocks(dir).to_vec();
        for s in blocks {
            if self.need_meta(t, s, now, out) {
                return true;
            }
        }
        false
    }

    /// Submits a readahead window: first the indirect blocks that map it (the mapping must be
    /// known before the data can be read), then its missing pages, then its marker. True if the
    /// task waits for an indirect block (the window is kept and submitted when it resumes).
    pub(super) fn submit_window(&mut self, t: usize, ino: Ino, w: RaWindow, now: Nanos, out: &mut Emit) -> bool {
        if w.is_empty() {
            return false;
        }
        for s in self.layout.indirect_blocks_for(ino, w.start, w.pages) {
            if self.need_meta(t, s, now, out) {
                self.tasks[t].pending_window = Some((ino, w));
                return true;
            }
        }
        self.read_pages(t, ino, w.start, w.pages, false, now, out);
        if let Some(m) = w.marker {
            let key = PageKey::new(ino, m);
            if self.cache.contains(key) {
                self.cache.set_readahead_mark(key);
            }
        }
        false
    }

    /// read() of `[off, off + len)`: Linux's filemap read loop, page by page from where the
    /// call stopped.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn read(&mut self, t: usize, ino: Ino, off: u64, len: u64, now: Nanos, out: &mut Emit) -> bool {
        if self.cfg.ra_algorithm == RaAlgorithm::Linux269 {
            return self.read_2_6_9(t, ino, off, len, now, out);
        }
        if let Some((wino, w)) = self.tasks[t].pending_window.take() {
            if self.submit_window(t, wino, w, now, out) {
                return true;
            }
        }
        let size = self.tree.size(ino);
        let end = off.saturating_add(len).min(size);
        let file_pages = size.div_ceil(PAGE_BYTES);
        let last = end.div_ceil(PAGE_BYTES);
        loop {
            let pos = off + self.tasks[t].progress;
            if pos >= end {
                let task = &mut self.tasks[t];
                task.report.bytes_read += end.saturating_sub(off);
                if end > off {
                    readahead::update_prev(task.ra.entry(ino).or_default(), last - 1);
                }
                return false;
            }
            let index = pos / PAGE_BYTES;
            let key = PageKey::new(ino, index);
            match self.cache.find_taking_mark(key) {
                (Lookup::Uptodate, marked) => {
                    if marked {
                        let w = {
                            let probe = Probe { cache: &self.cache, ino };
                            let ra = self.tasks[t].ra.entry(ino).or_default();
                            readahead::async_readahead(&self.cfg.readahead, ra, &probe, index, last - index, file_pages)
                        };
                        let before = self.tasks[t].report.data_pages_read;
                        if self.submit_window(t, ino, w, now, out) {
                            return true;
                        }
                        let task = &mut self.tasks[t];
                        task.report.prefetch_pages += task.report.data_pages_read - before;
                    }
                    let next = ((index + 1) * PAGE_BYTES).min(end);
                    self.tasks[t].progress = next - off;
                }
                (Lookup::Locked, _) => return self.wait_page(t, key),
                (Lookup::Miss, _) => {
                    let w = {
                        let probe = Probe { cache: &self.cache, ino };
                        let ra = self.tasks[t].ra.entry(ino).or_default();
                        readahead::sync_readahead(&self.cfg.readahead, ra, &probe, index, last - index, file_pages)
                    };
                    if self.submit_window(t, ino, w, now, out) {
                        return true;
                    }
                    if !self.cache.contains(key) {
                        // The window did not cover the page (it cannot happen inside the file);
                        // read it alone rather than loop.
                        self.read_pages(t, ino, index, 1, false, now, out);
                    }
                    return self.wait_page(t, key);
                }
            }
        }
    }

    /// A copy out of a mapping of `[off, off + len)`: page by page from where it stopped; a
    /// resident page is used (no readahead marks are honoured: faults do not read ahead
    /// asynchronously), a missing one faults: Linux reads `read_ahead_kb` of pages around it
    /// (filemap_fault's do_sync_mmap_readahead: the window starts half a window before the
    /// page); FreeBSD 4 reads up to 7 pages behind and 8 ahead that are not resident
    /// (vm_fault). The task waits for the faulting page.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fault(&mut self, t: usize, ino: Ino, off: u64, len: u64, now: Nanos, out: &mut Emit) -> bool {
        let size = self.tree.size(ino);
        let end = off.saturating_add(len.max(1)).min(size);
        let file_pages = size.div_ceil(PAGE_BYTES);
        loop {
            let pos = off + self.tasks[t].progress;
            if pos >= end {
                self.tasks[t].report.bytes_read += end.saturating_sub(off);
                return false;
            }
            let index = pos / PAGE_BYTES;
            let key = PageKey::new(ino, index);
            match self.cache.find(key) {
                Lookup::Uptodate => self.tasks[t].progress = ((index + 1) * PAGE_BYTES).min(end) - off,
                Lookup::Locked => return self.wait_page(t, key),
                Lookup::Miss => {
                    let (first, pages) = match self.cfg.kernel {
                        KernelKind::FreeBsd => {
                            let cache = &self.cache;
                            let (lo, hi) = fault_window(index, file_pages, &|p| cache.contains(PageKey::new(ino, p)));
                            (lo, hi - lo)
                        }
                        KernelKind::Linux => {
                            let ra = self.cfg.readahead.max_pages.max(1);
                            let first = index.saturating_sub(ra / 2);
                            (first, ra.min(file_pages - first))
                        }
                    };
                    for s in self.layout.indirect_blocks_for(ino, first, pages) {
                        if self.need_meta(t, s, now, out) {
                            return true;
                        }
                    }
                    self.read_pages(t, ino, first, pages, false, now, out);
                    if !self.cache.contains(key) {
                        self.read_pages(t, ino, index, 1, false, now, out);
                    }
                    return self.wait_page(t, key);
                }
            }
        }
    }

    /// An O_DIRECT read or write of `[off, off + len)` (whole pages): bios straight to the
    /// disk, submitted one after another, then waited for.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn direct_io(&mut self, t: usize, ino: Ino, off: u64, len: u64, write: bool, now: Nanos, out: &mut Emit) -> bool {
        self.direct_io_as(t, ino, off, len, write, true, now, out)
    }

    /// `direct_io`, or (`wait` false) io_submit() of it: the bios are queued and submitted one
    /// after another while the task goes on; `AioWait` waits for them.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn direct_io_as(
        &mut self,
        t: usize,
        ino: Ino,
        off: u64,
        len: u64,
        write: bool,
        wait: bool,
        now: Nanos,
        out: &mut Emit,
    ) -> bool {
        match self.tasks[t].stage {
            Stage::Start => {
                if write {
                    self.allocate(t, ino, off.saturating_add(len), now);
                }
                let size = self.tree.size(ino);
                let end = if write { off.saturating_add(len) } else { off.saturating_add(len).min(size) };
                if end <= off {
                    return false;
                }
                let first = off / PAGE_BYTES;
                let pages = end.div_ceil(PAGE_BYTES) - first;
                let principal = self.tasks[t].principal;
                let prio = self.tasks[t].prio;
                let max = self.cfg.max_bio_pages.max(1);
                let mut bios = Vec::new();
                for (sector, n) in self.disk_runs(ino, first, pages) {
                    let mut done = 0;
                    while done < n {
                        let k = max.min(n - done);
                        bios.push((
                            NewRequest {
                                principal,
                                op: if write { Op::Write } else { Op::Read },
                                sync: true,
                                start_sector: sector + done * PAGE_SECTORS,
                                size_sectors: (k * PAGE_SECTORS) as u32,
                                flags: 0,
                                prio,
                            },
                            BioInfo { kind: BioKind::Direct { write, bytes: k * PAGE_BYTES }, submitter: Submitter::Task(t) },
                        ));
                        done += k;
                    }
                }
                let task = &mut self.tasks[t];
                if write {
                    task.report.bytes_written += end - off;
                    task.report.pages_written += pages;
                } else {
                    task.report.bytes_read += end - off;
                    task.report.data_pages_read += pages;
                }
                task.queue.extend(bios);
                if !wait {
                    self.pump_task(t, now, out);
                    return false;
                }
                task.stage = Stage::Flush;
                task.wait = Wait::OwnIo;
                self.pump_task(t, now, out);
                true
            }
            _ => false,
        }
    }

    /// creat() / mkdir(): the walk to the parent, all its directory blocks (the entry goes in
    /// the first with room), then the allocation, whose metadata pages are dirtied.
    pub(super) fn create(&mut self, t: usize, parent: Ino, name: &str, dir: bool, now: Nanos, out: &mut Emit) -> bool {
        if self.tasks[t].stage == Stage::Flush {
            return false; // FreeBSD: its synchronous metadata writes are done
        }
        if self.readdir(t, parent, now, out) {
            return true;
        }
        if self.tree.child(parent, name).is_some() {
            // Already there (a program that creates twice): nothing to do.
            return false;
        }
        let kind = if dir { super::fs::Kind::Dir } else { super::fs::Kind::File };
        match self.layout.create(&mut self.tree, parent, name, kind) {
            Ok((ino, alloc)) => {
                let sectors: Vec<u64> = alloc.dirty.into_iter().chain(alloc.indirect).collect();
                for &s in &sectors {
                    self.dirty_meta(s, now);
                }
                self.dcache.insert(ino);
                if self.cfg.kernel == KernelKind::FreeBsd {
                    // FFS without soft updates writes the new inode and the directory entry
                    // synchronously (ufs_makeinode / ufs_direnter's bwrite), the bitmaps later.
                    return self.write_meta_now(t, &sectors, now, out);
                }
            }
            Err(e) => {
                // Out of space or inodes: the call fails, the program goes on (as a real one
                // would after ENOSPC); it is counted.
                self.tasks[t].report.errors += 1;
                let _ = e;
            }
        }
        false
    }

    /// The task writes the metadata blocks holding `sectors` itself and waits (true if any
    /// write was needed).
    pub(super) fn write_meta_now(&mut self, t: usize, sectors: &[u64], now: Nanos, out: &mut Emit) -> bool {
        let per = self.cfg.meta_block_pages.max(1);
        let principal = self.tasks[t].principal;
        let mut bios = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for &s in sectors {
            let page = s / PAGE_SECTORS / per * per;
            if !seen.insert(page) {
                continue;
            }
            for (first, n) in self.cache.start_writeback_range(BDEV_INO, page, page + per, per) {
                bios.extend(self.write_bios(BDEV_INO, first, n, principal, true, Submitter::Task(t)));
            }
        }
        if bios.is_empty() {
            return false;
        }
        let task = &mut self.tasks[t];
        task.queue.extend(bios);
        task.stage = Stage::Flush;
        task.wait = Wait::OwnIo;
        self.pump_task(t, now, out);
        true
    }

    /// A metadata block (holding `sector`) was modified in memory.
    /// Under ext3 it joins the journal's running transaction instead (host/kjournald.rs).
    pub(super) fn dirty_meta(&mut self, sector: u64, now: Nanos) {
        if self.kjournald.is_some() {
            return self.journal_meta(sector, now);
        }
        let per = self.cfg.meta_block_pages.max(1);
        let page = sector / PAGE_SECTORS / per * per;
        for p in page..page + per {
            self.cache.write(PageKey::new(BDEV_INO, p), now);
        }
    }
}
