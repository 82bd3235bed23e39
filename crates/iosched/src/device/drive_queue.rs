//! Queueing inside the drive (SATA NCQ, SCSI TCQ): the host may hand the drive up to `depth`
//! commands; the drive serves them one at a time (one actuator) in the order its firmware
//! chooses: arrival order (FIFO), or rotational position ordering (RPO: the command whose
//! seek + rotation from the current head position is least, i.e. SPTF inside the drive, with
//! exact knowledge of the head's angle), with an aging bound so that no command starves.
//! Completions therefore return in any order. At depth 1 the drive has no choice: a command
//! starts as soon as the mechanism is free, as without a queue.
//!
//! A device serving several commands at once (a flash drive: `Device::concurrent_commands`)
//! starts up to that many of the commands it holds, in the same order of choice; its own
//! resources (dies, channels) then decide when each completes.
//!
//! A flush (`Op::Flush`) is a barrier: it starts once every command accepted before it has
//! completed, and commands accepted after it wait for it (SATA's FLUSH CACHE is not a queued
//! command). It costs no mechanism time here: the presets' caches write through. A discard is
//! the same kind of barrier on a drive whose TRIM is not queued (`set_discard_barrier`: ATA
//! DATA SET MANAGEMENT without NCQ, which libata issues only with no NCQ command outstanding,
//! `ata_std_qc_defer`); elsewhere it is an ordinary command.

use super::{ArmPath, DeviceView, SectorPosition};
use crate::request::{Op, Request};
use crate::time::Nanos;

/// The firmware's choice among queued commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum FirmwareOrder {
    Fifo,
    /// Rotational position ordering; a command waiting longer than `aging_ns` goes first
    /// (the oldest such).
    Rpo {
        aging_ns: Nanos,
    },
}

impl FirmwareOrder {
    pub const NAMES: [&'static str; 2] = ["fifo", "rpo"];
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DriveQueueConfig {
    /// Commands the drive accepts at once (1: no queueing).
    pub depth: u32,
    pub order: FirmwareOrder,
}

impl Default for DriveQueueConfig {
    fn default() -> Self {
        DriveQueueConfig { depth: 1, order: FirmwareOrder::Fifo }
    }
}

/// A command the drive holds.
#[derive(Clone, Copy, Debug)]
pub struct Queued {
    pub req: Request,
    pub path: ArmPath,
    /// When the host handed it over (after the scheduler's CPU work under blk-mq).
    pub accepted_ns: Nanos,
    /// When the scheduler dispatched it (`accepted_ns` but for blk-mq's CPU work): what the
    /// request's record and the scheduler's completion see as its dispatch, on every interface.
    pub dispatched_ns: Nanos,
    /// Where it lies on the platters (mapped once, at acceptance).
    pos: SectorPosition,
    /// Acceptance order (ties and FIFO).
    seq: u64,
}

#[derive(Debug, Default)]
pub struct DriveQueue {
    cfg: DriveQueueConfig,
    waiting: Vec<Queued>,
    /// Commands handed over at a later time (blk-mq: the scheduler's CPU work still running),
    /// in the order sent: the firmware cannot choose them before they are there.
    incoming: Vec<Queued>,
    /// Commands the mechanism is serving (at most `concurrency`).
    busy: u32,
    /// Commands the device serves at once (1: one mechanism; `set_concurrency`).
    concurrency: u32,
    /// A flush (or a non-queued discard) is being served: nothing else starts until it
    /// completes (with concurrency 1 this holds by itself).
    flush_in_service: bool,
    /// Discards are barriers as flushes are (a non-queued TRIM).
    discard_barrier: bool,
    next_seq: u64,
    /// Sequence number of the oldest flush waiting (a barrier), if any.
    barrier: Option<u64>,
}

impl DriveQueue {
    pub fn new(cfg: DriveQueueConfig) -> Self {
        DriveQueue { cfg, concurrency: 1, ..DriveQueue::default() }
    }

    /// Makes discards barriers, as flushes are (a drive whose TRIM is not an NCQ command).
    pub fn set_discard_barrier(&mut self, on: bool) {
        self.discard_barrier = on;
    }

    /// A flush, or a discard on a drive whose TRIM is not queued.
    fn is_barrier(&self, req: &Request) -> bool {
        req.op == Op::Flush || (self.discard_barrier && req.op == Op::Discard)
    }

    /// Lets the mechanism serve up to `n` (at least 1) commands at once.
    pub fn set_concurrency(&mut self, n: u32) {
        self.concurrency = n.max(1);
    }

    /// Commands accepted and not yet completed (the host's requests in flight).
    pub fn outstanding(&self) -> u32 {
        (self.waiting.len() + self.incoming.len()) as u32 + self.busy
    }

    /// When the next command handed over later reaches the drive (None: none on its way). The
    /// engine's wake-up at a hand-over comes from blk-mq's dispatch, which knows the time.
    #[cfg(test)]
    fn next_handover_ns(&self) -> Option<Nanos> {
        self.incoming.iter().map(|q| q.accepted_ns).min()
    }

    pub fn has_slot(&self) -> bool {
        self.outstanding() < self.cfg.depth
    }

    /// The mechanism serves as many commands as it can (one, for a disk).
    pub fn mechanism_busy(&self) -> bool {
        self.busy >= self.concurrency
    }

    /// Commands being served now.
    pub fn in_service(&self) -> u32 {
        self.busy
    }

    pub fn accept(&mut self, req: Request, path: ArmPath, device: &dyn DeviceView, now: Nanos) {
        self.accept_later(req, path, device, now, now);
    }

    /// [`Self::accept`] of a command the scheduler dispatched at `dispatched_ns` that reaches
    /// the drive at `accepted_ns` (not before).
    pub fn accept_later(&mut self, req: Request, path: ArmPath, device: &dyn DeviceView, dispatched_ns: Nanos, accepted_ns: Nanos) {
        debug_assert!(self.has_slot(), "the host gave the drive more than its depth");
        let seq = self.next_seq;
        self.next_seq += 1;
        if self.barrier.is_none() && self.is_barrier(&req) {
            self.barrier = Some(seq);
        }
        // Only an ordering firmware needs the position.
        let pos = match self.cfg.order {
            FirmwareOrder::Rpo { .. } if self.cfg.depth > 1 => device.position_of(req.start_sector),
            _ => SectorPosition::default(),
        };
        let q = Queued { req, path, accepted_ns, dispatched_ns, pos, seq };
        if accepted_ns > dispatched_ns {
            self.incoming.push(q);
        } else {
            self.waiting.push(q);
        }
    }

    /// Commands handed over by `now` join those the firmware chooses from.
    fn take_handed_over(&mut self, now: Nanos) {
        let waiting = &mut self.waiting;
        self.incoming.retain(|q| {
            let arrived = q.accepted_ns <= now;
            if arrived {
                waiting.push(*q);
            }
            !arrived
        });
    }

    /// The command the mechanism serves next (when it is free), chosen by the firmware; it
    /// stays counted as outstanding until `completed`.
    pub fn start_next(&mut self, device: &dyn DeviceView, now: Nanos) -> Option<Queued> {
        self.take_handed_over(now);
        if self.mechanism_busy() || self.flush_in_service || self.waiting.is_empty() {
            return None;
        }
        // Before a flush barrier only the commands accepted earlier are eligible; once they are
        // done, the flush itself.
        let limit = self.barrier.unwrap_or(u64::MAX);
        let eligible = |q: &Queued| q.seq < limit;
        // A flush starts only once every command before it has completed (with concurrency 1,
        // nothing is in service whenever a command may start).
        let flush_waits = |q: &Queued| self.busy > 0 && self.is_barrier(&q.req);
        let pick = if self.waiting.len() == 1 && self.incoming.is_empty() {
            // One command: the firmware has no choice (a lone flush included).
            if flush_waits(&self.waiting[0]) {
                return None;
            }
            Some(0)
        } else if self.barrier.is_some() && !self.waiting.iter().chain(&self.incoming).any(eligible) {
            if self.busy > 0 {
                return None;
            }
            self.waiting.iter().position(|q| Some(q.seq) == self.barrier)
        } else {
            match self.cfg.order {
                FirmwareOrder::Fifo => self.oldest(eligible),
                FirmwareOrder::Rpo { aging_ns } => {
                    let aged = |q: &Queued| eligible(q) && now.saturating_sub(q.accepted_ns) > aging_ns;
                    match self.oldest(aged) {
                        Some(i) => Some(i),
                        None => device.rpo_choice(&self.waiting, limit, now),
                    }
                }
            }
        }?;
        let q = self.waiting.swap_remove(pick);
        if Some(q.seq) == self.barrier {
            self.barrier = self.waiting.iter().chain(&self.incoming).filter(|w| self.is_barrier(&w.req)).map(|w| w.seq).min();
        }
        self.busy += 1;
        self.flush_in_service = self.is_barrier(&q.req);
        Some(q)
    }

    /// The mechanism finished its command.
    pub fn completed(&mut self) {
        debug_assert!(self.busy > 0);
        self.busy -= 1;
        if self.busy == 0 {
            self.flush_in_service = false;
        }
    }

    fn oldest(&self, keep: impl Fn(&Queued) -> bool) -> Option<usize> {
        self.waiting.iter().enumerate().filter(|(_, q)| keep(q)).min_by_key(|(_, q)| q.seq).map(|(i, _)| i)
    }
}

/// The RPO firmware's choice: the least positioning time from where the head is now (ties:
/// accepted first) among the commands of `waiting` accepted before `seq_limit`, by `eval(pos,
/// sectors, op)`. The command nearest the head (by cylinder) is evaluated first; then every other
/// one whose seek alone could still beat the best found, in one pass, no sort: `seek_exceeds(d,
/// best)` says whether the least seek over distances >= `d` (`seek_lower_bound_ns`, the bound
/// host SPTF uses) is above `best`. Generic, so that a device's estimate inlines
/// (`DeviceView::rpo_choice`): no virtual call per candidate.
pub fn closest(
    waiting: &[Queued],
    seq_limit: u64,
    head_cylinder: u32,
    eval: impl Fn(&SectorPosition, u32, Op) -> Nanos,
    seek_exceeds: impl Fn(u32, Nanos) -> bool,
) -> Option<usize> {
    let keep = |q: &Queued| q.seq < seq_limit;
    let nearest = waiting
        .iter()
        .enumerate()
        .filter(|(_, q)| keep(q))
        .min_by_key(|(_, q)| (q.pos.cylinder.abs_diff(head_cylinder), q.seq))
        .map(|(i, _)| i)?;
    let eval = |q: &Queued| eval(&q.pos, q.req.size_sectors, q.req.op);
    let mut best = (eval(&waiting[nearest]), waiting[nearest].seq, nearest);
    for (i, q) in waiting.iter().enumerate() {
        if i == nearest || !keep(q) || seek_exceeds(q.pos.cylinder.abs_diff(head_cylinder), best.0) {
            continue;
        }
        let t = eval(q);
        if (t, q.seq) < (best.0, best.1) {
            best = (t, q.seq, i);
        }
    }
    Some(best.2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{presets::preset, Device, RotationalDisk};
    use crate::request::Request;

    fn req(id: u64, sector: u64, op: Op) -> Request {
        Request::new(id, op, sector, 8, 0)
    }

    fn disk() -> RotationalDisk {
        RotationalDisk::new(preset("ibm-deskstar-34gxp").unwrap()).unwrap()
    }

    fn drain(q: &mut DriveQueue, d: &dyn DeviceView, now: Nanos) -> Vec<u64> {
        let mut out = Vec::new();
        while let Some(c) = q.start_next(d, now) {
            out.push(c.req.id);
            q.completed();
        }
        out
    }

    #[test]
    fn fifo_serves_in_acceptance_order_and_counts_slots() {
        let d = disk();
        let mut q = DriveQueue::new(DriveQueueConfig { depth: 3, order: FirmwareOrder::Fifo });
        for (id, s) in [(0, 50_000_000), (1, 100), (2, 20_000_000)] {
            assert!(q.has_slot());
            q.accept(req(id, s, Op::Read), ArmPath::Direct, &d, 0);
        }
        assert!(!q.has_slot());
        assert_eq!(q.outstanding(), 3);
        assert_eq!(drain(&mut q, &d, 0), vec![0, 1, 2]);
        assert_eq!(q.outstanding(), 0);
    }

    #[test]
    fn rpo_serves_the_least_positioning_time_first() {
        let d = disk(); // head at cylinder 0, sector 0 of a fresh disk
        let mut q = DriveQueue::new(DriveQueueConfig { depth: 8, order: FirmwareOrder::Rpo { aging_ns: u64::MAX } });
        let sectors = [60_000_000u64, 5_000_000, 30_000_000, 1_000];
        for (i, s) in sectors.iter().enumerate() {
            q.accept(req(i as u64, *s, Op::Read), ArmPath::Direct, &d, 0);
        }
        let first = q.start_next(&d, 0).unwrap().req;
        // By hand: the candidate with the least positioning time from the head's state.
        let best = sectors.iter().enumerate().min_by_key(|(_, s)| d.positioning_time_ns(**s, 8, Op::Read, 0)).unwrap().0;
        assert_eq!(first.id, best as u64, "the bounded search finds the brute-force minimum");
        assert_ne!(first.id, 0, "not arrival order");
    }

    #[test]
    fn rpo_serves_an_aged_command_first() {
        let d = disk();
        let aging = 100_000_000; // 100 ms
        let mut q = DriveQueue::new(DriveQueueConfig { depth: 8, order: FirmwareOrder::Rpo { aging_ns: aging } });
        q.accept(req(0, 60_000_000, Op::Read), ArmPath::Direct, &d, 0); // far away, accepted at 0
        q.accept(req(1, 1_000, Op::Read), ArmPath::Direct, &d, 50_000_000); // near, later
                                                                            // At 90 ms nothing has waited 100 ms: the near one goes first.
        assert_eq!(q.start_next(&d, 90_000_000).unwrap().req.id, 1);
        q.completed();
        q.accept(req(2, 2_000, Op::Read), ArmPath::Direct, &d, 95_000_000);
        // At 101 ms request 0 has waited past the bound: it goes first despite its seek.
        assert_eq!(q.start_next(&d, 101_000_000).unwrap().req.id, 0);
    }

    /// The rotational disk's prepared choice (`rpo_choice`: buffer filter, stream window, coarse
    /// seek bound) is the plain search's by `positioning_time_at_ns` and `seek_lower_bound_ns`,
    /// over random queues of reads and writes, some in the buffer or the read-ahead stream, as
    /// the drive's state moves on.
    #[test]
    fn the_prepared_rpo_choice_is_the_plain_search() {
        use rand::{Rng, SeedableRng};
        for name in ["wd-ultrastar-hc310", "ibm-deskstar-34gxp", "maxtor-stm332061"] {
            let mut d = RotationalDisk::new(preset(name).unwrap()).unwrap();
            let cap = d.capacity_sectors();
            let mut rng = rand_pcg::Pcg64::seed_from_u64(27);
            let (mut now, mut recent) = (0, vec![0u64]);
            for round in 0..400u64 {
                let n = rng.gen_range(2..40);
                let waiting: Vec<Queued> = (0..n)
                    .map(|i| {
                        // A third near what was served lately (buffer and read-ahead hits).
                        let sector = if rng.gen_bool(0.33) {
                            let base = recent[rng.gen_range(0..recent.len())];
                            (base + rng.gen_range(0..4_000)).min(cap - 64)
                        } else {
                            rng.gen_range(0..cap - 64)
                        };
                        let op = if rng.gen_bool(0.25) { Op::Write } else { Op::Read };
                        let req = Request::new(round * 100 + i, op, sector, rng.gen_range(1..64), 0);
                        Queued { req, path: ArmPath::Direct, accepted_ns: now, dispatched_ns: now, pos: d.position_of(sector), seq: i ^ 5 }
                    })
                    .collect();
                let limit = if rng.gen_bool(0.2) { rng.gen_range(0..n) } else { u64::MAX };
                d.advance_to(now);
                let plain = closest(
                    &waiting,
                    limit,
                    d.head_cylinder(),
                    |p, s, op| d.positioning_time_at_ns(p, s, op, now),
                    |dist, best| d.seek_lower_bound_ns(dist) > best,
                );
                assert_eq!(d.rpo_choice(&waiting, limit, now), plain, "{name}, round {round}");
                // Serve the choice (or any one) so that the head, buffer and stream move on.
                let q = waiting[plain.unwrap_or(0)];
                let done = d.service(&q.req, ArmPath::Direct, now).completion_ns;
                recent.push(q.req.start_sector);
                now = done + rng.gen_range(0..3_000_000);
            }
        }
    }

    /// A command whose hand-over lies ahead (blk-mq's CPU work) is not the firmware's to choose
    /// until then, however near it lies; a flush sent after it waits for it too.
    #[test]
    fn commands_handed_over_later_are_chosen_only_once_there() {
        let d = disk();
        let mut q = DriveQueue::new(DriveQueueConfig { depth: 8, order: FirmwareOrder::Rpo { aging_ns: u64::MAX } });
        q.accept(req(0, 60_000_000, Op::Read), ArmPath::Direct, &d, 0);
        q.accept_later(req(1, 0, Op::Read), ArmPath::Direct, &d, 0, 1_900); // nearest the head
        assert_eq!(q.outstanding(), 2);
        assert_eq!(q.next_handover_ns(), Some(1_900));
        let first = q.start_next(&d, 1_000).unwrap();
        assert_eq!((first.req.id, first.dispatched_ns, first.accepted_ns), (0, 0, 0), "the near one is not there yet");
        q.completed();
        let second = q.start_next(&d, 1_900).unwrap();
        assert_eq!((second.req.id, second.dispatched_ns, second.accepted_ns), (1, 0, 1_900));
        q.completed();
        assert_eq!(q.next_handover_ns(), None);

        // A flush already there waits for a write sent before it that is not.
        let mut q = DriveQueue::new(DriveQueueConfig { depth: 8, order: FirmwareOrder::Rpo { aging_ns: u64::MAX } });
        q.accept_later(req(0, 1_000, Op::Write), ArmPath::Direct, &d, 0, 5_000);
        q.accept(req(1, 0, Op::Flush), ArmPath::Direct, &d, 0);
        assert!(q.start_next(&d, 0).is_none());
        assert_eq!(q.start_next(&d, 5_000).unwrap().req.id, 0);
        q.completed();
        assert_eq!(q.start_next(&d, 5_000).unwrap().req.id, 1);
    }

    #[test]
    fn a_flush_is_a_barrier() {
        let mut d = disk();
        let mut q = DriveQueue::new(DriveQueueConfig { depth: 8, order: FirmwareOrder::Rpo { aging_ns: u64::MAX } });
        q.accept(req(0, 60_000_000, Op::Write), ArmPath::Direct, &d, 0);
        q.accept(req(1, 0, Op::Flush), ArmPath::Direct, &d, 0);
        q.accept(req(2, 1_000, Op::Write), ArmPath::Direct, &d, 0); // nearer, but after the flush
        let first = q.start_next(&d, 0).unwrap().req;
        assert_eq!(first.id, 0, "only commands accepted before the flush may start");
        d.service(&first, ArmPath::Direct, 0);
        q.completed();
        assert_eq!(drain(&mut q, &d, 0), vec![1, 2]);
    }

    #[test]
    fn a_discard_is_a_barrier_only_where_trim_is_not_queued() {
        // Several commands at once (a flash drive): a write in service, then a discard and a
        // read. Non-queued TRIM (ata_std_qc_defer): the discard waits for the write, the read
        // for the discard. Queued (NVMe, SATA queued TRIM): all three start at once.
        let d = disk();
        for barrier in [true, false] {
            let mut q = DriveQueue::new(DriveQueueConfig { depth: 8, order: FirmwareOrder::Fifo });
            q.set_concurrency(8);
            q.set_discard_barrier(barrier);
            q.accept(req(0, 0, Op::Write), ArmPath::Direct, &d, 0);
            assert_eq!(q.start_next(&d, 0).unwrap().req.id, 0);
            q.accept(req(1, 100, Op::Discard), ArmPath::Direct, &d, 0);
            q.accept(req(2, 200, Op::Read), ArmPath::Direct, &d, 0);
            if barrier {
                assert!(q.start_next(&d, 0).is_none(), "the discard waits for the write; the read for the discard");
                q.completed();
                assert_eq!(q.start_next(&d, 0).unwrap().req.id, 1);
                assert!(q.start_next(&d, 0).is_none(), "nothing starts beside a non-queued discard");
                q.completed();
                assert_eq!(q.start_next(&d, 0).unwrap().req.id, 2);
            } else {
                assert_eq!(q.start_next(&d, 0).unwrap().req.id, 1);
                assert_eq!(q.start_next(&d, 0).unwrap().req.id, 2);
            }
        }
    }
}
