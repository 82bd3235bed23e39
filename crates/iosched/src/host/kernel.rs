//! The host's kernel: tasks making system calls against the page cache, the file system and
//! the CPUs, and the flusher writing dirty pages back. It is the engine's `Workload`: bios go
//! down through `Emit::submit`, completions come back through `on_complete`, admissions (a
//! submitter's submit_bio() returning) through `on_admitted`.
//!
//! A task runs its program one call at a time until a call blocks (on a page, its own bios,
//! a writeback, the CPU, a timer, a child); when what it waits for happens, the call is tried
//! again from where it stopped (`Task::progress`), so every call's steps are idempotent.
//! Read path: read.rs; write path, fsync and throttling: write.rs; bios: bio.rs.

use super::config::{HostConfig, KernelKind};
use super::cpu::Cpus;
use super::fs::{Layout, Tree};
use super::page_cache::PageCache;
use super::readahead::RaState;
use super::report::{HostReport, Sample, TaskReport};
use super::syscall::{Program, Syscall};
use super::writeback::Writeback;
use super::{Ino, PageKey, PAGE_BYTES};
use crate::fast_hash::FastMap;
use crate::request::{IoPrio, Principal, Request, RequestId};
use crate::sched::ProcessEvent;
use crate::time::{ns_to_s, Nanos};
use crate::workload::{rng_stream, Emit, NewRequest, ProcessInfo, Workload};
use rand_pcg::Pcg64;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The tasks waiting for one page, in the order they began to wait (one, the common case, with
/// no allocation).
#[derive(Debug)]
pub(super) enum PageWaiters {
    One(usize),
    Many(Vec<usize>),
}

/// Who submitted a bio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Submitter {
    /// A task submitting from its own queue, paced by admissions (writeback it does itself,
    /// direct I/O).
    Task(usize),
    /// A task's page reads (it waits on the pages, not on the bio).
    Reader(usize),
    Flusher,
    /// ext3's kjournald (host/kjournald.rs).
    Journal,
}

/// What a bio carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BioKind {
    /// Pages `[first, first + pages)` of `ino` being read into the cache.
    Read { ino: Ino, first: u64, pages: u64 },
    /// Pages being written back.
    Write { ino: Ino, first: u64, pages: u64 },
    /// ext3's journal blocks (descriptors, metadata copies, a commit block) being written.
    Log { pages: u64 },
    /// An O_DIRECT transfer of `bytes`.
    Direct { write: bool, bytes: u64 },
}

/// What the kernel keeps about a bio in flight (bio.rs makes bios and completes them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BioInfo {
    pub kind: BioKind,
    pub submitter: Submitter,
}

/// What a blocked task waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Wait {
    None,
    /// A page being read.
    Page(PageKey),
    /// Its own bios (`Task::outstanding`) and its queued submissions.
    OwnIo,
    /// Its own bios, then no page of the inode under writeback (fsync).
    Writeback(Ino),
    /// Its own bios, then no page at all under writeback (sync).
    AllWriteback,
    /// Its queued bios to be admitted (a throttled writer submitting its chunk).
    Submitting,
    Cpu,
    Timer,
    Child,
    /// Every child spawned without waiting to exit (WaitChildren).
    Children,
    /// A futex word to change (FutexWait).
    Futex,
}

/// How far a multi-stage call has got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) enum Stage {
    #[default]
    Start,
    /// Writing pages (progress = bytes done).
    Pages,
    /// Paused by dirty throttling: own writeback queued, then a sleep.
    Throttled,
    /// Writing a file's (or every) dirty pages and waiting for them.
    Flush,
}

/// A task's start: at a time, or when another task exits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    At(Nanos),
    /// `delay` after task `index` exits.
    After {
        index: usize,
        delay_ns: Nanos,
    },
}

/// A top-level task to run.
pub struct TaskDef {
    pub name: String,
    pub program: Box<dyn Program>,
    pub start: Start,
    pub prio: IoPrio,
    pub weight: u32,
    /// The run ends when this task finishes (the other tasks stop at their next system call).
    pub ends_run: bool,
}

pub(super) struct Task {
    pub name: String,
    pub principal: Principal,
    /// The top-level task whose results count this one's.
    pub root: usize,
    pub parent_waiting: Option<usize>,
    /// The parent that did not wait for this child at its spawn (it may join it later).
    pub detached_parent: Option<usize>,
    /// Children spawned without waiting that have not exited.
    pub live_children: u32,
    pub program: Box<dyn Program>,
    pub calls: VecDeque<Syscall>,
    pub current: Option<Syscall>,
    pub stage: Stage,
    pub progress: u64,
    /// The file's size before the current write extended it.
    pub old_size: u64,
    pub wait: Wait,
    pub rng: Pcg64,
    pub ra: BTreeMap<Ino, RaState>,
    /// `readahead = "2.6.9"`: 2.6.9's state per open file.
    pub ra269: BTreeMap<Ino, super::readahead_2_6_9::RaState269>,
    /// FreeBSD: the sequential heuristic per open file, and the current read()'s count.
    pub bsd_seq: BTreeMap<Ino, super::readahead_freebsd::SeqState>,
    pub bsd_seqcount: u64,
    pub prio: IoPrio,
    pub weight: u32,
    /// Own bios not yet completed.
    pub outstanding: u32,
    /// Own bios to submit one after another (each after the previous was admitted).
    pub queue: VecDeque<(NewRequest, BioInfo)>,
    pub awaiting: Option<RequestId>,
    pub emitted_unresolved: bool,
    pub throttled_since: Option<Nanos>,
    /// The current throttling pause: its length, and whether it has been slept.
    pub throttle_sleep_ns: Nanos,
    pub throttle_slept: bool,
    /// ext3: the journal transaction fsync()/sync() waits to be committed.
    pub commit_wait: Option<u64>,
    /// A readahead window waiting for its indirect blocks.
    pub pending_window: Option<(Ino, super::readahead::RaWindow)>,
    /// When a top-level task starts (None: after another, or a child).
    pub start_at: Option<Nanos>,
    pub started: bool,
    pub done: bool,
    pub successors: Vec<(usize, Nanos)>,
    pub report: TaskReport,
}

pub(super) struct Flusher {
    pub principal: Principal,
    pub queue: VecDeque<(NewRequest, BioInfo)>,
    pub awaiting: Option<RequestId>,
    pub emitted_unresolved: bool,
    /// A periodic wake-up is scheduled at this time.
    pub wake_at: Option<Nanos>,
    pub pages_written: u64,
}

const TOKEN_KIND_SHIFT: u32 = 60;
const TOKEN_TASK: u64 = 0;
const TOKEN_CPU: u64 = 1;
const TOKEN_FLUSHER: u64 = 2;
const TOKEN_SAMPLE: u64 = 3;
const TOKEN_START: u64 = 4;
const TOKEN_JOURNAL: u64 = 5;

fn token(kind: u64, value: u64) -> u64 {
    kind << TOKEN_KIND_SHIFT | value & ((1 << TOKEN_KIND_SHIFT) - 1)
}

/// The timer token of journal transaction `tid`'s commit timer.
pub(super) fn journal_token(tid: u64) -> u64 {
    token(TOKEN_JOURNAL, tid)
}

/// The timer token of task `t`'s own sleep.
pub(super) fn task_token(t: usize) -> u64 {
    token(TOKEN_TASK, t as u64)
}

pub struct Kernel {
    pub(super) cfg: HostConfig,
    pub(super) cache: PageCache,
    pub(super) wb: Writeback,
    pub(super) tree: Tree,
    pub(super) layout: Layout,
    pub(super) cpus: Cpus,
    cpu_generation: u64,
    /// Dentries and inodes in memory (the dcache and icache: never shrunk but by drop_caches).
    pub(super) dcache: BTreeSet<Ino>,
    pub(super) tasks: Vec<Task>,
    by_pid: FastMap<u32, usize>,
    next_pid: u32,
    pub(super) flusher: Flusher,
    /// ext3's commit thread (None for ext2 and FFS).
    pub(super) kjournald: Option<super::kjournald::Kjournald>,
    /// Bios emitted whose ids the engine has not told yet (it does, in order, at arrival).
    pub(super) unresolved: VecDeque<BioInfo>,
    pub(super) bios: FastMap<RequestId, BioInfo>,
    /// Tasks waiting for a page to become uptodate (never iterated).
    pub(super) page_waiters: FastMap<PageKey, PageWaiters>,
    /// Pages under writeback, per inode.
    pub(super) ino_writeback: BTreeMap<Ino, u64>,
    /// Tasks started or to be started that have not exited (the flusher sleeps for good when
    /// none is left and nothing is dirty).
    alive: usize,
    /// Tasks waiting in fsync()/sync() for writeback to end.
    pub(super) writeback_waiters: BTreeSet<usize>,
    /// Tasks asleep in FutexWait (woken by any FutexWake: each checks its own word).
    futex_waiters: Vec<usize>,
    /// Tasks paused by dirty throttling now.
    pub(super) throttled_now: u32,
    pub(super) written_bytes: u64,
    pub(super) disk_written_bytes: u64,
    pub(super) disk_read_bytes: u64,
    timeline: Vec<Sample>,
    pub stop_ns: Nanos,
    /// Tasks whose finish ends the run (`[[task]] ends_run`).
    ends_run: Vec<usize>,
    seed: u64,
    /// `allocate`'s record of what a write() allocated (reused: a write is often one block).
    pub(super) alloc_buf: super::fs::layout::Alloc,
    /// `read_pages`' scratch: the missing runs of a read, and one run's bios.
    pub(super) read_runs: Vec<(u64, u64)>,
    pub(super) read_bios: Vec<(u64, u64, u64)>,
}

impl Kernel {
    pub fn new(cfg: HostConfig, tree: Tree, layout: Layout, defs: Vec<TaskDef>, stop_ns: Nanos, seed: u64) -> Self {
        let cache = PageCache::new(cfg.memory_pages);
        let wb = Writeback::new(cfg.writeback);
        let cpus = Cpus::new(cfg.cpu);
        let kjournald = (layout.journal_blocks() > 0).then(|| {
            let j = super::fs::journal::Journal::new(layout.journal().to_vec(), layout.journal_blocks());
            super::kjournald::Kjournald::new(j)
        });
        let mut k = Kernel {
            cfg,
            cache,
            wb,
            tree,
            layout,
            cpus,
            cpu_generation: 0,
            dcache: BTreeSet::new(),
            tasks: Vec::new(),
            by_pid: FastMap::default(),
            next_pid: 1,
            flusher: Flusher {
                principal: Principal::default(),
                queue: VecDeque::new(),
                awaiting: None,
                emitted_unresolved: false,
                wake_at: None,
                pages_written: 0,
            },
            kjournald,
            unresolved: VecDeque::new(),
            bios: FastMap::default(),
            page_waiters: FastMap::default(),
            ino_writeback: BTreeMap::new(),
            alive: 0,
            writeback_waiters: BTreeSet::new(),
            futex_waiters: Vec::new(),
            throttled_now: 0,
            written_bytes: 0,
            disk_written_bytes: 0,
            disk_read_bytes: 0,
            timeline: Vec::new(),
            stop_ns,
            ends_run: Vec::new(),
            seed,
            alloc_buf: Default::default(),
            read_runs: Vec::new(),
            read_bios: Vec::new(),
        };
        let mut starts = Vec::new();
        for d in defs {
            if d.ends_run {
                k.ends_run.push(k.tasks.len());
            }
            let i = k.add_task(d.name, d.program, None, d.prio, d.weight);
            starts.push(d.start);
            debug_assert_eq!(i, starts.len() - 1);
        }
        for (i, s) in starts.into_iter().enumerate() {
            match s {
                Start::After { index, delay_ns } => k.tasks[index].successors.push((i, delay_ns)),
                Start::At(at) => k.tasks[i].start_at = Some(at),
            }
        }
        let pid = k.next_pid;
        k.next_pid += 1;
        k.flusher.principal = Principal { pid, group: pid };
        if let Some(kj) = k.kjournald.as_mut() {
            let pid = k.next_pid;
            k.next_pid += 1;
            kj.principal = Principal { pid, group: pid };
        }
        k
    }

    fn add_task(&mut self, name: String, program: Box<dyn Program>, parent: Option<usize>, prio: IoPrio, weight: u32) -> usize {
        let pid = self.next_pid;
        self.next_pid += 1;
        let index = self.tasks.len();
        let root = parent.map_or(index, |p| self.tasks[p].root);
        let group = parent.map_or(pid, |p| self.tasks[p].principal.group);
        self.tasks.push(Task {
            report: TaskReport { name: name.clone(), pid, ..Default::default() },
            name,
            principal: Principal { pid, group },
            root,
            parent_waiting: None,
            detached_parent: None,
            live_children: 0,
            program,
            calls: VecDeque::new(),
            current: None,
            stage: Stage::Start,
            progress: 0,
            old_size: 0,
            wait: Wait::None,
            rng: rng_stream(self.seed, 1_000 + index as u64),
            ra: BTreeMap::new(),
            ra269: BTreeMap::new(),
            bsd_seq: BTreeMap::new(),
            bsd_seqcount: 0,
            prio,
            weight,
            outstanding: 0,
            queue: VecDeque::new(),
            awaiting: None,
            emitted_unresolved: false,
            throttled_since: None,
            throttle_sleep_ns: 0,
            throttle_slept: false,
            commit_wait: None,
            pending_window: None,
            start_at: None,
            started: false,
            done: false,
            successors: Vec::new(),
        });
        self.by_pid.insert(pid, index);
        self.alive += 1;
        index
    }

    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The report: top-level tasks in definition order (children counted in their root).
    pub fn report(&self) -> HostReport {
        HostReport {
            kernel: self.cfg.kernel.as_str().into(),
            tasks: self.tasks.iter().enumerate().filter(|(i, t)| t.root == *i).map(|(_, t)| t.report.clone()).collect(),
            cache: self.cache.stats(),
            flusher_pages: self.flusher.pages_written,
            dirty_pages_at_end: self.cache.dirty_pages(),
            timeline: self.timeline.clone(),
        }
    }

    fn begin(&mut self, t: usize, now: Nanos, out: &mut Emit) {
        let task = &mut self.tasks[t];
        task.started = true;
        if task.root == t {
            task.report.start_s = Some(ns_to_s(now));
        }
        out.process_event(ProcessEvent::Started { principal: task.principal, weight: task.weight });
        self.run(t, now, out);
    }

    /// Task `t` exits: at the end of its program (`finished`), or stopped by the run's end.
    fn exit(&mut self, t: usize, now: Nanos, out: &mut Emit, finished: bool) {
        self.alive -= 1;
        let task = &mut self.tasks[t];
        task.done = true;
        // What the task held is released (a run with many short processes stays small).
        task.program = Box::new(super::syscall::Script(Vec::new()));
        task.queue = VecDeque::new();
        task.wait = Wait::None;
        out.process_event(ProcessEvent::Exited(task.principal));
        let root = task.root;
        if finished && root == t && self.ends_run.contains(&t) {
            self.stop_ns = self.stop_ns.min(now);
        }
        let task = &mut self.tasks[t];
        if root == t {
            if finished {
                let r = &mut task.report;
                r.exit_s = Some(ns_to_s(now));
                r.elapsed_s = r.start_s.map(|s| ns_to_s(now) - s);
            }
        } else {
            // A child's counts go to its root; its memory is released.
            let child = std::mem::take(&mut task.report);
            task.ra.clear();
            task.ra269.clear();
            task.bsd_seq.clear();
            task.calls.clear();
            let r = &mut self.tasks[root].report;
            r.children += 1;
            r.bytes_read += child.bytes_read;
            r.bytes_written += child.bytes_written;
            r.data_pages_read += child.data_pages_read;
            r.meta_pages_read += child.meta_pages_read;
            r.pages_written += child.pages_written;
            r.prefetch_pages += child.prefetch_pages;
            r.throttled_s += child.throttled_s;
            r.cpu_s += child.cpu_s;
            r.errors += child.errors;
            if r.error.is_none() {
                r.error = child.error;
            }
        }
        if let Some(parent) = self.tasks[t].parent_waiting.take() {
            if self.tasks[parent].wait == Wait::Child {
                self.tasks[parent].wait = Wait::None;
                self.run(parent, now, out);
            }
        }
        if let Some(parent) = self.tasks[t].detached_parent.take() {
            let p = &mut self.tasks[parent];
            p.live_children = p.live_children.saturating_sub(1);
            if p.live_children == 0 && p.wait == Wait::Children {
                p.wait = Wait::None;
                self.run(parent, now, out);
            }
        }
        let successors = std::mem::take(&mut self.tasks[t].successors);
        for (s, delay) in successors {
            if finished && now < self.stop_ns {
                out.timer(now.saturating_add(delay), token(TOKEN_START, s as u64));
            }
        }
        self.maybe_wake_flusher(now, out);
    }

    /// Runs task `t` until a call blocks or the task exits.
    pub(super) fn run(&mut self, t: usize, now: Nanos, out: &mut Emit) {
        loop {
            if self.tasks[t].done {
                return;
            }
            if self.tasks[t].current.is_none() {
                if now >= self.stop_ns {
                    return self.exit(t, now, out, false);
                }
                let task = &mut self.tasks[t];
                let next = match task.calls.pop_front() {
                    Some(c) => Some(c),
                    None => {
                        if !task.program.next(&self.tree, &mut task.rng, &mut task.calls) {
                            None
                        } else {
                            task.calls.pop_front()
                        }
                    }
                };
                let Some(call) = next else {
                    if self.tasks[t].calls.is_empty() && self.tasks[t].current.is_none() {
                        return self.exit(t, now, out, true);
                    }
                    continue;
                };
                let task = &mut self.tasks[t];
                task.current = Some(call);
                task.stage = Stage::Start;
                task.progress = 0;
            }
            let call = self.tasks[t].current.take().expect("a call is current");
            if let Syscall::Spawn { name, program, wait } = call {
                // The program moves to the child; the parent's call is over once it is spawned.
                if self.spawn(t, name, program, wait, now, out) {
                    return;
                }
                continue;
            }
            if self.exec(t, &call, now, out) {
                self.tasks[t].current = Some(call);
                return;
            }
            // The call has returned: its CPU (entry, exit, the copy) runs next.
            let cost_ns = self.cfg.syscall_cost.cost_ns(&call);
            if cost_ns > 0 {
                self.tasks[t].calls.push_front(Syscall::Compute(cost_ns));
            }
        }
    }

    /// Executes (or continues) one call; true if the task now waits. Under ext3, the journal
    /// then arms its timer or starts a commit asked for.
    fn exec(&mut self, t: usize, call: &Syscall, now: Nanos, out: &mut Emit) -> bool {
        let waits = self.exec_call(t, call, now, out);
        if self.kjournald.is_some() {
            self.journal_kick(now, out);
        }
        waits
    }

    fn exec_call(&mut self, t: usize, call: &Syscall, now: Nanos, out: &mut Emit) -> bool {
        if let Some(ino) = call.target() {
            if !self.tree.contains(ino) {
                // A file deleted (unlinked) before the call ran: the call fails, counted.
                let r = &mut self.tasks[t].report;
                r.errors += 1;
                r.error.get_or_insert_with(|| format!("inode {ino} does not exist (deleted)"));
                return false;
            }
        }
        match *call {
            Syscall::Lookup(ino) => self.lookup(t, ino, now, out),
            Syscall::Readdir(dir) => self.readdir(t, dir, now, out),
            Syscall::Read { ino, off, len } => match self.cfg.kernel {
                KernelKind::Linux => self.read(t, ino, off, len, now, out),
                KernelKind::FreeBsd => self.read_freebsd(t, ino, off, len, now, out),
            },
            Syscall::Fault { ino, off, len } => self.fault(t, ino, off, len, now, out),
            Syscall::DirectRead { ino, off, len } => self.direct_io(t, ino, off, len, false, now, out),
            Syscall::DirectReadAsync { ino, off, len } => self.direct_io_as(t, ino, off, len, false, false, now, out),
            Syscall::AioWait => {
                let task = &mut self.tasks[t];
                if task.outstanding > 0 || !task.queue.is_empty() || task.awaiting.is_some() || task.emitted_unresolved {
                    task.wait = Wait::OwnIo;
                    return true;
                }
                false
            }
            Syscall::Write { ino, off, len, mode } => self.write(t, ino, off, len, mode, now, out),
            Syscall::Fsync(ino) => self.flush(t, Some(ino), now, out),
            Syscall::Sync => self.flush(t, None, now, out),
            Syscall::Create { parent, ref name, dir } => self.create(t, parent, name, dir, now, out),
            Syscall::Unlink(ino) => self.unlink(t, ino, now, out),
            Syscall::WaitChildren => {
                if self.tasks[t].live_children > 0 {
                    self.tasks[t].wait = Wait::Children;
                    return true;
                }
                false
            }
            Syscall::Compute(ns) => {
                let task = &mut self.tasks[t];
                if task.stage == Stage::Start {
                    task.stage = Stage::Pages;
                    task.report.cpu_s += ns_to_s(ns);
                    task.wait = Wait::Cpu;
                    self.cpus.submit(t as u32, ns, now);
                    self.arm_cpu_timer(out);
                    return true;
                }
                false
            }
            Syscall::Sleep(ns) => {
                let task = &mut self.tasks[t];
                if task.stage == Stage::Start && ns > 0 {
                    task.stage = Stage::Pages;
                    task.wait = Wait::Timer;
                    out.timer(now.saturating_add(ns), token(TOKEN_TASK, t as u64));
                    return true;
                }
                false
            }
            Syscall::Spawn { .. } => unreachable!("run hands spawns to `spawn`"),
            Syscall::Fail(ref message) => {
                let r = &mut self.tasks[t].report;
                r.errors += 1;
                r.error.get_or_insert_with(|| message.clone());
                false
            }
            Syscall::DropCaches => {
                self.cache.drop_clean();
                self.dcache.clear();
                false
            }
            Syscall::Now(ref clock) => {
                clock.store(now, std::sync::atomic::Ordering::Relaxed);
                false
            }
            Syscall::FutexWait { ref word, value } => {
                if word.load(std::sync::atomic::Ordering::Relaxed) == value {
                    self.tasks[t].wait = Wait::Futex;
                    if !self.futex_waiters.contains(&t) {
                        self.futex_waiters.push(t);
                    }
                    return true;
                }
                false
            }
            Syscall::FutexWake { ref word, value } => {
                word.store(value, std::sync::atomic::Ordering::Relaxed);
                // Every waiter tries its call again (it sleeps again if its word still holds
                // its value); woken in the order they went to sleep.
                let waiters = std::mem::take(&mut self.futex_waiters);
                for w in waiters {
                    if w != t && self.tasks[w].wait == Wait::Futex && !self.tasks[w].done {
                        self.tasks[w].wait = Wait::None;
                        self.run(w, now, out);
                    }
                }
                false
            }
            Syscall::Report(ref item) => {
                let root = self.tasks[t].root;
                let r = &mut self.tasks[root].report;
                match *item {
                    super::syscall::ReportItem::Iteration(s) => r.iterations_s.push(s),
                    super::syscall::ReportItem::Count(k, n) => *r.counts.entry(k.to_string()).or_default() += n,
                }
                false
            }
        }
    }

    fn arm_cpu_timer(&mut self, out: &mut Emit) {
        self.cpu_generation += 1;
        if let Some(at) = self.cpus.next_event_ns() {
            out.timer(at, token(TOKEN_CPU, self.cpu_generation));
        }
    }

    fn on_cpu_timer(&mut self, generation: u64, now: Nanos, out: &mut Emit) {
        if generation != self.cpu_generation & ((1 << TOKEN_KIND_SHIFT) - 1) {
            return;
        }
        let mut done = Vec::new();
        self.cpus.advance(now, &mut done);
        self.arm_cpu_timer(out);
        for t in done {
            let t = t as usize;
            if self.tasks[t].wait == Wait::Cpu {
                self.tasks[t].wait = Wait::None;
                self.run(t, now, out);
            }
        }
    }

    /// Wakes the tasks waiting for page `key` (it became uptodate).
    pub(super) fn page_ready(&mut self, key: PageKey, now: Nanos, out: &mut Emit) {
        if self.page_waiters.is_empty() {
            return; // the common case: a read-ahead page nobody waits for
        }
        match self.page_waiters.remove(&key) {
            None => {}
            Some(PageWaiters::One(t)) => self.wake_page_waiter(t, key, now, out),
            Some(PageWaiters::Many(waiters)) => {
                for t in waiters {
                    self.wake_page_waiter(t, key, now, out);
                }
            }
        }
    }

    /// Runs task `t` if it still waits for page `key`.
    fn wake_page_waiter(&mut self, t: usize, key: PageKey, now: Nanos, out: &mut Emit) {
        if self.tasks[t].wait == Wait::Page(key) {
            self.tasks[t].wait = Wait::None;
            self.run(t, now, out);
        }
    }

    /// Task `t` waits for page `key`.
    pub(super) fn wait_page(&mut self, t: usize, key: PageKey) -> bool {
        self.tasks[t].wait = Wait::Page(key);
        match self.page_waiters.entry(key) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(PageWaiters::One(t));
            }
            std::collections::hash_map::Entry::Occupied(mut e) => match e.get_mut() {
                PageWaiters::One(first) => {
                    let first = *first;
                    e.insert(PageWaiters::Many(vec![first, t]));
                }
                PageWaiters::Many(v) => v.push(t),
            },
        }
        true
    }

    /// Re-checks a task waiting on its own I/O or on writeback; runs it if done waiting.
    pub(super) fn check_io_wait(&mut self, t: usize, now: Nanos, out: &mut Emit) {
        let task = &self.tasks[t];
        let own_done =
            task.outstanding == 0 && task.queue.is_empty() && task.awaiting.is_none() && self.journal_committed(task.commit_wait);
        let ready = match task.wait {
            Wait::OwnIo => own_done,
            Wait::Writeback(ino) => own_done && self.ino_writeback.get(&ino).copied().unwrap_or(0) == 0,
            Wait::AllWriteback => own_done && self.cache.writeback_pages() == 0,
            _ => false,
        };
        if ready {
            self.tasks[t].wait = Wait::None;
            self.tasks[t].commit_wait = None;
            self.writeback_waiters.remove(&t);
            self.run(t, now, out);
        }
    }

    /// Tasks waiting for writeback to finish (called when a write completes).
    pub(super) fn writeback_progress(&mut self, ino: Ino, now: Nanos, out: &mut Emit) {
        if self.kjournald.as_ref().is_some_and(|kj| kj.phase == super::kjournald::Phase::Data) {
            self.journal_progress(now, out);
        }
        if self.writeback_waiters.is_empty() {
            return;
        }
        let waiting: Vec<usize> = self
            .writeback_waiters
            .iter()
            .copied()
            .filter(|&t| matches!(self.tasks[t].wait, Wait::Writeback(i) if i == ino) || self.tasks[t].wait == Wait::AllWriteback)
            .collect();
        for t in waiting {
            self.check_io_wait(t, now, out);
        }
    }

    /// The flusher runs if it has work (dirty pages over the background threshold, expired
    /// inodes, or a queue of its own), else sleeps until its next periodic wake-up.
    pub(super) fn maybe_wake_flusher(&mut self, now: Nanos, out: &mut Emit) {
        if self.wb.need_background(&self.cache) {
            self.flusher_work(now, out);
        }
        self.arm_flusher(now, out);
    }

    fn arm_flusher(&mut self, now: Nanos, out: &mut Emit) {
        if self.flusher.wake_at.is_some() || now >= self.stop_ns {
            return;
        }
        // Nothing dirty and nobody left to dirty anything: the flusher sleeps for good.
        if self.cache.dirty_pages() == 0 && self.alive == 0 {
            return;
        }
        if let Some(at) = self.wb.next_periodic_wakeup_ns(now) {
            self.flusher.wake_at = Some(at);
            out.timer(at, token(TOKEN_FLUSHER, 0));
        }
    }

    /// The flusher submits its queued bios, one after another as each is admitted, and takes
    /// the next chunk from the writeback policy when its queue is empty.
    pub(super) fn flusher_work(&mut self, now: Nanos, out: &mut Emit) {
        loop {
            if self.flusher.awaiting.is_some() || self.flusher.emitted_unresolved {
                return;
            }
            if self.flusher.queue.is_empty() {
                let Some(chunk) = self.wb.next_chunk(&mut self.cache, now) else {
                    return;
                };
                if let Some(kj) = self.kjournald.as_mut() {
                    // __sync_single_inode clears I_DIRTY before writing the pages.
                    kj.inode_dirty.remove(&chunk.ino);
                }
                let principal = self.flusher.principal;
                let bios = self.write_bios(chunk.ino, chunk.first_index, chunk.pages, principal, false, Submitter::Flusher);
                self.flusher.pages_written += chunk.pages;
                self.flusher.queue.extend(bios);
                continue;
            }
            let (req, info) = self.flusher.queue.pop_front().expect("queue is not empty");
            self.flusher.emitted_unresolved = true;
            self.emit_bio(req, info, now, out);
        }
    }

    /// Task `t` submits its queued bios one after another, as each is admitted.
    pub(super) fn pump_task(&mut self, t: usize, now: Nanos, out: &mut Emit) {
        loop {
            let task = &mut self.tasks[t];
            if task.awaiting.is_some() || task.emitted_unresolved {
                return;
            }
            let Some((req, info)) = task.queue.pop_front() else {
                return;
            };
            task.emitted_unresolved = true;
            self.emit_bio(req, info, now, out);
        }
    }

    pub(super) fn emit_bio(&mut self, req: NewRequest, info: BioInfo, now: Nanos, out: &mut Emit) {
        if let Submitter::Task(t) = info.submitter {
            self.tasks[t].outstanding += 1;
        }
        self.unresolved.push_back(info);
        out.submit(now, req);
    }

    fn sample(&mut self, now: Nanos, out: &mut Emit) {
        let Some(every) = self.cfg.sample_ns else {
            return;
        };
        let th = self.wb.thresholds(&self.cache);
        let mib = |pages: u64| pages as f64 * PAGE_BYTES as f64 / (1 << 20) as f64;
        self.timeline.push(Sample {
            t_s: ns_to_s(now),
            dirty_mib: mib(self.cache.dirty_pages()),
            writeback_mib: mib(self.cache.writeback_pages()),
            cached_mib: mib(self.cache.cached_pages()),
            background_mib: mib(th.background_pages),
            limit_mib: mib(th.limit_pages),
            written_mib: self.written_bytes as f64 / (1 << 20) as f64,
            disk_written_mib: self.disk_written_bytes as f64 / (1 << 20) as f64,
            disk_read_mib: self.disk_read_bytes as f64 / (1 << 20) as f64,
            throttled: self.throttled_now,
        });
        if (self.alive > 0 || self.cache.dirty_pages() + self.cache.writeback_pages() > 0) && now < self.stop_ns {
            out.timer(now.saturating_add(every), token(TOKEN_SAMPLE, 0));
        }
    }

    /// fork() + exec(): the child starts now; the parent waits for it if asked.
    fn spawn(&mut self, t: usize, name: String, program: Box<dyn Program>, wait: bool, now: Nanos, out: &mut Emit) -> bool {
        let (prio, weight) = (self.tasks[t].prio, self.tasks[t].weight);
        let c = self.add_task(name, program, Some(t), prio, weight);
        if wait {
            self.tasks[c].parent_waiting = Some(t);
        } else {
            self.tasks[c].detached_parent = Some(t);
            self.tasks[t].live_children += 1;
        }
        self.begin(c, now, out);
        // The parent waits only if the child did not run to its end at once (it is not woken
        // from inside its own call).
        if wait && !self.tasks[c].done {
            self.tasks[t].wait = Wait::Child;
            return true;
        }
        false
    }
}

impl Workload for Kernel {
    fn start(&mut self, out: &mut Emit) {
        out.process_event(ProcessEvent::Started { principal: self.flusher.principal, weight: 1 });
        for (i, t) in self.tasks.iter().enumerate() {
            if let Some(at) = t.start_at {
                out.timer(at, token(TOKEN_START, i as u64));
            }
        }
        if self.cfg.sample_ns.is_some() {
            out.timer(0, token(TOKEN_SAMPLE, 0));
        }
    }

    fn on_arrival(&mut self, req: &Request, _now: Nanos, _out: &mut Emit) {
        let Some(info) = self.unresolved.pop_front() else {
            return;
        };
        match info.submitter {
            Submitter::Flusher => {
                self.flusher.emitted_unresolved = false;
                self.flusher.awaiting = Some(req.id);
            }
            Submitter::Task(t) => {
                let task = &mut self.tasks[t];
                if task.emitted_unresolved {
                    task.emitted_unresolved = false;
                    task.awaiting = Some(req.id);
                }
            }
            Submitter::Reader(_) => {}
            Submitter::Journal => {
                if let Some(kj) = self.kjournald.as_mut() {
                    kj.emitted_unresolved = false;
                    kj.awaiting = Some(req.id);
                }
            }
        }
        self.bios.insert(req.id, info);
    }

    fn wants_admissions(&self) -> bool {
        true
    }

    fn on_admitted(&mut self, id: RequestId, now: Nanos, out: &mut Emit) {
        if self.flusher.awaiting == Some(id) {
            self.flusher.awaiting = None;
            self.flusher_work(now, out);
            return;
        }
        if let Some(kj) = self.kjournald.as_mut() {
            if kj.awaiting == Some(id) {
                kj.awaiting = None;
                self.pump_journal(now, out);
                self.journal_progress(now, out);
                return;
            }
        }
        let Some(info) = self.bios.get(&id) else {
            return;
        };
        if let Submitter::Task(t) = info.submitter {
            if self.tasks[t].awaiting == Some(id) {
                self.tasks[t].awaiting = None;
                self.pump_task(t, now, out);
                self.after_own_submission(t, now, out);
            }
        }
    }

    fn on_complete(&mut self, req: &Request, now: Nanos, out: &mut Emit) {
        let Some(info) = self.bios.remove(&req.id) else {
            return;
        };
        self.complete_bio(info, now, out);
    }

    fn on_timer(&mut self, tok: u64, now: Nanos, out: &mut Emit) {
        let (kind, value) = (tok >> TOKEN_KIND_SHIFT, tok & ((1 << TOKEN_KIND_SHIFT) - 1));
        match kind {
            TOKEN_TASK => {
                let t = value as usize;
                if self.tasks[t].wait == Wait::Timer {
                    self.tasks[t].wait = Wait::None;
                    self.timer_fired(t, now, out);
                }
            }
            TOKEN_CPU => self.on_cpu_timer(value, now, out),
            TOKEN_FLUSHER => {
                self.flusher.wake_at = None;
                self.flusher_work(now, out);
                self.arm_flusher(now, out);
            }
            TOKEN_SAMPLE => self.sample(now, out),
            TOKEN_JOURNAL => self.journal_timer(value, now, out),
            TOKEN_START => {
                let t = value as usize;
                if !self.tasks[t].started && now < self.stop_ns {
                    self.begin(t, now, out);
                }
            }
            _ => {}
        }
    }

    fn processes(&self) -> Vec<ProcessInfo> {
        let mut v: Vec<ProcessInfo> = self
            .tasks
            .iter()
            .enumerate()
            .filter(|(i, t)| t.root == *i)
            .map(|(_, t)| ProcessInfo { pid: t.principal.pid, name: t.name.clone() })
            .collect();
        v.push(ProcessInfo { pid: self.flusher.principal.pid, name: "flush".into() });
        if let Some(kj) = &self.kjournald {
            v.push(ProcessInfo { pid: kj.principal.pid, name: "kjournald".into() });
        }
        v
    }

    fn remaps_pids(&self) -> bool {
        true
    }

    fn account_pid(&self, pid: u32) -> u32 {
        match self.by_pid.get(&pid) {
            Some(&t) => self.tasks[self.tasks[t].root].principal.pid,
            None => pid,
        }
    }

    fn bytes_served(&self) -> Option<u64> {
        Some(self.tasks.iter().enumerate().filter(|(i, t)| t.root == *i).map(|(_, t)| t.report.bytes_read).sum())
    }

    fn host_report(&self) -> Option<HostReport> {
        Some(self.report())
    }
}
