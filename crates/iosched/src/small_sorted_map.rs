//! An ordered map for the many short queues of a scheduler (a BFQ queue per process holds a
//! request or two): a sorted vector while it holds at most `SPILL` entries, a B-tree beyond.
//! A B-tree allocates a node (about a kilobyte for a request) when its first entry goes in and
//! frees it when the last comes out, once per request for a process that issues one at a
//! time; the vector keeps its capacity. The order and every answer are the B-tree's (a
//! property test compares them over random operations).

use smallvec::SmallVec;
use std::collections::BTreeMap;

/// Entries held in the vector; beyond, a B-tree (a shift of 32 entries costs less than a
/// B-tree insert).
const SPILL: usize = 32;

#[derive(Clone, Debug)]
pub struct SmallSortedMap<K, V> {
    /// The first entry inline (a process's one request: no pointer to another cache line).
    small: SmallVec<[(K, V); 1]>,
    /// Some from the insert that would make `SPILL + 1` entries until a removal leaves
    /// `SPILL / 2` (then `small` is empty).
    large: Option<BTreeMap<K, V>>,
}

impl<K, V> Default for SmallSortedMap<K, V> {
    fn default() -> Self {
        SmallSortedMap { small: SmallVec::new(), large: None }
    }
}

impl<K: Ord + Copy, V> SmallSortedMap<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.large.as_ref().map_or(self.small.len(), |m| m.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Inserts, returning the value `k` had (as `BTreeMap::insert`).
    pub fn insert(&mut self, k: K, v: V) -> Option<V> {
        if let Some(m) = self.large.as_mut() {
            return m.insert(k, v);
        }
        match self.small.binary_search_by(|e| e.0.cmp(&k)) {
            Ok(i) => Some(std::mem::replace(&mut self.small[i].1, v)),
            Err(i) => {
                if self.small.len() < SPILL {
                    self.small.insert(i, (k, v));
                } else {
                    let mut m: BTreeMap<K, V> = self.small.drain(..).collect();
                    m.insert(k, v);
                    self.large = Some(m);
                }
                None
            }
        }
    }

    pub fn remove(&mut self, k: &K) -> Option<V> {
        if let Some(m) = self.large.as_mut() {
            let out = m.remove(k);
            if m.len() <= SPILL / 2 {
                // Back to the vector, with room to grow again before spilling.
                self.small.extend(self.large.take().expect("large"));
            }
            return out;
        }
        let i = self.small.binary_search_by(|e| e.0.cmp(k)).ok()?;
        Some(self.small.remove(i).1)
    }

    pub fn get(&self, k: &K) -> Option<&V> {
        match &self.large {
            Some(m) => m.get(k),
            None => self.small.binary_search_by(|e| e.0.cmp(k)).ok().map(|i| &self.small[i].1),
        }
    }

    pub fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        match &mut self.large {
            Some(m) => m.get_mut(k),
            None => self.small.binary_search_by(|e| e.0.cmp(k)).ok().map(|i| &mut self.small[i].1),
        }
    }

    /// Every key, in order.
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        // While `large` holds the entries, `small` is empty.
        self.small.iter().map(|e| &e.0).chain(self.large.iter().flat_map(|m| m.keys()))
    }

    /// The smallest entry.
    pub fn first(&self) -> Option<(&K, &V)> {
        match &self.large {
            Some(m) => m.first_key_value(),
            None => self.small.first().map(|(k, v)| (k, v)),
        }
    }

    /// The greatest key below `k`.
    pub fn key_before(&self, k: &K) -> Option<K> {
        match &self.large {
            Some(m) => m.range(..*k).next_back().map(|(k, _)| *k),
            None => {
                let i = self.small.partition_point(|e| e.0 < *k);
                i.checked_sub(1).map(|j| self.small[j].0)
            }
        }
    }

    /// The smallest key above `k`.
    pub fn key_after(&self, k: &K) -> Option<K> {
        match &self.large {
            Some(m) => m.range((std::ops::Bound::Excluded(*k), std::ops::Bound::Unbounded)).next().map(|(k, _)| *k),
            None => {
                let i = self.small.partition_point(|e| e.0 <= *k);
                self.small.get(i).map(|e| e.0)
            }
        }
    }
}

impl<K: Ord + Copy, V> std::ops::Index<&K> for SmallSortedMap<K, V> {
    type Output = V;
    fn index(&self, k: &K) -> &V {
        self.get(k).expect("key in the map")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Every answer equals a B-tree's over random inserts and removals, across the spill
        /// in both directions.
        #[test]
        fn answers_as_a_btree_map(ops in proptest::collection::vec((0u8..6, 0u32..80, 0u32..1000), 1..600)) {
            let mut m: SmallSortedMap<u32, u32> = SmallSortedMap::new();
            let mut r: BTreeMap<u32, u32> = BTreeMap::new();
            for (op, k, v) in ops {
                match op {
                    0..=2 => proptest::prop_assert_eq!(m.insert(k, v), r.insert(k, v)),
                    3 | 4 => proptest::prop_assert_eq!(m.remove(&k), r.remove(&k)),
                    _ => {}
                }
                proptest::prop_assert_eq!(m.len(), r.len());
                proptest::prop_assert_eq!(m.get(&k), r.get(&k));
                proptest::prop_assert_eq!(m.first(), r.first_key_value());
                if let (Some(a), Some(b)) = (m.get_mut(&k), r.get_mut(&k)) {
                    *a += 1;
                    *b += 1;
                }
                proptest::prop_assert_eq!(m.key_before(&k), r.range(..k).next_back().map(|e| *e.0));
                proptest::prop_assert_eq!(m.key_after(&k), r.range(k + 1..).next().map(|e| *e.0));
                proptest::prop_assert!(m.keys().eq(r.keys()));
            }
        }
    }

    proptest::proptest! {
        /// Runs of inserts, then runs of removals, so that the map spills to the B-tree and
        /// comes back to the vector many times; every key queried after every operation.
        #[test]
        fn answers_as_a_btree_map_across_spills_both_ways(phases in proptest::collection::vec((proptest::bool::ANY, proptest::collection::vec(0u32..60, 1..60)), 1..12)) {
            let mut m: SmallSortedMap<u32, u32> = SmallSortedMap::new();
            let mut r: BTreeMap<u32, u32> = BTreeMap::new();
            for (inserting, keys) in phases {
                for k in keys {
                    if inserting {
                        proptest::prop_assert_eq!(m.insert(k, k * 3), r.insert(k, k * 3));
                    } else {
                        proptest::prop_assert_eq!(m.remove(&k), r.remove(&k));
                    }
                    proptest::prop_assert_eq!(m.len(), r.len());
                    proptest::prop_assert_eq!(m.first(), r.first_key_value());
                    for q in 0..61u32 {
                        proptest::prop_assert_eq!(m.get(&q), r.get(&q));
                        proptest::prop_assert_eq!(m.key_before(&q), r.range(..q).next_back().map(|e| *e.0));
                        proptest::prop_assert_eq!(m.key_after(&q), r.range(q + 1..).next().map(|e| *e.0));
                    }
                }
            }
        }
    }

    #[test]
    fn spills_past_the_limit_and_comes_back() {
        let mut m = SmallSortedMap::new();
        for k in 0..(SPILL as u32 + 1) {
            m.insert(k, k);
        }
        assert!(m.large.is_some() && m.small.is_empty());
        for k in 0..(SPILL as u32 / 2 + 1) {
            m.remove(&k);
        }
        assert!(m.large.is_none() && m.small.len() == SPILL / 2);
        assert_eq!(m.first(), Some((&(SPILL as u32 / 2 + 1), &(SPILL as u32 / 2 + 1))));
    }
}
