//! ext3's journal (host/fs/journal.rs, host/kjournald.rs) through the scenario path, and the
//! guarantee that scenarios that do not ask for ext3 run exactly as before it existed.

use iosched::scenario::{RunOptions, RunResult, Scenario};

fn run(text: &str) -> RunResult {
    let s = Scenario::parse(text, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut runs = s.run_with(RunOptions { keep_records: true, ..RunOptions::default() }).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(runs.len(), 1);
    let r = runs.remove(0);
    let inv = &r.summary.invariants;
    assert_eq!((inv.idled_with_work, inv.left_behind, inv.bad_completions, inv.bios_unaccounted), (0, 0, 0, 0), "{inv:?}");
    r
}

/// FNV-1a over the summary's JSON and every record's fields: a run's fingerprint.
fn fingerprint(r: &RunResult) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    };
    eat(serde_json::to_string(&r.summary).unwrap().as_bytes());
    for x in &r.records {
        let row = [
            x.id,
            u64::from(x.pid),
            x.op as u64,
            u64::from(x.sync),
            x.start_sector,
            u64::from(x.size_sectors),
            u64::from(x.bios),
            x.issue_ns,
            x.dispatch_ns,
            x.complete_ns,
        ];
        for v in row {
            eat(&v.to_le_bytes());
        }
    }
    h
}

/// A host scenario exercising creation, buffered writes, fsync, sync, unlink-free metadata
/// and reads on file system `fs` (kernel `kernel`).
fn mixed(kernel: &str, fs: &str) -> String {
    format!(
        r#"
[host]
kernel = "{kernel}"
fs = "{fs}"
memory_mib = 32
fs_mib = 2048
tree = [{{ path = "/src", depth = 1, dirs_per_dir = 3, files_per_dir = 8 }}]
[[task]]
name = "cp"
command = "cp-r"
path = "/src"
to = "/copy"
[[task]]
name = "dd"
command = "dd"
path = "/out"
size_mib = 4
bs_kib = 64
fsync = true
[[task]]
name = "ls"
command = "ls-lR"
path = "/copy"
after = "cp"
[[task]]
name = "sync"
command = "sync"
after = "ls"
[[scheduler]]
name = "deadline"
[run]
duration_s = 40
"#
    )
}

/// ext2 and FFS runs are what they were before ext3's journal was modelled (fingerprints taken
/// on the code before it, commit 227a173).
#[test]
fn ext2_and_ffs_runs_are_unchanged_by_the_journal() {
    let got: Vec<(String, u64, usize)> = [("linux", "ext2"), ("freebsd", "ffs"), ("linux", "ffs")]
        .iter()
        .map(|(k, f)| {
            let r = run(&mixed(k, f));
            (format!("{k}/{f}"), fingerprint(&r), r.records.len())
        })
        .collect();
    let want: Vec<(String, u64, usize)> = vec![
        ("linux/ext2".into(), 7495634750496066081, 101),
        ("freebsd/ffs".into(), 17450954258670270914, 239),
        ("linux/ffs".into(), 17689943218553540245, 95),
    ];
    assert_eq!(got, want);
}
