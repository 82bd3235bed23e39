//! The page cache with Linux's two file LRU lists (mm/swap.c, mm/vmscan.c of 2.6.32; the same
//! active/inactive scheme lasted until multi-gen LRU in 6.1, which is not modelled).
//!
//! A page enters at the head of the inactive list (`add_to_page_cache_lru`). An access to an
//! uptodate page is `mark_page_accessed`: inactive,unreferenced -> inactive,referenced ->
//! active,unreferenced -> active,referenced, so a page touched twice while on the inactive
//! list is promoted and survives a scan that evicts pages touched once. Reclaim takes pages from
//! the inactive tail: clean, unlocked pages not under writeback are evicted; the others are
//! rotated to the head with their referenced bit cleared (as `shrink_page_list` keeps them and
//! `page_referenced` clears the bit). Unmapped page-cache pages with the referenced bit set are
//! evicted as well: since 2.6.34 `page_check_references` gives them `PAGEREF_RECLAIM_CLEAN`, and
//! 2.6.32's `page_mapping_inuse` test does not activate them either. Before scanning, the
//! inactive list is refilled as `shrink_active_list` does for file pages when
//! `inactive_file_is_low` (active > inactive): pages move from the active tail to the inactive
//! head with their referenced bit cleared.
//!
//! Simplifications: one zone, no mapped pages (no PTE references, no VM_EXEC protection), no
//! reclaim-time pageout of dirty pages (2.6.32 called `pageout()` from reclaim; later kernels
//! left that to the flusher, as here), no `PG_reclaim` rotation to the tail at the end of
//! writeback, no workingset (refault) detection. Reclaim runs only when an insertion leaves
//! more than `capacity` pages and frees one page per page over, instead of batches of
//! `SWAP_CLUSTER_MAX` below a watermark.
//!
//! Cost: a page is a slot in a vector linked into one of the two lists; an index per inode in
//! chunks of 16 pages (host/page_index.rs) finds it. Dirty pages are also kept per inode in an
//! ordered set, so writeback walks them in file-offset order. Every operation is O(1) or
//! O(log n) amortized; a hit allocates nothing.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::dirty_pages::DirtyPages;
use super::page_index::PageIndex;
use super::{Ino, PageKey};
use crate::fast_hash::FastMap;

/// What a lookup found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Not cached: the caller reads it (after `add_locked`).
    Miss,
    /// Cached but locked: read I/O is in progress; the caller waits for it and looks again.
    Locked,
    /// Cached and uptodate (this lookup counted as an access).
    Uptodate,
}

/// Counters since the cache was built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// `find` calls that found an uptodate page.
    pub hits: u64,
    /// `find` calls that found nothing.
    pub misses: u64,
    /// `find` calls that found a locked page (read in progress); neither hit nor miss.
    pub locked_waits: u64,
    /// Pages inserted (`add_locked`, and `write` of an absent page).
    pub pages_added: u64,
    /// Pages evicted by reclaim.
    pub pages_reclaimed: u64,
    /// Pages dropped by `drop_clean`.
    pub pages_dropped: u64,
    /// Inactive -> active promotions by `mark_page_accessed`.
    pub activations: u64,
    /// Active -> inactive moves by the list balancing of reclaim.
    pub deactivations: u64,
    /// Pages reclaim found unevictable (dirty, under writeback, locked) and rotated.
    pub rotations: u64,
    /// Insertions that left the cache over capacity because nothing could be evicted.
    pub over_capacity: u64,
}

const NIL: u32 = u32::MAX;

const LOCKED: u8 = 1;
const UPTODATE: u8 = 2;
const DIRTY: u8 = 4;
const WRITEBACK: u8 = 8;
const REFERENCED: u8 = 16;
const ACTIVE: u8 = 32;
const READAHEAD: u8 = 64;

/// A cached page: its key, its list links (slot numbers) and its flag bits.
#[derive(Clone, Copy, Debug)]
struct Node {
    key: PageKey,
    prev: u32,
    next: u32,
    flags: u8,
}

/// A doubly linked list of slots; the head is the most recently added end.
#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
    len: u64,
}

impl List {
    const EMPTY: List = List { head: NIL, tail: NIL, len: 0 };
}

/// Per-inode dirty state, kept only while the inode has dirty pages.
#[derive(Debug)]
struct InodeDirty {
    /// Indices of its dirty pages, in file-offset order.
    pages: DirtyPages,
    /// When the inode went from clean to dirty (Linux's `inode->dirtied_when`).
    dirtied_when_ns: u64,
    /// Tie-break among inodes dirtied at the same instant: order of dirtying.
    seq: u64,
}

/// The page cache. See the module documentation.
#[derive(Debug)]
pub struct PageCache {
    capacity_pages: u64,
    nodes: Vec<Node>,
    free_slots: Vec<u32>,
    map: PageIndex,
    inactive: List,
    active: List,
    dirty_pages: u64,
    writeback_pages: u64,
    inodes: FastMap<Ino, InodeDirty>,
    /// Dirty inodes by (dirtied_when_ns, seq): Linux's `b_dirty` list, oldest first.
    dirty_order: BTreeSet<(u64, u64, Ino)>,
    next_seq: u64,
    /// Pages under writeback per inode (for fsync's wait).
    inode_writeback: BTreeMap<Ino, u64>,
    /// A full scan found nothing evictable; set until a page may have become evictable, so a
    /// cache full of dirty pages is not rescanned at every insertion.
    reclaim_blocked: bool,
    stats: CacheStats,
}

impl PageCache {
    /// A cache of `capacity_pages` pages (at least 1; the caller validates). Slots are `u32`:
    /// at most 2^32 - 1 pages can be cached.
    pub fn new(capacity_pages: u64) -> Self {
        let prealloc = capacity_pages.min(1 << 20) as usize;
        PageCache {
            capacity_pages: capacity_pages.max(1),
            nodes: Vec::with_capacity(prealloc),
            free_slots: Vec::new(),
            map: PageIndex::with_capacity(prealloc),
            inactive: List::EMPTY,
            active: List::EMPTY,
            dirty_pages: 0,
            writeback_pages: 0,
            inodes: FastMap::default(),
            dirty_order: BTreeSet::new(),
            next_seq: 0,
            inode_writeback: BTreeMap::new(),
            reclaim_blocked: false,
            stats: CacheStats::default(),
        }
    }

    pub fn capacity_pages(&self) -> u64 {
        self.capacity_pages
    }

    /// A read's lookup (`find_get_page` then `mark_page_accessed` on an uptodate page).
    pub fn find(&mut self, key: PageKey) -> Lookup {
        self.find_slot(key).0
    }

    /// `find`, and for an uptodate page `test_clear_readahead_mark` too (Linux's read loop does
    /// both for each page it copies), with one lookup: the lookup and whether the mark was set.
    pub fn find_taking_mark(&mut self, key: PageKey) -> (Lookup, bool) {
        match self.find_slot(key) {
            (Lookup::Uptodate, Some(slot)) => (Lookup::Uptodate, self.take_mark(slot)),
            (lookup, _) => (lookup, false),
        }
    }

    /// `find`, with the slot of the page it found uptodate.
    #[inline]
    fn find_slot(&mut self, key: PageKey) -> (Lookup, Option<u32>) {
        let Some(slot) = self.map.get(key) else {
            self.stats.misses += 1;
            return (Lookup::Miss, None);
        };
        if self.nodes[slot as usize].flags & LOCKED != 0 {
            self.stats.locked_waits += 1;
            return (Lookup::Locked, None);
        }
        self.stats.hits += 1;
        self.mark_accessed(slot);
        (Lookup::Uptodate, Some(slot))
    }

    /// Clears the slot's `PG_readahead`: whether it was set.
    fn take_mark(&mut self, slot: u32) -> bool {
        let n = &mut self.nodes[slot as usize];
        let had = n.flags & READAHEAD != 0;
        n.flags &= !READAHEAD;
        had
    }

    /// Whether the page is cached in any state; no access marking, no counting (readahead's
    /// probe).
    pub fn contains(&self, key: PageKey) -> bool {
        self.map.contains(key)
    }

    /// A page about to be read: inserted locked and not uptodate at the inactive head
    /// (`add_to_page_cache_lru`). No-op if the page is already cached (false). May reclaim.
    pub fn add_locked(&mut self, key: PageKey) -> bool {
        if self.map.contains(key) {
            return false;
        }
        self.insert(key, LOCKED);
        self.reclaim();
        true
    }

    /// The page's read completed: uptodate and unlocked (no-op if absent).
    pub fn read_done(&mut self, key: PageKey) {
        if let Some(slot) = self.map.get(key) {
            let n = &mut self.nodes[slot as usize];
            n.flags = (n.flags & !LOCKED) | UPTODATE;
            self.reclaim_blocked = false;
        }
    }

    /// A buffered write of the whole page: created uptodate if absent, marked accessed (as
    /// `generic_perform_write` does), marked dirty. Returns true if the page was clean before
    /// (newly dirtied; a page under writeback is clean until written again). The first dirty
    /// page of a clean inode sets the inode's `dirtied_when` to `now_ns`.
    ///
    /// The caller waits for a locked page before writing it (as `write_begin` locks it);
    /// writing a locked page marks it uptodate and dirty but leaves it locked.
    pub fn write(&mut self, key: PageKey, now_ns: u64) -> bool {
        let (slot, inserted) = match self.map.get(key) {
            Some(slot) => (slot, false),
            None => (self.insert(key, UPTODATE), true),
        };
        self.mark_accessed(slot);
        let n = &mut self.nodes[slot as usize];
        n.flags |= UPTODATE;
        let was_clean = n.flags & DIRTY == 0;
        if was_clean {
            n.flags |= DIRTY;
            self.dirty_pages += 1;
            self.add_inode_dirty(key, now_ns);
        }
        if inserted {
            self.reclaim();
        }
        was_clean
    }

    /// Pages dirty (including dirty pages also under writeback: Linux counts both).
    pub fn dirty_pages(&self) -> u64 {
        self.dirty_pages
    }

    /// Pages under writeback.
    pub fn writeback_pages(&self) -> u64 {
        self.writeback_pages
    }

    /// Pages cached, in any state.
    pub fn cached_pages(&self) -> u64 {
        self.inactive.len + self.active.len
    }

    /// Pages on the active list.
    pub fn active_pages(&self) -> u64 {
        self.active.len
    }

    /// Pages on the inactive list.
    pub fn inactive_pages(&self) -> u64 {
        self.inactive.len
    }

    /// Sets `PG_readahead` on a cached page (no-op if absent).
    pub fn set_readahead_mark(&mut self, key: PageKey) {
        if let Some(slot) = self.map.get(key) {
            self.nodes[slot as usize].flags |= READAHEAD;
        }
    }

    /// `TestClearPageReadahead`: whether the mark was set; it is cleared.
    pub fn test_clear_readahead_mark(&mut self, key: PageKey) -> bool {
        self.map.get(key).is_some_and(|slot| self.take_mark(slot))
    }

    pub fn has_readahead_mark(&self, key: PageKey) -> bool {
        self.map.get(key).is_some_and(|slot| self.nodes[slot as usize].flags & READAHEAD != 0)
    }

    /// Whether the page is cached and dirty.
    pub fn is_dirty(&self, key: PageKey) -> bool {
        self.flags(key) & DIRTY != 0
    }

    /// Whether the page is cached and under writeback.
    pub fn is_writeback(&self, key: PageKey) -> bool {
        self.flags(key) & WRITEBACK != 0
    }

    /// Whether the page is cached and on the active list.
    pub fn is_active(&self, key: PageKey) -> bool {
        self.flags(key) & ACTIVE != 0
    }

    /// The inode's dirty pages from `from_index` in index order, as contiguous runs
    /// `(first index, pages)`, at most `max_pages` in all: dirty -> writeback
    /// (`clear_page_dirty_for_io` + `set_page_writeback`). Pages already under writeback or
    /// locked are skipped (they stay dirty; background writeback skips them too, a sync waits
    /// for them and comes back).
    pub fn start_writeback(&mut self, ino: Ino, from_index: u64, max_pages: u64) -> Vec<(u64, u64)> {
        self.start_writeback_range(ino, from_index, u64::MAX, max_pages)
    }

    /// `start_writeback` limited to indices below `end_index` (the cyclic wrap's second half).
    pub fn start_writeback_range(&mut self, ino: Ino, from_index: u64, end_index: u64, max_pages: u64) -> Vec<(u64, u64)> {
        let mut runs: Vec<(u64, u64)> = Vec::new();
        if max_pages == 0 || from_index >= end_index {
            return runs;
        }
        let Some(inode) = self.inodes.get_mut(&ino) else {
            return runs;
        };
        let mut taken: Vec<u64> = Vec::new();
        for index in inode.pages.range(from_index, end_index) {
            let slot = self.map.get(PageKey::new(ino, index)).expect("a dirty page is cached");
            if self.nodes[slot as usize].flags & (WRITEBACK | LOCKED) != 0 {
                continue;
            }
            taken.push(index);
            if taken.len() as u64 == max_pages {
                break;
            }
        }
        inode.pages.remove_ascending(&taken);
        for &index in &taken {
            let slot = self.map.get(PageKey::new(ino, index)).expect("a dirty page is cached");
            let n = &mut self.nodes[slot as usize];
            n.flags = (n.flags & !DIRTY) | WRITEBACK;
            match runs.last_mut() {
                Some((first, pages)) if *first + *pages == index => *pages += 1,
                _ => runs.push((index, 1)),
            }
        }
        let taken = taken.len() as u64;
        self.dirty_pages -= taken;
        self.writeback_pages += taken;
        if taken > 0 {
            *self.inode_writeback.entry(ino).or_insert(0) += taken;
        }
        if inode.pages.is_empty() {
            let key = (inode.dirtied_when_ns, inode.seq, ino);
            self.inodes.remove(&ino);
            self.dirty_order.remove(&key);
        }
        runs
    }

    /// Writeback of `pages` pages from `first_index` completed: writeback cleared (pages not
    /// under writeback, or absent, are ignored). A page redirtied meanwhile stays dirty.
    pub fn end_writeback(&mut self, ino: Ino, first_index: u64, pages: u64) {
        let mut ended = 0;
        for index in first_index..first_index.saturating_add(pages) {
            if let Some(slot) = self.map.get(PageKey::new(ino, index)) {
                let n = &mut self.nodes[slot as usize];
                if n.flags & WRITEBACK != 0 {
                    n.flags &= !WRITEBACK;
                    ended += 1;
                }
            }
        }
        if ended > 0 {
            self.writeback_pages -= ended;
            if let Some(count) = self.inode_writeback.get_mut(&ino) {
                *count -= ended;
                if *count == 0 {
                    self.inode_writeback.remove(&ino);
                }
            }
            self.reclaim_blocked = false;
        }
    }

    /// `echo 3 > /proc/sys/vm/drop_caches`: drops every clean, unlocked page not under
    /// writeback. Returns the pages dropped.
    pub fn drop_clean(&mut self) -> u64 {
        let mut dropped = 0;
        for list_active in [false, true] {
            let mut slot = if list_active { self.active.head } else { self.inactive.head };
            while slot != NIL {
                let n = self.nodes[slot as usize];
                if n.flags & (DIRTY | WRITEBACK | LOCKED) == 0 {
                    self.evict(slot);
                    dropped += 1;
                }
                slot = n.next;
            }
        }
        self.stats.pages_dropped += dropped;
        self.reclaim_blocked = false;
        dropped
    }

    /// `truncate_inode_pages` of a deleted file: pages `0..pages` of `ino` leave the cache,
    /// dirty ones discarded unwritten. Pages locked (being read) or under writeback are left
    /// (the caller waits for them first, as truncate does). Returns (pages dropped, dirty
    /// pages among them).
    pub fn remove_inode_pages(&mut self, ino: Ino, pages: u64) -> (u64, u64) {
        let (mut dropped, mut discarded) = (0, 0);
        for index in 0..pages {
            if let Some(was_dirty) = self.forget(PageKey::new(ino, index)) {
                dropped += 1;
                discarded += was_dirty as u64;
            }
        }
        (dropped, discarded)
    }

    /// Drops one page, dirty or not (`bforget` of a freed metadata block; a truncated file's
    /// page). A page locked or under writeback stays. Some(was dirty) if it was dropped.
    pub fn forget(&mut self, key: PageKey) -> Option<bool> {
        let slot = self.map.get(key)?;
        let flags = self.nodes[slot as usize].flags;
        if flags & (LOCKED | WRITEBACK) != 0 {
            return None;
        }
        let dirty = flags & DIRTY != 0;
        if dirty {
            self.dirty_pages -= 1;
            if let Some(inode) = self.inodes.get_mut(&key.ino) {
                inode.pages.remove(key.index);
                if inode.pages.is_empty() {
                    let k = (inode.dirtied_when_ns, inode.seq, key.ino);
                    self.inodes.remove(&key.ino);
                    self.dirty_order.remove(&k);
                }
            }
        }
        self.evict(slot);
        self.reclaim_blocked = false;
        Some(dirty)
    }

    /// Whether the page is cached and locked (a read in progress).
    pub fn is_locked(&self, key: PageKey) -> bool {
        self.flags(key) & LOCKED != 0
    }

    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    /// Dirty inodes with their `dirtied_when`, oldest first (Linux's `b_dirty` order; inodes
    /// dirtied at the same instant in the order they were dirtied).
    pub fn dirty_inodes(&self) -> impl Iterator<Item = (Ino, u64)> + '_ {
        self.dirty_order.iter().map(|&(when, _, ino)| (ino, when))
    }

    /// When the inode went from clean to dirty; None if it has no dirty page.
    pub fn inode_dirtied_when_ns(&self, ino: Ino) -> Option<u64> {
        self.inodes.get(&ino).map(|i| i.dirtied_when_ns)
    }

    /// The inode's dirty pages.
    pub fn inode_dirty_pages(&self, ino: Ino) -> u64 {
        self.inodes.get(&ino).map_or(0, |i| i.pages.len())
    }

    /// The inode's pages under writeback.
    pub fn inode_writeback_pages(&self, ino: Ino) -> u64 {
        self.inode_writeback.get(&ino).copied().unwrap_or(0)
    }

    // ----- internals -----

    fn flags(&self, key: PageKey) -> u8 {
        self.map.get(key).map_or(0, |slot| self.nodes[slot as usize].flags)
    }

    /// A new page at the inactive head.
    fn insert(&mut self, key: PageKey, flags: u8) -> u32 {
        let node = Node { key, prev: NIL, next: NIL, flags };
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.nodes[slot as usize] = node;
                slot
            }
            None => {
                let slot = u32::try_from(self.nodes.len()).ok().filter(|&s| s != NIL).expect("page cache: more than 2^32 - 1 pages cached");
                self.nodes.push(node);
                slot
            }
        };
        self.map.insert(key, slot);
        self.push_head(slot, false);
        self.stats.pages_added += 1;
        slot
    }

    /// `mark_page_accessed` (mm/swap.c).
    fn mark_accessed(&mut self, slot: u32) {
        let flags = self.nodes[slot as usize].flags;
        if flags & ACTIVE == 0 && flags & REFERENCED != 0 {
            self.unlink(slot);
            let n = &mut self.nodes[slot as usize];
            n.flags = (n.flags & !REFERENCED) | ACTIVE;
            self.push_head(slot, true);
            self.stats.activations += 1;
        } else if flags & REFERENCED == 0 {
            self.nodes[slot as usize].flags |= REFERENCED;
        }
    }

    fn add_inode_dirty(&mut self, key: PageKey, now_ns: u64) {
        let inode = match self.inodes.get_mut(&key.ino) {
            Some(inode) => inode,
            None => {
                let seq = self.next_seq;
                self.next_seq += 1;
                self.dirty_order.insert((now_ns, seq, key.ino));
                self.inodes.entry(key.ino).or_insert(InodeDirty { pages: DirtyPages::default(), dirtied_when_ns: now_ns, seq })
            }
        };
        inode.pages.insert(key.index);
    }

    fn list_mut(&mut self, active: bool) -> &mut List {
        if active {
            &mut self.active
        } else {
            &mut self.inactive
        }
    }

    fn push_head(&mut self, slot: u32, active: bool) {
        let old_head = self.list_mut(active).head;
        {
            let n = &mut self.nodes[slot as usize];
            n.prev = NIL;
            n.next = old_head;
            if active {
                n.flags |= ACTIVE;
            } else {
                n.flags &= !ACTIVE;
            }
        }
        if old_head != NIL {
            self.nodes[old_head as usize].prev = slot;
        }
        let list = self.list_mut(active);
        list.head = slot;
        if list.tail == NIL {
            list.tail = slot;
        }
        list.len += 1;
    }

    /// Takes the slot off its list (which its ACTIVE bit names).
    fn unlink(&mut self, slot: u32) {
        let Node { prev, next, flags, .. } = self.nodes[slot as usize];
        if prev != NIL {
            self.nodes[prev as usize].next = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        }
        let list = self.list_mut(flags & ACTIVE != 0);
        if list.head == slot {
            list.head = next;
        }
        if list.tail == slot {
            list.tail = prev;
        }
        list.len -= 1;
    }

    fn evict(&mut self, slot: u32) {
        self.unlink(slot);
        let key = self.nodes[slot as usize].key;
        self.map.remove(key);
        self.free_slots.push(slot);
    }

    /// Frees pages until the cache is within capacity, or gives up when nothing can go.
    fn reclaim(&mut self) {
        while self.cached_pages() > self.capacity_pages {
            if self.reclaim_blocked {
                self.stats.over_capacity += 1;
                return;
            }
            self.refill_inactive();
            let mut scan = self.inactive.len;
            let mut evicted = false;
            while scan > 0 {
                scan -= 1;
                let slot = self.inactive.tail;
                if self.nodes[slot as usize].flags & (DIRTY | WRITEBACK | LOCKED) == 0 {
                    self.evict(slot);
                    self.stats.pages_reclaimed += 1;
                    evicted = true;
                    break;
                }
                self.unlink(slot);
                self.nodes[slot as usize].flags &= !REFERENCED;
                self.push_head(slot, false);
                self.stats.rotations += 1;
            }
            if !evicted {
                self.reclaim_blocked = true;
                self.stats.over_capacity += 1;
                return;
            }
        }
    }

    /// `shrink_active_list` for file pages while `inactive_file_is_low` (active > inactive):
    /// active tail -> inactive head, referenced bit cleared.
    fn refill_inactive(&mut self) {
        while self.active.len > self.inactive.len {
            let slot = self.active.tail;
            self.unlink(slot);
            self.nodes[slot as usize].flags &= !REFERENCED;
            self.push_head(slot, false);
            self.stats.deactivations += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(ino: Ino, index: u64) -> PageKey {
        PageKey::new(ino, index)
    }

    /// A page read once: inserted, read, then the reader's access.
    fn read_once(c: &mut PageCache, key: PageKey) {
        assert_eq!(c.find(key), Lookup::Miss);
        assert!(c.add_locked(key));
        assert!(!c.add_locked(key), "a cached page is not added again");
        assert_eq!(c.find(key), Lookup::Locked);
        c.read_done(key);
        assert_eq!(c.find(key), Lookup::Uptodate);
    }

    #[test]
    fn hits_misses_and_locked_are_counted() {
        let mut c = PageCache::new(10);
        read_once(&mut c, k(1, 0));
        assert_eq!(c.find(k(1, 0)), Lookup::Uptodate);
        assert_eq!(c.find(k(1, 1)), Lookup::Miss);
        assert!(c.contains(k(1, 0)));
        assert!(!c.contains(k(1, 1)));
        let s = c.stats();
        assert_eq!((s.hits, s.misses, s.locked_waits), (2, 2, 1));
        assert_eq!(s.pages_added, 1);
        assert_eq!(c.cached_pages(), 1);
    }

    #[test]
    fn mark_page_accessed_states() {
        let mut c = PageCache::new(10);
        c.add_locked(k(1, 0));
        c.read_done(k(1, 0));
        assert!(!c.is_active(k(1, 0)));
        c.find(k(1, 0)); // inactive, referenced
        assert!(!c.is_active(k(1, 0)));
        c.find(k(1, 0)); // active, unreferenced
        assert!(c.is_active(k(1, 0)));
        c.find(k(1, 0)); // active, referenced
        assert!(c.is_active(k(1, 0)));
        assert_eq!(c.stats().activations, 1);
        assert_eq!((c.active_pages(), c.inactive_pages()), (1, 0));
        // contains() is no access.
        c.add_locked(k(1, 1));
        c.read_done(k(1, 1));
        c.find(k(1, 1));
        for _ in 0..3 {
            assert!(c.contains(k(1, 1)));
        }
        assert!(!c.is_active(k(1, 1)));
    }

    #[test]
    fn twice_read_page_survives_a_scan_of_once_read_pages() {
        let mut c = PageCache::new(4);
        read_once(&mut c, k(1, 0));
        assert_eq!(c.find(k(1, 0)), Lookup::Uptodate); // second read: activated
        for i in 1..4 {
            read_once(&mut c, k(1, i));
        }
        // A stream of once-read pages twice the cache's size.
        for i in 100..108 {
            read_once(&mut c, k(2, i));
        }
        assert!(c.contains(k(1, 0)), "the twice-read page was evicted");
        for i in 1..4 {
            assert!(!c.contains(k(1, i)));
        }
        assert_eq!(c.cached_pages(), 4);
        assert_eq!(c.stats().pages_reclaimed, 8);
    }

    #[test]
    fn inactive_list_is_lru() {
        let mut c = PageCache::new(3);
        for i in 0..3 {
            read_once(&mut c, k(1, i));
        }
        read_once(&mut c, k(1, 3)); // evicts the oldest: 0
        assert!(!c.contains(k(1, 0)));
        read_once(&mut c, k(1, 4)); // then 1
        assert!(!c.contains(k(1, 1)));
        assert!(c.contains(k(1, 2)) && c.contains(k(1, 3)) && c.contains(k(1, 4)));
    }

    #[test]
    fn active_list_is_refilled_when_inactive_runs_low() {
        let mut c = PageCache::new(4);
        for i in 0..4 {
            read_once(&mut c, k(1, i));
            c.find(k(1, i)); // all active
        }
        assert_eq!(c.active_pages(), 4);
        read_once(&mut c, k(2, 0));
        // Balancing moved the active tail (oldest activated: 0, 1) to the inactive list; the
        // oldest of those went.
        assert_eq!(c.cached_pages(), 4);
        assert!(!c.contains(k(1, 0)));
        assert!(c.stats().deactivations >= 2);
        assert!(c.active_pages() <= c.inactive_pages() + 1);
    }

    #[test]
    fn dirty_and_locked_pages_are_not_evicted() {
        let mut c = PageCache::new(3);
        assert!(c.write(k(1, 0), 0));
        assert!(!c.write(k(1, 0), 0), "a dirty page rewritten is not newly dirtied"); // and now active
        c.add_locked(k(1, 1));
        read_once(&mut c, k(1, 2));
        read_once(&mut c, k(1, 3)); // over capacity: only page 2 can go
        assert!(c.contains(k(1, 0)) && c.contains(k(1, 1)) && c.contains(k(1, 3)));
        assert!(!c.contains(k(1, 2)));
        assert!(c.stats().rotations >= 1);
        // Nothing evictable but page 3: the next insertion evicts it, then nothing.
        c.add_locked(k(1, 4));
        assert!(!c.contains(k(1, 3)));
        c.add_locked(k(1, 5));
        assert_eq!(c.cached_pages(), 4);
        assert_eq!(c.stats().over_capacity, 1);
        // Writeback then completion makes page 0 evictable again.
        assert_eq!(c.start_writeback(1, 0, 10), vec![(0, 1)]);
        c.add_locked(k(1, 6));
        assert!(c.contains(k(1, 0)), "a page under writeback was evicted");
        c.end_writeback(1, 0, 1);
        c.read_done(k(1, 4));
        c.add_locked(k(1, 7));
        assert!(c.cached_pages() <= 5);
    }

    #[test]
    fn drop_clean_keeps_dirty_writeback_and_locked_pages() {
        let mut c = PageCache::new(100);
        for i in 0..5 {
            read_once(&mut c, k(1, i));
        }
        c.find(k(1, 0));
        c.write(k(2, 0), 0);
        c.write(k(2, 1), 0);
        c.start_writeback(2, 1, 1);
        c.add_locked(k(3, 0));
        assert_eq!(c.drop_clean(), 5);
        assert_eq!(c.cached_pages(), 3);
        assert!(c.contains(k(2, 0)) && c.contains(k(2, 1)) && c.contains(k(3, 0)));
        assert_eq!((c.dirty_pages(), c.writeback_pages()), (1, 1));
        assert_eq!(c.stats().pages_dropped, 5);
    }

    #[test]
    fn start_writeback_runs_in_offset_order_and_respects_max_pages() {
        let mut c = PageCache::new(100);
        for i in [9, 3, 4, 5, 7, 0, 1, 20] {
            c.write(k(1, i), 1_000);
        }
        c.write(k(2, 0), 2_000);
        assert_eq!(c.dirty_pages(), 9);
        assert_eq!(c.inode_dirtied_when_ns(1), Some(1_000));
        assert_eq!(c.dirty_inodes().collect::<Vec<_>>(), vec![(1, 1_000), (2, 2_000)]);
        assert_eq!(c.start_writeback(1, 2, 4), vec![(3, 3), (7, 1)]);
        assert_eq!((c.dirty_pages(), c.writeback_pages()), (5, 4));
        assert_eq!(c.start_writeback(1, 0, 100), vec![(0, 2), (9, 1), (20, 1)]);
        assert_eq!(c.inode_dirty_pages(1), 0);
        assert_eq!(c.inode_writeback_pages(1), 8);
        // The inode went clean: off the dirty list.
        assert_eq!(c.dirty_inodes().collect::<Vec<_>>(), vec![(2, 2_000)]);
        // Redirty during writeback: dirty again, newly dirtied, new dirtied_when; not taken
        // again while under writeback.
        assert!(c.write(k(1, 3), 5_000));
        assert_eq!(c.inode_dirtied_when_ns(1), Some(5_000));
        assert_eq!(c.start_writeback(1, 0, 100), vec![]);
        c.end_writeback(1, 3, 3);
        assert!(c.is_dirty(k(1, 3)) && !c.is_writeback(k(1, 3)));
        assert_eq!(c.start_writeback(1, 0, 100), vec![(3, 1)]);
        assert_eq!(c.start_writeback_range(2, 1, 5, 10), vec![]);
        assert_eq!(c.start_writeback_range(2, 0, 1, 10), vec![(0, 1)]);
    }

    #[test]
    fn readahead_mark() {
        let mut c = PageCache::new(10);
        c.add_locked(k(1, 7));
        assert!(!c.has_readahead_mark(k(1, 7)));
        c.set_readahead_mark(k(1, 7));
        assert!(c.has_readahead_mark(k(1, 7)));
        assert!(c.test_clear_readahead_mark(k(1, 7)));
        assert!(!c.test_clear_readahead_mark(k(1, 7)));
        c.set_readahead_mark(k(1, 8)); // absent: no-op
        assert!(!c.has_readahead_mark(k(1, 8)));
    }

    #[test]
    fn find_taking_mark_is_find_then_test_clear() {
        let (mut a, mut b) = (PageCache::new(10), PageCache::new(10));
        for c in [&mut a, &mut b] {
            c.add_locked(k(1, 0));
            c.set_readahead_mark(k(1, 0));
            c.add_locked(k(1, 1));
            c.read_done(k(1, 1));
            c.set_readahead_mark(k(1, 1));
            c.find(k(1, 1)); // referenced: the next find activates it
        }
        for key in [k(1, 0), k(1, 1), k(1, 1), k(1, 2)] {
            let plain = b.find(key);
            let had = plain == Lookup::Uptodate && b.test_clear_readahead_mark(key);
            assert_eq!(a.find_taking_mark(key), (plain, had), "{key:?}");
        }
        assert!(a.has_readahead_mark(k(1, 0)), "a locked page keeps its mark");
        assert!(a.is_active(k(1, 1)) && !a.has_readahead_mark(k(1, 1)));
        assert_eq!(a.stats(), b.stats());
        assert_eq!((a.active_pages(), a.inactive_pages()), (b.active_pages(), b.inactive_pages()));
    }

    /// A 2 GiB sequential read through a 1 GiB cache, then a 2 GiB write with writeback keeping
    /// up: linear in the pages handled.
    #[test]
    fn streaming_through_a_full_cache_is_fast() {
        let capacity = 262_144;
        let mut c = PageCache::new(capacity);
        let t = std::time::Instant::now();
        for i in 0..524_288 {
            let key = k(1, i);
            if c.find(key) == Lookup::Miss {
                c.add_locked(key);
                c.read_done(key);
            }
        }
        for i in 0..524_288u64 {
            c.write(k(2, i), i);
            if i % 1024 == 1023 {
                for (first, pages) in c.start_writeback(2, i - 1023, 1024) {
                    c.end_writeback(2, first, pages);
                }
            }
        }
        assert!(c.cached_pages() <= capacity);
        assert_eq!(c.stats().over_capacity, 0);
        // Generous for unoptimized builds on a loaded machine.
        assert!(t.elapsed().as_secs_f64() < 10.0, "took {:?}", t.elapsed());
    }
}
