//! Per-process bookkeeping shared by the proportional-share policies ([Stride](stride),
//! [YFQ](yfq), [Lottery](lottery)): weights, virtual clocks, per-process queues,
//! the system virtual time, and the seek-reducing relaxed choice of Iyer & Druschel 2001
//! section 3.5.
//!
//! **Service is measured disk time.** When a request completes, its process is charged
//! `(completion time - dispatch_ns) / weight` nanoseconds of virtual time. Iyer & Druschel state
//! their proportions "in terms of disk utilization (not throughput)" (section 4.7) and give the
//! relaxation threshold tau in seconds ("could be 1 second", section 3.5), so the clocks must
//! count time, not requests or bytes: a clock is the disk time a process received divided by its
//! weight, and `tau_ms` is in the same unit.
//!
//! **Leaving and rejoining (pass clocks: Stride, Lottery).** As in Waldspurger & Weihl's stride
//! scheduling (`client_leave` / `client_join` with `remain`), a **global pass** `G` advances, at
//! each completion, by the service divided by the total weight of the *active* processes (those
//! with a request queued or in flight, the completing one included). A process becomes inactive
//! when it has nothing queued or in flight; it keeps its offset from `G`: on its return its clock
//! moves up by how much `G` advanced while it was away. So time away earns no credit (a process
//! that idled while others were served comes back level with them, not at the clock it left
//! with), and a process that lagged behind while it was backlogged keeps that lag, however the
//! disk was used during its think time. A new process starts at `G`.
//!
//! This replaced a rule that raised a returning process's clock to the system virtual time V (the
//! least backlogged clock at the last dispatch): a synchronous process between two requests then
//! lost all its lag whenever another process was dispatched during its think time (an
//! anticipation wait that timed out), which in the relaxed form, where the clocks may legitimately
//! drift apart by up to tau, forgave up to tau of lag each time: Stride 1:2 with tau = 1 s and the
//! combination heuristic gave 1:1.28 on TPC-B select (`git show 6011780^:docs/reproductions/iyer2001/stride-notes.md`; the ledger's stride claims now).
//!
//! **Tags (YFQ).** Start-time fair queueing: a request's start tag is max(V, the finish tag of
//! the process's previous request), with V the minimum clock of the backlogged processes, taken
//! at each dispatch over the processes with a queued request *including the one being
//! dispatched*, and never decreasing; so a process that idled cannot bank credit.
//!
//! Unknown processes (no `ProcessEvent::Started`) have weight 1.

pub mod lottery;
pub mod stride;
mod weight_tree;
pub mod yfq;

use crate::device::ArmPath;
use crate::fast_hash::FastMap;
use crate::pid_map::PidMap;
use crate::request::{Request, RequestId};
use crate::sched::classic::sptf_search::search;
use crate::sched::queues::CylinderQueue;
use crate::sched::tunables::Tunable;
use crate::sched::{Completion, Context, Policy, ProcessEvent};
use crate::small_sorted_map::SmallSortedMap;
use std::collections::{BTreeSet, VecDeque};
use weight_tree::WeightTree;

/// The relaxation threshold every proportional-share policy declares.
pub const TAU: Tunable = Tunable {
    name: "tau_ms",
    integer: false,
    default: 0.0,
    unit: "ms of virtual time",
    min: 0.0,
    max: 3_600_000.0,
    help: "relaxation threshold (disk time / weight): 0 strict; > 0 serve the request with the least positioning time among \
           processes with clock <= minclock + tau (Iyer & Druschel 3.5: 'could be 1 second')",
};

/// What the anticipation heuristics of sections 3.4-3.5 read from a proportional-share policy.
/// Clocks are in nanoseconds of virtual time (disk time / weight).
pub trait ProportionalShare: Policy {
    /// The clock `pid` has, or would have if it issued a request now (raised to the system
    /// virtual time); None for a process never seen.
    fn virtual_clock(&self, pid: u32) -> Option<f64>;
    /// The least clock among processes with a queued request (minclock); None if none.
    fn min_backlogged_clock(&self) -> Option<f64>;
    /// The relaxation threshold tau (ns of virtual time; 0 = strict).
    fn tau(&self) -> f64;
    /// Whether `pid` has a request queued (not yet dispatched).
    fn has_pending(&self, pid: u32) -> bool;
}

/// How a process's clock is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockKind {
    /// Stride and Lottery: the pass, service / weight, charged at completion.
    Pass,
    /// YFQ: start and finish tags assigned at arrival from the expected service, corrected to the
    /// measured service at completion.
    Tags,
}

/// Keep-factor of the decayed mean of a process's service time (forgets 95% after ten requests,
/// like the anticipation statistics).
fn mean_keep() -> f64 {
    0.05f64.powf(0.1)
}

#[derive(Clone, Debug)]
pub struct ProcShare {
    pub weight: u32,
    /// Pass: disk time received / weight (ns). Tags: the finish tag of its last request.
    pub clock: f64,
    /// Tags only: (start, finish) tags of the queued requests, in arrival order. Tags are
    /// consumed in order whichever of its requests is dispatched (its requests are
    /// interchangeable for fairness; the relaxed form may serve them out of order).
    tags: VecDeque<(f64, f64)>,
    /// Pass only: the global pass when it last became inactive (nothing queued or in flight), or
    /// when it was first seen. On its return its clock moves up by how much the global pass
    /// advanced meanwhile (Waldspurger & Weihl's `remain`: the offset is kept).
    left_at: f64,
    /// Decayed mean of its measured service times (ns).
    service_ns: Option<f64>,
    /// Its queued requests by id (oldest first; a sorted vector while short).
    fifo: SmallSortedMap<RequestId, Request>,
    /// The same requests by cylinder, for the relaxed form (empty when strict).
    cyl: CylinderQueue,
    in_flight: u32,
    /// Its entry in [`Share`]'s clock order while backlogged: (ordering clock, oldest request).
    ranked: Option<(u64, RequestId)>,
}

impl ProcShare {
    fn new(weight: u32, clock: f64) -> Self {
        ProcShare {
            weight: weight.max(1),
            clock,
            tags: VecDeque::new(),
            left_at: clock,
            service_ns: None,
            fifo: SmallSortedMap::new(),
            cyl: CylinderQueue::default(),
            in_flight: 0,
            ranked: None,
        }
    }

    pub fn is_backlogged(&self) -> bool {
        !self.fifo.is_empty()
    }

    /// Has a request queued or in flight (a stride client that has not left).
    pub fn is_active(&self) -> bool {
        self.is_backlogged() || self.in_flight > 0
    }

    pub fn oldest(&self) -> Option<&Request> {
        self.fifo.first().map(|(_, r)| r)
    }
}

/// The shared state: processes by pid (never iterated: every choice goes through the orders
/// below, deterministic by pid and request id).
pub struct Share {
    procs: PidMap<ProcShare>,
    /// The backlogged processes by (ordering clock as [`clock_rank`], oldest queued request, pid):
    /// the first is the strict choice and holds minclock, where a pass over every process
    /// (three per request) took most of a run's time with a thousand processes.
    by_clock: BTreeSet<(u64, RequestId, u32)>,
    /// The backlogged processes' weights in pid order (the lottery's draw).
    backlogged: WeightTree,
    /// The sum of the active processes' weights (queued or in flight: the global pass's divisor).
    active_weight: u64,
    kind: ClockKind,
    /// System virtual time V (see the module doc): the tags' reference.
    vtime: f64,
    /// Pass only: the global pass (see the module doc): the pass clocks' reference.
    gpass: f64,
    tau_ns: f64,
    len: usize,
    /// Tags only: the virtual service charged in the tags of each request in flight.
    charged: FastMap<RequestId, f64>,
    /// Decayed mean service of all processes: the estimate for a process with no history.
    global_service_ns: Option<f64>,
}

impl Share {
    pub fn new(kind: ClockKind, tau_ms: f64) -> Self {
        Share {
            procs: PidMap::default(),
            by_clock: BTreeSet::new(),
            backlogged: WeightTree::default(),
            active_weight: 0,
            kind,
            vtime: 0.0,
            gpass: 0.0,
            tau_ns: tau_ms * 1e6,
            len: 0,
            charged: FastMap::default(),
            global_service_ns: None,
        }
    }

    pub fn relaxed(&self) -> bool {
        self.tau_ns > 0.0
    }

    pub fn tau_ns(&self) -> f64 {
        self.tau_ns
    }

    pub fn vtime(&self) -> f64 {
        self.vtime
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Process `pid`'s bookkeeping, if it has any.
    pub fn proc(&self, pid: u32) -> Option<&ProcShare> {
        self.procs.get(pid)
    }

    fn entry(&mut self, pid: u32) -> &mut ProcShare {
        let v = match self.kind {
            ClockKind::Pass => self.gpass,
            ClockKind::Tags => self.vtime,
        };
        self.procs.get_or_insert_with(pid, || ProcShare::new(1, v))
    }

    /// Brings `pid`'s place in the clock order and the backlogged weights up to date after its
    /// queue or clock changed.
    fn rerank(&mut self, pid: u32) {
        let kind = self.kind;
        let Some(p) = self.procs.get_mut(pid) else { return };
        let now = p.oldest().map(|r| (clock_rank(eff_of(kind, p)), r.id));
        if now == p.ranked {
            return;
        }
        match (p.ranked, now) {
            (None, Some(_)) => self.backlogged.set(pid, p.weight),
            (Some(_), None) => self.backlogged.remove(pid),
            _ => {}
        }
        if let Some((c, id)) = p.ranked {
            self.by_clock.remove(&(c, id, pid));
        }
        if let Some((c, id)) = now {
            self.by_clock.insert((c, id, pid));
        }
        p.ranked = now;
    }

    /// The backlogged process holding `ticket` when their weights are laid end to end in
    /// ascending pid order (None from [`Self::backlogged_weight`] on).
    pub fn backlogged_at(&self, ticket: u64) -> Option<u32> {
        self.backlogged.pick(ticket)
    }

    /// The sum of the backlogged processes' weights.
    pub fn backlogged_weight(&self) -> u64 {
        self.backlogged.total()
    }

    /// Adds a request; returns true if its process just became backlogged.
    pub fn add(&mut self, req: Request, cx: &Context) -> bool {
        let (kind, relaxed, v, g) = (self.kind, self.relaxed(), self.vtime, self.gpass);
        let global = self.global_service_ns;
        let pid = req.principal.pid;
        let p = self.entry(pid);
        let (was_idle, was_active) = (!p.is_backlogged(), p.is_active());
        match kind {
            ClockKind::Pass => {
                if !was_active {
                    p.clock += g - p.left_at;
                }
            }
            ClockKind::Tags => {
                // Start-time fair queueing: S = max(V, F_prev), F = S + expected service / weight.
                let expected = p.service_ns.or(global).unwrap_or(0.0);
                let start = v.max(p.clock);
                let finish = start + expected / p.weight as f64;
                p.clock = finish;
                p.tags.push_back((start, finish));
            }
        }
        p.fifo.insert(req.id, req);
        if relaxed {
            p.cyl.insert(req, cx.device);
        }
        if !was_active {
            self.active_weight += p.weight as u64;
        }
        self.len += 1;
        self.rerank(pid);
        was_idle
    }

    /// The least ordering clock among backlogged processes.
    pub fn min_clock(&self) -> Option<f64> {
        self.by_clock.first().map(|&(c, _, _)| clock_of_rank(c))
    }

    /// Strict choice: the backlogged process with the least clock (ties: the one holding the
    /// older request), and its oldest request.
    pub fn strict_pick(&self) -> Option<Request> {
        let &(_, id, pid) = self.by_clock.first()?;
        self.procs.get(pid).and_then(|p| p.fifo.get(&id)).copied()
    }

    /// Relaxed choice (section 3.5): among processes with clock <= minclock + tau, the request
    /// with the least positioning time (ties: the older). Each eligible process's requests are
    /// searched with the bounded SPTF search over its own cylinder queue.
    pub fn relaxed_pick(&self, cx: &Context) -> Option<Request> {
        let bound = self.min_clock()? + self.tau_ns;
        let last = cx.device.cylinders().saturating_sub(1);
        let mut best: Option<(f64, Request)> = None;
        // The eligible processes, least clock first (the choice below does not depend on the
        // order: ties go to the older request).
        let eligible = self.by_clock.iter().take_while(|&&(c, _, _)| clock_of_rank(c) <= bound);
        for p in eligible.filter_map(|&(_, _, pid)| self.procs.get(pid)) {
            let Some(found) = search(&p.cyl, cx, 0, last, |_| true, |_, pos| pos as f64, |seek| seek as f64) else {
                continue;
            };
            let better = match &best {
                None => true,
                Some((c, r)) => found.cost < *c || (found.cost == *c && found.request.id < r.id),
            };
            if better {
                best = Some((found.cost, found.request));
            }
        }
        best.map(|(_, r)| r)
    }

    /// Removes a request being dispatched; advances the system virtual time.
    pub fn take(&mut self, req: &Request, cx: &Context) {
        if let Some(m) = self.min_clock() {
            self.vtime = self.vtime.max(m);
        }
        let Some(p) = self.procs.get_mut(req.principal.pid) else {
            return;
        };
        if p.fifo.remove(&req.id).is_none() {
            return;
        }
        if !p.cyl.is_empty() {
            p.cyl.remove(req, cx.device);
        }
        p.in_flight += 1;
        if let Some((s, f)) = p.tags.pop_front() {
            self.charged.insert(req.id, f - s);
        }
        self.len -= 1;
        self.rerank(req.principal.pid);
    }

    /// Charges measured disk time: (completion - dispatch) / weight.
    pub fn completed(&mut self, done: &Completion, cx: &Context) {
        let service = cx.now_ns.saturating_sub(done.dispatch_ns) as f64;
        let k = mean_keep();
        self.global_service_ns = Some(self.global_service_ns.map_or(service, |m| k * m + (1.0 - k) * service));
        let charged = self.charged.remove(&done.request.id);
        if self.kind == ClockKind::Pass {
            // The global pass advances by the service over the weight of the active processes
            // (the completing one included).
            self.gpass += service / self.active_weight.max(1) as f64;
        }
        let g = self.gpass;
        let Some(p) = self.procs.get_mut(done.request.principal.pid) else {
            return;
        };
        let was_active = p.is_active();
        p.in_flight = p.in_flight.saturating_sub(1);
        if was_active && !p.is_active() {
            self.active_weight -= p.weight as u64;
        }
        p.service_ns = Some(p.service_ns.map_or(service, |m| k * m + (1.0 - k) * service));
        let actual = service / p.weight as f64;
        match self.kind {
            ClockKind::Pass => {
                p.clock += actual;
                if !p.is_active() {
                    p.left_at = g;
                }
            }
            ClockKind::Tags => {
                // The tags charged the expected service; correct the process's finish tag, and the
                // tags of its queued requests that were chained from it, by the difference.
                let delta = actual - charged.unwrap_or(0.0);
                p.clock += delta;
                for t in &mut p.tags {
                    t.0 += delta;
                    t.1 += delta;
                }
            }
        }
        self.rerank(done.request.principal.pid);
    }

    pub fn process_event(&mut self, ev: ProcessEvent) {
        match ev {
            ProcessEvent::Started { principal, weight } => {
                let p = self.entry(principal.pid);
                let (old, new) = (p.weight as u64, weight.max(1) as u64);
                p.weight = new as u32;
                let (active, backlogged) = (p.is_active(), p.is_backlogged());
                if active {
                    self.active_weight = self.active_weight - old + new;
                }
                if backlogged {
                    self.backlogged.set(principal.pid, new as u32);
                }
            }
            ProcessEvent::Exited(p) => {
                if self.procs.get(p.pid).is_some_and(|s| !s.is_backlogged() && s.in_flight == 0) {
                    self.procs.remove(p.pid);
                }
            }
            // Shares here are per process; group weights are for the group schedulers.
            ProcessEvent::GroupWeight { .. } => {}
        }
    }

    /// See [`ProportionalShare::virtual_clock`].
    pub fn virtual_clock(&self, pid: u32) -> Option<f64> {
        let p = self.procs.get(pid)?;
        Some(match self.kind {
            ClockKind::Pass if p.is_active() => p.clock,
            ClockKind::Pass => p.clock + self.gpass - p.left_at,
            ClockKind::Tags if p.is_backlogged() => eff_of(self.kind, p),
            ClockKind::Tags => p.clock.max(self.vtime),
        })
    }

    pub fn has_pending(&self, pid: u32) -> bool {
        self.procs.get(pid).is_some_and(|p| p.is_backlogged())
    }
}

/// The clock that orders a backlogged process: its pass, or its first queued start tag.
fn eff_of(kind: ClockKind, p: &ProcShare) -> f64 {
    match kind {
        ClockKind::Pass => p.clock,
        ClockKind::Tags => p.tags.front().map_or(p.clock, |t| t.0),
    }
}

/// A clock as a `u64` whose order is `f64::total_cmp`'s (the sign bit flips a positive value
/// above every negative one; a negative value's other bits are inverted, larger magnitude
/// lower).
fn clock_rank(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

fn clock_of_rank(r: u64) -> f64 {
    f64::from_bits(if r >> 63 == 1 { r & !(1 << 63) } else { !r })
}

/// Stride and YFQ: the [`Share`] bookkeeping as a policy, strict or relaxed by tau; they differ
/// only in how clocks are kept ([`ClockKind`]).
pub struct SharePolicy {
    name: &'static str,
    share: Share,
}

impl SharePolicy {
    pub fn new(name: &'static str, kind: ClockKind, tau_ms: f64) -> Self {
        SharePolicy { name, share: Share::new(kind, tau_ms) }
    }
}

impl Policy for SharePolicy {
    fn name(&self) -> &str {
        self.name
    }

    fn add(&mut self, req: Request, cx: &Context) {
        self.share.add(req, cx);
    }

    fn peek(&mut self, cx: &Context) -> Option<Request> {
        if self.share.relaxed() {
            self.share.relaxed_pick(cx)
        } else {
            self.share.strict_pick()
        }
    }

    fn take(&mut self, req: &Request, cx: &Context) -> ArmPath {
        self.share.take(req, cx);
        ArmPath::Direct
    }

    fn len(&self) -> usize {
        self.share.len()
    }

    fn completed(&mut self, done: &Completion, cx: &Context) {
        self.share.completed(done, cx);
    }

    fn process_event(&mut self, ev: ProcessEvent, _cx: &Context) {
        self.share.process_event(ev);
    }
}

impl HasShare for SharePolicy {
    fn share(&self) -> &Share {
        &self.share
    }
}

/// A policy built on [`Share`]: its clocks answer the heuristics' questions.
pub trait HasShare {
    fn share(&self) -> &Share;
}

impl<T: HasShare + Policy> ProportionalShare for T {
    fn virtual_clock(&self, pid: u32) -> Option<f64> {
        self.share().virtual_clock(pid)
    }
    fn min_backlogged_clock(&self) -> Option<f64> {
        self.share().min_clock()
    }
    fn tau(&self) -> f64 {
        self.share().tau_ns()
    }
    fn has_pending(&self, pid: u32) -> bool {
        self.share().has_pending(pid)
    }
}

#[cfg(test)]
mod tests;
