//! DiskSim 4.0 drive descriptions (`.parv` / `.diskspecs` / `.model` / `.seek`): a reader for
//! DiskSim's parameter syntax and a mapping of the drive's parameters onto the rotational model.
//! What is mapped, ignored and unsupported: docs/devices.md, "DiskSim drives".

use super::{Device, RotationalDisk, RotationalSpec};
use std::fmt;
use std::path::{Path, PathBuf};

/// A malformed or unusable parameter file: where, what, and the offending text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskSimError {
    pub file: PathBuf,
    /// 1-based line number (0 when the problem is not tied to a line, e.g. an unreadable file).
    pub line: usize,
    pub message: String,
    /// The offending text (a token, a value or a parameter name).
    pub text: String,
}

impl fmt::Display for DiskSimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)?;
        if !self.text.is_empty() {
            write!(f, " ({})", self.text)?;
        }
        Ok(())
    }
}

impl std::error::Error for DiskSimError {}

/// A DiskSim parameter that is read but deliberately not modelled, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    pub parameter: String,
    pub reason: String,
}

/// A drive loaded from a DiskSim description.
#[derive(Debug, Clone)]
pub struct DiskSimDrive {
    /// The `disksim_disk` block's name (e.g. `QUANTUM_TORNADO_validate`).
    pub name: String,
    /// The file it was loaded from.
    pub source: PathBuf,
    /// The mechanics and cache in the model's terms.
    pub spec: RotationalSpec,
    /// The drive's LBA count as the description states it (`Block count`).
    pub block_count: u64,
    /// Parameters recognised whose mechanism is not modelled (name = value, file:line).
    pub unsupported: Vec<String>,
    /// Parameters read and deliberately not used, with the reason.
    pub ignored: Vec<Ignored>,
}

impl DiskSimDrive {
    /// LBAs the built device exposes (equals `block_count`).
    pub fn capacity_sectors(&self) -> u64 {
        self.block_count
    }

    /// A fresh device in its initial state (arm at cylinder 0, empty cache).
    pub fn build(&self) -> Result<Box<dyn Device>, String> {
        Ok(Box::new(RotationalDisk::new(self.spec.clone())?))
    }
}

/// Loads the drive described by a DiskSim parameter file (`.parv` with a `disksim_disk` block,
/// directly or through `source` includes, or a `.diskspecs`/`.model` file).
pub fn load_drive(path: &Path) -> Result<DiskSimDrive, DiskSimError> {
    Err(DiskSimError { file: path.to_path_buf(), line: 0, message: "DiskSim loader not implemented yet".into(), text: String::new() })
}
