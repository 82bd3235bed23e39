//! Trace replay: issues a trace's requests at the trace's times, whatever the scheduler does.
//!
//! Two timings:
//! - [`ReplayTiming::Arrival`]: open loop, each request arrives at its `arrival_ns` regardless
//!   of completions (ascii traces; a validate trace read this way treats each gap as the time
//!   from one arrival to the next).
//! - [`ReplayTiming::AfterCompletion`]: DiskSim's validate semantics: the first request arrives
//!   at 0 and each next one `gap_ns` after the previous request completes (DiskSim reads the
//!   next validate line when the driver sees a completion: `disksim_iodriver.c`), so at most one
//!   request is outstanding and the gaps are host think times.
//!
//! One principal per trace device (pid = the trace's device number), all in group 0. The
//! engine numbers requests in arrival order, which is trace order under both timings, so a
//! record's id is the index of its trace request.

use super::{Emit, NewRequest, ProcessInfo, Workload};
use crate::request::{Principal, Request};
use crate::time::Nanos;
use crate::trace::{Trace, TraceRequest};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayTiming {
    #[default]
    Arrival,
    AfterCompletion,
}

impl ReplayTiming {
    pub fn as_str(self) -> &'static str {
        match self {
            ReplayTiming::Arrival => "arrival",
            ReplayTiming::AfterCompletion => "after-completion",
        }
    }
}

pub struct Replay {
    requests: Vec<(Nanos, Nanos, NewRequest)>,
    timing: ReplayTiming,
    /// Index of the next request to submit.
    next: usize,
    devices: Vec<u32>,
}

impl Replay {
    pub fn new(trace: &Trace, timing: ReplayTiming) -> Replay {
        Replay::from_requests(&trace.requests, timing)
    }

    pub fn from_requests(requests: &[TraceRequest], timing: ReplayTiming) -> Replay {
        let mut devices: Vec<u32> = requests.iter().map(|r| r.device).collect();
        devices.sort_unstable();
        devices.dedup();
        let requests = requests
            .iter()
            .map(|r| {
                let nr = NewRequest {
                    principal: Principal { pid: r.device, group: 0 },
                    op: r.op,
                    sync: true,
                    start_sector: r.start_sector,
                    size_sectors: r.size_sectors,
                    flags: 0,
                    prio: Default::default(),
                };
                (r.arrival_ns, r.gap_ns, nr)
            })
            .collect();
        Replay { requests, timing, next: 0, devices }
    }

    fn submit_next(&mut self, at: Nanos, out: &mut Emit) {
        if let Some(&(_, _, nr)) = self.requests.get(self.next) {
            self.next += 1;
            out.submit(at, nr);
        }
    }
}

impl Workload for Replay {
    fn start(&mut self, out: &mut Emit) {
        match (self.timing, self.requests.first()) {
            (ReplayTiming::Arrival, Some(&(at, _, _))) => self.submit_next(at, out),
            (ReplayTiming::AfterCompletion, Some(_)) => self.submit_next(0, out),
            (_, None) => {}
        }
    }

    fn on_complete(&mut self, req: &Request, now: Nanos, out: &mut Emit) {
        if self.timing == ReplayTiming::AfterCompletion {
            let gap = self.requests[req.id as usize].1;
            self.submit_next(now.saturating_add(gap), out);
        }
    }

    // Open loop: each arrival schedules the next (one pending arrival event at a time).
    fn on_arrival(&mut self, _req: &Request, _now: Nanos, out: &mut Emit) {
        if self.timing == ReplayTiming::Arrival {
            if let Some(&(at, _, _)) = self.requests.get(self.next) {
                self.submit_next(at, out);
            }
        }
    }

    fn processes(&self) -> Vec<ProcessInfo> {
        self.devices.iter().map(|&d| ProcessInfo { pid: d, name: format!("trace device {d}") }).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::classic::fcfs::Fcfs;
    use crate::sim::engine::simulate;

    use crate::device::fixed_service::FixedService10ms as Fixed;

    fn run(text: &str, timing: ReplayTiming) -> Vec<(u64, Nanos, Nanos)> {
        let trace = Trace::parse(text, "t").unwrap();
        let mut w = Replay::new(&trace, timing);
        let mut sched = Fcfs::default();
        let out = simulate(&mut Fixed, &mut sched, &mut w);
        assert_eq!(out.invariants, Default::default());
        let mut r: Vec<_> = out.records.iter().map(|r| (r.id, r.issue_ns, r.complete_ns)).collect();
        r.sort();
        r
    }

    // Gaps of 4 ms and 20 ms against a 10 ms service time.
    const TRACE: &str = "R Hit 0 4 1 4000\nR Hit 8 4 1 20000\nW Miss 16 4 1 0\n";

    #[test]
    fn open_loop_arrivals_ignore_completions_and_queue() {
        // Arrivals at 0, 4, 24 ms; the second waits for the first (FCFS, one at a time).
        assert_eq!(run(TRACE, ReplayTiming::Arrival), vec![(0, 0, 10_000_000), (1, 4_000_000, 20_000_000), (2, 24_000_000, 34_000_000)]);
    }

    #[test]
    fn after_completion_arrivals_follow_the_previous_completion() {
        // 0 -> done 10; +4 -> 14, done 24; +20 -> 44, done 54.
        assert_eq!(
            run(TRACE, ReplayTiming::AfterCompletion),
            vec![(0, 0, 10_000_000), (1, 14_000_000, 24_000_000), (2, 44_000_000, 54_000_000)]
        );
    }

    #[test]
    fn ascii_devices_become_principals() {
        let trace = Trace::parse("0.0 3 0 4 1\n1.0 1 8 4 0\n2.0 3 16 4 1\n", "t").unwrap();
        let w = Replay::new(&trace, ReplayTiming::Arrival);
        assert_eq!(w.processes().iter().map(|p| p.pid).collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(run("0.0 3 0 4 1\n0.0 1 8 4 0\n2.0 3 16 4 1\n", ReplayTiming::Arrival).len(), 3);
    }
}
