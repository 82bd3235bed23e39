//! The seek curve tabulated per distance, with the least seek over all longer distances beside
//! each entry (the bound an RPO or SPTF search prunes by): one table, so the bound and the seek
//! of a candidate come from one cache line. A large drive has hundreds of thousands of
//! cylinders (megabytes of table), so a search over random candidates would miss the cache on
//! both lookups otherwise; a coarse copy of the bound, small enough to stay in cache, rejects
//! most far candidates without touching the table at all.

use crate::time::Nanos;

/// Entries of the coarse bound at most (16 KiB of u32).
const COARSE_ENTRIES: usize = 4096;

#[derive(Clone, Debug)]
pub struct SeekTable {
    /// Per distance: the seek time and the least seek time over this and every longer distance.
    entries: Vec<[u32; 2]>,
    /// Per block of `1 << coarse_shift` distances: the bound at the block's first distance,
    /// which is at most the bound of any distance in the block (the bound never decreases).
    coarse_floor: Vec<u32>,
    coarse_shift: u32,
}

impl SeekTable {
    /// From the seek times of distances 0, 1, ... (at least one).
    pub fn new(seek_ns: Vec<u32>) -> Self {
        assert!(!seek_ns.is_empty(), "a seek table needs distance 0");
        let mut floor = seek_ns.clone();
        for d in (0..floor.len() - 1).rev() {
            floor[d] = floor[d].min(floor[d + 1]);
        }
        let coarse_shift = floor.len().div_ceil(COARSE_ENTRIES).next_power_of_two().trailing_zeros();
        let coarse_floor = floor.iter().step_by(1 << coarse_shift).copied().collect();
        let entries = seek_ns.into_iter().zip(floor).map(|(s, f)| [s, f]).collect();
        SeekTable { entries, coarse_floor, coarse_shift }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The seek time of `distance` (None beyond the table).
    #[inline]
    pub fn seek_ns(&self, distance: u32) -> Option<Nanos> {
        self.entries.get(distance as usize).map(|e| e[0] as Nanos)
    }

    /// The least seek time over `distance` and every longer one (distances beyond the table
    /// count as the last).
    #[inline]
    pub fn floor_ns(&self, distance: u32) -> Nanos {
        let i = (distance as usize).min(self.entries.len() - 1);
        self.entries[i][1] as Nanos
    }

    /// A bound at most `floor_ns(distance)`, from the small coarse table.
    #[inline]
    pub fn coarse_floor_ns(&self, distance: u32) -> Nanos {
        let i = ((distance as usize).min(self.entries.len() - 1)) >> self.coarse_shift;
        self.coarse_floor[i] as Nanos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_never_exceed_the_seek_of_any_longer_distance() {
        // A curve with a dip (a longer seek cheaper than a shorter one), 10,000 distances.
        let seek: Vec<u32> = (0..10_000u32).map(|d| if d == 0 { 0 } else { 1_000 + d * 3 - if d > 7_000 { 2_000 } else { 0 } }).collect();
        let t = SeekTable::new(seek.clone());
        assert_eq!(t.len(), 10_000);
        for d in (0..10_050u32).step_by(7) {
            let floor = t.floor_ns(d);
            let by_hand = seek[(d as usize).min(9_999)..].iter().min().copied().unwrap() as Nanos;
            assert_eq!(floor, by_hand, "distance {d}");
            assert!(t.coarse_floor_ns(d) <= floor, "distance {d}");
            if (d as usize) < seek.len() {
                assert_eq!(t.seek_ns(d), Some(seek[d as usize] as Nanos));
            }
        }
        assert_eq!(t.seek_ns(10_000), None);
    }
}
