//! Issue 10, real mode: the mount behaves as a file system should (unlinked open files, hard
//! links, xattrs, special files, shared mmap under --direct-io, times before 1970, changes made
//! to the backing files directly), survives faults (signals with files held open, a stopped or
//! killed daemon), refuses bad output paths before mounting, and keeps constant memory.

use crate::common::*;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn c(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Checks a libc call's result, naming the call and errno when it failed.
fn ok(r: i64, what: &str) -> i64 {
    assert!(r >= 0, "{what}: {}", std::io::Error::last_os_error());
    r
}

fn fstat(fd: i32) -> libc::stat {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    ok(unsafe { libc::fstat(fd, &mut st) } as i64, "fstat");
    st
}

fn stat(p: &Path) -> libc::stat {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    ok(unsafe { libc::lstat(c(p).as_ptr(), &mut st) } as i64, &format!("lstat {}", p.display()));
    st
}

#[test]
fn an_unlinked_open_file_keeps_working() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("unlinked");
    f.mount(&["--scheduler", "noop", "--backend", "real"]);
    // The temporary-file pattern: create, unlink, then use the descriptor.
    let p = f.mnt.join("tmp");
    let fd = ok(unsafe { libc::open(c(&p).as_ptr(), libc::O_RDWR | libc::O_CREAT | libc::O_EXCL, 0o600) } as i64, "create") as i32;
    ok(unsafe { libc::unlink(c(&p).as_ptr()) } as i64, "unlink");
    assert!(!f.backing.join("tmp").exists());
    let data = pattern(10_000, 7);
    assert_eq!(
        unsafe { libc::pwrite(fd, data.as_ptr().cast(), data.len(), 0) },
        data.len() as isize,
        "{}",
        std::io::Error::last_os_error()
    );
    let st = fstat(fd);
    assert_eq!(st.st_size, 10_000);
    assert_eq!(st.st_nlink, 0);
    ok(unsafe { libc::ftruncate(fd, 4096) } as i64, "ftruncate on an unlinked file");
    assert_eq!(fstat(fd).st_size, 4096);
    ok(unsafe { libc::fchmod(fd, 0o640) } as i64, "fchmod on an unlinked file");
    assert_eq!(fstat(fd).st_mode & 0o7777, 0o640);
    let times = [libc::timespec { tv_sec: 1_000_000, tv_nsec: 0 }, libc::timespec { tv_sec: 2_000_000, tv_nsec: 0 }];
    ok(unsafe { libc::futimens(fd, times.as_ptr()) } as i64, "futimens on an unlinked file");
    assert_eq!(fstat(fd).st_mtime, 2_000_000);
    let mut buf = vec![0u8; 8192];
    let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
    assert_eq!(n, 4096, "{}", std::io::Error::last_os_error());
    assert_eq!(&buf[..4096], &data[..4096]);
    unsafe { libc::close(fd) };
    // A second name for the file survives the first name's unlink and sees its writes.
    std::fs::write(f.mnt.join("a"), b"one").unwrap();
    let fd = ok(unsafe { libc::open(c(&f.mnt.join("a")).as_ptr(), libc::O_RDWR) } as i64, "open a") as i32;
    std::fs::rename(f.mnt.join("a"), f.mnt.join("b")).unwrap();
    std::fs::remove_file(f.mnt.join("b")).unwrap();
    assert_eq!(fstat(fd).st_size, 3);
    ok(unsafe { libc::ftruncate(fd, 1) } as i64, "ftruncate after rename and unlink");
    assert_eq!(fstat(fd).st_size, 1);
    unsafe { libc::close(fd) };
    let out = f.stop(libc::SIGTERM);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_name_removed_and_made_again_is_a_new_inode_while_the_old_is_still_held() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("recreate");
    f.mount(&["--scheduler", "noop", "--backend", "real"]);
    // The backing file system (ext4 here) reuses a freed inode number at once; the kernel still
    // holds the removed directory or file (an open descriptor keeps it): the new one must not
    // get its node id (mkdir failed with ESTALE in a soak run).
    let d = f.mnt.join("w");
    let file = f.mnt.join("x");
    for round in 0..200 {
        std::fs::create_dir(&d).unwrap_or_else(|e| panic!("round {round}: mkdir: {e}"));
        let dfd = ok(unsafe { libc::open(c(&d).as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY) } as i64, "open dir") as i32;
        let held_ino = fstat(dfd).st_ino;
        std::fs::remove_dir(&d).unwrap_or_else(|e| panic!("round {round}: rmdir: {e}"));
        std::fs::create_dir(&d).unwrap_or_else(|e| panic!("round {round}: mkdir again: {e}"));
        assert_ne!(stat(&d).st_ino, held_ino, "round {round}: the new directory has the held one's inode");
        std::fs::write(d.join("f"), b"b").unwrap_or_else(|e| panic!("round {round}: a file in it: {e}"));
        assert_eq!(std::fs::read(d.join("f")).unwrap(), b"b");
        std::fs::remove_file(d.join("f")).unwrap();
        std::fs::remove_dir(&d).unwrap();
        // The same with a file held open.
        std::fs::write(&file, b"a").unwrap_or_else(|e| panic!("round {round}: create: {e}"));
        let ffd = ok(unsafe { libc::open(c(&file).as_ptr(), libc::O_RDONLY) } as i64, "open file") as i32;
        let held_file = fstat(ffd).st_ino;
        std::fs::remove_file(&file).unwrap();
        std::fs::write(&file, b"c").unwrap_or_else(|e| panic!("round {round}: create again: {e}"));
        assert_ne!(stat(&file).st_ino, held_file, "round {round}: the new file has the held one's inode");
        assert_eq!(std::fs::read(&file).unwrap(), b"c");
        std::fs::remove_file(&file).unwrap();
        unsafe {
            libc::close(dfd);
            libc::close(ffd);
        }
    }
    let out = f.stop(libc::SIGTERM);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn hard_links_xattrs_and_special_files() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("links");
    std::fs::write(f.backing.join("orig"), b"data").unwrap();
    f.mount(&[]);
    let (orig, alias) = (f.mnt.join("orig"), f.mnt.join("sub/alias"));
    ok(unsafe { libc::link(c(&orig).as_ptr(), c(&alias).as_ptr()) } as i64, "link");
    let (a, b) = (stat(&orig), stat(&alias));
    assert_eq!((a.st_nlink, b.st_nlink), (2, 2));
    assert_eq!(a.st_ino, b.st_ino, "two names of one file are one inode");
    assert_eq!(std::fs::metadata(f.backing.join("sub/alias")).unwrap().ino(), std::fs::metadata(f.backing.join("orig")).unwrap().ino());
    std::fs::write(&alias, b"changed").unwrap();
    assert_eq!(std::fs::read(&orig).unwrap(), b"changed");
    std::fs::remove_file(&orig).unwrap();
    assert_eq!(stat(&alias).st_nlink, 1);
    // Extended attributes (user namespace), with the size probe.
    let (name, value) = (CString::new("user.iosched").unwrap(), b"v1");
    ok(unsafe { libc::setxattr(c(&alias).as_ptr(), name.as_ptr(), value.as_ptr().cast(), 2, 0) } as i64, "setxattr");
    assert_eq!(unsafe { libc::getxattr(c(&alias).as_ptr(), name.as_ptr(), std::ptr::null_mut(), 0) }, 2);
    let mut buf = [0u8; 64];
    assert_eq!(unsafe { libc::getxattr(c(&alias).as_ptr(), name.as_ptr(), buf.as_mut_ptr().cast(), 64) }, 2);
    assert_eq!(&buf[..2], value);
    assert_eq!(unsafe { libc::getxattr(c(&alias).as_ptr(), name.as_ptr(), buf.as_mut_ptr().cast(), 1) }, -1);
    assert_eq!(errno(), libc::ERANGE);
    let n = ok(unsafe { libc::listxattr(c(&alias).as_ptr(), buf.as_mut_ptr().cast(), 64) } as i64, "listxattr") as usize;
    assert!(buf[..n].split(|&b| b == 0).any(|x| x == b"user.iosched"), "{:?}", &buf[..n]);
    ok(unsafe { libc::removexattr(c(&alias).as_ptr(), name.as_ptr()) } as i64, "removexattr");
    assert_eq!(unsafe { libc::getxattr(c(&alias).as_ptr(), name.as_ptr(), buf.as_mut_ptr().cast(), 64) }, -1);
    assert_eq!(errno(), libc::ENODATA);
    // A FIFO and a regular file made by mknod.
    let fifo = f.mnt.join("fifo");
    ok(unsafe { libc::mkfifo(c(&fifo).as_ptr(), 0o644) } as i64, "mkfifo");
    assert_eq!(stat(&fifo).st_mode & libc::S_IFMT, libc::S_IFIFO);
    assert!(std::fs::symlink_metadata(f.backing.join("fifo")).unwrap().file_type().is_fifo_like());
    let reg = f.mnt.join("sub/node");
    ok(unsafe { libc::mknod(c(&reg).as_ptr(), libc::S_IFREG | 0o600, 0) } as i64, "mknod S_IFREG");
    assert_eq!(stat(&reg).st_mode & libc::S_IFMT, libc::S_IFREG);
    // O_TMPFILE: fuser 0.18 does not know FUSE_TMPFILE; the kernel answers EOPNOTSUPP, the
    // errno programs test for before falling back to create-and-unlink (documented).
    let fd = unsafe { libc::open(c(&f.mnt).as_ptr(), libc::O_TMPFILE | libc::O_RDWR, 0o600) };
    assert_eq!((fd, errno()), (-1, libc::EOPNOTSUPP));
    let out = f.stop(libc::SIGTERM);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

trait FifoLike {
    fn is_fifo_like(&self) -> bool;
}
impl FifoLike for std::fs::FileType {
    fn is_fifo_like(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        self.is_fifo()
    }
}

#[test]
fn shared_mmap_works_under_direct_io() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("mmap");
    std::fs::write(f.backing.join("m"), vec![b'a'; 8192]).unwrap();
    f.mount(&["--direct-io", "--backend", "real", "--scheduler", "noop"]);
    let p = f.mnt.join("m");
    let fd = ok(unsafe { libc::open(c(&p).as_ptr(), libc::O_RDWR) } as i64, "open") as i32;
    let map = unsafe { libc::mmap(std::ptr::null_mut(), 8192, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0) };
    assert!(map != libc::MAP_FAILED, "MAP_SHARED mmap under --direct-io: {}", std::io::Error::last_os_error());
    let s = unsafe { std::slice::from_raw_parts_mut(map as *mut u8, 8192) };
    assert_eq!(s[100], b'a');
    s[4096..4100].copy_from_slice(b"MMAP");
    ok(unsafe { libc::msync(map, 8192, libc::MS_SYNC) } as i64, "msync");
    unsafe { libc::munmap(map, 8192) };
    unsafe { libc::close(fd) };
    assert_eq!(&std::fs::read(f.backing.join("m")).unwrap()[4096..4100], b"MMAP");
    let out = f.stop(libc::SIGTERM);
    assert!(out.status.success());
}

#[test]
fn times_before_1970_are_kept() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("times");
    std::fs::write(f.backing.join("old"), b"x").unwrap();
    std::fs::write(f.backing.join("set"), b"x").unwrap();
    // Set directly on the backing file: 1901-12-14 and a fraction of a second.
    let t = [libc::timespec { tv_sec: -2_147_483_000, tv_nsec: 250_000_000 }, libc::timespec { tv_sec: -86_400, tv_nsec: 750_000_000 }];
    ok(unsafe { libc::utimensat(libc::AT_FDCWD, c(&f.backing.join("old")).as_ptr(), t.as_ptr(), 0) } as i64, "utimensat backing");
    f.mount(&[]);
    let st = stat(&f.mnt.join("old"));
    assert_eq!((st.st_atime, st.st_atime_nsec), (-2_147_483_000, 250_000_000));
    assert_eq!((st.st_mtime, st.st_mtime_nsec), (-86_400, 750_000_000));
    // Set through the mount (touch -d 1960-...), whole seconds and a fraction.
    let t = [libc::timespec { tv_sec: -315_619_200, tv_nsec: 0 }, libc::timespec { tv_sec: -1, tv_nsec: 500_000_000 }];
    ok(unsafe { libc::utimensat(libc::AT_FDCWD, c(&f.mnt.join("set")).as_ptr(), t.as_ptr(), 0) } as i64, "utimensat mount");
    let b = std::fs::metadata(f.backing.join("set")).unwrap();
    assert_eq!((b.atime(), b.atime_nsec()), (-315_619_200, 0));
    assert_eq!((b.mtime(), b.mtime_nsec()), (-1, 500_000_000));
    let st = stat(&f.mnt.join("set"));
    assert_eq!((st.st_mtime, st.st_mtime_nsec), (-1, 500_000_000));
    let out = f.stop(libc::SIGTERM);
    assert!(out.status.success());
}

#[test]
fn changes_made_to_the_backing_files_directly_are_visible() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("visible");
    std::fs::write(f.backing.join("f"), b"first version\n").unwrap();
    f.mount(&["--scheduler", "noop"]);
    let m = f.mnt.join("f");
    assert_eq!(std::fs::read(&m).unwrap(), b"first version\n");
    // Same size, new bytes, written in place behind the mount's back.
    std::fs::write(f.backing.join("f"), b"other version\n").unwrap();
    assert_eq!(std::fs::read(&m).unwrap(), b"other version\n", "rewritten in place");
    // Grown in place.
    std::fs::write(f.backing.join("f"), b"a longer third version\n").unwrap();
    assert_eq!(std::fs::read(&m).unwrap(), b"a longer third version\n", "grown in place");
    // Replaced by rename (a new inode under the same name).
    std::fs::write(f.backing.join("new"), b"replacement\n").unwrap();
    std::fs::rename(f.backing.join("new"), f.backing.join("f")).unwrap();
    std::thread::sleep(Duration::from_millis(1100)); // the entry timeout
    assert_eq!(std::fs::read(&m).unwrap(), b"replacement\n", "replaced by rename");
    // A process holding the file open sees a change within the attribute timeout.
    let held = std::fs::File::open(&m).unwrap();
    let mut buf = [0u8; 64];
    use std::os::unix::fs::FileExt;
    let n = held.read_at(&mut buf, 0).unwrap();
    assert_eq!(&buf[..n], b"replacement\n");
    std::fs::OpenOptions::new().write(true).open(f.backing.join("f")).unwrap().write_all_at(b"REPLACED, longer\n", 0).unwrap();
    std::thread::sleep(Duration::from_millis(1100)); // the attribute timeout
    let n = held.read_at(&mut buf, 0).unwrap();
    assert_eq!(&buf[..n], b"REPLACED, longer\n", "seen by a process holding the file open");
    drop(held);
    // Created and removed directly.
    std::fs::write(f.backing.join("sub/born"), b"!").unwrap();
    assert_eq!(std::fs::read(f.mnt.join("sub/born")).unwrap(), b"!");
    std::fs::remove_file(f.backing.join("sub/born")).unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    assert!(!f.mnt.join("sub/born").exists());
    let out = f.stop(libc::SIGTERM);
    assert!(out.status.success());
}

/// Opens a file of the mount in a child process that holds it and then reads it when told
/// (a line on its stdin), reporting the read's outcome on stdout.
fn holder(path: &Path) -> std::process::Child {
    let script = format!(
        "exec 3<'{}'; read _; if cat <&3 >/dev/null 2>/tmp/holder-err-$$; then echo read-ok; else echo read-failed; fi",
        path.display()
    );
    Command::new("bash").args(["-c", &script]).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).spawn().unwrap()
}

#[test]
fn sigterm_with_a_file_held_open_ends_the_daemon_within_6_s() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("sigterm-held");
    std::fs::write(f.backing.join("held"), pattern(100_000, 9)).unwrap();
    f.mount(&["--scheduler", "clook"]);
    let mut h = holder(&f.mnt.join("held"));
    std::thread::sleep(Duration::from_millis(300)); // the holder has opened it
    let start = Instant::now();
    let out = f.stop(libc::SIGTERM);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(6), "the daemon took {took:?} to exit");
    assert!(took > Duration::from_secs(4), "the daemon did not wait the documented 5 s: {took:?}");
    let _ = summary_of(&out); // still prints its summary
    assert!(!f.is_mounted());
    // The client's next read fails rather than hangs.
    use std::io::Write;
    h.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let out = within(Duration::from_secs(5), "the holder's read", move || h.wait_with_output().unwrap());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "read-failed");
}

#[test]
fn a_second_signal_ends_the_daemon_at_once() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("sigterm-twice");
    std::fs::write(f.backing.join("held"), b"x").unwrap();
    f.mount(&[]);
    let mut h = holder(&f.mnt.join("held"));
    std::thread::sleep(Duration::from_millis(300));
    unsafe { libc::kill(f.pid(), libc::SIGTERM) };
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    let out = f.stop(libc::SIGINT);
    assert!(start.elapsed() < Duration::from_secs(1), "{:?} after the second signal", start.elapsed());
    let _ = summary_of(&out);
    assert!(!f.is_mounted());
    use std::io::Write;
    h.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let out = within(Duration::from_secs(5), "the holder's read", move || h.wait_with_output().unwrap());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "read-failed");
}

#[test]
fn umount_of_a_stopped_daemon_does_not_hang() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("stopped");
    std::fs::write(f.backing.join("a"), b"a").unwrap();
    let summary = f.dir.join("summary.json");
    let pid = f.mount_daemon(&["--summary", summary.to_str().unwrap()]);
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let mnt = f.mnt.clone();
    let start = Instant::now();
    let out = within(Duration::from_secs(50), "iosched umount", move || {
        // The continued daemon has this long to unmount and write its summary; 3 s was too short
        // when the other tests loaded the machine (it is "never hangs" that is tested here). Under
        // load the SIGSTOP above may take effect only after umount has looked at the daemon:
        // umount now looks again while it waits (it failed twice at 10 s and 30 s before that).
        Command::new(BIN).arg("umount").arg(&mnt).args(["--timeout", "30"]).output().unwrap()
    });
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(start.elapsed() < Duration::from_secs(45), "{:?}", start.elapsed());
    assert!(!f.is_mounted());
    assert!(!alive(pid), "the daemon is still there");
    assert!(summary.exists(), "the continued daemon wrote its summary");
    assert!(!f.pidfile().exists());
}

#[test]
fn after_sigkill_the_next_umount_or_mount_cleans_up() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("sigkill");
    let kill = |f: &mut Fixture| {
        let pid = f.mount_daemon(&[]);
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let start = Instant::now();
        while alive(pid) {
            assert!(start.elapsed() < Duration::from_secs(5));
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(f.is_mounted() && f.pidfile().exists(), "SIGKILL leaves a dead mount and a pidfile");
    };
    kill(&mut f);
    let out = within(Duration::from_secs(20), "umount", {
        let mnt = f.mnt.clone();
        move || Command::new(BIN).arg("umount").arg(&mnt).output().unwrap()
    });
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!f.is_mounted() && !f.pidfile().exists());
    kill(&mut f);
    f.mount(&[]); // over the dead mount
    assert!(f.daemon_pid() == Some(f.pid()), "a fresh pidfile");
    assert_eq!(std::fs::read_dir(&f.mnt).unwrap().count(), 1); // `sub`: the new mount serves
    let out = f.stop(libc::SIGTERM);
    assert!(out.status.success());
    assert!(!f.is_mounted() && !f.pidfile().exists());
}

#[test]
fn bad_output_paths_and_a_nonempty_mountpoint_are_refused_before_mounting() {
    if !fuse_available() {
        return;
    }
    let f = Fixture::new("refuse");
    let missing = f.dir.join("missing/out");
    let m = missing.to_str().unwrap();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["--summary", m], format!("--summary {m}")),
        (vec!["--requests-csv", m], format!("--requests-csv {m}")),
        (vec!["--stats", m], format!("--stats {m}")),
        (vec!["--summary", f.backing.to_str().unwrap()], "--summary".into()),
        (vec!["--stats-interval", "0.000001"], "--stats-interval 0.000001".into()),
        (vec!["--stats-interval", "-1"], "--stats-interval -1".into()),
    ];
    for (daemon, (extra, want)) in [false, true].into_iter().flat_map(|d| cases.iter().map(move |c| (d, c))) {
        let mut cmd = Command::new(BIN);
        cmd.arg("mount").arg(&f.backing).arg(&f.mnt).args(extra);
        if daemon {
            cmd.arg("--daemon");
        }
        let out = bounded(cmd, Duration::from_secs(10));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(want.as_str()) && err.lines().count() == 1, "{extra:?} (daemon {daemon}): {err}");
        assert!(!f.is_mounted());
        assert!(!missing.parent().unwrap().exists());
    }
    std::fs::write(f.mnt.join("precious"), b"hidden by a mount").unwrap();
    let mut cmd = Command::new(BIN);
    cmd.arg("mount").arg(&f.backing).arg(&f.mnt);
    let out = bounded(cmd, Duration::from_secs(10));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is not empty") && err.lines().count() == 1, "{err}");
    assert!(!f.is_mounted());
}

/// Runs a command that should end at once; a mount that was accepted is stopped (SIGTERM) after
/// `limit`, so the test fails instead of hanging.
fn bounded(mut cmd: Command, limit: Duration) -> std::process::Output {
    let child = cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let (pid, start) = (child.id() as i32, Instant::now());
    let waiter = std::thread::spawn(move || child.wait_with_output().unwrap());
    while !waiter.is_finished() {
        if start.elapsed() > limit {
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    waiter.join().unwrap()
}

fn rss_kib(pid: i32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()).unwrap().parse().unwrap()
}

#[test]
fn requests_are_streamed_to_the_csv_and_memory_stays_flat() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("stream");
    let file = std::fs::File::create(f.backing.join("sparse")).unwrap();
    file.set_len(64 << 20).unwrap();
    drop(file);
    let csv = f.dir.join("requests.csv");
    f.mount(&["--backend", "real", "--scheduler", "noop", "--direct-io", "--requests-csv", csv.to_str().unwrap()]);
    let src = format!("if={}", f.mnt.join("sparse").display());
    let dd = |count: u32| run("dd", &[&src, "of=/dev/null", "bs=512", &format!("count={count}"), "status=none"]);
    dd(20_000);
    std::thread::sleep(Duration::from_millis(700));
    let before = rss_kib(f.pid());
    let rows = std::fs::read_to_string(&csv).map(|s| s.lines().count()).unwrap_or(0);
    assert!(rows > 20_000, "{rows} rows in the CSV while mounted: the records are not streamed");
    dd(100_000);
    std::thread::sleep(Duration::from_millis(300));
    let after = rss_kib(f.pid());
    let out = f.stop(libc::SIGTERM);
    let doc = summary_of(&out);
    assert_eq!(doc["runs"][0]["requests"], 120_000);
    assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), 120_001);
    // 100,000 more requests: the old daemon kept ~110 bytes of each (11 MB).
    assert!(after < before + 2048, "RSS grew from {before} KiB to {after} KiB over 100,000 requests");
}

#[test]
fn many_short_processes_do_not_grow_memory_per_process() {
    if !fuse_available() {
        return;
    }
    // Each process that does I/O had a response-time histogram (~100 KiB) kept for the whole
    // mount; now it is reduced to its totals when the process exits.
    let mut f = Fixture::new("procs");
    std::fs::write(f.backing.join("small"), pattern(8192, 4)).unwrap();
    f.mount(&["--direct-io"]);
    let file = f.mnt.join("small");
    let cats = |n: usize| {
        for _ in 0..n {
            run("cat", &[file.to_str().unwrap()]);
        }
        std::thread::sleep(Duration::from_millis(600)); // the dispatcher notices the exits
    };
    // The first few hundred processes also grow the allocator's arenas (measured: +9.7 MB
    // over the first 300, then +0.7 MB over the next 300): measure after them.
    cats(330);
    let before = rss_kib(f.pid());
    cats(300);
    let after = rss_kib(f.pid());
    let out = f.stop(libc::SIGTERM);
    let doc = summary_of(&out);
    let procs = doc["runs"][0]["processes"].as_array().unwrap();
    assert_eq!(procs.iter().filter(|p| p["name"] == "cat" && p["requests"] == 1).count(), 630, "every cat is in the summary");
    // About 2 KiB per exited process is kept (its totals); a histogram each (~100 KiB) was not.
    assert!(after < before + 3 * 1024, "RSS grew from {before} KiB to {after} KiB over 300 processes");
}

#[test]
fn a_short_mixed_soak_passes() {
    if !fuse_available() {
        return;
    }
    if Command::new("python3").arg("-c").arg("import sys; assert sys.version_info >= (3, 9)").status().map_or(true, |s| !s.success()) {
        eprintln!("SKIP: python3 >= 3.9 is needed by the soak's workers");
        return;
    }
    // experiments/real-mode/soak.sh for 15 s: readers, writers with fsync, metadata churn; it
    // fails on a worker's error, a lost CSV row, or RSS growing by more than 20%.
    let work = std::env::temp_dir().join(format!("iosched-fuse-test-soak-{}", std::process::id()));
    let mnt = work.join("mnt");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/real-mode/soak.sh");
    let out = within(Duration::from_secs(90), "soak.sh 15", {
        let (work, script) = (work.clone(), script.clone());
        move || Command::new("bash").arg(script).arg("15").env("IOSCHED_FUSE_BIN", BIN).env("WORK", work).output().unwrap()
    });
    let mounted = iosched_fuse::mount::mount_at(&mnt).is_some();
    if mounted {
        let _ = Command::new(BIN).arg("umount").arg(&mnt).output();
    }
    let _ = std::fs::remove_dir_all(&work);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "soak failed: {text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(!mounted, "soak.sh left its mount behind");
    assert!(text.contains("\"pass\": true"), "{text}");
}
