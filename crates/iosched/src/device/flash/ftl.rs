//! A page-mapping FTL (after DFTL/MQSim's page-level mapping; their mapping cache, an option,
//! is mapping_cache.rs: the presets hold the whole table in DRAM): logical 4 KiB unit -> physical unit, physical ->
//! logical (for GC's copies), valid units per superblock, free superblocks per die, one write
//! frontier (open superblock) per die, TRIM. Allocation is static across dies (a logical
//! superpage-sized chunk always lives on die `chunk % dies`, MQSim's static allocation with
//! channel-first striping) and dynamic inside a die (the frontier). Each die keeps exactly its
//! share of the logical space, so GC on one die never waits for another.
//!
//! Over-provisioning: the logical capacity is the physical one divided by (1 + op). GC runs on
//! a die that needs a new frontier while it has at most `gc_free_superblocks` (>= 1) free:
//! the victim's valid units are copied to the frontier on the same die (copyback: no channel
//! transfer), then it is erased. Write amplification = (host + GC + padding units) / host units.

use super::full_layout::FullLayout;
use super::gc::{self, Candidate, GcPolicy};
use super::geometry::FlashGeometry;
use super::unit_map::UnitMap;
use std::collections::VecDeque;

pub const UNMAPPED: u32 = u32::MAX;

/// Flash operations one FTL call put on a die (its timing: reads x tR + programs x tPROG +
/// erases x tBERS).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DieWork {
    /// Multi-plane page reads (GC reading the victim's superpages that hold valid data).
    pub reads: u32,
    /// Superpages completed (multi-plane programs).
    pub programs: u32,
    pub erases: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FtlCounters {
    pub host_units: u64,
    pub gc_units: u64,
    /// Units programmed empty to close a superpage (a flush of a partial superpage).
    pub padding_units: u64,
    pub erases: u64,
    pub gc_runs: u64,
    pub trimmed_units: u64,
    /// Host units programmed in SLC mode (counted in `host_units` too; slc_cache.rs).
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub slc_units: u64,
    /// Units folded from the SLC cache into TLC (flash writes beyond the host's).
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub fold_units: u64,
    /// SLC-mode superblocks erased after folding.
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub slc_erases: u64,
    /// With a mapping cache (mapping_cache.rs): look-ups that found their entry cached, and
    /// those that did not.
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub map_hits: u64,
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub map_misses: u64,
    /// Translation pages read (misses on a page whose read is under way share it).
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub map_reads: u64,
    /// Units programmed for host writes (counted in `host_units`) that the host did not send:
    /// the rest of a mapping unit larger than 4 KiB (mapping_unit.rs).
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub merged_units: u64,
    /// Flash page reads of those units' old data before their program (read-modify-write).
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub update_reads: u64,
    /// Translation pages written back (read, updated, programmed) for evicted dirty entries.
    /// Not in the write amplification, which counts data units.
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub map_writes: u64,
    /// Host units of hot writes, kept in DRAM and not programmed (hot_data.rs).
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub hot_units: u64,
    /// Units held in DRAM written back later: the cache full, or a flush (counted in
    /// `host_units` when programmed).
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub hot_evictions: u64,
    /// Page programs that joined another plane's program at the same page index (a frontier
    /// per plane: plane_frontiers.rs); each saves a program's time on its die.
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub paired_programs: u64,
    /// Units a first read mapped to a page at their plane's frontier without a program
    /// (`on_the_fly_read_mapping`: MQSim's mapping of a never-written page on its first read).
    /// Not in the write amplification: nothing is programmed.
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub read_mapped_units: u64,
}

impl FtlCounters {
    /// Units programmed per unit the host wrote (1.0 with nothing written). Merged units are
    /// programmed for the host but not written by it.
    pub fn write_amplification(&self) -> f64 {
        let written = self.host_units.saturating_sub(self.merged_units);
        if written == 0 {
            return 1.0;
        }
        (self.host_units + self.gc_units + self.padding_units + self.fold_units) as f64 / written as f64
    }

    /// Each count combined with `o`'s by `f` (sums over an array, differences between times).
    pub fn zip(self, o: FtlCounters, f: impl Fn(u64, u64) -> u64) -> FtlCounters {
        FtlCounters {
            host_units: f(self.host_units, o.host_units),
            gc_units: f(self.gc_units, o.gc_units),
            padding_units: f(self.padding_units, o.padding_units),
            erases: f(self.erases, o.erases),
            gc_runs: f(self.gc_runs, o.gc_runs),
            trimmed_units: f(self.trimmed_units, o.trimmed_units),
            slc_units: f(self.slc_units, o.slc_units),
            fold_units: f(self.fold_units, o.fold_units),
            slc_erases: f(self.slc_erases, o.slc_erases),
            map_hits: f(self.map_hits, o.map_hits),
            map_misses: f(self.map_misses, o.map_misses),
            map_reads: f(self.map_reads, o.map_reads),
            map_writes: f(self.map_writes, o.map_writes),
            merged_units: f(self.merged_units, o.merged_units),
            update_reads: f(self.update_reads, o.update_reads),
            hot_units: f(self.hot_units, o.hot_units),
            hot_evictions: f(self.hot_evictions, o.hot_evictions),
            paired_programs: f(self.paired_programs, o.paired_programs),
            read_mapped_units: f(self.read_mapped_units, o.read_mapped_units),
        }
    }
}

/// The logical capacity in 4 KiB units of `geo` with `over_provisioning` (whole superpages,
/// the same on every die), or why GC could not work with so little spare space.
pub fn logical_units_for(geo: &FlashGeometry, over_provisioning: f64, gc_free_superblocks: u32) -> Result<u64, String> {
    // (A drive's own fields were checked by `FlashSpec::validate`; `geo` may be the array as
    // allocated with a frontier per plane.)
    geo.validate_as_allocated()?;
    let (ups, sbpd, dies) = (geo.units_per_superpage(), geo.superblocks_per_die(), geo.dies());
    let per_die_superpages = (geo.pages_per_block as f64 * sbpd as f64 / (1.0 + over_provisioning)).floor() as u64;
    // GC needs the spare space to hold more than the reserved free superblocks plus the
    // frontier: else it would find only full victims.
    let spare_superblocks = sbpd as f64 - per_die_superpages as f64 / geo.pages_per_block as f64;
    if spare_superblocks < gc_free_superblocks as f64 + 1.0 {
        return Err(format!(
            "device.flash: over-provisioning {over_provisioning} leaves {spare_superblocks:.2} spare superblocks per die, \
             fewer than gc_free_superblocks ({gc_free_superblocks}) + 1: raise over_provisioning or blocks_per_plane"
        ));
    }
    if gc_free_superblocks == 0 {
        return Err("field `device.flash.gc_free_superblocks` must be at least 1 (GC copies into a free superblock), got 0".into());
    }
    Ok(per_die_superpages * ups as u64 * dies as u64)
}

/// Whether `n` superblocks per die can be taken out of use (the static SLC region) and leave GC
/// its reserve.
pub fn check_reserve(geo: &FlashGeometry, over_provisioning: f64, gc_free_superblocks: u32, n: u64) -> Result<(), String> {
    let logical = logical_units_for(geo, over_provisioning, gc_free_superblocks)?;
    let logical_superblocks = logical as f64 / geo.dies() as f64 / geo.units_per_superblock() as f64;
    let spare = geo.superblocks_per_die() as f64 - logical_superblocks - n as f64;
    if spare < gc_free_superblocks as f64 + 1.0 {
        return Err(format!(
            "field `device.flash.slc_cache_gib`: the static SLC region takes {n} superblocks per die, leaving {spare:.2} spare, \
             fewer than gc_free_superblocks ({gc_free_superblocks}) + 1: a smaller region, more over_provisioning or blocks_per_plane"
        ));
    }
    Ok(())
}

#[derive(Clone)]
pub struct Ftl {
    geo: FlashGeometry,
    op: f64,
    ups: u32,
    upsb: u32,
    sbpd: u32,
    logical_units: u64,
    /// Logical -> physical and back; an entry never set is as `layout` says (unit_map.rs).
    l2p: UnitMap,
    p2l: UnitMap,
    /// Where preconditioning's first pass put every unit (None: a fresh drive, every entry
    /// never set is `UNMAPPED`).
    layout: Option<FullLayout>,
    /// Per global superblock (die * superblocks_per_die + index).
    valid: Vec<u32>,
    written: Vec<u32>,
    closed_at: Vec<u64>,
    free: Vec<VecDeque<u32>>,
    active: Vec<Option<u32>>,
    policy: GcPolicy,
    gc_free_superblocks: u32,
    in_gc: bool,
    /// Logical units GC moved since the last `take_gc_moved`, when recorded (a mapping cache
    /// updates their entries).
    gc_moved: Option<Vec<u32>>,
    /// Units placed so far (cost-benefit's clock).
    clock: u64,
    /// Logical units mapped.
    mapped: u64,
    pub counters: FtlCounters,
}

impl Ftl {
    /// A fresh (erased) drive. `over_provisioning` > 0: spare space as a fraction of the logical.
    pub fn new(geo: &FlashGeometry, over_provisioning: f64, policy: GcPolicy, gc_free_superblocks: u32) -> Result<Ftl, String> {
        let logical_units = logical_units_for(geo, over_provisioning, gc_free_superblocks)?;
        let (ups, upsb, sbpd, dies) = (geo.units_per_superpage(), geo.units_per_superblock(), geo.superblocks_per_die(), geo.dies());
        let total_sb = geo.superblocks() as usize;
        Ok(Ftl {
            geo: geo.clone(),
            op: over_provisioning,
            ups,
            upsb,
            sbpd,
            logical_units,
            l2p: UnitMap::new(logical_units as usize),
            p2l: UnitMap::new(geo.physical_units() as usize),
            layout: None,
            valid: vec![0; total_sb],
            written: vec![0; total_sb],
            closed_at: vec![0; total_sb],
            free: (0..dies).map(|_| (0..sbpd).collect()).collect(),
            active: vec![None; dies as usize],
            policy,
            gc_free_superblocks,
            in_gc: false,
            gc_moved: None,
            clock: 0,
            mapped: 0,
            counters: FtlCounters::default(),
        })
    }

    pub fn logical_units(&self) -> u64 {
        self.logical_units
    }
    pub fn geometry(&self) -> &FlashGeometry {
        &self.geo
    }
    /// The die a logical unit lives on (static allocation).
    pub fn die_of(&self, lpn: u64) -> u32 {
        ((lpn / self.ups as u64) % self.geo.dies() as u64) as u32
    }
    /// Physical unit of `lpn` (None: never written or trimmed).
    pub fn lookup(&self, lpn: u64) -> Option<u32> {
        if lpn >= self.logical_units {
            return None;
        }
        Some(self.l2p_of(lpn)).filter(|&p| p != UNMAPPED)
    }
    /// The die holding physical unit `ppn`, and its physical page's number (units of one page
    /// on one plane share a page read).
    pub fn die_and_page(&self, ppn: u32) -> (u32, u32) {
        (ppn / self.upsb / self.sbpd, ppn / self.geo.units_per_page())
    }
    /// The page index, within its block, of the last superpage written at `die`'s frontier
    /// (None before any).
    pub fn frontier_page(&self, die: u32) -> Option<u32> {
        let sb = self.active[die as usize]?;
        let written = self.written[self.global(die, sb)];
        (written > 0).then(|| (written - 1) / self.ups)
    }
    pub fn free_superblocks(&self, die: u32) -> usize {
        self.free[die as usize].len()
    }
    /// Logical units mapped (written and not trimmed, nor moved to the SLC cache).
    pub fn mapped_units(&self) -> u64 {
        self.mapped
    }

    /// Takes `n` free superblocks of every die out of use (an SLC region's blocks) on a fresh
    /// FTL, or why GC would then lack spare space.
    pub fn reserve_superblocks(&mut self, n: u64) -> Result<(), String> {
        check_reserve(&self.geo, self.op, self.gc_free_superblocks, n)?;
        for f in &mut self.free {
            f.drain(..n as usize);
        }
        Ok(())
    }

    /// From now on, GC records the logical units it moves (`take_gc_moved`).
    pub fn record_gc_moves(&mut self) {
        self.gc_moved.get_or_insert_with(Vec::new);
    }

    /// The logical units GC moved since the last call, appended to `out`.
    pub fn take_gc_moved(&mut self, out: &mut Vec<u32>) {
        if let Some(moved) = self.gc_moved.as_mut() {
            out.append(moved);
        }
    }

    /// Unmaps `lpn` (its data moved to the SLC cache: the TLC copy is stale), without
    /// counting a trim.
    pub fn unmap(&mut self, lpn: u64) {
        if let Some(old) = self.lookup(lpn) {
            self.invalidate(old);
            self.l2p.set(lpn as usize, UNMAPPED);
            self.mapped -= 1;
        }
    }

    /// Writes `lpns` (all on `die`; `UNMAPPED`: a place programmed empty) to the die's
    /// frontier, then pads to the superpage's end so that it is programmed; returns the die's
    /// work (GC included).
    pub fn write_superpage(&mut self, die: u32, lpns: &[u32]) -> DieWork {
        self.write_superpage_from(die, lpns, false)
    }

    /// As `write_superpage`; `folded`: the units come from the SLC cache (fold units, not
    /// host units).
    pub fn write_superpage_from(&mut self, die: u32, lpns: &[u32], folded: bool) -> DieWork {
        let mut work = DieWork::default();
        for &lpn in lpns {
            if lpn == UNMAPPED {
                // A hole of a mapping unit (mapping_unit.rs): its place is programmed empty.
                self.place(die, UNMAPPED, &mut work);
                self.counters.padding_units += 1;
                continue;
            }
            debug_assert_eq!(self.die_of(lpn as u64), die);
            self.place(die, lpn, &mut work);
            if folded {
                self.counters.fold_units += 1;
            } else {
                self.counters.host_units += 1;
            }
        }
        while self.active[die as usize].is_some_and(|sb| !self.written[self.global(die, sb)].is_multiple_of(self.ups)) {
            self.place(die, UNMAPPED, &mut work);
            self.counters.padding_units += 1;
        }
        work
    }

    /// Maps `lpns` (a whole superpage of `die`, all mapped) to the die's frontier without
    /// programming them: MQSim's first read of a page never written allocates it a page at its
    /// plane's frontier and reads from there (ssd/Address_Mapping_Unit_Page_Level.cpp,
    /// `online_create_entry_for_reads`). The old pages are invalidated as a write's are. The
    /// work returned is GC's (opening a block may run it) and the program of any superpage these
    /// units share with data GC moved (GC can leave the frontier inside a superpage: that
    /// superpage is padded to its end and programmed, as `write_superpage` does); a superpage
    /// made of these units only is not programmed.
    pub fn map_on_read(&mut self, die: u32, lpns: &[u32]) -> DieWork {
        debug_assert_eq!(lpns.len() as u32, self.ups, "a whole superpage");
        let mut work = DieWork::default();
        // This call's units in the superpage being filled. GC runs only when a block opens, at a
        // superpage boundary, so its units come before this call's in a superpage, never between
        // them: a superpage completed by `ups` of them holds nothing else.
        let mut ours = 0u32;
        for &lpn in lpns {
            debug_assert!(self.lookup(lpn as u64).is_some() && self.die_of(lpn as u64) == die);
            let completed = self.place(die, lpn, &mut work);
            ours += 1;
            if completed {
                if ours == self.ups {
                    work.programs -= 1; // this call's units only: nothing to program
                }
                ours = 0;
            }
            self.counters.read_mapped_units += 1;
        }
        // Left inside a superpage (after GC's data): padded to its end and programmed.
        while self.active[die as usize].is_some_and(|sb| !self.written[self.global(die, sb)].is_multiple_of(self.ups)) {
            self.place(die, UNMAPPED, &mut work);
            self.counters.padding_units += 1;
        }
        work
    }

    /// Units in the die's active superpage (0 when it is complete or none is open).
    #[cfg(test)]
    fn frontier_units(&self, die: u32) -> u32 {
        self.active[die as usize].map_or(0, |sb| self.written[self.global(die, sb)] % self.ups)
    }

    /// Preconditioning's first pass on a fresh drive (every logical unit written once, in
    /// order, a superpage-sized chunk to each die in turn): the same state as
    /// `write_superpage` chunk by chunk, with the maps left as laid out (full_layout.rs) and
    /// only the superblocks' state written. Only on a fresh drive (a caller's error
    /// otherwise: it panics).
    pub fn write_full_pass(&mut self) {
        let (dies, ups, upsb) = (self.geo.dies() as u64, self.ups as u64, self.upsb as u64);
        let fresh = self.clock == 0 && self.mapped == 0 && self.layout.is_none() && self.active.iter().all(Option::is_none);
        assert!(fresh, "preconditioning's full pass runs on a fresh drive");
        // The shapes the layout needs always hold: the logical capacity is whole superpages on
        // every die (`logical_units_for`), a superblock whole superpages, and the spare space
        // leaves GC's reserve beyond the filled superblocks (`logical_units_for`,
        // `check_reserve`), so the pass never reaches GC and never pads.
        debug_assert!(self.logical_units.is_multiple_of(ups * dies) && upsb.is_multiple_of(ups));
        let per_die_units = self.logical_units / dies;
        let superblocks = per_die_units.div_ceil(upsb) as usize;
        if superblocks == 0 {
            return;
        }
        debug_assert!(self.free.iter().all(|f| f.len() > superblocks + self.gc_free_superblocks as usize));
        let mut order = Vec::with_capacity(dies as usize);
        for die in 0..dies as u32 {
            let sbs: Vec<u32> = self.free[die as usize].drain(..superblocks).collect();
            for (k, &sb) in sbs.iter().enumerate() {
                let g = self.global(die, sb);
                let units = (per_die_units - k as u64 * upsb).min(upsb) as u32;
                (self.written[g], self.valid[g]) = (units, units);
                // A full superblock is closed when the die's next unit is placed: the units
                // of every die's chunks before that unit's chunk were placed by then.
                if k + 1 < superblocks {
                    let next_chunk_of_die = (k as u64 + 1) * upsb / ups;
                    self.closed_at[g] = (next_chunk_of_die * dies + die as u64) * ups;
                }
            }
            self.active[die as usize] = sbs.last().copied();
            order.push(sbs);
        }
        self.layout = Some(FullLayout::new(self.ups, self.upsb, self.sbpd, per_die_units, order));
        self.mapped = self.logical_units;
        self.clock = self.logical_units;
        self.counters.host_units += self.logical_units;
    }

    /// The physical unit logical `lpn` maps to (`UNMAPPED`: none).
    #[inline]
    fn l2p_of(&self, lpn: u64) -> u32 {
        self.l2p.get(lpn as usize, || self.layout.as_ref().map_or(UNMAPPED, |l| l.physical_of(lpn)))
    }

    /// The logical unit physical `ppn` holds (`UNMAPPED`: none).
    #[inline]
    fn p2l_of(&self, ppn: u64) -> u32 {
        self.p2l.get(ppn as usize, || self.layout.as_ref().map_or(UNMAPPED, |l| l.logical_of(ppn)))
    }

    /// TRIM: the units no longer hold data (GC will not copy them).
    pub fn trim(&mut self, lpn: u64) {
        if let Some(old) = self.lookup(lpn) {
            self.invalidate(old);
            self.l2p.set(lpn as usize, UNMAPPED);
            self.mapped -= 1;
            self.counters.trimmed_units += 1;
        }
    }

    fn global(&self, die: u32, sb: u32) -> usize {
        (die * self.sbpd + sb) as usize
    }

    fn invalidate(&mut self, ppn: u32) {
        self.p2l.set(ppn as usize, UNMAPPED);
        self.valid[(ppn / self.upsb) as usize] -= 1;
    }

    /// Places one unit (`UNMAPPED`: padding) at the die's frontier.
    /// Places `lpn` (or a hole) at the die's frontier; true when it completed a superpage (whose
    /// program `work` counts).
    fn place(&mut self, die: u32, lpn: u32, work: &mut DieWork) -> bool {
        let sb = match self.active[die as usize] {
            Some(sb) if self.written[self.global(die, sb)] < self.upsb => sb,
            full => {
                if let Some(sb) = full {
                    let g = self.global(die, sb);
                    self.closed_at[g] = self.clock;
                }
                self.active[die as usize] = None;
                self.open(die, work)
            }
        };
        let g = self.global(die, sb);
        let off = self.written[g];
        let ppn = g as u32 * self.upsb + off;
        self.written[g] += 1;
        if lpn != UNMAPPED {
            match self.lookup(lpn as u64) {
                Some(old) => self.invalidate(old),
                None => self.mapped += 1,
            }
            self.l2p.set(lpn as usize, ppn);
            self.p2l.set(ppn as usize, lpn);
            self.valid[g] += 1;
        }
        let completed = (off + 1).is_multiple_of(self.ups);
        if completed {
            work.programs += 1;
        }
        self.clock += 1;
        completed
    }

    /// Opens a free superblock as the die's frontier, collecting garbage first while the die
    /// is at its free-superblock threshold.
    fn open(&mut self, die: u32, work: &mut DieWork) -> u32 {
        if !self.in_gc {
            while self.free[die as usize].len() <= self.gc_free_superblocks as usize {
                if !self.collect(die, work) {
                    break;
                }
            }
        }
        // GC's copies opened a frontier that still has room: the unit goes there.
        if let Some(sb) = self.active[die as usize] {
            if self.written[self.global(die, sb)] < self.upsb {
                return sb;
            }
            let g = self.global(die, sb);
            self.closed_at[g] = self.clock;
        }
        let sb = self.free[die as usize].pop_front().expect("a free superblock (the spare space holds the GC reserve)");
        self.active[die as usize] = Some(sb);
        sb
    }

    /// One GC pass on `die`: false if no superblock would free any space.
    fn collect(&mut self, die: u32, work: &mut DieWork) -> bool {
        let active = self.active[die as usize];
        let base = self.global(die, 0);
        let candidates = (0..self.sbpd)
            .filter(|&sb| Some(sb) != active && self.written[base + sb as usize] == self.upsb)
            .map(|sb| Candidate { superblock: sb, valid: self.valid[base + sb as usize], closed_at: self.closed_at[base + sb as usize] });
        let Some(victim) = gc::pick(self.policy, candidates, self.upsb, self.clock) else {
            return false;
        };
        self.in_gc = true;
        self.counters.gc_runs += 1;
        let g = base + victim as usize;
        let first = g as u32 * self.upsb;
        // The moved units' map entries are scattered over the whole drive's table: read them
        // first (results unused), so that their cache misses overlap instead of coming one per
        // move; the moves then go in order as before.
        for ppn in first..first + self.upsb {
            let lpn = self.p2l_of(ppn as u64);
            if lpn != UNMAPPED {
                std::hint::black_box(self.l2p_of(lpn as u64));
            }
        }
        let mut last_page = u32::MAX;
        for ppn in first..first + self.upsb {
            let lpn = self.p2l_of(ppn as u64);
            if lpn == UNMAPPED {
                continue;
            }
            // One multi-plane read per superpage holding valid data.
            let superpage = ppn / self.ups;
            if superpage != last_page {
                work.reads += 1;
                last_page = superpage;
            }
            self.place(die, lpn, work);
            self.counters.gc_units += 1;
            if let Some(moved) = self.gc_moved.as_mut() {
                moved.push(lpn);
            }
        }
        debug_assert_eq!(self.valid[g], 0);
        self.written[g] = 0;
        self.free[die as usize].push_back(victim);
        self.counters.erases += 1;
        work.erases += 1;
        self.in_gc = false;
        true
    }

    /// The mapping's invariants: every logical unit mapped at most once and back-mapped,
    /// valid counts equal to the mapping's, free superblocks empty, every superblock free,
    /// open or closed. Err names the first broken one.
    pub fn check(&self) -> Result<(), String> {
        let mut valid = vec![0u32; self.valid.len()];
        for lpn in 0..self.l2p.len() as u64 {
            let ppn = self.l2p_of(lpn);
            if ppn == UNMAPPED {
                continue;
            }
            if self.p2l_of(ppn as u64) != lpn as u32 {
                return Err(format!("lpn {lpn} -> ppn {ppn} but ppn {ppn} -> {}", self.p2l_of(ppn as u64)));
            }
            valid[(ppn / self.upsb) as usize] += 1;
        }
        for ppn in 0..self.p2l.len() as u64 {
            let lpn = self.p2l_of(ppn);
            if lpn == UNMAPPED {
                continue;
            }
            if self.l2p_of(lpn as u64) != ppn as u32 {
                return Err(format!("ppn {ppn} claims lpn {lpn}, which maps to {}", self.l2p_of(lpn as u64)));
            }
            // Data only on programmed units: below its superblock's write frontier (a free
            // superblock has none written).
            let g = (ppn / self.upsb as u64) as usize;
            if ppn % self.upsb as u64 >= self.written[g] as u64 {
                return Err(format!("ppn {ppn} holds lpn {lpn} beyond its superblock's {} written units", self.written[g]));
            }
        }
        if valid != self.valid {
            return Err("valid-unit counts differ from the mapping".into());
        }
        if valid.iter().map(|&v| v as u64).sum::<u64>() != self.mapped {
            return Err(format!(
                "{} logical units counted as mapped, the mapping holds {}",
                self.mapped,
                valid.iter().map(|&v| v as u64).sum::<u64>()
            ));
        }
        for die in 0..self.geo.dies() {
            let free = &self.free[die as usize];
            let mut seen = vec![false; self.sbpd as usize];
            for &sb in free {
                let g = self.global(die, sb);
                if self.written[g] != 0 || self.valid[g] != 0 || seen[sb as usize] {
                    return Err(format!("die {die}: free superblock {sb} is written, valid or listed twice"));
                }
                seen[sb as usize] = true;
            }
            if let Some(a) = self.active[die as usize] {
                if seen[a as usize] {
                    return Err(format!("die {die}: the open superblock {a} is also free"));
                }
            }
            for lpn_die in (0..self.logical_units).step_by(self.ups as usize) {
                if self.die_of(lpn_die) == die {
                    if let Some(p) = self.lookup(lpn_die) {
                        if self.die_and_page(p).0 != die {
                            return Err(format!("lpn {lpn_die} of die {die} lies on die {}", self.die_and_page(p).0));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MQSim's on-the-fly read mapping through GC and trims (a full drive of one-plane dies with
    /// 8 KiB pages: two units per superpage): random first reads mapped, superpages written,
    /// single units trimmed (so GC can move an odd number of units and leave a frontier inside
    /// a superpage). After every mapping the frontier ends on a superpage boundary, the
    /// invariants hold, and a superpage made only of the mapped units is not programmed (a
    /// mapping that runs no GC and starts on a boundary returns no work).
    #[test]
    fn mapping_on_read_keeps_the_frontier_on_superpage_boundaries_through_gc_and_trims() {
        let geo =
            FlashGeometry { channels: 1, dies_per_channel: 2, planes_per_die: 1, blocks_per_plane: 12, pages_per_block: 4, page_kib: 8 };
        let mut f = Ftl::new(&geo, 0.5, GcPolicy::Greedy, 2).unwrap();
        f.write_full_pass();
        let (logical, ups) = (f.logical_units(), f.ups as u64);
        let mut x: u64 = 7;
        let (mut mapped, mut with_gc) = (0, 0);
        for _ in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let first = (x >> 33) % (logical / ups) * ups;
            let lpns: Vec<u32> = (first..first + ups).map(|l| l as u32).collect();
            let die = f.die_of(first);
            match (x >> 20) % 4 {
                0 => f.trim(first + (x >> 40) % ups),
                1 => {
                    f.write_superpage(die, &lpns);
                }
                _ if lpns.iter().all(|&l| f.lookup(l as u64).is_some()) => {
                    let (aligned, gc_before) = (f.frontier_units(die) == 0, f.counters.gc_runs);
                    let work = f.map_on_read(die, &lpns);
                    mapped += 1;
                    if f.counters.gc_runs == gc_before && aligned {
                        assert_eq!(work, DieWork::default(), "a superpage of mapped units only is not programmed");
                    } else {
                        with_gc += 1;
                    }
                    assert_eq!(f.frontier_units(die), 0, "the frontier ends on a superpage boundary");
                }
                _ => {}
            }
            f.check().unwrap();
        }
        assert!(mapped > 1_000 && with_gc > 10, "mapped {mapped}, with GC {with_gc}");
        assert_eq!(f.counters.read_mapped_units, mapped * ups);
        assert!(f.counters.padding_units > 0, "GC left a frontier inside a superpage at least once");
    }

    /// 1 die, 1 plane, 6 blocks of 2 pages of 4 KiB: 12 physical units.
    fn tiny() -> FlashGeometry {
        FlashGeometry { channels: 1, dies_per_channel: 1, planes_per_die: 1, blocks_per_plane: 6, pages_per_block: 2, page_kib: 4 }
    }

    /// Every entry of both maps, resolved (the layout's where never set).
    fn maps(f: &Ftl) -> (Vec<u32>, Vec<u32>) {
        ((0..f.l2p.len() as u64).map(|l| f.l2p_of(l)).collect(), (0..f.p2l.len() as u64).map(|p| f.p2l_of(p)).collect())
    }

    /// Preconditioning's first pass as laid out (only the superblocks' state written) leaves the
    /// FTL exactly as writing the same chunks unit by unit does, and both then age identically
    /// (overwrites, trims and GC under both policies), on several shapes, with and without
    /// superblocks reserved (an SLC region).
    #[test]
    fn the_full_pass_laid_out_equals_it_unit_by_unit() {
        let shapes = [
            (
                FlashGeometry {
                    channels: 2,
                    dies_per_channel: 2,
                    planes_per_die: 2,
                    blocks_per_plane: 16,
                    pages_per_block: 8,
                    page_kib: 8,
                },
                0.4,
                0,
            ),
            (
                FlashGeometry {
                    channels: 1,
                    dies_per_channel: 3,
                    planes_per_die: 1,
                    blocks_per_plane: 20,
                    pages_per_block: 3,
                    page_kib: 4,
                },
                0.5,
                0,
            ),
            (
                FlashGeometry {
                    channels: 2,
                    dies_per_channel: 1,
                    planes_per_die: 2,
                    blocks_per_plane: 24,
                    pages_per_block: 4,
                    page_kib: 4,
                },
                0.5,
                3,
            ),
        ];
        for (geo, op, reserved) in shapes {
            for policy in [GcPolicy::Greedy, GcPolicy::CostBenefit] {
                let new = || {
                    let mut f = Ftl::new(&geo, op, policy, 2).unwrap();
                    f.reserve_superblocks(reserved).unwrap();
                    f
                };
                let (mut laid, mut unit) = (new(), new());
                laid.write_full_pass();
                let ups = geo.units_per_superpage() as u64;
                let logical = unit.logical_units();
                for first in (0..logical).step_by(ups as usize) {
                    let lpns: Vec<u32> = (first..first + ups).map(|l| l as u32).collect();
                    unit.write_superpage(unit.die_of(first), &lpns);
                }
                let same = |a: &Ftl, b: &Ftl| {
                    assert_eq!(maps(a), maps(b));
                    assert_eq!((&a.valid, &a.written, &a.closed_at), (&b.valid, &b.written, &b.closed_at));
                    assert_eq!((&a.free, &a.active, a.clock, a.mapped, a.counters), (&b.free, &b.active, b.clock, b.mapped, b.counters));
                };
                same(&laid, &unit);
                laid.check().unwrap();
                for i in 0..logical * 3 {
                    let lpn = (i * 7919) % logical;
                    if i % 13 == 0 {
                        laid.trim(lpn);
                        unit.trim(lpn);
                        continue;
                    }
                    let die = laid.die_of(lpn);
                    assert_eq!(laid.write_superpage(die, &[lpn as u32]), unit.write_superpage(die, &[lpn as u32]));
                }
                same(&laid, &unit);
                laid.check().unwrap();
                assert!(laid.counters.gc_runs > 0, "the aging reached GC");
            }
        }
    }

    /// The laid-out pass writes no map entry (so the maps' calloc'd pages stay unmapped until a
    /// unit is written again; the memory itself is measured in docs/reproductions/flash/mqsim.md).
    #[test]
    fn the_full_pass_leaves_the_maps_unwritten() {
        let geo =
            FlashGeometry { channels: 2, dies_per_channel: 2, planes_per_die: 2, blocks_per_plane: 16, pages_per_block: 8, page_kib: 8 };
        let mut f = Ftl::new(&geo, 0.4, GcPolicy::Greedy, 2).unwrap();
        f.write_full_pass();
        assert!((0..f.l2p.len()).all(|i| f.l2p.get(i, || 0) == 0), "no l2p entry written");
        assert!((0..f.p2l.len()).all(|i| f.p2l.get(i, || 0) == 0), "no p2l entry written");
        assert_eq!(f.mapped_units(), f.logical_units());
    }

    /// `check` refuses a mapping consistent with itself but on units never programmed.
    #[test]
    fn check_refuses_data_beyond_a_superblocks_frontier() {
        let mut f = Ftl::new(&tiny(), 1.0, GcPolicy::Greedy, 1).unwrap();
        for lpn in 0..3 {
            f.write_superpage(0, &[lpn]);
        }
        f.check().unwrap();
        // lpn 2 sits at ppn 2 (block 1's first unit of 2, one written); move it to ppn 3.
        f.p2l.set(2, UNMAPPED);
        f.p2l.set(3, 2);
        f.l2p.set(2, 3);
        let e = f.check().unwrap_err();
        assert!(e.contains("beyond its superblock"), "{e}");
    }

    #[test]
    fn write_amplification_on_a_hand_case() {
        // 6 blocks x 2 units, op 1.0: 6 logical units; GC keeps 1 free block.
        let mut f = Ftl::new(&tiny(), 1.0, GcPolicy::Greedy, 1).unwrap();
        assert_eq!(f.logical_units(), 6);
        // Fill: units 0..6 in blocks 0,1,2 (2 each).
        for lpn in 0..6 {
            f.write_superpage(0, &[lpn]);
        }
        assert_eq!(f.counters.gc_runs, 0);
        // Overwrite 0, 2, 4: they go to blocks 3 and 4 (block 4 half full); blocks 0, 1, 2
        // each keep one valid unit (1, 3, 5). Free: block 5 only.
        for lpn in [0, 2, 4] {
            f.write_superpage(0, &[lpn]);
        }
        assert_eq!(f.free_superblocks(0), 1);
        assert_eq!(f.counters.gc_runs, 0);
        // Overwrite 0 again: fills block 4. Then 1: block 4 is full and only 1 block is free
        // -> GC. Valid units: blocks 0..3 hold 1 each (1, 3, 5, 2), block 4 two (full: never a
        // victim). Greedy, lowest index first: block 0 (unit 1 copied to block 5, block 0
        // erased: 1 free again, still at the threshold), then block 1 (unit 3 copied, block 5
        // full; 2 free). Unit 1 then goes to block 0.
        f.write_superpage(0, &[0]);
        f.write_superpage(0, &[1]);
        f.check().unwrap();
        assert_eq!(f.counters.gc_runs, 2);
        assert_eq!(f.counters.gc_units, 2);
        assert_eq!(f.counters.erases, 2);
        assert_eq!(f.counters.host_units, 11);
        assert_eq!(f.free_superblocks(0), 1);
        // (11 host + 2 copies) / 11.
        assert!((f.counters.write_amplification() - 13.0 / 11.0).abs() < 1e-12);
    }

    #[test]
    fn trim_unmaps_and_gc_does_not_copy_trimmed_units() {
        let mut f = Ftl::new(&tiny(), 1.0, GcPolicy::Greedy, 1).unwrap();
        for lpn in 0..6 {
            f.write_superpage(0, &[lpn]);
        }
        for lpn in 0..6 {
            f.trim(lpn);
            assert_eq!(f.lookup(lpn), None);
        }
        f.check().unwrap();
        // Everything trimmed: GC reclaims without a copy.
        for lpn in 0..6 {
            f.write_superpage(0, &[lpn]);
        }
        for lpn in 0..6 {
            f.write_superpage(0, &[lpn]);
        }
        f.check().unwrap();
        assert!(f.counters.erases > 0);
        assert_eq!(f.counters.gc_units, 0, "trimmed data is never copied");
        assert_eq!(f.counters.trimmed_units, 6);
    }

    #[test]
    fn padding_closes_a_partial_superpage() {
        let g = FlashGeometry { page_kib: 8, planes_per_die: 2, blocks_per_plane: 8, ..tiny() };
        let mut f = Ftl::new(&g, 1.0, GcPolicy::Greedy, 1).unwrap();
        // A superpage is 2 planes x 2 units = 4 units; writing 1 pads 3.
        let w = f.write_superpage(0, &[0]);
        assert_eq!(w.programs, 1);
        assert_eq!(f.counters.padding_units, 3);
        f.check().unwrap();
    }

    #[test]
    fn too_little_spare_space_is_refused() {
        let e = Ftl::new(&tiny(), 0.05, GcPolicy::Greedy, 1).err().unwrap();
        assert!(e.contains("over-provisioning 0.05"), "{e}");
    }
}
