//! Zoned disk geometry: LBA <-> (cylinder, head, sector), track/cylinder skew, angular positions.
//!
//! Angles are integers: one revolution is [`REV_UNITS`] units. With an integer rpm, 60 s is a
//! whole number of revolutions, so the rotational phase at any nanosecond is exact in u64.

use crate::divisor::Divisor;
use serde::{Deserialize, Serialize};
use std::cell::Cell;

/// Angular units per revolution (= nanoseconds per minute; so one ns advances `rpm` units).
pub const REV_UNITS: u64 = 60_000_000_000;

/// A band of adjacent cylinders with the same number of sectors per track.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZoneSpec {
    pub cylinders: u32,
    pub sectors_per_track: u32,
    /// Logical sector 0 of each next track (same cylinder) is shifted by this many sectors,
    /// so a head switch does not miss it. `None`: derived from the head-switch time.
    #[serde(default)]
    pub track_skew_sectors: Option<u32>,
    /// The shift across a cylinder boundary. `None`: derived from the single-cylinder seek.
    #[serde(default)]
    pub cylinder_skew_sectors: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Zone {
    pub first_cylinder: u32,
    pub cylinders: u32,
    pub sectors_per_track: u32,
    pub first_sector: u64,
    pub track_skew_sectors: u32,
    pub cylinder_skew_sectors: u32,
    /// Physical slot of the zone's first sector: the skew carries on across zone boundaries.
    pub base_slot: u32,
    /// LBAs in the zone: all its sectors, less spares, slips and lead-in with a [`ZoneLayout`].
    pub blocks: u64,
    /// Physical sectors before the zone's first LBA (a [`ZoneLayout`]'s lead-in; 0 by default).
    pub lead_sectors: u64,
    /// Slipped physical ranges, sorted: `(q, start, len, cumulative len up to and including
    /// this one)`, where `q = start - lengths before` is the position ignoring slips at which
    /// the range is skipped. Empty by default.
    slips: Vec<(u64, u64, u64, u64)>,
    /// `sectors_per_track` as a divisor (the mapping divides by it on every access).
    spt_div: Divisor,
    /// Remapped LBAs (DiskSim's defects), sorted: `(first zone-relative LBA, count, physical
    /// index of the first)`; each run lies on one track. Empty by default.
    remaps: Vec<(u64, u64, u64)>,
    /// Slips that push the skew of later tracks forward by one sector each (DiskSim's
    /// per-cylinder and per-track sparing): a track's slots move by the number of these
    /// physical indices below its unit's first sector, the unit being `skew_unit` sectors
    /// (a cylinder or a track). 0: none.
    skew_unit: u64,
    skew_slips: Vec<u64>,
}

impl Zone {
    /// The remap run holding zone-relative LBA `rel`, if any.
    fn remap_of(&self, rel: u64) -> Option<(u64, u64, u64)> {
        if self.remaps.is_empty() {
            return None;
        }
        let i = self.remaps.partition_point(|r| r.0 <= rel);
        (i > 0 && rel < self.remaps[i - 1].0 + self.remaps[i - 1].1).then(|| self.remaps[i - 1])
    }

    /// Physical index of zone-relative LBA `rel`, remaps included.
    fn phys_full(&self, rel: u64) -> u64 {
        match self.remap_of(rel) {
            Some((r0, _, p0)) => p0 + (rel - r0),
            None => self.phys_of(rel),
        }
    }

    /// The zone-relative LBA just past the run of LBAs from `rel` that stay in place (the end
    /// of `rel`'s remap run if it is remapped, else the next remap run's start).
    fn remap_cut(&self, rel: u64) -> u64 {
        if let Some((r0, n, _)) = self.remap_of(rel) {
            return r0 + n;
        }
        let i = self.remaps.partition_point(|r| r.0 <= rel);
        self.remaps.get(i).map_or(u64::MAX, |r| r.0)
    }

    pub fn sectors(&self, surfaces: u32) -> u64 {
        self.cylinders as u64 * surfaces as u64 * self.sectors_per_track as u64
    }

    /// Physical sector index within the zone (cylinder-major, then track, then sector) of the
    /// zone's `rel`-th LBA.
    fn phys_of(&self, rel: u64) -> u64 {
        let x = rel + self.lead_sectors;
        if self.slips.is_empty() {
            return x;
        }
        let i = self.slips.partition_point(|s| s.0 <= x);
        if i == 0 {
            x
        } else {
            x + self.slips[i - 1].3
        }
    }

    /// The zone-relative LBA at physical index `p`, or the next LBA after it if `p` is slipped
    /// (or lead-in); `None` at `p` beyond the zone's last LBA.
    fn rel_at_or_after(&self, p: u64) -> Option<u64> {
        let mut p = p.max(self.lead_sectors);
        let mut before = 0;
        loop {
            let i = self.slips.partition_point(|s| s.1 <= p);
            if i == 0 {
                break;
            }
            let (_, start, len, cum) = self.slips[i - 1];
            before = cum;
            if p < start + len {
                p = start + len; // inside a slipped range: the next LBA follows it
            } else {
                break;
            }
        }
        let rel = p - self.lead_sectors - before;
        (rel < self.blocks).then_some(rel)
    }

    fn is_slipped(&self, p: u64) -> bool {
        if p < self.lead_sectors {
            return true;
        }
        let i = self.slips.partition_point(|s| s.1 <= p);
        i > 0 && p < self.slips[i - 1].1 + self.slips[i - 1].2
    }
}

/// How a zone's LBAs sit on its physical sectors, when they do not simply fill it from its first
/// sector (DiskSim drive descriptions: spare areas, slipped defects, reserved lead-in, fixed
/// offsets, cylinders missing between zones). One per [`ZoneSpec`].
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ZoneLayout {
    pub first_cylinder: u32,
    /// LBAs in the zone.
    pub blocks: u64,
    /// Physical sectors reserved at the zone's front (not mapped).
    pub lead_sectors: u64,
    /// Physical slot of the zone's physical sector 0 (the skew restarts at each zone).
    pub first_slot: u32,
    /// Slipped physical ranges `(start, len)` relative to the zone's first physical sector:
    /// LBAs skip them and move up by `len` (sector slipping: len 1; track slipping: spt).
    pub slips: Vec<(u64, u64)>,
    /// Remapped LBA runs `(first zone-relative LBA, count, physical index of the first)`, each
    /// on one track (DiskSim's defects moved to spare sectors or tracks).
    pub remaps: Vec<(u64, u64, u64)>,
    /// Slips that also push later tracks' skew by one sector each, counted below the first
    /// sector of each unit of `skew_unit` physical sectors (0: none); see device/disksim/sparing.rs.
    pub skew_unit: u64,
    pub skew_slips: Vec<u64>,
}

/// An explicit layout: the drive's cylinder count and one [`ZoneLayout`] per zone.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct LayoutSpec {
    pub cylinders: u32,
    pub zones: Vec<ZoneLayout>,
}

/// A physical address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chs {
    pub cylinder: u32,
    pub head: u32,
    /// Logical sector index within the track (0 = the track's first LBA).
    pub sector: u32,
}

/// Where an LBA lies, with what the timing model needs about its track.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrackPos {
    pub chs: Chs,
    pub sectors_per_track: u32,
    /// `sectors_per_track` as a divisor (angles and transfers divide by it).
    pub spt_div: Divisor,
    /// Physical slot (0..spt) of the sector after skew.
    pub slot: u32,
    /// Angle (in [`REV_UNITS`]) at which this sector starts passing under the head.
    pub angle: u64,
    /// The LBA just past the end of this track.
    pub track_end_sector: u64,
    /// The LBA just past the run of LBAs from this one that lie on consecutive physical sectors
    /// of this track (no slipped or remapped sector between them): at most `track_end_sector`.
    /// Within the run a position follows from this one by arithmetic ([`Geometry::locate_near`]).
    pub contiguous_end_sector: u64,
    /// Index of the zone holding this LBA.
    pub zone: u16,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    pub surfaces: u32,
    pub zones: Vec<Zone>,
    pub cylinders: u32,
    pub capacity_sectors: u64,
    surfaces_div: Divisor,
    /// The zone holding each `2^lut_shift`-sector bucket's first LBA: a lookup starts there and
    /// moves on at most a few zones (fewer than a bucket's zone boundaries), where a binary
    /// search over the zones mispredicts on random addresses.
    zone_lut: Vec<u16>,
    lut_shift: u32,
    /// LBAs located lately: a request's service locates its first and its last sector, the
    /// drive's next decision the read-ahead stream's front (that last sector again), and a
    /// positioning scheduler locates each request when it is queued and again when it is served.
    memo: LocateMemo,
}

/// Entries of [`LocateMemo`] (a power of two): enough that a request located when queued is
/// still there when served behind a few dozen others.
const LOCATE_MEMO_ENTRIES: usize = 64;

/// A direct-mapped memo of [`Geometry::locate`] (a pure function, so a hit is exact), by a hash
/// of the LBA. It is no part of the geometry's value: equal geometries with different memos are
/// equal, a clone starts empty.
#[derive(Debug)]
struct LocateMemo {
    /// The LBA each entry holds (u64::MAX: none; no LBA is that large).
    keys: [Cell<u64>; LOCATE_MEMO_ENTRIES],
    positions: [Cell<Option<TrackPos>>; LOCATE_MEMO_ENTRIES],
}

impl Default for LocateMemo {
    fn default() -> Self {
        LocateMemo { keys: std::array::from_fn(|_| Cell::new(u64::MAX)), positions: std::array::from_fn(|_| Cell::new(None)) }
    }
}

impl LocateMemo {
    #[inline]
    fn slot(lba: u64) -> usize {
        // Fibonacci hashing: the top bits of the product mix every bit of the LBA.
        (lba.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - LOCATE_MEMO_ENTRIES.trailing_zeros())) as usize
    }

    #[inline]
    fn get(&self, lba: u64) -> Option<TrackPos> {
        let i = Self::slot(lba);
        if self.keys[i].get() == lba {
            self.positions[i].get()
        } else {
            None
        }
    }

    #[inline]
    fn put(&self, lba: u64, pos: TrackPos) {
        let i = Self::slot(lba);
        self.keys[i].set(lba);
        self.positions[i].set(Some(pos));
    }
}

impl Clone for LocateMemo {
    fn clone(&self) -> Self {
        LocateMemo::default()
    }
}

impl PartialEq for LocateMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Buckets of the zone lookup: at least this many over the capacity.
const ZONE_LUT_BUCKETS: u64 = 1024;

impl Geometry {
    /// Builds the geometry; skews left as `None` in a zone come from `derive_skew(spt) -> (track, cylinder)`.
    pub fn new(surfaces: u32, zones: &[ZoneSpec], derive_skew: impl Fn(u32) -> (u32, u32)) -> Result<Geometry, String> {
        Self::with_layout(surfaces, zones, derive_skew, None)
    }

    /// [`Geometry::new`] with an optional explicit layout (sparing, lead-in, zone offsets).
    pub fn with_layout(
        surfaces: u32,
        zones: &[ZoneSpec],
        derive_skew: impl Fn(u32) -> (u32, u32),
        layout: Option<&LayoutSpec>,
    ) -> Result<Geometry, String> {
        if zones.len() > u16::MAX as usize {
            return Err(format!("{} zones: at most {} are supported", zones.len(), u16::MAX));
        }
        if let Some(l) = layout {
            return Self::from_layout(surfaces, zones, derive_skew, l);
        }
        if surfaces == 0 {
            return Err("surfaces must be at least 1".into());
        }
        if zones.is_empty() {
            return Err("a disk needs at least one zone".into());
        }
        let mut out = Vec::with_capacity(zones.len());
        let (mut cyl, mut sector) = (0u32, 0u64);
        for (i, z) in zones.iter().enumerate() {
            if z.cylinders == 0 || z.sectors_per_track == 0 {
                return Err(format!("zone {i}: cylinders and sectors_per_track must be positive"));
            }
            let (ts, cs) = derive_skew(z.sectors_per_track);
            let cylinder_skew_sectors = z.cylinder_skew_sectors.unwrap_or(cs) % z.sectors_per_track;
            // The previous zone's last track ends where its first sector started; this zone's
            // first sector comes one cylinder skew after that angle.
            let base_slot = match out.last() {
                None => 0,
                Some(prev) => {
                    let end_slot = Self::slot_in(prev, surfaces, prev.cylinders - 1, surfaces - 1, 0);
                    let end_angle = slot_angle(end_slot, prev.sectors_per_track) as u128;
                    let spt = z.sectors_per_track as u128;
                    ((end_angle * spt).div_ceil(REV_UNITS as u128) as u32 + cylinder_skew_sectors) % z.sectors_per_track
                }
            };
            let zone = Zone {
                first_cylinder: cyl,
                cylinders: z.cylinders,
                sectors_per_track: z.sectors_per_track,
                first_sector: sector,
                track_skew_sectors: z.track_skew_sectors.unwrap_or(ts) % z.sectors_per_track,
                cylinder_skew_sectors,
                base_slot,
                blocks: z.cylinders as u64 * surfaces as u64 * z.sectors_per_track as u64,
                lead_sectors: 0,
                slips: Vec::new(),
                spt_div: Divisor::new(z.sectors_per_track as u64),
                remaps: Vec::new(),
                skew_unit: 0,
                skew_slips: Vec::new(),
            };
            cyl = cyl.checked_add(z.cylinders).ok_or("the zones have more than 2^32 cylinders in all")?;
            sector += zone.sectors(surfaces);
            out.push(zone);
        }
        Ok(Geometry::assemble(surfaces, out, cyl, sector))
    }

    /// The geometry with its derived lookups (zone table, divisors).
    fn assemble(surfaces: u32, zones: Vec<Zone>, cylinders: u32, capacity_sectors: u64) -> Geometry {
        // The smallest power-of-two bucket giving at most ZONE_LUT_BUCKETS buckets (+1).
        let per_bucket = capacity_sectors.div_ceil(ZONE_LUT_BUCKETS).max(1);
        let lut_shift = 64 - (per_bucket - 1).leading_zeros();
        let buckets = (capacity_sectors >> lut_shift) + 1;
        let mut zone_lut = Vec::with_capacity(buckets as usize);
        let mut z = 0usize;
        for b in 0..buckets {
            let first = b << lut_shift;
            while z + 1 < zones.len() && zones[z + 1].first_sector <= first {
                z += 1;
            }
            zone_lut.push(z as u16);
        }
        Geometry {
            surfaces,
            zones,
            cylinders,
            capacity_sectors,
            surfaces_div: Divisor::new(surfaces as u64),
            zone_lut,
            lut_shift,
            memo: LocateMemo::default(),
        }
    }

    fn from_layout(surfaces: u32, zones: &[ZoneSpec], derive_skew: impl Fn(u32) -> (u32, u32), l: &LayoutSpec) -> Result<Geometry, String> {
        if surfaces == 0 {
            return Err("surfaces must be at least 1".into());
        }
        if zones.is_empty() || zones.len() != l.zones.len() {
            return Err(format!("a layout needs one entry per zone ({} zones, {} layouts)", zones.len(), l.zones.len()));
        }
        let mut out: Vec<Zone> = Vec::with_capacity(zones.len());
        let mut sector = 0u64;
        for (i, (z, zl)) in zones.iter().zip(&l.zones).enumerate() {
            if z.cylinders == 0 || z.sectors_per_track == 0 {
                return Err(format!("zone {i}: cylinders and sectors_per_track must be positive"));
            }
            if let Some(prev) = out.last() {
                if (zl.first_cylinder as u64) < prev.first_cylinder as u64 + prev.cylinders as u64 {
                    return Err(format!("zone {i}: first cylinder {} overlaps the previous zone", zl.first_cylinder));
                }
            }
            if zl.first_cylinder as u64 + z.cylinders as u64 > l.cylinders as u64 {
                return Err(format!(
                    "zone {i}: cylinders {}..{} beyond the drive's {}",
                    zl.first_cylinder,
                    zl.first_cylinder as u64 + z.cylinders as u64,
                    l.cylinders
                ));
            }
            let physical = z.cylinders as u64 * surfaces as u64 * z.sectors_per_track as u64;
            let mut slips: Vec<(u64, u64)> = zl.slips.iter().copied().filter(|s| s.1 > 0).collect();
            slips.sort_unstable();
            let mut table = Vec::with_capacity(slips.len());
            let mut cum = 0u64;
            let mut end = 0u64;
            for (start, len) in slips {
                if start < end {
                    return Err(format!("zone {i}: slipped range at {start} overlaps the previous one"));
                }
                table.push((start - cum, start, len, cum + len));
                cum += len;
                end = start + len;
            }
            if zl.lead_sectors + cum + zl.blocks > physical || end > physical {
                return Err(format!(
                    "zone {i}: {} LBAs + {} lead-in + {} slipped sectors exceed its {physical} physical sectors",
                    zl.blocks, zl.lead_sectors, cum
                ));
            }
            let mut remaps = zl.remaps.clone();
            remaps.sort_unstable();
            for (k, r) in remaps.iter().enumerate() {
                let spt = z.sectors_per_track as u64;
                if r.1 == 0 || r.0 + r.1 > zl.blocks || r.2 + r.1 > physical || r.2 / spt != (r.2 + r.1 - 1) / spt {
                    return Err(format!(
                        "zone {i}: remap of LBAs {}..{} to physical {} lies outside the zone or across a track",
                        r.0,
                        r.0 + r.1,
                        r.2
                    ));
                }
                if k > 0 && remaps[k - 1].0 + remaps[k - 1].1 > r.0 {
                    return Err(format!("zone {i}: remapped LBA runs overlap at {}", r.0));
                }
            }
            let (ts, cs) = derive_skew(z.sectors_per_track);
            let mut skew_slips = zl.skew_slips.clone();
            skew_slips.sort_unstable();
            out.push(Zone {
                first_cylinder: zl.first_cylinder,
                cylinders: z.cylinders,
                sectors_per_track: z.sectors_per_track,
                first_sector: sector,
                track_skew_sectors: z.track_skew_sectors.unwrap_or(ts) % z.sectors_per_track,
                cylinder_skew_sectors: z.cylinder_skew_sectors.unwrap_or(cs) % z.sectors_per_track,
                base_slot: zl.first_slot % z.sectors_per_track,
                blocks: zl.blocks,
                lead_sectors: zl.lead_sectors,
                slips: table,
                spt_div: Divisor::new(z.sectors_per_track as u64),
                remaps,
                skew_unit: if skew_slips.is_empty() { 0 } else { zl.skew_unit },
                skew_slips,
            });
            sector += zl.blocks;
        }
        out.retain(|z| z.blocks > 0);
        if out.is_empty() {
            return Err("the layout maps no LBA".into());
        }
        Ok(Geometry::assemble(surfaces, out, l.cylinders, sector))
    }

    fn zone_of_sector(&self, lba: u64) -> &Zone {
        &self.zones[self.zone_index(lba)]
    }

    fn zone_index(&self, lba: u64) -> usize {
        let b = ((lba >> self.lut_shift) as usize).min(self.zone_lut.len() - 1);
        let mut i = self.zone_lut[b] as usize;
        while i + 1 < self.zones.len() && self.zones[i + 1].first_sector <= lba {
            i += 1;
        }
        i
    }

    fn zone_of_cylinder(&self, cylinder: u32) -> &Zone {
        let i = self.zones.partition_point(|z| z.first_cylinder <= cylinder);
        &self.zones[i.saturating_sub(1)]
    }

    /// Maps an LBA to its track position. `lba` must be below the capacity.
    #[inline]
    pub fn locate(&self, lba: u64) -> TrackPos {
        if let Some(pos) = self.memo.get(lba) {
            return pos;
        }
        let pos = self.locate_uncached(lba);
        self.memo.put(lba, pos);
        pos
    }

    fn locate_uncached(&self, lba: u64) -> TrackPos {
        debug_assert!(lba < self.capacity_sectors);
        let zone = self.zone_index(lba);
        let z = &self.zones[zone];
        let spt = z.sectors_per_track as u64;
        let rel = lba - z.first_sector;
        let phys = if z.remaps.is_empty() { z.phys_of(rel) } else { z.phys_full(rel) };
        let (track, sector) = z.spt_div.div_rem(phys);
        let sector = sector as u32;
        let (cyl_in_zone, head) = self.surfaces_div.div_rem(track);
        let (cyl_in_zone, head) = (cyl_in_zone as u32, head as u32);
        let chs = Chs { cylinder: z.first_cylinder + cyl_in_zone, head, sector };
        let slot = self.physical_slot(z, cyl_in_zone, head, sector);
        let mut track_end_sector = if z.slips.is_empty() && z.lead_sectors == 0 {
            (lba - sector as u64 + spt).min(z.first_sector + z.blocks)
        } else {
            z.first_sector + z.rel_at_or_after((track + 1) * spt).unwrap_or(z.blocks)
        };
        let mut remapped = false;
        if !z.remaps.is_empty() {
            // A remapped run is a track of its own; the LBAs before it end where it starts.
            let cut = z.remap_cut(rel);
            if z.remap_of(rel).is_some() {
                track_end_sector = z.first_sector + cut;
                remapped = true;
            } else {
                track_end_sector = track_end_sector.min(z.first_sector + cut);
            }
        }
        // Up to the next slip the physical index grows with the LBA (a remapped run is
        // contiguous in its spare sectors up to its end).
        let contiguous_end_sector = if remapped || z.slips.is_empty() {
            track_end_sector
        } else {
            let x = rel + z.lead_sectors;
            let i = z.slips.partition_point(|s| s.0 <= x);
            z.slips.get(i).map_or(track_end_sector, |s| track_end_sector.min(z.first_sector + (s.0 - z.lead_sectors)))
        };
        TrackPos {
            chs,
            sectors_per_track: z.sectors_per_track,
            spt_div: z.spt_div,
            slot,
            angle: slot_angle_by(slot, z.spt_div),
            track_end_sector,
            contiguous_end_sector,
            zone: zone as u16,
        }
    }

    /// [`Geometry::locate`] of the first LBA of the track after `pos`'s (`pos.track_end_sector`,
    /// below the capacity): by arithmetic when the next track is in the same plain zone (no
    /// slips, remaps, lead-in or slipped skew), where a sequential transfer's track switches
    /// mostly fall, else by the full mapping. Exact either way.
    #[inline]
    pub fn locate_next_track(&self, pos: &TrackPos) -> TrackPos {
        let lba = pos.track_end_sector;
        let z = &self.zones[pos.zone as usize];
        let zone_end = z.first_sector + z.blocks;
        if !(z.slips.is_empty() && z.remaps.is_empty() && z.lead_sectors == 0 && z.skew_unit == 0) || lba >= zone_end {
            return self.locate(lba);
        }
        let chs = if pos.chs.head + 1 < self.surfaces {
            Chs { cylinder: pos.chs.cylinder, head: pos.chs.head + 1, sector: 0 }
        } else {
            Chs { cylinder: pos.chs.cylinder + 1, head: 0, sector: 0 }
        };
        let slot = Self::slot_in(z, self.surfaces, chs.cylinder - z.first_cylinder, chs.head, 0);
        let track_end_sector = (lba + z.sectors_per_track as u64).min(zone_end);
        let next = TrackPos {
            chs,
            slot,
            angle: slot_angle_by(slot, z.spt_div),
            track_end_sector,
            contiguous_end_sector: track_end_sector,
            ..*pos
        };
        debug_assert_eq!(next, self.locate_uncached(lba));
        next
    }

    /// [`Geometry::locate`] of `lba`, given `near = locate(near_lba)`: by arithmetic when `lba`
    /// lies in `near`'s contiguous run (the same track, `d` sectors on), else by the full
    /// mapping. Exact either way. The result is remembered as `locate`'s are (a request's end
    /// is where read-ahead starts, located again at the next decision).
    #[inline]
    pub fn locate_near(&self, lba: u64, near_lba: u64, near: &TrackPos) -> TrackPos {
        debug_assert_eq!(*near, self.locate_uncached(near_lba));
        if lba < near_lba || lba >= near.contiguous_end_sector {
            return self.locate(lba);
        }
        let d = lba - near_lba;
        let slot = near.spt_div.rem(near.slot as u64 + d) as u32;
        let pos = TrackPos {
            chs: Chs { sector: near.chs.sector + d as u32, ..near.chs },
            slot,
            angle: slot_angle_by(slot, near.spt_div),
            ..*near
        };
        self.memo.put(lba, pos);
        pos
    }

    /// [`Geometry::span_slots`] from `from`, given `pos = locate(from)`: `to - from` inside
    /// `pos`'s contiguous run without looking up the zone's slips.
    #[inline]
    pub fn span_slots_at(&self, pos: &TrackPos, from: u64, to: u64) -> u64 {
        if to <= pos.contiguous_end_sector {
            to.saturating_sub(from)
        } else {
            self.span_slots(from, to)
        }
    }

    /// [`Geometry::lbas_in_slots`] from `from`, given `pos = locate(from)`.
    #[inline]
    pub fn lbas_in_slots_at(&self, pos: &TrackPos, from: u64, slots: u64, max: u64) -> u64 {
        let n = slots.min(max);
        if from + n <= pos.contiguous_end_sector {
            n
        } else {
            self.lbas_in_slots(from, slots, max)
        }
    }

    pub fn cylinder_of(&self, lba: u64) -> u32 {
        let z = self.zone_of_sector(lba);
        let track = z.spt_div.div(z.phys_full(lba - z.first_sector));
        z.first_cylinder + self.surfaces_div.div(track) as u32
    }

    /// Physical slots that LBAs `[from, to)` span on their track (more than `to - from` when a
    /// slipped sector lies between them). Both must be on the same track.
    pub fn span_slots(&self, from: u64, to: u64) -> u64 {
        if to <= from {
            return 0;
        }
        let z = self.zone_of_sector(from);
        if z.slips.is_empty() && z.remaps.is_empty() {
            return to - from;
        }
        z.phys_full(to - 1 - z.first_sector) + 1 - z.phys_full(from - z.first_sector)
    }

    /// How many LBAs from `from` (at most `max`) fit wholly within `slots` physical slots
    /// starting at `from`'s slot, on its track.
    pub fn lbas_in_slots(&self, from: u64, slots: u64, max: u64) -> u64 {
        let z = self.zone_of_sector(from);
        if z.slips.is_empty() && z.remaps.is_empty() {
            return slots.min(max);
        }
        let rel = from - z.first_sector;
        if !z.remaps.is_empty() {
            let cut = z.remap_cut(rel) - rel;
            if z.remap_of(rel).is_some() {
                return slots.min(max).min(cut);
            }
            if z.slips.is_empty() {
                return slots.min(max).min(cut);
            }
            let start = z.phys_of(rel);
            let end_rel = z.rel_at_or_after(start + slots).unwrap_or(z.blocks);
            return (end_rel - rel).min(max).min(cut);
        }
        let start = z.phys_of(rel);
        // LBAs whose physical sector is below start + slots.
        let end_rel = z.rel_at_or_after(start + slots).unwrap_or(z.blocks);
        (end_rel - rel).min(max)
    }

    /// Inverse of [`Geometry::locate`].
    pub fn to_lba(&self, chs: Chs) -> Option<u64> {
        if chs.cylinder >= self.cylinders || chs.head >= self.surfaces {
            return None;
        }
        let z = self.zone_of_cylinder(chs.cylinder);
        if chs.sector >= z.sectors_per_track || chs.cylinder >= z.first_cylinder + z.cylinders {
            return None;
        }
        let track = (chs.cylinder - z.first_cylinder) as u64 * self.surfaces as u64 + chs.head as u64;
        let phys = track * z.sectors_per_track as u64 + chs.sector as u64;
        // A remap's target (a spare) holds the remapped LBA; its origin holds none.
        if let Some(r) = z.remaps.iter().find(|r| (r.2..r.2 + r.1).contains(&phys)) {
            return Some(z.first_sector + r.0 + (phys - r.2));
        }
        if z.is_slipped(phys) {
            return None;
        }
        let rel = z.rel_at_or_after(phys)?;
        if z.remap_of(rel).is_some() {
            return None;
        }
        Some(z.first_sector + rel)
    }

    /// Physical slot (0..spt) of a logical sector: skew accumulates per head switch and per
    /// cylinder switch within the zone.
    fn physical_slot(&self, z: &Zone, cyl_in_zone: u32, head: u32, sector: u32) -> u32 {
        Self::slot_in(z, self.surfaces, cyl_in_zone, head, sector)
    }

    fn slot_in(z: &Zone, surfaces: u32, cyl_in_zone: u32, head: u32, sector: u32) -> u32 {
        let head_switches = cyl_in_zone as u64 * (surfaces as u64 - 1) + head as u64;
        let mut offset =
            z.base_slot as u64 + head_switches * z.track_skew_sectors as u64 + cyl_in_zone as u64 * z.cylinder_skew_sectors as u64;
        if z.skew_unit > 0 {
            // Slips before this track's unit (cylinder or track) push its sectors forward.
            let spt = z.sectors_per_track as u64;
            let track = cyl_in_zone as u64 * surfaces as u64 + head as u64;
            let cutoff = track * spt / z.skew_unit * z.skew_unit;
            offset += z.skew_slips.partition_point(|&s| s < cutoff) as u64;
        }
        z.spt_div.rem(sector as u64 + offset) as u32
    }
}

/// Start angle of a physical slot on a track of `spt` sectors.
pub fn slot_angle(slot: u32, spt: u32) -> u64 {
    slot as u64 * REV_UNITS / spt as u64
}

/// [`slot_angle`] with the track's sectors as a [`Divisor`] (the same value).
#[inline]
pub fn slot_angle_by(slot: u32, spt: Divisor) -> u64 {
    spt.div(slot as u64 * REV_UNITS)
}

/// Builds `count` zones over `cylinders`, sectors per track falling linearly from `spt_outer`
/// to `spt_inner` (zone bit recording: outer tracks are longer).
pub fn linear_zones(count: u32, cylinders: u32, spt_outer: u32, spt_inner: u32) -> Vec<ZoneSpec> {
    assert!(count >= 1 && cylinders >= count);
    (0..count)
        .map(|i| {
            let lo = cylinders as u64 * i as u64 / count as u64;
            let hi = cylinders as u64 * (i as u64 + 1) / count as u64;
            let spt = if count == 1 {
                spt_outer
            } else {
                let f = i as f64 / (count - 1) as f64;
                (spt_outer as f64 + (spt_inner as f64 - spt_outer as f64) * f).round() as u32
            };
            ZoneSpec { cylinders: (hi - lo) as u32, sectors_per_track: spt, track_skew_sectors: None, cylinder_skew_sectors: None }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn two_zone() -> Geometry {
        let zones = vec![
            ZoneSpec { cylinders: 3, sectors_per_track: 10, track_skew_sectors: Some(2), cylinder_skew_sectors: Some(3) },
            ZoneSpec { cylinders: 2, sectors_per_track: 8, track_skew_sectors: Some(1), cylinder_skew_sectors: Some(1) },
        ];
        Geometry::new(2, &zones, |_| (0, 0)).unwrap()
    }

    #[test]
    fn zone_boundary_by_hand() {
        let g = two_zone();
        assert_eq!(g.cylinders, 5);
        assert_eq!(g.capacity_sectors, 3 * 2 * 10 + 2 * 2 * 8);
        // Last sector of zone 0: cylinder 2, head 1, sector 9.
        let last = g.locate(59);
        assert_eq!(last.chs, Chs { cylinder: 2, head: 1, sector: 9 });
        assert_eq!(last.track_end_sector, 60);
        // First sector of zone 1.
        let first = g.locate(60);
        assert_eq!(first.chs, Chs { cylinder: 3, head: 0, sector: 0 });
        assert_eq!(first.sectors_per_track, 8);
        assert_eq!(g.cylinder_of(59), 2);
        assert_eq!(g.cylinder_of(60), 3);
    }

    #[test]
    fn skew_by_hand() {
        let g = two_zone();
        // Track (0,0): no skew -> sector 0 at angle 0.
        assert_eq!(g.locate(0).angle, 0);
        // Track (0,1): one head switch -> shifted 2 slots of 10.
        assert_eq!(g.locate(10).angle, 2 * REV_UNITS / 10);
        // Track (1,0): one head switch (track skew 2) + one cylinder switch (3) -> slot 5.
        assert_eq!(g.locate(20).angle, 5 * REV_UNITS / 10);
        // Sector 7 of track (1,0) -> slot (7 + 5) mod 10 = 2.
        assert_eq!(g.locate(27).angle, 2 * REV_UNITS / 10);
    }

    proptest! {
        #[test]
        fn lba_round_trips(lba in 0u64..92) {
            let g = two_zone();
            let p = g.locate(lba);
            prop_assert_eq!(g.to_lba(p.chs), Some(lba));
            prop_assert_eq!(g.cylinder_of(lba), p.chs.cylinder);
        }

        #[test]
        fn linear_zones_cover_all_cylinders(count in 1u32..30, extra in 0u32..5000) {
            let cyl = count + extra;
            let zones = linear_zones(count, cyl, 500, 250);
            prop_assert_eq!(zones.iter().map(|z| z.cylinders).sum::<u32>(), cyl);
            prop_assert_eq!(zones[0].sectors_per_track, 500);
        }
    }

    /// The zone table and the divisors give what a binary search over the zones and the
    /// hardware divide give, at every zone boundary and on a spread of addresses.
    #[test]
    fn zone_table_and_divisors_agree_with_the_plain_computation() {
        let zones = linear_zones(30, 4999, 511, 233);
        let g = Geometry::new(5, &zones, |spt| (spt / 7, spt / 5)).unwrap();
        let plain = |lba: u64| {
            let i = g.zones.partition_point(|z| z.first_sector <= lba) - 1;
            let z = &g.zones[i];
            let spt = z.sectors_per_track as u64;
            let phys = z.phys_of(lba - z.first_sector);
            let (track, sector) = (phys / spt, (phys % spt) as u32);
            let (cyl, head) = ((track / g.surfaces as u64) as u32, (track % g.surfaces as u64) as u32);
            let slot = Geometry::slot_in(z, g.surfaces, cyl, head, sector);
            (i, Chs { cylinder: z.first_cylinder + cyl, head, sector }, slot, slot_angle(slot, z.sectors_per_track))
        };
        let mut lbas: Vec<u64> =
            g.zones.iter().flat_map(|z| [z.first_sector.saturating_sub(1), z.first_sector, z.first_sector + 1]).collect();
        lbas.extend((0..10_000u64).map(|k| k * 7_919 % g.capacity_sectors));
        lbas.push(g.capacity_sectors - 1);
        for lba in lbas {
            let (i, chs, slot, angle) = plain(lba);
            assert!(std::ptr::eq(g.zone_of_sector(lba), &g.zones[i]), "{lba}");
            let p = g.locate(lba);
            assert_eq!((p.chs, p.slot, p.angle), (chs, slot, angle), "{lba}");
            assert_eq!(g.cylinder_of(lba), chs.cylinder);
        }
    }
}
