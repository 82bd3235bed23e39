//! The `[[task]]` commands of the S benchmark suite's workloads (docs/s-suite.md): their
//! fields' validation (errors name the task and the field), the files they need made before
//! the layout, and their programs.
//!
//! `s-background`, `rand-read`, `rand-write`, `seq-write` (workload/fio_jobs.rs,
//! s_background.rs); `replay-startup` (replay_startup.rs); `video`, `periodic` (video.rs);
//! `make`, `git-checkout` (kern_dev.rs).

use super::task::TaskSection;
use crate::host::fs::Tree;
use crate::host::syscall::Program;
use crate::host::Ino;
use crate::time::{ms_to_ns, Nanos};
use crate::workload::fio_jobs::{GreedyWrite, RandRead};
use crate::workload::kern_dev::{files_below, CheckoutConfig, GitCheckout, Make, MakeConfig, Window};
use crate::workload::replay_startup::{
    ReplayConfig, ReplayStartup, StartupTrace, DEFAULT_PAUSE_S, DEFAULT_SETTLE_S, DEFAULT_SHORT_STARTUP_PAUSE_S, FILE_BYTES,
};
use crate::workload::s_background::{Background, SBackground, WORKLOADS};
use crate::workload::video::{Periodic, PeriodicCommand, Video};
use std::path::Path;
use std::sync::Arc;

pub const COMMANDS: [&str; 9] =
    ["s-background", "seq-read", "rand-read", "rand-write", "seq-write", "replay-startup", "video", "periodic", "make"];
/// `git-checkout` is listed apart (COMMANDS is an array of the others).
pub const GIT_CHECKOUT: &str = "git-checkout";

pub fn is_s_command(c: &str) -> bool {
    COMMANDS.contains(&c) || c == GIT_CHECKOUT
}

/// S's files: 5 GB each (Valente 2014, section 7.2).
pub const DEFAULT_FILE_MIB: f64 = 5120.0;
/// fio's default block size.
pub const DEFAULT_FIO_BS_KIB: f64 = 4.0;
/// S's comm_startup_lat default: 5 iterations.
pub const DEFAULT_ITERATIONS: u32 = 5;
/// The paper's playback rate.
pub const DEFAULT_FPS: f64 = 27.0;
/// Assumption: a 720p H.264 trailer (S's WALL-E clip) at about 5 Mbit/s.
pub const DEFAULT_BITRATE_KBIT_S: f64 = 5000.0;
/// S's mplayer plays 20 s (`-endpos 00:00:20`); the paper's clip was 30 s.
pub const DEFAULT_CLIP_S: f64 = 20.0;

/// The fields only some commands take: (field, commands taking it).
const FIELDS: &[(&str, &[&str])] = &[
    ("sync_every_s", &["s-background"]),
    ("workload", &["s-background"]),
    ("trace", &["replay-startup", "periodic"]),
    ("iterations", &["replay-startup"]),
    ("pause_s", &["replay-startup"]),
    ("settle_s", &["replay-startup"]),
    ("short_startup_pause_s", &["replay-startup"]),
    ("deltas", &["replay-startup", "periodic"]),
    ("async_ra", &["replay-startup", "periodic"]),
    ("rate_kib_s", &["s-background", "rand-write", "seq-write"]),
    ("fps", &["video"]),
    ("bitrate_kbit_s", &["video"]),
    ("clip_s", &["video"]),
    ("period_s", &["periodic"]),
    ("start_after_s", &["periodic"]),
    ("jobs", &["make"]),
    ("headers", &["make"]),
    ("headers_per_file", &["make"]),
    ("cpu_ms", &["make"]),
    ("obj_ratio", &["make"]),
    ("warmup_s", &["make", "git-checkout"]),
    ("window_s", &["make", "git-checkout"]),
    ("inflate_ratio", &["git-checkout"]),
    ("inflate_us_per_kib", &["git-checkout"]),
];

fn given(t: &TaskSection, field: &str) -> bool {
    match field {
        "workload" => t.workload.is_some(),
        "sync_every_s" => t.sync_every_s.is_some(),
        "trace" => t.trace.is_some(),
        "iterations" => t.iterations.is_some(),
        "pause_s" => t.pause_s.is_some(),
        "settle_s" => t.settle_s.is_some(),
        "short_startup_pause_s" => t.short_startup_pause_s.is_some(),
        "deltas" => t.deltas.is_some(),
        "async_ra" => t.async_ra.is_some(),
        "rate_kib_s" => t.rate_kib_s.is_some(),
        "fps" => t.fps.is_some(),
        "bitrate_kbit_s" => t.bitrate_kbit_s.is_some(),
        "clip_s" => t.clip_s.is_some(),
        "period_s" => t.period_s.is_some(),
        "start_after_s" => t.start_after_s.is_some(),
        "jobs" => t.jobs.is_some(),
        "headers" => t.headers.is_some(),
        "headers_per_file" => t.headers_per_file.is_some(),
        "cpu_ms" => t.cpu_ms.is_some(),
        "obj_ratio" => t.obj_ratio.is_some(),
        "warmup_s" => t.warmup_s.is_some(),
        "window_s" => t.window_s.is_some(),
        "inflate_ratio" => t.inflate_ratio.is_some(),
        "inflate_us_per_kib" => t.inflate_us_per_kib.is_some(),
        _ => false,
    }
}

/// A field given to a command that does not take it is an error naming both.
fn check_fields(t: &TaskSection) -> Result<(), String> {
    for (field, commands) in FIELDS {
        if given(t, field) && !commands.contains(&t.command.as_str()) {
            return Err(format!("task `{}`: field `{field}` is for command {}, not `{}`", t.name, commands.join(", "), t.command));
        }
    }
    Ok(())
}

fn number(t: &TaskSection, field: &str, v: Option<f64>, default: f64, min: f64, max: f64) -> Result<f64, String> {
    let v = v.unwrap_or(default);
    if !(v.is_finite() && v >= min && v <= max) {
        return Err(format!("task `{}`: field `{field}` must be in [{min}, {max}], got {v}", t.name));
    }
    Ok(v)
}

fn positive(t: &TaskSection, field: &str, v: Option<f64>, default: f64, max: f64) -> Result<f64, String> {
    let x = number(t, field, v, default, 0.0, max)?;
    if x <= 0.0 {
        return Err(format!("task `{}`: field `{field}` must be in (0, {max}], got {x}", t.name));
    }
    Ok(x)
}

fn s_to_ns(s: f64) -> Nanos {
    ms_to_ns(s * 1000.0)
}

fn require<'a>(t: &TaskSection, field: &str, v: Option<&'a str>) -> Result<&'a str, String> {
    v.ok_or_else(|| format!("task `{}`: command `{}` needs `{field}`", t.name, t.command))
}

/// An existing regular file, or one made now of `bytes` (fio lays its files out; the
/// scenario's `[[host.file]]` can give them instead).
fn file_or_make(t: &TaskSection, tree: &mut Tree, path: &str, bytes: u64) -> Result<Ino, String> {
    match tree.lookup(path) {
        Some(ino) if tree.is_dir(ino) => Err(format!("task `{}`: field `path` = `{path}` must name a regular file", t.name)),
        Some(ino) => Ok(ino),
        None => tree.add_file(path, bytes).map_err(|e| format!("task `{}`: field `path`: {e}", t.name)),
    }
}

fn existing_dir(t: &TaskSection, tree: &Tree, field: &str, path: &str) -> Result<Ino, String> {
    match tree.lookup(path) {
        Some(ino) if tree.is_dir(ino) => Ok(ino),
        Some(_) => Err(format!("task `{}`: field `{field}` = `{path}` must name a directory", t.name)),
        None => Err(format!("task `{}`: field `{field}` = `{path}`: no such directory in the host's tree", t.name)),
    }
}

fn trace(t: &TaskSection, scenario_dir: Option<&Path>) -> Result<Option<StartupTrace>, String> {
    let Some(p) = t.trace.as_deref() else {
        return Ok(None);
    };
    let rel = Path::new(p);
    let path = match scenario_dir {
        Some(dir) if rel.is_relative() => dir.join(rel),
        _ => rel.to_path_buf(),
    };
    StartupTrace::read(&path).map(Some).map_err(|e| format!("task `{}`: field `trace`: {e}", t.name))
}

/// Each traced process's file, made under /replay-startup/TASK/.
fn replay_files(t: &TaskSection, tree: &mut Tree, trace: &StartupTrace) -> Result<Vec<Ino>, String> {
    (0..trace.processes.len())
        .map(|i| {
            let path = format!("/replay-startup/{}/file{i}", t.name);
            tree.add_file(&path, FILE_BYTES).map_err(|e| format!("task `{}`: {e}", t.name))
        })
        .collect()
}

fn window(t: &TaskSection) -> Result<Window, String> {
    Ok(Window {
        warmup_ns: s_to_ns(number(t, "warmup_s", t.warmup_s, 0.0, 0.0, 1e6)?),
        window_ns: s_to_ns(positive(t, "window_s", t.window_s, 20.0, 1e6)?),
    })
}

/// Checks every task's S-suite fields, makes the files the S commands need, and builds their
/// programs (None for the other commands).
pub fn prepare(tasks: &[TaskSection], tree: &mut Tree, scenario_dir: Option<&Path>) -> Result<Vec<Option<Box<dyn Program>>>, String> {
    let mut out = Vec::new();
    for t in tasks {
        check_fields(t)?;
        out.push(if is_s_command(&t.command) { Some(program(t, tree, scenario_dir)?) } else { None });
    }
    Ok(out)
}

fn program(t: &TaskSection, tree: &mut Tree, scenario_dir: Option<&Path>) -> Result<Box<dyn Program>, String> {
    let mib = |v: f64| (v * (1 << 20) as f64) as u64;
    let bs = |default: f64| -> Result<u64, String> {
        let kib = positive(t, "bs_kib", t.bs_kib, default, 1_048_576.0)?;
        let b = (kib * 1024.0) as u64;
        if !b.is_multiple_of(512) {
            return Err(format!("task `{}`: field `bs_kib` must be a whole number of 512-byte sectors, got {kib}", t.name));
        }
        Ok(b)
    };
    let rate = || -> Result<u64, String> { Ok((number(t, "rate_kib_s", t.rate_kib_s, 0.0, 0.0, 1e9)? * 1024.0) as u64) };
    Ok(match t.command.as_str() {
        "s-background" => {
            let w = require(t, "workload", t.workload.as_deref())?;
            let Some(&(_, readers, writers, random)) = WORKLOADS.iter().find(|(n, ..)| *n == w) else {
                let known: Vec<&str> = WORKLOADS.iter().map(|w| w.0).collect();
                return Err(format!("task `{}`: field `workload`: unknown workload `{w}` (known: {})", t.name, known.join(", ")));
            };
            let size = mib(positive(t, "size_mib", t.size_mib, DEFAULT_FILE_MIB, 16_777_216.0)?);
            let bs = bs(DEFAULT_FIO_BS_KIB)?;
            if size < bs {
                return Err(format!("task `{}`: field `size_mib` is smaller than `bs_kib`", t.name));
            }
            let dir = t.path.clone().unwrap_or_else(|| format!("/s/{}", t.name));
            if tree.lookup(&dir).is_some() {
                return Err(format!("task `{}`: field `path` = `{dir}` exists already (s-background makes its files there)", t.name));
            }
            let mut r = Vec::new();
            for i in 0..readers {
                r.push(tree.add_file(&format!("{dir}/reader{i}"), size).map_err(|e| format!("task `{}`: {e}", t.name))?);
            }
            let mut wr = Vec::new();
            for i in 0..writers {
                // fio preallocates a random writer's file; a sequential writer's grows.
                let at_start = if random { size } else { 0 };
                wr.push(tree.add_file(&format!("{dir}/writer{i}"), at_start).map_err(|e| format!("task `{}`: {e}", t.name))?);
            }
            let total = rate()?;
            let cfg = Background {
                readers,
                writers,
                random,
                bs_bytes: bs,
                size_bytes: size,
                writer_rate_bytes_s: if writers > 0 { total / writers as u64 } else { 0 },
                sync_every_ns: s_to_ns(number(t, "sync_every_s", t.sync_every_s, 0.0, 0.0, 1e5)?),
            };
            Box::new(SBackground::new(cfg, r, wr))
        }
        "seq-read" => {
            let p = require(t, "path", t.path.as_deref())?;
            let ino = file_or_make(t, tree, p, mib(positive(t, "size_mib", t.size_mib, DEFAULT_FILE_MIB, 16_777_216.0)?))?;
            Box::new(crate::workload::fio_jobs::SeqRead::new(ino, bs(DEFAULT_FIO_BS_KIB)?))
        }
        "rand-read" => {
            let p = require(t, "path", t.path.as_deref())?;
            let ino = file_or_make(t, tree, p, mib(positive(t, "size_mib", t.size_mib, DEFAULT_FILE_MIB, 16_777_216.0)?))?;
            let direct = match t.flag.as_deref() {
                None => false,
                Some("direct") => true,
                Some(o) => return Err(format!("task `{}`: field `flag` = `{o}`: rand-read takes only \"direct\"", t.name)),
            };
            let bs = bs(DEFAULT_FIO_BS_KIB)?;
            if tree.size(ino) < bs {
                return Err(format!("task `{}`: field `path` = `{p}`: the file is smaller than one `bs_kib` block", t.name));
            }
            Box::new(RandRead::new(ino, bs, direct))
        }
        "rand-write" | "seq-write" => {
            let random = t.command == "rand-write";
            let p = require(t, "path", t.path.as_deref())?;
            let size = mib(positive(t, "size_mib", t.size_mib, DEFAULT_FILE_MIB, 16_777_216.0)?);
            let bs = bs(DEFAULT_FIO_BS_KIB)?;
            if size < bs {
                return Err(format!("task `{}`: field `size_mib` is smaller than `bs_kib`", t.name));
            }
            let ino = file_or_make(t, tree, p, if random { size } else { 0 })?;
            Box::new(GreedyWrite::new(ino, bs, size, random, rate()?))
        }
        "replay-startup" => {
            let tr = trace(t, scenario_dir)?.ok_or_else(|| format!("task `{}`: command `replay-startup` needs `trace`", t.name))?;
            let iterations = number(t, "iterations", t.iterations.map(|v| v as f64), DEFAULT_ITERATIONS as f64, 1.0, 1e6)? as u32;
            let pause = number(t, "pause_s", t.pause_s, DEFAULT_PAUSE_S, 0.0, 3600.0)?;
            let settle = number(t, "settle_s", t.settle_s, DEFAULT_SETTLE_S, 0.0, 3600.0)?;
            let short_pause = number(t, "short_startup_pause_s", t.short_startup_pause_s, DEFAULT_SHORT_STARTUP_PAUSE_S, 0.0, 3600.0)?;
            let files = replay_files(t, tree, &tr)?;
            Box::new(ReplayStartup::new(
                &tr,
                files,
                ReplayConfig {
                    iterations,
                    pause_ns: s_to_ns(pause),
                    drop_caches: true,
                    settle_ns: s_to_ns(settle),
                    short_startup_pause_ns: s_to_ns(short_pause),
                    deltas: t.deltas.unwrap_or(false),
                    async_ra: t.async_ra.unwrap_or(true),
                },
            ))
        }
        "video" => {
            let p = require(t, "path", t.path.as_deref())?;
            let fps = positive(t, "fps", t.fps, DEFAULT_FPS, 1000.0)?;
            let kbit = positive(t, "bitrate_kbit_s", t.bitrate_kbit_s, DEFAULT_BITRATE_KBIT_S, 1e7)?;
            let clip = positive(t, "clip_s", t.clip_s, DEFAULT_CLIP_S, 1e5)?;
            let frame = ((kbit * 1000.0 / 8.0 / fps).round() as u64).max(1);
            let frames = (clip * fps).round().max(1.0) as u64;
            let ino = file_or_make(t, tree, p, frame * frames)?;
            Box::new(Video::new(ino, frame, fps, frames))
        }
        "periodic" => {
            let period = positive(t, "period_s", t.period_s, 3.0, 1e5)?;
            let after = number(t, "start_after_s", t.start_after_s, 0.0, 0.0, 1e6)?;
            let command = match (trace(t, scenario_dir)?, t.path.as_deref()) {
                (Some(tr), None) => {
                    let files = replay_files(t, tree, &tr)?;
                    PeriodicCommand::Replay {
                        trace: Arc::new(tr),
                        files,
                        deltas: t.deltas.unwrap_or(false),
                        async_ra: t.async_ra.unwrap_or(true),
                    }
                }
                (None, Some(p)) => {
                    if t.deltas.is_some() || t.async_ra.is_some() {
                        return Err(format!("task `{}`: fields `deltas` and `async_ra` are for a `trace`, not a `path`", t.name));
                    }
                    let ino = file_or_make(t, tree, p, mib(positive(t, "size_mib", t.size_mib, 15.0, 16_777_216.0)?))?;
                    PeriodicCommand::Read { ino, bs_bytes: bs(1024.0)? }
                }
                (Some(_), Some(_)) => return Err(format!("task `{}`: give `trace` or `path`, not both", t.name)),
                (None, None) => {
                    return Err(format!(
                        "task `{}`: command `periodic` needs `trace` (a start-up to replay) or `path` (a file to read)",
                        t.name
                    ))
                }
            };
            Box::new(Periodic::new(command, s_to_ns(after), s_to_ns(period)))
        }
        "make" => {
            let src = existing_dir(t, tree, "path", require(t, "path", t.path.as_deref())?)?;
            let headers = match t.headers.as_deref() {
                Some(h) => files_below(tree, existing_dir(t, tree, "headers", h)?),
                None => Vec::new(),
            };
            let sources = files_below(tree, src);
            let cfg = MakeConfig {
                jobs: number(t, "jobs", t.jobs.map(|v| v as f64), 5.0, 1.0, 1024.0)? as u32,
                headers_per_file: number(t, "headers_per_file", t.headers_per_file.map(|v| v as f64), 20.0, 0.0, 100_000.0)? as u32,
                cpu_ns: ms_to_ns(number(t, "cpu_ms", t.cpu_ms, 300.0, 0.0, 3.6e6)?),
                exec_ns: crate::time::us_to_ns(number(t, "exec_us", t.exec_us, 1000.0, 0.0, 3.6e9)?),
                obj_ratio: number(t, "obj_ratio", t.obj_ratio, 1.5, 0.0, 1000.0)?,
                window: window(t)?,
            };
            Box::new(Make::new(sources, headers, cfg))
        }
        _ => {
            // git-checkout
            let objects = existing_dir(t, tree, "path", require(t, "path", t.path.as_deref())?)?;
            let to = require(t, "to", t.to.as_deref())?;
            let (parent_path, name) = match to.trim_end_matches('/').rsplit_once('/') {
                Some((p, n)) if !n.is_empty() => (if p.is_empty() { "/" } else { p }, n),
                _ => return Err(format!("task `{}`: field `to` = `{to}`: give an absolute path such as /linux", t.name)),
            };
            let parent = existing_dir(t, tree, "to", parent_path)?;
            if tree.lookup(to).is_some() {
                return Err(format!("task `{}`: field `to` = `{to}` exists already", t.name));
            }
            let total = files_below(tree, objects).len() as u64;
            let cfg = CheckoutConfig {
                inflate_ratio: number(t, "inflate_ratio", t.inflate_ratio, 3.0, 0.0, 1000.0)?,
                inflate_ns_per_kib: number(t, "inflate_us_per_kib", t.inflate_us_per_kib, 5.0, 0.0, 1e6)? * 1000.0,
                bs_bytes: bs(128.0)?,
                window: window(t)?,
            };
            Box::new(GitCheckout::new(objects, parent, name.to_string(), total, cfg))
        }
    })
}
