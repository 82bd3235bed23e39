//! Stride scheduling over disk time (Waldspurger & Weihl 1995; Iyer & Druschel 2001 sections
//! 2, 3.4, 3.5, 4.7): each process has a virtual clock (its "pass") that advances by the disk
//! time it received divided by its weight; the backlogged process with the least clock is served
//! (its oldest request). Waldspurger's stride is 1/tickets per quantum; a disk request is a
//! quantum of variable length, so the pass advances by the measured service time / weight.
//!
//! Relaxed form (`tau_ms > 0`, section 3.5): among processes whose clock is at most minclock +
//! tau, the request with the least positioning time. Bookkeeping (clocks, no banked credit,
//! relaxed search) is in [`share`](super::share).

use super::share::{ClockKind, ProportionalShare, Share, TAU};
use super::tunables::{Tunable, TunableValues};
use super::{Completion, Context, Policy, ProcessEvent};
use crate::device::ArmPath;
use crate::request::Request;

pub const TUNABLES: &[Tunable] = &[TAU];

pub struct Stride {
    share: Share,
}

impl Stride {
    pub fn new(t: &TunableValues) -> Self {
        Stride { share: Share::new(ClockKind::Pass, t.get("tau_ms")) }
    }

    pub fn share(&self) -> &Share {
        &self.share
    }
}

impl Policy for Stride {
    fn name(&self) -> &str {
        "stride"
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

impl ProportionalShare for Stride {
    fn virtual_clock(&self, pid: u32) -> Option<f64> {
        self.share.virtual_clock(pid)
    }
    fn min_backlogged_clock(&self) -> Option<f64> {
        self.share.min_clock()
    }
    fn tau(&self) -> f64 {
        self.share.tau_ns()
    }
    fn has_pending(&self, pid: u32) -> bool {
        self.share.has_pending(pid)
    }
}
