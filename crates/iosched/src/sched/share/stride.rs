//! Stride scheduling over disk time (Waldspurger & Weihl 1995; Iyer & Druschel 2001 sections
//! 2, 3.4, 3.5, 4.7): each process has a virtual clock (its "pass") that advances by the disk
//! time it received divided by its weight; the backlogged process with the least clock is served
//! (its oldest request). Waldspurger's stride is 1/tickets per quantum; a disk request is a
//! quantum of variable length, so the pass advances by the measured service time / weight.
//!
//! Relaxed form (`tau_ms > 0`, section 3.5): among processes whose clock is at most minclock +
//! tau, the request with the least positioning time. Bookkeeping (clocks, the global pass a
//! returning process keeps its offset from, relaxed search) is in [`share`](super).

use super::{ClockKind, SharePolicy, TAU};
use crate::sched::tunables::{Tunable, TunableValues};

pub const TUNABLES: &[Tunable] = &[TAU];

/// Stride is the shared proportional-share policy with pass clocks.
pub type Stride = SharePolicy;

pub fn new(t: &TunableValues) -> Stride {
    SharePolicy::new("stride", ClockKind::Pass, t.get("tau_ms"))
}
