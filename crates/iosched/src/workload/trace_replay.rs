//! Replaying a block trace of any format (`[workload] kind = "trace"`), streamed from its file
//! as the run goes: memory does not grow with the trace's length (dependent replay buffers only
//! what it reads ahead, see below).
//!
//! Three modes:
//! - **open**: each request arrives at its trace time (from the first record, times
//!   `time_scale`), whatever the scheduler and the device do. A record earlier than the one
//!   before it (traces merged from several CPUs or hosts) arrives with it (counted).
//! - **closed**: `depth` requests outstanding at all times, in trace order; the trace's times
//!   are ignored.
//! - **dependent**: per process (the trace's pid, or its stream: the device where no pid is
//!   recorded), each request is issued only when the process would issue it: its first at its
//!   trace time; a later one, if the trace shows it issued before the previous one completed
//!   (the process had several in flight), that long after the previous one's issue; otherwise
//!   after the previous one completes plus the process's observed think time (trace issue minus
//!   trace completion of the previous request). Where the trace has no completion times, the
//!   gap between the two requests in the trace counts as service plus think: the request is
//!   issued at max(previous completion, previous issue + gap). So anticipation and idling meet
//!   the dependencies the traced processes had. Requests of a process are read ahead until its
//!   next one is found; at most `READ_AHEAD_LIMIT` records are held, beyond which a process
//!   waits (counted in `read_ahead_stalls`).
//!
//! Flushes and zero-length records are not replayed (counted in `skipped_flush_discard`, a name
//! kept from when discards were skipped too). Discards are replayed (`Op::Discard`) on a device
//! that takes them; on one that does not (a rotational disk) the first is an error naming the
//! trace and the record (its line, in a text trace). Sectors beyond the
//! simulated disk are an error naming the record, or are folded (modulo the capacity) or scaled
//! (by max sector / capacity, read in a first pass) as `sector_map` asks.

use super::{Emit, NewRequest, ProcessInfo, Workload};
use crate::request::{Op, Principal, Request};
use crate::time::{Nanos, HORIZON_NS};
use crate::trace::{Format, ReadOptions, TraceReader, TraceRecord};
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;

/// The most records dependent replay holds ahead of their processes.
pub const READ_AHEAD_LIMIT: usize = 1 << 20;
/// Dependent mode's timer token for reading on as simulated time reaches the trace's (pids are
/// u32, so no process's token can be this).
const DISCOVERY_TOKEN: u64 = u64::MAX;
/// Dependent mode: how long the reading waits when the read-ahead limit is reached.
const STALL_RETRY_NS: Nanos = 10_000_000;

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase", tag = "mode")]
pub enum ReplayMode {
    Open { time_scale: f64 },
    Closed { depth: u32 },
    Dependent { time_scale: f64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SectorMap {
    /// A record beyond the disk is an error.
    Error,
    /// Sector modulo the capacity (keeps short seek distances as they were).
    Fold,
    /// Sector x capacity / the trace's largest end sector (keeps the layout's proportions).
    Scale,
}

impl SectorMap {
    pub const NAMES: &'static [&'static str] = &["error", "fold", "scale"];
    pub fn parse(s: &str) -> Option<SectorMap> {
        match s {
            "error" => Some(SectorMap::Error),
            "fold" => Some(SectorMap::Fold),
            "scale" => Some(SectorMap::Scale),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct TraceReplayConfig {
    pub path: PathBuf,
    pub format: Option<Format>,
    pub skip_bad: bool,
    pub mode: ReplayMode,
    pub sector_map: SectorMap,
    /// Replay only these trace devices (None: all).
    pub devices: Option<Vec<u32>>,
    /// Stop after this many replayed requests.
    pub max_requests: Option<u64>,
    /// Issue nothing at or after this time.
    pub stop_ns: Option<Nanos>,
}

/// What the replay saw, for the run's report.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReplayCounts {
    pub records_read: u64,
    pub replayed: u64,
    pub skipped_bad: u64,
    pub skipped_flush_discard: u64,
    pub skipped_other_device: u64,
    pub out_of_order: u64,
    pub folded: u64,
    pub read_ahead_stalls: u64,
}

/// A record turned into what the engine needs, with the trace times dependent replay uses.
#[derive(Clone, Copy, Debug)]
struct Pending {
    request: NewRequest,
    /// Trace times relative to the first record, not scaled.
    time_ns: Nanos,
    complete_ns: Option<Nanos>,
}

#[derive(Default)]
struct ProcessState {
    queue: VecDeque<Pending>,
    /// The last issued request's trace times and simulated issue time.
    last: Option<(Pending, Nanos)>,
    /// A timer is set for its next request; without one, an issued process's next request
    /// waits for the completion of the last issued one.
    timer_set: bool,
}

pub struct TraceReplay {
    config: TraceReplayConfig,
    reader: TraceReader,
    capacity_sectors: u64,
    /// Scale: the trace's largest end sector (first pass).
    trace_max_sector: u64,
    origin_ns: Option<Nanos>,
    last_time_ns: Nanos,
    counts: ReplayCounts,
    failure: Option<String>,
    exhausted: bool,
    /// Open mode: the next record, read ahead, and when it arrives.
    next_open: Option<Pending>,
    /// Dependent mode: per pid, in order of first appearance.
    processes: BTreeMap<u32, ProcessState>,
    buffered: usize,
    /// Closed mode: in flight.
    in_flight: u32,
    /// pid -> the record's device, for names.
    seen: BTreeMap<u32, u32>,
    /// The device takes no discard (its name): discard records are skipped and counted.
    no_discard: Option<String>,
}

impl TraceReplay {
    /// Opens the trace (and, for `sector_map = "scale"`, reads it once for its largest sector).
    pub fn new(config: TraceReplayConfig, capacity_sectors: u64) -> Result<TraceReplay, String> {
        let options = ReadOptions { format: config.format, skip_bad: config.skip_bad };
        let mut trace_max_sector = 0;
        if config.sector_map == SectorMap::Scale {
            let mut first = TraceReader::open(&config.path, options).map_err(|e| e.to_string())?;
            while let Some(r) = first.next_record().map_err(|e| e.to_string())? {
                if config.devices.as_ref().is_none_or(|d| d.contains(&r.device)) {
                    trace_max_sector = trace_max_sector.max(r.end_sector());
                }
            }
        }
        let reader = TraceReader::open(&config.path, options).map_err(|e| e.to_string())?;
        Ok(TraceReplay {
            config,
            reader,
            capacity_sectors,
            trace_max_sector,
            origin_ns: None,
            last_time_ns: 0,
            counts: ReplayCounts::default(),
            failure: None,
            exhausted: false,
            next_open: None,
            processes: BTreeMap::new(),
            buffered: 0,
            in_flight: 0,
            seen: BTreeMap::new(),
            no_discard: None,
        })
    }

    /// `device` takes no discard: discard records are skipped (counted in
    /// `skipped_flush_discard`), as replay did before discards were modelled.
    pub fn refusing_discards(mut self, device: &str) -> Self {
        self.no_discard = Some(device.to_string());
        self
    }

    pub fn counts(&self) -> &ReplayCounts {
        &self.counts
    }

    fn scale(&self) -> f64 {
        match self.config.mode {
            ReplayMode::Open { time_scale } | ReplayMode::Dependent { time_scale } => time_scale,
            ReplayMode::Closed { .. } => 1.0,
        }
    }

    /// Trace nanoseconds (relative) to simulated nanoseconds.
    fn scaled(&self, trace_ns: Nanos) -> Nanos {
        scale_ns(trace_ns, self.scale())
    }

    fn stopped(&self, at: Nanos) -> bool {
        self.config.stop_ns.is_some_and(|s| at >= s) || self.config.max_requests.is_some_and(|m| self.counts.replayed >= m)
    }

    /// The next replayable record, or None at the end (or after an error, kept in `failure`).
    fn read(&mut self) -> Option<Pending> {
        if self.exhausted {
            return None;
        }
        loop {
            let r = match self.reader.next_record() {
                Ok(Some(r)) => r,
                Ok(None) => {
                    self.counts.skipped_bad = self.reader.skipped();
                    self.exhausted = true;
                    return None;
                }
                Err(e) => {
                    self.failure = Some(e.to_string());
                    self.exhausted = true;
                    return None;
                }
            };
            self.counts.records_read += 1;
            self.counts.skipped_bad = self.reader.skipped();
            if self.config.devices.as_ref().is_some_and(|d| !d.contains(&r.device)) {
                self.counts.skipped_other_device += 1;
                continue;
            }
            let Some(op) = r.op.request_op().filter(|_| r.size_sectors > 0) else {
                self.counts.skipped_flush_discard += 1;
                continue;
            };
            if op == Op::Discard && self.no_discard.is_some() {
                // A disk takes no discard: skipped and counted, as trace replay always did with
                // discards (the trace stays replayable on any drive).
                self.counts.skipped_flush_discard += 1;
                continue;
            }
            let origin = *self.origin_ns.get_or_insert(r.time_ns);
            let mut time_ns = r.time_ns.saturating_sub(origin);
            if time_ns < self.last_time_ns {
                self.counts.out_of_order += 1;
                time_ns = self.last_time_ns;
            }
            self.last_time_ns = time_ns;
            if self.scaled(time_ns) >= HORIZON_NS {
                // Stretched beyond the clock: an error, not arrivals piled up at its end.
                self.failure = Some(format!(
                    "{}: record {}: {:.3} s into the trace x time_scale {} = {:.3e} s, beyond the simulator's clock \
                     (2^62 ns, about 146 years)",
                    self.reader.source,
                    r.at,
                    time_ns as f64 / 1e9,
                    self.scale(),
                    time_ns as f64 / 1e9 * self.scale()
                ));
                self.exhausted = true;
                return None;
            }
            let start_sector = match self.map_sector(&r) {
                Ok(s) => s,
                Err(e) => {
                    self.failure = Some(e);
                    self.exhausted = true;
                    return None;
                }
            };
            let pid = r.pid.unwrap_or(r.device);
            if !self.seen.contains_key(&pid) && self.seen.len() >= MAX_TRACE_PROCESSES {
                // Each stream keeps its own latency statistics: past this many, a trace would
                // take more memory than a run may (scenario/memory.rs), so it is an error.
                self.failure = Some(format!(
                    "{}: record {}: more than {MAX_TRACE_PROCESSES} distinct processes (or devices, where the format has no \
                     process), each with its own statistics: more memory than a run may take; replay a subset \
                     (workload.devices)",
                    self.reader.source, r.at
                ));
                self.exhausted = true;
                return None;
            }
            self.seen.entry(pid).or_insert(r.device);
            let request = NewRequest {
                principal: Principal { pid, group: 0 },
                op,
                sync: r.sync,
                start_sector,
                size_sectors: r.size_sectors,
                flags: if r.meta { Request::META } else { 0 },
                prio: Default::default(),
            };
            let complete_ns = r.complete_ns.map(|c| c.saturating_sub(origin));
            return Some(Pending { request, time_ns, complete_ns });
        }
    }

    fn map_sector(&mut self, r: &TraceRecord) -> Result<u64, String> {
        let cap = self.capacity_sectors;
        let size = r.size_sectors as u64;
        if size > cap {
            return Err(format!(
                "{}: record {}: a request of {size} sectors is larger than the disk ({cap} sectors)",
                self.reader.source, r.at
            ));
        }
        if r.end_sector() <= cap {
            return Ok(r.sector);
        }
        match self.config.sector_map {
            SectorMap::Error => Err(format!(
                "{}: record {}: request ends at sector {} beyond the disk's {cap} sectors (set workload.sector_map = \"fold\" or \"scale\")",
                self.reader.source,
                r.at,
                r.end_sector()
            )),
            SectorMap::Fold => {
                self.counts.folded += 1;
                Ok((r.sector % cap).min(cap - size))
            }
            SectorMap::Scale => {
                // u128: sector x capacity cannot wrap.
                let s = (r.sector as u128 * cap as u128 / self.trace_max_sector.max(1) as u128) as u64;
                Ok(s.min(cap - size))
            }
        }
    }

    fn issue(&mut self, at: Nanos, p: Pending, out: &mut Emit) {
        self.counts.replayed += 1;
        out.submit(at, p.request);
    }

    // Open mode: one timer pending, at the next record's time.
    fn open_step(&mut self, now: Nanos, out: &mut Emit) {
        while let Some(p) = self.next_open.take() {
            let at = self.scaled(p.time_ns);
            if at > now {
                self.next_open = Some(p);
                out.timer(at, 0);
                return;
            }
            if self.stopped(now) {
                return;
            }
            self.issue(now, p, out);
            self.next_open = self.read();
        }
    }

    fn closed_fill(&mut self, now: Nanos, out: &mut Emit) {
        let ReplayMode::Closed { depth } = self.config.mode else { return };
        while self.in_flight < depth && !self.stopped(now) {
            let Some(p) = self.read() else { return };
            self.in_flight += 1;
            self.issue(now, p, out);
        }
    }

    /// Dependent mode: reads ahead until `pid` has a next request, the trace ends, the
    /// read-ahead limit is reached, or (with `horizon_ns`) the records read reach that trace
    /// time. A newly seen process gets a timer at its first request's time. With no `pid`,
    /// reads one record.
    fn read_ahead(&mut self, pid: Option<u32>, horizon_ns: Option<Nanos>, now: Nanos, out: &mut Emit) {
        loop {
            if let Some(pid) = pid {
                if self.processes.get(&pid).is_some_and(|s| !s.queue.is_empty()) {
                    return;
                }
            }
            if horizon_ns.is_some_and(|h| self.last_time_ns >= h) {
                return;
            }
            if self.buffered >= READ_AHEAD_LIMIT {
                self.counts.read_ahead_stalls += 1;
                return;
            }
            let Some(p) = self.read() else { return };
            let id = p.request.principal.pid;
            let new = !self.processes.contains_key(&id);
            let st = self.processes.entry(id).or_default();
            st.queue.push_back(p);
            self.buffered += 1;
            if new {
                st.timer_set = true;
                let at = self.scaled(p.time_ns).max(now);
                out.timer(at, id as u64);
            }
            if pid.is_none() {
                return;
            }
        }
    }

    /// Dependent mode: reads every record whose (scaled) trace time has come, so that a process
    /// starts at its first request's time however far behind the others are, and sets the
    /// discovery timer at the next record's time.
    fn discover(&mut self, now: Nanos, out: &mut Emit) {
        loop {
            if self.buffered >= READ_AHEAD_LIMIT {
                self.counts.read_ahead_stalls += 1;
                out.timer(now.saturating_add(STALL_RETRY_NS), DISCOVERY_TOKEN);
                return;
            }
            let before = self.counts.records_read;
            self.read_ahead(None, None, now, out);
            if self.counts.records_read == before && self.exhausted {
                return;
            }
            let at = self.scaled(self.last_time_ns);
            if at > now {
                out.timer(at, DISCOVERY_TOKEN);
                return;
            }
        }
    }

    /// Dependent mode: `pid`'s next request is due now: issue it, and plan the one after.
    fn dependent_issue(&mut self, pid: u32, now: Nanos, out: &mut Emit) {
        if self.stopped(now) {
            return;
        }
        let Some(p) = self.processes.get_mut(&pid).and_then(|s| s.queue.pop_front()) else { return };
        self.buffered -= 1;
        self.issue(now, p, out);
        // Did the process issue its next request before this one completed? Only a trace with
        // completion times says, and only records up to that completion need reading.
        if let Some(done) = p.complete_ns {
            self.read_ahead(Some(pid), Some(done), now, out);
        }
        let st = self.processes.get_mut(&pid).expect("present");
        st.last = Some((p, now));
        if let (Some(done), Some(next)) = (p.complete_ns, st.queue.front().copied()) {
            if next.time_ns < done {
                st.timer_set = true;
                let at = now.saturating_add(self.scaled(next.time_ns.saturating_sub(p.time_ns)));
                out.timer(at, pid as u64);
            }
        }
    }

    fn dependent_complete(&mut self, pid: u32, now: Nanos, out: &mut Emit) {
        let waiting = self.processes.get(&pid).is_some_and(|s| s.last.is_some() && !s.timer_set);
        if !waiting {
            return;
        }
        self.read_ahead(Some(pid), None, now, out);
        let scale = self.scale();
        let st = self.processes.get_mut(&pid).expect("present");
        let (Some(next), Some((last, last_issue))) = (st.queue.front().copied(), st.last) else { return };
        let at = match last.complete_ns {
            Some(done) => now.saturating_add(scale_ns(next.time_ns.saturating_sub(done), scale)),
            None => now.max(last_issue.saturating_add(scale_ns(next.time_ns.saturating_sub(last.time_ns), scale))),
        };
        st.timer_set = true;
        out.timer(at, pid as u64);
    }
}

/// Distinct processes (streams) a replay keeps statistics for: at about 240 KB each
/// (scenario/memory.rs), 32,768 take some 7.5 GiB.
pub const MAX_TRACE_PROCESSES: usize = 32_768;

/// `ns` x `scale`, saturating (a float product beyond u64 is u64::MAX, not a wrap).
fn scale_ns(ns: Nanos, scale: f64) -> Nanos {
    let v = ns as f64 * scale;
    if v >= u64::MAX as f64 {
        u64::MAX
    } else {
        v as Nanos
    }
}

impl Workload for TraceReplay {
    fn start(&mut self, out: &mut Emit) {
        match self.config.mode {
            ReplayMode::Open { .. } => {
                self.next_open = self.read();
                self.open_step(0, out);
            }
            ReplayMode::Closed { .. } => self.closed_fill(0, out),
            ReplayMode::Dependent { .. } => self.discover(0, out),
        }
    }

    fn on_timer(&mut self, token: u64, now: Nanos, out: &mut Emit) {
        match self.config.mode {
            ReplayMode::Open { .. } => self.open_step(now, out),
            ReplayMode::Closed { .. } => {}
            ReplayMode::Dependent { .. } if token == DISCOVERY_TOKEN => self.discover(now, out),
            ReplayMode::Dependent { .. } => {
                let pid = token as u32;
                if let Some(st) = self.processes.get_mut(&pid) {
                    st.timer_set = false;
                }
                self.dependent_issue(pid, now, out);
            }
        }
    }

    fn on_complete(&mut self, req: &Request, now: Nanos, out: &mut Emit) {
        match self.config.mode {
            ReplayMode::Open { .. } => {}
            ReplayMode::Closed { .. } => {
                self.in_flight = self.in_flight.saturating_sub(1);
                self.closed_fill(now, out);
            }
            ReplayMode::Dependent { .. } => {
                // Only the completion of the process's last issued request releases its next.
                let last = self.processes.get(&req.principal.pid).and_then(|s| s.last).map(|(p, _)| p.request);
                if last.is_some_and(|l| l.start_sector == req.start_sector && l.size_sectors == req.size_sectors) {
                    self.dependent_complete(req.principal.pid, now, out);
                }
            }
        }
    }

    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }

    fn replay_counts(&self) -> Option<ReplayCounts> {
        Some(self.counts.clone())
    }

    fn processes(&self) -> Vec<ProcessInfo> {
        let names: BTreeMap<u32, String> = self.reader.process_names().into_iter().collect();
        self.seen
            .iter()
            .map(|(&pid, &device)| ProcessInfo {
                pid,
                name: match names.get(&pid) {
                    Some(n) => format!("{n}-{pid}"),
                    None => format!("trace stream {pid} (device {device})"),
                },
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::classic::fcfs::Fcfs;
    use crate::sim::engine::simulate;

    use crate::device::fixed_service::FixedService10ms as Fixed;

    fn temp_trace(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("iosched-replay-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn config(path: PathBuf, mode: ReplayMode) -> TraceReplayConfig {
        TraceReplayConfig {
            path,
            format: None,
            skip_bad: false,
            mode,
            sector_map: SectorMap::Error,
            devices: None,
            max_requests: None,
            stop_ns: None,
        }
    }

    /// (pid, start sector, issue ms, complete ms) of every request, by issue time.
    fn run(config: TraceReplayConfig) -> (Vec<(u32, u64, f64, f64)>, ReplayCounts) {
        let mut w = TraceReplay::new(config, 1 << 20).unwrap();
        let out = simulate(&mut Fixed, &mut Fcfs::default(), &mut w);
        assert_eq!(out.invariants, Default::default());
        assert_eq!(w.failure(), None);
        let mut r: Vec<_> =
            out.records.iter().map(|r| (r.pid, r.start_sector, r.issue_ns as f64 / 1e6, r.complete_ns as f64 / 1e6)).collect();
        r.sort_by(|a, b| a.2.total_cmp(&b.2).then(a.1.cmp(&b.1)));
        (r, w.counts().clone())
    }

    #[test]
    fn more_streams_than_a_run_may_keep_statistics_for_is_an_error() {
        // One record per device: the cap's next stream stops the read with a message (reading
        // alone, no run: the statistics themselves would take gigabytes).
        let text: String = (0..=MAX_TRACE_PROCESSES).map(|i| format!("{} {i} 0 8 1\n", i * 1000)).collect();
        let mut w = TraceReplay::new(config(temp_trace("streams.trace", &text), ReplayMode::Open { time_scale: 1.0 }), 1 << 20).unwrap();
        let mut n = 0;
        while w.read().is_some() {
            n += 1;
        }
        assert_eq!(n, MAX_TRACE_PROCESSES);
        let f = w.failure().expect("an error, not a truncated replay");
        assert!(f.contains("streams.trace") && f.contains("more than 32768 distinct processes"), "{f}");
    }

    // MQSim lines (ns): device 0 at 0, 2 and 30 ms; device 1 at 1 ms.
    const MQSIM: &str = "1000000 0 0 8 1\n2000000 1 100 8 1\n3000000 0 200 8 0\n31000000 0 300 8 1\n";

    #[test]
    fn open_loop_keeps_the_trace_times_relative_to_the_first() {
        let (r, c) = run(config(temp_trace("open.trace", MQSIM), ReplayMode::Open { time_scale: 1.0 }));
        let issues: Vec<f64> = r.iter().map(|x| x.2).collect();
        assert_eq!(issues, vec![0.0, 1.0, 2.0, 30.0]);
        assert_eq!(c.replayed, 4);
        // Half the time scale halves the gaps.
        let (r, _) = run(config(temp_trace("open2.trace", MQSIM), ReplayMode::Open { time_scale: 0.5 }));
        assert_eq!(r.iter().map(|x| x.2).collect::<Vec<_>>(), vec![0.0, 0.5, 1.0, 15.0]);
    }

    #[test]
    fn closed_loop_keeps_depth_outstanding_and_ignores_times() {
        let (r, _) = run(config(temp_trace("closed.trace", MQSIM), ReplayMode::Closed { depth: 2 }));
        // Two at 0; each completion (10 ms apart, one at a time) lets the next in.
        assert_eq!(r.iter().map(|x| x.2).collect::<Vec<_>>(), vec![0.0, 0.0, 10.0, 20.0]);
    }

    #[test]
    fn dependent_replay_without_completions_waits_for_the_previous_request() {
        let (r, _) = run(config(temp_trace("dep.trace", MQSIM), ReplayMode::Dependent { time_scale: 1.0 }));
        // Device 0: first at 0, done 10; its next (trace gap 2 ms) waits for that completion:
        // max(10, 0 + 2) = 10, served 20..30 (device 1's request, at 1 ms, went first: 10..20);
        // its third (gap 28 ms after the second): max(30, 10 + 28) = 38.
        let dev0: Vec<f64> = r.iter().filter(|x| x.0 == 0).map(|x| x.2).collect();
        assert_eq!(dev0, vec![0.0, 10.0, 38.0]);
        let dev1: Vec<f64> = r.iter().filter(|x| x.0 == 1).map(|x| x.2).collect();
        assert_eq!(dev1, vec![1.0], "a process starts at its trace time, whatever the others do");
    }

    #[test]
    fn dependent_replay_uses_observed_think_times() {
        // Validate lines: each arrives `gap` after the previous completion (think time).
        // Request 0: 0..1 ms, gap 4 -> request 1 at 5 ms: think 4 ms after its completion.
        let (r, _) = run(config(
            temp_trace("val.trace", "R Hit 0 8 1000 4000\nR Hit 8 8 1000 0\nR Hit 16 8 1000 0\n"),
            ReplayMode::Dependent { time_scale: 1.0 },
        ));
        // Simulated service is 10 ms: 0..10, +4 -> 14..24, +0 -> 24..34.
        assert_eq!(r.iter().map(|x| x.2).collect::<Vec<_>>(), vec![0.0, 14.0, 24.0]);
    }

    #[test]
    fn dependent_replay_keeps_a_process_overlap_and_its_think_time() {
        // blkparse: pid 7 queues A at 0 and B at 1 ms before A completes (3 ms): B overlaps A,
        // so it goes 1 ms after A's simulated issue. C is queued 5 ms after B completed (4 ms
        // + 5 = 9 ms): a think time of 5 ms after B's simulated completion.
        let text = "8,0 0 1 0.000000000 7 Q R 0 + 8 [p]\n\
                    8,0 0 2 0.000000100 7 D R 0 + 8 [p]\n\
                    8,0 0 3 0.001000000 7 Q R 100 + 8 [p]\n\
                    8,0 0 4 0.001000100 7 D R 100 + 8 [p]\n\
                    8,0 0 5 0.003000000 0 C R 0 + 8 [0]\n\
                    8,0 0 6 0.004000000 0 C R 100 + 8 [0]\n\
                    8,0 0 7 0.009000000 7 Q R 200 + 8 [p]\n\
                    8,0 0 8 0.009000100 7 D R 200 + 8 [p]\n\
                    8,0 0 9 0.010000000 0 C R 200 + 8 [0]\n";
        let (r, _) = run(config(temp_trace("dep.blkparse", text), ReplayMode::Dependent { time_scale: 1.0 }));
        // Simulated: A 0..10 ms; B issued at 1, served 10..20; C at 20 + 5 = 25.
        assert_eq!(r.iter().map(|x| (x.1, x.2, x.3)).collect::<Vec<_>>(), vec![(0, 0.0, 10.0), (100, 1.0, 20.0), (200, 25.0, 35.0)]);
    }

    #[test]
    fn sectors_beyond_the_disk_error_fold_or_scale() {
        let path = temp_trace("big.trace", "0 0 0 8 1\n1000 0 3000000 8 1\n");
        let mut w = TraceReplay::new(config(path.clone(), ReplayMode::Open { time_scale: 1.0 }), 1 << 20).unwrap();
        simulate(&mut Fixed, &mut Fcfs::default(), &mut w);
        let e = w.failure().unwrap();
        assert!(e.contains("big.trace: record 2: request ends at sector 3000008 beyond the disk's 1048576 sectors"), "{e}");
        let mut c = config(path.clone(), ReplayMode::Open { time_scale: 1.0 });
        c.sector_map = SectorMap::Fold;
        let (r, counts) = run(c);
        assert_eq!((r[1].1, counts.folded), (3_000_000 % (1 << 20), 1));
        let mut c = config(path, ReplayMode::Open { time_scale: 1.0 });
        c.sector_map = SectorMap::Scale;
        let (r, _) = run(c);
        assert_eq!(r[1].1, (1u64 << 20) - 8, "the largest end sector maps to the disk's end");
    }

    #[test]
    fn a_bad_record_mid_trace_fails_the_run_or_is_skipped() {
        let path = temp_trace("bad.trace", "0 0 0 8 1\n1000 0 x 8 1\n2000 0 16 8 1\n");
        let mut c = config(path.clone(), ReplayMode::Closed { depth: 1 });
        c.format = Some(Format::Mqsim);
        let mut w = TraceReplay::new(c.clone(), 1 << 20).unwrap();
        simulate(&mut Fixed, &mut Fcfs::default(), &mut w);
        assert_eq!(w.failure().unwrap(), format!("{}:2: start block: expected a non-negative integer: `x`", path.display()));
        c.skip_bad = true;
        let (r, counts) = run(c);
        assert_eq!((r.len(), counts.skipped_bad), (2, 1));
    }
}
