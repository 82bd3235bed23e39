//! The host above the block layer, as Linux splits mm/ and fs/ from block/: the page cache and
//! writeback, readahead, files and directories with their metadata, and the CPUs processes
//! share. Its one contract to the layer below is the workload's: bios out (`Emit::submit`),
//! completions back (`Workload::on_complete`). A scenario without `[host]` never builds one.

mod bio;
pub mod config;
pub mod cpu;
mod dirty_pages;
pub mod fs;
pub mod kernel;
mod kjournald;
pub mod page_cache;
mod page_index;
mod read;
mod read_2_6_9;
mod read_freebsd;
pub mod readahead;
pub mod readahead_2_6_9;
pub mod readahead_freebsd;
pub mod report;
pub mod syscall;
pub mod syscall_cost;
mod unlink;
mod write;
pub mod writeback;

/// Bytes in one page of the page cache.
pub const PAGE_BYTES: u64 = 4096;
/// 512-byte sectors in one page.
pub const PAGE_SECTORS: u64 = PAGE_BYTES / crate::request::SECTOR_BYTES;

/// An inode number. Files and directories are numbered by the file system from `ROOT_INO`.
pub type Ino = u32;

/// The block device's own inode: metadata blocks (inode tables, directory blocks, indirect
/// blocks, bitmaps) are cached as its pages, indexed by 4 KiB disk page (sector / 8), the way
/// Linux's buffer cache lives in the block device's page cache.
pub const BDEV_INO: Ino = 0;

/// A page of the page cache: page `index` (4 KiB units from offset 0) of inode `ino`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageKey {
    pub ino: Ino,
    pub index: u64,
}

impl PageKey {
    pub fn new(ino: Ino, index: u64) -> Self {
        PageKey { ino, index }
    }
}

/// FreeBSD 4's MAXPHYS in pages: the longest transfer, so the longest read cluster (128 KiB).
pub const FREEBSD_MAXPHYS_PAGES: u64 = 32;
