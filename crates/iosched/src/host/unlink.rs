//! unlink() of a file: the walk to it, then what truncate_inode_pages and ext2_delete_inode do
//! to memory and the disk. The file system's part (free lists, metadata blocks) is
//! fs/unlink.rs; here the page cache and the task's waits.

use super::config::KernelKind;
use super::kernel::{Kernel, Stage, Wait};
use super::{Ino, PageKey, BDEV_INO, PAGE_BYTES, PAGE_SECTORS};
use crate::time::Nanos;
use crate::workload::Emit;

impl Kernel {
    /// unlink(`ino`): true while the task waits (a metadata read, a page being read or
    /// written back, FreeBSD's synchronous metadata writes).
    pub(super) fn unlink(&mut self, t: usize, ino: Ino, now: Nanos, out: &mut Emit) -> bool {
        if self.tasks[t].stage == Stage::Flush {
            return false; // FreeBSD: its synchronous metadata writes are done
        }
        if !self.tree.contains(ino) || self.tree.is_dir(ino) || !self.layout.contains(ino) {
            let r = &mut self.tasks[t].report;
            r.errors += 1;
            r.error.get_or_insert_with(|| format!("unlink: inode {ino} is not a file (deleted already, or a directory)"));
            return false;
        }
        // The walk: the directory blocks up to the entry, the inode's block.
        if self.lookup(t, ino, now, out) {
            return true;
        }
        let pages = self.tree.size(ino).div_ceil(PAGE_BYTES);
        // truncate_inode_pages waits for pages under writeback and pages being read.
        if self.ino_writeback.get(&ino).copied().unwrap_or(0) > 0 {
            self.tasks[t].wait = Wait::Writeback(ino);
            self.writeback_waiters.insert(t);
            return true;
        }
        for index in 0..pages {
            let key = PageKey::new(ino, index);
            if self.cache.is_locked(key) {
                return self.wait_page(t, key);
            }
        }
        // ext2_free_branches reads each indirect block to find the blocks it maps.
        for s in self.layout.indirect_blocks_for(ino, 0, pages) {
            if self.need_meta(t, s, now, out) {
                return true;
            }
        }
        self.cache.remove_inode_pages(ino, pages);
        match self.layout.unlink(&mut self.tree, ino) {
            Ok(freed) => {
                // Freed indirect blocks are forgotten (bforget): never written.
                let per = self.layout.meta_block_sectors() / PAGE_SECTORS;
                for s in &freed.indirect {
                    for p in s / PAGE_SECTORS..s / PAGE_SECTORS + per.max(1) {
                        self.cache.forget(PageKey::new(BDEV_INO, p));
                    }
                }
                for &s in &freed.dirty {
                    self.dirty_meta(s, now);
                }
                self.dcache.remove(&ino);
                self.tasks[t].ra.remove(&ino);
                self.tasks[t].ra269.remove(&ino);
                self.tasks[t].bsd_seq.remove(&ino);
                if self.cfg.kernel == KernelKind::FreeBsd {
                    // FFS without soft updates writes the directory block and the inode
                    // synchronously (ufs_dirremove, ffs_update), as at creation.
                    return self.write_meta_now(t, &freed.dirty, now, out);
                }
                self.maybe_wake_flusher(now, out);
            }
            Err(e) => {
                let r = &mut self.tasks[t].report;
                r.errors += 1;
                r.error.get_or_insert(e);
            }
        }
        false
    }
}
