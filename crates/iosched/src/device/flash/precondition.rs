//! Steady-state preconditioning without timing (only the FTL's state): "full" writes every
//! logical unit once in order; "aged" then overwrites random units, twice the logical capacity,
//! which brings greedy GC on uniform random writes to its steady state (the write amplification
//! settles within about one capacity; SNIA's PTS asks for two full drive writes before
//! measuring). Buffered per die as the drive would, a superpage at a time. A drive whose
//! mapping unit is larger than the FTL's 4 KiB unit (`mapping_unit_kib`) is aged in whole
//! mapping units, as it writes them (mapping_unit.rs).

use super::ftl::Ftl;
use super::spec::Precondition;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Writes between two looks at `cancelled` while aging (a few milliseconds of work).
const CANCEL_CHECK_WRITES: u64 = 1 << 16;
/// Units drawn ahead while aging (a multiple of it is `CANCEL_CHECK_WRITES`).
const LOOKAHEAD: usize = 32;

/// Preconditions `ftl` as `how` says, looking at `cancelled` as it goes (aging a large drive
/// takes minutes: a 512 GiB one writes 250 million units); false if it stopped, half aged.
/// `units_per_mapping_unit`: the drive's mapping unit in FTL units (1: 4 KiB, every preset).
pub fn precondition_unless(ftl: &mut Ftl, how: Precondition, seed: u64, units_per_mapping_unit: u64, cancelled: &dyn Fn() -> bool) -> bool {
    if how == Precondition::None {
        return true;
    }
    // The first pass as laid out (full_layout.rs: no map entry written).
    ftl.write_full_pass();
    how != Precondition::Aged || age(ftl, seed, units_per_mapping_unit.max(1), cancelled)
}

/// The aged pass: twice the logical capacity overwritten in random mapping units of `m` FTL
/// units (1 with 4 KiB ones), each buffered on its die in one piece (`m` divides a superpage:
/// `FlashSpec::validate`), so that a mapping unit's units stay side by side in their superpage
/// as the host's widened writes leave them. A partial mapping unit at the end of the logical
/// space (when it is not a whole number of them) keeps the full pass's layout.
fn age(ftl: &mut Ftl, seed: u64, m: u64, cancelled: &dyn Fn() -> bool) -> bool {
    let ups = ftl.geometry().units_per_superpage() as usize;
    let logical = ftl.logical_units();
    let whole = logical / m;
    if whole == 0 {
        return true;
    }
    let dies = ftl.geometry().dies() as usize;
    let mut pending: Vec<Vec<u32>> = vec![Vec::with_capacity(ups); dies];
    let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0xf1a5_0a6e_d000_0001);
    let check_every = (CANCEL_CHECK_WRITES / m).max(1);
    let mut batch = [0u64; LOOKAHEAD];
    for i in 0..2 * logical / m {
        if i % check_every == 0 && cancelled() {
            return false;
        }
        // The mapping units are drawn a batch ahead and their first units' map entries read
        // (results unused) before any is written: each write's entry is a cache miss in a table
        // of the whole drive, and independent reads overlap where the writes' dependent ones did
        // not. The writes then go in the order drawn, as one by one.
        let k = (i % LOOKAHEAD as u64) as usize;
        if k == 0 {
            for slot in batch.iter_mut() {
                *slot = rng.gen_range(0..whole) * m;
            }
            for &first in &batch {
                std::hint::black_box(ftl.lookup(first));
            }
        }
        let first = batch[k];
        buffer_on_die(ftl, &mut pending, first as u32..(first + m) as u32);
    }
    for (die, p) in pending.iter().enumerate() {
        if !p.is_empty() {
            ftl.write_superpage(die as u32, p);
        }
    }
    true
}

/// Buffers `units` (a whole mapping unit, on one die) unless they already wait there, and
/// programs the die's superpage once it is full.
fn buffer_on_die(ftl: &mut Ftl, pending: &mut [Vec<u32>], units: std::ops::Range<u32>) {
    let ups = ftl.geometry().units_per_superpage() as usize;
    let die = ftl.die_of(units.start as u64) as usize;
    if pending[die].contains(&units.start) {
        return;
    }
    pending[die].extend(units);
    if pending[die].len() == ups {
        ftl.write_superpage(die as u32, &pending[die]);
        pending[die].clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::flash::gc::GcPolicy;
    use crate::device::flash::geometry::FlashGeometry;

    /// Aging draws its units a batch ahead: the drive ends as when they are drawn and written
    /// one at a time (the same random sequence, the same order of writes), every unit's
    /// mapping and every counter alike.
    #[test]
    fn aging_a_batch_ahead_is_aging_one_by_one() {
        let geo =
            FlashGeometry { channels: 2, dies_per_channel: 2, planes_per_die: 2, blocks_per_plane: 16, pages_per_block: 16, page_kib: 8 };
        for seed in [1u64, 7, 99] {
            let new = || Ftl::new(&geo, 0.25, GcPolicy::Greedy, 2).unwrap();
            let mut batched = new();
            assert!(precondition_unless(&mut batched, Precondition::Aged, seed, 1, &|| false));
            // The reference: the loop as it was written before the lookahead.
            let mut plain = new();
            plain.write_full_pass();
            let (ups, logical) = (plain.geometry().units_per_superpage() as u64, plain.logical_units());
            let mut pending: Vec<Vec<u32>> = vec![Vec::new(); plain.geometry().dies() as usize];
            let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0xf1a5_0a6e_d000_0001);
            for _ in 0..2 * logical {
                let lpn = rng.gen_range(0..logical);
                let die = plain.die_of(lpn) as usize;
                if pending[die].contains(&(lpn as u32)) {
                    continue;
                }
                pending[die].push(lpn as u32);
                if pending[die].len() == ups as usize {
                    plain.write_superpage(die as u32, &pending[die]);
                    pending[die].clear();
                }
            }
            for (die, p) in pending.iter().enumerate() {
                if !p.is_empty() {
                    plain.write_superpage(die as u32, p);
                }
            }
            for lpn in 0..logical {
                assert_eq!(batched.lookup(lpn), plain.lookup(lpn), "seed {seed}, unit {lpn}");
            }
            assert_eq!(batched.counters, plain.counters, "seed {seed}");
            batched.check().unwrap();
        }
    }

    /// Fraction of `ftl`'s whole mapping units of `m` units whose units sit side by side, the
    /// first at the start of a page (so that a mapping unit of a page's size is one page).
    fn mapping_units_together(ftl: &Ftl, m: u64) -> f64 {
        let upp = ftl.geometry().units_per_page();
        let whole = ftl.logical_units() / m;
        let together = (0..whole)
            .filter(|&mu| {
                let first = ftl.lookup(mu * m).expect("a full drive maps every unit");
                first.is_multiple_of(upp) && (1..m).all(|k| ftl.lookup(mu * m + k) == Some(first + k as u32))
            })
            .count();
        together as f64 / whole as f64
    }

    /// A drive with 8 or 16 KiB mapping units (8 KiB pages) is aged in whole mapping units:
    /// twice the capacity overwritten (GC in steady state), every mapping unit's units still
    /// side by side and page-aligned (GC copies a mapping unit's valid units in order, and
    /// validity goes by whole mapping units); aged 4 KiB units at a time, most are split.
    #[test]
    fn aging_with_mapping_units_keeps_them_together() {
        let geo =
            FlashGeometry { channels: 2, dies_per_channel: 2, planes_per_die: 2, blocks_per_plane: 16, pages_per_block: 16, page_kib: 8 };
        for m in [2u64, 4] {
            for seed in [1u64, 7] {
                let mut ftl = Ftl::new(&geo, 0.25, GcPolicy::Greedy, 2).unwrap();
                assert_eq!(ftl.logical_units() % m, 0, "the case has no partial mapping unit");
                assert!(precondition_unless(&mut ftl, Precondition::Aged, seed, m, &|| false));
                ftl.check().unwrap();
                assert!(ftl.counters.gc_units > 0, "GC ran (m {m}, seed {seed})");
                // The full pass, then twice the logical capacity (less draws already pending
                // on their die when drawn again).
                let logical = ftl.logical_units();
                assert!(ftl.counters.host_units > 2 * logical && ftl.counters.host_units <= 3 * logical, "{:?}", ftl.counters);
                assert!(ftl.counters.host_units.is_multiple_of(m));
                assert_eq!(mapping_units_together(&ftl, m), 1.0, "m {m}, seed {seed}");

                let mut by_unit = Ftl::new(&geo, 0.25, GcPolicy::Greedy, 2).unwrap();
                assert!(precondition_unless(&mut by_unit, Precondition::Aged, seed, 1, &|| false));
                assert!(mapping_units_together(&by_unit, m) < 0.5, "m {m}, seed {seed}: {}", mapping_units_together(&by_unit, m));
            }
        }
    }
}
