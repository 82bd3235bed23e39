//! Sorting a distribution's recent bucket indices (16 bits each) when its percentiles are read:
//! two counting passes (least significant byte first, each stable), where a comparison sort of
//! a thousand processes' two hundred indices each was a third of a run's end.

/// Below this many indices a comparison sort is cheaper than clearing two 256-entry tables.
const COUNTING_MIN_LEN: usize = 64;

/// Sorts `indices` ascending.
pub fn sort_indices(indices: &mut [u16]) {
    if indices.len() < COUNTING_MIN_LEN {
        indices.sort_unstable();
        return;
    }
    let mut low = [0usize; 256];
    let mut high = [0usize; 256];
    for &i in indices.iter() {
        low[(i & 0xff) as usize] += 1;
        high[(i >> 8) as usize] += 1;
    }
    let mut scratch = vec![0u16; indices.len()];
    // A pass whose byte is the same in every index would leave the order as it is: skip it.
    let n = indices.len();
    let sort_low = low.iter().all(|&c| c != n);
    let sort_high = high.iter().all(|&c| c != n);
    match (sort_low, sort_high) {
        (false, false) => {}
        (true, false) => {
            scatter(indices, &mut scratch, &mut low, |i| i & 0xff);
            indices.copy_from_slice(&scratch);
        }
        (false, true) => {
            scatter(indices, &mut scratch, &mut high, |i| i >> 8);
            indices.copy_from_slice(&scratch);
        }
        (true, true) => {
            scatter(indices, &mut scratch, &mut low, |i| i & 0xff);
            scatter(&scratch, indices, &mut high, |i| i >> 8);
        }
    }
}

/// One stable counting pass: `from` into `to` by `digit`, `counts` the digits' counts.
fn scatter(from: &[u16], to: &mut [u16], counts: &mut [usize; 256], digit: impl Fn(u16) -> u16) {
    let mut next = 0;
    for c in counts.iter_mut() {
        (*c, next) = (next, next + *c);
    }
    for &i in from {
        let d = digit(i) as usize;
        to[counts[d]] = i;
        counts[d] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The same order as a comparison sort: every length around the threshold, narrow and wide
    /// ranges (one byte the same throughout, or neither), duplicates.
    #[test]
    fn sorts_as_a_comparison_sort() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        for len in (0..300).chain([1_000, 5_000]) {
            for (lo, hi) in [(0u16, u16::MAX), (20_000, 20_200), (0x1200, 0x12ff), (0x0105, 0x7f05), (7, 7)] {
                let mut v: Vec<u16> = (0..len).map(|_| rng.gen_range(lo..=hi)).collect();
                if hi == 0x7f05 {
                    // Every index with the same low byte.
                    v.iter_mut().for_each(|i| *i = (*i & 0xff00) | 0x05);
                }
                let mut expected = v.clone();
                expected.sort_unstable();
                sort_indices(&mut v);
                assert_eq!(v, expected, "len {len}, range {lo}..={hi}");
            }
        }
    }
}
