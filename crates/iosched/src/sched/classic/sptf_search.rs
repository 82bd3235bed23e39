//! Bounded shortest-positioning-time search. Candidates are visited in order of cylinder
//! distance from the head; the search stops once even a zero-rotation access at that distance
//! (its seek time, passed through `lower_bound`) cannot beat the best found. So long queues
//! are not scanned whole: the cost depends on how many requests lie within the winning seek.

use crate::request::Request;
use crate::sched::queues::{CylinderQueue, CylinderRange};
use crate::sched::Context;
use crate::time::Nanos;

/// The winner of a search and how many requests it evaluated.
pub struct Found {
    pub request: Request,
    pub cost: f64,
    pub evaluated: usize,
}

/// Finds the queued request in cylinders `[lo, hi]` with the least `cost(request, positioning_ns)`.
/// `lower_bound(seek_ns)` must not exceed the cost of any request whose seek takes `seek_ns`.
/// Ties go to the nearer cylinder, then upward, then the older request.
pub fn search(
    queue: &CylinderQueue,
    cx: &Context,
    lo: u32,
    hi: u32,
    mut eligible: impl FnMut(&Request) -> bool,
    mut cost: impl FnMut(&Request, Nanos) -> f64,
    lower_bound: impl Fn(Nanos) -> f64,
) -> Option<Found> {
    let head = cx.device.head_cylinder().clamp(lo, hi);
    let mut up = queue.ascending(head, hi).peekable();
    let mut down = head.checked_sub(1).map_or(CylinderRange::Empty, |below| queue.descending(lo, below)).peekable();
    let mut best: Option<Found> = None;
    let mut evaluated = 0;
    // The estimates share the drive's state at this instant: prepared once.
    let prep = cx.device.prepare_positioning(cx.now_ns);
    loop {
        let du = up.peek().map(|(c, _)| c - head);
        let dd = down.peek().map(|(c, _)| head - c);
        let (dist, item) = match (du, dd) {
            (None, None) => break,
            (Some(u), Some(d)) if d < u => (d, down.next()),
            (Some(u), _) => (u, up.next()),
            (None, Some(d)) => (d, down.next()),
        };
        let (_, placed) = item.unwrap();
        let req = &placed.req;
        if let Some(b) = &best {
            if lower_bound(cx.device.seek_lower_bound_ns(dist)) >= b.cost {
                break;
            }
        }
        if !eligible(req) {
            continue;
        }
        evaluated += 1;
        let c = cost(req, cx.device.prepared_positioning_ns(&prep, &placed.pos, req.size_sectors, req.op));
        if best.as_ref().map_or(true, |b| c < b.cost) {
            best = Some(Found { request: *req, cost: c, evaluated: 0 });
        }
    }
    best.map(|mut b| {
        b.evaluated = evaluated;
        b
    })
}
