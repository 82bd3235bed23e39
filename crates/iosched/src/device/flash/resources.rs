//! The drive's internal resources, each busy until a time: every die (its array and page
//! register), every channel (the bus its dies share) and the host link. A command reserves
//! them in order from when its data is ready: first come, first served per resource, as each
//! die's and channel's queue in the controller (MQSim's transaction scheduling unit serves its
//! per-die queues in order; ours has no read priority over queued programs).

use crate::time::Nanos;

#[derive(Clone, Debug, Default)]
pub struct Resources {
    pub die_free_ns: Vec<Nanos>,
    pub channel_free_ns: Vec<Nanos>,
    pub link_free_ns: Nanos,
}

impl Resources {
    pub fn new(dies: u32, channels: u32) -> Self {
        Resources { die_free_ns: vec![0; dies as usize], channel_free_ns: vec![0; channels as usize], link_free_ns: 0 }
    }
}

/// Reserves a resource free at `*free_ns` for `dur_ns` from `ready_ns` on: (start, end).
pub fn reserve(free_ns: &mut Nanos, ready_ns: Nanos, dur_ns: Nanos) -> (Nanos, Nanos) {
    let start = ready_ns.max(*free_ns);
    let end = start + dur_ns;
    *free_ns = end;
    (start, end)
}
