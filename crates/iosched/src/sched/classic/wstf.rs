//! WSTF (Seltzer 5.1.2): STF on a weighted time `T_w = T_real (M - E) / M`, where M is the
//! maximum acceptable response time and E the time the request has waited. As E approaches M
//! the weighted time falls to 0 and the request is served.

use super::sptf_search::search;
use crate::device::ArmPath;
use crate::request::{Request, RequestId};
use crate::sched::queues::CylinderQueue;
use crate::sched::tunables::{Tunable, TunableValues};
use crate::sched::{Context, Policy};
use crate::time::{ms_to_ns, Nanos};
use std::collections::BTreeSet;

pub const TUNABLES: &[Tunable] = &[Tunable {
    name: "max_response_ms",
    integer: false,
    default: 30_000.0,
    unit: "ms",
    min: 1.0,
    max: 3_600_000.0,
    help: "M: the response-time limit (Seltzer used 30 s, the Unix buffer-cache flush interval)",
}];

pub struct Wstf {
    queue: CylinderQueue,
    by_age: BTreeSet<(Nanos, RequestId)>,
    max_response_ns: Nanos,
}

impl Wstf {
    pub fn new(t: &TunableValues) -> Self {
        Wstf { queue: CylinderQueue::default(), by_age: BTreeSet::new(), max_response_ns: ms_to_ns(t.get("max_response_ms")) }
    }

    fn weight(&self, waited_ns: Nanos) -> f64 {
        let m = self.max_response_ns as f64;
        (m - waited_ns as f64) / m
    }

    /// Seltzer's weighted time while the request is within its limit. Past the limit (which the
    /// paper says never happened) the formula would favour the longest access among overdue
    /// requests; instead overdue requests go first, oldest first.
    fn weighted_ns(&self, positioning_ns: Nanos, waited_ns: Nanos) -> f64 {
        if waited_ns < self.max_response_ns {
            positioning_ns as f64 * self.weight(waited_ns)
        } else {
            -(waited_ns as f64)
        }
    }
}

impl Policy for Wstf {
    fn name(&self) -> &str {
        "wstf"
    }

    fn add(&mut self, req: Request, cx: &Context) {
        self.by_age.insert((req.issue_ns, req.id));
        self.queue.insert(req, cx.device);
    }

    fn peek(&mut self, cx: &Context) -> Option<Request> {
        let &(oldest, _) = self.by_age.first()?;
        let now = cx.now_ns;
        // The smallest weight any queued request has: the oldest one's.
        let min_weight = self.weight(now.saturating_sub(oldest));
        let last = cx.device.cylinders().saturating_sub(1);
        let found = search(
            &self.queue,
            cx,
            0,
            last,
            |_| true,
            |req, pos| self.weighted_ns(pos, now.saturating_sub(req.issue_ns)),
            |seek| {
                if min_weight > 0.0 {
                    seek as f64 * min_weight
                } else {
                    f64::NEG_INFINITY
                }
            },
        )?;
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

    fn remove(&mut self, req: &Request, cx: &Context) -> bool {
        self.by_age.remove(&(req.issue_ns, req.id));
        self.queue.remove(req, cx.device).is_some()
    }

    fn supports_merging(&self) -> bool {
        true
    }
}
