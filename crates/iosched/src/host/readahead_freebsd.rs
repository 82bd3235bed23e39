//! FreeBSD 4's read path decisions (FreeBSD 4.3, Iyer & Druschel 2001's kernel): the sequential
//! heuristic of read() (vfs_vnops.c), ffs_read / cluster_read's clustering and read-ahead with
//! B_RAM marks (vfs_cluster.c), and vm_fault's read-behind / read-ahead window for page faults.
//!
//! A pure, deterministic module: no clock, no I/O, no cache of its own. The caller keeps a
//! [`SeqState`] per open file and shows its page cache through a [`BlockProbe`] (whole
//! file-system blocks, with the B_RAM marks) or a residency predicate (pages, for faults); each
//! call says what to submit. Used by `workload::apps::AppWorkload` (the paper's applications)
//! and meant for the host layer's page cache.
//!
//! # read(): the caller's protocol
//!
//! For one read() of bytes `[off, off + len)` of a file of `file_bytes` bytes:
//!
//! 1. `seqcount = `[`sequential_count`]`(state, off, len)` (a read that continues after a wait
//!    keeps the count it had);
//! 2. for each file-system block `b` the read touches ([`read_blocks_span`]), in order:
//!    - look up the pages of the block the read needs: if none is missing but some are on their
//!      way, wait for them and go on at this block;
//!    - otherwise call [`cluster_read`]`(geo, probe, b, missing, `[`resid_bytes`]`(..), seqcount, out)`
//!      and submit its [`BlockRead`]s in order (the pages of each range that are neither cached
//!      nor on their way; `Sync` ones are waited for, `Async` ones are not);
//!    - if the read now waits (for pages of this block), it goes on at block `b + 1` when they
//!      arrive (FreeBSD waits block by block).
//!
//! # The decisions
//!
//! The heuristic counts a read as sequential if it starts where the previous read of the open
//! file ended (a fresh open counts: its next offset is 0) or at 0 after sequential reads, adding
//! its length in BKVASIZE (16 KiB) units to `seqcount` (at most IO_SEQMAX, 127); any other read
//! drops the count to 1 if it was above 1, else to 0, and is itself read without read-ahead.
//! Per block of the read:
//! - the file's last block is read alone, without read-ahead (ffs_read's bread);
//! - a missing block is read synchronously, together with the following blocks the read still
//!   needs (a cluster of whole blocks inside the file, at most `racluster_blocks` long, stopping
//!   at a block in core); then read-ahead may follow;
//! - a cached block gives read-ahead only if it carries a read-ahead mark (B_RAM) and the read
//!   is sequential; the mark is consumed and the read-ahead starts after the blocks already in
//!   core (scanning at most `min(2 * racluster + blocks of this read, MAXRA)` blocks, and
//!   marking every `racluster`-th of them and the last scanned);
//! - read-ahead starts at block `next` only if `next < block + seqcount` and `next` is a whole
//!   block inside the file, and reads `max(seqcount, blocks of this read)` whole blocks (at most
//!   `racluster_blocks`), stopping at a block in core; it marks its first and last block, a
//!   synchronous cluster its second and last, a single synchronous block itself.
//!
//! So the first read of a file never reads ahead and the second does: "filesystem prefetch is
//! conservative and does not occur until a threshold number of requests are found to be
//! sequential" (Iyer & Druschel 2001, section 4.4).
//!
//! # Page faults
//!
//! FreeBSD 4's vm_fault at the first page that is not resident reads it with up to
//! VM_FAULT_READ_BEHIND (7) pages before it and VM_FAULT_READ_AHEAD (8) after it, within the
//! mapping, that are not resident either (vm_fault_additional_pages stops at a resident page),
//! in one synchronous request; nothing is read asynchronously ([`fault_window`]). A sequential
//! copy out of a mapping thus faults every 9 pages; a page on its way is waited for.

use super::PAGE_BYTES;

/// FreeBSD 4's BKVASIZE: the sequential heuristic counts reads in these units (bytes).
pub const BKVASIZE: u64 = 16 * 1024;
/// FreeBSD 4's IO_SEQMAX: the largest sequential count.
pub const SEQ_MAX: u64 = 127;
/// FreeBSD 4's MAXRA: the furthest cluster_read scans for blocks in core (blocks).
pub const MAXRA: u64 = 32;
/// FreeBSD 4's VM_FAULT_READ_BEHIND (pages).
pub const FAULT_BEHIND: u64 = 7;
/// FreeBSD 4's VM_FAULT_READ_AHEAD (pages).
pub const FAULT_AHEAD: u64 = 8;

/// The sequential heuristic's state of one open file (vfs_vnops.c: `f_nextoff`, `f_seqcount`).
/// A fresh open is `SeqState::default()`: next offset 0, count 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeqState {
    /// Byte offset where the previous read() of the open file ended.
    pub next_off: u64,
    /// The sequential count (0..=SEQ_MAX).
    pub seqcount: u64,
}

/// Updates `st` for a read() of bytes `[off, off + len)` and returns the sequential count the
/// read uses: the new count if the read is sequential (it starts at `next_off`, or at 0 when
/// the count is positive), else 0 (the count itself drops to 1 if it was above 1, else to 0).
/// A sequential read adds `ceil(len / BKVASIZE)` to the count, capped at [`SEQ_MAX`].
pub fn sequential_count(st: &mut SeqState, off: u64, len: u64) -> u64 {
    let s = if (off == 0 && st.seqcount > 0) || off == st.next_off {
        st.seqcount = (st.seqcount + len.div_ceil(BKVASIZE)).min(SEQ_MAX);
        st.seqcount
    } else {
        st.seqcount = if st.seqcount > 1 { 1 } else { 0 };
        0
    };
    st.next_off = off + len;
    s
}

/// A file's geometry as cluster_read sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BsdGeometry {
    /// File-system block size (pages; at least 1).
    pub block_pages: u64,
    /// The longest cluster (blocks; at least 1): mnt_iosize_max / block size.
    pub racluster_blocks: u64,
    /// File size (bytes).
    pub file_bytes: u64,
}

impl BsdGeometry {
    /// `max_io_pages`: the largest read (mnt_iosize_max, pages); the cluster is that many whole
    /// blocks, at least one.
    pub fn new(block_pages: u64, max_io_pages: u64, file_bytes: u64) -> Self {
        BsdGeometry { block_pages, racluster_blocks: (max_io_pages / block_pages).max(1), file_bytes }
    }

    /// Block size (bytes).
    pub fn block_bytes(&self) -> u64 {
        self.block_pages * PAGE_BYTES
    }

    /// Pages the file occupies (an empty file counts one page).
    pub fn file_pages(&self) -> u64 {
        self.file_bytes.div_ceil(PAGE_BYTES).max(1)
    }

    /// Blocks the file occupies (the last one may be partial: a small file's tail is its
    /// fragments).
    pub fn file_blocks(&self) -> u64 {
        self.file_pages().div_ceil(self.block_pages)
    }

    /// Pages `[a, b)` of `blocks` blocks from `first`, clipped to the end of the file.
    pub fn block_pages_range(&self, first: u64, blocks: u64) -> (u64, u64) {
        let pages = self.file_pages();
        ((first * self.block_pages).min(pages), ((first + blocks) * self.block_pages).min(pages))
    }

    /// Whether `block` is the file's last (ffs_read reads it alone, with bread).
    pub fn is_last(&self, block: u64) -> bool {
        (block + 1) * self.block_bytes() >= self.file_bytes
    }
}

/// The caller's page cache as cluster_read sees it, block by block, with the B_RAM marks.
pub trait BlockProbe {
    /// Some page of `block` is cached or on its way (FreeBSD: the block's buffer is in core).
    /// Must not count as an access (no LRU update).
    fn incore(&self, block: u64) -> bool;
    /// Removes `block`'s read-ahead mark (B_RAM); true if it had one.
    fn take_mark(&mut self, block: u64) -> bool;
    /// Sets `block`'s read-ahead mark (B_RAM).
    fn set_mark(&mut self, block: u64);
}

/// A read cluster_read asks for: `blocks` whole blocks from `first_block` (pages:
/// [`BsdGeometry::block_pages_range`]); submit the pages that are neither cached nor on their way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockRead {
    /// Read now; the read() waits for it.
    Sync { first_block: u64, blocks: u64 },
    /// Read-ahead: nobody waits for it.
    Async { first_block: u64, blocks: u64 },
}

impl BlockRead {
    /// Pages `[a, b)` of the file this read covers.
    pub fn pages(&self, geo: &BsdGeometry) -> (u64, u64) {
        match *self {
            BlockRead::Sync { first_block, blocks } | BlockRead::Async { first_block, blocks } => {
                geo.block_pages_range(first_block, blocks)
            }
        }
    }

    /// Whether the read() waits for it.
    pub fn is_sync(&self) -> bool {
        matches!(self, BlockRead::Sync { .. })
    }
}

/// The blocks `[first, last]` (inclusive) a read() of bytes `[off, off + len)` touches, within the
/// file (a read at or past the end touches the last page's block; `len` 0 counts as 1).
pub fn read_blocks_span(geo: &BsdGeometry, off: u64, len: u64) -> (u64, u64) {
    let pages = geo.file_pages();
    let p0 = (off / PAGE_BYTES).min(pages - 1);
    let p1 = (off + len.max(1)).div_ceil(PAGE_BYTES).clamp(p0 + 1, pages);
    (p0 / geo.block_pages, (p1 - 1) / geo.block_pages)
}

/// Bytes a read() of `[off, off + len)` still wants from the start of `block` (or from `off` if
/// it starts later in the block), up to the end of the read clipped to the end of the file
/// (ffs_read's `uio_resid` when it reaches the block).
pub fn resid_bytes(geo: &BsdGeometry, off: u64, len: u64, block: u64) -> u64 {
    let end = (off + len.max(1)).min(geo.file_bytes.max(1));
    end.saturating_sub(off.max(block * geo.block_bytes()))
}

/// ffs_read / cluster_read for one block `block` of a read() with `seqcount` from
/// [`sequential_count`]: appends to `out` the reads to submit, in order (at most one `Sync`,
/// then at most one `Async`), and sets and consumes B_RAM marks through `probe`.
///
/// `missing`: some page of the block the read needs is neither cached nor on its way (the
/// block must be read); else all are cached. `resid`: [`resid_bytes`] for this block.
///
/// - Missing: the last block of the file is read alone and nothing is read ahead (ffs_read's
///   bread). Otherwise, if the read wants more than this block, the synchronous cluster is the
///   blocks it wants (`ceil(min(resid, bytes from the block to the end of file) / block)`, at
///   most `racluster_blocks`, shortened to whole blocks inside the file), cut at the first block
///   in core; a cluster of one block marks itself, a longer one its second and last block;
///   read-ahead may then start right after it.
/// - Cached: if the block is not the last, the read is sequential and the block carries a mark,
///   the mark is consumed and up to `min(2 * racluster + blocks of this read, MAXRA)` blocks
///   from it are scanned while in core, marking every `racluster`-th scanned block and the last
///   one possible; read-ahead starts at the first block not in core if the scan stopped there.
/// - Read-ahead from block `next`: only if `seqcount > 0`, `next < block + seqcount`, `next` is a
///   whole block inside the file and not in core; it reads `max(seqcount, ceil(resid / block))`
///   blocks (at most `racluster_blocks`, shortened to whole blocks inside the file), cut at the
///   first block in core, and marks its first and last block.
pub fn cluster_read(
    geo: &BsdGeometry,
    probe: &mut dyn BlockProbe,
    block: u64,
    missing: bool,
    resid: u64,
    seqcount: u64,
    out: &mut Vec<BlockRead>,
) {
    let b = block;
    let bsize = geo.block_bytes();
    let fbytes = geo.file_bytes;
    let racluster = geo.racluster_blocks;
    let totread = resid.min(fbytes.saturating_sub(b * bsize));
    let last = geo.is_last(b);
    let mut next = None;
    if missing {
        let mut run = 1;
        if !last && totread > bsize {
            run = totread.div_ceil(bsize).min(racluster);
            while run > 1 && (b + run) * bsize > fbytes {
                run -= 1;
            }
            let mut j = 1;
            while j < run && !probe.incore(b + j) {
                j += 1;
            }
            run = j;
        }
        out.push(BlockRead::Sync { first_block: b, blocks: run });
        if !last {
            if run == 1 {
                probe.set_mark(b);
            } else {
                probe.set_mark(b + 1);
                probe.set_mark(b + run - 1);
            }
            next = Some(b + run);
        }
    } else if !last && seqcount > 0 && probe.take_mark(b) {
        let maxra = (2 * racluster + totread / bsize).min(MAXRA);
        let nblocks = geo.file_blocks();
        let mut j = 1;
        while j < maxra && b + j < nblocks && probe.incore(b + j) {
            if j % racluster == racluster - 1 || j == maxra - 1 {
                probe.set_mark(b + j);
            }
            j += 1;
        }
        if j < maxra {
            next = Some(b + j);
        }
    }
    if let Some(n) = next {
        if seqcount > 0 && n < b + seqcount && (n + 1) * bsize <= fbytes {
            let mut run = seqcount.max(resid.div_ceil(bsize)).min(racluster);
            while run > 1 && (n + run) * bsize > fbytes {
                run -= 1;
            }
            if !probe.incore(n) {
                let mut j = 1;
                while j < run && !probe.incore(n + j) {
                    j += 1;
                }
                probe.set_mark(n);
                probe.set_mark(n + j - 1);
                out.push(BlockRead::Async { first_block: n, blocks: j });
            }
        }
    }
}

/// vm_fault's window for a fault at page `page` (not resident) of a mapping of
/// `pages_in_mapping` pages: pages `[lo, hi)` with up to [`FAULT_BEHIND`] pages before `page`
/// and [`FAULT_AHEAD`] after it, stopping at a resident page or the mapping's ends
/// (`resident(q)`: page `q` is cached or on its way). Read it in one synchronous request.
pub fn fault_window(page: u64, pages_in_mapping: u64, resident: &dyn Fn(u64) -> bool) -> (u64, u64) {
    let mut lo = page;
    while lo > 0 && page - lo < FAULT_BEHIND && !resident(lo - 1) {
        lo -= 1;
    }
    let mut hi = page + 1;
    while hi < pages_in_mapping && hi - page - 1 < FAULT_AHEAD && !resident(hi) {
        hi += 1;
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// A cache whose reads complete at once: blocks in core, marks.
    #[derive(Default)]
    struct Mem {
        core: BTreeSet<u64>,
        marks: BTreeSet<u64>,
    }

    impl BlockProbe for Mem {
        fn incore(&self, block: u64) -> bool {
            self.core.contains(&block)
        }
        fn take_mark(&mut self, block: u64) -> bool {
            self.marks.remove(&block)
        }
        fn set_mark(&mut self, block: u64) {
            self.marks.insert(block);
        }
    }

    /// Runs reads of `[off, off + len)` (16 KiB blocks, 32-page clusters) through the protocol,
    /// every read completing at once; returns every BlockRead in issue order.
    fn run(file_bytes: u64, reads: &[(u64, u64)]) -> Vec<BlockRead> {
        let geo = BsdGeometry::new(4, 32, file_bytes);
        let mut mem = Mem::default();
        let mut st = SeqState::default();
        let mut all = Vec::new();
        for &(off, len) in reads {
            let seq = sequential_count(&mut st, off, len);
            let (b0, b1) = read_blocks_span(&geo, off, len);
            for b in b0..=b1 {
                let missing = !mem.core.contains(&b);
                let mut out = Vec::new();
                cluster_read(&geo, &mut mem, b, missing, resid_bytes(&geo, off, len, b), seq, &mut out);
                for r in &out {
                    let (BlockRead::Sync { first_block, blocks } | BlockRead::Async { first_block, blocks }) = *r;
                    mem.core.extend(first_block..first_block + blocks);
                }
                all.extend(out);
            }
        }
        all
    }

    fn chunks(bytes: u64, chunk: u64) -> Vec<(u64, u64)> {
        (0..bytes.div_ceil(chunk)).map(|c| (c * chunk, chunk.min(bytes - c * chunk))).collect()
    }

    #[test]
    fn sequential_count_follows_vfs_vnops() {
        let mut st = SeqState::default();
        assert_eq!(sequential_count(&mut st, 0, 16384), 1);
        assert_eq!(sequential_count(&mut st, 16384, 40000), 4);
        assert_eq!(st, SeqState { next_off: 56384, seqcount: 4 });
        // A jump: no read-ahead for this read; the count drops to 1.
        assert_eq!(sequential_count(&mut st, 1 << 20, 100), 0);
        assert_eq!(st.seqcount, 1);
        // Back to 0 after sequential reads counts as sequential.
        assert_eq!(sequential_count(&mut st, 0, 1), 2);
        // Capped at IO_SEQMAX.
        assert_eq!(sequential_count(&mut st, 1, 1 << 30), SEQ_MAX);
        // A first read elsewhere than 0 is not sequential and leaves the count at 0.
        let mut st = SeqState::default();
        assert_eq!(sequential_count(&mut st, 4096, 4096), 0);
        assert_eq!(st.seqcount, 0);
    }

    #[test]
    fn block_sized_sequential_reads_read_ahead_from_the_second() {
        // Sync block 0, sync block 1, then read-ahead of seqcount = 2 blocks from block 2.
        let r = run(10 * 16384, &chunks(10 * 16384, 16384));
        assert_eq!(
            &r[..3],
            &[
                BlockRead::Sync { first_block: 0, blocks: 1 },
                BlockRead::Sync { first_block: 1, blocks: 1 },
                BlockRead::Async { first_block: 2, blocks: 2 },
            ],
            "{r:?}"
        );
        assert_eq!(r.iter().filter(|x| x.is_sync()).count(), 2, "{r:?}");
        let geo = BsdGeometry::new(4, 32, 10 * 16384);
        assert_eq!(r.iter().map(|x| x.pages(&geo)).map(|(a, b)| b - a).sum::<u64>(), 40);
    }

    #[test]
    fn small_files_are_read_block_by_block() {
        // 40 KiB: block 0, block 1 (read-ahead would need block 2 whole: it is the 8 KiB last
        // block), then the last block alone.
        let geo = BsdGeometry::new(4, 32, 40 * 1024);
        let r = run(40 * 1024, &chunks(40 * 1024, 16384));
        let pages: Vec<_> = r.iter().map(|x| (x.is_sync(), x.pages(&geo))).collect();
        assert_eq!(pages, vec![(true, (0, 4)), (true, (4, 8)), (true, (8, 10))]);
        // One block of 5000 bytes: one read of two pages.
        let geo = BsdGeometry::new(4, 32, 5000);
        let r = run(5000, &chunks(5000, 16384));
        assert_eq!(r, vec![BlockRead::Sync { first_block: 0, blocks: 1 }]);
        assert_eq!(r[0].pages(&geo), (0, 2));
    }

    #[test]
    fn a_non_sequential_read_gets_no_read_ahead() {
        let r = run(10 * 16384, &[(5 * 16384, 16384), (2 * 16384, 16384)]);
        assert_eq!(r, vec![BlockRead::Sync { first_block: 5, blocks: 1 }, BlockRead::Sync { first_block: 2, blocks: 1 }]);
    }

    #[test]
    fn a_large_read_is_one_synchronous_cluster() {
        // A 64 KiB read at 0 of a 1 MiB file (seqcount 4): blocks 0-3 in one cluster, marks on
        // 1 and 3; read-ahead would start at block 4, not below 0 + seqcount: none.
        let geo = BsdGeometry::new(4, 32, 1 << 20);
        let mut mem = Mem::default();
        let mut out = Vec::new();
        cluster_read(&geo, &mut mem, 0, true, 65536, 4, &mut out);
        assert_eq!(out, vec![BlockRead::Sync { first_block: 0, blocks: 4 }]);
        assert_eq!(mem.marks, BTreeSet::from([1, 3]));
        // With seqcount 5 it does: max(5, 4 blocks of the read) = 5 blocks from block 4, marked
        // first and last.
        let mut mem = Mem::default();
        let mut out = Vec::new();
        cluster_read(&geo, &mut mem, 0, true, 65536, 5, &mut out);
        assert_eq!(out, vec![BlockRead::Sync { first_block: 0, blocks: 4 }, BlockRead::Async { first_block: 4, blocks: 5 }]);
        assert_eq!(mem.marks, BTreeSet::from([1, 3, 4, 8]));
        // A cluster stops at a block in core.
        let mut mem = Mem { core: BTreeSet::from([2]), marks: BTreeSet::new() };
        let mut out = Vec::new();
        cluster_read(&geo, &mut mem, 0, true, 65536, 0, &mut out);
        assert_eq!(out, vec![BlockRead::Sync { first_block: 0, blocks: 2 }]);
        // A cached, marked block with a sequential read: the mark is consumed, the blocks in
        // core are skipped, read-ahead starts after them.
        let mut mem = Mem { core: (0..8).collect(), marks: BTreeSet::from([4]) };
        let mut out = Vec::new();
        cluster_read(&geo, &mut mem, 4, false, 16384, 5, &mut out);
        assert_eq!(out, vec![BlockRead::Async { first_block: 8, blocks: 5 }]);
        assert!(!mem.marks.contains(&4));
        // Without a mark, nothing.
        let mut out = Vec::new();
        cluster_read(&geo, &mut mem, 5, false, 16384, 5, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn fault_windows() {
        // Pages behind resident: the page and the 8 after it.
        assert_eq!(fault_window(9, 40, &|q| q < 9), (9, 18));
        // Near the end of the mapping.
        assert_eq!(fault_window(36, 40, &|q| q < 36), (36, 40));
        // A cold mapping, in the middle: 7 behind, 8 ahead, 16 pages.
        assert_eq!(fault_window(20, 40, &|_| false), (13, 29));
        // Stops at a resident page either side.
        assert_eq!(fault_window(20, 40, &|q| q == 17 || q == 23), (18, 23));
        // At the start.
        assert_eq!(fault_window(0, 40, &|_| false), (0, 9));
    }
}
