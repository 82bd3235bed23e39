//! FCFS (Linux: noop): serve requests in arrival order.

use crate::device::ArmPath;
use crate::request::Request;
use crate::sched::tunables::Tunable;
use crate::sched::{Context, Policy};
use std::collections::VecDeque;

pub const TUNABLES: &[Tunable] = &[];

#[derive(Default)]
pub struct Fcfs {
    queue: VecDeque<Request>,
}

impl Policy for Fcfs {
    fn name(&self) -> &str {
        "fcfs"
    }

    fn add(&mut self, req: Request, _cx: &Context) {
        self.queue.push_back(req);
    }

    fn peek(&mut self, _cx: &Context) -> Option<Request> {
        self.queue.front().copied()
    }

    fn take(&mut self, req: &Request, _cx: &Context) -> ArmPath {
        if self.queue.front().map(|r| r.id) == Some(req.id) {
            self.queue.pop_front();
        } else if let Some(i) = self.queue.iter().position(|r| r.id == req.id) {
            self.queue.remove(i);
        }
        ArmPath::Direct
    }

    fn len(&self) -> usize {
        self.queue.len()
    }

    fn remove(&mut self, req: &Request, _cx: &Context) -> bool {
        match self.queue.iter().position(|r| r.id == req.id) {
            Some(i) => self.queue.remove(i).is_some(),
            None => false,
        }
    }

    fn supports_merging(&self) -> bool {
        true
    }

    /// A merged request keeps its place in the FIFO.
    fn replace(&mut self, old: &Request, grown: Request, _cx: &Context) {
        if let Some(r) = self.queue.iter_mut().find(|r| r.id == old.id) {
            *r = grown;
        }
    }
}
