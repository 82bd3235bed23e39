//! SSTF (Seltzer's SSF): serve the request on the nearest cylinder; rotation is ignored.
//! Equal distances up and down go to the older request.

use crate::device::ArmPath;
use crate::request::Request;
use crate::sched::queues::CylinderQueue;
use crate::sched::tunables::Tunable;
use crate::sched::{Context, Policy};

pub const TUNABLES: &[Tunable] = &[];

#[derive(Default)]
pub struct Sstf {
    queue: CylinderQueue,
}

impl Policy for Sstf {
    fn name(&self) -> &str {
        "sstf"
    }

    fn add(&mut self, req: Request, cx: &Context) {
        self.queue.insert(req, cx.device);
    }

    fn peek(&mut self, cx: &Context) -> Option<Request> {
        let head = cx.device.head_cylinder();
        let up = self.queue.first_at_or_above(head);
        let down = self.queue.first_below(head);
        match (up, down) {
            (Some((cu, ru)), Some((cd, rd))) => {
                let (du, dd) = (cu - head, head - cd);
                Some(if du < dd || (du == dd && ru.id < rd.id) { *ru } else { *rd })
            }
            (Some((_, r)), None) | (None, Some((_, r))) => Some(*r),
            (None, None) => None,
        }
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
