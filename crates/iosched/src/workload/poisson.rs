//! Open arrivals: a Poisson process of uniformly random requests, independent of completions.

use super::closed_queue::random_block;
use super::{rng_stream, Emit, ProcessInfo, Workload};
use crate::request::{Principal, Request};
use crate::time::Nanos;
use rand::Rng;
use rand_pcg::Pcg64;

pub struct Poisson {
    pub mean_interarrival_ns: f64,
    pub total: u64,
    pub size_sectors: u32,
    pub region: (u64, u64),
    pub read_fraction: f64,
    /// No arrival at or after this time (run.duration_s, when given).
    pub stop_ns: Option<Nanos>,
    issued: u64,
    rng: Pcg64,
}

impl Poisson {
    pub fn new(rate_iops: f64, total: u64, size_sectors: u32, region: (u64, u64), read_fraction: f64, seed: u64) -> Self {
        Poisson {
            mean_interarrival_ns: 1e9 / rate_iops,
            total,
            size_sectors,
            region,
            read_fraction,
            stop_ns: None,
            issued: 0,
            rng: rng_stream(seed, 0),
        }
    }

    /// Issues nothing at or after `stop_ns` (None: only `total` limits the run).
    pub fn stop_at(mut self, stop_ns: Option<Nanos>) -> Self {
        self.stop_ns = stop_ns;
        self
    }

    fn gap_ns(&mut self) -> Nanos {
        let u: f64 = self.rng.gen::<f64>();
        crate::time::round_ns(-(1.0 - u).ln() * self.mean_interarrival_ns)
    }
}

impl Poisson {
    /// Submits the next arrival, one exponential gap after `now`.
    fn schedule_next(&mut self, now: Nanos, out: &mut Emit) {
        if self.issued >= self.total {
            return;
        }
        let at = now.saturating_add(self.gap_ns());
        if self.stop_ns.is_some_and(|stop| at >= stop) {
            return;
        }
        self.issued += 1;
        out.submit(
            at,
            random_block(&mut self.rng, self.region.0, self.region.1, self.size_sectors, self.read_fraction, Principal::default()),
        );
    }
}

impl Workload for Poisson {
    fn start(&mut self, out: &mut Emit) {
        self.schedule_next(0, out);
    }

    fn on_complete(&mut self, _req: &Request, _now: Nanos, _out: &mut Emit) {}

    // Each arrival schedules the next: one event per arrival, no timers.
    fn on_arrival(&mut self, _req: &Request, now: Nanos, out: &mut Emit) {
        self.schedule_next(now, out);
    }

    fn processes(&self) -> Vec<ProcessInfo> {
        vec![ProcessInfo { pid: 0, name: "poisson".into() }]
    }
}
