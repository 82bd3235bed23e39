//! FFS's choices (FreeBSD 4 sys/ufs/ffs/ffs_alloc.c): a new directory's cylinder group by the
//! original `ffs_dirpref` (the group with the fewest directories among those with at least the
//! average number of free inodes), a file's inode in its directory's group (`ffs_hashalloc`:
//! the group, then a quadratic rehash, then every group), and the preferred block of each
//! section of a file (`ffs_blkpref`): direct blocks and the first indirect section in the
//! inode's group, each later section of `fs_maxbpg` blocks in the next group with at least the
//! average number of free blocks.

use super::geometry::NDADDR;
use super::layout::Layout;

impl Layout {
    fn ffs_free_inodes(&self, g: usize) -> u64 {
        (self.geo.ipg - self.gs[g].used_inodes) as u64
    }

    /// Free whole blocks in group `g` (`cs_nbfree`, approximated by free fragments / 8).
    fn ffs_free_blocks(&self, g: usize) -> u64 {
        self.space.group_free(g) / self.geo.block_units
    }

    pub(crate) fn ffs_dir_group(&self) -> Option<usize> {
        let ncg = self.geo.groups.len();
        let avgifree = self.free_inodes / ncg as u64;
        let mut best: Option<usize> = None;
        for cg in 0..ncg {
            if self.ffs_free_inodes(cg) >= avgifree && best.is_none_or(|b| self.gs[cg].ndirs < self.gs[b].ndirs) {
                best = Some(cg);
            }
        }
        self.ffs_file_group(best.unwrap_or(0))
    }

    /// `ffs_hashalloc` for an inode wanted in group `cg`.
    pub(crate) fn ffs_file_group(&self, cg: usize) -> Option<usize> {
        let ncg = self.geo.groups.len();
        let ok = |g: usize| self.ffs_free_inodes(g) > 0;
        if ok(cg) {
            return Some(cg);
        }
        let mut g = cg;
        let mut i = 1;
        while i < ncg {
            g += i;
            if g >= ncg {
                g -= ncg;
            }
            if ok(g) {
                return Some(g);
            }
            i *= 2;
        }
        let mut g = (cg + 2) % ncg;
        for _ in 2..ncg {
            if ok(g) {
                return Some(g);
            }
            g = (g + 1) % ncg;
        }
        (0..ncg).find(|&g| ok(g))
    }

    /// `ffs_blkpref` at the start of a section: the first indirect section stays in the
    /// inode's group; a later one in the first group from the inode's plus `lbn / fs_maxbpg` with
    /// at least the average free blocks (`prev`, just after the last block, when none has).
    pub(crate) fn ffs_section_goal(&self, ino_group: usize, lbn: u64, prev: u64) -> u64 {
        let ncg = self.geo.groups.len();
        if lbn < NDADDR + self.geo.maxbpg {
            return self.geo.groups[ino_group].data;
        }
        // At the start of an indirect block (`indx == 0`) the search starts at the inode's
        // group plus the section number.
        let start = (ino_group + (lbn / self.geo.maxbpg) as usize) % ncg;
        let avg = self.space.total_free() / self.geo.block_units / ncg as u64;
        (start..ncg).chain(0..=start).find(|&g| self.ffs_free_blocks(g) >= avg).map_or(prev, |g| self.geo.groups[g].data)
    }
}
