//! DiskSim drives already loaded by this process, reused while every file their load read (the
//! description, its `source` includes, the seek curve) still holds the same bytes.
//!
//! Python checks, resolves and runs a scenario in three calls, each parsing it afresh; without
//! this each of them parsed and mapped the drive again (about 8 M instructions for the Atlas
//! 10K each, a tenth of a 1,000-request `iosched run`). A hit re-reads the files and compares
//! them byte for byte, so an edited file is always loaded again; failed loads are not kept.

use super::{load_drive, DiskSimDrive, DiskSimError};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// How many drives are kept (a sweep over drives loads each once per scenario call anyway).
const KEPT_DRIVES: usize = 8;

struct Loaded {
    path: PathBuf,
    /// Every file the load read, with its text then.
    files: Vec<(PathBuf, String)>,
    drive: DiskSimDrive,
}

static LOADED: Mutex<Vec<Loaded>> = Mutex::new(Vec::new());

thread_local! {
    /// The files read by the load running on this thread (None: not recording).
    static READS: RefCell<Option<Vec<(PathBuf, String)>>> = const { RefCell::new(None) };
}

/// Called by the drive's readers with each file's text as read.
pub(super) fn note_read(path: &Path, text: &str) {
    READS.with(|r| {
        if let Some(files) = r.borrow_mut().as_mut() {
            files.push((path.to_path_buf(), text.to_string()));
        }
    });
}

/// Whether every file still reads as it did.
fn unchanged(files: &[(PathBuf, String)]) -> bool {
    files.iter().all(|(p, text)| crate::input::read_text(p, crate::input::MAX_DESCRIPTION_BYTES).is_ok_and(|now| now == *text))
}

/// [`load_drive`], reusing this process's last load of `path` when none of its files changed.
pub fn load_drive_cached(path: &Path) -> Result<DiskSimDrive, DiskSimError> {
    let kept: Option<(Vec<(PathBuf, String)>, DiskSimDrive)> = {
        let loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
        loaded.iter().find(|l| l.path == path).map(|l| (l.files.clone(), l.drive.clone()))
    };
    if let Some((files, drive)) = kept {
        if unchanged(&files) {
            return Ok(drive);
        }
    }
    let outer = READS.with(|r| r.borrow_mut().replace(Vec::new()));
    let result = load_drive(path);
    let files = READS.with(|r| std::mem::replace(&mut *r.borrow_mut(), outer)).unwrap_or_default();
    if let Ok(drive) = &result {
        let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
        loaded.retain(|l| l.path != path);
        if loaded.len() >= KEPT_DRIVES {
            loaded.remove(0);
        }
        loaded.push(Loaded { path: path.to_path_buf(), files, drive: drive.clone() });
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/disksim-validation").join(name)
    }

    #[test]
    fn a_kept_drive_is_the_loaded_one_and_an_edited_file_is_read_again() {
        let src = shared("atlas10k.parv");
        if !src.exists() {
            eprintln!("skipped: {} not found", src.display());
            return;
        }
        let dir = std::env::temp_dir().join(format!("iosched-load-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["atlas10k.parv", "atlas10k.diskspecs", "atlas10k.model", "atlas10k.seek"] {
            std::fs::copy(shared(f), dir.join(f)).unwrap();
        }
        let parv = dir.join("atlas10k.parv");
        let first = load_drive_cached(&parv).unwrap();
        let again = load_drive_cached(&parv).unwrap();
        assert_eq!(format!("{:?}", first.spec), format!("{:?}", load_drive(&parv).unwrap().spec));
        assert_eq!(format!("{:?}", again.spec), format!("{:?}", first.spec));
        {
            let loaded = LOADED.lock().unwrap();
            let l = loaded.iter().find(|l| l.path == parv).unwrap();
            // The description, its include and the seek curve (at least) were noted.
            assert!(l.files.len() >= 3, "{:?}", l.files.iter().map(|f| &f.0).collect::<Vec<_>>());
        }
        // An included file edited (the seek curve's last distance 10 ms slower): loaded again.
        let seek = dir.join("atlas10k.seek");
        let text = std::fs::read_to_string(&seek).unwrap();
        let last = text.trim_end().lines().last().unwrap().to_string();
        let (d, ms) = last.split_once(',').unwrap();
        let edited = text.replace(&last, &format!("{d}, {}", ms.trim().parse::<f64>().unwrap() + 10.0));
        std::fs::write(&seek, edited).unwrap();
        let after = load_drive_cached(&parv).unwrap();
        assert_eq!(format!("{:?}", after.spec), format!("{:?}", load_drive(&parv).unwrap().spec));
        assert_ne!(format!("{:?}", after.spec), format!("{:?}", first.spec));
        // A file gone: the error of a fresh load, not the kept drive.
        std::fs::remove_file(&seek).unwrap();
        assert!(load_drive_cached(&parv).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
