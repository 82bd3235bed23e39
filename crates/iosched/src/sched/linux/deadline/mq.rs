//! mq-deadline: today's Linux deadline scheduler (block/mq-deadline.c, 6.x). The core is 2.6's
//! deadline as it was by 2.6.32: per direction a sector-sorted list and a FIFO by deadline; a
//! batch goes on in sector order while it has dispatched fewer than `fifo_batch` requests (no
//! contiguity test); between batches reads are preferred unless writes have been passed over
//! `writes_starved` times; in the chosen direction a batch starts at the FIFO head if its
//! deadline has come or there is no request at or after the last dispatched position, else at
//! that next request. In 6.x there is one such set of queues per I/O priority class (RT, BE,
//! IDLE; "none" counts as BE), served in strict order: a class is served only when no request of
//! a higher class is queued or at the device. `prio_aging_expire` bounds that: when requests of
//! two or more classes are pending, a BE or IDLE request inserted more than prio_aging_expire
//! ago is served first. `async_depth` caps how many requests other than reads may be allocated
//! (`limit_depth`).
//!
//! Linux's elevator alias for mq-deadline is "deadline"; here `deadline` is the 2.6 scheduler,
//! so mq-deadline has no alias.

use super::{common, decision, dir_of, int_tunable, whole, DeadlineCore, DirQueue, Queued, WRITE};
use crate::request::{Op, PrioClass, Request};
use crate::sched::tunables::{Tunable, TunableValues};
use crate::sched::{Completion, Context, Decision, Scheduler};
use crate::time::{Nanos, NS_PER_MS};

// ---- Defaults (block/mq-deadline.c, top of the file) ----

// read_expire = HZ / 2, write_expire = 5 * HZ, writes_starved = 2, fifo_batch = 16 (requests)
// and dd->front_merges = 1 (dd_init_sched): 2.6's values, in deadline/mod.rs.

/// `prio_aging_expire = 10 * HZ`, ms: after this, a lower-priority request is served first.
pub const PRIO_AGING_EXPIRE_MS: u64 = 10_000;
/// `async_depth` 0 here means Linux's default: nr_requests since commit 39823b47bbd4
/// ("block/mq-deadline: Fix the tag reservation code", May 2024, 6.10 as far as we can tell);
/// before it dd_depth_updated set max(1, 3 * nr_requests / 4).
pub const ASYNC_DEPTH: u64 = 0;

/// Priority levels (Linux enum dd_prio).
const RT: usize = 0;
const BE: usize = 1;
const IDLE: usize = 2;
const PRIO_COUNT: usize = 3;

// ---- State ----

/// Linux struct dd_per_prio: one class's queues, where its last dispatch in each direction
/// started (latest_pos), and its requests inserted and not yet completed (dd_queued: the
/// queued ones and those at the device).
#[derive(Default, Debug)]
struct PerPrio {
    dirs: [DirQueue; 2],
    latest_pos: [u64; 2],
    in_use: u64,
}

pub struct MqDeadline {
    /// The flush list (Linux inserts flushes at the head, on dd->dispatch; served first), the
    /// FIFO sequence, `starved` and the tunables mq-deadline shares with 2.6.
    core: DeadlineCore,
    // run time data
    per_prio: [PerPrio; PRIO_COUNT],
    /// Direction of the last dispatched request (Linux starts with DD_WRITE).
    last_dir: usize,
    batching: u64,
    // settings
    async_depth: u32,
    prio_aging_expire_ns: Nanos,
}

// ---- Helpers ----

/// Linux ioprio_class_to_prio.
fn prio_of(req: &Request) -> usize {
    match req.prio.class.effective() {
        PrioClass::RealTime => RT,
        PrioClass::Idle => IDLE,
        PrioClass::None | PrioClass::BestEffort => BE,
    }
}

impl MqDeadline {
    pub fn new(t: &TunableValues) -> Result<Self, String> {
        Ok(MqDeadline {
            core: DeadlineCore::new(t)?,
            per_prio: Default::default(),
            last_dir: WRITE,
            batching: 0,
            async_depth: whole(t, "async_depth")?.min(u32::MAX as u64) as u32,
            prio_aging_expire_ns: whole(t, "prio_aging_expire")? * NS_PER_MS,
        })
    }

    /// Requests of class `prio` inserted and not yet completed (Linux dd_queued).
    fn dd_queued(&self, prio: usize) -> u64 {
        self.per_prio[prio].in_use
    }

    /// The first request of `prio` in `dir` at or after that class's latest position (Linux
    /// deadline_next_request / deadline_from_pos).
    fn next_request(&self, prio: usize, dir: usize) -> Option<(u64, u64)> {
        let pp = &self.per_prio[prio];
        pp.dirs[dir].at_or_after(pp.latest_pos[dir])
    }

    /// Whether the FIFO head of `prio`/`dir` has reached its deadline (time_is_before_eq_jiffies).
    fn fifo_expired(&self, prio: usize, dir: usize, now: Nanos) -> bool {
        self.per_prio[prio].dirs[dir].fifo_head().is_some_and(|q| q.deadline_ns <= now)
    }

    /// Linux __dd_dispatch_request for one class: the batch goes on, or a direction and a
    /// starting request are chosen; the request is served only if it was inserted at or before
    /// `latest_start` (Linux started_after; deadlines are checked against `now`). Like Linux, choosing updates the batch state even
    /// when the request is then refused.
    fn dispatch_prio(&mut self, prio: usize, now: Nanos, latest_start: i128) -> Option<Request> {
        let mut dir = self.last_dir;
        let mut key = self.next_request(prio, dir).filter(|_| self.batching < self.core.fifo_batch);
        if key.is_none() {
            // Not running a batch: choose a direction.
            dir = self.core.choose_dir(&self.per_prio[prio].dirs)?;
            let next = self.next_request(prio, dir);
            key = if self.fifo_expired(prio, dir, now) || next.is_none() {
                self.per_prio[prio].dirs[dir].fifo_head().map(|q| (q.req.start_sector, q.req.id))
            } else {
                next
            };
            key?;
            self.last_dir = dir;
            self.batching = 0;
        }
        let (_, id) = key?;
        let q = *self.per_prio[prio].dirs[dir].get(id).expect("queued");
        // The request's insertion time: its deadline less its direction's expiry.
        let start = q.deadline_ns as i128 - self.core.fifo_expire_ns[dir] as i128;
        if start > latest_start {
            return None;
        }
        self.batching += 1;
        let pp = &mut self.per_prio[prio];
        pp.dirs[dir].take(id);
        pp.latest_pos[dir] = q.req.start_sector;
        Some(q.req)
    }

    /// Linux dd_dispatch_request.
    fn dispatch(&mut self, now: Nanos) -> Option<Request> {
        if let Some(rq) = self.core.flushes.pop_front() {
            let prio = prio_of(&rq);
            self.per_prio[prio].latest_pos[dir_of(&rq)] = rq.start_sector;
            return Some(rq);
        }
        // Aged requests of a lower class first, when two or more classes have requests.
        let classes = (0..PRIO_COUNT).filter(|&p| self.dd_queued(p) > 0).count();
        if classes >= 2 {
            let latest = now as i128 - self.prio_aging_expire_ns as i128;
            for prio in [BE, IDLE] {
                if let Some(rq) = self.dispatch_prio(prio, now, latest) {
                    return Some(rq);
                }
            }
        }
        // Then by class: a lower class waits while a higher one has requests queued or in flight.
        for prio in 0..PRIO_COUNT {
            let rq = self.dispatch_prio(prio, now, now as i128);
            if rq.is_some() || self.dd_queued(prio) > 0 {
                return rq;
            }
        }
        None
    }

    /// A request leaves without being served (merged into another, or taken out).
    fn forget(&mut self, req: &Request) -> Option<Queued> {
        let prio = prio_of(req);
        let q = self.per_prio[prio].dirs[dir_of(req)].take(req.id)?;
        self.per_prio[prio].in_use = self.per_prio[prio].in_use.saturating_sub(1);
        Some(q)
    }
}

// ---- Hooks ----

impl Scheduler for MqDeadline {
    fn name(&self) -> &str {
        "mq-deadline"
    }

    /// Linux dd_insert_request: counted in its class; into the sort list and at the FIFO's tail
    /// with deadline = now + expire (flushes: at the head, on the dispatch list).
    fn add(&mut self, req: Request, cx: &Context) {
        let prio = prio_of(&req);
        self.per_prio[prio].in_use += 1;
        self.core.insert(&mut self.per_prio[prio].dirs, req, cx.now_ns);
    }

    fn next(&mut self, cx: &Context) -> Decision {
        decision(self.dispatch(cx.now_ns))
    }

    /// Linux dd_finish_request: the class has one request fewer.
    fn completed(&mut self, done: &Completion, _cx: &Context) {
        let pp = &mut self.per_prio[prio_of(&done.request)];
        pp.in_use = pp.in_use.saturating_sub(1);
    }

    fn queued(&self) -> usize {
        self.core.queued(self.per_prio.iter().map(|p| &p.dirs))
    }

    fn remove(&mut self, req: &Request, _cx: &Context) -> bool {
        self.forget(req).is_some()
    }

    fn allow_merge(&self, _rq: &Request, _bio: &Request) -> bool {
        true
    }

    fn front_merges(&self) -> bool {
        self.core.front_merges
    }

    /// Linux dd_request_merged: a front merge re-sorts the request; FIFO place and deadline stay.
    fn merged(&mut self, old: &Request, grown: Request, _cx: &Context) {
        self.per_prio[prio_of(old)].dirs[dir_of(old)].regrow(grown);
    }

    /// Linux dd_merged_requests: the survivor takes the absorbed request's deadline and FIFO
    /// place if that came first; the absorbed request is freed (finish_request counts it).
    fn requests_merged(&mut self, into: &Request, grown: Request, absorbed: &Request, cx: &Context) {
        self.merged(into, grown, cx);
        if let Some(gone) = self.forget(absorbed) {
            self.per_prio[prio_of(into)].dirs[dir_of(into)].inherit_fifo_place(into.id, &gone);
        }
    }

    /// Linux dd_limit_depth: reads are never throttled (op_is_sync is true for every read);
    /// everything else may hold at most async_depth of the nr_requests tags.
    fn limit_depth(&self, req: &Request, nr_requests: u32) -> u32 {
        if req.op == Op::Read || self.async_depth == 0 {
            nr_requests
        } else {
            self.async_depth.min(nr_requests)
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.core.counters()
    }
}

// ---- Tunables (Linux's sysfs names and STORE_INT/STORE_JIFFIES bounds) ----

pub const TUNABLES: &[Tunable] = &[
    Tunable { help: "a read's deadline after its insertion", ..common::READ_EXPIRE },
    common::WRITE_EXPIRE,
    common::WRITES_STARVED,
    common::FRONT_MERGES,
    int_tunable(
        "async_depth",
        ASYNC_DEPTH,
        "requests",
        "requests other than reads that may be allocated at once (0: nr_requests, Linux 6.10+)",
    ),
    Tunable { help: "requests per batch, in sector order", ..common::FIFO_BATCH },
    int_tunable("prio_aging_expire", PRIO_AGING_EXPIRE_MS, "ms", "a BE or IDLE request older than this is served before higher classes"),
];

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::block::request_pool::TagModel;
    use crate::block::{BlockConfig, BlockLayer};
    use crate::request::IoPrio;
    use crate::time::NS_PER_S;

    fn with_class(mut r: Request, class: PrioClass) -> Request {
        r.prio = IoPrio { class, level: 4 };
        r
    }

    #[test]
    fn mq_serves_a_far_read_at_the_first_batch_start_after_its_deadline() {
        // Batches of 16 in sector order start at 0, 160, 320 and 480 ms; F's deadline (501 ms)
        // is noticed only when the batch begun at 480 ms has run out: F goes at 640 ms.
        let (at, before) = far_read_dispatch_ms("mq-deadline");
        assert_eq!(at, 640);
        assert_eq!(before, (0..=63).collect::<Vec<_>>());
    }

    #[test]
    fn mq_batches_fifo_batch_requests_without_a_contiguity_test() {
        // Reads 100 sectors apart; after R0 is served a write arrives; writes_starved = 0.
        // mq-deadline: R0..R15 (16, gaps and all), W, R16..R19 (from the last read position).
        let drain = |name| {
            let mut b = Bench::new(name, &[("writes_starved", 0.0)]);
            for i in 0..20 {
                b.add(read(i, 100 * i));
            }
            assert_eq!(b.serve(), Some(0));
            b.add(write(99, 40_000));
            b.drain()
        };
        let mut want: Vec<u64> = (1..16).collect();
        want.push(99);
        want.extend(16..20);
        assert_eq!(drain("mq-deadline"), want);
        // 2.6.11-2.6.23's deadline ends the batch at the first gap: W goes second.
        let mut want = vec![99];
        want.extend(1..20);
        assert_eq!(drain("deadline"), want);
    }

    #[test]
    fn mq_first_dispatch_goes_on_with_writes() {
        // Linux starts with last_dir = DD_WRITE and batching = 0: a queued write at or after
        // sector 0 is served as the continuation of a write batch, before the read.
        let mut b = Bench::new("mq-deadline", &[]);
        b.add(read(0, 100));
        b.add(write(1, 40_000));
        assert_eq!(b.drain(), vec![1, 0]);
    }

    #[test]
    fn mq_writes_run_after_writes_starved_read_batches() {
        // 60 reads 100 sectors apart; a write arrives after R0. The first batch (R0..R15) was
        // chosen before it came; the next two (R16..R31, R32..R47) starve it (starved 1, 2);
        // then the write; then the reads go on from where they were.
        let mut b = Bench::new("mq-deadline", &[]);
        for i in 0..60 {
            b.add(read(i, 100 * i));
        }
        assert_eq!(b.serve(), Some(0));
        b.add(write(99, 40_000));
        let mut want: Vec<u64> = (1..48).collect();
        want.push(99);
        want.extend(48..60);
        assert_eq!(b.drain(), want);
    }

    #[test]
    fn mq_discards_are_in_the_write_direction_and_its_batches() {
        // As above, with a discard (REQ_OP_DISCARD: op_is_write, so rq_data_dir is WRITE) and a
        // write after R0: the discard waits with the write while the two read batches starve
        // them, then both go in one write batch (sector order), then the reads.
        let mut b = Bench::new("mq-deadline", &[]);
        for i in 0..60 {
            b.add(read(i, 100 * i));
        }
        assert_eq!(b.serve(), Some(0));
        b.add(rq(99, Op::Discard, 40_000, 64));
        b.add(write(100, 40_064));
        let mut want: Vec<u64> = (1..48).collect();
        want.extend([99, 100]);
        want.extend(48..60);
        assert_eq!(b.drain(), want);
        assert_eq!(crate::sched::linux::deadline::dir_of(&rq(1, Op::Discard, 0, 8)), crate::sched::linux::deadline::WRITE);
    }

    #[test]
    fn mq_classes_in_strict_order_and_a_lower_class_waits_for_the_higher_in_flight() {
        let mut b = Bench::new("mq-deadline", &[]);
        b.add(with_class(read(0, 100), PrioClass::Idle));
        b.add(with_class(read(1, 200), PrioClass::BestEffort));
        b.add(read(2, 250)); // class none: best effort
        b.add(with_class(read(3, 300), PrioClass::RealTime));
        b.add(with_class(read(4, 400), PrioClass::RealTime));
        let r3 = b.dispatch().unwrap();
        assert_eq!(r3.id, 3);
        let r4 = b.dispatch().unwrap();
        assert_eq!(r4.id, 4, "same class: its batch goes on");
        // Both RT requests at the device: BE and IDLE wait (dd_queued counts them).
        assert_eq!(b.dispatch(), None);
        assert_eq!(b.s.queued(), 3);
        b.complete(r3);
        assert_eq!(b.dispatch(), None, "one RT request still in flight");
        b.complete(r4);
        assert_eq!(b.serve(), Some(1));
        assert_eq!(b.serve(), Some(2));
        assert_eq!(b.serve(), Some(0));
        assert_eq!(b.dispatch(), None);
    }

    #[test]
    fn mq_prio_aging_serves_a_waiting_lower_class_request() {
        // A BE request at t = 0 and a stream of RT requests, one served per second (each
        // completed before the next second, a new one queued after each dispatch). The BE
        // request goes when it has waited prio_aging_expire: at 10 s by default (inserted at
        // or before now - 10 s), after R0..R9; at 3 s with prio_aging_expire = 3000.
        for (aging_ms, at_s) in [(None, 10u64), (Some(3000.0), 3)] {
            let t: Vec<(&str, f64)> = aging_ms.map(|a| ("prio_aging_expire", a)).into_iter().collect();
            let mut b = Bench::new("mq-deadline", &t);
            b.add(read(1000, 100));
            b.add(with_class(read(0, 1000), PrioClass::RealTime));
            let mut served = vec![];
            for k in 0..20u64 {
                b.now = k * NS_PER_S;
                let id = b.serve().unwrap();
                served.push(id);
                if id == 1000 {
                    assert_eq!(k, at_s);
                    break;
                }
                b.add(with_class(read(k + 1, 1000 + 8 * (k + 1)), PrioClass::RealTime));
            }
            assert_eq!(served, (0..at_s).chain([1000]).collect::<Vec<_>>());
        }
    }

    #[test]
    fn mq_limit_depth_caps_everything_but_reads() {
        let sync_write = rq(0, Op::Write, 0, 8);
        let mut async_read = read(1, 0);
        async_read.sync = false;
        let s = MqDeadline::new(&TunableValues::resolve(TUNABLES, &[("async_depth".to_string(), 3.0)].into()).unwrap()).unwrap();
        assert_eq!(s.limit_depth(&read(0, 0), 8), 8);
        assert_eq!(s.limit_depth(&async_read, 8), 8, "every read is sync to Linux (op_is_sync)");
        assert_eq!(s.limit_depth(&write(0, 0), 8), 3);
        assert_eq!(s.limit_depth(&sync_write, 8), 3, "sync writes are throttled too");
        assert_eq!(s.limit_depth(&write(0, 0), 2), 2, "never above nr_requests");
        let default = MqDeadline::new(&TunableValues::resolve(TUNABLES, &Default::default()).unwrap()).unwrap();
        assert_eq!(default.limit_depth(&write(0, 0), 64), 64, "6.10+: async_depth = nr_requests");
    }

    #[test]
    fn mq_async_depth_holds_async_writes_back_in_the_block_layer() {
        // 8 tags, async_depth 3: of 5 asynchronous writes 3 get a request, the writer sleeps
        // with the other 2; a synchronous read still gets one.
        for (depth, inserted, held) in [(3.0, 4, 2), (0.0, 6, 0)] {
            let mut bench = Bench::new("mq-deadline", &[("async_depth", depth)]);
            let mut blk = BlockLayer::new(BlockConfig {
                nr_requests: Some(8),
                tags: TagModel::BlkMq,
                nomerges: 2,
                max_sectors: 1024,
                plug: false,
                max_discard_sectors: None,
                max_discard_segments: 1,
            });
            for i in 0..5 {
                let mut w = write(i, 10_000 * (i + 1));
                w.sync = false;
                submit(&mut blk, &mut bench, w);
            }
            let mut r = read(10, 5);
            r.principal.pid = 2;
            submit(&mut blk, &mut bench, r);
            assert_eq!((bench.s.queued(), blk.held_bios()), (inserted, held), "async_depth {depth}");
        }
    }

    #[test]
    fn mq_front_merges_on_and_off() {
        for (on, want) in [(1.0, vec![(0, 92, 16)]), (0.0, vec![(1, 92, 8), (0, 100, 8)])] {
            assert_eq!(front_merge_on_off("mq-deadline", on).1, want, "front_merges = {on}");
        }
    }

    #[test]
    fn mq_front_merge_keeps_the_deadline_and_joined_requests_take_the_earlier_one() {
        // Front merge: A at 3000 (t = 0, deadline 500 ms), C at 10 (150 ms: 650 ms); at 200 ms
        // a bio front-merges into A. At 600 ms A has expired and goes first, C has not.
        assert_eq!(front_merge_then_expiry("mq-deadline"), vec![(0, 2992, 16), (1, 10, 8)]);
        // Joined: B [116, 124) at 0 (500 ms), L at 10 at 40 ms (540), A [100, 108) at 100 ms
        // (600); a bio [108, 116) at 200 ms joins A and B. At 520 ms A carries B's 500 ms.
        let t = TunableValues::resolve(TUNABLES, &Default::default()).unwrap();
        let mut s = MqDeadline::new(&t).unwrap();
        let disk = crate::testkit::ToyDisk { head: std::cell::Cell::new(0) };
        let mut blk = block();
        for (now_ms, bio) in joining_bios() {
            blk.submit(bio, &mut s, &Context { now_ns: now_ms * MS, device: &disk, in_flight: 0 });
        }
        assert_eq!(blk.counters.request_merges, 1);
        assert_eq!(s.per_prio[BE].in_use, 2, "the absorbed request is no longer counted");
        let cx = Context { now_ns: 520 * MS, device: &disk, in_flight: 0 };
        let Decision::Dispatch(first, _) = s.next(&cx) else { panic!() };
        assert_eq!((first.id, first.start_sector, first.size_sectors), (2, 100, 24));
    }
}
