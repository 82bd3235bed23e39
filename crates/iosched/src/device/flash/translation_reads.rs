//! The translation pages being read for the mapping cache's misses: for each page, when its
//! latest read was issued and when it ends, so that later misses on the page share a read under
//! way. A read is forgotten once the clock passes its end (`drop_done`, at each command).
//!
//! The ends are also kept in a min-heap, so that forgetting costs the reads that ended and not a
//! pass over every read still under way: in a write-heavy run a program's look-ups place their
//! reads behind the programs queued on their dies, far ahead of the clock, and a pass over them
//! at every command was half of the run's time (MQSim's writes at QD 16: 1,294 ns per request).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::fast_hash::FastMap;
use crate::time::Nanos;

#[derive(Clone, Debug, Default)]
pub struct TranslationReads {
    /// Page -> (issued, end) of its latest read.
    by_page: FastMap<u64, (Nanos, Nanos)>,
    /// (end, page) of every read recorded; an entry whose page has since a read of another end
    /// is stale and only leaves.
    ends: BinaryHeap<Reverse<(Nanos, u64)>>,
}

impl TranslationReads {
    pub fn get(&self, page: u64) -> Option<(Nanos, Nanos)> {
        self.by_page.get(&page).copied()
    }

    /// Records `page`'s read issued at `issued`, ending at `end` (replacing any earlier one).
    pub fn insert(&mut self, page: u64, issued: Nanos, end: Nanos) {
        self.by_page.insert(page, (issued, end));
        self.ends.push(Reverse((end, page)));
    }

    /// Forgets every read that ends by `now`: exactly those a `retain(end > now)` would drop.
    pub fn drop_done(&mut self, now: Nanos) {
        while let Some(&Reverse((end, page))) = self.ends.peek() {
            if end > now {
                break;
            }
            self.ends.pop();
            if self.by_page.get(&page).is_some_and(|&(_, e)| e <= now) {
                self.by_page.remove(&page);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.by_page.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_page.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Random reads recorded (pages reread, ends before and after earlier ones) and dropped at
    /// a clock that advances: the same reads known as a map pruned by `retain(end > now)`.
    #[test]
    fn forgets_exactly_what_a_retain_would() {
        for seed in [1u64, 7, 42] {
            let (mut reads, mut reference) = (TranslationReads::default(), HashMap::new());
            let mut x = seed;
            let mut now: Nanos = 0;
            for _ in 0..50_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let r = x >> 24;
                match r % 4 {
                    0 => {
                        now += r % 300;
                        reads.drop_done(now);
                        reference.retain(|_, &mut (_, end): &mut (Nanos, Nanos)| end > now);
                    }
                    _ => {
                        let page = (r >> 8) % 64;
                        let end = now + (r >> 16) % 5_000;
                        reads.insert(page, now, end);
                        reference.insert(page, (now, end));
                    }
                }
                assert_eq!(reads.len(), reference.len());
                for page in 0..64 {
                    assert_eq!(reads.get(page), reference.get(&page).copied());
                }
            }
        }
    }
}
