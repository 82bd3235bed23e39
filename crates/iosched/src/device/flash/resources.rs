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
//! `die_job` and `die_busy_until` (and the two below), whichever the policy.
//!
//! Chips (`dies_per_chip` > 1): the dies of one chip share one timeline or queue, as MQSim's
//! transaction scheduler sends a chip a command only when it is idle. Without cache registers
//! (`cache_registers = false`, MQSim's chips again) a die has only its page register: a read
//! holds it until the data is out over the channel (`die_read_out`), a program from the start
//! of its data's transfer in (`die_job_fed`), each placed where the channel is free then.

use super::die_scheduling::{DieQueue, DieScheduling, OpKind};
use super::ftl::DieWork;
use super::timing::FlashTiming;
use crate::fast_hash::FastMap;
use crate::time::Nanos;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Reserved intervals [start, end), sorted and disjoint.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    busy: Vec<(Nanos, Nanos)>,
}

impl Timeline {
    /// Reserves `dur_ns` at the earliest gap from `ready_ns` on: (start, end).
    pub fn reserve(&mut self, ready_ns: Nanos, dur_ns: Nanos) -> (Nanos, Nanos) {
        if dur_ns == 0 {
            return (ready_ns, ready_ns);
        }
        let (start, at) = self.gap(ready_ns, dur_ns);
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

    /// Where `reserve(ready_ns, dur_ns)` would start, without reserving.
    pub fn earliest(&self, ready_ns: Nanos, dur_ns: Nanos) -> Nanos {
        if dur_ns == 0 {
            return ready_ns;
        }
        self.gap(ready_ns, dur_ns).0
    }

    /// The earliest gap of `dur_ns` (> 0) from `ready_ns`: its start, and the index of the first
    /// interval after it.
    fn gap(&self, ready_ns: Nanos, dur_ns: Nanos) -> (Nanos, usize) {
        let mut start = ready_ns;
        // The intervals over by `ready_ns` (sorted and disjoint: a prefix) are skipped by binary
        // search on a long list (a long write taken in parts reserves many on one timeline before
        // it is next pruned); a short one, the usual, is walked.
        let first = if self.busy.len() > 16 { self.busy.partition_point(|&(_, e)| e <= start) } else { 0 };
        for (i, &(s, e)) in self.busy.iter().enumerate().skip(first) {
            if e <= start {
                continue;
            }
            if s >= start + dur_ns {
                return (start, i);
            }
            start = start.max(e);
        }
        (start, self.busy.len())
    }

    /// Frees [start_ns, start_ns + dur_ns), which must lie inside one reserved interval.
    pub fn release(&mut self, start_ns: Nanos, dur_ns: Nanos) {
        if dur_ns == 0 {
            return;
        }
        let end = start_ns + dur_ns;
        let Some(i) = self.busy.iter().position(|&(s, e)| s <= start_ns && end <= e) else {
            debug_assert!(false, "[{start_ns}, {end}) is not reserved");
            return;
        };
        let (s, e) = self.busy[i];
        match (s < start_ns, end < e) {
            (false, false) => {
                self.busy.remove(i);
            }
            (true, false) => self.busy[i].1 = start_ns,
            (false, true) => self.busy[i].0 = end,
            (true, true) => {
                self.busy[i].1 = start_ns;
                self.busy.insert(i + 1, (end, e));
            }
        }
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
    /// The dies (one per chip) as first-come timelines (the policy off).
    dies: Vec<Timeline>,
    channels: Vec<Timeline>,
    /// The host link: both directions (half duplex), or host -> device (write data) only.
    link: Timeline,
    /// Device -> host (read data) on a full-duplex link; None: it shares `link`.
    link_out: Option<Timeline>,
    /// The data cache's DRAM channel (None: DRAM accesses take no time; dram.rs).
    dram: Option<Timeline>,
    /// The dies (one per chip) under read priority / suspension (the policy on).
    queues: Vec<DieQueue>,
    /// At most the earliest end of a first job queued on any die (`Nanos::MAX`: none), lowered
    /// after each change to a queue: `prune` before it has no job to forget and skips the dies.
    queues_first_end: Nanos,
    /// The last `prune` time. Timelines are pruned to it when next reserved on (a request
    /// touches a few of the dozens of dies and channels), and read as if pruned: the same
    /// intervals as pruning every timeline at every call.
    horizon_ns: Nanos,
    sched: DieScheduling,
    next_job: u64,
    moved: Vec<(u64, Nanos)>,
    /// Command slots (chips): die `d` takes chip `d % chips`'s timeline or queue (every die its
    /// own when `chips` is the number of dies).
    chips: u32,
    /// Programs fed over a channel as they begin (no cache registers) that reads may still push
    /// later under read priority, by job id: their transfers move with them.
    fed: FastMap<u64, Feed>,
    /// (end when recorded, job id) of `fed`, to forget them once over (an entry whose job has
    /// moved since is pushed again at its new end).
    fed_ends: BinaryHeap<Reverse<(Nanos, u64)>>,
}

/// A fed program's transfer on its channel.
#[derive(Clone, Copy, Debug)]
struct Feed {
    ch: usize,
    /// The transfer's start.
    at_ns: Nanos,
    in_ns: Nanos,
    /// From the transfer's start to the job's end as placed (the transfer and tPROG): a moved
    /// job's transfer goes this long before its new end.
    tail_ns: Nanos,
}

impl Resources {
    /// `chips`: the dies' command slots (`dies` for independent dies; fewer, each shared by
    /// dies `chips` apart: MQSim's chips); `full_duplex`: the link's two directions are separate
    /// timelines (NVMe/PCIe); `dram`: the data cache's DRAM channel is a timeline too.
    pub fn new(chips: u32, channels: u32, sched: &DieScheduling, full_duplex: bool, dram: bool) -> Self {
        let on = !sched.is_off();
        Resources {
            dies: if on { Vec::new() } else { vec![Timeline::default(); chips as usize] },
            channels: vec![Timeline::default(); channels as usize],
            link: Timeline::default(),
            link_out: full_duplex.then(Timeline::default),
            dram: dram.then(Timeline::default),
            queues: if on { vec![DieQueue::default(); chips as usize] } else { Vec::new() },
            queues_first_end: Nanos::MAX,
            horizon_ns: 0,
            sched: sched.clone(),
            next_job: 0,
            moved: Vec::new(),
            chips,
            fed: FastMap::default(),
            fed_ends: BinaryHeap::new(),
        }
    }

    /// Die `die`'s command slot: its chip.
    fn chip(&self, die: u32) -> usize {
        (if die < self.chips { die } else { die % self.chips }) as usize
    }

    /// Nothing is reserved before `now_ns` from now on: intervals over by then are forgotten
    /// (the timelines' lazily, see `horizon_ns`).
    pub fn prune(&mut self, now_ns: Nanos) {
        self.horizon_ns = self.horizon_ns.max(now_ns);
        if now_ns >= self.queues_first_end {
            let mut first = Nanos::MAX;
            for q in &mut self.queues {
                q.prune(now_ns);
                first = first.min(q.first_end());
            }
            self.queues_first_end = first;
        }
        while let Some(&Reverse((end, id))) = self.fed_ends.peek() {
            if end > now_ns {
                break;
            }
            self.fed_ends.pop();
            if let Some(f) = self.fed.get(&id) {
                let now_end = f.at_ns + f.tail_ns;
                if now_end > now_ns {
                    self.fed_ends.push(Reverse((now_end, id)));
                } else {
                    self.fed.remove(&id);
                }
            }
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
        let chip = self.chip(die);
        match self.queues.get_mut(chip) {
            Some(q) => {
                let r = q.read(ready, tr, &self.sched);
                // The read was laid out as reaching the die no earlier than the last one did.
                let t0 = q.latest_read_ns();
                let from = self.moved.len();
                q.take_moved(&mut self.moved);
                self.queues_first_end = self.queues_first_end.min(q.first_end());
                if !self.fed.is_empty() {
                    self.move_feeds(from, t0);
                }
                r
            }
            None => {
                let d = &mut self.dies[chip];
                d.prune(self.horizon_ns);
                d.reserve(ready, tr)
            }
        }
    }

    /// The transfers of fed programs among `moved[from..]` (pushed later by a read arriving at
    /// `t0`) move with them, if not begun by `t0`: to just before the program's new end, or the
    /// channel's first gap after that (the die is not moved again for it).
    fn move_feeds(&mut self, from: usize, t0: Nanos) {
        for &(id, end) in &self.moved[from..] {
            let Some(f) = self.fed.get_mut(&id) else { continue };
            let at = end - f.tail_ns;
            if f.at_ns < t0 || at == f.at_ns {
                continue;
            }
            let ch = &mut self.channels[f.ch];
            ch.prune(self.horizon_ns);
            ch.release(f.at_ns, f.in_ns);
            f.at_ns = ch.reserve(at, f.in_ns).0;
        }
    }

    /// A page read of `tr` on `die` from `ready` whose data then takes `out_ns` over channel
    /// `ch`, the die held until its data is out (no cache register: the page register is the
    /// die's only buffer, as MQSim's chips): (read start, end of the data's transfer). The die is
    /// taken from when a read reaching it starts; its command (`cmd_ns` of command and address
    /// cycles, 0 for none) goes over the channel at the first gap from then, tR follows, and
    /// the data's transfer is placed at the channel's first gap after the page is read, the die
    /// held through any wait for the channel.
    pub fn die_read_out(&mut self, die: u32, ch: usize, ready: Nanos, tr: Nanos, out_ns: Nanos, cmd_ns: Nanos) -> (Nanos, Nanos) {
        let chip = self.chip(die);
        let horizon = self.horizon_ns;
        self.channels[ch].prune(horizon);
        // From the die's start: the command on the channel, tR, the data out (the data's gap is
        // after the command's end, so finding both before reserving either is exact).
        let out_end_from = |channel: &Timeline, start: Nanos| {
            let cmd_end = channel.earliest(start, cmd_ns) + cmd_ns;
            channel.earliest(cmd_end + tr, out_ns) + out_ns
        };
        let (start, hold) = match self.queues.get(chip) {
            // A read's place in a die queue does not depend on its length.
            Some(q) => {
                let start = q.read_start(ready, &self.sched);
                (start, out_end_from(&self.channels[ch], start) - start)
            }
            None => {
                // A longer hold may need a later gap on the die, which moves the transfer: until
                // the hold found covers the transfer.
                let d = &mut self.dies[chip];
                d.prune(horizon);
                let mut hold = cmd_ns + tr + out_ns;
                let mut start = d.earliest(ready, hold);
                // Each round that does not settle needs a longer hold; past the die's last
                // interval the start no longer moves, so the next round settles.
                loop {
                    let need = out_end_from(&self.channels[ch], start) - start;
                    if need <= hold {
                        hold = need;
                        break;
                    }
                    hold = need;
                    start = d.earliest(ready, hold);
                }
                (start, hold)
            }
        };
        // The command and the data's transfer first: programs the read pushes later move their
        // own transfers (`move_feeds`) around them.
        let out = start + hold;
        let cmd_at = self.channels[ch].earliest(start, cmd_ns);
        let cmd_placed = self.channels[ch].reserve(cmd_at, cmd_ns).0;
        debug_assert_eq!(cmd_placed, cmd_at, "the command placed where it was found");
        let placed = self.channels[ch].reserve(out - out_ns, out_ns).1;
        debug_assert_eq!(placed, out, "the transfer placed where it was found");
        let from = if self.queues.is_empty() { start } else { ready };
        let (s, _) = self.die_read(die, from, hold);
        debug_assert_eq!(s, start, "the read placed where it was found");
        (s, out)
    }

    /// A program job on `die` (`ops` in order, the last the program itself) from `ready`, its
    /// data taking `in_ns` over channel `ch` just before the program, the die held through the
    /// transfer (no cache register: MQSim's chips are sent a program only when the channel is
    /// free, its data in, then tPROG): (job id, end). The job is placed where the channel is
    /// free as its program begins.
    pub fn die_job_fed(&mut self, die: u32, ch: usize, ready: Nanos, mut ops: Vec<(OpKind, Nanos)>, in_ns: Nanos) -> (u64, Nanos) {
        let last = ops.len() - 1;
        ops[last].1 += in_ns;
        let total: Nanos = ops.iter().map(|o| o.1).sum();
        let before = total - ops[last].1;
        let chip = self.chip(die);
        let horizon = self.horizon_ns;
        self.channels[ch].prune(horizon);
        if let Some(d) = self.dies.get_mut(chip) {
            d.prune(horizon);
        }
        let mut from = ready;
        // Each round that does not settle starts later; past the channel's last interval it
        // settles.
        loop {
            let start = match self.queues.get(chip) {
                Some(q) => q.job_start(from),
                None => self.dies[chip].earliest(from, total),
            };
            let feed = start + before;
            let free = self.channels[ch].earliest(feed, in_ns);
            if free == feed {
                break;
            }
            from = free - before;
        }
        let (id, end) = self.die_ops(die, from, ops);
        let tail_ns = total - before;
        let at_ns = self.channels[ch].reserve(end - tail_ns, in_ns).0;
        debug_assert_eq!(at_ns, end - tail_ns, "the transfer placed where it was found");
        if id != 0 {
            // Reads may push it later (read priority): its transfer goes with it.
            self.fed.insert(id, Feed { ch, at_ns, in_ns, tail_ns });
            self.fed_ends.push(Reverse((end, id)));
        }
        (id, end)
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
        let chip = self.chip(die);
        let Some(q) = self.queues.get_mut(chip) else {
            let busy = ops.iter().map(|o| o.1).sum();
            let d = &mut self.dies[chip];
            d.prune(self.horizon_ns);
            return (0, d.reserve(ready, busy).1);
        };
        self.next_job += 1;
        let end = q.add_job(self.next_job, ready, ops);
        self.queues_first_end = self.queues_first_end.min(q.first_end());
        (self.next_job, end)
    }

    /// When a read reaching `die` at `t` would start.
    pub fn die_busy_until(&self, die: u32, t: Nanos) -> Nanos {
        let chip = self.chip(die);
        match self.queues.get(chip) {
            Some(q) => q.read_start(t, &self.sched),
            None => self.dies[chip].busy_until_after(self.horizon_ns, t),
        }
    }

    /// Whether die jobs may move after they are reserved (read priority: die queues).
    pub fn jobs_move(&self) -> bool {
        !self.queues.is_empty()
    }

    /// Job `id`'s current (start, end) on `die` under read priority (None: over).
    pub fn job_window(&self, die: u32, id: u64) -> Option<(Nanos, Nanos)> {
        self.queues.get(self.chip(die))?.job_window(id)
    }

    /// Job `id` on `die` may not start before `ready` (under read priority; plain timelines
    /// never move a job).
    pub fn hold_job_until(&mut self, die: u32, id: u64, ready: Nanos) {
        let chip = self.chip(die);
        if let Some(q) = self.queues.get_mut(chip) {
            q.hold_until(id, ready);
            self.queues_first_end = self.queues_first_end.min(q.first_end());
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

    #[test]
    fn earliest_is_where_reserve_starts() {
        // Random reservations (a small LCG): the probe names the start the reservation takes.
        let mut t = Timeline::default();
        let mut x: u64 = 12345;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..2_000 {
            let (ready, dur) = (next(100_000), next(300));
            let probe = t.earliest(ready, dur);
            assert_eq!(t.reserve(ready, dur).0, probe, "ready {ready} dur {dur}");
        }
    }

    const US: Nanos = 1_000;

    fn timing() -> FlashTiming {
        FlashTiming {
            read_us: 50.0,
            program_us: 500.0,
            erase_ms: 3.0,
            channel_mb_s: 400.0,
            link_mb_s: 3_000.0,
            link_bytes_per_command: 0,
            command_overhead_us: 0.0,
        }
    }

    fn priority() -> DieScheduling {
        DieScheduling { read_priority: true, ..DieScheduling::default() }
    }

    /// Pruning skips the dies' queues only while no queued job can be over: a job queued after
    /// a pass that found none, a job pushed later by a read or held, each is forgotten at its end.
    #[test]
    fn die_queues_forget_each_job_at_its_end() {
        let (t, sched) = (timing(), priority());
        let mut r = Resources::new(4, 2, &sched, false, false);
        let one = DieWork { programs: 1, ..DieWork::default() };
        r.prune(0); // no job queued: the bound is "none"
        let (a, a_end) = r.die_job(0, 0, one, &t);
        assert_eq!(a_end, 500 * US);
        r.prune(a_end - 1);
        assert!(r.job_window(0, a).is_some());
        let (b, b_first_end) = r.die_job(1, 600 * US, one, &t);
        r.prune(a_end);
        assert!(r.job_window(0, a).is_none(), "forgotten at its end");
        // A read reaching die 1 before b starts goes first and pushes b later.
        r.die_read(1, 580 * US, 50 * US);
        let (_, b_end) = r.job_window(1, b).expect("queued");
        assert!(b_end > b_first_end, "b's end moved later ({b_first_end} -> {b_end})");
        r.prune(b_end - 1);
        assert!(r.job_window(1, b).is_some());
        r.prune(b_end);
        assert!(r.job_window(1, b).is_none());
        // A job queued long after the last pass found the queues empty.
        let (c, c_end) = r.die_job(3, b_end, one, &t);
        r.prune(c_end);
        assert!(r.job_window(3, c).is_none());
    }

    #[test]
    fn a_chips_dies_take_one_command_at_a_time() {
        for sched in [DieScheduling::default(), priority()] {
            // 4 dies on 2 channels, 2 chips of 2 dies: dies 0 and 2 share chip 0.
            let mut r = Resources::new(2, 2, &sched, false, false);
            assert_eq!(r.die_read(0, 0, 50 * US), (0, 50 * US));
            assert_eq!(r.die_read(2, 0, 50 * US), (50 * US, 100 * US), "chip 0 is busy with die 0");
            assert_eq!(r.die_read(1, 0, 50 * US), (0, 50 * US), "die 1 is on chip 1");
            // Every die its own chip: no wait.
            let mut own = Resources::new(4, 2, &sched, false, false);
            own.die_read(0, 0, 50 * US);
            assert_eq!(own.die_read(2, 0, 50 * US), (0, 50 * US));
        }
    }

    #[test]
    fn without_a_cache_register_a_read_holds_its_die_until_its_data_is_out() {
        for sched in [DieScheduling::default(), priority()] {
            let mut r = Resources::new(2, 1, &sched, false, false);
            // Another die's transfer holds the channel from 40 to 90 us.
            r.channel(0).reserve(40 * US, 50 * US);
            // Read at 0: page in the register at 50 us, out once the channel frees at 90 (10 us).
            assert_eq!(r.die_read_out(0, 0, 0, 50 * US, 10 * US, 0), (0, 100 * US));
            // The die was held until then: the next read starts at 100 us, not at 50.
            assert_eq!(r.die_read(0, 0, 50 * US).0, 100 * US);
            // With the channel free, the hold is the read and its transfer.
            assert_eq!(r.die_read_out(1, 0, 200 * US, 50 * US, 10 * US, 0), (200 * US, 260 * US));
            assert_eq!(r.die_busy_until(1, 200 * US), 260 * US);
        }
    }

    /// A read's command and address cycles go over the channel before tR, at the channel's
    /// first gap from the die's start, the die held from its start; the data then goes out at
    /// the first gap after tR. A command does not fit a gap shorter than itself.
    #[test]
    fn a_reads_command_takes_the_channel_before_tr() {
        for sched in [DieScheduling::default(), priority()] {
            let mut r = Resources::new(2, 1, &sched, false, false);
            // The channel is busy from 0 to 5 us and from 5.2 to 8 us: the 290 ns command goes
            // at 8 us, tR ends at 58.29 us, the data out by 68.29 us.
            r.channel(0).reserve(0, 5 * US);
            r.channel(0).reserve(5_200, 2_800);
            assert_eq!(r.die_read_out(0, 0, 0, 50 * US, 10 * US, 290), (0, 8 * US + 290 + 60 * US));
            assert_eq!(r.die_busy_until(0, 0), 68_290, "the die held from 0 through the data's transfer");
            let ch = &mut r.channel(0);
            assert_eq!(ch.earliest(0, 200), 5 * US, "the 200 ns gap at 5 us is still free");
            assert_eq!(ch.earliest(8 * US, 290), 8_290, "the command took 8 to 8.29 us");
            assert_eq!(ch.earliest(58_290, 1), 68_290, "the data 58.29 to 68.29 us");
            // A free channel: the command, tR and the data back to back.
            assert_eq!(r.die_read_out(1, 0, 100 * US, 50 * US, 10 * US, 290), (100 * US, 160_290));
        }
    }

    #[test]
    fn a_fed_program_holds_its_die_through_its_transfer_and_waits_for_the_channel() {
        let t = timing();
        for sched in [DieScheduling::default(), priority()] {
            let mut r = Resources::new(1, 1, &sched, false, false);
            // The channel is busy from 0 to 30 us: the program's 20 us of data go in from 30.
            r.channel(0).reserve(0, 30 * US);
            let (_, end) = r.die_job_fed(0, 0, 10 * US, vec![(OpKind::Program, t.program_ns())], 20 * US);
            assert_eq!(end, 30 * US + 20 * US + 500 * US);
            assert_eq!(r.channel(0).busy_until(0), 50 * US, "its data went in from 30 to 50 us");
            // The die was taken from the transfer's start: a read arriving at 40 us waits for the end.
            assert_eq!(r.die_busy_until(0, 40 * US), end);
        }
    }

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, m: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 33) % m.max(1)
        }
    }

    fn busy_sum(t: &Timeline) -> Nanos {
        t.busy.iter().map(|&(s, e)| e - s).sum()
    }

    #[test]
    fn a_held_read_keeps_its_die_until_its_data_is_out_over_random_timelines() {
        // Random die and channel reservations (a helper review's property): the die is held
        // from the read's start to the end of its data's transfer, whatever it takes to settle.
        for seed in 0..3_000u64 {
            let mut g = Lcg(seed);
            let mut r = Resources::new(1, 1, &DieScheduling::default(), false, false);
            for _ in 0..1 + g.next(30) {
                let (a, d) = (g.next(2_000), 1 + g.next(120));
                if g.next(2) == 0 {
                    r.dies[0].reserve(a, d);
                } else {
                    r.channels[0].reserve(a, d);
                }
            }
            let (ready, tr, out) = (g.next(1_000), 1 + g.next(80), 1 + g.next(40));
            // Half the reads with a command on the channel before tR.
            let cmd = if seed % 2 == 0 { 0 } else { 1 + g.next(20) };
            let (die_before, ch_before) = (r.dies[0].clone(), busy_sum(&r.channels[0]));
            let (s, end) = r.die_read_out(0, 0, ready, tr, out, cmd);
            assert_eq!(busy_sum(&r.channels[0]) - ch_before, out + cmd, "seed {seed}");
            assert!(s >= ready && end - out >= s + cmd + tr, "seed {seed}");
            assert_eq!(die_before.earliest(s, end - s), s, "seed {seed}: the die was free over the hold");
            assert_eq!(busy_sum(&r.dies[0]) - busy_sum(&die_before), end - s, "seed {seed}: held to the data's end");
        }
    }

    /// One die on one channel (plain timelines) free only in gaps at k x 1,000 ns of
    /// `gap_len(k)`, k < 12 (busy for long after), the channel busy over `channel(k)` = (start,
    /// length).
    fn twelve_die_gaps(gap_len: impl Fn(u64) -> u64, channel: impl Fn(u64) -> (Nanos, Nanos)) -> Resources {
        let mut r = Resources::new(1, 1, &DieScheduling::default(), false, false);
        let mut prev = 0;
        for k in 0..12u64 {
            let gap = k * 1_000;
            if gap > prev {
                r.dies[0].reserve(prev, gap - prev);
            }
            prev = gap + gap_len(k);
            let (at, len) = channel(k);
            r.channels[0].reserve(at, len);
        }
        r.dies[0].reserve(prev, 100_000);
        r
    }

    #[test]
    fn a_held_read_settles_over_many_rounds() {
        // Die gaps at k x 1000 us of growing length, each just too short once the channel makes
        // the data wait: the hold grows round after round (8 rounds were once the limit).
        let (tr, out) = (50, 10);
        let mut r = twelve_die_gaps(|k| tr + out + k, |k| (k * 1_000 + tr, k + 1));
        let before = busy_sum(&r.dies[0]);
        let (s, end) = r.die_read_out(0, 0, 0, tr, out, 0);
        assert_eq!(busy_sum(&r.dies[0]) - before, end - s, "held until its data is out");
        assert!(s >= 11_000, "no earlier gap fits: {s}");
    }

    #[test]
    fn a_fed_program_starts_where_the_channel_takes_its_data_over_random_timelines() {
        for (seed, sched) in (0..3_000u64).map(|s| (s, if s % 2 == 0 { DieScheduling::default() } else { priority() })) {
            let mut g = Lcg(seed);
            let mut r = Resources::new(1, 1, &sched, false, false);
            for _ in 0..1 + g.next(30) {
                let (a, d) = (g.next(3_000), 1 + g.next(150));
                match g.next(3) {
                    0 => {
                        r.die_ops(0, a, vec![(OpKind::Program, d)]);
                    }
                    1 => {
                        r.die_read(0, a, d / 4 + 1);
                    }
                    _ => {
                        r.channels[0].reserve(a, d / 3 + 1);
                    }
                }
            }
            let (ready, gc, prog, inn) = (g.next(1_000), g.next(60), 1 + g.next(200), 1 + g.next(40));
            let mut ops = Vec::new();
            if gc > 0 {
                ops.push((OpKind::Read, gc));
            }
            ops.push((OpKind::Program, prog));
            let ch = r.channels[0].clone();
            let (_, end) = r.die_job_fed(0, 0, ready, ops, inn);
            let feed = end - prog - inn;
            assert!(end - prog - inn - gc >= ready, "seed {seed}");
            assert_eq!(ch.earliest(feed, inn), feed, "seed {seed}: the channel was free as the program began");
            assert_eq!(busy_sum(&r.channels[0]) - busy_sum(&ch), inn, "seed {seed}");
        }
    }

    #[test]
    fn a_fed_program_settles_over_many_rounds() {
        // Die gaps exactly one job long at k x 1000 ns, the channel busy 1 ns at each gap's start:
        // each round finds the channel busy where the die is free, until past the last gap.
        let (prog, inn) = (100, 10);
        let mut r = twelve_die_gaps(|_| prog + inn, |k| (k * 1_000, 1));
        let ch = r.channels[0].clone();
        let (_, end) = r.die_job_fed(0, 0, 0, vec![(OpKind::Program, prog)], inn);
        let feed = end - prog - inn;
        assert_eq!(ch.earliest(feed, inn), feed, "the data goes in as the program begins");
        assert!(feed > 11_000, "no gap on the die fits while the channel is busy at its start: {feed}");
    }

    #[test]
    fn a_fed_programs_transfer_moves_with_it_when_reads_go_first() {
        let mut r = Resources::new(1, 1, &priority(), false, false);
        let (_, end) = r.die_job_fed(0, 0, 0, vec![(OpKind::Program, 500)], 20);
        assert_eq!((end, r.channels[0].busy.clone()), (520, vec![(0, 20)]));
        // A read arriving as the program would begin goes first: the program and its transfer
        // start after it.
        r.die_read(0, 0, 50);
        assert_eq!(r.channels[0].busy, vec![(50, 70)]);
        // A second program queues behind the first (570 to 1,090, its data in from 570); a read
        // arriving while the first runs waits for it, then goes before the second, which moves
        // with its transfer.
        let (id2, end2) = r.die_job_fed(0, 0, 0, vec![(OpKind::Program, 500)], 20);
        assert_eq!(end2, 1_090);
        assert_eq!(r.channels[0].busy, vec![(50, 70), (570, 590)]);
        assert_eq!(r.die_read(0, 100, 30), (570, 600));
        assert_eq!(r.job_window(0, id2), Some((600, 1_120)));
        assert_eq!(r.channels[0].busy, vec![(50, 70), (600, 620)], "its transfer moved with it");
        // A read arriving once the program has begun does not move its transfer.
        r.die_read(0, 610, 30);
        assert_eq!(r.channels[0].busy, vec![(50, 70), (600, 620)]);
        // Forgotten once over.
        r.prune(1_200);
        assert!(r.fed.is_empty() && r.fed_ends.is_empty());
    }

    #[test]
    fn release_frees_part_of_an_interval() {
        let mut t = Timeline::default();
        t.reserve(0, 100);
        t.release(40, 20);
        assert_eq!(t.busy, vec![(0, 40), (60, 100)]);
        t.release(0, 40);
        t.release(90, 10);
        assert_eq!(t.busy, vec![(60, 90)]);
        t.release(60, 30);
        assert!(t.busy.is_empty());
    }
}
