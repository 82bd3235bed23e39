//! What a process asks of the host: the system calls a task's program makes, one at a time.
//! A program produces its calls lazily (it sees the file tree as it is when it needs more), so
//! `cp -r` can name the directory it created a moment ago.

use super::fs::Tree;
use super::Ino;
use crate::time::Nanos;
use rand_pcg::Pcg64;
use std::collections::VecDeque;

/// How a write reaches the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum WriteMode {
    /// Through the page cache: the pages are dirtied and written back later.
    Buffered,
    /// O_SYNC: buffered, then the file's dirty pages and its inode are written before the call
    /// returns.
    Sync,
    /// O_DIRECT: straight from the process's buffer to the disk, bypassing the cache.
    Direct,
}

pub enum Syscall {
    /// open() or stat(): the path walk to `ino`. A component whose dentry is not cached costs
    /// its parent's directory blocks up to the entry, then its inode's block.
    Lookup(Ino),
    /// getdents() over a whole directory: every directory block.
    Readdir(Ino),
    /// read() of bytes `[off, off + len)` through the page cache (with readahead).
    Read {
        ino: Ino,
        off: u64,
        len: u64,
    },
    /// A copy out of a mapping of bytes `[off, off + len)`: page faults on the pages not
    /// resident (Linux: filemap_fault's read-around; FreeBSD: vm_fault's read-behind/ahead).
    Fault {
        ino: Ino,
        off: u64,
        len: u64,
    },
    /// A read with O_DIRECT.
    DirectRead {
        ino: Ino,
        off: u64,
        len: u64,
    },
    /// io_submit() of an O_DIRECT read (libaio): its bios are submitted, not waited for.
    DirectReadAsync {
        ino: Ino,
        off: u64,
        len: u64,
    },
    /// io_getevents() for every read submitted with `DirectReadAsync` (and any own I/O).
    AioWait,
    Write {
        ino: Ino,
        off: u64,
        len: u64,
        mode: WriteMode,
    },
    /// fsync(): the file's dirty pages and its inode block, waited for.
    Fsync(Ino),
    /// creat() / mkdir() of `name` in `parent` (an error if it exists).
    Create {
        parent: Ino,
        name: String,
        dir: bool,
    },
    /// unlink() of file `ino` (its last link): the walk to it, its indirect blocks read, then
    /// its entry, inode and blocks freed (metadata dirtied) and its cached pages dropped (dirty
    /// ones discarded). An error (counted) for a directory or an inode no longer there.
    Unlink(Ino),
    /// wait() until every child this task spawned without waiting has exited (a process
    /// joining its threads).
    WaitChildren,
    /// Computation on a CPU (stretched when processes share the CPUs).
    Compute(Nanos),
    /// Off-CPU waiting (a think time, a timer).
    Sleep(Nanos),
    /// fork() + exec() of a child with its own pid; the parent waits for it if `wait`.
    Spawn {
        name: String,
        program: Box<dyn Program>,
        wait: bool,
    },
    /// `echo 3 > /proc/sys/vm/drop_caches`: clean pages, dentries and inodes are dropped.
    DropCaches,
    /// sync(): every dirty page written, waited for.
    Sync,
    /// A call that cannot be made (a path that does not exist when the task starts): counted
    /// in the task's `errors`, the message kept.
    Fail(String),
    /// clock_gettime(): the current simulated time is stored in the cell (the program reads it
    /// on its next turn; programs that time themselves: a video player, a start-up timer).
    Now(Clock),
    /// futex(FUTEX_WAIT): sleep while `word` holds `value` (threads of one process handing
    /// work to each other: S's replay-startup-io).
    FutexWait {
        word: Word,
        value: u64,
    },
    /// Store `value` in `word` and wake every task waiting on it (FUTEX_WAKE).
    FutexWake {
        word: Word,
        value: u64,
    },
    /// A result the program measured, kept in its top-level task's report.
    Report(ReportItem),
}

/// A cell the kernel writes the time into (`Syscall::Now`).
pub type Clock = std::sync::Arc<std::sync::atomic::AtomicU64>;
/// A word shared by the tasks of one program (`Syscall::FutexWait` / `FutexWake`).
pub type Word = std::sync::Arc<std::sync::atomic::AtomicU64>;

/// What a program reports (host/report.rs `TaskReport::iterations_s`, `counts`).
#[derive(Clone, Debug, PartialEq)]
pub enum ReportItem {
    /// One iteration's time in seconds (a start-up time), appended to `iterations_s`.
    Iteration(f64),
    /// Added to the named count (frames dropped, files compiled).
    Count(&'static str, u64),
}

impl Syscall {
    /// The inode the call works on, which must exist when it runs (None for calls naming none,
    /// and for unlink, which reports a missing file itself).
    pub fn target(&self) -> Option<Ino> {
        match *self {
            Syscall::Lookup(i) | Syscall::Readdir(i) | Syscall::Fsync(i) => Some(i),
            Syscall::Read { ino, .. }
            | Syscall::Fault { ino, .. }
            | Syscall::DirectRead { ino, .. }
            | Syscall::DirectReadAsync { ino, .. }
            | Syscall::Write { ino, .. } => Some(ino),
            Syscall::Create { parent, .. } => Some(parent),
            _ => None,
        }
    }
}

/// A process's behaviour: appends its next calls to `out` (false: the process exits).
pub trait Program: Send {
    fn next(&mut self, tree: &Tree, rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool;
}

/// A fixed list of calls.
pub struct Script(pub Vec<Syscall>);

impl Program for Script {
    fn next(&mut self, _tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        if self.0.is_empty() {
            return false;
        }
        out.extend(self.0.drain(..));
        true
    }
}
