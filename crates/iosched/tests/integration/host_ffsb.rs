//! unlink through the kernel (pages dropped, dirty ones never written, blocks reused), and the
//! `ffsb` task through the scenario path (determinism, the same operations under every
//! scheduler, errors naming the field).

use iosched::device::presets::preset;
use iosched::device::RotationalDisk;
use iosched::host::fs::{FsKind, Kind, Layout, Tree, ROOT_INO};
use iosched::host::kernel::{Kernel, Start, TaskDef};
use iosched::host::syscall::{Script, Syscall, WriteMode};
use iosched::host::PAGE_SECTORS;
use iosched::request::{IoPrio, Op};
use iosched::scenario::{HostSection, Scenario};
use iosched::sim::engine::simulate;
use rand::SeedableRng;

const KIB: u64 = 1024;

#[test]
fn unlink_discards_dirty_pages_and_frees_blocks_for_the_next_file() {
    let mut tree = Tree::new();
    let d = tree.add(ROOT_INO, "d", Kind::Dir, 0).unwrap();
    let a = tree.add(d, "a", Kind::File, 64 * KIB).unwrap();
    let layout = Layout::build(&tree, FsKind::ext3(), 0, 1 << 22, rand_pcg::Pcg64::seed_from_u64(1)).unwrap();
    let a_extents: Vec<(u64, u64)> = layout.data_extents(a).iter().map(|e| (e.sector, e.pages * PAGE_SECTORS)).collect();
    let a_first = layout.sector_of(a, 0).unwrap();
    let free_before = layout.free_bytes();
    let b = tree.end_ino(); // the next inode number: unlink does not reuse a's
    let script = Script(vec![
        Syscall::Lookup(a),
        Syscall::Write { ino: a, off: 0, len: 64 * KIB, mode: WriteMode::Buffered },
        Syscall::Unlink(a),
        Syscall::Unlink(a),                          // gone: an error, counted
        Syscall::Read { ino: a, off: 0, len: 4096 }, // so is a read of it
        Syscall::Create { parent: d, name: "b".into(), dir: false },
        Syscall::Write { ino: b, off: 0, len: 16 * KIB, mode: WriteMode::Buffered },
        Syscall::Fsync(b),
    ]);
    let cfg = HostSection::default().config().unwrap();
    let defs = vec![TaskDef {
        name: "t".into(),
        program: Box::new(script),
        start: Start::At(0),
        prio: IoPrio::default(),
        weight: 1,
        ends_run: false,
    }];
    let mut k = Kernel::new(cfg, tree, layout, defs, u64::MAX / 4, 1);
    let mut disk = RotationalDisk::new(preset("maxtor-6l080l0").unwrap()).unwrap();
    let mut sched = iosched::sched::registry::build("deadline", None, &Default::default()).unwrap();
    let out = simulate(&mut disk, sched.as_mut(), &mut k);
    let rep = k.report();
    let t = &rep.tasks[0];
    assert!(t.elapsed_s.is_some());
    assert_eq!(t.errors, 2, "{:?}", t.error);
    assert!(t.error.as_deref().unwrap_or("").contains("unlink"), "{:?}", t.error);
    // a's dirty pages were never written: no write lands in a's old blocks but b's own.
    assert_eq!(k.layout().sector_of(b, 0), Some(a_first), "b reuses a's first block");
    let b_end = a_first + 4 * PAGE_SECTORS;
    for r in out.records.iter().filter(|r| r.op == Op::Write) {
        for &(s, n) in &a_extents {
            let overlap = r.start_sector < s + n && r.start_sector + r.size_sectors as u64 > s;
            assert!(!overlap || (r.start_sector >= a_first && r.start_sector + r.size_sectors as u64 <= b_end), "{r:?}");
        }
    }
    // a's 16 blocks and its indirect block (16 > 12 direct ones) freed, b's 4 taken.
    assert_eq!(k.layout().free_bytes(), free_before + (17 - 4) * 4 * KIB);
    assert!(!k.tree().contains(a) && k.tree().lookup("d/b") == Some(b));
    assert_eq!(rep.dirty_pages_at_end, 0);
    // The metadata unlink dirtied was written back (the directory block and inode blocks).
    let meta_writes = out.records.iter().filter(|r| r.op == Op::Write && r.start_sector < a_first).count();
    assert!(meta_writes > 0);
}

fn ffsb(sched: &str, weights: &str, seed: u64) -> String {
    format!(
        r#"
[device]
preset = "maxtor-6l080l0"
[block]
tags = "legacy"
[host]
memory_mib = 8
fs = "ext3"
fs_mib = 2048
[[task]]
name = "ffsb"
command = "ffsb"
path = "/data"
[task.ffsb]
dirs = 8
files = 400
threads = 4
ops = 60
{weights}
[[scheduler]]
name = "{sched}"
[run]
duration_s = 3600
seed = {seed}
"#
    )
}

fn ffsb_task(text: &str) -> iosched::host::report::TaskReport {
    let s = Scenario::parse(text, "ffsb.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut runs = s.run(None).unwrap_or_else(|e| panic!("{e}"));
    let r = runs.remove(0);
    let inv = &r.summary.invariants;
    assert_eq!((inv.idled_with_work, inv.left_behind, inv.bad_completions, inv.bios_unaccounted), (0, 0, 0, 0), "{inv:?}");
    r.summary.host.unwrap().tasks.remove(0)
}

const MAIL: &str = "read = 40\ncreate = 40\ndelete = 20";
const META: &str = "create = 40\nappend = 40\ndelete = 20";

#[test]
fn ffsb_runs_are_deterministic_and_its_operations_do_not_depend_on_the_scheduler() {
    let a = ffsb_task(&ffsb("cas", MAIL, 3));
    let b = ffsb_task(&ffsb("cas", MAIL, 3));
    assert_eq!(a.elapsed_s, b.elapsed_s);
    assert_eq!((a.bytes_read, a.bytes_written, a.data_pages_read), (b.bytes_read, b.bytes_written, b.data_pages_read));
    assert_eq!(a.children, 4);
    assert_eq!(a.errors, 0, "{:?}", a.error);
    assert!(a.bytes_read > 0 && a.bytes_written > 0);
    // Each thread's operations (files, sizes) are the same under every scheduler.
    for sched in ["noop", "deadline", "las"] {
        let o = ffsb_task(&ffsb(sched, MAIL, 3));
        assert_eq!((o.bytes_read, o.bytes_written), (a.bytes_read, a.bytes_written), "{sched}");
        assert!(o.elapsed_s.is_some());
    }
    let c = ffsb_task(&ffsb("cas", MAIL, 4));
    assert_ne!((c.bytes_read, c.bytes_written), (a.bytes_read, a.bytes_written));
    let m = ffsb_task(&ffsb("deadline", META, 3));
    assert_eq!(m.bytes_read, 0);
    assert!(m.bytes_written > 0 && m.errors == 0, "{:?}", m.error);
}

fn err(text: &str) -> String {
    match Scenario::parse(text, "bad.toml") {
        Err(e) => e.to_string(),
        Ok(s) => match s.run(None) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted"),
        },
    }
}

#[test]
fn bad_ffsb_tables_are_refused_naming_the_field() {
    let e = err(&ffsb("noop", "", 1));
    assert!(e.contains("give at least one positive operation weight"), "{e}");
    let e = err(&ffsb("noop", "read = 1\nthreads = 0", 1).replace("threads = 4\n", ""));
    assert!(e.contains("field `ffsb.threads` must be in [1, 1024], got 0"), "{e}");
    let e = err(&ffsb("noop", "read = 1\nmin_kib = 8\nmax_kib = 2", 1));
    assert!(e.contains("field `ffsb.max_kib` (2) is below `ffsb.min_kib` (8)"), "{e}");
    let e = err(&ffsb("noop", "read = 1\nread_bs_kib = -1", 1));
    assert!(e.contains("ffsb.read_bs_kib"), "{e}");
    let e = err(&ffsb("noop", "read = 1\nbogus = 1", 1));
    assert!(e.contains("bogus"), "{e}");
    let e = err(&ffsb("noop", "read = 1", 1).replace("[task.ffsb]\n", "[task.ffsb]\nfiles = 10000000\n").replace("files = 400\n", ""));
    assert!(e.contains("field `ffsb.files` must be in [0, 5000000]"), "{e}");
    let e = err(&ffsb("noop", "read = 1", 1).replace("threads = 4\n", "threads = 9\n"));
    assert!(e.contains("field `ffsb.threads` (9) exceeds `ffsb.dirs` (8)"), "{e}");
    let no_table = ffsb("noop", "", 1).replace("[task.ffsb]\ndirs = 8\nfiles = 400\nthreads = 4\nops = 60\n", "");
    assert!(err(&no_table).contains("command `ffsb` needs a `[task.ffsb]` table"), "{}", err(&no_table));
}

/// The host kernel a scenario's validation built serves its first run (scenario/prepared.rs)
/// only when that run would build the same one, and runs as a fresh build does.
#[test]
fn the_kernel_validation_built_runs_as_a_fresh_one_and_only_for_the_same_inputs() {
    let summary = |s: &Scenario, seed: Option<u64>| serde_json::to_string(&s.run(seed).unwrap().remove(0).summary).unwrap();
    let s = Scenario::parse(&ffsb("deadline", MAIL, 3), "ffsb.toml").unwrap();
    let kept = summary(&s, None); // the kernel validation built
    assert_eq!(kept, summary(&s, None), "a second run builds its own kernel");
    // Another seed (given to the run, or set in the scenario after parsing): FFSB's files and
    // operations differ, so a kept kernel of seed 3 would show.
    let s = Scenario::parse(&ffsb("deadline", MAIL, 3), "ffsb.toml").unwrap();
    let by_option = summary(&s, Some(4));
    assert_eq!(by_option, summary(&s, Some(4)));
    assert_ne!(by_option, kept);
    let mut s = Scenario::parse(&ffsb("deadline", MAIL, 3), "ffsb.toml").unwrap();
    s.run.seed = 4;
    let task = |json: &str| serde_json::from_str::<serde_json::Value>(json).unwrap()["host"]["tasks"][0].clone();
    assert_eq!(task(&summary(&s, None)), task(&by_option), "a changed scenario builds anew");
}
