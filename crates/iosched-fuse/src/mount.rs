//! Mounting, unmounting and the checks before: the parts of real mode that touch the system.

use crate::address_view::AddressView;
use crate::dispatcher::{self, Backend, Config, Msg, Timing};
use crate::fiemap;
use crate::fs::{AddressCounts, RealFs};
use crate::layout::Layout;
use crate::principal::Principals;
use fuser::{MountOption, SessionACL};
use iosched::device::DeviceView;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
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

/// Where the mounting process records its pid (so that `umount` can wait for its summary).
pub fn pidfile(mountpoint: &Path) -> PathBuf {
    let name: String = mountpoint.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    std::env::temp_dir().join(format!("iosched-fuse{name}.pid"))
}

pub struct MountOptions {
    pub backing: PathBuf,
    pub mountpoint: PathBuf,
    pub cfg: Config,
    pub direct_io: bool,
    pub summary: Option<PathBuf>,
    /// One row per request (same columns as `iosched run --requests-csv`), written at unmount.
    pub requests_csv: Option<PathBuf>,
}

/// Checks everything that can be checked before mounting; returns the canonical paths.
pub fn validate(backing: &Path, mountpoint: &Path, cfg: &Config) -> Result<(PathBuf, PathBuf), String> {
    let b = backing.canonicalize().map_err(|e| format!("backing directory {}: {e}", backing.display()))?;
    if !b.is_dir() {
        return Err(format!("backing directory {}: not a directory", backing.display()));
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

/// Mounts and serves until unmounted (by a signal or `iosched umount`); returns the summary.
pub fn run(opts: MountOptions) -> Result<serde_json::Value, String> {
    let (backing, mountpoint) = validate(&opts.backing, &opts.mountpoint, &opts.cfg)?;
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
    let principals = Arc::new(Mutex::new(Principals::default()));
    let (tx, rx) = mpsc::channel::<Msg>();
    let origin = Instant::now();
    let dispatcher = dispatcher::spawn(opts.cfg.clone(), rx, origin, principals.clone(), timing)?;
    let addressed = Arc::new(AddressCounts::default());
    let fs = RealFs::new(backing.clone(), layout, principals, tx, opts.direct_io, opts.cfg.backend, addressed.clone())?;
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
    let session = fuser::Session::new(fs, &mountpoint, &config).map_err(|e| format!("cannot mount on {}: {e}", mountpoint.display()))?;
    let serve = std::thread::Builder::new().name("iosched-fuse".into()).spawn(move || session.run()).map_err(|e| e.to_string())?;
    let dev = mount_at(&mountpoint).map(|m| m.dev).unwrap_or_default();
    let pidfile = pidfile(&mountpoint);
    let _ = std::fs::write(&pidfile, std::process::id().to_string());
    eprintln!(
        "iosched-fuse: {} mounted on {} (scheduler {}{}, {}{}); pid {}; stop with Ctrl-C or `iosched umount {}`",
        backing.display(),
        mountpoint.display(),
        opts.cfg.scheduler,
        opts.cfg.policy.as_ref().map(|p| format!("({p})")).unwrap_or_default(),
        match opts.cfg.backend {
            Backend::Emulated => format!("emulated device {}", opts.cfg.preset),
            Backend::Real => "real backend".to_string(),
        },
        if opts.direct_io { ", direct I/O" } else { "" },
        std::process::id(),
        mountpoint.display()
    );
    // Signals: the first unmounts (lazily if busy, aborting the connection if it is still held
    // after 5 s); a second one aborts at once.
    {
        let (mp, dev) = (mountpoint.clone(), dev.clone());
        std::thread::spawn(move || {
            let mut count = 0;
            loop {
                let mut sig = 0;
                if unsafe { libc::sigwait(&sigset, &mut sig) } != 0 {
                    return;
                }
                count += 1;
                if count > 1 {
                    eprintln!("iosched-fuse: second signal: aborting the connection");
                    abort_connection(&dev);
                    continue;
                }
                eprintln!("iosched-fuse: signal {sig}: unmounting {}", mp.display());
                match unmount(&mp) {
                    Ok(true) => {
                        eprintln!("iosched-fuse: {} was busy: detached; aborting in 5 s if still in use", mp.display());
                        let dev = dev.clone();
                        std::thread::spawn(move || {
                            std::thread::sleep(Duration::from_secs(5));
                            abort_connection(&dev);
                        });
                    }
                    Ok(false) => {}
                    Err(e) => {
                        eprintln!("iosched-fuse: {e}; aborting the connection");
                        abort_connection(&dev);
                    }
                }
            }
        });
    }
    let served = serve.join();
    let outcome = dispatcher.join().map_err(|_| "the dispatcher thread panicked".to_string())?;
    let _ = std::fs::remove_file(&pidfile);
    if let Ok(Err(e)) = &served {
        eprintln!("iosched-fuse: session ended with an error: {e}");
    }
    let label = match &opts.cfg.policy {
        Some(p) => format!("{}({p})", opts.cfg.scheduler),
        None => opts.cfg.scheduler.clone(),
    };
    let extra = serde_json::json!({
        "mode": "real",
        "backing": backing,
        "mountpoint": mountpoint,
        "direct_io": opts.direct_io,
        "backend": opts.cfg.backend.name(),
        "mounted_s": origin.elapsed().as_secs_f64(),
    });
    let mut extra = extra;
    if opts.cfg.backend == Backend::Real {
        use std::sync::atomic::Ordering::Relaxed;
        extra["addresses"] = serde_json::json!({"fiemap": addressed.fiemap.load(Relaxed), "layout": addressed.layout.load(Relaxed)});
    }
    let summary = dispatcher::summary_json(&outcome, &opts.cfg, &label, &backing.display().to_string(), extra);
    if let Some(path) = &opts.summary {
        std::fs::write(path, format!("{summary}\n")).map_err(|e| format!("cannot write the summary to {}: {e}", path.display()))?;
    }
    if let Some(path) = &opts.requests_csv {
        dispatcher::write_requests_csv(&outcome, path).map_err(|e| format!("cannot write the requests to {}: {e}", path.display()))?;
    }
    Ok(summary)
}
