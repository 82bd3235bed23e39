//! Hot data kept in the write cache, as MQSim's ADVANCED data cache keeps it
//! (ssd/Data_Cache_Manager_Flash_Advanced.cpp, `write_to_destage_buffer`, at 7ec40e3): a write
//! to a mapping unit (MQSim's logical page) not written back since the window last restarted is
//! cold, written back at once (the write buffer's path, MQSim's "eagerly write back cold
//! data"); a write to one that was is hot: its data stays in DRAM, is not programmed, and reads
//! of it are served from DRAM until it leaves. It leaves when a later cold write covers its
//! mapping unit (written back then: MQSim updates the slot and writes the write's own sectors
//! back, the rest read from flash), when the cache is full and it is the least recently written
//! (written back: MQSim's LRU eviction of a dirty slot), at a flush (written back), or at a
//! TRIM (dropped).
//!
//! MQSim's "bloom filter" is an exact set of logical pages, cleared after a write is taken once
//! the clock has passed the next reset milestone (0 at the start: the first write clears it),
//! the milestone then set a window (1 s, `bloom_filter_reset_step`) later; the model keeps the
//! same rule. MQSim's cache capacity also holds the cold slots being written back (at most its
//! back-pressure bound, one page per plane); the model counts only the hot units against it.
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
    /// DRAM holding hot data (KiB).
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
    capacity_units: usize,
    /// After a write taken later than this, the set is cleared (MQSim's reset milestone).
    next_reset_ns: Nanos,
    /// Mapping units written back since the last reset.
    written_back: FastSet<u32>,
    /// 4 KiB units whose data DRAM holds and flash does not, each with the sequence number of
    /// its last hot write.
    resident: FastMap<u32, u64>,
    /// Resident units, least recently written first; an entry whose sequence number is not the
    /// unit's current one is stale.
    lru: VecDeque<(u64, u32)>,
    seq: u64,
}

impl HotData {
    /// None when `cfg` is off.
    pub fn new(cfg: &HotDataConfig) -> Option<HotData> {
        (!cfg.is_off()).then(|| HotData {
            window_ns: cfg.window_ns(),
            capacity_units: (cfg.capacity_kib / 4) as usize,
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

    /// A write was taken at `at`: the window restarts if its milestone has passed.
    pub fn write_taken(&mut self, at: Nanos) {
        if at > self.next_reset_ns {
            self.written_back.clear();
            self.next_reset_ns = at.saturating_add(self.window_ns);
        }
    }

    #[inline]
    pub fn holds(&self, lpn: u32) -> bool {
        !self.resident.is_empty() && self.resident.contains_key(&lpn)
    }

    /// `lpn`'s new data stays in DRAM (most recently written).
    pub fn hold(&mut self, lpn: u32) {
        self.seq += 1;
        self.resident.insert(lpn, self.seq);
        self.lru.push_back((self.seq, lpn));
        if self.lru.len() > 2 * self.resident.len() + 64 {
            let resident = &self.resident;
            self.lru.retain(|&(s, l)| resident.get(&l) == Some(&s));
        }
    }

    /// `lpn` is no longer held (written back by a cold write, or trimmed).
    pub fn release(&mut self, lpn: u32) {
        if !self.resident.is_empty() {
            self.resident.remove(&lpn);
        }
    }

    /// While more units are held than the capacity allows, the least recently written leaves
    /// (to be written back): appended to `out`.
    pub fn evict_over_capacity(&mut self, out: &mut Vec<u32>) {
        while self.resident.len() > self.capacity_units {
            let Some((s, lpn)) = self.lru.pop_front() else { break };
            if self.resident.get(&lpn) == Some(&s) {
                self.resident.remove(&lpn);
                out.push(lpn);
            }
        }
    }

    /// Every held unit leaves (a flush writes them back), in unit order.
    pub fn drain(&mut self, out: &mut Vec<u32>) {
        out.extend(self.resident.drain().map(|(lpn, _)| lpn));
        out.sort_unstable();
        self.lru.clear();
    }

    pub fn held_units(&self) -> usize {
        self.resident.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(capacity_kib: u32) -> HotData {
        HotData::new(&HotDataConfig { window_ms: 1000.0, capacity_kib }).unwrap()
    }

    #[test]
    fn a_unit_written_back_in_the_window_is_hot_until_the_window_restarts() {
        let mut h = on(1024);
        assert!(HotData::new(&HotDataConfig::default()).is_none());
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
    fn the_least_recently_written_leaves_when_full() {
        let mut h = on(12); // three units
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
        h.hold(6);
        h.evict_over_capacity(&mut out);
        assert_eq!(out, [2, 1]);
        let mut all = Vec::new();
        h.drain(&mut all);
        assert_eq!(all, [4, 5, 6]);
        assert_eq!(h.held_units(), 0);
    }

    #[test]
    fn the_lru_list_stays_bounded_under_rewrites() {
        let mut h = on(1024);
        for i in 0..10_000u32 {
            h.hold(i % 3);
        }
        assert!(h.lru.len() <= 2 * 3 + 64 + 1, "{}", h.lru.len());
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
