//! Where every inode, data block, indirect block and directory block of a [`Tree`] lies on the
//! disk, placed by the file system's allocator (`ext2.rs`: Orlov and `find_group_other`; `ffs.rs`:
//! `ffs_dirpref` and `ffs_blkpref`) in the order `cp -r` would create them, and grown later by
//! [`Layout::create`] and [`Layout::extend`] with the same policies.
//!
//! Files are kept as extents (runs of pages contiguous on disk), free space as free runs, so
//! memory follows the number of runs, not of blocks.

use super::dirent::entry_bytes;
use super::geometry::{Geometry, NDADDR};
use super::space::{FreeSpace, Want};
use super::tree::{check_name, Kind, Tree, ROOT_INO};
use crate::host::{Ino, PAGE_BYTES, PAGE_SECTORS};
use crate::request::SECTOR_BYTES;
use rand_pcg::Pcg64;

/// `journal_blocks` meaning "as mke2fs sizes it for the partition" (e2fsprogs 1.35).
pub const JOURNAL_MKE2FS: u64 = u64::MAX;

/// The file system to lay a tree out with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FsKind {
    /// ext2 (ext3 when `journal_blocks > 0`): 4 KiB blocks, 128 MiB block groups.
    Ext2 {
        /// Bytes per on-disk inode: 128 (mke2fs before 1.40.5) or 256.
        inode_bytes: u32,
        /// One inode per this many bytes of the partition (mke2fs's `inode_ratio`, 16384).
        bytes_per_inode: u64,
        /// ext3's journal, in 4 KiB blocks (0: ext2; `JOURNAL_MKE2FS`: mke2fs's size for the
        /// partition), placed at the first free blocks (journal.rs).
        journal_blocks: u64,
    },
    /// FFS (UFS1, FreeBSD 4): 16 KiB blocks, 2 KiB fragments, cylinder groups of `cg_bytes`.
    Ffs {
        /// Bytes in a cylinder group (a multiple of 16 KiB, 1 MiB to 128 MiB).
        cg_bytes: u64,
        /// One inode per this many bytes (newfs's density: 4 fragments, 8192).
        bytes_per_inode: u64,
    },
}

impl FsKind {
    /// ext2 as mke2fs makes it: 256-byte inodes, one per 16 KiB.
    pub fn ext2() -> Self {
        FsKind::Ext2 { inode_bytes: 256, bytes_per_inode: 16384, journal_blocks: 0 }
    }

    /// ext3: ext2 with the journal mke2fs of 2004 made (32 MiB from 1 GiB up; journal.rs).
    pub fn ext3() -> Self {
        FsKind::Ext2 { inode_bytes: 256, bytes_per_inode: 16384, journal_blocks: JOURNAL_MKE2FS }
    }

    /// Is this ext3 (ext2 with a journal)?
    pub fn is_ext3(&self) -> bool {
        matches!(*self, FsKind::Ext2 { journal_blocks, .. } if journal_blocks > 0)
    }

    /// FFS with 32 MiB cylinder groups and one inode per 8 KiB.
    pub fn ffs() -> Self {
        FsKind::Ffs { cg_bytes: 32 << 20, bytes_per_inode: 8192 }
    }

    fn geometry(&self, sectors: u64) -> Result<Geometry, String> {
        match *self {
            FsKind::Ext2 { inode_bytes, bytes_per_inode, .. } => {
                if inode_bytes != 128 && inode_bytes != 256 {
                    return Err(format!("ext2 inode_bytes {inode_bytes}: 128 or 256"));
                }
                if !(1024..=1 << 26).contains(&bytes_per_inode) {
                    return Err(format!("ext2 bytes_per_inode {bytes_per_inode} is not in [1024, 2^26]"));
                }
                Geometry::ext2(sectors, inode_bytes, bytes_per_inode)
            }
            FsKind::Ffs { cg_bytes, bytes_per_inode } => {
                if cg_bytes % 16384 != 0 || !((1 << 20)..=(128 << 20)).contains(&cg_bytes) {
                    return Err(format!("FFS cg_bytes {cg_bytes} is not a multiple of 16 KiB in [1 MiB, 128 MiB]"));
                }
                if !(2048..=1 << 26).contains(&bytes_per_inode) {
                    return Err(format!("FFS bytes_per_inode {bytes_per_inode} is not in [2048, 2^26]"));
                }
                Geometry::ffs(sectors, cg_bytes, bytes_per_inode)
            }
        }
    }
}

/// Pages `file_page..file_page+pages` of a file lie at `sector..sector+pages*8`. (An FFS file
/// ending in an odd number of 2 KiB fragments has a last extent ending half way into its last
/// page.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub file_page: u64,
    pub sector: u64,
    pub pages: u64,
}

/// What one [`Layout::create`] or [`Layout::extend`] allocated and dirtied.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Alloc {
    /// Newly allocated data (file or directory) space: `(sector, sectors)` runs in file order.
    pub data: Vec<(u64, u64)>,
    /// Newly allocated indirect blocks (sectors), in allocation order.
    pub indirect: Vec<u64>,
    /// Metadata blocks (their first sectors) to write: inode table blocks, bitmaps, group
    /// descriptor blocks (ext2) or cylinder group blocks (FFS), existing indirect blocks given
    /// new pointers, directory blocks given new entries. Each once, in the order dirtied.
    pub dirty: Vec<u64>,
}

impl Alloc {
    /// Empties it for the next allocation (its vectors keep their capacity).
    pub fn clear(&mut self) {
        self.data.clear();
        self.indirect.clear();
        self.dirty.clear();
    }

    pub(super) fn dirty(&mut self, sector: u64) {
        if !self.dirty.contains(&sector) {
            self.dirty.push(sector);
        }
    }
}

#[derive(Clone, Debug, Default)]
pub(super) struct InodeState {
    /// The disk inode number (0: not laid out).
    pub(super) dino: u32,
    pub(super) group: u32,
    pub(super) kind: Option<Kind>,
    pub(super) parent: Ino,
    pub(super) size: u64,
    /// Whole blocks allocated (logical blocks `0..blocks`).
    pub(super) blocks: u64,
    /// FFS: fragments after the blocks, at `tail_start`.
    pub(super) tail_units: u64,
    pub(super) tail_start: u64,
    /// The unit of the last whole block (the next block's goal is just after it).
    pub(super) last_unit: Option<u64>,
    pub(super) extents: Vec<Extent>,
    /// Indirect blocks: (key, unit) sorted by key (see `chain`).
    pub(super) indirect: Vec<(u64, u64)>,
    /// The indirect block last given new pointers, (key, unit): a file growing block by block
    /// asks for the same one a thousand times in a row (entries never move or change).
    pub(super) last_pointed: Option<(u64, u64)>,
    /// A directory's bytes in use in each `dirblk`-sized chunk.
    pub(super) dir_fill: Vec<u32>,
    /// The chunk of the parent directory holding this inode's entry.
    pub(super) entry_chunk: u32,
    /// A directory an entry was removed from: a new entry goes in the first chunk with room
    /// (ext2_add_link's scan), not only the last.
    pub(super) holes: bool,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct GroupState {
    pub used_inodes: u32,
    pub ndirs: u32,
    /// ext2's Orlov debt: directories minus files created in the group lately (0..=255).
    pub debt: u32,
    /// Inode indices in the group freed by unlink below the high-water mark
    /// (`used_inodes + freed.len()`); the lowest is reused first (find_first_zero_bit).
    pub freed: std::collections::BTreeSet<u32>,
}

/// A tree laid out on a partition.
#[derive(Clone, Debug)]
pub struct Layout {
    kind: FsKind,
    pub(crate) geo: Geometry,
    start_sector: u64,
    sectors: u64,
    pub(crate) space: FreeSpace,
    pub(crate) gs: Vec<GroupState>,
    pub(crate) free_inodes: u64,
    pub(crate) ndirs: u64,
    pub(super) inodes: Vec<InodeState>,
    journal: Vec<Extent>,
    /// The journal inode's indirect blocks (their first sectors).
    journal_indirect: Vec<u64>,
    pub(crate) rng: Pcg64,
}

impl Layout {
    /// Lays `tree` out on `[start_sector, start_sector + sectors)`: the file system's fixed
    /// structures, then every directory and file in `find` order (as `cp -r` creates them: a
    /// directory, then its entries; a file's data right after its inode). `rng` drives the
    /// allocator's random choices (ext2's Orlov start group) and is kept for later creations.
    pub fn build(tree: &Tree, kind: FsKind, start_sector: u64, sectors: u64, rng: Pcg64) -> Result<Layout, String> {
        if start_sector.checked_add(sectors).is_none() {
            return Err("the partition's end is past 2^64 sectors".into());
        }
        let geo = kind.geometry(sectors)?;
        let ngroups = geo.groups.len();
        let mut space = FreeSpace::new(geo.end(), geo.units_per_group, ngroups);
        for g in &geo.groups {
            space.free(g.data, g.end - g.data);
        }
        let mut gs = vec![GroupState::default(); ngroups];
        gs[0].used_inodes = geo.reserved_inodes;
        let free_inodes = geo.ipg as u64 * ngroups as u64 - geo.reserved_inodes as u64;
        let mut lay = Layout {
            kind,
            geo,
            start_sector,
            sectors,
            space,
            gs,
            free_inodes,
            ndirs: 0,
            inodes: vec![InodeState::default(); tree.end_ino() as usize],
            journal: Vec::new(),
            journal_indirect: Vec::new(),
            rng,
        };
        // The root: its inode in group 0, its first directory block.
        let mut scratch = Alloc::default();
        {
            let r = &mut lay.inodes[ROOT_INO as usize];
            r.dino = lay.geo.root_dino;
            r.kind = Some(Kind::Dir);
            r.parent = ROOT_INO;
            r.dir_fill = vec![(entry_bytes(&lay.geo, 1) + entry_bytes(&lay.geo, 2)) as u32];
        }
        lay.gs[0].ndirs = 1;
        lay.ndirs = 1;
        let first = lay.geo.dirblk;
        lay.grow(ROOT_INO, first, &mut scratch).map_err(|e| format!("laying out the root: {e}"))?;
        if let FsKind::Ext2 { journal_blocks, .. } = kind {
            lay.place_journal(journal_blocks)?;
        }
        let total_dirs = tree.dirs();
        for ino in tree.walk().into_iter().skip(1) {
            let n = tree.node(ino);
            scratch.clear();
            lay.place(ino, n.parent, n.name.len(), n.kind, &mut scratch).map_err(|e| {
                format!(
                    "the tree ({} directories, {} files, {} MiB) does not fit: {e} (placing `{}`)",
                    total_dirs,
                    tree.files(),
                    tree.total_bytes() >> 20,
                    tree.path_of(ino)
                )
            })?;
            if n.kind == Kind::File && n.size_bytes > 0 {
                lay.grow(ino, n.size_bytes, &mut scratch).map_err(|e| {
                    format!(
                        "the tree ({} directories, {} files, {} MiB) does not fit: {e} (writing `{}`, {} bytes)",
                        total_dirs,
                        tree.files(),
                        tree.total_bytes() >> 20,
                        tree.path_of(ino),
                        n.size_bytes
                    )
                })?;
            }
        }
        Ok(lay)
    }

    /// ext3's journal inode as mke2fs 1.35 writes it (journal.rs): its blocks in
    /// `ext2fs_block_iterate2`'s order, each from the first free block on (`mkjournal_proc`'s
    /// goal starts at 0), indirect blocks between the blocks they map.
    fn place_journal(&mut self, blocks: u64) -> Result<(), String> {
        if blocks == 0 {
            return Ok(());
        }
        let fs_blocks = self.sectors / (self.geo.block_bytes() / SECTOR_BYTES);
        let blocks = if blocks == JOURNAL_MKE2FS {
            super::journal::mke2fs_journal_blocks(fs_blocks)
                .ok_or_else(|| format!("the file system ({fs_blocks} blocks) is too small for ext3's journal (2048 blocks at least)"))?
        } else {
            blocks
        };
        let mut goal = 0;
        let mut page = 0;
        for (indirect, count) in super::journal::block_walk(blocks, self.geo.nindir) {
            let mut left = count;
            while left > 0 {
                let (u, n) = self
                    .space
                    .alloc(goal, Want { min: 1, max: left, align: 1, within: 0 })
                    .ok_or_else(|| format!("the journal ({blocks} blocks) does not fit"))?;
                let sector = self.unit_sector(u);
                if indirect {
                    self.journal_indirect.extend((0..n).map(|i| sector + i * PAGE_SECTORS));
                } else {
                    push_extent(&mut self.journal, Extent { file_page: page, sector, pages: n });
                    page += n;
                }
                left -= n;
                goal = u + n;
            }
        }
        Ok(())
    }

    // ---- queries ----

    pub fn kind(&self) -> FsKind {
        self.kind
    }

    pub fn start_sector(&self) -> u64 {
        self.start_sector
    }

    pub fn sectors(&self) -> u64 {
        self.sectors
    }

    /// Bytes in a file system block (ext2 4096, FFS 16384).
    pub fn block_bytes(&self) -> u64 {
        self.geo.block_bytes()
    }

    /// Sectors in a metadata block (an inode table block, an indirect block): the unit the
    /// file system reads them in (ext2 8, FFS 32).
    pub fn meta_block_sectors(&self) -> u64 {
        self.geo.block_bytes() / SECTOR_BYTES
    }

    pub fn groups(&self) -> u32 {
        self.geo.groups.len() as u32
    }

    pub fn inodes_per_group(&self) -> u32 {
        self.geo.ipg
    }

    pub fn free_bytes(&self) -> u64 {
        self.space.total_free() * self.geo.unit_bytes
    }

    /// Free bytes in group `g`.
    pub fn group_free_bytes(&self, g: u32) -> u64 {
        self.space.group_free(g as usize) * self.geo.unit_bytes
    }

    /// Directories in group `g`.
    pub fn group_dirs(&self, g: u32) -> u32 {
        self.gs[g as usize].ndirs
    }

    fn st(&self, ino: Ino) -> &InodeState {
        let s = self.inodes.get(ino as usize).filter(|s| s.dino != 0);
        s.unwrap_or_else(|| panic!("inode {ino} is not laid out"))
    }

    /// Is `ino` laid out?
    pub fn contains(&self, ino: Ino) -> bool {
        self.inodes.get(ino as usize).is_some_and(|s| s.dino != 0)
    }

    /// The on-disk inode number (ext2: the root is 2, files from 12; FFS: the root is 2).
    pub fn disk_ino(&self, ino: Ino) -> u32 {
        self.st(ino).dino
    }

    /// Bytes of `ino` (a directory's: its blocks' worth of entries).
    pub fn size_of(&self, ino: Ino) -> u64 {
        self.st(ino).size
    }

    pub fn data_extents(&self, ino: Ino) -> &[Extent] {
        &self.st(ino).extents
    }

    /// ext3's journal blocks on disk, `file_page` = journal block (empty for ext2 and FFS).
    pub fn journal(&self) -> &[Extent] {
        &self.journal
    }

    /// The first sectors of the journal inode's indirect blocks (mke2fs allocated them among
    /// the journal's blocks; nothing reads or writes them during a run).
    pub fn journal_indirect_blocks(&self) -> &[u64] {
        &self.journal_indirect
    }

    /// Blocks in ext3's journal (0 for ext2 and FFS).
    pub fn journal_blocks(&self) -> u64 {
        self.journal.iter().map(|e| e.pages).sum()
    }

    /// The sector of page `page` of `ino` (None past the allocated end).
    pub fn sector_of(&self, ino: Ino, page: u64) -> Option<u64> {
        let ex = &self.st(ino).extents;
        let i = ex.partition_point(|e| e.file_page + e.pages <= page);
        ex.get(i).filter(|e| e.file_page <= page).map(|e| e.sector + (page - e.file_page) * PAGE_SECTORS)
    }

    /// Pages `first_page..first_page+pages` of `ino` as maximal disk-contiguous runs
    /// `(sector, pages)`, in file order; pages past the allocated end are left out.
    pub fn runs(&self, ino: Ino, first_page: u64, pages: u64) -> Vec<(u64, u64)> {
        let ex = &self.st(ino).extents;
        let end = first_page.saturating_add(pages);
        let mut out: Vec<(u64, u64)> = Vec::new();
        let mut i = ex.partition_point(|e| e.file_page + e.pages <= first_page);
        while let Some(e) = ex.get(i) {
            if e.file_page >= end {
                break;
            }
            let a = e.file_page.max(first_page);
            let b = (e.file_page + e.pages).min(end);
            let sector = e.sector + (a - e.file_page) * PAGE_SECTORS;
            match out.last_mut() {
                Some((s, n)) if *s + *n * PAGE_SECTORS == sector => *n += b - a,
                _ => out.push((sector, b - a)),
            }
            i += 1;
        }
        out
    }

    /// The first sector of the inode table block holding `ino`'s inode (its metadata cache key
    /// is `PageKey { ino: BDEV_INO, index: sector / 8 }`).
    pub fn inode_block(&self, ino: Ino) -> u64 {
        self.unit_sector(self.geo.inode_unit(self.st(ino).dino))
    }

    /// The sectors of each 4 KiB page of directory `dir`'s data, in order.
    pub fn dir_blocks(&self, dir: Ino) -> Vec<u64> {
        let s = self.st(dir);
        assert_eq!(s.kind, Some(Kind::Dir), "inode {dir} is not a directory");
        s.extents.iter().flat_map(|e| (0..e.pages).map(move |p| e.sector + p * PAGE_SECTORS)).collect()
    }

    /// Which page of its parent's [`dir_blocks`](Self::dir_blocks) holds `child`'s entry (a
    /// lookup by name reads the directory's pages up to this one).
    pub fn entry_page(&self, child: Ino) -> u64 {
        self.st(child).entry_chunk as u64 * self.geo.dirblk / PAGE_BYTES
    }

    /// The sector of the page of `dir` holding `child`'s entry.
    pub fn dir_block_of_entry(&self, dir: Ino, child: Ino) -> u64 {
        let c = self.st(child);
        assert_eq!(c.parent, dir, "inode {child} is not an entry of {dir}");
        self.sector_of(dir, self.entry_page(child)).expect("a directory holds its entries' pages")
    }

    /// The indirect blocks (first sectors) needed to map pages `first_page..+pages` of `ino`,
    /// top-level blocks before the blocks they point to, each once.
    pub fn indirect_blocks_for(&self, ino: Ino, first_page: u64, pages: u64) -> Vec<u64> {
        let s = self.st(ino);
        if pages == 0 || s.indirect.is_empty() {
            return Vec::new();
        }
        let ppb = self.geo.block_bytes() / PAGE_BYTES;
        let first = (first_page / ppb).max(NDADDR);
        let last = (first_page.saturating_add(pages - 1) / ppb).min(s.blocks.saturating_sub(1));
        let mut out = Vec::new();
        let n = self.geo.nindir;
        let mut lbn = first;
        while lbn <= last {
            for key in chain(lbn, n).into_iter().flatten() {
                if let Ok(i) = s.indirect.binary_search_by_key(&key, |&(k, _)| k) {
                    let sec = self.unit_sector(s.indirect[i].1);
                    if !out.contains(&sec) {
                        out.push(sec);
                    }
                }
            }
            lbn = NDADDR + ((lbn - NDADDR) / n + 1) * n;
        }
        out
    }

    /// The group holding `sector` (None outside the file system).
    pub fn group_of_sector(&self, sector: u64) -> Option<u32> {
        let rel = sector.checked_sub(self.start_sector)?;
        let u = rel / (self.geo.unit_bytes / SECTOR_BYTES);
        (u < self.geo.end()).then(|| self.geo.group_of_unit(u) as u32)
    }

    /// The group holding `ino`'s inode.
    pub fn group_of_inode(&self, ino: Ino) -> u32 {
        self.st(ino).group
    }

    /// Everything allocated to `ino` as `(sector, sectors)`: data (a tail to its fragments)
    /// and indirect blocks.
    #[cfg(test)]
    pub(crate) fn allocated_sectors(&self, ino: Ino) -> Vec<(u64, u64)> {
        let s = self.st(ino);
        let mut out: Vec<(u64, u64)> = s.extents.iter().map(|e| (e.sector, e.pages * PAGE_SECTORS)).collect();
        if s.tail_units > 0 {
            let tail = self.unit_sector(s.tail_start);
            let last = out.last_mut().expect("a tail has an extent");
            // The tail ends the last extent: cut it to the fragments' end.
            last.1 = tail + s.tail_units * (self.geo.unit_bytes / SECTOR_BYTES) - last.0;
        }
        let bs = self.geo.block_bytes() / SECTOR_BYTES;
        out.extend(s.indirect.iter().map(|&(_, u)| (self.unit_sector(u), bs)));
        out
    }

    /// Sectors of the fixed structures (superblocks, bitmaps, inode tables) of every group.
    #[cfg(test)]
    pub(crate) fn fixed_sectors(&self) -> Vec<(u64, u64)> {
        let us = self.geo.unit_bytes / SECTOR_BYTES;
        let mut start = 0;
        let mut out = Vec::new();
        for g in &self.geo.groups {
            out.push((self.unit_sector(start), (g.data - start) * us));
            start = g.end;
        }
        out
    }

    pub(crate) fn unit_sector(&self, u: u64) -> u64 {
        self.start_sector + u * (self.geo.unit_bytes / SECTOR_BYTES)
    }

    pub(crate) fn parent_group(&self, parent: Ino) -> usize {
        self.st(parent).group as usize
    }

    pub(crate) fn parent_dino(&self, parent: Ino) -> u32 {
        self.st(parent).dino
    }

    /// Block allocation in group `g` dirties its block bitmap (FFS: its cylinder group block)
    /// and its group descriptor (ext2).
    pub(super) fn group_meta(&self, g: usize, a: &mut Alloc) {
        a.dirty(self.unit_sector(self.geo.groups[g].bitmap));
        self.descriptor(g, a);
    }

    /// ext2: the group descriptor table block describing group `g` (32 bytes a group).
    pub(super) fn descriptor(&self, g: usize, a: &mut Alloc) {
        if let Some(gdt) = self.geo.gdt {
            a.dirty(self.unit_sector(gdt + (g as u64 * 32) / 4096));
        }
    }

    // ---- growth ----

    /// Creates `name` in directory `parent` (in `tree` and on disk) with the allocator's
    /// policies: a directory gets its inode's group from Orlov (ext2) or `ffs_dirpref` and its
    /// first block; a file its inode near its directory. Its entry is appended to the parent's
    /// last directory block (a new block when it does not fit). On an error the entry is in
    /// neither the tree nor the layout.
    pub fn create(&mut self, tree: &mut Tree, parent: Ino, name: &str, kind: Kind) -> Result<(Ino, Alloc), String> {
        check_name(name)?;
        if !self.contains(parent) {
            return Err(format!("inode {parent} is not laid out"));
        }
        let ino = tree.add(parent, name, kind, 0)?;
        let mut a = Alloc::default();
        if let Err(e) = self.place(ino, parent, name.len(), kind, &mut a) {
            let msg = format!("creating `{}`: {e}", tree.path_of(ino));
            // The tree and the layout forget the entry; space allocated before the error (a
            // directory's first block) stays allocated.
            tree.remove_last(ino);
            if let Some(s) = self.inodes.get_mut(ino as usize) {
                *s = InodeState::default();
            }
            return Err(msg);
        }
        Ok((ino, a))
    }

    /// Grows `ino` to `new_size_bytes` (a smaller size changes nothing: no truncation), new
    /// blocks from the last block's successor on (first fit), indirect blocks allocated just
    /// before the data they map. The caller keeps the tree's size in step
    /// ([`Tree::set_size`]). On an error (the file system is full) what was allocated before it
    /// stays allocated.
    pub fn extend(&mut self, ino: Ino, new_size_bytes: u64) -> Result<Alloc, String> {
        let mut a = Alloc::default();
        self.extend_into(ino, new_size_bytes, &mut a)?;
        Ok(a)
    }

    /// [`Layout::extend`] into `a` (cleared first), so a caller can reuse its vectors.
    pub fn extend_into(&mut self, ino: Ino, new_size_bytes: u64, a: &mut Alloc) -> Result<(), String> {
        if !self.contains(ino) {
            return Err(format!("inode {ino} is not laid out"));
        }
        a.clear();
        self.grow(ino, new_size_bytes, a)
    }

    /// Lays out inode `ino` (already in the tree) as an entry of `parent`.
    fn place(&mut self, ino: Ino, parent: Ino, name_len: usize, kind: Kind, a: &mut Alloc) -> Result<(), String> {
        if self.inodes.len() <= ino as usize {
            self.inodes.resize(ino as usize + 1, InodeState::default());
        }
        if self.free_inodes == 0 {
            return Err("no free inodes".into());
        }
        let g = match (kind, self.kind) {
            (Kind::Dir, FsKind::Ext2 { .. }) => self.ext2_dir_group(parent),
            (Kind::File, FsKind::Ext2 { .. }) => self.ext2_file_group(parent),
            (Kind::Dir, FsKind::Ffs { .. }) => self.ffs_dir_group(),
            (Kind::File, FsKind::Ffs { .. }) => self.ffs_file_group(self.parent_group(parent)),
        }
        .ok_or("no group with a free inode")?;
        let idx = match self.gs[g].freed.pop_first() {
            Some(i) => i,
            None => self.gs[g].used_inodes,
        };
        debug_assert!(idx < self.geo.ipg);
        let dino = g as u32 * self.geo.ipg + idx + self.geo.ino_base;
        self.gs[g].used_inodes += 1;
        self.free_inodes -= 1;
        match kind {
            Kind::Dir => {
                self.gs[g].ndirs += 1;
                self.ndirs += 1;
                self.gs[g].debt = (self.gs[g].debt + 1).min(255);
            }
            Kind::File => self.gs[g].debt = self.gs[g].debt.saturating_sub(1),
        }
        {
            let s = &mut self.inodes[ino as usize];
            *s = InodeState { dino, group: g as u32, kind: Some(kind), parent, ..InodeState::default() };
        }
        a.dirty(self.unit_sector(self.geo.inode_unit(dino)));
        a.dirty(self.unit_sector(self.geo.groups[g].inode_bitmap));
        self.descriptor(g, a);
        if kind == Kind::Dir {
            let dots = (entry_bytes(&self.geo, 1) + entry_bytes(&self.geo, 2)) as u32;
            self.inodes[ino as usize].dir_fill = vec![dots];
            self.grow(ino, self.geo.dirblk, a)?;
        }
        // The entry in the parent.
        let e = entry_bytes(&self.geo, name_len) as u32;
        let dirblk = self.geo.dirblk as u32;
        let p = &mut self.inodes[parent as usize];
        let hole = if p.holes { p.dir_fill.iter().position(|&f| f + e <= dirblk) } else { None };
        let chunk = match (hole, p.dir_fill.last_mut()) {
            (Some(c), _) => {
                p.dir_fill[c] += e;
                c
            }
            (None, Some(f)) if *f + e <= dirblk => {
                *f += e;
                p.dir_fill.len() - 1
            }
            _ => {
                p.dir_fill.push(e);
                p.dir_fill.len() - 1
            }
        };
        let new_size = p.dir_fill.len() as u64 * self.geo.dirblk;
        self.inodes[ino as usize].entry_chunk = chunk as u32;
        self.grow(parent, new_size, a)?;
        let page = chunk as u64 * self.geo.dirblk / PAGE_BYTES;
        let sec = self.sector_of(parent, page).expect("the directory holds its last page");
        a.dirty(sec);
        a.dirty(self.unit_sector(self.geo.inode_unit(self.inodes[parent as usize].dino)));
        Ok(())
    }

    /// Whole blocks and tail fragments a file of `size` bytes takes.
    fn shape(&self, size: u64) -> (u64, u64) {
        let bb = self.geo.block_bytes();
        if self.geo.tails && size <= NDADDR * bb {
            (size / bb, (size % bb).div_ceil(self.geo.unit_bytes))
        } else {
            (size.div_ceil(bb), 0)
        }
    }

    fn alloc_units(&mut self, goal: u64, w: Want, a: &mut Alloc) -> Result<(u64, u64), String> {
        let (u, n) = self.space.alloc(goal, w).ok_or_else(|| {
            format!("the file system is full ({} KiB free, {} wanted)", self.free_bytes() / 1024, w.min * self.geo.unit_bytes / 1024)
        })?;
        let g = self.geo.group_of_unit(u);
        self.group_meta(g, a);
        Ok((u, n))
    }

    fn grow(&mut self, ino: Ino, new_size: u64, a: &mut Alloc) -> Result<(), String> {
        let i = ino as usize;
        if new_size <= self.inodes[i].size {
            return Ok(());
        }
        let (nb, nt) = self.shape(new_size);
        let bu = self.geo.block_units;
        let ppb = self.geo.block_bytes() / PAGE_BYTES;
        let (ob, ot) = (self.inodes[i].blocks, self.inodes[i].tail_units);
        let max_blocks = NDADDR + self.geo.nindir + self.geo.nindir.pow(2) + self.geo.nindir.pow(3);
        if nb > max_blocks {
            return Err(format!("{new_size} bytes is past the largest file ({max_blocks} blocks)"));
        }
        let mut goal = self.inodes[i].last_unit.map(|u| u + bu);
        let mut relocated = false;
        if ot > 0 && (nb > ob || nt != ot) {
            // FFS: the fragments at the end move (or grow in place when what follows is free).
            let ts = self.inodes[i].tail_start;
            self.space.free(ts, ot);
            self.group_meta(self.geo.group_of_unit(ts), a);
            truncate_extents(&mut self.inodes[i].extents, ob * ppb);
            self.inodes[i].tail_units = 0;
            goal = Some(ts);
            relocated = true;
        }
        let group_start = self.geo.groups[self.inodes[i].group as usize].data;
        let mut lbn = ob;
        while lbn < nb {
            let mut g = if lbn == 0 {
                group_start
            } else if lbn < NDADDR {
                goal.unwrap_or(group_start)
            } else if (lbn - NDADDR).is_multiple_of(self.geo.nindir) {
                self.section_goal(ino, lbn, goal.unwrap_or(group_start))
            } else {
                goal.unwrap_or(group_start)
            };
            if lbn >= NDADDR && (lbn - NDADDR).is_multiple_of(self.geo.nindir) {
                // The indirect blocks that map this section, just before its data.
                let mut parent_existed = true;
                let mut parent_sector = None;
                for key in chain(lbn, self.geo.nindir).into_iter().flatten() {
                    let s = &self.inodes[i];
                    match s.indirect.binary_search_by_key(&key, |&(k, _)| k) {
                        Ok(at) => {
                            parent_existed = true;
                            parent_sector = Some(self.unit_sector(s.indirect[at].1));
                        }
                        Err(at) => {
                            if parent_existed {
                                if let Some(ps) = parent_sector {
                                    a.dirty(ps);
                                }
                            }
                            let (u, _) = self.alloc_units(g, Want { min: bu, max: bu, align: bu, within: 0 }, a)?;
                            self.inodes[i].indirect.insert(at, (key, u));
                            let sec = self.unit_sector(u);
                            a.indirect.push(sec);
                            parent_existed = false;
                            parent_sector = Some(sec);
                            g = u + bu;
                        }
                    }
                }
            } else if lbn >= NDADDR {
                // An existing indirect block gets new pointers.
                if let Some(&key) = chain(lbn, self.geo.nindir).iter().flatten().last() {
                    let s = &self.inodes[i];
                    let unit = match s.last_pointed {
                        Some((k, u)) if k == key => Some(u),
                        _ => s.indirect.binary_search_by_key(&key, |&(k, _)| k).ok().map(|at| s.indirect[at].1),
                    };
                    debug_assert_eq!(unit, s.indirect.binary_search_by_key(&key, |&(k, _)| k).ok().map(|at| s.indirect[at].1));
                    if let Some(u) = unit {
                        self.inodes[i].last_pointed = Some((key, u));
                        a.dirty(self.unit_sector(u));
                    }
                }
            }
            let section_end = if lbn < NDADDR { NDADDR } else { NDADDR + ((lbn - NDADDR) / self.geo.nindir + 1) * self.geo.nindir };
            let want = nb.min(section_end) - lbn;
            let (u, n) = self.alloc_units(g, Want { min: bu, max: want * bu, align: bu, within: 0 }, a)?;
            let blocks = n / bu;
            let sector = self.unit_sector(u);
            push_extent(&mut self.inodes[i].extents, Extent { file_page: lbn * ppb, sector, pages: blocks * ppb });
            a.data.push((sector, n * (self.geo.unit_bytes / SECTOR_BYTES)));
            lbn += blocks;
            let last = u + n - bu;
            self.inodes[i].last_unit = Some(last);
            self.inodes[i].blocks = lbn;
            goal = Some(last + bu);
        }
        if nt > 0 && (ot == 0 || relocated || nb > ob) {
            let g = goal.unwrap_or(group_start);
            let (u, n) = self.alloc_units(g, Want { min: nt, max: nt, align: 1, within: bu }, a)?;
            let bytes = new_size - nb * self.geo.block_bytes();
            let sector = self.unit_sector(u);
            let s = &mut self.inodes[i];
            s.tail_units = n;
            s.tail_start = u;
            push_extent(&mut s.extents, Extent { file_page: nb * ppb, sector, pages: bytes.div_ceil(PAGE_BYTES) });
            a.data.push((sector, n * (self.geo.unit_bytes / SECTOR_BYTES)));
        }
        self.inodes[i].size = new_size;
        a.dirty(self.unit_sector(self.geo.inode_unit(self.inodes[i].dino)));
        Ok(())
    }

    /// The goal for the first block of indirect section starting at `lbn` (`prev`: just after
    /// the last block).
    fn section_goal(&self, ino: Ino, lbn: u64, prev: u64) -> u64 {
        match self.kind {
            FsKind::Ext2 { .. } => prev,
            FsKind::Ffs { .. } => self.ffs_section_goal(self.st(ino).group as usize, lbn, prev),
        }
    }
}

/// Appends `e`, merged into the last extent when it continues it in the file and on disk.
fn push_extent(ex: &mut Vec<Extent>, e: Extent) {
    if e.pages == 0 {
        return;
    }
    if let Some(l) = ex.last_mut() {
        if l.file_page + l.pages == e.file_page && l.sector + l.pages * PAGE_SECTORS == e.sector {
            l.pages += e.pages;
            return;
        }
    }
    ex.push(e);
}

/// Keeps pages `0..pages` only.
fn truncate_extents(ex: &mut Vec<Extent>, pages: u64) {
    while let Some(l) = ex.last_mut() {
        if l.file_page >= pages {
            ex.pop();
        } else {
            l.pages = l.pages.min(pages - l.file_page);
            break;
        }
    }
}

/// The indirect blocks mapping logical block `lbn` (past the direct ones), top level first,
/// as keys: level << 56 | index. Single: (1, 0). Double: top (2, 0), its children (2, 1 + k).
/// Triple: top (3, 0), middle (3, 1 + k), leaves (3, 1 + n + k).
pub(crate) fn chain(lbn: u64, n: u64) -> [Option<u64>; 3] {
    const L1: u64 = 1 << 56;
    const L2: u64 = 2 << 56;
    const L3: u64 = 3 << 56;
    if lbn < NDADDR {
        return [None; 3];
    }
    let mut r = lbn - NDADDR;
    if r < n {
        return [Some(L1), None, None];
    }
    r -= n;
    if r < n * n {
        return [Some(L2), Some(L2 | (1 + r / n)), None];
    }
    r -= n * n;
    [Some(L3), Some(L3 | (1 + r / (n * n))), Some(L3 | (1 + n + r / n))]
}
