//! An SLC write cache (Samsung's (Intelligent) TurboWrite and most consumer TLC drives' SLC
//! cache; issue 28; off by default). A region of each die's blocks runs in SLC mode (1 bit per
//! cell: a block holds a third of its TLC data), programmed and read at SLC latencies. Host
//! writes land there while it has room; it is migrated ("folded") to TLC in idle time: the
//! oldest SLC data is read (SLC tR) and programmed as a TLC superpage (tPROG, with any GC the
//! FTL needs) and the SLC blocks it emptied are erased. When it has no room, writes go direct to
//! TLC at the TLC rate (the data sheets' "after TurboWrite" figure), or, with
//! `fold = "idle-and-full"`, the oldest data is folded first to make room.
//!
//! Size: a fixed (static) part plus a dynamic part that borrows free user space: it is at most
//! the free (never written or trimmed) logical capacity / 3, the blocks of that space run at 1
//! bit per cell (Samsung: the Intelligent TurboWrite region "takes advantage of idle capacity").
//! The static part's TLC blocks (3x its size) are taken from each die's spare superblocks (the
//! over-provisioning), as a fixed SLC region would; the dynamic part's blocks are not taken
//! from the FTL (the FTL does not see them: GC pressure during a burst into the dynamic region
//! is not raised).
//!
//! The contract with the FTL and the dies (mod.rs): a unit programmed in SLC is unmapped from
//! the FTL (`Ftl::unmap`: its TLC copy is stale) and mapped here; folding hands units back to
//! the FTL (`Ftl::write_superpage` with `folded`: counted as fold units, not host units); a unit
//! written direct to TLC or trimmed is dropped here. Every logical unit is therefore mapped at
//! most once: in the FTL or here (`check`). Write amplification counts SLC programs as host
//! programs and folding as flash writes: (host + GC + padding + fold) / host.

use crate::fast_hash::FastMap;
use crate::time::{ms_to_ns, us_to_ns, Nanos};
use serde::Serialize;
use std::collections::VecDeque;

/// A logical unit's slot that holds no data (overwritten, trimmed, or padding).
const EMPTY: u32 = u32::MAX;

/// When the cache is migrated to TLC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FoldPolicy {
    /// In idle time only; a full cache sends writes direct to TLC (Samsung's TurboWrite as
    /// documented: "if a consecutive write operation (no idle time) exceeds the size of the
    /// buffer, the transfer will exit TurboWrite and proceed at an after-TurboWrite speed").
    #[default]
    Idle,
    /// Also when full: the oldest data is folded to make room, and writes still go to SLC.
    IdleAndFull,
}

impl FoldPolicy {
    pub const NAMES: [&'static str; 2] = ["idle", "idle-and-full"];
    pub fn parse(s: &str) -> Option<FoldPolicy> {
        match s {
            "idle" => Some(FoldPolicy::Idle),
            "idle-and-full" => Some(FoldPolicy::IdleAndFull),
            _ => None,
        }
    }
}

/// `[device.flash]`'s SLC fields.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SlcConfig {
    /// The fixed SLC region (GiB of data it holds; its blocks are 3x that of TLC).
    pub static_gib: f64,
    /// The most the dynamic part adds (GiB of data), while free user space allows.
    pub dynamic_gib: f64,
    /// SLC-mode multi-plane page program and page read.
    pub program_us: f64,
    pub read_us: f64,
    pub fold: FoldPolicy,
    /// The host idle time before folding starts (ms).
    pub fold_idle_ms: f64,
}

impl Default for SlcConfig {
    /// Off. The latencies are estimates (docs/devices-flash.md): a third of TLC's tR and 0.22
    /// of its tPROG, HP's white paper's generic SLC / TLC ratio, for a 500 us / 50 us TLC die.
    fn default() -> Self {
        SlcConfig { static_gib: 0.0, dynamic_gib: 0.0, program_us: 111.0, read_us: 17.0, fold: FoldPolicy::Idle, fold_idle_ms: 5.0 }
    }
}

impl SlcConfig {
    pub fn is_off(&self) -> bool {
        self.static_gib == 0.0 && self.dynamic_gib == 0.0
    }
    pub fn program_ns(&self) -> Nanos {
        us_to_ns(self.program_us)
    }
    pub fn read_ns(&self) -> Nanos {
        us_to_ns(self.read_us)
    }
    pub fn fold_idle_ns(&self) -> Nanos {
        ms_to_ns(self.fold_idle_ms)
    }

    pub fn validate(&self) -> Result<(), String> {
        super::spec::check_ranges(&[
            ("slc_cache_gib", self.static_gib, 0.0, 1e6),
            ("slc_dynamic_gib", self.dynamic_gib, 0.0, 1e6),
            ("slc_program_us", self.program_us, 1.0, 100_000.0),
            ("slc_read_us", self.read_us, 0.1, 10_000.0),
            ("slc_fold_idle_ms", self.fold_idle_ms, 0.0, 1e6),
        ])
    }

    /// Superblocks per die the static region takes from the spare space (3 TLC units per SLC
    /// unit), for `dies` dies of superblocks of `units_per_superblock`.
    pub fn static_superblocks_per_die(&self, dies: u32, units_per_superblock: u32) -> u64 {
        // u64 throughout: a region larger than any drive must be refused (check_reserve), not
        // wrapped to a few superblocks.
        (gib_units(self.static_gib).saturating_mul(3)).div_ceil(dies as u64 * units_per_superblock as u64)
    }
}

fn gib_units(gib: f64) -> u64 {
    (gib * (1u64 << 30) as f64 / super::geometry::UNIT_BYTES as f64).round() as u64
}

/// Counts of the cache's own work (beside the FTL's counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlcCounters {
    /// Host units programmed in SLC mode.
    pub slc_units: u64,
    /// SLC blocks erased after folding (superblocks' worth: a die's SLC superblock holds a
    /// third of a TLC superblock's units).
    pub slc_erases: u64,
    /// Folds (TLC superpages written from the cache).
    pub folds: u64,
}

/// One die's SLC log: slots in program order (a superpage's worth at a time).
#[derive(Clone, Debug, Default)]
struct DieLog {
    slots: VecDeque<u32>,
    /// Sequence number of `slots[0]`.
    head: u64,
    valid: u64,
}

#[derive(Clone)]
pub struct SlcCache {
    pub cfg: SlcConfig,
    ups: u64,
    /// Units an SLC superblock holds (a TLC superblock's / 3).
    slc_superblock_units: u64,
    static_per_die: u64,
    dynamic_per_die: u64,
    dies: u64,
    logs: Vec<DieLog>,
    /// Logical unit -> its slot's sequence number on its die.
    at: FastMap<u32, u64>,
    pub counters: SlcCounters,
}

impl SlcCache {
    pub fn new(cfg: &SlcConfig, dies: u32, units_per_superpage: u32, units_per_superblock: u32) -> SlcCache {
        let d = dies as u64;
        SlcCache {
            cfg: cfg.clone(),
            ups: units_per_superpage as u64,
            slc_superblock_units: (units_per_superblock as u64 / 3).max(units_per_superpage as u64),
            static_per_die: gib_units(cfg.static_gib) / d,
            dynamic_per_die: gib_units(cfg.dynamic_gib) / d,
            dies: d,
            logs: vec![DieLog::default(); dies as usize],
            at: FastMap::default(),
            counters: SlcCounters::default(),
        }
    }

    /// Slots `die` may hold with `free_units` of free user space (logical units neither in the
    /// FTL nor here): the static part plus the dynamic part, at most free space / 3.
    pub fn capacity(&self, free_units: u64) -> u64 {
        self.static_per_die + self.dynamic_per_die.min(free_units / 3 / self.dies)
    }

    /// Slots in use on `die` (valid, stale and padding until folded).
    pub fn used(&self, die: u32) -> u64 {
        self.logs[die as usize].slots.len() as u64
    }

    /// Whether a superpage fits on `die`.
    pub fn has_room(&self, die: u32, free_units: u64) -> bool {
        self.used(die) + self.ups <= self.capacity(free_units)
    }

    /// Valid units held over all dies.
    pub fn valid_units(&self) -> u64 {
        self.logs.iter().map(|l| l.valid).sum()
    }

    /// `lpn`'s SLC page key (slot / units per page) if it is here.
    pub fn page_of(&self, lpn: u32, units_per_page: u64) -> Option<u64> {
        self.at.get(&lpn).map(|&seq| seq / units_per_page)
    }

    pub fn contains(&self, lpn: u32) -> bool {
        self.at.contains_key(&lpn)
    }

    /// Drops `lpn`'s copy (written elsewhere, or trimmed): its slot stays used until folded.
    /// Drops `lpn`'s copy, if the cache holds one (true then).
    pub fn invalidate(&mut self, die: u32, lpn: u32) -> bool {
        let Some(seq) = self.at.remove(&lpn) else {
            return false;
        };
        let log = &mut self.logs[die as usize];
        log.slots[(seq - log.head) as usize] = EMPTY;
        log.valid -= 1;
        true
    }

    /// Programs `lpns` (all on `die`) as one SLC superpage, padded: the padding slots.
    pub fn program(&mut self, die: u32, lpns: &[u32]) -> u64 {
        for &lpn in lpns {
            self.invalidate(die, lpn);
            let log = &mut self.logs[die as usize];
            self.at.insert(lpn, log.head + log.slots.len() as u64);
            log.slots.push_back(lpn);
            log.valid += 1;
        }
        let log = &mut self.logs[die as usize];
        let pad = (self.ups - log.slots.len() as u64 % self.ups) % self.ups;
        log.slots.extend((0..pad).map(|_| EMPTY));
        self.counters.slc_units += lpns.len() as u64;
        pad
    }

    /// Takes the oldest slots of `die` until a TLC superpage's worth of valid units (or the
    /// log's end): the units into `out`; returns (SLC superpages read, SLC superblocks freed).
    pub fn take_fold(&mut self, die: u32, out: &mut Vec<u32>) -> (u32, u32) {
        out.clear();
        let ups = self.ups;
        let log = &mut self.logs[die as usize];
        let (mut reads, mut last_page) = (0, u64::MAX);
        let before = log.head;
        while (out.len() as u64) < ups {
            let Some(lpn) = log.slots.pop_front() else { break };
            let seq = log.head;
            log.head += 1;
            if lpn == EMPTY {
                continue;
            }
            self.at.remove(&lpn);
            log.valid -= 1;
            out.push(lpn);
            if seq / ups != last_page {
                reads += 1;
                last_page = seq / ups;
            }
        }
        // A partly taken superpage's stale tail goes too when nothing valid is left in it.
        while log.slots.front() == Some(&EMPTY) && !log.head.is_multiple_of(ups) {
            log.slots.pop_front();
            log.head += 1;
        }
        let erases = (log.head / self.slc_superblock_units - before / self.slc_superblock_units) as u32;
        self.counters.slc_erases += erases as u64;
        if !out.is_empty() {
            self.counters.folds += 1;
        }
        (reads, erases)
    }

    /// The cache's invariants: each unit here once, on its own die (`die_of`), its slot holding
    /// it, valid counts equal to the map's, and none also mapped in the FTL (`in_ftl`).
    pub fn check(&self, die_of: impl Fn(u32) -> u32, in_ftl: impl Fn(u32) -> bool) -> Result<(), String> {
        let mut valid = vec![0u64; self.logs.len()];
        for (&lpn, &seq) in &self.at {
            let die = die_of(lpn) as usize;
            let log = &self.logs[die];
            if seq < log.head || log.slots.get((seq - log.head) as usize) != Some(&lpn) {
                return Err(format!("SLC: lpn {lpn} -> slot {seq} of die {die}, which does not hold it"));
            }
            if in_ftl(lpn) {
                return Err(format!("SLC: lpn {lpn} is in the SLC cache and mapped in the FTL"));
            }
            valid[die] += 1;
        }
        for (die, log) in self.logs.iter().enumerate() {
            let held = log.slots.iter().filter(|&&l| l != EMPTY).count() as u64;
            if held != log.valid || valid[die] != log.valid {
                return Err(format!("SLC: die {die} holds {held} units, counts {}, maps {}", log.valid, valid[die]));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(static_units: u64) -> SlcCache {
        let cfg = SlcConfig { static_gib: (static_units * 4096) as f64 / (1u64 << 30) as f64, ..SlcConfig::default() };
        SlcCache::new(&cfg, 1, 4, 48)
    }

    #[test]
    fn programs_pad_overwrites_go_stale_and_folds_take_the_oldest() {
        let mut c = cache(16);
        assert_eq!(c.capacity(0), 16, "static only with no free space");
        assert_eq!(c.program(0, &[1, 2, 3]), 1, "a superpage of 4: one padding slot");
        assert_eq!(c.program(0, &[2, 5, 6, 7]), 0);
        assert_eq!((c.used(0), c.valid_units()), (8, 6), "2's first copy is stale");
        c.check(|_| 0, |_| false).unwrap();
        assert!(c.has_room(0, 0));
        c.program(0, &[8, 9, 10, 11]);
        c.program(0, &[12, 13, 14, 15]);
        assert!(!c.has_room(0, 0), "16 of 16 slots");
        let mut out = Vec::new();
        // The oldest 4 valid: 1, 3 (slots 0-3: 2 stale, padding), then 2, 5 of the second.
        assert_eq!(c.take_fold(0, &mut out), (2, 0));
        assert_eq!(out, vec![1, 3, 2, 5]);
        assert_eq!(c.used(0), 10);
        c.check(|_| 0, |_| false).unwrap();
        c.invalidate(0, 6);
        c.take_fold(0, &mut out);
        assert_eq!(out, vec![7, 8, 9, 10]);
        c.take_fold(0, &mut out);
        assert_eq!(out, vec![11, 12, 13, 14]);
        // SLC superblocks of 48 / 3 = 16 units: the 15 slots taken so far free none yet.
        assert_eq!(c.counters.slc_erases, 0);
        c.take_fold(0, &mut out);
        assert_eq!((out.clone(), c.used(0), c.counters.slc_erases), (vec![15], 0, 1));
        c.check(|_| 0, |_| false).unwrap();
    }

    #[test]
    fn the_dynamic_part_needs_free_user_space() {
        let g = 1.0 / (1u64 << 30) as f64 * 4096.0;
        let cfg = SlcConfig { static_gib: 8.0 * g, dynamic_gib: 32.0 * g, ..SlcConfig::default() };
        let c = SlcCache::new(&cfg, 2, 4, 48);
        assert_eq!(c.capacity(0), 4, "a full drive: the static part (8 units over 2 dies)");
        assert_eq!(c.capacity(30), 4 + 5, "30 free units / 3 over 2 dies");
        assert_eq!(c.capacity(1_000), 4 + 16, "at most the dynamic part");
        assert_eq!(cfg.static_superblocks_per_die(2, 48), 1, "8 x 3 TLC units in superblocks of 48 over 2 dies");
    }
}
