//! Directory entry sizes, which decide how many entries a directory block holds.

use super::geometry::Geometry;

/// Bytes a directory entry with a name of `name_len` bytes takes: ext2's `EXT2_DIR_REC_LEN`
/// (8-byte header, name padded to 4 bytes); FFS's `DIRSIZ` (8-byte header, name and its NUL
/// padded to 4 bytes), in 512-byte `DIRBLKSIZ` chunks no entry crosses.
pub(crate) fn entry_bytes(geo: &Geometry, name_len: usize) -> u64 {
    let n = name_len as u64;
    if geo.tails {
        8 + (n + 1).div_ceil(4) * 4
    } else {
        8 + n.div_ceil(4) * 4
    }
}
