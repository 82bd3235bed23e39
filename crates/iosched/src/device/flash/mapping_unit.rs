//! Mapping units larger than the FTL's 4 KiB unit (`[device.flash] mapping_unit_kib`): the
//! drive maps its logical space in units of `mapping_unit_kib` (QLC drives' "indirection
//! unit", 16 or 64 KiB, so that the table fits their DRAM; MQSim's logical page, its flash page
//! size), so a write that covers part of a mapping unit rewrites all of it. The parts the host
//! did not send are merged in the controller: read from flash first when they hold data (a
//! read-modify-write, MQSim's "update read", ssd/Address_Mapping_Unit_Page_Level.cpp,
//! `allocate_page_in_plane_for_user_write`), taken from the write buffer when they are there.
//! A part that holds no data (never written, or trimmed) is a hole: its place in the program is
//! written empty (padding) and it stays unmapped, as MQSim's per-sector page status leaves the
//! sectors no write covered invalid; so a later write beside it reads nothing, and a read of it
//! touches no flash.
//!
//! The FTL still places 4 KiB units: a mapping unit is its consecutive units, all buffered on
//! one die together (the size divides a superpage, so the buffer's superpages hold whole
//! mapping units). What is not modelled: GC copies valid units one by one, so after a unit of a
//! mapping unit was trimmed, the others may land across a page boundary (a later read of it
//! then reads two pages); a read of a merged unit that is still in the write buffer is served
//! from DRAM even while its update read is under way.
//!
//! With 4 KiB (every preset) nothing here runs: `widen` returns the range as it is.

use super::ftl::UNMAPPED;
use crate::fast_hash::FastMap;
use crate::time::Nanos;
use std::ops::Range;

/// The mapping unit's size in FTL units, and the merged units waiting in the write buffer.
#[derive(Clone, Debug)]
pub struct MappingUnits {
    units: u64,
    /// Merged units waiting in the write buffer: when their data is in DRAM (their update
    /// read's end), or None for a hole (no data). A unit the host writes itself before it is
    /// programmed leaves (it is host data again).
    merged: FastMap<u32, Option<Nanos>>,
}

impl MappingUnits {
    /// `kib` per mapping unit (a multiple of the FTL's 4 KiB: `validate`).
    pub fn new(kib: u32) -> MappingUnits {
        MappingUnits { units: (kib / 4).max(1) as u64, merged: FastMap::default() }
    }

    /// The mapping unit's size in FTL units (1: 4 KiB).
    pub fn units(&self) -> u64 {
        self.units
    }

    /// Whether writes are widened (a mapping unit larger than 4 KiB).
    #[inline]
    pub fn widens(&self) -> bool {
        self.units > 1
    }

    /// The FTL units a write of `units` programs: whole mapping units, within `logical_units`.
    pub fn widen(&self, units: Range<u64>, logical_units: u64) -> Range<u64> {
        if self.units == 1 || units.is_empty() {
            return units;
        }
        let first = units.start / self.units * self.units;
        let end = units.end.div_ceil(self.units).saturating_mul(self.units);
        first..end.min(logical_units)
    }

    /// `lpn`, not sent by the host, is buffered to be merged: its data in DRAM at `ready_ns`,
    /// or None if it has no data (a hole).
    pub fn merge(&mut self, lpn: u32, ready_ns: Option<Nanos>) {
        self.merged.insert(lpn, ready_ns);
    }

    /// Whether `lpn` waits in the write buffer to be merged.
    #[inline]
    pub fn is_merged(&self, lpn: u32) -> bool {
        !self.merged.is_empty() && self.merged.contains_key(&lpn)
    }

    /// The host wrote `lpn` itself: no longer merged.
    #[inline]
    pub fn host_wrote(&mut self, lpn: u32) {
        if !self.merged.is_empty() {
            self.merged.remove(&lpn);
        }
    }

    /// `lpns` leave the buffer for a program: each hole among them becomes `UNMAPPED` (its
    /// place is programmed empty). Returns the merged units with data, the holes, and when the
    /// last merged unit's data is in DRAM (0: none).
    pub fn take(&mut self, lpns: &mut [u32]) -> Taken {
        let mut taken = Taken::default();
        if self.merged.is_empty() {
            return taken;
        }
        for lpn in lpns.iter_mut() {
            match self.merged.remove(lpn) {
                Some(Some(t)) => {
                    taken.merged += 1;
                    taken.ready_ns = taken.ready_ns.max(t);
                }
                Some(None) => {
                    taken.holes += 1;
                    *lpn = UNMAPPED;
                }
                None => {}
            }
        }
        taken
    }
}

/// What a program's units hold beyond the host's data (`MappingUnits::take`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Taken {
    pub merged: u64,
    pub holes: u64,
    pub ready_ns: Nanos,
}

/// `mapping_unit_kib` for a drive whose superpage (a die's multi-plane program) holds
/// `superpage_kib`: a multiple of 4 dividing the superpage, so that a mapping unit never spans
/// two dies or two programs.
pub fn validate(kib: u32, superpage_kib: u32) -> Result<(), String> {
    if kib == 0 || !kib.is_multiple_of(4) || kib > superpage_kib || !superpage_kib.is_multiple_of(kib) {
        return Err(format!(
            "field `device.flash.mapping_unit_kib` must be a multiple of 4 that divides the superpage \
             ({superpage_kib} KiB: page_kib x planes_per_die), got {kib}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_widen_to_whole_mapping_units_within_the_drive() {
        let m = MappingUnits::new(8);
        assert!(m.widens());
        assert_eq!(m.widen(1..4, 100), 0..4);
        assert_eq!(m.widen(2..3, 100), 2..4);
        assert_eq!(m.widen(4..6, 100), 4..6);
        assert_eq!(m.widen(98..99, 99), 98..99);
        assert_eq!(m.widen(5..5, 100), 5..5);
        let m16 = MappingUnits::new(16);
        assert_eq!(m16.widen(5..6, 100), 4..8);
        assert_eq!(m16.widen(3..9, 100), 0..12);
        let four = MappingUnits::new(4);
        assert!(!four.widens());
        assert_eq!(four.widen(1..4, 100), 1..4);
    }

    #[test]
    fn merged_units_are_counted_once_holes_become_padding_and_host_writes_leave() {
        let mut m = MappingUnits::new(8);
        assert_eq!(m.take(&mut [1, 2]), Taken::default());
        m.merge(1, Some(500));
        m.merge(3, Some(900));
        m.merge(7, Some(100));
        m.merge(4, None);
        m.merge(6, None);
        m.host_wrote(7);
        m.host_wrote(6);
        let mut lpns = [0, 1, 2, 3, 4, 6, 7];
        assert_eq!(m.take(&mut lpns), Taken { merged: 2, holes: 1, ready_ns: 900 });
        assert_eq!(lpns, [0, 1, 2, 3, UNMAPPED, 6, 7]);
        assert_eq!(m.take(&mut [1, 3, 4]), Taken::default());
    }

    #[test]
    fn the_size_must_divide_the_superpage() {
        assert!(validate(4, 16).is_ok());
        assert!(validate(8, 16).is_ok());
        assert!(validate(16, 16).is_ok());
        for (kib, sp) in [(0, 16), (6, 16), (12, 16), (32, 16), (2, 16)] {
            let e = validate(kib, sp).unwrap_err();
            assert!(e.contains("device.flash.mapping_unit_kib") && e.contains(&format!("got {kib}")), "{e}");
        }
    }
}
