//! Hot data kept in the write cache, as MQSim's ADVANCED data cache keeps it
//! (ssd/Data_Cache_Manager_Flash_Advanced.cpp, `write_to_destage_buffer`, at 7ec40e3): a write
//! to a mapping unit (MQSim's logical page) not written back since the window last restarted is
//! cold, written back at once (the write buffer's path, MQSim's "eagerly write back cold
//! data"); a write to one that was is hot: its data stays in DRAM, is not programmed, and reads
//! of it are served from DRAM until it leaves. It leaves when a later cold write covers its
//! mapping unit (written back with that write, from DRAM; MQSim writes only the write's own
//! sectors back, reads the rest of the page from flash and drops the slot, so held data flash
//! lacks would be lost: the model keeps it), when the cache is full and its mapping unit's slot is the
//! least recently used (written back with the slot's other held units: MQSim's LRU eviction of
//! a dirty slot; a write or a read hit uses a slot), at a flush (written back), or at a TRIM
//! (dropped). The capacity counts slots of one mapping unit, as MQSim's counts pages.
//!
//! MQSim's "bloom filter" is an exact set of logical pages, cleared after a write is taken once
//! the clock has passed the next reset milestone (0 at the start: the first write clears it),
//! the milestone then set a window (1 s, `bloom_filter_reset_step`) later; the model keeps the
//! same rule. MQSim's cache capacity also holds the cold slots being written back (at most its
//! back-pressure bound, one page per plane); the model counts only the slots holding hot data.
//!
//! Off unless `[device.flash] hot_window_ms` is above 0 (every preset: off, no source gives a
//! drive's rule); the MQSim reader sets it for ADVANCED caching (1,000 ms, the capacity from
//! Data_Cache_Capacity).

use crate::fast_hash::{FastMap, FastSet};
use crate::time::Nanos;
use serde::Serialize;
use std::collections::VecDeque;

/// `[device.flash] hot_window_ms` and `hot_cache_kib`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct HotDataConfig {
    /// How long a mapping unit written back stays "recently written" (ms; 0: off, the default).
    pub window_ms: f64,
    /// DRAM holding hot data (KiB; slots of one mapping unit).
    pub capacity_kib: u32,
}

impl HotDataConfig {
    pub fn is_off(&self) -> bool {
        self.window_ms == 0.0
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.is_off() {
            if self.capacity_kib != 0 {
                return Err(format!(
                    "field `device.flash.hot_cache_kib` = {} with hot_window_ms 0 (no hot data kept): set hot_window_ms too",
                    self.capacity_kib
                ));
            }
            return Ok(());
        }
        if !(self.window_ms.is_finite() && self.window_ms > 0.0 && self.window_ms <= 3_600_000.0) {
            return Err(format!("field `device.flash.hot_window_ms` must be 0 (off) or in (0, 3600000], got {}", self.window_ms));
        }
        if !(4..=16 << 20).contains(&self.capacity_kib) {
            return Err(format!(
                "field `device.flash.hot_cache_kib` must be in [4 (one 4 KiB unit), 16777216] with hot_window_ms set, got {}",
                self.capacity_kib
            ));
        }
        Ok(())
    }

    fn window_ns(&self) -> Nanos {
        crate::time::round_ns(self.window_ms * 1e6)
    }
}

/// The hot data in DRAM and the set of mapping units written back in the current window.
#[derive(Clone, Debug, Default)]
pub struct HotData {
    window_ns: Nanos,
    /// 4 KiB units per mapping unit (MQSim's slot is one logical page).
    per_slot: u64,
    capacity_slots: usize,
    /// After a write taken later than this, the set is cleared (MQSim's reset milestone).
    next_reset_ns: Nanos,
    /// Mapping units written back since the last reset.
    written_back: FastSet<u32>,
    /// 4 KiB units whose data DRAM holds and flash does not.
    resident: FastSet<u32>,
    /// Mapping units holding resident units (MQSim's dirty slots): the sequence number of their
    /// last use and how many of their units are resident.
    slots: FastMap<u32, (u64, u32)>,
    /// Slots, least recently used first; an entry whose sequence number is not the slot's
    /// current one is stale.
    lru: VecDeque<(u64, u32)>,
    seq: u64,
}

impl HotData {
    /// None when `cfg` is off; `units_per_slot`: 4 KiB units per mapping unit.
    pub fn new(cfg: &HotDataConfig, units_per_slot: u64) -> Option<HotData> {
        (!cfg.is_off()).then(|| HotData {
            window_ns: cfg.window_ns(),
            per_slot: units_per_slot,
            capacity_slots: (cfg.capacity_kib as u64 / 4 / units_per_slot) as usize,
            ..HotData::default()
        })
    }

    /// Whether a write to `mapping_unit` now is hot (the unit was written back in this window).
    pub fn is_hot(&self, mapping_unit: u32) -> bool {
        self.written_back.contains(&mapping_unit)
    }

    /// A cold write to `mapping_unit` is written back.
    pub fn note_written_back(&mut self, mapping_unit: u32) {
        self.written_back.insert(mapping_unit);
    }

    /// A write's units `units` of mapping unit `mu` (of `per` units): hot, held in DRAM (false),
    /// or cold, written back (true). A cold one takes the units held from an earlier window out
    /// of DRAM, written back with it; those it does not write itself go to `carried`. (MQSim
    /// writes back only the write's own sectors, reads the rest of the page from flash and drops
    /// the slot, losing held data that flash lacks; the model keeps it and reads nothing for it.)
    pub fn take_page(&mut self, mu: u64, per: u64, units: &std::ops::Range<u64>, carried: &mut Vec<u32>) -> bool {
        if self.is_hot(mu as u32) {
            for lpn in units.clone() {
                self.hold(lpn as u32);
            }
            return false;
        }
        self.note_written_back(mu as u32);
        for lpn in mu * per..(mu + 1) * per {
            if self.holds(lpn as u32) {
                self.release(lpn as u32);
                if !units.contains(&lpn) {
                    carried.push(lpn as u32);
                }
            }
        }
        true
    }

    /// A write was taken at `at`: the window restarts if its milestone has passed.
    pub fn write_taken(&mut self, at: Nanos) {
        if at > self.next_reset_ns {
            self.written_back.clear();
            self.next_reset_ns = at.saturating_add(self.window_ns);
        }
    }

    #[inline]
    pub fn holds(&self, lpn: u32) -> bool {
        !self.resident.is_empty() && self.resident.contains(&lpn)
    }

    fn slot_of(&self, lpn: u32) -> u32 {
        (lpn as u64 / self.per_slot) as u32
    }

    /// `lpn`'s slot becomes the most recently used.
    fn use_slot(&mut self, slot: u32, added: u32) {
        self.seq += 1;
        let e = self.slots.entry(slot).or_insert((0, 0));
        *e = (self.seq, e.1 + added);
        self.lru.push_back((self.seq, slot));
        if self.lru.len() > 2 * self.slots.len() + 64 {
            let slots = &self.slots;
            self.lru.retain(|&(s, m)| slots.get(&m).is_some_and(|e| e.0 == s));
        }
    }

    /// `lpn`'s new data stays in DRAM (its slot the most recently used).
    pub fn hold(&mut self, lpn: u32) {
        let added = self.resident.insert(lpn) as u32;
        self.use_slot(self.slot_of(lpn), added);
    }

    /// A read found `lpn` held: its slot becomes the most recently used (MQSim's `Get_slot`).
    pub fn touch(&mut self, lpn: u32) {
        self.use_slot(self.slot_of(lpn), 0);
    }

    /// `lpn` is no longer held (written back by a cold write, or trimmed).
    pub fn release(&mut self, lpn: u32) {
        if self.resident.is_empty() || !self.resident.remove(&lpn) {
            return;
        }
        let slot = self.slot_of(lpn);
        let e = self.slots.get_mut(&slot).expect("a held unit's slot");
        e.1 -= 1;
        if e.1 == 0 {
            self.slots.remove(&slot);
        }
    }

    /// While more slots are held than the capacity allows, the least recently used leaves with
    /// all its held units (to be written back together): appended to `out`, in unit order.
    pub fn evict_over_capacity(&mut self, out: &mut Vec<u32>) {
        while self.slots.len() > self.capacity_slots {
            let Some((s, slot)) = self.lru.pop_front() else { break };
            if self.slots.get(&slot).is_some_and(|e| e.0 == s) {
                self.slots.remove(&slot);
                let first = slot as u64 * self.per_slot;
                for lpn in first..first + self.per_slot {
                    if self.resident.remove(&(lpn as u32)) {
                        out.push(lpn as u32);
                    }
                }
            }
        }
    }

    /// Every held unit leaves (a flush writes them back), in unit order.
    pub fn drain(&mut self, out: &mut Vec<u32>) {
        out.extend(self.resident.drain());
        out.sort_unstable();
        self.slots.clear();
        self.lru.clear();
    }

    pub fn held_units(&self) -> usize {
        self.resident.len()
    }

    pub fn held_slots(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(capacity_kib: u32) -> HotData {
        HotData::new(&HotDataConfig { window_ms: 1000.0, capacity_kib }, 1).unwrap()
    }

    #[test]
    fn a_unit_written_back_in_the_window_is_hot_until_the_window_restarts() {
        let mut h = on(1024);
        assert!(HotData::new(&HotDataConfig::default(), 1).is_none());
        // MQSim's milestone starts at 0: the first write taken after time 0 clears the set.
        h.note_written_back(7);
        h.write_taken(5);
        assert!(!h.is_hot(7), "cleared by the first write after 0");
        h.note_written_back(7);
        h.write_taken(10);
        assert!(h.is_hot(7), "the milestone is 5 + 1 s");
        h.write_taken(1_000_000_005);
        assert!(h.is_hot(7), "not past the milestone");
        h.write_taken(1_000_000_006);
        assert!(!h.is_hot(7), "past it: cleared");
    }

    #[test]
    fn the_least_recently_used_slot_leaves_when_full() {
        let mut h = on(12); // three slots of one unit
        for lpn in [1, 2, 3] {
            h.hold(lpn);
        }
        h.hold(1); // rewritten: most recent again
        h.hold(4);
        let mut out = Vec::new();
        h.evict_over_capacity(&mut out);
        assert_eq!(out, [2]);
        assert!(h.holds(1) && !h.holds(2) && h.holds(3) && h.holds(4));
        h.release(3);
        h.hold(5);
        h.evict_over_capacity(&mut out);
        assert_eq!(out, [2], "room freed by the release");
        h.touch(1); // read: most recent (MQSim's Get_slot)
        h.hold(6);
        h.evict_over_capacity(&mut out);
        assert_eq!(out, [2, 4]);
        let mut all = Vec::new();
        h.drain(&mut all);
        assert_eq!(all, [1, 5, 6]);
        assert_eq!((h.held_units(), h.held_slots()), (0, 0));
    }

    /// Slots are mapping units (MQSim's logical pages): two units of one 8 KiB slot take one,
    /// and leave together.
    #[test]
    fn a_slot_is_a_mapping_unit_and_leaves_whole() {
        let mut h = HotData::new(&HotDataConfig { window_ms: 1000.0, capacity_kib: 16 }, 2).unwrap();
        for lpn in [0, 1, 2, 4] {
            h.hold(lpn);
        }
        assert_eq!((h.held_units(), h.held_slots()), (4, 3), "units 0 and 1 share slot 0");
        let mut out = Vec::new();
        h.evict_over_capacity(&mut out);
        assert_eq!(out, [0, 1], "two slots fit: the oldest leaves with both its units");
        h.release(2);
        assert_eq!((h.held_units(), h.held_slots()), (1, 1));
    }

    #[test]
    fn the_lru_list_stays_bounded_under_rewrites() {
        let mut h = on(1024);
        for i in 0..10_000u32 {
            h.hold(i % 3);
        }
        assert!(h.lru.len() <= 2 * 3 + 64 + 1, "{}", h.lru.len());
        assert_eq!((h.held_units(), h.held_slots()), (3, 3));
        let mut out = Vec::new();
        h.evict_over_capacity(&mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn fields_are_checked() {
        assert!(HotDataConfig::default().validate().is_ok());
        let e = HotDataConfig { window_ms: 0.0, capacity_kib: 8 }.validate().unwrap_err();
        assert!(e.contains("hot_cache_kib") && e.contains("= 8"), "{e}");
        for w in [-1.0, f64::NAN, 4e6] {
            let e = HotDataConfig { window_ms: w, capacity_kib: 1024 }.validate().unwrap_err();
            assert!(e.contains("device.flash.hot_window_ms"), "{e}");
        }
        let e = HotDataConfig { window_ms: 1000.0, capacity_kib: 0 }.validate().unwrap_err();
        assert!(e.contains("device.flash.hot_cache_kib") && e.contains("got 0"), "{e}");
        assert!(HotDataConfig { window_ms: 1000.0, capacity_kib: 4 }.validate().is_ok());
    }
}
