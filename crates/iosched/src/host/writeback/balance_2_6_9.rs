//! `dirty_throttle = "2.6.9"`: Linux 2.6.9's `balance_dirty_pages_ratelimited` and
//! `balance_dirty_pages` (mm/page-writeback.c of 2.6.9). See docs/host-writeback.md.
//!
//! Against 2.6.32's (`Throttle::Legacy26`, the parent module):
//! - the check comes every `ratelimit_pages` + 1 pages (`ratelimits++ >= ratelimit`: the
//!   counter is compared before it counts the page; 8 + 1 once `dirty_exceeded`);
//! - `write_chunk` is fixed, `sync_writeback_pages()` = 1.5 x `ratelimit_pages` (2.6.32 scales
//!   it with the pages dirtied since the last check);
//! - the loop runs while dirty + writeback exceeds the limit, with no "below the midpoint of
//!   the background threshold and the limit" exit;
//! - the writer writes back (`writeback_inodes`, up to `write_chunk` pages) whenever there are
//!   dirty pages at all (2.6.32: only when its device's dirty pages exceed the limit);
//! - it stops after writing its whole chunk (no sleep), else sleeps a flat
//!   `blk_congestion_wait(WRITE, HZ/10)` = 100 ms each round (2.6.32: 1 jiffy doubling to 100).
//!   `blk_congestion_wait` also returns when a queue leaves congestion; the model sleeps the
//!   whole 100 ms (no request-queue congestion signal reaches the host);
//! - `dirty_exceeded` is cleared when dirty + writeback is at or below the limit.
//!
//! `get_dirty_limits` of 2.6.9 also caps the ratio at half the unmapped memory (the host maps
//! nothing: a cap at 50%, not applied) and raises it to at least 5%; its `PF_LESS_THROTTLE` and
//! real-time boosts are not modelled, as for 2.6.32.

use super::{Balance, LoopState, Writeback, EXCEEDED_RATELIMIT_PAGES, JIFFY_NS};
use crate::host::page_cache::PageCache;

/// `blk_congestion_wait(WRITE, HZ/10)` in 2.6.9's loop.
pub(super) const CONGESTION_WAIT_NS: u64 = 100 * JIFFY_NS;

impl Writeback {
    pub(super) fn balance_2_6_9(&mut self, cache: &mut PageCache, pid: u32, pages_dirtied: u64) -> Balance {
        // set_ratelimit(): total pages / (CPUs x 32), 16..=4 MiB; one CPU, as for 2.6.32.
        let ratelimit_pages = self.ratelimit_pages(cache);
        let task = self.tasks.entry(pid).or_default();
        task.nr_dirtied += pages_dirtied;
        let (write_chunk, mut pages_written) = match task.in_loop.take() {
            Some(LoopState::Legacy { write_chunk, pages_written, .. }) => (write_chunk, pages_written),
            Some(_) => return Balance::Continue,
            None => {
                let ratelimit = if self.dirty_exceeded { EXCEEDED_RATELIMIT_PAGES } else { ratelimit_pages };
                if task.nr_dirtied <= ratelimit {
                    return Balance::Continue;
                }
                task.nr_dirtied = 0;
                // sync_writeback_pages()
                (ratelimit_pages + ratelimit_pages / 2, 0)
            }
        };
        // One round of balance_dirty_pages' loop.
        let t = self.thresholds(cache);
        let over = |cache: &PageCache| cache.dirty_pages() + cache.writeback_pages() > t.limit_pages;
        let mut write = Vec::new();
        let done = if !over(cache) {
            true
        } else {
            self.dirty_exceeded = true;
            if cache.dirty_pages() > 0 {
                // writeback_inodes(): any dirty inode, oldest first, write_chunk in all.
                pages_written += self.write_inodes(cache, u64::MAX, write_chunk - pages_written, false, &mut write);
                !over(cache) || pages_written >= write_chunk
            } else {
                false
            }
        };
        if done && !over(cache) {
            self.dirty_exceeded = false;
        }
        let task = self.tasks.get_mut(&pid).expect("task entry made above");
        if done {
            if write.is_empty() {
                Balance::Continue
            } else {
                task.in_loop = Some(LoopState::Done);
                Balance::Pause { sleep_ns: 0, write }
            }
        } else {
            task.in_loop = Some(LoopState::Legacy { write_chunk, pages_written, pause_ns: CONGESTION_WAIT_NS });
            Balance::Pause { sleep_ns: CONGESTION_WAIT_NS, write }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Chunk, Throttle, WritebackConfig};
    use super::*;
    use crate::host::PageKey;

    fn dirty(cache: &mut PageCache, ino: u32, indices: std::ops::Range<u64>) {
        for i in indices {
            cache.write(PageKey::new(ino, i), 0);
        }
    }

    fn wb() -> Writeback {
        Writeback::new(WritebackConfig { dirty_ratio: 40, throttle: Throttle::Legacy269, ..WritebackConfig::default() })
    }

    /// 10 000 pages: background 1000, limit 40% = 4000, ratelimit 10000/32 = 312, chunk 468.
    #[test]
    fn checked_every_ratelimit_plus_one_pages() {
        let mut cache = PageCache::new(10_000);
        let mut wb = wb();
        dirty(&mut cache, 1, 0..4500);
        // Pages 1..=312: not checked; the 313th is.
        for _ in 0..312 {
            assert_eq!(wb.balance(&mut cache, 7, 1, 0), Balance::Continue);
        }
        let r = wb.balance(&mut cache, 7, 1, 0);
        assert_eq!(r, Balance::Pause { sleep_ns: 0, write: vec![Chunk { ino: 1, first_index: 0, pages: 468 }] });
        assert_eq!(wb.balance(&mut cache, 7, 0, 0), Balance::Continue);
    }

    /// Over the limit with everything under writeback already: nothing to write, so 100 ms
    /// sleeps, flat (2.6.32 would sleep 1, 2, 4 ... ms); between 1000 and 4000 pages 2.6.32
    /// would have let the writer go at the midpoint (2500), 2.6.9 does not.
    #[test]
    fn nothing_to_write_sleeps_100ms_flat() {
        let mut cache = PageCache::new(10_000);
        let mut wb = wb();
        dirty(&mut cache, 1, 0..4096);
        while cache.dirty_pages() > 0 {
            wb.next_chunk(&mut cache, 0).unwrap();
        }
        let mut sleeps = Vec::new();
        let mut r = wb.balance(&mut cache, 3, 313, 0);
        while let Balance::Pause { sleep_ns, write } = r {
            assert!(write.is_empty());
            sleeps.push(sleep_ns / JIFFY_NS);
            if sleeps.len() == 4 {
                cache.end_writeback(1, 0, 200); // 3896: at or below the limit
            }
            r = wb.balance(&mut cache, 3, 0, 0);
        }
        assert_eq!(sleeps, vec![100, 100, 100, 100]);
        // dirty_exceeded cleared: the ratelimit is 312 again, not 8.
        assert!(!wb.dirty_exceeded);
    }

    /// A few dirty pages over the limit (most under writeback): 2.6.9 writes them (2.6.32 writes
    /// only when dirty pages alone exceed the limit), then, short of its chunk, sleeps.
    #[test]
    fn writes_any_dirty_pages_then_sleeps() {
        let mut cache = PageCache::new(10_000);
        let mut wb = wb();
        dirty(&mut cache, 1, 0..4096);
        while cache.dirty_pages() > 0 {
            wb.next_chunk(&mut cache, 0).unwrap();
        }
        dirty(&mut cache, 2, 0..100);
        let r = wb.balance(&mut cache, 3, 313, 0);
        assert_eq!(r, Balance::Pause { sleep_ns: CONGESTION_WAIT_NS, write: vec![Chunk { ino: 2, first_index: 0, pages: 100 }] });
    }
}
