//! SPTF (Seltzer's STF): serve the request with the shortest positioning time (seek +
//! rotational latency) from the current head state, found by a distance-bounded search.

use super::sptf_search::search;
use crate::device::ArmPath;
use crate::request::Request;
use crate::sched::queues::CylinderQueue;
use crate::sched::tunables::Tunable;
use crate::sched::{Context, Policy};

pub const TUNABLES: &[Tunable] = &[];

#[derive(Default)]
pub struct Sptf {
    queue: CylinderQueue,
}

impl Policy for Sptf {
    fn name(&self) -> &str {
        "sptf"
    }

    fn add(&mut self, req: Request, cx: &Context) {
        self.queue.insert(req, cx.device);
    }

    fn peek(&mut self, cx: &Context) -> Option<Request> {
        if self.queue.len() == 1 {
            // One candidate wins whatever its estimate: no estimate is made.
            return self.queue.first_at_or_above(0).map(|(_, r)| *r);
        }
        let last = cx.device.cylinders().saturating_sub(1);
        search(&self.queue, cx, 0, last, |_| true, |_, pos| pos as f64, |seek| seek as f64).map(|f| f.request)
    }

    fn take(&mut self, req: &Request, cx: &Context) -> ArmPath {
        self.queue.remove(req, cx.device);
        ArmPath::Direct
    }

    fn len(&self) -> usize {
        self.queue.len()
    }

    fn remove(&mut self, req: &Request, cx: &Context) -> bool {
        self.queue.remove(req, cx.device).is_some()
    }

    fn supports_merging(&self) -> bool {
        true
    }
}
