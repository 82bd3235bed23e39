//! deadline-2.5: the deadline scheduler as Jens Axboe posted it for Linux 2.5 (LKML, "Re:
//! 2.5.46-mm2", November 2002). The structure is 2.6's (`deadline/mod.rs`): per direction a
//! sector-sorted list and a FIFO by deadline, reads preferred unless writes have waited
//! `writes_starved` times, a batch starting at an expired FIFO head, else at the next request
//! in sector order, else at the lowest sector. What differs is how a batch is measured: not in
//! requests but in cost. Each request dispatched costs `seek_cost` if it does not start where
//! the previous one ended, else one unit per started `stream_unit` of its size
//! (ceil(size / stream_unit)); the batch ends once it has spent `fifo_batch`. With the defaults
//! (16, 16, 256 KiB) "a seek costs as much as 16 contiguous requests" (Seelam et al. 2005,
//! section 2.1): a batch is one seek, or up to 16 contiguous requests of at most 256 KiB.
//!
//! The 2.5 source itself was not found in the stored corpus; the rule is implemented from the
//! description in shared/reference/linux-bsd-schedulers.md section 2 (see
//! docs/schedulers/deadline-2.5.md for what that leaves open). The queues, the hooks and the
//! tunables 2.5 shares with 2.6 are in `deadline/mod.rs` (`DeadlineCore`, `Sweep`, `sweep_hooks!`);
//! this file holds the cost rule.

use super::{common, decision, dir_of, int_tunable, sweep_hooks, whole, DeadlineCore, Sweep};
use crate::request::{Request, RequestId, SECTOR_BYTES};
use crate::sched::tunables::{Tunable, TunableValues};
use crate::sched::{Context, Decision, Scheduler};
use crate::time::Nanos;

// ---- Defaults (2.5.46-mm deadline, as described on LKML) ----

// read_expire (HZ / 2), write_expire (5 * HZ), writes_starved (2), fifo_batch (16, here a
// batch's budget in cost units) and front_merges: 2.6's, in deadline/mod.rs.

/// Cost of a request that needs a seek (does not start where the last one ended).
pub const SEEK_COST: u64 = 16;
/// Cost of a contiguous request: one unit per started `stream_unit`, KiB.
pub const STREAM_UNIT_KIB: u64 = 256;

// ---- State ----

pub struct DeadlineV25 {
    core: DeadlineCore,
    sweep: Sweep,
    /// Cost spent by the current batch.
    spent: u64,
    // settings
    seek_cost: u64,
    stream_unit_bytes: u64,
}

// ---- Helpers ----

impl DeadlineV25 {
    pub fn new(t: &TunableValues) -> Result<Self, String> {
        Ok(DeadlineV25 {
            core: DeadlineCore::new(t)?,
            sweep: Sweep::default(),
            spent: 0,
            seek_cost: whole(t, "seek_cost")?,
            stream_unit_bytes: whole(t, "stream_unit")? * 1024,
        })
    }

    /// What dispatching `req` costs the batch: a seek, or its size in stream units (rounded up).
    pub fn cost(&self, req: &Request) -> u64 {
        if req.start_sector == self.sweep.last_sector {
            (req.size_sectors as u64 * SECTOR_BYTES).div_ceil(self.stream_unit_bytes)
        } else {
            self.seek_cost
        }
    }

    /// Moves a request to the device and charges the batch for it.
    fn move_request(&mut self, dir: usize, key: (u64, RequestId)) -> Request {
        let cost = self.cost(&self.sweep.dirs[dir].get(key.1).expect("a queued request").req);
        self.spent = self.spent.saturating_add(cost);
        self.sweep.move_request(dir, key)
    }

    fn dispatch(&mut self, now: Nanos) -> Option<Request> {
        if let Some(f) = self.core.flushes.pop_front() {
            return Some(f);
        }
        if let Some((dir, key)) = self.sweep.batch_next() {
            if self.spent < self.core.fifo_batch {
                // Budget left: the batch goes on in sector order, whatever the next one costs.
                return Some(self.move_request(dir, key));
            }
        }
        let (dir, key, _) = self.sweep.batch_start(&mut self.core, now)?;
        // A new batch with a full budget.
        self.spent = 0;
        Some(self.move_request(dir, key))
    }
}

// ---- Hooks ----

impl Scheduler for DeadlineV25 {
    fn name(&self) -> &str {
        "deadline-2.5"
    }

    sweep_hooks!();
}

// ---- Tunables (the 2.5 variable names) ----

pub const TUNABLES: &[Tunable] = &[
    common::READ_EXPIRE,
    common::WRITE_EXPIRE,
    common::WRITES_STARVED,
    Tunable { unit: "cost units", help: "a batch's budget: it ends once its requests have cost this much", ..common::FIFO_BATCH },
    int_tunable("seek_cost", SEEK_COST, "cost units", "cost of a request not contiguous with the previous one"),
    Tunable {
        min: 1.0,
        ..int_tunable("stream_unit", STREAM_UNIT_KIB, "KiB", "a contiguous request costs one unit per started stream_unit of its size")
    },
    common::FRONT_MERGES,
];

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::request::Op;
    use std::collections::BTreeMap;

    fn v25(t: &[(&str, f64)]) -> DeadlineV25 {
        let given: BTreeMap<String, f64> = t.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        DeadlineV25::new(&TunableValues::resolve(TUNABLES, &given).unwrap()).unwrap()
    }

    #[test]
    fn v25_cost_is_seek_cost_or_stream_units() {
        let mut s = v25(&[]);
        s.sweep.last_sector = 1000;
        assert_eq!(s.cost(&rq(0, Op::Read, 1000, 8)), 1, "4 KiB contiguous: one unit");
        assert_eq!(s.cost(&rq(0, Op::Read, 1000, 512)), 1, "256 KiB: one unit");
        assert_eq!(s.cost(&rq(0, Op::Read, 1000, 513)), 2, "256.5 KiB: two");
        assert_eq!(s.cost(&rq(0, Op::Read, 1000, 2048)), 4, "1 MiB: four");
        assert_eq!(s.cost(&rq(0, Op::Read, 1008, 8)), 16, "not contiguous: a seek");
    }

    #[test]
    fn v25_batch_spends_fifo_batch_with_a_seek_counting_16() {
        // Reads A [0, 8), B [8, 16), C [16, 1040) (512 KiB), D 5000, E 5008; a write W;
        // writes_starved = 1. The head starts at sector 0, so A is contiguous.
        // A 1 + B 1 + C 2 = 4, D (a seek) 16: 20 >= 16 ends the batch after D.
        // Then the write batch (starved 1 >= 1): W, a seek, 16. Then E (a seek from W).
        let drain = |name| {
            let mut b = Bench::new(name, &[("writes_starved", 1.0)]);
            for (id, start, size) in [(0, 0, 8), (1, 8, 8), (2, 16, 1024), (3, 5000, 8), (4, 5008, 8)] {
                b.add(rq(id, Op::Read, start, size));
            }
            b.add(write(9, 100_000));
            b.drain()
        };
        assert_eq!(drain("deadline-2.5"), vec![0, 1, 2, 3, 9, 4]);
        // The same requests under 2.6's rule: the batch ends at the first gap (before D).
        assert_eq!(drain("deadline"), vec![0, 1, 2, 9, 3, 4]);
    }

    #[test]
    fn v25_sixteen_contiguous_requests_fill_a_batch() {
        // 20 contiguous 4 KiB reads from sector 0 (one unit each) and a write, writes_starved 1:
        // 16 reads, the write, the other 4.
        let mut want: Vec<u64> = (0..16).collect();
        want.push(99);
        want.extend(16..20);
        assert_eq!(contiguous_reads_and_a_write("deadline-2.5"), want);
        // 1 MiB requests cost 4 each: 4 per batch.
        let mut b = Bench::new("deadline-2.5", &[("writes_starved", 1.0)]);
        for i in 0..6 {
            b.add(rq(i, Op::Read, 2048 * i, 2048));
        }
        b.add(write(99, 50_000));
        assert_eq!(b.drain(), vec![0, 1, 2, 3, 99, 4, 5]);
    }

    #[test]
    fn v25_serves_a_far_read_once_its_deadline_has_passed_not_before() {
        // S0 (a seek from sector 0) is a batch by itself; then batches of 16 contiguous reads
        // start at 10, 170, 330 and 490 ms. F's deadline is 501 ms (strictly after: 2.6.11's
        // test); the batch started at 490 ms runs to 640 ms, and F goes at 650 ms.
        let (at, before) = far_read_dispatch_ms("deadline-2.5");
        assert_eq!(at, 650);
        assert_eq!(before, (0..=64).collect::<Vec<_>>());
    }

    #[test]
    fn v25_writes_run_after_writes_starved_read_batches() {
        // Reads 100 sectors apart from 5000: each a seek, a batch of one. Default
        // writes_starved 2: R0 (starved 1), R1 (starved 2), then a write batch; it starts with
        // a seek too, so it is W1 alone (W2, contiguous, would cost 1 but the budget is spent).
        // Two more read batches, then W2.
        let drain = |reads: [u64; 4]| {
            let mut b = Bench::new("deadline-2.5", &[]);
            for (id, s) in (0..).zip(reads) {
                b.add(read(id, s));
            }
            b.add(write(10, 50_000));
            b.add(write(11, 50_008));
            b.drain()
        };
        assert_eq!(drain([5000, 5100, 5200, 5300]), vec![0, 1, 10, 2, 3, 11]);
        // From sector 0, the first read is contiguous with the initial head position (cost 1),
        // so the first batch also takes the seek to R1: R0 R1 | R2 | W1 | R3 | W2.
        assert_eq!(drain([0, 100, 200, 300]), vec![0, 1, 2, 10, 3, 11]);
    }

    #[test]
    fn v25_front_merges_on_and_off() {
        for (on, want) in [(1.0, vec![(0, 92, 16)]), (0.0, vec![(1, 92, 8), (0, 100, 8)])] {
            assert_eq!(front_merge_on_off("deadline-2.5", on).1, want, "front_merges = {on}");
        }
    }
}
