//! The emulated drive's command queue in real mode (`--queue-depth`): concurrent readers keep
//! several requests at the drive, whose firmware serves them in rotational position order, so
//! completions leave arrival order; at depth 1 (the default) they never do.

use crate::common::*;
use std::os::unix::fs::FileExt;
use std::process::Command;

/// Eight threads, each reading 4 KiB at 24 scattered offsets of its own file, one at a time
/// (the mount is --direct-io, so each read is one request).
fn eight_scattered_readers(mnt: &std::path::Path) {
    std::thread::scope(|s| {
        for t in 0..8u64 {
            s.spawn(move || {
                let f = std::fs::File::open(mnt.join(format!("f{t}"))).unwrap();
                let mut buf = vec![0u8; 4096];
                let want = pattern(4 << 20, t);
                for i in 0..24u64 {
                    // A stride that scatters the reads over the 4 MiB file.
                    let block = (i * 389 + t * 97) % 1024;
                    assert_eq!(f.read_at(&mut buf, block * 4096).unwrap(), 4096);
                    assert_eq!(buf[..], want[(block * 4096) as usize..][..4096]);
                }
            });
        }
    });
}

/// The CSV's rows as (req_id, dispatch_ns, start_ns, complete_ns), in completion order.
fn rows(csv: &std::path::Path) -> Vec<(u64, u64, u64, u64)> {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (id, d, s, c) = (col("req_id"), col("dispatch_ns"), col("start_ns"), col("complete_ns"));
    lines
        .map(|l| {
            let f: Vec<u64> = l.split(',').map(|x| x.parse::<u64>().unwrap_or(0)).collect();
            (f[id], f[d], f[s], f[c])
        })
        .collect()
}

fn run_at_depth(depth: &str) -> (serde_json::Value, Vec<(u64, u64, u64, u64)>) {
    let mut f = Fixture::new(&format!("queue{depth}"));
    for t in 0..8u64 {
        std::fs::write(f.backing.join(format!("f{t}")), pattern(4 << 20, t)).unwrap();
    }
    let csv = f.dir.join("requests.csv");
    f.mount(&[
        "--scheduler",
        "noop",
        "--device",
        "maxtor-stm332061",
        "--direct-io",
        "--queue-depth",
        depth,
        "--requests-csv",
        csv.to_str().unwrap(),
    ]);
    eight_scattered_readers(&f.mnt);
    let out = f.stop(libc::SIGTERM);
    (summary_of(&out), rows(&csv))
}

#[test]
fn a_queue_of_eight_reorders_and_depth_one_does_not() {
    if !fuse_available() {
        return;
    }
    let (doc, deep) = run_at_depth("8");
    let r = &doc["runs"][0];
    assert_eq!(r["drive_queue"]["depth"], 8, "{r}");
    assert_eq!(deep.len(), 8 * 24);
    // Commands waited inside the drive: accepted before the mechanism started them.
    let held = deep.iter().filter(|(_, d, s, _)| s > d).count();
    // The firmware's order: some request completed before one accepted earlier (noop hands
    // them over in arrival order).
    let overtaken = deep.windows(2).filter(|w| w[1].0 < w[0].0).count();
    eprintln!("depth 8: held {held}, overtaken {overtaken}, {} IOPS", r["iops"]);
    assert!(held > 20 && overtaken > 5, "held {held}, overtaken {overtaken} of {}", deep.len());
    // One mechanism: the services do not overlap.
    let mut by_start = deep.clone();
    by_start.sort_by_key(|x| x.2);
    assert!(by_start.windows(2).all(|w| w[1].2 >= w[0].3), "services overlap");

    let (doc, shallow) = run_at_depth("1");
    assert_eq!(doc["runs"][0]["drive_queue"]["depth"], 1);
    assert_eq!(shallow.len(), 8 * 24);
    assert!(shallow.iter().all(|(_, d, s, _)| d == s), "at depth 1 the mechanism starts a command as it is dispatched");
    assert!(shallow.windows(2).all(|w| w[1].0 > w[0].0), "at depth 1 with noop, completions are in arrival order");
}

#[test]
fn bad_queue_options_are_refused_naming_the_option() {
    if !fuse_available() {
        return;
    }
    let f = Fixture::new("queuebad");
    let cases: [(&[&str], &str); 5] = [
        (&["--device", "maxtor-stm332061", "--queue-depth", "64"], "--queue-depth must be in [1, 32] for this drive"),
        (&["--queue-depth", "2"], "--queue-depth must be in [1, 1] for this drive"),
        (&["--device", "maxtor-stm332061", "--queue-depth", "eight"], "--queue-depth eight: expected a whole number"),
        (&["--device", "maxtor-stm332061", "--queue-depth", "8", "--queue-order", "lifo"], "--queue-order: unknown order `lifo`"),
        (&["--backend", "real", "--queue-depth", "8"], "are for the emulated drive"),
    ];
    for (extra, want) in cases {
        let out = Command::new(BIN).arg("mount").arg(&f.backing).arg(&f.mnt).args(extra).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(want) && err.lines().count() == 1, "{extra:?}: {err}");
        assert!(!f.is_mounted());
    }
}

#[test]
fn the_daemon_keeps_the_drive_queue() {
    if !fuse_available() {
        return;
    }
    let mut f = Fixture::new("queuedaemon");
    let summary = f.dir.join("summary.json");
    f.mount_daemon(&[
        "--device",
        "maxtor-stm332061",
        "--queue-depth",
        "16",
        "--queue-order",
        "rpo",
        "--queue-aging-ms",
        "250",
        "--summary",
        summary.to_str().unwrap(),
    ]);
    let out = Command::new(BIN).arg("umount").arg(&f.mnt).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let q = &doc["runs"][0]["drive_queue"];
    assert_eq!(q["depth"], 16, "{q}");
    assert_eq!(q["order"]["Rpo"]["aging_ns"], 250_000_000u64, "{q}");
}
