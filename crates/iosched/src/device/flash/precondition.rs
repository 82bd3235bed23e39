//! Steady-state preconditioning without timing (only the FTL's state): "full" writes every
//! logical unit once in order; "aged" then overwrites random units, twice the logical capacity,
//! which brings greedy GC on uniform random writes to its steady state (the write amplification
//! settles within about one capacity; SNIA's PTS asks for two full drive writes before
//! measuring). Buffered per die as the drive would, a superpage at a time.

use super::ftl::Ftl;
use super::spec::Precondition;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Writes between two looks at `cancelled` while aging (a few milliseconds of work).
const CANCEL_CHECK_WRITES: u64 = 1 << 16;

/// Preconditions `ftl` as `how` says, looking at `cancelled` as it goes (aging a large drive
/// takes minutes: a 512 GiB one writes 250 million units); false if it stopped, half aged.
pub fn precondition_unless(ftl: &mut Ftl, how: Precondition, seed: u64, cancelled: &dyn Fn() -> bool) -> bool {
    if how == Precondition::None {
        return true;
    }
    let ups = ftl.geometry().units_per_superpage() as u64;
    let logical = ftl.logical_units();
    // The first pass as laid out (full_layout.rs: no map entry written).
    ftl.write_full_pass();
    if how == Precondition::Aged {
        let dies = ftl.geometry().dies() as usize;
        let mut pending: Vec<Vec<u32>> = vec![Vec::with_capacity(ups as usize); dies];
        let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0xf1a5_0a6e_d000_0001);
        for i in 0..2 * logical {
            if i % CANCEL_CHECK_WRITES == 0 && cancelled() {
                return false;
            }
            let lpn = rng.gen_range(0..logical);
            let die = ftl.die_of(lpn) as usize;
            if pending[die].contains(&(lpn as u32)) {
                continue;
            }
            pending[die].push(lpn as u32);
            if pending[die].len() == ups as usize {
                ftl.write_superpage(die as u32, &pending[die]);
                pending[die].clear();
            }
        }
        for (die, p) in pending.iter().enumerate() {
            if !p.is_empty() {
                ftl.write_superpage(die as u32, p);
            }
        }
    }
    true
}
