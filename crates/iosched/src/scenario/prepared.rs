//! The host kernel a scenario's validation built, kept for the first run that would build the
//! same one. Building a host (its directory tree, every file's blocks laid out by the file
//! system, FFSB's file sets) is the costliest part of starting a host scenario: 50-65 ms for
//! Seelam's Table 4 scenarios, about 95 M instructions for Table 2's source tree. Validation must
//! build it (a task naming a missing file, a tree that does not fit the disk, are errors of the
//! scenario), and the first run built it again.
//!
//! The kept kernel is taken only by a run whose inputs are those validation used: the same seed
//! and capacity, and the scenario unchanged since (its fields are public: a caller may change the
//! run's length after parsing, as the `unchanged_results` test does). A host whose build opened a
//! file (a tree listing, a startup trace: `input::files_opened`) is not kept at all, since the
//! file may change before the run, which must read it again. Anything else builds anew, as
//! before; a taken or refused kernel is dropped. A clone of the scenario keeps nothing.

use crate::host::kernel::Kernel;
use std::sync::Mutex;

#[derive(Default)]
pub(super) struct PreparedKernel(Mutex<Option<(String, Kernel)>>);

impl PreparedKernel {
    /// Keeps `kernel`, built from the inputs `key` describes.
    pub(super) fn keep(&self, key: String, kernel: Kernel) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some((key, kernel));
    }

    /// The kept kernel if it was built from the inputs `key` describes (asked for only when a
    /// kernel is kept: the scenario is serialized for it); nothing is kept after.
    pub(super) fn take(&self, key: impl FnOnce() -> Option<String>) -> Option<Kernel> {
        let kept = self.0.lock().unwrap_or_else(|p| p.into_inner()).take()?;
        (key()? == kept.0).then_some(kept.1)
    }
}

impl Clone for PreparedKernel {
    fn clone(&self) -> Self {
        PreparedKernel::default()
    }
}

impl std::fmt::Debug for PreparedKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = self.0.lock().map(|k| k.is_some()).unwrap_or(false);
        write!(f, "PreparedKernel {{ held: {held} }}")
    }
}
