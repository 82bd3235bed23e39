//! The write side: buffered write() with dirty throttling (balance_dirty_pages), O_SYNC,
//! fsync() and sync(), and block allocation as files grow.

use super::kernel::{Kernel, Stage, Submitter, Wait};
use super::page_cache::Lookup;
use super::syscall::WriteMode;
use super::writeback::Balance;
use super::{Ino, PageKey, BDEV_INO, PAGE_BYTES, PAGE_SECTORS};
use crate::time::{ns_to_s, Nanos};
use crate::workload::Emit;

impl Kernel {
    /// Task `t`'s file grows to `new_size` bytes: blocks (and indirect blocks) are allocated,
    /// and the bitmaps, group descriptor and inode they change are dirtied. A full file system
    /// is the task's error (the file keeps its size; its pages stay cached).
    pub(super) fn allocate(&mut self, t: usize, ino: Ino, new_size: u64, now: Nanos) {
        if new_size <= self.tree.size(ino) {
            return;
        }
        let mut alloc = std::mem::take(&mut self.alloc_buf);
        let grown = self.layout.extend_into(ino, new_size, &mut alloc);
        match grown {
            Ok(()) => {
                for &s in alloc.dirty.iter().chain(&alloc.indirect) {
                    self.dirty_meta(s, now);
                }
                // The tree follows the layout (set_size fails only for a directory).
                let _ = self.tree.set_size(ino, new_size);
            }
            Err(e) => {
                let r = &mut self.tasks[t].report;
                r.errors += 1;
                r.error.get_or_insert(e);
            }
        }
        self.alloc_buf = alloc;
    }

    /// write() of `[off, off + len)`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn write(&mut self, t: usize, ino: Ino, off: u64, len: u64, mode: WriteMode, now: Nanos, out: &mut Emit) -> bool {
        if mode == WriteMode::Direct {
            return self.direct_io(t, ino, off, len, true, now, out);
        }
        let end = off.saturating_add(len);
        match self.tasks[t].stage {
            Stage::Flush => return false,
            Stage::Start => {
                self.tasks[t].old_size = self.tree.size(ino);
                self.allocate(t, ino, end, now);
                if self.kjournald.is_some() {
                    self.journal_write(ino, now);
                }
                self.tasks[t].stage = Stage::Pages;
            }
            Stage::Pages | Stage::Throttled => {}
        }
        loop {
            if self.tasks[t].stage == Stage::Throttled {
                let task = &mut self.tasks[t];
                if !task.queue.is_empty() || task.awaiting.is_some() || task.emitted_unresolved {
                    task.wait = Wait::Submitting;
                    return true;
                }
                if !task.throttle_slept && task.throttle_sleep_ns > 0 {
                    task.wait = Wait::Timer;
                    let at = now.saturating_add(task.throttle_sleep_ns);
                    task.throttle_sleep_ns = 0;
                    out.timer(at, super::kernel::task_token(t));
                    return true;
                }
                // Slept: balance_dirty_pages checks again.
                if self.balance(t, 0, now, out) {
                    continue;
                }
            }
            let pos = off + self.tasks[t].progress;
            if pos >= end {
                break;
            }
            let index = pos / PAGE_BYTES;
            let page_start = index * PAGE_BYTES;
            let page_end = (page_start + PAGE_BYTES).min(end);
            let old_size = self.tasks[t].old_size;
            // A page partly overwritten whose old data is not in memory is read first.
            let covers_old = pos == page_start && page_end >= (page_start + PAGE_BYTES).min(old_size);
            let need_read = page_start < old_size && !covers_old;
            let key = PageKey::new(ino, index);
            if !self.cache.contains(key) {
                // A page the write creates is no cache miss; one with old data on disk is read.
                if need_read {
                    self.cache.find(key);
                    self.read_pages(t, ino, index, 1, false, now, out);
                    return self.wait_page(t, key);
                }
            } else if self.cache.find(key) == Lookup::Locked {
                return self.wait_page(t, key);
            }
            let newly = self.cache.write(key, now);
            self.written_bytes += page_end - pos;
            self.tasks[t].progress = page_end - off;
            if newly && self.balance(t, 1, now, out) {
                continue;
            }
        }
        self.tasks[t].report.bytes_written += len;
        self.maybe_wake_flusher(now, out);
        if mode == WriteMode::Sync {
            return self.flush(t, Some(ino), now, out);
        }
        false
    }

    /// balance_dirty_pages after `dirtied` newly dirtied pages; true if the task is now
    /// throttled (its write goes on from the throttled stage).
    fn balance(&mut self, t: usize, dirtied: u64, now: Nanos, out: &mut Emit) -> bool {
        let pid = self.tasks[t].principal.pid;
        match self.wb.balance(&mut self.cache, pid, dirtied, now) {
            Balance::Continue => {
                let task = &mut self.tasks[t];
                if let Some(since) = task.throttled_since.take() {
                    task.report.throttled_s += ns_to_s(now - since);
                    self.throttled_now -= 1;
                }
                task.stage = Stage::Pages;
                self.maybe_wake_flusher(now, out);
                false
            }
            Balance::Pause { sleep_ns, write } => {
                let principal = self.tasks[t].principal;
                let mut bios = Vec::new();
                for c in write {
                    bios.extend(self.write_bios(c.ino, c.first_index, c.pages, principal, false, Submitter::Task(t)));
                }
                let task = &mut self.tasks[t];
                task.queue.extend(bios);
                if task.throttled_since.is_none() {
                    task.throttled_since = Some(now);
                    self.throttled_now += 1;
                }
                task.stage = Stage::Throttled;
                task.throttle_slept = false;
                task.throttle_sleep_ns = sleep_ns;
                self.maybe_wake_flusher(now, out);
                self.pump_task(t, now, out);
                true
            }
        }
    }

    /// fsync(ino) (or sync() with None): the dirty pages (and the inode's block) are written
    /// by the task itself as synchronous writes, then it waits for them and for any writeback
    /// of the same pages already on its way.
    ///
    /// ext3 (host/kjournald.rs): the inode's block is not written in place; fsync asks for the
    /// commit of the transaction holding the dirty inode and waits for it as well
    /// (`ext3_sync_file`); sync asks for the running transaction's commit, waits for it, then
    /// writes what the commit dirtied (`do_sync`: `sync_inodes(0)`, `sync_filesystems`,
    /// `sync_inodes(1)`): two passes, `progress` counting them.
    pub(super) fn flush(&mut self, t: usize, ino: Option<Ino>, now: Nanos, out: &mut Emit) -> bool {
        let ext3 = self.kjournald.is_some();
        if self.tasks[t].stage == Stage::Flush {
            // Woken with everything written. fsync goes round again for pages that were
            // redirtied while under writeback (they could not be written then); sync does one
            // pass (ext3: two), so writers cannot keep it going forever.
            match ino {
                Some(i) if self.cache.inode_dirty_pages(i) > 0 => {}
                None if ext3 && self.tasks[t].progress == 1 => self.tasks[t].progress = 2,
                _ => return false,
            }
        } else if ino.is_none() && ext3 {
            self.tasks[t].progress = 1;
        }
        let principal = self.tasks[t].principal;
        let mut chunks: Vec<(Ino, u64, u64)> = Vec::new();
        match ino {
            Some(ino) => {
                for (first, n) in self.cache.start_writeback(ino, 0, u64::MAX) {
                    chunks.push((ino, first, n));
                }
                let per = self.cfg.meta_block_pages.max(1);
                let page = self.layout.inode_block(ino) / PAGE_SECTORS / per * per;
                let in_place = if ext3 { page..page } else { page..page + per };
                for p in in_place {
                    if self.cache.is_dirty(PageKey::new(BDEV_INO, p)) {
                        for (first, n) in self.cache.start_writeback(BDEV_INO, p, 1) {
                            chunks.push((BDEV_INO, first, n));
                        }
                    }
                }
            }
            None => {
                let inodes: Vec<Ino> = self.cache.dirty_inodes().map(|(i, _)| i).collect();
                for i in inodes {
                    for (first, n) in self.cache.start_writeback(i, 0, u64::MAX) {
                        chunks.push((i, first, n));
                    }
                }
            }
        }
        let mut bios = Vec::new();
        for (i, first, n) in chunks {
            bios.extend(self.write_bios(i, first, n, principal, true, Submitter::Task(t)));
        }
        if ext3 {
            // The data is submitted first (filemap_fdatawrite), then the commit asked for.
            let commit = match ino {
                Some(i) => self.journal_fsync(i, now),
                None if self.tasks[t].progress == 1 => self.journal_sync(),
                None => None,
            };
            if commit.is_some() {
                self.tasks[t].commit_wait = commit;
            }
        }
        let task = &mut self.tasks[t];
        task.queue.extend(bios);
        task.stage = Stage::Flush;
        task.wait = match ino {
            Some(i) => Wait::Writeback(i),
            None => Wait::AllWriteback,
        };
        self.writeback_waiters.insert(t);
        self.pump_task(t, now, out);
        // Nothing to write and nothing on its way: done at once.
        let task = &self.tasks[t];
        let own_done = task.outstanding == 0
            && task.queue.is_empty()
            && task.awaiting.is_none()
            && !task.emitted_unresolved
            && self.journal_committed(task.commit_wait);
        let pending = match ino {
            Some(i) => self.ino_writeback.get(&i).copied().unwrap_or(0),
            None => self.cache.writeback_pages(),
        };
        if own_done && pending == 0 {
            self.tasks[t].wait = Wait::None;
            self.tasks[t].commit_wait = None;
            self.writeback_waiters.remove(&t);
            if ino.is_none() && ext3 && self.tasks[t].progress == 1 {
                // sync's second pass.
                return self.flush(t, None, now, out);
            }
            return false;
        }
        true
    }

    /// A task's sleep (a Sleep call, or a throttling pause) ended.
    pub(super) fn timer_fired(&mut self, t: usize, now: Nanos, out: &mut Emit) {
        if self.tasks[t].stage == Stage::Throttled {
            self.tasks[t].throttle_slept = true;
        }
        self.run(t, now, out);
    }

    /// Task `t`'s queued bios have all been admitted (or one more was).
    pub(super) fn after_own_submission(&mut self, t: usize, now: Nanos, out: &mut Emit) {
        let task = &self.tasks[t];
        if !task.queue.is_empty() || task.awaiting.is_some() || task.emitted_unresolved {
            return;
        }
        match task.wait {
            Wait::Submitting => {
                self.tasks[t].wait = Wait::None;
                self.run(t, now, out);
            }
            Wait::OwnIo | Wait::Writeback(_) | Wait::AllWriteback => self.check_io_wait(t, now, out),
            _ => {}
        }
    }
}
