//! A cached mapping table (DFTL: Gupta, Kim & Urgaonkar, ASPLOS'09; MQSim's CMT): the drive
//! keeps only `capacity` logical-to-physical entries in DRAM, least recently used first out;
//! the whole table lives in flash as *translation pages* of `entries_per_page` consecutive
//! entries each. An entry maps `units_per_entry` consecutive 4 KiB units (1: a unit, as a drive
//! mapping 4 KiB does; MQSim's entries map its logical page, the flash page's size); the cache
//! below works in entries (a unit's entry is the unit / `units_per_entry`). An access whose
//! entry is not cached first reads its translation page; an evicted entry that changed since
//! it was read (dirty) is written back with its translation page. Off (`capacity` 0), the drive holds the whole table in DRAM, as the presets' drives
//! do (about 1 GB of DRAM per TB).
//!
//! This module is the bookkeeping only (which entries are cached, dirty, and from when each is
//! usable); the flash model (mod.rs) turns misses and write-backs into page reads and programs.

use crate::fast_hash::FastMap;
use crate::time::Nanos;
use serde::Serialize;

/// `[device.flash] mapping_cache_kib`, `mapping_entry_bytes`, `translation_entry_bytes` and
/// `mapping_entry_kib`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MappingCacheConfig {
    /// DRAM for cached entries, KiB (0: the whole table in DRAM, no mapping cache).
    pub capacity_kib: u32,
    /// Bytes per cached entry in DRAM (a logical and a physical page number, MQSim adds a
    /// sector bitmap).
    pub entry_bytes: u32,
    /// Bytes per entry in a translation page on flash (a physical page number: the logical
    /// one is the entry's place in the page).
    pub translation_entry_bytes: u32,
    /// 4 KiB units one entry maps (`mapping_entry_kib` / 4). Not in a summary at its default,
    /// so that summaries from before the field are unchanged.
    #[serde(skip_serializing_if = "crate::serde_skip::is_one")]
    pub units_per_entry: u32,
}

impl Default for MappingCacheConfig {
    fn default() -> Self {
        MappingCacheConfig {
            capacity_kib: 0,
            entry_bytes: DEFAULT_ENTRY_BYTES,
            translation_entry_bytes: DEFAULT_TRANSLATION_ENTRY_BYTES,
            units_per_entry: 1,
        }
    }
}

/// A 4-byte logical and a 4-byte physical page number (DFTL's cached entry).
pub const DEFAULT_ENTRY_BYTES: u32 = 8;
/// A 4-byte physical page number (DFTL's translation page entry).
pub const DEFAULT_TRANSLATION_ENTRY_BYTES: u32 = 4;

impl MappingCacheConfig {
    pub fn is_off(&self) -> bool {
        self.capacity_kib == 0
    }

    /// Entries the DRAM holds.
    pub fn capacity_entries(&self) -> u64 {
        self.capacity_kib as u64 * 1024 / self.entry_bytes.max(1) as u64
    }

    /// Entries a translation page of `page_bytes` holds.
    pub fn entries_per_translation_page(&self, page_bytes: u64) -> u64 {
        (page_bytes / self.translation_entry_bytes.max(1) as u64).max(1)
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(1..=64).contains(&self.entry_bytes) {
            return Err(format!("field `device.flash.mapping_entry_bytes` must be in [1, 64], got {}", self.entry_bytes));
        }
        if !(1..=64).contains(&self.translation_entry_bytes) {
            return Err(format!("field `device.flash.translation_entry_bytes` must be in [1, 64], got {}", self.translation_entry_bytes));
        }
        if !(1..=256).contains(&self.units_per_entry) {
            return Err(format!(
                "field `device.flash.mapping_entry_kib` must be a multiple of 4 in [4, 1024], got {}",
                self.units_per_entry as u64 * 4
            ));
        }
        if self.capacity_kib > 16 << 20 {
            return Err(format!("field `device.flash.mapping_cache_kib` must be in [0, 16777216], got {}", self.capacity_kib));
        }
        Ok(())
    }
}

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    entry: u32,
    /// Towards the most recently used end / the least recently used end.
    newer: u32,
    older: u32,
    dirty: bool,
    /// When the entry is usable (its translation page read done).
    ready_ns: Nanos,
    /// When that read was issued (an entry cached without a read: when it was cached).
    since_ns: Nanos,
}

/// What a look-up found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Cached: usable from `ready_ns`, its translation page read issued at `since_ns` (a read
    /// may still be under way, or be issued later than the look-up).
    Hit {
        ready_ns: Nanos,
        since_ns: Nanos,
    },
    Miss,
}

/// An entry pushed out to make room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evicted {
    pub entry: u32,
    pub dirty: bool,
}

#[derive(Clone)]
pub struct MappingCache {
    capacity: usize,
    entries_per_page: u64,
    slot_of: FastMap<u32, u32>,
    nodes: Vec<Node>,
    /// Most and least recently used.
    newest: u32,
    oldest: u32,
    /// Slots of entries pushed out, for the next inserts.
    free: Vec<u32>,
}

impl MappingCache {
    /// A cache of `capacity` entries over translation pages of `entries_per_page` entries.
    pub fn new(capacity: u64, entries_per_page: u64) -> MappingCache {
        assert!(capacity > 0 && entries_per_page > 0, "a mapping cache holds entries");
        MappingCache {
            capacity: capacity.min(u32::MAX as u64 - 1) as usize,
            entries_per_page,
            slot_of: FastMap::default(),
            nodes: Vec::new(),
            newest: NIL,
            oldest: NIL,
            free: Vec::new(),
        }
    }

    /// The translation page holding entry `entry`.
    pub fn translation_page(&self, entry: u32) -> u64 {
        entry as u64 / self.entries_per_page
    }

    pub fn len(&self) -> usize {
        self.slot_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slot_of.is_empty()
    }

    /// Looks `entry` up; a hit becomes the most recently used.
    pub fn lookup(&mut self, entry: u32) -> Lookup {
        match self.slot_of.get(&entry) {
            Some(&s) => {
                self.touch(s);
                let n = &self.nodes[s as usize];
                Lookup::Hit { ready_ns: n.ready_ns, since_ns: n.since_ns }
            }
            None => Lookup::Miss,
        }
    }

    /// Whether `entry` is cached (the order unchanged).
    pub fn contains(&self, entry: u32) -> bool {
        self.slot_of.contains_key(&entry)
    }

    /// If the cache is full, pushes out the least recently used entry (so that an insert
    /// follows it without evicting).
    pub fn make_room(&mut self) -> Option<Evicted> {
        if self.slot_of.len() < self.capacity {
            return None;
        }
        let s = self.oldest;
        self.unlink(s);
        let old = self.nodes[s as usize];
        self.slot_of.remove(&old.entry);
        self.free.push(s);
        Some(Evicted { entry: old.entry, dirty: old.dirty })
    }

    /// Caches `entry` (not cached yet) as the most recently used, usable from `ready_ns` (its
    /// read issued at `since_ns`); the least recently used entry goes if the cache is full.
    pub fn insert(&mut self, entry: u32, since_ns: Nanos, ready_ns: Nanos, dirty: bool) -> Option<Evicted> {
        debug_assert!(!self.slot_of.contains_key(&entry), "entry {entry} cached twice");
        let evicted = self.make_room();
        let node = Node { entry, newer: NIL, older: NIL, dirty, ready_ns, since_ns };
        let slot = match self.free.pop() {
            Some(s) => {
                self.nodes[s as usize] = node;
                s
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        self.slot_of.insert(entry, slot);
        self.push_newest(slot);
        evicted
    }

    /// A cached entry's read replaced by one from `since_ns` to `ready_ns` (an earlier one).
    pub fn reread(&mut self, entry: u32, since_ns: Nanos, ready_ns: Nanos) {
        if let Some(&s) = self.slot_of.get(&entry) {
            let n = &mut self.nodes[s as usize];
            (n.since_ns, n.ready_ns) = (since_ns, ready_ns);
        }
    }

    /// Marks a cached entry changed (its translation page must be written back on eviction).
    pub fn mark_dirty(&mut self, entry: u32) {
        if let Some(&s) = self.slot_of.get(&entry) {
            self.nodes[s as usize].dirty = true;
        }
    }

    /// Every cached entry of entry `entry`'s translation page, clean: its page has just been written.
    pub fn clean_page_of(&mut self, entry: u32) {
        let page = self.translation_page(entry);
        let (lo, hi) = (page * self.entries_per_page, (page + 1) * self.entries_per_page);
        if (hi - lo) as usize <= self.slot_of.len() {
            for l in lo..hi.min(u32::MAX as u64 + 1) {
                if let Some(&s) = self.slot_of.get(&(l as u32)) {
                    self.nodes[s as usize].dirty = false;
                }
            }
        } else {
            for n in self.nodes.iter_mut() {
                if (lo..hi).contains(&(n.entry as u64)) {
                    n.dirty = false;
                }
            }
        }
    }

    fn touch(&mut self, s: u32) {
        if self.newest != s {
            self.unlink(s);
            self.push_newest(s);
        }
    }

    fn unlink(&mut self, s: u32) {
        let Node { newer, older, .. } = self.nodes[s as usize];
        match newer {
            NIL => self.newest = older,
            n => self.nodes[n as usize].older = older,
        }
        match older {
            NIL => self.oldest = newer,
            o => self.nodes[o as usize].newer = newer,
        }
    }

    fn push_newest(&mut self, s: u32) {
        let old_newest = self.newest;
        {
            let n = &mut self.nodes[s as usize];
            n.newer = NIL;
            n.older = old_newest;
        }
        match old_newest {
            NIL => self.oldest = s,
            o => self.nodes[o as usize].newer = s,
        }
        self.newest = s;
    }

    /// Cached entries from least to most recently used (tests and checks).
    pub fn lru_order(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.len());
        let mut s = self.oldest;
        while s != NIL {
            out.push(self.nodes[s as usize].entry);
            s = self.nodes[s as usize].newer;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_from_kib_and_entry_size() {
        let c = MappingCacheConfig { capacity_kib: 2048, entry_bytes: 8, translation_entry_bytes: 4, units_per_entry: 1 };
        assert_eq!(c.capacity_entries(), 262_144);
        assert_eq!(c.entries_per_translation_page(16384), 4096);
        assert!(c.validate().is_ok());
        assert!(MappingCacheConfig::default().is_off());
        let bad = MappingCacheConfig { capacity_kib: 1, entry_bytes: 0, ..MappingCacheConfig::default() };
        assert!(bad.validate().unwrap_err().contains("`device.flash.mapping_entry_bytes`"));
    }

    #[test]
    fn least_recently_used_goes_first_and_a_hit_refreshes() {
        let mut c = MappingCache::new(3, 4);
        assert_eq!(c.lookup(1), Lookup::Miss);
        assert_eq!(c.insert(1, 10, 10, false), None);
        assert_eq!(c.insert(2, 20, 20, true), None);
        assert_eq!(c.insert(3, 30, 30, false), None);
        assert_eq!(c.lru_order(), vec![1, 2, 3]);
        // 1 is used again: 2 is now the oldest, and it is dirty.
        assert_eq!(c.lookup(1), Lookup::Hit { ready_ns: 10, since_ns: 10 });
        assert_eq!(c.lru_order(), vec![2, 3, 1]);
        assert_eq!(c.insert(4, 40, 40, false), Some(Evicted { entry: 2, dirty: true }));
        assert_eq!(c.lru_order(), vec![3, 1, 4]);
        assert_eq!(c.insert(5, 50, 50, false), Some(Evicted { entry: 3, dirty: false }));
        assert!(!c.contains(2) && !c.contains(3));
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn translation_pages_group_consecutive_entries_and_a_write_back_cleans_its_page() {
        let mut c = MappingCache::new(8, 4);
        assert_eq!((c.translation_page(3), c.translation_page(4), c.translation_page(9)), (0, 1, 2));
        for entry in [4, 5, 9] {
            c.insert(entry, 0, 0, true);
        }
        c.clean_page_of(6);
        // 4 and 5 share page 1 with 6: clean; 9 (page 2) stays dirty.
        for entry in [0, 1, 2, 3, 10] {
            assert_eq!(c.insert(entry, 0, 0, false), None);
        }
        assert_eq!(c.insert(11, 0, 0, false), Some(Evicted { entry: 4, dirty: false }));
        assert_eq!(c.insert(12, 0, 0, false), Some(Evicted { entry: 5, dirty: false }));
        assert_eq!(c.insert(13, 0, 0, false), Some(Evicted { entry: 9, dirty: true }));
        let mut one = MappingCache::new(1, 4);
        one.insert(7, 0, 0, false);
        one.mark_dirty(7);
        assert_eq!(one.insert(8, 0, 0, false), Some(Evicted { entry: 7, dirty: true }));
    }

    proptest::proptest! {
        /// Against a plain list (least recently used first) over random look-ups, inserts of
        /// missing entries, updates and page write-backs: the same order, dirt and evictions.
        #[test]
        fn behaves_as_a_plain_lru_list(cap in 1u64..12, ops in proptest::collection::vec((0u8..4, 0u32..40), 1..300)) {
            let mut c = MappingCache::new(cap, 4);
            let mut model: Vec<(u32, bool)> = Vec::new();
            for (op, entry) in ops {
                match op {
                    0 | 1 => {
                        let pos = model.iter().position(|e| e.0 == entry);
                        match (c.lookup(entry), pos) {
                            (Lookup::Hit { .. }, Some(i)) => {
                                let mut e = model.remove(i);
                                e.1 |= op == 1;
                                if op == 1 {
                                    c.mark_dirty(entry);
                                }
                                model.push(e);
                            }
                            (Lookup::Miss, None) => {
                                let out = c.insert(entry, 0, 0, op == 1);
                                let expect = (model.len() as u64 == cap).then(|| model.remove(0));
                                proptest::prop_assert_eq!(out, expect.map(|(l, d)| Evicted { entry: l, dirty: d }));
                                model.push((entry, op == 1));
                            }
                            (got, pos) => proptest::prop_assert!(false, "lookup {:?} against the list's {:?}", got, pos),
                        }
                    }
                    2 => {
                        c.mark_dirty(entry);
                        if let Some(e) = model.iter_mut().find(|e| e.0 == entry) {
                            e.1 = true;
                        }
                    }
                    _ => {
                        c.clean_page_of(entry);
                        for e in model.iter_mut().filter(|e| e.0 / 4 == entry / 4) {
                            e.1 = false;
                        }
                    }
                }
                proptest::prop_assert_eq!(c.lru_order(), model.iter().map(|e| e.0).collect::<Vec<_>>());
                proptest::prop_assert!(c.len() as u64 <= cap);
            }
            // Dirt, read back by pushing everything out.
            let mut out = Vec::new();
            for i in 0..cap as u32 {
                if let Some(e) = c.insert(1_000 + i, 0, 0, false) {
                    out.push((e.entry, e.dirty));
                }
            }
            proptest::prop_assert_eq!(out, model);
        }
    }
}
