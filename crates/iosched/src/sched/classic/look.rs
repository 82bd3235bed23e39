//! LOOK: the elevator as operating systems implement it. Sweep in one direction in sector
//! order, and reverse as soon as no request lies ahead (the arm does not travel to the edge).

use crate::device::ArmPath;
use crate::request::Request;
use crate::sched::queues::SectorQueue;
use crate::sched::tunables::Tunable;
use crate::sched::{Context, Policy};

pub const TUNABLES: &[Tunable] = &[];

/// Shared by SCAN and LOOK: they order requests identically; SCAN also sends the arm to the
/// edge of the disk before reversing.
#[derive(Default)]
pub struct Elevator {
    queue: SectorQueue,
    /// Start sector of the last request taken (None: start from the device's head).
    position: Option<u64>,
    downward: bool,
    to_edge: bool,
    /// The candidate `peek` chose: (id, reverses, path).
    pending: Option<(u64, bool, ArmPath)>,
}

impl Elevator {
    pub fn new(to_edge: bool) -> Self {
        Elevator { to_edge, ..Elevator::default() }
    }

    pub fn add(&mut self, req: Request) {
        self.queue.insert(req);
    }

    pub fn peek(&mut self, cx: &Context) -> Option<Request> {
        let at = self.position.unwrap_or_else(|| cx.device.head_sector());
        let ahead = if self.downward { self.queue.at_or_before(at) } else { self.queue.at_or_after(at) };
        let (req, reverses) = match ahead {
            Some(r) => (*r, false),
            None => {
                let behind = if self.downward { self.queue.at_or_after(at) } else { self.queue.at_or_before(at) };
                (*behind?, true)
            }
        };
        let path = if reverses && self.to_edge {
            ArmPath::Through(if self.downward { 0 } else { cx.device.cylinders() - 1 })
        } else {
            ArmPath::Direct
        };
        self.pending = Some((req.id, reverses, path));
        Some(req)
    }

    pub fn take(&mut self, req: &Request) -> ArmPath {
        self.queue.remove(req);
        let path = match self.pending.take() {
            Some((id, reverses, path)) if id == req.id => {
                self.downward ^= reverses;
                path
            }
            _ => ArmPath::Direct,
        };
        self.position = Some(req.start_sector);
        path
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Removes a queued request without moving the sweep (a merge took it).
    pub fn remove(&mut self, req: &Request) -> bool {
        if self.pending.is_some_and(|(id, _, _)| id == req.id) {
            self.pending = None;
        }
        self.queue.remove(req).is_some()
    }
}

pub struct Look(pub Elevator);

impl Default for Look {
    fn default() -> Self {
        Look(Elevator::new(false))
    }
}

impl Policy for Look {
    fn name(&self) -> &str {
        "look"
    }

    fn add(&mut self, req: Request, _cx: &Context) {
        self.0.add(req)
    }

    fn peek(&mut self, cx: &Context) -> Option<Request> {
        self.0.peek(cx)
    }

    fn take(&mut self, req: &Request, _cx: &Context) -> ArmPath {
        self.0.take(req)
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
