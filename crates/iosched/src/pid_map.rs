//! A map keyed by process id: a slot per pid (`DenseMap`) for the pids a simulation hands out
//! (from 1 up, dense), a hash map for the rest (a traced system's pids, up to pid_max). With a
//! thousand processes a hash probe into a cold table cost a cache miss or two more than an
//! index per look-up, several times per request (the block layer's wait queues and batchers).
//! Memory: one `Option<V>` per pid below the largest dense pid seen, so at most
//! `DENSE_PIDS` slots whatever the run's length. No iteration order is promised.

use crate::dense_map::DenseMap;
use crate::fast_hash::FastMap;

/// Pids below this have a slot; others go to the hash map.
pub const DENSE_PIDS: u32 = 1 << 16;

#[derive(Clone, Debug)]
pub struct PidMap<V> {
    dense: DenseMap<V>,
    sparse: FastMap<u32, V>,
}

impl<V> Default for PidMap<V> {
    fn default() -> Self {
        PidMap { dense: DenseMap::default(), sparse: FastMap::default() }
    }
}

impl<V> PidMap<V> {
    #[inline]
    pub fn get(&self, pid: u32) -> Option<&V> {
        if pid < DENSE_PIDS {
            self.dense.get(&(pid as usize))
        } else {
            self.sparse.get(&pid)
        }
    }

    #[inline]
    pub fn get_mut(&mut self, pid: u32) -> Option<&mut V> {
        if pid < DENSE_PIDS {
            self.dense.get_mut(&(pid as usize))
        } else {
            self.sparse.get_mut(&pid)
        }
    }

    #[inline]
    pub fn contains_key(&self, pid: u32) -> bool {
        self.get(pid).is_some()
    }

    /// Puts `value` at `pid`, returning what was there.
    pub fn insert(&mut self, pid: u32, value: V) -> Option<V> {
        if pid < DENSE_PIDS {
            self.dense.insert(pid as usize, value)
        } else {
            self.sparse.insert(pid, value)
        }
    }

    pub fn remove(&mut self, pid: u32) -> Option<V> {
        if pid < DENSE_PIDS {
            self.dense.remove(&(pid as usize))
        } else {
            self.sparse.remove(&pid)
        }
    }

    /// The value at `pid`, put there by `make` if there is none.
    pub fn get_or_insert_with(&mut self, pid: u32, make: impl FnOnce() -> V) -> &mut V {
        if pid < DENSE_PIDS {
            self.dense.get_or_insert_with(pid as usize, make)
        } else {
            self.sparse.entry(pid).or_insert_with(make)
        }
    }

    /// Every value, in no promised order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.dense.values().chain(self.sparse.values())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Random inserts, removals and look-ups on pids either side of `DENSE_PIDS` answer as a
    /// plain hash map does.
    #[test]
    fn answers_as_a_hash_map() {
        let (mut m, mut reference) = (PidMap::default(), HashMap::new());
        let mut x: u64 = 3;
        for step in 0..200_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let pid = match (x >> 60) % 3 {
                0 => (x >> 20) as u32 % 64,
                1 => DENSE_PIDS - 2 + (x >> 20) as u32 % 4,
                _ => (x >> 32) as u32,
            };
            match (x >> 8) % 4 {
                0 => assert_eq!(m.insert(pid, step), reference.insert(pid, step)),
                1 => assert_eq!(m.remove(pid), reference.remove(&pid)),
                2 => *m.get_or_insert_with(pid, || 0) += 1,
                _ => {}
            }
            if (x >> 8) % 4 == 2 {
                *reference.entry(pid).or_insert(0) += 1;
            }
            assert_eq!(m.get(pid), reference.get(&pid));
            assert_eq!(m.contains_key(pid), reference.contains_key(&pid));
        }
        let mut a: Vec<u64> = m.values().copied().collect();
        let mut b: Vec<u64> = reference.values().copied().collect();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }
}
