//! Where preconditioning's first pass puts every logical unit, by arithmetic. The pass
//! ("full": every unit written once, in order, a superpage-sized chunk to each die in turn)
//! leaves a layout that two formulas describe, so the FTL's maps need not be written for the
//! 125 M units of a 512 GiB drive before the first request: an entry never set since reads
//! here (unit_map.rs). MQSim creates a page's mapping on its first access for the same reason.
//!
//! Chunk `c = lpn / ups` lives on die `c % dies` (static allocation, ftl.rs) at the die's
//! position `(c / dies) * ups + lpn % ups`; each die fills its superblocks in the order they
//! left its free list (`order`), `upsb` units each, the last one partly.

use super::ftl::UNMAPPED;

#[derive(Clone)]
pub struct FullLayout {
    dies: u64,
    ups: u64,
    upsb: u64,
    sbpd: u64,
    per_die_units: u64,
    /// Per die, the superblocks the pass filled, in order.
    order: Vec<Vec<u32>>,
    /// Per global superblock (die * sbpd + index), its place in its die's `order`
    /// (`NOT_FILLED`: the pass did not write it).
    rank: Vec<u32>,
}

const NOT_FILLED: u32 = u32::MAX;

impl FullLayout {
    /// The layout of `per_die_units` units per die over the superblocks `order[die]`
    /// (units per superpage `ups`, per superblock `upsb`, superblocks per die `sbpd`).
    pub fn new(ups: u32, upsb: u32, sbpd: u32, per_die_units: u64, order: Vec<Vec<u32>>) -> FullLayout {
        let dies = order.len() as u64;
        let mut rank = vec![NOT_FILLED; (dies * sbpd as u64) as usize];
        for (die, sbs) in order.iter().enumerate() {
            debug_assert!(sbs.len() as u64 * upsb as u64 >= per_die_units, "die {die}'s superblocks hold its units");
            for (k, &sb) in sbs.iter().enumerate() {
                rank[die * sbpd as usize + sb as usize] = k as u32;
            }
        }
        FullLayout { dies, ups: ups as u64, upsb: upsb as u64, sbpd: sbpd as u64, per_die_units, order, rank }
    }

    /// The physical unit the pass wrote logical unit `lpn` to.
    #[inline]
    pub fn physical_of(&self, lpn: u64) -> u32 {
        let chunk = lpn / self.ups;
        let die = chunk % self.dies;
        let die_pos = (chunk / self.dies) * self.ups + lpn % self.ups;
        let sb = self.order[die as usize][(die_pos / self.upsb) as usize] as u64;
        ((die * self.sbpd + sb) * self.upsb + die_pos % self.upsb) as u32
    }

    /// The logical unit the pass wrote to physical unit `ppn` (`UNMAPPED`: none).
    #[inline]
    pub fn logical_of(&self, ppn: u64) -> u32 {
        let g = ppn / self.upsb;
        let k = self.rank[g as usize];
        if k == NOT_FILLED {
            return UNMAPPED;
        }
        let die = g / self.sbpd;
        let die_pos = k as u64 * self.upsb + ppn % self.upsb;
        if die_pos >= self.per_die_units {
            return UNMAPPED;
        }
        ((die_pos / self.ups * self.dies + die) * self.ups + die_pos % self.ups) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_formulas_invert_each_other_on_a_hand_case() {
        // 2 dies, 2 units per superpage, 4 per superblock, 3 superblocks per die; 6 units per
        // die: die 0 fills superblocks 1 then 2 (0 went elsewhere), die 1 fills 0 then 1.
        let l = FullLayout::new(2, 4, 3, 6, vec![vec![1, 2], vec![0, 1]]);
        // lpn 0,1 -> die 0 pos 0,1; lpn 2,3 -> die 1 pos 0,1; lpn 4,5 -> die 0 pos 2,3; ...
        // lpn 8 -> die 0 pos 4: its second superblock (2), offset 0 -> ppn (0*3 + 2)*4 = 8.
        let expected = [4, 5, 12, 13, 6, 7, 14, 15, 8, 9, 16, 17];
        for (lpn, &ppn) in expected.iter().enumerate() {
            assert_eq!(l.physical_of(lpn as u64), ppn, "lpn {lpn}");
            assert_eq!(l.logical_of(ppn as u64), lpn as u32, "ppn {ppn}");
        }
        // Superblock 0 of die 0 was not filled; the last superblocks' tails were not written.
        for ppn in [0, 1, 2, 3, 10, 11, 18, 19, 20, 23] {
            assert_eq!(l.logical_of(ppn), UNMAPPED, "ppn {ppn}");
        }
    }
}
