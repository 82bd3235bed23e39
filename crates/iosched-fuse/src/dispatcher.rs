//! The dispatcher: one thread owns the scheduler and the emulated disk. FUSE reads and writes
//! arrive as messages (their data already read from / written to the backing file); the
//! dispatcher asks the scheduler what to serve, computes the service time on the disk model, and
//! holds the reply until the modelled completion (an absolute deadline: sleep, then spin the
//! last stretch). Time for the scheduler is nanoseconds since the mount, read only here.
//!
//! The emulated drive has the simulator's command queue (`device/drive_queue.rs`): the
//! scheduler is asked for requests while the drive has a free slot (`--queue-depth`, 1 by
//! default), and the drive's firmware picks which held command the mechanism serves next (FIFO
//! or rotational position order), so a guest at NCQ depth 32 gets a drive that reorders as the
//! simulated one does.

use crate::address_view::{AddressView, DeviceCalibration};
use crate::exit_watch::REAP_NS;
use crate::principal::Principals;
use fuser::{ReplyData, ReplyWrite};
use iosched::device::drive_queue::{DriveQueue, DriveQueueConfig};
use iosched::device::{Device, DeviceView, RotationalDisk, Service};
use iosched::metrics::{InvariantReport, LatencyHistogram, LatencyMs, ProcessSummary, RecordTimes, RequestRecord, RunAccumulator};
use iosched::request::{Op, Principal, Request};
use iosched::sched::{registry, Completion, Context, Decision, ProcessEvent, Scheduler};
use iosched::time::Nanos;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Sleep until this long before a deadline, then spin.
const SPIN_NS: Nanos = 200_000;
/// The sizes of the file system's tables as JSON (fs.rs's `Tables::sizes`, passed in as a function
/// so that the dispatcher does not depend on the file system, which sends it its messages).
pub type TableSizes = Box<dyn Fn() -> serde_json::Value + Send>;

/// The shortest interval between live statistics lines (0 turns them off).
pub const MIN_STATS_INTERVAL_S: f64 = 0.1;

pub enum Reply {
    /// Emulated disk: the backing I/O was done on arrival; only the answer is held.
    Read(ReplyData, Vec<u8>),
    Write(ReplyWrite, u32),
    /// Real backend: the backing I/O is done when the scheduler dispatches the request.
    ReadAt {
        reply: ReplyData,
        file: Arc<File>,
        offset: u64,
        size: u32,
    },
    WriteAt {
        reply: ReplyWrite,
        file: Arc<File>,
        offset: u64,
        data: Vec<u8>,
    },
}

impl Reply {
    /// Does the backing I/O still to do, if any, then answers.
    fn perform_and_send(self) {
        match self {
            Reply::Read(r, data) => r.data(&data),
            Reply::Write(r, n) => r.written(n),
            Reply::ReadAt { reply, file, offset, size } => match crate::backing_io::read_fully(&file, offset, size as usize) {
                Ok(data) => reply.data(&data),
                Err(e) => reply.error(crate::backing_io::errno(e)),
            },
            Reply::WriteAt { reply, file, offset, data } => match file.write_all_at(&data, offset) {
                Ok(()) => reply.written(data.len() as u32),
                Err(e) => reply.error(crate::backing_io::errno(e)),
            },
        }
    }
}

/// Where request service times come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    /// A device model decides each service time; replies are held until then.
    #[default]
    Emulated,
    /// The backing files' own I/O, done at dispatch, one request at a time.
    Real,
}

impl Backend {
    pub fn parse(s: &str) -> Result<Backend, String> {
        match s {
            "emulated" => Ok(Backend::Emulated),
            "real" => Ok(Backend::Real),
            _ => Err(format!("unknown backend `{s}` (known: emulated, real)")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Backend::Emulated => "emulated",
            Backend::Real => "real",
        }
    }
}

pub struct Io {
    pub principal: Principal,
    pub op: Op,
    pub sync: bool,
    pub start_sector: u64,
    pub size_sectors: u32,
    pub reply: Reply,
    /// When the FUSE thread received it (the request's issue time in the records).
    pub arrived: Instant,
}

pub enum Msg {
    Started {
        principal: Principal,
        name: String,
    },
    Io(Io),
    /// A watched process exited (exit_watch.rs), seen at `at`.
    Exited {
        pid: u32,
        at: Instant,
    },
    /// The mount is ending: stop at once (requests still queued are answered EIO).
    Shutdown,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub scheduler: String,
    pub policy: Option<String>,
    pub tunables: BTreeMap<String, f64>,
    pub preset: String,
    pub backend: Backend,
    /// Real backend: a positioning curve from `iosched-fuse calibrate` for the schedulers'
    /// estimates.
    pub calibration: Option<std::path::PathBuf>,
    /// Seconds between live statistics lines on stderr; 0: none.
    pub stats_interval_s: f64,
    /// Also append each statistics line (JSON) to this file.
    pub stats_file: Option<std::path::PathBuf>,
    /// The emulated drive's command queue (depth 1: none). The real backend has depth 1.
    pub drive: DriveQueueConfig,
}

/// What the dispatcher hands back when the mount ends: the summary's accumulators (constant
/// memory however long the mount lasts; the records themselves went to the CSV file as they
/// completed).
pub struct Outcome {
    /// Over all requests (its per-process part is not used: see `processes`).
    pub acc: RunAccumulator,
    /// The first request's issue and the last completion (ns since the mount).
    pub first_issue_ns: Option<Nanos>,
    pub last_complete_ns: Nanos,
    /// Reply time minus modelled completion (emulated disk only).
    pub lateness: LatencyHistogram,
    /// Per process, from a completion to its next request when nothing else of it was outstanding.
    pub think: LatencyHistogram,
    /// Per process, in the order they exited, then those still running.
    pub processes: Vec<ProcessTotals>,
    pub counters: Vec<(String, u64)>,
    pub scheduler_name: String,
    pub exits: ExitNotices,
    /// Rows written to the requests CSV, or its first write error.
    pub csv: Option<Result<u64, String>>,
}

/// The per-request CSV, written as requests complete (`--requests-csv`).
pub struct CsvOut {
    out: BufWriter<File>,
    rows: u64,
    error: Option<std::io::Error>,
}

impl CsvOut {
    /// Takes a file opened for writing (at mount time, so that a bad path is refused up front).
    pub fn new(file: File) -> CsvOut {
        let mut out = BufWriter::with_capacity(64 << 10, file);
        let error = writeln!(out, "{}", iosched::metrics::csv::RECORD_COLUMNS).err();
        CsvOut { out, rows: 0, error }
    }

    fn record(&mut self, r: &RequestRecord) {
        if self.error.is_none() {
            match iosched::metrics::csv::write_record(&mut self.out, r) {
                Ok(()) => self.rows += 1,
                Err(e) => self.error = Some(e),
            }
        }
    }

    fn flush(&mut self) {
        if self.error.is_none() {
            if let Err(e) = self.out.flush() {
                self.error = Some(e);
            }
        }
    }

    fn finish(mut self) -> Result<u64, String> {
        self.flush();
        match self.error {
            Some(e) => Err(e.to_string()),
            None => Ok(self.rows),
        }
    }
}

/// A process's requests while it runs. Its response-time histogram (HdrHistogram, ~100-150 KiB
/// once it has seen milliseconds) is reduced to its summary (and its CDF at 205 quantiles, about
/// 2 KiB) when the process exits, so the
/// dispatcher's memory grows with the processes running, not with every process ever seen
/// (a `find -exec cat` starts one per file).
struct LiveProcess {
    name: String,
    bytes: u64,
    response: LatencyHistogram,
    disk_ns: u128,
    last_complete_ns: Nanos,
}

/// A process's totals for the summary (`response_ms` fixed when it exited).
pub struct ProcessTotals {
    pub pid: u32,
    pub name: String,
    pub requests: u64,
    pub bytes: u64,
    pub response_ms: LatencyMs,
    /// At `histogram::CDF_QUANTILES` (205 values).
    pub response_cdf_ms: Vec<f64>,
    pub disk_ns: u128,
    pub last_complete_ns: Nanos,
}

impl LiveProcess {
    fn totals(&self, pid: u32) -> ProcessTotals {
        ProcessTotals {
            pid,
            name: self.name.clone(),
            requests: self.response.count(),
            bytes: self.bytes,
            response_ms: self.response.summary_ms(),
            response_cdf_ms: self.response.quantiles_ms(),
            disk_ns: self.disk_ns,
            last_complete_ns: self.last_complete_ns,
        }
    }
}

/// How the exits of processes that did I/O were noticed.
#[derive(Default)]
pub struct ExitNotices {
    /// Reported by the exit watcher as they happened.
    pub watched: u64,
    /// Found by polling /proc (up to REAP_NS late).
    pub polled: u64,
    /// From a process's last completion to the notice of its exit (processes with a completion).
    pub after_last_completion: LatencyHistogram,
}

/// Per process: its last completion and how many of its requests are outstanding.
#[derive(Default, Clone, Copy)]
struct Thinking {
    last_complete_ns: Option<Nanos>,
    outstanding: u32,
}

/// Where service times come from, and what the scheduler sees of the device.
pub enum Timing {
    Emulated(RotationalDisk),
    Real(AddressView),
}

pub fn view_capacity(t: &Timing) -> u64 {
    view_of(t).capacity_sectors()
}

fn view_of(t: &Timing) -> &dyn DeviceView {
    match t {
        Timing::Emulated(d) => d.as_view(),
        Timing::Real(v) => v,
    }
}

/// The command the emulated mechanism is serving.
#[derive(Clone, Copy)]
struct Serving {
    req: Request,
    /// When the drive accepted it (the host's dispatch: the records' and the scheduler's).
    accepted_ns: Nanos,
    svc: Service,
}

struct Dispatcher {
    rx: Receiver<Msg>,
    origin: Instant,
    last_ns: Nanos,
    scheduler: Box<dyn Scheduler>,
    timing: Timing,
    pending: HashMap<u64, Reply>,
    next_id: u64,
    /// Real backend: 1 while a request's backing I/O runs (the emulated drive counts its own).
    in_flight: u32,
    /// The emulated drive's command queue and the command its mechanism serves.
    drive: DriveQueue,
    serving: Option<Serving>,
    /// Set by a completion until the next decision, which is then taken at the scheduler's
    /// clock (the modelled completion, or a later arrival), not the host's: the host's time to
    /// send the reply must not delay the device (the simulator dispatches at the completion
    /// instant too).
    decide_at_completion: bool,
    /// The scheduler's clock: the latest time given to it in any call (never set back).
    sched_clock_ns: Nanos,
    disconnected: bool,
    acc: RunAccumulator,
    first_issue_ns: Option<Nanos>,
    last_complete_ns: Nanos,
    lateness: LatencyHistogram,
    think: LatencyHistogram,
    thinking: HashMap<u32, Thinking>,
    csv: Option<CsvOut>,
    /// The sizes of the file system's tables (they go into the statistics lines).
    tables: Option<TableSizes>,
    /// Processes that have done I/O and not exited yet, and the totals of those that have.
    live: BTreeMap<u32, LiveProcess>,
    exited: Vec<ProcessTotals>,
    groups: HashMap<u32, u32>,
    exits: ExitNotices,
    principals: Arc<Mutex<Principals>>,
    cfg: Config,
    // Live statistics since the last line.
    next_stats_ns: Nanos,
    next_reap_ns: Nanos,
    interval_bytes: BTreeMap<u32, u64>,
    interval_start_ns: Nanos,
}

impl Dispatcher {
    fn now(&mut self) -> Nanos {
        let t = (self.origin.elapsed().as_nanos() as Nanos).max(self.last_ns);
        self.last_ns = t;
        t
    }

    /// Commands at the drive (the scheduler's `Context::in_flight`).
    fn in_flight(&self) -> u32 {
        match self.timing {
            Timing::Emulated(_) => self.drive.outstanding(),
            Timing::Real(_) => self.in_flight,
        }
    }

    /// Moves the scheduler's clock to `t` unless it is already later; returns it.
    fn sched_time(&mut self, t: Nanos) -> Nanos {
        self.sched_clock_ns = self.sched_clock_ns.max(t);
        self.sched_clock_ns
    }

    fn handle(&mut self, msg: Msg) {
        let now = self.now();
        // An arrival is known to the scheduler from when the FUSE thread got it (the dispatcher
        // may have been busy since), but its clock never goes back.
        let arrived = match &msg {
            Msg::Io(io) => (io.arrived.saturating_duration_since(self.origin).as_nanos() as Nanos).min(now),
            Msg::Exited { at, .. } => (at.saturating_duration_since(self.origin).as_nanos() as Nanos).min(now),
            Msg::Started { .. } => self.sched_clock_ns,
            Msg::Shutdown => {
                self.disconnected = true;
                return;
            }
        };
        let t = self.sched_time(arrived);
        let cx = Context { now_ns: t, device: view_of(&self.timing), in_flight: self.in_flight() };
        match msg {
            Msg::Started { principal, name } => {
                if let Some(old) = self.live.insert(
                    principal.pid,
                    LiveProcess { name, bytes: 0, response: LatencyHistogram::default(), disk_ns: 0, last_complete_ns: 0 },
                ) {
                    // The pid was seen exiting and is reused by a new process.
                    self.exited.push(old.totals(principal.pid));
                }
                self.groups.insert(principal.pid, principal.group);
                self.scheduler.process_event(ProcessEvent::Started { principal, weight: 1 }, &cx);
            }
            Msg::Shutdown => {}
            Msg::Exited { pid, .. } => {
                // Unless /proc polling found it first.
                if self.principals.lock().unwrap_or_else(|p| p.into_inner()).forget(pid) {
                    self.process_exited(pid, arrived, t, true);
                }
            }
            Msg::Io(io) => {
                // Think time: the gap since this process's last completion, when nothing else of
                // it was outstanding.
                let th = self.thinking.entry(io.principal.pid).or_default();
                if th.outstanding == 0 {
                    if let Some(done) = th.last_complete_ns.filter(|&d| arrived >= d) {
                        self.think.record(arrived - done);
                    }
                }
                th.outstanding += 1;
                self.first_issue_ns.get_or_insert(arrived);
                let id = self.next_id;
                self.next_id += 1;
                let req = Request {
                    id,
                    principal: io.principal,
                    op: io.op,
                    sync: io.sync,
                    start_sector: io.start_sector,
                    size_sectors: io.size_sectors,
                    issue_ns: arrived,
                    flags: 0,
                    prio: Default::default(),
                };
                self.scheduler.add(req, &cx);
                self.pending.insert(id, io.reply);
            }
        }
    }

    /// Receives arrivals until `deadline`: sleeping until SPIN_NS before it, then spinning.
    /// With `interruptible` (the drive has a free slot for an arrival), returns early after a
    /// message, true then.
    fn hold_until(&mut self, deadline: Nanos, interruptible: bool) -> bool {
        // Whatever has arrived is seen first, even when the host is already past the deadline.
        if self.drain() && interruptible && self.now() < deadline {
            return true;
        }
        loop {
            let t = self.now();
            if t >= deadline || self.disconnected {
                return false;
            }
            let left = deadline - t;
            let got = if left > SPIN_NS {
                match self.rx.recv_timeout(Duration::from_nanos(left - SPIN_NS)) {
                    Ok(m) => Some(m),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => {
                        self.disconnected = true;
                        None
                    }
                }
            } else {
                match self.rx.try_recv() {
                    Ok(m) => Some(m),
                    Err(TryRecvError::Empty) => {
                        std::hint::spin_loop();
                        None
                    }
                    Err(TryRecvError::Disconnected) => {
                        self.disconnected = true;
                        None
                    }
                }
            };
            if let Some(m) = got {
                let io = matches!(m, Msg::Io(_));
                self.handle(m);
                if interruptible && io {
                    return true;
                }
            }
        }
    }

    /// Takes every message already waiting, without blocking; true if a request was among them.
    fn drain(&mut self) -> bool {
        let mut io = false;
        loop {
            match self.rx.try_recv() {
                Ok(m) => {
                    io |= matches!(m, Msg::Io(_));
                    self.handle(m);
                }
                Err(TryRecvError::Empty) => return io,
                Err(TryRecvError::Disconnected) => {
                    self.disconnected = true;
                    return io;
                }
            }
        }
    }

    /// Waits for one arrival, or until `until` (None: the next housekeeping time).
    fn wait_event(&mut self, until: Option<Nanos>) {
        let t = self.now();
        let house = self.next_reap_ns.min(self.next_stats_ns);
        let until = until.map_or(house, |u| u.min(house));
        let timeout = Duration::from_nanos(until.saturating_sub(t).max(1000));
        match self.rx.recv_timeout(timeout) {
            Ok(m) => self.handle(m),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => self.disconnected = true,
        }
    }

    /// The mechanism's command reached its modelled completion (the host is at or past it):
    /// the reply goes out, the drive frees its slot, the scheduler is told.
    fn complete_serving(&mut self) {
        let Some(Serving { req, accepted_ns, svc }) = self.serving.take() else { return };
        let deadline = svc.completion_ns;
        if let Some(reply) = self.pending.remove(&req.id) {
            reply.perform_and_send();
        }
        let replied = self.now();
        self.lateness.record(replied.saturating_sub(deadline));
        // The scheduler sees the completion at its modelled time (or at the latest arrival it
        // has been given, if that came later: its clock never goes back).
        let t = self.sched_time(deadline);
        self.decide_at_completion = true;
        self.drive.completed();
        self.record(&req, &svc, accepted_ns);
        let cx = Context { now_ns: t, device: view_of(&self.timing), in_flight: self.drive.outstanding() };
        let done = Completion { request: req, dispatch_ns: accepted_ns, positioning_ns: svc.seek_ns + svc.rotation_ns };
        self.scheduler.completed(&done, &cx);
    }

    /// Real backend: the request's backing I/O happens now; it completes when that returns.
    fn serve_real(&mut self, req: Request) {
        let start = self.now();
        if let Some(reply) = self.pending.remove(&req.id) {
            reply.perform_and_send();
        }
        let end = self.now();
        let t = self.sched_time(end);
        let Timing::Real(view) = &mut self.timing else { unreachable!("serve_real on an emulated disk") };
        let seek_cylinders = view.cylinder_of(req.start_sector).abs_diff(view.head_cylinder());
        view.served(req.end_sector());
        // Positioning as the calibration measured it: the service time beyond a contiguous
        // read's (without a calibration the estimates are 0, and so is this).
        let positioning_ns = view.positioning_of_service(end - start);
        let svc = Service { dispatch_ns: start, completion_ns: end, seek_cylinders, transfer_ns: end - start, ..Service::default() };
        self.record(&req, &svc, start);
        self.in_flight = 0;
        let cx = Context { now_ns: t, device: view_of(&self.timing), in_flight: 0 };
        let done = Completion { request: req, dispatch_ns: start, positioning_ns };
        self.scheduler.completed(&done, &cx);
    }

    fn record(&mut self, req: &Request, svc: &Service, dispatch_ns: Nanos) {
        // One FUSE request is one request of the scheduler: no block layer in between, so it
        // enters the scheduler when it arrives; the drive accepts it at dispatch and its
        // mechanism starts it at `svc.dispatch_ns` (the same instant without a command queue).
        let times = RecordTimes { insert_ns: req.issue_ns, dispatch_ns, bios: 1 };
        let r = RequestRecord::new(req, svc, times);
        // The run's accumulator gets every request under one pid (its per-process tables would
        // keep a histogram for every process ever seen); processes are kept here instead.
        self.acc.record(&RequestRecord { pid: 0, group: 0, ..r });
        if let Some(p) = self.live.get_mut(&r.pid) {
            p.bytes += r.size_sectors as u64 * iosched::request::SECTOR_BYTES;
            p.response.record(r.response_ns());
            p.disk_ns += r.service_ns() as u128;
            p.last_complete_ns = p.last_complete_ns.max(r.complete_ns);
        }
        if let Some(csv) = &mut self.csv {
            csv.record(&r);
        }
        self.last_complete_ns = self.last_complete_ns.max(r.complete_ns);
        let th = self.thinking.entry(r.pid).or_default();
        th.outstanding = th.outstanding.saturating_sub(1);
        th.last_complete_ns = Some(r.complete_ns);
        if self.cfg.stats_interval_s > 0.0 {
            *self.interval_bytes.entry(req.principal.pid).or_default() += req.bytes();
        }
    }

    fn housekeeping(&mut self) {
        let now = self.now();
        // Right after a completion the scheduler's clock must stay at the modelled completion
        // (the host's is ahead) for the decision that follows; housekeeping then runs at that
        // clock, so that a disk kept busy does not hold it off (it did, for seconds).
        let t = if self.decide_at_completion { self.sched_clock_ns } else { self.sched_time(now) };
        if t >= self.next_reap_ns {
            self.next_reap_ns = t + REAP_NS;
            let gone = self.principals.lock().unwrap_or_else(|p| p.into_inner()).reap();
            if let Some(csv) = &mut self.csv {
                csv.flush(); // rows reach the file while the mount runs
            }
            for pid in gone {
                self.process_exited(pid, now, t, false);
            }
        }
        if t >= self.next_stats_ns {
            let iv = self.cfg.stats_interval_s;
            self.next_stats_ns = if iv > 0.0 { t + (iv * 1e9) as Nanos } else { Nanos::MAX };
            self.print_stats(t);
        }
    }

    /// Process `pid` exited (noticed at `seen_ns`): its totals are kept, and the scheduler is
    /// told at `t` (its clock).
    fn process_exited(&mut self, pid: u32, seen_ns: Nanos, t: Nanos, watched: bool) {
        self.thinking.remove(&pid);
        if let Some(p) = self.live.remove(&pid) {
            if p.last_complete_ns > 0 {
                self.exits.after_last_completion.record(seen_ns.saturating_sub(p.last_complete_ns));
            }
            self.exited.push(p.totals(pid));
        }
        if watched {
            self.exits.watched += 1;
        } else {
            self.exits.polled += 1;
        }
        let group = self.groups.remove(&pid).unwrap_or(pid);
        let cx = Context { now_ns: t, device: view_of(&self.timing), in_flight: self.in_flight() };
        self.scheduler.process_event(ProcessEvent::Exited(Principal { pid, group }), &cx);
    }

    fn print_stats(&mut self, t: Nanos) {
        if self.cfg.stats_interval_s <= 0.0 {
            return;
        }
        let secs = ((t - self.interval_start_ns) as f64 / 1e9).max(1e-9);
        let procs: Vec<serde_json::Value> = self
            .interval_bytes
            .iter()
            .map(|(pid, b)| {
                serde_json::json!({"pid": pid, "name": self.live.get(pid).map(|p| p.name.clone()).unwrap_or_default(), "throughput_mb_s": *b as f64 / 1e6 / secs})
            })
            .collect();
        let total: u64 = self.interval_bytes.values().sum();
        let line = serde_json::json!({
            "t_s": t as f64 / 1e9,
            "queued": self.scheduler.queued(),
            "in_flight": self.in_flight(),
            "completed": self.acc.requests(),
            "throughput_mb_s": total as f64 / 1e6 / secs,
            "processes": procs,
            "scheduler_counters": self.scheduler.counters().into_iter().collect::<BTreeMap<_, _>>(),
            "tables": self.tables.as_ref().map(|sizes| sizes()),
        });
        let mut text = format!(
            "iosched-fuse: t={:.1}s queued={} completed={} {:.2} MB/s",
            t as f64 / 1e9,
            self.scheduler.queued(),
            self.acc.requests(),
            total as f64 / 1e6 / secs
        );
        for (pid, b) in &self.interval_bytes {
            text += &format!(" | {pid} ({}) {:.2} MB/s", self.live.get(pid).map_or("", |p| p.name.as_str()), *b as f64 / 1e6 / secs);
        }
        eprintln!("{text}");
        if let Some(path) = &self.cfg.stats_file {
            if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
                let _ = writeln!(f, "{line}");
            }
        }
        self.interval_bytes.clear();
        self.interval_start_ns = t;
    }

    /// The decision's time: right after a completion the modelled completion, else the host's.
    fn decision_time(&mut self) -> Nanos {
        if std::mem::take(&mut self.decide_at_completion) {
            self.sched_clock_ns
        } else {
            let now = self.now();
            self.sched_time(now)
        }
    }

    /// Real backend: one request at a time, its backing I/O done at dispatch.
    fn step_real(&mut self) {
        if self.scheduler.queued() == 0 {
            self.decide_at_completion = false;
            self.wait_event(None);
            return;
        }
        let t = self.decision_time();
        let cx = Context { now_ns: t, device: view_of(&self.timing), in_flight: 0 };
        match self.scheduler.next(&cx) {
            Decision::Dispatch(req, _) => {
                self.in_flight = 1;
                self.serve_real(req);
            }
            Decision::WaitUntil(w) => self.wait_event(Some(w.max(t))),
            Decision::Empty => self.wait_event(None),
        }
    }

    /// Emulated drive, as the simulator's engine does at an instant: the scheduler is asked for
    /// requests while the drive has a free slot, then the firmware starts a held command if the
    /// mechanism is free; the dispatcher then holds until the mechanism's completion (or the
    /// scheduler's wake-up, or an arrival the drive has room for).
    fn step_emulated(&mut self) {
        // A completion the host has reached goes first (arrivals may have interrupted its hold).
        if let Some(s) = self.serving {
            if self.now() >= s.svc.completion_ns {
                self.complete_serving();
            }
        }
        if self.scheduler.queued() == 0 && self.drive.outstanding() == 0 {
            self.decide_at_completion = false;
            self.wait_event(None);
            return;
        }
        let t = self.decision_time();
        let Timing::Emulated(disk) = &mut self.timing else { unreachable!("step_emulated on the real backend") };
        let mut wake = None;
        let mut head_at_t = false;
        while self.drive.has_slot() && self.scheduler.queued() > 0 {
            if !self.drive.mechanism_busy() && !head_at_t {
                // The head's state (read-ahead) brought up to now before a decision that uses it.
                disk.advance_to(t);
                head_at_t = true;
            }
            let cx = Context { now_ns: t, device: disk.as_view(), in_flight: self.drive.outstanding() };
            match self.scheduler.next(&cx) {
                Decision::Dispatch(req, path) => self.drive.accept(req, path, disk.as_view(), t),
                Decision::WaitUntil(w) => {
                    wake = Some(w.max(t));
                    break;
                }
                Decision::Empty => break,
            }
        }
        if self.serving.is_none() && self.drive.outstanding() > 0 {
            if !head_at_t {
                disk.advance_to(t);
            }
            if let Some(q) = self.drive.start_next(disk.as_view(), t) {
                // FUSE sends no flush: every command is a read or a write.
                let svc = disk.service(&q.req, q.path, t);
                self.serving = Some(Serving { req: q.req, accepted_ns: q.accepted_ns, svc });
            }
        }
        match self.serving {
            Some(s) => {
                let deadline = s.svc.completion_ns;
                let until = wake.map_or(deadline, |w| w.min(deadline));
                let room = self.drive.has_slot();
                if !self.hold_until(until, room) && until == deadline && !self.disconnected {
                    self.complete_serving();
                }
            }
            None => self.wait_event(wake),
        }
    }

    fn run(mut self) -> Outcome {
        loop {
            self.housekeeping();
            if self.disconnected {
                break; // the mount is gone: replies can no longer be delivered
            }
            // Every request that has arrived takes part in the decision.
            self.drain();
            match self.timing {
                Timing::Emulated(_) => self.step_emulated(),
                Timing::Real(_) => self.step_real(),
            }
        }
        let mut processes = std::mem::take(&mut self.exited);
        processes.extend(self.live.iter().map(|(pid, p)| p.totals(*pid)));
        Outcome {
            acc: self.acc,
            first_issue_ns: self.first_issue_ns,
            last_complete_ns: self.last_complete_ns,
            lateness: self.lateness,
            think: self.think,
            processes,
            counters: self.scheduler.counters().into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            scheduler_name: self.scheduler.name().to_string(),
            exits: self.exits,
            csv: self.csv.map(CsvOut::finish),
        }
    }
}

/// Builds the scheduler and the disk (errors are the user's: unknown names, bad tunables).
pub fn check(cfg: &Config) -> Result<RotationalDisk, String> {
    registry::build(&cfg.scheduler, cfg.policy.as_deref(), &cfg.tunables)?;
    if cfg.calibration.is_some() && cfg.backend != Backend::Real {
        return Err("--calibration is for --backend real (the emulated disk estimates from its own model)".into());
    }
    load_calibration(cfg)?;
    disk_for(&cfg.preset)
}

/// The calibration of `--calibration FILE`: the JSON `iosched calibrate --real PATH --curve FILE`
/// writes, or a bare curve (baseline 0).
pub fn load_calibration(cfg: &Config) -> Result<Option<DeviceCalibration>, String> {
    let Some(path) = &cfg.calibration else { return Ok(None) };
    // Read (regular files only) and validated by the core library.
    let (curve, baseline_ns) = iosched::device::calibration::load_calibration(path).map_err(|e| format!("--calibration {e}"))?;
    Ok(Some(DeviceCalibration { curve, baseline_ns }))
}

pub fn disk_for(preset: &str) -> Result<RotationalDisk, String> {
    let spec = iosched::device::presets::preset(preset)
        .ok_or_else(|| format!("unknown device preset `{preset}` (known: {})", iosched::device::presets::PRESET_NAMES.join(", ")))?;
    RotationalDisk::new(spec)
}

/// Starts the dispatcher thread.
pub fn spawn(
    cfg: Config,
    rx: Receiver<Msg>,
    origin: Instant,
    principals: Arc<Mutex<Principals>>,
    timing: Timing,
    csv: Option<CsvOut>,
    tables: Option<TableSizes>,
) -> Result<std::thread::JoinHandle<Outcome>, String> {
    check(&cfg)?;
    std::thread::Builder::new()
        .name("iosched-dispatch".into())
        .spawn(move || {
            let scheduler = registry::build(&cfg.scheduler, cfg.policy.as_deref(), &cfg.tunables).expect("checked");
            let first_stats = if cfg.stats_interval_s > 0.0 { (cfg.stats_interval_s * 1e9) as Nanos } else { Nanos::MAX };
            Dispatcher {
                rx,
                origin,
                last_ns: 0,
                scheduler,
                timing,
                pending: HashMap::new(),
                next_id: 0,
                in_flight: 0,
                drive: DriveQueue::new(if cfg.backend == Backend::Real { DriveQueueConfig::default() } else { cfg.drive }),
                serving: None,
                decide_at_completion: false,
                sched_clock_ns: 0,
                disconnected: false,
                acc: RunAccumulator::default(),
                first_issue_ns: None,
                last_complete_ns: 0,
                lateness: LatencyHistogram::default(),
                think: LatencyHistogram::default(),
                thinking: HashMap::new(),
                csv,
                tables,
                live: BTreeMap::new(),
                exited: Vec::new(),
                groups: HashMap::new(),
                exits: ExitNotices::default(),
                principals,
                cfg,
                next_stats_ns: first_stats,
                next_reap_ns: REAP_NS,
                interval_bytes: BTreeMap::new(),
                interval_start_ns: 0,
            }
            .run()
        })
        .map_err(|e| format!("cannot start the dispatcher thread: {e}"))
}

/// The final summary, in the shape of `iosched run --json`: {"scenario", "runs": [summary]},
/// the run's times counted from the first request; plus the lateness of replies.
pub fn summary_json(out: &Outcome, cfg: &Config, label: &str, workload: &str, extra: serde_json::Value) -> serde_json::Value {
    let t0 = out.first_issue_ns.unwrap_or(0);
    let end = out.last_complete_ns.max(t0);
    let mut s = out.acc.finish(t0, end, &[], InvariantReport::default());
    let elapsed_s = s.elapsed_s;
    s.processes = out
        .processes
        .iter()
        .map(|p| ProcessSummary {
            pid: p.pid,
            name: p.name.clone(),
            requests: p.requests,
            bytes: p.bytes,
            throughput_mb_s: p.bytes as f64 / 1e6 / elapsed_s,
            response_ms: p.response_ms.clone(),
            response_cdf_ms: p.response_cdf_ms.clone(),
            // No block layer in real mode: requests never wait for a request structure.
            request_wait_ms: LatencyMs::default(),
            disk_time_s: p.disk_ns as f64 / 1e9,
            last_completion_s: p.last_complete_ns.saturating_sub(t0) as f64 / 1e9,
        })
        .collect();
    s.scheduler = label.to_string();
    s.scheduler_name = out.scheduler_name.clone();
    s.device = match cfg.backend {
        Backend::Emulated => cfg.preset.clone(),
        Backend::Real => "real".to_string(),
    };
    s.workload = workload.to_string();
    s.scheduler_counters = out.counters.iter().cloned().collect();
    let mut run = serde_json::to_value(&s).expect("summary serializes");
    let us = |ms: f64| (ms * 1000.0 * 1000.0).round() / 1000.0;
    // Lateness exists only where replies are held to a modelled time (the emulated disk).
    run["lateness_us"] = if out.lateness.count() == 0 {
        serde_json::Value::Null
    } else {
        let l = out.lateness.summary_ms();
        serde_json::json!({"mean": us(l.mean), "p50": us(l.p50), "p95": us(l.p95), "p99": us(l.p99), "max": us(l.max)})
    };
    // Think times as the scheduler saw them: from a process's completion to its next request
    // (only when it had nothing else outstanding), for comparison with simulated workloads.
    let t = out.think.summary_ms();
    run["think_us"] =
        serde_json::json!({"samples": out.think.count(), "mean": us(t.mean), "p50": us(t.p50), "p95": us(t.p95), "max": us(t.max)});
    // How exits were noticed: watched ones as they happened, polled ones up to REAP_NS late.
    let e = out.exits.after_last_completion.summary_ms();
    run["exits"] = serde_json::json!({
        "watched": out.exits.watched,
        "polled": out.exits.polled,
        "after_last_completion_ms": {"samples": out.exits.after_last_completion.count(), "p50": e.p50, "p95": e.p95, "max": e.max},
    });
    if let (Some(obj), serde_json::Value::Object(extra)) = (run.as_object_mut(), extra) {
        obj.extend(extra);
    }
    serde_json::json!({"scenario": format!("mount {workload}"), "runs": [run]})
}
