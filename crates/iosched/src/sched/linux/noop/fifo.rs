//! noop's FIFO: queued requests in ascending id order (ids are given in arrival order), as a
//! B-tree map by id would keep them, in a ring buffer. A request arriving with the highest id
//! (every one the block layer numbers) goes on the back; one merged away leaves a hole, found by
//! binary search (the ids stay sorted) and dropped when it reaches the front. The B-tree cost
//! about 300 instructions to insert and as many to take the first, per request.

use crate::request::{Request, RequestId};
use std::collections::VecDeque;

#[derive(Default, Debug)]
pub struct IdFifo {
    /// Ascending ids; `None`: a request removed from the middle (a hole).
    slots: VecDeque<(RequestId, Option<Request>)>,
    live: usize,
}

impl IdFifo {
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    fn find(&self, id: RequestId) -> Result<usize, usize> {
        self.slots.binary_search_by_key(&id, |s| s.0)
    }

    /// Queues `req` in id order (replacing a queued request with its id, as a map would).
    pub fn insert(&mut self, req: Request) {
        if self.slots.back().is_none_or(|b| b.0 < req.id) {
            self.slots.push_back((req.id, Some(req)));
            self.live += 1;
            return;
        }
        match self.find(req.id) {
            Ok(i) => {
                if self.slots[i].1.replace(req).is_none() {
                    self.live += 1;
                }
            }
            Err(i) => {
                self.slots.insert(i, (req.id, Some(req)));
                self.live += 1;
            }
        }
    }

    /// The queued request with the lowest id, taken out.
    pub fn pop_first(&mut self) -> Option<Request> {
        while let Some((_, slot)) = self.slots.pop_front() {
            if let Some(req) = slot {
                self.live -= 1;
                return Some(req);
            }
        }
        None
    }

    pub fn remove(&mut self, id: RequestId) -> Option<Request> {
        let i = self.find(id).ok()?;
        let req = self.slots[i].1.take()?;
        self.live -= 1;
        while self.slots.front().is_some_and(|s| s.1.is_none()) {
            self.slots.pop_front();
        }
        while self.slots.back().is_some_and(|s| s.1.is_none()) {
            self.slots.pop_back();
        }
        // Holes kept behind a front that stays put: drop them once they outnumber the requests.
        if self.slots.len() > 2 * self.live + 64 {
            self.slots.retain(|s| s.1.is_some());
        }
        Some(req)
    }

    pub fn get_mut(&mut self, id: RequestId) -> Option<&mut Request> {
        let i = self.find(id).ok()?;
        self.slots[i].1.as_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::read;
    use std::collections::BTreeMap;

    fn req(id: RequestId, sector: u64) -> Request {
        read(id, 1, sector)
    }

    /// Random inserts (mostly at the back, some below it, some of a queued id), removals from
    /// anywhere, takes of the first and updates, against a B-tree map by id: the same answers,
    /// the same order, and holes that never pile up.
    #[test]
    fn answers_as_a_btree_map_by_id() {
        let (mut fifo, mut reference) = (IdFifo::default(), BTreeMap::new());
        let (mut next, mut x) = (1000u64, 17u64);
        for step in 0..50_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            match (x >> 33) % 10 {
                0..=3 => {
                    next += 1 + (x >> 50) % 3;
                    let r = req(next, step);
                    fifo.insert(r);
                    reference.insert(r.id, r);
                }
                4 => {
                    // An id below the back's (or a queued one's: replaced).
                    let id = next.saturating_sub((x >> 40) % 40);
                    let r = req(id, step);
                    fifo.insert(r);
                    reference.insert(id, r);
                }
                5 | 6 => assert_eq!(fifo.pop_first(), reference.pop_first().map(|e| e.1)),
                7 | 8 => {
                    let id = next.saturating_sub((x >> 40) % 60);
                    assert_eq!(fifo.remove(id), reference.remove(&id));
                }
                _ => {
                    let id = next.saturating_sub((x >> 40) % 60);
                    if let (Some(a), Some(b)) = (fifo.get_mut(id), reference.get_mut(&id)) {
                        a.size_sectors += 8;
                        b.size_sectors += 8;
                    } else {
                        assert!(fifo.get_mut(id).is_none() && !reference.contains_key(&id));
                    }
                }
            }
            assert_eq!(fifo.len(), reference.len());
            assert!(fifo.slots.len() <= 2 * fifo.live + 64);
        }
        let mut drained = Vec::new();
        while let Some(r) = fifo.pop_first() {
            drained.push(r);
        }
        assert_eq!(drained, reference.into_values().collect::<Vec<_>>());
    }
}
