//! Read priority and program/erase suspension on a die (issue 28; off by default, when every
//! die is the plain first-come timeline of resources.rs).
//!
//! With `read_priority`, a die keeps its background work (the write buffer's programs with the
//! GC they need: copy reads, copy programs, erases) as *jobs* in arrival order, each a list of
//! page operations, and its reads apart: a read goes before every job that has not begun, and
//! between two page operations of the job in progress (each is its own NAND command, so the
//! controller may issue the read in between at no cost). Inside an operation the read waits for
//! its end, unless `suspend` covers the operation's kind (`program`, `erase` or
//! `program-erase`): then the operation is suspended (`suspend_us` for a program,
//! `erase_suspend_us` for an erase), the read takes its tR, and the operation resumes
//! (`resume_us`) with its remaining time preserved (as MQSim's Flash_Chip::Suspend / Resume).
//! Reads arriving while the job is paused join the reads before it. An operation is suspended
//! only when more of it remains than the suspend latency (else waiting is shorter: MQSim's
//! "reasonable suspension time" test), and at most `max_suspensions` times (0: no limit; no
//! source gives one). Reads are served in arrival order (a die's reads arrive in engine order).
//!
//! The jobs queued behind the reads start later, so a program's end can move after it was
//! reserved: the moves are reported (`take_moved`) so that the write buffer frees the slots
//! when the program really ends. Causality is the reservation model's: a write admitted
//! earlier against a program's old end is not re-timed.

use crate::time::{us_to_ns, Nanos};
use serde::Serialize;
use std::collections::VecDeque;

/// Which array operations a read may suspend.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SuspendMode {
    #[default]
    None,
    Program,
    Erase,
    ProgramErase,
}

impl SuspendMode {
    pub const NAMES: [&'static str; 4] = ["none", "program", "erase", "program-erase"];
    pub fn parse(s: &str) -> Option<SuspendMode> {
        match s {
            "none" => Some(SuspendMode::None),
            "program" => Some(SuspendMode::Program),
            "erase" => Some(SuspendMode::Erase),
            "program-erase" => Some(SuspendMode::ProgramErase),
            _ => None,
        }
    }
    fn covers(self, kind: OpKind) -> bool {
        matches!(
            (self, kind),
            (SuspendMode::Program | SuspendMode::ProgramErase, OpKind::Program)
                | (SuspendMode::Erase | SuspendMode::ProgramErase, OpKind::Erase)
        )
    }
}

/// The die's scheduling policy (`[device.flash]` fields of the same names).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DieScheduling {
    /// Reads go before background programs/erases that have not begun.
    pub read_priority: bool,
    pub suspend: SuspendMode,
    /// Latency from the suspend command to the die being free for the read (program).
    pub suspend_us: f64,
    /// The same for an erase.
    pub erase_suspend_us: f64,
    /// Latency of resuming the suspended operation.
    pub resume_us: f64,
    /// Suspensions allowed per operation (0: no limit).
    pub max_suspensions: u32,
}

impl Default for DieScheduling {
    /// Off; the latencies are MQSim's defaults (Suspend_Program_Time 100 us,
    /// Suspend_Erase_Time 700 us, resume not timed).
    fn default() -> Self {
        DieScheduling {
            read_priority: false,
            suspend: SuspendMode::None,
            suspend_us: 100.0,
            erase_suspend_us: 700.0,
            resume_us: 0.0,
            max_suspensions: 0,
        }
    }
}

impl DieScheduling {
    /// Whether the dies are plain first-come timelines (every result as before issue 28's
    /// suspension step).
    pub fn is_off(&self) -> bool {
        !self.read_priority && self.suspend == SuspendMode::None
    }

    pub fn validate(&self) -> Result<(), String> {
        super::spec::check_ranges(&[
            ("suspend_us", self.suspend_us, 0.0, 100_000.0),
            ("erase_suspend_us", self.erase_suspend_us, 0.0, 100_000.0),
            ("resume_us", self.resume_us, 0.0, 100_000.0),
        ])?;
        if self.suspend != SuspendMode::None && !self.read_priority {
            return Err(format!(
                "field `device.flash.suspend` = \"{}\" needs `device.flash.read_priority` = true (a read suspends work it was let ahead of)",
                SuspendMode::NAMES[self.suspend as usize]
            ));
        }
        if self.max_suspensions > 1_000_000 {
            return Err(format!("field `device.flash.max_suspensions` must be in [0, 1000000], got {}", self.max_suspensions));
        }
        Ok(())
    }

    fn suspend_ns(&self, kind: OpKind) -> Option<Nanos> {
        if !self.suspend.covers(kind) {
            return None;
        }
        let us = if kind == OpKind::Erase { self.erase_suspend_us } else { self.suspend_us };
        Some(us_to_ns(us))
    }

    fn resume_ns(&self) -> Nanos {
        us_to_ns(self.resume_us)
    }
}

/// One page operation of a background job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// A GC copy read (short: never suspended).
    Read,
    Program,
    Erase,
}

#[derive(Clone, Debug)]
struct Job {
    id: u64,
    ready: Nanos,
    /// When it first runs.
    start: Nanos,
    /// Runs from here without pause (after reads let ahead and any resume).
    run_from: Nanos,
    /// The resume latency included in `run_from` (0 if paused between operations).
    pause_cost: Nanos,
    /// Operations left at `run_from`; `ops[next]` is the current one, with `left` remaining.
    ops: Vec<(OpKind, Nanos)>,
    next: usize,
    left: Nanos,
    suspensions: u32,
    end: Nanos,
}

impl Job {
    fn remaining(&self) -> Nanos {
        if self.next >= self.ops.len() {
            return 0;
        }
        self.left + self.ops[self.next + 1..].iter().map(|o| o.1).sum::<Nanos>()
    }
    /// Runs until `t` (run_from <= t < end): true if `t` falls exactly between operations.
    fn advance(&mut self, t: Nanos) -> bool {
        let mut done = t - self.run_from;
        self.run_from = t;
        while done >= self.left && self.next < self.ops.len() {
            done -= self.left;
            self.next += 1;
            self.left = self.ops.get(self.next).map_or(0, |o| o.1);
            if done == 0 {
                return true;
            }
        }
        self.left -= done;
        false
    }
}

/// One die under read priority (and suspension): its reads and its queued jobs.
#[derive(Clone, Debug, Default)]
pub struct DieQueue {
    jobs: VecDeque<Job>,
    /// When the last read let in ends.
    reads_end: Nanos,
    /// The latest time a read reached the die. Reads are laid out in the order they reach it:
    /// one that reaches it earlier than a read already laid out (a translation or update read
    /// looked up from an earlier time) is taken as arriving then, since the jobs have already
    /// been run up to that read.
    latest_read_ns: Nanos,
    /// (job id, new end) of jobs whose end moved, for the write buffer.
    moved: Vec<(u64, Nanos)>,
    /// Suspensions so far (all jobs).
    pub suspensions: u64,
}

impl DieQueue {
    /// Queues a job (ops in order) ready at `ready`, behind the jobs already queued and the
    /// reads let in: its end.
    pub fn add_job(&mut self, id: u64, ready: Nanos, ops: Vec<(OpKind, Nanos)>) -> Nanos {
        let prev = self.jobs.back().map_or(0, |j| j.end);
        let start = ready.max(prev).max(self.reads_end);
        let left = ops.first().map_or(0, |o| o.1);
        let mut j = Job { id, ready, start, run_from: start, pause_cost: 0, ops, next: 0, left, suspensions: 0, end: start };
        j.end = start + j.remaining();
        let end = j.end;
        self.jobs.push_back(j);
        end
    }

    /// The latest time a read reached the die (the one the last read was laid out at).
    pub fn latest_read_ns(&self) -> Nanos {
        self.latest_read_ns
    }

    /// Where a job ready at `ready` would start if queued now (`add_job`'s start).
    pub fn job_start(&self, ready: Nanos) -> Nanos {
        ready.max(self.jobs.back().map_or(0, |j| j.end)).max(self.reads_end)
    }

    /// A read arriving at `t0` taking `tr`: its (start, end) on the die.
    pub fn read(&mut self, t0: Nanos, tr: Nanos, cfg: &DieScheduling) -> (Nanos, Nanos) {
        let t0 = t0.max(self.latest_read_ns);
        self.latest_read_ns = t0;
        let cur = self.jobs.iter().position(|j| j.start <= t0 && j.end > t0);
        let start;
        let mut prev_end = 0;
        let queued_from = match cur {
            Some(i) => {
                let j = &mut self.jobs[i];
                let old_end = j.end;
                if j.run_from >= t0 {
                    // Not running yet (at its start), or paused (reads before it, or resuming): the read joins the reads.
                    start = t0.max(self.reads_end);
                    self.reads_end = start + tr;
                    j.run_from = self.reads_end + j.pause_cost;
                } else if j.advance(t0) {
                    // Between two operations: the read goes first, at no cost.
                    start = t0;
                    self.reads_end = start + tr;
                    j.pause_cost = 0;
                    j.run_from = self.reads_end;
                } else {
                    let kind = j.ops[j.next].0;
                    let lat =
                        cfg.suspend_ns(kind).filter(|&l| j.left > l && (cfg.max_suspensions == 0 || j.suspensions < cfg.max_suspensions));
                    match lat {
                        Some(l) => {
                            j.suspensions += 1;
                            self.suspensions += 1;
                            start = t0 + l;
                            self.reads_end = start + tr;
                            j.pause_cost = cfg.resume_ns();
                            j.run_from = self.reads_end + j.pause_cost;
                        }
                        None => {
                            // The operation runs to its end, then the read.
                            start = t0 + j.left;
                            j.next += 1;
                            j.left = j.ops.get(j.next).map_or(0, |o| o.1);
                            self.reads_end = start + tr;
                            j.pause_cost = 0;
                            j.run_from = self.reads_end;
                        }
                    }
                }
                let rem = j.remaining();
                j.end = if rem == 0 { old_end.min(j.run_from) } else { j.run_from + rem };
                if j.end != old_end {
                    self.moved.push((j.id, j.end));
                }
                prev_end = j.end;
                i + 1
            }
            None => {
                start = t0.max(self.reads_end);
                self.reads_end = start + tr;
                self.jobs.iter().position(|j| j.start > t0).unwrap_or(self.jobs.len())
            }
        };
        // Jobs not begun go after the reads, in order.
        for j in self.jobs.iter_mut().skip(queued_from) {
            let s = j.ready.max(prev_end).max(self.reads_end);
            if s != j.start {
                j.start = s;
                j.run_from = s;
                j.end = s + j.remaining();
                self.moved.push((j.id, j.end));
            }
            prev_end = j.end;
        }
        (start, start + tr)
    }

    /// When a read arriving at `t` would start (without changing anything).
    pub fn read_start(&self, t: Nanos, cfg: &DieScheduling) -> Nanos {
        let t = t.max(self.latest_read_ns);
        let Some(j) = self.jobs.iter().find(|j| j.start <= t && j.end > t) else {
            return t.max(self.reads_end);
        };
        if j.run_from >= t {
            return t.max(self.reads_end);
        }
        let mut probe = j.clone();
        if probe.advance(t) {
            return t;
        }
        match cfg.suspend_ns(probe.ops[probe.next].0) {
            Some(l) if probe.left > l && (cfg.max_suspensions == 0 || probe.suspensions < cfg.max_suspensions) => t + l,
            _ => t + probe.left,
        }
    }

    /// Job `id`'s current start and end (None: over and forgotten, or unknown).
    pub fn job_window(&self, id: u64) -> Option<(Nanos, Nanos)> {
        self.jobs.iter().find(|j| j.id == id).map(|j| (j.start, j.end))
    }

    /// Job `id` may not start before `ready` (a page joined it: plane_frontiers.rs), whenever
    /// reads lay the queue out again.
    pub fn hold_until(&mut self, id: u64, ready: Nanos) {
        if let Some(j) = self.jobs.iter_mut().find(|j| j.id == id) {
            j.ready = j.ready.max(ready);
        }
    }

    /// The end of the first job queued (`Nanos::MAX` if none): `prune` forgets nothing before it.
    pub fn first_end(&self) -> Nanos {
        self.jobs.front().map_or(Nanos::MAX, |j| j.end)
    }

    /// Forgets jobs over by `now`.
    pub fn prune(&mut self, now: Nanos) {
        while self.jobs.front().is_some_and(|j| j.end <= now) {
            self.jobs.pop_front();
        }
    }

    /// The job ends moved since the last call.
    pub fn take_moved(&mut self, out: &mut Vec<(u64, Nanos)>) {
        out.append(&mut self.moved);
    }

    /// The last reserved instant (a read's or a job's end).
    pub fn last_end(&self) -> Nanos {
        self.jobs.back().map_or(0, |j| j.end).max(self.reads_end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Nanos = 1_000;

    fn cfg(suspend: SuspendMode) -> DieScheduling {
        DieScheduling { read_priority: true, suspend, suspend_us: 20.0, resume_us: 10.0, ..DieScheduling::default() }
    }

    #[test]
    fn a_read_behind_a_program_waits_for_it_or_suspends_it() {
        // A 500 us program from 0; a 50 us read arrives at 100 us.
        let mut q = DieQueue::default();
        assert_eq!(q.add_job(1, 0, vec![(OpKind::Program, 500 * US)]), 500 * US);
        assert_eq!(q.read(100 * US, 50 * US, &cfg(SuspendMode::None)), (500 * US, 550 * US), "waits tPROG's remaining 400 us");
        let mut moved = Vec::new();
        q.take_moved(&mut moved);
        assert!(moved.is_empty(), "the program ends as before");

        let mut q = DieQueue::default();
        q.add_job(1, 0, vec![(OpKind::Program, 500 * US)]);
        assert_eq!(q.read(100 * US, 50 * US, &cfg(SuspendMode::Program)), (120 * US, 170 * US), "waits suspend + tR");
        q.take_moved(&mut moved);
        // Later by the read's tR + suspend + resume: 500 + 50 + 20 + 10.
        assert_eq!(moved, vec![(1, 580 * US)]);
        assert_eq!(q.suspensions, 1);
        // A second read during the pause joins the first (no second suspension).
        assert_eq!(q.read(130 * US, 50 * US, &cfg(SuspendMode::Program)), (170 * US, 220 * US));
        q.take_moved(&mut moved);
        assert_eq!(moved.last(), Some(&(1, 630 * US)));
        assert_eq!(q.suspensions, 1);
        // An erase is not suspended under "program": the read waits for it.
        let mut q = DieQueue::default();
        q.add_job(1, 0, vec![(OpKind::Erase, 3_500 * US)]);
        assert_eq!(q.read(100 * US, 50 * US, &cfg(SuspendMode::Program)).0, 3_500 * US);
        // Too little left to be worth a suspension (10 us < 20 us): the read waits.
        let mut q = DieQueue::default();
        q.add_job(1, 0, vec![(OpKind::Program, 500 * US)]);
        assert_eq!(q.read(490 * US, 50 * US, &cfg(SuspendMode::Program)).0, 500 * US);
    }

    #[test]
    fn reads_go_before_queued_jobs_and_between_operations() {
        let c = cfg(SuspendMode::None);
        let mut q = DieQueue::default();
        // Job 1 (GC: a copy read, a copy program, then the host program) from 0; job 2 queued.
        assert_eq!(q.add_job(1, 0, vec![(OpKind::Read, 50 * US), (OpKind::Program, 500 * US), (OpKind::Program, 500 * US)]), 1_050 * US);
        assert_eq!(q.add_job(2, 0, vec![(OpKind::Program, 500 * US)]), 1_550 * US);
        // A read at 200 us waits for the copy program in progress (to 550), not for the rest.
        assert_eq!(q.read(200 * US, 50 * US, &c), (550 * US, 600 * US));
        // A read at 300 us queues behind it; both go before the host program and job 2.
        assert_eq!(q.read(300 * US, 50 * US, &c), (600 * US, 650 * US));
        let mut moved = Vec::new();
        q.take_moved(&mut moved);
        assert_eq!(moved, vec![(1, 1_100 * US), (2, 1_600 * US), (1, 1_150 * US), (2, 1_650 * US)]);
        // A read arriving exactly between two operations goes at once.
        assert_eq!(q.read(1_150 * US, 50 * US, &c), (1_150 * US, 1_200 * US));
        // Without priority (the plain timeline) the first read would have waited to 1,550 us.
    }

    /// A job a page joined keeps to that page's data: laid out again by a read, it starts no
    /// earlier than the page is ready; its window is known by id until it is over.
    #[test]
    fn a_held_job_starts_no_earlier_than_its_joined_page() {
        let c = cfg(SuspendMode::None);
        let mut q = DieQueue::default();
        assert_eq!(q.add_job(1, 0, vec![(OpKind::Program, 500 * US)]), 500 * US);
        assert_eq!(q.add_job(2, 100 * US, vec![(OpKind::Program, 500 * US)]), 1_000 * US);
        assert_eq!(q.job_window(2), Some((500 * US, 1_000 * US)));
        q.hold_until(2, 700 * US);
        // A read at 200 us waits for job 1 (to 500) and goes before job 2, which would start
        // at 550 but for its page, ready at 700.
        assert_eq!(q.read(200 * US, 50 * US, &c), (500 * US, 550 * US));
        assert_eq!(q.job_window(2), Some((700 * US, 1_200 * US)));
        q.prune(1_200 * US);
        assert_eq!(q.job_window(2), None);
    }

    #[test]
    fn the_suspension_limit_holds() {
        let mut c = cfg(SuspendMode::Program);
        c.max_suspensions = 1;
        let mut q = DieQueue::default();
        q.add_job(1, 0, vec![(OpKind::Program, 500 * US)]);
        assert_eq!(q.read(100 * US, 50 * US, &c).0, 120 * US);
        // Resumed at 180 with 400 left; a read at 300 may not suspend it again.
        assert_eq!(q.read(300 * US, 50 * US, &c).0, 580 * US);
        assert_eq!(q.suspensions, 1);
    }

    #[test]
    fn errors_name_the_field() {
        let mut c = DieScheduling { suspend: SuspendMode::Program, ..DieScheduling::default() };
        assert!(c.validate().unwrap_err().contains("`device.flash.read_priority`"));
        c.read_priority = true;
        c.resume_us = -1.0;
        assert!(c.validate().unwrap_err().contains("`device.flash.resume_us` must be in [0, 100000], got -1"));
    }

    #[test]
    fn a_read_reaching_the_die_earlier_than_one_laid_out_is_taken_then() {
        // Two 500 ns programs; a read reaching the die at 600 waits for the second's end; one
        // reaching it at 400, laid out after, must not rewind the queue (it once re-laid the
        // second program with no time left: a helper review's example).
        let cfg = DieScheduling { read_priority: true, ..DieScheduling::default() };
        let mut q = DieQueue::default();
        q.add_job(1, 0, vec![(OpKind::Program, 500)]);
        q.add_job(2, 0, vec![(OpKind::Program, 500)]);
        assert_eq!(q.read(600, 50, &cfg), (1_000, 1_050));
        assert_eq!(q.read_start(400, &cfg), 1_050, "the probe agrees");
        assert_eq!(q.read(400, 50, &cfg), (1_050, 1_100), "taken as reaching the die at 600");
        assert_eq!(q.read(560, 50, &cfg), (1_100, 1_150));
        assert_eq!(q.job_window(2), Some((500, 1_000)), "the second program keeps its time");
        assert_eq!(q.latest_read_ns(), 600);
    }
}
