use super::*;
use crate::host::{Ino, PAGE_SECTORS};
use rand::SeedableRng;
use rand_pcg::Pcg64;

fn rng(seed: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed)
}

const GIB_SECTORS: u64 = 1 << 21;

fn file(tree: &mut Tree, parent: Ino, name: &str, size: u64) -> Ino {
    tree.add(parent, name, Kind::File, size).unwrap()
}

#[test]
fn listing_builds_the_tree() {
    let text = "4096 .\n4096 ./src\n120 ./src/main.c\n7 ./src/a b.txt\r\n30 ./doc/x/readme\n0 ./empty\n\n";
    let t = parse_listing(text, "tree.txt").unwrap();
    // root, src, main.c, "a b.txt", doc, x (created), readme, empty
    assert_eq!(t.len(), 8);
    assert_eq!((t.dirs(), t.files()), (4, 4));
    assert_eq!(t.total_bytes(), 120 + 7 + 30);
    let paths: Vec<String> = t.walk().iter().map(|&i| t.path_of(i)).collect();
    assert_eq!(paths, [".", "./doc", "./doc/x", "./doc/x/readme", "./empty", "./src", "./src/a b.txt", "./src/main.c"]);
    // Renumbered in find order.
    assert_eq!(t.walk(), (1..=8).collect::<Vec<Ino>>());
    let m = t.lookup("src/main.c").unwrap();
    assert_eq!(t.node(m).size_bytes, 120);
    assert_eq!(t.lookup("./src/a b.txt"), Some(7));
    assert_eq!(t.node(t.lookup("src").unwrap()).kind, Kind::Dir);
    assert_eq!(t.node(t.lookup("src").unwrap()).size_bytes, 0);
    assert_eq!(t.node(t.lookup("empty").unwrap()).kind, Kind::File);
    assert_eq!(t.lookup("src/nothing"), None);
    assert_eq!(t.depth_of(t.lookup("doc/x/readme").unwrap()), 3);
}

#[test]
fn typed_listing_keeps_empty_directories() {
    let t = parse_listing("d 4096 .\nd 4096 ./e\nf 10 ./f\n", "l").unwrap();
    assert_eq!(t.node(t.lookup("e").unwrap()).kind, Kind::Dir);
    assert_eq!(t.node(t.lookup("f").unwrap()).size_bytes, 10);
}

#[test]
fn listing_errors_name_the_file_and_line() {
    let err = |text: &str| parse_listing(text, "tree.txt").unwrap_err();
    assert_eq!(err("4096 .\nabc\n"), "tree.txt:2: expected `<size> <path>`, got `abc`");
    assert_eq!(err("4096 .\n1 ./a\nx12 ./b\n"), "tree.txt:3: size `x12` is not a number of bytes, in `x12 ./b`");
    assert_eq!(err("12 \n"), "tree.txt:1: an empty path, in `12 `");
    assert_eq!(err("1 ./a/../b\n"), "tree.txt:1: the path `./a/../b` holds `..`");
    assert_eq!(err("1 ./a\n2 ./b\n3 ./a\n"), "tree.txt:3: `./a` is listed twice");
    assert!(err("1 /etc/passwd\n").starts_with("tree.txt:1: `/etc/passwd` is not relative"));
    assert!(err("-1 ./a\n").starts_with("tree.txt:1: size `-1`"));
    assert!(err("99999999999999999999 ./a\n").starts_with("tree.txt:1: size"));
    assert!(err("f 1 ./a\n1 ./a/b\n").starts_with("tree.txt:2: `./a/b` is below `a`, listed as a file"));
    // Control characters are escaped in messages.
    assert_eq!(err("a\tb\n"), "tree.txt:1: expected `<size> <path>`, got `a\\tb`");
}

#[test]
fn listing_file_errors_name_the_file() {
    let p = std::env::temp_dir().join(format!("iosched-fs-listing-{}", std::process::id()));
    std::fs::write(&p, "1 ./a\nbad\n").unwrap();
    let e = read_listing(&p).unwrap_err();
    assert_eq!(e, format!("{}:2: expected `<size> <path>`, got `bad`", p.display()));
    std::fs::write(&p, "1 ./a\n2 ./b\n").unwrap();
    assert_eq!(read_listing(&p).unwrap().files(), 2);
    std::fs::remove_file(&p).unwrap();
    assert!(read_listing(&p).unwrap_err().ends_with("no such file"));
}

#[test]
fn description_gives_the_counts() {
    let spec = TreeSpec { depth: 2, dirs_per_dir: 3, files_per_dir: 4, file_size: SizeDist::Fixed(1000), name_len: 6 };
    assert_eq!((spec.dir_count(), spec.file_count()), (13, 52));
    let t = spec.build(&mut rng(1)).unwrap();
    assert_eq!((t.dirs(), t.files()), (13, 52));
    assert_eq!(t.total_bytes(), 52_000);
    assert!(t.lookup("d00000/d00002/f00003").is_some());
    // Creation order is find order.
    assert_eq!(t.walk(), (1..=65).collect::<Vec<Ino>>());
    let ln = TreeSpec { file_size: SizeDist::Lognormal { mean_bytes: 8000.0, sigma: 1.0 }, ..spec.clone() };
    let a = ln.build(&mut rng(7)).unwrap();
    assert_eq!(a, ln.build(&mut rng(7)).unwrap());
    assert_ne!(a, ln.build(&mut rng(8)).unwrap());
    let big = TreeSpec { depth: 4, dirs_per_dir: 100, ..spec };
    assert!(big.build(&mut rng(1)).unwrap_err().contains("the limit is 10000000"));
}

#[test]
fn lognormal_sizes_have_the_mean() {
    let spec = TreeSpec {
        depth: 0,
        dirs_per_dir: 0,
        files_per_dir: 20_000,
        file_size: SizeDist::Lognormal { mean_bytes: 10_000.0, sigma: 1.0 },
        name_len: 8,
    };
    let t = spec.build(&mut rng(3)).unwrap();
    let mean = t.total_bytes() as f64 / 20_000.0;
    assert!((mean / 10_000.0 - 1.0).abs() < 0.05, "mean {mean}");
}

#[test]
fn free_space_first_fit_and_merging() {
    let mut s = space::FreeSpace::new(100, 50, 2);
    s.free(10, 40);
    s.free(60, 40);
    assert_eq!(s.total_free(), 80);
    let w1 = space::Want { min: 1, max: 5, align: 1, within: 0 };
    assert_eq!(s.alloc(20, w1), Some((20, 5)));
    assert_eq!(s.alloc(0, w1), Some((10, 5)));
    assert_eq!(s.group_free(0), 30);
    // Aligned: 8 at a multiple of 8, at or after 25.
    let w8 = space::Want { min: 8, max: 8, align: 8, within: 0 };
    assert_eq!(s.alloc(25, w8), Some((32, 8)));
    // Within a block: 3 units not crossing a multiple of 8: 29..32 fits, from 30 it does not.
    let w3 = space::Want { min: 3, max: 3, align: 1, within: 8 };
    assert_eq!(s.alloc(30, w3), Some((40, 3)));
    assert_eq!(s.alloc(26, w3), Some((26, 3)));
    // Wrap around.
    assert_eq!(s.alloc(99, w1), Some((99, 1)));
    assert_eq!(s.alloc(100, w1), Some((15, 5)));
    s.free(15, 5);
    s.free(10, 5);
    s.free(20, 5);
    assert!(s.is_free(10) && s.is_free(24) && s.is_free(25));
}

fn ext2_layout(tree: &Tree, sectors: u64, seed: u64) -> Layout {
    Layout::build(tree, FsKind::ext2(), 0, sectors, rng(seed)).unwrap()
}

#[test]
fn ext2_geometry_follows_mke2fs() {
    let t = Tree::new();
    let l = ext2_layout(&t, 4 * GIB_SECTORS, 1);
    assert_eq!(l.groups(), 32);
    // 4 GiB / 16 KiB per inode over 32 groups.
    assert_eq!(l.inodes_per_group(), 8192);
    assert_eq!(l.disk_ino(ROOT_INO), 2);
    // Group 0: superblock, 1 descriptor block, bitmaps, then 512 blocks of 256-byte inodes.
    assert_eq!(l.inode_block(ROOT_INO), 4 * 8);
    assert_eq!(l.data_extents(ROOT_INO), &[Extent { file_page: 0, sector: (4 + 512) * 8, pages: 1 }]);
    assert_eq!(l.group_of_sector(32768 * 8 * 5 + 3), Some(5));
    assert_eq!(l.group_of_sector(4 * GIB_SECTORS), None);
    // ext3 (issue 25; was: the middle group, e2fsprogs 1.41's place): mke2fs 1.35's 8192
    // blocks at the first free blocks, after the root directory's block, the journal inode's
    // 9 indirect blocks among them in the walk's order (12 blocks, IND, 1024, DIND, IND, 1024,
    // IND, ...).
    let j = Layout::build(&t, FsKind::ext3(), 0, 4 * GIB_SECTORS, rng(1)).unwrap();
    assert_eq!(j.journal_blocks(), 8192);
    let first = (4 + 512 + 1) * 8;
    assert_eq!(j.journal()[0], Extent { file_page: 0, sector: first, pages: 12 });
    assert_eq!(j.journal()[1], Extent { file_page: 12, sector: first + 13 * 8, pages: 1024 });
    assert_eq!(j.journal()[2], Extent { file_page: 1036, sector: first + (13 + 1024 + 2) * 8, pages: 1024 });
    assert_eq!(j.journal_indirect_blocks().len(), 9);
    assert_eq!(j.journal_indirect_blocks()[..3], [first + 12 * 8, first + 1037 * 8, first + 1038 * 8]);
    assert_eq!(j.group_of_sector(j.journal().last().unwrap().sector), Some(0));
}

#[test]
fn ext2_files_are_in_their_directory_group_and_top_dirs_spread() {
    let spec = TreeSpec { depth: 2, dirs_per_dir: 8, files_per_dir: 10, file_size: SizeDist::Fixed(20_000), name_len: 8 };
    let t = spec.build(&mut rng(1)).unwrap();
    let l = ext2_layout(&t, 4 * GIB_SECTORS, 2);
    for ino in t.walk() {
        let n = t.node(ino);
        if n.kind == Kind::File {
            let g = l.group_of_inode(n.parent);
            assert_eq!(l.group_of_inode(ino), g, "{}", t.path_of(ino));
            for e in l.data_extents(ino) {
                assert_eq!(l.group_of_sector(e.sector), Some(g));
            }
            assert_eq!(l.group_of_sector(l.inode_block(ino)), Some(g));
        }
    }
    let top: Vec<u32> = t.node(ROOT_INO).children.iter().filter(|&&c| t.node(c).kind == Kind::Dir).map(|&c| l.group_of_inode(c)).collect();
    let mut distinct = top.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 8, "top-level directories in groups {top:?}");
}

#[test]
fn ext2_directory_blocks_hold_entries_by_name_length() {
    let mut t = Tree::new();
    // ext2 entries of 8-byte names take 16 bytes: 4096 - 24 for . and .. leaves room for 254.
    for i in 0..300 {
        file(&mut t, ROOT_INO, &format!("n{i:07}"), 0);
    }
    let l = ext2_layout(&t, GIB_SECTORS, 1);
    let blocks = l.dir_blocks(ROOT_INO);
    assert_eq!(blocks.len(), 2);
    assert_eq!(l.size_of(ROOT_INO), 8192);
    let c = t.node(ROOT_INO).children.clone();
    assert_eq!(l.entry_page(c[253]), 0);
    assert_eq!(l.entry_page(c[254]), 1);
    assert_eq!(l.dir_block_of_entry(ROOT_INO, c[254]), blocks[1]);
}

#[test]
fn ext2_indirect_blocks_come_before_the_data_they_map() {
    let mut t = Tree::new();
    let f = file(&mut t, ROOT_INO, "big", 2000 * 4096);
    let l = ext2_layout(&t, GIB_SECTORS, 1);
    let b = |page: u64| l.sector_of(f, page).unwrap();
    // 12 direct blocks, contiguous.
    assert_eq!(l.runs(f, 0, 12), vec![(b(0), 12)]);
    // The single-indirect block just before block 12's data.
    let ind = l.indirect_blocks_for(f, 12, 1);
    assert_eq!(ind, vec![b(11) + 8]);
    assert_eq!(b(12), ind[0] + 8);
    assert_eq!(l.indirect_blocks_for(f, 0, 12), Vec::<u64>::new());
    // Blocks 12..1036 contiguous after it.
    assert_eq!(l.runs(f, 12, 1024), vec![(b(12), 1024)]);
    // The double-indirect block and its first child, then block 1036.
    let dind = l.indirect_blocks_for(f, 1036, 10);
    assert_eq!(dind, vec![b(1035) + 8, b(1035) + 16]);
    assert_eq!(b(1036), b(1035) + 24);
    assert_eq!(l.runs(f, 1036, 964), vec![(b(1036), 964)]);
    // Whole file: 1 + 2 indirect blocks, four runs.
    assert_eq!(l.indirect_blocks_for(f, 0, 2000).len(), 3);
    assert_eq!(l.runs(f, 0, 2000).len(), 3);
    assert_eq!(l.runs(f, 1990, 100), vec![(b(1990), 10)]);
    assert_eq!(l.sector_of(f, 2000), None);
}

#[test]
fn ffs_files_near_their_directory_and_directories_spread() {
    let spec = TreeSpec { depth: 1, dirs_per_dir: 20, files_per_dir: 30, file_size: SizeDist::Fixed(5000), name_len: 8 };
    let t = spec.build(&mut rng(1)).unwrap();
    let l = Layout::build(&t, FsKind::ffs(), 0, 2 * GIB_SECTORS, rng(1)).unwrap();
    assert_eq!(l.groups(), 64);
    assert_eq!(l.block_bytes(), 16384);
    let mut dir_groups = Vec::new();
    for ino in t.walk() {
        let n = t.node(ino);
        match n.kind {
            Kind::Dir => dir_groups.push(l.group_of_inode(ino)),
            Kind::File => {
                let g = l.group_of_inode(n.parent);
                assert_eq!(l.group_of_inode(ino), g);
                // 5000 bytes: 3 fragments (6 KiB) = 2 pages, within one block.
                let ex = l.data_extents(ino);
                assert_eq!(ex.len(), 1);
                assert_eq!(ex[0].pages, 2);
                assert_eq!(l.group_of_sector(ex[0].sector), Some(g));
            }
        }
    }
    dir_groups.sort();
    dir_groups.dedup();
    assert_eq!(dir_groups.len(), 21, "each directory in a group of its own");
}

#[test]
fn ffs_large_files_change_group_each_indirect_section() {
    let mut t = Tree::new();
    let blocks = 12 + 4096 + 100;
    let f = file(&mut t, ROOT_INO, "big", blocks * 16384);
    // Cylinder groups of 128 MiB hold the first section (64 MiB).
    let l = Layout::build(&t, FsKind::Ffs { cg_bytes: 128 << 20, bytes_per_inode: 8192 }, 0, 4 * GIB_SECTORS, rng(1)).unwrap();
    let g0 = l.group_of_inode(f);
    let page = |lbn: u64| l.sector_of(f, lbn * 4).unwrap();
    assert_eq!(l.group_of_sector(page(0)), Some(g0));
    assert_eq!(l.group_of_sector(page(12)), Some(g0));
    assert_eq!(l.group_of_sector(page(4107)), Some(g0));
    // The second section (double indirect) goes to another group, its indirect blocks first.
    let g1 = l.group_of_sector(page(4108)).unwrap();
    assert_eq!((g0, g1), (0, 1));
    let ind = l.indirect_blocks_for(f, 4108 * 4, 4);
    assert_eq!(ind.len(), 2);
    assert_eq!(ind[1], ind[0] + 32);
    assert_eq!(page(4108), ind[1] + 32);
}

#[test]
fn ffs_tails_are_fragments() {
    let mut t = Tree::new();
    let a = file(&mut t, ROOT_INO, "a", 3000); // 2 fragments
    let b = file(&mut t, ROOT_INO, "b", 20_000); // 1 block + 2 fragments
    let c = file(&mut t, ROOT_INO, "c", 13 * 16384); // 13 whole blocks, no fragments
    let l = Layout::build(&t, FsKind::ffs(), 0, GIB_SECTORS, rng(1)).unwrap();
    let sectors = |i: Ino| l.data_extents(i).iter().map(|e| e.pages).sum::<u64>();
    assert_eq!(sectors(a), 1);
    assert_eq!(sectors(b), 5);
    assert_eq!(sectors(c), 52);
    // b's fragments follow its block.
    assert_eq!(l.runs(b, 0, 5).len(), 1);
    // a's two fragments sit within one 16 KiB block.
    let s = l.sector_of(a, 0).unwrap();
    assert_eq!(s / 32, (s + 7) / 32);
}

#[test]
fn layouts_are_deterministic() {
    let spec = TreeSpec::default();
    let t = spec.build(&mut rng(5)).unwrap();
    for kind in [FsKind::ext2(), FsKind::ffs()] {
        let a = Layout::build(&t, kind, 2048, 4 * GIB_SECTORS, rng(9)).unwrap();
        let b = Layout::build(&t, kind, 2048, 4 * GIB_SECTORS, rng(9)).unwrap();
        for ino in t.walk() {
            assert_eq!(a.data_extents(ino), b.data_extents(ino));
            assert_eq!(a.inode_block(ino), b.inode_block(ino));
            assert!(a.inode_block(ino) >= 2048);
        }
    }
    // ext2's Orlov start group is random: another seed, other groups.
    let a = Layout::build(&t, FsKind::ext2(), 0, 4 * GIB_SECTORS, rng(1)).unwrap();
    let b = Layout::build(&t, FsKind::ext2(), 0, 4 * GIB_SECTORS, rng(2)).unwrap();
    assert!(t.walk().iter().any(|&i| a.group_of_inode(i) != b.group_of_inode(i)));
}

#[test]
fn a_tree_too_big_gives_a_clear_error() {
    let spec = TreeSpec { depth: 1, dirs_per_dir: 4, files_per_dir: 10, file_size: SizeDist::Fixed(10 << 20), name_len: 8 };
    let t = spec.build(&mut rng(1)).unwrap();
    for kind in [FsKind::ext2(), FsKind::ffs()] {
        let e = Layout::build(&t, kind, 0, GIB_SECTORS / 4, rng(1)).unwrap_err();
        assert!(e.starts_with("the tree (5 directories, 50 files, 500 MiB) does not fit: the file system is full"), "{e}");
    }
    let e = Layout::build(&Tree::new(), FsKind::ext2(), 0, 100, rng(1)).unwrap_err();
    assert!(e.contains("too small for an ext2 file system"), "{e}");
    let e = Layout::build(&Tree::new(), FsKind::ffs(), 0, 100, rng(1)).unwrap_err();
    assert!(e.contains("too small for an FFS file system"), "{e}");
}

#[test]
fn create_and_extend_allocate_with_the_same_policies() {
    let mut t = Tree::new();
    let d = t.add(ROOT_INO, "d", Kind::Dir, 0).unwrap();
    let mut l = ext2_layout(&t, 4 * GIB_SECTORS, 1);
    let (f, a) = l.create(&mut t, d, "new", Kind::File).unwrap();
    assert_eq!(t.path_of(f), "./d/new");
    assert_eq!(l.group_of_inode(f), l.group_of_inode(d));
    assert!(a.data.is_empty());
    // The new inode's block, the inode bitmap, the group descriptor (block 1), the directory
    // block with the entry, the directory's inode block; no block bitmap.
    let g = l.group_of_inode(f) as u64;
    let gstart = g * 32768 * 8;
    let bitmaps = if g == 0 || g == 1 || g == 3 || g == 5 || g == 7 || g == 9 { gstart + 16 } else { gstart };
    let mut want = Vec::new();
    for s in [l.inode_block(f), bitmaps + 8, 8, l.dir_block_of_entry(d, f), l.inode_block(d)] {
        if !want.contains(&s) {
            want.push(s); // d's inode may be in f's inode table block
        }
    }
    assert_eq!(a.dirty, want);
    let a = l.extend(f, 10 * 4096).unwrap();
    assert_eq!(a.data.len(), 1);
    assert_eq!(l.runs(f, 0, 10), vec![(a.data[0].0, 10)]);
    assert!(a.indirect.is_empty());
    // Growing past 12 blocks: one indirect block, the data continues after it.
    let a = l.extend(f, 20 * 4096).unwrap();
    assert_eq!(a.indirect.len(), 1);
    assert_eq!(a.data[0], (l.sector_of(f, 10).unwrap(), 2 * 8));
    assert_eq!(l.sector_of(f, 12).unwrap(), a.indirect[0] + 8);
    assert_eq!(l.indirect_blocks_for(f, 12, 8), a.indirect);
    // More blocks of the same section: the indirect block is dirtied, not allocated.
    let a = l.extend(f, 21 * 4096).unwrap();
    assert!(a.indirect.is_empty());
    assert!(a.dirty.contains(&l.indirect_blocks_for(f, 12, 1)[0]));
    // A smaller size changes nothing.
    assert_eq!(l.extend(f, 4096).unwrap().data, vec![]);
    assert_eq!(l.size_of(f), 21 * 4096);
    // A new directory gets a block of its own; duplicates are refused.
    let (nd, a) = l.create(&mut t, d, "sub", Kind::Dir).unwrap();
    assert_eq!(a.data.len(), 1);
    assert_eq!(l.dir_blocks(nd).len(), 1);
    assert!(l.create(&mut t, d, "sub", Kind::File).unwrap_err().contains("already exists"));
    assert!(l.create(&mut t, d, "a/b", Kind::File).is_err());
}

#[test]
fn a_failed_creation_leaves_no_entry() {
    // A partition of one small group: fill its inodes, then one more creation fails.
    let mut t = Tree::new();
    let mut l = Layout::build(&t, FsKind::ffs(), 0, 4 << 11, rng(1)).unwrap();
    let ipg = l.inodes_per_group();
    let mut made = 0;
    let err = loop {
        match l.create(&mut t, ROOT_INO, &format!("f{made}"), Kind::File) {
            Ok(_) => made += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(made, ipg - 3);
    assert!(err.contains("no free inodes"), "{err}");
    assert_eq!(t.files(), made as usize);
    assert!(t.lookup(&format!("f{made}")).is_none());
}

#[test]
fn ffs_tails_grow_in_place_or_move() {
    let mut t = Tree::new();
    let mut l = Layout::build(&t, FsKind::ffs(), 0, GIB_SECTORS, rng(1)).unwrap();
    let (f, _) = l.create(&mut t, ROOT_INO, "f", Kind::File).unwrap();
    l.extend(f, 2048).unwrap();
    let s0 = l.sector_of(f, 0).unwrap();
    // The fragment after it is free: the tail grows in place.
    l.extend(f, 4096).unwrap();
    assert_eq!(l.sector_of(f, 0), Some(s0));
    assert_eq!(l.data_extents(f).len(), 1);
    // Past a block: a whole block, block aligned; then 16 KiB + 2 KiB: a block and a fragment.
    l.extend(f, 16384 + 2048).unwrap();
    let b = l.sector_of(f, 0).unwrap();
    assert_eq!(b % 32, 0);
    assert_eq!(l.data_extents(f).iter().map(|e| e.pages).sum::<u64>(), 5);
    let free = l.free_bytes();
    l.extend(f, 16384 + 4096).unwrap();
    assert_eq!(l.free_bytes(), free - 2048);
}

#[test]
fn layout_of_100k_files_is_fast() {
    let spec = TreeSpec {
        depth: 2,
        dirs_per_dir: 20,
        files_per_dir: 238,
        file_size: SizeDist::Lognormal { mean_bytes: 16384.0, sigma: 1.5 },
        name_len: 10,
    };
    let t = spec.build(&mut rng(1)).unwrap();
    assert!(t.files() > 100_000);
    for kind in [FsKind::ext2(), FsKind::ffs()] {
        let t0 = std::time::Instant::now();
        let l = Layout::build(&t, kind, 0, 16 * GIB_SECTORS, rng(1)).unwrap();
        let el = t0.elapsed();
        // Debug-profile bound (opt-level 1, shared machine); a release build takes a fraction.
        assert!(el.as_secs_f64() < 10.0, "{kind:?}: {el:?}");
        let extents: usize = t.walk().iter().map(|&i| l.data_extents(i).len()).sum();
        assert!(extents < 2 * t.len(), "{extents} extents");
        eprintln!("{kind:?}: {} files laid out in {el:?}, {extents} extents", t.files());
    }
}

#[test]
fn pages_map_to_sectors() {
    let mut t = Tree::new();
    let f = file(&mut t, ROOT_INO, "f", 5 * 4096 + 1);
    let l = ext2_layout(&t, GIB_SECTORS, 1);
    let s = l.sector_of(f, 0).unwrap();
    for p in 0..6 {
        assert_eq!(l.sector_of(f, p), Some(s + p * PAGE_SECTORS));
    }
    assert_eq!(l.sector_of(f, 6), None);
    assert_eq!(l.runs(f, 2, 100), vec![(s + 16, 4)]);
    assert_eq!(l.runs(f, 6, 1), vec![]);
}

/// Nothing allocated twice, nothing on the fixed structures, all inside the partition, and the
/// free count agrees.
fn check_disjoint(t: &Tree, l: &Layout) {
    let mut all: Vec<(u64, u64)> = l.fixed_sectors();
    let fixed: u64 = all.iter().map(|r| r.1).sum();
    let mut used = 0;
    for ino in t.walk() {
        for r in l.allocated_sectors(ino) {
            used += r.1;
            all.push(r);
        }
    }
    for e in l.journal() {
        used += e.pages * PAGE_SECTORS;
        all.push((e.sector, e.pages * PAGE_SECTORS));
    }
    for &s in l.journal_indirect_blocks() {
        used += PAGE_SECTORS;
        all.push((s, PAGE_SECTORS));
    }
    all.sort();
    for w in all.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "overlap: {:?} and {:?}", w[0], w[1]);
    }
    let last = all.last().unwrap();
    assert!(all[0].0 >= l.start_sector() && last.0 + last.1 <= l.start_sector() + l.sectors());
    let fs_sectors = fixed + used + l.free_bytes() / 512;
    assert!(fs_sectors <= l.sectors(), "{fs_sectors} > {}", l.sectors());
    // Every unit is fixed, used or free: they add up to the file system's size (which may
    // leave the partition's tail unused).
    let end = l.group_of_sector(l.start_sector() + fs_sectors - 1);
    assert!(end.is_some());
    assert_eq!(l.group_of_sector(l.start_sector() + fs_sectors), None);
}

#[test]
fn allocations_never_overlap() {
    let spec = TreeSpec {
        depth: 2,
        dirs_per_dir: 6,
        files_per_dir: 40,
        file_size: SizeDist::Lognormal { mean_bytes: 60_000.0, sigma: 2.0 },
        name_len: 12,
    };
    for seed in 0..3 {
        let t = spec.build(&mut rng(seed)).unwrap();
        for kind in [FsKind::ext3(), FsKind::ffs(), FsKind::Ffs { cg_bytes: 4 << 20, bytes_per_inode: 8192 }] {
            let mut t2 = t.clone();
            let mut l = Layout::build(&t2, kind, 64, 3 * GIB_SECTORS, rng(seed)).unwrap();
            check_disjoint(&t2, &l);
            // Grow some files, create more: still disjoint.
            let files: Vec<Ino> = t2.walk().into_iter().filter(|&i| t2.node(i).kind == Kind::File).collect();
            for (k, &f) in files.iter().enumerate().step_by(7) {
                let grow = l.size_of(f) + (k as u64 * 7919) % 300_000;
                l.extend(f, grow).unwrap();
                t2.set_size(f, grow).unwrap();
            }
            let dirs: Vec<Ino> = t2.walk().into_iter().filter(|&i| t2.node(i).kind == Kind::Dir).collect();
            for (k, &d) in dirs.iter().enumerate() {
                let (nd, _) = l.create(&mut t2, d, &format!("new{k}"), Kind::Dir).unwrap();
                let (nf, _) = l.create(&mut t2, nd, "file", Kind::File).unwrap();
                l.extend(nf, 5000 + k as u64 * 3000).unwrap();
            }
            check_disjoint(&t2, &l);
        }
    }
}
