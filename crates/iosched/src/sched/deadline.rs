//! deadline: Linux 2.6's deadline I/O scheduler (block/deadline-iosched.c as in 2.6.11-2.6.24;
//! read here in its 2.6.18 form). Per direction, requests sit in a sector-sorted list and in a
//! FIFO ordered by deadline (insert time + read_expire or write_expire). Requests go out in
//! batches: a batch continues in sector order while it has dispatched fewer than `fifo_batch`
//! requests and the next request starts where the previous one ended (a non-contiguous next
//! request adds `fifo_batch` to the count, which ends the batch). Between batches reads are
//! preferred, unless writes have been passed over `writes_starved` times; in the chosen
//! direction the batch starts at the FIFO head if its deadline has passed, else at the next
//! request in sector order, else (at the end of the disk) at the lowest sector: a one-way
//! elevator.
//!
//! Linux 2.6.25 (Aaron Carroll's batching patches) dropped the contiguity test and started every
//! new batch at the FIFO head; that is the rule `mq-deadline` keeps (`mq_deadline.rs`). The 2.5
//! original with its seek cost is `deadline_v25.rs`. The per-direction queues below
//! (`DirQueue`) are shared by all three.

use super::tunables::{Tunable, TunableValues};
use super::{Context, Decision, Scheduler};
use crate::device::ArmPath;
use crate::request::{Op, Request, RequestId};
use crate::time::{Nanos, NS_PER_MS};
use std::collections::{BTreeSet, HashMap, VecDeque};

// ---- Defaults (2.6.18 block/deadline-iosched.c, top of the file) ----

/// `read_expire = HZ / 2`: a read's deadline, ms after its insertion.
pub const READ_EXPIRE_MS: u64 = 500;
/// `write_expire = 5 * HZ`: a write's deadline, ms after its insertion ("these limits are SOFT").
pub const WRITE_EXPIRE_MS: u64 = 5_000;
/// `writes_starved = 2`: read batches chosen while writes wait before a write batch is forced.
pub const WRITES_STARVED: u64 = 2;
/// `fifo_batch = 16`: requests in one batch.
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
    by_id: HashMap<RequestId, Queued>,
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

/// The queue a request belongs to (flushes are handled apart, ahead of the queues).
pub(super) fn dir_of(req: &Request) -> usize {
    match req.op {
        Op::Read => READ,
        Op::Write | Op::Flush => WRITE,
    }
}

/// Linux 2.6.18's `struct deadline_data`.
pub struct Deadline {
    // run time data
    dirs: [DirQueue; 2],
    /// Flushes, dispatched ahead of the sorted queues in arrival order.
    flushes: VecDeque<Request>,
    /// Next request in sort order after the last one dispatched (only in that one's
    /// direction; Linux: next_drq[2]), by its (sector, id) key.
    next_rq: [Option<(u64, RequestId)>; 2],
    /// Requests in the current batch (plus fifo_batch for each non-contiguous step).
    batching: u64,
    /// End of the last dispatched request (Linux: last_sector, "head position").
    last_sector: u64,
    /// Times reads were chosen while writes waited.
    starved: u64,
    seq: u64,
    // settings that change how the i/o scheduler behaves
    fifo_expire_ns: [Nanos; 2],
    fifo_batch: u64,
    writes_starved: u64,
    front_merges: bool,
}

// ---- Helpers ----

/// A tunable that Linux stores as an int: whole numbers only (tunables.rs checks the range,
/// not integrality).
pub(super) fn whole(t: &TunableValues, name: &str) -> Result<u64, String> {
    let v = t.get(name);
    if v.fract() != 0.0 {
        return Err(format!("tunable `{name}` = {v} must be a whole number (Linux stores it as an int)"));
    }
    Ok(v as u64)
}

impl Deadline {
    pub fn new(t: &TunableValues) -> Result<Self, String> {
        Ok(Deadline {
            dirs: Default::default(),
            flushes: VecDeque::new(),
            next_rq: [None; 2],
            batching: 0,
            last_sector: 0,
            starved: 0,
            seq: 0,
            fifo_expire_ns: [whole(t, "read_expire")? * NS_PER_MS, whole(t, "write_expire")? * NS_PER_MS],
            fifo_batch: whole(t, "fifo_batch")?,
            writes_starved: whole(t, "writes_starved")?,
            front_merges: t.get("front_merges") != 0.0,
        })
    }

    /// Takes a request out of its direction's queues (Linux deadline_remove_request): if it was
    /// the next request in sort order, its successor becomes the next one.
    fn unlink(&mut self, dir: usize, id: RequestId) -> Option<Queued> {
        let q = *self.dirs[dir].get(id)?;
        let key = (q.req.start_sector, id);
        if self.next_rq[dir] == Some(key) {
            self.next_rq[dir] = self.dirs[dir].after(key);
        }
        self.dirs[dir].take(id)
    }

    /// Moves a request to the device (Linux deadline_move_request): only its direction keeps
    /// a next request, its successor; the head position becomes its end.
    fn move_request(&mut self, dir: usize, key: (u64, RequestId)) -> Request {
        self.next_rq = [None; 2];
        self.next_rq[dir] = self.dirs[dir].after(key);
        let q = self.dirs[dir].take(key.1).expect("a queued request");
        self.last_sector = q.req.end_sector();
        self.batching += 1;
        q.req
    }

    /// Whether the FIFO head of `dir` has passed its deadline (2.6.18: time_after, strictly).
    fn fifo_expired(&self, dir: usize, now: Nanos) -> bool {
        self.dirs[dir].fifo_head().is_some_and(|q| now > q.deadline_ns)
    }

    /// Linux deadline_dispatch_requests.
    fn dispatch(&mut self, now: Nanos) -> Option<Request> {
        if let Some(f) = self.flushes.pop_front() {
            return Some(f);
        }
        let reads = !self.dirs[READ].is_empty();
        let writes = !self.dirs[WRITE].is_empty();
        // Batches are reads XOR writes: at most one direction has a next request.
        let (cand_dir, cand) = match self.next_rq {
            [_, Some(k)] => (WRITE, Some(k)),
            [r, None] => (READ, r),
        };
        if let Some(key) = cand {
            if self.last_sector != key.0 {
                // End the batch on a non-sequential request.
                self.batching = self.batching.saturating_add(self.fifo_batch);
            }
            if self.batching < self.fifo_batch {
                return Some(self.move_request(cand_dir, key));
            }
        }
        // Not running a batch: choose a direction.
        let dir = if reads {
            // Linux: `writes && (starved++ >= writes_starved)`: counted only while writes wait.
            let forced = writes && {
                self.starved += 1;
                self.starved - 1 >= self.writes_starved
            };
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
            // An expired request exists: satisfy it.
            self.batching = 0;
            let q = self.dirs[dir].fifo_head().expect("non-empty");
            (q.req.start_sector, q.req.id)
        } else if let Some(k) = self.next_rq[dir] {
            // Same direction as the last request, and a next one in sort order: go on from
            // there (2.6.11-2.6.24 do not reset `batching` here).
            k
        } else {
            // The other direction last, or past the highest sector: back to the lowest
            // (one-way elevator), a new batch.
            self.batching = 0;
            self.dirs[dir].lowest().expect("non-empty")
        };
        Some(self.move_request(dir, key))
    }
}

// ---- Hooks ----

impl Scheduler for Deadline {
    fn name(&self) -> &str {
        "deadline"
    }

    /// Linux deadline_add_request: into the sort list, and at the FIFO's tail with
    /// deadline = now + expire.
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

    /// Linux deadline_merged_request: a front merge re-sorts the request (taking it out of the
    /// sort list first, which moves the next-request pointer on if it pointed there); its FIFO
    /// place and deadline stay.
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

    /// Linux deadline_merged_requests: the survivor takes the absorbed request's deadline and
    /// FIFO place if that came first; the absorbed request leaves.
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

// ---- Tunables (Linux's sysfs names; 2.6.18 STORE_FUNCTION bounds) ----

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
        unit: "requests",
        min: 0.0,
        max: INT_MAX,
        help: "requests per batch; a non-contiguous next request ends the batch",
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
