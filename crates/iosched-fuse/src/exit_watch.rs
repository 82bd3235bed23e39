//! Prompt notice of process exits: a pidfd (pidfd_open(2)) per process that does I/O, all in one
//! epoll set that a thread waits on. A pidfd becomes readable when its process exits (before it
//! is reaped), so the exit is reported within the thread's wake-up latency, not at the next
//! /proc poll. Anticipatory schedulers need this: a wait on a process that has already exited
//! must end at its exit (Linux: as_exit_io_context), not up to a poll interval later.

use iosched::time::Nanos;
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// How often /proc is polled for the exits of processes without a pidfd (this watcher reports
/// the others as they happen), and the requests CSV flushed (by the dispatcher).
pub const REAP_NS: Nanos = 250_000_000;
/// The epoll key of the stop eventfd (pids are below 2^22, so no pid is this).
const STOP_KEY: u64 = u64::MAX;
/// Events taken per epoll_wait.
const EVENTS_PER_WAIT: usize = 32;

/// Called on the watcher's thread with the pid and the instant its exit was seen; returns false
/// when nobody listens any more (the thread then ends).
pub type OnExit = Box<dyn FnMut(u32, Instant) -> bool + Send>;

/// Why a process is not watched (its exit must then be polled for).
#[derive(Debug)]
pub enum NotWatched {
    /// The process is already gone (pidfd_open: ESRCH).
    Gone,
    /// pidfds or the watcher are unavailable; the first such failure is logged.
    Unavailable(io::Error),
    /// This process only (e.g. EMFILE).
    Failed(io::Error),
}

pub struct ExitWatcher {
    epoll: Arc<OwnedFd>,
    stop: Arc<OwnedFd>,
    /// The open pidfds by pid; an fd leaves the epoll set when it is closed (dropped here).
    pidfds: Arc<Mutex<HashMap<u32, OwnedFd>>>,
    /// Set when pidfd_open is refused for good (EPERM, ENOSYS) or the thread has ended.
    unavailable: Arc<AtomicBool>,
    warned: AtomicBool,
    thread: Option<JoinHandle<()>>,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn owned(fd: libc::c_int) -> OwnedFd {
    // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

fn epoll_add(epoll: &OwnedFd, fd: &OwnedFd, key: u64) -> io::Result<()> {
    let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: key };
    // SAFETY: both fds are open; `ev` lives across the call.
    cvt(unsafe { libc::epoll_ctl(epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd.as_raw_fd(), &mut ev) }).map(|_| ())
}

/// A pidfd for `pid` (close-on-exec, as pidfd_open always sets it).
pub fn pidfd_open(pid: u32) -> io::Result<OwnedFd> {
    // SAFETY: a plain system call with integer arguments.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0 as libc::c_uint) };
    cvt(fd as libc::c_int).map(owned)
}

impl ExitWatcher {
    /// Starts the watching thread; `on_exit` is called once per watched process that exits.
    pub fn start(on_exit: OnExit) -> io::Result<ExitWatcher> {
        // SAFETY: plain system calls; the fds are owned at once.
        let epoll = owned(cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?);
        let stop = owned(cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) })?);
        epoll_add(&epoll, &stop, STOP_KEY)?;
        let (epoll, stop) = (Arc::new(epoll), Arc::new(stop));
        let pidfds: Arc<Mutex<HashMap<u32, OwnedFd>>> = Arc::default();
        let unavailable = Arc::new(AtomicBool::new(false));
        let thread = {
            let (epoll, pidfds, unavailable) = (epoll.clone(), pidfds.clone(), unavailable.clone());
            std::thread::Builder::new().name("iosched-exits".into()).spawn(move || {
                if let Err(e) = wait_loop(&epoll, &pidfds, on_exit) {
                    eprintln!("iosched-fuse: exit watcher: epoll_wait: {e}: process exits are noticed by polling /proc");
                }
                unavailable.store(true, Ordering::Relaxed);
            })?
        };
        Ok(ExitWatcher { epoll, stop, pidfds, unavailable, warned: AtomicBool::new(false), thread: Some(thread) })
    }

    /// Whether exits reported as watched will still be reported (false once the thread ended).
    pub fn running(&self) -> bool {
        !self.unavailable.load(Ordering::Relaxed)
    }

    /// Watches `pid` (a process, not a thread: a thread group id). Call it while the process
    /// is known to be alive (it is in a FUSE request), so that the pid names that process.
    pub fn watch(&self, pid: u32) -> Result<(), NotWatched> {
        if !self.running() {
            return Err(NotWatched::Unavailable(io::Error::other("exit watcher stopped")));
        }
        let fd = match pidfd_open(pid) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Err(NotWatched::Gone),
            Err(e) => {
                let for_good = matches!(e.raw_os_error(), Some(libc::EPERM | libc::ENOSYS));
                if for_good {
                    self.unavailable.store(true, Ordering::Relaxed);
                }
                if !self.warned.swap(true, Ordering::Relaxed) {
                    eprintln!(
                        "iosched-fuse: pidfd_open({pid}): {e}: {} exits are noticed by polling /proc every {} ms",
                        if for_good { "process" } else { "this process's (and any other such)" },
                        REAP_NS / 1_000_000
                    );
                }
                return Err(if for_good { NotWatched::Unavailable(e) } else { NotWatched::Failed(e) });
            }
        };
        // The map stays locked until the fd is in it: the thread, woken by an exit at once,
        // must find (and close) it, or the level-triggered event would be reported again.
        let mut fds = self.pidfds.lock().unwrap_or_else(|p| p.into_inner());
        epoll_add(&self.epoll, &fd, pid as u64).map_err(NotWatched::Failed)?;
        fds.insert(pid, fd);
        Ok(())
    }

    /// Processes watched and not yet exited.
    pub fn watched(&self) -> usize {
        self.pidfds.lock().map_or(0, |m| m.len())
    }
}

/// Waits for exits until the stop eventfd is written or nobody listens.
fn wait_loop(epoll: &OwnedFd, pidfds: &Mutex<HashMap<u32, OwnedFd>>, mut on_exit: OnExit) -> io::Result<()> {
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; EVENTS_PER_WAIT];
    loop {
        // SAFETY: `events` holds EVENTS_PER_WAIT entries.
        let n = unsafe { libc::epoll_wait(epoll.as_raw_fd(), events.as_mut_ptr(), EVENTS_PER_WAIT as libc::c_int, -1) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let at = Instant::now();
        for ev in &events[..n as usize] {
            let key = ev.u64;
            if key == STOP_KEY {
                return Ok(());
            }
            let pid = key as u32;
            // Closing the pidfd takes it out of the epoll set.
            let was_watched = pidfds.lock().unwrap_or_else(|p| p.into_inner()).remove(&pid).is_some();
            if was_watched && !on_exit(pid, at) {
                return Ok(());
            }
        }
    }
}

impl Drop for ExitWatcher {
    fn drop(&mut self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from `one` to the eventfd.
        let _ = unsafe { libc::write(self.stop.as_raw_fd(), (&one as *const u64).cast(), 8) };
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    use std::time::Duration;

    fn pidfds_work() -> bool {
        match pidfd_open(std::process::id()) {
            Ok(_) => true,
            Err(e) => {
                eprintln!("SKIP: pidfd_open refused here ({e}): exits can only be polled");
                false
            }
        }
    }

    #[test]
    fn an_exit_is_reported_within_milliseconds() {
        if !pidfds_work() {
            return;
        }
        let (tx, rx) = mpsc::channel();
        let w = ExitWatcher::start(Box::new(move |pid, at| tx.send((pid, at)).is_ok())).unwrap();
        // `cat` exits when its input closes: the test decides the moment of the exit.
        let mut child = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
        let pid = child.id();
        w.watch(pid).unwrap();
        assert_eq!(w.watched(), 1);
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err(), "reported while still running");
        let closed = Instant::now();
        drop(child.stdin.take());
        let (seen, at) = rx.recv_timeout(Duration::from_secs(5)).expect("no exit reported within 5 s");
        let _ = child.wait();
        assert_eq!(seen, pid);
        let delay = at.saturating_duration_since(closed);
        // Polling /proc every 250 ms would average 125 ms.
        assert!(delay < Duration::from_millis(50), "exit reported {delay:?} after the input closed");
        assert_eq!(w.watched(), 0, "the pidfd is closed once reported");
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err(), "reported twice");
    }

    #[test]
    fn a_gone_process_is_not_watched_and_drop_stops_the_thread() {
        let (tx, _rx) = mpsc::channel();
        let w = ExitWatcher::start(Box::new(move |pid, at| tx.send((pid, at)).is_ok())).unwrap();
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap(); // reaped: the pid names nothing (unless reused at once)
        if pidfds_work() {
            assert!(matches!(w.watch(pid), Err(NotWatched::Gone) | Ok(())));
        }
        assert!(w.running());
        drop(w); // joins the thread: the test hangs here if the stop is not seen
    }
}
