//! The CPUs that simulated processes' compute steps share, so think times stretch under load.
//!
//! A process's compute step (a think time, a copy from the page cache) is `work_ns` of CPU time.
//! [`Cpus`] decides when each step finishes, given the other steps competing for the CPUs:
//!
//! - [`CpuModel::Unlimited`] (the default): a step submitted at `t` finishes at `t + work_ns`,
//!   whatever else runs (the behaviour before this module existed).
//! - [`CpuModel::ProcessorSharing`]: with `n` runnable steps on `c` CPUs every step progresses
//!   at rate `min(1, c / n)` (the fluid limit of round robin with a vanishing quantum).
//! - [`CpuModel::RoundRobin`]: a FIFO run queue; each CPU runs the task at its head for at most
//!   `quantum_ns`, then the task goes to the back of the queue; new tasks join at the back.
//!
//! Everything is integer nanoseconds with saturating or split arithmetic (no wrap), and nothing
//! reads a clock. The API is event-driven for a simulator that keeps one timer for the CPUs:
//! after `submit` or `advance`, set the timer to [`Cpus::next_event_ns`]; when it fires call
//! [`Cpus::advance`] with the timer's time and resume the tasks it returns.
//!
//! ## Processor sharing, exactly
//!
//! Virtual time `V` is the CPU time a step present all along would have received. It grows at
//! `min(c, n) / n` per nanosecond; a step of `w` submitted when `V = v` finishes when `V`
//! reaches `v + w`, so the steps sit in one heap keyed on that finishing virtual time and each
//! arrival or completion costs O(log n). `V` is a `u128` counting units of `1 / V_SCALE` ns,
//! with `V_SCALE = lcm(1..=20) * 4096`: over `dt` whole nanoseconds `V` grows by
//! `floor(dt * min(c, n) * V_SCALE / n)`, which is exact whenever `n <= 20` (and whenever `n`
//! divides `min(c, n) * V_SCALE`). `V` is recomputed from the start of the current *segment*
//! (the interval since the set of steps last changed), so only a change of membership can drop
//! a fraction, of less than `1 / V_SCALE` ns (about 10^-12 ns): after 10^9 such changes with
//! more than 20 steps the virtual clock lags the exact one by under 0.002 ns. No error builds up
//! across `advance` calls that change nothing.
//!
//! The simulator's clock is whole nanoseconds, so the model changes membership only at whole
//! nanoseconds: a step finishes at the first whole nanosecond at which `V` has reached its
//! finishing virtual time (the exact fluid time rounded up), and keeps its share until then.
//! Three 1-ns steps on 2 CPUs finish at 2 ns (exactly 1.5 ns) and used 4 CPU-ns (`busy_ns`
//! counts CPU time handed out, `min(c, n)` per nanosecond).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::fast_hash::FastSet;
use crate::time::Nanos;

/// How the CPUs are shared. `cpus: 0` means unlimited (see [`Cpus::new`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CpuModel {
    /// Every compute step takes exactly its length.
    #[default]
    Unlimited,
    /// `cpus` CPUs shared equally by the runnable steps (fluid processor sharing).
    ProcessorSharing { cpus: u32 },
    /// `cpus` CPUs serving a FIFO run queue in slices of at most `quantum_ns`.
    RoundRobin { cpus: u32, quantum_ns: u64 },
}

/// Units of virtual time per nanosecond of CPU time: lcm(1..=20) * 4096, so processor sharing
/// among up to 20 steps is exact (module docs).
const V_SCALE: u128 = 232_792_560 * 4096;

/// A step under processor sharing: finishing virtual time, submission sequence, task.
type PsEntry = Reverse<(u128, u64, u32)>;
/// A step under Unlimited: finishing time, submission sequence, task.
type TimedEntry = Reverse<(Nanos, u64, u32)>;

/// A runnable step in the round-robin queue.
#[derive(Clone, Copy, Debug)]
struct RrTask {
    task: u32,
    seq: u64,
    remaining: Nanos,
}

/// A slice running on a CPU: ends at `end`, dispatched `dispatch`-th (ties between CPUs are
/// handled in dispatch order), leaving `remaining` of the step after it.
type RrSlice = Reverse<(Nanos, u64, u32, u64, Nanos)>;

#[derive(Debug)]
enum Model {
    Unlimited {
        steps: BinaryHeap<TimedEntry>,
    },
    Ps {
        cpus: u64,
        /// Virtual time at the start of the current segment (`seg_start`).
        seg_v: u128,
        seg_start: Nanos,
        steps: BinaryHeap<PsEntry>,
    },
    Rr {
        cpus: usize,
        quantum: Nanos,
        queue: VecDeque<RrTask>,
        slices: BinaryHeap<RrSlice>,
        dispatches: u64,
    },
}

/// The shared CPUs. See the module documentation.
#[derive(Debug)]
pub struct Cpus {
    model: Model,
    /// The time the model has been brought to.
    now: Nanos,
    busy: Nanos,
    next_seq: u64,
    /// Tasks with a step submitted and not yet returned by `advance`.
    tasks: FastSet<u32>,
    /// Completed steps not yet returned by `advance`: (completion time, task), in order.
    done: VecDeque<(Nanos, u32)>,
    /// Completions of one instant, to be put in submission order: (seq, task).
    batch: Vec<(u64, u32)>,
}

impl Cpus {
    /// A model of `model`. `ProcessorSharing` or `RoundRobin` with `cpus: 0` is `Unlimited`
    /// (a scenario's `cpus = 0`); a `quantum_ns` of 0 is taken as 1 ns.
    pub fn new(model: CpuModel) -> Self {
        let model = match model {
            CpuModel::ProcessorSharing { cpus } if cpus > 0 => {
                Model::Ps { cpus: u64::from(cpus), seg_v: 0, seg_start: 0, steps: BinaryHeap::new() }
            }
            CpuModel::RoundRobin { cpus, quantum_ns } if cpus > 0 => {
                debug_assert!(quantum_ns > 0, "round-robin quantum of 0 ns");
                Model::Rr {
                    cpus: cpus as usize,
                    quantum: quantum_ns.max(1),
                    queue: VecDeque::new(),
                    slices: BinaryHeap::new(),
                    dispatches: 0,
                }
            }
            _ => Model::Unlimited { steps: BinaryHeap::new() },
        };
        Cpus { model, now: 0, busy: 0, next_seq: 0, tasks: FastSet::default(), done: VecDeque::new(), batch: Vec::new() }
    }

    /// `task` starts a compute step of `work_ns` of CPU time at `now_ns`. A step of 0 completes
    /// at once: the next `advance` returns it. A task has at most one step at a time: submitting
    /// for a task whose step has not been returned by `advance` is a logic error (debug
    /// assertion; ignored in release builds). A `now_ns` before the model's time is taken as the
    /// model's time (debug assertion).
    pub fn submit(&mut self, task: u32, work_ns: u64, now_ns: u64) {
        if !self.tasks.insert(task) {
            debug_assert!(false, "task {task} submitted a compute step while busy");
            return;
        }
        self.step_to(now_ns);
        let now = self.now;
        let seq = self.next_seq;
        self.next_seq += 1;
        if work_ns == 0 {
            // Every step completing at `now` was submitted earlier, so is already in `done`.
            self.done.push_back((now, task));
            return;
        }
        match &mut self.model {
            Model::Unlimited { steps } => {
                steps.push(Reverse((now.saturating_add(work_ns), seq, task)));
            }
            Model::Ps { cpus, seg_v, seg_start, steps } => {
                // The segment ends here: membership changes.
                let n = steps.len() as u64;
                *seg_v = ps_virtual(*seg_v, now - *seg_start, *cpus, n);
                *seg_start = now;
                let finish = seg_v.saturating_add(u128::from(work_ns) * V_SCALE);
                steps.push(Reverse((finish, seq, task)));
            }
            Model::Rr { queue, .. } => {
                queue.push_back(RrTask { task, seq, remaining: work_ns });
            }
        }
        self.dispatch_rr();
    }

    /// When the next step completes (for round robin, the next slice ends); `None` if no step is
    /// in progress. While completed steps wait to be returned by `advance`, the earliest of
    /// their completion times (at or before the model's time).
    pub fn next_event_ns(&self) -> Option<u64> {
        if let Some(&(t, _)) = self.done.front() {
            return Some(t);
        }
        self.model_next_event()
    }

    /// Brings the model to `now_ns` and appends to `done` the tasks whose steps completed at or
    /// before it, by completion time, then submission order.
    pub fn advance(&mut self, now_ns: u64, done: &mut Vec<u32>) {
        self.step_to(now_ns);
        done.reserve(self.done.len());
        for (_, task) in self.done.drain(..) {
            self.tasks.remove(&task);
            done.push(task);
        }
    }

    /// Steps in progress (running or waiting for a CPU) at the model's time.
    pub fn running(&self) -> usize {
        match &self.model {
            Model::Unlimited { steps } => steps.len(),
            Model::Ps { steps, .. } => steps.len(),
            Model::Rr { queue, slices, .. } => queue.len() + slices.len(),
        }
    }

    /// CPU time handed out so far (up to the model's time), in CPU-nanoseconds: divide by
    /// elapsed time times CPUs for utilization. Processor sharing counts a finishing step's
    /// share up to the whole nanosecond it is reported at (module docs).
    pub fn busy_ns(&self) -> u64 {
        self.busy
    }

    /// CPUs in use between events.
    fn active(&self) -> u64 {
        match &self.model {
            Model::Unlimited { steps } => steps.len() as u64,
            Model::Ps { cpus, steps, .. } => (steps.len() as u64).min(*cpus),
            Model::Rr { slices, .. } => slices.len() as u64,
        }
    }

    fn model_next_event(&self) -> Option<Nanos> {
        match &self.model {
            Model::Unlimited { steps } => steps.peek().map(|e| e.0 .0),
            Model::Rr { slices, .. } => slices.peek().map(|e| e.0 .0),
            Model::Ps { cpus, seg_v, seg_start, steps } => {
                let &Reverse((finish, _, _)) = steps.peek()?;
                let n = steps.len() as u64;
                let v_now = ps_virtual(*seg_v, self.now - *seg_start, *cpus, n);
                Some(self.now.saturating_add(ps_time_to(finish.saturating_sub(v_now), *cpus, n)))
            }
        }
    }

    /// Moves the model's time to `target` (no earlier than now), event by event, collecting
    /// completions into `self.done`.
    fn step_to(&mut self, target: Nanos) {
        debug_assert!(target >= self.now, "time went backwards: {target} < {}", self.now);
        let target = target.max(self.now);
        loop {
            let next = match self.model_next_event() {
                Some(t) if t <= target => t,
                _ => {
                    self.move_clock(target);
                    return;
                }
            };
            self.move_clock(next);
            self.complete_at(next);
            if next == Nanos::MAX {
                // The end of time: what is still due there (a saturated slice or finish)
                // never completes.
                return;
            }
        }
    }

    /// Time passes from `self.now` to `t` with no change of membership.
    fn move_clock(&mut self, t: Nanos) {
        let dt = t - self.now;
        self.busy = self.busy.saturating_add(dt.saturating_mul(self.active()));
        self.now = t;
    }

    /// Handles the events at `self.now` (= `t`): completions, round-robin preemptions.
    fn complete_at(&mut self, t: Nanos) {
        let mut batch = std::mem::take(&mut self.batch);
        batch.clear();
        match &mut self.model {
            Model::Unlimited { steps } => {
                while let Some(&Reverse((end, seq, task))) = steps.peek() {
                    if end > t {
                        break;
                    }
                    steps.pop();
                    batch.push((seq, task));
                }
            }
            Model::Ps { cpus, seg_v, seg_start, steps } => {
                let n = steps.len() as u64;
                let v_now = ps_virtual(*seg_v, t - *seg_start, *cpus, n);
                while let Some(&Reverse((finish, seq, task))) = steps.peek() {
                    if finish > v_now {
                        break;
                    }
                    steps.pop();
                    batch.push((seq, task));
                }
                if !batch.is_empty() {
                    *seg_v = v_now;
                    *seg_start = t;
                }
            }
            Model::Rr { queue, slices, .. } => {
                while let Some(&Reverse((end, _, task, seq, remaining))) = slices.peek() {
                    if end > t {
                        break;
                    }
                    slices.pop();
                    if remaining == 0 {
                        batch.push((seq, task));
                    } else {
                        queue.push_back(RrTask { task, seq, remaining });
                    }
                }
            }
        }
        batch.sort_unstable();
        self.done.extend(batch.iter().map(|&(_, task)| (t, task)));
        self.batch = batch;
        self.dispatch_rr();
    }

    /// Round robin: idle CPUs take tasks from the head of the queue.
    fn dispatch_rr(&mut self) {
        let now = self.now;
        if let Model::Rr { cpus, quantum, queue, slices, dispatches } = &mut self.model {
            while slices.len() < *cpus {
                let Some(t) = queue.pop_front() else { break };
                let run = t.remaining.min(*quantum);
                let end = now.saturating_add(run);
                slices.push(Reverse((end, *dispatches, t.task, t.seq, t.remaining - run)));
                *dispatches += 1;
            }
        }
    }
}

/// Virtual time `dt` ns after a segment started at `seg_v`, with `n` steps on `cpus` CPUs:
/// `seg_v + floor(dt * min(cpus, n) * V_SCALE / n)`, split so nothing overflows.
fn ps_virtual(seg_v: u128, dt: Nanos, cpus: u64, n: u64) -> u128 {
    if n == 0 || dt == 0 {
        return seg_v;
    }
    let k = u128::from(cpus.min(n));
    let n = u128::from(n);
    let per_ns = k * V_SCALE; // <= 2^32 * 2^40
    let (q, r) = (per_ns / n, per_ns % n);
    let dt = u128::from(dt);
    // q <= V_SCALE < 2^40, dt < 2^64; r < n < 2^64.
    seg_v.saturating_add(dt * q + dt * r / n)
}

/// The fewest whole nanoseconds after which virtual time has grown by at least `dv`, with `n`
/// steps on `cpus` CPUs: `ceil(dv * n / (min(cpus, n) * V_SCALE))`, saturating at `u64::MAX`.
fn ps_time_to(dv: u128, cpus: u64, n: u64) -> Nanos {
    if dv == 0 {
        return 0;
    }
    let k = u128::from(cpus.min(n));
    let n = u128::from(n);
    let per = k * V_SCALE; // virtual units per ns, times n
    let (q, r) = (dv / per, dv % per);
    // r < per < 2^72 and n < 2^64: r * n < 2^136 could overflow; split r * n / per as well.
    let whole = q.saturating_mul(n);
    let frac = match r.checked_mul(n) {
        Some(rn) => rn.div_ceil(per),
        None => mul_div_ceil(r, n, per),
    };
    let total = whole.saturating_add(frac);
    u64::try_from(total).unwrap_or(u64::MAX)
}

/// `ceil(a * b / d)` for `a < d`, without overflow (binary long multiplication modulo `d`).
fn mul_div_ceil(a: u128, b: u128, d: u128) -> u128 {
    // Quotient and remainder of a * b by d, accumulated bit by bit of b.
    let (mut q, mut r) = (0u128, 0u128);
    // a = qa * d + ra with qa = 0 since a < d.
    for bit in (0..128).rev() {
        // (q, r) = 2 * (q, r)
        q = q.saturating_mul(2);
        let r2 = r.checked_mul(2);
        match r2 {
            Some(v) if v < d => r = v,
            Some(v) => {
                r = v - d;
                q = q.saturating_add(1);
            }
            None => {
                // r >= 2^127 > d/2: 2r - d = r - (d - r).
                r -= d - r;
                q = q.saturating_add(1);
            }
        }
        if (b >> bit) & 1 == 1 {
            // (q, r) += (0, a)
            match r.checked_add(a) {
                Some(v) if v < d => r = v,
                Some(v) => {
                    r = v - d;
                    q = q.saturating_add(1);
                }
                None => {
                    r -= d - a;
                    q = q.saturating_add(1);
                }
            }
        }
    }
    if r > 0 {
        q.saturating_add(1)
    } else {
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NS_PER_MS;

    const MS: u64 = NS_PER_MS;

    /// Runs the model to idle from time 0, following `next_event_ns`, with arrivals
    /// `(time, task, work)` sorted by time. Returns (task, completion time) in report order.
    fn run(model: CpuModel, arrivals: &[(u64, u32, u64)]) -> (Vec<(u32, u64)>, Cpus) {
        let mut cpus = Cpus::new(model);
        let mut out = Vec::new();
        let mut i = 0;
        let mut done = Vec::new();
        loop {
            let next_arrival = arrivals.get(i).map(|a| a.0);
            let next = match (cpus.next_event_ns(), next_arrival) {
                (None, None) => break,
                (Some(a), None) | (None, Some(a)) => a,
                (Some(a), Some(b)) => a.min(b),
            };
            cpus.advance(next, &mut done);
            out.extend(done.drain(..).map(|t| (t, next)));
            while i < arrivals.len() && arrivals[i].0 == next {
                let (t, task, work) = arrivals[i];
                cpus.submit(task, work, t);
                i += 1;
            }
        }
        assert_eq!(cpus.running(), 0);
        (out, cpus)
    }

    const PS1: CpuModel = CpuModel::ProcessorSharing { cpus: 1 };
    const PS2: CpuModel = CpuModel::ProcessorSharing { cpus: 2 };

    #[test]
    fn unlimited_is_todays_behaviour() {
        let (out, cpus) = run(CpuModel::Unlimited, &[(0, 1, 10 * MS), (0, 2, 10 * MS), (3 * MS, 3, 2 * MS)]);
        assert_eq!(out, vec![(3, 5 * MS), (1, 10 * MS), (2, 10 * MS)]);
        assert_eq!(cpus.busy_ns(), 22 * MS);
        // cpus = 0 is unlimited too.
        let (out, _) = run(CpuModel::RoundRobin { cpus: 0, quantum_ns: MS }, &[(0, 1, 10 * MS), (0, 2, 10 * MS)]);
        assert_eq!(out, vec![(1, 10 * MS), (2, 10 * MS)]);
    }

    #[test]
    fn ps_two_equal_tasks_on_one_cpu() {
        let (out, cpus) = run(PS1, &[(0, 1, 10 * MS), (0, 2, 10 * MS)]);
        assert_eq!(out, vec![(1, 20 * MS), (2, 20 * MS)]);
        assert_eq!(cpus.busy_ns(), 20 * MS);
    }

    #[test]
    fn ps_unequal_tasks_on_one_cpu() {
        // Both at rate 1/2 until the 10 ms one is done at 20 ms; the other has 20 ms left alone.
        let (out, _) = run(PS1, &[(0, 1, 10 * MS), (0, 2, 30 * MS)]);
        assert_eq!(out, vec![(1, 20 * MS), (2, 40 * MS)]);
    }

    #[test]
    fn ps_three_tasks_on_two_cpus() {
        // Rate 2/3 each: 10 ms of work takes 15 ms.
        let (out, cpus) = run(PS2, &[(0, 1, 10 * MS), (0, 2, 10 * MS), (0, 3, 10 * MS)]);
        assert_eq!(out, vec![(1, 15 * MS), (2, 15 * MS), (3, 15 * MS)]);
        assert_eq!(cpus.busy_ns(), 30 * MS);
    }

    #[test]
    fn ps_arrival_midway() {
        // One CPU. A (10 ms) alone for 4 ms: 6 ms left. B (10 ms) arrives at 4 ms: both at 1/2.
        // A's 6 ms take 12 ms: A done at 16 ms; B has had 6 ms, 4 ms left alone: 20 ms.
        let (out, _) = run(PS1, &[(0, 1, 10 * MS), (4 * MS, 2, 10 * MS)]);
        assert_eq!(out, vec![(1, 16 * MS), (2, 20 * MS)]);
        // Two CPUs. A, B (10 ms) alone for 5 ms: 5 ms left each. C (10 ms) at 5 ms: rate 2/3,
        // A and B need 7.5 ms: done at 12.5 ms; C has had 5 ms, 5 left alone: 17.5 ms.
        let (out, _) = run(PS2, &[(0, 1, 10 * MS), (0, 2, 10 * MS), (5 * MS, 3, 10 * MS)]);
        assert_eq!(out, vec![(1, 12_500_000), (2, 12_500_000), (3, 17_500_000)]);
    }

    #[test]
    fn ps_fractional_completion_rounds_up() {
        // Three 1-ns steps on 2 CPUs finish at exactly 1.5 ns: reported at 2 ns, having held
        // their shares (2 CPUs) for both nanoseconds.
        let (out, cpus) = run(PS2, &[(0, 1, 1), (0, 2, 1), (0, 3, 1)]);
        assert_eq!(out, vec![(1, 2), (2, 2), (3, 2)]);
        assert_eq!(cpus.busy_ns(), 4);
    }

    #[test]
    fn rr_two_tasks_quantum_4ms() {
        // A 0-4, B 4-8, A 8-12, B 12-16, A 16-18 (done), B 18-20 (done).
        let rr = CpuModel::RoundRobin { cpus: 1, quantum_ns: 4 * MS };
        let (out, cpus) = run(rr, &[(0, 1, 10 * MS), (0, 2, 10 * MS)]);
        assert_eq!(out, vec![(1, 18 * MS), (2, 20 * MS)]);
        assert_eq!(cpus.busy_ns(), 20 * MS);
    }

    #[test]
    fn rr_arrival_joins_the_back() {
        // A (10 ms) 0-4, alone so again 4-8; B (6 ms) arrives at 5 and waits. At 8 A (2 left)
        // goes behind B: B 8-12, A 12-14 (done), B 14-16 (done).
        let rr = CpuModel::RoundRobin { cpus: 1, quantum_ns: 4 * MS };
        let (out, _) = run(rr, &[(0, 1, 10 * MS), (5 * MS, 2, 6 * MS)]);
        assert_eq!(out, vec![(1, 14 * MS), (2, 16 * MS)]);
    }

    #[test]
    fn rr_three_tasks_on_two_cpus() {
        // 0-4: A, B (C waits). 4-8: C, A. 8-12: B, C. 12-14: A, B (2 ms each, done). 14-16: C.
        let rr = CpuModel::RoundRobin { cpus: 2, quantum_ns: 4 * MS };
        let (out, cpus) = run(rr, &[(0, 1, 10 * MS), (0, 2, 10 * MS), (0, 3, 10 * MS)]);
        assert_eq!(out, vec![(1, 14 * MS), (2, 14 * MS), (3, 16 * MS)]);
        assert_eq!(cpus.busy_ns(), 30 * MS);
    }

    #[test]
    fn worked_example_in_docs() {
        // docs/host-cpus.md: one CPU, A thinks 10 ms from 0, B 10 ms from 4 ms.
        let arrivals = [(0, 1, 10 * MS), (4 * MS, 2, 10 * MS)];
        let rr = |q| CpuModel::RoundRobin { cpus: 1, quantum_ns: q };
        for (model, a, b) in [(CpuModel::Unlimited, 10, 14), (PS1, 16, 20), (rr(10 * MS), 10, 20), (rr(4 * MS), 14, 20)] {
            let (out, cpus) = run(model, &arrivals);
            assert_eq!(out, vec![(1, a * MS), (2, b * MS)], "{model:?}");
            assert_eq!(cpus.busy_ns(), 20 * MS);
        }
    }

    #[test]
    fn zero_work_completes_at_next_advance() {
        for model in [CpuModel::Unlimited, PS1, CpuModel::RoundRobin { cpus: 1, quantum_ns: MS }] {
            let mut cpus = Cpus::new(model);
            cpus.submit(1, 5 * MS, 0);
            cpus.submit(2, 0, 2 * MS);
            assert_eq!(cpus.next_event_ns(), Some(2 * MS));
            let mut done = Vec::new();
            cpus.advance(2 * MS, &mut done);
            assert_eq!(done, vec![2]);
            assert_eq!(cpus.running(), 1);
            // Task 2 may start a new step now.
            cpus.submit(2, 0, 2 * MS);
            done.clear();
            cpus.advance(2 * MS, &mut done);
            assert_eq!(done, vec![2]);
        }
    }

    #[test]
    fn ties_in_submission_order() {
        // Same completion time: submission order, not task id.
        for model in [CpuModel::Unlimited, PS1, PS2] {
            let (out, _) = run(model, &[(0, 9, MS), (0, 3, MS), (0, 5, MS)]);
            let order: Vec<u32> = out.iter().map(|o| o.0).collect();
            assert_eq!(order, vec![9, 3, 5], "{model:?}");
        }
        // Different submission times, one completion time.
        let (out, _) = run(CpuModel::Unlimited, &[(0, 9, 10 * MS), (5 * MS, 2, 5 * MS)]);
        assert_eq!(out, vec![(9, 10 * MS), (2, 10 * MS)]);
        // Earlier completion first, whatever the submission order.
        let (out, _) = run(PS1, &[(0, 1, 30 * MS), (0, 2, 10 * MS)]);
        assert_eq!(out, vec![(2, 20 * MS), (1, 40 * MS)]);
    }

    #[test]
    fn advance_in_pieces_equals_one_advance() {
        for model in [CpuModel::Unlimited, PS2, CpuModel::RoundRobin { cpus: 2, quantum_ns: 3 * MS }] {
            let works = [7 * MS, 3 * MS, 11 * MS, 5 * MS, 2 * MS];
            let mut a = Cpus::new(model);
            let mut b = Cpus::new(model);
            for (i, &w) in works.iter().enumerate() {
                a.submit(i as u32, w, 0);
                b.submit(i as u32, w, 0);
            }
            let (mut da, mut db) = (Vec::new(), Vec::new());
            a.advance(100 * MS, &mut da);
            let mut t = 0;
            while t < 100 * MS {
                t += 999_983;
                b.advance(t.min(100 * MS), &mut db);
            }
            assert_eq!(da, db, "{model:?}");
            assert_eq!(da.len(), works.len());
            assert_eq!(a.busy_ns(), b.busy_ns());
        }
    }

    /// A nanosecond-by-nanosecond reference for processor sharing with at most 9 steps: work in
    /// units of 1/2520 ns (lcm 1..=9), so each step's share of a nanosecond is whole; a step
    /// whose work runs out during a nanosecond finishes at its end.
    fn ps_reference(cpus: u64, arrivals: &[(u64, u32, u64)]) -> Vec<(u32, u64)> {
        const U: u64 = 2520;
        let mut active: Vec<(u32, i64)> = Vec::new(); // in submission order
        let mut out = Vec::new();
        let mut i = 0;
        let mut t = 0;
        while i < arrivals.len() || !active.is_empty() {
            while i < arrivals.len() && arrivals[i].0 == t {
                let (_, task, work) = arrivals[i];
                if work == 0 {
                    out.push((task, t));
                } else {
                    active.push((task, (work * U) as i64));
                }
                i += 1;
            }
            let n = active.len() as u64;
            if n > 0 {
                let share = (cpus.min(n) * U / n) as i64;
                for a in active.iter_mut() {
                    a.1 -= share;
                }
            }
            t += 1;
            active.retain(|&(task, left)| {
                if left <= 0 {
                    out.push((task, t));
                }
                left > 0
            });
        }
        out
    }

    #[test]
    fn ps_matches_nanosecond_reference() {
        let mut state = 0x853c_49e6_748f_ea9bu64;
        let mut rand = |m: u64| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % m
        };
        for round in 0..300 {
            let cpus = 1 + rand(3);
            let mut arrivals: Vec<(u64, u32, u64)> = (0..9).map(|task| (rand(60), task as u32, rand(40))).collect();
            arrivals.sort_by_key(|a| a.0);
            let (got, _) = run(CpuModel::ProcessorSharing { cpus: cpus as u32 }, &arrivals);
            let want = ps_reference(cpus, &arrivals);
            // Same completion times; within one instant, submission order.
            assert_eq!(got, want, "round {round}, cpus {cpus}, {arrivals:?}");
        }
    }

    #[test]
    fn no_overflow_at_the_end_of_time() {
        for model in [CpuModel::Unlimited, PS2, CpuModel::RoundRobin { cpus: 1, quantum_ns: u64::MAX }] {
            let mut cpus = Cpus::new(model);
            cpus.submit(1, u64::MAX, 0);
            cpus.submit(2, u64::MAX, 10);
            cpus.submit(3, u64::MAX - 5, u64::MAX - 100);
            assert!(cpus.next_event_ns().is_some());
            let mut done = Vec::new();
            cpus.advance(u64::MAX, &mut done);
            assert!(cpus.busy_ns() > 0);
        }
        assert_eq!(mul_div_ceil(u128::MAX - 1, u128::MAX, u128::MAX), u128::MAX - 1);
        assert_eq!(mul_div_ceil(3, 5, 7), 3);
        assert_eq!(ps_time_to(u128::MAX, 1, u64::MAX), u64::MAX);
    }

    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "while busy")]
    fn second_step_for_a_busy_task_is_a_logic_error() {
        let mut cpus = Cpus::new(PS1);
        cpus.submit(1, MS, 0);
        cpus.submit(1, MS, 0);
    }

    #[test]
    fn many_tasks() {
        const N: u32 = 100_000;
        // Processor sharing: steps of 1..=N µs on 4 CPUs finish in order of length.
        let arrivals: Vec<(u64, u32, u64)> = (0..N).map(|i| (0, i, u64::from(N - i) * 1000)).collect();
        let (out, cpus) = run(CpuModel::ProcessorSharing { cpus: 4 }, &arrivals);
        assert_eq!(out.len(), N as usize);
        assert!(out.windows(2).all(|w| w[0].1 <= w[1].1));
        assert_eq!(out[0].0, N - 1);
        assert_eq!(out[N as usize - 1].0, 0);
        let total: u64 = arrivals.iter().map(|a| a.2).sum();
        // CPU time handed out: the work, plus under 1 ns per CPU per completion instant.
        assert!(cpus.busy_ns() >= total && cpus.busy_ns() <= total + 4 * u64::from(N));
        // Round robin: N steps of 2 quanta on 8 CPUs, 2N slices.
        let arrivals: Vec<(u64, u32, u64)> = (0..N).map(|i| (u64::from(i), i, 2 * MS)).collect();
        let (out, cpus) = run(CpuModel::RoundRobin { cpus: 8, quantum_ns: MS }, &arrivals);
        assert_eq!(out.len(), N as usize);
        assert_eq!(cpus.busy_ns(), u64::from(N) * 2 * MS);
    }
}
