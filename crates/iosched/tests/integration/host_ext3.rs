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

// ---------------------------------------------------------------------------------------------
// The journal on hand cases: dd of 1 MiB (16 write()s of 64 KiB) on a 2 GiB ext3.

use iosched::host::fs::{Extent, Layout};
use iosched::host::PAGE_SECTORS;
use iosched::metrics::RequestRecord;
use iosched::request::Op;

fn dd(extra_task: &str, duration_s: u32) -> String {
    format!(
        r#"
[host]
fs = "ext3"
memory_mib = 64
fs_mib = 2048
[[task]]
name = "dd"
command = "dd"
path = "/out"
size_mib = 1
bs_kib = 64
{extra_task}
[[scheduler]]
name = "deadline"
[run]
duration_s = {duration_s}
"#
    )
}

fn layout_of(text: &str) -> (iosched::host::Ino, Layout) {
    let s = Scenario::parse(text, "test.toml").unwrap();
    let h = s.host.as_ref().unwrap();
    let k = h.build(&s.task, 1 << 40, None, s.run.seed, 1_000_000_000_000).unwrap();
    let ino = k.tree().lookup("/out").unwrap();
    let mut layout = k.layout().clone();
    // /out as dd grows it: one extension per write() of 64 KiB.
    for i in 1..=16 {
        layout.extend(ino, i * 65536).unwrap();
    }
    (ino, layout)
}

fn pid_of(r: &RunResult, name: &str) -> u32 {
    r.summary.processes.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("no process {name}")).pid
}

fn in_journal(journal: &[Extent], x: &RequestRecord) -> bool {
    journal.iter().any(|e| x.start_sector >= e.sector && x.start_sector < e.sector + e.pages * PAGE_SECTORS)
}

fn in_file(layout: &Layout, ino: iosched::host::Ino, x: &RequestRecord) -> bool {
    layout.data_extents(ino).iter().any(|e| x.start_sector >= e.sector && x.start_sector < e.sector + e.pages * PAGE_SECTORS)
}

#[test]
fn ext3_journal_lies_at_the_first_free_blocks_32_mib() {
    let (_, layout) = layout_of(&dd("", 1));
    let j = layout.journal();
    assert_eq!(layout.journal_blocks(), 8192);
    // Group 0: superblock, descriptors, bitmaps, 512 inode-table blocks (ext2's layout test),
    // then the root directory's block; the journal starts right after it.
    assert_eq!(j[0].sector, (4 + 512 + 1) * 8);
    assert_eq!(j[0].pages, 12, "12 direct blocks, then the indirect block");
    assert_eq!(j[1].sector, (4 + 512 + 1 + 13) * 8);
}

#[test]
fn fsync_on_ext3_writes_the_data_before_the_commit_block() {
    let text = dd("fsync = true", 60);
    let (ino, layout) = layout_of(&text);
    let r = run(&text);
    let kj = pid_of(&r, "kjournald");
    let ddp = pid_of(&r, "dd");
    let journal = layout.journal();
    let data: Vec<&RequestRecord> = r.records.iter().filter(|x| x.op == Op::Write && in_file(&layout, ino, x)).collect();
    let log: Vec<&RequestRecord> = r.records.iter().filter(|x| x.op == Op::Write && in_journal(journal, x)).collect();
    assert!(!data.is_empty() && log.len() >= 2, "{} data, {} log writes", data.len(), log.len());
    // dd wrote its pages itself (filemap_fdatawrite); all 256 of them.
    assert!(data.iter().all(|x| x.pid == ddp));
    assert_eq!(data.iter().map(|x| x.size_sectors as u64).sum::<u64>(), 256 * PAGE_SECTORS);
    // Every log write is kjournald's, issued after the last data write completed.
    let data_done = data.iter().map(|x| x.complete_ns).max().unwrap();
    assert!(log.iter().all(|x| x.pid == kj && x.issue_ns >= data_done));
    // Sequential from journal block 1: descriptor + copies, then the commit block, issued only
    // after the others completed.
    let mut at = journal[0].sector + PAGE_SECTORS;
    for x in &log {
        assert_eq!(x.start_sector, at);
        at += x.size_sectors as u64;
    }
    // The transaction's metadata: /out's inode-table block, group 0's block bitmap and its
    // descriptor block, the new indirect block: one descriptor and 4 copies, then the commit.
    assert_eq!(log.iter().map(|x| x.size_sectors).collect::<Vec<_>>(), vec![5 * 8, 8]);
    let commit = log.last().unwrap();
    assert_eq!(commit.size_sectors as u64, PAGE_SECTORS);
    assert!(log[..log.len() - 1].iter().all(|x| x.complete_ns <= commit.issue_ns));
    // dd's fsync returned after the commit block was on disk.
    let exit_ns = (r.summary.host.as_ref().unwrap().tasks[0].exit_s.unwrap() * 1e9).round() as u64;
    assert!(exit_ns + 1 >= commit.complete_ns, "exit {exit_ns} before the commit block {}", commit.complete_ns);
    // The inode's block reaches its home location only later, by the flusher (checkpoint).
    let inode_sector = layout.inode_block(ino);
    let home: Vec<&RequestRecord> = r
        .records
        .iter()
        .filter(|x| x.op == Op::Write && x.start_sector <= inode_sector && inode_sector < x.start_sector + x.size_sectors as u64)
        .collect();
    assert_eq!(home.len(), 1, "the inode block written once in place");
    assert_eq!(home[0].pid, pid_of(&r, "flush"));
    assert!(home[0].issue_ns >= commit.complete_ns + 30_000_000_000, "checkpointed after dirty_expire_centisecs");
}

#[test]
fn without_fsync_kjournald_commits_five_seconds_after_the_transaction_began() {
    let text = dd("", 20);
    let (ino, layout) = layout_of(&text);
    let r = run(&text);
    let kj = pid_of(&r, "kjournald");
    let mine: Vec<&RequestRecord> = r.records.iter().filter(|x| x.pid == kj).collect();
    // The transaction began with dd's first write() at 0: the commit starts at 5 s with the
    // ordered data (kjournald writes the file's dirty pages), then the log.
    assert_eq!(mine[0].issue_ns, 5_000_000_000);
    let (data, log): (Vec<&RequestRecord>, Vec<&RequestRecord>) = mine.iter().partition(|x| in_file(&layout, ino, x));
    assert_eq!(data.iter().map(|x| x.size_sectors as u64).sum::<u64>(), 256 * PAGE_SECTORS);
    assert!(log.iter().all(|x| in_journal(layout.journal(), x)));
    let data_done = data.iter().map(|x| x.complete_ns).max().unwrap();
    assert!(log.iter().all(|x| x.issue_ns >= data_done));
    // Nothing else wrote: the flusher had nothing expired by 20 s.
    assert_eq!(r.records.iter().filter(|x| x.op == Op::Write).count(), mine.len());
}
