//! The block layer between processes and the I/O scheduler, after Linux's block/: a process's
//! I/O enters as bios; bios submitted together are plugged and merged; a bio contiguous with a
//! request waiting in the scheduler joins it (back and front merges, and two requests that a
//! bio joins become one), up to `max_sectors`, as the scheduler allows; otherwise the bio needs
//! a request from a limited pool (`nr_requests`), and its process sleeps until one frees.
//! A merged request completes all its bios.
//!
//! A scenario without a `[block]` table gets `BlockConfig::passthrough()`: every bio is a
//! request, inserted at once, nothing merges, nothing waits — the engine of the earlier
//! reproductions, unchanged.

pub mod merge;
pub mod mq;
pub mod request_pool;

use crate::fast_hash::FastMap;
use crate::request::{Op, Request, RequestId};
use crate::sched::{Context, Scheduler};
use crate::time::Nanos;
use merge::{compatible, same_kind, MergeIndex};
use request_pool::{RequestPool, TagModel, WaitQueues};

/// Linux's `nomerges` (sysfs): 0 = every merge, 1 = only into the request the previous bio
/// merged into or created (the "one-hit" cache), 2 = none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BlockConfig {
    /// Requests per queue (None: unlimited).
    pub nr_requests: Option<u32>,
    pub tags: TagModel,
    pub nomerges: u8,
    /// Largest request a merge may build (max_sectors_kb x 2).
    pub max_sectors: u32,
    /// Bios a process submits at one instant are plugged, sorted and merged before the
    /// scheduler sees them.
    pub plug: bool,
    /// Largest discard (Linux's `max_discard_sectors`): a larger discard bio is split
    /// (`bio_split_discard`) and discard merges stop there (`blk_rq_get_max_sectors` gives
    /// it for REQ_OP_DISCARD). None: no limit (NVMe without DMRSL: UINT_MAX sectors).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_discard_sectors: Option<u32>,
    /// Ranges one discard request may carry (Linux's `max_discard_segments`, read-only in sysfs:
    /// the driver's). 1 (disks, SATA SSDs: SCSI and libata set no more): a discard merges only
    /// with a contiguous discard, as any request. Above 1 (NVMe: 256, `nvme_config_discard`'s
    /// NVME_DSM_MAX_RANGES, or the controller's DMRL): a discard bio joins a queued discard
    /// request wherever it lies, as one more range, on the paths where Linux takes
    /// ELEVATOR_DISCARD_MERGE (`BlockLayer::try_discard_merge`, the plug in `unplug`).
    #[serde(skip_serializing_if = "crate::serde_skip::is_one")]
    pub max_discard_segments: u32,
}

impl BlockConfig {
    /// No block layer: what scenarios without `[block]` get.
    pub fn passthrough() -> Self {
        BlockConfig {
            nr_requests: None,
            tags: TagModel::Legacy,
            nomerges: 2,
            max_sectors: u32::MAX,
            plug: false,
            max_discard_sectors: None,
            max_discard_segments: 1,
        }
    }

    /// Whether discards merge as multi-range commands (`max_discard_segments` above 1: Linux's
    /// `blk_discard_mergable` for a discard request).
    pub fn multi_range_discards(&self) -> bool {
        self.max_discard_segments > 1
    }

    /// The largest request of `op` a split leaves or a merge builds: `max_discard_sectors` for
    /// a discard, `max_sectors` otherwise.
    pub fn max_for(&self, op: Op) -> u32 {
        if op == Op::Discard {
            self.max_discard_sectors.unwrap_or(u32::MAX)
        } else {
            self.max_sectors
        }
    }

    pub fn is_passthrough(&self) -> bool {
        self.nr_requests.is_none() && self.nomerges == 2 && !self.plug
    }
}

/// What the block layer did, for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct BlockCounters {
    pub bios: u64,
    pub requests: u64,
    /// Bios merged into a queued request at its end / its start.
    pub back_merges: u64,
    pub front_merges: u64,
    /// Queued requests merged into another (a bio closed the gap between them).
    pub request_merges: u64,
    /// Bios merged inside a plug before reaching the queue.
    pub plug_merges: u64,
    /// Bios whose process had to sleep for a request (or queued behind such a bio).
    pub waited_bios: u64,
    /// Bios larger than `max_sectors`, split into parts (Linux: bio_split / blk_queue_split).
    pub split_bios: u64,
    /// Discard bios that joined a discard request as one more range, not necessarily contiguous
    /// (ELEVATOR_DISCARD_MERGE, `max_discard_segments` above 1), in the plug or the queue. Not
    /// in `back_merges`, `front_merges` or `plug_merges`. Reported when not zero.
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub discard_merges: u64,
}

impl BlockCounters {
    /// Adds another queue's counts (an array's members, reported as one).
    pub fn add(&mut self, o: &BlockCounters) {
        self.bios += o.bios;
        self.requests += o.requests;
        self.back_merges += o.back_merges;
        self.front_merges += o.front_merges;
        self.request_merges += o.request_merges;
        self.plug_merges += o.plug_merges;
        self.waited_bios += o.waited_bios;
        self.split_bios += o.split_bios;
        self.discard_merges += o.discard_merges;
    }
}

/// A request the block layer holds: the bios it carries (in order) and when it got its request
/// structure (after any wait).
struct Queued {
    bios: Vec<Request>,
    insert_ns: Nanos,
}

pub struct BlockLayer {
    cfg: BlockConfig,
    index: MergeIndex,
    /// Each request from its insertion to its completion: its bios and when it got its
    /// request structure (one map, so a request costs one insertion and one removal).
    queued: FastMap<RequestId, Queued>,
    pool: RequestPool,
    waits: WaitQueues,
    /// Bios plugged at the current instant, in submission order.
    plugged: Vec<Request>,
    /// Emptied bio lists kept for the next units (a list per request would otherwise be
    /// allocated and freed for every bio), at most `SPARE_UNITS`.
    spare_units: Vec<Vec<Request>>,
    /// `unplug`'s map of each process to its first plugged bio, kept for its capacity.
    first_plugged: FastMap<u32, usize>,
    /// `free_request`'s woken processes, kept for its capacity.
    woken: Vec<u32>,
    last_merge: Option<RequestId>,
    /// Parts of split bios: part id -> the bio it belongs to; and per split bio, itself and
    /// how many of its parts have yet to complete.
    part_of: FastMap<RequestId, RequestId>,
    split_parents: FastMap<RequestId, (Request, u32)>,
    next_part_id: RequestId,
    /// Requests are numbered as they enter the scheduler (schedulers take ids for arrival order;
    /// a bio that slept for a request arrives at the scheduler later than its id would say).
    next_request_id: RequestId,
    pub counters: BlockCounters,
    /// Bios admitted to the queue since the engine last looked (only when tracked).
    admitted: Option<Vec<RequestId>>,
    /// Linux's `q->last_merge` as 6.x keeps it, read only by multi-range discard merges (the
    /// one-hit cache `elv_merge` tries first): set when a request is inserted and none is set
    /// (dd_insert_request, bfq_insert_request), and by every back, front and request merge
    /// (`elv_merged_request`, `elv_merge_requests`); cleared when its request leaves the queue
    /// or can merge no more (`req_set_nomerge`). `last_merge` above is the model's nomerges=1
    /// cache, kept as it was.
    elv_last_merge: Option<RequestId>,
    /// Queued discard requests that may still take ranges, oldest first (ids grow in insertion
    /// order), with `max_discard_segments` above 1: where none and kyber look
    /// (`blk_bio_list_merge` scans a software queue's list from its newest request).
    discard_queue: std::collections::BTreeSet<RequestId>,
}

impl BlockLayer {
    pub fn new(cfg: BlockConfig) -> Self {
        Self::for_member(cfg, 0)
    }

    /// blk-mq's hardware queues: with blk-mq tags a request pool per queue (Linux's sched tags,
    /// or the driver tags without an elevator), before the first request.
    pub fn attach_hw_queues(&mut self, map: &crate::block::mq::queue_map::QueueMap) {
        self.pool.attach_hw_queues(map);
        self.waits.set_queues(self.pool.pools());
    }

    /// The request queue of member `member` of an array: its requests and split parts get ids
    /// of their own ranges, so that no two members' requests share an id in the records.
    pub fn for_member(cfg: BlockConfig, member: u32) -> Self {
        BlockLayer {
            cfg,
            index: MergeIndex::default(),
            queued: FastMap::default(),
            pool: RequestPool::new(cfg.nr_requests, cfg.tags),
            waits: WaitQueues::default(),
            plugged: Vec::new(),
            last_merge: None,
            part_of: FastMap::default(),
            split_parents: FastMap::default(),
            next_part_id: PART_ID_BASE + ((member as RequestId) << MEMBER_PART_ID_SHIFT),
            next_request_id: (member as RequestId) << MEMBER_PART_ID_SHIFT,
            counters: BlockCounters::default(),
            admitted: None,
            elv_last_merge: None,
            discard_queue: std::collections::BTreeSet::new(),
            spare_units: Vec::new(),
            first_plugged: FastMap::default(),
            woken: Vec::new(),
        }
    }

    /// A unit of one bio, in a spare list if there is one.
    fn unit_of(&mut self, bio: Request) -> Vec<Request> {
        let mut unit = self.spare_units.pop().unwrap_or_default();
        unit.push(bio);
        unit
    }

    /// Keeps an emptied bio list for a later unit.
    fn recycle(&mut self, mut unit: Vec<Request>) {
        if self.spare_units.len() < SPARE_UNITS {
            unit.clear();
            self.spare_units.push(unit);
        }
    }

    /// Records the ids of bios as they are admitted (merged or given a request), for
    /// `take_admitted`.
    pub fn track_admissions(&mut self) {
        self.admitted.get_or_insert_with(Vec::new);
    }

    /// The bios admitted since the last call (split bios by their own id), in admission order.
    pub fn take_admitted(&mut self, into: &mut Vec<RequestId>) {
        if let Some(a) = self.admitted.as_mut() {
            into.append(a);
        }
    }

    fn note_admitted(&mut self, unit: &[Request]) {
        if let Some(a) = self.admitted.as_mut() {
            for b in unit {
                a.push(self.part_of.get(&b.id).copied().unwrap_or(b.id));
            }
        }
    }

    /// A bio arrives from a process. One larger than `max_sectors` is split into parts of at
    /// most that size, each a bio of its own; the process gets it back when all have completed.
    pub fn submit(&mut self, bio: Request, sched: &mut dyn Scheduler, cx: &Context) {
        self.counters.bios += 1;
        let max = self.cfg.max_for(bio.op);
        if bio.size_sectors > max && bio.op != Op::Flush {
            self.counters.split_bios += 1;
            let parts = bio.size_sectors.div_ceil(max);
            self.split_parents.insert(bio.id, (bio, parts));
            for k in 0..parts {
                let size = max.min(bio.size_sectors - k * max);
                let part = Request { id: self.next_part_id, start_sector: bio.start_sector + (k * max) as u64, size_sectors: size, ..bio };
                self.next_part_id += 1;
                self.part_of.insert(part.id, bio.id);
                self.enter(part, sched, cx);
            }
            return;
        }
        self.enter(bio, sched, cx);
    }

    fn enter(&mut self, bio: Request, sched: &mut dyn Scheduler, cx: &Context) {
        if self.cfg.plug {
            if bio.op != Op::Flush {
                self.plugged.push(bio);
                return;
            }
            // A flush comes after what was submitted before it: the plug goes first.
            self.unplug(sched, cx);
        }
        let unit = self.unit_of(bio);
        self.submit_unit(unit, sched, cx);
    }

    /// The end of an instant: plugged bios go to the queue, each process's sorted and merged.
    pub fn unplug(&mut self, sched: &mut dyn Scheduler, cx: &Context) {
        if self.plugged.is_empty() {
            return;
        }
        let mut plugged = std::mem::take(&mut self.plugged);
        // Processes in the order of their first bio; each one's bios by direction and sector.
        if plugged.len() > 1 {
            // (A map grown large by one big unplug is dropped: clearing it costs its capacity.)
            let mut first_seen = std::mem::take(&mut self.first_plugged);
            if first_seen.capacity() > 64 {
                first_seen = FastMap::default();
            }
            first_seen.clear();
            for (i, b) in plugged.iter().enumerate() {
                first_seen.entry(b.principal.pid).or_insert(i);
            }
            plugged.sort_by_key(|b| (first_seen[&b.principal.pid], b.op != Op::Read, b.start_sector, b.id));
            self.first_plugged = first_seen;
        }
        let mut unit: Vec<Request> = self.spare_units.pop().unwrap_or_default();
        for bio in plugged.drain(..) {
            if let Some(last) = unit.last() {
                let span = unit_request(&unit);
                // blk_attempt_plug_merge: a multi-range discard takes a discard bio as one more
                // range wherever it lies (ELEVATOR_DISCARD_MERGE), within the limits of
                // bio_attempt_discard_merge; any other request a contiguous bio.
                let multi_range = self.cfg.multi_range_discards() && bio.op == Op::Discard;
                let joins = last.principal.pid == bio.principal.pid
                    && self.cfg.nomerges < 2
                    && if multi_range {
                        same_kind(&span, &bio) && self.discard_fits(&span, unit.len(), &bio, 1)
                    } else {
                        span.end_sector() == bio.start_sector && compatible(&span, &bio, self.cfg.max_for(bio.op))
                    };
                if joins {
                    if multi_range {
                        self.counters.discard_merges += 1;
                    } else {
                        self.counters.plug_merges += 1;
                    }
                    unit.push(bio);
                    continue;
                }
                let next = self.spare_units.pop().unwrap_or_default();
                let done = std::mem::replace(&mut unit, next);
                self.submit_unit(done, sched, cx);
            }
            unit.push(bio);
        }
        if !unit.is_empty() {
            self.submit_unit(unit, sched, cx);
        } else {
            self.recycle(unit);
        }
        // Keep the list's capacity unless bios were plugged meanwhile.
        if self.plugged.is_empty() {
            self.plugged = plugged;
        }
    }

    /// Bios (already merged with each other, contiguous, in order) try to join a queued
    /// request, else need a request of their own.
    fn submit_unit(&mut self, unit: Vec<Request>, sched: &mut dyn Scheduler, cx: &Context) {
        let pid = unit[0].principal.pid;
        if self.waits.is_waiting(pid) {
            // The process is asleep for a request: these bios come after.
            self.counters.waited_bios += unit.len() as u64;
            let mut unit = unit;
            for b in unit.drain(..) {
                self.waits.push_pending(b);
            }
            self.recycle(unit);
            return;
        }
        let unit = match self.try_merge(unit, sched, cx) {
            None => return,
            Some(u) => u,
        };
        self.allocate_or_sleep(unit, sched, cx);
    }

    /// The scheduler's cap for requests like `req` (u32::MAX without a request limit).
    fn depth_limit(&self, req: &Request, sched: &dyn Scheduler) -> u32 {
        match self.cfg.nr_requests {
            Some(nr) => sched.limit_depth(req, nr),
            None => u32::MAX,
        }
    }

    fn allocate_or_sleep(&mut self, unit: Vec<Request>, sched: &mut dyn Scheduler, cx: &Context) {
        let req = unit_request(&unit);
        let limit = self.depth_limit(&req, sched);
        let exempt = self.cfg.nr_requests.is_some_and(|nr| sched.may_queue_when_full(&req, nr));
        if self.pool.try_alloc_exempt(&req, cx.now_ns, limit, exempt) {
            self.insert(req, unit, sched, cx);
        } else {
            self.counters.waited_bios += unit.len() as u64;
            let dir = self.pool.wait_dir(&req);
            // The process sleeps with its first bio; the rest follow it in order.
            let mut unit = unit;
            let mut it = unit.drain(..);
            if let Some(first) = it.next() {
                self.waits.sleep(dir, first);
            }
            for b in it {
                self.waits.push_pending(b);
            }
            self.recycle(unit);
        }
    }

    fn insert(&mut self, req: Request, unit: Vec<Request>, sched: &mut dyn Scheduler, cx: &Context) {
        self.note_admitted(&unit);
        self.counters.requests += 1;
        let req = Request { id: self.next_request_id, ..req };
        self.next_request_id += 1;
        if self.cfg.nomerges < 2 && req.op != Op::Flush {
            self.index.insert(req);
            self.last_merge = Some(req.id);
            self.elv_last_merge.get_or_insert(req.id);
            if req.op == Op::Discard && self.cfg.multi_range_discards() {
                self.discard_queue.insert(req.id);
            }
        }
        self.queued.insert(req.id, Queued { bios: unit, insert_ns: cx.now_ns });
        sched.add(req, cx);
    }

    /// Tries to merge `unit` into a queued request; returns it back if it did not merge.
    fn try_merge(&mut self, unit: Vec<Request>, sched: &mut dyn Scheduler, cx: &Context) -> Option<Vec<Request>> {
        if self.cfg.nomerges >= 2 || unit[0].op == Op::Flush {
            return Some(unit);
        }
        if unit[0].op == Op::Discard && self.cfg.multi_range_discards() {
            return self.try_discard_merge(unit, sched, cx);
        }
        let span = unit_request(&unit);
        let one_hit = |id: RequestId, last: Option<RequestId>| self.cfg.nomerges == 0 || Some(id) == last;
        if let Some(rq) = self.index.ending_at(span.start_sector) {
            if one_hit(rq.id, self.last_merge) && compatible(&rq, &span, self.cfg.max_for(span.op)) && sched.allow_merge(&rq, &span) {
                let grown = Request { size_sectors: rq.size_sectors + span.size_sectors, ..rq };
                self.grow(rq, grown, unit, false, sched, cx);
                self.counters.back_merges += 1;
                // The bio may close the gap to the next queued request.
                if self.cfg.nomerges == 0 {
                    if let Some(next) = self.index.starting_at(grown.end_sector()) {
                        self.join(grown, next, sched, cx);
                    }
                }
                return None;
            }
        }
        if sched.front_merges() {
            if let Some(rq) = self.index.starting_at(span.end_sector()) {
                if one_hit(rq.id, self.last_merge) && compatible(&rq, &span, self.cfg.max_for(span.op)) && sched.allow_merge(&rq, &span) {
                    let grown = Request { start_sector: span.start_sector, size_sectors: rq.size_sectors + span.size_sectors, ..rq };
                    self.grow(rq, grown, unit, true, sched, cx);
                    self.counters.front_merges += 1;
                    if self.cfg.nomerges == 0 {
                        if let Some(prev) = self.index.ending_at(grown.start_sector) {
                            self.join(prev, grown, sched, cx);
                        }
                    }
                    return None;
                }
            }
        }
        Some(unit)
    }

    /// `rq` (queued) takes `unit`'s bios at its end (or its front) and becomes `grown`.
    fn grow(&mut self, rq: Request, grown: Request, unit: Vec<Request>, front: bool, sched: &mut dyn Scheduler, cx: &Context) {
        self.note_admitted(&unit);
        let bios = &mut self.queued.get_mut(&rq.id).expect("a queued request").bios;
        let spent = if front {
            let mut u = unit;
            u.append(bios);
            std::mem::replace(bios, u)
        } else {
            let mut u = unit;
            bios.append(&mut u);
            u
        };
        self.recycle(spent);
        self.index.replace(grown);
        self.last_merge = Some(rq.id);
        self.elv_last_merge = Some(rq.id);
        sched.merged(&rq, grown, cx);
    }

    /// Two queued requests, `low` then `high`, contiguous: `high` joins `low`, if they may.
    fn join(&mut self, low: Request, high: Request, sched: &mut dyn Scheduler, cx: &Context) {
        if low.id == high.id || !compatible(&low, &high, self.cfg.max_for(low.op)) || !sched.allow_request_merge(&low, &high) {
            return;
        }
        let grown = Request { size_sectors: low.size_sectors + high.size_sectors, ..low };
        let mut spent = self.queued.remove(&high.id).expect("a queued request").bios;
        self.queued.get_mut(&low.id).expect("a queued request").bios.append(&mut spent);
        self.recycle(spent);
        self.index.remove(high.id);
        self.index.replace(grown);
        self.last_merge = Some(low.id);
        self.elv_last_merge = Some(low.id);
        self.discard_queue.remove(&high.id);
        sched.requests_merged(&low, grown, &high, cx);
        self.counters.request_merges += 1;
        // The absorbed request's structure is freed.
        self.free_request(&high, sched, cx);
    }

    /// The scheduler dispatched `req`: it can no longer be merged into.
    pub fn dispatched(&mut self, req: &Request) {
        if self.cfg.nomerges < 2 {
            self.stop_merging(req.id);
        }
    }

    /// Request `id` takes no more merges (dispatched, or `req_set_nomerge`): out of the merge
    /// index, the one-hit caches and the discard list.
    fn stop_merging(&mut self, id: RequestId) {
        self.index.remove(id);
        if self.last_merge == Some(id) {
            self.last_merge = None;
        }
        if self.elv_last_merge == Some(id) {
            self.elv_last_merge = None;
        }
        self.discard_queue.remove(&id);
    }

    /// The ranges of a multi-range discard command: its bios, one range each (Linux's
    /// `nvme_setup_discard` walks `__rq_for_each_bio`), in the order they joined. None for
    /// every other request (one range: the request's span), and always where
    /// `max_discard_segments` is 1 (`nvme_setup_discard` then sends `blk_rq_pos` and
    /// `blk_rq_sectors` as the one range).
    pub fn discard_ranges(&self, req: &Request) -> Option<&[Request]> {
        if req.op != Op::Discard || !self.cfg.multi_range_discards() {
            return None;
        }
        self.queued.get(&req.id).map(|q| q.bios.as_slice()).filter(|b| b.len() > 1)
    }

    /// Whether `bio_ranges` ranges of `bio` sectors may join a discard request of `rq_ranges`
    /// ranges spanning `rq`'s sectors: `bio_attempt_discard_merge`'s two limits,
    /// `max_discard_segments` ranges and `max_discard_sectors` in all (u64 sums: no wrap).
    fn discard_fits(&self, rq: &Request, rq_ranges: usize, bio: &Request, bio_ranges: usize) -> bool {
        rq_ranges as u64 + bio_ranges as u64 <= self.cfg.max_discard_segments as u64
            && rq.size_sectors as u64 + bio.size_sectors as u64 <= self.cfg.max_for(Op::Discard) as u64
    }

    /// A discard (a bio, or the plug's request of several) where discard requests take more
    /// ranges (`max_discard_segments` above 1): the queued request Linux would try, by the
    /// scheduler's merge path, takes it as more ranges if the limits allow; if they do not, that
    /// request merges no more (`req_set_nomerge`) and the discard gets a request of its own
    /// (blk_mq_sched_try_merge and blk_bio_list_merge stop at the first request tried).
    /// - none and kyber (`Scheduler::merges_by_list`): `blk_bio_list_merge` over the bio's
    ///   software queue list from its newest request: the newest queued discard request the
    ///   scheduler lets it join (its CPU's list, among the last 8 there).
    /// - the elevators (mq-deadline, BFQ, and the single-queue ones): `elv_merge`: the one-hit
    ///   cache `q->last_merge` when it is a request the bio may join (any position); then,
    ///   unless nomerges is 1, the request ending where the bio starts (the hash) and, where the
    ///   scheduler front-merges, the one starting where it ends (dd_request_merge,
    ///   bfq_request_merge); each returns ELEVATOR_DISCARD_MERGE for a discard request.
    ///
    /// A discard merge calls no `elv_merged_request`: `q->last_merge` and the hash stay; the
    /// scheduler's copy of the request is given its new size (`Scheduler::merged`, start
    /// unchanged), as Linux's scheduler holds the request itself.
    fn try_discard_merge(&mut self, unit: Vec<Request>, sched: &mut dyn Scheduler, cx: &Context) -> Option<Vec<Request>> {
        let span = unit_request(&unit);
        let may = |rq: &Request| same_kind(rq, &span) && sched.allow_discard_merge(rq, &span);
        let rq = if sched.merges_by_list() {
            self.discard_queue.iter().rev().filter_map(|&id| self.index.get(id)).find(|rq| may(rq))
        } else {
            let one_hit = self.elv_last_merge.and_then(|id| self.index.get(id)).filter(|rq| may(rq));
            one_hit.or_else(|| {
                if self.cfg.nomerges != 0 {
                    return None;
                }
                let back = self.index.ending_at(span.start_sector).filter(|rq| may(rq));
                back.or_else(|| if sched.front_merges() { self.index.starting_at(span.end_sector()).filter(|rq| may(rq)) } else { None })
            })
        };
        let Some(rq) = rq else {
            return Some(unit);
        };
        let ranges = self.queued.get(&rq.id).map_or(1, |q| q.bios.len());
        if !self.discard_fits(&rq, ranges, &span, unit.len()) {
            // req_set_nomerge: the request takes nothing more.
            self.stop_merging(rq.id);
            return Some(unit);
        }
        self.note_admitted(&unit);
        self.counters.discard_merges += 1;
        let grown = Request { size_sectors: rq.size_sectors + span.size_sectors, ..rq };
        let mut unit = unit;
        self.queued.get_mut(&rq.id).expect("a queued request").bios.append(&mut unit);
        self.recycle(unit);
        self.index.grow_in_place(grown);
        sched.merged(&rq, grown, cx);
        None
    }

    /// When `req` got its request structure (its issue time if it never waited).
    pub fn insert_ns(&self, req: &Request) -> Nanos {
        self.queued.get(&req.id).map_or(req.issue_ns, |q| q.insert_ns)
    }

    /// `req` completed: its bios go back to their processes through `out` (a split bio once
    /// all its parts have completed); its request frees, which may wake sleeping processes
    /// (whose bios then go on to the queue). Returns how many bios (or parts) it carried.
    pub fn complete(&mut self, req: &Request, out: &mut Vec<Request>, sched: &mut dyn Scheduler, cx: &Context) -> u32 {
        let mut bios = self.queued.remove(&req.id).map(|q| q.bios).unwrap_or_default();
        let n = bios.len() as u32;
        for bio in bios.drain(..) {
            match self.part_of.remove(&bio.id) {
                None => out.push(bio),
                Some(parent) => {
                    let left = self.split_parents.get_mut(&parent).map(|e| {
                        e.1 -= 1;
                        e.1
                    });
                    if left == Some(0) {
                        if let Some((whole, _)) = self.split_parents.remove(&parent) {
                            out.push(whole);
                        }
                    }
                }
            }
        }
        self.recycle(bios);
        self.free_request(req, sched, cx);
        n
    }

    fn free_request(&mut self, req: &Request, sched: &mut dyn Scheduler, cx: &Context) {
        // A scheduler's cap depends only on the request's kind, so it is the same now as when
        // the request was allocated.
        let limited = self.cfg.nr_requests.is_some_and(|nr| self.depth_limit(req, sched) < nr);
        let (dir, wake) = self.pool.free(req, limited);
        // (A merge below may free a request again: that call finds this list taken.)
        let mut woken = std::mem::take(&mut self.woken);
        woken.clear();
        for _ in 0..wake {
            let Some(pid) = self.waits.wake(dir) else {
                break;
            };
            self.pool.woken(pid, cx.now_ns);
            woken.push(pid);
        }
        // Woken processes run side by side: each first retries the bio it slept with, in wake
        // order; then each goes on submitting where it stopped, until it has to sleep again (it
        // goes to the back of the wait queue, its remaining bios behind it).
        for round in 0..2 {
            for &pid in &woken {
                while !self.waits.is_waiting(pid) {
                    let Some(b) = self.waits.next_pending(pid) else {
                        break;
                    };
                    let unit = self.unit_of(b);
                    if let Some(unit) = self.try_merge(unit, sched, cx) {
                        self.allocate_or_sleep(unit, sched, cx);
                    }
                    if round == 0 {
                        break;
                    }
                }
            }
        }
        self.woken = woken;
    }

    /// Bios not yet in the scheduler (plugged, or waiting for a request).
    pub fn held_bios(&self) -> usize {
        self.plugged.len() + self.waits.bios()
    }
}

/// Emptied bio lists kept for reuse: more than the units in flight at once in any run measured.
const SPARE_UNITS: usize = 64;

/// Ids of the parts of split bios (far above any id the engine gives).
const PART_ID_BASE: RequestId = 1 << 62;
/// Each array member's request and part ids start this far apart (2^55 each; 64 members fit).
const MEMBER_PART_ID_SHIFT: u32 = 55;

/// The request a run of contiguous bios makes: the first bio's identity, their whole span.
fn unit_request(unit: &[Request]) -> Request {
    let first = unit[0];
    let sectors: u64 = unit.iter().map(|b| b.size_sectors as u64).sum();
    Request { size_sectors: sectors.min(u32::MAX as u64) as u32, ..first }
}

#[cfg(test)]
mod tests;
