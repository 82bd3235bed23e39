//! Seltzer's closed queue: Q requests at time 0; each completion is replaced at once by a new
//! uniformly random request, until `total` have been issued; then the last Q drain.

use super::{rng_stream, Emit, NewRequest, ProcessInfo, Workload};
use crate::request::{Op, Principal, Request};
use crate::time::Nanos;
use rand::Rng;
use rand_pcg::Pcg64;

pub struct ClosedQueue {
    pub queue_depth: u32,
    pub total: u64,
    pub size_sectors: u32,
    /// Requests are aligned blocks of `size_sectors` within `[region_lo, region_hi)`.
    pub region_lo: u64,
    pub region_hi: u64,
    pub read_fraction: f64,
    /// No new request at or after this time (run.duration_s, when given).
    pub stop_ns: Option<Nanos>,
    issued: u64,
    rng: Pcg64,
}

impl ClosedQueue {
    pub fn new(queue_depth: u32, total: u64, size_sectors: u32, region: (u64, u64), read_fraction: f64, seed: u64) -> Self {
        ClosedQueue {
            queue_depth,
            total,
            size_sectors,
            region_lo: region.0,
            region_hi: region.1,
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

    fn issue(&mut self, now: Nanos, out: &mut Emit) {
        if self.issued >= self.total || self.stop_ns.is_some_and(|stop| now >= stop) {
            return;
        }
        self.issued += 1;
        out.submit(
            now,
            random_block(&mut self.rng, self.region_lo, self.region_hi, self.size_sectors, self.read_fraction, Principal::default()),
        );
    }
}

/// A uniformly random aligned block in `[lo, hi)`.
pub fn random_block(rng: &mut Pcg64, lo: u64, hi: u64, size: u32, read_fraction: f64, principal: Principal) -> NewRequest {
    let blocks = ((hi - lo) / size as u64).max(1);
    let start_sector = lo + rng.gen_range(0..blocks) * size as u64;
    let op = if read_fraction >= 1.0 || (read_fraction > 0.0 && rng.gen::<f64>() < read_fraction) { Op::Read } else { Op::Write };
    NewRequest { principal, op, sync: op == Op::Read, start_sector, size_sectors: size, flags: 0, prio: Default::default() }
}

impl Workload for ClosedQueue {
    fn start(&mut self, out: &mut Emit) {
        for _ in 0..self.queue_depth {
            self.issue(0, out);
        }
    }

    fn on_complete(&mut self, _req: &Request, now: Nanos, out: &mut Emit) {
        self.issue(now, out);
    }

    fn processes(&self) -> Vec<ProcessInfo> {
        vec![ProcessInfo { pid: 0, name: "closed-queue".into() }]
    }
}
