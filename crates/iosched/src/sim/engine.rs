//! The event loop. A process's bio goes through the block layer (plugging, merging, request
//! allocation) to the scheduler; the scheduler is asked for requests while the drive has free
//! slots (`queue_depth`); the drive serves what it holds one at a time in its firmware's order;
//! a completion goes back to the scheduler, frees its request (which may wake sleeping
//! processes) and hands each of its bios back to the workload, which may issue more. A device
//! that serves several commands at once (`Device::concurrent_commands`, a flash drive) has up to
//! that many started, each with its own completion event; a disk has one. All events
//! of one instant are handled before the scheduler is asked what to do, so a decision sees
//! everything that arrived at that time (Seltzer's queue of Q requests at time 0 is one queue,
//! not Q separate arrivals). The loop checks the scheduling invariants as it goes.

use super::control::RunControl;
use super::event_queue::EventQueue;
use super::striping::Striping;
use crate::block::mq::{BlkMq, MqConfig};
use crate::block::{BlockConfig, BlockCounters, BlockLayer};
use crate::device::command_latency::{CommandLatency, LatencyCursor};
use crate::device::drive_queue::{DriveQueue, DriveQueueConfig};
use crate::device::nvme::{Arbiter, NvmeConfig, NvmeController, Submitted};
use crate::device::raid0::Raid0;
use crate::device::{ArmPath, Device, DiscardSupport, Service, AWAITS_WAKE};
use crate::metrics::{Collector, InvariantReport, RecordSink, RecordTimes, RequestRecord, RunAccumulator};
use crate::request::Op;
use crate::request::{Request, RequestId};
use crate::sched::{Completion, Context, Decision, Scheduler};
use crate::time::{Nanos, HORIZON_NS};
use crate::workload::{Emit, NewRequest, Workload};

// Kept small: the request in flight lives in the engine, not in its completion event.
enum Event {
    Arrival(NewRequest),
    /// The lane's mechanism finished its command (the request's id: a device serving several
    /// at once finishes them in any order).
    Completion(u32, RequestId),
    WorkloadTimer(u64),
    /// The lane's scheduler asked to be asked again (a request superseded by a later one is
    /// a no-op, as a re-armed kernel timer does not fire at its old time).
    Wake(u32),
    /// A command's host CPU work ends (blk-mq): it reaches the drive, which may take more (a
    /// decision for every lane, as any event).
    Ready,
    /// blk-mq's delayed queue run (`arm_null_dispatch_rerun`); one no longer pending is a no-op.
    Rerun(u32),
    /// The lane's device goes on with a command it started (`Service::resume_ns`).
    Resume(u32, RequestId),
}

/// Why a run ended before its workload did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `RunControl::cancel` (Ctrl-C): the results cover the run up to `at_ns`.
    Cancelled { at_ns: Nanos },
    /// `events` events happened at one simulated instant, `at_ns`: a workload looping in zero
    /// simulated time (which would never end).
    NoProgress { at_ns: Nanos, events: u64 },
    /// The next event lay at `at_ns`, at or beyond the end of the simulated clock
    /// (`time::HORIZON_NS`): a time computed out of range, not a result.
    Horizon { at_ns: Nanos },
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
    /// The host path's latency per command (default: none).
    pub command_latency: CommandLatency,
    /// blk-mq's hardware queues and the scheduler's CPU cost (default: none, one queue as
    /// before).
    pub mq: Option<MqConfig>,
    /// NVMe queue pairs in place of the drive queue (needs `mq`; default: none).
    pub nvme: Option<NvmeConfig>,
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
    /// The host CPU time the scheduler was charged and requests waited for it (ns), with blk-mq.
    pub host_cpu: Option<(Nanos, Nanos)>,
}

/// A command the mechanism is serving: the request, when the host dispatched it, and its
/// timing from the device.
type Serving = (Request, Nanos, Service);

/// One drive with its own request queue: the device, its scheduler, block layer and command
/// queue. A single disk is one lane; a RAID-0 array has a lane per member.
struct Lane<'a> {
    device: &'a mut dyn Device,
    scheduler: &'a mut dyn Scheduler,
    block: BlockLayer,
    drive: DriveQueue,
    /// The host path's latency of each command this drive starts.
    latency: LatencyCursor,
    /// The commands in service (at most the device's `concurrent_commands`; one for a disk).
    serving: Vec<Serving>,
    /// The instant the device's head state was last brought up to, if nothing was served since
    /// (a stamp, so that a new instant needs no pass over the lanes).
    head_at: Option<Nanos>,
    wake_at: Option<Nanos>,
    /// blk-mq's delayed queue run, when one is pending (armed when the elevator gave nothing).
    rerun_at: Option<Nanos>,
    /// blk-mq (None: one queue, no CPU cost, as before).
    mq: Option<BlkMq>,
    /// NVMe queue pairs (None: the drive queue).
    nvme: Option<NvmeController>,
}

struct Engine<'a> {
    lanes: Vec<Lane<'a>>,
    workload: &'a mut dyn Workload,
    events: EventQueue<Event>,
    emit: Emit,
    /// Arrivals being delivered (a second buffer, reused).
    batch: Vec<(Nanos, NewRequest)>,
    collector: Collector<'a>,
    invariants: InvariantReport,
    next_id: RequestId,
    passthrough: bool,
    /// RAID-0: the array's bios in flight (None: one disk).
    array: Option<Striping>,
    /// Pieces of the bio being submitted (a reused buffer).
    pieces: Vec<(usize, Request)>,
    /// Bios handed back by a completion (a reused buffer).
    done_bios: Vec<Request>,
    bios_completed: u64,
    /// The workload wants to know when its bios are admitted (`Workload::on_admitted`).
    admissions: bool,
    /// Admitted bio ids (a reused buffer).
    admitted: Vec<RequestId>,
    /// The workload counts some processes' requests under another pid (`Workload::account_pid`).
    remap_pids: bool,
    /// Resumptions armed and then superseded: the device woke the command before its armed time
    /// (`Device::woken`), so the event for (lane, command, time) is dropped when it comes.
    superseded: Vec<(u32, RequestId, Nanos)>,
    now: Nanos,
    last_completion_ns: Nanos,
}

macro_rules! lane_cx {
    ($lane:expr, $now:expr) => {
        Context {
            now_ns: $now,
            device: $lane.device.as_view(),
            in_flight: $lane.mq.as_ref().map_or_else(|| $lane.drive.outstanding(), |m| m.in_flight()),
        }
    };
}

impl Engine<'_> {
    fn arrive(&mut self, nr: NewRequest) {
        let bio = nr.into_request(self.next_id, self.now);
        self.next_id += 1;
        match self.array.as_mut() {
            None => self.submit_to(0, bio),
            Some(array) => {
                let mut pieces = std::mem::take(&mut self.pieces);
                array.cut(bio, &mut self.next_id, &mut pieces);
                for &(member, piece) in &pieces {
                    self.submit_to(member, piece);
                }
                pieces.clear();
                self.pieces = pieces;
            }
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

    fn submit_to(&mut self, lane: usize, bio: Request) {
        let now = self.now;
        let l = &mut self.lanes[lane];
        let cx = lane_cx!(l, now);
        if self.passthrough {
            l.block.counters.bios += 1;
            l.scheduler.add(bio, &cx);
        } else {
            l.block.submit(bio, l.scheduler, &cx);
        }
    }

    /// Tells the workload which bios the block layer admitted; true if it emitted anything. An
    /// array's bio is admitted once all its pieces are.
    fn deliver_admissions(&mut self) -> bool {
        let mut ids = std::mem::take(&mut self.admitted);
        for lane in &mut self.lanes {
            lane.block.take_admitted(&mut ids);
        }
        for &id in &ids {
            let id = match self.array.as_mut() {
                None => id,
                Some(array) => match array.admitted(id) {
                    Some(bio) => bio,
                    None => continue,
                },
            };
            self.workload.on_admitted(id, self.now, &mut self.emit);
        }
        ids.clear();
        self.admitted = ids;
        // Anything emitted (a throttled writer's sleep timer, a process event) is moved to the
        // queue at this instant, not only arrivals: left in the buffer, a timer would be pushed
        // at a later instant with a time already past.
        !self.emit.arrivals.is_empty() || !self.emit.timers.is_empty() || !self.emit.process_events.is_empty()
    }

    fn complete(&mut self, lane: usize, id: RequestId) {
        let now = self.now;
        let l = &mut self.lanes[lane];
        let Some(at) = l.serving.iter().position(|s| s.0.id == id) else {
            self.invariants.bad_completions += 1;
            return;
        };
        let (req, dispatch_ns, service) = l.serving.swap_remove(at);
        if service.completion_ns != now {
            self.invariants.bad_completions += 1;
        }
        match (&mut l.mq, &mut l.nvme) {
            (None, _) => l.drive.completed(),
            (Some(mq), nvme) => {
                let hwq = mq.hwq_of(&req);
                mq.release_tag(hwq);
                match nvme {
                    Some(c) => c.completed(hwq),
                    None => l.drive.completed(),
                }
            }
        }
        self.last_completion_ns = now;
        let cx = lane_cx!(l, now);
        let done = Completion { request: req, dispatch_ns, positioning_ns: service.seek_ns + service.rotation_ns };
        l.scheduler.completed(&done, &cx);
        self.done_bios.clear();
        let (insert_ns, bios) = if self.passthrough {
            self.done_bios.push(req);
            (req.issue_ns, 1)
        } else {
            (l.block.insert_ns(&req), l.block.complete(&req, &mut self.done_bios, l.scheduler, &cx))
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
            let mut bio = self.done_bios[i];
            if let Some(array) = self.array.as_mut() {
                // A piece: its bio goes back when its last piece has.
                match array.completed(bio.id) {
                    Some(whole) => bio = whole,
                    None => continue,
                }
            }
            self.workload.on_complete(&bio, self.now, &mut self.emit);
        }
    }

    /// Moves what the workload emitted into the event queue; arrivals due now are delivered at
    /// once (they would be the next events popped anyway, as nothing is due earlier).
    fn flush_emit(&mut self) {
        if !self.emit.process_events.is_empty() {
            let now = self.now;
            for ev in self.emit.process_events.drain(..) {
                for l in &mut self.lanes {
                    let cx = lane_cx!(l, now);
                    l.scheduler.process_event(ev, &cx);
                }
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

    /// At the end of an instant: plugged bios go to the queues; each scheduler is asked for
    /// requests while its drive has free slots; each drive starts its next command if its
    /// mechanism is free.
    fn decide(&mut self) {
        if !self.passthrough {
            loop {
                let now = self.now;
                for l in &mut self.lanes {
                    let cx = lane_cx!(l, now);
                    l.block.unplug(l.scheduler, &cx);
                }
                // Submitters whose plugged bios were admitted may submit more at this instant.
                if !self.admissions || !self.deliver_admissions() {
                    break;
                }
                self.flush_emit();
            }
        }
        for lane in 0..self.lanes.len() {
            self.dispatch(lane);
            self.start_mechanism(lane);
        }
    }

    /// Asks the lane's scheduler for requests while its drive has free slots.
    fn dispatch(&mut self, lane: usize) {
        if self.lanes[lane].mq.is_some() {
            return self.dispatch_mq(lane);
        }
        let (now, passthrough) = (self.now, self.passthrough);
        let l = &mut self.lanes[lane];
        while l.drive.has_slot() && l.scheduler.queued() > 0 {
            if !l.drive.mechanism_busy() {
                // Bring the head state up to now (read-ahead) before a decision that uses it.
                advance_head(l, now);
            }
            let cx = lane_cx!(l, now);
            match l.scheduler.next(&cx) {
                Decision::Dispatch(req, path) => {
                    if !passthrough {
                        l.block.dispatched(&req);
                    }
                    l.drive.accept(req, path, l.device.as_view(), now);
                }
                Decision::WaitUntil(t) => {
                    let idle = l.drive.outstanding() == 0;
                    hold(l, lane, Some(t), idle, now, &mut self.invariants, &mut self.events);
                    break;
                }
                Decision::Empty => {
                    let idle = l.drive.outstanding() == 0;
                    hold(l, lane, None, idle, now, &mut self.invariants, &mut self.events);
                    break;
                }
            }
        }
    }

    /// blk-mq: requests waiting on a hardware queue's dispatch list go first as tags free; the
    /// scheduler is asked while blk-mq would ask it (`BlkMq::can_ask`: on NVMe while some
    /// queue's dispatch list is empty, tags or not; on SATA and disks while a tag is free). Each dispatch costs the scheduler's CPU time on the submitting CPU; the command
    /// reaches the drive (its NVMe submission queue, or the drive queue) when that ends.
    fn dispatch_mq(&mut self, lane: usize) {
        let (now, passthrough) = (self.now, self.passthrough);
        let l = &mut self.lanes[lane];
        take_async_queue_run(l);
        while let Some((req, path)) = l.mq.as_mut().expect("blk-mq lane").unpark() {
            let ready = issue_mq(l, req, path, now);
            if ready > now {
                self.events.push(ready, Event::Ready);
            }
        }
        while l.scheduler.queued() > 0 && l.mq.as_ref().is_some_and(BlkMq::can_ask) {
            if l.nvme.is_none() && !l.drive.mechanism_busy() {
                advance_head(l, now);
            }
            let cx = lane_cx!(l, now);
            let mq = l.mq.as_ref().expect("blk-mq lane");
            match l.scheduler.next_for_hw_queues(&cx, &|q| mq.can_take(q)) {
                Decision::Dispatch(req, path) => {
                    if !passthrough {
                        l.block.dispatched(&req);
                    }
                    let mq = l.mq.as_mut().expect("blk-mq lane");
                    if !mq.has_tag(mq.hwq_of(&req)) {
                        // blk-mq could not get a driver tag: the request waits on its hardware
                        // queue's dispatch list; dispatching stops, unless the scheduler keeps
                        // its requests per hardware queue (kyber, none): the others go on.
                        mq.park(req, path);
                        if mq.per_hw_queue_lists() {
                            continue;
                        }
                        break;
                    }
                    let ready = issue_mq(l, req, path, now);
                    if ready > now {
                        self.events.push(ready, Event::Ready);
                    }
                }
                Decision::WaitUntil(t) => {
                    let idle = cx_in_flight(l) == 0;
                    hold(l, lane, Some(t), idle, now, &mut self.invariants, &mut self.events);
                    arm_null_dispatch_rerun(l, lane, now, &mut self.events);
                    break;
                }
                Decision::Empty => {
                    let idle = cx_in_flight(l) == 0;
                    hold(l, lane, None, idle, now, &mut self.invariants, &mut self.events);
                    arm_null_dispatch_rerun(l, lane, now, &mut self.events);
                    break;
                }
            }
        }
    }

    /// The drive's firmware picks the next commands it holds while the mechanism can take
    /// more (one at a time for a disk).
    fn start_mechanism(&mut self, lane: usize) {
        if self.lanes[lane].nvme.is_some() {
            return self.start_nvme(lane);
        }
        while self.start_one(lane) {}
    }

    /// The NVMe controller fetches, by arbitration, every command it may from the submission
    /// queues whose doorbells have been rung; each starts at once on the drive.
    fn start_nvme(&mut self, lane: usize) {
        let now = self.now;
        let l = &mut self.lanes[lane];
        while let Some((_, cmd)) = l.nvme.as_mut().expect("NVMe lane").fetch(now) {
            let service = if cmd.req.op == Op::Flush {
                Service { dispatch_ns: now, completion_ns: l.device.flush_done_ns(now), ..Service::default() }
            } else {
                serve(&l.block, &mut *l.device, &cmd.req, cmd.path, now)
            };
            debug_assert!(service.completion_ns >= now);
            if let Some((at, ev)) = next_event(lane, cmd.req.id, &service) {
                self.events.push(at, ev);
            }
            l.serving.push((cmd.req, cmd.dispatched_ns, service));
            wake_commands(l, lane, now, &mut self.events, &mut self.superseded);
        }
    }

    /// Starts one command if the mechanism is free for it; false if none started.
    fn start_one(&mut self, lane: usize) -> bool {
        let now = self.now;
        let l = &mut self.lanes[lane];
        if l.drive.mechanism_busy() || l.drive.outstanding() as usize <= l.serving.len() {
            return false;
        }
        // The firmware chooses from where the head is now.
        advance_head(l, now);
        let Some(q) = l.drive.start_next(l.device.as_view(), now) else {
            return false;
        };
        // A command dispatched less than the host path's latency ago is not at the drive yet:
        // the mechanism starts it when it arrives (read-ahead runs on until then).
        let start = now.max(q.accepted_ns.saturating_add(l.latency.next_ns()));
        let service = if q.req.op == Op::Flush {
            // The rotational presets' caches write through: nothing to write back (a flash
            // drive drains its write buffer).
            Service { dispatch_ns: start, completion_ns: l.device.flush_done_ns(start), ..Service::default() }
        } else {
            l.head_at = None;
            serve(&l.block, &mut *l.device, &q.req, q.path, start)
        };
        debug_assert!(service.completion_ns >= start);
        if let Some((at, ev)) = next_event(lane, q.req.id, &service) {
            self.events.push(at, ev);
        }
        l.serving.push((q.req, q.dispatched_ns, service));
        wake_commands(l, lane, now, &mut self.events, &mut self.superseded);
        true
    }

    /// The device goes on with command `id` (it asked to be resumed now).
    fn resume(&mut self, lane: usize, id: RequestId) {
        let now = self.now;
        let l = &mut self.lanes[lane];
        let Some(i) = l.serving.iter().position(|s| s.0.id == id) else {
            self.invariants.bad_completions += 1;
            return;
        };
        let service = l.device.resume(&l.serving[i].0, now);
        debug_assert!(service.completion_ns >= now && service.resume_ns.is_none_or(|t| t > now));
        if let Some((at, ev)) = next_event(lane, id, &service) {
            self.events.push(at, ev);
        }
        l.serving[i].2 = service;
        wake_commands(l, lane, now, &mut self.events, &mut self.superseded);
    }
}

/// Commands the device held until something happened that its last call did: each is resumed
/// now. One that had a resumption armed later (the device found it need not wait that long)
/// has that event superseded.
fn wake_commands(l: &mut Lane, lane: usize, now: Nanos, events: &mut EventQueue<Event>, superseded: &mut Vec<(u32, RequestId, Nanos)>) {
    while let Some(woken) = l.device.woken() {
        let armed = l.serving.iter().find(|s| s.0.id == woken).and_then(|s| s.2.resume_ns);
        if let Some(at) = armed.filter(|&at| at != AWAITS_WAKE) {
            debug_assert!(at >= now, "an armed resumption in the past");
            superseded.push((lane as u32, woken, at));
        }
        events.push(now, Event::Resume(lane as u32, woken));
    }
}

/// A started command's next event and its time: its completion, or the device's resumption
/// of it.
/// None: the device wakes it itself (`AWAITS_WAKE`).
fn next_event(lane: usize, id: RequestId, service: &Service) -> Option<(Nanos, Event)> {
    match service.resume_ns {
        Some(AWAITS_WAKE) => None,
        Some(at) => Some((at, Event::Resume(lane as u32, id))),
        None => Some((service.completion_ns, Event::Completion(lane as u32, id))),
    }
}

/// The device serves `req` from `at`: a multi-range discard (its block layer keeps a range per
/// bio) as one command of all its ranges, anything else as itself.
fn serve(block: &BlockLayer, device: &mut dyn Device, req: &Request, path: ArmPath, at: Nanos) -> Service {
    match block.discard_ranges(req) {
        Some(ranges) => device.service_discard(req, ranges, path, at),
        None => device.service(req, path, at),
    }
}

/// The scheduler holds its requests until `wait_until` (a wake-up is armed) or has nothing to
/// dispatch (`None`). With nothing in flight (`drive_idle`) that is an idle with work when the
/// scheduler is work-conserving and waits, or has requests queued.
fn hold(
    l: &mut Lane,
    lane: usize,
    wait_until: Option<Nanos>,
    drive_idle: bool,
    now: Nanos,
    invariants: &mut InvariantReport,
    events: &mut EventQueue<Event>,
) {
    let idled_with_work = match wait_until {
        Some(_) => l.scheduler.is_work_conserving(),
        None => l.scheduler.queued() > 0,
    };
    if drive_idle && idled_with_work {
        invariants.idled_with_work += 1;
    }
    if let Some(t) = wait_until {
        let t = t.max(now);
        if l.wake_at != Some(t) {
            l.wake_at = Some(t);
            events.push(t, Event::Wake(lane as u32));
        }
    }
}

/// blk-mq asked the elevator, which holds requests (`dispatch_mq` asks only then: Linux's
/// `has_work`), and got none: the queue runs again `BLK_MQ_BUDGET_DELAY` later (Linux
/// `__blk_mq_do_dispatch_sched`), unless a delayed run is already pending
/// (`blk_mq_delay_run_hw_queues` leaves a pending one as it is).
fn arm_null_dispatch_rerun(l: &mut Lane, lane: usize, now: Nanos, events: &mut EventQueue<Event>) {
    take_async_queue_run(l);
    let delay = l.mq.as_ref().map_or(0, BlkMq::null_dispatch_rerun_ns);
    if delay == 0 || l.rerun_at.is_some_and(|t| t > now) {
        return;
    }
    let at = now.saturating_add(delay);
    l.rerun_at = Some(at);
    events.push(at, Event::Rerun(lane as u32));
}

/// A queue run the scheduler started from kblockd (BFQ's idle timer, or a completion that left
/// nothing in the driver: `bfq_schedule_dispatch`) brings a pending delayed run forward to now
/// (`mod_delayed_work`): this instant's run is that one, and the pending one is gone.
fn take_async_queue_run(l: &mut Lane) {
    if l.scheduler.take_async_queue_run() {
        l.rerun_at = None;
    }
}

/// Commands out at a blk-mq lane's drive.
fn cx_in_flight(l: &Lane) -> u32 {
    l.mq.as_ref().map_or_else(|| l.drive.outstanding(), |m| m.in_flight())
}

/// Hands a request the scheduler dispatched to its hardware queue: takes a tag, charges the
/// scheduler's CPU time, and queues the command where the drive takes it from (an NVMe
/// submission queue, or the drive queue) at the time its CPU work ends (plus the host path's
/// latency on NVMe; the drive queue adds it when it starts the command). Returns the time the
/// command is handed over (a wake-up is due then).
fn issue_mq(l: &mut Lane, req: Request, path: crate::device::ArmPath, now: Nanos) -> Nanos {
    let mq = l.mq.as_mut().expect("blk-mq lane");
    let hwq = mq.hwq_of(&req);
    mq.take_tag(hwq);
    let cpu_done = mq.charge(&req, hwq, now);
    match l.nvme.as_mut() {
        Some(c) => {
            let ready = cpu_done.saturating_add(l.latency.next_ns());
            c.submit(hwq, Submitted { req, path, dispatched_ns: now, ready_ns: ready });
            ready
        }
        None => {
            // The command reaches the drive when the CPU work ends (the firmware cannot choose
            // it before; a wake-up then); the drive queue adds the host path's latency when it
            // starts the command.
            l.drive.accept_later(req, path, l.device.as_view(), now, cpu_done);
            cpu_done
        }
    }
}

/// `Device::advance_to(now)`, once per instant and state (it walks the read-ahead stream).
fn advance_head(l: &mut Lane, now: Nanos) {
    if l.head_at != Some(now) {
        l.device.advance_to(now);
        l.head_at = Some(now);
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
    run(vec![(device, scheduler)], None, workload, options)
}

/// Runs the workload on a RAID-0 array: `members[i]` is member i's drive and the scheduler of
/// its request queue (each member has its own block layer and drive queue, both configured by
/// `options`). The workload addresses the array's sectors (`array.capacity_sectors()`).
pub fn simulate_array<'a>(
    members: Vec<(&'a mut dyn Device, &'a mut dyn Scheduler)>,
    array: Raid0,
    workload: &'a mut dyn Workload,
    options: SimOptions<'a>,
) -> SimOutput {
    assert_eq!(members.len(), array.members as usize, "one device and scheduler per member");
    run(members, Some(array), workload, options)
}

fn run<'a>(
    members: Vec<(&'a mut dyn Device, &'a mut dyn Scheduler)>,
    array: Option<Raid0>,
    workload: &'a mut dyn Workload,
    options: SimOptions<'a>,
) -> SimOutput {
    let control = options.control;
    let block_cfg = options.block.unwrap_or_else(BlockConfig::passthrough);
    let lanes = members
        .into_iter()
        .enumerate()
        .map(|(i, (device, scheduler))| {
            let mq = options.mq.clone().map(BlkMq::new);
            let mut block = BlockLayer::for_member(block_cfg, i as u32);
            if let Some(mq) = &mq {
                scheduler.attach_hw_queues(&mq.map);
                block.attach_hw_queues(&mq.map);
            }
            let mut drive = DriveQueue::new(options.drive);
            drive.set_concurrency(device.concurrent_commands());
            drive.set_discard_barrier(device.discard() == DiscardSupport::NonQueued);
            Lane {
                device,
                scheduler,
                block,
                drive,
                latency: options.command_latency.cursor(),
                serving: Vec::new(),
                head_at: None,
                wake_at: None,
                rerun_at: None,
                mq,
                nvme: options
                    .nvme
                    .as_ref()
                    .map(|n| NvmeController::new(Arbiter::new(n.arbitration, n.burst, n.sq_classes.clone()), n.controller_commands)),
            }
        })
        .collect();
    let mut e = Engine {
        lanes,
        workload,
        events: EventQueue::default(),
        emit: Emit::default(),
        batch: Vec::new(),
        collector: Collector::new(options.keep_records, options.sink),
        invariants: InvariantReport::default(),
        next_id: 0,
        passthrough: block_cfg.is_passthrough(),
        array: array.map(Striping::new),
        pieces: Vec::new(),
        done_bios: Vec::new(),
        bios_completed: 0,
        admissions: false,
        admitted: Vec::new(),
        remap_pids: false,
        superseded: Vec::new(),
        now: 0,
        last_completion_ns: 0,
    };
    e.remap_pids = e.workload.remaps_pids();
    if e.workload.wants_admissions() {
        e.admissions = true;
        for l in &mut e.lanes {
            l.block.track_admissions();
        }
    }
    e.workload.start(&mut e.emit);
    e.flush_emit();
    e.decide();
    let (mut events, mut events_at_instant, mut stop) = (0u64, 0u64, None);
    // Whether something at this instant calls for a decision (all but a delayed blk-mq run no
    // longer pending do).
    let mut decision_due = false;
    while let Some((t, ev)) = e.events.pop() {
        debug_assert!(t >= e.now, "time went backwards: {t} < {}", e.now);
        if t >= HORIZON_NS {
            stop = Some(Stop::Horizon { at_ns: t });
            break;
        }
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
        e.now = t;
        decision_due |= match ev {
            Event::Arrival(nr) => {
                e.arrive(nr);
                true
            }
            Event::Completion(lane, id) => {
                e.complete(lane as usize, id);
                true
            }
            Event::WorkloadTimer(token) => {
                e.workload.on_timer(token, t, &mut e.emit);
                true
            }
            Event::Wake(lane) => {
                let l = &mut e.lanes[lane as usize];
                let pending = l.wake_at == Some(t);
                if pending {
                    l.wake_at = None;
                }
                pending
            }
            Event::Ready => true,
            Event::Resume(lane, id) => {
                match e.superseded.iter().position(|&s| s == (lane, id, t)) {
                    Some(i) => {
                        e.superseded.swap_remove(i);
                    }
                    None => e.resume(lane as usize, id),
                }
                false
            }
            Event::Rerun(lane) => {
                let l = &mut e.lanes[lane as usize];
                let pending = l.rerun_at == Some(t);
                if pending {
                    l.rerun_at = None;
                }
                pending
            }
        };
        e.flush_emit();
        if e.events.peek_time() == Some(t) {
            continue; // more happens at this instant: decide once all of it is known
        }
        if decision_due {
            e.decide();
            decision_due = false;
        }
    }
    // A run stopped early leaves work behind by design: that is not a broken invariant.
    let held: u64 = e
        .lanes
        .iter()
        .map(|l| {
            let mq = l.mq.as_ref().map_or(0, |m| m.parked() as u64) + l.nvme.as_ref().map_or(0, |n| n.outstanding() as u64);
            l.scheduler.queued() as u64 + l.drive.outstanding() as u64 + l.block.held_bios() as u64 + mq
        })
        .sum();
    let mut block = BlockCounters::default();
    for l in &e.lanes {
        block.add(&l.block.counters);
    }
    if stop.is_none() {
        e.invariants.left_behind = held;
        // With nothing left, every bio submitted came back exactly once (a merged request
        // completes all its bios).
        if held == 0 {
            e.invariants.bios_unaccounted = block.bios.abs_diff(e.bios_completed);
        }
    }
    // An array reports its members' counts summed, by name.
    let mut scheduler_counters: Vec<(&'static str, u64)> = e.lanes[0].scheduler.counters();
    for l in &e.lanes[1..] {
        for (name, v) in l.scheduler.counters() {
            match scheduler_counters.iter_mut().find(|(n, _)| *n == name) {
                Some(c) => c.1 += v,
                None => scheduler_counters.push((name, v)),
            }
        }
    }
    let block = (!e.passthrough).then_some(block);
    let host_cpu = e.lanes[0].mq.as_ref().map(|m| (m.clock.busy_ns, m.clock.wait_ns));
    let (accumulator, records) = e.collector.finish();
    SimOutput { accumulator, records, invariants: e.invariants, end_ns: e.last_completion_ns, scheduler_counters, stop, block, host_cpu }
}
