//! The event loop. A process's bio goes through the block layer (plugging, merging, request
//! allocation) to the scheduler; the scheduler is asked for requests while the drive has free
//! slots (`queue_depth`); the drive serves what it holds one at a time in its firmware's order;
//! a completion goes back to the scheduler, frees its request (which may wake sleeping
//! processes) and hands each of its bios back to the workload, which may issue more. All events
//! of one instant are handled before the scheduler is asked what to do, so a decision sees
//! everything that arrived at that time (Seltzer's queue of Q requests at time 0 is one queue,
//! not Q separate arrivals). The loop checks the scheduling invariants as it goes.

use super::control::RunControl;
use super::event_queue::EventQueue;
use crate::block::{BlockConfig, BlockCounters, BlockLayer};
use crate::device::drive_queue::{DriveQueue, DriveQueueConfig};
use crate::device::{Device, Service};
use crate::metrics::{Collector, RecordSink, RecordTimes, RequestRecord, RunAccumulator};
use crate::request::Op;
use crate::request::{Request, RequestId};
use crate::sched::{Completion, Context, Decision, Scheduler};
use crate::time::Nanos;
use crate::workload::{Emit, NewRequest, Workload};

// Kept small: the request in flight lives in the engine, not in its completion event.
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
    /// Requests (or bios) still queued, waiting or in flight at the end.
    pub left_behind: u64,
    /// Completions of a request that was not in flight (double or phantom completion).
    pub bad_completions: u64,
    /// When nothing is left behind: |bios submitted - bios completed| (0: none lost or
    /// completed twice through merges or splits).
    pub bios_unaccounted: u64,
}

/// Why a run ended before its workload did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `RunControl::cancel` (Ctrl-C): the results cover the run up to `at_ns`.
    Cancelled { at_ns: Nanos },
    /// `events` events happened at one simulated instant, `at_ns`: a workload looping in zero
    /// simulated time (which would never end).
    NoProgress { at_ns: Nanos, events: u64 },
}

/// Events allowed at one simulated instant before the run is declared stuck. Far above any real
/// same-instant batch (Seltzer's largest queue is 5,000 arrivals at time 0).
pub const MAX_EVENTS_AT_ONE_INSTANT: u64 = 1_000_000;
/// The engine updates `RunControl` and checks for cancellation every this many events.
const CONTROL_EVERY_EVENTS: u64 = 4096;

/// What a run keeps and who watches it.
#[derive(Default)]
pub struct SimOptions<'a> {
    /// The block layer (default: passthrough, as without one).
    pub block: Option<BlockConfig>,
    /// Queueing inside the drive (default: depth 1).
    pub drive: DriveQueueConfig,
    /// Keep every request's record in memory (`SimOutput::records`).
    pub keep_records: bool,
    /// Also hand every record to this sink as it completes.
    pub sink: Option<&'a mut dyn RecordSink>,
    pub control: Option<&'a RunControl>,
}

pub struct SimOutput {
    /// The summary's running totals and histograms (always kept).
    pub accumulator: RunAccumulator,
    /// Every request's record, only with `SimOptions::keep_records` (else empty).
    pub records: Vec<RequestRecord>,
    pub invariants: InvariantReport,
    /// The last completion: the run's length (trailing think times and timers do not count).
    pub end_ns: Nanos,
    /// The scheduler's own counters at the end (see `Scheduler::counters`).
    pub scheduler_counters: Vec<(&'static str, u64)>,
    /// Set when the run stopped early.
    pub stop: Option<Stop>,
    /// What the block layer did (None without a block layer).
    pub block: Option<BlockCounters>,
}

/// The command the mechanism is serving: the request, when the host dispatched it, and its
/// timing from the device.
type Serving = (Request, Nanos, Service);

struct Engine<'a> {
    device: &'a mut dyn Device,
    scheduler: &'a mut dyn Scheduler,
    workload: &'a mut dyn Workload,
    events: EventQueue<Event>,
    emit: Emit,
    /// Arrivals being delivered (a second buffer, reused).
    batch: Vec<(Nanos, NewRequest)>,
    collector: Collector<'a>,
    invariants: InvariantReport,
    next_id: RequestId,
    block: BlockLayer,
    passthrough: bool,
    drive: DriveQueue,
    serving: Option<Serving>,
    /// Bios handed back by a completion (a reused buffer).
    done_bios: Vec<Request>,
    bios_completed: u64,
    /// The device's head state has been brought up to `now` and nothing was served since.
    head_current: bool,
    /// The workload wants to know when its bios are admitted (`Workload::on_admitted`).
    admissions: bool,
    /// Admitted bio ids (a reused buffer).
    admitted: Vec<RequestId>,
    /// The workload counts some processes' requests under another pid (`Workload::account_pid`).
    remap_pids: bool,
    wake_at: Option<Nanos>,
    now: Nanos,
    last_completion_ns: Nanos,
}

impl Engine<'_> {
    fn arrive(&mut self, nr: NewRequest) {
        let bio = nr.into_request(self.next_id, self.now);
        self.next_id += 1;
        let cx = Context { now_ns: self.now, device: self.device.as_view(), in_flight: self.drive.outstanding() };
        if self.passthrough {
            self.block.counters.bios += 1;
            self.scheduler.add(bio, &cx);
        } else {
            self.block.submit(bio, self.scheduler, &cx);
        }
        self.workload.on_arrival(&bio, self.now, &mut self.emit);
        if self.admissions {
            if self.passthrough {
                self.workload.on_admitted(bio.id, self.now, &mut self.emit);
            } else {
                self.deliver_admissions();
            }
        }
    }

    /// Tells the workload which bios the block layer admitted; true if it emitted anything.
    fn deliver_admissions(&mut self) -> bool {
        let mut ids = std::mem::take(&mut self.admitted);
        self.block.take_admitted(&mut ids);
        for &id in &ids {
            self.workload.on_admitted(id, self.now, &mut self.emit);
        }
        ids.clear();
        self.admitted = ids;
        // Anything emitted (a throttled writer's sleep timer, a process event) is moved to the
        // queue at this instant, not only arrivals: left in the buffer, a timer would be pushed
        // at a later instant with a time already past.
        !self.emit.arrivals.is_empty() || !self.emit.timers.is_empty() || !self.emit.process_events.is_empty()
    }

    fn complete(&mut self) {
        let Some((req, dispatch_ns, service)) = self.serving.take() else {
            self.invariants.bad_completions += 1;
            return;
        };
        if service.completion_ns != self.now {
            self.invariants.bad_completions += 1;
        }
        self.drive.completed();
        self.last_completion_ns = self.now;
        let cx = Context { now_ns: self.now, device: self.device.as_view(), in_flight: self.drive.outstanding() };
        let done = Completion { request: req, dispatch_ns, positioning_ns: service.seek_ns + service.rotation_ns };
        self.scheduler.completed(&done, &cx);
        self.done_bios.clear();
        let (insert_ns, bios) = if self.passthrough {
            self.done_bios.push(req);
            (req.issue_ns, 1)
        } else {
            (self.block.insert_ns(&req), self.block.complete(&req, &mut self.done_bios, self.scheduler, &cx))
        };
        if self.admissions && !self.passthrough {
            // Processes woken by the freed request had their bios admitted.
            self.deliver_admissions();
        }
        let times = RecordTimes { insert_ns, dispatch_ns, bios };
        let pid = if self.remap_pids { self.workload.account_pid(req.principal.pid) } else { req.principal.pid };
        if pid == req.principal.pid {
            self.collector.record(&req, &service, times);
        } else {
            let counted = Request { principal: crate::request::Principal { pid, ..req.principal }, ..req };
            self.collector.record(&counted, &service, times);
        }
        self.bios_completed += self.done_bios.len() as u64;
        for i in 0..self.done_bios.len() {
            let bio = self.done_bios[i];
            self.workload.on_complete(&bio, self.now, &mut self.emit);
        }
    }

    /// Moves what the workload emitted into the event queue; arrivals due now are delivered at
    /// once (they would be the next events popped anyway, as nothing is due earlier).
    fn flush_emit(&mut self) {
        if !self.emit.process_events.is_empty() {
            let cx = Context { now_ns: self.now, device: self.device.as_view(), in_flight: self.drive.outstanding() };
            for ev in self.emit.process_events.drain(..) {
                self.scheduler.process_event(ev, &cx);
            }
        }
        for (at, token) in self.emit.timers.drain(..) {
            debug_assert!(at >= self.now, "a workload timer ({token:#x}) at {at} ns, before now ({} ns)", self.now);
            self.events.push(at, Event::WorkloadTimer(token));
        }
        while !self.emit.arrivals.is_empty() {
            // Swap buffers instead of allocating: delivering may emit more.
            std::mem::swap(&mut self.emit.arrivals, &mut self.batch);
            for i in 0..self.batch.len() {
                let (at, nr) = self.batch[i];
                if at <= self.now {
                    self.arrive(nr);
                } else {
                    self.events.push(at, Event::Arrival(nr));
                }
            }
            self.batch.clear();
            for (at, token) in self.emit.timers.drain(..) {
                self.events.push(at, Event::WorkloadTimer(token));
            }
        }
    }

    /// At the end of an instant: plugged bios go to the queue; the scheduler is asked for
    /// requests while the drive has free slots; the drive starts its next command if its
    /// mechanism is free.
    fn decide(&mut self) {
        if !self.passthrough {
            loop {
                let cx = Context { now_ns: self.now, device: self.device.as_view(), in_flight: self.drive.outstanding() };
                self.block.unplug(self.scheduler, &cx);
                // Submitters whose plugged bios were admitted may submit more at this instant.
                if !self.admissions || !self.deliver_admissions() {
                    break;
                }
                self.flush_emit();
            }
        }
        while self.drive.has_slot() && self.scheduler.queued() > 0 {
            if !self.drive.mechanism_busy() {
                // Bring the head state up to now (read-ahead) before a decision that uses it.
                self.advance_head();
            }
            let cx = Context { now_ns: self.now, device: self.device.as_view(), in_flight: self.drive.outstanding() };
            match self.scheduler.next(&cx) {
                Decision::Dispatch(req, path) => {
                    if !self.passthrough {
                        self.block.dispatched(&req);
                    }
                    self.drive.accept(req, path, self.device.as_view(), self.now);
                }
                Decision::WaitUntil(t) => {
                    if self.scheduler.is_work_conserving() && self.drive.outstanding() == 0 {
                        self.invariants.idled_with_work += 1;
                    }
                    let t = t.max(self.now);
                    if self.wake_at != Some(t) {
                        self.wake_at = Some(t);
                        self.events.push(t, Event::Wake);
                    }
                    break;
                }
                Decision::Empty => {
                    if self.scheduler.queued() > 0 && self.drive.outstanding() == 0 {
                        self.invariants.idled_with_work += 1;
                    }
                    break;
                }
            }
        }
        self.start_mechanism();
    }

    /// `Device::advance_to(now)`, once per instant and state (it walks the read-ahead stream).
    fn advance_head(&mut self) {
        if !self.head_current {
            self.device.advance_to(self.now);
            self.head_current = true;
        }
    }

    /// The drive's firmware picks the next command it holds, if the mechanism is free.
    fn start_mechanism(&mut self) {
        if self.serving.is_some() || self.drive.outstanding() == 0 {
            return;
        }
        // The firmware chooses from where the head is now.
        self.advance_head();
        let Some(q) = self.drive.start_next(self.device.as_view(), self.now) else {
            return;
        };
        let service = if q.req.op == Op::Flush {
            // The presets' caches write through: nothing to write back.
            Service { dispatch_ns: self.now, completion_ns: self.now, ..Service::default() }
        } else {
            self.head_current = false;
            self.device.service(&q.req, q.path, self.now)
        };
        debug_assert!(service.completion_ns >= self.now);
        self.events.push(service.completion_ns, Event::Completion);
        self.serving = Some((q.req, q.accepted_ns, service));
    }
}

/// Runs the workload to completion on `device` under `scheduler`, keeping every record.
pub fn simulate(device: &mut dyn Device, scheduler: &mut dyn Scheduler, workload: &mut dyn Workload) -> SimOutput {
    simulate_with(device, scheduler, workload, SimOptions { keep_records: true, ..SimOptions::default() })
}

/// Runs the workload to completion (or until cancelled, or stuck at one instant) with `options`.
pub fn simulate_with<'a>(
    device: &'a mut dyn Device,
    scheduler: &'a mut dyn Scheduler,
    workload: &'a mut dyn Workload,
    options: SimOptions<'a>,
) -> SimOutput {
    let control = options.control;
    let block_cfg = options.block.unwrap_or_else(BlockConfig::passthrough);
    let mut e = Engine {
        device,
        scheduler,
        workload,
        events: EventQueue::default(),
        emit: Emit::default(),
        batch: Vec::new(),
        collector: Collector::new(options.keep_records, options.sink),
        invariants: InvariantReport::default(),
        next_id: 0,
        block: BlockLayer::new(block_cfg),
        passthrough: block_cfg.is_passthrough(),
        drive: DriveQueue::new(options.drive),
        serving: None,
        done_bios: Vec::new(),
        bios_completed: 0,
        head_current: false,
        admissions: false,
        admitted: Vec::new(),
        remap_pids: false,
        wake_at: None,
        now: 0,
        last_completion_ns: 0,
    };
    e.remap_pids = e.workload.remaps_pids();
    if e.workload.wants_admissions() {
        e.admissions = true;
        e.block.track_admissions();
    }
    e.workload.start(&mut e.emit);
    e.flush_emit();
    e.decide();
    let (mut events, mut events_at_instant, mut stop) = (0u64, 0u64, None);
    while let Some((t, ev)) = e.events.pop() {
        debug_assert!(t >= e.now, "time went backwards: {t} < {}", e.now);
        events += 1;
        events_at_instant = if t == e.now { events_at_instant + 1 } else { 0 };
        if events_at_instant >= MAX_EVENTS_AT_ONE_INSTANT {
            stop = Some(Stop::NoProgress { at_ns: t, events: events_at_instant });
            break;
        }
        if events % CONTROL_EVERY_EVENTS == 0 {
            if let Some(c) = control {
                c.report(e.collector.accumulator.requests(), t);
                if c.is_cancelled() {
                    stop = Some(Stop::Cancelled { at_ns: e.now });
                    break;
                }
            }
        }
        if t != e.now {
            e.head_current = false;
        }
        e.now = t;
        match ev {
            Event::Arrival(nr) => e.arrive(nr),
            Event::Completion => e.complete(),
            Event::WorkloadTimer(token) => e.workload.on_timer(token, t, &mut e.emit),
            Event::Wake => {
                if e.wake_at == Some(t) {
                    e.wake_at = None;
                }
            }
        }
        e.flush_emit();
        if e.events.peek_time() == Some(t) {
            continue; // more happens at this instant: decide once all of it is known
        }
        e.decide();
    }
    // A run stopped early leaves work behind by design: that is not a broken invariant.
    let held = e.scheduler.queued() as u64 + e.drive.outstanding() as u64 + e.block.held_bios() as u64;
    if stop.is_none() {
        e.invariants.left_behind = held;
        // With nothing left, every bio submitted came back exactly once (a merged request
        // completes all its bios).
        if held == 0 {
            e.invariants.bios_unaccounted = e.block.counters.bios.abs_diff(e.bios_completed);
        }
    }
    let scheduler_counters = e.scheduler.counters();
    let block = (!e.passthrough).then_some(e.block.counters);
    let (accumulator, records) = e.collector.finish();
    SimOutput { accumulator, records, invariants: e.invariants, end_ns: e.last_completion_ns, scheduler_counters, stop, block }
}
