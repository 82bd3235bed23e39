//! deadline: Linux 2.6's deadline I/O scheduler (drivers/block/ then block/deadline-iosched.c as
//! in 2.6.11-2.6.23; read here in 2.6.11 and in a 2.6.18-era copy). Per direction, requests sit in a sector-sorted list and in a
//! FIFO ordered by deadline (insert time + read_expire or write_expire). Requests go out in
//! batches: a batch continues in sector order while it has dispatched fewer than `fifo_batch`
//! requests and the next request starts where the previous one ended (a non-contiguous next
//! request adds `fifo_batch` to the count, which ends the batch). Between batches reads are
//! preferred, unless writes have been passed over `writes_starved` times; in the chosen
//! direction the batch starts at the FIFO head if its deadline has passed, else at the next
//! request in sector order, else (at the end of the disk) at the lowest sector: a one-way
//! elevator.
//!
//! Aaron Carroll's patches changed this in two steps: a 2.6.24 copy already starts every new
//! batch at the FIFO head when there is no next request (and always resets the count), but keeps
//! the contiguity test; 2.6.32 has no contiguity test either. That last rule is the one
//! `mq-deadline` keeps (`deadline/mq.rs`). The 2.5
//! original with its seek cost is `deadline/v25.rs`. What the three share lives here: the
//! per-direction queues (`DirQueue`), the common tunables and the state that goes with them
//! (`DeadlineCore`: flush list, FIFO sequence, starvation count, choice of direction). 2.6 and
//! 2.5 also share the one-way sweep with its hooks (`Sweep`, `sweep_hooks!`) and differ only in
//! how a batch is measured.

pub mod mq;
pub mod v25;

use crate::device::ArmPath;
use crate::fast_hash::FastMap;
use crate::request::{Op, Request, RequestId};
use crate::sched::tunables::{Tunable, TunableValues};
use crate::sched::{Context, Decision, Scheduler};
use crate::time::{Nanos, NS_PER_MS};
use std::collections::{BTreeSet, VecDeque};

// ---- Defaults (2.6.18 block/deadline-iosched.c, top of the file; 2.5 and mq-deadline alike) ----

/// `read_expire = HZ / 2`: a read's deadline, ms after its insertion.
pub const READ_EXPIRE_MS: u64 = 500;
/// `write_expire = 5 * HZ`: a write's deadline, ms after its insertion ("these limits are SOFT").
pub const WRITE_EXPIRE_MS: u64 = 5_000;
/// `writes_starved = 2`: read batches chosen while writes wait before a write batch is forced.
pub const WRITES_STARVED: u64 = 2;
/// `fifo_batch = 16`: requests in one batch (deadline-2.5: cost units).
pub const FIFO_BATCH: u64 = 16;
/// `front_merges = 1`: look for bios that end where a queued request starts.
pub const FRONT_MERGES: bool = true;

/// Linux's INT_MAX: the upper bound of every deadline tunable's sysfs store.
pub const INT_MAX: f64 = 2_147_483_647.0;

pub(super) const READ: usize = 0;
pub(super) const WRITE: usize = 1;

// ---- State ----

/// A queued request with its FIFO place: its deadline and its insertion sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Queued {
    pub req: Request,
    pub deadline_ns: Nanos,
    pub seq: u64,
}

/// One direction's requests (Linux: `sort_list[dir]`, an rbtree by start sector, and
/// `fifo_list[dir]`, in insertion order, which is deadline order since every request of a
/// direction gets the same expiry). Keys carry the request id so equal sectors coexist.
#[derive(Default, Debug)]
pub(super) struct DirQueue {
    by_id: FastMap<RequestId, Queued>,
    sort: BTreeSet<(u64, RequestId)>,
    fifo: BTreeSet<(Nanos, u64, RequestId)>,
}

impl DirQueue {
    pub fn insert(&mut self, q: Queued) {
        self.sort.insert((q.req.start_sector, q.req.id));
        self.fifo.insert((q.deadline_ns, q.seq, q.req.id));
        self.by_id.insert(q.req.id, q);
    }

    pub fn take(&mut self, id: RequestId) -> Option<Queued> {
        let q = self.by_id.remove(&id)?;
        self.sort.remove(&(q.req.start_sector, id));
        self.fifo.remove(&(q.deadline_ns, q.seq, id));
        Some(q)
    }

    pub fn get(&self, id: RequestId) -> Option<&Queued> {
        self.by_id.get(&id)
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The request whose deadline comes first (the FIFO head).
    pub fn fifo_head(&self) -> Option<&Queued> {
        self.fifo.first().map(|&(_, _, id)| &self.by_id[&id])
    }

    /// The lowest-sector request.
    pub fn lowest(&self) -> Option<(u64, RequestId)> {
        self.sort.first().copied()
    }

    /// The first request in sector order strictly after `key` (Linux: rb_next).
    pub fn after(&self, key: (u64, RequestId)) -> Option<(u64, RequestId)> {
        use std::ops::Bound::{Excluded, Unbounded};
        self.sort.range((Excluded(key), Unbounded)).next().copied()
    }

    /// The last request in sector order strictly before `key` (Linux: rb_prev).
    pub fn before(&self, key: (u64, RequestId)) -> Option<(u64, RequestId)> {
        self.sort.range(..key).next_back().copied()
    }

    /// The first request starting at or after `sector` (mq-deadline's deadline_from_pos).
    pub fn at_or_after(&self, sector: u64) -> Option<(u64, RequestId)> {
        self.sort.range((sector, 0)..).next().copied()
    }

    /// A queued request grew (same id): a new start re-sorts it; its FIFO place is kept.
    /// Returns false if it is not queued here.
    pub fn regrow(&mut self, grown: Request) -> bool {
        let Some(q) = self.by_id.get_mut(&grown.id) else {
            return false;
        };
        if q.req.start_sector != grown.start_sector {
            self.sort.remove(&(q.req.start_sector, grown.id));
            self.sort.insert((grown.start_sector, grown.id));
        }
        q.req = grown;
        true
    }

    /// Linux deadline_merged_requests: if the absorbed request's deadline is earlier, the
    /// survivor takes its deadline and its place in the FIFO.
    pub fn inherit_fifo_place(&mut self, survivor: RequestId, absorbed: &Queued) {
        let Some(q) = self.by_id.get_mut(&survivor) else {
            return;
        };
        if absorbed.deadline_ns < q.deadline_ns {
            self.fifo.remove(&(q.deadline_ns, q.seq, survivor));
            q.deadline_ns = absorbed.deadline_ns;
            q.seq = absorbed.seq;
            self.fifo.insert((q.deadline_ns, q.seq, survivor));
        }
    }
}

/// The queue a request belongs to (flushes are handled apart, ahead of the queues). A discard
/// is in the write direction: Linux's deadline and mq-deadline queue by `rq_data_dir`, which
/// is `op_is_write` (include/linux/blk_types.h: REQ_OP_DISCARD = 3, odd, so a write), so it
/// sorts, expires (write_expire) and batches with the writes and counts against
/// `writes_starved` like one.
pub(super) fn dir_of(req: &Request) -> usize {
    match req.op {
        Op::Read => READ,
        Op::Write | Op::Flush | Op::Discard => WRITE,
    }
}

/// What Linux 2.6.18's `struct deadline_data`, 2.5's and mq-deadline's have alike: everything
/// but the sorted queues and the batch state. (mq-deadline keeps one set of queues per priority
/// class, the other two one set, in `Sweep`.)
pub(super) struct DeadlineCore {
    // run time data
    /// Flushes, dispatched ahead of the sorted queues in arrival order (mq-deadline:
    /// dd->dispatch).
    pub flushes: VecDeque<Request>,
    /// Times reads were chosen while writes waited.
    pub starved: u64,
    /// Insertion count: the FIFO tie-break of requests with the same deadline.
    seq: u64,
    // settings that change how the i/o scheduler behaves
    pub fifo_expire_ns: [Nanos; 2],
    pub fifo_batch: u64,
    pub writes_starved: u64,
    pub front_merges: bool,
}

/// deadline's and deadline-2.5's queues: per direction a sort list and a FIFO, the next request
/// in sort order after the last one dispatched, and the head position (a one-way elevator).
#[derive(Default)]
pub(super) struct Sweep {
    pub dirs: [DirQueue; 2],
    /// Next request in sort order after the last one dispatched (only in that one's
    /// direction; Linux: next_drq[2]), by its (sector, id) key.
    pub next_rq: [Option<(u64, RequestId)>; 2],
    /// End of the last dispatched request (Linux: last_sector, "head position").
    pub last_sector: u64,
}

/// Where a new batch starts (`Sweep::batch_start`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Start {
    /// At the FIFO head, whose deadline has passed.
    Expired,
    /// At the next request in sort order, in the direction served last.
    Next,
    /// At the lowest sector.
    Lowest,
}

/// Linux 2.6.18's `struct deadline_data`.
pub struct Deadline {
    core: DeadlineCore,
    sweep: Sweep,
    /// Requests in the current batch (plus fifo_batch for each non-contiguous step).
    batching: u64,
}

// ---- Helpers ----

/// A tunable that Linux stores as an int, as a whole number (declared `integer`, so
/// tunables.rs has refused fractions already; this guards the conversion).
pub(super) fn whole(t: &TunableValues, name: &str) -> Result<u64, String> {
    let v = t.get(name);
    if v.fract() != 0.0 {
        return Err(format!("tunable `{name}` = {v} must be a whole number (Linux stores it as an int)"));
    }
    Ok(v as u64)
}

/// Linux's `starved++ >= writes_starved`: compares the count before bumping it.
fn starved_past(starved: &mut u64, writes_starved: u64) -> bool {
    let before = *starved;
    *starved += 1;
    before >= writes_starved
}

/// A `next` hook's answer: dispatch straight (`ArmPath::Direct`), or nothing queued.
pub(super) fn decision(req: Option<Request>) -> Decision {
    match req {
        Some(req) => Decision::Dispatch(req, ArmPath::Direct),
        None => Decision::Empty,
    }
}

impl DeadlineCore {
    /// The common tunables (read_expire, write_expire, fifo_batch, writes_starved,
    /// front_merges), as `COMMON_TUNABLES` declares them.
    pub fn new(t: &TunableValues) -> Result<Self, String> {
        Ok(DeadlineCore {
            flushes: VecDeque::new(),
            starved: 0,
            seq: 0,
            fifo_expire_ns: [whole(t, "read_expire")? * NS_PER_MS, whole(t, "write_expire")? * NS_PER_MS],
            fifo_batch: whole(t, "fifo_batch")?,
            writes_starved: whole(t, "writes_starved")?,
            front_merges: t.get("front_merges") != 0.0,
        })
    }

    /// Linux deadline_add_request (dd_insert_request): into the sort list of `dirs`, and at the
    /// FIFO's tail with deadline = now + expire; a flush goes on the flush list instead.
    pub fn insert(&mut self, dirs: &mut [DirQueue; 2], req: Request, now: Nanos) {
        if req.op == Op::Flush {
            self.flushes.push_back(req);
            return;
        }
        let dir = dir_of(&req);
        self.seq += 1;
        dirs[dir].insert(Queued { req, deadline_ns: now + self.fifo_expire_ns[dir], seq: self.seq });
    }

    /// Requests held: the flushes and those in every set of queues.
    pub fn queued<'a>(&self, sets: impl IntoIterator<Item = &'a [DirQueue; 2]>) -> usize {
        self.flushes.len() + sets.into_iter().map(|d| d[READ].len() + d[WRITE].len()).sum::<usize>()
    }

    /// Not running a batch: choose a direction. Reads, unless writes wait and have been
    /// passed over `writes_starved` times; None if both directions are empty.
    pub fn choose_dir(&mut self, dirs: &[DirQueue; 2]) -> Option<usize> {
        let (reads, writes) = (!dirs[READ].is_empty(), !dirs[WRITE].is_empty());
        if reads {
            // Linux: `writes && (starved++ >= writes_starved)`: counted only while writes wait.
            let forced = writes && starved_past(&mut self.starved, self.writes_starved);
            if forced {
                self.starved = 0;
                Some(WRITE)
            } else {
                Some(READ)
            }
        } else if writes {
            self.starved = 0;
            Some(WRITE)
        } else {
            None
        }
    }

    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("starved", self.starved)]
    }
}

impl Sweep {
    /// Takes a request out of its direction's queues (Linux deadline_remove_request): if it was
    /// the next request in sort order, its successor becomes the next one.
    pub fn unlink(&mut self, dir: usize, id: RequestId) -> Option<Queued> {
        let q = *self.dirs[dir].get(id)?;
        let key = (q.req.start_sector, id);
        if self.next_rq[dir] == Some(key) {
            self.next_rq[dir] = self.dirs[dir].after(key);
        }
        self.dirs[dir].take(id)
    }

    /// Linux deadline_merged_request: a front merge re-sorts the request (taking it out of the
    /// sort list first, which moves the next-request pointer on if it pointed there); its FIFO
    /// place and deadline stay.
    pub fn merged(&mut self, old: &Request, grown: Request) {
        let dir = dir_of(old);
        if old.start_sector != grown.start_sector {
            let key = (old.start_sector, old.id);
            if self.next_rq[dir] == Some(key) {
                self.next_rq[dir] = self.dirs[dir].after(key);
            }
        }
        self.dirs[dir].regrow(grown);
    }

    /// Linux deadline_merged_requests: the survivor takes the absorbed request's deadline and
    /// FIFO place if that came first; the absorbed request leaves.
    pub fn requests_merged(&mut self, into: &Request, grown: Request, absorbed: &Request) {
        self.merged(into, grown);
        let dir = dir_of(absorbed);
        if let Some(gone) = self.dirs[dir].get(absorbed.id).copied() {
            self.dirs[dir].inherit_fifo_place(into.id, &gone);
        }
        self.unlink(dir, absorbed.id);
    }

    /// Moves a request to the device (Linux deadline_move_request): only its direction keeps
    /// a next request, its successor; the head position becomes its end.
    pub fn move_request(&mut self, dir: usize, key: (u64, RequestId)) -> Request {
        self.next_rq = [None; 2];
        self.next_rq[dir] = self.dirs[dir].after(key);
        let q = self.dirs[dir].take(key.1).expect("a queued request");
        self.last_sector = q.req.end_sector();
        q.req
    }

    /// Whether the FIFO head of `dir` has passed its deadline (2.6.18: time_after, strictly).
    fn fifo_expired(&self, dir: usize, now: Nanos) -> bool {
        self.dirs[dir].fifo_head().is_some_and(|q| now > q.deadline_ns)
    }

    /// The request that would carry the current batch on: the next one in sort order. Batches
    /// are reads XOR writes: at most one direction has a next request.
    pub fn batch_next(&self) -> Option<(usize, (u64, RequestId))> {
        match self.next_rq {
            [_, Some(k)] => Some((WRITE, k)),
            [r, None] => r.map(|k| (READ, k)),
        }
    }

    /// Not running a batch (Linux deadline_dispatch_requests, "dispatch_find_request"): choose
    /// a direction, then the request the batch starts at, and say which rule chose it.
    pub fn batch_start(&mut self, core: &mut DeadlineCore, now: Nanos) -> Option<(usize, (u64, RequestId), Start)> {
        let dir = core.choose_dir(&self.dirs)?;
        Some(if self.fifo_expired(dir, now) {
            // An expired request exists: satisfy it.
            let q = self.dirs[dir].fifo_head().expect("non-empty");
            (dir, (q.req.start_sector, q.req.id), Start::Expired)
        } else if let Some(k) = self.next_rq[dir] {
            // Same direction as the last request, and a next one in sort order: go on from
            // there.
            (dir, k, Start::Next)
        } else {
            // The other direction last, or past the highest sector: back to the lowest
            // (one-way elevator).
            (dir, self.dirs[dir].lowest().expect("non-empty"), Start::Lowest)
        })
    }
}

impl Deadline {
    pub fn new(t: &TunableValues) -> Result<Self, String> {
        Ok(Deadline { core: DeadlineCore::new(t)?, sweep: Sweep::default(), batching: 0 })
    }

    fn move_request(&mut self, dir: usize, key: (u64, RequestId)) -> Request {
        self.batching += 1;
        self.sweep.move_request(dir, key)
    }

    /// Linux deadline_dispatch_requests.
    fn dispatch(&mut self, now: Nanos) -> Option<Request> {
        if let Some(f) = self.core.flushes.pop_front() {
            return Some(f);
        }
        if let Some((dir, key)) = self.sweep.batch_next() {
            if self.sweep.last_sector != key.0 {
                // End the batch on a non-sequential request.
                self.batching = self.batching.saturating_add(self.core.fifo_batch);
            }
            if self.batching < self.core.fifo_batch {
                return Some(self.move_request(dir, key));
            }
        }
        // Not running a batch: choose a direction and where to start.
        let (dir, key, start) = self.sweep.batch_start(&mut self.core, now)?;
        if start != Start::Next {
            // A new batch (2.6.11-2.6.23 do not reset `batching` when going on in sort order).
            self.batching = 0;
        }
        Some(self.move_request(dir, key))
    }
}

// ---- Hooks ----

/// The Scheduler hooks deadline and deadline-2.5 share, inside their `impl Scheduler` (each has
/// `core: DeadlineCore`, `sweep: Sweep` and `fn dispatch(&mut self, now) -> Option<Request>`).
macro_rules! sweep_hooks {
    () => {
        /// Linux deadline_add_request: into the sort list, and at the FIFO's tail with
        /// deadline = now + expire.
        fn add(&mut self, req: Request, cx: &Context) {
            self.core.insert(&mut self.sweep.dirs, req, cx.now_ns);
        }

        fn next(&mut self, cx: &Context) -> Decision {
            decision(self.dispatch(cx.now_ns))
        }

        fn queued(&self) -> usize {
            self.core.queued([&self.sweep.dirs])
        }

        fn remove(&mut self, req: &Request, _cx: &Context) -> bool {
            self.sweep.unlink(dir_of(req), req.id).is_some()
        }

        fn allow_merge(&self, _rq: &Request, _bio: &Request) -> bool {
            true
        }

        fn front_merges(&self) -> bool {
            self.core.front_merges
        }

        /// A front merge re-sorts the request; its FIFO place and deadline stay.
        fn merged(&mut self, old: &Request, grown: Request, _cx: &Context) {
            self.sweep.merged(old, grown);
        }

        /// The survivor keeps the earlier deadline (and that FIFO place); the absorbed one
        /// leaves.
        fn requests_merged(&mut self, into: &Request, grown: Request, absorbed: &Request, _cx: &Context) {
            self.sweep.requests_merged(into, grown, absorbed);
        }

        fn counters(&self) -> Vec<(&'static str, u64)> {
            self.core.counters()
        }
    };
}
pub(super) use sweep_hooks;

impl Scheduler for Deadline {
    fn name(&self) -> &str {
        "deadline"
    }

    sweep_hooks!();
}

// ---- Tunables (Linux's sysfs names; 2.6.18 STORE_FUNCTION bounds) ----

/// A tunable Linux stores as an int, with sysfs bounds 0 to INT_MAX.
pub(super) const fn int_tunable(name: &'static str, default: u64, unit: &'static str, help: &'static str) -> Tunable {
    Tunable { name, integer: true, default: default as f64, unit, min: 0.0, max: INT_MAX, help }
}

/// The tunables all three deadline schedulers declare alike (name, default, unit, bounds);
/// each lists them in its `TUNABLES`, some with its own help text or unit (`..` syntax).
pub(super) mod common {
    use super::*;

    pub const READ_EXPIRE: Tunable =
        int_tunable("read_expire", READ_EXPIRE_MS, "ms", "a read's deadline after its insertion (checked when a batch starts)");
    pub const WRITE_EXPIRE: Tunable = int_tunable("write_expire", WRITE_EXPIRE_MS, "ms", "a write's deadline after its insertion");
    pub const WRITES_STARVED: Tunable =
        int_tunable("writes_starved", super::WRITES_STARVED, "count", "times reads may be chosen over waiting writes before a write batch");
    pub const FIFO_BATCH: Tunable =
        int_tunable("fifo_batch", super::FIFO_BATCH, "requests", "requests per batch; a non-contiguous next request ends the batch");
    pub const FRONT_MERGES: Tunable = Tunable {
        name: "front_merges",
        integer: true,
        default: super::FRONT_MERGES as u8 as f64,
        unit: "bool",
        min: 0.0,
        max: 1.0,
        help: "merge bios ending where a queued request starts",
    };
}

pub const TUNABLES: &[Tunable] =
    &[common::READ_EXPIRE, common::WRITE_EXPIRE, common::WRITES_STARVED, common::FIFO_BATCH, common::FRONT_MERGES];

/// Hand-built cases shared by the three deadline schedulers' tests.
#[cfg(test)]
pub(super) mod test_util {
    use crate::block::request_pool::TagModel;
    use crate::block::{BlockConfig, BlockLayer};
    use crate::request::{Op, Principal, Request};
    use crate::sched::registry::build;
    use crate::sched::{Completion, Context, Decision, Scheduler};
    use crate::testkit::ToyDisk;
    use crate::time::{Nanos, NS_PER_MS};
    use std::cell::Cell;
    use std::collections::BTreeMap;

    pub const MS: Nanos = NS_PER_MS;

    pub fn rq(id: u64, op: Op, start: u64, size: u32) -> Request {
        Request { principal: Principal { pid: 1, group: 1 }, sync: op == Op::Read, ..Request::new(id, op, start, size, 0) }
    }

    pub fn read(id: u64, start: u64) -> Request {
        rq(id, Op::Read, start, 8)
    }

    pub fn write(id: u64, start: u64) -> Request {
        rq(id, Op::Write, start, 8)
    }

    pub fn sched(name: &str, tunables: &[(&str, f64)]) -> Box<dyn Scheduler> {
        let t: BTreeMap<String, f64> = tunables.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        build(name, None, &t).unwrap()
    }

    /// A scheduler with a clock: adds and dispatches at `now`, completing each dispatched
    /// request at once (so nothing stays in flight) unless told otherwise.
    pub struct Bench {
        pub s: Box<dyn Scheduler>,
        pub disk: ToyDisk,
        pub now: Nanos,
    }

    impl Bench {
        pub fn new(name: &str, tunables: &[(&str, f64)]) -> Self {
            Bench { s: sched(name, tunables), disk: ToyDisk { head: Cell::new(0) }, now: 0 }
        }

        pub fn add(&mut self, req: Request) {
            let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
            self.s.add(req, &cx);
        }

        /// The next request, not completed (None: Empty).
        pub fn dispatch(&mut self) -> Option<Request> {
            let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
            match self.s.next(&cx) {
                Decision::Dispatch(r, _) => Some(r),
                Decision::Empty => None,
                Decision::WaitUntil(_) => panic!("deadline schedulers never wait"),
            }
        }

        pub fn complete(&mut self, r: Request) {
            let cx = Context { now_ns: self.now, device: &self.disk, in_flight: 0 };
            self.s.completed(&Completion { request: r, dispatch_ns: self.now, positioning_ns: 0 }, &cx);
        }

        /// Dispatches and completes one request: its id.
        pub fn serve(&mut self) -> Option<u64> {
            let r = self.dispatch()?;
            self.complete(r);
            Some(r.id)
        }

        /// Serves everything at the current time: ids in order.
        pub fn drain(&mut self) -> Vec<u64> {
            std::iter::from_fn(|| self.serve()).collect()
        }
    }

    /// The block layer in front of a scheduler (no plugging, every merge, no request limit).
    pub fn block() -> BlockLayer {
        BlockLayer::new(BlockConfig {
            nr_requests: None,
            tags: TagModel::BlkMq,
            nomerges: 0,
            max_sectors: 1024,
            plug: false,
            max_discard_sectors: None,
            max_discard_segments: 1,
        })
    }

    /// Through the block layer: a bio at `now`.
    pub fn submit(b: &mut BlockLayer, bench: &mut Bench, bio: Request) {
        let cx = Context { now_ns: bench.now, device: &bench.disk, in_flight: 0 };
        b.submit(bio, bench.s.as_mut(), &cx);
    }

    /// Dispatches everything through the block layer at `now`: (id, start, size) in order.
    pub fn drain_block(b: &mut BlockLayer, bench: &mut Bench) -> Vec<(u64, u64, u32)> {
        let mut out = vec![];
        while let Some(r) = bench.dispatch() {
            b.dispatched(&r);
            bench.complete(r);
            out.push((r.id, r.start_sector, r.size_sectors));
        }
        out
    }

    /// Front merges on (1.0) or off (0.0): request 0 at sector 100, then a bio ending where it
    /// starts. Returns the block layer's front-merge count and what was dispatched.
    pub fn front_merge_on_off(name: &str, on: f64) -> (u64, Vec<(u64, u64, u32)>) {
        let mut bench = Bench::new(name, &[("front_merges", on)]);
        let mut blk = block();
        submit(&mut blk, &mut bench, read(0, 100));
        submit(&mut blk, &mut bench, read(1, 92)); // ends where request 0 starts
        (blk.counters.front_merges, drain_block(&mut blk, &mut bench))
    }

    /// A front-merged request keeps its FIFO place and deadline: A at 3000 (t = 0, deadline
    /// 500 ms), C at 10 (150 ms: 650 ms); at 200 ms a bio front-merges into A. Dispatched at
    /// 600 ms, when A has expired and C has not.
    pub fn front_merge_then_expiry(name: &str) -> Vec<(u64, u64, u32)> {
        let mut bench = Bench::new(name, &[]);
        let mut blk = block();
        submit(&mut blk, &mut bench, read(0, 3000));
        bench.now = 150 * MS;
        submit(&mut blk, &mut bench, read(1, 10));
        bench.now = 200 * MS;
        submit(&mut blk, &mut bench, rq(2, Op::Read, 2992, 8)); // front merge into A
        bench.now = 600 * MS;
        drain_block(&mut blk, &mut bench)
    }

    /// The joined-requests case, bios with their submission times (ms): B [116, 124) at 0
    /// (deadline 500), L at sector 10 at 40 ms (540), A [100, 108) at 100 ms (600); at 200 ms
    /// a bio [108, 116) joins A and B.
    pub fn joining_bios() -> [(Nanos, Request); 4] {
        [(0, read(0, 116)), (40, read(1, 10)), (100, read(2, 100)), (200, read(3, 108))]
    }

    /// 20 contiguous 4 KiB reads from sector 0 and a write, writes_starved = 1: ids in order.
    pub fn contiguous_reads_and_a_write(name: &str) -> Vec<u64> {
        let mut b = Bench::new(name, &[("writes_starved", 1.0)]);
        for i in 0..20 {
            b.add(read(i, 8 * i));
        }
        b.add(write(99, 50_000));
        b.drain()
    }

    /// The shared expiry case: S0 (sector 1000) and S1 (1008) at t = 0, S0 served at once;
    /// at 1 ms a far read F (sector 100, below the head: the one-way sweep never comes back to
    /// it while requests lie ahead) and S2.. S199 contiguous after S1. One request every
    /// 10 ms. Returns F's dispatch time and the ids served before it.
    pub fn far_read_dispatch_ms(name: &str) -> (Nanos, Vec<u64>) {
        let mut b = Bench::new(name, &[]);
        b.add(read(0, 1000));
        b.add(read(1, 1008));
        assert_eq!(b.serve(), Some(0));
        b.now = MS;
        b.add(read(1000, 100));
        for i in 2..200 {
            b.add(read(i, 1000 + 8 * i));
        }
        let mut before = vec![0];
        for k in 1.. {
            b.now = 10 * MS * k;
            let id = b.serve().unwrap();
            if id == 1000 {
                return (b.now / MS, before);
            }
            before.push(id);
        }
        unreachable!()
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::*;
    use super::*;

    #[test]
    fn deadline_serves_a_far_read_once_its_deadline_has_passed_not_before() {
        // F is inserted at 1 ms: deadline 501 ms. After the first batch (S0..S15) every
        // decision starts a batch (2.6.11-2.6.23 do not reset `batching` when going on in sort
        // order), so F goes at the first decision after 501 ms: 510 ms, after S0..S50.
        let (at, before) = far_read_dispatch_ms("deadline");
        assert_eq!(at, 510);
        assert_eq!(before, (0..=50).collect::<Vec<_>>());
    }

    #[test]
    fn deadline_expiry_is_strictly_after_the_deadline() {
        // 2.6.18's check is time_after(jiffies, expires): at the deadline itself, not yet.
        let mut b = Bench::new("deadline", &[("read_expire", 100.0)]);
        b.add(read(0, 5000));
        b.add(read(1, 5008));
        assert_eq!(b.serve(), Some(0));
        b.add(read(2, 10)); // deadline 100 ms
        b.add(read(3, 5016));
        b.now = 100 * MS;
        // S1 is contiguous: the batch goes on without looking at the FIFO.
        assert_eq!(b.serve(), Some(1));
        // Next decision: 5016 is contiguous too, batching 2 < 16: still no look.
        assert_eq!(b.serve(), Some(3));
        // Nothing ahead: back to the lowest sector, the far read.
        assert_eq!(b.serve(), Some(2));
        // Same case, with F's deadline tested at a batch start.
        let mut b = Bench::new("deadline", &[("read_expire", 100.0), ("fifo_batch", 1.0)]);
        b.add(read(0, 5000));
        b.add(read(1, 5008));
        assert_eq!(b.serve(), Some(0));
        b.add(read(2, 10));
        b.add(read(3, 5016));
        b.now = 100 * MS;
        assert_eq!(b.serve(), Some(1), "at the deadline: not expired");
        b.now = 100 * MS + 1;
        assert_eq!(b.serve(), Some(2), "1 ns after: expired, served first");
        assert_eq!(b.serve(), Some(3));
    }

    #[test]
    fn deadline_batch_ends_at_a_non_contiguous_request() {
        // Reads A=0, B=8 (contiguous), C=100, D=108; a write W waits; writes_starved = 1.
        // A: reads chosen (starved 0 -> 1), lowest. B: contiguous, batching 1 < 16.
        // C: not contiguous, batching += 16 ends the batch; starved 1 >= 1: W.
        // Then reads again from the lowest: C, D.
        let mut b = Bench::new("deadline", &[("writes_starved", 1.0)]);
        for (id, s) in [(0, 0), (1, 8), (2, 100), (3, 108)] {
            b.add(read(id, s));
        }
        b.add(write(9, 50_000));
        assert_eq!(b.drain(), vec![0, 1, 9, 2, 3]);
    }

    #[test]
    fn deadline_batch_ends_after_fifo_batch_contiguous_requests() {
        // 20 contiguous reads and a waiting write, writes_starved = 1: 16 reads, the write,
        // then the other 4 (from the lowest sector: the last request was a write).
        let mut want: Vec<u64> = (0..16).collect();
        want.push(99);
        want.extend(16..20);
        assert_eq!(contiguous_reads_and_a_write("deadline"), want);
    }

    #[test]
    fn deadline_writes_run_after_writes_starved_read_batches() {
        // Reads 100 sectors apart (each its own batch), two contiguous writes, writes_starved 2:
        // R0 (starved 1), R100 (starved 2), then the write batch W1 W2, then the rest.
        let mut b = Bench::new("deadline", &[]);
        for (id, s) in [(0, 0), (1, 100), (2, 200), (3, 300), (4, 400)] {
            b.add(read(id, s));
        }
        b.add(write(10, 50_000));
        b.add(write(11, 50_008));
        assert_eq!(b.drain(), vec![0, 1, 10, 11, 2, 3, 4]);
        assert_eq!(b.s.counters(), vec![("starved", 0)]);
    }

    #[test]
    fn deadline_front_merges_on_and_off() {
        for (on, want) in [(1.0, vec![(0, 92, 16)]), (0.0, vec![(1, 92, 8), (0, 100, 8)])] {
            let (front_merges, dispatched) = front_merge_on_off("deadline", on);
            assert_eq!(front_merges, on as u64);
            assert_eq!(dispatched, want, "front_merges = {on}");
        }
    }

    #[test]
    fn deadline_front_merge_resorts_but_keeps_fifo_place_and_deadline() {
        // A at 2000 (t = 0, deadline 500 ms), B at 1950 (t = 300 ms; another reader of the
        // same region). A bio [1900, 2000) front-merges into A: A now starts below B and, at
        // 400 ms (nothing expired), goes first from the lowest sector.
        let mut bench = Bench::new("deadline", &[]);
        let mut blk = block();
        submit(&mut blk, &mut bench, read(0, 2000));
        bench.now = 300 * MS;
        submit(&mut blk, &mut bench, read(1, 1950));
        submit(&mut blk, &mut bench, rq(2, Op::Read, 1900, 100));
        assert_eq!(blk.counters.front_merges, 1);
        bench.now = 400 * MS;
        assert_eq!(drain_block(&mut blk, &mut bench), vec![(0, 1900, 108), (1, 1950, 8)]);
        // The FIFO place and deadline stay A's: at 600 ms A has expired (500 ms), a lower
        // request C inserted at 150 ms (deadline 650 ms) has not, and A goes first.
        assert_eq!(front_merge_then_expiry("deadline"), vec![(0, 2992, 16), (1, 10, 8)]);
    }

    #[test]
    fn deadline_joined_requests_keep_the_earlier_deadline() {
        // B [116, 124) at t = 0 (deadline 500), A [100, 108) at 100 ms (600), L at sector 10 at
        // 40 ms (540). At 200 ms a bio [108, 116) joins A and B: A survives with B's deadline.
        // At 520 ms A (500) has expired and goes before the lower L (540, not expired).
        let mut bench = Bench::new("deadline", &[]);
        let mut blk = block();
        for (now_ms, bio) in joining_bios() {
            bench.now = now_ms * MS;
            submit(&mut blk, &mut bench, bio);
        }
        assert_eq!(blk.counters.request_merges, 1);
        assert_eq!(bench.s.queued(), 2);
        bench.now = 520 * MS;
        assert_eq!(drain_block(&mut blk, &mut bench), vec![(2, 100, 24), (1, 10, 8)]);
    }

    #[test]
    fn integer_tunables_reject_fractions() {
        let t: std::collections::BTreeMap<String, f64> = [("fifo_batch".to_string(), 16.5)].into();
        let err = crate::sched::registry::build("deadline", None, &t).err().unwrap();
        assert!(err.contains("fifo_batch") && err.contains("16.5 is not a whole number"), "{err}");
    }
}
