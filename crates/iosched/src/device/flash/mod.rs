//! A flash SSD beside the rotational disk, behind the same `Device` / `DeviceView` contracts:
//! channels, dies and planes (geometry.rs), tR / tPROG / tBERS and the channel and host link
//! (timing.rs), a page-mapping FTL with over-provisioning, a write frontier per die and TRIM
//! (ftl.rs), greedy or cost-benefit GC with write amplification counted (gc.rs), a DRAM write
//! buffer flushed in the background (buffer.rs), every die, channel and the link a resource
//! busy until a time (resources.rs), preconditioning to a full or aged drive
//! (precondition.rs), three presets (presets.rs). Written after MQSim (Tavakkol et al., FAST'18)
//! and SimpleSSD's descriptions, not their code.
//!
//! The drive serves many commands at once (`concurrent_commands`: every command its queue
//! holds): a command, when started, reserves what it needs in order: the controller's latency,
//! then per physical page the die (tR) and its channel (data out), then the link (a read); or
//! the link, then a buffer slot (a write; the program happens in the background when a die has
//! a superpage's worth). Scheduling inside the drive is therefore first come, first served on
//! each die and channel. Not modelled yet: the SLC write cache of consumer drives, a mapping
//! cache (the presets hold the whole table in DRAM). Read priority and program/erase suspension
//! are options, off by default (die_scheduling.rs, reached through resources.rs's die contract).
//!
//! As a `DeviceView`: one cylinder, no seek; `positioning_time_ns` is the expected service time
//! (the die's backlog + tR + transfers for a read; the link for a write) so that SPTF-like
//! schedulers still pick sensibly.

pub mod buffer;
pub mod die_scheduling;
pub mod ftl;
pub mod gc;
pub mod geometry;
pub mod mqsim_config;
pub mod precondition;
pub mod presets;
pub mod resources;
pub mod spec;
pub mod timing;

use self::buffer::WriteBuffer;
use self::ftl::{DieWork, Ftl, FtlCounters};
use self::geometry::{UNIT_BYTES, UNIT_SECTORS};
use self::resources::Resources;
pub use self::spec::FlashSpec;
use super::{ArmPath, Device, DeviceView, DiscardSupport, Service};
use crate::request::{Op, Request, SECTOR_BYTES};
use crate::time::Nanos;

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
    pages: Vec<(u32, u32, u32)>,
    moved: Vec<(u64, Nanos)>,
}

impl FlashSsd {
    /// A drive in the spec's preconditioned state (`seed` drives the aged state's overwrites).
    pub fn new(spec: FlashSpec, seed: u64) -> Result<FlashSsd, String> {
        spec.validate()?;
        let mut ftl = Ftl::new(&spec.geometry, spec.over_provisioning, spec.gc_policy, spec.gc_free_superblocks)?;
        precondition::precondition(&mut ftl, spec.precondition, seed);
        let after_precondition = ftl.counters;
        let dies = spec.geometry.dies();
        Ok(FlashSsd {
            buffer: WriteBuffer::new(spec.write_buffer_kib as u64 * 1024 / UNIT_BYTES, dies),
            res: Resources::new(dies, spec.geometry.channels, &spec.die_scheduling),
            spec,
            ftl,
            after_precondition,
            head_sector: 0,
            lpns: Vec::new(),
            pages: Vec::new(),
            moved: Vec::new(),
        })
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
        let first = start_sector.div_ceil(UNIT_SECTORS);
        let end = ((start_sector + sectors) / UNIT_SECTORS).min(self.ftl.logical_units());
        for lpn in first..end {
            self.ftl.trim(lpn);
        }
    }

    /// A discard: the controller's command latency, no flash operation and no data over the
    /// link (the range list is 16 bytes); the FTL unmaps the whole units in the range. Units
    /// still in the write buffer are programmed first (their die's superpage, padded), so that
    /// the unmapping is not undone by a later program: a drive would drop them instead.
    fn discard_range(&mut self, req: &Request, now: Nanos) -> Service {
        let done = now + self.spec.timing.overhead_ns();
        for lpn in self.units_of(req) {
            let die = self.ftl.die_of(lpn);
            while self.buffer.contains(die, lpn as u32) {
                self.program(die, now);
            }
        }
        self.trim(req.start_sector, req.size_sectors as u64);
        Service { dispatch_ns: now, completion_ns: done, ..Service::default() }
    }

    fn units_of(&self, req: &Request) -> std::ops::Range<u64> {
        let first = req.start_sector / UNIT_SECTORS;
        let end = (req.start_sector + req.size_sectors.max(1) as u64).div_ceil(UNIT_SECTORS);
        first..end.min(self.ftl.logical_units())
    }

    /// Programs one superpage's worth of `die`'s buffered units (padding if fewer), data ready
    /// at `ready_ns`: the channel carries it to the die, which programs (after any GC it needs).
    fn program(&mut self, die: u32, ready_ns: Nanos) {
        let ups = self.spec.geometry.units_per_superpage() as usize;
        let mut lpns = std::mem::take(&mut self.lpns);
        self.buffer.take(die, ups, &mut lpns);
        if lpns.is_empty() {
            self.lpns = lpns;
            return;
        }
        let work: DieWork = self.ftl.write_superpage(die, &lpns);
        let t = &self.spec.timing;
        let ch = self.spec.geometry.channel_of(die) as usize;
        // The data goes over the channel into the die's cache register, then the die programs
        // (after the reads, copies and erase of any GC it needs).
        let (_, xfer_end) = self.res.channels[ch].reserve(ready_ns, t.channel_ns(ups as u64 * UNIT_BYTES));
        let (id, done) = self.res.die_job(die, xfer_end, work, t);
        self.buffer.program_done_at(done, lpns.len() as u32, id);
        self.lpns = lpns;
    }

    fn read(&mut self, req: &Request, start: Nanos) -> Service {
        let t = self.spec.timing.clone();
        let t0 = start + t.overhead_ns();
        // (die, physical page, units) of the units on flash, in order; others are served from
        // the buffer or are unwritten (no flash access, as a drive returns zeroes).
        let mut pages = std::mem::take(&mut self.pages);
        pages.clear();
        let mut from_dram = true;
        for lpn in self.units_of(req) {
            let die = self.ftl.die_of(lpn);
            if self.buffer.contains(die, lpn as u32) {
                continue;
            }
            let Some(ppn) = self.ftl.lookup(lpn) else { continue };
            from_dram = false;
            let (die, page) = self.ftl.die_and_page(ppn);
            match pages.last_mut() {
                Some(last) if last.0 == die && last.1 == page => last.2 += 1,
                _ => pages.push((die, page, 1)),
            }
        }
        let mut flash_done = t0;
        for &(die, _, units) in &pages {
            let ch = self.spec.geometry.channel_of(die) as usize;
            let (_, read_end) = self.res.die_read(die, t0, t.read_ns());
            let (_, out_end) = self.res.channels[ch].reserve(read_end, t.channel_ns(units as u64 * UNIT_BYTES));
            flash_done = flash_done.max(out_end);
        }
        self.pages = pages;
        self.res.take_moved(&mut self.moved);
        for &(id, end) in &self.moved {
            self.buffer.program_moved(id, end);
        }
        self.moved.clear();
        let bytes = req.size_sectors as u64 * SECTOR_BYTES;
        let (_, done) = self.res.link.reserve(flash_done, t.link_ns(bytes));
        Service { dispatch_ns: start, completion_ns: done, transfer_ns: done - start, cache_hit: from_dram, ..Service::default() }
    }

    fn write(&mut self, req: &Request, start: Nanos) -> Service {
        let t = self.spec.timing.clone();
        let t0 = start + t.overhead_ns();
        let units = self.units_of(req);
        // Room in the buffer, then the data over the link.
        let room = self.buffer.admit(t0, units.end - units.start);
        let bytes = req.size_sectors as u64 * SECTOR_BYTES;
        let (_, done) = self.res.link.reserve(room, t.link_ns(bytes));
        let ups = self.spec.geometry.units_per_superpage() as usize;
        for lpn in units {
            let die = self.ftl.die_of(lpn);
            self.buffer.add(die, lpn as u32);
            if self.buffer.waiting(die) >= ups {
                self.program(die, done);
            }
        }
        Service { dispatch_ns: start, completion_ns: done, transfer_ns: done - start, ..Service::default() }
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
        let link = t.link_ns(bytes) + (self.res.link.busy_until(now) - now);
        if op != Op::Read {
            return link;
        }
        let lpn = sector / UNIT_SECTORS;
        let die = match self.ftl.lookup(lpn) {
            Some(ppn) => self.ftl.die_and_page(ppn).0,
            None => return link,
        };
        (self.res.die_busy_until(die, now) - now) + t.read_ns() + t.channel_ns(bytes) + link
    }
}

impl Device for FlashSsd {
    fn service(&mut self, req: &Request, _path: ArmPath, now: Nanos) -> Service {
        self.head_sector = req.start_sector + req.size_sectors as u64;
        self.res.prune(now);
        match req.op {
            Op::Read => self.read(req, now),
            Op::Write => self.write(req, now),
            Op::Flush => Service { dispatch_ns: now, completion_ns: self.flush_done_ns(now), ..Service::default() },
            Op::Discard => self.discard_range(req, now),
        }
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
        for die in 0..self.spec.geometry.dies() {
            if self.buffer.waiting(die) > 0 {
                self.program(die, now);
            }
        }
        self.buffer.drained_ns().max(now)
    }
}

#[cfg(test)]
mod tests;
