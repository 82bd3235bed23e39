//! C-SCAN (Seltzer 4.3): the one-directional scan. Requests are served upward in sector order;
//! at the end the arm pays one long seek to the last cylinder and back to cylinder 0.

use super::clook::CircularSweep;
use crate::device::ArmPath;
use crate::request::Request;
use crate::sched::tunables::Tunable;
use crate::sched::{Context, Policy};

pub const TUNABLES: &[Tunable] = &[];

pub struct CScan(CircularSweep);

impl Default for CScan {
    fn default() -> Self {
        CScan(CircularSweep::new(true))
    }
}

impl Policy for CScan {
    fn name(&self) -> &str {
        "cscan"
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
