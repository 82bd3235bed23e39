//! C-LOOK: sweep upward in sector order; when no request lies ahead, jump to the lowest
//! queued request. (Iyer & Druschel call this CSCAN; it is FreeBSD's and Linux's elevator order.)

use crate::device::ArmPath;
use crate::request::Request;
use crate::sched::queues::SectorQueue;
use crate::sched::tunables::Tunable;
use crate::sched::{Context, Policy};

pub const TUNABLES: &[Tunable] = &[];

/// Shared by C-SCAN and C-LOOK: identical order; C-SCAN's arm also runs to the last cylinder
/// and back to cylinder 0 when it wraps.
#[derive(Default)]
pub struct CircularSweep {
    queue: SectorQueue,
    /// Start sector of the last request taken (None: start from the device's head).
    position: Option<u64>,
    full_return: bool,
    pending: Option<(u64, bool)>,
}

impl CircularSweep {
    pub fn new(full_return: bool) -> Self {
        CircularSweep { full_return, ..CircularSweep::default() }
    }

    pub fn add(&mut self, req: Request) {
        self.queue.insert(req);
    }

    pub fn peek(&mut self, cx: &Context) -> Option<Request> {
        let at = self.position.unwrap_or_else(|| cx.device.head_sector());
        let (req, wraps) = match self.queue.at_or_after(at) {
            Some(r) => (*r, false),
            None => (*self.queue.lowest()?, true),
        };
        self.pending = Some((req.id, wraps));
        Some(req)
    }

    pub fn take(&mut self, req: &Request, cx: &Context) -> ArmPath {
        self.queue.remove(req);
        let wraps = matches!(self.pending.take(), Some((id, true)) if id == req.id);
        self.position = Some(req.start_sector);
        if wraps && self.full_return {
            ArmPath::Wrap { edge: cx.device.cylinders() - 1, start: 0 }
        } else {
            ArmPath::Direct
        }
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Removes a queued request without moving the sweep (a merge took it).
    pub fn remove(&mut self, req: &Request) -> bool {
        if self.pending.is_some_and(|(id, _)| id == req.id) {
            self.pending = None;
        }
        self.queue.remove(req).is_some()
    }
}

pub struct CLook(pub CircularSweep);

impl Default for CLook {
    fn default() -> Self {
        CLook(CircularSweep::new(false))
    }
}

impl Policy for CLook {
    fn name(&self) -> &str {
        "clook"
    }

    fn add(&mut self, req: Request, _cx: &Context) {
        self.0.add(req)
    }

    fn peek(&mut self, cx: &Context) -> Option<Request> {
        self.0.peek(cx)
    }

    fn take(&mut self, req: &Request, cx: &Context) -> ArmPath {
        self.0.take(req, cx)
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn remove(&mut self, req: &Request, _cx: &Context) -> bool {
        self.0.remove(req)
    }

    fn supports_merging(&self) -> bool {
        true
    }
}
