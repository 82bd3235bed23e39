//! Queueing inside the drive (SATA NCQ, SCSI TCQ): the host may hand the drive up to `depth`
//! commands; the drive serves them one at a time (one actuator) in the order its firmware
//! chooses: arrival order (FIFO), or rotational position ordering (RPO: the command whose
//! seek + rotation from the current head position is least, i.e. SPTF inside the drive, with
//! exact knowledge of the head's angle), with an aging bound so that no command starves.
//! Completions therefore return in any order. At depth 1 the drive has no choice: a command
//! starts as soon as the mechanism is free, as without a queue.
//!
//! A flush (`Op::Flush`) is a barrier: it starts once every command accepted before it has
//! completed, and commands accepted after it wait for it (SATA's FLUSH CACHE is not a queued
//! command). It costs no mechanism time here: the presets' caches write through.

use super::{ArmPath, DeviceView};
use crate::request::{Op, Request};
use crate::time::Nanos;

/// The firmware's choice among queued commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum FirmwareOrder {
    Fifo,
    /// Rotational position ordering; a command waiting longer than `aging_ns` goes first
    /// (the oldest such).
    Rpo { aging_ns: Nanos },
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
    /// When the host handed it over.
    pub accepted_ns: Nanos,
    /// Acceptance order (ties and FIFO).
    seq: u64,
}

#[derive(Debug, Default)]
pub struct DriveQueue {
    cfg: DriveQueueConfig,
    waiting: Vec<Queued>,
    /// The command the mechanism is serving.
    busy: bool,
    next_seq: u64,
    /// Sequence number of the oldest flush waiting (a barrier), if any.
    barrier: Option<u64>,
}

impl DriveQueue {
    pub fn new(cfg: DriveQueueConfig) -> Self {
        DriveQueue { cfg, ..DriveQueue::default() }
    }

    pub fn config(&self) -> DriveQueueConfig {
        self.cfg
    }

    /// Commands accepted and not yet completed (the host's requests in flight).
    pub fn outstanding(&self) -> u32 {
        self.waiting.len() as u32 + self.busy as u32
    }

    pub fn has_slot(&self) -> bool {
        self.outstanding() < self.cfg.depth
    }

    pub fn mechanism_busy(&self) -> bool {
        self.busy
    }

    pub fn accept(&mut self, req: Request, path: ArmPath, now: Nanos) {
        debug_assert!(self.has_slot(), "the host gave the drive more than its depth");
        let seq = self.next_seq;
        self.next_seq += 1;
        if req.op == Op::Flush && self.barrier.is_none() {
            self.barrier = Some(seq);
        }
        self.waiting.push(Queued { req, path, accepted_ns: now, seq });
    }

    /// The command the mechanism serves next (when it is free), chosen by the firmware; it
    /// stays counted as outstanding until `completed`.
    pub fn start_next(&mut self, device: &dyn DeviceView, now: Nanos) -> Option<Queued> {
        if self.busy || self.waiting.is_empty() {
            return None;
        }
        // Before a flush barrier only the commands accepted earlier are eligible; once they are
        // done, the flush itself.
        let limit = self.barrier.unwrap_or(u64::MAX);
        let eligible = |q: &Queued| q.seq < limit;
        let pick = if !self.waiting.iter().any(eligible) {
            self.waiting.iter().position(|q| Some(q.seq) == self.barrier)
        } else {
            match self.cfg.order {
                FirmwareOrder::Fifo => self.oldest(eligible),
                FirmwareOrder::Rpo { aging_ns } => {
                    let aged = |q: &Queued| eligible(q) && now.saturating_sub(q.accepted_ns) > aging_ns;
                    self.oldest(aged).or_else(|| self.closest(device, now, eligible))
                }
            }
        }?;
        let q = self.waiting.swap_remove(pick);
        if Some(q.seq) == self.barrier {
            self.barrier = self.waiting.iter().filter(|w| w.req.op == Op::Flush).map(|w| w.seq).min();
        }
        self.busy = true;
        Some(q)
    }

    /// The mechanism finished its command.
    pub fn completed(&mut self) {
        debug_assert!(self.busy);
        self.busy = false;
    }

    fn oldest(&self, keep: impl Fn(&Queued) -> bool) -> Option<usize> {
        self.waiting.iter().enumerate().filter(|(_, q)| keep(q)).min_by_key(|(_, q)| q.seq).map(|(i, _)| i)
    }

    /// Least positioning time from where the head is now (ties: accepted first).
    fn closest(&self, device: &dyn DeviceView, now: Nanos, keep: impl Fn(&Queued) -> bool) -> Option<usize> {
        self.waiting
            .iter()
            .enumerate()
            .filter(|(_, q)| keep(q))
            .min_by_key(|(_, q)| (device.positioning_time_ns(q.req.start_sector, q.req.size_sectors, q.req.op, now), q.seq))
            .map(|(i, _)| i)
    }
}
