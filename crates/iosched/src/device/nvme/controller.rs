//! The NVMe controller's side of the queue pairs: commands wait in their submission queue (SQ)
//! from the moment the host rings its doorbell (after the host's CPU work: `ready_ns`) until the
//! controller fetches them, by arbitration (`arbitration.rs`), into execution. Each command's
//! completion entry goes to the SQ's paired completion queue; the host's tag for it frees then.
//!
//! `max_active`: commands the controller executes at once. Controllers do not publish an
//! internal limit; by default there is none (every fetchable command is fetched at once, so
//! arbitration only orders the commands that became fetchable at the same instant, which is
//! also the order in which they reserve the drive's dies, channels and link). A finite
//! `controller_commands` makes commands wait in their SQs, where arbitration decides.

use super::arbitration::Arbiter;
use crate::device::ArmPath;
use crate::request::Request;
use crate::time::Nanos;
use std::collections::VecDeque;

/// A command in a submission queue.
#[derive(Clone, Copy, Debug)]
pub struct Submitted {
    pub req: Request,
    pub path: ArmPath,
    /// When the scheduler dispatched it (the record's `dispatch_ns`).
    pub dispatched_ns: Nanos,
    /// When its SQ entry is written and the doorbell rung: fetchable from then on.
    pub ready_ns: Nanos,
}

#[derive(Debug)]
pub struct NvmeController {
    /// Each SQ in doorbell order (`ready_ns` non-decreasing).
    sqs: Vec<VecDeque<Submitted>>,
    arbiter: Arbiter,
    max_active: u32,
    active: u32,
    /// Commands submitted to each SQ and not yet completed.
    outstanding: Vec<u32>,
    /// The arbiter's grant being served: (SQ, commands left).
    grant: Option<(usize, u32)>,
    avail: Vec<u32>,
}

impl NvmeController {
    /// `max_active` 0: no limit.
    pub fn new(arbiter: Arbiter, max_active: u32) -> NvmeController {
        let n = arbiter.queues();
        NvmeController {
            sqs: vec![VecDeque::new(); n],
            arbiter,
            max_active: if max_active == 0 { u32::MAX } else { max_active },
            active: 0,
            outstanding: vec![0; n],
            grant: None,
            avail: vec![0; n],
        }
    }

    pub fn queues(&self) -> usize {
        self.sqs.len()
    }

    /// Commands submitted and not completed, over all SQs.
    pub fn outstanding(&self) -> u32 {
        self.outstanding.iter().sum()
    }

    /// Commands waiting in SQs (not fetched).
    pub fn waiting(&self) -> usize {
        self.sqs.iter().map(VecDeque::len).sum()
    }

    /// The host writes an SQ entry; it becomes fetchable at `cmd.ready_ns`.
    pub fn submit(&mut self, sq: usize, cmd: Submitted) {
        let q = &mut self.sqs[sq];
        // Doorbell order: a command whose host work ends earlier is in the ring first.
        let at = q.iter().rposition(|c| c.ready_ns <= cmd.ready_ns).map_or(0, |i| i + 1);
        q.insert(at, cmd);
        self.outstanding[sq] += 1;
    }

    /// The next command the controller fetches at `now` (None: nothing fetchable, or no room).
    pub fn fetch(&mut self, now: Nanos) -> Option<(usize, Submitted)> {
        if self.active >= self.max_active {
            return None;
        }
        if let Some((sq, left)) = self.grant {
            if left > 0 && self.sqs[sq].front().is_some_and(|c| c.ready_ns <= now) {
                return Some(self.take(sq));
            }
            self.grant = None;
        }
        let room = self.max_active - self.active;
        for (i, q) in self.sqs.iter().enumerate() {
            self.avail[i] = (q.iter().take_while(|c| c.ready_ns <= now).count() as u32).min(room);
        }
        let (sq, n) = self.arbiter.grant(&self.avail)?;
        self.grant = Some((sq, n));
        Some(self.take(sq))
    }

    fn take(&mut self, sq: usize) -> (usize, Submitted) {
        let cmd = self.sqs[sq].pop_front().expect("granted SQ holds a command");
        if let Some((_, left)) = self.grant.as_mut() {
            *left -= 1;
        }
        self.active += 1;
        (sq, cmd)
    }

    /// A command of `sq` completed (its completion queue entry posted).
    pub fn completed(&mut self, sq: usize) {
        debug_assert!(self.active > 0 && self.outstanding[sq] > 0);
        self.active -= 1;
        self.outstanding[sq] -= 1;
    }
}
