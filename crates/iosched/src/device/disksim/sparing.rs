//! DiskSim 4.0's sparing schemes, slips and defects: where a zone's LBNs sit on its physical
//! sectors, as DiskSim's layout code maps them (diskmodel/layout_g1.c, the `g1_ltop_*`
//! functions, and layout_g1_load.c, `dm_layout_g1_compute_blksinband` for each zone's LBN count).
//!
//! A zone's physical sectors are numbered cylinder by cylinder, track by track (`index =
//! ((cylinder - first) * surfaces + head) * spt + sector`); DiskSim's slips and defects use the
//! same numbering. Every scheme reserves spare sectors per *unit* of the zone and maps the LBNs
//! of a unit onto its sectors in order, skipping the unit's slipped sectors (a slip uses up one
//! spare of its unit). The schemes (`Sparing scheme used`, DiskSim's numbers):
//!
//! | scheme | unit | spares per unit | zone LBNs (less `Empty space at zone front`) |
//! |---|---|---|---|
//! | 0 none | - | - | all sectors |
//! | 1 tracks | zone, in whole tracks | `Number of spares` tracks at the zone's end; slips are track numbers | less spares x spt |
//! | 2 sectors per cylinder | cylinder | at the cylinder's end | less spares x cylinders |
//! | 3 sectors per track | track | at the track's end | less spares x tracks |
//! | 4 per cylinder, slip to end | cylinder | at the cylinder's end; slips push every later LBN of the zone | less spares x cylinders + slips |
//! | 5, 6 spares "at front" (6: slip to end) | as 2, 4: DiskSim's LBN-to-sector code (`g1_ltop_sectpercylspare`) places them at the cylinder's end like 2 and 4 | | as 2, 4 |
//! | 7 sectors at end | cylinder | at the cylinder's end (the models have none: DiskSim does not count them in the zone's LBNs, which then overrun the zone: refused); slips push every later LBN of the zone | less slips |
//! | 8 sectors per range | `Rangesize for sparing` cylinders | at the range's end | less spares x whole ranges |
//! | 9 sectors per zone | zone | at the zone's end | less spares |
//! | 10 per zone, slip to end | zone | at the zone's end | less spares + slips |
//!
//! `Empty space at zone front` counts LBN positions: DiskSim adds it to the LBN before dividing
//! into units, so it takes the first usable positions of the zone. Slips in schemes 2 to 6 also
//! push the skew of every later cylinder (2, 4, 5, 6) or track (3) by one sector each
//! (`g1_map_pbn_skew`). A defect `d, r` (pairs in `defects`) sends the LBN that would sit on
//! physical sector `d` to sector `r` (scheme 1: track `d` to track `r`; scheme 8: `r` modulo the
//! range size within the LBN's range); a pair with `r = d` changes nothing.
//!
//! Where DiskSim's own code is not one-to-one we do not follow it and say so: with per-cylinder
//! spares (2, 5) DiskSim moves the last LBNs of a cylinder that has slips onto the first sectors
//! of the next cylinder, where other LBNs already are (`cyl += lbn / lbnspercyl`); we keep them
//! in the cylinder's spares (what the spares are for). A unit whose slips outnumber its spares,
//! a defect remapped onto a sector that holds another LBN, or LBNs past the zone's last sector
//! are refused, naming the zone. Slips are applied in ascending order (DiskSim walks the list in
//! file order; the distributed models list them ascending).

/// DiskSim's sparing scheme numbers (layout_g1.h, `dm_layout_g1_spare_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    None,
    Tracks,
    SectPerCyl,
    SectPerTrack,
    SectPerCylSlipToEnd,
    SectPerCylAtFront,
    SectPerCylAtFrontSlipToEnd,
    SectAtEnd,
    SectPerRange,
    SectPerZone,
    SectPerZoneSlipToEnd,
}

impl Scheme {
    pub fn from_number(n: i64) -> Option<Scheme> {
        use Scheme::*;
        Some(match n {
            0 => None,
            1 => Tracks,
            2 => SectPerCyl,
            3 => SectPerTrack,
            4 => SectPerCylSlipToEnd,
            5 => SectPerCylAtFront,
            6 => SectPerCylAtFrontSlipToEnd,
            7 => SectAtEnd,
            8 => SectPerRange,
            9 => SectPerZone,
            10 => SectPerZoneSlipToEnd,
            _ => return Option::None,
        })
    }

    /// Slips shift every later LBN of the zone (DiskSim's `issliptoend`).
    fn slip_to_end(self) -> bool {
        matches!(self, Scheme::SectPerCylSlipToEnd | Scheme::SectPerCylAtFrontSlipToEnd | Scheme::SectAtEnd)
    }

    fn per_cylinder(self) -> bool {
        matches!(self, Scheme::SectPerCyl | Scheme::SectPerCylSlipToEnd | Scheme::SectPerCylAtFront | Scheme::SectPerCylAtFrontSlipToEnd)
    }
}

/// One zone (DiskSim's band) as its description gives it.
#[derive(Clone, Debug, Default)]
pub struct SparingZone {
    pub cylinders: u64,
    pub surfaces: u64,
    /// Sectors per track.
    pub spt: u64,
    /// `Empty space at zone front`.
    pub dead: u64,
    /// `Number of spares`.
    pub spares: u64,
    /// `slips`: physical sector indices (scheme 1: track indices), ascending.
    pub slips: Vec<u64>,
    /// `defects`: (defective, replacement) pairs.
    pub defects: Vec<(u64, u64)>,
    /// `Rangesize for sparing` (scheme 8).
    pub rangesize: u64,
}

/// Where the zone's LBNs sit: the input of the geometry's [`super::super::geometry::ZoneLayout`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mapped {
    /// LBNs in the zone.
    pub blocks: u64,
    /// Physical sectors no LBN uses, `(start, len)`, ascending, from the zone's first sector.
    pub skipped: Vec<(u64, u64)>,
    /// Remapped LBN runs `(first LBN, count, physical index)`.
    pub remaps: Vec<(u64, u64, u64)>,
    /// Slips that push later units' skew (see the module doc): the unit in sectors and the slips.
    pub skew_unit: u64,
    pub skew_slips: Vec<u64>,
}

/// The zone's LBN count as DiskSim computes it (`dm_layout_g1_compute_blksinband`); may be
/// zero or negative for a description whose spares exceed the zone.
pub fn blocks_in_zone(scheme: Scheme, z: &SparingZone) -> i128 {
    let (cyl, spt, surf) = (z.cylinders as i128, z.spt as i128, z.surfaces as i128);
    let (s, n) = (z.spares as i128, z.slips.len() as i128);
    let b = cyl * surf * spt - z.dead as i128;
    use Scheme::*;
    b - match scheme {
        None => 0,
        Tracks => s * spt,
        SectPerTrack => s * cyl * surf,
        SectAtEnd => n,
        SectPerZone => s,
        SectPerZoneSlipToEnd => s + n,
        SectPerCyl | SectPerCylAtFront => s * cyl,
        SectPerCylSlipToEnd | SectPerCylAtFrontSlipToEnd => s * cyl + n,
        SectPerRange => s * (cyl / (z.rangesize.max(1) as i128)),
    }
}

/// Physical sectors per unit and LBNs per unit (the unit less its spares).
fn unit(scheme: Scheme, z: &SparingZone) -> (u64, u64) {
    let bpc = z.spt * z.surfaces;
    let u = match scheme {
        Scheme::SectPerTrack => z.spt,
        Scheme::SectPerRange => bpc * z.rangesize.max(1),
        Scheme::SectPerZone | Scheme::SectPerZoneSlipToEnd | Scheme::None => bpc * z.cylinders,
        Scheme::Tracks => bpc * z.cylinders,
        _ => bpc,
    };
    let spares = match scheme {
        Scheme::None | Scheme::Tracks => 0,
        _ => z.spares,
    };
    (u, u.saturating_sub(spares))
}

/// The physical index of every LBN of the zone, as runs `(first LBN, physical index, count)`
/// (before defects), by DiskSim's rule for the scheme (see the module doc). `Err`: why the
/// description cannot be mapped one-to-one.
pub fn runs(scheme: Scheme, z: &SparingZone) -> Result<Vec<(u64, u64, u64)>, String> {
    let blocks = blocks_in_zone(scheme, z);
    if blocks <= 0 {
        return Err("the zone's spares, slips and empty space leave no blocks".into());
    }
    let blocks = blocks as u64;
    let physical = z.cylinders * z.surfaces * z.spt;
    let mut out: Vec<(u64, u64, u64)> = Vec::new();
    let push = |x: u64, p: u64, n: u64, out: &mut Vec<(u64, u64, u64)>| -> Result<(), String> {
        if p + n > physical {
            return Err(format!("LBNs {x}..{} would lie past the zone's {physical} sectors", x + n));
        }
        match out.last_mut() {
            Some(l) if l.0 + l.2 == x && l.1 + l.2 == p => l.2 += n,
            _ => out.push((x, p, n)),
        }
        Ok(())
    };
    let end = z.dead + blocks; // virtual LBN positions [dead, end)
    if scheme == Scheme::Tracks {
        // g1_ltop_trackspare: track = x / spt, then each slipped track at or below it moves it up.
        let spt = z.spt;
        let mut x = z.dead;
        let mut j = 0;
        while x < end {
            let t = x / spt;
            while j < z.slips.len() && z.slips[j] <= t + j as u64 {
                j += 1;
            }
            let n = (end - x).min((t + 1) * spt - x);
            push(x - z.dead, (t + j as u64) * spt + x % spt, n, &mut out)?;
            x += n;
        }
        return Ok(out);
    }
    let (u_phys, u_lbns) = unit(scheme, z);
    if u_lbns == 0 {
        return Err(format!("the spares ({}) fill the whole sparing unit of {u_phys} sectors", z.spares));
    }
    let to_end = scheme.slip_to_end();
    let mut x = z.dead;
    let mut first_slip = 0; // slips below this unit (index into z.slips)
    while x < end {
        let u = x / u_lbns;
        let unit_start = u * u_phys;
        while first_slip < z.slips.len() && z.slips[first_slip] < unit_start {
            first_slip += 1;
        }
        let c0 = if to_end { first_slip as u64 } else { 0 };
        let us: Vec<u64> = z.slips[first_slip..].iter().take_while(|&&s| s < unit_start + u_phys).map(|&s| s - unit_start).collect();
        let hi = end.min((u + 1) * u_lbns);
        let mut j = 0;
        while x < hi {
            let off = x - u * u_lbns;
            while j < us.len() && us[j] <= off + c0 + j as u64 {
                j += 1;
            }
            let pos = off + c0 + j as u64;
            let mut n = hi - x;
            if j < us.len() {
                n = n.min(us[j] - pos);
            }
            if to_end {
                // Positions past the unit's LBNs go on into the next units (DiskSim: cyl += lbn / lbnspercyl).
                let (mut pos, mut left, mut xx) = (pos, n, x);
                while left > 0 {
                    let k = (left).min(u_lbns - pos % u_lbns);
                    push(xx - z.dead, (u + pos / u_lbns) * u_phys + pos % u_lbns, k, &mut out)?;
                    pos += k;
                    xx += k;
                    left -= k;
                }
            } else {
                if pos + n > u_phys {
                    return Err(format!(
                        "sparing unit {u} (sectors {unit_start}..{}) has more slips than its {} spares",
                        unit_start + u_phys,
                        z.spares
                    ));
                }
                push(x - z.dead, unit_start + pos, n, &mut out)?;
            }
            x += n;
        }
    }
    Ok(out)
}

/// The layout of one zone: skipped sectors, remapped defects and skew-shifting slips.
pub fn map_zone(scheme: Scheme, z: &SparingZone) -> Result<Mapped, String> {
    let runs = runs(scheme, z)?;
    let blocks = runs.iter().map(|r| r.2).sum::<u64>();
    let mut skipped = Vec::new();
    let mut at = 0u64;
    for &(_, p, n) in &runs {
        if p < at {
            return Err("the LBNs are not in ascending sector order (DiskSim's mapping is not one-to-one here)".into());
        }
        if p > at {
            skipped.push((at, p - at));
        }
        at = p + n;
    }
    // The LBN on physical sector p (before defects), by the runs.
    let lbn_at = |p: u64| -> Option<u64> {
        let i = runs.partition_point(|r| r.1 <= p);
        let r = runs.get(i.checked_sub(1)?)?;
        (p < r.1 + r.2).then(|| r.0 + (p - r.1))
    };
    let mut remaps = Vec::new();
    for &(d, r) in &z.defects {
        if r == d {
            continue; // DiskSim: `b->remap[i] != b->defect[i]`
        }
        if scheme == Scheme::Tracks {
            // g1_ltop_trackspare: every LBN of track d goes to track r, same sector.
            let spt = z.spt;
            for s in 0..spt {
                if let Some(l) = lbn_at(d * spt + s) {
                    remaps.push((l, 1, r * spt + s));
                }
            }
            continue;
        }
        let Some(l) = lbn_at(d) else { continue };
        let target = match scheme {
            Scheme::SectPerRange => {
                let (u_phys, u_lbns) = unit(scheme, z);
                (l + z.dead) / u_lbns * u_phys + r % u_phys
            }
            _ => r,
        };
        remaps.push((l, 1, target));
    }
    remaps.sort_unstable();
    // Merge consecutive single-sector remaps on one track (a remapped track).
    let mut merged: Vec<(u64, u64, u64)> = Vec::new();
    for r in remaps {
        match merged.last_mut() {
            Some(m) if m.0 + m.1 == r.0 && m.2 + m.1 == r.2 && r.2 % z.spt != 0 => m.1 += 1,
            _ => merged.push(r),
        }
    }
    let physical = z.cylinders * z.surfaces * z.spt;
    for &(l, n, p) in &merged {
        if p + n > physical {
            return Err(format!("defect remap of LBN {l} to sector {p}: past the zone's {physical} sectors"));
        }
        if let Some(other) = (p..p + n).find_map(lbn_at) {
            return Err(format!("defect remap of LBN {l} to sector {p}, which holds LBN {other}"));
        }
    }
    let skew_unit = match scheme {
        Scheme::SectPerTrack => z.spt,
        s if s.per_cylinder() => z.spt * z.surfaces,
        _ => 0,
    };
    Ok(Mapped { blocks, skipped, remaps: merged, skew_unit, skew_slips: if skew_unit > 0 { z.slips.clone() } else { Vec::new() } })
}

#[cfg(test)]
mod tests {
    //! One hand-checked mapping per scheme on a made-up zone: 4 cylinders, 2 surfaces, 10
    //! sectors a track (20 a cylinder, 80 in all), no skew. Each expected (cylinder, head,
    //! sector) is worked out from DiskSim's rule for the scheme (diskmodel/layout_g1.c, the
    //! function named in each test; zone LBN counts from layout_g1_load.c,
    //! `dm_layout_g1_compute_blksinband`).
    use super::*;
    use crate::device::geometry::{Chs, Geometry, LayoutSpec, TrackPos, ZoneLayout, ZoneSpec};

    fn zone(dead: u64, spares: u64, slips: &[u64], defects: &[(u64, u64)], rangesize: u64) -> SparingZone {
        SparingZone { cylinders: 4, surfaces: 2, spt: 10, dead, spares, slips: slips.to_vec(), defects: defects.to_vec(), rangesize }
    }

    fn geometry(scheme: Scheme, z: &SparingZone) -> Geometry {
        let m = map_zone(scheme, z).unwrap();
        let spec = ZoneSpec { cylinders: 4, sectors_per_track: 10, track_skew_sectors: Some(0), cylinder_skew_sectors: Some(0) };
        let zl = ZoneLayout {
            first_cylinder: 0,
            blocks: m.blocks,
            lead_sectors: 0,
            first_slot: 0,
            slips: m.skipped,
            remaps: m.remaps,
            skew_unit: m.skew_unit,
            skew_slips: m.skew_slips,
        };
        Geometry::with_layout(2, &[spec], |_| (0, 0), Some(&LayoutSpec { cylinders: 4, zones: vec![zl] })).unwrap()
    }

    fn chs(g: &Geometry, lba: u64) -> (u32, u32, u32) {
        let c = g.locate(lba).chs;
        (c.cylinder, c.head, c.sector)
    }

    /// Every LBN maps to a distinct sector and back; track ends never cut backwards.
    fn round_trips(g: &Geometry) {
        let mut seen = std::collections::HashSet::new();
        for l in 0..g.capacity_sectors {
            let p = g.locate(l);
            assert!(seen.insert((p.chs.cylinder, p.chs.head, p.chs.sector)), "LBN {l} shares a sector");
            assert_eq!(g.to_lba(p.chs), Some(l), "LBN {l} at {:?}", p.chs);
            assert!(p.track_end_sector > l);
            assert!(p.contiguous_end_sector > l && p.contiguous_end_sector <= p.track_end_sector);
            shortcuts_agree(g, l, &p);
        }
    }

    /// The shortcuts from a known position (`locate_near`, `span_slots_at`, `lbas_in_slots_at`)
    /// give what the full mapping gives, inside the position's contiguous run and past it.
    fn shortcuts_agree(g: &Geometry, l: u64, p: &TrackPos) {
        let cap = g.capacity_sectors;
        for to in l..(l + 12).min(cap) {
            assert_eq!(g.locate_near(to, l, p), g.locate(to), "locate_near({to}) from {l}");
        }
        for to in l + 1..=p.track_end_sector {
            assert_eq!(g.span_slots_at(p, l, to), g.span_slots(l, to), "span {l}..{to}");
        }
        if p.track_end_sector < cap {
            assert_eq!(g.locate_next_track(p), g.locate(p.track_end_sector), "the track after {l}'s");
        }
        for slots in 0..12 {
            let max = p.track_end_sector - l - 1;
            assert_eq!(g.lbas_in_slots_at(p, l, slots, max), g.lbas_in_slots(l, slots, max), "{slots} slots from {l}");
        }
    }

    #[test]
    fn scheme_0_no_sparing_leaves_the_empty_space_at_the_front() {
        // g1_ltop_nosparing: lbn + deadspace, cylinder-major. (DiskSim 4.0's function writes its
        // result into a local copy and so returns nothing; this is its evident intent.)
        let z = zone(3, 0, &[], &[], 1);
        assert_eq!(blocks_in_zone(Scheme::None, &z), 77);
        let g = geometry(Scheme::None, &z);
        assert_eq!(chs(&g, 0), (0, 0, 3));
        assert_eq!(chs(&g, 17), (1, 0, 0));
        assert_eq!(chs(&g, 76), (3, 1, 9));
        round_trips(&g);
    }

    #[test]
    fn scheme_1_spare_tracks_slipped_and_remapped_tracks() {
        // g1_ltop_trackspare: track = lbn / spt; each slipped track <= it moves it up one; a
        // defective track goes whole to its replacement. 2 spare tracks: 80 - 20 = 60 LBNs.
        let z = zone(0, 2, &[2], &[(4, 7)], 1);
        assert_eq!(blocks_in_zone(Scheme::Tracks, &z), 60);
        let g = geometry(Scheme::Tracks, &z);
        assert_eq!(chs(&g, 19), (0, 1, 9)); // virtual track 1 = physical 1
        assert_eq!(chs(&g, 20), (1, 1, 0)); // virtual 2 -> slipped 2 -> physical 3
        assert_eq!(chs(&g, 29), (1, 1, 9));
        assert_eq!(chs(&g, 30), (3, 1, 0)); // virtual 3 -> physical 4, defective -> track 7
        assert_eq!(chs(&g, 39), (3, 1, 9));
        assert_eq!(chs(&g, 40), (2, 1, 0)); // virtual 4 -> physical 5
        assert_eq!(g.locate(29).track_end_sector, 30);
        assert_eq!(g.locate(30).track_end_sector, 40);
        round_trips(&g);
    }

    #[test]
    fn scheme_2_spares_per_cylinder_and_the_skew_after_a_slip() {
        // g1_ltop_sectpercylspare: 18 LBNs per cylinder, the cylinder's slips skipped; the last 2
        // sectors of each cylinder are spares. 80 - 2 x 4 = 72. g1_map_pbn_skew: each slip
        // before a cylinder pushes that cylinder's sectors one slot on.
        let z = zone(0, 2, &[5], &[], 1);
        assert_eq!(blocks_in_zone(Scheme::SectPerCyl, &z), 72);
        let g = geometry(Scheme::SectPerCyl, &z);
        assert_eq!(chs(&g, 4), (0, 0, 4));
        assert_eq!(chs(&g, 5), (0, 0, 6)); // sector 5 slipped
                                           // The cylinder's last LBN uses a spare (DiskSim moves it to (1, 0, 0), where LBN 18 is).
        assert_eq!(chs(&g, 17), (0, 1, 8));
        assert_eq!(chs(&g, 18), (1, 0, 0));
        assert_eq!(g.locate(0).slot, 0);
        assert_eq!(g.locate(18).slot, 1); // one slip before cylinder 1
        assert_eq!(chs(&g, 71), (3, 1, 7));
        round_trips(&g);
        // Scheme 5 ("spares at front") maps as 2 in DiskSim's LBN-to-sector code.
        assert_eq!(map_zone(Scheme::SectPerCylAtFront, &z), map_zone(Scheme::SectPerCyl, &z));
    }

    #[test]
    fn scheme_3_spares_per_track() {
        // g1_ltop_sectpertrackspare: 9 LBNs a track, slips of the track skipped, 1 spare at
        // each track's end: 80 - 8 = 72. Skew: slips before the track push it one slot each.
        let z = zone(0, 1, &[12], &[], 1);
        assert_eq!(blocks_in_zone(Scheme::SectPerTrack, &z), 72);
        let g = geometry(Scheme::SectPerTrack, &z);
        assert_eq!(chs(&g, 8), (0, 0, 8));
        assert_eq!(chs(&g, 9), (0, 1, 0));
        assert_eq!(chs(&g, 10), (0, 1, 1));
        assert_eq!(chs(&g, 11), (0, 1, 3)); // sector 2 of track 1 (index 12) slipped
        assert_eq!(chs(&g, 17), (0, 1, 9)); // the track's spare used
        assert_eq!(chs(&g, 18), (1, 0, 0));
        assert_eq!(g.locate(9).slot, 0);
        assert_eq!(g.locate(18).slot, 1);
        round_trips(&g);
        // A track with more slips than spares is refused (DiskSim asserts).
        assert!(map_zone(Scheme::SectPerTrack, &zone(0, 1, &[12, 13], &[], 1)).is_err());
    }

    #[test]
    fn scheme_4_and_6_slips_push_every_later_lbn() {
        // g1_ltop_sectpercylspare with issliptoend: slips of earlier cylinders count too, and
        // positions past the cylinder's 18 LBNs continue on the next: 80 - 8 - 1 = 71.
        let z = zone(0, 2, &[5], &[], 1);
        assert_eq!(blocks_in_zone(Scheme::SectPerCylSlipToEnd, &z), 71);
        let g = geometry(Scheme::SectPerCylSlipToEnd, &z);
        assert_eq!(chs(&g, 5), (0, 0, 6));
        assert_eq!(chs(&g, 16), (0, 1, 7));
        assert_eq!(chs(&g, 17), (1, 0, 0)); // 17 + 1 = 18: the next cylinder's first LBN position
        assert_eq!(chs(&g, 18), (1, 0, 1));
        assert_eq!(chs(&g, 70), (3, 1, 7));
        round_trips(&g);
        assert_eq!(map_zone(Scheme::SectPerCylAtFrontSlipToEnd, &z), map_zone(Scheme::SectPerCylSlipToEnd, &z));
    }

    #[test]
    fn scheme_7_sectors_at_the_end_of_the_zone() {
        // g1_ltop_sectpercylspare (scheme 7 uses it, slip to end, no skew shift); no spares,
        // LBNs = 80 - 2 slips = 78.
        let z = zone(0, 0, &[5, 25], &[], 1);
        assert_eq!(blocks_in_zone(Scheme::SectAtEnd, &z), 78);
        let g = geometry(Scheme::SectAtEnd, &z);
        assert_eq!(chs(&g, 5), (0, 0, 6));
        assert_eq!(chs(&g, 19), (1, 0, 0));
        assert_eq!(chs(&g, 20), (1, 0, 1));
        assert_eq!(chs(&g, 23), (1, 0, 4));
        assert_eq!(chs(&g, 24), (1, 0, 6)); // index 25 slipped
        assert_eq!(chs(&g, 77), (3, 1, 9));
        assert_eq!(g.locate(20).slot, 1); // no skew shift: sector 1 in slot 1
        round_trips(&g);
        // Spares with scheme 7 are not counted by DiskSim and overrun the zone: refused.
        assert!(map_zone(Scheme::SectAtEnd, &zone(0, 1, &[], &[], 1)).is_err());
    }

    #[test]
    fn scheme_8_spares_per_range_and_a_remapped_defect() {
        // g1_ltop_sectperrangespare: ranges of 2 cylinders (40 sectors), 3 spares at each
        // range's end, 37 LBNs a range: 80 - 3 x 2 = 74. The defect at index 50 (LBN 46: range
        // 1, position 9, after the slip at 41) goes to 79 mod 40 in its range: index 79.
        let z = zone(0, 3, &[41], &[(50, 79)], 2);
        assert_eq!(blocks_in_zone(Scheme::SectPerRange, &z), 74);
        let g = geometry(Scheme::SectPerRange, &z);
        assert_eq!(chs(&g, 36), (1, 1, 6));
        assert_eq!(chs(&g, 37), (2, 0, 0));
        assert_eq!(chs(&g, 38), (2, 0, 2)); // index 41 slipped
        assert_eq!(chs(&g, 45), (2, 0, 9));
        assert_eq!(chs(&g, 46), (3, 1, 9)); // remapped
        assert_eq!(chs(&g, 47), (2, 1, 1)); // index 51: the defect's place stays empty
        assert_eq!(chs(&g, 73), (3, 1, 7));
        assert_eq!(g.locate(45).track_end_sector, 46);
        assert_eq!(g.locate(46).track_end_sector, 47);
        assert_eq!(g.to_lba(Chs { cylinder: 2, head: 1, sector: 0 }), None);
        round_trips(&g);
        // The replacement is taken modulo the range: 39 in range 1 is index 79 too.
        assert_eq!(map_zone(Scheme::SectPerRange, &zone(0, 3, &[41], &[(50, 39)], 2)), map_zone(Scheme::SectPerRange, &z));
    }

    #[test]
    fn scheme_9_and_10_spares_per_zone() {
        // g1_ltop_sectperzonespare: lbn + deadspace, the zone's slips skipped, spares at the
        // zone's end: 80 - 2 - 3 = 75 (scheme 10 also less the slips: 74). A defect at index 20
        // (LBN 17) goes to index 79.
        let z = zone(2, 3, &[10], &[(20, 79)], 1);
        assert_eq!(blocks_in_zone(Scheme::SectPerZone, &z), 75);
        assert_eq!(blocks_in_zone(Scheme::SectPerZoneSlipToEnd, &z), 74);
        let g = geometry(Scheme::SectPerZone, &z);
        assert_eq!(chs(&g, 0), (0, 0, 2));
        assert_eq!(chs(&g, 7), (0, 0, 9));
        assert_eq!(chs(&g, 8), (0, 1, 1)); // index 10 slipped
        assert_eq!(chs(&g, 17), (3, 1, 9)); // remapped
        assert_eq!(chs(&g, 18), (1, 0, 1));
        assert_eq!(chs(&g, 74), (3, 1, 7));
        round_trips(&g);
        let g10 = geometry(Scheme::SectPerZoneSlipToEnd, &z);
        assert_eq!(g10.capacity_sectors, 74);
        assert_eq!(chs(&g10, 73), (3, 1, 6));
        round_trips(&g10);
        // A remap onto a sector that holds an LBN is refused.
        assert!(map_zone(Scheme::SectPerZone, &zone(2, 3, &[10], &[(20, 30)], 1)).is_err());
    }
}
