//! HdrHistogram's bucket arithmetic for the histograms here (lowest discernible value 1, three
//! significant digits) as a few integer operations. The crate answers the same questions through
//! a histogram instance, one call per step (bucket index, sub-bucket, shifts); reading a
//! thousand processes' percentiles at a run's end made about 400,000 such calls. The test checks
//! every function against the crate's over small values exhaustively, around every power of two
//! and over random values.

/// Sub-buckets per bucket: 2^11 = 2048, the power of two at or above 2 x 10^3 (three digits).
const SUB_BUCKET_COUNT_MAGNITUDE: u32 = 11;
/// Values below 2^11 all lie in bucket 0, at unit resolution.
const SUB_BUCKET_MASK: u64 = (1 << SUB_BUCKET_COUNT_MAGNITUDE) - 1;
/// 64 less the unit magnitude (0: the lowest discernible value is 1) and the sub-bucket magnitude.
const LEADING_ZERO_COUNT_BASE: u32 = 64 - SUB_BUCKET_COUNT_MAGNITUDE;

/// The bucket of `value`: how many doublings it lies above bucket 0's range; also the log2 of
/// the width of its equivalence range.
#[inline]
fn bucket_of(value: u64) -> u32 {
    LEADING_ZERO_COUNT_BASE - (value | SUB_BUCKET_MASK).leading_zeros()
}

/// The lowest value counted in `value`'s bucket (`Histogram::lowest_equivalent`).
#[inline]
pub fn lowest_equivalent(value: u64) -> u64 {
    let b = bucket_of(value);
    (value >> b) << b
}

/// The width of `value`'s equivalence range (`Histogram::equivalent_range`).
#[inline]
pub fn equivalent_range(value: u64) -> u64 {
    1 << bucket_of(value)
}

/// The highest value counted with `value` (`Histogram::highest_equivalent`, capped at u64::MAX).
#[inline]
pub fn highest_equivalent(value: u64) -> u64 {
    if value == u64::MAX {
        u64::MAX
    } else {
        lowest_equivalent(value).saturating_add(equivalent_range(value)) - 1
    }
}

/// The middle (rounded up) of `value`'s equivalence range (`Histogram::median_equivalent`; the
/// sum cannot overflow: the range's lower half fits below 2^64).
#[inline]
pub fn median_equivalent(value: u64) -> u64 {
    lowest_equivalent(value) + (equivalent_range(value) >> 1)
}

/// Where `value`'s count sits in an HdrHistogram's counts array: bucket 0 holds 0..2048 at unit
/// resolution; every later bucket b only its upper half (sub-buckets 1024..2048 of width 2^b), so
/// the index is b x 1024 + (value >> b) (`Histogram::index_for`).
#[inline]
pub fn index_of(value: u64) -> usize {
    let b = bucket_of(value);
    ((b as usize) << (SUB_BUCKET_COUNT_MAGNITUDE - 1)) + (value >> b) as usize
}

/// A counts array grows this many entries (one bucket's upper half) at a time.
pub const INDEX_GROWTH: usize = 1 << (SUB_BUCKET_COUNT_MAGNITUDE - 1);

/// The lowest value counted at `index` (`Histogram::value_for`, which is its lowest equivalent):
/// the inverse of [`index_of`] on buckets' lowest values.
#[inline]
pub fn lowest_at_index(index: usize) -> u64 {
    let half = INDEX_GROWTH;
    if index < half {
        return index as u64;
    }
    let b = (index / half - 1) as u32;
    (((index % half) + half) as u64) << b
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::Histogram;

    fn check(h: &Histogram<u64>, v: u64) {
        assert_eq!(lowest_equivalent(v), h.lowest_equivalent(v), "lowest of {v}");
        assert_eq!(equivalent_range(v), h.equivalent_range(v), "range of {v}");
        assert_eq!(highest_equivalent(v), h.highest_equivalent(v), "highest of {v}");
        assert_eq!(median_equivalent(v), h.median_equivalent(v), "median of {v}");
        // The counts array: the same cell as the crate's (its iteration in value order yields
        // this lowest value for it), and every value of a bucket in one cell.
        assert_eq!(lowest_at_index(index_of(v)), h.lowest_equivalent(v), "cell of {v}");
        assert_eq!(index_of(v), index_of(h.lowest_equivalent(v)), "cell of {v}");
        if v > 0 {
            assert!(index_of(v - 1) <= index_of(v), "cells in value order at {v}");
        }
    }

    #[test]
    fn answers_as_the_crate_does() {
        let h = Histogram::<u64>::new(super::super::histogram::SIGNIFICANT_DIGITS).unwrap();
        for v in 0..70_000 {
            check(&h, v);
        }
        for k in 0..64 {
            let p = 1u64 << k;
            for v in [p - 1, p, p + 1, p + 2, p.wrapping_mul(3) / 2, p | (p - 1)] {
                check(&h, v);
            }
        }
        for v in [u64::MAX, u64::MAX - 1, u64::MAX / 2] {
            check(&h, v);
        }
        // Every cell of the array up to the last holds the bucket its lowest value names.
        for i in 0..index_of(u64::MAX) + 1 {
            assert_eq!(index_of(lowest_at_index(i)), i, "cell {i}");
        }
        let mut x: u64 = 12345;
        for _ in 0..1_000_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Every magnitude, not just the top bits' (most random u64s are near 2^63).
            check(&h, x >> (x % 64));
        }
    }
}
