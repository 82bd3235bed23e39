//! Calibrating a real file or block device (Iyer & Druschel 2001, section 3.6: "a user-level
//! program performs some reads ... and fits a smooth curve"): a [`Probe`] that times reads with
//! O_DIRECT, so that the page cache does not answer them. The curve it yields gives the real
//! backend's schedulers positioning estimates (`iosched mount --backend real --calibration`).

use iosched::device::calibration::Probe;
use iosched::request::SECTOR_BYTES;
use iosched::time::Nanos;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

/// O_DIRECT wants buffers aligned to the logical block size; 4 KiB covers every device here.
const ALIGN: usize = 4096;

/// A heap buffer aligned for O_DIRECT.
struct AlignedBuf {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl AlignedBuf {
    fn new(bytes: usize) -> AlignedBuf {
        let layout = std::alloc::Layout::from_size_align(bytes.max(ALIGN), ALIGN).expect("valid layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory");
        AlignedBuf { ptr, layout }
    }

    fn as_mut_slice(&mut self, bytes: usize) -> &mut [u8] {
        // SAFETY: ptr is valid for layout.size() bytes, and bytes <= that size.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, bytes.min(self.layout.size())) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in new().
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

pub struct RealProbe {
    file: File,
    capacity_sectors: u64,
    buf: AlignedBuf,
    /// Whether reads bypass the page cache (O_DIRECT was accepted).
    pub direct: bool,
    /// The first read error (the Probe interface has no error path; the caller checks this).
    pub error: Option<String>,
    pub reads: u64,
}

impl RealProbe {
    /// Opens `path` (a regular file or a block device) read-only with O_DIRECT; where the file
    /// system refuses O_DIRECT (tmpfs), it is opened without it and `direct` is false.
    pub fn open(path: &Path) -> Result<RealProbe, String> {
        use std::os::unix::fs::FileTypeExt;
        let kind = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?.file_type();
        if !(kind.is_file() || kind.is_block_device()) {
            return Err(format!("{}: not a regular file or a block device", path.display()));
        }
        let open = |flags: i32| OpenOptions::new().read(true).custom_flags(flags).open(path);
        let (file, direct) = match open(libc::O_DIRECT) {
            Ok(f) => (f, true),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => (open(0).map_err(|e| format!("{}: {e}", path.display()))?, false),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let bytes = size_of(&file).map_err(|e| format!("{}: cannot find its size: {e}", path.display()))?;
        let capacity_sectors = bytes / SECTOR_BYTES;
        if capacity_sectors == 0 {
            return Err(format!("{}: empty", path.display()));
        }
        Ok(RealProbe { file, capacity_sectors, buf: AlignedBuf::new(1 << 20), direct, error: None, reads: 0 })
    }
}

/// Size of a regular file or a block device (whose metadata length is 0: seek to its end).
fn size_of(file: &File) -> std::io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let len = file.metadata()?.len();
    if len > 0 {
        return Ok(len);
    }
    let mut f = file.try_clone()?;
    f.seek(SeekFrom::End(0))
}

impl Probe for RealProbe {
    fn capacity_sectors(&self) -> u64 {
        self.capacity_sectors
    }

    fn read(&mut self, sector: u64, sectors: u32) -> Nanos {
        // O_DIRECT needs aligned offsets and lengths: round to whole 4 KiB blocks.
        let per_block = ALIGN as u64 / SECTOR_BYTES;
        let first = sector / per_block * per_block;
        let bytes = ((sector + sectors as u64).div_ceil(per_block) * per_block - first) * SECTOR_BYTES;
        let buf = self.buf.as_mut_slice(bytes as usize);
        let start = Instant::now();
        let r = self.file.read_at(buf, first * SECTOR_BYTES);
        let took = start.elapsed().as_nanos() as Nanos;
        self.reads += 1;
        if let Err(e) = r {
            self.error.get_or_insert_with(|| format!("read at sector {sector}: {e}"));
        }
        took
    }

    fn idle(&mut self, ns: Nanos) {
        std::thread::sleep(Duration::from_nanos(ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosched::device::calibration::{measure, CalibrationOptions};
    use rand::SeedableRng;

    #[test]
    fn a_file_calibrates_to_a_curve() {
        let dir = std::env::temp_dir().join(format!("iosched-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        std::fs::write(&path, vec![1u8; 8 << 20]).unwrap();
        let mut probe = RealProbe::open(&path).unwrap();
        let opts = CalibrationOptions { samples: 2, points_per_decade: 2, max_idle_ns: 100_000, ..Default::default() };
        let cal = measure(&mut probe, &opts, &mut rand_pcg::Pcg64::seed_from_u64(1)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(probe.error, None);
        assert!(probe.reads > 50);
        // Distances up to 95% of 16,384 sectors, both directions, and 0.
        assert!(cal.points.iter().any(|p| p.distance > 10_000) && cal.points.iter().any(|p| p.distance < -10_000));
        assert!(!cal.curve.forward.is_empty() && !cal.curve.backward.is_empty());
    }

    #[test]
    fn a_missing_path_or_a_directory_is_a_clear_error() {
        let e = RealProbe::open(Path::new("/nonexistent/iosched-probe")).err().unwrap();
        assert!(e.starts_with("/nonexistent/iosched-probe: "), "{e}");
        let e = RealProbe::open(&std::env::temp_dir()).err().unwrap();
        assert!(e.ends_with(": not a regular file or a block device"), "{e}");
    }
}
