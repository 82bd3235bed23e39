//! The seek curve tabulated per distance, with the least seek over all longer distances beside
//! each entry (the bound an RPO or SPTF search prunes by): one table, so the bound and the seek
//! of a candidate come from one cache line. A large drive has hundreds of thousands of
//! cylinders (megabytes of table), so a search over random candidates would miss the cache on
//! both lookups otherwise; a coarse copy of the bound, small enough to stay in cache, rejects
//! most far candidates without touching the table at all.

use super::seek::SeekCurve;
use crate::time::Nanos;
use std::sync::{Arc, Mutex};

/// Entries of the coarse bound at most (16 KiB of u32).
const COARSE_ENTRIES: usize = 4096;

#[derive(Clone, Debug)]
pub struct SeekTable {
    /// Per distance: the seek time and the least seek time over this and every longer distance.
    entries: Vec<[u32; 2]>,
    /// Per block of `1 << coarse_shift` distances: the bound at the block's first distance,
    /// which is at most the bound of any distance in the block (the bound never decreases).
    coarse_floor: Vec<u32>,
    coarse_shift: u32,
}

impl SeekTable {
    /// The table of `curve` over `cylinders` distances, built once per process for each curve
    /// and drive size (an HC310's 480,094 entries take about 8 ms, and every run of a scenario
    /// and every member of an array builds its disk afresh): a pure function of its arguments.
    /// A seek longer than u32 ns (4.29 s) is an error, not truncated.
    pub fn shared(curve: &SeekCurve, cylinders: u32) -> Result<Arc<SeekTable>, String> {
        /// Tables kept (distinct drives in one process; a few MB each at most).
        const KEPT: usize = 4;
        static BUILT: Mutex<Vec<(SeekCurve, u32, Arc<SeekTable>)>> = Mutex::new(Vec::new());
        if let Some((_, _, t)) = BUILT.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(c, n, _)| c == curve && *n == cylinders) {
            return Ok(t.clone());
        }
        let seek_ns: Vec<u32> = (0..cylinders)
            .map(|d| {
                let ns = curve.time_ns(d);
                u32::try_from(ns).map_err(|_| format!("the seek curve gives {} ms for {d} cylinders; at most 4294 ms", ns as f64 / 1e6))
            })
            .collect::<Result<_, _>>()?;
        let table = Arc::new(SeekTable::new(seek_ns));
        let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
        if built.len() >= KEPT {
            built.remove(0);
        }
        built.push((curve.clone(), cylinders, table.clone()));
        Ok(table)
    }

    /// From the seek times of distances 0, 1, ... (at least one).
    pub fn new(seek_ns: Vec<u32>) -> Self {
        assert!(!seek_ns.is_empty(), "a seek table needs distance 0");
        let mut floor = seek_ns.clone();
        for d in (0..floor.len() - 1).rev() {
            floor[d] = floor[d].min(floor[d + 1]);
        }
        let coarse_shift = floor.len().div_ceil(COARSE_ENTRIES).next_power_of_two().trailing_zeros();
        let coarse_floor = floor.iter().step_by(1 << coarse_shift).copied().collect();
        let entries = seek_ns.into_iter().zip(floor).map(|(s, f)| [s, f]).collect();
        SeekTable { entries, coarse_floor, coarse_shift }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The seek time of `distance` (None beyond the table).
    #[inline]
    pub fn seek_ns(&self, distance: u32) -> Option<Nanos> {
        self.entries.get(distance as usize).map(|e| e[0] as Nanos)
    }

    /// The least seek time over `distance` and every longer one (distances beyond the table
    /// count as the last).
    #[inline]
    pub fn floor_ns(&self, distance: u32) -> Nanos {
        let i = (distance as usize).min(self.entries.len() - 1);
        self.entries[i][1] as Nanos
    }

    /// A bound at most `floor_ns(distance)`, from the small coarse table.
    #[inline]
    pub fn coarse_floor_ns(&self, distance: u32) -> Nanos {
        let i = ((distance as usize).min(self.entries.len() - 1)) >> self.coarse_shift;
        self.coarse_floor[i] as Nanos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_table_is_the_curves_and_a_too_long_seek_is_refused() {
        let curve = SeekCurve::ThreePoint { single_ms: 0.8, a_ms: 0.0003, b_ms: 0.05 };
        let a = SeekTable::shared(&curve, 5_000).unwrap();
        let b = SeekTable::shared(&curve, 5_000).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "the second call reuses the first table");
        let by_hand = SeekTable::new((0..5_000).map(|d| curve.time_ns(d) as u32).collect());
        assert_eq!(a.entries, by_hand.entries);
        assert_eq!(a.coarse_floor, by_hand.coarse_floor);
        // Another size of the same curve is its own table.
        let c = SeekTable::shared(&curve, 4_000).unwrap();
        assert_eq!(c.len(), 4_000);
        let slow = SeekCurve::ThreePoint { single_ms: 5_000.0, a_ms: 0.0, b_ms: 0.0 };
        let e = SeekTable::shared(&slow, 10).unwrap_err();
        assert!(e.contains("at most 4294 ms"), "{e}");
    }

    #[test]
    fn bounds_never_exceed_the_seek_of_any_longer_distance() {
        // A curve with a dip (a longer seek cheaper than a shorter one), 10,000 distances.
        let seek: Vec<u32> = (0..10_000u32).map(|d| if d == 0 { 0 } else { 1_000 + d * 3 - if d > 7_000 { 2_000 } else { 0 } }).collect();
        let t = SeekTable::new(seek.clone());
        assert_eq!(t.len(), 10_000);
        for d in (0..10_050u32).step_by(7) {
            let floor = t.floor_ns(d);
            let by_hand = seek[(d as usize).min(9_999)..].iter().min().copied().unwrap() as Nanos;
            assert_eq!(floor, by_hand, "distance {d}");
            assert!(t.coarse_floor_ns(d) <= floor, "distance {d}");
            if (d as usize) < seek.len() {
                assert_eq!(t.seek_ns(d), Some(seek[d as usize] as Nanos));
            }
        }
        assert_eq!(t.seek_ns(10_000), None);
    }
}
