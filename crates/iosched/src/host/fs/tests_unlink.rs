//! Tests of unlink (free lists reused) and of growth after other allocations (appends).

use super::*;
use crate::host::Ino;
use rand::SeedableRng;
use rand_pcg::Pcg64;

const GIB_SECTORS: u64 = 1 << 21;

fn setup(kind: FsKind) -> (Tree, Layout, Ino) {
    let mut t = Tree::new();
    let d = t.add(ROOT_INO, "d", Kind::Dir, 0).unwrap();
    let l = Layout::build(&t, kind, 0, 2 * GIB_SECTORS, Pcg64::seed_from_u64(1)).unwrap();
    (t, l, d)
}

fn new_file(t: &mut Tree, l: &mut Layout, d: Ino, name: &str, size: u64) -> Ino {
    let (f, _) = l.create(t, d, name, Kind::File).unwrap();
    l.extend(f, size).unwrap();
    t.set_size(f, size).unwrap();
    f
}

#[test]
fn unlink_frees_blocks_and_inode_for_reuse() {
    for kind in [FsKind::ext3(), FsKind::ffs()] {
        let (mut t, mut l, d) = setup(kind);
        let a = new_file(&mut t, &mut l, d, "a", 40 * 4096);
        let b = new_file(&mut t, &mut l, d, "b", 10 * 4096);
        let free0 = l.free_bytes();
        let (a_dino, a_first) = (l.disk_ino(a), l.sector_of(a, 0).unwrap());
        let freed = l.unlink(&mut t, a).unwrap();
        // Data and the indirect block (40 blocks > 12 direct: ext2 needs one) are freed.
        let freed_sectors: u64 = freed.data.iter().map(|r| r.1).sum();
        assert_eq!(l.free_bytes() - free0, freed_sectors * 512, "{kind:?}");
        assert!(freed_sectors >= 40 * 8, "{kind:?}");
        if matches!(kind, FsKind::Ext2 { .. }) {
            assert_eq!(freed.indirect.len(), 1);
        }
        // The entry's directory block, both inodes' blocks, the inode bitmap are dirtied.
        assert!(freed.dirty.contains(&l.inode_block(d)));
        assert!(!l.contains(a) && !t.contains(a));
        assert_eq!(t.lookup("d/a"), None);
        assert_eq!(t.files(), 1);
        assert!(l.contains(b));
        // The next file gets the freed inode (the lowest free one) and the freed blocks (first
        // fit from the group's start).
        let c = new_file(&mut t, &mut l, d, "c", 8 * 4096);
        assert_eq!(l.disk_ino(c), a_dino, "{kind:?}");
        assert_eq!(l.sector_of(c, 0), Some(a_first), "{kind:?}");
        assert!(l.unlink(&mut t, d).unwrap_err().contains("directory"));
        assert!(l.unlink(&mut t, a).is_err());
    }
}

#[test]
fn unlinked_entries_leave_room_reused_in_the_directory() {
    let (mut t, mut l, d) = setup(FsKind::ext2());
    // Entries of 8 + 12 bytes: 4096 - 24 (dots) / 20 = 203 per block; 300 make two blocks.
    let files: Vec<Ino> = (0..300).map(|i| new_file(&mut t, &mut l, d, &format!("name{i:08}"), 4096)).collect();
    assert_eq!(l.dir_blocks(d).len(), 2);
    assert_eq!(l.entry_page(files[0]), 0);
    l.unlink(&mut t, files[0]).unwrap();
    // The next entry fills the first block's hole (ext2_add_link scans from the first block).
    let g = new_file(&mut t, &mut l, d, "nameXXXXXXXX", 4096);
    assert_eq!(l.entry_page(g), 0);
    let h = new_file(&mut t, &mut l, d, "nameYYYYYYYY", 4096);
    assert_eq!(l.entry_page(h), 1);
}

#[test]
fn append_allocates_after_the_files_last_block() {
    let (mut t, mut l, d) = setup(FsKind::ext3());
    let a = new_file(&mut t, &mut l, d, "a", 4 * 4096);
    // Free space right after a: the append continues a's extent.
    let end_a = l.sector_of(a, 3).unwrap();
    l.extend(a, 6 * 4096).unwrap();
    t.set_size(a, 6 * 4096).unwrap();
    assert_eq!(l.sector_of(a, 4), Some(end_a + 8));
    assert_eq!(l.data_extents(a).len(), 1);
    // Another file takes the blocks after a; a's next append goes to the first free block
    // after its last one (past b), not back to the group's start.
    let b = new_file(&mut t, &mut l, d, "b", 3 * 4096);
    assert_eq!(l.sector_of(b, 0), Some(end_a + 3 * 8));
    let b_end = l.sector_of(b, 2).unwrap();
    let x = new_file(&mut t, &mut l, d, "x", 4096);
    l.unlink(&mut t, x).unwrap(); // a hole after b, freed again
    l.extend(a, 7 * 4096).unwrap();
    assert_eq!(l.sector_of(a, 6), Some(b_end + 8));
    // A hole before a's end is not used by a's append: the goal is after its last block.
    let (_, free_before) = (0, l.free_bytes());
    l.extend(a, 8 * 4096).unwrap();
    assert_eq!(l.sector_of(a, 7), Some(b_end + 16));
    assert_eq!(free_before - l.free_bytes(), 4096);
}

#[test]
fn create_delete_cycles_keep_allocations_disjoint() {
    for kind in [FsKind::ext3(), FsKind::ffs()] {
        let (mut t, mut l, d) = setup(kind);
        let mut rng = Pcg64::seed_from_u64(5);
        let mut live: Vec<Ino> = Vec::new();
        use rand::Rng;
        let free0 = l.free_bytes();
        for i in 0..2000 {
            if live.len() > 50 && rng.gen_bool(0.45) {
                let k = rng.gen_range(0..live.len());
                l.unlink(&mut t, live.swap_remove(k)).unwrap();
            } else {
                let size = rng.gen_range(1..300_000);
                live.push(new_file(&mut t, &mut l, d, &format!("f{i}"), size));
            }
        }
        // Nothing overlaps; every live file's units plus the free ones account for the space.
        let mut runs: Vec<(u64, u64)> = live.iter().flat_map(|&f| l.allocated_sectors(f)).collect();
        runs.sort();
        for w in runs.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "{kind:?}: overlap {:?} {:?}", w[0], w[1]);
        }
        for f in live.clone() {
            l.unlink(&mut t, f).unwrap();
        }
        // Everything back but the directory's blocks grown meanwhile.
        let dir_bytes = l.dir_blocks(d).len() as u64 * 4096;
        assert!(free0 - l.free_bytes() <= dir_bytes, "{kind:?}: {} lost", free0 - l.free_bytes());
        assert_eq!(t.files(), 0);
    }
}
