//! Free space as runs of allocation units (ext2 blocks, FFS fragments), so memory follows the
//! number of free runs, not of blocks. Allocation is first fit from a goal, forward through the
//! groups and around, the way ext2's `ext2_new_blocks` and FFS's `ffs_mapsearch` search their
//! bitmaps from the preferred block.

use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub(crate) struct FreeSpace {
    /// start -> length of each free run (runs never touch: adjacent runs are merged).
    runs: BTreeMap<u64, u64>,
    /// Units in each group.
    per_group: u64,
    /// Free units in each group.
    group_free: Vec<u64>,
    total_free: u64,
    /// One past the last unit.
    end: u64,
}

/// What one allocation asks for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Want {
    /// At least this many contiguous units (a multiple of `align`).
    pub min: u64,
    /// At most this many.
    pub max: u64,
    /// The run starts at a multiple of this and its length is one (FFS blocks: 8 fragments).
    pub align: u64,
    /// The run may not cross a multiple of this (FFS fragments stay inside one block); 0: free.
    pub within: u64,
}

impl FreeSpace {
    pub fn new(end: u64, per_group: u64, groups: usize) -> Self {
        FreeSpace { runs: BTreeMap::new(), per_group, group_free: vec![0; groups], total_free: 0, end }
    }

    pub fn total_free(&self) -> u64 {
        self.total_free
    }

    pub fn group_free(&self, g: usize) -> u64 {
        self.group_free[g]
    }

    fn account(&mut self, start: u64, len: u64, add: bool) {
        let mut at = start;
        let end = start + len;
        while at < end {
            let g = (at / self.per_group) as usize;
            let upto = ((g as u64 + 1) * self.per_group).min(end);
            if add {
                self.group_free[g] += upto - at;
            } else {
                self.group_free[g] -= upto - at;
            }
            at = upto;
        }
        if add {
            self.total_free += len;
        } else {
            self.total_free -= len;
        }
    }

    /// Marks `[start, start+len)` free (it must be in use).
    pub fn free(&mut self, start: u64, len: u64) {
        if len == 0 {
            return;
        }
        debug_assert!(start + len <= self.end);
        self.account(start, len, true);
        let mut s = start;
        let mut l = len;
        if let Some((&ps, &pl)) = self.runs.range(..start).next_back() {
            debug_assert!(ps + pl <= start, "freeing free space at {start}");
            if ps + pl == start {
                self.runs.remove(&ps);
                s = ps;
                l += pl;
            }
        }
        if let Some(&nl) = self.runs.get(&(start + len)) {
            self.runs.remove(&(start + len));
            l += nl;
        }
        self.runs.insert(s, l);
    }

    /// Takes `[start, start+len)`, which must lie inside one free run.
    fn take(&mut self, run_start: u64, run_len: u64, start: u64, len: u64) {
        self.runs.remove(&run_start);
        if start > run_start {
            self.runs.insert(run_start, start - run_start);
        }
        let run_end = run_start + run_len;
        if start + len < run_end {
            self.runs.insert(start + len, run_end - start - len);
        }
        self.account(start, len, false);
    }

    /// Where a run satisfying `w` may start inside the free run `[rs, re)` at or after `from`.
    fn fit(rs: u64, re: u64, from: u64, w: &Want) -> Option<(u64, u64)> {
        let mut c = rs.max(from);
        if w.align > 1 {
            c = c.div_ceil(w.align) * w.align;
        }
        if w.within > 0 && c / w.within != (c + w.min - 1) / w.within {
            c = c.div_ceil(w.within) * w.within;
        }
        if c + w.min > re {
            return None;
        }
        let mut len = (re - c).min(w.max);
        if w.align > 1 {
            len = len / w.align * w.align;
        }
        if let Some(block) = c.checked_div(w.within) {
            len = len.min((block + 1) * w.within - c);
        }
        (len >= w.min).then_some((c, len))
    }

    /// First fit at or after `goal`, then from the start up to it. Returns `(start, len)`.
    pub fn alloc(&mut self, goal: u64, w: Want) -> Option<(u64, u64)> {
        debug_assert!(w.min >= 1 && w.max >= w.min);
        if self.total_free < w.min {
            return None;
        }
        let goal = goal.min(self.end);
        let first = match self.runs.range(..=goal).next_back() {
            Some((&s, &l)) if s + l > goal => s,
            _ => goal,
        };
        let mut found = None;
        for (&s, &l) in self.runs.range(first..) {
            if let Some(f) = Self::fit(s, s + l, goal, &w) {
                found = Some((s, l, f));
                break;
            }
        }
        if found.is_none() {
            for (&s, &l) in self.runs.range(..first) {
                if let Some(f) = Self::fit(s, s + l, 0, &w) {
                    found = Some((s, l, f));
                    break;
                }
            }
        }
        let (rs, rl, (c, len)) = found?;
        self.take(rs, rl, c, len);
        Some((c, len))
    }

    /// Is unit `u` free?
    #[cfg(test)]
    pub fn is_free(&self, u: u64) -> bool {
        matches!(self.runs.range(..=u).next_back(), Some((&s, &l)) if s + l > u)
    }
}
