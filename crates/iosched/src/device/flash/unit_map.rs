//! One of the FTL's maps (logical -> physical or physical -> logical unit) whose untouched
//! entries cost no memory: a zero entry means "as laid out" (an entry the caller computes, e.g.
//! where preconditioning's first pass put the unit, or `UNMAPPED` on a fresh drive). The entries
//! set are kept in a hash map while they are few, then in a table allocated zeroed (calloc: the
//! kernel maps its pages on first write). A run that sets a few hundred thousand entries at
//! random over a 512 GiB drive's maps (MQSim's side by side: a first read maps its page, a write
//! moves it) would otherwise fault in a 4 KiB page of the table for nearly every entry: 500 MB
//! and 0.2-0.4 s of the kernel's time zeroing them, where the hash map holds a few MB. Past
//! `len / SPARSE_SHARE` entries (or a table that small to begin with) the table takes over.
//!
//! Stored values: 0 = as laid out, `u32::MAX` = `UNMAPPED`, else the value + 1; so values up to
//! `u32::MAX - 2` can be stored (geometry.rs keeps the physical units below `u32::MAX`).

use super::ftl::UNMAPPED;
use crate::fast_hash::FastMap;

/// The hash map holds at most one entry in this many of the map's before the table replaces it
/// (about 16 bytes an entry in the hash map, against 4 KiB per page of the table it would
/// touch: at one entry in 128, eight per page of 1,024, random sets touch nearly every page; a
/// run that sets every entry, as aging does, pays the hash map for its first 1/128 only).
const SPARSE_SHARE: usize = 128;
/// Maps of at most this many entries use the table from the start (the test drives, small
/// presets' samples: a few MB at most).
const DENSE_FROM_START: usize = 1 << 20;

#[derive(Clone)]
pub struct UnitMap {
    /// The table (empty while the entries set are in `sparse`).
    stored: Vec<u32>,
    /// The entries set, by index, while few (stored values as in `stored`).
    sparse: FastMap<u32, u32>,
    len: usize,
}

impl UnitMap {
    /// `len` entries, every one as laid out.
    pub fn new(len: usize) -> UnitMap {
        let stored = if len <= DENSE_FROM_START { vec![0; len] } else { Vec::new() };
        UnitMap { stored, sparse: FastMap::default(), len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entry `i`; `laid_out` gives it if it was never set.
    #[inline]
    pub fn get(&self, i: usize, laid_out: impl FnOnce() -> u32) -> u32 {
        let stored = if self.stored.is_empty() {
            assert!(i < self.len, "index {i} beyond a map of {}", self.len);
            self.sparse.get(&(i as u32)).copied().unwrap_or(0)
        } else {
            self.stored[i]
        };
        match stored {
            0 => laid_out(),
            u32::MAX => UNMAPPED,
            s => s - 1,
        }
    }

    #[inline]
    pub fn set(&mut self, i: usize, value: u32) {
        let stored = if value == UNMAPPED {
            u32::MAX
        } else {
            debug_assert!(value < u32::MAX - 1, "unit {value} beyond the map's range");
            value + 1
        };
        if !self.stored.is_empty() {
            self.stored[i] = stored;
            return;
        }
        assert!(i < self.len, "index {i} beyond a map of {}", self.len);
        self.sparse.insert(i as u32, stored);
        if self.sparse.len() > self.len / SPARSE_SHARE {
            self.densify();
        }
    }

    /// The entries set move from the hash map into the table.
    fn densify(&mut self) {
        let mut stored = vec![0; self.len];
        for (&i, &v) in &self.sparse {
            stored[i as usize] = v;
        }
        self.stored = stored;
        self.sparse = FastMap::default();
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

    /// A large map keeps the entries set in its hash map, then in its table once they pass one
    /// in `SPARSE_SHARE`: every entry reads back as a plain vector of the same sets gives it,
    /// before, across and after the change.
    #[test]
    fn a_large_map_answers_as_a_table_before_and_after_it_becomes_one() {
        let len = DENSE_FROM_START + 4_096;
        let mut m = UnitMap::new(len);
        assert!(m.stored.is_empty(), "starts sparse");
        let mut plain: Vec<Option<u32>> = vec![None; len];
        let mut x: u64 = 3;
        let threshold = len / SPARSE_SHARE;
        for n in 0..threshold + 5_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let i = (x >> 33) as usize % len;
            let v = if x.is_multiple_of(7) { UNMAPPED } else { (x >> 40) as u32 % 1_000_000 };
            m.set(i, v);
            plain[i] = Some(v);
            if n % 997 == 0 || n == threshold {
                let j = (x >> 13) as usize % len;
                assert_eq!(m.get(j, || 42), plain[j].unwrap_or(42), "entry {j} after {n} sets");
                assert_eq!(m.get(i, || 42), v);
            }
        }
        assert!(!m.stored.is_empty() && m.sparse.is_empty(), "a table by now");
        for (i, p) in plain.iter().enumerate() {
            assert_eq!(m.get(i, || 42), p.unwrap_or(42), "entry {i}");
        }
    }
}
