//! The programs host tasks run: the commands of the papers' experiments, as the system calls
//! they make. Each produces its calls lazily, a directory or a file at a time.
//!
//! - `cat FILE` ([`Cat`]): open, read() in `bs` pieces to the end.
//! - `while true; do cat FILE; done` ([`Cat`] with `loops`).
//! - `find DIR -type f -exec cat {} \;` ([`FindExecCat`]): readdir of every directory in
//!   `find`'s order; for every regular file a child process (fork + exec, then `cat`), waited
//!   for. (GNU find uses d_type: it does not stat the files itself.)
//! - `ls -lR DIR` ([`ListRecursive`]): readdir, then stat of every entry.
//! - `cat` of every file by one process ([`ReadAll`], as `find DIR -type f | xargs cat`).
//! - `tar cf OUT DIR` ([`ReadAll`] with an output file): every file read, the archive written.
//! - `cp -r SRC DST` ([`CopyTree`]).
//! - `dd if=/dev/zero of=FILE bs= count=` ([`Dd`]), with oflag=direct / oflag=sync /
//!   conv=fsync.

use crate::host::fs::Tree;
use crate::host::syscall::{Program, Syscall, WriteMode};
use crate::host::Ino;
use crate::time::Nanos;
use rand_pcg::Pcg64;
use std::collections::VecDeque;

/// The calls to read a whole file in `bs`-byte read()s, after opening it; with
/// `cpu_ns_per_kib` > 0, each read is followed by that much computation per KiB read.
pub(crate) fn read_file(tree: &Tree, ino: Ino, bs: u64, direct: bool, cpu_ns_per_kib: f64, out: &mut VecDeque<Syscall>) {
    out.push_back(Syscall::Lookup(ino));
    let size = tree.size(ino);
    let bs = bs.max(1);
    let mut off = 0;
    while off < size {
        let len = bs.min(size - off);
        out.push_back(if direct { Syscall::DirectRead { ino, off, len } } else { Syscall::Read { ino, off, len } });
        if cpu_ns_per_kib > 0.0 {
            out.push_back(Syscall::Compute((cpu_ns_per_kib * len as f64 / 1024.0).round() as Nanos));
        }
        off += len;
    }
}

/// `cat FILE > /dev/null` (`loops` times; 0: until the run ends).
pub struct Cat {
    pub ino: Ino,
    pub bs_bytes: u64,
    pub loops: u64,
    pub direct: bool,
    /// fork + exec before the first read (0 for the shell's first command).
    pub exec_ns: Nanos,
    done: u64,
}

impl Cat {
    pub fn new(ino: Ino, bs_bytes: u64, loops: u64, direct: bool, exec_ns: Nanos) -> Self {
        Cat { ino, bs_bytes, loops, direct, exec_ns, done: 0 }
    }
}

impl Program for Cat {
    fn next(&mut self, tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        if self.loops != 0 && self.done >= self.loops {
            return false;
        }
        if self.exec_ns > 0 {
            out.push_back(Syscall::Compute(self.exec_ns));
        }
        read_file(tree, self.ino, self.bs_bytes, self.direct, 0.0, out);
        self.done += 1;
        true
    }
}

/// Directories in `find`'s order (pre-order, entries in name order) below `root`, produced
/// one at a time: (directory, its regular files).
struct Walk {
    stack: Vec<Ino>,
}

impl Walk {
    fn new(root: Ino) -> Self {
        Walk { stack: vec![root] }
    }

    fn next(&mut self, tree: &Tree) -> Option<(Ino, Vec<Ino>)> {
        let dir = self.stack.pop()?;
        let children = tree.children(dir);
        let files: Vec<Ino> = children.iter().copied().filter(|&c| !tree.is_dir(c)).collect();
        // Subdirectories are visited in name order after this directory's own entries.
        for &c in children.iter().rev() {
            if tree.is_dir(c) {
                self.stack.push(c);
            }
        }
        Some((dir, files))
    }
}

/// `find DIR -type f -exec cat {} \;`.
pub struct FindExecCat {
    walk: Walk,
    pub bs_bytes: u64,
    pub exec_ns: Nanos,
}

impl FindExecCat {
    pub fn new(root: Ino, bs_bytes: u64, exec_ns: Nanos) -> Self {
        FindExecCat { walk: Walk::new(root), bs_bytes, exec_ns }
    }
}

impl Program for FindExecCat {
    fn next(&mut self, tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        let Some((dir, files)) = self.walk.next(tree) else {
            return false;
        };
        out.push_back(Syscall::Readdir(dir));
        for f in files {
            out.push_back(Syscall::Spawn {
                name: "cat".into(),
                program: Box::new(Cat::new(f, self.bs_bytes, 1, false, self.exec_ns)),
                wait: true,
            });
        }
        true
    }
}

/// `ls -lR DIR`: every directory read, every entry stat()ed.
pub struct ListRecursive {
    walk: Walk,
}

impl ListRecursive {
    pub fn new(root: Ino) -> Self {
        ListRecursive { walk: Walk::new(root) }
    }
}

impl Program for ListRecursive {
    fn next(&mut self, tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        let Some((dir, _)) = self.walk.next(tree) else {
            return false;
        };
        out.push_back(Syscall::Readdir(dir));
        for &c in tree.children(dir) {
            out.push_back(Syscall::Lookup(c));
        }
        true
    }
}

/// One process reading every regular file below a directory (`find | xargs cat`), or `tar`
/// writing what it reads to an archive.
pub struct ReadAll {
    walk: Walk,
    pub bs_bytes: u64,
    /// tar: the archive, written as the files are read (512-byte headers, 512-byte padding).
    pub archive: Option<Ino>,
    archive_off: u64,
    flushed: bool,
}

impl ReadAll {
    pub fn new(root: Ino, bs_bytes: u64, archive: Option<Ino>) -> Self {
        ReadAll { walk: Walk::new(root), bs_bytes, archive, archive_off: 0, flushed: false }
    }
}

/// tar's record: headers and padding in 512-byte blocks.
const TAR_BLOCK: u64 = 512;

impl Program for ReadAll {
    fn next(&mut self, tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        let Some((dir, files)) = self.walk.next(tree) else {
            if let (Some(a), false) = (self.archive, self.flushed) {
                // The end-of-archive marker: two zero blocks, padded to tar's 10 KiB record.
                self.flushed = true;
                let end = (self.archive_off + 2 * TAR_BLOCK).div_ceil(10_240) * 10_240;
                out.push_back(Syscall::Write { ino: a, off: self.archive_off, len: end - self.archive_off, mode: WriteMode::Buffered });
                return true;
            }
            return false;
        };
        out.push_back(Syscall::Readdir(dir));
        for f in files {
            read_file(tree, f, self.bs_bytes, false, 0.0, out);
            if let Some(a) = self.archive {
                let len = TAR_BLOCK + tree.size(f).div_ceil(TAR_BLOCK) * TAR_BLOCK;
                out.push_back(Syscall::Write { ino: a, off: self.archive_off, len, mode: WriteMode::Buffered });
                self.archive_off += len;
            }
        }
        true
    }
}

/// `cp -r SRC DST_PARENT/NAME`: directories created in `find`'s order, each file created,
/// read and written in `bs` pieces, all by the one `cp` process.
pub struct CopyTree {
    /// (source directory, destination directory's parent, its name)
    pending: Vec<(Ino, Ino, String)>,
    pub bs_bytes: u64,
    /// The directory just created, whose entries come next.
    created: Option<(Ino, Ino, String)>,
    /// Files of the current directory still to copy, and the one being copied.
    files: VecDeque<CopyFile>,
}

impl CopyTree {
    pub fn new(src: Ino, dst_parent: Ino, dst_name: String, bs_bytes: u64) -> Self {
        CopyTree { pending: vec![(src, dst_parent, dst_name)], bs_bytes, created: None, files: VecDeque::new() }
    }
}

impl Program for CopyTree {
    fn next(&mut self, tree: &Tree, rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        while let Some(f) = self.files.front_mut() {
            if f.next(tree, rng, out) {
                return true;
            }
            self.files.pop_front();
        }
        if let Some((src, parent, name)) = self.created.take() {
            // The directory exists now (unless the file system was full): its entries.
            if let Some(dst) = tree.child(parent, &name) {
                out.push_back(Syscall::Readdir(src));
                let children = tree.children(src).to_vec();
                for &c in children.iter().rev() {
                    if tree.is_dir(c) {
                        self.pending.push((c, dst, tree.name(c).to_string()));
                    }
                }
                for c in children {
                    if !tree.is_dir(c) {
                        self.files.push_back(CopyFile::new(c, dst, tree.name(c).to_string(), self.bs_bytes, 0));
                    }
                }
                return true;
            }
        }
        let Some((src, parent, name)) = self.pending.pop() else {
            return false;
        };
        out.push_back(Syscall::Create { parent, name: name.clone(), dir: true });
        self.created = Some((src, parent, name));
        true
    }
}

/// One file copied by `cp` (run inline by the copying process): open the source, create the
/// copy, then read and write it in `bs` pieces; `open_ns` of computation before the open.
pub(crate) struct CopyFile {
    src: Ino,
    dst_parent: Ino,
    name: String,
    bs_bytes: u64,
    open_ns: Nanos,
    step: u8,
}

impl CopyFile {
    pub(crate) fn new(src: Ino, dst_parent: Ino, name: String, bs_bytes: u64, open_ns: Nanos) -> Self {
        CopyFile { src, dst_parent, name, bs_bytes, open_ns, step: 0 }
    }
}

impl Program for CopyFile {
    fn next(&mut self, tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        match self.step {
            0 => {
                self.step = 1;
                if self.open_ns > 0 {
                    out.push_back(Syscall::Compute(self.open_ns));
                }
                out.push_back(Syscall::Lookup(self.src));
                out.push_back(Syscall::Create { parent: self.dst_parent, name: self.name.clone(), dir: false });
                true
            }
            1 => {
                self.step = 2;
                let Some(dst) = tree.child(self.dst_parent, &self.name) else {
                    return false;
                };
                let size = tree.size(self.src);
                let bs = self.bs_bytes.max(1);
                let mut off = 0;
                while off < size {
                    let len = bs.min(size - off);
                    out.push_back(Syscall::Read { ino: self.src, off, len });
                    out.push_back(Syscall::Write { ino: dst, off, len, mode: WriteMode::Buffered });
                    off += len;
                }
                true
            }
            _ => false,
        }
    }
}

/// `dd if=/dev/zero of=FILE bs=BS count=N [oflag=direct|sync] [conv=fsync]`, writing from
/// offset 0 of a file that exists (created by the scenario if it did not).
pub struct Dd {
    pub ino: Ino,
    pub bs_bytes: u64,
    pub total_bytes: u64,
    pub mode: WriteMode,
    pub fsync_at_end: bool,
    off: u64,
    ended: bool,
}

impl Dd {
    pub fn new(ino: Ino, bs_bytes: u64, total_bytes: u64, mode: WriteMode, fsync_at_end: bool) -> Self {
        Dd { ino, bs_bytes: bs_bytes.max(1), total_bytes, mode, fsync_at_end, off: 0, ended: false }
    }
}

/// dd's writes are produced this many at a time (the program is lazy so a long dd holds
/// no long list of calls).
const DD_BATCH: u64 = 64;

impl Program for Dd {
    fn next(&mut self, _tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        if self.off >= self.total_bytes {
            if self.fsync_at_end && !self.ended {
                self.ended = true;
                out.push_back(Syscall::Fsync(self.ino));
                return true;
            }
            return false;
        }
        for _ in 0..DD_BATCH {
            if self.off >= self.total_bytes {
                break;
            }
            let len = self.bs_bytes.min(self.total_bytes - self.off);
            out.push_back(Syscall::Write { ino: self.ino, off: self.off, len, mode: self.mode });
            self.off += len;
        }
        true
    }
}

/// A fixed sequence of calls run once (drop_caches between phases, sync).
pub fn once(calls: Vec<Syscall>) -> Box<dyn Program> {
    Box::new(crate::host::syscall::Script(calls))
}

/// How a microbenchmark reader reaches its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadAccess {
    /// Copies out of a mapping (page faults).
    Mmap,
    /// read() calls.
    Read,
}

/// Iyer & Druschel's microbenchmark process: `bs`-byte sequential accesses of one file (from
/// the start again at its end), each followed by a think time. The paper's processes "pause"
/// between requests ("the duration ... each process spends waiting between requests", section
/// 4.2.1): the think time is a sleep, off the CPU.
pub struct Reader {
    pub ino: Ino,
    pub bs_bytes: u64,
    pub access: ReadAccess,
    pub think: crate::workload::think::Think,
    off: u64,
    n: u64,
}

impl Reader {
    pub fn new(ino: Ino, bs_bytes: u64, access: ReadAccess, think: crate::workload::think::Think) -> Self {
        Reader { ino, bs_bytes: bs_bytes.max(1), access, think, off: 0, n: 0 }
    }
}

impl Program for Reader {
    fn next(&mut self, tree: &Tree, rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        let size = tree.size(self.ino);
        if size == 0 {
            return false;
        }
        if self.off >= size || self.n == 0 {
            self.off = 0;
            out.push_back(Syscall::Lookup(self.ino));
        }
        let (ino, off, len) = (self.ino, self.off, self.bs_bytes.min(size - self.off));
        out.push_back(match self.access {
            ReadAccess::Mmap => Syscall::Fault { ino, off, len },
            ReadAccess::Read => Syscall::Read { ino, off, len },
        });
        self.off += len;
        let think = self.think.sample(self.n, rng);
        self.n += 1;
        if think > 0 {
            out.push_back(Syscall::Sleep(think));
        }
        true
    }
}
