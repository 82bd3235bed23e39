//! The dispatcher: one thread owns the scheduler and the emulated disk. FUSE reads and writes
//! arrive as messages (their data already read from / written to the backing file); the
//! dispatcher asks the scheduler what to serve, computes the service time on the disk model, and
//! holds the reply until the modelled completion (an absolute deadline: sleep, then spin the
//! last stretch). Time for the scheduler is nanoseconds since the mount, read only here.

use crate::address_view::{AddressView, DeviceCalibration};
use crate::principal::Principals;
use fuser::{ReplyData, ReplyWrite};
use iosched::device::{Device, DeviceView, RotationalDisk, Service};
use iosched::metrics::{summarize, LatencyMs, RequestRecord};
use iosched::request::{Op, Principal, Request};
use iosched::sched::{registry, Completion, Context, Decision, ProcessEvent, Scheduler};
use iosched::sim::engine::InvariantReport;
use iosched::time::Nanos;
use iosched::workload::ProcessInfo;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Sleep until this long before a deadline, then spin.
const SPIN_NS: Nanos = 200_000;
/// How often exited processes are looked for.
const REAP_NS: Nanos = 250_000_000;

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
            Reply::ReadAt { reply, file, offset, size } => match crate::fs::read_fully(&file, offset, size as usize) {
                Ok(data) => reply.data(&data),
                Err(e) => reply.error(crate::fs::errno(e)),
            },
            Reply::WriteAt { reply, file, offset, data } => match file.write_all_at(&data, offset) {
                Ok(()) => reply.written(data.len() as u32),
                Err(e) => reply.error(crate::fs::errno(e)),
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
    Started { principal: Principal, name: String },
    Io(Io),
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
}

/// What the dispatcher hands back when the mount ends.
pub struct Outcome {
    pub records: Vec<RequestRecord>,
    pub lateness_ns: Vec<Nanos>,
    pub processes: Vec<ProcessInfo>,
    pub counters: Vec<(String, u64)>,
    pub scheduler_name: String,
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

struct Dispatcher {
    rx: Receiver<Msg>,
    origin: Instant,
    last_ns: Nanos,
    scheduler: Box<dyn Scheduler>,
    timing: Timing,
    pending: HashMap<u64, Reply>,
    next_id: u64,
    in_flight: u32,
    /// Set by a completion until the next decision, which is then taken at the scheduler's
    /// clock (the modelled completion, or a later arrival), not the host's: the host's time to
    /// send the reply must not delay the device (the simulator dispatches at the completion
    /// instant too).
    decide_at_completion: bool,
    /// The scheduler's clock: the latest time given to it in any call (never set back).
    sched_clock_ns: Nanos,
    disconnected: bool,
    records: Vec<RequestRecord>,
    lateness_ns: Vec<Nanos>,
    names: BTreeMap<u32, String>,
    groups: HashMap<u32, u32>,
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
            Msg::Started { .. } => self.sched_clock_ns,
        };
        let t = self.sched_time(arrived);
        let cx = Context { now_ns: t, device: view_of(&self.timing), in_flight: self.in_flight };
        match msg {
            Msg::Started { principal, name } => {
                self.names.insert(principal.pid, name);
                self.groups.insert(principal.pid, principal.group);
                self.scheduler.process_event(ProcessEvent::Started { principal, weight: 1 }, &cx);
            }
            Msg::Io(io) => {
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
                };
                self.scheduler.add(req, &cx);
                self.pending.insert(id, io.reply);
            }
        }
    }

    /// Receives arrivals until `deadline`: sleeping until SPIN_NS before it, then spinning.
    fn hold_until(&mut self, deadline: Nanos) {
        // Whatever has arrived is seen first, even when the host is already past the deadline.
        self.drain();
        loop {
            let t = self.now();
            if t >= deadline || self.disconnected {
                return;
            }
            let left = deadline - t;
            if left > SPIN_NS {
                match self.rx.recv_timeout(Duration::from_nanos(left - SPIN_NS)) {
                    Ok(m) => self.handle(m),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => self.disconnected = true,
                }
            } else {
                match self.rx.try_recv() {
                    Ok(m) => self.handle(m),
                    Err(TryRecvError::Empty) => std::hint::spin_loop(),
                    Err(TryRecvError::Disconnected) => self.disconnected = true,
                }
            }
        }
    }

    /// Takes every message already waiting, without blocking.
    fn drain(&mut self) {
        loop {
            match self.rx.try_recv() {
                Ok(m) => self.handle(m),
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    self.disconnected = true;
                    return;
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

    fn complete(&mut self, req: Request, svc: Service) {
        let deadline = svc.completion_ns;
        self.hold_until(deadline);
        if let Some(reply) = self.pending.remove(&req.id) {
            reply.perform_and_send();
        }
        let replied = self.now();
        self.lateness_ns.push(replied.saturating_sub(deadline));
        // The scheduler sees the completion at its modelled time (or at the latest arrival it
        // has been given, if that came later: its clock never goes back).
        let t = self.sched_time(deadline);
        self.decide_at_completion = true;
        self.in_flight = 0;
        self.record(&req, &svc);
        let cx = Context { now_ns: t, device: view_of(&self.timing), in_flight: 0 };
        let done = Completion { request: req, dispatch_ns: svc.dispatch_ns, positioning_ns: svc.seek_ns + svc.rotation_ns };
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
        self.record(&req, &svc);
        self.in_flight = 0;
        let cx = Context { now_ns: t, device: view_of(&self.timing), in_flight: 0 };
        let done = Completion { request: req, dispatch_ns: start, positioning_ns };
        self.scheduler.completed(&done, &cx);
    }

    fn record(&mut self, req: &Request, svc: &Service) {
        let mut c = iosched::metrics::Collector::default();
        c.record(req, svc);
        self.records.extend(c.into_records());
        *self.interval_bytes.entry(req.principal.pid).or_default() += req.bytes();
    }

    fn housekeeping(&mut self) {
        let now = self.now();
        let t = self.sched_time(now);
        if t >= self.next_reap_ns {
            self.next_reap_ns = t + REAP_NS;
            let gone = self.principals.lock().unwrap().reap();
            let cx = Context { now_ns: t, device: view_of(&self.timing), in_flight: self.in_flight };
            for pid in gone {
                let group = self.groups.get(&pid).copied().unwrap_or(pid);
                self.scheduler.process_event(ProcessEvent::Exited(Principal { pid, group }), &cx);
            }
        }
        if t >= self.next_stats_ns {
            let iv = self.cfg.stats_interval_s;
            self.next_stats_ns = if iv > 0.0 { t + (iv * 1e9) as Nanos } else { Nanos::MAX };
            self.print_stats(t);
        }
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
                serde_json::json!({"pid": pid, "name": self.names.get(pid).cloned().unwrap_or_default(), "throughput_mb_s": *b as f64 / 1e6 / secs})
            })
            .collect();
        let total: u64 = self.interval_bytes.values().sum();
        let line = serde_json::json!({
            "t_s": t as f64 / 1e9,
            "queued": self.scheduler.queued(),
            "in_flight": self.in_flight,
            "completed": self.records.len(),
            "throughput_mb_s": total as f64 / 1e6 / secs,
            "processes": procs,
            "scheduler_counters": self.scheduler.counters().into_iter().collect::<BTreeMap<_, _>>(),
        });
        let mut text = format!(
            "iosched-fuse: t={:.1}s queued={} completed={} {:.2} MB/s",
            t as f64 / 1e9,
            self.scheduler.queued(),
            self.records.len(),
            total as f64 / 1e6 / secs
        );
        for (pid, b) in &self.interval_bytes {
            text += &format!(" | {pid} ({}) {:.2} MB/s", self.names.get(pid).map_or("", |s| s.as_str()), *b as f64 / 1e6 / secs);
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

    fn run(mut self) -> Outcome {
        loop {
            // Right after a completion the decision comes first (housekeeping would read the
            // host's clock, which is ahead of the device's).
            if !self.decide_at_completion {
                self.housekeeping();
            }
            if self.disconnected {
                break; // the mount is gone: replies can no longer be delivered
            }
            // Every request that has arrived takes part in the decision.
            self.drain();
            if self.scheduler.queued() == 0 {
                self.decide_at_completion = false;
                self.wait_event(None);
                continue;
            }
            let t = if std::mem::take(&mut self.decide_at_completion) {
                self.sched_clock_ns
            } else {
                let now = self.now();
                self.sched_time(now)
            };
            if let Timing::Emulated(d) = &mut self.timing {
                d.advance_to(t);
            }
            let cx = Context { now_ns: t, device: view_of(&self.timing), in_flight: 0 };
            match self.scheduler.next(&cx) {
                Decision::Dispatch(req, path) => {
                    self.in_flight = 1;
                    match &mut self.timing {
                        Timing::Emulated(d) => {
                            let svc = d.service(&req, path, t);
                            self.complete(req, svc);
                        }
                        Timing::Real(_) => self.serve_real(req),
                    }
                }
                Decision::WaitUntil(w) => self.wait_event(Some(w.max(t))),
                Decision::Empty => self.wait_event(None),
            }
        }
        let processes = self.names.iter().map(|(pid, name)| ProcessInfo { pid: *pid, name: name.clone() }).collect();
        Outcome {
            records: self.records,
            lateness_ns: self.lateness_ns,
            processes,
            counters: self.scheduler.counters().into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            scheduler_name: self.scheduler.name().to_string(),
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
                decide_at_completion: false,
                sched_clock_ns: 0,
                disconnected: false,
                records: Vec::new(),
                lateness_ns: Vec::new(),
                names: BTreeMap::new(),
                groups: HashMap::new(),
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

/// One row per request, the columns of `iosched run --requests-csv` (times in ns since the mount).
pub fn write_requests_csv(out: &Outcome, path: &std::path::Path) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        w,
        "id,pid,group,op,sync,start_sector,size_sectors,issue_ns,dispatch_ns,complete_ns,seek_cylinders,seek_ns,rotation_ns,transfer_ns,cache_hit"
    )?;
    for r in &out.records {
        let op = if r.op == Op::Write { "write" } else { "read" };
        writeln!(
            w,
            "{},{},{},{op},{},{},{},{},{},{},{},{},{},{},{}",
            r.id,
            r.pid,
            r.group,
            r.sync,
            r.start_sector,
            r.size_sectors,
            r.issue_ns,
            r.dispatch_ns,
            r.complete_ns,
            r.seek_cylinders,
            r.seek_ns,
            r.rotation_ns,
            r.transfer_ns,
            r.cache_hit
        )?;
    }
    w.flush()
}

/// Per process, the gaps between a completion and the process's next request when nothing else
/// of it was outstanding (a synchronous process's think time).
fn think_times_ns(records: &[RequestRecord]) -> Vec<Nanos> {
    let mut by_pid: std::collections::BTreeMap<u32, Vec<&RequestRecord>> = std::collections::BTreeMap::new();
    for r in records {
        by_pid.entry(r.pid).or_default().push(r);
    }
    let mut out = Vec::new();
    for rs in by_pid.values_mut() {
        rs.sort_by_key(|r| r.issue_ns);
        for w in rs.windows(2) {
            if w[1].issue_ns >= w[0].complete_ns {
                out.push(w[1].issue_ns - w[0].complete_ns);
            }
        }
    }
    out
}

/// The final summary, in the shape of `iosched run --json`: {"scenario", "runs": [summary]},
/// the run's times counted from the first request; plus the lateness of replies.
pub fn summary_json(out: &Outcome, cfg: &Config, label: &str, workload: &str, extra: serde_json::Value) -> serde_json::Value {
    let t0 = out.records.iter().map(|r| r.issue_ns).min().unwrap_or(0);
    let records: Vec<RequestRecord> = out
        .records
        .iter()
        .map(|r| RequestRecord { issue_ns: r.issue_ns - t0, dispatch_ns: r.dispatch_ns - t0, complete_ns: r.complete_ns - t0, ..*r })
        .collect();
    let end = records.iter().map(|r| r.complete_ns).max().unwrap_or(0);
    let mut s = summarize(&records, end, &out.processes, InvariantReport::default());
    s.scheduler = label.to_string();
    s.scheduler_name = out.scheduler_name.clone();
    s.device = match cfg.backend {
        Backend::Emulated => cfg.preset.clone(),
        Backend::Real => "real".to_string(),
    };
    s.workload = workload.to_string();
    s.scheduler_counters = out.counters.iter().cloned().collect();
    let mut lat = out.lateness_ns.clone();
    let l = LatencyMs::from_ns(&mut lat);
    let mut run = serde_json::to_value(&s).expect("summary serializes");
    let us = |ms: f64| (ms * 1000.0 * 1000.0).round() / 1000.0;
    // Lateness exists only where replies are held to a modelled time (the emulated disk).
    run["lateness_us"] = if out.lateness_ns.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::json!({"mean": us(l.mean), "p50": us(l.p50), "p95": us(l.p95), "p99": us(l.p99), "max": us(l.max)})
    };
    // Think times as the scheduler saw them: from a process's completion to its next request
    // (only when it had nothing else outstanding), for comparison with simulated workloads.
    let mut think = think_times_ns(&records);
    let t = LatencyMs::from_ns(&mut think);
    run["think_us"] = serde_json::json!({"samples": think.len(), "mean": us(t.mean), "p50": us(t.p50), "p95": us(t.p95), "max": us(t.max)});
    if let (Some(obj), serde_json::Value::Object(extra)) = (run.as_object_mut(), extra) {
        obj.extend(extra);
    }
    serde_json::json!({"scenario": format!("mount {workload}"), "runs": [run]})
}
