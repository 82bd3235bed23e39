//! `none` behind blk-mq: no elevator, so a request takes blk-mq's own path (Linux 6.x,
//! block/blk-mq.c and block/blk-mq-sched.c, read at torvalds/linux 04728ce9):
//!
//! - **Submission** (`blk_mq_submit_bio`): a request is sent straight to its hardware queue
//!   (`blk_mq_try_issue_directly`) unless the queue is `dispatch_busy` and the device has one
//!   hardware queue or the request is asynchronous (`hctx->dispatch_busy && (q->nr_hw_queues ==
//!   1 || !is_sync)`); then it is inserted at the tail of its CPU's software queue
//!   (`blk_mq_insert_request`: `ctx->rq_lists[type]`) and the queue is run. A direct issue that
//!   finds no tag inserts the same way and runs the queue. A flush goes to the head of the
//!   queue's dispatch list (`blk_mq_insert_request`, REQ_OP_FLUSH: `blk_mq_request_bypass_insert`
//!   at head) and the queue is run.
//! - **A queue run** (`__blk_mq_sched_dispatch_requests` without an elevator): the dispatch list
//!   (`hctx->dispatch`) first, as a whole (`blk_mq_dispatch_rq_list`); if some of it is left,
//!   the run ends. Then, if the dispatch list had requests or the queue is `dispatch_busy`,
//!   requests are taken one at a time round robin over the software queues, from
//!   `dispatch_from` (`blk_mq_do_dispatch_ctx`, `blk_mq_dequeue_from_ctx`, `blk_mq_next_ctx`),
//!   until the software queues are empty or no tag is free; otherwise every software queue's list
//!   is spliced, in CPU order, into one list dispatched as a whole (`blk_mq_flush_busy_ctxs`).
//! - **`blk_mq_dispatch_rq_list`** sends a list's requests while tags last; what is left goes to
//!   the tail of the dispatch list, the queue is run again at once if it was not marked for a
//!   restart (`blk_mq_sched_needs_restart`), and `dispatch_busy` is updated as busy; a list sent
//!   whole updates it as not busy. A direct issue updates it as not busy too
//!   (`__blk_mq_issue_directly`).
//! - **`dispatch_busy`** is an exponentially weighted moving average
//!   (`blk_mq_update_dispatch_busy`): ewma = (ewma x 7 + (busy ? 16 : 0)) / 8 in integers, left
//!   at 0 by a not-busy update. From 0 a run of busy updates gives 2, 3, 4, ..., 9 and stays at
//!   9; not-busy updates from 9 give 7, 6, 5, 4, 3, 2, 1, 0.
//! - **Restarts**: a run that finds the dispatch list non-empty marks the queue for a restart
//!   (`blk_mq_sched_mark_restart_hctx`); a request completing runs its queue if it was marked
//!   (`blk_mq_sched_restart`, from `__blk_mq_free_request`), or if requests still wait there
//!   (SCSI runs its queues from its completion handler after a budget shortage:
//!   `scsi_run_queue_async`, as the comment on `blk_mq_do_dispatch_ctx` says).
//!
//! The model's tags. In Linux a request under `none` is allocated from the driver tags
//! themselves (`__blk_mq_alloc_requests` without RQF_SCHED_TAGS: `rq->tag` set at allocation,
//! `q->nr_requests` = the tag set's depth), so what a `none` queue runs out of at dispatch is the
//! driver's budget (SCSI's device queue depth, `scsi_mq_get_budget`) or its resources
//! (`BLK_STS_RESOURCE`). Here a request takes its hardware queue's tag when it is sent, from the
//! scenario's `nr_requests` pool, so a tag plays the budget's part: a request that finds none
//! waits in its software queue or on the dispatch list as a budget shortage makes it wait
//! (`blk_mq_do_dispatch_ctx` stops before dequeuing; `blk_mq_dispatch_rq_list` with
//! `get_budget` leaves the rest of its list, PREP_DISPATCH_NO_BUDGET). The queues count their
//! own tags (`QueueMap::tags_per_hw_queue`): a request sent here takes its tag at once, and the
//! engine, which asks at the end of the instant, takes the sent requests in the order they were
//! sent.
//!
//! Not modelled: the plug's own path (`blk_mq_flush_plug_list`: `queue_rqs` or
//! `blk_mq_issue_direct` whatever `dispatch_busy`, a request without budget to the dispatch list;
//! here every request enters as an unplugged `blk_mq_submit_bio` would); the delayed re-run 3 ms
//! after a budget shortage (`BLK_MQ_RESOURCE_DELAY`; completions re-run the queue first at
//! these rates); the flush machinery beyond the insertion at the head of the dispatch list
//! (`blk-flush.c`'s sequencing and flush merging); CPUs running queues in parallel: a run is
//! atomic. A request sent but not yet taken by the engine (this instant's) may still be merged
//! into, as a request in Linux's plug list can be (`blk_attempt_plug_merge`); requests waiting in
//! a software queue take a bio of their own CPU among the last 8 (`blk_bio_list_merge`), on the
//! dispatch list none, and queued requests are never merged with each other (no elevator).

use crate::block::mq::queue_map::QueueMap;
use crate::fast_hash::FastMap;
use crate::request::{Op, Request, RequestId};
use std::collections::{BTreeMap, VecDeque};

/// `BLK_MQ_DISPATCH_BUSY_EWMA_WEIGHT`.
pub const EWMA_WEIGHT: u32 = 8;
/// `BLK_MQ_DISPATCH_BUSY_EWMA_FACTOR`: a busy update adds 1 << 4.
pub const EWMA_FACTOR: u32 = 4;
/// `blk_bio_list_merge` tries the last 8 requests of a software queue.
pub const MERGE_SCAN: usize = 8;

/// `blk_mq_update_dispatch_busy`: the new `dispatch_busy` after a busy or not-busy dispatch.
pub fn update_dispatch_busy(ewma: u32, busy: bool) -> u32 {
    if ewma == 0 && !busy {
        return 0;
    }
    let add = if busy { 1 << EWMA_FACTOR } else { 0 };
    (ewma * (EWMA_WEIGHT - 1) + add) / EWMA_WEIGHT
}

/// Where a request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Loc {
    /// Sent to its hardware queue (its tag taken); the engine has yet to take it.
    Sent,
    /// In a software queue: (hardware queue, CPU, insertion number).
    Ctx(usize, u32, u64),
    /// On a hardware queue's dispatch list.
    Dispatch(usize),
}

/// One hardware queue (`blk_mq_hw_ctx`).
#[derive(Default)]
pub(super) struct Hctx {
    /// Its software queues' lists (`ctx->rq_lists[type]`), by (CPU, insertion number): a CPU's
    /// list in order, the CPUs in order (`hctx->ctxs`, the `ctx_map` bits).
    pub(super) ctx: BTreeMap<(u32, u64), Request>,
    /// `hctx->dispatch`.
    pub(super) dispatch: VecDeque<Request>,
    /// Tags taken (requests sent and not completed).
    pub(super) in_flight: u32,
    /// `hctx->dispatch_busy`.
    pub(super) dispatch_busy: u32,
    /// `hctx->dispatch_from`: the CPU the next round robin starts at.
    pub(super) dispatch_from: u32,
    /// BLK_MQ_S_SCHED_RESTART.
    pub(super) restart: bool,
}

pub struct NoneMq {
    map: QueueMap,
    pub(super) hctxs: Vec<Hctx>,
    /// Requests sent, in the order they were sent, until the engine takes them.
    pub(super) sent: VecDeque<Request>,
    loc: FastMap<RequestId, Loc>,
    next_seq: u64,
    queued: usize,
}

impl NoneMq {
    pub fn new(map: &QueueMap) -> NoneMq {
        NoneMq {
            hctxs: (0..map.nr_hw_queues()).map(|_| Hctx::default()).collect(),
            map: map.clone(),
            sent: VecDeque::new(),
            loc: FastMap::default(),
            next_seq: 0,
            queued: 0,
        }
    }

    pub fn queued(&self) -> usize {
        self.queued
    }

    /// `dispatch_busy` of each hardware queue.
    pub fn dispatch_busy(&self) -> Vec<u32> {
        self.hctxs.iter().map(|h| h.dispatch_busy).collect()
    }

    fn has_tag(&self, h: usize) -> bool {
        self.hctxs[h].in_flight < self.map.tags_per_hw_queue
    }

    fn update_busy(&mut self, h: usize, busy: bool) {
        let hc = &mut self.hctxs[h];
        hc.dispatch_busy = update_dispatch_busy(hc.dispatch_busy, busy);
    }

    /// Sends `rq` to hardware queue `h` (`queue_rq`): it takes a tag.
    fn send(&mut self, h: usize, rq: Request) {
        debug_assert!(self.has_tag(h));
        self.hctxs[h].in_flight += 1;
        self.loc.insert(rq.id, Loc::Sent);
        self.sent.push_back(rq);
    }

    /// Inserts at the tail of its CPU's software queue (`blk_mq_insert_request`).
    pub(super) fn insert_ctx(&mut self, h: usize, rq: Request) {
        let cpu = self.map.cpu_of(&rq) as u32;
        let seq = self.next_seq;
        self.next_seq += 1;
        self.hctxs[h].ctx.insert((cpu, seq), rq);
        self.loc.insert(rq.id, Loc::Ctx(h, cpu, seq));
    }

    /// A request enters (`blk_mq_submit_bio`, without a plug).
    pub fn add(&mut self, rq: Request) {
        let h = self.map.hwq_of(&rq);
        self.queued += 1;
        if rq.op == Op::Flush {
            // blk_mq_insert_request: REQ_OP_FLUSH goes to the head of hctx->dispatch.
            self.hctxs[h].dispatch.push_front(rq);
            self.loc.insert(rq.id, Loc::Dispatch(h));
            self.run(h);
            return;
        }
        let sync = rq.sync || rq.op == Op::Read; // op_is_sync
        let busy = self.hctxs[h].dispatch_busy != 0;
        if busy && (self.hctxs.len() == 1 || !sync) {
            self.insert_ctx(h, rq);
            self.run(h);
        } else if self.has_tag(h) {
            // blk_mq_try_issue_directly -> __blk_mq_issue_directly: BLK_STS_OK.
            self.send(h, rq);
            self.update_busy(h, false);
        } else {
            // No budget or tag: blk_mq_insert_request and a queue run.
            self.insert_ctx(h, rq);
            self.run(h);
        }
    }

    /// Whether requests wait on queue `h` (its software queues or its dispatch list).
    fn waiting(&self, h: usize) -> bool {
        !self.hctxs[h].ctx.is_empty() || !self.hctxs[h].dispatch.is_empty()
    }

    /// A queue run (`blk_mq_sched_dispatch_requests`), and the run `blk_mq_dispatch_rq_list`
    /// asks for when it leaves requests on a queue not marked for a restart (run after it).
    pub(super) fn run(&mut self, h: usize) {
        if self.run_once(h) {
            self.run_once(h);
        }
    }

    /// `__blk_mq_sched_dispatch_requests` with no elevator. Returns whether it asks to be run
    /// again (`blk_mq_run_hw_queue` from `blk_mq_dispatch_rq_list`).
    fn run_once(&mut self, h: usize) -> bool {
        let need_dispatch = if !self.hctxs[h].dispatch.is_empty() {
            self.hctxs[h].restart = true; // blk_mq_sched_mark_restart_hctx
            let list = std::mem::take(&mut self.hctxs[h].dispatch);
            let (whole, again) = self.dispatch_rq_list(h, list);
            if !whole {
                return again;
            }
            true
        } else {
            self.hctxs[h].dispatch_busy != 0
        };
        if need_dispatch {
            self.do_dispatch_ctx(h);
            false
        } else {
            let list = self.flush_busy_ctxs(h);
            self.dispatch_rq_list(h, list).1
        }
    }

    /// `blk_mq_dispatch_rq_list`: sends the list's requests while tags last. Returns (whether
    /// the whole list went, whether the queue asks to be run again).
    fn dispatch_rq_list(&mut self, h: usize, mut list: VecDeque<Request>) -> (bool, bool) {
        if list.is_empty() {
            return (false, false);
        }
        while self.has_tag(h) {
            let Some(rq) = list.pop_front() else { break };
            self.send(h, rq);
        }
        if list.is_empty() {
            self.update_busy(h, false);
            return (true, false);
        }
        // The rest goes to the tail of hctx->dispatch; the queue is run again unless it is
        // marked for a restart (a completion will run it); busy.
        for rq in &list {
            self.loc.insert(rq.id, Loc::Dispatch(h));
        }
        self.hctxs[h].dispatch.extend(list);
        let again = !self.hctxs[h].restart;
        self.update_busy(h, true);
        (false, again)
    }

    /// `blk_mq_flush_busy_ctxs`: every software queue's list, in CPU order, as one list.
    fn flush_busy_ctxs(&mut self, h: usize) -> VecDeque<Request> {
        std::mem::take(&mut self.hctxs[h].ctx).into_values().collect()
    }

    /// `blk_mq_do_dispatch_ctx`: one request at a time, round robin over the CPUs from
    /// `dispatch_from`, while a tag is free (the dispatch budget) and requests wait.
    fn do_dispatch_ctx(&mut self, h: usize) {
        let cpus = self.map.cpus() as u32;
        let mut from = self.hctxs[h].dispatch_from;
        while !self.hctxs[h].ctx.is_empty() && self.has_tag(h) {
            // blk_mq_dequeue_from_ctx: the first non-empty list at or after `from`, wrapping.
            let hc = &mut self.hctxs[h];
            let key = match hc.ctx.range((from, 0)..).next() {
                Some((&k, _)) => k,
                None => *hc.ctx.keys().next().expect("non-empty"),
            };
            let rq = hc.ctx.remove(&key).expect("present");
            from = (key.0 + 1) % cpus; // blk_mq_next_ctx
            self.send(h, rq);
            self.update_busy(h, false); // blk_mq_dispatch_rq_list of one request, sent
        }
        self.hctxs[h].dispatch_from = from;
    }

    /// The next request sent, for the engine (in the order sent).
    pub fn next_sent(&mut self, can_take: &dyn Fn(usize) -> bool) -> Option<Request> {
        let rq = self.sent.pop_front()?;
        debug_assert!(can_take(self.map.hwq_of(&rq)), "none never leaves a request on blk-mq's dispatch list");
        self.loc.remove(&rq.id);
        self.queued -= 1;
        Some(rq)
    }

    /// A request completed: its tag frees; its queue runs if it was marked for a restart or
    /// requests wait there.
    pub fn completed(&mut self, rq: &Request) {
        let h = self.map.hwq_of(rq);
        let hc = &mut self.hctxs[h];
        hc.in_flight = hc.in_flight.saturating_sub(1);
        let restart = std::mem::take(&mut hc.restart);
        if restart || self.waiting(h) {
            self.run(h);
        }
    }

    /// Takes a queued request out (it was merged into another).
    pub fn remove(&mut self, rq: &Request) -> bool {
        let Some(loc) = self.loc.remove(&rq.id) else {
            return false;
        };
        let found = match loc {
            Loc::Sent => {
                let i = self.sent.iter().position(|r| r.id == rq.id);
                let found = i.and_then(|i| self.sent.remove(i)).is_some();
                if found {
                    // Its tag frees (it never reaches the driver).
                    let h = self.map.hwq_of(rq);
                    self.hctxs[h].in_flight -= 1;
                    if self.waiting(h) {
                        self.run(h);
                    }
                }
                found
            }
            Loc::Ctx(h, cpu, seq) => self.hctxs[h].ctx.remove(&(cpu, seq)).is_some(),
            Loc::Dispatch(h) => {
                let q = &mut self.hctxs[h].dispatch;
                q.iter().position(|r| r.id == rq.id).and_then(|i| q.remove(i)).is_some()
            }
        };
        if found {
            self.queued -= 1;
        }
        found
    }

    /// May `bio` join the queued request `rq`? A request sent this instant, yes (the plug's
    /// merge); one in a software queue, if `bio` comes from the same CPU to the same hardware
    /// queue and `rq` is among the last 8 there (`blk_mq_sched_bio_merge`,
    /// `blk_bio_list_merge`); one on the dispatch list, no.
    pub fn allow_merge(&self, rq: &Request, bio: &Request) -> bool {
        match self.loc.get(&rq.id) {
            Some(Loc::Sent) => true,
            Some(&Loc::Ctx(h, cpu, seq)) => {
                self.map.hwq_of(bio) == h
                    && self.map.cpu_of(bio) as u32 == cpu
                    && self.hctxs[h].ctx.range((cpu, seq + 1)..=(cpu, u64::MAX)).take(MERGE_SCAN).count() < MERGE_SCAN
            }
            Some(Loc::Dispatch(_)) | None => false,
        }
    }

    /// May the discard `bio` join `rq` wherever it lies (a multi-range discard)? As
    /// `allow_merge`, except that a request sent this instant (in its process's plug) takes
    /// only that process's discards: Linux's plug is per task, and the software queue's list
    /// (`blk_bio_list_merge`) holds no request issued directly. (`allow_merge` lets any bio
    /// join a sent request, which for contiguous bios is the model's plug as it was.)
    pub fn allow_discard_merge(&self, rq: &Request, bio: &Request) -> bool {
        match self.loc.get(&rq.id) {
            Some(Loc::Sent) => rq.principal.pid == bio.principal.pid,
            _ => self.allow_merge(rq, bio),
        }
    }

    /// Two queued requests joined: only requests sent this instant (no elevator merges
    /// requests; the plug's requests are joined as noop's were).
    pub fn allow_request_merge(&self, low: &Request, high: &Request) -> bool {
        self.loc.get(&low.id) == Some(&Loc::Sent) && self.loc.get(&high.id) == Some(&Loc::Sent)
    }

    /// A queued request grew by a merge; it keeps its place.
    pub fn merged(&mut self, grown: Request) {
        let slot = match self.loc.get(&grown.id) {
            Some(Loc::Sent) => self.sent.iter_mut().find(|r| r.id == grown.id),
            Some(&Loc::Ctx(h, cpu, seq)) => self.hctxs[h].ctx.get_mut(&(cpu, seq)),
            Some(&Loc::Dispatch(h)) => self.hctxs[h].dispatch.iter_mut().find(|r| r.id == grown.id),
            None => None,
        };
        if let Some(r) = slot {
            *r = grown;
        }
    }
}
