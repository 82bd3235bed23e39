//! A bounded LRU set of a file's pages (the part of a kernel's page cache one process's file
//! holds). Deterministic: eviction follows a use counter, never hash order.

use crate::fast_hash::FastMap;
use std::collections::BTreeMap;

pub struct PageCache {
    capacity: usize,
    clock: u64,
    /// page -> time of last use
    used: FastMap<u64, u64>,
    /// time of last use -> page (oldest first)
    order: BTreeMap<u64, u64>,
}

impl PageCache {
    pub fn new(capacity_pages: usize) -> Self {
        PageCache { capacity: capacity_pages.max(1), clock: 0, used: FastMap::default(), order: BTreeMap::new() }
    }

    pub fn len(&self) -> usize {
        self.used.len()
    }

    pub fn is_empty(&self) -> bool {
        self.used.is_empty()
    }

    pub fn contains(&self, page: u64) -> bool {
        self.used.contains_key(&page)
    }

    /// Marks a resident page as just used; false if it is not resident.
    pub fn touch(&mut self, page: u64) -> bool {
        let Some(t) = self.used.get_mut(&page) else {
            return false;
        };
        self.order.remove(t);
        self.clock += 1;
        *t = self.clock;
        self.order.insert(self.clock, page);
        true
    }

    /// Makes a page resident (most recently used), evicting the least recently used beyond capacity.
    pub fn insert(&mut self, page: u64) {
        if self.touch(page) {
            return;
        }
        self.clock += 1;
        self.used.insert(page, self.clock);
        self.order.insert(self.clock, page);
        while self.used.len() > self.capacity {
            let (_, old) = self.order.pop_first().expect("order and used hold the same pages");
            self.used.remove(&old);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PageCache;

    #[test]
    fn evicts_least_recently_used() {
        let mut c = PageCache::new(2);
        c.insert(1);
        c.insert(2);
        assert!(c.touch(1));
        c.insert(3);
        assert!(c.contains(1) && c.contains(3) && !c.contains(2));
        assert_eq!(c.len(), 2);
    }
}
