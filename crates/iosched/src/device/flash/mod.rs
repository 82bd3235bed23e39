//! A flash SSD beside the rotational disk, behind the same `Device` / `DeviceView` contracts:
//! channels, dies and planes (geometry.rs), tR / tPROG / tBERS and the channel and host link
//! (timing.rs), a page-mapping FTL with over-provisioning, a write frontier per die and TRIM
//! (ftl.rs), greedy or cost-benefit GC with write amplification counted (gc.rs), a DRAM write
//! buffer flushed in the background (buffer.rs), every die, channel and the link a resource
//! busy until a time (resources.rs), preconditioning to a full or aged drive
//! (precondition.rs; the full pass laid out by arithmetic, full_layout.rs, so that the maps,
//! unit_map.rs, hold only what a run touches), three presets (presets.rs). Written after MQSim (Tavakkol et al., FAST'18)
//! and SimpleSSD's descriptions, not their code.
//!
//! The drive serves many commands at once (`concurrent_commands`: every command its queue
//! holds): a command, when started, reserves what it needs in order: the controller's latency,
//! then per physical page the die (tR) and its channel (data out), then the link (a read); or
//! the link, then a buffer slot (a write; the program happens in the background when a die has
//! a superpage's worth). Scheduling inside the drive is therefore first come, first served on
//! each die and channel; the host link is full duplex on NVMe (read and write data on their own
//! timelines) and half duplex on SATA. An SLC write cache (slc_cache.rs: TurboWrite; on in the
//! consumer presets) takes host programs at SLC latencies while it has room and is folded to TLC
//! in idle time. A cached mapping table (mapping_cache.rs, DFTL / MQSim's CMT) is an option,
//! off in the presets (they hold the whole table in DRAM). Read priority and program/erase suspension are options, off by default (die_scheduling.rs,
//! reached through resources.rs's die contract).
//!
//! As a `DeviceView`: one cylinder, no seek; `positioning_time_ns` is the expected service time
//! (the die's backlog + tR + transfers for a read; the link for a write) so that SPTF-like
//! schedulers still pick sensibly.

pub mod buffer;
pub mod command_cycles;
pub mod die_scheduling;
pub mod dram;
pub mod ftl;
pub mod full_layout;
pub mod gc;
pub mod geometry;
pub mod hot_data;
pub mod mapping_cache;
pub mod mapping_unit;
pub mod mqsim_config;
pub mod plane_frontiers;
pub mod precondition;
pub mod presets;
pub mod resources;
pub mod slc_cache;
pub mod spec;
pub mod timing;
pub mod touched_units;
pub mod translation_reads;
pub mod unit_map;
pub mod waiting_writes;
mod write_calls;

use self::buffer::WriteBuffer;
use self::die_scheduling::OpKind;
use self::ftl::{DieWork, Ftl, FtlCounters, UNMAPPED};
use self::geometry::{UNIT_BYTES, UNIT_SECTORS};
use self::hot_data::HotData;
use self::mapping_cache::{Lookup, MappingCache};
use self::mapping_unit::MappingUnits;
use self::plane_frontiers::Pairing;
use self::resources::{push_work, Resources};
use self::slc_cache::{FoldPolicy, SlcCache};
pub use self::spec::FlashSpec;
use self::touched_units::TouchedUnits;
use self::translation_reads::TranslationReads;
use self::waiting_writes::WaitingWrites;
use super::{ArmPath, Device, DeviceView, DiscardSupport, Service, AWAITS_WAKE};
use crate::fast_hash::FastMap;
use crate::request::{Op, Request, RequestId, SECTOR_BYTES};
use crate::time::Nanos;

#[derive(Clone)]
pub struct FlashSsd {
    spec: FlashSpec,
    ftl: Ftl,
    buffer: WriteBuffer,
    res: Resources,
    /// FTL counters when preconditioning ended (the run's own are the difference).
    after_precondition: FtlCounters,
    head_sector: u64,
    /// Reused buffers.
    lpns: Vec<u32>,
    /// A read's flash pages (reused buffer).
    pages: Vec<PageRead>,
    moved: Vec<(u64, Nanos)>,
    /// The SLC write cache (None: off).
    slc: Option<SlcCache>,
    /// The last command's completion (the host is idle from then: folding's clock).
    last_completion_ns: Nanos,
    fold_lpns: Vec<u32>,
    /// The cached mapping table (None: the whole table in DRAM).
    mapping: Option<MappingCache>,
    /// Logical units folded or trimmed whose entries the mapping cache must update.
    relocated_lpns: Vec<u32>,
    /// Translation pages being read (later misses on a page share its read while it is under
    /// way; those done are dropped at each command).
    translation_reads: TranslationReads,
    /// Reads waiting for mapping entries under read priority, by request (`DeferredRead`).
    deferred_reads: FastMap<RequestId, DeferredRead>,
    /// Writes waiting for room in the write buffer under read priority (waiting_writes.rs).
    waiting_writes: WaitingWrites,
    /// Mapping units larger than 4 KiB: writes widened, their merged units (mapping_unit.rs).
    mapping_units: MappingUnits,
    /// Reused buffers of `merge_unsent`: each unsent unit with its page read's index, and the
    /// page reads' ends.
    unsent: Vec<(u32, Option<usize>)>,
    update_read_ends: Vec<Nanos>,
    /// The units the run has read or written, with `workload_page_status` and mapping units
    /// larger than 4 KiB or `on_the_fly_read_mapping` (touched_units.rs); None otherwise.
    touched: Option<TouchedUnits>,
    /// Hot data kept in DRAM (None: off; hot_data.rs).
    hot: Option<HotData>,
    /// Reused buffers of a write with hot data: its cold runs of units, the units evicted, the
    /// held units its cold mapping units carry back.
    cold_runs: Vec<std::ops::Range<u64>>,
    evicted: Vec<u32>,
    carried: Vec<u32>,
    /// Reused buffer of a write taken in calls (write_calls.rs): its pages.
    write_pages: Vec<write_calls::Page>,
    /// With a write frontier per plane, the single-page programs a page may join (None: off;
    /// plane_frontiers.rs).
    pairing: Option<Pairing>,
}

/// A read under read priority with page reads whose mapping entries are not usable when the
/// command starts (a translation read under way). A die under read priority serves reads in
/// the order they are placed on it, so a page read placed at once for the time its entry
/// arrives would go before reads that reach the die earlier but start later; each page read
/// is placed instead when the engine's clock reaches its time less the command overhead (the
/// instant at which a read starting then reaches its dies), in time order with the others.
#[derive(Clone, Debug)]
struct DeferredRead {
    start: Nanos,
    /// The page reads not yet placed.
    pages: Vec<PageRead>,
    /// When the pages placed so far are over the channel (and every entry is usable).
    flash_done: Nanos,
}

/// One flash page a read needs.
#[derive(Clone, Copy, Debug)]
struct PageRead {
    die: u32,
    /// The physical page (SLC pages offset by `SLC_PAGE_KEY`): consecutive units of one page
    /// are read together.
    page: u64,
    units: u32,
    /// The bytes it moves over the channel: its units', or with `sector_transfers` the
    /// sectors asked for.
    bytes: u64,
    tr_ns: Nanos,
    /// When the units' mapping entries are usable.
    from_ns: Nanos,
}

/// Bytes of a translation page a miss brings over the channel: the sector holding the entry
/// (MQSim's mapping read transfers one 512-byte sector, ssd/Address_Mapping_Unit_Page_Level.cpp).
const TRANSLATION_READ_BYTES: u64 = 512;

/// The sectors unit `lpn` of a write of `sectors` weighs in the write buffer: the whole unit, or
/// with `by_sector` the sectors the write covers in it (MQSim's back-pressure counts the
/// sectors the host wrote); at least one (a write of no sectors still takes its unit).
fn unit_weight(by_sector: bool, lpn: u64, sectors: &std::ops::Range<u64>) -> u8 {
    if !by_sector {
        return UNIT_SECTORS as u8;
    }
    let unit = lpn * UNIT_SECTORS..(lpn + 1) * UNIT_SECTORS;
    unit.end.min(sectors.end).saturating_sub(unit.start.max(sectors.start)).max(1) as u8
}

/// The write buffer's capacity in sectors: whole 4 KiB units, or under MQSim's back pressure
/// every sector of `write_buffer_kib` (MQSim's bound counts sectors).
fn buffer_sectors(spec: &FlashSpec) -> u64 {
    let bytes = spec.write_buffer_kib as u64 * 1024;
    if spec.mqsim_back_pressure {
        bytes / SECTOR_BYTES
    } else {
        bytes / UNIT_BYTES * UNIT_SECTORS
    }
}

/// SLC page keys beside TLC physical pages in a read's page list.
const SLC_PAGE_KEY: u64 = 1 << 40;

impl FlashSsd {
    /// A drive in the spec's preconditioned state (`seed` drives the aged state's overwrites).
    pub fn new(spec: FlashSpec, seed: u64) -> Result<FlashSsd, String> {
        Ok(Self::new_unless(spec, seed, &|| false)?.expect("never cancelled"))
    }

    /// [`FlashSsd::new`], giving up (None) if `cancelled` says so while preconditioning.
    pub fn new_unless(spec: FlashSpec, seed: u64, cancelled: &dyn Fn() -> bool) -> Result<Option<FlashSsd>, String> {
        spec.validate()?;
        // With a frontier per plane the FTL allocates planes as its dies (plane_frontiers.rs).
        let mut ftl = Ftl::new(&spec.ftl_geometry(), spec.over_provisioning, spec.gc_policy, spec.gc_free_superblocks)?;
        let g = &spec.geometry;
        let slc = (!spec.slc.is_off()).then(|| SlcCache::new(&spec.slc, g.dies(), g.units_per_superpage(), g.units_per_superblock()));
        if slc.is_some() {
            ftl.reserve_superblocks(spec.slc.static_superblocks_per_die(g.dies(), g.units_per_superblock()))?;
        }
        let mapping_units = MappingUnits::new(spec.mapping_unit_kib);
        if !precondition::precondition_unless(&mut ftl, spec.precondition, seed, mapping_units.units(), cancelled) {
            return Ok(None);
        }
        let after_precondition = ftl.counters;
        let dies = spec.geometry.dies();
        if !spec.mapping.is_off() {
            // After preconditioning: the run starts with the cache empty.
            ftl.record_gc_moves();
        }
        let spec_hot = spec.hot;
        let mapping_units_per = mapping_units.units();
        let touched = (spec.workload_page_status && (mapping_units.widens() || spec.on_the_fly_read_mapping))
            .then(|| TouchedUnits::new(ftl.logical_units()));
        let mapping = (!spec.mapping.is_off()).then(|| {
            let page_bytes = spec.geometry.units_per_page() as u64 * UNIT_BYTES;
            MappingCache::new(spec.mapping.capacity_entries(), spec.mapping.entries_per_translation_page(page_bytes))
        });
        Ok(Some(FlashSsd {
            buffer: WriteBuffer::new(buffer_sectors(&spec), spec.ftl_geometry().dies()),
            pairing: spec.plane_frontiers.then(|| Pairing::new(dies)),
            res: Resources::new(spec.chips(), spec.geometry.channels, &spec.die_scheduling, spec.full_duplex_link(), !spec.dram.is_off()),
            spec,
            ftl,
            after_precondition,
            head_sector: 0,
            lpns: Vec::new(),
            pages: Vec::new(),
            moved: Vec::new(),
            slc,
            last_completion_ns: 0,
            fold_lpns: Vec::new(),
            mapping,
            relocated_lpns: Vec::new(),
            translation_reads: TranslationReads::default(),
            deferred_reads: FastMap::default(),
            waiting_writes: WaitingWrites::default(),
            mapping_units,
            unsent: Vec::new(),
            update_read_ends: Vec::new(),
            touched,
            hot: HotData::new(&spec_hot, mapping_units_per),
            cold_runs: Vec::new(),
            evicted: Vec::new(),
            carried: Vec::new(),
            write_pages: Vec::new(),
        }))
    }

    /// The SLC cache, if on.
    pub fn slc(&self) -> Option<&SlcCache> {
        self.slc.as_ref()
    }

    /// The mapping's invariants (ftl.rs) and, with the SLC cache, every logical unit mapped at
    /// most once: in the FTL or in the cache.
    pub fn check(&self) -> Result<(), String> {
        self.ftl.check()?;
        match &self.slc {
            Some(c) => c.check(|lpn| self.ftl.die_of(lpn as u64), |lpn| self.ftl.lookup(lpn as u64).is_some()),
            None => Ok(()),
        }
    }

    /// With a frontier per plane under read priority: no program a page joined is laid out to
    /// start before that page's data is in (the die queue holds it: `hold_job_until`).
    pub fn check_pairing(&self) -> Result<(), String> {
        let Some(p) = &self.pairing else { return Ok(()) };
        for (die, job, ready) in p.joined() {
            if let Some((start, _)) = self.res.job_window(die, job) {
                if start < ready {
                    return Err(format!("die {die}: job {job} starts at {start} ns, before its joined page's data at {ready} ns"));
                }
            }
        }
        Ok(())
    }

    /// Free user space in units (neither in the FTL nor in the SLC cache).
    fn free_units(&self) -> u64 {
        let held = self.ftl.mapped_units() + self.slc.as_ref().map_or(0, |c| c.valid_units());
        self.ftl.logical_units().saturating_sub(held)
    }

    /// Folds the oldest SLC data of `die` into one TLC superpage from `ready` (SLC reads, the
    /// TLC program with any GC, erases of emptied SLC blocks): its end (None: nothing held).
    fn fold(&mut self, die: u32, ready: Nanos) -> Option<Nanos> {
        let slc = self.slc.as_mut()?;
        if slc.used(die) == 0 {
            return None;
        }
        let mut lpns = std::mem::take(&mut self.fold_lpns);
        let (reads, erases) = slc.take_fold(die, &mut lpns);
        let (slc_read, t) = (slc.cfg.read_ns(), &self.spec.timing);
        self.ftl.counters.slc_erases += erases as u64;
        let mut ops: Vec<(OpKind, Nanos)> = (0..reads).map(|_| (OpKind::Read, slc_read)).collect();
        if !lpns.is_empty() {
            let work = self.ftl.write_superpage_from(die, &lpns, true);
            push_work(&mut ops, work, t);
        }
        ops.extend((0..erases).map(|_| (OpKind::Erase, t.erase_ns())));
        if self.mapping.is_some() {
            // Folded units move from SLC to TLC pages, as GC's moves do.
            self.relocated_lpns.extend_from_slice(&lpns);
            self.relocated(ready);
        }
        self.fold_lpns = lpns;
        if ops.is_empty() {
            return Some(ready);
        }
        Some(self.res.die_ops(die, ready, ops).1)
    }

    /// Folding in the host's idle time: from `fold_idle_ms` after the last completion until
    /// `now`, every die folds while it is free and holds SLC data (done lazily when the next
    /// command arrives; a fold begun before `now` runs to its end).
    fn fold_idle(&mut self, now: Nanos) {
        let Some(slc) = &self.slc else { return };
        let from = self.last_completion_ns + slc.cfg.fold_idle_ns();
        if from >= now {
            return;
        }
        for die in 0..self.spec.geometry.dies() {
            let mut t = from;
            while self.slc.as_ref().is_some_and(|c| c.used(die) > 0) && self.res.die_busy_until(die, t) < now {
                match self.fold(die, t) {
                    Some(end) => t = end.max(t),
                    None => break,
                }
            }
        }
    }

    /// When `lpn`'s mapping entry is usable by an access that needs it from `t0`, and whether
    /// it was missing: at once without a mapping cache or on a hit (unless its translation page
    /// is still being read); on a miss after its translation page is read (a read under way for
    /// another miss on the page is shared). `update` marks the entry changed (a write).
    ///
    /// The model computes a buffered superpage's program, and so its entries' look-ups, when
    /// the write that fills it arrives: a look-up may issue a translation read at a time later
    /// than accesses computed after it. Such a read is not yet issued at `t0`: an access at
    /// `t0` does not wait for it (an entry it brought counts as missing), it reads the page
    /// itself, and the entry is usable from whichever read ends first.
    fn map_entry(&mut self, lpn: u64, t0: Nanos, update: bool) -> (Nanos, bool) {
        let entry = self.entry_of(lpn as u32);
        let Some(cache) = self.mapping.as_mut() else { return (t0, false) };
        let hit = cache.lookup(entry);
        if let Lookup::Hit { ready_ns, since_ns } = hit {
            if update {
                cache.mark_dirty(entry);
            }
            if since_ns <= t0 || ready_ns <= t0 {
                self.ftl.counters.map_hits += 1;
                return (ready_ns.max(t0), false);
            }
        }
        let page = cache.translation_page(entry);
        self.ftl.counters.map_misses += 1;
        let (since, ready) = self.translation_read(page, t0);
        match hit {
            Lookup::Hit { ready_ns, .. } if ready_ns <= ready => (ready_ns, true),
            Lookup::Hit { .. } => {
                self.mapping.as_mut().expect("mapping cache on").reread(entry, since, ready);
                (ready, true)
            }
            Lookup::Miss => {
                self.cache_entry(entry, since, ready, update);
                (ready, true)
            }
        }
    }

    /// (issued, end) of a read of translation page `page` for a miss at `t0`: a read of it
    /// issued by `t0` and not yet done is shared; otherwise one is issued, and kept for later
    /// misses to share unless a read of the page already recorded ends first.
    fn translation_read(&mut self, page: u64, t0: Nanos) -> (Nanos, Nanos) {
        let recorded = self.translation_reads.get(page);
        if let Some((since, end)) = recorded {
            if since <= t0 && end > t0 {
                return (since, end);
            }
        }
        let read = self.read_translation_page(page, t0);
        match recorded {
            Some((since, end)) if end > t0 && end <= read.1 => (since, end),
            _ => {
                self.translation_reads.insert(page, read.0, read.1);
                read
            }
        }
    }

    /// The mapping entry of unit `lpn` (an entry maps `units_per_entry` consecutive units).
    fn entry_of(&self, lpn: u32) -> u32 {
        lpn / self.spec.mapping.units_per_entry.max(1)
    }

    /// Caches `entry` (not cached), usable from `at` (its read issued at `since`), `dirty`
    /// if it changes: the least recently used entry goes first if the cache is full, its
    /// translation page written back from `at` if it had changed.
    fn cache_entry(&mut self, entry: u32, since: Nanos, at: Nanos, dirty: bool) {
        let cache = self.mapping.as_mut().expect("mapping cache on");
        if let Some(out) = cache.make_room() {
            if out.dirty {
                self.write_back_translation_page(out.entry, at);
            }
        }
        self.mapping.as_mut().expect("mapping cache on").insert(entry, since, at, dirty);
    }

    /// The die (the array's) of the FTL's die `ftl_die`: itself, or with a frontier per plane
    /// the die whose plane it is.
    #[inline]
    fn die_of_plane(&self, ftl_die: u32) -> u32 {
        if self.spec.plane_frontiers {
            ftl_die % self.spec.geometry.dies()
        } else {
            ftl_die
        }
    }

    /// The die holding translation page `page`: striped over the dies as data chunks are
    /// (MQSim allocates translation pages with the data's static plane scheme, keyed by page).
    fn translation_die(&self, page: u64) -> u32 {
        (page % self.spec.geometry.dies() as u64) as u32
    }

    /// Reads the sector of translation page `page` that a miss needs, issued at `t0`: when the
    /// read was issued (`t0`) and when its transfer ends.
    fn read_translation_page(&mut self, page: u64, t0: Nanos) -> (Nanos, Nanos) {
        let t = self.spec.timing;
        let die = self.translation_die(page);
        let ch = self.spec.geometry.channel_of(die) as usize;
        self.ftl.counters.map_reads += 1;
        (t0, self.read_out(die, ch, t0, t.read_ns(), TRANSLATION_READ_BYTES))
    }

    /// Writes back the translation page of an evicted dirty entry from `t0`, with every cached
    /// entry of that page changed since it was read (which become clean): the page is read,
    /// updated and programmed on its die, the channel carrying it in (a DFTL batch update).
    /// Nothing waits for it but the die and the channel. The translation pages' own flash
    /// space is not allocated (they are a 1/(entries per page) share of the data).
    fn write_back_translation_page(&mut self, entry: u32, t0: Nanos) {
        let cache = self.mapping.as_mut().expect("mapping cache on");
        let page = cache.translation_page(entry);
        cache.clean_page_of(entry);
        let t = self.spec.timing;
        let die = self.translation_die(page);
        let ch = self.spec.geometry.channel_of(die) as usize;
        let page_bytes = self.spec.geometry.units_per_page() as u64 * UNIT_BYTES;
        let read_end = self.read_out(die, ch, t0, t.read_ns(), page_bytes);
        // The page goes back in over the channel and is programmed.
        let program = vec![(OpKind::Program, t.program_ns())];
        if self.spec.cache_registers {
            let (_, in_end) = self.res.channel(ch).reserve(read_end, t.channel_ns(page_bytes));
            self.res.die_ops(die, in_end, program);
        } else {
            let in_ns = t.channel_ns(page_bytes) + self.program_command_ns(1);
            self.res.die_job_fed(die, ch, read_end, program, in_ns);
        }
        self.ftl.counters.map_writes += 1;
    }

    /// Updates the entries of units GC moved (taken from the FTL) and of `relocated_lpns`
    /// (folded or trimmed units), from `at`: a cached entry becomes dirty; a missing one is
    /// cached dirty without reading its translation page (MQSim's `Allocate_new_page_for_gc`;
    /// the model's TRIM does the same), which may push out a dirty entry to write back.
    fn relocated(&mut self, at: Nanos) {
        let mut lpns = std::mem::take(&mut self.relocated_lpns);
        self.ftl.take_gc_moved(&mut lpns);
        for &lpn in &lpns {
            let entry = self.entry_of(lpn);
            let cache = self.mapping.as_mut().expect("mapping cache on");
            if cache.contains(entry) {
                cache.mark_dirty(entry);
            } else {
                self.cache_entry(entry, at, at, true);
            }
        }
        lpns.clear();
        self.relocated_lpns = lpns;
    }

    pub fn spec(&self) -> &FlashSpec {
        &self.spec
    }
    pub fn ftl(&self) -> &Ftl {
        &self.ftl
    }
    /// The FTL's counters since preconditioning (the run's writes, GC and erases).
    pub fn run_counters(&self) -> FtlCounters {
        self.ftl.counters.zip(self.after_precondition, |a, b| a - b)
    }
    /// The counters preconditioning left (its own write amplification).
    pub fn precondition_counters(&self) -> FtlCounters {
        self.after_precondition
    }

    /// TRIM (ATA DATA SET MANAGEMENT / NVMe deallocate) of whole 4 KiB units in the range.
    pub fn trim(&mut self, start_sector: u64, sectors: u64) {
        for lpn in self.whole_units(start_sector, sectors) {
            self.ftl.trim(lpn);
            if let Some(h) = self.hot.as_mut() {
                h.release(lpn as u32);
            }
            // A unit whose data the SLC cache holds is not mapped in the FTL: count its trim here.
            if let Some(c) = self.slc.as_mut() {
                if c.invalidate(self.ftl.die_of(lpn), lpn as u32) {
                    self.ftl.counters.trimmed_units += 1;
                }
            }
        }
    }

    /// Whether logical unit `lpn` holds data (mapped in TLC, or in the SLC cache).
    fn holds_data(&self, lpn: u64) -> bool {
        self.ftl.lookup(lpn).is_some() || self.slc.as_ref().is_some_and(|c| c.contains(lpn as u32))
    }

    /// The logical units wholly inside `sectors` sectors from `start_sector` (what a TRIM unmaps).
    fn whole_units(&self, start_sector: u64, sectors: u64) -> std::ops::Range<u64> {
        let first = start_sector.div_ceil(UNIT_SECTORS);
        let end = ((start_sector + sectors) / UNIT_SECTORS).min(self.ftl.logical_units());
        first..end.max(first)
    }

    /// One command `req` started at `now`: the drive's state brought up to `now`, `serve` run,
    /// its completion noted.
    fn command(&mut self, req: &Request, now: Nanos, serve: impl FnOnce(&mut Self) -> Service) -> Service {
        self.head_sector = req.start_sector + req.size_sectors as u64;
        // Idle folding before pruning (it may start before `now`, on timelines kept until now).
        self.fold_idle(now);
        self.res.prune(now);
        // Translation reads done by now are shared by no later miss (each starts at `now` or later).
        self.translation_reads.drop_done(now);
        if self.spec.on_the_fly_read_mapping && req.op == Op::Read {
            self.map_first_reads(req, now);
        }
        // The request's units only when the run keeps them (units_of borrows the drive).
        if self.touched.is_some() && matches!(req.op, Op::Read | Op::Write) {
            let units = self.units_of(req);
            if let Some(t) = self.touched.as_mut() {
                t.touch(units);
            }
        }
        let s = serve(self);
        self.last_completion_ns = self.last_completion_ns.max(s.completion_ns);
        s
    }

    /// `on_the_fly_read_mapping`: each mapping unit of `req` that the run has neither read nor
    /// written, and that holds data on flash, is mapped to a page at its plane's frontier
    /// before the read (no program; GC it makes room with runs on the die from `now`), as
    /// MQSim's first read of a never-written page allocates it one. The read then reads there,
    /// looking its entry up as before. The entry is not made dirty: MQSim queues the
    /// translation write of a changed entry but never runs it, and a dirty entry here would be
    /// written back once the cache is full (random reads at QD 16 on MQSim's drive: 214 -> 280
    /// us at 600,000 requests, when 45,205 translation pages were written).
    fn map_first_reads(&mut self, req: &Request, now: Nanos) {
        if self.touched.is_none() {
            return;
        }
        let wide = self.mapping_units.widen(self.units_of(req), self.ftl.logical_units());
        let per = self.mapping_units.units();
        let mut lpns = std::mem::take(&mut self.lpns);
        let mut first = wide.start;
        while first < wide.end {
            lpns.clear();
            lpns.extend((first..first + per).map(|l| l as u32));
            first += per;
            let touched = self.touched.as_ref().expect("checked above");
            if lpns.iter().any(|&l| touched.is_touched(l as u64) || self.ftl.lookup(l as u64).is_none()) {
                continue;
            }
            let die = self.ftl.die_of(lpns[0] as u64);
            let work = self.ftl.map_on_read(die, &lpns);
            if work != DieWork::default() {
                let array_die = die % self.spec.geometry.dies();
                self.die_work(array_die, now, work, None);
                if self.mapping.is_some() {
                    self.relocated(now); // the units GC moved
                }
            }
        }
        self.lpns = lpns;
    }

    /// A discard command of one range or of several (NVMe Dataset Management with one range
    /// per bio: a multi-range discard): the controller's command latency once, no flash
    /// operation and no data over the link (the 16-byte range entries, up to 4 KiB for 256, are
    /// not counted; no source gives a drive's time per range); the FTL unmaps the whole units of
    /// each range, in order (`unmap_range`).
    fn discard_ranges(&mut self, ranges: &[Request], now: Nanos) -> Service {
        for r in ranges {
            self.unmap_range(r, now);
        }
        Service { dispatch_ns: now, completion_ns: now + self.spec.timing.overhead_ns(), ..Service::default() }
    }

    /// Unmaps the whole units of `req`'s range. Units still in the write buffer are programmed
    /// first (their die's superpage, padded), so that the unmapping is not undone by a later
    /// program: a drive would drop them instead.
    fn unmap_range(&mut self, req: &Request, now: Nanos) {
        for lpn in self.units_of(req) {
            let die = self.ftl.die_of(lpn);
            while self.buffer.contains(die, lpn as u32) {
                self.program(die, now, now);
            }
        }
        // With a mapping cache, the entries of units holding data change (to unmapped).
        if self.mapping.is_some() {
            for lpn in self.whole_units(req.start_sector, req.size_sectors as u64) {
                if self.holds_data(lpn) {
                    self.relocated_lpns.push(lpn as u32);
                }
            }
        }
        self.trim(req.start_sector, req.size_sectors as u64);
        if self.mapping.is_some() {
            self.relocated(now);
        }
    }

    fn units_of(&self, req: &Request) -> std::ops::Range<u64> {
        let first = req.start_sector / UNIT_SECTORS;
        let end = (req.start_sector + req.size_sectors.max(1) as u64).div_ceil(UNIT_SECTORS);
        first..end.min(self.ftl.logical_units())
    }

    /// Programs one superpage's worth of `die`'s buffered units (padding if fewer), data ready
    /// at `ready_ns`: the channel carries it to the die, which programs (after any GC it needs).
    /// With a mapping cache their entries are looked up at `lookup_ns` (no later than
    /// `ready_ns`).
    fn program(&mut self, die: u32, lookup_ns: Nanos, ready_ns: Nanos) {
        let ups = self.ftl.geometry().units_per_superpage() as usize;
        let mut lpns = std::mem::take(&mut self.lpns);
        let host_sectors = self.buffer.take(die, ups, &mut lpns);
        if lpns.is_empty() {
            self.lpns = lpns;
            return;
        }
        // With a mapping cache, the program is issued once every unit's entry is cached (a
        // missing one read first), and the entries become dirty. The look-ups are made when the
        // command that fills the superpage arrives (MQSim translates a write-back when it
        // dispatches it, at the write's arrival), not when the data is ready: a write that
        // waits for room in the buffer would otherwise issue translation reads later than
        // commands the model serves after it, out of the time order the die queues assume.
        // Merged units' data is in DRAM once their update reads are over; holes (UNMAPPED from
        // here on) are programmed empty.
        let merges = self.mapping_units.take(&mut lpns);
        let mut ready_ns = ready_ns.max(merges.ready_ns);
        self.ftl.counters.merged_units += merges.merged;
        if self.mapping.is_some() {
            for &lpn in lpns.iter().filter(|&&l| l != UNMAPPED) {
                ready_ns = ready_ns.max(self.map_entry(lpn as u64, lookup_ns, true).0);
            }
        }
        let t = &self.spec.timing;
        let ch = self.spec.geometry.channel_of(die) as usize;
        // The data goes over the channel into the die's cache register, then the die programs:
        // in SLC mode if the cache has room (folding first when full, by policy), else in TLC
        // (after the reads, copies and erase of any GC it needs). Without cache registers the
        // die takes the data over the channel as its program begins (`feed`).
        let in_bytes = if self.spec.sector_transfers { host_sectors as u64 * SECTOR_BYTES } else { ups as u64 * UNIT_BYTES };
        let in_ns = t.channel_ns(in_bytes) + self.program_command_ns(self.ftl.geometry().planes_per_die);
        let (mut ready, feed) =
            if self.spec.cache_registers { (self.res.channel(ch).reserve(ready_ns, in_ns).1, None) } else { (ready_ns, Some((ch, in_ns))) };
        let mut slc_room = false;
        if let Some(policy) = self.slc.as_ref().map(|c| c.cfg.fold) {
            let free = self.free_units();
            slc_room = self.slc.as_ref().is_some_and(|c| c.has_room(die, free));
            while !slc_room && policy == FoldPolicy::IdleAndFull {
                match self.fold(die, ready) {
                    Some(end) => ready = end.max(ready),
                    None => break,
                }
                let free = self.free_units();
                slc_room = self.slc.as_ref().is_some_and(|c| c.has_room(die, free));
            }
        }
        let (id, done) = if slc_room {
            let slc = self.slc.as_mut().expect("SLC on");
            // Holes take no place in the SLC cache's log (its pages are padded at the end).
            if merges.holes > 0 {
                lpns.retain(|&l| l != UNMAPPED);
            }
            for &lpn in &lpns {
                self.ftl.unmap(lpn as u64);
            }
            let pad = slc.program(die, &lpns);
            self.ftl.counters.host_units += lpns.len() as u64;
            self.ftl.counters.slc_units += lpns.len() as u64;
            self.ftl.counters.padding_units += pad;
            let op = vec![(OpKind::Program, slc.cfg.program_ns())];
            self.res.die_ops(die, ready, op)
        } else {
            if let Some(slc) = self.slc.as_mut() {
                for &lpn in lpns.iter().filter(|&&l| l != UNMAPPED) {
                    slc.invalidate(die, lpn);
                }
            }
            let work: DieWork = self.ftl.write_superpage(die, &lpns);
            self.die_program(die, work, lookup_ns, ready, feed)
        };
        if self.mapping.is_some() {
            self.relocated(ready);
        }
        self.buffer.program_done_at(done, host_sectors, id);
        self.lpns = lpns;
    }

    /// The die work of a program on the FTL's die `die` (data in its register at `ready`, or
    /// with `feed` = (channel, transfer) in DRAM then, taken over the channel as the program
    /// begins): (job id, end). With a frontier per plane, a lone page program joins one of
    /// another plane of the same die at the same page index that starts no earlier
    /// (plane_frontiers.rs).
    fn die_program(&mut self, die: u32, work: DieWork, now: Nanos, ready: Nanos, feed: Option<(usize, Nanos)>) -> (u64, Nanos) {
        let Some(pairing) = self.pairing.as_mut() else {
            return self.die_work(die, ready, work, feed);
        };
        let array_die = die % self.spec.geometry.dies();
        let plane = die / self.spec.geometry.dies();
        let page = self.ftl.frontier_page(die).expect("a page was just written");
        let lone = work == DieWork { reads: 0, programs: 1, erases: 0 };
        if lone {
            // Under read priority a reserved program may have moved: its current window.
            let res = &self.res;
            let window = |job, start, end| if res.jobs_move() { res.job_window(array_die, job) } else { Some((start, end)) };
            if let Some((job, end)) = pairing.join(array_die, plane, page, ready, now, window) {
                // Reads laying the die's queue out again must not start it before this page's data.
                self.res.hold_job_until(array_die, job, ready);
                self.ftl.counters.paired_programs += 1;
                if let Some((ch, in_ns)) = feed {
                    // Its data goes over the channel too, with the second plane's share of a
                    // two-plane command; the die's time for it is not added (MQSim's two-plane
                    // program takes both pages' data before tPROG).
                    // (`in_ns` is the lone page's: its data and a one-plane command.)
                    let (one, two) = (self.program_command_ns(1), self.program_command_ns(2));
                    let data_ns = in_ns - one;
                    self.res.channel(ch).reserve(ready, data_ns + (two - one));
                }
                return (job, end);
            }
        }
        let (job, end) = self.die_work(array_die, ready, work, feed);
        if lone {
            let start = end - self.spec.timing.program_ns() - feed.map_or(0, |f| f.1);
            self.pairing.as_mut().expect("on").reserved(array_die, plane, page, start, end, job);
        }
        (job, end)
    }

    /// `work` on `die` from `ready` (its program's data fed over a channel as it begins, if
    /// `feed`): (job id, end).
    fn die_work(&mut self, die: u32, ready: Nanos, work: DieWork, feed: Option<(usize, Nanos)>) -> (u64, Nanos) {
        let t = &self.spec.timing;
        match feed {
            None => self.res.die_job(die, ready, work, t),
            Some((ch, in_ns)) => {
                let mut ops = Vec::with_capacity((work.reads + work.programs + work.erases) as usize);
                resources::push_work(&mut ops, work, t);
                self.res.die_job_fed(die, ch, ready, ops, in_ns)
            }
        }
    }

    /// A page read of `tr` on `die` from `ready`: its end. Under read priority the read may
    /// push back programs queued on the die; the write buffer learns their new ends at once,
    /// whoever reads (a host read, a translation read from a program or a write-back).
    fn die_read(&mut self, die: u32, ready: Nanos, tr: Nanos) -> Nanos {
        let (_, end) = self.res.die_read(die, ready, tr);
        self.note_moved_programs();
        end
    }

    /// Tells the write buffer the new ends of programs a read pushed back.
    fn note_moved_programs(&mut self) {
        self.res.take_moved(&mut self.moved);
        for &(id, end) in &self.moved {
            self.buffer.program_moved(id, end);
        }
        self.moved.clear();
    }

    fn read(&mut self, req: &Request, start: Nanos) -> Service {
        let t = self.spec.timing;
        let t0 = start + t.overhead_ns();
        // (die, physical page, units) of the units on flash, in order; others are served from
        // the buffer or are unwritten (no flash access, as a drive returns zeroes).
        let mut pages = std::mem::take(&mut self.pages);
        pages.clear();
        let mut from_dram = true;
        // The request's sectors the write buffer holds (read from DRAM).
        let mut buffered_sectors = 0;
        let upp = self.spec.geometry.units_per_page() as u64;
        // When the last mapping entry the read needed was usable (t0 without a mapping cache).
        let mut mapped = t0;
        for lpn in self.units_of(req) {
            let die = self.ftl.die_of(lpn);
            let held = match self.hot.as_mut() {
                Some(h) if h.holds(lpn as u32) => {
                    h.touch(lpn as u32); // a read hit uses its slot (MQSim's Get_slot)
                    true
                }
                _ => false,
            };
            if held || self.buffer.contains(die, lpn as u32) {
                let unit = lpn * UNIT_SECTORS..(lpn + 1) * UNIT_SECTORS;
                buffered_sectors += unit.end.min(req.end_sector()) - unit.start.max(req.start_sector);
                continue;
            }
            let (entry_at, missed) = self.map_entry(lpn, t0, false);
            mapped = mapped.max(entry_at);
            from_dram &= !missed && entry_at <= t0;
            let (die, page, tr) = match (self.ftl.lookup(lpn), &self.slc) {
                (Some(ppn), _) => {
                    let (die, page) = self.ftl.die_and_page(ppn);
                    (die, page as u64, t.read_ns())
                }
                (None, Some(c)) => match c.page_of(lpn as u32, upp) {
                    Some(p) => (die, SLC_PAGE_KEY + p, c.cfg.read_ns()),
                    None => continue,
                },
                (None, None) => continue,
            };
            from_dram = false;
            let bytes = if self.spec.sector_transfers {
                let unit = lpn * UNIT_SECTORS..(lpn + 1) * UNIT_SECTORS;
                (unit.end.min(req.end_sector()) - unit.start.max(req.start_sector)) * SECTOR_BYTES
            } else {
                UNIT_BYTES
            };
            match pages.last_mut() {
                Some(last) if last.die == die && last.page == page => {
                    last.units += 1;
                    last.bytes += bytes;
                    last.from_ns = last.from_ns.max(entry_at);
                }
                _ => pages.push(PageRead { die, page, units: 1, bytes, tr_ns: tr, from_ns: entry_at }),
            }
        }
        // The buffered part is read from DRAM meanwhile; the data goes to the host once both are in.
        let mapped = mapped.max(self.dram_access(t0, buffered_sectors * SECTOR_BYTES));
        if self.spec.die_scheduling.read_priority && pages.iter().any(|p| p.from_ns > t0) {
            let deferred = DeferredRead { start, pages: pages.clone(), flash_done: mapped };
            self.pages = pages;
            return self.go_on_reading(req, deferred, t0);
        }
        let mut flash_done = mapped;
        for p in &pages {
            flash_done = flash_done.max(self.read_page(p));
        }
        self.pages = pages;
        self.read_done(req, start, flash_done, from_dram)
    }

    /// Reads a page's units on its die once their entries are usable, then over its channel:
    /// when the data is off the channel.
    fn read_page(&mut self, p: &PageRead) -> Nanos {
        let ch = self.spec.geometry.channel_of(p.die) as usize;
        self.read_out(self.die_of_plane(p.die), ch, p.from_ns, p.tr_ns, p.bytes)
    }

    /// A page read of `tr` on `die` from `ready`, then `bytes` of it out over channel `ch`: when
    /// the data is off the channel. With cache registers the die is free once the page is in
    /// its register; without, it is held until the data is out (resources.rs).
    fn read_out(&mut self, die: u32, ch: usize, ready: Nanos, tr: Nanos, bytes: u64) -> Nanos {
        let out_ns = self.spec.timing.channel_ns(bytes);
        if self.spec.cache_registers {
            let read_end = self.die_read(die, ready, tr);
            return self.res.channel(ch).reserve(read_end, out_ns).1;
        }
        let (_, out_end) = self.res.die_read_out(die, ch, ready, tr, out_ns, self.read_command_ns());
        self.note_moved_programs();
        out_end
    }

    /// A read whose data is off the flash at `flash_done`: over the link to the host.
    fn read_done(&mut self, req: &Request, start: Nanos, flash_done: Nanos, from_dram: bool) -> Service {
        let bytes = req.size_sectors as u64 * SECTOR_BYTES;
        let (_, done) = self.res.link(true).reserve(flash_done, self.spec.timing.link_ns(bytes));
        Service { dispatch_ns: start, completion_ns: done, transfer_ns: done - start, cache_hit: from_dram, ..Service::default() }
    }

    /// Places the deferred read's page reads due by `die_now` (the time a read starting now
    /// reaches its dies), in order; finishes the read when none is left, else asks to be
    /// resumed when the next one is due.
    fn go_on_reading(&mut self, req: &Request, mut d: DeferredRead, die_now: Nanos) -> Service {
        let mut flash_done = d.flash_done;
        d.pages.retain(|p| {
            if p.from_ns > die_now {
                return true;
            }
            flash_done = flash_done.max(self.read_page(p));
            false
        });
        d.flash_done = flash_done;
        let Some(next) = d.pages.iter().map(|p| p.from_ns).min() else {
            let s = self.read_done(req, d.start, d.flash_done, false);
            self.last_completion_ns = self.last_completion_ns.max(s.completion_ns);
            return s;
        };
        let (start, at) = (d.start, next - self.spec.timing.overhead_ns());
        self.deferred_reads.insert(req.id, d);
        Service { dispatch_ns: start, completion_ns: at, resume_ns: Some(at), ..Service::default() }
    }

    /// A write at `now`, its command started at `start` (earlier if it waited). Under read
    /// priority, where programs' ends may still move later, a write finding too little room
    /// waits in line (waiting_writes.rs) until the engine's clock reaches a program's end as it
    /// then stands, and is taken once the room it needs is free at that moment; otherwise as
    /// `write`, which gives it the room at the programs' ends as laid out.
    fn write_when_room(&mut self, req: &Request, now: Nanos, start: Nanos) -> Service {
        if !self.res.jobs_move() {
            return self.write(req, now);
        }
        let t0 = now + self.spec.timing.overhead_ns();
        if self.waiting_writes.may_take(req.id, start) {
            let fits = self.buffer.room_at(t0) >= self.room_to_start(req);
            match self.buffer.next_release_after(t0) {
                Some(release) if !fits => {
                    self.waiting_writes.arm(req.id, start, release);
                    // Resumed when the release's die work reaches t0 (it is after t0).
                    let at = release - self.spec.timing.overhead_ns();
                    return Service { dispatch_ns: start, completion_ns: at, resume_ns: Some(at), ..Service::default() };
                }
                _ => {
                    // Room now, or no program in flight to wait for (`write` then takes it
                    // part by part, or waits for the programs it queues itself).
                    self.waiting_writes.taken(req.id);
                    let s = self.write(req, now);
                    return Service { dispatch_ns: start, transfer_ns: s.completion_ns - start, ..s };
                }
            }
        }
        // Behind another waiting write: woken when that one is taken.
        self.waiting_writes.wait(req.id, start, false);
        Service { dispatch_ns: start, completion_ns: now, resume_ns: Some(AWAITS_WAKE), ..Service::default() }
    }

    /// Wakes the first write in line if a program now ends earlier than the one it is armed at
    /// (a flush, a discard or a write taken ahead of the line queued one on an idle die, or a
    /// read's rescheduling ended one earlier): it then waits for that end. Called after every
    /// call from the engine; nothing to do without a line. The look-up frees nothing: a later
    /// call may start before the time the write looked at the room (a command latency puts a
    /// command's start ahead of the engine's clock, by varying amounts), and a program queued
    /// since may end before that time too (then the write is woken and looks again at its start).
    fn wake_if_room_comes_earlier(&mut self) {
        if let Some(release) = self.waiting_writes.first_armed() {
            if self.buffer.earliest_release().is_some_and(|r| r < release) {
                self.waiting_writes.wake_first();
            }
        }
    }

    /// A page read command's cycles on the channel before tR (0 when `command_cycles` is off;
    /// the model reads a page per command).
    fn read_command_ns(&self) -> Nanos {
        if self.spec.command_cycles {
            command_cycles::read_command_ns(1)
        } else {
            0
        }
    }

    /// A program command's cycles on the channel before its data, for `planes` planes (0 when
    /// `command_cycles` is off).
    fn program_command_ns(&self, planes: u32) -> Nanos {
        if self.spec.command_cycles {
            command_cycles::program_command_ns(planes)
        } else {
            0
        }
    }

    /// `Device::resume`: a waiting write looked at again, or a deferred read going on.
    fn resume_command(&mut self, req: &Request, now: Nanos) -> Service {
        let waiting_write = if req.op == Op::Write { self.waiting_writes.resumed(req.id) } else { None };
        if let Some(start) = waiting_write {
            if start > now {
                // Woken before its command reached the drive (a command latency puts its start
                // ahead of the engine's clock): resumed at its start, where the room is looked
                // at as it then stands (looked at now, it would free programs' ends up to its
                // start that a read arriving before then may still move).
                self.waiting_writes.wait(req.id, start, true);
                return Service { dispatch_ns: start, completion_ns: start, resume_ns: Some(start), ..Service::default() };
            }
            // The head stays where the last command started left it.
            let head_sector = self.head_sector;
            let s = self.command(req, now, |ssd| ssd.write_when_room(req, now, start));
            self.head_sector = head_sector;
            return s;
        }
        let Some(d) = self.deferred_reads.remove(&req.id) else {
            debug_assert!(false, "resuming request {} that is not deferred", req.id);
            return Service { dispatch_ns: now, completion_ns: now, ..Service::default() };
        };
        self.res.prune(now);
        let die_now = now + self.spec.timing.overhead_ns();
        self.go_on_reading(req, d, die_now)
    }

    /// The room a write waits for before it is taken: what `write` admits it with; or one sector
    /// for a write larger than the buffer (taken part by part), with hot data (whose share of
    /// cold units is decided when it is taken) or under MQSim's back pressure (taken in calls,
    /// the first while the buffer is below its bound: write_calls.rs).
    fn room_to_start(&self, req: &Request) -> u64 {
        if self.hot.is_some() || self.spec.mqsim_back_pressure {
            return 1;
        }
        let room = self.admission(&self.units_of(req));
        if room <= self.buffer.capacity_sectors() {
            room
        } else {
            1
        }
    }

    fn write(&mut self, req: &Request, start: Nanos) -> Service {
        let t = self.spec.timing;
        let t0 = start + t.overhead_ns();
        let sent = self.units_of(req);
        let bytes = req.size_sectors as u64 * SECTOR_BYTES;
        let sectors = req.start_sector..req.end_sector();
        if self.spec.mqsim_back_pressure {
            let done = self.write_in_calls(sent, sectors, start, t0, t.link_ns(bytes));
            return Service { dispatch_ns: start, completion_ns: done, transfer_ns: done - start, ..Service::default() };
        }
        let room = self.admission(&sent);
        let done = if room <= self.buffer.capacity_sectors() {
            let in_drive = self.take_write(sent, sectors, room, start, t0, t.link_ns(bytes));
            // The write completes once its data is in DRAM.
            self.dram_access(in_drive, bytes)
        } else {
            self.stream_write(sent, sectors, start, t0)
        };
        Service { dispatch_ns: start, completion_ns: done, transfer_ns: done - start, ..Service::default() }
    }

    /// Takes the host's units `sent` of a write of `sectors` into the buffer from `t0` (their
    /// data taking `link_ns` over the link once there is room: `room` sectors, their
    /// `admission`, without hot data) and buffers them to be programmed: when their data is in
    /// the drive.
    #[inline]
    fn take_write(
        &mut self,
        sent: std::ops::Range<u64>,
        sectors: std::ops::Range<u64>,
        room: u64,
        start: Nanos,
        t0: Nanos,
        link_ns: Nanos,
    ) -> Nanos {
        if self.hot.is_some() {
            return self.write_with_hot_data(sent, sectors, start, t0, link_ns);
        }
        // Room in the buffer for the host's data (merged units take none), then the data over
        // the link.
        let room = self.buffer.admit(t0, room);
        let (_, in_drive) = self.res.link(false).reserve(room, link_ns);
        self.write_back(sent, sectors, &[], start, in_drive);
        in_drive
    }

    /// A write whose data the buffer cannot hold at once, taken one mapping unit after
    /// another as room frees (a drive fetches a large write's data as its buffer takes it;
    /// MQSim takes a write page by page): when its last part is in DRAM. Taken whole, it would
    /// complete at the link's rate and queue all its programs at once.
    fn stream_write(&mut self, sent: std::ops::Range<u64>, sectors: std::ops::Range<u64>, start: Nanos, t0: Nanos) -> Nanos {
        let per = self.mapping_units.units();
        let t = self.spec.timing;
        let (mut from, mut done) = (t0, t0);
        let mut mu = sent.start / per;
        while mu * per < sent.end {
            let part = (mu * per).max(sent.start)..((mu + 1) * per).min(sent.end);
            let part_sectors = (part.start * UNIT_SECTORS).max(sectors.start)..(part.end * UNIT_SECTORS).min(sectors.end);
            let bytes = (part_sectors.end - part_sectors.start) * SECTOR_BYTES;
            // The command's own bytes go with its first part.
            let link_ns = if part.start == sent.start { t.link_ns(bytes) } else { t.link_data_ns(bytes) };
            let room = self.admission(&part);
            let in_drive = self.take_write(part, part_sectors, room, start, from, link_ns);
            done = self.dram_access(in_drive, bytes);
            from = in_drive;
            mu += 1;
        }
        done
    }

    /// The room in sectors a write of the host's units `sent` waits for: every unit weighs 8, at
    /// least one unit. (Under MQSim's back pressure writes are taken in calls instead:
    /// write_calls.rs.)
    fn admission(&self, sent: &std::ops::Range<u64>) -> u64 {
        ((sent.end - sent.start) * UNIT_SECTORS).max(UNIT_SECTORS)
    }

    /// Buffers the host's units `sent` of a write of `sectors` (their data in the drive at
    /// `in_drive`) to be programmed, widened to whole mapping units, each die's superpage
    /// programmed as it fills (its entries looked up from `start`). `carried` (in unit order):
    /// units of those mapping units whose data DRAM holds (hot data), written back with them
    /// from DRAM, weighing nothing in the buffer (MQSim counts the write's own sectors).
    fn write_back(&mut self, sent: std::ops::Range<u64>, sectors: std::ops::Range<u64>, carried: &[u32], start: Nanos, in_drive: Nanos) {
        let by_sector = self.spec.mqsim_back_pressure;
        let (first, end) = (sent.start, sent.end);
        let weight = move |lpn: u64| {
            if (first..end).contains(&lpn) {
                Some(unit_weight(by_sector, lpn, &sectors))
            } else {
                (!carried.is_empty() && carried.binary_search(&(lpn as u32)).is_ok()).then_some(0)
            }
        };
        self.write_back_where(sent, weight, start, in_drive);
    }

    /// [`Self::write_back`] of the units of `span`: those `weight` gives a weight are data the
    /// drive holds (weighing that in the buffer), the others are merged into their mapping
    /// units (read from flash, or holes).
    fn write_back_where(&mut self, span: std::ops::Range<u64>, weight: impl Fn(u64) -> Option<u8> + Clone, start: Nanos, in_drive: Nanos) {
        let t0 = start + self.spec.timing.overhead_ns();
        // Whole mapping units are rewritten (the same units with 4 KiB ones).
        let units = self.mapping_units.widen(span, self.ftl.logical_units());
        let ups = self.ftl.geometry().units_per_superpage() as usize;
        let widens = self.mapping_units.widens();
        if widens {
            let w = weight.clone();
            self.merge_unsent(move |lpn| w(lpn).is_some(), units.clone(), t0, in_drive);
        }
        for lpn in units {
            let die = self.ftl.die_of(lpn);
            let w = weight(lpn);
            let host = w.is_some();
            if widens && host {
                self.mapping_units.host_wrote(lpn as u32);
            } else if widens && !self.buffer.contains(die, lpn as u32) && !self.mapping_units.is_merged(lpn as u32) {
                // Waiting when the write arrived, then taken by one of its programs (above):
                // merged again, a hole as a hole, data from DRAM (it stays there until that
                // program ends, which is after this write's data is in).
                self.mapping_units.merge(lpn as u32, self.holds_data(lpn).then_some(in_drive));
            }
            self.buffer.add_unit(die, lpn as u32, w.unwrap_or(0));
            // Every write adds whole mapping units in order, and a superpage holds whole ones,
            // so a program takes whole mapping units.
            if self.buffer.waiting(die) >= ups {
                // The program takes the data as it arrives, beside its DRAM write (dram.rs).
                self.program(die, start, in_drive);
            }
        }
    }

    /// The reused lists of a write's units evicted from the hot cache and carried with it,
    /// taken out of the drive emptied (put back when the write is done).
    fn emptied_hot_lists(&mut self) -> (Vec<u32>, Vec<u32>) {
        let (mut evicted, mut carried) = (std::mem::take(&mut self.evicted), std::mem::take(&mut self.carried));
        evicted.clear();
        carried.clear();
        (evicted, carried)
    }

    /// A write with hot data kept (hot_data.rs): each of its mapping units written back in the
    /// current window is hot, its host units held in DRAM; the others are cold, written back
    /// at once, as are the held units the cache has no room for. The write is taken once the
    /// buffer has room for what it writes back (a hot write waits while the buffer is full, as
    /// MQSim takes none then). Returns when its data is in the drive.
    fn write_with_hot_data(
        &mut self,
        sent: std::ops::Range<u64>,
        sectors: std::ops::Range<u64>,
        start: Nanos,
        t0: Nanos,
        link_ns: Nanos,
    ) -> Nanos {
        let per = self.mapping_units.units();
        let mut cold_runs = std::mem::take(&mut self.cold_runs);
        cold_runs.clear();
        let (mut evicted, mut carried) = self.emptied_hot_lists();
        let hot = self.hot.as_mut().expect("hot data on");
        let (mut cold_units, mut hot_units) = (0, 0);
        let mut mu = sent.start / per;
        while mu * per < sent.end {
            let part = (mu * per).max(sent.start)..((mu + 1) * per).min(sent.end);
            if !hot.take_page(mu, per, &part, &mut carried) {
                hot_units += part.end - part.start;
            } else {
                cold_units += part.end - part.start;
                match cold_runs.last_mut() {
                    Some(run) if run.end == part.start => run.end = part.end,
                    _ => cold_runs.push(part),
                }
            }
            mu += 1;
        }
        hot.evict_over_capacity(&mut evicted);
        // Room for its cold units and the evicted ones, at least a unit (a hot write waits while
        // the buffer is full).
        let room = self.buffer.admit(t0, ((cold_units + evicted.len() as u64) * UNIT_SECTORS).max(UNIT_SECTORS));
        self.hot.as_mut().expect("hot data on").write_taken(room);
        self.ftl.counters.hot_units += hot_units;
        self.ftl.counters.hot_evictions += evicted.len() as u64;
        let (_, in_drive) = self.res.link(false).reserve(room, link_ns);
        for run in &cold_runs {
            self.write_back(run.clone(), sectors.clone(), &carried, start, in_drive);
        }
        self.write_back_held(&evicted, start, in_drive);
        (self.cold_runs, self.evicted, self.carried) = (cold_runs, evicted, carried);
        in_drive
    }

    /// Writes back units held in DRAM (`held`, in unit order), each mapping unit's together: its
    /// held units as the host's data, the rest of it merged (MQSim writes a slot back with its
    /// sectors, the rest of the page read from flash).
    fn write_back_held(&mut self, held: &[u32], start: Nanos, in_drive: Nanos) {
        let per = self.mapping_units.units();
        for group in held.chunk_by(|a, b| *a as u64 / per == *b as u64 / per) {
            let span = group[0] as u64..group[group.len() - 1] as u64 + 1;
            // A held unit weighs its whole 4 KiB (the model holds whole units).
            let weight = |lpn: u64| group.binary_search(&(lpn as u32)).is_ok().then_some(UNIT_SECTORS as u8);
            self.write_back_where(span, weight, start, in_drive);
        }
    }

    /// Merges the units of `units` (a write's whole mapping units) that the host did not send
    /// (`sent`) and that are not waiting in the write buffer into their mapping units' programs:
    /// each holding data on flash is read first (MQSim's update read: one page read per page,
    /// its entry looked up from `t0`); one holding no data is a hole (mapping_unit.rs).
    fn merge_unsent(&mut self, sent: impl Fn(u64) -> bool, units: std::ops::Range<u64>, t0: Nanos, in_drive: Nanos) {
        let upp = self.spec.geometry.units_per_page() as u64;
        let mut pages = std::mem::take(&mut self.pages);
        pages.clear();
        // (unit, its page read in `pages`, if any)
        let mut unsent = std::mem::take(&mut self.unsent);
        unsent.clear();
        for lpn in units {
            if sent(lpn) || self.buffer.contains(self.ftl.die_of(lpn), lpn as u32) {
                continue;
            }
            let on_flash = match (self.ftl.lookup(lpn), &self.slc) {
                (Some(ppn), _) => {
                    let (die, page) = self.ftl.die_and_page(ppn);
                    Some((die, page as u64, self.spec.timing.read_ns()))
                }
                (None, Some(c)) => c.page_of(lpn as u32, upp).map(|p| (self.ftl.die_of(lpn), SLC_PAGE_KEY + p, c.cfg.read_ns())),
                (None, None) => None,
            };
            let Some((die, page, tr)) = on_flash else {
                unsent.push((lpn as u32, None)); // a hole
                continue;
            };
            if self.touched.as_ref().is_some_and(|t| !t.is_touched(lpn)) {
                // Data the run never touched: nothing an update read must keep (touched_units.rs).
                self.mapping_units.merge(lpn as u32, Some(in_drive));
                continue;
            }
            let entry_at = self.map_entry(lpn, t0, false).0;
            // An update read moves whole units (the data merged into the program).
            match pages.last_mut() {
                Some(last) if last.die == die && last.page == page => {
                    last.units += 1;
                    last.bytes += UNIT_BYTES;
                    last.from_ns = last.from_ns.max(entry_at);
                }
                _ => pages.push(PageRead { die, page, units: 1, bytes: UNIT_BYTES, tr_ns: tr, from_ns: entry_at }),
            }
            unsent.push((lpn as u32, Some(pages.len() - 1)));
        }
        let mut ends = std::mem::take(&mut self.update_read_ends);
        ends.clear();
        for p in &pages {
            ends.push(self.read_page(p));
        }
        self.ftl.counters.update_reads += pages.len() as u64;
        for &(lpn, read) in &unsent {
            self.mapping_units.merge(lpn, read.map(|i| ends[i].max(in_drive)));
        }
        (self.pages, self.unsent, self.update_read_ends) = (pages, unsent, ends);
    }

    /// A DRAM access of `bytes` on the data cache's channel from `ready`: its end (`ready`
    /// without DRAM timing, or with nothing to move).
    fn dram_access(&mut self, ready: Nanos, bytes: u64) -> Nanos {
        let ns = self.spec.dram.access_ns(bytes);
        match self.res.dram() {
            Some(d) if ns > 0 => d.reserve(ready, ns).1,
            _ => ready,
        }
    }
}

impl DeviceView for FlashSsd {
    fn name(&self) -> &str {
        &self.spec.name
    }
    fn capacity_sectors(&self) -> u64 {
        self.ftl.logical_units() * UNIT_SECTORS
    }
    /// One cylinder: no seeks (elevators see every request at the same place).
    fn cylinders(&self) -> u32 {
        1
    }
    fn cylinder_of(&self, _: u64) -> u32 {
        0
    }
    fn head_cylinder(&self) -> u32 {
        0
    }
    fn head_sector(&self) -> u64 {
        self.head_sector
    }
    fn seek_time_ns(&self, _: u32) -> Nanos {
        0
    }
    /// Expected service time: a read waits for its first unit's die, reads the page and moves
    /// the data over the channel and the link; a write, the link.
    fn positioning_time_ns(&self, sector: u64, sectors: u32, op: Op, now: Nanos) -> Nanos {
        let t = &self.spec.timing;
        let bytes = sectors as u64 * SECTOR_BYTES;
        if op == Op::Discard {
            // No data crosses the link: the controller's command latency (discard_ranges).
            return t.overhead_ns();
        }
        let link = t.link_ns(bytes) + (self.res.link_busy_until(op == Op::Read, now) - now);
        if op != Op::Read {
            // A write's data then goes into DRAM (dram.rs), after what the channel holds.
            return link + self.spec.dram.access_ns(bytes) + (self.res.dram_busy_until(now) - now);
        }
        let lpn = sector / UNIT_SECTORS;
        // An entry not cached is read first (its translation page's die backlog not counted),
        // even for a unit never written.
        let mapping = match &self.mapping {
            Some(c) if !c.contains(self.entry_of(lpn as u32)) => t.read_ns() + t.channel_ns(TRANSLATION_READ_BYTES),
            _ => 0,
        };
        let (die, tr) = match (self.ftl.lookup(lpn), &self.slc) {
            (Some(ppn), _) => (self.ftl.die_and_page(ppn).0, t.read_ns()),
            (None, Some(c)) if c.contains(lpn as u32) => (self.ftl.die_of(lpn), c.cfg.read_ns()),
            _ => return mapping + link,
        };
        mapping + (self.res.die_busy_until(self.die_of_plane(die), now) - now) + self.read_command_ns() + tr + t.channel_ns(bytes) + link
    }
}

impl Device for FlashSsd {
    fn service(&mut self, req: &Request, _path: ArmPath, now: Nanos) -> Service {
        let s = self.command(req, now, |ssd| match req.op {
            Op::Read => ssd.read(req, now),
            Op::Write => ssd.write_when_room(req, now, now),
            Op::Flush => Service { dispatch_ns: now, completion_ns: ssd.flush_done_ns(now), ..Service::default() },
            Op::Discard => ssd.discard_ranges(std::slice::from_ref(req), now),
        });
        self.wake_if_room_comes_earlier();
        s
    }
    fn service_discard(&mut self, req: &Request, ranges: &[Request], _path: ArmPath, now: Nanos) -> Service {
        let s = self.command(req, now, |ssd| ssd.discard_ranges(ranges, now));
        self.wake_if_room_comes_earlier();
        s
    }
    fn resume(&mut self, req: &Request, now: Nanos) -> Service {
        let s = self.resume_command(req, now);
        self.wake_if_room_comes_earlier();
        s
    }
    fn woken(&mut self) -> Option<RequestId> {
        self.waiting_writes.take_woken()
    }
    fn as_view(&self) -> &dyn DeviceView {
        self
    }

    /// NVMe Dataset Management is a queued command. SATA: queued TRIM (SEND FPDMA QUEUED,
    /// SATA 3.1) exists, but the one SATA preset is a Samsung 870 EVO, for which Linux sets
    /// ATA_HORKAGE_NO_NCQ_TRIM (drivers/ata/libata-core.c, "Samsung SSD 860*" and "Samsung SSD
    /// 870*", added in 2021 for 5.15 and the stable kernels after failures with queued TRIM):
    /// the kernel issues the non-queued DATA SET MANAGEMENT, which drains the NCQ queue like a
    /// flush.
    fn discard(&self) -> DiscardSupport {
        if self.spec.interface == "sata" {
            DiscardSupport::NonQueued
        } else {
            DiscardSupport::Queued
        }
    }
    fn flash_counters(&self) -> Option<(FtlCounters, FtlCounters)> {
        Some((self.run_counters(), self.precondition_counters()))
    }
    /// Every command the drive queue holds is in service at once: the dies and channels decide.
    fn concurrent_commands(&self) -> u32 {
        u32::MAX
    }
    /// Programs every die's waiting units (padding partial superpages): done when the last
    /// program is.
    fn flush_done_ns(&mut self, now: Nanos) -> Nanos {
        // Hot data held in DRAM is written back first.
        if let Some(h) = self.hot.as_mut() {
            let mut held = std::mem::take(&mut self.evicted);
            held.clear();
            h.drain(&mut held);
            self.ftl.counters.hot_evictions += held.len() as u64;
            self.write_back_held(&held, now, now);
            self.evicted = held;
        }
        for die in 0..self.ftl.geometry().dies() {
            if self.buffer.waiting(die) > 0 {
                self.program(die, now, now);
            }
        }
        // The engine starts a flush here, not through `service`.
        self.wake_if_room_comes_earlier();
        self.buffer.drained_ns().max(now)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod mapping_tests;

#[cfg(test)]
mod hot_tests;

#[cfg(test)]
mod plane_tests;
