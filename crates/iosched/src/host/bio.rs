//! Bios: pages of the cache (or a direct transfer) turned into requests for the block layer,
//! and what their completions do. A bio covers pages contiguous both in their file and on the
//! disk, at most `max_bio_pages` long. What the kernel keeps about each bio (`BioInfo`) is
//! declared with the kernel's other state in kernel.rs.

use super::kernel::{BioInfo, BioKind, Kernel, Submitter, Wait};
use super::{Ino, PageKey, BDEV_INO, PAGE_BYTES, PAGE_SECTORS};
use crate::request::{Op, Principal, Request};
use crate::time::Nanos;
use crate::workload::{Emit, NewRequest};

impl Kernel {
    /// Disk runs `(sector, pages)` of pages `[first, first + pages)` of `ino`, in file order.
    pub(super) fn disk_runs(&self, ino: Ino, first: u64, pages: u64) -> Vec<(u64, u64)> {
        if ino == BDEV_INO {
            return vec![(first * PAGE_SECTORS, pages)];
        }
        self.layout.runs(ino, first, pages)
    }

    /// Bios for pages `[first, first + pages)` of `ino`: one per disk-contiguous piece of at
    /// most `max_bio_pages`.
    fn bios_for(&self, ino: Ino, first: u64, pages: u64, mut f: impl FnMut(u64, u64, u64)) {
        let max = self.cfg.max_bio_pages.max(1);
        let mut index = first;
        for (sector, n) in self.disk_runs(ino, first, pages) {
            let mut done = 0;
            while done < n {
                let k = max.min(n - done);
                f(index + done, sector + done * PAGE_SECTORS, k);
                done += k;
            }
            index += n;
        }
    }

    /// Reads the pages of `[first, first + pages)` of `ino` that are not in the cache: each is
    /// added locked, and bios for the missing runs are emitted at once. Returns pages read.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn read_pages(&mut self, t: usize, ino: Ino, first: u64, pages: u64, meta: bool, now: Nanos, out: &mut Emit) -> u64 {
        // Scratch vectors kept by the kernel (a read of a page or two allocated two per call).
        let mut runs = std::mem::take(&mut self.read_runs);
        runs.clear();
        for index in first..first.saturating_add(pages) {
            if !self.cache.add_locked(PageKey::new(ino, index)) {
                continue;
            }
            match runs.last_mut() {
                Some((s, n)) if *s + *n == index => *n += 1,
                _ => runs.push((index, 1)),
            }
        }
        let principal = self.tasks[t].principal;
        let prio = self.tasks[t].prio;
        let mut total = 0;
        let mut bios = std::mem::take(&mut self.read_bios);
        for &(s, n) in &runs {
            total += n;
            bios.clear();
            self.bios_for(ino, s, n, |index, sector, k| bios.push((index, sector, k)));
            for &(index, sector, k) in &bios {
                let req = NewRequest {
                    principal,
                    op: Op::Read,
                    sync: true,
                    start_sector: sector,
                    size_sectors: (k * PAGE_SECTORS) as u32,
                    flags: if meta { Request::META } else { 0 },
                    prio,
                };
                let info = BioInfo { kind: BioKind::Read { ino, first: index, pages: k }, submitter: Submitter::Reader(t) };
                self.emit_bio(req, info, now, out);
            }
        }
        (self.read_runs, self.read_bios) = (runs, bios);
        let r = &mut self.tasks[t].report;
        if meta {
            r.meta_pages_read += total;
        } else {
            r.data_pages_read += total;
        }
        total
    }

    /// Write bios for pages already moved to writeback (`[first, first + pages)` of `ino`).
    pub(super) fn write_bios(
        &mut self,
        ino: Ino,
        first: u64,
        pages: u64,
        principal: Principal,
        sync: bool,
        submitter: Submitter,
    ) -> Vec<(NewRequest, BioInfo)> {
        self.add_ino_writeback(ino, pages);
        let prio = match submitter {
            Submitter::Task(t) | Submitter::Reader(t) => self.tasks[t].prio,
            Submitter::Flusher | Submitter::Journal => Default::default(),
        };
        let meta = ino == BDEV_INO;
        let mut v = Vec::new();
        self.bios_for(ino, first, pages, |index, sector, k| {
            v.push((
                NewRequest {
                    principal,
                    op: Op::Write,
                    sync,
                    start_sector: sector,
                    size_sectors: (k * PAGE_SECTORS) as u32,
                    flags: if meta { Request::META } else { 0 },
                    prio,
                },
                BioInfo { kind: BioKind::Write { ino, first: index, pages: k }, submitter },
            ))
        });
        v
    }

    pub(super) fn complete_bio(&mut self, info: BioInfo, now: Nanos, out: &mut Emit) {
        match info.kind {
            BioKind::Read { ino, first, pages } => {
                self.disk_read_bytes += pages * PAGE_BYTES;
                for index in first..first + pages {
                    let key = PageKey::new(ino, index);
                    self.cache.read_done(key);
                    self.page_ready(key, now, out);
                }
            }
            BioKind::Write { ino, first, pages } => {
                self.cache.end_writeback(ino, first, pages);
                self.end_ino_writeback(ino, pages);
                self.disk_written_bytes += pages * PAGE_BYTES;
                self.wb.on_written(pages, now);
                if let Submitter::Task(t) = info.submitter {
                    self.tasks[t].outstanding -= 1;
                    self.tasks[t].report.pages_written += pages;
                    // A task waiting for another inode's writeback (fsync, unlink) may have
                    // been waiting for this, its own last bio, too.
                    if matches!(self.tasks[t].wait, Wait::OwnIo | Wait::Writeback(_) | Wait::AllWriteback) {
                        self.check_io_wait(t, now, out);
                    }
                }
                if info.submitter == Submitter::Journal {
                    self.journal_bio_done(now, out);
                }
                self.writeback_progress(ino, now, out);
            }
            BioKind::Log { pages } => {
                self.disk_written_bytes += pages * PAGE_BYTES;
                self.journal_bio_done(now, out);
            }
            BioKind::Direct { write, bytes } => {
                if let Submitter::Task(t) = info.submitter {
                    self.tasks[t].outstanding -= 1;
                    if write {
                        self.disk_written_bytes += bytes;
                    } else {
                        self.disk_read_bytes += bytes;
                    }
                    if self.tasks[t].wait == Wait::OwnIo {
                        self.check_io_wait(t, now, out);
                    }
                }
            }
        }
    }
}
