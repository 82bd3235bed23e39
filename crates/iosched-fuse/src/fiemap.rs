//! Physical block addresses of backing files (the real backend): the FIEMAP ioctl maps a file
//! offset to a byte address on the file system's block device. Any answer the kernel cannot give
//! (a hole, data not yet allocated, a file system without FIEMAP) is None, and the caller falls
//! back to the emulated layout.

use std::fs::File;
use std::os::unix::io::AsRawFd;

/// _IOWR('f', 11, struct fiemap): struct fiemap is 32 bytes.
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
/// The extent's physical location is not known (yet).
const FIEMAP_EXTENT_UNKNOWN: u32 = 0x0002;
/// Delayed allocation: no block assigned yet.
const FIEMAP_EXTENT_DELALLOC: u32 = 0x0004;
/// Data stored with metadata (no block address of its own).
const FIEMAP_EXTENT_DATA_INLINE: u32 = 0x0200;

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct FiemapExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

#[repr(C)]
#[derive(Default)]
struct FiemapOne {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
    fm_extents: [FiemapExtent; 1],
}

/// The byte address on the block device of the byte at `offset` in `file`, if the kernel knows
/// it. One ioctl, no sync: data still in delayed allocation has no address yet.
pub fn physical_byte(file: &File, offset: u64) -> Option<u64> {
    let mut m = FiemapOne { fm_start: offset, fm_length: 1, fm_extent_count: 1, ..Default::default() };
    // SAFETY: `m` is a struct fiemap with room for fm_extent_count = 1 extent, as the ioctl expects.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP as _, &mut m as *mut FiemapOne) };
    if rc != 0 || m.fm_mapped_extents == 0 {
        return None;
    }
    let e = m.fm_extents[0];
    if e.fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_DATA_INLINE) != 0 {
        return None;
    }
    if offset < e.fe_logical || offset >= e.fe_logical.saturating_add(e.fe_length) {
        return None; // a hole before the next extent
    }
    Some(e.fe_physical + (offset - e.fe_logical))
}

/// Size in bytes of the block device holding `path`'s file system (for the real backend's
/// address space), from /sys; None when it cannot be found (tmpfs, overlay, ...).
pub fn backing_device_bytes(path: &std::path::Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let sectors = std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/size")).ok()?;
    sectors.trim().parse::<u64>().ok().filter(|&s| s > 0).map(|s| s * 512)
}

/// Size in bytes of the file system holding `path` (statvfs): the address space when the block
/// device cannot be found (overlayfs and btrfs report an anonymous device, yet FIEMAP answers with
/// addresses on the file system's real device, which is at least this large).
pub fn filesystem_bytes(path: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid C string and st a statvfs to fill.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_blocks as u64 * st.f_frsize as u64).filter(|&b| b > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn an_allocated_file_has_addresses_that_advance_with_the_offset() {
        let dir = std::env::temp_dir().join(format!("iosched-fiemap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        let f = File::open(&path).unwrap();
        let a = physical_byte(&f, 0);
        let b = physical_byte(&f, 8192);
        std::fs::remove_dir_all(&dir).unwrap();
        match (a, b) {
            // A freshly written and synced 1 MiB file is one extent on ext4/xfs/btrfs.
            (Some(a), Some(b)) => assert_eq!(b, a + 8192),
            // A file system without FIEMAP (tmpfs, overlay): nothing to check.
            _ => eprintln!("FIEMAP unavailable for {}: skipped", dir.display()),
        }
    }

    #[test]
    fn a_hole_has_no_address() {
        let dir = std::env::temp_dir().join(format!("iosched-fiemap-hole-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sparse");
        let f = File::create(&path).unwrap();
        f.set_len(1 << 20).unwrap();
        let got = physical_byte(&f, 4096);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(got, None);
    }
}
