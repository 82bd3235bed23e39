//! Real mode's command line, shared by the `iosched-fuse` binary and the Python package's
//! `iosched-fuse` entry point (which runs it inside the extension module, so an installed wheel
//! needs no separate binary). `self_command` is how to start this same program again (the
//! daemon re-executes itself): the binary's own path, or `python -m iosched._fuse`.
//!
//!   iosched-fuse mount BACKING_DIR MOUNTPOINT [--scheduler NAME] [--policy NAME] [--set T=V]...
//!                [--device PRESET] [--queue-depth N] [--queue-order rpo|fifo] [--queue-aging-ms MS]
//!                [--backend emulated|real] [--calibration FILE] [--direct-io] [--daemon] [--summary FILE] [--stats FILE]
//!                [--stats-interval SECONDS] [--log FILE] [--requests-csv FILE]
//!   iosched-fuse umount MOUNTPOINT [--timeout SECONDS]
//!   iosched-fuse calibrate PATH [--samples N] [--seed N] [--max-idle-ms MS] [--out FILE]

use crate::dispatcher::{Backend, Config};
use crate::mount::{self, MountOptions};
use iosched::device::drive_queue::FirmwareOrder;
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const USAGE: &str = "usage:
  iosched-fuse mount BACKING_DIR MOUNTPOINT [--scheduler NAME] [--policy NAME] [--set TUNABLE=VALUE]...
               [--device PRESET] [--queue-depth N] [--queue-order rpo|fifo] [--queue-aging-ms MS]
               [--backend emulated|real] [--calibration FILE] [--direct-io] [--daemon] [--summary FILE] [--stats FILE]
               [--stats-interval SECONDS] [--log FILE] [--requests-csv FILE]
  iosched-fuse umount MOUNTPOINT [--timeout SECONDS]
  iosched-fuse calibrate PATH [--samples N] [--seed N] [--max-idle-ms MS] [--out FILE]";

fn fail(msg: impl std::fmt::Display) -> u8 {
    eprintln!("iosched mount: {msg}");
    2
}

struct Parsed {
    opts: MountOptions,
    daemon: bool,
    daemon_child: bool,
    log: Option<PathBuf>,
}

fn parse_mount(args: &[String]) -> Result<Parsed, String> {
    let mut pos = Vec::new();
    let mut cfg = Config {
        scheduler: "fcfs".into(),
        policy: None,
        tunables: BTreeMap::new(),
        preset: "ibm-deskstar-34gxp".into(),
        backend: Default::default(),
        calibration: None,
        stats_interval_s: 0.0,
        stats_file: None,
        drive: Default::default(),
    };
    // The drive's command queue, as a scenario's [device] queue_depth / queue_order /
    // queue_aging_ms (checked against the preset once it is known).
    let mut queue = iosched::scenario::DeviceSection::default();
    let (mut direct_io, mut daemon, mut daemon_child, mut summary, mut log, mut interval) = (false, false, false, None, None, None);
    let mut requests_csv = None;
    // --set values, parsed once the scheduler is known (an error names the tunable's unit and range).
    let mut sets: Vec<(String, String)> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut value = |name: &str| inline.clone().or_else(|| it.next().cloned()).ok_or_else(|| format!("{name} needs a value"));
        match flag.as_str() {
            "--scheduler" => cfg.scheduler = value("--scheduler")?,
            "--policy" => cfg.policy = Some(value("--policy")?),
            "--device" => cfg.preset = value("--device")?,
            "--queue-depth" => {
                let v = value("--queue-depth")?;
                queue.queue_depth = Some(
                    v.trim()
                        .parse::<u32>()
                        .map_err(|_| format!("--queue-depth {v}: expected a whole number of commands (1 = no queue)"))?,
                );
            }
            "--queue-order" => queue.queue_order = Some(value("--queue-order")?),
            "--queue-aging-ms" => {
                let v = value("--queue-aging-ms")?;
                queue.queue_aging_ms = Some(v.trim().parse::<f64>().map_err(|_| format!("--queue-aging-ms {v}: expected milliseconds"))?);
            }
            "--backend" => cfg.backend = Backend::parse(&value("--backend")?)?,
            "--calibration" => cfg.calibration = Some(PathBuf::from(value("--calibration")?)),
            "--set" => {
                let v = value("--set")?;
                let (k, x) = v.split_once('=').ok_or_else(|| format!("--set {v}: expected TUNABLE=VALUE"))?;
                sets.push((k.trim().to_string(), x.to_string()));
            }
            "--direct-io" => direct_io = true,
            "--daemon" => daemon = true,
            "--daemon-child" => daemon_child = true,
            "--summary" => summary = Some(PathBuf::from(value("--summary")?)),
            "--stats" => cfg.stats_file = Some(PathBuf::from(value("--stats")?)),
            "--log" => log = Some(PathBuf::from(value("--log")?)),
            "--requests-csv" => requests_csv = Some(PathBuf::from(value("--requests-csv")?)),
            "--stats-interval" => {
                let v = value("--stats-interval")?;
                let min = crate::dispatcher::MIN_STATS_INTERVAL_S;
                interval = Some(
                    v.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite() && (*x == 0.0 || *x >= min))
                        .ok_or_else(|| format!("--stats-interval {v}: must be 0 (no statistics) or at least {min} seconds"))?,
                )
            }
            f if f.starts_with('-') => return Err(format!("unknown option {f}\n{USAGE}")),
            _ => pos.push(a.clone()),
        }
    }
    for (k, x) in sets {
        let value = match x.trim() {
            "true" => Some(1.0),
            "false" => Some(0.0),
            t => t.parse::<f64>().ok(),
        };
        let value = value.ok_or_else(|| {
            let takes = iosched::sched::registry::tunable(&cfg.scheduler, cfg.policy.as_deref(), &k)
                .map_or_else(|| "a number".to_string(), |t| t.accepted());
            format!("--set {k}={x}: `{x}` is not a number; `{k}` takes {takes}")
        })?;
        cfg.tunables.insert(k, value);
    }
    if pos.len() != 2 {
        return Err(format!("expected BACKING_DIR MOUNTPOINT\n{USAGE}"));
    }
    cfg.drive = drive_queue_of(&queue, &cfg)?;
    // Live statistics every second on stderr by default when a stats file is asked for or in the
    // foreground; 0 turns them off.
    cfg.stats_interval_s = interval.unwrap_or(if cfg.stats_file.is_some() { 1.0 } else { 0.0 });
    let opts = MountOptions { backing: PathBuf::from(&pos[0]), mountpoint: PathBuf::from(&pos[1]), cfg, direct_io, summary, requests_csv };
    Ok(Parsed { opts, daemon, daemon_child, log })
}

/// The drive's command queue from the --queue-* options: the scenario's rules and limits (the
/// preset's maximum depth), its errors in the options' names.
fn drive_queue_of(
    queue: &iosched::scenario::DeviceSection,
    cfg: &Config,
) -> Result<iosched::device::drive_queue::DriveQueueConfig, String> {
    let asked = queue.queue_depth.is_some() || queue.queue_order.is_some() || queue.queue_aging_ms.is_some();
    if asked && cfg.backend == Backend::Real {
        return Err(
            "--queue-depth, --queue-order and --queue-aging-ms are for the emulated drive (--backend real serves one request at a time)"
                .into(),
        );
    }
    if iosched::device::presets::preset(&cfg.preset).is_none() {
        return Ok(Default::default()); // the unknown preset is reported by its own check
    }
    iosched::scenario::drive_queue(queue, Some(&cfg.preset)).map_err(|e| {
        e.replace("field `device.queue_depth`", "--queue-depth")
            .replace("field `device.queue_order`", "--queue-order")
            .replace("field `device.queue_aging_ms`", "--queue-aging-ms")
    })
}

fn cmd_mount(args: &[String], self_command: &[String]) -> u8 {
    let p = match parse_mount(args) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    if p.daemon && !p.daemon_child {
        return daemonize(&p, self_command);
    }
    if p.daemon_child {
        unsafe { libc::setsid() };
    }
    match mount::run(p.opts) {
        Ok(ended) => {
            println!("{}", ended.summary);
            if ended.aborted {
                // Clients still hold files of the mount: this process ending closes /dev/fuse,
                // which aborts the connection (its FUSE thread is still reading it).
                use std::io::Write;
                let _ = std::io::stdout().flush();
                let _ = std::io::stderr().flush();
                std::process::exit(0);
            }
            0
        }
        Err(e) => fail(e),
    }
}

/// Starts the mount in a detached child (new session, output to a log file) and returns once the
/// mount is visible, or with the child's error.
fn daemonize(p: &Parsed, self_command: &[String]) -> u8 {
    let (backing, mountpoint) = match mount::validate(&p.opts.backing, &p.opts.mountpoint, &p.opts.cfg) {
        Ok(x) => x,
        Err(e) => return fail(e),
    };
    // Output paths are refused here, before the daemon starts.
    if let Err(e) = mount::open_outputs(&p.opts) {
        return fail(e);
    }
    let log = p
        .log
        .as_ref()
        .map(|l| std::env::current_dir().unwrap_or_default().join(l))
        .unwrap_or_else(|| mount::pidfile(&mountpoint).with_extension("log"));
    let out = match std::fs::OpenOptions::new().create(true).append(true).open(&log) {
        Ok(f) => f,
        Err(e) => return fail(format!("cannot open the log {}: {e}", log.display())),
    };
    let err = out.try_clone().expect("dup log");
    // The child gets the parsed options back, with every path absolute (it runs from /).
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let abs = |x: &Path| cwd.join(x).display().to_string();
    let o = &p.opts;
    let mut child_args: Vec<String> = vec!["mount".into(), backing.display().to_string(), mountpoint.display().to_string()];
    child_args.extend(["--scheduler".into(), o.cfg.scheduler.clone(), "--device".into(), o.cfg.preset.clone()]);
    child_args.extend(["--backend".into(), o.cfg.backend.name().into()]);
    if let Some(f) = &o.cfg.calibration {
        child_args.extend(["--calibration".into(), abs(f)]);
    }
    if let Some(pol) = &o.cfg.policy {
        child_args.extend(["--policy".into(), pol.clone()]);
    }
    for (k, v) in &o.cfg.tunables {
        child_args.extend(["--set".into(), format!("{k}={v}")]);
    }
    child_args.extend(["--stats-interval".into(), o.cfg.stats_interval_s.to_string()]);
    if let Some(f) = &o.cfg.stats_file {
        child_args.extend(["--stats".into(), abs(f)]);
    }
    if let Some(f) = &o.summary {
        child_args.extend(["--summary".into(), abs(f)]);
    }
    if let Some(f) = &o.requests_csv {
        child_args.extend(["--requests-csv".into(), abs(f)]);
    }
    if o.direct_io {
        child_args.push("--direct-io".into());
    }
    // The drive's command queue as parsed (depth 1: none to pass).
    if o.cfg.drive.depth > 1 {
        child_args.extend(["--queue-depth".into(), o.cfg.drive.depth.to_string()]);
        match o.cfg.drive.order {
            FirmwareOrder::Fifo => child_args.extend(["--queue-order".into(), "fifo".into()]),
            FirmwareOrder::Rpo { aging_ns } => {
                child_args.extend(["--queue-order".into(), "rpo".into(), "--queue-aging-ms".into(), (aging_ns as f64 / 1e6).to_string()])
            }
        }
    }
    child_args.push("--daemon-child".into());
    let Some((exe, exe_args)) = self_command.split_first() else {
        return fail("cannot start the daemon: no command to start it with");
    };
    let mut child = match Command::new(exe)
        .args(exe_args)
        .args(&child_args)
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return fail(format!("cannot start the daemon: {e}")),
    };
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let last: Vec<&str> = text.lines().rev().take(5).collect();
            return fail(format!(
                "the daemon exited ({status}) before mounting: {}",
                last.into_iter().rev().collect::<Vec<_>>().join("\n").trim_start_matches("iosched mount: ")
            ));
        }
        if mount::mount_at(&mountpoint).is_some_and(|m| m.is_iosched()) {
            eprintln!(
                "iosched mount: {} mounted on {} in the background (pid {}); log {}; stop with `iosched umount {}`",
                backing.display(),
                mountpoint.display(),
                child.id(),
                log.display(),
                mountpoint.display()
            );
            return 0;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            if let Some(m) = mount::mount_at(&mountpoint).filter(|m| m.is_iosched()) {
                let _ = mount::unmount(&mountpoint);
                mount::abort_connection(&m.dev);
            }
            let _ = std::fs::remove_file(mount::pidfile(&mountpoint));
            return fail("the daemon did not mount within 20 s (killed)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn cmd_umount(args: &[String]) -> u8 {
    let mut timeout = 10.0;
    let mut pos = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--timeout" => match it.next().map(|v| (v, v.parse::<f64>())) {
                Some((_, Ok(t))) if t.is_finite() && t >= 0.0 => timeout = t,
                Some((v, _)) => return umount_fail(format!("--timeout {v}: not a number of seconds >= 0")),
                None => return umount_fail("--timeout needs a number of seconds"),
            },
            f if f.starts_with('-') => return umount_fail(format!("unknown option {f}\n{USAGE}")),
            _ => pos.push(a.clone()),
        }
    }
    if pos.len() != 1 {
        return umount_fail(format!("expected MOUNTPOINT\n{USAGE}"));
    }
    // Nothing here stats the mountpoint: a mount whose daemon is stopped would hang the call.
    let mp = mount::absolute(Path::new(&pos[0]));
    let Some(entry) = mount::mount_at(&mp) else {
        if mount::daemon_of(&mp).is_none() && mount::pidfile(&mp).exists() {
            let _ = std::fs::remove_file(mount::pidfile(&mp));
        }
        eprintln!("iosched umount: {} is not mounted", mp.display());
        return 1;
    };
    if !entry.is_iosched() {
        eprintln!("iosched umount: {} is a {} mount of {}, not an iosched one", mp.display(), entry.fstype, entry.source);
        return 1;
    }
    let Some(pid) = mount::daemon_of(&mp) else {
        // The daemon is gone (SIGKILL): the connection died with it; remove the dead mount.
        mount::abort_connection(&entry.dev);
        let lazy = match mount::unmount(&mp) {
            Ok(l) => l,
            Err(e) => return umount_fail(e),
        };
        let _ = std::fs::remove_file(mount::pidfile(&mp));
        eprintln!(
            "iosched umount: {}: its daemon was gone (killed?); the dead mount is removed{}",
            mp.display(),
            if lazy { " (detached)" } else { "" }
        );
        return 0;
    };
    // The daemon unmounts on SIGTERM (lazily if busy; aborting the connection 5 s later if files
    // are still open), writes its summary and exits. A stopped daemon is continued first.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    // A SIGSTOP sent just before may not have stopped it yet (the daemon stops when it next
    // runs, and then holds the SIGTERM pending): so it is looked at while we wait, not once.
    let stopped = |pid: i32| matches!(mount::process_state(pid), Some('T') | Some('t'));
    let mut told = false;
    let start = Instant::now();
    let gone = |pid: i32| matches!(mount::process_state(pid), None | Some('Z') | Some('X'));
    while !gone(pid) && start.elapsed().as_secs_f64() < timeout {
        if stopped(pid) {
            if !told {
                eprintln!("iosched umount: the daemon (pid {pid}) was stopped: continuing it so that it can finish");
                told = true;
            }
            unsafe { libc::kill(pid, libc::SIGCONT) };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if !gone(pid) {
        eprintln!("iosched umount: the daemon (pid {pid}) is still running after {timeout} s: killing it (its summary is lost)");
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let start = Instant::now();
        while !gone(pid) && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        if mount::mount_at(&mp).is_some_and(|m| m.dev == entry.dev) {
            let _ = mount::unmount(&mp);
        }
        let _ = std::fs::remove_file(mount::pidfile(&mp));
        return 1;
    }
    if mount::mount_at(&mp).is_some_and(|m| m.dev == entry.dev) {
        // The daemon ended without unmounting (it could not): the dead mount goes too.
        let _ = mount::unmount(&mp);
    }
    eprintln!("iosched umount: {} unmounted", mp.display());
    0
}

fn umount_fail(msg: impl std::fmt::Display) -> u8 {
    eprintln!("iosched umount: {msg}");
    2
}

/// Times O_DIRECT read pairs on a real file or block device and fits the positioning curve
/// (Iyer & Druschel's calibrated estimator); prints the JSON calibration, or writes it to --out.
fn cmd_calibrate(args: &[String]) -> u8 {
    use iosched::device::calibration::{measure, CalibrationOptions};
    use rand::SeedableRng;
    let err = |m: String| {
        eprintln!("iosched calibrate: {m}");
        2
    };
    let mut opts = CalibrationOptions { samples: 8, max_idle_ns: 5_000_000, ..Default::default() };
    let (mut seed, mut out, mut pos) = (2001u64, None::<PathBuf>, Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or_else(|| format!("{name} needs a value"));
        let parsed: Result<(), String> = match a.as_str() {
            "--samples" => {
                value("--samples").and_then(|v| v.parse().map(|n| opts.samples = n).map_err(|_| format!("--samples {v}: not a number")))
            }
            "--seed" => value("--seed").and_then(|v| v.parse().map(|n| seed = n).map_err(|_| format!("--seed {v}: not a number"))),
            "--max-idle-ms" => value("--max-idle-ms").and_then(|v| match v.parse::<f64>() {
                Ok(ms) if ms.is_finite() && ms >= 0.0 => {
                    opts.max_idle_ns = (ms * 1e6) as u64;
                    Ok(())
                }
                _ => Err(format!("--max-idle-ms {v}: not a number >= 0")),
            }),
            "--out" => value("--out").map(|v| out = Some(PathBuf::from(v))),
            f if f.starts_with('-') => Err(format!("unknown option {f}\n{USAGE}")),
            _ => {
                pos.push(a.clone());
                Ok(())
            }
        };
        if let Err(e) = parsed {
            return err(e);
        }
    }
    if pos.len() != 1 {
        return err(format!("expected PATH (a file or block device)\n{USAGE}"));
    }
    let path = PathBuf::from(&pos[0]);
    let mut probe = match crate::probe::RealProbe::open(&path) {
        Ok(p) => p,
        Err(e) => return err(e),
    };
    if !probe.direct {
        eprintln!("iosched calibrate: {}: O_DIRECT refused; the page cache may answer the reads", path.display());
    }
    let cal = match measure(&mut probe, &opts, &mut rand_pcg::Pcg64::seed_from_u64(seed)) {
        Ok(c) => c,
        Err(e) => return err(format!("{}: {e}", path.display())),
    };
    if let Some(e) = probe.error {
        return err(format!("{}: {e}", path.display()));
    }
    let doc = serde_json::json!({"path": path, "direct_io": probe.direct, "reads": probe.reads, "calibration": cal});
    match out {
        Some(f) => {
            if let Err(e) = std::fs::write(&f, format!("{doc}\n")) {
                return err(format!("cannot write {}: {e}", f.display()));
            }
            eprintln!("iosched calibrate: {} reads of {}; curve written to {}", probe.reads, path.display(), f.display());
        }
        None => println!("{doc}"),
    }
    0
}

/// Runs one command line (`args` without the program name); `self_command` starts this program
/// again (for `mount --daemon`). Returns the exit status.
pub fn run(args: &[String], self_command: &[String]) -> u8 {
    match args.first().map(String::as_str) {
        Some("mount") => cmd_mount(&args[1..], self_command),
        Some("umount") | Some("unmount") => cmd_umount(&args[1..]),
        Some("calibrate") => cmd_calibrate(&args[1..]),
        Some("-h") | Some("--help") => {
            println!("{USAGE}");
            0
        }
        _ => {
            eprintln!("{USAGE}");
            2
        }
    }
}
