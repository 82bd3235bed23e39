//! A run's link to whoever watches it from another thread: progress counters the engine updates
//! every few thousand events, and a cancel flag it checks as often (Ctrl-C stops a run with what
//! it has). Relaxed atomics: the figures are for a progress bar, not for results.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

#[derive(Debug, Default)]
pub struct RunControl {
    completed: AtomicU64,
    simulated_ns: AtomicU64,
    /// Runs of the scenario finished so far (one per scheduler).
    runs_done: AtomicU64,
    cancel: AtomicBool,
}

impl RunControl {
    pub fn cancel(&self) {
        self.cancel.store(true, Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Relaxed)
    }

    /// Requests completed in the current run.
    pub fn completed(&self) -> u64 {
        self.completed.load(Relaxed)
    }

    /// Simulated time reached in the current run.
    pub fn simulated_ns(&self) -> u64 {
        self.simulated_ns.load(Relaxed)
    }

    pub fn runs_done(&self) -> u64 {
        self.runs_done.load(Relaxed)
    }

    pub(crate) fn report(&self, completed: u64, simulated_ns: u64) {
        self.completed.store(completed, Relaxed);
        self.simulated_ns.store(simulated_ns, Relaxed);
    }

    pub fn finish_run(&self) {
        self.report(0, 0);
        self.runs_done.fetch_add(1, Relaxed);
    }
}
