//! Workloads: what issues requests, and when. Each owns its random streams (derived from the
//! run's seed), so two schedulers compared on one scenario see the same request sequence.

pub mod apps;
pub mod closed_queue;
pub mod commands;
pub mod ffsb;
pub mod fio_jobs;
pub mod kern_dev;
pub mod page_cache;
pub mod pattern;
pub mod poisson;
pub mod process;
pub mod replay;
pub mod replay_startup;
pub mod s_background;
pub mod think;
pub mod trace_replay;
pub mod video;

use crate::request::{IoPrio, Op, Principal, Request};
use crate::sched::ProcessEvent;
use crate::time::Nanos;
use rand_pcg::Pcg64;

/// A request a workload wants issued; the engine assigns the id when it arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewRequest {
    pub principal: Principal,
    pub op: Op,
    pub sync: bool,
    pub start_sector: u64,
    pub size_sectors: u32,
    /// `Request::SPLIT`, `Request::META`, ...
    pub flags: u8,
    pub prio: IoPrio,
}

impl NewRequest {
    pub fn into_request(self, id: u64, now: Nanos) -> Request {
        Request {
            id,
            principal: self.principal,
            op: self.op,
            sync: self.sync,
            start_sector: self.start_sector,
            size_sectors: self.size_sectors,
            issue_ns: now,
            flags: self.flags,
            prio: self.prio,
        }
    }
}

/// Where workloads put what they want to happen.
#[derive(Default)]
pub struct Emit {
    pub arrivals: Vec<(Nanos, NewRequest)>,
    pub timers: Vec<(Nanos, u64)>,
    /// Process starts and exits, effective at the time of the callback that emits them.
    pub process_events: Vec<ProcessEvent>,
}

impl Emit {
    pub fn submit(&mut self, at_ns: Nanos, req: NewRequest) {
        self.arrivals.push((at_ns, req));
    }

    pub fn process_event(&mut self, ev: ProcessEvent) {
        self.process_events.push(ev);
    }

    /// Calls the workload's `on_timer(token)` at `at_ns`.
    pub fn timer(&mut self, at_ns: Nanos, token: u64) {
        self.timers.push((at_ns, token));
    }
}

/// A named issuer of requests, for per-process results.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProcessInfo {
    pub pid: u32,
    pub name: String,
}

pub trait Workload {
    fn start(&mut self, out: &mut Emit);
    fn on_complete(&mut self, req: &Request, now: Nanos, out: &mut Emit);
    fn on_timer(&mut self, _token: u64, _now: Nanos, _out: &mut Emit) {}
    /// Called when one of this workload's requests reaches the scheduler.
    fn on_arrival(&mut self, _req: &Request, _now: Nanos, _out: &mut Emit) {}
    /// Whether the workload wants `on_admitted` (the engine then tracks admissions).
    fn wants_admissions(&self) -> bool {
        false
    }
    /// Bio `id` got its place in the queue (merged into a request or given one of its own):
    /// its submitter's submit_bio() has returned, where a full request pool made it sleep.
    /// For a split bio, called as each of its parts is admitted, with the bio's id.
    fn on_admitted(&mut self, _id: crate::request::RequestId, _now: Nanos, _out: &mut Emit) {}
    /// Whether `account_pid` maps any pid (the engine asks it only then: a call per completion).
    fn remaps_pids(&self) -> bool {
        false
    }
    /// The pid a request of process `pid` counts under in the results (a host's child
    /// processes count under the task that spawned them).
    fn account_pid(&self, pid: u32) -> u32 {
        pid
    }
    /// Bytes the application's reads returned (read() calls and copies out of mappings, cache
    /// hits included): the application-observed throughput's numerator. None: not counted.
    fn bytes_served(&self) -> Option<u64> {
        None
    }
    /// A host's report (page cache, writeback, per-task times), for workloads that run one.
    fn host_report(&self) -> Option<crate::host::report::HostReport> {
        None
    }
    /// Why the workload could not go on (a trace that turned out malformed mid-run): the run
    /// is then an error, not a result.
    fn failure(&self) -> Option<String> {
        None
    }
    /// A trace replay's counts, for the run's summary.
    fn replay_counts(&self) -> Option<trace_replay::ReplayCounts> {
        None
    }
    fn processes(&self) -> Vec<ProcessInfo>;
}

/// The generator for stream `stream` of a run seeded with `seed` (PCG's independent streams).
pub fn rng_stream(seed: u64, stream: u64) -> Pcg64 {
    Pcg64::new(0xcafe_f00d_d15e_a5e5 ^ (seed as u128) << 64 | seed as u128, stream as u128 * 2 + 1)
}
