//! Anticipation heuristics: given the policy's candidate and what is known about the last
//! process, how long to wait (0: dispatch the candidate now).

pub mod combined;
pub mod cscan;
pub mod proportional;
pub mod seek;

#[cfg(test)]
mod share_tests;

use super::stats::ProcessStats;
use crate::request::Request;
use crate::sched::{Context, Policy};
use crate::time::Nanos;

/// What a heuristic sees at a decision point.
pub struct Situation<'a> {
    pub candidate: &'a Request,
    /// The process whose request just completed, and its statistics.
    pub last_pid: u32,
    pub last: &'a ProcessStats,
    /// Time since that completion.
    pub elapsed_ns: Nanos,
    pub cx: &'a Context<'a>,
}

/// A policy-specific anticipation heuristic; it may read the policy's state.
pub trait Heuristic<P: Policy> {
    fn name(&self) -> &'static str;
    /// Nanoseconds to wait for the last process (0: do not wait).
    fn wait_ns(&mut self, policy: &P, s: &Situation) -> Nanos;
}
