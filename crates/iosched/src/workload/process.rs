//! Synchronous processes: each issues a request, waits for it, thinks, issues the next; over a
//! file at its own place on the disk.

use super::pattern::Pattern;
use super::think::Think;
use super::{rng_stream, Emit, NewRequest, ProcessInfo, Workload};
use crate::request::{Op, Principal, Request};
use crate::sched::ProcessEvent;
use crate::time::Nanos;
use rand_pcg::Pcg64;

#[derive(Clone, Debug)]
pub struct ProcessSpec {
    pub name: String,
    pub principal: Principal,
    pub op: Op,
    pub pattern: Pattern,
    pub request_sectors: u32,
    pub file_start_sector: u64,
    pub file_sectors: u64,
    pub think: Think,
    pub start_ns: Nanos,
    /// Stop after this many requests (None: run until the deadline).
    pub max_requests: Option<u64>,
    /// Share for proportional-share schedulers.
    pub weight: u32,
}

struct ProcessState {
    spec: ProcessSpec,
    issued: u64,
    rng: Pcg64,
}

pub struct Processes {
    procs: Vec<ProcessState>,
    /// No new request is issued at or after this time.
    pub stop_issuing_ns: Nanos,
}

impl Processes {
    pub fn new(specs: Vec<ProcessSpec>, stop_issuing_ns: Nanos, seed: u64) -> Self {
        let procs =
            specs.into_iter().enumerate().map(|(i, spec)| ProcessState { spec, issued: 0, rng: rng_stream(seed, i as u64 + 1) }).collect();
        Processes { procs, stop_issuing_ns }
    }

    fn issue(&mut self, i: usize, now: Nanos, out: &mut Emit) {
        let stop = self.stop_issuing_ns;
        let p = &mut self.procs[i];
        if p.issued == 0 {
            out.process_event(ProcessEvent::Started { principal: p.spec.principal, weight: p.spec.weight });
        }
        if now >= stop {
            // Synchronous: nothing of this process is outstanding now.
            out.process_event(ProcessEvent::Exited(p.spec.principal));
            return;
        }
        let s = &p.spec;
        let blocks = (s.file_sectors / s.request_sectors as u64).max(1);
        let block = s.pattern.block(p.issued, blocks, &mut p.rng);
        p.issued += 1;
        out.submit(
            now,
            NewRequest {
                principal: s.principal,
                op: s.op,
                sync: true,
                start_sector: s.file_start_sector + block * s.request_sectors as u64,
                size_sectors: s.request_sectors,
            },
        );
    }
}

impl Workload for Processes {
    fn start(&mut self, out: &mut Emit) {
        for (i, p) in self.procs.iter().enumerate() {
            out.timer(p.spec.start_ns, i as u64);
        }
    }

    fn on_complete(&mut self, req: &Request, now: Nanos, out: &mut Emit) {
        let Some(i) = self.procs.iter().position(|p| p.spec.principal == req.principal) else {
            return;
        };
        let p = &mut self.procs[i];
        if p.spec.max_requests.is_some_and(|m| p.issued >= m) {
            out.process_event(ProcessEvent::Exited(p.spec.principal));
            return;
        }
        let think = p.spec.think.sample(&mut p.rng);
        out.timer(now.saturating_add(think), i as u64);
    }

    fn on_timer(&mut self, token: u64, now: Nanos, out: &mut Emit) {
        self.issue(token as usize, now, out);
    }

    fn processes(&self) -> Vec<ProcessInfo> {
        self.procs.iter().map(|p| ProcessInfo { pid: p.spec.principal.pid, name: p.spec.name.clone() }).collect()
    }
}
