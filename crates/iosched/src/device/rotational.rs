//! The rotational disk: zoned geometry, seek curve, exact rotational position, head and
//! cylinder switches, command overhead, and a read-ahead segment cache.

use super::cache::{SegmentCache, Stream};
use super::geometry::{slot_angle_by, Chs, Geometry, LayoutSpec, TrackPos, ZoneSpec, REV_UNITS};
use super::seek::SeekCurve;
use super::seek_table::SeekTable;
use super::{ArmPath, DeviceView, SectorPosition, Service};
use crate::divisor::Divisor;
use crate::request::{Op, Request, SECTOR_BYTES};
use crate::time::{ms_to_ns, Nanos};
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::collections::VecDeque;

mod rpo;

/// Mechanisms beyond [`RotationalSpec`], used by drives loaded from DiskSim descriptions. The
/// default turns every one off, which is exactly the preset model.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DiskExtensions {
    /// Explicit LBA layout (spare areas, slipped sectors or tracks, lead-in, zone offsets).
    pub layout: Option<LayoutSpec>,
    /// Cache segment size and read-ahead in sectors, replacing the spec's KiB figures.
    pub cache_sectors: Option<(u64, u64)>,
    /// Write-back ("fast write"): a write completes once its data is in the buffer and is
    /// written to the media (destaged) when the mechanism is free. The value is how many
    /// written-but-not-destaged writes the buffer holds; a write arriving when it is full waits
    /// for the oldest destage to finish. 0: write-through.
    pub write_back_segments: u32,
    /// A written range stays in the buffer and later reads of it are hits.
    pub read_hits_on_write_data: bool,
    /// Command overheads by kind of request and kind of the previous one (replace the spec's
    /// `command_overhead_ms`, which is still added as a per-request overhead).
    pub overheads: Option<CommandOverheads>,
    /// Host transfer time per sector (read, write), replacing `bus_mb_s`, for hits and media
    /// accesses alike: a media read completes when both the media and the bus are done.
    pub bus_sector_ns: Option<(Nanos, Nanos)>,
    /// Write settling only when the arm or head moved (DiskSim), not on every write.
    pub write_settle_on_move_only: bool,
    /// A media read starts its host transfer only once this fraction of the request is in the
    /// buffer (DiskSim's read water mark with the bus held for the whole transfer); 0: the bus
    /// streams right behind the media.
    pub read_bus_start_fraction: f64,
    /// The water mark counts blocks of the request (DiskSim's `Set watermark by reqsize = 1`:
    /// the fraction of the request, truncated, at least one block) rather than of the segment
    /// (the fraction of the segment, rounded up); either way no more than the request.
    pub water_mark_by_request: bool,
    /// A media read disconnects from the host after its command overhead and reselects it once
    /// the water mark is in the buffer (SCSI disconnect/reselect). `None`: no such costs.
    pub read_reconnect: Option<ReadReconnect>,
    /// Read-ahead stops at the end of the track holding the block after the request, or of the
    /// next track when the segment already held data before that track (DiskSim's `Buffer
    /// continuous read = 4`, its "DEC prefetch scheme"), instead of `readahead` sectors past the
    /// request. A hit on the stream extends it the same way, from the hit's end.
    pub readahead_to_track_end: bool,
    /// Read-ahead never moves the head: it stops at the end of the track (1) or the cylinder
    /// (2) it is on (DiskSim's `Buffer continuous read = 1 / 2`: `disk_initiate_seek` refuses a
    /// background read that needs a head switch or a seek). 0: no such stop.
    pub readahead_stop_at: u8,
    /// A write's positioning (seek, head switch, settling) takes at least this long, so a write
    /// on the track the head is on waits that long before it looks for its sector (DiskSim's
    /// `Minimum seek delay`). 0: no minimum.
    pub min_write_seek_ns: Nanos,
    /// A negative write settle (DiskSim's `Add. write settling delay` below 0): a write's
    /// nonzero positioning (seek or head switch) is this much shorter, never below 0
    /// (`dm_seek_time_g1` adds the signed delay to a nonzero seek time for a write).
    pub write_settle_credit_ns: Nanos,
    /// A read served wholly from a segment whose read-ahead has stopped restarts read-ahead
    /// from the segment's end (DiskSim's `Read-ahead on idle hit = 1`).
    pub readahead_on_idle_hit: bool,
    /// SCSI disconnect/reselect on media writes: the host transfers a write's data into the
    /// buffer first (after the command overhead, while the arm moves); the media write starts
    /// once the data is in; the drive disconnects meanwhile and reselects the host to report
    /// completion. `None`: the bus streams alongside the media write and nothing is added.
    pub write_disconnect: Option<WriteDisconnect>,
}

/// DiskSim's read disconnect/reselect costs (ns): a media read disconnects after its command
/// overhead (`Read disconnect afterread` / `afterwrite`); its host transfer starts once the
/// drive has reselected the host (`First reselect overhead`) and prepared the data (`Data
/// preparation overhead`, from [`CommandOverheads`]), no earlier than the disconnection is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ReadReconnect {
    /// `[after a read, after a write]`.
    pub disconnect: [Nanos; 2],
    pub reselect: Nanos,
}

/// DiskSim's write disconnect/reselect costs (ns) and its extra disconnect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WriteDisconnect {
    /// Reselecting the host after the media write (`First reselect overhead`).
    pub reselect_first: Nanos,
    /// Reselecting after an earlier reselection of the same request (`Other reselect overhead`).
    pub reselect_other: Nanos,
    /// A write that follows a write and does not continue it disconnects once more before its
    /// data phase (`Extra write disconnect = 1`): its command overhead is `extra_command` +
    /// `extra_disconnect` (instead of the write-miss overhead), the drive waits
    /// `extra_inter_disconnect`, reselects (`reselect_first`), prepares the data (`Data
    /// preparation overhead`) and then takes it; the mechanism may start after `extra_command` +
    /// `extra_seek_delta`; the final reselection is `reselect_other`.
    pub extra: bool,
    pub extra_command: Nanos,
    pub extra_disconnect: Nanos,
    pub extra_inter_disconnect: Nanos,
    pub extra_seek_delta: Nanos,
    /// Disconnecting after the data phase of a write with the extra disconnect (`Extradisc 2nd
    /// disconnect overhead`, in place of `Write disconnect overhead`).
    pub extra_second_disconnect: Nanos,
}

/// Command overheads in ns; `[after a read, after a write]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CommandOverheads {
    pub read_hit: [Nanos; 2],
    pub read_miss: [Nanos; 2],
    pub write_hit: [Nanos; 2],
    pub write_miss: [Nanos; 2],
    pub read_complete: Nanos,
    pub write_complete: Nanos,
    pub data_prep: Nanos,
    /// Disconnecting after a write's data phase (`Write disconnect overhead`).
    pub write_disconnect: Nanos,
}

/// Everything that describes a rotational drive; presets are values of this type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RotationalSpec {
    pub name: String,
    pub description: String,
    /// Where the numbers come from.
    pub source: String,
    /// Which numbers are estimates rather than published figures.
    pub estimated: String,
    pub rpm: u32,
    pub surfaces: u32,
    pub zones: Vec<ZoneSpec>,
    pub seek: SeekCurve,
    pub head_switch_ms: f64,
    /// Moving to the adjacent cylinder during a sequential transfer; `None`: seek(1).
    pub cylinder_switch_ms: Option<f64>,
    /// Extra settling before a write.
    pub write_settle_ms: f64,
    /// Controller/command processing before the drive acts on a request.
    pub command_overhead_ms: f64,
    /// Host interface rate for cache hits (MB = 10^6 bytes); 0 means instantaneous.
    pub bus_mb_s: f64,
    /// Read cache segments; 0 disables the cache and read-ahead.
    pub cache_segments: u32,
    pub cache_segment_kib: u32,
    /// How far past the last requested sector the drive keeps reading.
    pub readahead_kib: u32,
}

impl RotationalSpec {
    pub fn validate(&self) -> Result<(), String> {
        if self.rpm == 0 || self.rpm > 100_000 {
            return Err(format!("rpm must be in 1..=100000, got {}", self.rpm));
        }
        // Bounded so that simulated time cannot overflow.
        for (name, v, max) in [
            ("head_switch_ms", self.head_switch_ms, 1000.0),
            ("write_settle_ms", self.write_settle_ms, 1000.0),
            ("command_overhead_ms", self.command_overhead_ms, 1000.0),
            ("bus_mb_s", self.bus_mb_s, 1e6),
            ("cylinder_switch_ms", self.cylinder_switch_ms.unwrap_or(0.0), 1000.0),
        ] {
            if !(v.is_finite() && (0.0..=max).contains(&v)) {
                return Err(format!("{name} must be in [0, {max}], got {v}"));
            }
        }
        if self.cache_segments > 4096 || self.cache_segment_kib > 4 << 20 || self.readahead_kib > 4 << 20 {
            return Err(format!(
                "cache: at most 4096 segments of at most 4 GiB, read-ahead at most 4 GiB (got {} x {} KiB, read-ahead {} KiB)",
                self.cache_segments, self.cache_segment_kib, self.readahead_kib
            ));
        }
        if self.surfaces == 0 || self.surfaces > 1024 {
            return Err(format!("surfaces must be in 1..=1024, got {}", self.surfaces));
        }
        self.seek.validate()?;
        let cylinders: u64 = self.zones.iter().map(|z| z.cylinders as u64).sum();
        let full_ms = self.seek.time_ms(cylinders.saturating_sub(1).min(u32::MAX as u64) as u32);
        if !(full_ms.is_finite() && (0.0..=10_000.0).contains(&full_ms)) {
            return Err(format!("the seek curve gives {full_ms} ms for a full stroke; it must be within [0, 10000] ms"));
        }
        Ok(())
    }

    pub fn capacity_sectors(&self) -> u64 {
        self.zones.iter().map(|z| z.cylinders as u64 * self.surfaces as u64 * z.sectors_per_track as u64).sum()
    }
}

pub struct RotationalDisk {
    spec: RotationalSpec,
    ext: DiskExtensions,
    /// The previous request was a read (selects the "after read" overheads).
    last_read: bool,
    /// Where the previous request ended, if it was a write.
    last_write_end: Option<u64>,
    /// Until when the mechanism is busy destaging buffered writes.
    mech_free_at: Nanos,
    /// Completion times of destages not yet known to be finished (write-back).
    destages: VecDeque<Nanos>,
    geometry: Geometry,
    rpm: u64,
    /// `rpm` as a divisor (every rotational wait and transfer divides by it).
    rpm_div: Divisor,
    head_switch_ns: Nanos,
    cylinder_switch_ns: Nanos,
    write_settle_ns: Nanos,
    overhead_ns: Nanos,
    bus_bytes_per_s: u64,
    cache: SegmentCache,
    /// Seek time by distance, and its suffix minimum (the bound SPTF's search relies on, since
    /// a curve may dip: Seltzer's falls by 0.02 ms at 240 cylinders).
    seeks: std::sync::Arc<SeekTable>,
    /// Where the last media access left the arm.
    head: Chs,
    head_sector: u64,
    /// The last read-ahead front computed, keyed by (time, stream state); the key apart from the
    /// front, so that a look-up reads the key only (None: none yet).
    last_front_key: Cell<Option<(Nanos, Stream)>>,
    last_front: Cell<WalkEnd>,
    /// The last two walks (a pure function of their arguments): a read's host-transfer timing
    /// walks to its first block and to its end again after the media access walked there. Keys
    /// and results apart, so that a look-up reads the keys only (`NO_WALK`: none yet).
    walk_memo_keys: [Cell<WalkKey>; 2],
    walk_memo_outs: [Cell<(WalkEnd, Nanos)>; 2],
    walk_memo_next: Cell<u8>,
}

/// A walk's arguments: (from, t0, to_sector, until_ns, aligned).
type WalkKey = (u64, Nanos, u64, Nanos, bool);
/// An empty memo slot: a walk no caller makes (from the last possible sector to sector 0), with
/// the result `walk_uncached` would give it (it stays where it is), so the slot is never wrong.
const NO_WALK: WalkKey = (u64::MAX, 0, 0, 0, false);
const NO_WALK_END: (WalkEnd, Nanos) = (WalkEnd { sector: u64::MAX, at_ns: 0, head: None }, 0);

/// Where a sequential walk over the media stopped: at the start of `sector`, at `at_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WalkEnd {
    sector: u64,
    at_ns: Nanos,
    /// The track the head is on at the end (None: it did not move).
    head: Option<Chs>,
}

impl RotationalDisk {
    pub fn new(spec: RotationalSpec) -> Result<Self, String> {
        Self::with_extensions(spec, DiskExtensions::default())
    }

    /// A disk with the mechanisms of [`DiskExtensions`] (all off by default).
    pub fn with_extensions(spec: RotationalSpec, ext: DiskExtensions) -> Result<Self, String> {
        spec.validate()?;
        let rpm = spec.rpm as u64;
        let head_switch_ns = ms_to_ns(spec.head_switch_ms);
        let cylinder_switch_ns = spec.cylinder_switch_ms.map(ms_to_ns).unwrap_or_else(|| spec.seek.time_ns(1));
        // Default skews: as many sectors as pass under the head during the switch, so a
        // sequential transfer loses no revolution at a track boundary.
        let sectors_during = |ns: Nanos, spt: u32| ((ns as u128 * rpm as u128 * spt as u128).div_ceil(REV_UNITS as u128)) as u32;
        let geometry = Geometry::with_layout(
            spec.surfaces,
            &spec.zones,
            |spt| (sectors_during(head_switch_ns, spt), sectors_during(cylinder_switch_ns, spt)),
            ext.layout.as_ref(),
        )?;
        let cylinders = geometry.cylinders as usize;
        if cylinders > 1 << 24 {
            return Err(format!("{cylinders} cylinders: more than the model supports (16M)"));
        }
        let seeks = SeekTable::shared(&spec.seek, cylinders as u32)?;
        let kib = |k: u32| k as u64 * 1024 / SECTOR_BYTES;
        let (segment_sectors, readahead_sectors) = ext.cache_sectors.unwrap_or((kib(spec.cache_segment_kib), kib(spec.readahead_kib)));
        let cache = SegmentCache::new(spec.cache_segments, segment_sectors, readahead_sectors);
        Ok(RotationalDisk {
            seeks,
            rpm,
            rpm_div: Divisor::new(rpm),
            head_switch_ns,
            cylinder_switch_ns,
            write_settle_ns: ms_to_ns(spec.write_settle_ms),
            overhead_ns: ms_to_ns(spec.command_overhead_ms),
            bus_bytes_per_s: (spec.bus_mb_s * 1e6).round() as u64,
            cache,
            head: Chs { cylinder: 0, head: 0, sector: 0 },
            head_sector: 0,
            last_front_key: Cell::new(None),
            last_front: Cell::new(WalkEnd { sector: 0, at_ns: 0, head: None }),
            walk_memo_keys: [Cell::new(NO_WALK), Cell::new(NO_WALK)],
            walk_memo_outs: [Cell::new(NO_WALK_END), Cell::new(NO_WALK_END)],
            walk_memo_next: Cell::new(0),
            geometry,
            spec,
            ext,
            last_read: true,
            last_write_end: None,
            mech_free_at: 0,
            destages: VecDeque::new(),
        })
    }

    pub fn spec(&self) -> &RotationalSpec {
        &self.spec
    }

    pub fn extensions(&self) -> &DiskExtensions {
        &self.ext
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    pub fn revolution_ns(&self) -> f64 {
        60e9 / self.rpm as f64
    }

    /// Rotational phase at `t`, in [`REV_UNITS`]: exact, since 60 s is a whole number of turns.
    pub fn phase_at(&self, t: Nanos) -> u64 {
        ((t % 60_000_000_000) * self.rpm) % REV_UNITS
    }

    /// Time from `t` until angle `angle` passes under the head. Being less than 1 ns past it
    /// (rounding of earlier transfers) counts as on time.
    pub fn rotational_wait_ns(&self, t: Nanos, angle: u64) -> Nanos {
        let d = forward_angle(self.phase_at(t), angle);
        if REV_UNITS - d < self.rpm {
            0
        } else {
            self.rpm_div.div_ceil(d)
        }
    }

    /// Time for the `sectors` sectors starting at physical slot `slot` to pass under the head,
    /// starting at `t` when the head is at (or within 1 ns past) that slot's start. Computed from
    /// absolute angles, so rounding never accumulates over long sequential transfers.
    fn transfer_ns(&self, t: Nanos, slot: u32, sectors: u64, spt: Divisor) -> Nanos {
        let start = slot_angle_by(slot, spt);
        let end = spt.div((slot as u64 + sectors) * REV_UNITS);
        let past = forward_angle(start, self.phase_at(t));
        let past = if past >= REV_UNITS / 2 { 0 } else { past };
        self.rpm_div.div_ceil((end - start).saturating_sub(past))
    }

    /// Whole sectors from `slot` that pass under the head between `t` and `until`.
    fn sectors_passing(&self, t: Nanos, until: Nanos, slot: u32, spt: Divisor) -> u64 {
        let start = slot_angle_by(slot, spt);
        let past = forward_angle(start, self.phase_at(t));
        let past = if past >= REV_UNITS / 2 { 0 } else { past };
        let units = (until - t) as u128 * self.rpm as u128 + past as u128;
        (units * spt.get() as u128 / REV_UNITS as u128) as u64
    }

    fn bus_ns(&self, sectors: u32) -> Nanos {
        if let Some((read, _)) = self.ext.bus_sector_ns {
            return read.saturating_mul(sectors as Nanos);
        }
        if self.bus_bytes_per_s == 0 {
            return 0;
        }
        crate::time::ns_to_move(sectors as u64 * SECTOR_BYTES, self.bus_bytes_per_s)
    }

    fn arm_move_ns(&self, from: Chs, to: Chs) -> Nanos {
        if from.cylinder != to.cylinder {
            self.seeks.seek_ns(from.cylinder.abs_diff(to.cylinder)).expect("a seek within the disk")
        } else if from.head != to.head {
            self.head_switch_ns
        } else {
            0
        }
    }

    /// Reads sequentially from `from` towards `to_sector`, stopping early at the last sector
    /// boundary not after `until_ns`. At `t0` the head is at the start of `from` (`aligned`), or
    /// has just finished `from - 1` (a read-ahead stream), in which case a track boundary at
    /// `from` still costs its switch. Returns where it stopped and the pure transfer time spent.
    /// `first`, when given, is `from`'s position (`locate(from)`), so it is no part of the key.
    #[inline]
    fn walk(&self, from: u64, t0: Nanos, to_sector: u64, until_ns: Nanos, aligned: bool, first: Option<TrackPos>) -> (WalkEnd, Nanos) {
        let key = (from, t0, to_sector, until_ns, aligned);
        for (k, out) in self.walk_memo_keys.iter().zip(&self.walk_memo_outs) {
            if k.get() == key {
                return out.get();
            }
        }
        let out = self.walk_uncached(from, t0, to_sector, until_ns, aligned, first);
        let i = self.walk_memo_next.get() as usize;
        self.walk_memo_keys[i].set(key);
        self.walk_memo_outs[i].set(out);
        self.walk_memo_next.set((i as u8 + 1) % 2);
        out
    }

    fn walk_uncached(
        &self,
        from: u64,
        t0: Nanos,
        to_sector: u64,
        until_ns: Nanos,
        aligned: bool,
        first: Option<TrackPos>,
    ) -> (WalkEnd, Nanos) {
        // Within one track from a known position (a request's media transfer, its first blocks
        // for the bus): one transfer, as the loop below would find, without its set-up.
        if let (true, Some(pos)) = (aligned, first) {
            if from < to_sector && to_sector <= pos.track_end_sector {
                let need = self.transfer_ns(t0, pos.slot, self.geometry.span_slots_at(&pos, from, to_sector), pos.spt_div);
                let at_ns = t0.saturating_add(need);
                if at_ns <= until_ns {
                    return (WalkEnd { sector: to_sector, at_ns, head: Some(pos.chs) }, need);
                }
            }
        }
        let (mut cur, mut t, mut xfer) = (from, t0, 0);
        let to_sector = to_sector.min(self.geometry.capacity_sectors);
        if cur >= to_sector {
            return (WalkEnd { sector: cur, at_ns: t, head: None }, 0);
        }
        let mut pos = first.unwrap_or_else(|| self.geometry.locate(cur));
        // When a limit falls right after a track switch, before a whole sector has passed, the
        // walk reports the state before the switch (the previous track just finished), so that
        // resuming from it pays the switch once, not twice.
        let mut before_switch: Option<(Nanos, Option<Chs>)> = None;
        if !aligned && cur > 0 && pos.chs.sector == 0 {
            // The head has just finished the previous track (the previous cylinder's if this
            // is head 0): switch first.
            let prev_cylinder =
                if self.ext.layout.is_some() { self.geometry.cylinder_of(cur - 1) } else { pos.chs.cylinder - (pos.chs.head == 0) as u32 };
            let switch = self.track_switch_ns(prev_cylinder, pos.chs.cylinder);
            let arrive = t.saturating_add(switch);
            let ready = arrive.saturating_add(self.rotational_wait_ns(arrive, pos.angle));
            if ready > until_ns {
                return (WalkEnd { sector: cur, at_ns: t, head: None }, 0);
            }
            before_switch = Some((t, None));
            t = ready;
        }
        loop {
            let stop = to_sector.min(pos.track_end_sector);
            let need = self.transfer_ns(t, pos.slot, self.geometry.span_slots_at(&pos, cur, stop), pos.spt_div);
            if t.saturating_add(need) > until_ns {
                // Whole sectors that pass before the limit.
                let slots = self.sectors_passing(t, until_ns, pos.slot, pos.spt_div);
                let fit = self.geometry.lbas_in_slots_at(&pos, cur, slots, stop - cur - 1);
                if fit == 0 {
                    if let Some((t_before, head_before)) = before_switch {
                        return (WalkEnd { sector: cur, at_ns: t_before, head: head_before }, xfer);
                    }
                }
                let dt = self.transfer_ns(t, pos.slot, self.geometry.span_slots_at(&pos, cur, cur + fit), pos.spt_div);
                return (WalkEnd { sector: cur + fit, at_ns: t.saturating_add(dt), head: Some(pos.chs) }, xfer.saturating_add(dt));
            }
            t = t.saturating_add(need);
            xfer = xfer.saturating_add(need);
            cur = stop;
            if cur == to_sector {
                return (WalkEnd { sector: cur, at_ns: t, head: Some(pos.chs) }, xfer);
            }
            // Switch to the next track and wait for its first sector (skew makes this short).
            let next = self.geometry.locate_next_track(&pos);
            let switch = self.track_switch_ns(pos.chs.cylinder, next.chs.cylinder);
            let arrive = t.saturating_add(switch);
            let ready = arrive.saturating_add(self.rotational_wait_ns(arrive, next.angle));
            if ready > until_ns {
                return (WalkEnd { sector: cur, at_ns: t, head: Some(pos.chs) }, xfer);
            }
            before_switch = Some((t, Some(pos.chs)));
            t = ready;
            pos = next;
        }
    }

    /// Writes `[lo, hi)` from `t` (the head at the start of `lo`, on its track, `first`), each
    /// block only once the host has transferred it into the buffer (block `b` at `data_at + (b -
    /// lo + 1) * per`): a block not yet in when its sector comes under the head waits for the
    /// sector to come round again (DiskSim writes sector by sector and skips a sector whose
    /// data is not in the buffer). Returns where it stopped and the pure transfer time.
    fn paced_walk(&self, lo: u64, hi: u64, mut t: Nanos, first: TrackPos, data_at: Nanos, per: Nanos) -> (WalkEnd, Nanos) {
        let (mut cur, mut xfer, mut aligned, mut pos): (u64, Nanos, bool, Option<TrackPos>) = (lo, 0, true, Some(first));
        let mut end = WalkEnd { sector: lo, at_ns: t, head: Some(first.chs) };
        while cur < hi {
            let arrival = data_at.saturating_add((cur - lo + 1).saturating_mul(per));
            let (e, x) = self.walk(cur, t, cur + 1, Nanos::MAX, aligned, pos);
            if e.at_ns.saturating_sub(x) >= arrival {
                (end, t, aligned, pos) = (e, e.at_ns, false, None);
                xfer = xfer.saturating_add(x);
                cur += 1;
            } else {
                // Missed: the head (now on this block's track) waits for its sector to pass again
                // after the data is in.
                let p = self.geometry.locate(cur);
                t = arrival.saturating_add(self.rotational_wait_ns(arrival, p.angle));
                if t == Nanos::MAX {
                    break; // time has run out (only with absurd, saturated times)
                }
                (aligned, pos) = (true, Some(p));
            }
        }
        (end, xfer)
    }

    /// Moving on to the next track of a sequential transfer: a head switch on the same
    /// cylinder, the cylinder switch to the adjacent one, a seek further (a gap between zones).
    fn track_switch_ns(&self, from_cylinder: u32, to_cylinder: u32) -> Nanos {
        match from_cylinder.abs_diff(to_cylinder) {
            0 => self.head_switch_ns,
            1 => self.cylinder_switch_ns,
            d => self.seek_time_ns(d),
        }
    }

    /// Where read-ahead has got to by `t` (the stream's front, never past its cap).
    fn stream_front(&self, t: Nanos) -> Option<WalkEnd> {
        let st = self.cache.stream?;
        if t <= st.at_ns {
            return Some(WalkEnd { sector: st.next_sector, at_ns: st.at_ns, head: None });
        }
        // The engine asks before a decision and the dispatch asks again at the same instant.
        let key = Some((t, st));
        if self.last_front_key.get() == key {
            return Some(self.last_front.get());
        }
        let front = self.walk(st.next_sector, st.at_ns, st.cap_sector, t, st.aligned, None).0;
        self.last_front_key.set(key);
        self.last_front.set(front);
        Some(front)
    }

    /// A read served (wholly or as it streams in) from the cache.
    fn try_cache(&mut self, req: &Request, now: Nanos) -> Option<Service> {
        if req.op != Op::Read || !self.cache.enabled() {
            return None;
        }
        let (lo, hi) = (req.start_sector, req.end_sector());
        let bus_ns = self.bus_ns(req.size_sectors);
        let (overhead, complete) = match self.ext.overheads {
            None => (self.overhead_ns, 0),
            Some(o) => (self.overhead_ns.saturating_add(o.read_hit[!self.last_read as usize]).saturating_add(o.data_prep), o.read_complete),
        };
        let host_done = now.saturating_add(overhead).saturating_add(bus_ns).saturating_add(complete);
        if let Some(i) = self.cache.find_static(lo, hi) {
            self.cache.touch(i);
            return Some(Service::cache_hit(now, host_done, bus_ns));
        }
        let st = self.cache.stream?;
        let seg = self.cache.segment(st.segment);
        if lo < seg.lo || lo > st.cap_sector {
            return None;
        }
        let front = self.stream_front(now).unwrap();
        // The segment keeps only its last `segment_sectors` behind the read-ahead front.
        if lo < front.sector.saturating_sub(self.cache.segment_sectors) {
            return None;
        }
        let stopped = front.sector >= st.cap_sector;
        if stopped && hi > st.cap_sector {
            return None; // read-ahead ended before this request: the media must be read again
        }
        let capacity = self.geometry.capacity_sectors;
        // The stream continues while the host keeps reading it.
        let (ready, moved) = if hi <= front.sector {
            (host_done, front)
        } else {
            let reach = self.walk(st.next_sector, st.at_ns, hi, Nanos::MAX, st.aligned, None).0;
            (host_done.max(reach.at_ns.saturating_add(self.bus_ns(1))), reach)
        };
        let consumed = if stopped { None } else { Some(hi) };
        self.cache.advance_stream(moved.sector, moved.at_ns, consumed, capacity);
        if self.ext.readahead_to_track_end && !stopped {
            let seg_lo = self.cache.segment(st.segment).lo;
            let cap = self.track_end_readahead(req, seg_lo, None).max(st.cap_sector);
            self.cache.set_cap(cap);
        }
        if self.ext.readahead_stop_at > 0 && !stopped {
            if let Some(st2) = self.cache.stream {
                let cap = st2.cap_sector.min(self.head_bound_end(st2.next_sector.saturating_sub(1)));
                self.cache.set_cap(cap);
            }
        }
        if stopped && hi <= front.sector && self.ext.readahead_on_idle_hit {
            self.restart_readahead(req, now, front);
        }
        self.cache.touch(st.segment);
        Some(Service::cache_hit(now, ready, bus_ns))
    }

    /// A hit on a segment whose read-ahead has stopped restarts it (DiskSim's `Read-ahead on
    /// idle hit`): after the command overhead (the read-miss one, as DiskSim delays all
    /// mechanical work of a read by it) the head moves to the block after the segment's end
    /// and reads ahead to where read-ahead after `req` stops.
    fn restart_readahead(&mut self, req: &Request, now: Nanos, front: WalkEnd) {
        let capacity = self.geometry.capacity_sectors;
        let cap = if self.ext.readahead_to_track_end {
            let seg_lo = self.cache.stream.map_or(req.start_sector, |st| self.cache.segment(st.segment).lo);
            self.track_end_readahead(req, seg_lo, None)
        } else {
            (req.end_sector() + self.cache.readahead_sectors).min(capacity)
        };
        if cap <= front.sector || front.sector >= capacity {
            return;
        }
        let start = now.saturating_add(self.miss_overhead(Op::Read));
        let to = self.geometry.locate(front.sector);
        let from = front.head.unwrap_or(self.head);
        let cap = if self.ext.readahead_stop_at > 0 {
            // A read-ahead that needs a head switch (1) or a seek (2) does not start.
            let last = self.geometry.locate(front.sector.saturating_sub(1)).chs;
            if last.cylinder != to.chs.cylinder || (self.ext.readahead_stop_at == 1 && last.head != to.chs.head) {
                return;
            }
            cap.min(self.head_bound_end(front.sector))
        } else {
            cap
        };
        if cap <= front.sector {
            return;
        }
        let on_track = start.max(self.mech_free_at).saturating_add(self.arm_move_ns(from, to.chs));
        self.cache.restart_stream(on_track.saturating_add(self.rotational_wait_ns(on_track, to.angle)), cap);
        self.head = to.chs;
    }

    /// Seeks (through `path`'s waypoints), waits for rotation and transfers `req` from the media.
    fn media_access(&mut self, req: &Request, path: ArmPath, now: Nanos, overhead: Nanos, host: bool) -> Service {
        self.media_access_after(req, path, now, overhead, host, 0, None)
    }

    /// [`Self::media_access`], with the media transfer starting no earlier than `data_ready`
    /// (a write whose data is still coming over the bus) and, with `pace = Some((data_at,
    /// per))`, writing each block only once it is in the buffer (block k of the request at
    /// `data_at + (k + 1) * per`).
    #[allow(clippy::too_many_arguments)]
    fn media_access_after(
        &mut self,
        req: &Request,
        path: ArmPath,
        now: Nanos,
        overhead: Nanos,
        host: bool,
        data_ready: Nanos,
        pace: Option<(Nanos, Nanos)>,
    ) -> Service {
        let target = self.geometry.locate(req.start_sector);
        // The mechanism may still be destaging buffered writes.
        let mut t = now.saturating_add(overhead).max(self.mech_free_at);
        let start = t;
        let mut seek_ns: Nanos = 0;
        let mut seek_cylinders = 0;
        let mut from = self.head;
        for waypoint in path.waypoints() {
            let w = Chs { cylinder: waypoint.min(self.geometry.cylinders - 1), head: from.head, sector: 0 };
            seek_ns = seek_ns.saturating_add(self.arm_move_ns(from, w));
            seek_cylinders += from.cylinder.abs_diff(w.cylinder);
            from = w;
        }
        seek_ns = seek_ns.saturating_add(self.arm_move_ns(from, target.chs));
        seek_cylinders += from.cylinder.abs_diff(target.chs.cylinder);
        if req.op == Op::Write && !(self.ext.write_settle_on_move_only && seek_ns == 0) {
            seek_ns = seek_ns.saturating_add(self.write_settle_ns).saturating_sub(self.ext.write_settle_credit_ns);
        }
        if req.op == Op::Write {
            seek_ns = seek_ns.max(self.ext.min_write_seek_ns);
        }
        t = t.saturating_add(seek_ns);
        let rotation_ns = self.rotational_wait_ns(t.max(data_ready), target.angle).saturating_add(data_ready.saturating_sub(t));
        t = t.saturating_add(rotation_ns);
        let (end, transfer_ns) = match pace {
            Some((data_at, per)) if data_at.saturating_add(per.saturating_mul(req.size_sectors as Nanos)) > t => {
                self.paced_walk(req.start_sector, req.end_sector(), t, target, data_at, per)
            }
            _ => self.walk(req.start_sector, t, req.end_sector(), Nanos::MAX, true, Some(target)),
        };
        self.head = end.head.unwrap_or(target.chs);
        self.head_sector = end.sector;
        if req.op == Op::Read && self.cache.enabled() {
            self.cache.start_stream(req.start_sector, end.sector, end.at_ns, self.geometry.capacity_sectors);
            if self.ext.readahead_to_track_end {
                let seg_lo = req.start_sector.max(end.sector.saturating_sub(self.cache.segment_sectors));
                let cap = self.track_end_readahead(req, seg_lo, Some(&target));
                self.cache.set_cap(cap);
            } else if end.sector < target.contiguous_end_sector {
                // The stream's front, walked at the next decision, starts by locating the
                // stream's first sector: in the request's contiguous run its position follows by
                // arithmetic, and `locate_near` leaves it in the geometry's memo for that walk
                // (`track_end_readahead` above locates it so).
                self.geometry.locate_near(end.sector, req.start_sector, &target);
            }
            if self.ext.readahead_stop_at > 0 {
                if let Some(st) = self.cache.stream {
                    let cap = st.cap_sector.min(self.head_bound_end(end.sector.saturating_sub(1)));
                    self.cache.set_cap(cap);
                }
            }
        }
        // With a per-sector host transfer time, the host side completes when both the media and
        // the bus are done (the bus streams the data behind the media), plus the completion
        // overhead.
        let completion_ns = match (self.ext.bus_sector_ns, self.ext.overheads) {
            _ if !host => end.at_ns,
            (None, None) => end.at_ns,
            (bus, o) => {
                let (per_sector, complete) = match req.op {
                    Op::Read => (bus.map_or(0, |b| b.0), o.map_or(0, |o| o.read_complete)),
                    // A flush never reaches the mechanism (the drive queue serves it); as a write.
                    // Nor does a discard: a disk has none (scenarios refuse it, Device::discard).
                    Op::Write | Op::Flush | Op::Discard => (bus.map_or(0, |b| b.1), o.map_or(0, |o| o.write_complete)),
                };
                let on_track = start.saturating_add(seek_ns).saturating_add(rotation_ns);
                let bus_start = if req.op == Op::Read {
                    // When the water mark has come off the media, and never before the first
                    // block has: a block goes to the host only once it is in the buffer
                    // (DiskSim reconnects for a read at the end of its first sector).
                    let first = self.read_water_mark_blocks(req.size_sectors as u64, self.ext.read_bus_start_fraction);
                    self.walk(req.start_sector, on_track, req.start_sector + first, Nanos::MAX, true, Some(target)).0.at_ns
                } else {
                    on_track
                };
                // A read that disconnected reselects the host (once its disconnection is over)
                // and prepares the data before the transfer.
                let bus_start = match (req.op, self.ext.read_reconnect) {
                    (Op::Read, Some(rr)) => {
                        let disconnected = now.saturating_add(overhead).saturating_add(rr.disconnect[!self.last_read as usize]);
                        bus_start.max(disconnected).saturating_add(rr.reselect).saturating_add(o.map_or(0, |o| o.data_prep))
                    }
                    _ => bus_start,
                };
                let host_done = if req.op == Op::Read && per_sector > 0 {
                    self.streamed_read_done(req.start_sector, req.end_sector(), on_track, target, bus_start, per_sector)
                } else {
                    end.at_ns.saturating_add(per_sector).max(bus_start.saturating_add(per_sector.saturating_mul(req.size_sectors as Nanos)))
                };
                host_done.saturating_add(complete)
            }
        };
        Service {
            dispatch_ns: now,
            completion_ns,
            seek_cylinders,
            seek_ns,
            // Everything between arrival on track and the end that is not transfer: the initial
            // rotational wait plus switches inside a multi-track request (and any wait for the
            // mechanism or the bus).
            rotation_ns: completion_ns.saturating_sub(now).saturating_sub(overhead).saturating_sub(seek_ns).saturating_sub(transfer_ns),
            transfer_ns,
            cache_hit: false,
            resume_ns: None,
        }
    }

    /// A write-through write with SCSI disconnect/reselect: command overhead, then the data
    /// over the bus while the arm moves; the media write starts once the data is in; the drive
    /// disconnects, and reselects the host when the media write is done.
    fn disconnecting_write(&mut self, req: &Request, path: ArmPath, now: Nanos, wd: WriteDisconnect) -> Service {
        let o = self.ext.overheads.unwrap_or_default();
        let after = !self.last_read as usize;
        let per_request = self.overhead_ns;
        let extra = wd.extra && self.last_write_end.is_some_and(|e| e != req.start_sector);
        // When the data phase starts, when the mechanism may start, and the final reselection.
        let (data_at, mech_at, reselect) = if extra {
            (
                sum(&[now, per_request, wd.extra_command, wd.extra_disconnect, wd.extra_inter_disconnect, wd.reselect_first, o.data_prep]),
                sum(&[now, per_request, wd.extra_command, wd.extra_seek_delta]),
                wd.reselect_other,
            )
        } else {
            (sum(&[now, per_request, o.write_miss[after], o.data_prep]), sum(&[now, per_request, o.write_miss[after]]), wd.reselect_first)
        };
        let disconnect = if extra { wd.extra_second_disconnect } else { o.write_disconnect };
        let bus = self.ext.bus_sector_ns.map_or_else(|| self.bus_ns(req.size_sectors), |b| b.1.saturating_mul(req.size_sectors as Nanos));
        let data_in = data_at.saturating_add(bus);
        let per = bus / req.size_sectors.max(1) as Nanos;
        // The media write starts once its first block is in the buffer; a drive with the extra
        // write disconnect waits for more (DiskSim's rule: 10 blocks, or the whole request if
        // smaller, for requests under 45 blocks; 15 blocks for larger ones). The media cannot
        // finish before the last block has arrived.
        let n = req.size_sectors as u64;
        let first = if wd.extra {
            if n < 45 {
                n.min(10)
            } else {
                15
            }
        } else {
            1
        };
        let media =
            self.media_access_after(req, path, mech_at, 0, false, data_at.saturating_add(first.saturating_mul(per)), Some((data_at, per)));
        let completion_ns = sum(&[
            media.completion_ns.max(data_in.saturating_add(per)).max(data_in.saturating_add(disconnect)),
            reselect,
            o.write_complete,
        ]);
        Service {
            dispatch_ns: now,
            completion_ns,
            rotation_ns: completion_ns.saturating_sub(mech_at).saturating_sub(media.seek_ns).saturating_sub(media.transfer_ns),
            ..media
        }
    }

    /// When the host has all of a media read of `[lo, hi)` whose blocks go over the bus one at a
    /// time, `per` each, from `bus_start` on, each block only once it is in the buffer (at the end
    /// of its sector; the head reaches `lo`, on track `first`, at `on_track`): block k is on the
    /// bus from max(end of block k - 1 on the bus, block k in). The bus idles while the media
    /// switches tracks or seeks to the next cylinder and waits for rotation, and after such a gap
    /// a bus slower than the media is the bottleneck again (DiskSim transfers the blocks that are
    /// in the buffer whenever the bus is free, and reconnects when the next one comes in). With a
    /// bus slower than the media the latest block to wait is the first of a track, with a faster
    /// bus the last one, so one walk to each track's first block is enough.
    fn streamed_read_done(&self, lo: u64, hi: u64, on_track: Nanos, first: TrackPos, bus_start: Nanos, per: Nanos) -> Nanos {
        let mut done = bus_start.saturating_add(per.saturating_mul(hi - lo));
        let (mut cur, mut t, mut pos) = (lo, on_track, Some(first));
        while cur < hi {
            let aligned = cur == lo;
            let first_in = self.walk(cur, t, cur + 1, Nanos::MAX, aligned, pos).0;
            done = done.max(first_in.at_ns.saturating_add(per.saturating_mul(hi - cur)));
            let track_end = pos.map_or_else(|| self.geometry.locate(cur).track_end_sector, |p| p.track_end_sector);
            let end = self.walk(cur, t, hi.min(track_end), Nanos::MAX, aligned, pos).0;
            done = done.max(end.at_ns.saturating_add(per));
            if end.sector <= cur {
                break;
            }
            (cur, t, pos) = (end.sector, end.at_ns, None);
        }
        done
    }

    /// How many blocks of an `n`-block media read must be in the buffer before the host transfer
    /// starts, for a water mark `fraction` (see [`DiskExtensions::water_mark_by_request`]).
    fn read_water_mark_blocks(&self, n: u64, fraction: f64) -> u64 {
        let blocks = if self.ext.water_mark_by_request {
            ((n.min(self.cache.segment_sectors.max(1)) as f64 * fraction) as u64).max(1)
        } else {
            (self.cache.segment_sectors as f64 * fraction).ceil() as u64
        };
        blocks.clamp(1, n.max(1))
    }

    /// The command overhead of a request going to the media (a miss, or a write-through).
    fn miss_overhead(&self, op: Op) -> Nanos {
        match self.ext.overheads {
            None => self.overhead_ns,
            Some(o) => {
                let after = !self.last_read as usize;
                self.overhead_ns.saturating_add(match op {
                    Op::Read => o.read_miss[after],
                    Op::Write | Op::Flush | Op::Discard => o.write_miss[after].saturating_add(o.data_prep),
                })
            }
        }
    }

    /// The LBA just past the track (`readahead_stop_at` 1) or the cylinder (2) holding `lba`:
    /// where read-ahead that never moves the head stops.
    fn head_bound_end(&self, lba: u64) -> u64 {
        let cap = self.geometry.capacity_sectors;
        if lba >= cap {
            return cap;
        }
        let p = self.geometry.locate(lba);
        let mut end = p.track_end_sector;
        if self.ext.readahead_stop_at == 2 {
            while end < cap && self.geometry.cylinder_of(end) == p.chs.cylinder {
                end = self.geometry.locate(end).track_end_sector;
            }
        }
        end
    }

    /// Where read-ahead after (or through) `req` stops with `readahead_to_track_end`: the end of
    /// the track holding the block after `req`, plus one track's worth of sectors (the track
    /// size where `req` starts) when the segment starts before that track.
    /// `start`, when given, is the position of `req`'s first sector.
    fn track_end_readahead(&self, req: &Request, seg_lo: u64, start: Option<&TrackPos>) -> u64 {
        let cap = self.geometry.capacity_sectors;
        let hi = req.end_sector();
        if hi >= cap {
            return cap;
        }
        let p = match start {
            Some(s) => self.geometry.locate_near(hi, req.start_sector, s),
            None => self.geometry.locate(hi),
        };
        let track_start = hi - p.chs.sector as u64;
        let end = p.track_end_sector;
        if seg_lo < track_start {
            let spt = start.map_or_else(|| self.geometry.locate(req.start_sector).sectors_per_track, |s| s.sectors_per_track);
            (end + spt as u64).min(cap)
        } else {
            end
        }
    }

    /// Freezes read-ahead at `t` (the head leaves for another access).
    fn leave_stream(&mut self, t: Nanos) {
        if let Some(front) = self.stream_front(t) {
            self.cache.stop_stream(front.sector);
            self.head = front.head.unwrap_or_else(|| self.geometry.locate(front.sector.saturating_sub(1)).chs);
        }
    }

    /// Keeps a written range in the buffer for later read hits.
    fn keep_written(&mut self, req: &Request) {
        if self.ext.read_hits_on_write_data && self.cache.enabled() {
            self.cache.insert_static(req.start_sector, req.end_sector());
        }
    }

    /// Write-back: the write completes once its data is in the buffer; it is destaged (written
    /// to the media) as soon as the mechanism is free.
    fn buffered_write(&mut self, req: &Request, now: Nanos) -> Service {
        // A full buffer: wait for the oldest destage to finish.
        while self.destages.front().is_some_and(|&t| t <= now) {
            self.destages.pop_front();
        }
        let mut t = now;
        while self.destages.len() >= self.ext.write_back_segments as usize {
            t = t.max(self.destages.pop_front().unwrap());
        }
        let (overhead, complete) = match self.ext.overheads {
            None => (self.overhead_ns, 0),
            Some(o) => {
                (self.overhead_ns.saturating_add(o.write_hit[!self.last_read as usize]).saturating_add(o.data_prep), o.write_complete)
            }
        };
        let bus = self.ext.bus_sector_ns.map_or_else(|| self.bus_ns(req.size_sectors), |b| b.1.saturating_mul(req.size_sectors as Nanos));
        let done = sum(&[t, overhead, bus, complete]);
        // Destage: the media write starts when the data is in and the mechanism is free.
        let destage_at = done.max(self.mech_free_at);
        self.leave_stream(destage_at);
        self.cache.invalidate(req.start_sector, req.end_sector());
        let media = self.media_access(req, ArmPath::Direct, destage_at, 0, false);
        self.mech_free_at = media.completion_ns.max(destage_at);
        self.destages.push_back(self.mech_free_at);
        self.keep_written(req);
        Service { dispatch_ns: now, completion_ns: done, transfer_ns: bus, cache_hit: true, ..Service::default() }
    }
}

impl DeviceView for RotationalDisk {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn capacity_sectors(&self) -> u64 {
        self.geometry.capacity_sectors
    }

    fn cylinders(&self) -> u32 {
        self.geometry.cylinders
    }

    fn cylinder_of(&self, sector: u64) -> u32 {
        self.geometry.cylinder_of(sector)
    }

    fn head_cylinder(&self) -> u32 {
        self.head.cylinder
    }

    fn head_sector(&self) -> u64 {
        self.head_sector
    }

    fn seek_time_ns(&self, distance_cylinders: u32) -> Nanos {
        match self.seeks.seek_ns(distance_cylinders) {
            Some(t) => t,
            None => self.spec.seek.time_ns(distance_cylinders),
        }
    }

    fn seek_lower_bound_ns(&self, distance_cylinders: u32) -> Nanos {
        self.seeks.floor_ns(distance_cylinders)
    }

    fn positioning_time_ns(&self, sector: u64, sectors: u32, op: Op, now: Nanos) -> Nanos {
        self.positioning_time_at_ns(&self.position_of(sector), sectors, op, now)
    }

    fn position_of(&self, sector: u64) -> SectorPosition {
        let p = self.geometry.locate(sector);
        SectorPosition { sector, cylinder: p.chs.cylinder, head: p.chs.head, angle: p.angle }
    }

    fn positioning_time_at_ns(&self, pos: &SectorPosition, sectors: u32, op: Op, now: Nanos) -> Nanos {
        self.buffered_positioning_ns(pos, sectors, op, now).unwrap_or_else(|| self.mechanical_positioning_ns(pos, op, now))
    }

    fn prepare_positioning(&self, now: Nanos) -> super::PreparedPositioning {
        self.prepare(now)
    }

    fn prepared_positioning_ns(&self, prep: &super::PreparedPositioning, pos: &SectorPosition, sectors: u32, op: Op) -> Nanos {
        self.estimate_prepared(prep, pos, sectors, op)
    }

    fn rpo_choice(&self, waiting: &[super::drive_queue::Queued], seq_limit: u64, now: Nanos) -> Option<usize> {
        self.rpo_choice_prepared(waiting, seq_limit, now)
    }
}

impl RotationalDisk {
    /// The positioning of a read the buffer serves in whole or in part (None: any other access).
    fn buffered_positioning_ns(&self, pos: &SectorPosition, sectors: u32, op: Op, now: Nanos) -> Option<Nanos> {
        // A read the buffer will serve (it holds the whole access, or read-ahead will bring it
        // in) needs no positioning beyond the wait for read-ahead: what the drive will actually
        // do, and what completions then measure. A read the buffer holds only in part (a partial
        // hit) positions for its first missing block, as its service does.
        let hi = pos.sector + sectors.max(1) as u64;
        if op == Op::Read {
            if let Some(wait) = self.buffered_wait_ns(pos.sector, hi, now) {
                return Some(wait);
            }
            // A partial hit: the media reads only the missing blocks, from the segment's end.
            if let Some((_, buffered_to)) = self.partial_hit_prefix(op, pos.sector, hi, now) {
                let start = now.saturating_add(self.miss_overhead(Op::Read)).max(self.mech_free_at);
                let (seek, rotation) = self.positioning_from(self.head, &self.geometry.locate(buffered_to), start);
                return Some(seek.saturating_add(rotation));
            }
        }
        None
    }

    /// Seek (or head switch) and rotational wait to `pos` for an access going to the media.
    #[inline]
    fn mechanical_positioning_ns(&self, pos: &SectorPosition, op: Op, now: Nanos) -> Nanos {
        // The arm starts moving after the command overhead, which sets the rotational phase
        // on arrival; the overhead itself is not positioning (the same for every request, and
        // not in the measured positioning that completions report).
        let to = Chs { cylinder: pos.cylinder, head: pos.head, sector: 0 };
        let start = now.saturating_add(self.overhead_ns);
        let moved = self.arm_move_ns(self.head, to);
        let mut t = start.saturating_add(moved);
        if op == Op::Write && !(self.ext.write_settle_on_move_only && moved == 0) {
            t = t.saturating_add(self.write_settle_ns);
            t = t.max(start).saturating_sub(self.ext.write_settle_credit_ns).max(start);
        }
        t = t.saturating_add(self.rotational_wait_ns(t, pos.angle));
        t - start
    }
}

impl RotationalDisk {
    fn serve(&mut self, req: &Request, path: ArmPath, now: Nanos) -> Service {
        if let Some(hit) = self.try_cache(req, now) {
            return hit;
        }
        if let Some((segment, buffered_to)) = self.partial_hit_prefix(req.op, req.start_sector, req.end_sector(), now) {
            return self.partial_hit(req, segment, buffered_to, now);
        }
        if req.op == Op::Write && self.ext.write_back_segments > 0 {
            return self.buffered_write(req, now);
        }
        // The head leaves any read-ahead stream: freeze what it had read by now.
        self.leave_stream(now.max(self.mech_free_at));
        if req.op == Op::Write {
            self.cache.invalidate(req.start_sector, req.end_sector());
        }
        if let (Op::Write, Some(wd)) = (req.op, self.ext.write_disconnect) {
            let out = self.disconnecting_write(req, path, now, wd);
            self.keep_written(req);
            return out;
        }
        let overhead = self.miss_overhead(req.op);
        let out = self.media_access(req, path, now, overhead, true);
        if req.op == Op::Write {
            self.keep_written(req);
        }
        out
    }
}

impl RotationalDisk {
    /// A read of `[lo, hi)` at `now` whose first part `[lo, end)`, and not all of it, is in a
    /// segment that is not being filled by read-ahead (a segment frozen when the head left, or
    /// one whose read-ahead stopped short of `hi`): a *partial hit*. Returns the segment and
    /// `end`. Reads the stream is still bringing in are [`Self::try_cache`]'s.
    fn partial_hit_prefix(&self, op: Op, lo: u64, hi: u64, now: Nanos) -> Option<(usize, u64)> {
        if op != Op::Read || !self.cache.enabled() {
            return None;
        }
        let mut best = self.cache.find_static_prefix(lo, hi);
        // The stopped stream's segment can hold a prefix only if `lo` lies in its extent, below
        // where the front can be (never past the larger of its start and its cap), and the
        // read ends past its cap: else its front is not needed.
        let may_hold =
            |st: &Stream| self.cache.segment(st.segment).lo <= lo && lo < st.next_sector.max(st.cap_sector) && st.cap_sector < hi;
        let stream = self.cache.stream.filter(may_hold);
        if let Some((st, front)) = stream.and_then(|st| Some((st, self.stream_front(now)?))) {
            let seg = self.cache.segment(st.segment);
            let kept_from = seg.lo.max(front.sector.saturating_sub(self.cache.segment_sectors));
            let stopped = front.sector >= st.cap_sector;
            if stopped && kept_from <= lo && lo < front.sector && front.sector < hi && best.is_none_or(|(_, e)| e < front.sector) {
                best = Some((st.segment, front.sector));
            }
        }
        best
    }

    /// Serves a partial hit (see [`Self::partial_hit_prefix`]) the way DiskSim's controller does
    /// (`disk_read_arrive`, `BUFFER_PARTIAL`, with `Immed transfer partial hit = 1`, and
    /// `disk_check_hda_pending`): the host transfer of the buffered part starts at once, after
    /// the read-hit overhead; the mechanism, after the read-miss overhead, reads only the missing
    /// blocks from the segment's end, and read-ahead then continues in the same segment. The
    /// last block goes over the bus after the media has read it. The media part's seek and
    /// rotational wait are the request's positioning (what [`DeviceView::positioning_time_at_ns`]
    /// estimates for it).
    fn partial_hit(&mut self, req: &Request, segment: usize, buffered_to: u64, now: Nanos) -> Service {
        self.leave_stream(now.max(self.mech_free_at));
        let (overhead, complete) = match self.ext.overheads {
            None => (self.overhead_ns, 0),
            Some(o) => (self.overhead_ns.saturating_add(o.read_hit[!self.last_read as usize]).saturating_add(o.data_prep), o.read_complete),
        };
        let target = self.geometry.locate(buffered_to);
        let mech_start = now.saturating_add(self.miss_overhead(Op::Read)).max(self.mech_free_at);
        let (seek_ns, rotation_ns) = self.positioning_from(self.head, &target, mech_start);
        let seek_cylinders = self.head.cylinder.abs_diff(target.chs.cylinder);
        let (end, transfer_ns) =
            self.walk(buffered_to, sum(&[mech_start, seek_ns, rotation_ns]), req.end_sector(), Nanos::MAX, true, Some(target));
        self.head = end.head.unwrap_or(target.chs);
        self.head_sector = end.sector;
        let capacity = self.geometry.capacity_sectors;
        self.cache.resume_stream(segment, end.sector, end.at_ns, capacity);
        if self.ext.readahead_to_track_end {
            let seg_lo = self.cache.segment(segment).lo;
            let cap = self.track_end_readahead(req, seg_lo, None);
            self.cache.set_cap(cap);
        }
        if self.ext.readahead_stop_at > 0 {
            if let Some(st) = self.cache.stream {
                let cap = st.cap_sector.min(self.head_bound_end(end.sector.saturating_sub(1)));
                self.cache.set_cap(cap);
            }
        }
        // The buffered part goes over the bus at once; the drive then disconnects and reconnects
        // for the missing part only once its first block (or the water mark) is in the buffer,
        // as for any media read (DiskSim counts a block at the end of its sector).
        let buffered_done = sum(&[now, overhead, self.bus_ns((buffered_to - req.start_sector) as u32)]);
        let missing = req.end_sector() - buffered_to;
        let first = self.read_water_mark_blocks(missing, self.ext.read_bus_start_fraction);
        let on_track = sum(&[mech_start, seek_ns, rotation_ns]);
        let first_in = self.walk(buffered_to, on_track, buffered_to.saturating_add(first), Nanos::MAX, true, Some(target)).0.at_ns;
        let host_done =
            self.streamed_read_done(buffered_to, req.end_sector(), on_track, target, buffered_done.max(first_in), self.bus_ns(1));
        Service {
            dispatch_ns: now,
            completion_ns: host_done.saturating_add(complete),
            seek_cylinders,
            seek_ns,
            rotation_ns,
            transfer_ns,
            cache_hit: false,
            resume_ns: None,
        }
    }

    /// Arm movement (seek or head switch) from `from` to `to`'s track starting at `start`, and
    /// the rotational wait then for `to`'s sector.
    fn positioning_from(&self, from: Chs, to: &TrackPos, start: Nanos) -> (Nanos, Nanos) {
        let moved = self.arm_move_ns(from, to.chs);
        (moved, self.rotational_wait_ns(start.saturating_add(moved), to.angle))
    }

    /// If a read of [lo, hi) at `now` would be served from the buffer (as `try_cache` decides),
    /// how long after the command overhead its first sector is available; None if it must go
    /// to the media.
    fn buffered_wait_ns(&self, lo: u64, hi: u64, now: Nanos) -> Option<Nanos> {
        if !self.cache.enabled() {
            return None;
        }
        if self.cache.find_static(lo, hi).is_some() {
            return Some(0);
        }
        let st = self.cache.stream?;
        let seg = self.cache.segment(st.segment);
        // Outside the stream's whole extent no front can serve it: the front is not needed.
        if lo < seg.lo || lo > st.cap_sector {
            return None;
        }
        let front = self.stream_front(now)?;
        if lo < front.sector.saturating_sub(self.cache.segment_sectors) {
            return None;
        }
        // Read-ahead that has stopped short of the access's end leaves the rest to the media.
        if front.sector >= st.cap_sector && hi > st.cap_sector {
            return None;
        }
        if lo < front.sector {
            return Some(0);
        }
        let reach = self.walk(st.next_sector, st.at_ns, lo + 1, Nanos::MAX, st.aligned, None).0;
        Some(reach.at_ns.saturating_sub(now.saturating_add(self.overhead_ns)))
    }
}

impl super::Device for RotationalDisk {
    fn service(&mut self, req: &Request, path: ArmPath, now: Nanos) -> Service {
        debug_assert!(req.end_sector() <= self.geometry.capacity_sectors);
        let out = self.serve(req, path, now);
        self.last_read = req.op == Op::Read;
        self.last_write_end = (req.op == Op::Write).then(|| req.end_sector());
        out
    }

    fn as_view(&self) -> &dyn DeviceView {
        self
    }

    fn advance_to(&mut self, now: Nanos) {
        // Read-ahead carries the head along: estimates made now must start from there.
        if let Some(WalkEnd { head: Some(h), .. }) = self.stream_front(now) {
            self.head = h;
        }
    }
}

/// The angle from `from` forward to `to`: `(to + REV_UNITS - from) % REV_UNITS`, without the
/// division when both are angles within one turn (every caller's are; the rest take the
/// division, so the result is the same for any input).
#[inline]
fn forward_angle(from: u64, to: u64) -> u64 {
    if from < REV_UNITS && to < REV_UNITS {
        if to >= from {
            to - from
        } else {
            to + REV_UNITS - from
        }
    } else {
        (to + REV_UNITS - from) % REV_UNITS
    }
}

/// The sum of times, saturating at [`Nanos::MAX`] (never reached with the documented ranges of
/// the inputs; saturating rather than wrapping if it were).
fn sum(times: &[Nanos]) -> Nanos {
    times.iter().fold(0, |a: Nanos, &b| a.saturating_add(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::presets::preset;
    use crate::device::Device;
    use rand::{Rng, SeedableRng};

    const DRIVES: [&str; 3] = ["wd-ultrastar-hc310", "ibm-deskstar-34gxp", "maxtor-stm332061"];

    /// A walk within one track from a known position (one transfer) ends where the loop, given
    /// no position, ends: the same sector, instant, head and transfer time, for limits before,
    /// at and after its end.
    #[test]
    fn a_walk_within_one_track_is_the_loops_first_pass() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(26);
        for name in DRIVES {
            let d = RotationalDisk::new(preset(name).unwrap()).unwrap();
            let cap = d.geometry.capacity_sectors;
            let mut one_transfer = 0;
            for _ in 0..20_000 {
                let from = rng.gen_range(0..cap - 1);
                let pos = d.geometry.locate(from);
                let to = rng.gen_range(from + 1..=pos.track_end_sector);
                let t0: Nanos = rng.gen_range(0..10_000_000_000);
                let whole = d.walk_uncached(from, t0, to, Nanos::MAX, true, None).0.at_ns;
                let until = match rng.gen_range(0..4) {
                    0 => Nanos::MAX,
                    1 => whole,
                    2 => (whole - 1).max(t0),
                    _ => rng.gen_range(t0..=whole),
                };
                let known = d.walk_uncached(from, t0, to, until, true, Some(pos));
                assert_eq!(known, d.walk_uncached(from, t0, to, until, true, None), "{name}: {from}..{to} from {t0} until {until}");
                one_transfer += (known.0.sector == to) as u32;
            }
            assert!(one_transfer > 10_000, "{name}: the one-transfer case was taken {one_transfer} times");
        }
    }

    /// `partial_hit_prefix` and `buffered_wait_ns` as they were before they asked for the
    /// stream's front only when a read may lie in it: the front first, then the tests.
    fn partial_hit_prefix_front_first(d: &RotationalDisk, lo: u64, hi: u64, now: Nanos) -> Option<(usize, u64)> {
        let mut best = d.cache.find_static_prefix(lo, hi);
        if let (Some(st), Some(front)) = (d.cache.stream, d.stream_front(now)) {
            let seg = d.cache.segment(st.segment);
            let kept_from = seg.lo.max(front.sector.saturating_sub(d.cache.segment_sectors));
            let stopped = front.sector >= st.cap_sector;
            if stopped && kept_from <= lo && lo < front.sector && front.sector < hi && best.is_none_or(|(_, e)| e < front.sector) {
                best = Some((st.segment, front.sector));
            }
        }
        best
    }

    fn buffered_wait_front_first(d: &RotationalDisk, lo: u64, hi: u64, now: Nanos) -> Option<Nanos> {
        if d.cache.find_static(lo, hi).is_some() {
            return Some(0);
        }
        let st = d.cache.stream?;
        let seg = d.cache.segment(st.segment);
        let front = d.stream_front(now)?;
        if lo < seg.lo.max(front.sector.saturating_sub(d.cache.segment_sectors)) || lo > st.cap_sector {
            return None;
        }
        if front.sector >= st.cap_sector && hi > st.cap_sector {
            return None;
        }
        if lo < front.sector {
            return Some(0);
        }
        let reach = d.walk(st.next_sector, st.at_ns, lo + 1, Nanos::MAX, st.aligned, None).0;
        Some(reach.at_ns.saturating_sub(now.saturating_add(d.overhead_ns)))
    }

    /// The range tests that spare the front give what asking for it first gives: reads in,
    /// around and far from a live or stopped stream, at instants before and after read-ahead
    /// ends, while the disk serves sequential runs, partial hits and random reads.
    #[test]
    fn the_front_is_asked_for_only_when_a_read_may_lie_in_it() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(2612);
        for name in DRIVES {
            let mut d = RotationalDisk::new(preset(name).unwrap()).unwrap();
            assert!(d.cache.enabled(), "{name} has a read cache");
            let cap = d.geometry.capacity_sectors;
            let (mut now, mut next): (Nanos, u64) = (0, 1_000);
            let (mut stream_prefixes, mut waits) = (0, 0);
            for round in 0..3_000u64 {
                for _ in 0..8 {
                    let t = now + rng.gen_range(0..30_000_000);
                    let (lo, hi) = match d.cache.stream {
                        Some(st) if rng.gen_bool(0.8) => {
                            let seg_lo = d.cache.segment(st.segment).lo;
                            let lo = rng.gen_range(seg_lo.saturating_sub(64)..st.cap_sector + 64).min(cap - 1);
                            (lo, (lo + rng.gen_range(1..256)).min(cap))
                        }
                        _ => {
                            let lo = rng.gen_range(0..cap - 256);
                            (lo, lo + rng.gen_range(1..256))
                        }
                    };
                    let expected = partial_hit_prefix_front_first(&d, lo, hi, t);
                    assert_eq!(d.partial_hit_prefix(Op::Read, lo, hi, t), expected, "{name}, round {round}: [{lo}, {hi}) at {t}");
                    stream_prefixes += d.cache.stream.is_some_and(|st| expected.is_some_and(|(i, _)| i == st.segment)) as u32;
                    let wait = buffered_wait_front_first(&d, lo, hi, t);
                    assert_eq!(d.buffered_wait_ns(lo, hi, t), wait, "{name}, round {round}: [{lo}, {hi}) at {t}");
                    waits += wait.is_some_and(|w| w > 0) as u32;
                }
                // Serve on: mostly the next blocks (the stream's hits and partial hits), now and
                // then far away (a new stream), at instants inside and after read-ahead.
                let start = if rng.gen_bool(0.7) { next + rng.gen_range(0..64) } else { rng.gen_range(0..cap - 512) };
                let req = Request::new(round, Op::Read, start.min(cap - 512), rng.gen_range(1..256), 0);
                let at = now + rng.gen_range(0..20_000_000);
                d.advance_to(at);
                now = d.service(&req, ArmPath::Direct, at).completion_ns;
                next = req.end_sector();
            }
            assert!(stream_prefixes > 0 && waits > 0, "{name}: {stream_prefixes} partial hits on the stream, {waits} waits for it");
        }
    }

    /// `forward_angle` is `(to + REV_UNITS - from) % REV_UNITS` for angles of one turn (its
    /// fast path) and beyond (the division).
    #[test]
    fn forward_angle_is_the_modular_difference() {
        let modular = |from: u64, to: u64| (to + REV_UNITS - from) % REV_UNITS;
        let edges = [0, 1, REV_UNITS / 2, REV_UNITS - 1, REV_UNITS, REV_UNITS + 7, 3 * REV_UNITS - 1];
        for &a in &edges {
            for &b in &edges {
                if a <= b + REV_UNITS {
                    assert_eq!(forward_angle(a, b), modular(a, b), "{a} -> {b}");
                }
            }
        }
        let mut x: u64 = 7;
        for _ in 0..200_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let (a, b) = ((x >> 11) % REV_UNITS, (x >> 3) % (2 * REV_UNITS));
            assert_eq!(forward_angle(a, b), modular(a, b), "{a} -> {b}");
        }
    }
}
