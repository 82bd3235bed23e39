//! Aged-SPTF (Iyer & Druschel 2001 section 3.3; Jacobson & Wilkes' aged SATF): SPTF on an
//! effective time `positioning - age_weight * waited`, so a request's priority rises with its
//! queueing time until it overrules the SPTF choice. It remembers whether aging overrode SPTF,
//! which the anticipation heuristic needs.

use super::queues::CylinderQueue;
use super::sptf_search::search;
use super::tunables::{Tunable, TunableValues};
use super::{Context, Policy};
use crate::device::ArmPath;
use crate::request::{Request, RequestId};
use crate::time::Nanos;
use std::collections::BTreeSet;

pub const TUNABLES: &[Tunable] = &[Tunable {
    name: "age_weight",
    default: 0.01,
    unit: "ns credit per ns waited",
    min: 0.0,
    max: 10.0,
    help: "W in T_eff = T_pos - W * T_wait; 0 is plain SPTF. At 0.01 a request that waited 1 s gains 10 ms",
}];

pub struct AgedSptf {
    queue: CylinderQueue,
    /// (issue time, id) of queued requests: the oldest bounds how much aging can matter.
    by_age: BTreeSet<(Nanos, RequestId)>,
    age_weight: f64,
    overrode: bool,
}

impl AgedSptf {
    pub fn new(t: &TunableValues) -> Self {
        AgedSptf { queue: CylinderQueue::default(), by_age: BTreeSet::new(), age_weight: t.get("age_weight"), overrode: false }
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
        self.by_age.insert((req.issue_ns, req.id));
        self.queue.insert(req, cx.device);
    }

    fn peek(&mut self, cx: &Context) -> Option<Request> {
        let &(oldest, _) = self.by_age.first()?;
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
        self.overrode = plain_best.map(|(_, id)| id) != Some(found.request.id);
        Some(found.request)
    }

    fn take(&mut self, req: &Request, cx: &Context) -> ArmPath {
        self.by_age.remove(&(req.issue_ns, req.id));
        self.queue.remove(req, cx.device);
        ArmPath::Direct
    }

    fn len(&self) -> usize {
        self.queue.len()
    }
}
