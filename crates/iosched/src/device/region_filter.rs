//! A counting filter of the disk regions a set of sector ranges touches: answers "may some range
//! hold a sector of `[lo, hi)`?" in O(1) per region, with no false negatives. The drive's buffer
//! uses it so that a lookup of a sector no segment holds (most lookups under random I/O) does not
//! scan every segment; the answer when it says "maybe" is the scan's, so results are unchanged.

/// Buckets of the table (a power of two): hashed regions share a bucket, which only costs a
/// needless scan now and then.
const BUCKETS: usize = 1024;

#[derive(Clone, Debug)]
pub struct RegionFilter {
    /// A region is `1 << shift` sectors: at least a segment's length, so a range of a segment
    /// touches at most two regions.
    shift: u32,
    /// Per bucket: how many (range, region) pairs fall in it.
    counts: Vec<u32>,
}

impl RegionFilter {
    /// For ranges of at most about `range_sectors` (longer ones are counted correctly, in more
    /// regions).
    pub fn new(range_sectors: u64) -> Self {
        let shift = range_sectors.max(1).next_power_of_two().trailing_zeros();
        RegionFilter { shift, counts: vec![0; BUCKETS] }
    }

    #[inline]
    fn bucket(region: u64) -> usize {
        // Fibonacci hashing: neighbouring regions land in different buckets.
        (region.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - BUCKETS.trailing_zeros())) as usize
    }

    /// The regions of `[lo, hi)`; an empty range counts as the sector `lo` (the buffer's overlap
    /// test treats it so).
    #[inline]
    fn regions(&self, lo: u64, hi: u64) -> std::ops::RangeInclusive<u64> {
        let last = hi.saturating_sub(1).max(lo);
        (lo >> self.shift)..=(last >> self.shift)
    }

    pub fn add(&mut self, lo: u64, hi: u64) {
        if hi > lo {
            for r in self.regions(lo, hi) {
                self.counts[Self::bucket(r)] += 1;
            }
        }
    }

    /// Forgets a range added earlier with the same bounds.
    pub fn remove(&mut self, lo: u64, hi: u64) {
        if hi > lo {
            for r in self.regions(lo, hi) {
                self.counts[Self::bucket(r)] -= 1;
            }
        }
    }

    /// False: no range added (and not removed) touches `[lo, hi)`.
    #[inline]
    pub fn may_touch(&self, lo: u64, hi: u64) -> bool {
        self.regions(lo, hi).any(|r| self.counts[Self::bucket(r)] > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_misses_a_range_and_forgets_removed_ones() {
        let mut f = RegionFilter::new(4096);
        assert!(!f.may_touch(0, 1));
        f.add(10_000, 14_096);
        for s in [10_000, 12_000, 14_095] {
            assert!(f.may_touch(s, s + 1), "sector {s}");
        }
        assert!(f.may_touch(9_000, 10_001), "overlapping range");
        assert!(f.may_touch(12_000, 12_000), "an empty range is its first sector");
        assert!(!f.may_touch(1 << 40, (1 << 40) + 8), "far away (a different bucket here)");
        f.add(10_000, 10_008);
        f.remove(10_000, 14_096);
        assert!(f.may_touch(10_004, 10_005), "the other range is still there");
        f.remove(10_000, 10_008);
        assert!(!f.may_touch(10_000, 14_096));
        // A range longer than a region is counted in every region it touches.
        f.add(0, 100_000);
        assert!((0..100_000).step_by(997).all(|s| f.may_touch(s, s + 1)));
        f.remove(0, 100_000);
        assert!(f.counts.iter().all(|&c| c == 0));
    }
}
