//! The drive's internal resources: every die (its array), every channel (the bus its dies
//! share) and the host link, each a timeline of reserved intervals. A command reserves what it
//! needs when it starts, each at the earliest gap long enough from when its input is ready
//! (a short transfer fills a gap left before a transfer reserved earlier for later): the
//! controller's per-die and per-channel queues, without read priority over programs. A single
//! "busy until" per resource would instead hold a channel idle behind a transfer reserved for a
//! die with a long backlog, far below the dies' parallelism. Dies hold data in their cache
//! register, so a die's next array operation need not wait for the channel (ONFI cache read /
//! cache program).
//!
//! The host link: NVMe over PCIe is full duplex (each direction of every lane is its own
//! differential pair, so a TLP towards the host and one towards the device travel at once):
//! write data (host -> device) and read data (device -> host) each get their own timeline.
//! SATA is half duplex at the frame level (one FIS at a time on the link; the receiver only
//! sends primitives back while a frame is in flight): one timeline for both directions.
//!
//! With read priority or suspension (die_scheduling.rs) each die is instead a `DieQueue` of
//! reads and background jobs; the flash model reaches the dies only through `die_read`,
//! `die_job` and `die_busy_until`, whichever the policy.

use super::die_scheduling::{DieQueue, DieScheduling, OpKind};
use super::ftl::DieWork;
use super::timing::FlashTiming;
use crate::time::Nanos;

/// Reserved intervals [start, end), sorted and disjoint.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    busy: Vec<(Nanos, Nanos)>,
}

impl Timeline {
    /// Reserves `dur_ns` at the earliest gap from `ready_ns` on: (start, end).
    pub fn reserve(&mut self, ready_ns: Nanos, dur_ns: Nanos) -> (Nanos, Nanos) {
        let mut start = ready_ns;
        if dur_ns == 0 {
            return (start, start);
        }
        let mut at = self.busy.len();
        for (i, &(s, e)) in self.busy.iter().enumerate() {
            if e <= start {
                continue;
            }
            if s >= start + dur_ns {
                at = i;
                break;
            }
            start = start.max(e);
        }
        // Joined with a neighbour it touches (keeps the list short).
        if at > 0 && self.busy[at - 1].1 == start {
            self.busy[at - 1].1 = start + dur_ns;
            if at < self.busy.len() && self.busy[at].0 == start + dur_ns {
                self.busy[at - 1].1 = self.busy[at].1;
                self.busy.remove(at);
            }
        } else if at < self.busy.len() && self.busy[at].0 == start + dur_ns {
            self.busy[at].0 = start;
        } else {
            self.busy.insert(at, (start, start + dur_ns));
        }
        (start, start + dur_ns)
    }

    /// Forgets intervals over by `now_ns` (nothing can be reserved before now).
    pub fn prune(&mut self, now_ns: Nanos) {
        let keep = self.busy.iter().position(|&(_, e)| e > now_ns).unwrap_or(self.busy.len());
        self.busy.drain(..keep);
    }

    /// The end of the busy stretch covering `t` (`t` if idle then).
    pub fn busy_until(&self, t: Nanos) -> Nanos {
        self.busy_until_after(0, t)
    }

    /// `busy_until(t)` as if pruned at `horizon_ns` (intervals over by then ignored).
    pub fn busy_until_after(&self, horizon_ns: Nanos, t: Nanos) -> Nanos {
        let mut end = t;
        for &(s, e) in &self.busy {
            if e <= horizon_ns {
                continue;
            }
            if s <= end && e > end {
                end = e;
            }
        }
        end
    }

    /// The last reserved instant (0 if none).
    pub fn last_end(&self) -> Nanos {
        self.busy.last().map_or(0, |&(_, e)| e)
    }
}

/// A program's die work as page operations: GC's copy reads, its copy programs, its erases,
/// then the program itself.
pub fn push_work(ops: &mut Vec<(OpKind, Nanos)>, work: DieWork, t: &FlashTiming) {
    let gc_programs = work.programs.saturating_sub(1);
    ops.extend((0..work.reads).map(|_| (OpKind::Read, t.read_ns())));
    ops.extend((0..gc_programs).map(|_| (OpKind::Program, t.program_ns())));
    ops.extend((0..work.erases).map(|_| (OpKind::Erase, t.erase_ns())));
    ops.extend((gc_programs..work.programs).map(|_| (OpKind::Program, t.program_ns())));
}

#[derive(Clone, Debug, Default)]
pub struct Resources {
    /// The dies as first-come timelines (the policy off).
    dies: Vec<Timeline>,
    channels: Vec<Timeline>,
    /// The host link: both directions (half duplex), or host -> device (write data) only.
    link: Timeline,
    /// Device -> host (read data) on a full-duplex link; None: it shares `link`.
    link_out: Option<Timeline>,
    /// The data cache's DRAM channel (None: DRAM accesses take no time; dram.rs).
    dram: Option<Timeline>,
    /// The dies under read priority / suspension (the policy on).
    queues: Vec<DieQueue>,
    /// The last `prune` time. Timelines are pruned to it when next reserved on (a request
    /// touches a few of the dozens of dies and channels), and read as if pruned: the same
    /// intervals as pruning every timeline at every call.
    horizon_ns: Nanos,
    sched: DieScheduling,
    next_job: u64,
    moved: Vec<(u64, Nanos)>,
}

impl Resources {
    /// `full_duplex`: the link's two directions are separate timelines (NVMe/PCIe); `dram`:
    /// the data cache's DRAM channel is a timeline too.
    pub fn new(dies: u32, channels: u32, sched: &DieScheduling, full_duplex: bool, dram: bool) -> Self {
        let on = !sched.is_off();
        Resources {
            dies: if on { Vec::new() } else { vec![Timeline::default(); dies as usize] },
            channels: vec![Timeline::default(); channels as usize],
            link: Timeline::default(),
            link_out: full_duplex.then(Timeline::default),
            dram: dram.then(Timeline::default),
            queues: if on { vec![DieQueue::default(); dies as usize] } else { Vec::new() },
            horizon_ns: 0,
            sched: sched.clone(),
            next_job: 0,
            moved: Vec::new(),
        }
    }

    /// Nothing is reserved before `now_ns` from now on: intervals over by then are forgotten
    /// (the timelines' lazily, see `horizon_ns`).
    pub fn prune(&mut self, now_ns: Nanos) {
        self.horizon_ns = self.horizon_ns.max(now_ns);
        for q in &mut self.queues {
            q.prune(now_ns);
        }
    }

    /// The link's timeline for data towards the host (`to_host`: read data) or towards the
    /// device (write data): the same one unless the link is full duplex.
    pub fn link(&mut self, to_host: bool) -> &mut Timeline {
        let t = match (&mut self.link_out, to_host) {
            (Some(out), true) => out,
            _ => &mut self.link,
        };
        t.prune(self.horizon_ns);
        t
    }

    /// The DRAM channel's timeline (pruned), if DRAM accesses take time.
    pub fn dram(&mut self) -> Option<&mut Timeline> {
        let horizon = self.horizon_ns;
        let t = self.dram.as_mut()?;
        t.prune(horizon);
        Some(t)
    }

    /// When the DRAM channel is free from `t` on (`t` without DRAM timing).
    pub fn dram_busy_until(&self, t: Nanos) -> Nanos {
        self.dram.as_ref().map_or(t, |d| d.busy_until_after(self.horizon_ns, t))
    }

    /// Channel `ch`'s timeline (pruned).
    pub fn channel(&mut self, ch: usize) -> &mut Timeline {
        let t = &mut self.channels[ch];
        t.prune(self.horizon_ns);
        t
    }

    /// When the link direction is free from `t` on.
    pub fn link_busy_until(&self, to_host: bool, t: Nanos) -> Nanos {
        match (&self.link_out, to_host) {
            (Some(out), true) => out.busy_until_after(self.horizon_ns, t),
            _ => self.link.busy_until_after(self.horizon_ns, t),
        }
    }

    /// A page read of `tr` on `die` from `ready`: (start, end).
    pub fn die_read(&mut self, die: u32, ready: Nanos, tr: Nanos) -> (Nanos, Nanos) {
        match self.queues.get_mut(die as usize) {
            Some(q) => {
                let r = q.read(ready, tr, &self.sched);
                q.take_moved(&mut self.moved);
                r
            }
            None => {
                let d = &mut self.dies[die as usize];
                d.prune(self.horizon_ns);
                d.reserve(ready, tr)
            }
        }
    }

    /// A program's die work (its GC's copy reads and programs, erases, then the program) from
    /// `ready`: (job id, end). The id is 0 on a plain timeline (the end never moves);
    /// otherwise the end may move later (`take_moved`).
    pub fn die_job(&mut self, die: u32, ready: Nanos, work: DieWork, t: &FlashTiming) -> (u64, Nanos) {
        let mut ops = Vec::with_capacity((work.reads + work.programs + work.erases) as usize);
        push_work(&mut ops, work, t);
        self.die_ops(die, ready, ops)
    }

    /// A job of page operations in order on `die` from `ready` (an SLC program, a fold):
    /// (job id, end), as `die_job`.
    pub fn die_ops(&mut self, die: u32, ready: Nanos, ops: Vec<(OpKind, Nanos)>) -> (u64, Nanos) {
        let Some(q) = self.queues.get_mut(die as usize) else {
            let busy = ops.iter().map(|o| o.1).sum();
            let d = &mut self.dies[die as usize];
            d.prune(self.horizon_ns);
            return (0, d.reserve(ready, busy).1);
        };
        self.next_job += 1;
        (self.next_job, q.add_job(self.next_job, ready, ops))
    }

    /// When a read reaching `die` at `t` would start.
    pub fn die_busy_until(&self, die: u32, t: Nanos) -> Nanos {
        match self.queues.get(die as usize) {
            Some(q) => q.read_start(t, &self.sched),
            None => self.dies[die as usize].busy_until_after(self.horizon_ns, t),
        }
    }

    /// Whether die jobs may move after they are reserved (read priority: die queues).
    pub fn jobs_move(&self) -> bool {
        !self.queues.is_empty()
    }

    /// Job `id`'s current (start, end) on `die` under read priority (None: over).
    pub fn job_window(&self, die: u32, id: u64) -> Option<(Nanos, Nanos)> {
        self.queues.get(die as usize)?.job_window(id)
    }

    /// Job `id` on `die` may not start before `ready` (under read priority; plain timelines
    /// never move a job).
    pub fn hold_job_until(&mut self, die: u32, id: u64, ready: Nanos) {
        if let Some(q) = self.queues.get_mut(die as usize) {
            q.hold_until(id, ready);
        }
    }

    /// Jobs whose end moved since the last call: (id, new end).
    pub fn take_moved(&mut self, out: &mut Vec<(u64, Nanos)>) {
        out.append(&mut self.moved);
    }

    /// Suspensions so far over all dies.
    pub fn suspensions(&self) -> u64 {
        self.queues.iter().map(|q| q.suspensions).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_reservation_fills_an_earlier_gap() {
        let mut t = Timeline::default();
        assert_eq!(t.reserve(100, 10), (100, 110));
        assert_eq!(t.reserve(0, 50), (0, 50), "before the first");
        assert_eq!(t.reserve(40, 51), (110, 161), "no 51 ns gap from 40 before 100: after 110");
        assert_eq!(t.reserve(40, 50), (50, 100), "exactly the 50 ns gap from 50 to 100");
        assert_eq!(t.busy_until(0), 161, "0..50, 50..100, 100..110 and 110..161 touch");
        let mut u = Timeline::default();
        u.reserve(0, 10);
        u.reserve(30, 10);
        assert_eq!(u.reserve(5, 5), (10, 15), "fits between 10 and 30");
        assert_eq!(u.busy_until(0), 15);
        assert_eq!(u.busy_until(20), 20);
        t.prune(105);
        assert_eq!(t.busy_until(105), 161);
        assert_eq!(t.last_end(), 161);
    }
}
