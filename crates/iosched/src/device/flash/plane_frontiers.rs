//! A write frontier per plane, as MQSim's FTL allocates (`[device.flash] plane_frontiers`; the
//! MQSim reader sets it). Each plane of a die is one of the FTL's dies
//! (`FlashSpec::ftl_geometry`): a logical page lives on one plane (MQSim's static allocation,
//! CWDP: channels first, then ways, then planes), a program writes one page there at that
//! plane's frontier, and GC runs per plane, as MQSim's does.
//!
//! MQSim's transaction scheduler sends a die one program at a time, or several planes' at once
//! when they stand at the same page index: it takes the write at its queue's front and every
//! other ready write of the same die, on a plane not yet taken, at that page index, and never
//! waits for one (ssd/TSU_Base.cpp, lines 72-100, at 7ec40e3). The model's dies are timelines,
//! not queues, so the rule reads: a page program whose data is in the die's register by the time
//! a program already reserved on the die starts, on another plane at the same page index, joins
//! that program (one tPROG for both); otherwise it is reserved on its own. With read priority a
//! reserved program may later move (reads go first): a page joins by the program's current
//! window (the die queue's), the queue holds the program until the page's data is in, and the
//! page frees its buffer room with it.
//!
//! Off (every preset): a die programs whole superpages (one page on each plane) and the
//! structure below is not built.

use crate::time::Nanos;

/// A single-page program reserved on a die that a page of another plane may still join.
#[derive(Clone, Copy, Debug)]
struct Reserved {
    start_ns: Nanos,
    end_ns: Nanos,
    page: u32,
    /// Planes in the program (bit per plane).
    planes: u32,
    job: u64,
    /// When the last page that joined it has its data in the register (0: none joined).
    joined_ready_ns: Nanos,
}

/// Per die, the single-page programs reserved and not yet started.
#[derive(Clone, Debug)]
pub struct Pairing {
    dies: Vec<Vec<Reserved>>,
}

impl Pairing {
    pub fn new(dies: u32) -> Pairing {
        Pairing { dies: vec![Vec::new(); dies as usize] }
    }

    /// A page program on `plane` of `die` at page index `page`, its data in the die's register
    /// at `ready_ns`: the program it joins, as (job id, end), if one reserved on the die starts
    /// no earlier, at the same page index, without this plane. `window` gives a reserved
    /// program's current (start, end) from the job and its (start, end) when reserved (None:
    /// over), since read priority moves programs. Programs started before `now_ns` are
    /// forgotten.
    pub fn join(
        &mut self,
        die: u32,
        plane: u32,
        page: u32,
        ready_ns: Nanos,
        now_ns: Nanos,
        window: impl Fn(u64, Nanos, Nanos) -> Option<(Nanos, Nanos)>,
    ) -> Option<(u64, Nanos)> {
        let reserved = &mut self.dies[die as usize];
        reserved.retain_mut(|r| match window(r.job, r.start_ns, r.end_ns) {
            Some((start, end)) if start >= now_ns => {
                (r.start_ns, r.end_ns) = (start, end);
                true
            }
            _ => false,
        });
        let bit = 1 << plane;
        let r = reserved.iter_mut().find(|r| r.page == page && r.planes & bit == 0 && r.start_ns >= ready_ns)?;
        r.planes |= bit;
        r.joined_ready_ns = r.joined_ready_ns.max(ready_ns);
        Some((r.job, r.end_ns))
    }

    /// A page program on `plane` of `die` at `page` was reserved on its own over
    /// [`start_ns`, `end_ns`) as `job`.
    pub fn reserved(&mut self, die: u32, plane: u32, page: u32, start_ns: Nanos, end_ns: Nanos, job: u64) {
        self.dies[die as usize].push(Reserved { start_ns, end_ns, page, planes: 1 << plane, job, joined_ready_ns: 0 });
    }

    /// Each program a page joined, still remembered: (die, job, when the joined data is in).
    pub fn joined(&self) -> impl Iterator<Item = (u32, u64, Nanos)> + '_ {
        self.dies
            .iter()
            .enumerate()
            .flat_map(|(d, rs)| rs.iter().filter(|r| r.joined_ready_ns > 0).map(move |r| (d as u32, r.job, r.joined_ready_ns)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_joins_a_program_not_started_at_its_page_index_on_another_plane() {
        let mut p = Pairing::new(2);
        p.reserved(0, 0, 7, 1_000, 1_750, 11);
        let fixed = |_, s, e| Some((s, e));
        assert_eq!(p.join(0, 0, 7, 500, 0, fixed), None, "the same plane");
        assert_eq!(p.join(0, 1, 8, 500, 0, fixed), None, "another page index");
        assert_eq!(p.join(1, 1, 7, 500, 0, fixed), None, "another die");
        assert_eq!(p.join(0, 1, 7, 1_001, 0, fixed), None, "its data arrives after the program starts");
        assert_eq!(p.join(0, 1, 7, 1_000, 0, fixed), Some((11, 1_750)), "in the register as it starts");
        assert_eq!(p.join(0, 1, 7, 900, 0, fixed), None, "plane 1 taken");
        assert_eq!(p.join(0, 2, 7, 900, 0, fixed), Some((11, 1_750)), "a third plane");
        // Forgotten once started.
        p.reserved(1, 0, 3, 2_000, 2_750, 12);
        assert_eq!(p.join(1, 1, 3, 1_500, 2_001, fixed), None);
        assert!(p.dies[1].is_empty());
        // Moved (read priority): judged, and joined, at its current window; gone when over.
        p.reserved(1, 0, 4, 3_000, 3_750, 13);
        assert_eq!(p.join(1, 1, 4, 3_200, 0, |_, _, _| Some((3_100, 3_850))), None, "moved earlier: started before the data");
        assert_eq!(p.join(1, 1, 4, 3_200, 0, |_, _, _| Some((3_400, 4_150))), Some((13, 4_150)), "moved later: its end now");
        p.reserved(1, 0, 5, 5_000, 5_750, 14);
        assert_eq!(p.join(1, 1, 5, 4_000, 0, |_, _, _| None), None, "over");
        assert!(p.dies[1].is_empty());
    }
}
