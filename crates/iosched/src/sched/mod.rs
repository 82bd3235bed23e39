//! Scheduler contracts. A scheduler never reads a clock, never sleeps and never does I/O:
//! time and the device view come in through [`Context`], so the simulator, the trace replayer
//! and the real-I/O driver all call the same objects.
//!
//! Drivers assign request ids in arrival order (a later arrival has a larger id); policies use
//! the id as their FIFO tie-break.
//!
//! The schedulers live by family: `classic/` (the seek-reducing policies of the literature),
//! `share/` (proportional share: stride, YFQ, lottery), `linux/` (Linux's elevators, one
//! directory per family). Here, beside the contract: the `registry` that builds any of them by
//! name, their `tunables`, the sorted `queues` the seek-reducing families share, the `notices`
//! runs print about them, `adaptive` (Seelam et al.'s switch between registered schedulers: a
//! scheduler made of others, of no one family) and `scaling` (a driver that times any scheduler
//! through this contract alone).

pub mod adaptive;
pub mod classic;
pub mod linux;
pub mod notices;
pub mod queues;
pub mod registry;
pub mod scaling;
pub mod share;
pub mod tunables;

use crate::block::mq::queue_map::QueueMap;
use crate::device::{ArmPath, DeviceView};
use crate::request::{Principal, Request};
use crate::time::Nanos;

/// What a scheduler may know when it decides.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub now_ns: Nanos,
    pub device: &'a dyn DeviceView,
    /// Requests dispatched to the device and not yet completed.
    pub in_flight: u32,
}

/// The answer to "what now?".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Send this request to the device, the arm travelling as `ArmPath` says.
    Dispatch(Request, ArmPath),
    /// Keep the device idle; ask again at this time or when a request arrives.
    WaitUntil(Nanos),
    /// Nothing to send now (nothing queued, or the scheduler waits for a request at the drive):
    /// ask again when a request arrives or completes.
    Empty,
}

/// A finished request, as the driver reports it to the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub request: Request,
    pub dispatch_ns: Nanos,
    /// Time the device spent positioning (seek + rotation; about 0 for a cache hit), as measured
    /// by the simulator or estimated by a real-I/O driver.
    pub positioning_ns: Nanos,
}

/// Events about processes that some schedulers use (anticipation, cooperative schedulers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessEvent {
    /// A process appeared; `weight` is its share for proportional-share schedulers.
    Started { principal: Principal, weight: u32 },
    /// A group (cgroup) has this weight (blkio/io.weight: 1-1000, default 100); emitted before
    /// its first process starts.
    GroupWeight { group: u32, weight: u32 },
    /// A process will issue no more requests.
    Exited(Principal),
}

/// The full decision maker (like a Linux elevator's ops). Mandatory: `add` (insert), `next`
/// (dispatch), `queued`. The block layer's merge hooks have defaults that work for any
/// scheduler that can `remove` a queued request (Linux: allow_merge, request_merged,
/// requests_merged; limit_depth for request allocation).
pub trait Scheduler {
    fn name(&self) -> &str;
    fn add(&mut self, req: Request, cx: &Context);
    fn next(&mut self, cx: &Context) -> Decision;
    fn completed(&mut self, _done: &Completion, _cx: &Context) {}
    fn process_event(&mut self, _ev: ProcessEvent, _cx: &Context) {}
    /// Requests held by the scheduler (not yet dispatched).
    fn queued(&self) -> usize;
    /// Takes a queued request out without serving it (it is being merged into another).
    /// Returns false if it is not queued here. A scheduler that cannot remove requests
    /// returns false and says no to every merge (`allow_merge`).
    fn remove(&mut self, _req: &Request, _cx: &Context) -> bool {
        false
    }
    /// May `bio` join the queued request `rq` (the block layer has checked contiguity, op,
    /// sync, priority and size)? Linux: elevator allow_merge / bio_merge_ok.
    fn allow_merge(&self, _rq: &Request, _bio: &Request) -> bool {
        false
    }
    /// May the queued request `high` join the queued request `low` just below it (a bio closed
    /// the gap)? Linux: the elevator's request-merge check. Default: as `allow_merge`.
    fn allow_request_merge(&self, low: &Request, high: &Request) -> bool {
        self.allow_merge(low, high)
    }
    /// Whether to look for front merges (a bio ending where a queued request starts);
    /// deadline's `front_merges`.
    fn front_merges(&self) -> bool {
        true
    }
    /// Whether Linux finds a bio's merge by scanning the bio's software queue list
    /// (`blk_bio_list_merge`: blk-mq's none, kyber) rather than through `elv_merge` (the one-hit
    /// cache, the hash, the scheduler's front lookup). Only multi-range discards ask
    /// (`BlockLayer`: a discard joins a request wherever it lies, so where Linux looks decides
    /// which); `allow_merge` still says whether the bio may join a given request.
    fn merges_by_list(&self) -> bool {
        false
    }
    /// May the discard `bio` join the queued discard request `rq` as one more range (a
    /// multi-range discard merge, wherever it lies)? Default: `allow_merge`. blk-mq's none
    /// narrows it: a request still in a plug (sent this instant) takes only its own process's
    /// discards, as Linux's plug is per task (`blk_attempt_plug_merge`).
    fn allow_discard_merge(&self, rq: &Request, bio: &Request) -> bool {
        self.allow_merge(rq, bio)
    }
    /// A queued request grew by a merge: `old` as held, `grown` what it became (same id;
    /// back merge: its end moved; front merge: its start moved). Default: remove and re-add.
    fn merged(&mut self, old: &Request, grown: Request, cx: &Context) {
        if self.remove(old, cx) {
            self.add(grown, cx);
        }
    }
    /// The queued request `absorbed` joined the queued request `into`, which became `grown`:
    /// `absorbed` leaves the queue (Linux: requests_merged). Default: remove both, add `grown`.
    fn requests_merged(&mut self, into: &Request, grown: Request, absorbed: &Request, cx: &Context) {
        self.remove(absorbed, cx);
        self.merged(into, grown, cx);
    }
    /// How many requests like `req` may be allocated at once out of `nr_requests`
    /// (mq-deadline's async_depth limits asynchronous ones). Default: all.
    fn limit_depth(&self, _req: &Request, nr_requests: u32) -> u32 {
        nr_requests
    }
    /// Linux 2.6 before CFQ v2 (ll_rw_blk.c `get_request`: `blk_queue_full(q, rw) &&
    /// !ioc_batching(ioc) && !elv_may_queue(q, rw)`): when the request pool (`nr_requests`)
    /// is full, whether a process may still allocate a request like `req` (the scheduler
    /// exempts it). Default: no.
    fn may_queue_when_full(&self, _req: &Request, _nr_requests: u32) -> bool {
        false
    }
    /// A work-conserving scheduler never answers `WaitUntil` while it holds requests.
    fn is_work_conserving(&self) -> bool {
        true
    }
    /// Whether the scheduler has run the queue from kblockd since the engine last asked (Linux
    /// `blk_mq_run_hw_queues(q, true)`: BFQ's `bfq_schedule_dispatch`). Behind blk-mq such a run
    /// brings a pending delayed run forward to now (`mod_delayed_work`). Default: never.
    fn take_async_queue_run(&mut self) -> bool {
        false
    }
    /// blk-mq's map of requests onto hardware queues, given once before the first request to a
    /// scheduler behind blk-mq. A scheduler with state per hardware queue (kyber's lists) keeps
    /// it; default: ignored (one scheduler state per request queue, as mq-deadline and BFQ).
    fn attach_hw_queues(&mut self, _map: &QueueMap) {}
    /// `next` as blk-mq asks it: a request for a hardware queue that `can_take` allows (nothing
    /// waits on its dispatch list; on NVMe its tags may all be taken: the request then waits
    /// there for one, as Linux takes the elevator's request before its driver tag; on SATA and
    /// disks a queue is asked only with a tag free, the SCSI budget coming first). Default:
    /// `next` (one list per request queue).
    fn next_for_hw_queues(&mut self, cx: &Context, _can_take: &dyn Fn(usize) -> bool) -> Decision {
        self.next(cx)
    }
    /// Named event counts for reports (e.g. anticipation's waits and their outcomes).
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// A work-conserving ordering of queued requests. The anticipation framework wraps any Policy.
pub trait Policy {
    fn name(&self) -> &str;
    fn add(&mut self, req: Request, cx: &Context);
    /// The request this policy would serve now, without removing it.
    fn peek(&mut self, cx: &Context) -> Option<Request>;
    /// Removes a queued request (normally the one `peek` returned) and says how the arm gets there.
    fn take(&mut self, req: &Request, cx: &Context) -> ArmPath;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn completed(&mut self, _done: &Completion, _cx: &Context) {}
    /// A process started (with its weight) or exited; proportional-share policies keep per-process state.
    fn process_event(&mut self, _ev: ProcessEvent, _cx: &Context) {}
    /// Takes a queued request out without serving it (merged into another): unlike `take`, the
    /// sweep position and other dispatch state stay as they are. Returns false if it was not
    /// queued, or if this policy cannot remove requests (then it never merges).
    fn remove(&mut self, _req: &Request, _cx: &Context) -> bool {
        false
    }
    /// Whether `remove` is implemented (then the block layer may merge into queued requests).
    fn supports_merging(&self) -> bool {
        false
    }
    /// A queued request grew by a merge (same id): put `grown` where `old` was. Default:
    /// remove and add (right for position-ordered policies: a front merge moves the start);
    /// arrival-ordered policies keep the place.
    fn replace(&mut self, old: &Request, grown: Request, cx: &Context) {
        if self.remove(old, cx) {
            self.add(grown, cx);
        }
    }
}

/// Every policy is a scheduler: dispatch the candidate whenever asked.
impl<P: Policy> Scheduler for P {
    fn name(&self) -> &str {
        Policy::name(self)
    }

    fn add(&mut self, req: Request, cx: &Context) {
        Policy::add(self, req, cx)
    }

    fn next(&mut self, cx: &Context) -> Decision {
        match self.peek(cx) {
            Some(req) => {
                let path = self.take(&req, cx);
                Decision::Dispatch(req, path)
            }
            None => Decision::Empty,
        }
    }

    fn completed(&mut self, done: &Completion, cx: &Context) {
        Policy::completed(self, done, cx)
    }

    fn process_event(&mut self, ev: ProcessEvent, cx: &Context) {
        Policy::process_event(self, ev, cx)
    }

    fn queued(&self) -> usize {
        self.len()
    }

    fn remove(&mut self, req: &Request, cx: &Context) -> bool {
        Policy::remove(self, req, cx)
    }

    /// A policy that can remove requests merges.
    fn allow_merge(&self, _rq: &Request, _bio: &Request) -> bool {
        self.supports_merging()
    }

    fn merged(&mut self, old: &Request, grown: Request, cx: &Context) {
        Policy::replace(self, old, grown, cx)
    }
}
