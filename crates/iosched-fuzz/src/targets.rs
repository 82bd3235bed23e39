//! The fuzz targets: each takes raw bytes, feeds them to one of iosched's input readers the way
//! a user's file would reach it, and exercises what it builds. A target returns the reader's
//! error message (checked to be a real description naming the input) or a short signature of
//! the success; a panic anywhere is a failure the runner reports.

use crate::mutate::Rng;
use iosched::device::calibration::{parse_calibration, CalibratedView};
use iosched::device::disksim::{map_document, parse::parse_str, DiskSimDrive};
use iosched::device::{ArmPath, Device, DeviceView, RotationalDisk};
use iosched::request::{Op, Request};
use iosched::scenario::Scenario;
use iosched::trace::validate::{replay, validate_on, Drive};
use iosched::trace::{Trace, TraceFormat};
use iosched::workload::replay::ReplayTiming;
use std::path::{Path, PathBuf};

pub const TARGETS: &[&str] = &["scenario", "disksim", "seek", "trace", "calibration", "trace-readers", "mqsim"];

/// What one execution gave: an error message or a signature of the success.
pub enum Outcome {
    Ok(String),
    Err(String),
}

/// Files the targets share, in a directory of their own (inputs refer to them by relative
/// paths: a scenario's `device.disksim`, a description's `Full seek curve` or `source`).
pub struct Env {
    pub dir: PathBuf,
    /// A small preset disk for the calibration target's view (built once).
    pub disk: RotationalDisk,
}

/// The corpus's helper files, copied into the environment's directory.
const HELPER_FILES: &[&str] = &["disksim/hard.parv", "disksim/hard.seek", "disksim/hard.model"];

impl Env {
    pub fn new(corpus: &Path) -> Result<Env, String> {
        let dir = std::env::temp_dir().join(format!("iosched-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for f in HELPER_FILES {
            let from = corpus.join(f);
            let to = dir.join(Path::new(f).file_name().unwrap());
            std::fs::copy(&from, &to).map_err(|e| format!("{}: {e}", from.display()))?;
        }
        // The deep topology, reachable from a scenario through `device.disksim`.
        let n = 50_000;
        let deep = format!("topology disksim_iodriver d0 [ {}{} ]\n", "disksim_bus b [ ".repeat(n), "] ".repeat(n));
        std::fs::write(dir.join("deep.parv"), deep).map_err(|e| e.to_string())?;
        let disk = RotationalDisk::new(iosched::device::presets::preset("fujitsu-m2361a").unwrap())?;
        Ok(Env { dir, disk })
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Built-in seeds generated in code: the deep-nesting crashers of issue 10, too large to keep as
/// files (60-800 KB each).
pub fn generated_seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    if target == "disksim" {
        let hard = include_str!("../corpus/disksim/hard.parv");
        out.push((
            "gen:30000-nested-lists".into(),
            format!("disksim_disk D {{ x = {}{} }}", "[".repeat(30_000), "]".repeat(30_000)).into_bytes(),
        ));
        out.push((
            "gen:10000-nested-blocks".into(),
            format!("disksim_disk D {{ {} 1 {} }}", "a = {".repeat(10_000), "}".repeat(10_000)).into_bytes(),
        ));
        out.push((
            "gen:5000-nested-named-blocks".into(),
            format!("disksim_disk D {{ {} 1 {} }}", "a = T N {".repeat(5_000), "}".repeat(5_000)).into_bytes(),
        ));
        let topo = format!("{hard}\ntopology disksim_iodriver d0 [ {}{} ]\n", "disksim_bus b [ ".repeat(100_000), "] ".repeat(100_000));
        out.push(("gen:100000-topology-nodes".into(), topo.into_bytes()));
    }
    if target == "scenario" {
        out.push((
            "gen:deep-toml-arrays".into(),
            format!("name = \"x\"\ndescription = {}1{}\n", "[".repeat(20_000), "]".repeat(20_000)).into_bytes(),
        ));
        out.push(("gen:deep-toml-tables".into(), format!("name = {}1{}\n", "{a=".repeat(5_000), "}".repeat(5_000)).into_bytes()));
    }
    if target == "calibration" {
        out.push(("gen:deep-json".into(), format!("{}1{}", "[".repeat(20_000), "]".repeat(20_000)).into_bytes()));
    }
    out
}

/// Extra seeds read at run time when present: the DiskSim validation files and the traces of
/// ../shared (not part of the repository).
pub fn extra_seed_files(target: &str, shared: &Path) -> Vec<PathBuf> {
    let list = |dir: &Path, keep: &dyn Fn(&str) -> bool| -> Vec<PathBuf> {
        let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
        let mut v: Vec<PathBuf> =
            rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(keep)).collect();
        v.sort();
        v
    };
    match target {
        "disksim" => {
            list(&shared.join("disksim-validation"), &|n| n.ends_with(".parv") || n.ends_with(".diskspecs") || n.ends_with(".model"))
        }
        "seek" => list(&shared.join("disksim-validation"), &|n| n.ends_with(".seek")),
        "trace" => {
            let mut v = list(&shared.join("disksim-validation"), &|n| n.ends_with(".trace"));
            v.extend(list(&shared.join("traces"), &|n| !n.ends_with(".md") && !n.starts_with("SHA")));
            v
        }
        "trace-readers" => list(&shared.join("traces"), &|n| !n.ends_with(".md") && !n.starts_with("SHA")),
        _ => Vec::new(),
    }
}

fn hash(data: &[u8]) -> u64 {
    // FNV-1a: a stable seed for the requests a target derives from an input.
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// An error must describe the problem and name the input: not empty, not just the name.
fn described(e: String, name: &str) -> Result<Outcome, String> {
    let rest = e.replacen(name, "", 1);
    let words = rest.chars().filter(|c| c.is_alphabetic()).count();
    if !e.contains(name) || words < 5 {
        return Err(format!("an error without a proper description or without the file's name `{name}`: {e:?}"));
    }
    if e.chars().any(|c| c.is_control() && c != '\n') {
        return Err(format!("an error message with a control character in it: {e:?}"));
    }
    Ok(Outcome::Err(e))
}

/// Runs `target` on `input`. `Err` is a failure of the code under test other than a panic (a
/// bad error message, an impossible result).
pub fn run(target: &str, input: &[u8], env: &Env) -> Result<Outcome, String> {
    match target {
        "scenario" => scenario(input, env),
        "disksim" => disksim(input, env),
        "seek" => seek(input, env),
        "trace" => trace(input),
        "calibration" => calibration(input, env),
        "trace-readers" => trace_readers(input, env),
        "mqsim" => mqsim(input, env),
        _ => Err(format!("unknown target `{target}`")),
    }
}

fn req(id: u64, op: Op, start: u64, size: u32, at: u64) -> Request {
    Request::new(id, op, start, size, at)
}

/// Serves a few requests (derived from the input) on a built drive and checks that time moves
/// forward and every estimate is defined.
fn exercise(dev: &mut dyn Device, capacity: u64, seed: u64) -> Result<String, String> {
    let mut rng = Rng::new(seed);
    let mut now: u64 = 0;
    for i in 0..8 {
        let op = if rng.chance(3) { Op::Write } else { Op::Read };
        let start = match rng.below(4) {
            0 => 0,
            1 => capacity.saturating_sub(1 + rng.below(64) as u64),
            _ => rng.next_u64() % capacity,
        };
        let room = capacity - start;
        let size = (1 + match rng.below(4) {
            0 => 0,
            1 => rng.below(8) as u64,
            2 => rng.below(256) as u64,
            _ => rng.below(1 << 16) as u64,
        })
        .min(room) as u32;
        let path = match rng.below(4) {
            0 => ArmPath::Through(rng.next_u64() as u32),
            1 => ArmPath::Wrap { edge: rng.next_u64() as u32, start: rng.next_u64() as u32 },
            _ => ArmPath::Direct,
        };
        let _ = dev.as_view().positioning_time_ns(start, size, op, now);
        let s = dev.service(&req(i, op, start, size, now), path, now);
        if s.completion_ns < now {
            return Err(format!("request {i} completed at {} ns, before it was issued at {now} ns", s.completion_ns));
        }
        // Within the documented ranges no request takes anywhere near 2^62 ns (146 years): a
        // time that large means a sum saturated, i.e. a silently wrong answer.
        if s.completion_ns - now >= 1 << 62 {
            return Err(format!("request {i} took {} ns: a saturated (or nearly overflowing) time", s.completion_ns - now));
        }
        dev.advance_to(s.completion_ns);
        now = s.completion_ns.saturating_add(rng.below(20_000_000) as u64);
    }
    Ok(format!("served; {}", if now > 1 << 50 { "long" } else { "normal" }))
}

fn drive_outcome(text: &str, path: &Path, seed: u64) -> Result<Outcome, String> {
    let name = path.display().to_string();
    let dir = path.parent().unwrap().display().to_string();
    let loaded: Result<DiskSimDrive, _> = parse_str(text, path).and_then(|doc| map_document(&doc, path));
    let drive = match loaded {
        // A sourced file may be the one named.
        Err(e) => return described(e.to_string(), if e.to_string().contains(&name) { &name } else { &dir }),
        Ok(d) => d,
    };
    let cap = drive.capacity_sectors();
    // What kind of drive it is (the success's signature: new kinds join the corpus).
    let x = &drive.ext;
    let kind = format!(
        "unsupported {} ignored {} notes {} zones {} segments {} wb {} rr {} wd {:?} te {} idle {} minseek {}",
        drive.unsupported.len(),
        drive.ignored.len(),
        drive.notes.len(),
        drive.spec.zones.len().min(4),
        drive.spec.cache_segments.min(4),
        x.write_back_segments.min(2),
        x.read_reconnect.is_some(),
        x.write_disconnect.map(|w| w.extra),
        x.readahead_to_track_end,
        x.readahead_on_idle_hit,
        x.min_write_seek_ns > 0
    );
    let mut dev = drive.build().map_err(|e| format!("a loaded drive does not build: {e}"))?;
    if dev.capacity_sectors() != cap || cap == 0 {
        return Err(format!("capacity {} of the device, {cap} of the drive", dev.capacity_sectors()));
    }
    exercise(dev.as_mut(), cap, seed).map(|s| Outcome::Ok(format!("{s}; {kind}")))
}

fn disksim(input: &[u8], env: &Env) -> Result<Outcome, String> {
    // Written too, so that the input may `source` itself (a cycle) or be sourced.
    let path = env.dir.join("fuzz.parv");
    std::fs::write(&path, input).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    drive_outcome(&String::from_utf8_lossy(input), &path, hash(input))
}

/// The input is a `.seek` file, used by a drive with an extracted seek curve.
fn seek(input: &[u8], env: &Env) -> Result<Outcome, String> {
    let seek = env.dir.join("fuzz.seek");
    std::fs::write(&seek, input).map_err(|e| format!("cannot write {}: {e}", seek.display()))?;
    let hard = include_str!("../corpus/disksim/hard.parv");
    let text = hard.replace("Seek type = hpl,", "Seek type = extracted,\n      Full seek curve = fuzz.seek,");
    let path = env.dir.join("seek-user.parv");
    match drive_outcome(&text, &path, hash(input))? {
        Outcome::Err(e) => described(e, "fuzz.seek"),
        ok => Ok(ok),
    }
}

fn trace(input: &[u8]) -> Result<Outcome, String> {
    let text = String::from_utf8_lossy(input);
    let name = "fuzz.trace";
    let t = match Trace::parse(&text, name) {
        Err(e) => return described(e.to_string(), name),
        Ok(t) => t,
    };
    // Both readers on the same text, whatever the detection chose.
    let _ = Trace::parse_validate(&text, name);
    let _ = Trace::parse_ascii(&text, name);
    if t.requests.len() > 300 {
        return Ok(Outcome::Ok(format!("{} parsed", t.format.as_str())));
    }
    let mut drive = Drive::load(Path::new("fujitsu-m2361a")).map_err(|e| e.to_string())?;
    if let Err(e) = t.check_capacity(drive.capacity_sectors, &drive.name) {
        return described(e.to_string(), name);
    }
    let timing = if hash(input) % 2 == 0 { ReplayTiming::Arrival } else { ReplayTiming::AfterCompletion };
    if t.format == TraceFormat::Validate {
        let v = validate_on(&mut drive, &t, timing).map_err(|e| format!("validation of a parsed, fitting trace failed: {e}"))?;
        if !v.demerit_ms.is_finite() {
            return Err(format!("demerit {}", v.demerit_ms));
        }
    } else {
        let (records, _) = replay(drive.device.as_mut(), &t, timing);
        if records.len() != t.requests.len() {
            return Err(format!("{} of {} requests completed", records.len(), t.requests.len()));
        }
    }
    Ok(Outcome::Ok(format!("{} replayed; {} requests", t.format.as_str(), t.requests.len().min(20))))
}

/// Every streaming trace reader (each format forced, and detection), strict and with
/// `skip_bad`, on the input as it is (gzip/zstd included); then the detected format replayed
/// open-loop on a small disk. Records must stay within the documented ranges; errors must name
/// the input; a strict reader and a skipping one must agree on the records both return.
fn trace_readers(input: &[u8], env: &Env) -> Result<Outcome, String> {
    use iosched::trace::{Format, ReadOptions, TraceReader, MAX_TRACE_BLOCK, MAX_TRACE_REQUEST_BLOCKS};
    let name = "fuzz.trace";
    // Inputs are cut to 64 KiB (which also ends the large samples inside a record): each input
    // is read 28 times, and the shared samples (up to 680 KB) would take the time budget.
    let input = &input[..input.len().min(64 << 10)];
    let formats = std::iter::once(None).chain(Format::ALL.iter().copied().map(Some));
    let mut detected_ok = None;
    let mut summary = Vec::new();
    for format in formats {
        let mut counts = [0u64; 2];
        // Whether each read reached the end without an error.
        let mut clean = [true; 2];
        for (k, skip_bad) in [false, true].into_iter().enumerate() {
            let mut reader = match TraceReader::from_bytes(input.to_vec(), name, ReadOptions { format, skip_bad }) {
                Ok(r) => r,
                Err(e) => {
                    described(e.to_string(), name)?;
                    break;
                }
            };
            loop {
                match reader.next_record() {
                    Ok(None) => break,
                    Ok(Some(r)) => {
                        counts[k] += 1;
                        if r.end_sector() > MAX_TRACE_BLOCK || r.size_sectors > MAX_TRACE_REQUEST_BLOCKS {
                            return Err(format!("record {} of {:?} beyond the documented ranges: {r:?}", r.at, format));
                        }
                        if counts[k] > 200_000 {
                            break;
                        }
                    }
                    Err(e) => {
                        described(e.to_string(), name)?;
                        clean[k] = false;
                        break;
                    }
                }
            }
            if format.is_none() && !skip_bad && counts[0] > 0 {
                detected_ok = Some((reader.format, clean[0]));
            }
        }
        // Skipping can only add records to what a strict read returned before its first error.
        if counts[1] < counts[0] {
            return Err(format!("{format:?}: {} records with skip_bad, {} without", counts[1], counts[0]));
        }
        summary.push(counts[1].min(9));
    }
    let Some((format, read_clean)) = detected_ok else {
        return Ok(Outcome::Ok(format!("read {summary:?}")));
    };
    // Replay what was detected (the replay reads the file itself, as a scenario's would).
    let path = env.dir.join(format!("replay-{}.trace", std::process::id()));
    std::fs::write(&path, input).map_err(|e| e.to_string())?;
    let config = iosched::workload::trace_replay::TraceReplayConfig {
        path: path.clone(),
        format: Some(format),
        skip_bad: true,
        mode: iosched::workload::trace_replay::ReplayMode::Open { time_scale: 1e-6 },
        sector_map: iosched::workload::trace_replay::SectorMap::Fold,
        devices: None,
        max_requests: Some(200),
        stop_ns: None,
    };
    let mut dev = RotationalDisk::new(iosched::device::presets::preset("fujitsu-m2361a").expect("preset")).map_err(|e| e.to_string())?;
    let capacity = dev.capacity_sectors();
    let mut w = match iosched::workload::trace_replay::TraceReplay::new(config, capacity) {
        Ok(w) => w,
        Err(e) => return described(e, &path.display().to_string()),
    };
    let mut sched = iosched::sched::classic::fcfs::Fcfs::default();
    let out = iosched::sim::engine::simulate(&mut dev, &mut sched, &mut w);
    if out.invariants != Default::default() {
        return Err(format!("replay broke invariants: {:?}", out.invariants));
    }
    if let Some(f) = iosched::workload::Workload::failure(&w) {
        // A trace that reads clean to its end must replay (a request larger than the whole
        // disk aside); one with a fatal error part-way fails the replay there, named.
        if read_clean && !f.contains("larger than the disk") {
            return Err(format!("replay failed after a clean read: {f}"));
        }
        return described(f, &path.display().to_string());
    }
    Ok(Outcome::Ok(format!("{} replayed {}", format.name(), out.records.len().min(9))))
}

fn calibration(input: &[u8], env: &Env) -> Result<Outcome, String> {
    let name = "fuzz.json";
    let (curve, baseline) = match parse_calibration(&String::from_utf8_lossy(input), name) {
        Err(e) => return described(e, name),
        Ok(c) => c,
    };
    if !(baseline.is_finite() && baseline >= 0.0) {
        return Err(format!("baseline {baseline} accepted"));
    }
    for d in [0, 1, -1, 7, -1000, 1 << 20, i64::MAX, i64::MIN, i64::MIN + 1] {
        let e = curve.estimate_ns(d);
        if !(e.is_finite() && (0.0..=1e10).contains(&e)) {
            return Err(format!("estimate {e} ns at distance {d} from a validated curve"));
        }
    }
    let view = CalibratedView::new(&env.disk, &curve);
    let cap = view.capacity_sectors();
    for s in [0, 1, cap / 2, cap - 1] {
        let _ = view.positioning_time_ns(s, 8, Op::Read, 0);
    }
    Ok(Outcome::Ok(format!("curve {} {} {}", curve.forward.len().min(8), curve.backward.len().min(8), baseline > 0.0)))
}

/// A scenario is run only when that is cheap (a few hundred requests, no application model, no
/// calibration): the target is about parsing and validation, and a run that takes seconds would
/// starve them.
fn cheap(s: &Scenario) -> bool {
    let small_queue = s.workload.as_ref().is_some_and(|w| w.requests <= 300 && w.queue_depth <= 64);
    let small_procs = s.workload.is_none()
        && !s.process.is_empty()
        && s.process.iter().map(|p| p.count as u64).sum::<u64>() <= 8
        && s.process.iter().all(|p| p.requests.is_some_and(|n| n <= 100) && p.file_mib <= 4096.0);
    s.app.is_none()
        && s.device.positioning_estimator.as_deref() != Some("calibrated")
        && s.scheduler.len() <= 3
        && s.run.duration_s() <= 100.0
        && (small_queue || small_procs)
}

fn scenario(input: &[u8], env: &Env) -> Result<Outcome, String> {
    let path = env.dir.join("fuzz.toml");
    std::fs::write(&path, input).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let name = path.display().to_string();
    let text = String::from_utf8_lossy(input);
    let s = match Scenario::parse(&text, &name) {
        Err(e) => return described(e.to_string(), &name),
        Ok(s) => s,
    };
    if !cheap(&s) {
        return Ok(Outcome::Ok(format!("valid {}", r_kind(&s))));
    }
    match s.run(None) {
        Err(e) => described(e.to_string(), &name),
        Ok(results) => {
            for r in &results {
                let inv = &r.summary.invariants;
                if *inv != iosched::metrics::InvariantReport::default() {
                    return Err(format!("broken invariants on a valid scenario: {inv:?}"));
                }
            }
            let names: Vec<&str> = results.iter().map(|r| r.summary.scheduler_name.as_str()).collect();
            Ok(Outcome::Ok(format!("ran {} on {}", names.join(","), r_kind(&s))))
        }
    }
}

/// The input is an MQSim device description (its ssdconfig.xml), reached as a user's would be:
/// a scenario's `device.mqsim` (so the scenario's checks, memory included, apply), then a short
/// closed queue of mixed reads and writes on the drive it describes.
fn mqsim(input: &[u8], env: &Env) -> Result<Outcome, String> {
    let xml = env.dir.join("fuzz-ssd.xml");
    std::fs::write(&xml, input).map_err(|e| format!("cannot write {}: {e}", xml.display()))?;
    let scenario_path = env.dir.join("fuzz-mqsim.toml");
    let (xml_name, name) = (xml.display().to_string(), scenario_path.display().to_string());
    let kib = 4 << (hash(input) % 4);
    // The run starts from a full drive, whatever the description's Enabled_Preconditioning
    // (absent: true, which the reader maps to `aged`): aging MQSim's default 512 GiB drive
    // writes 250 million units, minutes by design (cancellable, and aged once per scenario;
    // the scenario target ages small drives).
    let text = format!(
        "[device]\nmqsim = \"{xml_name}\"\nqueue_depth = 8\n[device.flash]\nprecondition = \"full\"\n[workload]\nkind = \"closed-queue\"\nqueue_depth = 8\nrequests = 64\nrequest_kib = {kib}\nread_fraction = 0.6\n[[scheduler]]\nname = \"fcfs\"\n"
    );
    // The reader's errors name the description; the scenario's name the scenario.
    let described_either = |e: String| described(e.clone(), if e.contains(&xml_name) { &xml_name } else { &name });
    let s = match Scenario::parse(&text, &name) {
        Err(e) => return described_either(e.to_string()),
        Ok(s) => s,
    };
    match s.run(None) {
        Err(e) => described_either(e.to_string()),
        Ok(results) => {
            for r in &results {
                let inv = &r.summary.invariants;
                if *inv != iosched::metrics::InvariantReport::default() {
                    return Err(format!("broken invariants on a valid description: {inv:?}"));
                }
                if r.summary.requests != 64 {
                    return Err(format!("{} of 64 requests completed", r.summary.requests));
                }
            }
            Ok(Outcome::Ok(format!("ran; {kib} KiB")))
        }
    }
}

fn r_kind(s: &Scenario) -> String {
    format!(
        "{} {} {}",
        s.workload.as_ref().map_or("processes", |w| w.kind.as_str()),
        s.app.as_ref().map_or("", |a| a.kind.as_str()),
        if s.device.disksim.is_some() { "disksim" } else { "preset" }
    )
}
