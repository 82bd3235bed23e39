//! I/O on the backing files, shared by the file system (fs.rs, which does it on arrival over the
//! emulated disk) and the dispatcher (dispatcher.rs, which does it at dispatch over the real
//! backend): whole reads, and the errno a FUSE reply carries for an I/O error.

use fuser::Errno;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// The errno for a FUSE reply: the error's own, else EIO.
pub fn errno(e: std::io::Error) -> Errno {
    Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))
}

/// Reads up to `size` bytes at `offset` (fewer only at the end of the file).
pub fn read_fully(file: &File, offset: u64, size: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; size];
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(n);
    Ok(buf)
}
