//! A set of (key, entity) pairs ordered by key, then entity: what B-WF2Q+'s service trees need
//! (insert, remove any member, the first). A binary min-heap whose removals are
//! lazy: each member carries a stamp, the entity's current one while it is in the set; a removal
//! only changes the entity's stamp, and entries whose stamp is no longer their entity's are
//! dropped when they reach the top (or when they outnumber the members). The first member is the
//! one a B-tree set of the same pairs would give; a heap of flat entries does not allocate per
//! insertion or rebalance nodes (the B-tree set cost about 700 instructions per operation with
//! a thousand queues).
//!
//! Entries are 16 bytes while every key fits 64 bits (a virtual time reaches 2^64 only after
//! some 2^42 sectors of service at weight 1), so a pop's walk down the heap touches half the
//! cache lines it would with the full width; the first key at or above 2^64 turns the set to
//! 128-bit keys for good. Entities and stamps are 32 bits (wf2q.rs renumbers the stamps before
//! they would wrap).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::wf2q::Eid;

/// Stamp of an entity in no set.
pub const NO_STAMP: u32 = 0;

#[derive(Clone, Debug)]
enum Heap {
    /// Every key below 2^64.
    Narrow(BinaryHeap<Reverse<(u64, u32, u32)>>),
    /// A key reached 2^64.
    Wide(BinaryHeap<Reverse<(u128, u32, u32)>>),
}

impl Default for Heap {
    fn default() -> Self {
        Heap::Narrow(BinaryHeap::new())
    }
}

#[derive(Clone, Debug, Default)]
pub struct EntitySet {
    heap: Heap,
    live: usize,
}

/// An entity's index in 32 bits (a simulation holds far fewer queues and groups).
fn narrow_eid(e: Eid) -> u32 {
    u32::try_from(e).expect("fewer than 2^32 BFQ entities")
}

impl EntitySet {
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Entries held, members and stale ones.
    fn held(&self) -> usize {
        match &self.heap {
            Heap::Narrow(h) => h.len(),
            Heap::Wide(h) => h.len(),
        }
    }

    /// Adds `e` with `key`; `stamp` (unique among the stamps entities hold, never `NO_STAMP`)
    /// becomes the entity's stamp.
    pub fn insert(&mut self, key: u128, e: Eid, stamp: u32) {
        debug_assert_ne!(stamp, NO_STAMP);
        let e = narrow_eid(e);
        if let Heap::Narrow(h) = &mut self.heap {
            match u64::try_from(key) {
                Ok(k) => h.push(Reverse((k, e, stamp))),
                Err(_) => {
                    let wide = std::mem::take(h).into_vec().into_iter().map(|Reverse((k, m, s))| Reverse((k as u128, m, s))).collect();
                    self.heap = Heap::Wide(wide);
                }
            }
        }
        if let Heap::Wide(h) = &mut self.heap {
            h.push(Reverse((key, e, stamp)));
        }
        self.live += 1;
    }

    /// The first member (the top is always a member: see `removed`).
    pub fn first(&self) -> Option<(u128, Eid)> {
        match &self.heap {
            Heap::Narrow(h) => h.peek().map(|Reverse((k, e, _))| (*k as u128, *e as Eid)),
            Heap::Wide(h) => h.peek().map(|Reverse((k, e, _))| (*k, *e as Eid)),
        }
    }

    /// A member left (its entity's stamp has already changed): stale entries at the top go.
    pub fn removed(&mut self, is_member: impl Fn(Eid, u32) -> bool) {
        debug_assert!(self.live > 0);
        self.live -= 1;
        match &mut self.heap {
            Heap::Narrow(h) => clean(h, self.live, is_member),
            Heap::Wide(h) => clean(h, self.live, is_member),
        }
    }

    /// Keeps only the members, each with the stamp `restamp` gives it (in an unspecified
    /// order): for renumbering every stamp when the counter would wrap.
    pub fn restamp(&mut self, is_member: impl Fn(Eid, u32) -> bool, mut restamp: impl FnMut(Eid) -> u32) {
        fn keep<K: Ord>(
            h: &mut BinaryHeap<Reverse<(K, u32, u32)>>,
            is_member: impl Fn(Eid, u32) -> bool,
            restamp: &mut impl FnMut(Eid) -> u32,
        ) {
            let kept: Vec<_> = std::mem::take(h)
                .into_vec()
                .into_iter()
                .filter(|Reverse((_, e, s))| is_member(*e as Eid, *s))
                .map(|Reverse((k, e, _))| Reverse((k, e, restamp(e as Eid))))
                .collect();
            *h = BinaryHeap::from(kept);
        }
        match &mut self.heap {
            Heap::Narrow(h) => keep(h, is_member, &mut restamp),
            Heap::Wide(h) => keep(h, is_member, &mut restamp),
        }
        debug_assert_eq!(self.held(), self.live);
    }
}

/// Drops stale entries from the top; should they pile up deeper (they surface as virtual time
/// grows), keeps only the members.
fn clean<K: Ord>(h: &mut BinaryHeap<Reverse<(K, u32, u32)>>, live: usize, is_member: impl Fn(Eid, u32) -> bool) {
    while let Some(Reverse((_, e, s))) = h.peek() {
        if is_member(*e as Eid, *s) {
            break;
        }
        h.pop();
    }
    if h.len() > 2 * live + 64 {
        let kept: Vec<_> = std::mem::take(h).into_vec().into_iter().filter(|Reverse((_, e, s))| is_member(*e as Eid, *s)).collect();
        *h = BinaryHeap::from(kept);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Random inserts and removals (of the first and of any member) against a B-tree set: the
    /// same first member after every operation, and the same sizes. With `wide_after`, keys
    /// from 2^64 on are inserted from that step, so the set turns wide mid-way.
    fn answers_as_a_b_tree_set(wide_after: Option<usize>) {
        let (mut set, mut reference) = (EntitySet::default(), BTreeSet::new());
        let mut stamps = vec![NO_STAMP; 64];
        let mut next = 0u32;
        let mut x: u64 = 99;
        let mut inserted_wide = false;
        for step in 0..100_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let e = (x >> 33) as usize % 64;
            let mut key = ((x >> 40) % 50) as u128; // ties on the key, ordered by entity
            if wide_after.is_some_and(|w| step >= w) && (x >> 10).is_multiple_of(2) {
                key += 1 << 64;
            }
            match (x >> 20) % 3 {
                0 if stamps[e] == NO_STAMP => {
                    next += 1;
                    stamps[e] = next;
                    set.insert(key, e, next);
                    reference.insert((key, e));
                    inserted_wide |= key >= 1 << 64;
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
            assert!(set.held() <= 2 * set.len() + 65);
            assert_eq!(matches!(set.heap, Heap::Wide(_)), inserted_wide, "wide from the first wide key on");
        }
        assert_eq!(inserted_wide, wide_after.is_some());
    }

    #[test]
    fn answers_as_a_b_tree_set_with_keys_below_2_64() {
        answers_as_a_b_tree_set(None);
    }

    #[test]
    fn answers_as_a_b_tree_set_across_the_turn_to_wide_keys() {
        answers_as_a_b_tree_set(Some(50_000));
    }

    /// Renumbering keeps the members, their order and nothing stale.
    #[test]
    fn restamping_keeps_the_members_in_order() {
        let mut set = EntitySet::default();
        let mut stamps = [NO_STAMP; 8];
        for (i, key) in [(0, 30u128), (1, 10), (2, 20), (3, 10), (4, 40)] {
            stamps[i] = i as u32 + 1;
            set.insert(key, i, stamps[i]);
        }
        // Entity 3 (not first) leaves: a stale entry stays behind.
        stamps[3] = NO_STAMP;
        set.removed(|m, s| stamps[m] == s);
        assert_eq!(set.held(), 5);
        let mut next = 100;
        let mut given = Vec::new();
        set.restamp(
            |m, s| stamps[m] == s,
            |m| {
                next += 1;
                given.push((m, next));
                next
            },
        );
        for &(m, s) in &given {
            stamps[m] = s;
        }
        assert_eq!((set.len(), set.held(), given.len()), (4, 4, 4));
        let mut order = Vec::new();
        while let Some((k, m)) = set.first() {
            order.push((k, m));
            stamps[m] = NO_STAMP;
            set.removed(|m, s| stamps[m] == s);
        }
        assert_eq!(order, vec![(10, 1), (20, 2), (30, 0), (40, 4)]);
    }
}
