//! Where a file system's fixed structures lie: groups (ext2 block groups, FFS cylinder groups),
//! each with its bitmaps and inode table, then data. Positions are in allocation units (ext2:
//! 4 KiB blocks; FFS: 2 KiB fragments) from the partition's start.

/// One group's fixed structures (units from the partition's start).
#[derive(Clone, Debug)]
pub(crate) struct GroupGeo {
    pub end: u64,
    /// ext2: the block bitmap; FFS: the cylinder group block (bitmaps and summary).
    pub bitmap: u64,
    /// ext2: the inode bitmap; FFS: the cylinder group block.
    pub inode_bitmap: u64,
    /// The first block of the inode table.
    pub itable: u64,
    /// The first unit not holding fixed structures.
    pub data: u64,
}

#[derive(Clone, Debug)]
pub(crate) struct Geometry {
    /// Bytes in an allocation unit (ext2: the block, 4096; FFS: the fragment, 2048).
    pub unit_bytes: u64,
    /// Units in a block (ext2: 1; FFS: 8).
    pub block_units: u64,
    pub units_per_group: u64,
    pub groups: Vec<GroupGeo>,
    /// Inodes in each group.
    pub ipg: u32,
    pub inode_bytes: u32,
    /// The disk inode number of the group's first inode is `g * ipg + ino_base` (ext2 numbers
    /// from 1, FFS from 0).
    pub ino_base: u32,
    /// Inodes of group 0 in use before the root's first entry (reserved ones, the root, ext2's
    /// `lost+found`).
    pub reserved_inodes: u32,
    pub root_dino: u32,
    /// Directory entries never cross this many bytes (ext2: the block; FFS: `DIRBLKSIZ` 512).
    pub dirblk: u64,
    /// Block pointers in an indirect block.
    pub nindir: u64,
    /// ext2: the first block of the group descriptor table.
    pub gdt: Option<u64>,
    /// FFS: files of up to `NDADDR` blocks end in fragments.
    pub tails: bool,
    /// FFS: a file moves to another cylinder group after this many blocks (`fs_maxbpg`).
    pub maxbpg: u64,
}

/// Direct block pointers in an inode (ext2 and FFS).
pub(crate) const NDADDR: u64 = 12;

impl Geometry {
    pub fn block_bytes(&self) -> u64 {
        self.unit_bytes * self.block_units
    }

    pub fn end(&self) -> u64 {
        self.groups.last().map_or(0, |g| g.end)
    }

    pub fn group_of_unit(&self, u: u64) -> usize {
        ((u / self.units_per_group) as usize).min(self.groups.len() - 1)
    }

    /// `(group, index in the group)` of a disk inode number.
    pub fn split_ino(&self, dino: u32) -> (usize, u32) {
        let i = dino - self.ino_base;
        ((i / self.ipg) as usize, i % self.ipg)
    }

    /// The unit starting the block of the inode table that holds disk inode `dino`.
    pub fn inode_unit(&self, dino: u32) -> u64 {
        let (g, i) = self.split_ino(dino);
        let per_block = self.block_bytes() / self.inode_bytes as u64;
        self.groups[g].itable + (i as u64 / per_block) * self.block_units
    }

    /// ext2 (4 KiB blocks, 32768 per group), as mke2fs lays it out: a superblock copy and the
    /// group descriptor table in groups 0, 1 and powers of 3, 5 and 7 (`sparse_super`), then
    /// the block bitmap, the inode bitmap and the inode table.
    pub fn ext2(sectors: u64, inode_bytes: u32, bytes_per_inode: u64) -> Result<Geometry, String> {
        const BPG: u64 = 32768;
        let mut blocks = sectors / 8;
        let mut ngroups = blocks.div_ceil(BPG).max(1);
        let gdt_blocks = |ng: u64| (ng * 32).div_ceil(4096);
        let ipg_for = |blocks: u64, ng: u64| -> u64 {
            let inodes = blocks * 4096 / bytes_per_inode;
            let per_block = 4096 / inode_bytes as u64;
            let ipg = inodes.div_ceil(ng).max(16);
            (ipg.div_ceil(per_block) * per_block).div_ceil(8) * 8
        };
        let overhead = |g: u64, ng: u64, ipg: u64| -> u64 {
            let sb = if has_super(g) { 1 + gdt_blocks(ng) } else { 0 };
            sb + 2 + ipg * inode_bytes as u64 / 4096
        };
        // mke2fs drops a last group too small to hold its own structures and some data.
        if ngroups > 1 {
            let last = blocks - (ngroups - 1) * BPG;
            if last < overhead(ngroups - 1, ngroups, ipg_for(blocks, ngroups)) + 64 {
                ngroups -= 1;
                blocks = ngroups * BPG;
            }
        }
        let ipg = ipg_for(blocks, ngroups).min(BPG); // one bitmap block's worth at most
        if ngroups > u32::MAX as u64 / ipg {
            return Err(format!("{sectors} sectors make too many inodes for 32-bit inode numbers"));
        }
        let mut groups = Vec::with_capacity(ngroups as usize);
        for g in 0..ngroups {
            let start = g * BPG;
            let end = ((g + 1) * BPG).min(blocks);
            let sb = if has_super(g) { 1 + gdt_blocks(ngroups) } else { 0 };
            let bitmap = start + sb;
            let data = bitmap + 2 + ipg * inode_bytes as u64 / 4096;
            if data + 16 > end {
                return Err(format!("the partition ({sectors} sectors, {} KiB) is too small for an ext2 file system", sectors / 2));
            }
            groups.push(GroupGeo { end, bitmap, inode_bitmap: bitmap + 1, itable: bitmap + 2, data });
        }
        Ok(Geometry {
            unit_bytes: 4096,
            block_units: 1,
            units_per_group: BPG,
            groups,
            ipg: ipg as u32,
            inode_bytes,
            ino_base: 1,
            // Inodes 1-10 are reserved (2 is the root); 11 is lost+found.
            reserved_inodes: 11,
            root_dino: 2,
            dirblk: 4096,
            nindir: 1024,
            gdt: Some(1),
            tails: false,
            maxbpg: u64::MAX,
        })
    }

    /// UFS1 as FreeBSD 4's newfs lays it out: 16 KiB blocks of 8 fragments; each cylinder group
    /// starts with the boot block/superblock area and the cylinder group block (24 fragments),
    /// then its inode blocks (128-byte inodes), then data; cylinder group 0 also holds the
    /// cylinder group summary after its inodes.
    pub fn ffs(sectors: u64, cg_bytes: u64, bytes_per_inode: u64) -> Result<Geometry, String> {
        const FRAG: u64 = 2048;
        const FRAGS_PER_BLOCK: u64 = 8;
        const INOPB: u64 = 16384 / 128;
        const HEADER: u64 = 24; // sblkno 8 + superblock 8 + cg block 8 fragments
        let mut frags = sectors / 4;
        let fpg = cg_bytes / FRAG;
        let mut ncg = frags.div_ceil(fpg).max(1);
        let ipg = (cg_bytes / bytes_per_inode).div_ceil(INOPB).max(1) * INOPB;
        let inode_frags = ipg / INOPB * FRAGS_PER_BLOCK;
        if ncg > 1 && frags - (ncg - 1) * fpg < HEADER + inode_frags + 4 * FRAGS_PER_BLOCK {
            ncg -= 1;
            frags = ncg * fpg;
        }
        if ncg > u32::MAX as u64 / ipg {
            return Err(format!("{sectors} sectors make too many inodes for 32-bit inode numbers"));
        }
        let csum_frags = (ncg * 16).div_ceil(FRAG);
        let mut groups = Vec::with_capacity(ncg as usize);
        for c in 0..ncg {
            let start = c * fpg;
            let end = ((c + 1) * fpg).min(frags);
            let itable = start + HEADER;
            let data = itable + inode_frags + if c == 0 { csum_frags } else { 0 };
            if data + 4 * FRAGS_PER_BLOCK > end {
                return Err(format!("the partition ({sectors} sectors, {} KiB) is too small for an FFS file system", sectors / 2));
            }
            groups.push(GroupGeo { end, bitmap: start + 16, inode_bitmap: start + 16, itable, data });
        }
        Ok(Geometry {
            unit_bytes: FRAG,
            block_units: FRAGS_PER_BLOCK,
            units_per_group: fpg,
            groups,
            ipg: ipg as u32,
            inode_bytes: 128,
            ino_base: 0,
            // Inodes 0 and 1 are reserved; 2 is the root.
            reserved_inodes: 3,
            root_dino: 2,
            dirblk: 512,
            nindir: 4096,
            gdt: None,
            tails: true,
            maxbpg: 4096,
        })
    }
}

/// Does ext2 group `g` hold a superblock copy (`sparse_super`: 0, 1 and powers of 3, 5, 7)?
pub(crate) fn has_super(g: u64) -> bool {
    if g <= 1 {
        return true;
    }
    [3u64, 5, 7].iter().any(|&b| {
        let mut p = b;
        while p < g {
            p *= b;
        }
        p == g
    })
}
