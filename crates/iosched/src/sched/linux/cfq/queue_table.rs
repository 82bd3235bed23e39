//! CFQ's queues by id (part of cfq/mod.rs): a slot per live queue, reused once its queue is
//! freed, so that a look-up is an index where a B-tree of a thousand queues took a search
//! through cold nodes, several times per request.
//!
//! An id is `creation number << SLOT_BITS | slot`: ids order as the queues were created (as the
//! plain counter they replace did: `cfqq_close` breaks a tie by the lower id), and an id of a
//! freed queue never matches its reused slot (a process's stale `sync_q`, a queue's stale merge
//! target, are found gone, as before). Memory is one slot per queue alive at the peak.

use super::queue::{Cfqq, Qid};
use std::ops::Index;

/// Slots addressable: 2^26 (67 million) queues alive at once.
const SLOT_BITS: u32 = 26;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
/// Queues creatable in one run: 2^38 (a queue is created by a request, and a run has at most
/// 10^9 of those per process list, so this is out of reach; checked all the same).
const MAX_CREATED: u64 = 1 << (64 - SLOT_BITS);

#[derive(Default)]
pub struct QueueTable {
    slots: Vec<Option<(Qid, Cfqq)>>,
    free: Vec<u32>,
    created: u64,
}

impl QueueTable {
    /// Stores a new queue and returns its id, greater than every id handed out before.
    pub fn create(&mut self, queue: Cfqq) -> Qid {
        assert!(self.created < MAX_CREATED, "cfq: more than 2^38 queues created in one run");
        let slot = match self.free.pop() {
            Some(s) => s as usize,
            None => {
                assert!((self.slots.len() as u64) <= SLOT_MASK, "cfq: more than 2^26 queues alive at once");
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        let id = (self.created << SLOT_BITS) | slot as u64;
        self.created += 1;
        self.slots[slot] = Some((id, queue));
        id
    }

    #[inline]
    pub fn get(&self, id: &Qid) -> Option<&Cfqq> {
        match self.slots.get((id & SLOT_MASK) as usize) {
            Some(Some((k, q))) if k == id => Some(q),
            _ => None,
        }
    }

    #[inline]
    pub fn get_mut(&mut self, id: &Qid) -> Option<&mut Cfqq> {
        match self.slots.get_mut((id & SLOT_MASK) as usize) {
            Some(Some((k, q))) if k == id => Some(q),
            _ => None,
        }
    }

    #[inline]
    pub fn contains_key(&self, id: &Qid) -> bool {
        self.get(id).is_some()
    }

    pub fn remove(&mut self, id: &Qid) -> Option<Cfqq> {
        self.get(id)?;
        let slot = (id & SLOT_MASK) as usize;
        let (_, q) = self.slots[slot].take().expect("a live slot");
        self.free.push(slot as u32);
        Some(q)
    }

    /// Queues alive.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

impl Index<&Qid> for QueueTable {
    type Output = Cfqq;

    #[inline]
    fn index(&self, id: &Qid) -> &Cfqq {
        self.get(id).expect("a live cfq queue")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn queue(pid: u32) -> Cfqq {
        Cfqq::new(pid, true, 0, 4)
    }

    /// Random creations and removals against a B-tree keyed by a plain counter: the same live
    /// queues, ids in creation order, a removed id never found again (its slot reused or not).
    #[test]
    fn answers_as_a_btree_of_counted_ids() {
        let (mut table, mut reference) = (QueueTable::default(), BTreeMap::new());
        let mut ids: Vec<(u64, Qid)> = Vec::new(); // (counter, table id), every id ever handed out
        let mut x: u64 = 11;
        for n in 0..40_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if !(x >> 40).is_multiple_of(3) || ids.is_empty() {
                let id = table.create(queue(n as u32));
                if let Some(&(_, last)) = ids.last() {
                    assert!(id > last, "ids grow with creation");
                }
                reference.insert(n, n as u32);
                ids.push((n, id));
            } else {
                let (counter, id) = ids[(x >> 20) as usize % ids.len()];
                assert_eq!(table.remove(&id).map(|q| q.pid), reference.remove(&counter));
            }
            let (counter, id) = ids[(x >> 8) as usize % ids.len()];
            assert_eq!(table.get(&id).map(|q| q.pid), reference.get(&counter).copied());
            assert_eq!(table.contains_key(&id), reference.contains_key(&counter));
            assert_eq!(table.len(), reference.len());
        }
        assert!(table.slots.len() < 20_000, "slots are reused: {}", table.slots.len());
    }

    #[test]
    fn a_freed_queues_id_does_not_find_the_queue_in_its_slot() {
        let mut table = QueueTable::default();
        let a = table.create(queue(1));
        assert_eq!(table.remove(&a).map(|q| q.pid), Some(1));
        let b = table.create(queue(2));
        assert_eq!(a & SLOT_MASK, b & SLOT_MASK, "the slot is reused");
        assert!(table.get(&a).is_none() && !table.contains_key(&a) && table.remove(&a).is_none());
        assert_eq!(table[&b].pid, 2);
        assert!(b > a);
    }
}
