//! The host layer (page cache, writeback, readahead, metadata, CPUs) through the scenario path:
//! each test compares a run with a number computed independently (by hand, from the file
//! system's layout, or from readahead's own window sequence), and bad scenarios are refused
//! with a message naming the field and the value.

use iosched::host::fs::{Layout, Tree, ROOT_INO};
use iosched::host::readahead::{simulate_sequential, RaConfig};
use iosched::host::readahead_2_6_9::{MemFile269, RaState269};
use iosched::host::report::{HostReport, TaskReport};
use iosched::host::{Ino, PAGE_BYTES, PAGE_SECTORS};
use iosched::metrics::RequestRecord;
use iosched::request::Op;
use iosched::scenario::{RunOptions, RunResult, Scenario};
use std::collections::BTreeSet;
use std::path::PathBuf;

const MIB: u64 = 1 << 20;

fn parse(text: &str) -> Scenario {
    Scenario::parse(text, "test.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn run(text: &str) -> RunResult {
    let s = parse(text);
    let mut runs = s.run_with(RunOptions { keep_records: true, ..RunOptions::default() }).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(runs.len(), 1);
    let r = runs.remove(0);
    let inv = &r.summary.invariants;
    assert_eq!((inv.idled_with_work, inv.left_behind, inv.bad_completions, inv.bios_unaccounted), (0, 0, 0, 0), "{inv:?}");
    r
}

fn host(r: &RunResult) -> &HostReport {
    r.summary.host.as_ref().expect("a host run has a host report")
}

fn task<'a>(r: &'a RunResult, name: &str) -> &'a TaskReport {
    host(r).tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}"))
}

/// The tree and layout the scenario's host is built with (same seed streams, same code path
/// as the run), for computing expectations. The partition is given by `fs_mib`, so the disk's
/// capacity does not matter.
fn layout_of(s: &Scenario) -> (Tree, Layout) {
    let h = s.host.as_ref().expect("[host]");
    let k = h.build(&s.task, 1 << 40, None, s.run.seed, 1_000_000_000_000).unwrap_or_else(|e| panic!("{e}"));
    (k.tree().clone(), k.layout().clone())
}

fn subtree(tree: &Tree, root: Ino) -> Vec<Ino> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(i) = stack.pop() {
        out.push(i);
        if tree.is_dir(i) {
            stack.extend(tree.children(i).iter().copied());
        }
    }
    out
}

/// Records of one pid's reads or writes, in arrival (id) order.
fn records_of(r: &RunResult, pid: u32, op: Op) -> Vec<&RequestRecord> {
    let mut v: Vec<&RequestRecord> = r.records.iter().filter(|x| x.pid == pid && x.op == op).collect();
    v.sort_by_key(|x| x.id);
    v
}

/// Does the record lie inside `ino`'s data extents? Returns the first file page it covers.
fn file_page_of(layout: &Layout, ino: Ino, rec: &RequestRecord) -> Option<u64> {
    let end = rec.start_sector + rec.size_sectors as u64;
    layout.data_extents(ino).iter().find_map(|e| {
        let e_end = e.sector + e.pages * PAGE_SECTORS;
        (rec.start_sector >= e.sector && end <= e_end).then(|| e.file_page + (rec.start_sector - e.sector) / PAGE_SECTORS)
    })
}

// ---------------------------------------------------------------------------------------------
// 1. Metadata: each cold inode-table block and directory block is read once.

fn ls_scenario(middle: &str) -> String {
    format!(
        r#"
[host]
memory_mib = 256
fs_mib = 1024
tree = [{{ path = "/t", depth = 1, dirs_per_dir = 3, files_per_dir = 300, file_mean_kib = 4.0 }}]
[[task]]
name = "first"
command = "ls-lR"
path = "/t"
{middle}
[[task]]
name = "second"
command = "ls-lR"
path = "/t"
after = "{after}"
[[scheduler]]
name = "deadline"
[run]
duration_s = 100
"#,
        after = if middle.is_empty() { "first" } else { "drop" }
    )
}

/// Distinct 4 KiB metadata pages `ls -lR /t` must read on a cold cache: the root's directory
/// blocks up to the one holding `t`'s entry, and for every entry below (and including) `/t`
/// its inode-table block, for every directory its directory blocks.
fn expected_meta_pages(tree: &Tree, layout: &Layout, top: Ino) -> BTreeSet<u64> {
    let mut pages = BTreeSet::new();
    let last = layout.dir_block_of_entry(ROOT_INO, top);
    for s in layout.dir_blocks(ROOT_INO) {
        pages.insert(s / PAGE_SECTORS);
        if s == last {
            break;
        }
    }
    for i in subtree(tree, top) {
        pages.insert(layout.inode_block(i) / PAGE_SECTORS);
        if tree.is_dir(i) {
            for s in layout.dir_blocks(i) {
                pages.insert(s / PAGE_SECTORS);
            }
        }
    }
    pages
}

#[test]
fn ls_lr_reads_each_cold_metadata_block_once() {
    let text = ls_scenario("");
    let s = parse(&text);
    let (tree, layout) = layout_of(&s);
    let top = tree.lookup("/t").unwrap();
    let expected = expected_meta_pages(&tree, &layout, top);
    // The tree is big enough that entries share inode-table blocks and directories span
    // several blocks: reading per entry would count more.
    let entries = subtree(&tree, top).len();
    assert!(expected.len() < entries, "{} pages for {entries} entries", expected.len());
    assert!(layout.dir_blocks(top).len() >= 2, "a directory of several blocks");

    let r = run(&text);
    let first = task(&r, "first");
    assert_eq!(first.meta_pages_read, expected.len() as u64);
    assert_eq!(first.data_pages_read, 0);
    // And these are the pages the disk was asked for (one request per 4 KiB block here).
    let read: BTreeSet<u64> = records_of(&r, first.pid, Op::Read)
        .iter()
        .flat_map(|x| (0..x.size_sectors as u64 / PAGE_SECTORS).map(move |k| x.start_sector / PAGE_SECTORS + k))
        .collect();
    assert_eq!(read, expected);
    // The second listing finds everything in memory.
    let second = task(&r, "second");
    assert!(second.exit_s.is_some());
    assert_eq!(second.meta_pages_read, 0);
    assert!(records_of(&r, second.pid, Op::Read).is_empty());
}

#[test]
fn drop_caches_makes_metadata_cold_again() {
    let text = ls_scenario("[[task]]\nname = \"drop\"\ncommand = \"drop-caches\"\nafter = \"first\"\n");
    let s = parse(&text);
    let (tree, layout) = layout_of(&s);
    let expected = expected_meta_pages(&tree, &layout, tree.lookup("/t").unwrap()).len() as u64;
    let r = run(&text);
    assert_eq!(task(&r, "first").meta_pages_read, expected);
    assert_eq!(task(&r, "second").meta_pages_read, expected);
    assert!(task(&r, "second").start_s.unwrap() >= task(&r, "drop").exit_s.unwrap());
}

// ---------------------------------------------------------------------------------------------
// 2. The page cache.

fn cat_twice(memory_mib: f64) -> String {
    format!(
        r#"
[host]
memory_mib = {memory_mib}
fs_mib = 1024
file = [{{ path = "/f", size_mib = 4 }}]
[[task]]
name = "cat1"
command = "cat"
path = "/f"
[[task]]
name = "cat2"
command = "cat"
path = "/f"
after = "cat1"
[[scheduler]]
name = "deadline"
[run]
duration_s = 100
"#
    )
}

#[test]
fn second_cat_is_served_from_memory_when_the_file_fits() {
    let r = run(&cat_twice(64.0));
    let file_pages = 4 * MIB / PAGE_BYTES;
    assert_eq!(task(&r, "cat1").data_pages_read, file_pages);
    assert_eq!(task(&r, "cat1").bytes_read, 4 * MIB);
    assert_eq!(task(&r, "cat2").data_pages_read, 0);
    assert_eq!(task(&r, "cat2").meta_pages_read, 0);
    assert_eq!(task(&r, "cat2").bytes_read, 4 * MIB);
    assert!(records_of(&r, task(&r, "cat2").pid, Op::Read).is_empty());
}

#[test]
fn second_cat_rereads_everything_when_the_file_does_not_fit() {
    // 2 MiB of memory, a 4 MiB file read sequentially: by the time the second pass wants a
    // page, it was evicted to make room for the first pass's later pages.
    let r = run(&cat_twice(2.0));
    let file_pages = 4 * MIB / PAGE_BYTES;
    assert_eq!(task(&r, "cat1").data_pages_read, file_pages);
    assert_eq!(task(&r, "cat2").data_pages_read, file_pages);
}

#[test]
fn system_calls_cost_cpu_for_entry_and_copy_when_asked() {
    // cat2 reads the cached 4 MiB file in 32 reads of 128 KiB: with 1 us per call and a copy
    // at 1000 MB/s (1 ns per byte) each read costs 1,000 + 131,072 ns more, the open 1,000.
    let free = run(&cat_twice(64.0));
    let costly_text = cat_twice(64.0).replace("memory_mib = 64\n", "memory_mib = 64\nsyscall_us = 1.0\ncopy_mb_s = 1000.0\n");
    assert_ne!(costly_text, cat_twice(64.0));
    let costly = run(&costly_text);
    let (f, c) = (task(&free, "cat2"), task(&costly, "cat2"));
    assert_eq!(c.data_pages_read, 0, "served from memory");
    let added_cpu = c.cpu_s - f.cpu_s;
    let added_time = c.elapsed_s.unwrap() - f.elapsed_s.unwrap();
    let reads = 32.0 * (1_000.0 + 131_072.0) * 1e-9;
    // At least the reads and the open; at most one more call (a read at the end of the file).
    assert!(added_cpu >= reads + 1e-6 - 1e-12 && added_cpu <= reads + 2e-6 + 1e-12, "{added_cpu}");
    assert!((added_time - added_cpu).abs() < 1e-9, "nothing else waits: {added_time} vs {added_cpu}");
}

#[test]
fn a_bad_system_call_cost_is_named() {
    for (field, value) in [("syscall_us", "-1.0"), ("copy_mb_s", "0.0"), ("copy_mb_s", "nan")] {
        let text = cat_twice(64.0).replace("memory_mib = 64\n", &format!("memory_mib = 64\n{field} = {value}\n"));
        let err = match Scenario::parse(&text, "test.toml") {
            Err(e) => format!("{e}"),
            Ok(s) => s.run_with(RunOptions::default()).err().map(|e| format!("{e}")).unwrap_or_default(),
        };
        assert!(err.contains(&format!("host.{field}")), "{field} = {value}: {err}");
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Readahead through the host.

fn ra_scenario(ra_kb: u64) -> String {
    format!(
        r#"
[host]
memory_mib = 64
read_ahead_kb = {ra_kb}
fs_mib = 1024
file = [{{ path = "/f", size_mib = 1 }}]
[[task]]
name = "cat"
command = "cat"
path = "/f"
bs_kib = 16
[[scheduler]]
name = "deadline"
[run]
duration_s = 100
"#
    )
}

/// The cat's data reads: (first file page, pages), in arrival order.
fn data_reads(r: &RunResult, layout: &Layout, ino: Ino) -> Vec<(u64, u64)> {
    records_of(r, task(r, "cat").pid, Op::Read)
        .into_iter()
        .filter_map(|x| file_page_of(layout, ino, x).map(|p| (p, x.size_sectors as u64 / PAGE_SECTORS)))
        .collect()
}

#[test]
fn readahead_windows_become_the_disk_reads() {
    let text = ra_scenario(128);
    let s = parse(&text);
    let (tree, layout) = layout_of(&s);
    let ino = tree.lookup("/f").unwrap();
    let file_pages = MIB / PAGE_BYTES;
    let windows = simulate_sequential(&RaConfig::from_kb(128), 4, file_pages / 4, file_pages);
    let sizes: Vec<u64> = windows.iter().map(|w| w.pages).collect();
    // Linux's ramp for a 4-page first read with 32-page readahead: 8 (init: 4 pages x 2),
    // 16, then 32 to the end.
    assert_eq!(&sizes[..3], &[8, 16, 32], "{sizes:?}");
    assert!(sizes[2..sizes.len() - 1].iter().all(|&p| p == 32), "{sizes:?}");
    assert_eq!(sizes.iter().sum::<u64>(), file_pages);
    // Each window is read as the file's disk-contiguous runs inside it (ext2 puts the
    // indirect block between file blocks 11 and 12, splitting the window holding both).
    let mut expected = Vec::new();
    for w in &windows {
        let mut page = w.start;
        for (_, n) in layout.runs(ino, w.start, w.pages) {
            expected.push((page, n));
            page += n;
        }
    }
    let r = run(&text);
    assert_eq!(data_reads(&r, &layout, ino), expected);
    assert_eq!(task(&r, "cat").data_pages_read, file_pages);
}

#[test]
fn no_readahead_reads_one_page_at_a_time() {
    let text = ra_scenario(0);
    let s = parse(&text);
    let (tree, layout) = layout_of(&s);
    let ino = tree.lookup("/f").unwrap();
    let r = run(&text);
    let expected: Vec<(u64, u64)> = (0..MIB / PAGE_BYTES).map(|p| (p, 1)).collect();
    assert_eq!(data_reads(&r, &layout, ino), expected);
}

/// `readahead = "2.6.9"`: the cat's 16 KiB reads of the 1 MiB file become 2.6.9's windows
/// (host/readahead_2_6_9.rs run page by page with I/O completing at once: the decisions do not
/// depend on timing, a page under I/O counts as cached): current windows [0,16), [16,33),
/// [33,58), then 32-page ahead windows [58,90) ... and [250,256) at EOF.
#[test]
fn readahead_2_6_9_windows_become_the_disk_reads() {
    let text = ra_scenario(128).replace("[host]\n", "[host]\nreadahead = \"2.6.9\"\n");
    let s = parse(&text);
    let (tree, layout) = layout_of(&s);
    let ino = tree.lookup("/f").unwrap();
    let file_pages = MIB / PAGE_BYTES;
    let cfg = RaConfig::from_kb(128);
    let mut f = MemFile269::new(file_pages);
    let mut ra = RaState269::open(&cfg);
    let mut windows = Vec::new();
    for r in 0..file_pages / 4 {
        let t = f.read(&cfg, &mut ra, 4 * r, 4);
        assert!(t.single.is_empty());
        windows.extend(t.windows);
    }
    let spans: Vec<(u64, u64)> = windows.iter().map(|w| (w.start, w.pages)).collect();
    assert_eq!(spans, vec![(0, 16), (16, 17), (33, 25), (58, 32), (90, 32), (122, 32), (154, 32), (186, 32), (218, 32), (250, 6)]);
    let mut expected = Vec::new();
    for w in &windows {
        let mut page = w.start;
        for (_, n) in layout.runs(ino, w.start, w.pages) {
            expected.push((page, n));
            page += n;
        }
    }
    let r = run(&text);
    assert_eq!(data_reads(&r, &layout, ino), expected);
    let cat = task(&r, "cat");
    assert_eq!(cat.data_pages_read, file_pages);
    // The ahead windows are the prefetched pages: 256 - 58.
    assert_eq!(cat.prefetch_pages, file_pages - 58);
}

/// `readahead = "ondemand"` is the default: the same summary, byte for byte, as without it.
#[test]
fn readahead_ondemand_is_the_default() {
    let a = run(&ra_scenario(128));
    let b = run(&ra_scenario(128).replace("[host]\n", "[host]\nreadahead = \"ondemand\"\n"));
    assert_eq!(serde_json::to_string(&a.summary).unwrap(), serde_json::to_string(&b.summary).unwrap());
}

// ---------------------------------------------------------------------------------------------
// 4. Writeback.

const DD_MIB: u64 = 48;
const DD_BS_KIB: u64 = 64;
const DD_MEMORY_MIB: u64 = 64;

fn dd_scenario(extra_host: &str, extra_task: &str) -> String {
    format!(
        r#"
[host]
memory_mib = {DD_MEMORY_MIB}
sample_ms = 2
fs_mib = 1024
{extra_host}
[[task]]
name = "dd"
command = "dd"
path = "/out"
size_mib = {DD_MIB}
bs_kib = {DD_BS_KIB}
{extra_task}
[[scheduler]]
name = "deadline"
[run]
duration_s = 100
"#
    )
}

/// The layout of /out after dd grew it as dd does: one extension per write() of `bs`.
fn dd_layout(text: &str) -> (Ino, Layout) {
    let s = parse(text);
    let (tree, mut layout) = layout_of(&s);
    let ino = tree.lookup("/out").unwrap();
    let bs = DD_BS_KIB * 1024;
    let mut end = 0;
    while end < DD_MIB * MIB {
        end += bs;
        layout.extend(ino, end).unwrap();
    }
    (ino, layout)
}

fn write_bytes(r: &RunResult) -> u64 {
    r.records.iter().filter(|x| x.op == Op::Write).map(|x| x.size_sectors as u64 * 512).sum()
}

/// Checks common to every buffered dd: all the data on disk, every write accounted for (by
/// the flusher or by dd itself), dirty + writeback within the limit plus the slack.
fn check_dd(r: &RunResult, slack_pages: u64) {
    check_dd_at(r, slack_pages, 20);
}

/// `check_dd` with the limit at `dirty_ratio` percent.
fn check_dd_at(r: &RunResult, slack_pages: u64, dirty_ratio: u64) {
    let h = host(r);
    let dd = task(r, "dd");
    assert_eq!(dd.bytes_written, DD_MIB * MIB);
    assert!(dd.exit_s.is_some());
    let written = write_bytes(r);
    assert!(written >= DD_MIB * MIB, "{written}");
    assert_eq!(written, (h.flusher_pages + dd.pages_written) * PAGE_BYTES);
    // Metadata: at most a few pages per MiB (indirect blocks, bitmaps, the inode).
    assert!(written - DD_MIB * MIB <= 64 * PAGE_BYTES, "{} metadata pages", (written - DD_MIB * MIB) / PAGE_BYTES);
    assert_eq!(h.dirty_pages_at_end, 0);
    let limit_pages = DD_MEMORY_MIB * MIB / PAGE_BYTES * dirty_ratio / 100;
    assert!(!h.timeline.is_empty());
    let mut peak = 0u64;
    for s in &h.timeline {
        assert_eq!((s.limit_mib * MIB as f64 / PAGE_BYTES as f64).round() as u64, limit_pages);
        let pages = ((s.dirty_mib + s.writeback_mib) * MIB as f64 / PAGE_BYTES as f64).round() as u64;
        peak = peak.max(pages);
    }
    assert!(peak <= limit_pages + slack_pages, "peak {peak} pages, limit {limit_pages} + slack {slack_pages}");
    // dd wrote faster than the disk: it reached the throttled region.
    assert!(peak > limit_pages * 3 / 4, "peak {peak} pages never neared the limit {limit_pages}");
}

/// The I/O-less throttle's slack above the limit: after its last check below the limit a
/// writer may dirty `nr_dirtied_pause` pages, at most `task_ratelimit x max_pause`, where
/// `task_ratelimit <= 2 x dirty_ratelimit` (pos_ratio <= 2) and `max_pause` is about 1/8 of
/// the time to write the dirty pages (`dirty / (bw / 128)` jiffies at HZ = 1000, 128/1000 =
/// 1/7.8); with one writer `dirty_ratelimit` settles at the write bandwidth, so the slack is
/// about `2 x limit / 7.8`, less than `limit / 3`.
fn io_less_slack(limit_pages: u64) -> u64 {
    limit_pages / 3
}

/// 2.6.32's: a writer is checked every `ratelimit_pages` = memory / 32 pages it dirties
/// (clamped to 16..=1024); at a check over the limit it writes or sleeps until it is not.
/// Metadata pages (bitmaps, group descriptors, the inode, indirect blocks) are dirtied
/// without a check: a few more.
fn legacy_slack() -> u64 {
    (DD_MEMORY_MIB * MIB / PAGE_BYTES / 32).clamp(16, 1024) + 16
}

const DD_LIMIT_PAGES: u64 = DD_MEMORY_MIB * MIB / PAGE_BYTES * 20 / 100;

/// The flusher's data writes of /out in arrival order as (first file page, pages): within a
/// chunk (at most MAX_WRITEBACK_PAGES, 1024 pages) they go in ascending file offset, each
/// bio following the previous one; a new chunk may start anywhere.
fn check_flusher_order(r: &RunResult, ino: Ino, layout: &Layout, flusher_pid: u32) {
    let writes: Vec<(u64, u64)> = records_of(r, flusher_pid, Op::Write)
        .into_iter()
        .filter_map(|x| file_page_of(layout, ino, x).map(|p| (p, x.size_sectors as u64 / PAGE_SECTORS)))
        .collect();
    assert!(!writes.is_empty());
    let mut chunk_pages = 0;
    let mut chunks = 1;
    let mut prev: Option<(u64, u64)> = None;
    for &(p, n) in &writes {
        match prev {
            // The same chunk goes on: this bio starts at the file page after the previous one's.
            Some((pp, pn)) if p == pp + pn && chunk_pages + n <= 1024 => chunk_pages += n,
            _ => {
                chunks += 1;
                chunk_pages = n;
            }
        }
        prev = Some((p, n));
    }
    // The pages written in ascending order overall too (dd only appends, and writeback
    // resumes from where the previous chunk stopped).
    let starts: Vec<u64> = writes.iter().map(|w| w.0).collect();
    let descents = starts.windows(2).filter(|w| w[1] < w[0]).count();
    assert_eq!(descents, 0, "{writes:?}");
    assert!(chunks >= 2);
}

#[test]
fn dd_writeback_io_less() {
    let text = dd_scenario("", "");
    let (ino, layout) = dd_layout(&text);
    let r = run(&text);
    check_dd(&r, io_less_slack(DD_LIMIT_PAGES));
    let dd = task(&r, "dd");
    assert_eq!(dd.pages_written, 0, "the I/O-less throttle never makes the writer write");
    assert!(dd.throttled_s > 0.0);
    let flusher = dd.pid + 1;
    assert_eq!(host(&r).flusher_pages * PAGE_BYTES, write_bytes(&r));
    check_flusher_order(&r, ino, &layout, flusher);
    // Every data page written exactly once.
    let mut pages = BTreeSet::new();
    for x in records_of(&r, flusher, Op::Write) {
        if let Some(p) = file_page_of(&layout, ino, x) {
            for k in 0..x.size_sectors as u64 / PAGE_SECTORS {
                assert!(pages.insert(p + k), "page {} written twice", p + k);
            }
        }
    }
    assert_eq!(pages.len() as u64, DD_MIB * MIB / PAGE_BYTES);
}

#[test]
fn dd_writeback_legacy_26() {
    let text = dd_scenario("dirty_throttle = \"2.6\"", "");
    let r = run(&text);
    check_dd(&r, legacy_slack());
    let dd = task(&r, "dd");
    assert!(dd.pages_written > 0, "2.6.32's balance_dirty_pages makes the writer write");
}

/// `kernel_release = "2.6.9"`: 2.6.9's balance_dirty_pages with its vm_dirty_ratio of 40; the
/// writer is checked every ratelimit + 1 pages, so the slack is one page more than 2.6.32's.
#[test]
fn dd_writeback_2_6_9() {
    let text = dd_scenario("kernel_release = \"2.6.9\"", "");
    let r = run(&text);
    check_dd_at(&r, legacy_slack() + 1, 40);
    assert!(task(&r, "dd").pages_written > 0, "2.6.9's balance_dirty_pages makes the writer write");
    // The same with the field itself.
    let r2 = run(&dd_scenario("dirty_throttle = \"2.6.9\"", ""));
    assert_eq!(serde_json::to_string(&r.summary).unwrap(), serde_json::to_string(&r2.summary).unwrap());
}

#[test]
fn dd_fsync_exits_after_its_pages_are_on_disk() {
    let text = dd_scenario("", "fsync = true");
    let (ino, layout) = dd_layout(&text);
    let r = run(&text);
    check_dd(&r, io_less_slack(DD_LIMIT_PAGES));
    let dd = task(&r, "dd");
    let exit_ns = (dd.exit_s.unwrap() * 1e9).round() as u64;
    // Every data page of /out, and /out's inode block, completed on disk before dd's exit.
    let mut pages = BTreeSet::new();
    let inode_page = layout.inode_block(ino) / PAGE_SECTORS;
    let mut inode_written = false;
    for x in r.records.iter().filter(|x| x.op == Op::Write && x.complete_ns <= exit_ns + 1) {
        if let Some(p) = file_page_of(&layout, ino, x) {
            pages.extend(p..p + x.size_sectors as u64 / PAGE_SECTORS);
        }
        let first = x.start_sector / PAGE_SECTORS;
        if (first..first + x.size_sectors as u64 / PAGE_SECTORS).contains(&inode_page) {
            inode_written = true;
        }
    }
    assert_eq!(pages.len() as u64, DD_MIB * MIB / PAGE_BYTES);
    assert!(inode_written, "fsync writes the inode");
    // No page of /out was still dirty or under writeback at the exit: nothing of the file
    // was written after it.
    let late: Vec<_> = r
        .records
        .iter()
        .filter(|x| x.op == Op::Write && x.complete_ns > exit_ns + 1)
        .filter(|x| file_page_of(&layout, ino, x).is_some())
        .collect();
    assert!(late.is_empty(), "{} writes of the file after dd's exit", late.len());
}

// ---------------------------------------------------------------------------------------------
// 5. CPUs.

/// Two `find -exec cat` over trees already in memory (a `cat-all` of both first): all that is
/// left is each child's fork + exec, `exec_us` of CPU per file.
fn finds_on_cpus(cpus: u32) -> String {
    format!(
        r#"
[host]
memory_mib = 256
fs_mib = 1024
cpus = {cpus}
tree = [{{ path = "/a", depth = 1, dirs_per_dir = 2, files_per_dir = 5, file_mean_kib = 8.0 }},
        {{ path = "/b", depth = 1, dirs_per_dir = 2, files_per_dir = 5, file_mean_kib = 8.0 }}]
[[task]]
name = "warm"
command = "cat-all"
path = "/"
[[task]]
name = "find-a"
command = "find-exec-cat"
path = "/a"
exec_us = 2000
after = "warm"
[[task]]
name = "find-b"
command = "find-exec-cat"
path = "/b"
exec_us = 2000
after = "warm"
[[scheduler]]
name = "deadline"
[run]
duration_s = 100
"#
    )
}

#[test]
fn two_computing_tasks_share_one_cpu() {
    // Each tree: 3 directories x 5 files = 15 children, 2 ms of exec each: 30 ms of CPU.
    let files = 15.0;
    let cpu_s = files * 0.002;
    let unlimited = run(&finds_on_cpus(0));
    let one = run(&finds_on_cpus(1));
    let two = run(&finds_on_cpus(2));
    for r in [&unlimited, &one, &two] {
        for name in ["find-a", "find-b"] {
            let t = task(r, name);
            assert_eq!(t.children, 15);
            assert_eq!(t.data_pages_read + t.meta_pages_read, 0, "the trees are in memory");
            assert!((t.cpu_s - cpu_s).abs() < 1e-9, "{}", t.cpu_s);
        }
    }
    let elapsed = |r: &RunResult, name: &str| task(r, name).elapsed_s.unwrap();
    // Unlimited CPUs (and two CPUs for two tasks): each runs alone, 30 ms.
    for r in [&unlimited, &two] {
        for name in ["find-a", "find-b"] {
            assert!((elapsed(r, name) - cpu_s).abs() < 1e-6, "{name}: {}", elapsed(r, name));
        }
    }
    // One CPU shared by processor sharing: both always runnable (each next exec starts as
    // the previous ends), each gets half: both end at 2 x 30 ms.
    for name in ["find-a", "find-b"] {
        assert!((elapsed(&one, name) - 2.0 * cpu_s).abs() < 1e-6, "{name}: {}", elapsed(&one, name));
    }
}

// ---------------------------------------------------------------------------------------------
// 6. Layout (ext2): files next to their directory.

#[test]
fn ext2_puts_files_in_their_directorys_group() {
    let text = ls_scenario("");
    let s = parse(&text);
    let (tree, layout) = layout_of(&s);
    let top = tree.lookup("/t").unwrap();
    let mut groups = BTreeSet::new();
    for i in subtree(&tree, top) {
        if tree.is_dir(i) {
            groups.insert(layout.group_of_inode(i));
            continue;
        }
        let g = layout.group_of_inode(tree.parent(i).unwrap());
        assert_eq!(layout.group_of_inode(i), g, "a file's inode in its directory's group");
        for e in layout.data_extents(i) {
            assert_eq!(layout.group_of_sector(e.sector), Some(g), "a file's blocks in its directory's group");
        }
    }
    // Orlov keeps subdirectories of a directory that is not the root near their parent.
    assert_eq!(groups.len(), 1, "{groups:?}");
}

// ---------------------------------------------------------------------------------------------
// 7. Determinism.

#[test]
fn the_same_scenario_gives_the_same_summary() {
    let text = r#"
[host]
memory_mib = 32
sample_ms = 50
fs_mib = 2048
tree = [{ path = "/src", depth = 1, dirs_per_dir = 3, files_per_dir = 10 }]
file = [{ path = "/big", size_mib = 64 }]
[[task]]
name = "find"
command = "find-exec-cat"
path = "/src"
[[task]]
name = "stream"
command = "cat"
path = "/big"
loops = 0
[[task]]
name = "dd"
command = "dd"
path = "/out"
size_mib = 16
bs_kib = 128
[[scheduler]]
name = "deadline"
[run]
duration_s = 3
"#;
    let a = run(text);
    let b = run(text);
    let ja = serde_json::to_string(&a.summary).unwrap();
    let jb = serde_json::to_string(&b.summary).unwrap();
    assert_eq!(ja, jb);
    assert_eq!(a.records.len(), b.records.len());
    // Everyone did something.
    for name in ["find", "stream", "dd"] {
        let t = task(&a, name);
        assert!(t.bytes_read + t.bytes_written > 0, "{name}");
    }
}

/// Iyer & Druschel's applications on the FreeBSD host run the same twice, and the anticipatory
/// scheduler changes the two linkers' time (the scheduler matters on the host).
#[test]
fn apps_on_the_freebsd_host_are_deterministic() {
    let text = |sched: &str| {
        format!(
            r#"
[host]
kernel = "freebsd"
memory_mib = 96
cpus = 1
fs = "ffs"
fs_mib = 4096
[app]
kind = "gnuld"
instances = 2
objects = 60
[[scheduler]]
{sched}
[run]
duration_s = 600
"#
        )
    };
    let a = run(&text("name = \"aged-sptf\""));
    let b = run(&text("name = \"aged-sptf\""));
    assert_eq!(serde_json::to_string(&a.summary).unwrap(), serde_json::to_string(&b.summary).unwrap());
    let ld = |r: &RunResult, n: &str| task(r, n).elapsed_s.expect("the linker finished");
    let c = run(&text("name = \"anticipatory\"\npolicy = \"aged-sptf\""));
    // Both linkers read their 60 objects' headers and sections, from disk (cold cache).
    for r in [&a, &c] {
        for n in ["ld1", "ld2"] {
            let t = task(r, n);
            assert!(t.data_pages_read >= 60 && t.meta_pages_read > 0, "{n}: {t:?}");
        }
    }
    assert_ne!(ld(&a, "ld1") + ld(&a, "ld2"), ld(&c, "ld1") + ld(&c, "ld2"));
}

// ---------------------------------------------------------------------------------------------
// 8. Bad input: refused at parse time with the field and the value named.

fn err(text: &str) -> String {
    Scenario::parse(text, "bad.toml").expect_err("should be rejected").to_string()
}

const ONE_TASK: &str = "[[task]]\nname = \"c\"\ncommand = \"cat\"\npath = \"/f\"\n";
const ONE_FILE: &str = "file = [{ path = \"/f\", size_mib = 1 }]\n";

/// A scenario file in a new directory `iosched-host-{tag}-PID` of the temporary directory, beside
/// the listing `tree.txt` it mounts at /src; returns (directory, listing, scenario).
fn scenario_with_listing(tag: &str, listing_text: &str, rest: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("iosched-host-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let listing = dir.join("tree.txt");
    std::fs::write(&listing, listing_text).unwrap();
    let scenario = dir.join("s.toml");
    std::fs::write(&scenario, format!("[host]\ntree = [{{ path = \"/src\", listing = \"tree.txt\" }}]\n{rest}")).unwrap();
    (dir, listing, scenario)
}

#[test]
fn a_listing_with_a_bad_line_is_refused_with_its_path_and_line() {
    let (dir, listing, scenario) = scenario_with_listing(
        "test",
        "4096 .\n100 ./a\nnot-a-size ./b\n",
        "[[task]]\nname = \"l\"\ncommand = \"ls-lR\"\npath = \"/src\"\n",
    );
    let e = Scenario::read(&scenario).expect_err("should be rejected").to_string();
    std::fs::remove_dir_all(&dir).ok();
    assert!(e.contains(&listing.display().to_string()), "{e}");
    assert!(e.contains(":3:"), "{e}");
    assert!(e.contains("not-a-size"), "{e}");
}

#[test]
fn memory_smaller_than_a_page() {
    let e = err(&format!("[host]\nmemory_mib = 0.001\n{ONE_FILE}{ONE_TASK}"));
    assert!(e.starts_with("bad.toml: "), "{e}");
    assert!(e.contains("host.memory_mib") && e.contains("0.001"), "{e}");
}

#[test]
fn background_ratio_above_the_dirty_ratio() {
    let e = err(&format!("[host]\ndirty_background_ratio = 30\ndirty_ratio = 20\n{ONE_FILE}{ONE_TASK}"));
    assert!(e.contains("dirty_background_ratio") && e.contains("30") && e.contains("20"), "{e}");
}

#[test]
fn unknown_readahead() {
    let e = err(&format!("[host]\nreadahead = \"2.4\"\n{ONE_FILE}{ONE_TASK}"));
    assert!(e.starts_with("bad.toml: ") && e.contains("host.readahead") && e.contains("2.4"), "{e}");
    let e = err(&format!("[host]\nkernel = \"freebsd\"\nreadahead = \"2.6.9\"\n{ONE_FILE}{ONE_TASK}"));
    assert!(e.contains("host.readahead") && e.contains("2.6.9") && e.contains("freebsd"), "{e}");
}

#[test]
fn unknown_kernel_release_or_throttle() {
    let e = err(&format!("[host]\nkernel_release = \"2.6.11\"\n{ONE_FILE}{ONE_TASK}"));
    assert!(e.contains("host.kernel_release") && e.contains("2.6.11"), "{e}");
    let e = err(&format!("[host]\ndirty_throttle = \"2.4\"\n{ONE_FILE}{ONE_TASK}"));
    assert!(e.contains("host.dirty_throttle") && e.contains("2.4") && e.contains("2.6.9"), "{e}");
}

#[test]
fn unknown_command() {
    let e = err(&format!("[host]\n{ONE_FILE}[[task]]\nname = \"x\"\ncommand = \"rsync\"\n"));
    assert!(e.contains("command") && e.contains("rsync") && e.contains("task `x`"), "{e}");
}

#[test]
fn path_naming_a_missing_file() {
    let e = err(&format!("[host]\n{ONE_FILE}[[task]]\nname = \"c\"\ncommand = \"cat\"\npath = \"/nope\"\n"));
    assert!(e.contains("path") && e.contains("/nope") && e.contains("task `c`"), "{e}");
}

#[test]
fn after_naming_a_missing_task() {
    let e = err(&format!("[host]\n{ONE_FILE}{ONE_TASK}after = \"ghost\"\n"));
    assert!(e.contains("after") && e.contains("ghost"), "{e}");
}

#[test]
fn a_cycle_of_after() {
    let e = err(&format!(
        "[host]\n{ONE_FILE}[[task]]\nname = \"a\"\ncommand = \"cat\"\npath = \"/f\"\nafter = \"b\"\n\
         [[task]]\nname = \"b\"\ncommand = \"cat\"\npath = \"/f\"\nafter = \"a\"\n"
    ));
    assert!(e.contains("after") && e.contains("cycle"), "{e}");
    assert!(e.contains("task `a`") || e.contains("task `b`"), "{e}");
}

#[test]
fn host_and_tasks_go_together_and_alone() {
    let e = err(&format!("[host]\n{ONE_FILE}"));
    assert!(e.contains("[host]") && e.contains("[[task]]"), "{e}");
    let e = err(ONE_TASK);
    assert!(e.contains("[[task]]") && e.contains("[host]"), "{e}");
    let e = err(&format!("[host]\n{ONE_FILE}{ONE_TASK}[[process]]\nname = \"p\"\n"));
    assert!(e.contains("[[process]]") && e.contains("[host]"), "{e}");
}

/// A task after another may name what that one makes: `tar` of `cp -r`'s copy reads what cp
/// wrote; a path that never appears is the task's error, not a panic or a silent success.
#[test]
fn a_later_task_finds_what_an_earlier_one_made() {
    let text = r#"
[host]
memory_mib = 64
fs_mib = 2048
tree = [{ path = "/src", depth = 1, dirs_per_dir = 2, files_per_dir = 5, file_mean_kib = 16 }]
[[task]]
name = "cp"
command = "cp-r"
path = "/src"
to = "/copy"
[[task]]
name = "tar"
command = "tar"
path = "/copy"
to = "/backup.tar"
after = "cp"
[[task]]
name = "ghost"
command = "cat"
path = "/nowhere/file"
after = "tar"
[[scheduler]]
name = "deadline"
[run]
duration_s = 600
"#;
    let r = run(text);
    let (cp, tar, ghost) = (task(&r, "cp"), task(&r, "tar"), task(&r, "ghost"));
    assert!(cp.bytes_written > 0 && cp.errors == 0);
    assert_eq!(tar.bytes_read, cp.bytes_written, "tar reads exactly the copy");
    assert!(tar.bytes_written > tar.bytes_read, "the archive adds headers and padding");
    assert_eq!(ghost.errors, 1);
    assert!(ghost.error.as_deref().unwrap_or("").contains("/nowhere/file"), "{:?}", ghost.error);
    assert_eq!(ghost.bytes_read, 0);
}

#[test]
fn a_task_with_ends_run_ends_the_run_when_it_finishes() {
    let text = |ends: bool| {
        format!(
            r#"
[device]
preset = "ibm-deskstar-34gxp"
[block]
[host]
memory_mib = 16
file = [{{ path = "/big", size_mib = 64 }}, {{ path = "/small", size_mib = 4 }}]
[[task]]
name = "loop"
command = "cat"
path = "/big"
loops = 0
[[task]]
name = "once"
command = "cat"
path = "/small"
ends_run = {ends}
[run]
duration_s = 10
"#
        )
    };
    let with = run(&text(true));
    let once = task(&with, "once").elapsed_s.expect("finished");
    assert!(with.summary.elapsed_s < once + 1.0, "run {} s, task {} s", with.summary.elapsed_s, once);
    assert!(task(&with, "loop").elapsed_s.is_none(), "the endless task was stopped, not finished");
    let without = run(&text(false));
    assert!(without.summary.elapsed_s >= 9.9, "without ends_run the run lasts its duration");
    let inv = with.summary.invariants;
    assert_eq!((inv.left_behind, inv.bad_completions, inv.bios_unaccounted), (0, 0, 0), "{inv:?}");
}

/// A host built from a file (a tree listing) is not kept from validation for the run
/// (scenario/prepared.rs): a listing changed between parsing and running is read again, by the
/// first scheduler's run as by the second's.
#[test]
fn a_listing_changed_after_parsing_is_read_again_by_every_run() {
    let (dir, listing, scenario) = scenario_with_listing(
        "relist",
        "4096 .\n100000 ./a\n",
        "[[task]]\nname = \"c\"\ncommand = \"cat\"\npath = \"/src/a\"\n[[scheduler]]\nname = \"noop\"\n[[scheduler]]\nname = \"deadline\"\n",
    );
    let s = Scenario::read(&scenario).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&listing, "4096 .\n9000000 ./a\n").unwrap();
    let runs = s.run(None).unwrap_or_else(|e| panic!("{e}"));
    std::fs::remove_dir_all(&dir).ok();
    for r in &runs {
        let t = &r.summary.host.as_ref().unwrap().tasks[0];
        assert_eq!(t.bytes_read, 9_000_000, "{}: read the listing of parse time", r.summary.scheduler);
    }
}
