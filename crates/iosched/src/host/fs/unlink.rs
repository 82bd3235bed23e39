//! Deleting a file (`unlink` of its last link): its entry leaves its directory, its inode and
//! every block it held (data, an FFS tail's fragments, indirect blocks) return to the free
//! lists, so later creations and growth reuse them with the allocator's usual policies.
//!
//! What ext2 does (fs/ext2/namei.c `ext2_unlink` → `ext2_delete_entry`; on the last iput
//! `ext2_delete_inode` → `ext2_truncate` → `ext2_free_branches` / `ext2_free_blocks`, then
//! `ext2_free_inode`): the directory block holding the entry is modified (the entry's space
//! joins the previous entry's), the parent's inode (mtime) and the file's inode (links, dtime)
//! are written, every indirect block is read to find the blocks it maps, the block bitmaps and
//! group descriptors of the freed blocks and the inode bitmap and its group descriptor are
//! modified. FFS (`ufs_remove`, `ffs_truncate`, `ffs_blkfree`, `ffs_vfree`) the same with its
//! cylinder group blocks. Directory blocks are never given back (neither does ext2 or FFS).

use super::dirent::entry_bytes;
use super::layout::{Alloc, InodeState, Layout};
use super::tree::{Kind, Tree};
use crate::host::{Ino, PAGE_BYTES};
use crate::request::SECTOR_BYTES;

impl Layout {
    /// Removes file `ino` from `tree` and frees its inode and blocks. Returns what changed:
    /// `data` every freed `(sector, sectors)` run (indirect blocks included), `indirect` the freed indirect blocks (the
    /// kernel reads them before it can free what they map), `dirty` the metadata blocks
    /// modified (the directory block of the entry, the parent's and the file's inode table
    /// blocks, the bitmaps or cylinder group blocks, group descriptor blocks). Directories are
    /// refused (no rmdir).
    pub fn unlink(&mut self, tree: &mut Tree, ino: Ino) -> Result<Alloc, String> {
        if !self.contains(ino) || !tree.contains(ino) {
            return Err(format!("inode {ino} is not laid out"));
        }
        if tree.is_dir(ino) {
            return Err(format!("`{}` is a directory (unlink removes files)", tree.path_of(ino)));
        }
        let name_len = tree.name(ino).len();
        tree.remove(ino)?;
        let mut a = Alloc::default();
        let st = std::mem::take(&mut self.inodes[ino as usize]);
        debug_assert_eq!(st.kind, Some(Kind::File));
        // The entry leaves its directory block; the parent's inode changes (mtime).
        let parent = st.parent;
        let e = entry_bytes(&self.geo, name_len) as u32;
        let dirblk = self.geo.dirblk;
        {
            let p = &mut self.inodes[parent as usize];
            if let Some(f) = p.dir_fill.get_mut(st.entry_chunk as usize) {
                *f = f.saturating_sub(e);
            }
            p.holes = true;
        }
        let page = st.entry_chunk as u64 * dirblk / PAGE_BYTES;
        if let Some(sec) = self.sector_of(parent, page) {
            a.dirty.push(sec);
        }
        let parent_block = self.inode_block(parent);
        a.dirty(parent_block);
        // The inode: its table block, its bitmap and group descriptor.
        let inode_block = self.unit_sector(self.geo.inode_unit(st.dino));
        a.dirty(inode_block);
        self.free_blocks(&st, &mut a);
        let g = st.group as usize;
        let (_, idx) = self.geo.split_ino(st.dino);
        let gs = &mut self.gs[g];
        gs.used_inodes = gs.used_inodes.saturating_sub(1);
        // Below the high-water mark (`used + freed`) the index is a hole; at it, the mark drops.
        gs.freed.insert(idx);
        while let Some(&last) = gs.freed.last() {
            if last + 1 == gs.used_inodes + gs.freed.len() as u32 {
                gs.freed.pop_last();
            } else {
                break;
            }
        }
        self.free_inodes += 1;
        let bitmap = self.unit_sector(self.geo.groups[g].inode_bitmap);
        a.dirty(bitmap);
        self.descriptor(g, &mut a);
        Ok(a)
    }

    /// Frees a file's data units (whole blocks, then an FFS tail's fragments) and indirect
    /// blocks, dirtying each touched group's bitmap and descriptor.
    fn free_blocks(&mut self, st: &InodeState, a: &mut Alloc) {
        let unit_sectors = self.geo.unit_bytes / SECTOR_BYTES;
        let ppb = self.geo.block_bytes() / PAGE_BYTES;
        let block_pages = st.blocks * ppb;
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for ex in &st.extents {
            let end = (ex.file_page + ex.pages).min(block_pages);
            if end > ex.file_page {
                let u = (ex.sector - self.start_sector()) / unit_sectors;
                runs.push((u, (end - ex.file_page) * PAGE_BYTES / self.geo.unit_bytes));
            }
        }
        if st.tail_units > 0 {
            runs.push((st.tail_start, st.tail_units));
        }
        for &(_, u) in &st.indirect {
            a.indirect.push(self.unit_sector(u));
            runs.push((u, self.geo.block_units));
        }
        for (u, n) in runs {
            self.space.free(u, n);
            a.data.push((self.unit_sector(u), n * unit_sectors));
            let g = self.geo.group_of_unit(u);
            self.group_meta(g, a);
        }
    }
}
