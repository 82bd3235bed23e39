//! Aged-SPTF (Iyer & Druschel 2001 section 3.3; Jacobson & Wilkes' aged SATF): a request's
//! priority rises with its queueing time until it overrules the SPTF choice, in two ways that can
//! be combined:
//! - a latency bound (Iyer & Druschel's configuration, section 4: "bounded per-request latency of
//!   1 second"): a request that has waited `max_latency_ms` is served next, oldest first;
//! - linear aging (Jacobson & Wilkes): SPTF on `positioning - age_weight * waited`.
//! It remembers whether aging overrode plain SPTF, which the anticipation heuristic needs.

use super::sptf_search::search;
use crate::device::ArmPath;
use crate::request::{Request, RequestId};
use crate::sched::queues::CylinderQueue;
use crate::sched::tunables::{Tunable, TunableValues};
use crate::sched::{Context, Policy};
use crate::time::{ms_to_ns, Nanos};
use std::collections::BTreeMap;

pub const TUNABLES: &[Tunable] = &[
    Tunable {
        name: "max_latency_ms",
        integer: false,
        default: 1000.0,
        unit: "ms",
        min: 0.0,
        max: 3_600_000.0,
        help: "a request that has waited this long is served next, oldest first; 0: no bound (Iyer & Druschel used 1 s)",
    },
    Tunable {
        name: "age_weight",
        integer: false,
        default: 0.0,
        unit: "ns credit per ns waited",
        min: 0.0,
        max: 10.0,
        help: "W in T_eff = T_pos - W * T_wait (Jacobson & Wilkes); 0: none. At 0.01 a request that waited 1 s gains 10 ms",
    },
];

pub struct AgedSptf {
    queue: CylinderQueue,
    /// Queued requests by (issue time, id): the oldest is the first to reach the latency bound
    /// and bounds how much linear aging can matter.
    by_age: BTreeMap<(Nanos, RequestId), Request>,
    max_latency_ns: Nanos,
    age_weight: f64,
    overrode: bool,
}

impl AgedSptf {
    pub fn new(t: &TunableValues) -> Self {
        AgedSptf {
            queue: CylinderQueue::default(),
            by_age: BTreeMap::new(),
            max_latency_ns: ms_to_ns(t.get("max_latency_ms")),
            age_weight: t.get("age_weight"),
            overrode: false,
        }
    }

    /// Whether the last `peek` picked a different request than plain SPTF would have.
    pub fn aging_overrode(&self) -> bool {
        self.overrode
    }
}

impl Policy for AgedSptf {
    fn name(&self) -> &str {
        "aged-sptf"
    }

    fn add(&mut self, req: Request, cx: &Context) {
        self.by_age.insert((req.issue_ns, req.id), req);
        self.queue.insert(req, cx.device);
    }

    fn peek(&mut self, cx: &Context) -> Option<Request> {
        let (&(oldest, _), &oldest_req) = self.by_age.first_key_value()?;
        if self.queue.len() == 1 {
            // One candidate is the oldest and SPTF's choice alike: no estimate is made.
            self.overrode = false;
            return Some(oldest_req);
        }
        let w = self.age_weight;
        let max_credit = w * cx.now_ns.saturating_sub(oldest) as f64;
        let mut plain_best: Option<(f64, RequestId)> = None;
        let last = cx.device.cylinders().saturating_sub(1);
        let found = search(
            &self.queue,
            cx,
            0,
            last,
            |_| true,
            |req, pos| {
                if plain_best.map_or(true, |(b, _)| (pos as f64) < b) {
                    plain_best = Some((pos as f64, req.id));
                }
                pos as f64 - w * cx.now_ns.saturating_sub(req.issue_ns) as f64
            },
            |seek| seek as f64 - max_credit,
        )?;
        let overdue = self.max_latency_ns > 0 && cx.now_ns.saturating_sub(oldest) >= self.max_latency_ns;
        let chosen = if overdue { oldest_req } else { found.request };
        self.overrode = plain_best.map(|(_, id)| id) != Some(chosen.id);
        Some(chosen)
    }

    fn take(&mut self, req: &Request, cx: &Context) -> ArmPath {
        self.by_age.remove(&(req.issue_ns, req.id));
        self.queue.remove(req, cx.device);
        ArmPath::Direct
    }

    fn len(&self) -> usize {
        self.queue.len()
    }

    fn remove(&mut self, req: &Request, cx: &Context) -> bool {
        self.by_age.remove(&(req.issue_ns, req.id));
        self.queue.remove(req, cx.device).is_some()
    }

    fn supports_merging(&self) -> bool {
        true
    }
}
