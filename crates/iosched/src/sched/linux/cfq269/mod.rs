//! cfq-2.6.9: Linux 2.6.9's CFQ, the first one Jens Axboe merged (drivers/block/cfq-iosched.c
//! as of the v2.6.9 tag, October 2004, read in dmgerman/history-token at commit 68143cd6bb; the
//! file was last changed by d3b0993f88, July 2004). Not to be confused with `cfq` (Linux ~4.4).
//!
//! What it is: one queue per process (Linux: per thread group, `current->tgid`; here the
//! request's `principal.pid`), each holding its requests in a red-black tree by start sector;
//! the busy queues on one list (`rr_list`); a dispatch list (the request queue's `queue_head`)
//! that the driver takes requests from. No time slices, no idling, no priorities or classes, no
//! FIFO expiry, no back-seek rule: 2.6.9 had none of them (they came with "cfq-v2", 2.6.10).
//!
//! The rules, as the 2.6.9 source has them (function names of cfq-iosched.c):
//! - `cfq_enqueue`: a request joins its process's tree; a queue that was not busy is put at
//!   the *head* of `rr_list` (`list_add`, not `list_add_tail`).
//! - `cfq_add_crq_rb`: a request whose start sector is already in the tree (an alias) pushes
//!   the one there to the dispatch list (`cfq_dispatch_sort`) and takes its place.
//! - `cfq_next_request`: the driver gets the head of the dispatch list; only when that list is
//!   empty does `cfq_dispatch_requests` refill it.
//! - `cfq_dispatch_requests`: passes over `rr_list` (`list_for_each_safe`), each pass as many
//!   steps as there were busy queues when it began; every step moves the lowest-sector request
//!   (`rb_first`) of the queue at the *head* of `rr_list` (the loop reads `cfqd->rr_list.next`,
//!   not the entry it walks: cfq-v2 changed it to `entry`), and a queue it empties leaves the
//!   list (`cfq_put_queue`). After a pass, another runs while fewer than `quantum` requests
//!   have moved and some step left its queue non-empty (false only once every queue is
//!   empty). So a call moves whole passes until at least `quantum` requests have moved or
//!   nothing is left, and the head queue is drained before the next one is touched: no
//!   rotation, despite "round robin".
//! - `cfq_dispatch_sort`: a moved request goes into the dispatch list by this rule: to an
//!   empty list, at the end; if it starts below the list's first request, just before the
//!   list's *last* request; otherwise, walking back from the last request, just before the
//!   first one (from the back) that starts at or after it, or at the end if none does.
//! - `cfq_remove_request`: a request taken out (absorbed by a merge) leaves its tree; a queue
//!   left empty leaves `rr_list`.
//! - `cfq_merged_request`: a request whose start moved (front merge) is re-sorted in its tree.
//! - Requests on the dispatch list take no more merges (`cfq_remove_merge_hints`).
//!
//! - `cfq_may_queue` (`Scheduler::may_queue_when_full`): 2.6.9's `get_request`
//!   (drivers/block/ll_rw_blk.c) consults it only when the pool is full and the process is not
//!   a batcher, as an *exemption*: a process may still allocate unless it has more than
//!   clamp((nr_requests - queued) / busy_queues, 3, max_queued) requests of that direction in
//!   its tree (none busy, or no queue of its own: it may). `cfq_init` sets max_queued to the
//!   queue's nr_requests before raising that to 8192: 128 (BLKDEV_MAX_RQ); so a scenario of
//!   2.6.9's pool has `block.nr_requests = 8192` (the block layer keeps the 1.5 x hard limit).
//!   (cfq-v2, 2.6.10, made it a limit checked on every allocation.)
//!
//! Not modelled: ELEVATOR_INSERT_BACK/FRONT (barriers, requeues) do not occur here.

use super::deadline::{whole, INT_MAX};
use crate::device::ArmPath;
use crate::fast_hash::FastMap;
use crate::request::Request;
use crate::sched::tunables::{Tunable, TunableValues};
use crate::sched::{Context, Decision, Scheduler};
use std::collections::{BTreeMap, VecDeque};

/// `static int cfq_quantum = 4;`: requests moved to the dispatch list per refill (at least).
pub const QUANTUM: u64 = 4;
/// `static int cfq_queued = 8;`: requests kept back from the per-process limit of
/// `cfq_may_queue`.
pub const QUEUED: u64 = 8;
/// `cfqd->max_queued`: the queue's nr_requests when `cfq_init` ran, before it raised it to 8192
/// (BLKDEV_MAX_RQ, 128).
pub const MAX_QUEUED: u64 = 128;

/// A per-process queue (Linux `struct cfq_queue`): its requests by start sector (`sort_list`,
/// the rb tree keyed by `rq->sector`).
#[derive(Clone, Debug, Default)]
struct Cfqq {
    sort: BTreeMap<u64, Request>,
    /// `cfqq->queued[rw]`: its requests in the tree by direction (reads, writes).
    queued: [u64; 2],
}

/// `rq_data_dir`: 0 read, 1 write.
fn dir(req: &Request) -> usize {
    (req.op != crate::request::Op::Read) as usize
}

pub struct Cfq269 {
    quantum: u64,
    /// The `queued` tunable (`cfq_queued`).
    queued_reserve: u64,
    /// Busy queues by pid (a queue exists while it holds requests: `cfq_put_queue` frees it).
    queues: FastMap<u32, Cfqq>,
    /// `cfqd->rr_list`: front = head.
    rr: VecDeque<u32>,
    /// `cfqd->dispatch` (the request queue's `queue_head`): front = what the driver takes next.
    dispatch: VecDeque<Request>,
    /// Where each queued request is: its process's tree (`Some(pid)`) or the dispatch list.
    place: FastMap<u64, Option<u32>>,
    refills: u64,
    aliases: u64,
}

impl Cfq269 {
    pub fn new(t: &TunableValues) -> Result<Self, String> {
        Ok(Cfq269 {
            queued_reserve: whole(t, "queued")?,
            quantum: whole(t, "quantum")?,
            queues: FastMap::default(),
            rr: VecDeque::new(),
            dispatch: VecDeque::new(),
            place: FastMap::default(),
            refills: 0,
            aliases: 0,
        })
    }

    /// The pids on `rr_list`, head first (for tests and reports).
    pub fn rr_list(&self) -> Vec<u32> {
        self.rr.iter().copied().collect()
    }

    /// Start sectors of the dispatch list, front first.
    pub fn dispatch_list(&self) -> Vec<u64> {
        self.dispatch.iter().map(|r| r.start_sector).collect()
    }

    /// `cfq_add_crq_rb` + `cfq_enqueue`: into the process's tree; an alias goes to dispatch.
    fn enqueue(&mut self, req: Request) {
        let pid = req.principal.pid;
        let q = self.queues.entry(pid).or_default();
        let alias = q.sort.insert(req.start_sector, req);
        q.queued[dir(&req)] += 1;
        if let Some(old) = &alias {
            q.queued[dir(old)] -= 1;
        }
        self.place.insert(req.id, Some(pid));
        if let Some(old) = alias {
            // cfq_add_crq_rb: the request already at this sector is dispatched, then retry.
            self.aliases += 1;
            self.dispatch_sort(old);
        }
        if !self.rr.contains(&pid) {
            // cfq_enqueue: list_add(&cfqq->cfq_list, &cfqd->rr_list): at the head.
            self.rr.push_front(pid);
        }
    }

    /// `cfq_dispatch_sort`: where a request enters the dispatch list.
    fn dispatch_sort(&mut self, req: Request) {
        self.place.insert(req.id, None);
        let d = &mut self.dispatch;
        let sector = req.start_sector;
        let at = match d.front() {
            None => d.len(),
            // `entry = head->prev; list_add_tail(new, entry)`: before the last request.
            Some(first) if sector < first.start_sector => d.len() - 1,
            // `while ((entry = entry->prev) != head) if (sector <= __rq->sector) break;`
            Some(_) => (0..d.len()).rev().find(|&i| sector <= d[i].start_sector).unwrap_or(d.len()),
        };
        d.insert(at, req);
    }

    /// `cfq_dispatch_requests`: refills the dispatch list; false if no queue is busy.
    fn dispatch_requests(&mut self) -> bool {
        if self.rr.is_empty() {
            return false;
        }
        self.refills += 1;
        let mut queued = 0u64;
        loop {
            let mut good_queues = 0;
            // list_for_each_safe visits as many entries as the list held when the pass
            // began: only the head can leave during the pass, never an entry ahead of it.
            for _ in 0..self.rr.len() {
                // `cfqq = list_entry_cfqq(cfqd->rr_list.next)`: always the head queue.
                let pid = self.rr[0];
                let q = self.queues.get_mut(&pid).expect("a queue on rr_list exists");
                let (_, req) = q.sort.pop_first().expect("a queue on rr_list holds requests");
                q.queued[dir(&req)] -= 1;
                let emptied = q.sort.is_empty();
                self.dispatch_sort(req);
                if emptied {
                    self.put_queue(pid);
                } else {
                    good_queues += 1;
                }
                queued += 1;
            }
            if !(queued < self.quantum && good_queues > 0) {
                return true;
            }
        }
    }

    /// `cfq_put_queue`: off `rr_list` and freed.
    fn put_queue(&mut self, pid: u32) {
        self.queues.remove(&pid);
        self.rr.retain(|&p| p != pid);
    }

    /// Takes a request out of its tree or the dispatch list (`cfq_remove_request`).
    fn take_out(&mut self, req: &Request) -> bool {
        match self.place.remove(&req.id) {
            None => false,
            Some(None) => {
                self.dispatch.retain(|r| r.id != req.id);
                true
            }
            Some(Some(pid)) => {
                let q = self.queues.get_mut(&pid).expect("queued request's queue exists");
                // Its key is its start sector unless the tree holds it under an older one.
                let key = match q.sort.get(&req.start_sector) {
                    Some(r) if r.id == req.id => req.start_sector,
                    _ => q.sort.iter().find(|(_, r)| r.id == req.id).map(|(k, _)| *k).expect("request in its tree"),
                };
                if let Some(r) = q.sort.remove(&key) {
                    q.queued[dir(&r)] -= 1;
                }
                if q.sort.is_empty() {
                    self.put_queue(pid);
                }
                true
            }
        }
    }
}

impl Scheduler for Cfq269 {
    fn name(&self) -> &str {
        "cfq-2.6.9"
    }

    fn add(&mut self, req: Request, _cx: &Context) {
        self.enqueue(req);
    }

    /// `cfq_next_request`: the dispatch list's head, refilling it first if it is empty.
    fn next(&mut self, _cx: &Context) -> Decision {
        if self.dispatch.is_empty() && !self.dispatch_requests() {
            return Decision::Empty;
        }
        let req = self.dispatch.pop_front().expect("refilled dispatch list");
        self.place.remove(&req.id);
        Decision::Dispatch(req, ArmPath::Direct)
    }

    fn queued(&self) -> usize {
        self.place.len()
    }

    fn remove(&mut self, req: &Request, _cx: &Context) -> bool {
        self.take_out(req)
    }

    /// Merges go into requests still in a process's tree (2.6.9's back-merge hash spans every
    /// queue; requests on the dispatch list have lost their merge hints).
    fn allow_merge(&self, rq: &Request, _bio: &Request) -> bool {
        matches!(self.place.get(&rq.id), Some(Some(_)))
    }

    /// A request absorbs the one just above it only within one tree (`cfq_latter_request` is
    /// `rb_next` in the request's own tree).
    fn allow_request_merge(&self, low: &Request, high: &Request) -> bool {
        match (self.place.get(&low.id), self.place.get(&high.id)) {
            (Some(Some(a)), Some(Some(b))) => a == b,
            _ => false,
        }
    }

    /// `cfq_merged_request`: a request whose start moved is re-sorted in its tree (through
    /// `cfq_add_crq_rb`, alias rule included); a back merge keeps its place.
    fn merged(&mut self, old: &Request, grown: Request, _cx: &Context) {
        let Some(Some(pid)) = self.place.get(&old.id).copied() else { return };
        let q = self.queues.get_mut(&pid).expect("queued request's queue exists");
        if grown.start_sector == old.start_sector {
            if let Some(r) = q.sort.get_mut(&old.start_sector) {
                *r = grown;
            }
            return;
        }
        q.sort.remove(&old.start_sector);
        let alias = q.sort.insert(grown.start_sector, grown);
        if let Some(a) = &alias {
            q.queued[dir(a)] -= 1;
        }
        if let Some(a) = alias {
            self.aliases += 1;
            self.dispatch_sort(a);
        }
    }

    /// `cfq_may_queue` (2.6.9): consulted by the block layer only when the pool is full.
    fn may_queue_when_full(&self, req: &Request, nr_requests: u32) -> bool {
        let busy = self.rr.len() as u64;
        if busy == 0 {
            return true;
        }
        let Some(q) = self.queues.get(&req.principal.pid) else { return true };
        let limit = ((nr_requests as u64).saturating_sub(self.queued_reserve) / busy).clamp(3, MAX_QUEUED.max(3));
        q.queued[dir(req)] <= limit
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("dispatch_refills", self.refills), ("alias_dispatches", self.aliases)]
    }
}

// ---- Tunables (2.6.9's sysfs: quantum and queued, ints stored with bounds 1 to INT_MAX) ----

pub const TUNABLES: &[Tunable] = &[
    Tunable {
        name: "quantum",
        integer: true,
        default: QUANTUM as f64,
        unit: "requests",
        min: 1.0,
        max: INT_MAX,
        help: "requests moved from the busy queues to the dispatch list per refill (passes over the busy queues until at least this many)",
    },
    Tunable {
        name: "queued",
        integer: true,
        default: QUEUED as f64,
        unit: "requests",
        min: 1.0,
        max: INT_MAX,
        help: "cfq_may_queue's reserve: with the request pool full, a process may still allocate unless it has more than clamp((nr_requests - queued) / busy queues, 3, 128) requests of that direction queued",
    },
];

#[cfg(test)]
mod tests;
