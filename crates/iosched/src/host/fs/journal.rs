//! ext3's journal as Linux 2.6.9's JBD keeps it (fs/jbd/) on a file system made by mke2fs of
//! 2004 (e2fsprogs 1.35): where the journal lies, its transactions, and what a commit writes
//! where. Pure bookkeeping: the kernel's kjournald (host/kjournald.rs) submits the writes this
//! module plans and tells it when they are done.
//!
//! **Size and place** (e2fsprogs 1.35, 28-Feb-2004): misc/util.c `figure_journal_size` gives
//! 1024 blocks below 32768 file system blocks, 4096 below 262144, else 8192 (32 MiB of 4 KiB
//! blocks: every file system of 1 GiB and more). lib/ext2fs/mkjournal.c `write_journal_inode`
//! walks the journal inode with `ext2fs_block_iterate2(BLOCK_FLAG_APPEND)` and `mkjournal_proc`
//! allocates each block with `ext2fs_new_block(fs, last_blk, ...)`, `last_blk` starting at 0:
//! the journal takes the first free blocks of the file system (group 0, after the root
//! directory), its indirect blocks interleaved in the walk's order (an indirect block before the
//! blocks it maps). (The goal in the middle of the file system came with e2fsprogs 1.41, 2008:
//! "Create the journal in the middle of the filesystem".) Journal block 0 is the journal's
//! superblock; the log runs from block 1 (`s_first`) to the end and wraps.
//!
//! **Transactions** (fs/jbd/transaction.c, 2.6.9): the first handle of a transaction starts it
//! (`get_transaction`) and arms the commit timer at `t_expires = jiffies + j_commit_interval`,
//! `j_commit_interval = HZ * JBD_DEFAULT_MAX_COMMIT_AGE` = 5 s (fs/jbd/journal.c
//! `journal_init_common`, include/linux/jbd.h). A transaction is committed early when it holds
//! `j_max_transaction_buffers` = `j_maxlen / 4` buffers (journal.c `journal_reset`;
//! transaction.c `start_this_handle` asks for the commit). Metadata buffers join with
//! `journal_dirty_metadata`; in ordered mode (ext3's default) the data buffers a write() touches
//! join the transaction's data list (fs/ext3/inode.c `ext3_ordered_commit_write` ->
//! `journal_dirty_data`).
//!
//! **A commit** (fs/jbd/commit.c `journal_commit_transaction`): phase 2 writes the data list's
//! dirty buffers and waits for them all (ordered mode: data on disk before the metadata that
//! points to it is committed); phase 3 writes, at the log's head, a descriptor block followed by
//! the copies of the metadata buffers it describes, a new descriptor every 64 buffers
//! (`wbuf[64]`: one descriptor and 63 copies); phases 4-5 wait for them; phase 6 writes the
//! commit block and waits for it; phase 7 files the buffers for checkpointing: they are marked
//! dirty in place (`__journal_refile_buffer` -> `mark_buffer_dirty`), to be written to their
//! home locations later by ordinary writeback.
//!
//! Not modelled: the journal filling up (`log_do_checkpoint` writing checkpoint buffers when
//! `__log_space_left` runs low, and the journal superblock updates when its tail moves: the head
//! simply wraps), revoke records, data=journal and data=writeback modes, handle credits (a
//! transaction's size is counted in buffers, not in reserved credits), the frozen copies of
//! buffers changed while being committed.

use super::layout::Extent;
use crate::fast_hash::FastSet;
use crate::host::{Ino, PAGE_SECTORS};
use crate::time::Nanos;
use std::collections::BTreeSet;

/// JBD's commit interval: `HZ * JBD_DEFAULT_MAX_COMMIT_AGE`, 5 s (fs/jbd/journal.c).
pub const COMMIT_INTERVAL_NS: Nanos = 5_000_000_000;
/// Buffers in one batch of a commit: `wbuf[64]` in fs/jbd/commit.c (a descriptor and 63 copies).
pub const WBUF_BUFFERS: u64 = 64;
/// The log starts after the journal's superblock (`s_first` = 1, mkjournal.c).
pub const LOG_FIRST_BLOCK: u64 = 1;

/// mke2fs's journal size in blocks for a file system of `fs_blocks` blocks (e2fsprogs 1.35,
/// misc/util.c `figure_journal_size`); None below 2048 blocks (too small for a journal).
pub fn mke2fs_journal_blocks(fs_blocks: u64) -> Option<u64> {
    match fs_blocks {
        b if b < 2048 => None,
        b if b < 32768 => Some(1024),
        b if b < 262_144 => Some(4096),
        _ => Some(8192),
    }
}

/// The journal inode's blocks in `ext2fs_block_iterate2`'s order without
/// `BLOCK_FLAG_DEPTH_TRAVERSE`: `true` for an indirect block, `false` for a journal block, as
/// runs `(is_indirect, count)`. `nindir` pointers fit in an indirect block; 12 direct blocks.
pub fn block_walk(journal_blocks: u64, nindir: u64) -> Vec<(bool, u64)> {
    const NDIR: u64 = 12;
    let mut out: Vec<(bool, u64)> = Vec::new();
    let mut push = |ind: bool, n: u64| {
        if n == 0 {
            return;
        }
        match out.last_mut() {
            Some((i, c)) if *i == ind => *c += n,
            _ => out.push((ind, n)),
        }
    };
    let mut left = journal_blocks;
    let direct = left.min(NDIR);
    push(false, direct);
    left -= direct;
    if left > 0 {
        // The single indirect block, then what it maps.
        push(true, 1);
        let n = left.min(nindir);
        push(false, n);
        left -= n;
    }
    if left > 0 {
        // The double indirect block, then each of its indirect blocks before its blocks (mke2fs's
        // sizes never reach the triple indirect block).
        push(true, 1);
        let mut under = 0;
        while left > 0 && under < nindir {
            push(true, 1);
            let n = left.min(nindir);
            push(false, n);
            left -= n;
            under += 1;
        }
    }
    out
}

/// A transaction: the metadata blocks (BDEV page indices, in the order first dirtied) and the
/// files whose data it orders.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transaction {
    pub tid: u64,
    /// When its commit timer fires (`t_expires`).
    pub expires_ns: Nanos,
    pub meta: Vec<u64>,
    /// The pages of `meta`, to find one already there (a hash set: only ever asked for
    /// membership, and a write() dirties the same bitmap and inode blocks again and again).
    meta_set: FastSet<u64>,
    pub data: BTreeSet<Ino>,
}

/// What one commit writes: data first, then the log blocks, then the commit block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitPlan {
    pub tid: u64,
    /// Files whose dirty pages are written (and waited for) before the log (ordered mode).
    pub data: Vec<Ino>,
    /// Descriptor blocks and metadata copies: disk runs `(sector, blocks)` in log order.
    pub log: Vec<(u64, u64)>,
    /// Log blocks written in `log` (descriptors included).
    pub log_blocks: u64,
    /// The commit block's sector.
    pub commit_sector: u64,
    /// The metadata blocks (BDEV page indices) to checkpoint once the commit block is on disk.
    pub meta: Vec<u64>,
}

/// Counters since the journal was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct JournalStats {
    pub commits: u64,
    /// Log blocks written (descriptors, metadata copies and commit blocks).
    pub log_blocks: u64,
    /// Metadata blocks committed (each time it was committed).
    pub meta_blocks: u64,
    /// Times the log's head wrapped to its start.
    pub wraps: u64,
}

/// The journal: where its blocks lie, the running and committing transactions, the log head.
#[derive(Clone, Debug)]
pub struct Journal {
    /// Journal blocks on disk (`file_page` = journal block).
    extents: Vec<Extent>,
    /// `j_maxlen`: blocks in the journal (its superblock included).
    maxlen: u64,
    /// `j_head`: the next log block to write.
    head: u64,
    next_tid: u64,
    running: Option<Transaction>,
    committing: Option<u64>,
    /// The last transaction whose commit block is on disk (`j_commit_sequence`).
    committed: u64,
    /// The highest transaction asked to commit (`j_commit_request`).
    requested: u64,
    stats: JournalStats,
    /// Counts changes to what decides kjournald's work (the running transaction's start and
    /// metadata count, the commit request, the commit under way): a kick finding the same count
    /// as the last one (and kjournald in the same phase) has nothing to do.
    changes: u64,
}

impl Journal {
    /// A journal over `extents` (journal block `file_page` at `sector`), `blocks` long.
    pub fn new(extents: Vec<Extent>, blocks: u64) -> Journal {
        assert!(blocks > LOG_FIRST_BLOCK + 2, "a journal of {blocks} blocks");
        Journal {
            extents,
            maxlen: blocks,
            head: LOG_FIRST_BLOCK,
            next_tid: 1,
            running: None,
            committing: None,
            committed: 0,
            requested: 0,
            stats: JournalStats::default(),
            changes: 0,
        }
    }

    pub fn blocks(&self) -> u64 {
        self.maxlen
    }

    /// `j_max_transaction_buffers`: `j_maxlen / 4` (journal.c `journal_reset`).
    pub fn max_transaction_buffers(&self) -> u64 {
        self.maxlen / 4
    }

    pub fn stats(&self) -> JournalStats {
        self.stats
    }

    /// The sector of journal block `b`.
    pub fn sector_of(&self, b: u64) -> u64 {
        let i = self.extents.partition_point(|e| e.file_page + e.pages <= b);
        let e = &self.extents[i];
        debug_assert!(e.file_page <= b);
        e.sector + (b - e.file_page) * PAGE_SECTORS
    }

    /// The running transaction, started now if there is none (`start_this_handle`): returns
    /// its tid and whether it was just started (its timer is to be armed at `expires_ns`).
    fn running_mut(&mut self, now: Nanos) -> (&mut Transaction, bool) {
        let started = self.running.is_none();
        if started {
            self.changes += 1;
            let tid = self.next_tid;
            self.next_tid += 1;
            self.running = Some(Transaction { tid, expires_ns: now.saturating_add(COMMIT_INTERVAL_NS), ..Transaction::default() });
        }
        (self.running.as_mut().expect("a running transaction"), started)
    }

    /// Metadata block `page` (a BDEV page index) joins the running transaction
    /// (`journal_dirty_metadata`). Returns the new transaction's timer when this started one.
    pub fn dirty_meta(&mut self, page: u64, now: Nanos) -> Option<Nanos> {
        let (t, started) = self.running_mut(now);
        let added = t.meta_set.insert(page);
        if added {
            t.meta.push(page);
        }
        let expires = t.expires_ns;
        self.changes += added as u64;
        started.then_some(expires)
    }

    /// A write() to `ino` orders its data in the running transaction (`journal_dirty_data`).
    pub fn dirty_data(&mut self, ino: Ino, now: Nanos) -> Option<Nanos> {
        let (t, started) = self.running_mut(now);
        t.data.insert(ino);
        let expires = t.expires_ns;
        started.then_some(expires)
    }

    /// The running transaction, begun now if there is none (a handle with nothing in it:
    /// `ext3_force_commit`'s `journal_start`). Returns its tid.
    pub fn force(&mut self, now: Nanos) -> u64 {
        self.running_mut(now).0.tid
    }

    /// The running transaction's tid and commit time.
    pub fn running_timer(&self) -> Option<(u64, Nanos)> {
        self.running.as_ref().map(|t| (t.tid, t.expires_ns))
    }

    pub fn running_tid(&self) -> Option<u64> {
        self.running.as_ref().map(|t| t.tid)
    }

    pub fn committing_tid(&self) -> Option<u64> {
        self.committing
    }

    /// Is transaction `tid` on disk (its commit block written)?
    pub fn is_committed(&self, tid: u64) -> bool {
        self.committed >= tid
    }

    /// `log_start_commit`: transaction `tid` is to be committed (now, or after the one being
    /// committed).
    pub fn request_commit(&mut self, tid: u64) {
        if tid > self.requested {
            self.requested = tid;
            self.changes += 1;
        }
    }

    /// See the field `changes`.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The running transaction is full (`j_max_transaction_buffers`): it asks for its commit.
    pub fn running_full(&self) -> bool {
        self.running.as_ref().is_some_and(|t| t.meta.len() as u64 >= self.max_transaction_buffers())
    }

    /// Takes the commit kjournald should start now: none while one is being committed, or when
    /// the running transaction was not asked to commit. Plans its log writes from the head.
    pub fn start_commit(&mut self) -> Option<CommitPlan> {
        if self.committing.is_some() {
            return None;
        }
        let tid = self.running.as_ref()?.tid;
        if self.requested < tid {
            return None;
        }
        // An empty transaction (forced by fsync) still writes its commit block.
        self.changes += 1;
        let t = self.running.take().expect("a running transaction");
        self.committing = Some(t.tid);
        let mut blocks: Vec<u64> = Vec::new();
        for (i, _) in t.meta.iter().enumerate() {
            if i as u64 % (WBUF_BUFFERS - 1) == 0 {
                blocks.push(self.next_log_block()); // a descriptor
            }
            blocks.push(self.next_log_block());
        }
        let commit = self.next_log_block();
        let mut log: Vec<(u64, u64)> = Vec::new();
        for &b in &blocks {
            let s = self.sector_of(b);
            match log.last_mut() {
                Some((ls, n)) if *ls + *n * PAGE_SECTORS == s => *n += 1,
                _ => log.push((s, 1)),
            }
        }
        self.stats.commits += 1;
        self.stats.log_blocks += blocks.len() as u64 + 1;
        self.stats.meta_blocks += t.meta.len() as u64;
        Some(CommitPlan {
            tid: t.tid,
            data: t.data.into_iter().collect(),
            log,
            log_blocks: blocks.len() as u64,
            commit_sector: self.sector_of(commit),
            meta: t.meta,
        })
    }

    /// `journal_next_log_block`: the head's block; the head moves on, wrapping to `s_first`.
    fn next_log_block(&mut self) -> u64 {
        let b = self.head;
        self.head += 1;
        if self.head >= self.maxlen {
            self.head = LOG_FIRST_BLOCK;
            self.stats.wraps += 1;
        }
        b
    }

    /// The commit block of `tid` is on disk.
    pub fn commit_done(&mut self, tid: u64) {
        debug_assert_eq!(self.committing, Some(tid));
        self.changes += 1;
        self.committing = None;
        self.committed = self.committed.max(tid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal(blocks: u64) -> Journal {
        Journal::new(vec![Extent { file_page: 0, sector: 1000, pages: blocks }], blocks)
    }

    /// The change count moves with what decides kjournald's work (a transaction started, a new
    /// metadata page, a higher commit request, a commit taken or done) and with nothing else
    /// (a page or an inode already in the transaction, a request already made).
    #[test]
    fn changes_count_what_decides_kjournalds_work() {
        let mut j = journal(64);
        let c0 = j.changes();
        j.dirty_meta(7, 0);
        let c1 = j.changes();
        assert_eq!(c1, c0 + 2, "a transaction started and its first page");
        j.dirty_meta(7, 1);
        j.dirty_data(3, 1);
        j.dirty_data(3, 2);
        assert_eq!(j.changes(), c1, "nothing new");
        let tid = j.force(3);
        assert_eq!(j.changes(), c1, "the running transaction, not a new one");
        j.request_commit(tid);
        assert_eq!(j.changes(), c1 + 1);
        j.request_commit(tid);
        assert_eq!(j.changes(), c1 + 1, "asked already");
        assert!(j.start_commit().is_some());
        assert_eq!(j.changes(), c1 + 2);
        assert!(j.start_commit().is_none());
        assert_eq!(j.changes(), c1 + 2, "nothing to start");
        j.commit_done(tid);
        assert_eq!(j.changes(), c1 + 3);
    }

    #[test]
    fn mke2fs_135_journal_sizes() {
        assert_eq!(mke2fs_journal_blocks(2047), None);
        assert_eq!(mke2fs_journal_blocks(2048), Some(1024));
        assert_eq!(mke2fs_journal_blocks(32767), Some(1024));
        assert_eq!(mke2fs_journal_blocks(32768), Some(4096));
        assert_eq!(mke2fs_journal_blocks(262_143), Some(4096));
        // Seelam's 20 GiB file system (5,242,880 blocks): 32 MiB.
        assert_eq!(mke2fs_journal_blocks(5 << 20), Some(8192));
    }

    #[test]
    fn the_walk_puts_indirect_blocks_before_what_they_map() {
        // 8192 blocks, 1024 pointers a block: 12 direct, IND, 1024, DIND, then 7 x (IND, <=1024).
        let w = block_walk(8192, 1024);
        assert_eq!(&w[..4], &[(false, 12), (true, 1), (false, 1024), (true, 2)]);
        let data: u64 = w.iter().filter(|(i, _)| !i).map(|(_, c)| c).sum();
        let ind: u64 = w.iter().filter(|(i, _)| *i).map(|(_, c)| c).sum();
        assert_eq!((data, ind), (8192, 9));
        assert_eq!(block_walk(10, 1024), vec![(false, 10)]);
    }

    #[test]
    fn a_commit_writes_descriptors_copies_then_the_commit_block_from_the_head() {
        let mut j = journal(1024);
        assert_eq!(j.max_transaction_buffers(), 256);
        // The first metadata block starts transaction 1 and its 5 s timer.
        assert_eq!(j.dirty_meta(7, 2_000), Some(2_000 + COMMIT_INTERVAL_NS));
        assert_eq!(j.dirty_meta(9, 3_000), None);
        assert_eq!(j.dirty_meta(7, 4_000), None); // once
        assert_eq!(j.dirty_data(42, 5_000), None);
        // Not asked: no commit.
        assert_eq!(j.start_commit(), None);
        j.request_commit(1);
        let p = j.start_commit().unwrap();
        assert_eq!(p.tid, 1);
        assert_eq!(p.data, vec![42]);
        assert_eq!(p.meta, vec![7, 9]);
        // Blocks 1 (descriptor), 2, 3 (copies); the commit block is block 4.
        assert_eq!(p.log, vec![(1000 + 8, 3)]);
        assert_eq!(p.commit_sector, 1000 + 4 * 8);
        assert!(!j.is_committed(1));
        // A new transaction runs while 1 commits; it waits for 1's end.
        assert_eq!(j.dirty_meta(11, 6_000), Some(6_000 + COMMIT_INTERVAL_NS));
        j.request_commit(2);
        assert_eq!(j.start_commit(), None);
        j.commit_done(1);
        assert!(j.is_committed(1));
        let p2 = j.start_commit().unwrap();
        assert_eq!((p2.tid, p2.log.clone(), p2.commit_sector), (2, vec![(1000 + 5 * 8, 2)], 1000 + 7 * 8));
    }

    #[test]
    fn a_descriptor_every_63_copies_and_the_head_wraps() {
        let mut j = journal(100);
        for p in 0..70 {
            j.dirty_meta(p, 0);
        }
        j.request_commit(1);
        let p = j.start_commit().unwrap();
        // 2 descriptors + 70 copies = 72 blocks from block 1, commit at 73.
        assert_eq!(p.log_blocks, 72);
        assert_eq!(p.log, vec![(1000 + 8, 72)]);
        j.commit_done(1);
        for p in 0..30 {
            j.dirty_meta(p, 0);
        }
        j.request_commit(2);
        let p = j.start_commit().unwrap();
        // Head at 74: 31 blocks 74..=99 then 1..=5 (block 0 is the superblock), commit at 6.
        assert_eq!(p.log, vec![(1000 + 74 * 8, 26), (1000 + 8, 5)]);
        assert_eq!(p.commit_sector, 1000 + 6 * 8);
        assert_eq!(j.stats().wraps, 1);
    }
}
