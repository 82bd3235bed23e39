//! noop (Linux block/noop-iosched.c; blk-mq: "none"): one FIFO, with every merge the block
//! layer finds. A request keeps its place in the FIFO when a bio merges into it (front or
//! back), and a request absorbed by its neighbour leaves the FIFO.
//!
//! Seltzer's FCFS (`fcfs`) orders the same way without the block layer's merges; with a
//! `[block]` table the two differ only in that noop's merges keep FIFO positions by request
//! id in O(log n).
//!
//! Behind blk-mq (`attach_hw_queues`) it is Linux's `none`, no elevator at all: requests take
//! blk-mq's own path of per-CPU software queues, direct issue and `dispatch_busy`
//! ([`blk_mq`]).

pub mod blk_mq;
mod fifo;

use crate::block::mq::queue_map::QueueMap;
use crate::device::ArmPath;
use crate::request::Request;
use crate::sched::tunables::Tunable;
use crate::sched::{Completion, Context, Decision, Scheduler};
use blk_mq::NoneMq;
use fifo::IdFifo;

pub const TUNABLES: &[Tunable] = &[];

/// Requests by id: ids are given in arrival order, so this is the FIFO. Behind blk-mq, `none`'s
/// queues instead.
#[derive(Default)]
pub struct Noop {
    fifo: IdFifo,
    mq: Option<NoneMq>,
}

impl Noop {
    /// blk-mq's `none` (None without blk-mq).
    pub fn blk_mq(&self) -> Option<&NoneMq> {
        self.mq.as_ref()
    }
}

impl Scheduler for Noop {
    fn name(&self) -> &str {
        "noop"
    }

    fn add(&mut self, req: Request, _cx: &Context) {
        match self.mq.as_mut() {
            Some(mq) => mq.add(req),
            None => {
                self.fifo.insert(req);
            }
        }
    }

    fn next(&mut self, cx: &Context) -> Decision {
        if self.mq.is_some() {
            return self.next_for_hw_queues(cx, &|_| true);
        }
        match self.fifo.pop_first() {
            Some(req) => Decision::Dispatch(req, ArmPath::Direct),
            None => Decision::Empty,
        }
    }

    /// blk-mq's `none` from now on (before the first request).
    fn attach_hw_queues(&mut self, map: &QueueMap) {
        debug_assert!(self.fifo.is_empty(), "hardware queues attached before any request");
        self.mq = Some(NoneMq::new(map));
    }

    /// The requests the hardware queues were sent, in the order sent (each has its tag).
    fn next_for_hw_queues(&mut self, cx: &Context, can_take: &dyn Fn(usize) -> bool) -> Decision {
        let Some(mq) = self.mq.as_mut() else {
            return self.next(cx);
        };
        match mq.next_sent(can_take) {
            Some(req) => Decision::Dispatch(req, ArmPath::Direct),
            None => Decision::Empty,
        }
    }

    fn completed(&mut self, done: &Completion, _cx: &Context) {
        if let Some(mq) = self.mq.as_mut() {
            mq.completed(&done.request);
        }
    }

    fn queued(&self) -> usize {
        match &self.mq {
            Some(mq) => mq.queued(),
            None => self.fifo.len(),
        }
    }

    fn remove(&mut self, req: &Request, _cx: &Context) -> bool {
        match self.mq.as_mut() {
            Some(mq) => mq.remove(req),
            None => self.fifo.remove(req.id).is_some(),
        }
    }

    fn allow_merge(&self, rq: &Request, bio: &Request) -> bool {
        self.mq.as_ref().is_none_or(|mq| mq.allow_merge(rq, bio))
    }

    fn allow_request_merge(&self, low: &Request, high: &Request) -> bool {
        self.mq.as_ref().is_none_or(|mq| mq.allow_request_merge(low, high))
    }

    /// blk-mq's none: `blk_mq_sched_bio_merge` scans the CPU's software queue
    /// (`blk_bio_list_merge`); the single-queue noop goes through `elv_merge`.
    fn merges_by_list(&self) -> bool {
        self.mq.is_some()
    }

    fn allow_discard_merge(&self, rq: &Request, bio: &Request) -> bool {
        self.mq.as_ref().is_none_or(|mq| mq.allow_discard_merge(rq, bio))
    }

    fn merged(&mut self, _old: &Request, grown: Request, _cx: &Context) {
        match self.mq.as_mut() {
            Some(mq) => mq.merged(grown),
            None => {
                if let Some(r) = self.fifo.get_mut(grown.id) {
                    *r = grown;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
