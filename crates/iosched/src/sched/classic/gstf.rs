//! GSTF (Seltzer 5.1.1): the disk is cut into groups of `group_cylinders` cylinders; STF is
//! applied within the current group until it is empty, then the head moves on to the next
//! group with requests (cyclically upward). With `frozen = 1`, the group's queue is frozen when
//! service in it starts: later arrivals for it wait for the next visit.

use super::sptf_search::search;
use crate::device::ArmPath;
use crate::request::{Request, RequestId};
use crate::sched::queues::CylinderQueue;
use crate::sched::tunables::{Tunable, TunableValues};
use crate::sched::{Context, Policy};

pub const TUNABLES: &[Tunable] = &[
    Tunable {
        name: "group_cylinders",
        integer: true,
        default: 0.0,
        unit: "cylinders",
        min: 0.0,
        max: 1e9,
        help: "cylinders per group; 0 means a quarter of the disk (Seltzer's GSTF210 on the 840-cylinder Eagle)",
    },
    Tunable {
        name: "frozen",
        integer: false,
        default: 0.0,
        unit: "bool",
        min: 0.0,
        max: 1.0,
        help: "1: freeze a group's queue when service in it starts",
    },
];

pub struct Gstf {
    queue: CylinderQueue,
    group_cylinders: u32,
    frozen: bool,
    /// Group being served, and (frozen variant) the newest request admitted to this visit.
    current: Option<(u32, RequestId)>,
    newest_id: RequestId,
}

impl Gstf {
    pub fn new(t: &TunableValues) -> Self {
        Gstf {
            queue: CylinderQueue::default(),
            group_cylinders: t.get("group_cylinders") as u32,
            frozen: t.get("frozen") >= 0.5,
            current: None,
            newest_id: 0,
        }
    }

    fn group_size(&self, cx: &Context) -> u32 {
        if self.group_cylinders == 0 {
            cx.device.cylinders().div_ceil(4).max(1)
        } else {
            self.group_cylinders
        }
    }

    /// Best request in group `g`, only those admitted up to `cutoff`.
    fn best_in(&self, cx: &Context, g: u32, cutoff: RequestId) -> Option<Request> {
        let size = self.group_size(cx);
        let lo = g * size;
        let hi = lo.saturating_add(size - 1).min(cx.device.cylinders().saturating_sub(1));
        search(&self.queue, cx, lo, hi, |r| r.id <= cutoff, |_, pos| pos as f64, |seek| seek as f64).map(|f| f.request)
    }
}

impl Policy for Gstf {
    fn name(&self) -> &str {
        "gstf"
    }

    fn add(&mut self, req: Request, cx: &Context) {
        self.newest_id = self.newest_id.max(req.id);
        self.queue.insert(req, cx.device);
    }

    fn peek(&mut self, cx: &Context) -> Option<Request> {
        if self.queue.is_empty() {
            return None;
        }
        let size = self.group_size(cx);
        let (group, cutoff) = self.current.unwrap_or((cx.device.head_cylinder() / size, self.newest_id));
        let cutoff = if self.frozen { cutoff } else { RequestId::MAX };
        if let Some(r) = self.best_in(cx, group, cutoff) {
            self.current = Some((group, cutoff));
            return Some(r);
        }
        // The group is done: move on to the next group (cyclically) that has requests.
        let next_cyl = (group + 1).saturating_mul(size);
        let (c, _) = self.queue.first_at_or_above(next_cyl).or_else(|| self.queue.first_at_or_above(0))?;
        let g = c / size;
        let cutoff = if self.frozen { self.newest_id } else { RequestId::MAX };
        self.current = Some((g, cutoff));
        self.best_in(cx, g, cutoff)
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
