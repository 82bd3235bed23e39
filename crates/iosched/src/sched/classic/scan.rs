//! SCAN (Coffman et al.; Seltzer 4.3): the elevator that runs to the edge of the disk before
//! reversing. Same order as LOOK, but a reversal sends the arm to the last (or first) cylinder
//! first, which the device charges as seek time.

use super::look::Elevator;
use crate::device::ArmPath;
use crate::request::Request;
use crate::sched::tunables::Tunable;
use crate::sched::{Context, Policy};

pub const TUNABLES: &[Tunable] = &[];

pub struct Scan(Elevator);

impl Default for Scan {
    fn default() -> Self {
        Scan(Elevator::new(true))
    }
}

impl Policy for Scan {
    fn name(&self) -> &str {
        "scan"
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
