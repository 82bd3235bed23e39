//! End-to-end: mount a temporary backing directory, read and write through real processes (cat,
//! dd), compare bytes, unmount on signals. A guard unmounts (lazily, then aborting the FUSE
//! connection) whatever a failing test leaves behind. Skipped only where /dev/fuse is missing.

use crate::common::*;
use iosched_fuse::mount::mount_at;
use std::process::Command;
use std::time::Duration;

#[test]
fn reads_and_writes_through_real_processes_then_sigterm() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("rw");
    let data = pattern(3 << 20, 1);
    std::fs::write(f.backing.join("big"), &data).unwrap();
    std::fs::write(f.backing.join("sub/small.txt"), b"hello\n").unwrap();
    f.mount(&["--scheduler", "clook"]);
    let m = |p: &str| f.mnt.join(p).display().to_string();
    // Reads by real processes return exactly the backing bytes.
    assert_eq!(run("cat", &[&m("big")]).stdout, data);
    assert_eq!(run("cat", &[&m("sub/small.txt")]).stdout, b"hello\n");
    let ls = String::from_utf8(run("ls", &[&m("")]).stdout).unwrap();
    assert_eq!(ls.split_whitespace().collect::<Vec<_>>(), ["big", "sub"]);
    // Writes by real processes reach the backing files (dd with fsync; then overwrite a range).
    run("dd", &[&format!("if={}", m("big")), &format!("of={}", m("copy")), "bs=64k", "conv=fsync", "status=none"]);
    assert_eq!(std::fs::read(f.backing.join("copy")).unwrap(), data);
    run("dd", &["if=/dev/zero", &format!("of={}", m("copy")), "bs=4k", "count=3", "seek=5", "conv=notrunc,fsync", "status=none"]);
    let mut want = data.clone();
    want[5 * 4096..8 * 4096].fill(0);
    assert_eq!(std::fs::read(f.backing.join("copy")).unwrap(), want);
    assert_eq!(run("cat", &[&m("copy")]).stdout, want);
    // Metadata passes through: rename, mkdir, unlink, truncate.
    run("mv", &[&m("copy"), &m("sub/moved")]);
    assert_eq!(std::fs::read(f.backing.join("sub/moved")).unwrap(), want);
    run("mkdir", &[&m("d")]);
    run("truncate", &["-s", "100", &m("sub/moved")]);
    assert_eq!(std::fs::metadata(f.backing.join("sub/moved")).unwrap().len(), 100);
    run("rm", &[&m("sub/moved")]);
    assert!(!f.backing.join("sub/moved").exists() && f.backing.join("d").is_dir());

    let out = f.stop(libc::SIGTERM);
    assert!(mount_at(&f.mnt).is_none(), "still mounted after SIGTERM");
    let doc = summary_of(&out);
    let run0 = &doc["runs"][0];
    assert_eq!(run0["scheduler"], "clook");
    assert_eq!(run0["device"], "ibm-deskstar-34gxp");
    assert!(run0["requests"].as_u64().unwrap() > 10);
    assert!(run0["bytes"].as_u64().unwrap() >= 2 * data.len() as u64, "{run0}");
    for k in ["throughput_mb_s", "response_ms", "service_ms", "processes", "lateness_us", "invariants"] {
        assert!(run0.get(k).is_some(), "summary lacks {k}: {run0}");
    }
    let names: Vec<&str> = run0["processes"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
    assert!(names.contains(&"cat") && names.contains(&"dd"), "{names:?}");
}

#[test]
fn direct_io_reads_are_one_request_each_and_sigint_unmounts() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("direct");
    let data = pattern(1 << 20, 2);
    std::fs::write(f.backing.join("file"), &data).unwrap();
    f.mount(&["--scheduler", "anticipatory", "--policy", "aged-sptf", "--direct-io"]);
    let out = run("dd", &[&format!("if={}", f.mnt.join("file").display()), "of=/dev/stdout", "bs=64k", "status=none"]);
    assert_eq!(out.stdout, data);
    let out = f.stop(libc::SIGINT);
    assert!(mount_at(&f.mnt).is_none(), "still mounted after SIGINT");
    let doc = summary_of(&out);
    let r = &doc["runs"][0];
    assert_eq!(r["scheduler"], "anticipatory(aged-sptf)");
    assert_eq!(r["direct_io"], true);
    // 16 reads of 64 KiB, each one request of 128 sectors.
    let dd = r["processes"].as_array().unwrap().iter().find(|p| p["name"] == "dd").expect("dd in the summary");
    assert_eq!(dd["requests"], 16, "{r}");
    assert_eq!(dd["bytes"], 1 << 20);
    // The disk's time: 1 MiB on the Deskstar takes milliseconds, not microseconds.
    assert!(r["elapsed_s"].as_f64().unwrap() > 0.005, "{r}");
}

#[test]
fn bad_input_gives_one_message_and_leaves_nothing_mounted() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("bad");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![f.dir.join("missing").display().to_string(), f.mnt.display().to_string()], "backing directory"),
        (vec![f.backing.display().to_string(), f.dir.join("nomnt").display().to_string()], "mountpoint"),
        (
            vec![f.backing.display().to_string(), f.mnt.display().to_string(), "--scheduler".into(), "bogus".into()],
            "unknown scheduler `bogus`",
        ),
        (vec![f.backing.display().to_string(), f.mnt.display().to_string(), "--device".into(), "floppy".into()], "unknown device preset"),
        (vec![f.backing.display().to_string(), f.mnt.display().to_string(), "--set".into(), "nope=1".into()], "unknown tunable"),
        (vec![f.backing.display().to_string(), f.backing.join("sub").display().to_string()], "must not contain each other"),
    ];
    for (args, want) in &cases {
        let out = Command::new(BIN).arg("mount").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want) && err.lines().count() == 1, "{args:?}: {err}");
        assert!(mount_at(&f.mnt).is_none());
    }
    // A mountpoint in use (by a first mount), in the foreground and with --daemon.
    f.mount(&[]);
    for daemon in [false, true] {
        let mut cmd = Command::new(BIN);
        cmd.arg("mount").arg(&f.backing).arg(&f.mnt);
        if daemon {
            cmd.arg("--daemon");
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("is in use"), "{err}");
    }
    let out = f.stop(libc::SIGTERM);
    assert!(out.status.success());
    assert!(mount_at(&f.mnt).is_none());
    // umount of something not mounted.
    let out = Command::new(BIN).arg("umount").arg(&f.mnt).output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("not mounted"));
}

#[test]
fn daemon_then_umount_writes_the_summary() {
    if !fuse_available() {
        return;
    }
    let f = Fixture::new("daemon");
    std::fs::write(f.backing.join("a"), pattern(200_000, 3)).unwrap();
    let summary = f.dir.join("summary.json");
    let log = f.dir.join("log");
    let out = Command::new(BIN)
        .arg("mount")
        .arg(&f.backing)
        .arg(&f.mnt)
        .args(["--daemon", "--scheduler", "sptf", "--summary", summary.to_str().unwrap(), "--log", log.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(mount_at(&f.mnt).is_some_and(|m| m.is_iosched()));
    assert_eq!(run("cat", &[f.mnt.join("a").to_str().unwrap()]).stdout, pattern(200_000, 3));
    let out = Command::new(BIN).arg("umount").arg(&f.mnt).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(mount_at(&f.mnt).is_none());
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&summary).expect("summary written")).unwrap();
    assert_eq!(doc["runs"][0]["scheduler"], "sptf");
    assert!(doc["runs"][0]["requests"].as_u64().unwrap() >= 1);
}

#[test]
fn exits_are_noticed_as_they_happen_not_at_the_next_poll() {
    if !fuse_available() {
        return;
    }
    if let Err(e) = iosched_fuse::exit_watch::pidfd_open(std::process::id()) {
        eprintln!("SKIP: pidfd_open refused here ({e}): the mount can only poll for exits");
        return;
    }
    // Anticipatory schedulers wait on a process after its request; that wait must end when the
    // process exits. Before the pidfd watcher, /proc was polled every 250 ms.
    let mut f = Fixture::new("exits");
    std::fs::write(f.backing.join("small"), pattern(8192, 5)).unwrap();
    f.mount(&["--scheduler", "las", "--direct-io"]);
    let file = f.mnt.join("small");
    const CATS: u64 = 10;
    for _ in 0..CATS {
        run("cat", &[file.to_str().unwrap()]);
        std::thread::sleep(Duration::from_millis(30));
    }
    let out = f.stop(libc::SIGTERM);
    let doc = summary_of(&out);
    let exits = &doc["runs"][0]["exits"];
    assert_eq!(exits["watched"], CATS, "every cat's exit seen by its pidfd: {exits}");
    assert_eq!(exits["polled"], 0, "{exits}");
    // From each cat's last completion to its exit notice: its last read, close and exit. A
    // 250 ms poll is uniform over 0-250 ms, so ten notices under 100 ms by polling would have
    // a chance of 0.4^10.
    let after = &exits["after_last_completion_ms"];
    assert_eq!(after["samples"], CATS, "{exits}");
    assert!(after["max"].as_f64().unwrap() < 100.0, "exit noticed too late: {exits}");
}

#[test]
fn polled_exits_are_noticed_while_the_disk_stays_busy() {
    if !fuse_available() {
        return;
    }
    // The fallback where pidfds are refused: /proc every 250 ms. The poll once ran only when
    // the scheduler had nothing to dispatch at a completion, so a streaming reader (its
    // readahead always queued) held it off for seconds.
    let mut f = Fixture::new("polled-exits");
    std::fs::write(f.backing.join("big"), pattern(24 << 20, 6)).unwrap();
    std::fs::write(f.backing.join("small"), pattern(8192, 7)).unwrap();
    f.mount_with_env(&["--scheduler", "fcfs"], &[(iosched_fuse::mount::EXITS_ENV, "poll")]);
    let (big, small) = (f.mnt.join("big"), f.mnt.join("small"));
    let stream = Command::new("cat").arg(&big).stdout(std::process::Stdio::null()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    const CATS: u64 = 5;
    for _ in 0..CATS {
        // O_DIRECT: its reads are requests, not page-cache hits (the mount keeps the cache).
        run("dd", &[&format!("if={}", small.display()), "of=/dev/null", "bs=64k", "iflag=direct", "status=none"]);
        std::thread::sleep(Duration::from_millis(50));
    }
    let stream_done = within(Duration::from_secs(30), "the stream", move || stream.wait_with_output().unwrap());
    assert!(stream_done.status.success());
    std::thread::sleep(Duration::from_millis(400)); // the last polls
    let out = f.stop(libc::SIGTERM);
    let doc = summary_of(&out);
    let exits = &doc["runs"][0]["exits"];
    assert_eq!(exits["watched"], 0, "{exits}");
    assert_eq!(exits["polled"], CATS + 1, "{exits}");
    let after = &exits["after_last_completion_ms"];
    assert!(after["max"].as_f64().unwrap() < 1000.0, "an exit polled too late: {exits}");
}
