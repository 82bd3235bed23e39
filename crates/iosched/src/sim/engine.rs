//! The event loop. Arrivals go to the scheduler; whenever the device is free the scheduler is
//! asked what to do; completions go back to the scheduler and to the workload, which may issue
//! more requests. The loop checks the scheduling invariants as it goes.

use super::event_queue::EventQueue;
use crate::device::Device;
use crate::metrics::{Collector, RequestRecord};
use crate::request::{Request, RequestId};

use crate::sched::{Context, Decision, Scheduler};
use crate::time::Nanos;
use crate::workload::{Emit, NewRequest, Workload};

// Kept small: the request in flight lives in the loop, not in its completion event.
enum Event {
    Arrival(NewRequest),
    Completion,
    WorkloadTimer(u64),
    Wake,
}

/// Counts of broken invariants (all zero in a correct run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct InvariantReport {
    /// A work-conserving scheduler left the device idle with requests queued.
    pub idled_with_work: u64,
    /// Requests still queued or in flight at the end.
    pub left_behind: u64,
    /// Completions of a request that was not in flight (double or phantom completion).
    pub bad_completions: u64,
}

pub struct SimOutput {
    pub records: Vec<RequestRecord>,
    pub invariants: InvariantReport,
    pub end_ns: Nanos,
}

/// Runs the workload to completion on `device` under `scheduler`.
pub fn simulate(device: &mut dyn Device, scheduler: &mut dyn Scheduler, workload: &mut dyn Workload) -> SimOutput {
    let mut events: EventQueue<Event> = EventQueue::default();
    let mut emit = Emit::default();
    let mut collector = Collector::default();
    let mut invariants = InvariantReport::default();
    let mut next_id: RequestId = 0;
    let mut in_flight: Option<(Request, crate::device::Service)> = None;
    let mut wake_at: Option<Nanos> = None;
    let mut now: Nanos = 0;

    workload.start(&mut emit);
    drain(&mut emit, &mut events);

    while let Some((t, ev)) = events.pop() {
        debug_assert!(t >= now, "time went backwards");
        now = t;
        match ev {
            Event::Arrival(nr) => {
                let req = nr.into_request(next_id, now);
                next_id += 1;
                let cx = Context { now_ns: now, device: device.as_view(), in_flight: in_flight.is_some() as u32 };
                scheduler.add(req, &cx);
                workload.on_arrival(&req, now, &mut emit);
                drain(&mut emit, &mut events);
            }
            Event::Completion => {
                let Some((req, service)) = in_flight.take() else {
                    invariants.bad_completions += 1;
                    continue;
                };
                if service.completion_ns != now {
                    invariants.bad_completions += 1;
                }
                collector.record(&req, &service);
                let cx = Context { now_ns: now, device: device.as_view(), in_flight: 0 };
                scheduler.completed(&req, &cx);
                workload.on_complete(&req, now, &mut emit);
                drain(&mut emit, &mut events);
            }
            Event::WorkloadTimer(token) => {
                workload.on_timer(token, now, &mut emit);
                drain(&mut emit, &mut events);
            }
            Event::Wake => {
                if wake_at != Some(now) {
                    continue; // superseded
                }
                wake_at = None;
            }
        }
        if in_flight.is_some() {
            continue;
        }
        let cx = Context { now_ns: now, device: device.as_view(), in_flight: 0 };
        match scheduler.next(&cx) {
            Decision::Dispatch(req, path) => {
                let service = device.service(&req, path, now);
                debug_assert!(service.completion_ns >= now);
                events.push(service.completion_ns, Event::Completion);
                in_flight = Some((req, service));
            }
            Decision::WaitUntil(t) => {
                if scheduler.is_work_conserving() {
                    invariants.idled_with_work += 1;
                }
                let t = t.max(now);
                if wake_at != Some(t) {
                    wake_at = Some(t);
                    events.push(t, Event::Wake);
                }
            }
            Decision::Empty => {
                if scheduler.queued() > 0 {
                    invariants.idled_with_work += 1;
                }
            }
        }
    }
    invariants.left_behind = scheduler.queued() as u64 + in_flight.is_some() as u64;
    SimOutput { records: collector.into_records(), invariants, end_ns: now }
}

fn drain(emit: &mut Emit, events: &mut EventQueue<Event>) {
    for (at, nr) in emit.arrivals.drain(..) {
        events.push(at, Event::Arrival(nr));
    }
    for (at, token) in emit.timers.drain(..) {
        events.push(at, Event::WorkloadTimer(token));
    }
}
