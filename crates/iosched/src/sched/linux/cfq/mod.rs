//! cfq: Linux's Completely Fair Queueing I/O scheduler as of ~4.4 (block/cfq-iosched.c, Jens
//! Axboe; read in a 4.4-era copy). Per-process sync queues and async queues shared per priority
//! level; each queue, when active, gets a time slice by its priority (`cfq_prio_slice`), scaled
//! down with low_latency so that the busy queues fit in target_latency; queues wait on service
//! trees per class (RT, BE, IDLE, served strictly in that order) and workload type (SYNC,
//! SYNC_NOIDLE, ASYNC; `cfq_choose_wl_type` picks the one whose first queue has waited longest,
//! for a workload slice); an emptied sync queue keeps the disk idle up to slice_idle for its
//! next request (unless the process is seeky or thinks too long), the last queue of the
//! SYNC_NOIDLE tree likewise, and group_idle waits for the only busy queue; new requests may
//! preempt; a close queue of another process takes over instead of idling, and the two are
//! merged (cooperating processes).
//!
//! One group only (the root cgroup): blkio.weight / group scheduling is not modelled. Time is
//! ns; Linux's jiffies are ms here (HZ = 1000): tunables and slice arithmetic in whole ms as in
//! Linux, converted to ns for deadlines. There is no timer callback: every entry point first
//! fires the idle timer if its time has come.

pub mod queue;
mod queue_table;

use super::deadline::{whole, INT_MAX};
use crate::device::ArmPath;
use crate::fast_hash::FastMap;
use crate::pid_map::PidMap;
use crate::request::{Op, Request, RequestId};
use crate::sched::tunables::{Tunable, TunableValues};
use crate::sched::{Completion, Context, Decision, ProcessEvent, Scheduler};
use crate::time::{Nanos, NS_PER_MS};
use queue::*;
use queue_table::QueueTable;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

// ---- Defaults (4.4, HZ = 1000) ----

pub const QUANTUM: u64 = 8;
pub const FIFO_EXPIRE_SYNC_MS: u64 = 125;
pub const FIFO_EXPIRE_ASYNC_MS: u64 = 250;
pub const BACK_SEEK_MAX_KIB: u64 = 16 * 1024;
pub const BACK_SEEK_PENALTY: u64 = 2;
pub const SLICE_SYNC_MS: u64 = 100;
pub const SLICE_ASYNC_MS: u64 = 40;
pub const SLICE_ASYNC_RQ: u64 = 2;
pub const SLICE_IDLE_MS: u64 = 8;
pub const GROUP_IDLE_MS: u64 = 8;
pub const TARGET_LATENCY_MS: u64 = 300;
/// `CFQ_IDLE_DELAY = HZ / 5`: idle-class queues go this far behind the last queue.
const IDLE_DELAY_MS: i64 = 200;
/// `CFQ_MIN_TT`: the shortest workload slice (ms).
const MIN_TT_MS: u64 = 2;
/// `CFQ_SLICE_SCALE`: each priority level moves the slice by base / 5.
const SLICE_SCALE: i64 = 5;
/// `cfq_hist_divisor`: the busy-queue average's filter.
const HIST_DIVISOR: u32 = 4;
/// `PAGE_CACHE_SIZE`: a larger request ends an idle wait at once.
const PAGE_BYTES: u64 = 4096;
/// HZ: a preempting queue is keyed 1 s before the first.
const HZ_NS: i64 = 1_000_000_000;
const MS: Nanos = NS_PER_MS;
/// `CFQ_HW_QUEUE_MIN`: a drive seen holding at least this many requests queues internally
/// (NCQ/TCQ); fewer queued and in the driver, a completion is no sample (cfq_update_hw_tag).
pub const HW_QUEUE_MIN: u32 = 5;
/// cfq_update_hw_tag decides after this many samples (`hw_tag_samples++ < 50`: the 51st).
pub const HW_TAG_SAMPLES: u32 = 50;

/// Per-process state (Linux `struct cfq_io_cq`): its sync queue and think time.
#[derive(Clone, Debug)]
pub struct Cic {
    pub sync_q: Option<Qid>,
    pub ttime: Ttime,
}

/// A service tree (Linux `struct cfq_rb_root`): queues by (key, insertion), with the think
/// time of the queues on it.
#[derive(Clone, Debug, Default)]
pub struct St {
    pub set: BTreeSet<(i64, u64, Qid)>,
    pub ttime: Ttime,
}

impl St {
    pub fn count(&self) -> usize {
        self.set.len()
    }
    fn first(&self) -> Option<(i64, Qid)> {
        self.set.first().map(|&(k, _, q)| (k, q))
    }
}

/// Linux `struct cfq_data` (with the one root `cfq_group` folded in).
pub struct Cfq {
    pub(super) queues: QueueTable,
    pub(super) cics: PidMap<Cic>,
    /// Async queues, shared per (class, level); the idle class has one (level 7).
    async_qs: FastMap<(usize, usize), Qid>,
    /// Where each queued request is: its queue and the start sector of its key in the queue's
    /// sort tree (so that its key is found without a pass over the queue).
    where_queued: FastMap<RequestId, (Qid, u64)>,
    /// Where each dispatched request came from.
    in_driver: FastMap<RequestId, Qid>,
    flushes: VecDeque<Request>,
    pub(super) trees: [[St; 3]; 3],
    /// Queues by their next request's sector, per priority level (cfq_close_cooperator).
    prio_trees: [BTreeMap<u64, Qid>; 8],
    rb_seq: u64,
    pub(super) serving_class: usize,
    pub(super) serving_type: usize,
    pub(super) workload_expires: i64,
    /// The group's saved workload (slice left ns, type, class), restored when it is chosen.
    saved_wl: Option<(i64, usize, usize)>,
    pub(super) busy_queues_avg: [u32; 3],
    /// Queues on the service trees (the group's nr_cfqq).
    nr_cfqq: u32,
    group_dispatched: u32,
    group_ttime: Ttime,
    busy_queues: u32,
    busy_sync_queues: u32,
    rq_queued: usize,
    rq_in_driver: u32,
    rq_in_flight: [u32; 2],
    pub(super) active: Option<Qid>,
    active_pid: Option<u32>,
    last_position: u64,
    pub(super) idle_timer: Option<Nanos>,
    last_delayed_sync: i64,
    /// Linux `cfqd->hw_tag`: -1 not yet known (Linux treats it as true where it tests it), 1
    /// the drive queues commands internally, 0 it does not (cfq_update_hw_tag).
    pub(super) hw_tag: i8,
    /// Linux `hw_tag_est_depth`: the most requests seen in the driver at a completion.
    pub(super) hw_tag_est_depth: u32,
    pub(super) hw_tag_samples: u32,
    /// Linux `blk_queue_nonrot`: false, every device here is rotational (a disk preset or a
    /// DiskSim disk); the non-rotational rules that read it are kept so that they are visible,
    /// and the tests set it to check them.
    pub(super) nonrot: bool,
    // tunables
    quantum: u32,
    fifo_expire_ns: [Nanos; 2],
    back_max_sectors: u64,
    back_penalty: u64,
    /// slice_async, slice_sync (ms), indexed by sync.
    slice_ms: [u64; 2],
    slice_async_rq: u64,
    slice_idle_ms: u64,
    group_idle_ms: u64,
    low_latency: bool,
    target_latency_ms: u64,
    // counters
    pub(super) counts: Counts,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub slices: u64,
    pub idle_waits: u64,
    pub idle_timeouts: u64,
    pub idle_hits: u64,
    pub preemptions: u64,
    pub fifo_expired: u64,
    pub coop_setups: u64,
    pub coop_merges: u64,
    pub coop_splits: u64,
    pub stall_rescues: u64,
}

fn ms_ns(ms: u64) -> Nanos {
    ms.saturating_mul(MS)
}

fn signed(t: Nanos) -> i64 {
    t.min(i64::MAX as u64) as i64
}

impl Cfq {
    pub fn new(t: &TunableValues) -> Result<Self, String> {
        let ms = |name| whole(t, name);
        Ok(Cfq {
            queues: QueueTable::default(),
            cics: PidMap::default(),
            async_qs: FastMap::default(),
            where_queued: FastMap::default(),
            in_driver: FastMap::default(),
            flushes: VecDeque::new(),
            trees: Default::default(),
            prio_trees: Default::default(),
            rb_seq: 0,
            serving_class: BE,
            serving_type: SYNC_NOIDLE,
            workload_expires: 0,
            saved_wl: None,
            busy_queues_avg: [0; 3],
            nr_cfqq: 0,
            group_dispatched: 0,
            group_ttime: Ttime::default(),
            busy_queues: 0,
            busy_sync_queues: 0,
            rq_queued: 0,
            rq_in_driver: 0,
            rq_in_flight: [0; 2],
            active: None,
            active_pid: None,
            last_position: 0,
            idle_timer: None,
            // cfq_init_queue: assume sync I/O was not delayed in the last second.
            last_delayed_sync: -HZ_NS,
            // cfq_init_queue: hw_tag = -1, indeterminate until cfq_update_hw_tag decides.
            hw_tag: -1,
            hw_tag_est_depth: 0,
            hw_tag_samples: 0,
            nonrot: false,
            quantum: ms("quantum")?.min(u32::MAX as u64) as u32,
            fifo_expire_ns: [ms_ns(ms("fifo_expire_async")?), ms_ns(ms("fifo_expire_sync")?)],
            // back_seek_max is KiB: 2 sectors each.
            back_max_sectors: ms("back_seek_max")?.saturating_mul(2),
            back_penalty: ms("back_seek_penalty")?,
            slice_ms: [ms("slice_async")?, ms("slice_sync")?],
            slice_async_rq: ms("slice_async_rq")?,
            slice_idle_ms: ms("slice_idle")?,
            group_idle_ms: ms("group_idle")?,
            low_latency: t.get("low_latency") != 0.0,
            target_latency_ms: ms("target_latency")?,
            counts: Counts::default(),
        })
    }

    // ---- Inspection (tests, reports) ----

    pub fn queue(&self, q: Qid) -> Option<&Cfqq> {
        self.queues.get(&q)
    }

    /// The sync queue of a process.
    pub fn sync_queue_of(&self, pid: u32) -> Option<Qid> {
        self.cics.get(pid)?.sync_q
    }

    pub fn active_queue(&self) -> Option<&Cfqq> {
        self.queues.get(&self.active?)
    }

    /// Linux `hw_tag`: -1 undecided, 0 no internal queueing, 1 internal queueing detected.
    pub fn hw_tag(&self) -> i8 {
        self.hw_tag
    }

    /// Linux `hw_tag_est_depth`: the deepest drive queue seen at a completion.
    pub fn hw_tag_est_depth(&self) -> u32 {
        self.hw_tag_est_depth
    }

    // ---- Slices ----

    /// Linux `cfq_prio_slice`: base + base/5 x (4 - level), ms.
    pub fn prio_slice_ms(&self, sync: bool, level: usize) -> u64 {
        let base = self.slice_ms[sync as usize] as i64;
        (base + base / SLICE_SCALE * (4 - level as i64)).max(0) as u64
    }

    /// Linux `cfq_group_get_avg_queues`: a busy-queue average that follows rises at once and
    /// falls slowly.
    fn avg_queues(&mut self, class: usize) -> u32 {
        let busy = self.busy_in_class(class);
        let (lo, hi) = (self.busy_queues_avg[class].min(busy), self.busy_queues_avg[class].max(busy));
        self.busy_queues_avg[class] = ((HIST_DIVISOR - 1) * hi + lo + HIST_DIVISOR / 2) / HIST_DIVISOR;
        self.busy_queues_avg[class]
    }

    fn busy_in_class(&self, class: usize) -> u32 {
        if class == IDLE {
            return self.trees[IDLE][0].count() as u32;
        }
        self.trees[class].iter().map(|s| s.count() as u32).sum()
    }

    /// Linux `cfq_scaled_cfqq_slice`: with low_latency, when the class's busy queues at a full
    /// sync slice each would exceed target_latency, shrink proportionally, not below
    /// 2 x slice_idle scaled like the slice.
    pub(super) fn scaled_slice_ms(&mut self, q: Qid) -> u64 {
        let (sync, level, class) = {
            let c = &self.queues[&q];
            (c.sync, c.level, c.class)
        };
        let mut slice = self.prio_slice_ms(sync, level);
        if self.low_latency {
            let iq = self.avg_queues(if class == RT { RT } else { BE }) as u64;
            let sync_slice = self.slice_ms[1].max(1);
            let expect_latency = sync_slice.saturating_mul(iq);
            let group_slice = self.target_latency_ms;
            if expect_latency > group_slice {
                let base_low = 2 * self.slice_idle_ms;
                let low_slice = slice.min(base_low.saturating_mul(slice) / sync_slice);
                slice = (slice.saturating_mul(group_slice) / expect_latency).max(low_slice);
            }
        }
        slice
    }

    fn slice_used(&self, q: &Cfqq, now: Nanos) -> bool {
        !q.slice_new && now >= q.slice_end_ns
    }

    // ---- Requests in queues ----

    fn choose(&self, a: Option<&Request>, b: Option<&Request>, last: u64) -> Option<(u64, RequestId)> {
        choose_req(a, b, last, self.back_max_sectors, self.back_penalty).map(|r| (r.start_sector, r.id))
    }

    /// Linux `cfq_add_rq_rb`.
    fn add_rq_rb(&mut self, q: Qid, req: Request, fifo_ns: Nanos, now: Nanos) {
        self.queues.get_mut(&q).expect("queue").sort.insert((req.start_sector, req.id), (req, fifo_ns));
        if !self.queues[&q].on_rr {
            self.add_cfqq_rr(q, now);
        }
        let c = &self.queues[&q];
        let prev = c.next_rq;
        let next = self.choose(prev.map(|k| c.request(k)), Some(&req), self.last_position);
        self.queues.get_mut(&q).expect("queue").next_rq = next;
        if prev != next {
            self.prio_tree_add(q);
        }
    }

    /// Linux `cfq_remove_request` (with `cfq_del_rq_rb`).
    fn remove_request(&mut self, q: Qid, key: (u64, RequestId)) -> Option<Request> {
        let (back_max, penalty) = (self.back_max_sectors, self.back_penalty);
        let c = self.queues.get_mut(&q)?;
        if c.next_rq == Some(key) {
            c.next_rq = c.find_next_rq(key, back_max, penalty);
        }
        let (req, fifo_ns) = c.sort.remove(&key)?;
        c.fifo.remove(&(fifo_ns, key.1));
        if req.is_meta() {
            c.prio_pending = c.prio_pending.saturating_sub(1);
        }
        let emptied = c.on_rr && c.is_empty();
        if emptied {
            self.prio_tree_del(q);
        }
        self.where_queued.remove(&key.1);
        self.rq_queued -= 1;
        Some(req)
    }

    /// Removes a queued request that leaves without being served (merged away).
    fn take_queued(&mut self, id: RequestId) -> Option<(Qid, Request)> {
        let q = self.where_queued.get(&id)?.0;
        let key = self.key_of(q, id)?;
        let req = self.remove_request(q, key)?;
        Some((q, req))
    }

    /// The sort-tree key of queued request `id` if it is queued in `q`.
    fn key_of(&self, q: Qid, id: RequestId) -> Option<(u64, RequestId)> {
        let key = self.where_queued.get(&id).filter(|w| w.0 == q).map(|&(_, sector)| (sector, id));
        debug_assert_eq!(
            key,
            self.queues.get(&q).and_then(|c| c.sort.keys().find(|k| k.1 == id).copied()),
            "where_queued in step with the sort trees"
        );
        key
    }

    // ---- Queues of processes ----

    fn new_queue(&mut self, pid: u32, sync: bool, class: usize, level: usize) -> Qid {
        self.queues.create(Cfqq::new(pid, sync, class, level))
    }

    /// Linux `cfq_set_request` / `cfq_get_queue`: the queue a request of `req`'s process goes
    /// to, splitting a shared queue gone seeky and following a scheduled cooperator merge.
    fn queue_for(&mut self, req: &Request, now: Nanos) -> Qid {
        let class = class_of(req.prio.class);
        let level = if class == IDLE { 7 } else { (req.prio.level as usize).min(7) };
        if !is_sync(req) {
            if let Some(&q) = self.async_qs.get(&(class, level)) {
                return q;
            }
            let q = self.new_queue(req.principal.pid, false, class, level);
            self.async_qs.insert((class, level), q);
            return q;
        }
        let pid = req.principal.pid;
        let cic = self.cics.get_or_insert_with(pid, || Cic { sync_q: None, ttime: Ttime::starting_at(now) });
        let mut cur = cic.sync_q.filter(|q| self.queues.contains_key(q));
        if let Some(q) = cur {
            let c = &self.queues[&q];
            if c.coop && c.split_coop {
                // split_cfqq: the last process keeps it; the others get a queue of their own.
                self.counts.coop_splits += 1;
                let c = self.queues.get_mut(&q).expect("queue");
                if c.procs == 1 {
                    c.pid = pid;
                    c.coop = false;
                    c.split_coop = false;
                } else {
                    c.procs = c.procs.saturating_sub(1);
                    cur = None;
                    self.maybe_drop(q);
                }
            }
        }
        if let Some(q) = cur {
            if let Some(n) = self.queues[&q].new_cfqq.filter(|n| self.queues.contains_key(n)) {
                // cfq_merge_cfqqs: this process's sync requests go to the cooperator's queue.
                self.counts.coop_merges += 1;
                let c = self.queues.get_mut(&q).expect("queue");
                c.procs = c.procs.saturating_sub(1);
                let nc = self.queues.get_mut(&n).expect("queue");
                nc.coop = true;
                nc.procs += 1;
                self.cics.get_mut(pid).expect("cic").sync_q = Some(n);
                self.maybe_drop(q);
                return n;
            }
            return q;
        }
        let q = self.new_queue(pid, true, class, level);
        self.queues.get_mut(&q).expect("queue").procs = 1;
        self.cics.get_mut(pid).expect("cic").sync_q = Some(q);
        q
    }

    /// Frees a queue no process, request or slice holds (Linux: its last reference dropped).
    fn maybe_drop(&mut self, q: Qid) {
        let Some(c) = self.queues.get(&q) else { return };
        if !c.sync || c.procs > 0 || c.on_rr || c.dispatched > 0 || !c.is_empty() || self.active == Some(q) {
            return;
        }
        self.prio_tree_del(q);
        self.queues.remove(&q);
    }

    // ---- Choosing the queue ----

    /// Linux `cfq_select_queue`: Some(queue) to dispatch from, None to wait.
    fn select_queue(&mut self, now: Nanos) -> Option<Qid> {
        let mut new_cfqq = None;
        if let Some(q) = self.active {
            if self.rq_queued == 0 {
                return None;
            }
            let go = 'decide: {
                let c = &self.queues[&q];
                if c.wait_busy && !c.is_empty() {
                    break 'decide Step::Expire;
                }
                if self.slice_used(c, now) && !c.must_dispatch {
                    if self.nr_cfqq == 1 && c.is_empty() && c.dispatched > 0 && self.should_idle(q) {
                        break 'decide Step::Keep;
                    }
                    break 'decide Step::GroupIdle;
                }
                if !c.is_empty() {
                    return Some(q);
                }
                if let Some(n) = self.close_cooperator(q) {
                    if self.queues[&q].new_cfqq.is_none() {
                        self.setup_merge(q, n);
                    }
                    new_cfqq = Some(n);
                    break 'decide Step::Expire;
                }
                if self.idle_timer.is_some() {
                    break 'decide Step::Keep;
                }
                // A seeky queue on a device faster than it: stop idling for it.
                let c = &self.queues[&q];
                if c.seeky() && c.idle_window && (c.slice_new || c.slice_end_ns.saturating_sub(now) > now.saturating_sub(c.slice_start_ns))
                {
                    let c = self.queues.get_mut(&q).expect("queue");
                    c.deep = false;
                    c.idle_window = false;
                }
                if self.queues[&q].dispatched > 0 && self.should_idle(q) {
                    break 'decide Step::Keep;
                }
                Step::GroupIdle
            };
            match go {
                Step::Keep => return None,
                Step::GroupIdle => {
                    if self.group_idle_ms > 0 && self.nr_cfqq == 1 && self.group_dispatched > 0 && !self.group_ttime.big(self.group_idle_ms)
                    {
                        return None;
                    }
                }
                Step::Expire => {}
            }
            self.slice_expired(false, now);
        }
        if new_cfqq.is_none() {
            self.choose_workload(now);
        }
        self.set_active(new_cfqq)
    }

    // ---- Dispatch ----

    /// Linux `cfq_check_fifo`: once per slice, the FIFO head if its deadline has passed.
    fn check_fifo(&mut self, q: Qid, now: Nanos) -> Option<(u64, RequestId)> {
        let c = self.queues.get_mut(&q).expect("queue");
        if c.fifo_expire {
            return None;
        }
        c.fifo_expire = true;
        let &(deadline, id) = c.fifo.first()?.0;
        if now < deadline {
            return None;
        }
        let key = self.key_of(q, id)?;
        self.counts.fifo_expired += 1;
        Some(key)
    }

    fn slice_used_soon(&self, c: &Cfqq, now: Nanos) -> bool {
        c.slice_new || now.saturating_add(ms_ns(self.slice_idle_ms).saturating_mul(c.dispatched as u64)) > c.slice_end_ns
    }

    /// Linux `cfq_may_dispatch`: the per-queue dispatch limit (quantum) and the sync/async
    /// separation at the drive.
    fn may_dispatch(&self, q: Qid, now: Nanos) -> bool {
        let c = &self.queues[&q];
        if c.must_dispatch {
            return true;
        }
        if self.should_idle(q) && self.rq_in_flight[0] > 0 {
            return false;
        }
        if self.rq_in_flight[1] > 0 && !c.sync {
            return false;
        }
        let mut max_dispatch = (self.quantum / 2).max(1);
        if c.class == IDLE {
            max_dispatch = 1;
        }
        if c.dispatched >= max_dispatch {
            if c.class == IDLE {
                return false;
            }
            let promote_sync = c.sync && self.busy_sync_queues == 1;
            if self.busy_queues > 1 && self.slice_used_soon(c, now) && !promote_sync {
                return false;
            }
            max_dispatch = if self.busy_queues == 1 || promote_sync { u32::MAX } else { self.quantum };
        }
        if !c.sync && self.low_latency {
            // Async depth ramps up with the time since sync I/O was last delayed.
            let since = (signed(now) - self.last_delayed_sync).max(0) as u64;
            let mut depth = (since / ms_ns(self.slice_ms[1]).max(1)).min(u32::MAX as u64) as u32;
            if depth == 0 && c.dispatched == 0 {
                depth = 1;
            }
            max_dispatch = max_dispatch.min(depth);
        }
        c.dispatched < max_dispatch
    }

    /// Linux `cfq_dispatch_request` + `cfq_dispatch_insert`.
    fn dispatch_request(&mut self, q: Qid, now: Nanos) -> Option<Request> {
        let fifo = self.check_fifo(q, now);
        if fifo.is_some() {
            self.queues.get_mut(&q).expect("queue").must_dispatch = true;
        }
        if !self.may_dispatch(q, now) {
            return None;
        }
        let key = fifo.or(self.queues[&q].next_rq)?;
        let (back_max, penalty) = (self.back_max_sectors, self.back_penalty);
        let c = self.queues.get_mut(&q).expect("queue");
        c.next_rq = c.find_next_rq(key, back_max, penalty);
        let req = self.remove_request(q, key)?;
        let c = self.queues.get_mut(&q).expect("queue");
        c.dispatched += 1;
        let sync = c.sync as usize;
        self.group_dispatched += 1;
        self.rq_in_flight[sync] += 1;
        self.rq_in_driver += 1;
        self.in_driver.insert(req.id, q);
        self.last_position = req.end_sector();
        if self.active_pid.is_none() {
            self.active_pid = Some(req.principal.pid);
        }
        Some(req)
    }

    /// Linux `cfq_dispatch_requests` (not forced): one request or none.
    fn dispatch_one(&mut self, now: Nanos) -> Option<Request> {
        if self.busy_queues == 0 {
            return None;
        }
        let q = self.select_queue(now)?;
        let req = self.dispatch_request(q, now)?;
        let maxrq = 2 * self.slice_async_rq * (8 - self.queues[&q].level as u64);
        let c = self.queues.get_mut(&q).expect("queue");
        c.slice_dispatch += 1;
        c.must_dispatch = false;
        // An async queue ends after its request quota; an idle-class queue after one request.
        if self.busy_queues > 1 && ((!c.sync && c.slice_dispatch >= maxrq) || c.class == IDLE) {
            c.slice_end_ns = now.saturating_add(MS);
            self.slice_expired(false, now);
        }
        Some(req)
    }

    /// Nothing dispatchable while requests are queued, no timer set and nothing at the drive:
    /// Linux cannot get here; should this model, serve the first queue as cfq_forced_dispatch
    /// would rather than leave requests behind (counted in `stall_rescues`).
    fn rescue(&mut self, now: Nanos) -> Option<Request> {
        self.slice_expired(false, now);
        let q = [(RT, SYNC), (RT, SYNC_NOIDLE), (RT, ASYNC), (BE, SYNC), (BE, SYNC_NOIDLE), (BE, ASYNC), (IDLE, 0)]
            .iter()
            .find_map(|&(c, t)| self.trees[c][t].first().map(|(_, q)| q))?;
        self.counts.stall_rescues += 1;
        self.set_active(Some(q));
        self.queues.get_mut(&q).expect("queue").must_dispatch = true;
        self.dispatch_request(q, now)
    }
}

enum Step {
    Keep,
    GroupIdle,
    Expire,
}

impl Scheduler for Cfq {
    fn name(&self) -> &str {
        "cfq"
    }

    /// Linux `cfq_insert_request`.
    fn add(&mut self, req: Request, cx: &Context) {
        let now = cx.now_ns;
        self.tick(now);
        if req.op == Op::Flush {
            self.flushes.push_back(req);
            return;
        }
        let q = self.queue_for(&req, now);
        let fifo_ns = now.saturating_add(self.fifo_expire_ns[is_sync(&req) as usize]);
        self.queues.get_mut(&q).expect("queue").fifo.insert((fifo_ns, req.id), ());
        self.where_queued.insert(req.id, (q, req.start_sector));
        self.rq_queued += 1;
        self.add_rq_rb(q, req, fifo_ns, now);
        self.rq_enqueued(q, &req, now);
    }

    fn next(&mut self, cx: &Context) -> Decision {
        let now = cx.now_ns;
        self.tick(now);
        if let Some(f) = self.flushes.pop_front() {
            return Decision::Dispatch(f, ArmPath::Direct);
        }
        if self.rq_queued == 0 {
            return Decision::Empty;
        }
        if let Some(r) = self.dispatch_one(now) {
            return Decision::Dispatch(r, ArmPath::Direct);
        }
        if let Some(t) = self.idle_timer {
            return Decision::WaitUntil(t.max(now.saturating_add(1)));
        }
        if self.rq_in_driver > 0 {
            // Linux runs the queue again when a request completes or arrives, not on a clock:
            // a slice that ends meanwhile is noticed at the next completion. (A 1 ms poll here
            // started a chain of wake-ups per completion: with 32 commands at the drive the
            // run's CPU time grew with the square of its length.)
            return Decision::Empty;
        }
        match self.rescue(now) {
            Some(r) => Decision::Dispatch(r, ArmPath::Direct),
            None => Decision::WaitUntil(now.saturating_add(MS)),
        }
    }

    /// Linux `cfq_completed_request`.
    fn completed(&mut self, done: &Completion, cx: &Context) {
        let now = cx.now_ns;
        self.tick(now);
        let req = &done.request;
        let Some(&q) = self.in_driver.get(&req.id) else { return };
        // cfq_completed_request samples the drive queue first, the completing request still
        // counted in rq_in_driver (the engine's cx.in_flight no longer counts it).
        self.update_hw_tag();
        self.in_driver.remove(&req.id);
        self.rq_in_driver = self.rq_in_driver.saturating_sub(1);
        self.group_dispatched = self.group_dispatched.saturating_sub(1);
        let c = self.queues.get_mut(&q).expect("queue");
        c.dispatched = c.dispatched.saturating_sub(1);
        let qsync = c.sync as usize;
        self.rq_in_flight[qsync] = self.rq_in_flight[qsync].saturating_sub(1);
        let sync = is_sync(req);
        if sync {
            if let Some(cic) = self.cics.get_mut(req.principal.pid) {
                cic.ttime.last_end_request_ns = now;
            }
            let st = self.queues[&q].tree.unwrap_or(self.queues[&q].st_index());
            self.trees[st.0][st.1].ttime.last_end_request_ns = now;
            if req.issue_ns.saturating_add(self.fifo_expire_ns[1]) <= now {
                self.last_delayed_sync = signed(now);
            }
        }
        self.group_ttime.last_end_request_ns = now;
        if self.active == Some(q) {
            if self.queues[&q].slice_new {
                // The slice starts at the queue's first completion.
                let slice = self.scaled_slice_ms(q);
                let c = self.queues.get_mut(&q).expect("queue");
                c.slice_start_ns = now;
                c.slice_end_ns = now.saturating_add(ms_ns(slice));
                c.allocated_slice_ms = slice;
                c.slice_new = false;
            }
            if self.should_wait_busy(q, now) {
                let extend = if self.slice_idle_ms > 0 { self.slice_idle_ms } else { self.group_idle_ms };
                let c = self.queues.get_mut(&q).expect("queue");
                c.slice_end_ns = now.saturating_add(ms_ns(extend));
                c.wait_busy = true;
            }
            let c = &self.queues[&q];
            if self.slice_used(c, now) || c.class == IDLE {
                self.slice_expired(true, now);
            } else if sync && c.is_empty() && self.close_cooperator(q).is_none() {
                self.arm_slice_timer(now);
            }
        }
        self.maybe_drop(q);
    }

    fn process_event(&mut self, ev: ProcessEvent, cx: &Context) {
        let now = cx.now_ns;
        self.tick(now);
        if let ProcessEvent::Exited(p) = ev {
            // Linux cfq_exit_icq: the process's sync queue loses it; an active queue waiting
            // for it ends its slice.
            let Some(cic) = self.cics.remove(p.pid) else { return };
            if let Some(q) = cic.sync_q.filter(|q| self.queues.contains_key(q)) {
                if self.active == Some(q) && self.queues[&q].is_empty() {
                    self.slice_expired(false, now);
                }
                let c = self.queues.get_mut(&q).expect("queue");
                c.procs = c.procs.saturating_sub(1);
                self.maybe_drop(q);
            }
        }
    }

    fn queued(&self) -> usize {
        self.flushes.len() + self.rq_queued
    }

    fn remove(&mut self, req: &Request, _cx: &Context) -> bool {
        let Some((q, _)) = self.take_queued(req.id) else { return false };
        if self.queues[&q].on_rr && self.queues[&q].is_empty() && self.active != Some(q) {
            self.del_cfqq_rr(q);
        }
        self.maybe_drop(q);
        true
    }

    /// Linux `cfq_allow_merge`: never a sync bio into an async request, and only into a
    /// request of the queue the bio would join.
    fn allow_merge(&self, rq: &Request, bio: &Request) -> bool {
        if is_sync(bio) && !is_sync(rq) {
            return false;
        }
        let Some(&(rq_q, _)) = self.where_queued.get(&rq.id) else { return false };
        let bio_q = if is_sync(bio) {
            self.cics.get(bio.principal.pid).and_then(|c| c.sync_q)
        } else {
            let class = class_of(bio.prio.class);
            let level = if class == IDLE { 7 } else { (bio.prio.level as usize).min(7) };
            self.async_qs.get(&(class, level)).copied()
        };
        bio_q == Some(rq_q)
    }

    /// Linux `cfq_merged_request`: a front merge re-sorts the request; the FIFO place stays.
    fn merged(&mut self, old: &Request, grown: Request, cx: &Context) {
        let Some(&(q, _)) = self.where_queued.get(&old.id) else { return };
        let Some(key) = self.key_of(q, old.id) else { return };
        let c = self.queues.get_mut(&q).expect("queue");
        let (_, fifo_ns) = c.sort.remove(&key).expect("queued");
        let was_next = c.next_rq == Some(key);
        c.sort.insert((grown.start_sector, grown.id), (grown, fifo_ns));
        self.where_queued.insert(grown.id, (q, grown.start_sector));
        let c = self.queues.get_mut(&q).expect("queue");
        if was_next {
            c.next_rq = Some((grown.start_sector, grown.id));
        }
        let prev = self.queues[&q].next_rq;
        let c = &self.queues[&q];
        let next = self.choose(prev.map(|k| c.request(k)), Some(&grown), self.last_position);
        self.queues.get_mut(&q).expect("queue").next_rq = next;
        if prev != next || was_next {
            self.prio_tree_add(q);
        }
        let _ = cx;
    }

    /// Linux `cfq_merged_requests`: the survivor takes the earlier FIFO time; the absorbed
    /// request leaves, and its queue leaves the service tree if emptied (not if active).
    fn requests_merged(&mut self, into: &Request, grown: Request, absorbed: &Request, cx: &Context) {
        let (Some(&(qi, _)), Some(&(qa, _))) = (self.where_queued.get(&into.id), self.where_queued.get(&absorbed.id)) else { return };
        if qi == qa {
            let (ki, ka) = (self.key_of(qi, into.id), self.key_of(qa, absorbed.id));
            if let (Some(ki), Some(ka)) = (ki, ka) {
                let c = self.queues.get_mut(&qi).expect("queue");
                let (fi, fa) = (c.sort[&ki].1, c.sort[&ka].1);
                if fa < fi {
                    c.fifo.remove(&(fi, into.id));
                    c.fifo.insert((fa, into.id), ());
                    c.sort.get_mut(&ki).expect("queued").1 = fa;
                }
                if c.next_rq == Some(ka) {
                    c.next_rq = Some(ki);
                }
            }
        }
        self.remove(absorbed, cx);
        self.merged(into, grown, cx);
    }

    fn is_work_conserving(&self) -> bool {
        false
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counts;
        vec![
            ("slices", c.slices),
            ("idle_waits", c.idle_waits),
            ("idle_timeouts", c.idle_timeouts),
            ("idle_hits", c.idle_hits),
            ("preemptions", c.preemptions),
            ("fifo_expired", c.fifo_expired),
            ("coop_setups", c.coop_setups),
            ("coop_merges", c.coop_merges),
            ("coop_splits", c.coop_splits),
            ("stall_rescues", c.stall_rescues),
            ("hw_tag", (self.hw_tag == 1) as u64),
            ("hw_tag_est_depth", self.hw_tag_est_depth as u64),
        ]
    }
}

// ---- Tunables (sysfs names of 4.4; ms unless said) ----

const fn tunable(name: &'static str, default: u64, unit: &'static str, min: f64, help: &'static str) -> Tunable {
    Tunable { name, integer: true, default: default as f64, unit, min, max: INT_MAX, help }
}

pub const TUNABLES: &[Tunable] = &[
    tunable(
        "quantum",
        QUANTUM,
        "requests",
        1.0,
        "dispatch limit: a queue may have quantum/2 requests at the drive (quantum early in its slice)",
    ),
    tunable("fifo_expire_sync", FIFO_EXPIRE_SYNC_MS, "ms", 1.0, "a sync request's FIFO deadline, checked once per slice"),
    tunable("fifo_expire_async", FIFO_EXPIRE_ASYNC_MS, "ms", 1.0, "an async request's FIFO deadline, checked once per slice"),
    tunable("back_seek_max", BACK_SEEK_MAX_KIB, "KiB", 0.0, "farthest backward seek allowed when choosing a queue's next request"),
    tunable("back_seek_penalty", BACK_SEEK_PENALTY, "x", 1.0, "a backward distance counts this many times its length"),
    tunable("slice_sync", SLICE_SYNC_MS, "ms", 1.0, "base time slice of a sync queue (priority 4); +/- slice/5 per level"),
    tunable("slice_async", SLICE_ASYNC_MS, "ms", 1.0, "base time slice of an async queue (priority 4)"),
    tunable("slice_async_rq", SLICE_ASYNC_RQ, "requests", 1.0, "an async queue's slice ends after 2 x this x (8 - priority) requests"),
    tunable("slice_idle", SLICE_IDLE_MS, "ms", 0.0, "how long an emptied sync queue keeps the disk for its next request; 0 = no idling"),
    tunable("group_idle", GROUP_IDLE_MS, "ms", 0.0, "idling for the only busy queue when queue idling does not apply; 0 = off"),
    Tunable {
        name: "low_latency",
        integer: true,
        default: 1.0,
        unit: "bool",
        min: 0.0,
        max: 1.0,
        help: "scale slices down so that the busy queues fit in target_latency; ramp async depth",
    },
    tunable("target_latency", TARGET_LATENCY_MS, "ms", 1.0, "with low_latency: the time in which every busy queue should get a slice"),
];

mod idle;
mod trees;

#[cfg(test)]
mod tests;
