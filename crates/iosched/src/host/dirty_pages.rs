//! One inode's dirty pages, as an ordered set of page indices: words of 64 pages (bit i of word
//! w is page 64w + i) in a B-tree by word. Writeback takes them in index order from an offset;
//! a write dirties pages one by one, nearly always at or next to the last dirtied, so a page is
//! usually set in the tree's last word without a search (a B-tree set of the indices searched
//! its tree at every page: a fifth of Seelam's Table 1 run). A set of indices, exactly: which
//! pages are dirty, and the order writeback finds them in, are those of any ordered set.

use std::collections::BTreeMap;

const WORD_SHIFT: u32 = 6;
const WORD_MASK: u64 = (1 << WORD_SHIFT) - 1;

#[derive(Clone, Debug, Default)]
pub struct DirtyPages {
    /// Word index -> its 64 pages' bits (never 0: an emptied word leaves).
    words: BTreeMap<u64, u64>,
    len: u64,
}

impl DirtyPages {
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds page `index`; false if it was there.
    pub fn insert(&mut self, index: u64) -> bool {
        let (w, bit) = (index >> WORD_SHIFT, 1u64 << (index & WORD_MASK));
        // The common case, a file written forward: the last word (its path is hot, no key compared).
        let bits = match self.words.last_entry() {
            Some(e) if *e.key() == w => e.into_mut(),
            _ => self.words.entry(w).or_insert(0),
        };
        let added = *bits & bit == 0;
        *bits |= bit;
        self.len += added as u64;
        added
    }

    /// Removes page `index`; false if it was not there.
    pub fn remove(&mut self, index: u64) -> bool {
        let (w, bit) = (index >> WORD_SHIFT, 1u64 << (index & WORD_MASK));
        let Some(bits) = self.words.get_mut(&w) else { return false };
        if *bits & bit == 0 {
            return false;
        }
        *bits &= !bit;
        if *bits == 0 {
            self.words.remove(&w);
        }
        self.len -= 1;
        true
    }

    /// Removes `indices` (ascending, each in the set): one look-up per word they touch.
    pub fn remove_ascending(&mut self, indices: &[u64]) {
        let mut i = 0;
        while i < indices.len() {
            let w = indices[i] >> WORD_SHIFT;
            let mut clear = 0u64;
            while i < indices.len() && indices[i] >> WORD_SHIFT == w {
                clear |= 1u64 << (indices[i] & WORD_MASK);
                i += 1;
            }
            let bits = self.words.get_mut(&w).expect("removed pages are in the set");
            debug_assert_eq!(*bits & clear, clear, "removed pages are in the set");
            *bits &= !clear;
            self.len -= clear.count_ones() as u64;
            if *bits == 0 {
                self.words.remove(&w);
            }
        }
    }

    /// The pages in `from..end`, ascending.
    pub fn range(&self, from: u64, end: u64) -> impl Iterator<Item = u64> + '_ {
        let words = if from < end { Some(self.words.range(from >> WORD_SHIFT..=(end - 1) >> WORD_SHIFT)) } else { None };
        words.into_iter().flatten().flat_map(move |(&w, &bits)| {
            let base = w << WORD_SHIFT;
            let mut bits = bits;
            // Keep the bits of pages in from..end (a word may straddle either bound).
            if base < from {
                bits &= !0u64 << (from - base);
            }
            if end - base < 64 {
                bits &= (1u64 << (end - base)) - 1;
            }
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let i = bits.trailing_zeros() as u64;
                    bits &= bits - 1;
                    base + i
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Random inserts (mostly forward runs, some anywhere, some near u64::MAX), removals (one by
    /// one and ascending batches) and ranges against a B-tree set: the same answers throughout.
    #[test]
    fn answers_as_a_b_tree_set() {
        for seed in [3u64, 11, 2026] {
            let (mut set, mut reference) = (DirtyPages::default(), BTreeSet::new());
            let mut x = seed;
            let mut next = 0u64;
            for _ in 0..40_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let r = x >> 20;
                match r % 8 {
                    0..=3 => {
                        let index = match r % 29 {
                            0 => u64::MAX - (r >> 8) % 200,
                            1..=4 => (r >> 8) % 5_000,
                            _ => {
                                next += 1 + (r >> 8) % 2;
                                next
                            }
                        };
                        assert_eq!(set.insert(index), reference.insert(index));
                    }
                    4 => {
                        let index = (r >> 8) % (next + 2);
                        assert_eq!(set.remove(index), reference.remove(&index));
                    }
                    5 => {
                        let from = (r >> 8) % (next + 2);
                        let batch: Vec<u64> = reference.range(from..).take(((r >> 40) % 300) as usize).copied().collect();
                        set.remove_ascending(&batch);
                        for i in &batch {
                            reference.remove(i);
                        }
                    }
                    _ => {
                        let from = if r % 5 == 0 { u64::MAX - 300 } else { (r >> 8) % (next + 2) };
                        let end = if r % 3 == 0 { u64::MAX } else { from.saturating_add((r >> 30) % 700) };
                        let got: Vec<u64> = set.range(from, end).collect();
                        let want: Vec<u64> = if from < end { reference.range(from..end).copied().collect() } else { Vec::new() };
                        assert_eq!(got, want, "range {from}..{end}");
                    }
                }
                assert_eq!(set.len(), reference.len() as u64);
                assert_eq!(set.is_empty(), reference.is_empty());
            }
            let all: Vec<u64> = set.range(0, u64::MAX).collect();
            let want: Vec<u64> = reference.range(..u64::MAX).copied().collect();
            assert_eq!(all, want);
        }
    }
}
