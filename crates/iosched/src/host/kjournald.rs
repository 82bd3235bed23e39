//! kjournald, ext3's commit thread (Linux 2.6.9 fs/jbd/journal.c `kjournald`, fs/jbd/commit.c
//! `journal_commit_transaction`), on the journal's bookkeeping in fs/journal.rs. Only a
//! scenario with `fs = "ext3"` has one.
//!
//! A commit starts when the running transaction's timer fires (5 s after it began), when a
//! task asks for it (fsync, sync) or when the transaction is full; one commit at a time, the
//! next transaction running meanwhile. kjournald, a kernel thread with its own pid, then:
//! 1. writes the dirty pages of the files the transaction orders (ordered data mode) and waits
//!    until none of their pages is under writeback (its own writes and the flusher's);
//! 2. writes the descriptor blocks and metadata copies at the log's head, and waits;
//! 3. writes the commit block, and waits;
//! 4. checkpoints: the committed metadata blocks are dirtied in the page cache, where the
//!    flusher writes them to their home locations later (`dirty_expire_centisecs`, or
//!    background writeback); tasks waiting for the commit go on.
//!
//! Its writes are plain asynchronous WRITEs, as 2.6.9's `ll_rw_block(WRITE)` and
//! `submit_bh(WRITE)` (no WRITE_SYNC then); the log blocks are flagged as metadata like every
//! other metadata write of the host. Contiguous buffers go down as one bio (2.6.9 submits each
//! 4 KiB buffer alone and the block layer merges them).

use super::fs::journal::{CommitPlan, Journal};
use super::kernel::{BioInfo, BioKind, Kernel, Submitter};
use super::{Ino, PageKey, BDEV_INO, PAGE_SECTORS};
use crate::fast_hash::FastSet;
use crate::request::{Op, Principal, Request, RequestId};
use crate::time::Nanos;
use crate::workload::{Emit, NewRequest};
use std::collections::{BTreeSet, VecDeque};

/// Where kjournald is in a commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    Idle,
    /// Phase 2: the ordered data.
    Data,
    /// Phase 3-5: descriptors and metadata copies.
    Log,
    /// Phase 6: the commit block.
    Commit,
}

pub(super) struct Kjournald {
    pub principal: Principal,
    pub journal: Journal,
    pub queue: VecDeque<(NewRequest, BioInfo)>,
    pub awaiting: Option<RequestId>,
    pub emitted_unresolved: bool,
    /// Own bios not yet completed.
    pub outstanding: u32,
    pub phase: Phase,
    pub plan: Option<CommitPlan>,
    /// The committing plan's data inodes, and how many of them have pages under writeback:
    /// its data phase ends when none has (kept as writeback starts and ends on them, so that
    /// no pass over a commit of thousands of files is made at every completion).
    plan_data: FastSet<Ino>,
    plan_data_busy: usize,
    /// The transaction whose commit timer is armed.
    timer_tid: Option<u64>,
    /// The journal's change count and the phase when the last kick ended: a kick finding both
    /// the same has nothing to do (it is made after every system call).
    kicked: Option<(u64, Phase)>,
    /// Files whose in-memory inode is dirty (I_DIRTY): written since the last fsync, sync or
    /// flusher pass over them. fsync commits only for such a file (ext3_sync_file ->
    /// sync_inode -> ext3_write_inode -> ext3_force_commit).
    pub inode_dirty: BTreeSet<Ino>,
}

impl Kjournald {
    pub fn new(journal: Journal) -> Self {
        Kjournald {
            principal: Principal::default(),
            journal,
            queue: VecDeque::new(),
            awaiting: None,
            emitted_unresolved: false,
            outstanding: 0,
            phase: Phase::Idle,
            plan: None,
            plan_data: FastSet::default(),
            plan_data_busy: 0,
            timer_tid: None,
            kicked: None,
            inode_dirty: BTreeSet::new(),
        }
    }

    fn own_io_done(&self) -> bool {
        self.outstanding == 0 && self.queue.is_empty() && self.awaiting.is_none() && !self.emitted_unresolved
    }
}

impl Kernel {
    /// A metadata block (holding `sector`) changed under ext3: it joins the running
    /// transaction, its page cached and clean until the commit checkpoints it.
    pub(super) fn journal_meta(&mut self, sector: u64, now: Nanos) {
        let page = sector / PAGE_SECTORS;
        let key = PageKey::new(BDEV_INO, page);
        if !self.cache.contains(key) {
            // A block the file system just allocated or read: in memory, uptodate.
            self.cache.add_locked(key);
            self.cache.read_done(key);
        }
        if let Some(kj) = self.kjournald.as_mut() {
            kj.journal.dirty_meta(page, now);
        }
    }

    /// ext3's part of a buffered write() to `ino`: its data ordered in the running transaction,
    /// its inode block journaled (the time stamps: `inode_update_time` -> `ext3_dirty_inode`).
    pub(super) fn journal_write(&mut self, ino: Ino, now: Nanos) {
        let inode_sector = self.layout.inode_block(ino);
        self.journal_meta(inode_sector, now);
        if let Some(kj) = self.kjournald.as_mut() {
            kj.journal.dirty_data(ino, now);
            kj.inode_dirty.insert(ino);
        }
    }

    /// fsync(`ino`) on ext3: the transaction to wait for, asked to commit (None: the inode is
    /// clean, nothing to commit). An inode dirtied in a transaction already committed gets a
    /// new, empty one committed (a commit block alone), as `ext3_force_commit` does.
    pub(super) fn journal_fsync(&mut self, ino: Ino, now: Nanos) -> Option<u64> {
        let kj = self.kjournald.as_mut()?;
        if !kj.inode_dirty.remove(&ino) {
            return None;
        }
        let tid = kj.journal.force(now);
        kj.journal.request_commit(tid);
        Some(tid)
    }

    /// sync() on ext3 (`ext3_sync_fs` -> `log_start_commit`): the running transaction (or the
    /// one committing) to wait for; every inode is clean afterwards (`sync_inodes`).
    pub(super) fn journal_sync(&mut self) -> Option<u64> {
        let kj = self.kjournald.as_mut()?;
        kj.inode_dirty.clear();
        match kj.journal.running_tid() {
            Some(tid) => {
                kj.journal.request_commit(tid);
                Some(tid)
            }
            None => kj.journal.committing_tid(),
        }
    }

    /// Has transaction `tid` been committed (true without a journal)?
    pub(super) fn journal_committed(&self, tid: Option<u64>) -> bool {
        match (tid, &self.kjournald) {
            (Some(tid), Some(kj)) => kj.journal.is_committed(tid),
            _ => true,
        }
    }

    /// After anything that may have changed the journal: the running transaction's timer is
    /// armed, a full transaction asks for its commit, and an idle kjournald starts the commit
    /// asked for.
    pub(super) fn journal_kick(&mut self, now: Nanos, out: &mut Emit) {
        let Some(kj) = self.kjournald.as_ref() else {
            return;
        };
        if kj.kicked == Some((kj.journal.changes(), kj.phase)) {
            return;
        }
        self.kick_now(now, out);
        let kj = self.kjournald.as_mut().expect("kjournald");
        kj.kicked = Some((kj.journal.changes(), kj.phase));
    }

    /// The kick itself: arms the running transaction's timer, asks a full one to commit, and
    /// starts a commit asked for when kjournald is idle.
    fn kick_now(&mut self, now: Nanos, out: &mut Emit) {
        let Some(kj) = self.kjournald.as_mut() else {
            return;
        };
        if let Some((tid, expires)) = kj.journal.running_timer() {
            if kj.timer_tid != Some(tid) && now < self.stop_ns {
                kj.timer_tid = Some(tid);
                out.timer(expires, super::kernel::journal_token(tid));
            }
            if kj.journal.running_full() {
                kj.journal.request_commit(tid);
            }
        }
        if kj.phase != Phase::Idle {
            return;
        }
        let Some(plan) = kj.journal.start_commit() else {
            return;
        };
        // Phase 2: the ordered data.
        kj.phase = Phase::Data;
        let data = plan.data.clone();
        kj.plan = Some(plan);
        kj.plan_data = data.iter().copied().collect();
        kj.plan_data_busy = kj.plan_data.iter().filter(|i| self.ino_writeback.get(i).copied().unwrap_or(0) > 0).count();
        let principal = kj.principal;
        let mut bios = Vec::new();
        for ino in data {
            for (first, n) in self.cache.start_writeback(ino, 0, u64::MAX) {
                bios.extend(self.write_bios(ino, first, n, principal, false, Submitter::Journal));
            }
        }
        self.kjournald.as_mut().expect("kjournald").queue.extend(bios);
        self.pump_journal(now, out);
        self.journal_progress(now, out);
    }

    /// The commit timer of transaction `tid` fired (`commit_timeout` wakes kjournald).
    pub(super) fn journal_timer(&mut self, tid: u64, now: Nanos, out: &mut Emit) {
        if let Some(kj) = self.kjournald.as_mut() {
            if kj.journal.running_tid() == Some(tid) {
                kj.journal.request_commit(tid);
            }
        }
        self.journal_kick(now, out);
    }

    /// kjournald submits its queued bios one after another, as each is admitted.
    pub(super) fn pump_journal(&mut self, now: Nanos, out: &mut Emit) {
        loop {
            let Some(kj) = self.kjournald.as_mut() else {
                return;
            };
            if kj.awaiting.is_some() || kj.emitted_unresolved {
                return;
            }
            let Some((req, info)) = kj.queue.pop_front() else {
                return;
            };
            kj.emitted_unresolved = true;
            kj.outstanding += 1;
            self.emit_bio(req, info, now, out);
        }
    }

    /// One of kjournald's bios completed.
    pub(super) fn journal_bio_done(&mut self, now: Nanos, out: &mut Emit) {
        if let Some(kj) = self.kjournald.as_mut() {
            kj.outstanding -= 1;
        }
        self.journal_progress(now, out);
    }

    /// Moves the commit on when what its phase waits for is done.
    pub(super) fn journal_progress(&mut self, now: Nanos, out: &mut Emit) {
        loop {
            let Some(kj) = self.kjournald.as_ref() else {
                return;
            };
            if !kj.own_io_done() {
                return;
            }
            match kj.phase {
                Phase::Idle => return,
                Phase::Data => {
                    let plan = kj.plan.as_ref().expect("a commit's plan");
                    debug_assert_eq!(
                        kj.plan_data_busy > 0,
                        plan.data.iter().any(|i| self.ino_writeback.get(i).copied().unwrap_or(0) > 0),
                        "the busy count in step with the data inodes' writeback"
                    );
                    if kj.plan_data_busy > 0 {
                        return;
                    }
                    let bios = self.log_bios(&plan.log);
                    let kj = self.kjournald.as_mut().expect("kjournald");
                    kj.phase = Phase::Log;
                    kj.queue.extend(bios);
                    self.pump_journal(now, out);
                }
                Phase::Log => {
                    let plan = kj.plan.as_ref().expect("a commit's plan");
                    let bios = self.log_bios(&[(plan.commit_sector, 1)]);
                    let kj = self.kjournald.as_mut().expect("kjournald");
                    kj.phase = Phase::Commit;
                    kj.queue.extend(bios);
                    self.pump_journal(now, out);
                }
                Phase::Commit => {
                    let kj = self.kjournald.as_mut().expect("kjournald");
                    let plan = kj.plan.take().expect("a commit's plan");
                    kj.plan_data.clear();
                    kj.plan_data_busy = 0;
                    kj.phase = Phase::Idle;
                    kj.journal.commit_done(plan.tid);
                    // Phase 7: the buffers go back to ordinary writeback (checkpoint).
                    for page in plan.meta {
                        self.cache.write(PageKey::new(BDEV_INO, page), now);
                    }
                    let waiting: Vec<usize> =
                        self.writeback_waiters.iter().copied().filter(|&t| self.tasks[t].commit_wait.is_some()).collect();
                    for t in waiting {
                        self.check_io_wait(t, now, out);
                    }
                    self.maybe_wake_flusher(now, out);
                    self.journal_kick(now, out);
                    return;
                }
            }
        }
    }

    /// `pages` more of inode `ino`'s pages go under writeback. The only place, with
    /// `end_ino_writeback`, where `ino_writeback` changes: the committing plan's count of busy
    /// data inodes follows it.
    pub(super) fn add_ino_writeback(&mut self, ino: Ino, pages: u64) {
        let n = self.ino_writeback.entry(ino).or_default();
        let became_busy = *n == 0 && pages > 0;
        *n += pages;
        if became_busy {
            self.plan_data_busy_changed(ino, 1);
        }
    }

    /// `pages` of inode `ino`'s pages are written back.
    pub(super) fn end_ino_writeback(&mut self, ino: Ino, pages: u64) {
        let Some(n) = self.ino_writeback.get_mut(&ino) else { return };
        *n = n.saturating_sub(pages);
        if *n == 0 {
            self.ino_writeback.remove(&ino);
            self.plan_data_busy_changed(ino, -1);
        }
    }

    /// A data inode of the committing plan (if `ino` is one) became busy (+1) or idle (-1).
    fn plan_data_busy_changed(&mut self, ino: Ino, by: isize) {
        if let Some(kj) = self.kjournald.as_mut() {
            // `plan_data` is empty unless a plan is committing.
            if kj.plan_data.contains(&ino) {
                kj.plan_data_busy = kj.plan_data_busy.checked_add_signed(by).expect("the busy count never goes below 0");
            }
        }
    }

    /// Write bios for journal runs `(sector, blocks)`, at most `max_bio_pages` each.
    fn log_bios(&self, runs: &[(u64, u64)]) -> Vec<(NewRequest, BioInfo)> {
        let kj = self.kjournald.as_ref().expect("kjournald");
        let max = self.cfg.max_bio_pages.max(1);
        let mut v = Vec::new();
        for &(sector, blocks) in runs {
            let mut done = 0;
            while done < blocks {
                let k = max.min(blocks - done);
                v.push((
                    NewRequest {
                        principal: kj.principal,
                        op: Op::Write,
                        sync: false,
                        start_sector: sector + done * PAGE_SECTORS,
                        size_sectors: (k * PAGE_SECTORS) as u32,
                        flags: Request::META,
                        prio: Default::default(),
                    },
                    BioInfo { kind: BioKind::Log { pages: k }, submitter: Submitter::Journal },
                ));
                done += k;
            }
        }
        v
    }
}
