//! Lottery scheduling of the disk (Waldspurger & Weihl 1994; Iyer & Druschel 2001 section 2):
//! at each decision a backlogged process is drawn with probability proportional to its weight
//! (its tickets), and its oldest request is served. The draw uses a PCG generator seeded by the
//! `seed` tunable, so runs are deterministic. A draw is kept until its request is dispatched or a
//! process becomes backlogged (so repeated `peek`s agree).
//!
//! The lottery itself keeps no history, but the virtual clocks of [`share`](super) are
//! kept as for Stride (measured disk time / weight, offset from the global pass kept across
//! think times and idling): the anticipation
//! heuristics read them, and the relaxed form uses them: with `tau_ms > 0` the choice is Stride's
//! relaxed one (least positioning time among processes with clock <= minclock + tau) and no
//! lottery is drawn.

use super::{ClockKind, HasShare, Share, TAU};
use crate::device::ArmPath;
use crate::request::Request;
use crate::sched::tunables::{Tunable, TunableValues};
use crate::sched::{Completion, Context, Policy, ProcessEvent};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

pub const TUNABLES: &[Tunable] = &[
    TAU,
    Tunable {
        name: "seed",
        integer: true,
        default: 1.0,
        unit: "",
        min: 0.0,
        max: 9_007_199_254_740_992.0,
        help: "seed of the lottery's PCG generator (an integer)",
    },
];

pub struct Lottery {
    share: Share,
    rng: Pcg64,
    /// The process drawn for the next dispatch.
    winner: Option<u32>,
    /// Draws made (for tests and reports).
    pub draws: u64,
}

impl Lottery {
    pub fn new(t: &TunableValues) -> Self {
        Lottery {
            share: Share::new(ClockKind::Pass, t.get("tau_ms")),
            rng: Pcg64::seed_from_u64(t.get("seed") as u64),
            winner: None,
            draws: 0,
        }
    }

    pub fn share(&self) -> &Share {
        &self.share
    }

    fn draw(&mut self) -> Option<u32> {
        let total = self.share.backlogged_weight();
        if total == 0 {
            return None;
        }
        let ticket = self.rng.gen_range(0..total);
        self.draws += 1;
        // The process where the running sum of weights in pid order passes the ticket.
        Some(self.share.backlogged_at(ticket).expect("the ticket lies below the total weight"))
    }
}

impl Policy for Lottery {
    fn name(&self) -> &str {
        "lottery"
    }

    fn add(&mut self, req: Request, cx: &Context) {
        if self.share.add(req, cx) {
            self.winner = None; // a new contender: draw again
        }
    }

    fn peek(&mut self, cx: &Context) -> Option<Request> {
        if self.share.relaxed() {
            return self.share.relaxed_pick(cx);
        }
        let valid = self.winner.is_some_and(|w| self.share.has_pending(w));
        if !valid {
            self.winner = self.draw();
        }
        let pid = self.winner?;
        self.share.proc(pid).and_then(|p| p.oldest()).copied()
    }

    fn take(&mut self, req: &Request, cx: &Context) -> ArmPath {
        self.share.take(req, cx);
        self.winner = None;
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

impl HasShare for Lottery {
    fn share(&self) -> &Share {
        &self.share
    }
}
