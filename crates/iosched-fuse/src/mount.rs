//! Mounting, unmounting and the checks before: the parts of real mode that touch the system.

use crate::address_view::AddressView;
use crate::dispatcher::{self, Backend, Config, CsvOut, Msg, Timing};
use crate::exit_watch::{ExitWatcher, REAP_NS};
use crate::fiemap;
use crate::fs::{AddressCounts, RealFs};
use crate::layout::Layout;
use crate::principal::Principals;
use fuser::{MountOption, SessionACL};
use iosched::device::DeviceView;
use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// The file system type real mode mounts (`fuse.iosched` in /proc/self/mountinfo).
pub const SUBTYPE: &str = "iosched";

#[derive(Clone, Debug)]
pub struct MountEntry {
    /// The connection's device number "major:minor" (the minor names /sys/fs/fuse/connections/N).
    pub dev: String,
    pub mount_point: PathBuf,
    pub fstype: String,
    /// The mount's source (`iosched:BACKING_DIR` for real mode).
    pub source: String,
}

impl MountEntry {
    pub fn is_iosched(&self) -> bool {
        self.fstype.starts_with("fuse") && self.source.starts_with("iosched:")
    }
}

/// Undoes mountinfo's octal escapes (\040 for a space, ...).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            out.push(((b[i + 1] - b'0') << 6) | ((b[i + 2] - b'0') << 3) | (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn mounts() -> Vec<MountEntry> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let sep = f.iter().position(|x| *x == "-")?;
            Some(MountEntry {
                dev: f.get(2)?.to_string(),
                mount_point: PathBuf::from(unescape(f.get(4)?)),
                fstype: f.get(sep + 1)?.to_string(),
                source: unescape(f.get(sep + 2)?),
            })
        })
        .collect()
}

/// The last mount at `path` (the visible one), if any.
pub fn mount_at(path: &Path) -> Option<MountEntry> {
    mounts().into_iter().rev().find(|m| m.mount_point == path)
}

/// Absolute form of a path without following it (a dead FUSE mount cannot be followed).
pub fn absolute(p: &Path) -> PathBuf {
    let a = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    // Resolve the parent when possible so that /tmp/../x and symlinked parents match mountinfo.
    match (a.parent().and_then(|d| d.canonicalize().ok()), a.file_name()) {
        (Some(d), Some(n)) => d.join(n),
        _ => a,
    }
}

/// Aborts a FUSE connection (the last resort that releases processes stuck on a dead mount).
pub fn abort_connection(dev: &str) -> bool {
    let minor = dev.rsplit(':').next().unwrap_or("");
    std::fs::write(format!("/sys/fs/fuse/connections/{minor}/abort"), "1").is_ok()
}

fn umount2(path: &Path, flags: i32) -> std::io::Result<()> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    if unsafe { libc::umount2(c.as_ptr(), flags) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Unmounts `path`: normally, or lazily (detached) if it is busy. Returns whether it was lazy.
pub fn unmount(path: &Path) -> Result<bool, String> {
    match umount2(path, 0) {
        Ok(()) => Ok(false),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
            umount2(path, libc::MNT_DETACH).map_err(|e| format!("cannot unmount {}: {e}", path.display()))?;
            Ok(true)
        }
        Err(e) => Err(format!("cannot unmount {}: {e}", path.display())),
    }
}

/// Where the mounting process records its pid (so that `umount` can find it, and the next mount
/// or umount can tell a dead mount from a live one): "PID START_TIME".
pub fn pidfile(mountpoint: &Path) -> PathBuf {
    let name: String = mountpoint.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    std::env::temp_dir().join(format!("iosched-fuse{name}.pid"))
}

fn write_pidfile(mountpoint: &Path) {
    let pid = std::process::id();
    let start = crate::principal::start_time_of(pid).map(|t| t.to_string()).unwrap_or_default();
    let _ = std::fs::write(pidfile(mountpoint), format!("{pid} {start}\n"));
}

/// State of a process as /proc/PID/stat gives it ('R', 'S', 'T' stopped, 'Z' zombie, ...).
pub fn process_state(pid: i32) -> Option<char> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s.rsplit_once(')')?.1.split_whitespace().next()?.chars().next()
}

/// The live process the pidfile of `mountpoint` names (same pid and start time; not a zombie).
pub fn daemon_of(mountpoint: &Path) -> Option<i32> {
    let text = std::fs::read_to_string(pidfile(mountpoint)).ok()?;
    let mut it = text.split_whitespace();
    let pid: i32 = it.next()?.parse().ok()?;
    let start: Option<u64> = it.next().and_then(|s| s.parse().ok());
    if pid <= 0 || matches!(process_state(pid), None | Some('Z') | Some('X')) {
        return None;
    }
    match start {
        Some(t) if crate::principal::start_time_of(pid as u32) != Some(t) => None, // the pid was reused
        _ => Some(pid),
    }
}

/// Whether `path` answers `stat` with ENOTCONN within a second (a FUSE mount whose connection
/// is gone). The probe runs on a thread, so that a live but unresponsive mount cannot hang us.
fn is_disconnected(path: &Path) -> bool {
    let (tx, rx) = mpsc::channel();
    let p = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::metadata(&p).err().and_then(|e| e.raw_os_error()));
    });
    matches!(rx.recv_timeout(Duration::from_secs(1)), Ok(Some(libc::ENOTCONN)))
}

/// An iosched mount at `mountpoint` whose daemon is gone (killed: SIGKILL leaves the mount
/// behind, its connection dead): detached, and its pidfile removed. Returns whether it was one.
/// Nothing here touches a live mount (mountinfo and the pidfile first; stat only with a timeout).
pub fn clean_dead_mount(mountpoint: &Path) -> bool {
    let Some(entry) = mount_at(mountpoint).filter(|m| m.is_iosched()) else { return false };
    if daemon_of(mountpoint).is_some() {
        return false;
    }
    let pidfile_names_a_dead_process = pidfile(mountpoint).exists();
    if !pidfile_names_a_dead_process && !is_disconnected(mountpoint) {
        return false; // no pidfile, and the mount answers: not known to be dead
    }
    abort_connection(&entry.dev);
    let ok = umount2(mountpoint, libc::MNT_DETACH).is_ok();
    let _ = std::fs::remove_file(pidfile(mountpoint));
    ok
}

pub struct MountOptions {
    pub backing: PathBuf,
    pub mountpoint: PathBuf,
    pub cfg: Config,
    pub direct_io: bool,
    pub summary: Option<PathBuf>,
    /// One row per request (same columns as `iosched run --requests-csv`), written as they complete.
    pub requests_csv: Option<PathBuf>,
}

/// The output files, opened (so checked) before anything is mounted.
pub struct Outputs {
    pub summary: Option<File>,
    pub requests_csv: Option<File>,
}

/// Opens `--summary`, `--requests-csv` and `--stats` for writing: a path that cannot be
/// written is refused at mount time, naming the option and the path.
pub fn open_outputs(opts: &MountOptions) -> Result<Outputs, String> {
    let open = |flag: &str, path: &Path, truncate: bool| -> Result<File, String> {
        if path.is_dir() {
            return Err(format!("{flag} {}: is a directory", path.display()));
        }
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create(true);
        if truncate {
            o.truncate(true);
        } else {
            o.append(!flag.ends_with("summary"));
        }
        o.open(path).map_err(|e| format!("{flag} {}: cannot write there: {e}", path.display()))
    };
    if let Some(p) = &opts.cfg.stats_file {
        open("--stats", p, false)?;
    }
    // The summary replaces the file's content only when it is written, at unmount.
    let summary = opts.summary.as_deref().map(|p| open("--summary", p, false)).transpose()?;
    let requests_csv = opts.requests_csv.as_deref().map(|p| open("--requests-csv", p, true)).transpose()?;
    Ok(Outputs { summary, requests_csv })
}

/// Checks everything that can be checked before mounting; returns the canonical paths. A dead
/// mount left at the mountpoint by a killed daemon is removed first.
pub fn validate(backing: &Path, mountpoint: &Path, cfg: &Config) -> Result<(PathBuf, PathBuf), String> {
    let b = backing.canonicalize().map_err(|e| format!("backing directory {}: {e}", backing.display()))?;
    if !b.is_dir() {
        return Err(format!("backing directory {}: not a directory", backing.display()));
    }
    // Mountinfo before any stat of the mountpoint: a stat of a mount whose daemon is stopped hangs.
    let abs = absolute(mountpoint);
    if clean_dead_mount(&abs) {
        eprintln!("iosched mount: removed a dead mount at {} (its daemon had been killed)", abs.display());
    }
    if let Some(e) = mount_at(&abs) {
        return Err(format!("mountpoint {} is in use: {} is mounted there", mountpoint.display(), e.fstype));
    }
    let m = match mountpoint.canonicalize() {
        Ok(m) => m,
        Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => {
            return Err(format!(
                "mountpoint {} is in use by a disconnected FUSE mount (run `iosched umount {}`)",
                mountpoint.display(),
                mountpoint.display()
            ))
        }
        Err(e) => return Err(format!("mountpoint {}: {e}", mountpoint.display())),
    };
    if !m.is_dir() {
        return Err(format!("mountpoint {}: not a directory", mountpoint.display()));
    }
    if let Some(e) = mount_at(&m) {
        return Err(format!("mountpoint {} is in use: {} is mounted there", mountpoint.display(), e.fstype));
    }
    if m.starts_with(&b) || b.starts_with(&m) {
        return Err(format!("the mountpoint {} and the backing directory {} must not contain each other", m.display(), b.display()));
    }
    let first = std::fs::read_dir(&m).map_err(|e| format!("mountpoint {}: {e}", mountpoint.display()))?.filter_map(|e| e.ok()).next();
    if let Some(e) = first {
        return Err(format!(
            "mountpoint {} is not empty (it holds {:?}, ...): the mount would hide its files",
            mountpoint.display(),
            e.file_name()
        ));
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
        .map_err(|e| format!("cannot open /dev/fuse: {e} (FUSE is not available here)"))?;
    dispatcher::check(cfg)?;
    Ok((b, m))
}

fn block_signals() -> libc::sigset_t {
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

/// How long after the first signal a mount still held by open files is aborted.
pub const ABORT_AFTER: Duration = Duration::from_secs(5);

enum Event {
    /// The FUSE session ended by itself (unmounted and released).
    SessionEnded(std::io::Result<()>),
    /// Abort: a second signal, or the first one ABORT_AFTER ago.
    Abort(&'static str),
}

/// How a mount ended.
pub struct Ended {
    pub summary: serde_json::Value,
    /// The connection was aborted (clients still held files): the process must exit now, which
    /// closes /dev/fuse and so ends the connection for good.
    pub aborted: bool,
}

/// Set to `poll` to have exits polled for even where pidfds work (for comparison and tests).
pub const EXITS_ENV: &str = "IOSCHED_FUSE_EXITS";

/// The principals table, with exits reported to the dispatcher as they happen where pidfds and
/// epoll work, else (said in the log) polled for.
fn principals_watching_exits(tx: &mpsc::Sender<Msg>) -> Principals {
    let poll_ms = REAP_NS / 1_000_000;
    if std::env::var(EXITS_ENV).is_ok_and(|v| v == "poll") {
        eprintln!("iosched-fuse: {EXITS_ENV}=poll: process exits are noticed by polling /proc every {poll_ms} ms");
        return Principals::default();
    }
    let tx = tx.clone();
    match ExitWatcher::start(Box::new(move |pid, at| tx.send(Msg::Exited { pid, at }).is_ok())) {
        Ok(w) => Principals::with_exit_watcher(w),
        Err(e) => {
            eprintln!("iosched-fuse: cannot watch process exits ({e}): they are noticed by polling /proc every {poll_ms} ms");
            Principals::default()
        }
    }
}

/// Mounts and serves until unmounted (by a signal or `iosched umount`); returns the summary.
pub fn run(opts: MountOptions) -> Result<Ended, String> {
    let (backing, mountpoint) = validate(&opts.backing, &opts.mountpoint, &opts.cfg)?;
    let outputs = open_outputs(&opts)?;
    // Every thread started from here inherits the mask: signals are taken by sigwait below.
    let sigset = block_signals();
    let disk = dispatcher::disk_for(&opts.cfg.preset)?;
    // The real backend's address space is the backing file system's block device (FIEMAP
    // addresses are on it); files FIEMAP cannot map get the emulated layout inside it.
    let timing = match opts.cfg.backend {
        Backend::Emulated => Timing::Emulated(disk),
        Backend::Real => {
            let bytes = fiemap::backing_device_bytes(&backing)
                .or_else(|| fiemap::filesystem_bytes(&backing))
                .unwrap_or(disk.capacity_sectors() * 512);
            Timing::Real(AddressView::new(bytes / 512, dispatcher::load_calibration(&opts.cfg)?))
        }
    };
    let capacity = dispatcher::view_capacity(&timing);
    let layout = Layout::from_tree_by(&backing, capacity, |_, m| Some((m.dev(), m.ino())));
    let (tx, rx) = mpsc::channel::<Msg>();
    let principals = Arc::new(Mutex::new(principals_watching_exits(&tx)));
    let origin = Instant::now();
    let csv = outputs.requests_csv.map(CsvOut::new);
    let stop_dispatcher = tx.clone();
    let addressed = Arc::new(AddressCounts::default());
    let fs = RealFs::new(backing.clone(), layout, principals.clone(), tx, opts.direct_io, opts.cfg.backend, addressed.clone())?;
    let tables = fs.tables();
    let sizes = tables.clone();
    let dispatcher = dispatcher::spawn(opts.cfg.clone(), rx, origin, principals, timing, csv, Some(Box::new(move || sizes.sizes())))?;
    let direct_io_mmap = fs.direct_io_mmap.clone();
    let mut config = fuser::Config::default();
    config.mount_options = vec![
        MountOption::FSName(format!("iosched:{}", backing.display())),
        MountOption::Subtype(SUBTYPE.into()),
        MountOption::DefaultPermissions,
        MountOption::RW,
        MountOption::NoAtime,
    ];
    let root = unsafe { libc::geteuid() } == 0;
    // As root, other users may use the mount too (allow_other).
    config.acl = if root { SessionACL::All } else { SessionACL::Owner };
    // The pidfile exists before the mount is visible: `iosched umount` right after the mount
    // finds the daemon.
    write_pidfile(&mountpoint);
    let session = match fuser::Session::new(fs, &mountpoint, &config) {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_file(pidfile(&mountpoint));
            let _ = stop_dispatcher.send(Msg::Shutdown);
            let _ = dispatcher.join();
            return Err(format!("cannot mount on {}: {e}", mountpoint.display()));
        }
    };
    let (ev_tx, ev_rx) = mpsc::channel::<Event>();
    {
        let ev_tx = ev_tx.clone();
        std::thread::Builder::new()
            .name("iosched-fuse".into())
            .spawn(move || {
                let r = session.run();
                let _ = ev_tx.send(Event::SessionEnded(r));
            })
            .map_err(|e| e.to_string())?;
    }
    let dev = mount_at(&mountpoint).map(|m| m.dev).unwrap_or_default();
    eprintln!(
        "iosched-fuse: {} mounted on {} (scheduler {}{}, {}{}); pid {}; stop with Ctrl-C or `iosched umount {}`",
        backing.display(),
        mountpoint.display(),
        opts.cfg.scheduler,
        opts.cfg.policy.as_ref().map(|p| format!("({p})")).unwrap_or_default(),
        match opts.cfg.backend {
            Backend::Emulated if opts.cfg.drive.depth > 1 => {
                format!("emulated device {}, {} commands queued in the drive", opts.cfg.preset, opts.cfg.drive.depth)
            }
            Backend::Emulated => format!("emulated device {}", opts.cfg.preset),
            Backend::Real => "real backend".to_string(),
        },
        if opts.direct_io { ", direct I/O" } else { "" },
        std::process::id(),
        mountpoint.display()
    );
    if opts.direct_io && !direct_io_mmap.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("iosched-fuse: this kernel lacks FUSE_DIRECT_IO_ALLOW_MMAP: shared mmap of files fails with ENODEV under --direct-io");
    }
    // Signals: the first unmounts (lazily if busy); if the session has not ended ABORT_AFTER
    // later (clients hold files open), the mount is aborted; a second signal aborts at once.
    {
        let mp = mountpoint.clone();
        std::thread::spawn(move || {
            let mut count = 0;
            loop {
                let mut sig = 0;
                if unsafe { libc::sigwait(&sigset, &mut sig) } != 0 {
                    return;
                }
                count += 1;
                if count > 1 {
                    let _ = ev_tx.send(Event::Abort("second signal"));
                    continue;
                }
                eprintln!("iosched-fuse: signal {sig}: unmounting {}", mp.display());
                match unmount(&mp) {
                    Ok(true) => eprintln!(
                        "iosched-fuse: {} was busy: detached; the connection is aborted in {} s if files are still open",
                        mp.display(),
                        ABORT_AFTER.as_secs()
                    ),
                    Ok(false) => {}
                    Err(e) => eprintln!("iosched-fuse: {e}"),
                }
                let ev_tx = ev_tx.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(ABORT_AFTER);
                    let _ = ev_tx.send(Event::Abort("files still open 5 s after the signal"));
                });
            }
        });
    }
    let aborted = match ev_rx.recv() {
        Ok(Event::SessionEnded(served)) => {
            if let Err(e) = served {
                eprintln!("iosched-fuse: session ended with an error: {e}");
            }
            false
        }
        Ok(Event::Abort(why)) => {
            // Without fusectl the connection cannot be aborted from outside; this process ending
            // closes /dev/fuse, which aborts it: clients then get ENOTCONN, not a hang.
            eprintln!("iosched-fuse: {why}: aborting the FUSE connection (the process exits; open files get ENOTCONN)");
            abort_connection(&dev);
            // If the first signal could not detach it, do so now (only this mount: same device).
            if mount_at(&mountpoint).is_some_and(|m| m.dev == dev) {
                let _ = umount2(&mountpoint, libc::MNT_DETACH);
            }
            true
        }
        Err(_) => false,
    };
    let _ = stop_dispatcher.send(Msg::Shutdown);
    let outcome = dispatcher.join().map_err(|_| "the dispatcher thread panicked".to_string())?;
    let _ = std::fs::remove_file(pidfile(&mountpoint));
    // The simulator's label for the same choice: `anticipatory(aged-sptf)` with or without --policy.
    let label = iosched::sched::registry::default_label(&opts.cfg.scheduler, opts.cfg.policy.as_deref());
    let mut extra = serde_json::json!({
        "mode": "real",
        "backing": backing,
        "mountpoint": mountpoint,
        "direct_io": opts.direct_io,
        "backend": opts.cfg.backend.name(),
        "mounted_s": origin.elapsed().as_secs_f64(),
        "aborted": aborted,
        "tables": tables.sizes(),
    });
    if opts.cfg.backend == Backend::Emulated {
        // The drive's command queue, as a scenario's summary has it (depth 1: none).
        extra["drive_queue"] = serde_json::to_value(opts.cfg.drive).expect("serializes");
    }
    if opts.cfg.backend == Backend::Real {
        use std::sync::atomic::Ordering::Relaxed;
        extra["addresses"] = serde_json::json!({"fiemap": addressed.fiemap.load(Relaxed), "layout": addressed.layout.load(Relaxed)});
    }
    let summary = dispatcher::summary_json(&outcome, &opts.cfg, &label, &backing.display().to_string(), extra);
    let mut errors = Vec::new();
    if let (Some(f), Some(path)) = (&outputs.summary, &opts.summary) {
        let text = format!("{summary}\n");
        if let Err(e) = f.set_len(0).and_then(|_| f.write_all_at(text.as_bytes(), 0)).and_then(|_| (&*f).flush()) {
            errors.push(format!("cannot write the summary to {}: {e}", path.display()));
        }
    }
    if let (Some(Err(e)), Some(path)) = (&outcome.csv, &opts.requests_csv) {
        errors.push(format!("cannot write the requests to {}: {e}", path.display()));
    }
    if !errors.is_empty() {
        // The summary still goes to stdout, so nothing is lost.
        println!("{summary}");
        return Err(errors.join("; "));
    }
    Ok(Ended { summary, aborted })
}
