//! The invariants a run must keep, as counts of their violations. The engine (sim/engine.rs)
//! and the trace replayer count them; every summary carries them (`RunSummary::invariants`),
//! which is why the type lives with the metrics and not with the engine.

/// Counts of broken invariants (all zero in a correct run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct InvariantReport {
    /// A work-conserving scheduler left the device idle with requests queued.
    pub idled_with_work: u64,
    /// Requests (or bios) still queued, waiting or in flight at the end.
    pub left_behind: u64,
    /// Completions of a request that was not in flight (double or phantom completion).
    pub bad_completions: u64,
    /// When nothing is left behind: |bios submitted - bios completed| (0: none lost or
    /// completed twice through merges or splits).
    pub bios_unaccounted: u64,
}
