//! A set of (key, entity) pairs ordered by key, then entity: what B-WF2Q+'s service trees need
//! (insert, remove any member, the first). A binary min-heap whose removals are
//! lazy: each member carries a stamp, the entity's current one while it is in the set; a removal
//! only changes the entity's stamp, and entries whose stamp is no longer their entity's are
//! dropped when they reach the top (or when they outnumber the members). The first member is the
//! one a B-tree set of the same pairs would give; a heap of flat entries does not allocate per
//! insertion or rebalance nodes (the B-tree set cost about 700 instructions per operation with
//! a thousand queues).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::wf2q::Eid;

/// Stamp of an entity in no set.
pub const NO_STAMP: u64 = 0;

#[derive(Clone, Debug, Default)]
pub struct EntitySet {
    heap: BinaryHeap<Reverse<(u128, Eid, u64)>>,
    live: usize,
}

impl EntitySet {
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Adds `e` with `key`; `stamp` (unique, never `NO_STAMP`) becomes the entity's stamp.
    pub fn insert(&mut self, key: u128, e: Eid, stamp: u64) {
        debug_assert_ne!(stamp, NO_STAMP);
        self.heap.push(Reverse((key, e, stamp)));
        self.live += 1;
    }

    /// The first member (the top is always a member: see `removed`).
    pub fn first(&self) -> Option<(u128, Eid)> {
        self.heap.peek().map(|Reverse((k, e, _))| (*k, *e))
    }

    /// A member left (its entity's stamp has already changed): stale entries at the top go.
    pub fn removed(&mut self, is_member: impl Fn(Eid, u64) -> bool) {
        debug_assert!(self.live > 0);
        self.live -= 1;
        self.clean(is_member);
    }

    fn clean(&mut self, is_member: impl Fn(Eid, u64) -> bool) {
        while let Some(Reverse((_, e, s))) = self.heap.peek() {
            if is_member(*e, *s) {
                break;
            }
            self.heap.pop();
        }
        // Stale entries deep in the heap surface as virtual time grows; should they pile up,
        // keep only the members.
        if self.heap.len() > 2 * self.live + 64 {
            let kept: Vec<_> =
                std::mem::take(&mut self.heap).into_vec().into_iter().filter(|Reverse((_, e, s))| is_member(*e, *s)).collect();
            self.heap = BinaryHeap::from(kept);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Random inserts and removals (of the first and of any member) against a B-tree set: the
    /// same first member after every operation, and the same sizes.
    #[test]
    fn answers_as_a_b_tree_set() {
        let (mut set, mut reference) = (EntitySet::default(), BTreeSet::new());
        let mut stamps = vec![NO_STAMP; 64];
        let mut next = 0u64;
        let mut x: u64 = 99;
        for _ in 0..100_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let e = (x >> 33) as usize % 64;
            let key = ((x >> 40) % 50) as u128; // ties on the key, ordered by entity
            match (x >> 20) % 3 {
                0 if stamps[e] == NO_STAMP => {
                    next += 1;
                    stamps[e] = next;
                    set.insert(key, e, next);
                    reference.insert((key, e));
                }
                1 if stamps[e] != NO_STAMP => {
                    let k = reference.iter().find(|&&(_, m)| m == e).copied().unwrap();
                    reference.remove(&k);
                    stamps[e] = NO_STAMP;
                    set.removed(|m, s| stamps[m] == s);
                }
                _ => {
                    // The first member leaves (as the selected entity does).
                    if let Some((k, m)) = set.first() {
                        assert_eq!(reference.pop_first(), Some((k, m)));
                        stamps[m] = NO_STAMP;
                        set.removed(|m, s| stamps[m] == s);
                    } else {
                        assert!(reference.is_empty());
                    }
                }
            }
            assert_eq!(set.first(), reference.first().copied());
            assert_eq!(set.len(), reference.len());
            assert!(set.heap.len() <= 2 * set.len() + 65);
        }
    }
}
