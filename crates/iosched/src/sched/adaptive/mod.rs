//! adaptive: run-time scheduler selection by average request size (Seelam et al. 2005 section 6,
//! built rather than proposed). A table measured beforehand on the same device (here: by
//! simulation, `scenario::selection`) gives, for each request size, each candidate's
//! throughput; at run time the scheduler keeps a decayed mean of the size of the requests it
//! dispatches and, when the table's best scheduler for that size is another one, switches to it
//! the way Linux changes a queue's elevator (elevator_switch): requests arriving meanwhile are
//! held back, the old scheduler dispatches what it holds and the drive empties, then the new
//! scheduler starts, empty and without history, and gets the held requests in arrival order.

use super::tunables::{Tunable, TunableValues};
use super::{Completion, Context, Decision, ProcessEvent, Scheduler};
use crate::request::{Request, SECTOR_BYTES};
use crate::time::{Nanos, NS_PER_MS};
use std::collections::VecDeque;
use std::sync::Arc;

/// The schedulers the table compares: those of the paper's Linux 2.6.11 that exist here (its
/// fourth, CFQ, joins when it is implemented).
pub const CANDIDATES: [&str; 3] = ["noop", "deadline", "las-2.6.9"];
/// Counter names of requests dispatched under each candidate (same order).
const DISPATCHED: [&str; 3] = ["dispatched_noop", "dispatched_deadline", "dispatched_las-2.6.9"];

pub const TUNABLES: &[Tunable] = &[
    Tunable {
        name: "window_requests",
        integer: true,
        default: 64.0,
        unit: "requests",
        min: 1.0,
        max: 1e6,
        help: "the mean request size is decayed by 1/window per dispatched request; no switch before this many",
    },
    Tunable {
        name: "switch_interval_ms",
        integer: false,
        default: 1000.0,
        unit: "ms",
        min: 0.0,
        max: 3.6e6,
        help: "least time between two switches (a switch drains the queue)",
    },
    Tunable {
        name: "measure_ms",
        integer: false,
        default: 5000.0,
        unit: "ms",
        min: 100.0,
        max: 600_000.0,
        help: "simulated time of each point of the selection table (measured once per run)",
    },
    Tunable {
        name: "measure_processes",
        integer: true,
        default: 4.0,
        unit: "processes",
        min: 1.0,
        max: 64.0,
        help: "readers of the table's workload (each reads random blocks of one large file)",
    },
];

/// One row of the selection table: a request size and each candidate's measured throughput.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TablePoint {
    /// The sizes the measuring readers asked for: more than one when they gave the schedulers
    /// requests of the same mean size (an array cuts every bio at its chunk size), whose
    /// throughputs are then averaged, since at run time they cannot be told apart.
    pub readers_kib: Vec<f64>,
    /// The mean size of the requests the schedulers saw (after splitting and merging), the key
    /// the run-time mean is compared with.
    pub mean_request_kib: f64,
    /// MB/s (10^6 B/s) per candidate, in `CANDIDATES` order.
    pub mb_s: Vec<f64>,
}

impl TablePoint {
    /// The candidate with the highest throughput (the first on a tie).
    pub fn best(&self) -> usize {
        let mut best = 0;
        for (i, &v) in self.mb_s.iter().enumerate() {
            if v > self.mb_s[best] {
                best = i;
            }
        }
        best
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SelectionTable {
    pub candidates: Vec<&'static str>,
    /// Sorted by `mean_request_kib`.
    pub points: Vec<TablePoint>,
}

impl SelectionTable {
    /// The index of the best candidate for requests of `kib` on average: the point nearest in
    /// log size (request sizes are compared as ratios).
    pub fn best_for(&self, kib: f64) -> usize {
        let key = kib.max(1e-3).ln();
        let nearest =
            self.points.iter().min_by(|a, b| (a.mean_request_kib.ln() - key).abs().total_cmp(&(b.mean_request_kib.ln() - key).abs()));
        nearest.map_or(0, TablePoint::best)
    }
}

/// Builds a candidate by name with its default tunables.
pub type Builder = fn(&str) -> Result<Box<dyn Scheduler>, String>;

pub struct Adaptive {
    table: Arc<SelectionTable>,
    build: Builder,
    current: Box<dyn Scheduler>,
    current_index: usize,
    /// Switching to this candidate: the old one drains.
    switching_to: Option<usize>,
    held: VecDeque<Request>,
    mean_kib: f64,
    samples: u64,
    window: f64,
    interval_ns: Nanos,
    last_switch_ns: Nanos,
    switches: u64,
    drain_started_ns: Nanos,
    drain_ns_total: Nanos,
    dispatched: [u64; 3],
}

impl Adaptive {
    /// Starts with the table's best candidate for its smallest size.
    pub fn new(table: Arc<SelectionTable>, build: Builder, t: &TunableValues) -> Result<Self, String> {
        if table.points.is_empty() {
            return Err("the selection table has no points".into());
        }
        let first = table.points[0].best();
        // Every candidate must build (a switch builds a fresh one, as Linux does).
        for name in CANDIDATES {
            build(name)?;
        }
        Ok(Adaptive {
            current: build(CANDIDATES[first])?,
            current_index: first,
            table,
            build,
            switching_to: None,
            held: VecDeque::new(),
            mean_kib: 0.0,
            samples: 0,
            window: t.get("window_requests"),
            interval_ns: (t.get("switch_interval_ms") * NS_PER_MS as f64) as Nanos,
            last_switch_ns: 0,
            switches: 0,
            drain_started_ns: 0,
            drain_ns_total: 0,
            dispatched: [0; 3],
        })
    }

    pub fn current(&self) -> &'static str {
        CANDIDATES[self.current_index]
    }

    pub fn mean_request_kib(&self) -> f64 {
        self.mean_kib
    }

    fn note_dispatch(&mut self, req: &Request, now: Nanos) {
        self.dispatched[self.current_index] += 1;
        let kib = req.size_sectors as f64 * SECTOR_BYTES as f64 / 1024.0;
        self.samples += 1;
        // A plain mean until the window fills, then an exponential one.
        let w = (self.samples as f64).min(self.window);
        self.mean_kib += (kib - self.mean_kib) / w;
        if self.samples < self.window as u64 || now.saturating_sub(self.last_switch_ns) < self.interval_ns {
            return;
        }
        let best = self.table.best_for(self.mean_kib);
        if best != self.current_index {
            self.switching_to = Some(best);
            self.drain_started_ns = now;
        }
    }

    /// The old scheduler is empty and the drive idle: the new one takes over (the old one stays
    /// if the new cannot be built, which `new` ruled out).
    fn finish_switch(&mut self, to: usize, cx: &Context) {
        self.switching_to = None;
        if let Ok(s) = (self.build)(CANDIDATES[to]) {
            self.current = s;
            self.current_index = to;
        }
        self.switches += 1;
        self.last_switch_ns = cx.now_ns;
        self.drain_ns_total += cx.now_ns - self.drain_started_ns;
        while let Some(r) = self.held.pop_front() {
            self.current.add(r, cx);
        }
    }
}

impl Scheduler for Adaptive {
    fn name(&self) -> &str {
        "adaptive"
    }

    fn add(&mut self, req: Request, cx: &Context) {
        if self.switching_to.is_some() {
            self.held.push_back(req);
        } else {
            self.current.add(req, cx);
        }
    }

    fn next(&mut self, cx: &Context) -> Decision {
        if let Some(to) = self.switching_to {
            if self.current.queued() > 0 {
                let d = self.current.next(cx);
                if matches!(d, Decision::Dispatch(..)) {
                    self.dispatched[self.current_index] += 1;
                }
                return d;
            }
            if cx.in_flight > 0 {
                // Asked again at the next completion.
                return Decision::Empty;
            }
            self.finish_switch(to, cx);
        }
        let d = self.current.next(cx);
        if let Decision::Dispatch(r, _) = &d {
            let r = *r;
            self.note_dispatch(&r, cx.now_ns);
        }
        d
    }

    fn completed(&mut self, done: &Completion, cx: &Context) {
        self.current.completed(done, cx);
    }

    fn process_event(&mut self, ev: ProcessEvent, cx: &Context) {
        self.current.process_event(ev, cx);
    }

    fn queued(&self) -> usize {
        self.current.queued() + self.held.len()
    }

    fn remove(&mut self, req: &Request, cx: &Context) -> bool {
        if let Some(i) = self.held.iter().position(|r| r.id == req.id) {
            self.held.remove(i);
            return true;
        }
        self.current.remove(req, cx)
    }

    fn allow_merge(&self, rq: &Request, bio: &Request) -> bool {
        // A held request waits outside any scheduler: no merges into it.
        !self.held.iter().any(|r| r.id == rq.id) && self.current.allow_merge(rq, bio)
    }

    fn allow_request_merge(&self, low: &Request, high: &Request) -> bool {
        !self.held.iter().any(|r| r.id == low.id || r.id == high.id) && self.current.allow_request_merge(low, high)
    }

    fn front_merges(&self) -> bool {
        self.current.front_merges()
    }

    fn merges_by_list(&self) -> bool {
        self.current.merges_by_list()
    }

    fn allow_discard_merge(&self, rq: &Request, bio: &Request) -> bool {
        !self.held.iter().any(|r| r.id == rq.id) && self.current.allow_discard_merge(rq, bio)
    }

    fn merged(&mut self, old: &Request, grown: Request, cx: &Context) {
        self.current.merged(old, grown, cx);
    }

    fn requests_merged(&mut self, into: &Request, grown: Request, absorbed: &Request, cx: &Context) {
        self.current.requests_merged(into, grown, absorbed, cx);
    }

    fn limit_depth(&self, req: &Request, nr_requests: u32) -> u32 {
        self.current.limit_depth(req, nr_requests)
    }

    fn is_work_conserving(&self) -> bool {
        false
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = vec![("switches", self.switches), ("drain_ms_total", self.drain_ns_total / NS_PER_MS)];
        for (i, name) in DISPATCHED.iter().enumerate() {
            c.push((name, self.dispatched[i]));
        }
        c
    }
}

#[cfg(test)]
mod tests;
