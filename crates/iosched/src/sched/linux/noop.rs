//! noop (Linux block/noop-iosched.c; blk-mq: "none"): one FIFO, with every merge the block
//! layer finds. A request keeps its place in the FIFO when a bio merges into it (front or
//! back), and a request absorbed by its neighbour leaves the FIFO.
//!
//! Seltzer's FCFS (`fcfs`) orders the same way without the block layer's merges; with a
//! `[block]` table the two differ only in that noop's merges keep FIFO positions by request
//! id in O(log n).

use crate::device::ArmPath;
use crate::request::{Request, RequestId};
use crate::sched::tunables::Tunable;
use crate::sched::{Context, Decision, Scheduler};
use std::collections::BTreeMap;

pub const TUNABLES: &[Tunable] = &[];

/// Requests by id: ids are given in arrival order, so this is the FIFO.
#[derive(Default)]
pub struct Noop {
    fifo: BTreeMap<RequestId, Request>,
}

impl Scheduler for Noop {
    fn name(&self) -> &str {
        "noop"
    }

    fn add(&mut self, req: Request, _cx: &Context) {
        self.fifo.insert(req.id, req);
    }

    fn next(&mut self, _cx: &Context) -> Decision {
        match self.fifo.pop_first() {
            Some((_, req)) => Decision::Dispatch(req, ArmPath::Direct),
            None => Decision::Empty,
        }
    }

    fn queued(&self) -> usize {
        self.fifo.len()
    }

    fn remove(&mut self, req: &Request, _cx: &Context) -> bool {
        self.fifo.remove(&req.id).is_some()
    }

    fn allow_merge(&self, _rq: &Request, _bio: &Request) -> bool {
        true
    }

    fn merged(&mut self, _old: &Request, grown: Request, _cx: &Context) {
        if let Some(r) = self.fifo.get_mut(&grown.id) {
            *r = grown;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{presets::preset, RotationalDisk};
    use crate::request::Principal;

    fn r(id: u64, start: u64) -> Request {
        Request {
            id,
            principal: Principal::default(),
            op: crate::request::Op::Read,
            sync: true,
            start_sector: start,
            size_sectors: 8,
            issue_ns: 0,
            flags: 0,
            prio: Default::default(),
        }
    }

    #[test]
    fn fifo_order_survives_merges() {
        let disk = RotationalDisk::new(preset("ibm-deskstar-34gxp").unwrap()).unwrap();
        let cx = Context { now_ns: 0, device: &disk, in_flight: 0 };
        let mut n = Noop::default();
        for (id, s) in [(0, 900), (1, 100), (2, 500)] {
            n.add(r(id, s), &cx);
        }
        // Request 1 grows at its front: it keeps its place (second).
        n.merged(&r(1, 100), Request { start_sector: 92, size_sectors: 16, ..r(1, 100) }, &cx);
        // Request 2 is absorbed by request 0's neighbour: it leaves.
        n.requests_merged(&r(0, 900), Request { size_sectors: 16, ..r(0, 900) }, &r(2, 500), &cx);
        let order: Vec<(u64, u64, u32)> = std::iter::from_fn(|| match n.next(&cx) {
            Decision::Dispatch(q, _) => Some((q.id, q.start_sector, q.size_sectors)),
            _ => None,
        })
        .collect();
        assert_eq!(order, vec![(0, 900, 16), (1, 92, 16)]);
    }
}
