//! ext2's choice of a group for a new inode (Linux fs/ext2/ialloc.c): directories by Orlov's
//! allocator (`find_group_orlov`), files in their directory's group (`find_group_other`). Data
//! blocks then go first fit from the inode's group start or from the previous block (the
//! layout's `grow`), as `ext2_find_goal` / `ext2_new_blocks` do without reservation windows.

use super::layout::Layout;
use crate::host::Ino;
use rand::Rng;

/// Orlov's weights (`INODE_COST`, `BLOCK_COST` in ialloc.c).
const INODE_COST: i64 = 64;
const BLOCK_COST: i64 = 256;

impl Layout {
    fn free_inodes_in(&self, g: usize) -> i64 {
        (self.geo.ipg - self.gs[g].used_inodes) as i64
    }

    fn free_blocks_in(&self, g: usize) -> i64 {
        self.space.group_free(g) as i64
    }

    /// `find_group_orlov`: a top-level directory (the parent is the root) goes to the group,
    /// searched from a random one, with the fewest directories among those with at least the
    /// average free inodes and free blocks; a deeper one to the first group from its parent's
    /// with not too many directories, enough free inodes and blocks and not too much debt
    /// (directories created lately without files); else the first group with average free
    /// inodes, else any group with a free inode.
    pub(crate) fn ext2_dir_group(&mut self, parent: Ino) -> Option<usize> {
        let ng = self.geo.groups.len();
        let ngi = ng as i64;
        let ipg = self.geo.ipg as i64;
        let bpg = self.geo.units_per_group as i64;
        let freei = self.free_inodes as i64;
        let mut avefreei = freei / ngi;
        let freeb = self.space.total_free() as i64;
        let avefreeb = freeb / ngi;
        let ndirs = self.ndirs.max(1) as i64;
        let parent_group;
        if parent == super::tree::ROOT_INO {
            parent_group = self.rng.gen_range(0..ng);
            let mut best: Option<usize> = None;
            let mut best_ndir = ipg;
            for i in 0..ng {
                let g = (parent_group + i) % ng;
                if self.free_inodes_in(g) == 0 {
                    continue;
                }
                let nd = self.gs[g].ndirs as i64;
                if nd >= best_ndir || self.free_inodes_in(g) < avefreei || self.free_blocks_in(g) < avefreeb {
                    continue;
                }
                best = Some(g);
                best_ndir = nd;
            }
            if best.is_some() {
                return best;
            }
        } else {
            parent_group = self.parent_group(parent);
            let total_blocks = self.geo.end() as i64;
            let blocks_per_dir = (total_blocks - freeb) / ndirs;
            let max_dirs = ndirs / ngi + ipg / 16;
            let min_inodes = avefreei - ipg / 4;
            let min_blocks = avefreeb - bpg / 4;
            let mut max_debt = bpg / blocks_per_dir.max(BLOCK_COST);
            if max_debt * INODE_COST > ipg {
                max_debt = ipg / INODE_COST;
            }
            let max_debt = max_debt.clamp(1, 255);
            for i in 0..ng {
                let g = (parent_group + i) % ng;
                if self.free_inodes_in(g) == 0
                    || self.gs[g].debt as i64 >= max_debt
                    || self.gs[g].ndirs as i64 >= max_dirs
                    || self.free_inodes_in(g) < min_inodes
                    || self.free_blocks_in(g) < min_blocks
                {
                    continue;
                }
                return Some(g);
            }
        }
        // fallback
        loop {
            for i in 0..ng {
                let g = (parent_group + i) % ng;
                if self.free_inodes_in(g) > 0 && self.free_inodes_in(g) >= avefreei {
                    return Some(g);
                }
            }
            if avefreei == 0 {
                return None;
            }
            avefreei = 0;
        }
    }

    /// `find_group_other`: the parent's group if it has a free inode and a free block; else a
    /// quadratic hash from it (offset by the parent's inode number) for one with both; else
    /// the first group after the parent's with a free inode.
    pub(crate) fn ext2_file_group(&self, parent: Ino) -> Option<usize> {
        let ng = self.geo.groups.len();
        let pg = self.parent_group(parent);
        let ok = |g: usize| self.free_inodes_in(g) > 0 && self.free_blocks_in(g) > 0;
        if ok(pg) {
            return Some(pg);
        }
        let mut g = (pg + self.parent_dino(parent) as usize) % ng;
        let mut i = 1;
        while i < ng {
            g += i;
            if g >= ng {
                g -= ng;
            }
            if ok(g) {
                return Some(g);
            }
            i <<= 1;
        }
        let mut g = pg;
        for _ in 0..ng {
            g = (g + 1) % ng;
            if self.free_inodes_in(g) > 0 {
                return Some(g);
            }
        }
        None
    }
}
