//! The fixture every end-to-end test shares: a temporary backing directory and mountpoint, the
//! mount's process, and a guard that on drop kills whatever the test started and unmounts
//! whatever is still mounted (lazily, then aborting the FUSE connection), even when the test
//! failed half-way.
#![allow(dead_code)]

use iosched_fuse::mount::{abort_connection, mount_at, pidfile};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_iosched-fuse");

pub fn fuse_available() -> bool {
    if !Path::new("/dev/fuse").exists() {
        eprintln!("SKIP: /dev/fuse is missing: FUSE mounts are impossible here");
        return false;
    }
    true
}

pub struct Fixture {
    pub dir: PathBuf,
    pub backing: PathBuf,
    pub mnt: PathBuf,
    pub child: Option<Child>,
    /// Daemons (--daemon) started by the test: killed on drop if still there.
    pub daemons: Vec<i32>,
}

impl Fixture {
    pub fn new(name: &str) -> Fixture {
        let dir = std::env::temp_dir().join(format!("iosched-fuse-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (backing, mnt) = (dir.join("backing"), dir.join("mnt"));
        std::fs::create_dir_all(backing.join("sub")).unwrap();
        std::fs::create_dir_all(&mnt).unwrap();
        Fixture { dir, backing, mnt, child: None, daemons: Vec::new() }
    }

    pub fn is_mounted(&self) -> bool {
        mount_at(&self.mnt).is_some_and(|m| m.is_iosched())
    }

    /// Mounts in the foreground (a child process); returns once the mount is visible.
    pub fn mount(&mut self, extra: &[&str]) {
        self.mount_with_env(extra, &[]);
    }

    /// `mount` with these environment variables set for the mount's process.
    pub fn mount_with_env(&mut self, extra: &[&str], env: &[(&str, &str)]) {
        let child = Command::new(BIN)
            .envs(env.iter().copied())
            .arg("mount")
            .arg(&self.backing)
            .arg(&self.mnt)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start iosched-fuse");
        let pid = child.id() as i32;
        self.child = Some(child);
        let start = Instant::now();
        // Its pidfile (written before it mounts) tells this mount from one left at the same place.
        while !(self.daemon_pid() == Some(pid) && self.is_mounted()) {
            if let Some(st) = self.child.as_mut().unwrap().try_wait().unwrap() {
                let out = self.child.take().unwrap().wait_with_output().unwrap();
                panic!("iosched-fuse exited ({st}) before mounting: {}", String::from_utf8_lossy(&out.stderr));
            }
            assert!(start.elapsed() < Duration::from_secs(10), "not mounted after 10 s");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Mounts with --daemon; returns the daemon's pid (from its pidfile).
    pub fn mount_daemon(&mut self, extra: &[&str]) -> i32 {
        let out = Command::new(BIN)
            .arg("mount")
            .arg(&self.backing)
            .arg(&self.mnt)
            .arg("--daemon")
            .arg("--log")
            .arg(self.dir.join("daemon.log"))
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "mount --daemon: {}", String::from_utf8_lossy(&out.stderr));
        assert!(self.is_mounted());
        let pid = self.daemon_pid().expect("the daemon wrote its pidfile");
        self.daemons.push(pid);
        pid
    }

    pub fn pidfile(&self) -> PathBuf {
        pidfile(&self.mnt)
    }

    pub fn daemon_pid(&self) -> Option<i32> {
        std::fs::read_to_string(self.pidfile()).ok()?.split_whitespace().next()?.parse().ok()
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().expect("mounted in the foreground").id() as i32
    }

    /// Sends `sig` and waits for the mount's process to end (at most 10 s), reading its output
    /// meanwhile (a large summary must not block it on a full pipe).
    pub fn stop(&mut self, sig: i32) -> Output {
        let child = self.child.take().expect("mounted");
        let pid = child.id() as i32;
        unsafe { libc::kill(pid, sig) };
        let start = Instant::now();
        let waiter = std::thread::spawn(move || child.wait_with_output().unwrap());
        while !waiter.is_finished() {
            if start.elapsed() > Duration::from_secs(10) {
                unsafe { libc::kill(pid, libc::SIGKILL) };
                let _ = waiter.join();
                panic!("iosched-fuse did not exit within 10 s of signal {sig}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        waiter.join().unwrap()
    }
}

pub fn alive(pid: i32) -> bool {
    // A zombie is not alive: look at its state.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().next()).is_some_and(|st| st != "Z" && st != "X"),
        Err(_) => false,
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        for &pid in &self.daemons {
            if alive(pid) {
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        while let Some(m) = mount_at(&self.mnt) {
            let c = std::ffi::CString::new(self.mnt.to_str().unwrap()).unwrap();
            abort_connection(&m.dev);
            if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } != 0 {
                break;
            }
        }
        let _ = std::fs::remove_file(self.pidfile());
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn run(cmd: &str, args: &[&str]) -> Output {
    let out = Command::new(cmd).args(args).output().unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(out.status.success(), "{cmd} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 56) as u8
        })
        .collect()
}

pub fn summary_of(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "exit {}: {}", out.status, String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("summary is not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// Runs `f` on a thread and gives up after `limit` (a hung system call must fail the test, not
/// hang it).
pub fn within<T: Send + 'static>(limit: Duration, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).unwrap_or_else(|_| panic!("{what}: no answer within {limit:?} (hung)"))
}
