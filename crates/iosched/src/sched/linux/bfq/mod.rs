//! BFQ, Budget Fair Queueing (Checconi & Valente 2010; Valente 2014; Linux
//! block/bfq-iosched.c): per-process queues served one at a time, each until it uses its budget
//! (sectors) or empties, the next one chosen by B-WF2Q+ (wf2q.rs) so that every queue gets
//! its weight's share of the throughput whatever its budgets; an emptied sync queue keeps the
//! disk idle up to slice_idle for its next request; a budget timeout bounds a slot's time.
//!
//! One implementation, three rule sets (rules.rs): `bfq-original` (the paper's section 3),
//! `bfq-plus` (section 4's heuristics, each switchable) and `bfq` (Linux 6.x). Groups (cgroup
//! io.weight) are entities above the queues of their processes.
//!
//! Time is ns; there is no timer callback: every entry point first fires the idle timer if its
//! time has come (at the timer's own time).

pub mod budget;
mod entity_set;
pub mod queue;
pub mod rules;
pub mod wf2q;

use super::cfq::queue::is_sync;
use crate::dense_map::DenseMap;
use crate::device::ArmPath;
use crate::fast_hash::FastMap;
use crate::pid_map::PidMap;
use crate::request::{Op, PrioClass, Request, RequestId};
use crate::sched::tunables::TunableValues;
use crate::sched::{Completion, Context, Decision, ProcessEvent, Scheduler};
use crate::time::{Nanos, NS_PER_MS};
use budget::{max_budget_of, next_budget, sectors_per_s, Expiring, PeakRate, Reason};
use queue::{BfqQueue, Key};
use rules::*;
use std::collections::{BTreeMap, VecDeque};
use wf2q::{Eid, Wf2q, CLASS_BE, CLASS_IDLE, CLASS_RT, ROOT};

/// `BFQ_CL_IDLE_TIMEOUT`: the idle class is served at least this often.
const IDLE_CLASS_TIMEOUT_NS: Nanos = 200 * NS_PER_MS;
/// `BFQ_MAX_WEIGHT`, `BFQ_DEFAULT_GRP_WEIGHT`.
const MAX_WEIGHT: u64 = 1000;
/// Linux `BFQ_SOFTRT_WEIGHT_FACTOR`.
const SOFTRT_WEIGHT_FACTOR: u64 = 100;

#[derive(Clone, Debug, Default)]
struct Proc {
    sync_q: Option<Eid>,
    /// The scenario's process weight (a multiplier of the ioprio weight).
    weight: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub slots: u64,
    pub too_idle: u64,
    pub budget_timeouts: u64,
    pub budget_exhausted: u64,
    pub no_more_requests: u64,
    pub preemptions: u64,
    pub idle_waits: u64,
    pub idle_hits: u64,
    pub full_charges: u64,
    pub wr_starts: u64,
    pub wr_ends: u64,
    pub stall_rescues: u64,
    /// The queue in service emptied where idling would have boosted the throughput (a
    /// rotational drive without queueing, or a sequential I/O-bound queue), but Linux's rule
    /// switched it off because weight-raised queues were busy and none needed guarantees.
    pub no_idle_raised: u64,
}

pub struct Bfq {
    name: &'static str,
    pub(super) rules: Rules,
    pub(super) wf: Wf2q,
    pub(super) queues: DenseMap<BfqQueue>,
    /// By pid: a slot per pid (no hash probe into a cold table at every request).
    procs: PidMap<Proc>,
    async_qs: FastMap<(Eid, usize, usize), Eid>,
    cgroups: FastMap<u32, Eid>,
    where_queued: FastMap<RequestId, (Eid, Key)>,
    in_driver: FastMap<RequestId, Eid>,
    flushes: VecDeque<Request>,
    pub(super) in_service: Option<Eid>,
    pub(super) idle_timer: Option<Nanos>,
    /// `bfq_schedule_dispatch` ran the queue from kblockd since the engine last asked.
    async_queue_run: bool,
    last_idling_start_ns: Nanos,
    last_budget_start_ns: Nanos,
    rq_in_driver: u32,
    sync_flight: u32,
    queued: usize,
    busy_queues: [u32; 3],
    wr_busy_queues: u32,
    /// None: not yet known (Linux starts at -1, treated as "queueing").
    pub(super) hw_tag: Option<bool>,
    hw_tag_samples: u32,
    max_rq_in_driver: u32,
    budgets_assigned: u64,
    /// Linux `bfqd->bfq_max_budget` (B_max once estimated).
    raw_max_budget: u64,
    pub(super) peak: PeakRate,
    last_position: u64,
    last_idle_class_ns: Nanos,
    /// Weights of queues busy or with requests at the drive, and how many (Linux's
    /// queue_weights_tree), and which weight each queue is counted under.
    weights: BTreeMap<u64, u32>,
    counted: DenseMap<u64>,
    /// Queues busy or with requests at the drive, per group entity (a group counts for Linux's
    /// num_groups_with_pending_reqs while this is above 0).
    group_pending: DenseMap<u32>,
    slot_dispatched: u32,
    /// Linux burst detection: the current burst's queues, its size, whether it is large, when
    /// its last queue joined and the group it is in.
    burst_list: Vec<Eid>,
    burst_size: u32,
    large_burst: bool,
    last_ins_in_burst_ns: Option<Nanos>,
    burst_parent: Eid,
    pub(super) counts: Counts,
}

impl Bfq {
    pub fn new(variant: Variant, t: &TunableValues) -> Result<Self, String> {
        let rules = Rules::from_tunables(variant, t);
        let name = match variant {
            Variant::Original => "bfq-original",
            Variant::Plus => "bfq-plus",
            Variant::Linux => "bfq",
        };
        let mut peak = PeakRate::default();
        if variant == Variant::Linux {
            // Linux: the first estimate is 2/3 of the reference rate of rotational devices.
            peak.rate = LINUX_REF_RATE * 2 / 3;
        }
        let raw = if rules.user_max_budget > 0 { rules.user_max_budget } else { DEFAULT_MAX_BUDGET };
        Ok(Bfq {
            name,
            rules,
            wf: Wf2q::new(),
            queues: DenseMap::default(),
            procs: PidMap::default(),
            async_qs: FastMap::default(),
            cgroups: FastMap::default(),
            where_queued: FastMap::default(),
            in_driver: FastMap::default(),
            flushes: VecDeque::new(),
            in_service: None,
            idle_timer: None,
            async_queue_run: false,
            last_idling_start_ns: 0,
            last_budget_start_ns: 0,
            rq_in_driver: 0,
            sync_flight: 0,
            queued: 0,
            busy_queues: [0; 3],
            wr_busy_queues: 0,
            hw_tag: None,
            hw_tag_samples: 0,
            max_rq_in_driver: 0,
            budgets_assigned: 0,
            raw_max_budget: raw,
            peak,
            last_position: 0,
            last_idle_class_ns: 0,
            weights: BTreeMap::new(),
            counted: DenseMap::default(),
            group_pending: DenseMap::default(),
            slot_dispatched: 0,
            burst_list: Vec::new(),
            burst_size: 0,
            large_burst: false,
            last_ins_in_burst_ns: None,
            burst_parent: ROOT,
            counts: Counts::default(),
        })
    }

    // ---- Inspection (tests, reports) ----

    pub fn queue_of(&self, pid: u32) -> Option<&BfqQueue> {
        self.queues.get(&self.procs.get(pid)?.sync_q?)
    }

    pub fn in_service_pid(&self) -> Option<u32> {
        Some(self.queues.get(&self.in_service?)?.pid)
    }

    /// Linux `bfq_max_budget`: the default until enough budgets were assigned.
    pub fn max_budget(&self) -> u64 {
        if self.rules.user_max_budget > 0 {
            self.rules.user_max_budget
        } else if self.budgets_assigned < STATS_MIN_BUDGETS {
            DEFAULT_MAX_BUDGET
        } else {
            self.raw_max_budget
        }
    }

    fn min_budget(&self) -> u64 {
        (self.max_budget() / 32).max(1)
    }

    pub fn peak_rate_sectors_per_s(&self) -> u64 {
        sectors_per_s(self.peak.rate)
    }

    // ---- Queues ----

    fn class_of(p: PrioClass) -> usize {
        match p.effective() {
            PrioClass::RealTime => CLASS_RT,
            PrioClass::Idle => CLASS_IDLE,
            _ => CLASS_BE,
        }
    }

    /// `bfq_ioprio_to_weight` x the process's weight.
    fn weight_for(&self, pid: u32, level: usize) -> u64 {
        let mult = self.procs.get(pid).map_or(1, |p| p.weight.max(1));
        ((8 - level.min(7) as u64) * 10 * mult).clamp(1, MAX_WEIGHT)
    }

    fn group_entity(&mut self, group: u32) -> Eid {
        self.cgroups.get(&group).copied().unwrap_or(ROOT)
    }

    fn queue_for(&mut self, req: &Request, now: Nanos) -> Eid {
        let class = Self::class_of(req.prio.class);
        let level = if class == CLASS_IDLE { 7 } else { (req.prio.level as usize).min(7) };
        let g = self.group_entity(req.principal.group);
        let pid = req.principal.pid;
        if !is_sync(req) {
            if let Some(&q) = self.async_qs.get(&(g, class, level)) {
                return q;
            }
            let q = self.new_queue(g, pid, false, class, level, now);
            self.async_qs.insert((g, class, level), q);
            return q;
        }
        if let Some(q) = self.procs.get(pid).and_then(|p| p.sync_q).filter(|q| self.queues.contains_key(q)) {
            return q;
        }
        let q = self.new_queue(g, pid, true, class, level, now);
        self.procs.get_or_insert_with(pid, || Proc { sync_q: None, weight: 1 }).sync_q = Some(q);
        if self.rules.variant == Variant::Linux {
            self.handle_burst(q, g, now);
        }
        q
    }

    /// Linux `bfq_handle_burst`: a new queue within 180 ms of the previous one (same group)
    /// joins the burst; at 8 the burst is large and its queues are never raised (processes
    /// started together are a batch job, not an application starting).
    fn handle_burst(&mut self, q: Eid, g: Eid, now: Nanos) {
        let late = self.last_ins_in_burst_ns.is_none_or(|t| now > t.saturating_add(BURST_INTERVAL_NS));
        if late || g != self.burst_parent {
            self.large_burst = false;
            self.burst_list.clear();
            self.burst_list.push(q);
            self.burst_size = 1;
            self.burst_parent = g;
        } else if self.large_burst {
            self.queues.get_mut(&q).expect("queue").in_large_burst = true;
        } else {
            self.burst_size += 1;
            if self.burst_size >= LARGE_BURST_THRESH {
                self.large_burst = true;
                self.queues.get_mut(&q).expect("queue").in_large_burst = true;
                for b in std::mem::take(&mut self.burst_list) {
                    if let Some(c) = self.queues.get_mut(&b) {
                        c.in_large_burst = true;
                    }
                }
            } else {
                self.burst_list.push(q);
            }
        }
        self.last_ins_in_burst_ns = Some(now);
    }

    fn new_queue(&mut self, g: Eid, pid: u32, sync: bool, class: usize, level: usize, now: Nanos) -> Eid {
        let w = self.weight_for(pid, level);
        let e = self.wf.new_queue(g, class, w);
        let mut q = BfqQueue::new(e, pid, sync, class, level, w, now);
        let max = self.max_budget();
        q.max_budget = match self.rules.variant {
            Variant::Linux => 2 * max / 3,
            _ if self.rules.h_throughput => max / 2,
            _ => max,
        };
        // A new queue counts as idle for long (Linux bfq_smallest_from_now).
        q.idle_since_ns = now.saturating_sub(WR_MIN_IDLE_TIME_NS + NS_PER_MS);
        q.wr.soft_rt_next_start_ns = now;
        if !sync {
            q.procs = 0;
        }
        self.queues.insert(e, q);
        e
    }

    /// Frees a queue nothing refers to any more.
    fn maybe_drop(&mut self, q: Eid) {
        let Some(c) = self.queues.get(&q) else { return };
        if !c.sync || c.alive || c.busy || c.dispatched > 0 || !c.is_empty() || self.in_service == Some(q) {
            return;
        }
        if self.wf.entities[q].tree != wf2q::Tree::None {
            return;
        }
        self.queues.remove(&q);
        self.set_counted(q, None);
        self.wf.release(q);
    }

    fn weight_of(&self, q: Eid) -> u64 {
        self.wf.entities[q].new_weight
    }

    /// Keeps Linux's weights tree: queues busy or with requests at the drive, by weight.
    fn set_counted(&mut self, q: Eid, w: Option<u64>) {
        let old = self.counted.get(&q).copied();
        if old == w {
            return;
        }
        if old.is_some() != w.is_some() {
            // Linux's num_groups_with_pending_reqs counts a group while one of its queues is
            // busy or has requests at the drive (bfq_add_bfqq_in_groups_with_pending_reqs from
            // bfq_add_bfqq_busy, the del from bfq_del_bfqq_busy / bfq_completed_request when
            // !busy && !dispatched): the same condition as the weights tree. Counting requests
            // instead dropped the in-service queue's group at its last completion, just before
            // the idling decision, so two groups never looked asymmetric (issue 24).
            self.group_pending_add(q, if w.is_some() { 1 } else { -1 });
        }
        if let Some(o) = old {
            if let Some(n) = self.weights.get_mut(&o) {
                *n -= 1;
                if *n == 0 {
                    self.weights.remove(&o);
                }
            }
            self.counted.remove(&q);
        }
        if let Some(n) = w {
            *self.weights.entry(n).or_insert(0) += 1;
            self.counted.insert(q, n);
        }
    }

    fn refresh_counted(&mut self, q: Eid) {
        let Some(c) = self.queues.get(&q) else { return };
        let w = if c.busy || c.dispatched > 0 { Some(self.weight_of(q)) } else { None };
        self.set_counted(q, w);
    }

    /// Queues of `q`'s group that are busy or have requests at the drive (Linux: the group has
    /// pending requests while this is above 0).
    fn group_pending_add(&mut self, q: Eid, delta: i32) {
        let g = self.wf.entities[q].parent.unwrap_or(ROOT);
        if g == ROOT {
            return;
        }
        let n = self.group_pending.get_or_insert_with(g, || 0);
        *n = (*n as i64 + delta as i64).max(0) as u32;
        if *n == 0 {
            self.group_pending.remove(&g);
        }
    }

    fn budget_left(&self, q: Eid) -> u64 {
        let e = &self.wf.entities[q];
        e.budget.saturating_sub(e.service)
    }

    fn charge_of(&self, q: Eid, req: &Request) -> u64 {
        let c = &self.queues[&q];
        self.rules.charge(req.size_sectors as u64, c.sync, c.raised())
    }

    fn next_charge(&self, q: Eid) -> u64 {
        let c = &self.queues[&q];
        c.next_rq.map_or(0, |k| self.charge_of(q, c.request(k)))
    }

    fn total_busy(&self) -> u32 {
        self.busy_queues.iter().sum()
    }

    // ---- Weight raising ----

    fn set_raise(&mut self, q: Eid, coeff: u64) {
        let c = self.queues.get_mut(&q).expect("queue");
        let was = c.raised();
        c.wr.coeff = coeff;
        let w = c.orig_weight.saturating_mul(coeff);
        let now_raised = coeff > 1;
        let busy = c.busy;
        self.wf.set_weight(q, w);
        if busy && was != now_raised {
            if now_raised {
                self.wr_busy_queues += 1;
            } else {
                self.wr_busy_queues = self.wr_busy_queues.saturating_sub(1);
            }
        }
        if now_raised && !was {
            self.counts.wr_starts += 1;
        } else if was && !now_raised {
            self.counts.wr_ends += 1;
        }
    }

    /// Linux `bfq_wr_duration`: reference rate x reference duration / peak rate, 3-25 s.
    fn wr_duration_ns(&self) -> Nanos {
        let ms = LINUX_REF_RATE * LINUX_REF_WR_DURATION_MS / self.peak.rate.max(1);
        ms.clamp(3_000, 25_000) * NS_PER_MS
    }

    /// Raising decisions when a queue goes from idle to busy (paper 4.1; Linux
    /// bfq_bfqq_handle_idle_busy_switch).
    fn raise_on_activation(&mut self, q: Eid, now: Nanos) {
        if !self.rules.low_latency {
            return;
        }
        let c = &self.queues[&q];
        // BFQ-v1 raises any queue at its idle-to-busy switch, the shared async queues too
        // (bfq_add_rq_rb, BFQ-v1 block/bfq-iosched.c:372-392: no sync test); the paper is
        // silent. Linux 6.x raises sync queues only.
        if !c.sync && self.rules.variant != Variant::Plus {
            return;
        }
        match self.rules.variant {
            Variant::Original => {}
            Variant::Plus => {
                let idle_long = now.saturating_sub(c.idle_since_ns) >= WR_MIN_IDLE_TIME_NS;
                let soft_rt = self.rules.h_soft_rt
                    && !c.raised()
                    && !c.just_created
                    && !c.seek.totally_seeky()
                    && now > c.wr.soft_rt_next_start_ns
                    && c.dispatched == 0;
                if !c.raised() && (c.just_created || idle_long || soft_rt) {
                    let interactive = c.just_created || idle_long;
                    self.set_raise(q, PLUS_WR_COEFF);
                    let c = self.queues.get_mut(&q).expect("queue");
                    c.wr.budget_left = PLUS_WR_BUDGET_SECTORS;
                    c.wr.start_ns = now;
                    c.wr.soft_rt = !interactive;
                    c.wr.max_time_ns = if interactive { PLUS_WR_MAX_TIME_NS } else { LINUX_WR_RT_MAX_TIME_NS };
                }
            }
            Variant::Linux => {
                let default_weight = c.orig_weight == 40;
                let idle_long = c.just_created || (c.dispatched == 0 && now >= c.budget_timeout_ns.saturating_add(WR_MIN_IDLE_TIME_NS));
                if c.in_large_burst && !c.just_created && idle_long && now > c.budget_timeout_ns.saturating_add(10_000 * NS_PER_MS) {
                    // Idle for much longer than an interactive queue: its burst's I/O is over.
                    self.queues.get_mut(&q).expect("queue").in_large_burst = false;
                }
                let c = &self.queues[&q];
                let in_burst = c.in_large_burst;
                let interactive = idle_long && default_weight && !in_burst;
                let soft_rt = LINUX_WR_MAX_SOFTRT_RATE > 0
                    && !in_burst
                    && !c.seek.totally_seeky()
                    && now > c.wr.soft_rt_next_start_ns
                    && c.dispatched == 0
                    && default_weight;
                let was_raised = c.raised();
                let rt_period = c.wr.max_time_ns == LINUX_WR_RT_MAX_TIME_NS;
                if !was_raised && (interactive || soft_rt) {
                    if interactive {
                        self.raise_interactive(q, now, true);
                    } else {
                        self.raise_soft_rt(q, now);
                    }
                } else if was_raised {
                    if interactive {
                        self.raise_interactive(q, now, false);
                    } else if soft_rt {
                        if !rt_period {
                            self.raise_soft_rt(q, now);
                        }
                        self.queues.get_mut(&q).expect("queue").wr.last_start_finish_ns = now;
                    }
                }
            }
        }
    }

    /// Linux: an interactive raising period (x30 for `bfq_wr_duration`) starts now; a new one
    /// also restarts the count of service received while raised.
    fn raise_interactive(&mut self, q: Eid, now: Nanos, new_period: bool) {
        self.set_raise(q, LINUX_WR_COEFF);
        let d = self.wr_duration_ns();
        let c = self.queues.get_mut(&q).expect("queue");
        c.wr.max_time_ns = d;
        c.wr.soft_rt = false;
        c.wr.last_start_finish_ns = now;
        if new_period {
            // Linux service_from_wr (kept in budget_left for this rule set).
            c.wr.budget_left = 0;
        }
    }

    /// Linux: a soft real-time raising period (x30 x 100 for wr_rt_max_time).
    fn raise_soft_rt(&mut self, q: Eid, now: Nanos) {
        self.set_raise(q, LINUX_WR_COEFF * SOFTRT_WEIGHT_FACTOR);
        let c = self.queues.get_mut(&q).expect("queue");
        c.wr.max_time_ns = LINUX_WR_RT_MAX_TIME_NS;
        c.wr.soft_rt = true;
        c.wr.last_start_finish_ns = now;
    }

    /// Raising bookkeeping at each dispatch of `charge` sectors: the paper's linear decrease
    /// and T_rais; Linux's end of the raising period (bfq_update_wr_data).
    fn raise_on_dispatch(&mut self, q: Eid, charge: u64, now: Nanos) {
        let c = self.queues.get_mut(&q).expect("queue");
        c.wr.service_from_backlogged = c.wr.service_from_backlogged.saturating_add(charge);
        if !c.raised() {
            return;
        }
        match self.rules.variant {
            Variant::Plus => {
                c.wr.budget_left = c.wr.budget_left.saturating_sub(charge);
                let expired = now.saturating_sub(c.wr.start_ns) > c.wr.max_time_ns;
                if c.wr.budget_left == 0 || expired {
                    self.set_raise(q, 1);
                } else {
                    // w(t) = w x (1 + (C - 1) x left / B_rais).
                    let w = c.orig_weight
                        + (c.orig_weight as u128 * (PLUS_WR_COEFF - 1) as u128 * c.wr.budget_left as u128 / PLUS_WR_BUDGET_SECTORS as u128)
                            as u64;
                    self.wf.set_weight(q, w.max(1));
                }
            }
            Variant::Linux => {
                c.wr.budget_left = c.wr.budget_left.saturating_add(charge);
                if c.in_large_burst {
                    c.wr.last_start_finish_ns = now;
                    self.set_raise(q, 1);
                } else if !c.wr.soft_rt && c.wr.budget_left > LINUX_MAX_SERVICE_FROM_WR {
                    // The service from raising of a file copy, not an application start-up.
                    c.wr.last_start_finish_ns = now;
                    self.set_raise(q, 1);
                } else if now > c.wr.last_start_finish_ns.saturating_add(c.wr.max_time_ns) {
                    let keep_soft_rt = c.wr.soft_rt && c.wr.soft_rt_next_start_ns >= now;
                    if !keep_soft_rt {
                        c.wr.last_start_finish_ns = now;
                        self.set_raise(q, 1);
                    }
                }
            }
            Variant::Original => {}
        }
    }

    /// Linux `bfq_bfqq_softrt_next_start`.
    fn softrt_next_start(&self, q: Eid, now: Nanos) -> Nanos {
        let c = &self.queues[&q];
        let by_rate =
            c.wr.last_idle_backlogged_ns
                .saturating_add(c.wr.service_from_backlogged.saturating_mul(1_000_000_000) / LINUX_WR_MAX_SOFTRT_RATE);
        c.wr.soft_rt_next_start_ns.max(by_rate).max(now.saturating_add(self.rules.slice_idle_ns).saturating_add(4 * NS_PER_MS))
    }

    // ---- Idling ----

    /// Does the drive queue commands (hw_tag)? Unknown counts as yes (Linux: -1 is true).
    fn queueing(&self) -> bool {
        self.hw_tag.unwrap_or(true)
    }

    fn asymmetric(&self, q: Eid) -> bool {
        let w = self.weight_of(q);
        let smallest = self.weights.keys().next().is_some_and(|&s| s == w);
        let varied = self.weights.len() > 1 && !smallest;
        let classes = self.busy_queues.iter().filter(|&&n| n > 0).count() > 1;
        varied || classes || self.group_pending.len() > 1
    }

    fn idling_boosts_thr_without_issues(&self, q: Eid) -> bool {
        let c = &self.queues[&q];
        if !c.alive {
            return false;
        }
        let rot_without_queueing = !self.queueing();
        let seq_io_bound = !c.seeky(&self.rules) && c.io_bound && c.ttime.short(self.rules.slice_idle_ns);
        let boosts = rot_without_queueing || seq_io_bound;
        boosts && self.wr_busy_queues == 0
    }

    /// Linux variant: idling would boost the throughput and is off only because weight-raised
    /// queues are busy (`idling_boosts_thr_without_issues` requires none) and nothing needs the
    /// guarantees: what turns BFQ's two sequential readers into noop's alternation.
    fn idling_off_by_raising(&self, q: Eid) -> bool {
        let c = &self.queues[&q];
        if self.rules.variant != Variant::Linux
            || self.rules.strict_guarantees
            || self.rules.slice_idle_ns == 0
            || !c.sync
            || c.class == CLASS_IDLE
        {
            return false;
        }
        let boosts = !self.queueing() || (!c.seeky(&self.rules) && c.io_bound && c.ttime.short(self.rules.slice_idle_ns));
        c.alive && boosts && self.wr_busy_queues > 0 && !self.idling_needed_for_service_guarantees(q)
    }

    fn idling_needed_for_service_guarantees(&self, q: Eid) -> bool {
        let c = &self.queues[&q];
        if !c.alive {
            return false;
        }
        let tot = self.total_busy();
        (c.raised() && (self.wr_busy_queues < tot || self.rq_in_driver >= c.dispatched + 4)) || self.asymmetric(q) || tot == 1
    }

    /// Linux `bfq_better_to_idle`; for the paper's BFQ, its idle window.
    pub(super) fn better_to_idle(&self, q: Eid) -> bool {
        let c = &self.queues[&q];
        if self.rules.slice_idle_ns == 0 || !c.sync || c.class == CLASS_IDLE {
            return false;
        }
        match self.rules.variant {
            Variant::Linux => {
                if self.rules.strict_guarantees {
                    return true;
                }
                self.idling_boosts_thr_without_issues(q) || self.idling_needed_for_service_guarantees(q)
            }
            _ => {
                if !c.alive {
                    return false;
                }
                // Paper 5.3: idling disabled altogether once the drive is seen queueing commands.
                if self.hw_tag == Some(true) {
                    return false;
                }
                // Paper 4.1: raised queues keep idling whatever their pattern.
                if self.rules.low_latency && c.raised() {
                    return true;
                }
                !(c.ttime.valid() && c.ttime.mean_ns > self.rules.slice_idle_ns)
            }
        }
    }

    fn arm_idle_timer(&mut self, q: Eid, now: Nanos) {
        let c = &self.queues[&q];
        let mut sl = self.rules.slice_idle_ns;
        match self.rules.variant {
            Variant::Linux => {
                if c.seeky(&self.rules) && !c.raised() && !self.asymmetric(q) {
                    sl = sl.min(MIN_TT_NS);
                } else if c.raised() {
                    sl = sl.max(20 * NS_PER_MS);
                }
            }
            _ => {
                let raised_kept = self.rules.low_latency && c.raised();
                // H-fairness (4.4, item 3): a seeky queue's wait is cut only after B_max/8.
                let served_enough = !self.rules.h_fairness || self.wf.entities[q].service > self.max_budget() / 8;
                if c.seeky(&self.rules) && !raised_kept && served_enough {
                    sl = sl.min(MIN_TT_NS);
                }
            }
        }
        self.idle_timer = Some(now.saturating_add(sl));
        self.last_idling_start_ns = now;
        self.counts.idle_waits += 1;
    }

    // ---- Budget timeout ----

    fn set_budget_timeout(&mut self, q: Eid, now: Nanos) {
        let c = &self.queues[&q];
        let base = if c.sync { self.rules.timeout_sync_ns } else { self.rules.timeout_async_ns };
        // A raised queue's timeout grows with its weight: Linux for interactive raising, and
        // BFQ-v1 for BFQ+'s (bfq_set_budget_timeout, BFQ-v1 block/bfq-iosched.c:617-627:
        // timeout x weight / orig_weight, integer; the paper is silent).
        let scaled = match self.rules.variant {
            Variant::Linux => c.raised() && !c.wr.soft_rt,
            Variant::Plus => c.raised(),
            Variant::Original => false,
        };
        let w0 = c.orig_weight.max(1);
        let coeff = match (scaled, self.rules.variant) {
            (false, _) => 1,
            // v1's raised weight is a whole multiple of the original (stepwise), ours falls
            // continuously (the paper's linear rule): the ratio is rounded, not floored.
            (true, Variant::Plus) => ((self.weight_of(q) + w0 / 2) / w0).max(1),
            (true, _) => (self.weight_of(q) / w0).max(1),
        };
        let c = self.queues.get_mut(&q).expect("queue");
        c.budget_timeout_ns = now.saturating_add(base.saturating_mul(coeff));
        c.budget_new = false;
        self.last_budget_start_ns = now;
    }

    fn budget_timed_out(&self, q: Eid, now: Nanos) -> bool {
        let c = &self.queues[&q];
        !c.budget_new && now >= c.budget_timeout_ns
    }

    /// `bfq_may_expire_for_budg_timeout`: not while waiting with most of the budget used.
    fn may_expire_for_timeout(&self, q: Eid, now: Nanos) -> bool {
        let waiting = self.idle_timer.is_some() && self.in_service == Some(q);
        let e = &self.wf.entities[q];
        (!waiting || self.budget_left(q) >= e.budget / 3) && self.budget_timed_out(q, now)
    }

    // ---- Expiration ----

    /// Was the queue too slow to use its budget within the timeout (and, for the old rules,
    /// the peak-rate sample of the slot)? Returns (slow, slot duration ms).
    fn slot_end(&mut self, q: Eid, compensate: bool, reason: Reason, now: Nanos) -> (bool, u64) {
        let c = &self.queues[&q];
        let end = if compensate { self.last_idling_start_ns } else { now };
        let slot_ns = end.saturating_sub(self.last_budget_start_ns);
        let service = self.wf.entities[q].service;
        let budget = self.wf.entities[q].budget;
        if !c.sync {
            return (false, slot_ns / NS_PER_MS);
        }
        if self.rules.variant == Variant::Linux {
            if slot_ns < NS_PER_MS {
                return (false, self.rules.slice_idle_ns / NS_PER_MS);
            }
            let slow = slot_ns > 20 * NS_PER_MS && service < self.raw_max_budget / 2;
            return (slow, slot_ns / NS_PER_MS);
        }
        if c.budget_new || slot_ns < 100_000 {
            return (false, slot_ns / NS_PER_MS);
        }
        let seeky = c.seeky(&self.rules);
        let update = self.peak.slot_sample(service, slot_ns, seeky, reason == Reason::BudgetTimeout, self.rules.h_peak_rate);
        if update && self.rules.user_max_budget == 0 {
            self.raw_max_budget = max_budget_of(self.peak.rate, self.rules.timeout_sync_ns).max(1);
        }
        // Slow: at this rate the budget would not be used within the timeout.
        let expected = (service as u128 * self.rules.timeout_sync_ns as u128) / slot_ns.max(1) as u128;
        (expected < budget as u128, slot_ns / NS_PER_MS)
    }

    pub(super) fn expire(&mut self, q: Eid, compensate: bool, mut reason: Reason, now: Nanos) {
        let (slow, slot_ms) = self.slot_end(q, compensate, reason, now);
        let (sync, raised) = {
            let c = &self.queues[&q];
            (c.sync, c.raised())
        };
        let (budget, service) = (self.wf.entities[q].budget, self.wf.entities[q].service);
        let left = budget.saturating_sub(service);
        match self.rules.variant {
            Variant::Linux => {
                if !raised && (slow || (reason == Reason::BudgetTimeout && left >= budget / 3)) {
                    // bfq_bfqq_charge_time: max_budget x time / timeout, at least the service.
                    let timeout_ms = (self.rules.timeout_sync_ns / NS_PER_MS).max(1);
                    let for_time = self.raw_max_budget.saturating_mul(slot_ms.min(timeout_ms)) / timeout_ms;
                    let tot = for_time.max(service);
                    if tot > budget {
                        self.wf.entities[q].budget = tot;
                    }
                    self.wf.served(q, tot - service);
                    self.counts.full_charges += 1;
                }
                if reason == Reason::TooIdle && service <= 2 * budget / 10 {
                    self.queues.get_mut(&q).expect("queue").io_bound = false;
                }
            }
            _ => {
                let charge_full = if self.rules.h_fairness {
                    // 4.4: a slow queue with a small budget (<= B_max/8: it has just started, or
                    // does little I/O) is not charged; nor is one that used 2/3 of its budget.
                    let slow = slow && budget > self.max_budget() / 8;
                    (slow || reason == Reason::BudgetTimeout) && left >= budget / 3
                } else {
                    if slow && reason == Reason::TooIdle {
                        reason = Reason::BudgetTimeout;
                    }
                    reason == Reason::BudgetTimeout || !sync
                };
                if charge_full && budget > service {
                    self.wf.served(q, budget - service);
                    self.counts.full_charges += 1;
                }
            }
        }
        match reason {
            Reason::TooIdle => self.counts.too_idle += 1,
            Reason::BudgetTimeout => self.counts.budget_timeouts += 1,
            Reason::BudgetExhausted => self.counts.budget_exhausted += 1,
            Reason::NoMoreRequests => self.counts.no_more_requests += 1,
            Reason::Preempted => self.counts.preemptions += 1,
        }
        let empty = self.queues[&q].is_empty();
        let soft_rt_rule = self.rules.variant == Variant::Linux || (self.rules.variant == Variant::Plus && self.rules.h_soft_rt);
        if self.rules.variant == Variant::Linux && self.rules.low_latency && !raised {
            self.queues.get_mut(&q).expect("queue").wr.last_start_finish_ns = now;
        }
        if soft_rt_rule && self.rules.low_latency {
            if empty && self.queues[&q].dispatched == 0 {
                let t = self.softrt_next_start(q, now);
                self.queues.get_mut(&q).expect("queue").wr.soft_rt_next_start_ns = t;
            }
        }
        // Budget feedback.
        let (min, max) = (self.min_budget(), self.raw_max_budget);
        let exp = Expiring { sync, raised, budget: self.queues[&q].max_budget, service, dispatched: self.queues[&q].dispatched };
        if let Some(b) = next_budget(&self.rules, reason, exp, min, max) {
            let mut b = b.max(1);
            if self.budgets_assigned >= STATS_MIN_BUDGETS && self.rules.user_max_budget == 0 {
                b = b.min(self.raw_max_budget);
            }
            self.queues.get_mut(&q).expect("queue").max_budget = b;
        }
        let next = self.queues[&q].max_budget.max(self.next_charge(q));
        self.in_service = None;
        self.idle_timer = None;
        self.wf.expire(q, !empty, next);
        if empty {
            self.went_idle(q, now);
        }
        self.maybe_drop(q);
    }

    fn went_idle(&mut self, q: Eid, now: Nanos) {
        let c = self.queues.get_mut(&q).expect("queue");
        if !c.busy {
            return;
        }
        c.busy = false;
        c.idle_since_ns = now;
        let (class, raised) = (c.class, c.raised());
        self.busy_queues[class] = self.busy_queues[class].saturating_sub(1);
        if raised {
            self.wr_busy_queues = self.wr_busy_queues.saturating_sub(1);
        }
        self.refresh_counted(q);
    }

    // ---- Choosing the queue ----

    fn set_in_service(&mut self, now: Nanos) -> Option<Eid> {
        let idle_first = self.busy_queues[CLASS_IDLE] > 0 && now.saturating_sub(self.last_idle_class_ns) > IDLE_CLASS_TIMEOUT_NS;
        let q = self.wf.select(idle_first)?;
        self.in_service = Some(q);
        self.budgets_assigned = (self.budgets_assigned * 7 + 256) / 8;
        self.slot_dispatched = 0;
        self.counts.slots += 1;
        let linux = self.rules.variant == Variant::Linux;
        let c = self.queues.get_mut(&q).expect("queue");
        c.fifo_checked = false;
        c.budget_new = true;
        c.just_created = false;
        if c.class == CLASS_IDLE {
            self.last_idle_class_ns = now;
        }
        if linux {
            self.set_budget_timeout(q, now);
        }
        Some(q)
    }

    /// Linux `bfq_select_queue`: Some(queue) to dispatch from, None to wait.
    fn select_queue(&mut self, now: Nanos) -> Option<Eid> {
        let Some(q) = self.in_service else { return self.set_in_service(now) };
        let must_idle = self.queues[&q].is_empty() && self.better_to_idle(q);
        if self.may_expire_for_timeout(q, now) && !(self.rules.variant == Variant::Linux && must_idle) {
            self.expire(q, false, Reason::BudgetTimeout, now);
            return self.set_in_service(now);
        }
        if self.queues[&q].next_rq.is_some() {
            if self.next_charge(q) > self.budget_left(q) {
                self.expire(q, false, Reason::BudgetExhausted, now);
                return self.set_in_service(now);
            }
            if self.idle_timer.take().is_some() {
                self.counts.idle_hits += 1;
            }
            return Some(q);
        }
        if self.idle_timer.is_some() || (self.queues[&q].dispatched > 0 && self.better_to_idle(q)) {
            return None;
        }
        self.expire(q, false, Reason::NoMoreRequests, now);
        self.set_in_service(now)
    }

    /// Old BFQ's dispatch limits (bfq_quantum, async after sync).
    fn may_dispatch(&self, q: Eid) -> bool {
        let c = &self.queues[&q];
        let Some(quantum) = self.rules.quantum else { return true };
        let max = if c.class == CLASS_IDLE {
            1
        } else if !c.sync {
            self.rules.max_budget_async_rq.unwrap_or(quantum)
        } else {
            quantum
        };
        if c.dispatched >= max && (self.total_busy() > 1 || c.dispatched >= 4 * max) {
            return false;
        }
        !(self.sync_flight > 0 && !c.sync)
    }

    fn dispatch_from(&mut self, q: Eid, now: Nanos) -> Option<Request> {
        let fifo = self.queues.get_mut(&q).expect("queue").check_fifo(now);
        let key = fifo.or(self.queues[&q].next_rq)?;
        let charge = self.charge_of(q, self.queues[&q].request(key));
        if charge > self.budget_left(q) {
            // The FIFO's request does not fit: it leads the next slot.
            self.queues.get_mut(&q).expect("queue").next_rq = Some(key);
            self.expire(q, false, Reason::BudgetExhausted, now);
            return None;
        }
        let req = self.issue(q, key, charge)?;
        if self.rules.variant == Variant::Linux {
            let seeky_rq = self.last_position.abs_diff(req.start_sector) > queue::SEEK_THR_SECTORS;
            if self.peak.dispatch_sample(now, req.size_sectors as u64, seeky_rq, self.rq_in_driver - 1) && self.rules.user_max_budget == 0 {
                self.raw_max_budget = max_budget_of(self.peak.rate, self.rules.timeout_sync_ns).max(1);
            }
        }
        self.last_position = req.end_sector();
        self.raise_on_dispatch(q, charge, now);
        self.slot_dispatched += 1;
        let c = &self.queues[&q];
        let async_done = !c.sync && self.rules.max_budget_async_rq.is_some_and(|m| self.slot_dispatched >= m);
        if self.total_busy() > 1 && (async_done || c.class == CLASS_IDLE) {
            self.expire(q, false, Reason::BudgetExhausted, now);
        }
        Some(req)
    }

    fn dispatch(&mut self, now: Nanos) -> Option<Request> {
        for _ in 0..(self.total_busy() as usize + 4) * 2 {
            let q = self.select_queue(now)?;
            if self.rules.variant != Variant::Linux && !self.may_dispatch(q) {
                return None;
            }
            if let Some(r) = self.dispatch_from(q, now) {
                return Some(r);
            }
        }
        None
    }

    /// Requests queued, nothing at the drive, no timer and nothing chosen: serve the first
    /// queue B-WF2Q+ gives (counted: Linux cannot get here).
    fn rescue(&mut self, now: Nanos) -> Option<Request> {
        if let Some(q) = self.in_service {
            self.expire(q, false, Reason::NoMoreRequests, now);
        }
        let q = self.set_in_service(now)?;
        self.counts.stall_rescues += 1;
        let key = self.queues[&q].next_rq?;
        let charge = self.charge_of(q, self.queues[&q].request(key));
        let req = self.issue(q, key, charge)?;
        self.last_position = req.end_sector();
        Some(req)
    }

    /// A queued request leaves queue `q` for the drive: `charge` sectors of service, and the
    /// counts of requests queued, in the driver and sync ones in flight.
    fn issue(&mut self, q: Eid, key: Key, charge: u64) -> Option<Request> {
        let (back, pen) = (self.rules.back_seek_max_sectors, self.rules.back_seek_penalty);
        let req = self.queues.get_mut(&q).expect("queue").take(key, back, pen)?;
        self.where_queued.remove(&req.id);
        self.queued -= 1;
        self.wf.served(q, charge);
        let c = self.queues.get_mut(&q).expect("queue");
        c.dispatched += 1;
        if c.sync {
            self.sync_flight += 1;
        }
        self.rq_in_driver += 1;
        self.in_driver.insert(req.id, q);
        Some(req)
    }

    fn tick(&mut self, now: Nanos) {
        let Some(t) = self.idle_timer else { return };
        if now < t {
            return;
        }
        self.idle_timer = None;
        let Some(q) = self.in_service else { return };
        // Linux bfq_idle_slice_timer_body: a queue that got (small) requests meanwhile is served;
        // either way the body ends in bfq_schedule_dispatch.
        let timed_out = self.budget_timed_out(q, t);
        if timed_out || self.queues[&q].is_empty() {
            let reason = if timed_out { Reason::BudgetTimeout } else { Reason::TooIdle };
            self.expire(q, true, reason, t);
        }
        self.schedule_dispatch();
    }

    /// Linux `bfq_schedule_dispatch`: with requests queued, the queue runs from kblockd.
    fn schedule_dispatch(&mut self) {
        if self.queued > 0 {
            self.async_queue_run = true;
        }
    }

    /// Linux `bfq_update_hw_tag`, at each completion.
    fn update_hw_tag(&mut self) {
        self.max_rq_in_driver = self.max_rq_in_driver.max(self.rq_in_driver);
        let linux = self.rules.variant == Variant::Linux;
        if linux && self.hw_tag == Some(true) {
            return;
        }
        let threshold = if linux { 3 } else { 4 };
        let outstanding = self.rq_in_driver as usize + self.queued;
        if (linux && outstanding <= threshold) || (!linux && outstanding < threshold) {
            return;
        }
        if linux {
            if let Some(q) = self.in_service {
                let c = &self.queues[&q];
                if c.ttime.short(self.rules.slice_idle_ns)
                    && (c.dispatched as usize + c.len()) < threshold
                    && (self.rq_in_driver as usize) < threshold
                {
                    return;
                }
            }
        }
        self.hw_tag_samples += 1;
        if self.hw_tag_samples <= 32 {
            return;
        }
        self.hw_tag = Some(self.max_rq_in_driver as usize > threshold);
        self.max_rq_in_driver = 0;
        self.hw_tag_samples = 0;
    }

    /// The idle-to-busy switch of a queue (Linux bfq_bfqq_handle_idle_busy_switch).
    fn activate(&mut self, q: Eid, now: Nanos) {
        let arrived_in_time = {
            let c = &self.queues[&q];
            now <= c.ttime.last_end_request_ns.saturating_add(self.rules.slice_idle_ns.saturating_mul(3))
        };
        if self.rules.variant == Variant::Linux {
            let c = self.queues.get_mut(&q).expect("queue");
            if !c.io_bound {
                if arrived_in_time {
                    c.requests_within_timer += 1;
                    if c.requests_within_timer >= REQUESTS_WITHIN_TIMER {
                        c.io_bound = true;
                    }
                } else {
                    c.requests_within_timer = 0;
                }
            }
        }
        self.raise_on_activation(q, now);
        let c = self.queues.get_mut(&q).expect("queue");
        c.wr.last_idle_backlogged_ns = now;
        c.wr.service_from_backlogged = 0;
        c.busy = true;
        let (class, raised) = (c.class, c.raised());
        self.busy_queues[class] += 1;
        if raised {
            self.wr_busy_queues += 1;
        }
        let mut budget = self.queues[&q].max_budget.max(self.next_charge(q));
        if self.rules.variant == Variant::Linux && raised {
            budget = budget.min(2 * self.min_budget()).max(self.next_charge(q));
        }
        self.wf.activate(q, budget);
        self.refresh_counted(q);
        if self.rules.variant == Variant::Linux {
            self.maybe_preempt(q, now);
        }
    }

    /// Linux: a newly busy queue of a higher class or weight, or any when the in-service
    /// queue should not be idling, takes over if B-WF2Q+ would serve it next.
    fn maybe_preempt(&mut self, q: Eid, now: Nanos) {
        let Some(s) = self.in_service else { return };
        if s == q {
            return;
        }
        let (cq, cs) = (&self.queues[&q], &self.queues[&s]);
        let higher = cq.class < cs.class || (cq.class == cs.class && self.weight_of(q) > self.weight_of(s));
        let idle_pointless = self.idle_timer.is_some() && !self.better_to_idle(s);
        if (higher || idle_pointless) && self.wf.would_be_next(q) {
            self.expire(s, false, Reason::Preempted, now);
        }
    }
}

/// The next whole millisecond after `now`.
fn next_ms(now: Nanos) -> Nanos {
    (now / NS_PER_MS).saturating_add(1).saturating_mul(NS_PER_MS)
}

impl Scheduler for Bfq {
    fn name(&self) -> &str {
        self.name
    }

    fn add(&mut self, req: Request, cx: &Context) {
        let now = cx.now_ns;
        self.tick(now);
        if req.op == Op::Flush {
            self.flushes.push_back(req);
            return;
        }
        let q = self.queue_for(&req, now);
        let sync = is_sync(&req);
        {
            let linux = self.rules.variant == Variant::Linux;
            let cap = self.rules.slice_idle_ns.saturating_mul(2);
            let c = self.queues.get_mut(&q).expect("queue");
            if sync && c.sync && (!linux || (c.dispatched == 0 && !c.busy)) {
                c.ttime.update(now, cap);
            }
            c.seek.update(&req);
            // BFQ-v1 keeps the think time per process (its cfq_io_context) and samples it at
            // every request of the process, async ones too (bfq_rq_enqueued, BFQ-v1
            // block/bfq-iosched.c:1612); the process's sync queue holds it here.
            if !linux && !sync {
                let sync_q = self.procs.get(req.principal.pid).and_then(|p| p.sync_q);
                if let Some(c) = sync_q.and_then(|sq| self.queues.get_mut(&sq)) {
                    c.ttime.update(now, cap);
                }
            }
        }
        let fifo_ns = now.saturating_add(self.rules.fifo_expire_ns[sync as usize]);
        let (last, back, pen) = (self.last_position, self.rules.back_seek_max_sectors, self.rules.back_seek_penalty);
        let changed = self.queues.get_mut(&q).expect("queue").insert(req, fifo_ns, last, back, pen);
        self.where_queued.insert(req.id, (q, (req.start_sector, req.id)));
        self.queued += 1;
        if !self.queues[&q].busy {
            self.activate(q, now);
        } else if changed && self.in_service != Some(q) {
            let b = self.queues[&q].max_budget.max(self.next_charge(q));
            self.wf.update_budget(q, b);
        }
        if self.in_service == Some(q) {
            if self.rules.variant == Variant::Linux {
                let c = self.queues.get_mut(&q).expect("queue");
                c.requests_within_timer += 1;
                if c.requests_within_timer >= REQUESTS_WITHIN_TIMER {
                    c.io_bound = true;
                }
            }
            if self.idle_timer.is_some() {
                // Linux bfq_rq_enqueued: a lone small request waits for more (it may grow by
                // merging). BFQ-v1 has no such rule: a request of the waited-for queue stops the
                // timer and is dispatched (BFQ-v1 block/bfq-iosched.c:1625-1643); it came with
                // later versions (v7r8).
                let small = self.queues[&q].len() == 1 && req.size_sectors < 32;
                let timed_out = self.budget_timed_out(q, now);
                let linux = self.rules.variant == Variant::Linux;
                if linux && small && !timed_out && self.idling_boosts_thr_without_issues(q) {
                    return;
                }
                self.idle_timer = None;
                self.counts.idle_hits += 1;
                if timed_out {
                    self.expire(q, false, Reason::BudgetTimeout, now);
                }
            }
        }
    }

    fn next(&mut self, cx: &Context) -> Decision {
        let now = cx.now_ns;
        self.tick(now);
        if let Some(f) = self.flushes.pop_front() {
            return Decision::Dispatch(f, ArmPath::Direct);
        }
        if self.queued == 0 {
            return Decision::Empty;
        }
        if let Some(r) = self.dispatch(now) {
            return Decision::Dispatch(r, ArmPath::Direct);
        }
        if let Some(t) = self.idle_timer {
            return Decision::WaitUntil(t.max(now.saturating_add(1)));
        }
        if self.rq_in_driver > 0 {
            // Linux runs the queue again when a request completes or arrives, not on a clock
            // of BFQ's own (as cfq here): a budget timeout that passes meanwhile is noticed at
            // the next completion, where bfq_completed_request checks it, or behind blk-mq at
            // its delayed run 3 ms after this empty dispatch (the engine's, BLK_MQ_BUDGET_DELAY).
            return Decision::Empty;
        }
        match self.rescue(now) {
            Some(r) => Decision::Dispatch(r, ArmPath::Direct),
            None => Decision::WaitUntil(next_ms(now)),
        }
    }

    fn completed(&mut self, done: &Completion, cx: &Context) {
        let now = cx.now_ns;
        self.tick(now);
        let req = &done.request;
        let Some(q) = self.in_driver.remove(&req.id) else { return };
        self.update_hw_tag();
        self.rq_in_driver = self.rq_in_driver.saturating_sub(1);
        self.peak.last_completion_ns = now;
        let c = self.queues.get_mut(&q).expect("queue");
        c.dispatched = c.dispatched.saturating_sub(1);
        if c.sync {
            self.sync_flight = self.sync_flight.saturating_sub(1);
        }
        if is_sync(req) {
            c.ttime.last_end_request_ns = now;
        }
        self.refresh_counted(q);
        // Linux bfq_completed_request ends in bfq_schedule_dispatch when nothing is left in the
        // driver, unless it returned early to idle for the in-service queue.
        let mut idles = false;
        if self.in_service == Some(q) {
            if self.rules.variant == Variant::Linux {
                let empty = self.queues[&q].is_empty();
                if empty && self.better_to_idle(q) {
                    idles = true;
                    if self.queues[&q].dispatched == 0 {
                        self.arm_idle_timer(q, now);
                    }
                } else if self.may_expire_for_timeout(q, now) {
                    self.expire(q, false, Reason::BudgetTimeout, now);
                } else if empty && (self.queues[&q].dispatched == 0 || !self.better_to_idle(q)) {
                    if self.idling_off_by_raising(q) {
                        self.counts.no_idle_raised += 1;
                    }
                    self.expire(q, false, Reason::NoMoreRequests, now);
                }
            } else {
                if self.queues[&q].budget_new {
                    self.set_budget_timeout(q, now);
                }
                let c = &self.queues[&q];
                if self.budget_timed_out(q, now) {
                    self.expire(q, false, Reason::BudgetTimeout, now);
                } else if is_sync(req) && self.rq_in_driver == 0 && c.is_empty() && self.better_to_idle(q) {
                    // BFQ-v1 arms the timer when nothing of any queue is at the drive
                    // (bfq_completed_request, BFQ-v1 block/bfq-iosched.c:1714-1718: rq_in_driver
                    // == 0), not when the queue's own requests are done.
                    self.arm_idle_timer(q, now);
                } else if c.dispatched == 0 && c.is_empty() && self.idle_timer.is_none() {
                    // Nothing to wait for: the dispatch Linux schedules after the completion
                    // expires the queue (no more requests) even when nothing else is queued.
                    self.expire(q, false, Reason::NoMoreRequests, now);
                }
            }
        }
        if self.rules.variant == Variant::Linux && !idles && self.rq_in_driver == 0 {
            self.schedule_dispatch();
        }
        self.maybe_drop(q);
    }

    fn take_async_queue_run(&mut self) -> bool {
        std::mem::take(&mut self.async_queue_run)
    }

    fn process_event(&mut self, ev: ProcessEvent, cx: &Context) {
        let now = cx.now_ns;
        self.tick(now);
        match ev {
            ProcessEvent::Started { principal, weight } => {
                self.procs.get_or_insert_with(principal.pid, Proc::default).weight = (weight as u64).max(1);
            }
            ProcessEvent::GroupWeight { group, weight } => {
                let w = (weight as u64).clamp(1, MAX_WEIGHT);
                match self.cgroups.get(&group) {
                    Some(&g) => self.wf.set_weight(g, w),
                    None => {
                        let g = self.wf.new_group(ROOT, w);
                        self.cgroups.insert(group, g);
                    }
                }
            }
            ProcessEvent::Exited(p) => {
                let Some(proc_) = self.procs.remove(p.pid) else { return };
                let Some(q) = proc_.sync_q.filter(|q| self.queues.contains_key(q)) else { return };
                self.queues.get_mut(&q).expect("queue").alive = false;
                if self.in_service == Some(q) && self.queues[&q].is_empty() {
                    self.expire(q, false, Reason::NoMoreRequests, now);
                }
                self.maybe_drop(q);
            }
        }
    }

    fn queued(&self) -> usize {
        self.flushes.len() + self.queued
    }

    fn remove(&mut self, req: &Request, cx: &Context) -> bool {
        let Some((q, key)) = self.where_queued.remove(&req.id) else { return false };
        let (back, pen) = (self.rules.back_seek_max_sectors, self.rules.back_seek_penalty);
        if self.queues.get_mut(&q).expect("queue").take(key, back, pen).is_none() {
            return false;
        }
        self.queued -= 1;
        let c = &self.queues[&q];
        if c.is_empty() && c.busy && self.in_service != Some(q) {
            self.wf.deactivate(q);
            self.went_idle(q, cx.now_ns);
        }
        self.maybe_drop(q);
        true
    }

    /// Linux `bfq_allow_bio_merge`: only into a request of the queue the bio would join.
    fn allow_merge(&self, rq: &Request, bio: &Request) -> bool {
        if is_sync(bio) && !is_sync(rq) {
            return false;
        }
        let Some(&(rq_q, _)) = self.where_queued.get(&rq.id) else { return false };
        let bio_q = if is_sync(bio) {
            self.procs.get(bio.principal.pid).and_then(|p| p.sync_q)
        } else {
            let class = Self::class_of(bio.prio.class);
            let level = if class == CLASS_IDLE { 7 } else { (bio.prio.level as usize).min(7) };
            let g = self.cgroups.get(&bio.principal.group).copied().unwrap_or(ROOT);
            self.async_qs.get(&(g, class, level)).copied()
        };
        bio_q == Some(rq_q)
    }

    /// A queued request grew: re-sort it (the FIFO place stays).
    fn merged(&mut self, old: &Request, grown: Request, cx: &Context) {
        let Some(&(q, key)) = self.where_queued.get(&old.id) else { return };
        let (back, pen) = (self.rules.back_seek_max_sectors, self.rules.back_seek_penalty);
        let c = self.queues.get_mut(&q).expect("queue");
        let Some((_, fifo_ns)) = c.sort.get(&key).copied() else { return };
        c.take(key, back, pen);
        let last = self.last_position;
        let c = self.queues.get_mut(&q).expect("queue");
        let changed = c.insert(grown, fifo_ns, last, back, pen);
        self.where_queued.insert(grown.id, (q, (grown.start_sector, grown.id)));
        if changed && self.in_service != Some(q) && self.queues[&q].busy {
            let b = self.queues[&q].max_budget.max(self.next_charge(q));
            self.wf.update_budget(q, b);
        }
        let _ = cx;
    }

    fn is_work_conserving(&self) -> bool {
        false
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counts;
        vec![
            ("slots", c.slots),
            ("too_idle", c.too_idle),
            ("budget_timeouts", c.budget_timeouts),
            ("budget_exhausted", c.budget_exhausted),
            ("no_more_requests", c.no_more_requests),
            ("preemptions", c.preemptions),
            ("idle_waits", c.idle_waits),
            ("idle_hits", c.idle_hits),
            ("full_charges", c.full_charges),
            ("wr_starts", c.wr_starts),
            ("wr_ends", c.wr_ends),
            ("stall_rescues", c.stall_rescues),
            ("no_idle_raised", c.no_idle_raised),
            ("hw_tag", self.hw_tag.map_or(2, |b| b as u64)),
            ("max_budget_sectors", self.max_budget()),
            ("peak_rate_sectors_per_s", self.peak_rate_sectors_per_s()),
        ]
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod wf2q_tests;
