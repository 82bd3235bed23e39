//! deadline-2.5: the deadline scheduler as Jens Axboe posted it for Linux 2.5 (LKML, "Re:
//! 2.5.46-mm2", November 2002). The structure is 2.6's (`deadline.rs`): per direction a
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
//! docs/schedulers/deadline-2.5.md for what that leaves open).

use super::deadline::{dir_of, starved_past, whole, DirQueue, Queued, INT_MAX, READ, WRITE};
use super::tunables::{Tunable, TunableValues};
use super::{Context, Decision, Scheduler};
use crate::device::ArmPath;
use crate::request::{Op, Request, RequestId, SECTOR_BYTES};
use crate::time::{Nanos, NS_PER_MS};
use std::collections::VecDeque;

// ---- Defaults (2.5.46-mm deadline, as described on LKML) ----

/// A read's deadline, ms after insertion (HZ / 2).
pub const READ_EXPIRE_MS: u64 = 500;
/// A write's deadline, ms after insertion (5 * HZ).
pub const WRITE_EXPIRE_MS: u64 = 5_000;
/// Read batches chosen while writes wait before a write batch is forced.
pub const WRITES_STARVED: u64 = 2;
/// A batch's budget, in cost units.
pub const FIFO_BATCH: u64 = 16;
/// Cost of a request that needs a seek (does not start where the last one ended).
pub const SEEK_COST: u64 = 16;
/// Cost of a contiguous request: one unit per started `stream_unit`, KiB.
pub const STREAM_UNIT_KIB: u64 = 256;
pub const FRONT_MERGES: bool = true;

// ---- State ----

pub struct DeadlineV25 {
    // run time data
    dirs: [DirQueue; 2],
    flushes: VecDeque<Request>,
    /// Next request in sort order after the last one dispatched, in its direction.
    next_rq: [Option<(u64, RequestId)>; 2],
    /// Cost spent by the current batch.
    spent: u64,
    /// End of the last dispatched request.
    last_sector: u64,
    starved: u64,
    seq: u64,
    // settings
    fifo_expire_ns: [Nanos; 2],
    fifo_batch: u64,
    writes_starved: u64,
    seek_cost: u64,
    stream_unit_bytes: u64,
    front_merges: bool,
}

// ---- Helpers ----

impl DeadlineV25 {
    pub fn new(t: &TunableValues) -> Result<Self, String> {
        Ok(DeadlineV25 {
            dirs: Default::default(),
            flushes: VecDeque::new(),
            next_rq: [None; 2],
            spent: 0,
            last_sector: 0,
            starved: 0,
            seq: 0,
            fifo_expire_ns: [whole(t, "read_expire")? * NS_PER_MS, whole(t, "write_expire")? * NS_PER_MS],
            fifo_batch: whole(t, "fifo_batch")?,
            writes_starved: whole(t, "writes_starved")?,
            seek_cost: whole(t, "seek_cost")?,
            stream_unit_bytes: whole(t, "stream_unit")? * 1024,
            front_merges: t.get("front_merges") != 0.0,
        })
    }

    /// What dispatching `req` costs the batch: a seek, or its size in stream units (rounded up).
    pub fn cost(&self, req: &Request) -> u64 {
        if req.start_sector == self.last_sector {
            (req.size_sectors as u64 * SECTOR_BYTES).div_ceil(self.stream_unit_bytes)
        } else {
            self.seek_cost
        }
    }

    fn unlink(&mut self, dir: usize, id: RequestId) -> Option<Queued> {
        let q = *self.dirs[dir].get(id)?;
        let key = (q.req.start_sector, id);
        if self.next_rq[dir] == Some(key) {
            self.next_rq[dir] = self.dirs[dir].after(key);
        }
        self.dirs[dir].take(id)
    }

    /// Moves a request to the device and charges the batch for it.
    fn move_request(&mut self, dir: usize, key: (u64, RequestId)) -> Request {
        self.next_rq = [None; 2];
        self.next_rq[dir] = self.dirs[dir].after(key);
        let q = self.dirs[dir].take(key.1).expect("a queued request");
        self.spent = self.spent.saturating_add(self.cost(&q.req));
        self.last_sector = q.req.end_sector();
        q.req
    }

    fn fifo_expired(&self, dir: usize, now: Nanos) -> bool {
        self.dirs[dir].fifo_head().is_some_and(|q| now > q.deadline_ns)
    }

    fn dispatch(&mut self, now: Nanos) -> Option<Request> {
        if let Some(f) = self.flushes.pop_front() {
            return Some(f);
        }
        let reads = !self.dirs[READ].is_empty();
        let writes = !self.dirs[WRITE].is_empty();
        let (cand_dir, cand) = match self.next_rq {
            [_, Some(k)] => (WRITE, Some(k)),
            [r, None] => (READ, r),
        };
        if let Some(key) = cand {
            if self.spent < self.fifo_batch {
                // Budget left: the batch goes on in sector order, whatever the next one costs.
                return Some(self.move_request(cand_dir, key));
            }
        }
        let dir = if reads {
            let forced = writes && starved_past(&mut self.starved, self.writes_starved);
            if forced {
                self.starved = 0;
                WRITE
            } else {
                READ
            }
        } else if writes {
            self.starved = 0;
            WRITE
        } else {
            return None;
        };
        let key = if self.fifo_expired(dir, now) {
            let q = self.dirs[dir].fifo_head().expect("non-empty");
            (q.req.start_sector, q.req.id)
        } else if let Some(k) = self.next_rq[dir] {
            k
        } else {
            self.dirs[dir].lowest().expect("non-empty")
        };
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

    fn add(&mut self, req: Request, cx: &Context) {
        if req.op == Op::Flush {
            self.flushes.push_back(req);
            return;
        }
        let dir = dir_of(&req);
        self.seq += 1;
        self.dirs[dir].insert(Queued { req, deadline_ns: cx.now_ns + self.fifo_expire_ns[dir], seq: self.seq });
    }

    fn next(&mut self, cx: &Context) -> Decision {
        match self.dispatch(cx.now_ns) {
            Some(req) => Decision::Dispatch(req, ArmPath::Direct),
            None => Decision::Empty,
        }
    }

    fn queued(&self) -> usize {
        self.dirs[READ].len() + self.dirs[WRITE].len() + self.flushes.len()
    }

    fn remove(&mut self, req: &Request, _cx: &Context) -> bool {
        self.unlink(dir_of(req), req.id).is_some()
    }

    fn allow_merge(&self, _rq: &Request, _bio: &Request) -> bool {
        true
    }

    fn front_merges(&self) -> bool {
        self.front_merges
    }

    /// A front merge re-sorts the request; its FIFO place and deadline stay.
    fn merged(&mut self, old: &Request, grown: Request, _cx: &Context) {
        let dir = dir_of(old);
        if old.start_sector != grown.start_sector {
            let key = (old.start_sector, old.id);
            if self.next_rq[dir] == Some(key) {
                self.next_rq[dir] = self.dirs[dir].after(key);
            }
        }
        self.dirs[dir].regrow(grown);
    }

    /// The survivor keeps the earlier deadline (and that FIFO place); the absorbed one leaves.
    fn requests_merged(&mut self, into: &Request, grown: Request, absorbed: &Request, cx: &Context) {
        self.merged(into, grown, cx);
        let dir = dir_of(absorbed);
        if let Some(gone) = self.dirs[dir].get(absorbed.id).copied() {
            self.dirs[dir].inherit_fifo_place(into.id, &gone);
        }
        self.unlink(dir, absorbed.id);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("starved", self.starved)]
    }
}

// ---- Tunables (the 2.5 variable names) ----

pub const TUNABLES: &[Tunable] = &[
    Tunable {
        name: "read_expire",
        default: READ_EXPIRE_MS as f64,
        unit: "ms",
        min: 0.0,
        max: INT_MAX,
        help: "a read's deadline after its insertion (checked when a batch starts)",
    },
    Tunable {
        name: "write_expire",
        default: WRITE_EXPIRE_MS as f64,
        unit: "ms",
        min: 0.0,
        max: INT_MAX,
        help: "a write's deadline after its insertion",
    },
    Tunable {
        name: "writes_starved",
        default: WRITES_STARVED as f64,
        unit: "count",
        min: 0.0,
        max: INT_MAX,
        help: "times reads may be chosen over waiting writes before a write batch",
    },
    Tunable {
        name: "fifo_batch",
        default: FIFO_BATCH as f64,
        unit: "cost units",
        min: 0.0,
        max: INT_MAX,
        help: "a batch's budget: it ends once its requests have cost this much",
    },
    Tunable {
        name: "seek_cost",
        default: SEEK_COST as f64,
        unit: "cost units",
        min: 0.0,
        max: INT_MAX,
        help: "cost of a request not contiguous with the previous one",
    },
    Tunable {
        name: "stream_unit",
        default: STREAM_UNIT_KIB as f64,
        unit: "KiB",
        min: 1.0,
        max: INT_MAX,
        help: "a contiguous request costs one unit per started stream_unit of its size",
    },
    Tunable {
        name: "front_merges",
        default: FRONT_MERGES as u8 as f64,
        unit: "bool",
        min: 0.0,
        max: 1.0,
        help: "merge bios ending where a queued request starts",
    },
];

#[cfg(test)]
mod tests {
    use super::super::deadline::test_util::*;
    use super::*;
    use std::collections::BTreeMap;

    fn v25(t: &[(&str, f64)]) -> DeadlineV25 {
        let given: BTreeMap<String, f64> = t.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        DeadlineV25::new(&TunableValues::resolve(TUNABLES, &given).unwrap()).unwrap()
    }

    #[test]
    fn v25_cost_is_seek_cost_or_stream_units() {
        let mut s = v25(&[]);
        s.last_sector = 1000;
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
        let mut b = Bench::new("deadline-2.5", &[("writes_starved", 1.0)]);
        b.add(rq(0, Op::Read, 0, 8));
        b.add(rq(1, Op::Read, 8, 8));
        b.add(rq(2, Op::Read, 16, 1024));
        b.add(rq(3, Op::Read, 5000, 8));
        b.add(rq(4, Op::Read, 5008, 8));
        b.add(write(9, 100_000));
        assert_eq!(b.drain(), vec![0, 1, 2, 3, 9, 4]);
        // The same requests under 2.6's rule: the batch ends at the first gap (before D).
        let mut b = Bench::new("deadline", &[("writes_starved", 1.0)]);
        b.add(rq(0, Op::Read, 0, 8));
        b.add(rq(1, Op::Read, 8, 8));
        b.add(rq(2, Op::Read, 16, 1024));
        b.add(rq(3, Op::Read, 5000, 8));
        b.add(rq(4, Op::Read, 5008, 8));
        b.add(write(9, 100_000));
        assert_eq!(b.drain(), vec![0, 1, 2, 9, 3, 4]);
    }

    #[test]
    fn v25_sixteen_contiguous_requests_fill_a_batch() {
        // 20 contiguous 4 KiB reads from sector 0 (one unit each) and a write, writes_starved 1:
        // 16 reads, the write, the other 4.
        let mut b = Bench::new("deadline-2.5", &[("writes_starved", 1.0)]);
        for i in 0..20 {
            b.add(read(i, 8 * i));
        }
        b.add(write(99, 50_000));
        let mut want: Vec<u64> = (0..16).collect();
        want.push(99);
        want.extend(16..20);
        assert_eq!(b.drain(), want);
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
        let mut b = Bench::new("deadline-2.5", &[]);
        for (id, s) in [(0, 5000), (1, 5100), (2, 5200), (3, 5300)] {
            b.add(read(id, s));
        }
        b.add(write(10, 50_000));
        b.add(write(11, 50_008));
        assert_eq!(b.drain(), vec![0, 1, 10, 2, 3, 11]);
        // From sector 0, the first read is contiguous with the initial head position (cost 1),
        // so the first batch also takes the seek to R1: R0 R1 | R2 | W1 | R3 | W2.
        let mut b = Bench::new("deadline-2.5", &[]);
        for (id, s) in [(0, 0), (1, 100), (2, 200), (3, 300)] {
            b.add(read(id, s));
        }
        b.add(write(10, 50_000));
        b.add(write(11, 50_008));
        assert_eq!(b.drain(), vec![0, 1, 2, 10, 3, 11]);
    }

    #[test]
    fn v25_front_merges_on_and_off() {
        for (on, want) in [(1.0, vec![(0, 92, 16)]), (0.0, vec![(1, 92, 8), (0, 100, 8)])] {
            let mut bench = Bench::new("deadline-2.5", &[("front_merges", on)]);
            let mut blk = block();
            submit(&mut blk, &mut bench, read(0, 100));
            submit(&mut blk, &mut bench, read(1, 92));
            assert_eq!(drain_block(&mut blk, &mut bench), want, "front_merges = {on}");
        }
    }
}
