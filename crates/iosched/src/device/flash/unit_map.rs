//! One of the FTL's maps (logical -> physical or physical -> logical unit) whose untouched
//! entries cost no memory: the table is allocated zeroed (calloc: the kernel maps its pages on
//! first write), and a zero entry means "as laid out" (an entry the caller computes, e.g. where
//! preconditioning's first pass put the unit, or `UNMAPPED` on a fresh drive). A run that
//! touches a few thousand units of a 512 GiB drive then holds a page or two of the maps per
//! unit written (its new entry and its old copy's), not the whole 1 GB.
//!
//! Stored values: 0 = as laid out, `u32::MAX` = `UNMAPPED`, else the value + 1; so values up to
//! `u32::MAX - 2` can be stored (geometry.rs keeps the physical units below `u32::MAX`).

use super::ftl::UNMAPPED;

#[derive(Clone)]
pub struct UnitMap {
    stored: Vec<u32>,
}

impl UnitMap {
    /// `len` entries, every one as laid out.
    pub fn new(len: usize) -> UnitMap {
        UnitMap { stored: vec![0; len] }
    }

    pub fn len(&self) -> usize {
        self.stored.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stored.is_empty()
    }

    /// Entry `i`; `laid_out` gives it if it was never set.
    #[inline]
    pub fn get(&self, i: usize, laid_out: impl FnOnce() -> u32) -> u32 {
        match self.stored[i] {
            0 => laid_out(),
            u32::MAX => UNMAPPED,
            s => s - 1,
        }
    }

    #[inline]
    pub fn set(&mut self, i: usize, value: u32) {
        self.stored[i] = if value == UNMAPPED {
            u32::MAX
        } else {
            debug_assert!(value < u32::MAX - 1, "unit {value} beyond the map's range");
            value + 1
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_entries_are_laid_out_and_set_ones_stick() {
        let mut m = UnitMap::new(4);
        assert_eq!(m.get(2, || 7), 7);
        m.set(2, 0);
        assert_eq!(m.get(2, || 7), 0);
        m.set(2, UNMAPPED);
        assert_eq!(m.get(2, || 7), UNMAPPED);
        m.set(1, u32::MAX - 2);
        assert_eq!(m.get(1, || 7), u32::MAX - 2);
        assert_eq!(m.len(), 4);
    }
}
