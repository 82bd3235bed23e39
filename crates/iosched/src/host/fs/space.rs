//! Free space as runs of allocation units (ext2 blocks, FFS fragments), so memory follows the
//! number of free runs, not of blocks. Allocation is first fit from a goal, forward through the
//! groups and around, the way ext2's `ext2_new_blocks` and FFS's `ffs_mapsearch` search their
//! bitmaps from the preferred block.

use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub(crate) struct FreeSpace {
    /// end (one past its last unit) -> start of each free run (runs never touch: adjacent runs
    /// are merged). Keyed by the end because allocation takes from the front of a run (the goal
    /// is where the last allocation ended): that changes only the run's start, in place.
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
        let (mut s, mut e) = (start, start + len);
        if let Some(ps) = self.runs.remove(&start) {
            // The run before ends where this one starts.
            s = ps;
        }
        if let Some((&ne, &ns)) = self.runs.range(e + 1..).next() {
            debug_assert!(ns >= e, "freeing free space at {start}");
            if ns == e {
                self.runs.remove(&ne);
                e = ne;
            }
        }
        self.runs.insert(e, s);
    }

    /// Takes `[start, start+len)` from the free run `[run_start, run_end)`, whose back part
    /// past the taken units (if any) has already been left under the run's end.
    fn take(&mut self, run_start: u64, run_end: u64, start: u64, len: u64) {
        debug_assert!(run_start <= start && start + len <= run_end);
        if start + len == run_end {
            self.runs.remove(&run_end);
        }
        if start > run_start {
            self.runs.insert(start, run_start);
        }
        self.account(start, len, false);
    }

    /// The first run whose end is in `ends` in which `w` fits at or after `from`:
    /// `(run_start, run_end, (start, len))`; the run keeps what follows the taken units.
    fn first_fit(&mut self, ends: impl std::ops::RangeBounds<u64>, from: u64, w: &Want) -> Option<(u64, u64, (u64, u64))> {
        for (&e, s) in self.runs.range_mut(ends) {
            if let Some((c, len)) = Self::fit(*s, e, from, w) {
                let rs = *s;
                if c + len < e {
                    // Taking from the front (the common case) changes only the start, in place.
                    *s = c + len;
                }
                return Some((rs, e, (c, len)));
            }
        }
        None
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
        // First fit from the run holding the goal (or the first after it), then from the start.
        let (rs, re, (c, len)) = self.first_fit(goal + 1.., goal, &w).or_else(|| self.first_fit(..=goal, 0, &w))?;
        self.take(rs, re, c, len);
        Some((c, len))
    }

    /// Is unit `u` free?
    #[cfg(test)]
    pub fn is_free(&self, u: u64) -> bool {
        matches!(self.runs.range(u + 1..).next(), Some((_, &s)) if s <= u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The free runs keyed by their start, as they were kept before (the reference).
    struct ByStart {
        runs: BTreeMap<u64, u64>,
        end: u64,
    }

    impl ByStart {
        fn free(&mut self, start: u64, len: u64) {
            let (mut s, mut l) = (start, len);
            if let Some((&ps, &pl)) = self.runs.range(..start).next_back() {
                if ps + pl == start {
                    self.runs.remove(&ps);
                    (s, l) = (ps, l + pl);
                }
            }
            if let Some(nl) = self.runs.remove(&(start + len)) {
                l += nl;
            }
            self.runs.insert(s, l);
        }

        fn alloc(&mut self, goal: u64, w: Want) -> Option<(u64, u64)> {
            let goal = goal.min(self.end);
            let first = match self.runs.range(..=goal).next_back() {
                Some((&s, &l)) if s + l > goal => s,
                _ => goal,
            };
            let found = self
                .runs
                .range(first..)
                .find_map(|(&s, &l)| FreeSpace::fit(s, s + l, goal, &w).map(|f| (s, l, f)))
                .or_else(|| self.runs.range(..first).find_map(|(&s, &l)| FreeSpace::fit(s, s + l, 0, &w).map(|f| (s, l, f))));
            let (rs, rl, (c, len)) = found?;
            self.runs.remove(&rs);
            if c > rs {
                self.runs.insert(rs, c - rs);
            }
            if c + len < rs + rl {
                self.runs.insert(c + len, rs + rl - c - len);
            }
            Some((c, len))
        }
    }

    /// Random allocations (with and without alignment and block limits, from random goals)
    /// and frees of allocated runs: the same runs given as by the start-keyed runs, the same
    /// free runs after every step, the same counts.
    #[test]
    fn allocates_as_the_start_keyed_runs() {
        let end = 4096;
        let mut space = FreeSpace::new(end, 512, 8);
        space.free(0, end);
        let mut reference = ByStart { runs: BTreeMap::from([(0, end)]), end };
        let mut held: Vec<(u64, u64)> = Vec::new();
        let mut x: u64 = 7;
        for step in 0..100_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if (x >> 60) < 9 || held.is_empty() {
                let goal = (x >> 20) % (end + 8);
                let w = match (x >> 8) % 3 {
                    0 => Want { min: 1, max: 1 + (x >> 40) % 64, align: 1, within: 0 },
                    1 => Want { min: 8, max: 8 * (1 + (x >> 40) % 8), align: 8, within: 0 },
                    _ => Want { min: 1 + (x >> 40) % 7, max: 7, align: 1, within: 8 },
                };
                let w = Want { max: w.max.max(w.min), ..w };
                let got = space.alloc(goal, w);
                assert_eq!(got, reference.alloc(goal, w), "step {step}");
                held.extend(got);
            } else {
                let (s, l) = held.swap_remove((x >> 32) as usize % held.len());
                space.free(s, l);
                reference.free(s, l);
            }
            let by_start: Vec<(u64, u64)> = space.runs.iter().map(|(&e, &s)| (s, e - s)).collect();
            assert_eq!(by_start, reference.runs.iter().map(|(&s, &l)| (s, l)).collect::<Vec<_>>(), "step {step}");
            let free: u64 = by_start.iter().map(|r| r.1).sum();
            assert_eq!(space.total_free(), free);
            assert_eq!((0..8).map(|g| space.group_free(g)).sum::<u64>(), free);
        }
    }
}
