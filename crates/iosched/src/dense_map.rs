//! A map keyed by a dense index (an id handed out from 0 and reused once freed, as BFQ's and
//! CFQ's entity and queue ids are): one slot per id in a vector, so a lookup is an index, not a
//! hash and a probe. Memory is one `Option<V>` per id ever handed out at once, which for such
//! ids is the number alive at the peak. `values` iterates in id order; BFQ's callers use it
//! only as a lookup table.

use std::ops::Index;

#[derive(Clone, Debug)]
pub struct DenseMap<V> {
    slots: Vec<Option<V>>,
    len: usize,
}

impl<V> Default for DenseMap<V> {
    fn default() -> Self {
        DenseMap { slots: Vec::new(), len: 0 }
    }
}

impl<V> DenseMap<V> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn get(&self, id: &usize) -> Option<&V> {
        self.slots.get(*id).and_then(Option::as_ref)
    }

    #[inline]
    pub fn get_mut(&mut self, id: &usize) -> Option<&mut V> {
        self.slots.get_mut(*id).and_then(Option::as_mut)
    }

    #[inline]
    pub fn contains_key(&self, id: &usize) -> bool {
        self.get(id).is_some()
    }

    /// Puts `value` at `id`, returning what was there.
    pub fn insert(&mut self, id: usize, value: V) -> Option<V> {
        if id >= self.slots.len() {
            self.slots.resize_with(id + 1, || None);
        }
        let old = self.slots[id].replace(value);
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    pub fn remove(&mut self, id: &usize) -> Option<V> {
        let old = self.slots.get_mut(*id).and_then(Option::take);
        if old.is_some() {
            self.len -= 1;
        }
        old
    }

    /// Every value, in id order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.slots.iter().flatten()
    }

    /// The value at `id`, put there by `make` if there is none.
    pub fn get_or_insert_with(&mut self, id: usize, make: impl FnOnce() -> V) -> &mut V {
        if id >= self.slots.len() {
            self.slots.resize_with(id + 1, || None);
        }
        let slot = &mut self.slots[id];
        if slot.is_none() {
            self.len += 1;
        }
        slot.get_or_insert_with(make)
    }
}

impl<V> Index<&usize> for DenseMap<V> {
    type Output = V;

    #[inline]
    fn index(&self, id: &usize) -> &V {
        self.get(id).expect("no entry for this id")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Random inserts, removals and lookups against a `HashMap`: the same answers and lengths.
    #[test]
    fn answers_as_a_hash_map() {
        let (mut dense, mut reference) = (DenseMap::default(), HashMap::new());
        let mut x: u64 = 7;
        for step in 0..50_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let id = (x >> 33) as usize % 200;
            match (x >> 20) % 4 {
                0 => assert_eq!(dense.insert(id, step), reference.insert(id, step)),
                1 => assert_eq!(dense.remove(&id), reference.remove(&id)),
                2 => {
                    if let (Some(d), Some(r)) = (dense.get_mut(&id), reference.get_mut(&id)) {
                        *d += 1;
                        *r += 1;
                    }
                }
                _ => {
                    let d = *dense.get_or_insert_with(id, || step);
                    assert_eq!(d, *reference.entry(id).or_insert(step));
                }
            }
            assert_eq!(dense.get(&id), reference.get(&id));
            assert_eq!(dense.contains_key(&id), reference.contains_key(&id));
            assert_eq!(dense.len(), reference.len());
        }
        assert_eq!(dense.remove(&100_000), None, "an id never seen is absent");
    }
}
