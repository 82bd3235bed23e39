//! The anticipatory scheduling framework of Iyer & Druschel (SOSP 2001): an anticipation core
//! that wraps any work-conserving [`Policy`](crate::sched::Policy), and per-policy heuristics
//! that decide whether and how long to keep the disk idle waiting for the process whose request
//! just completed.

pub mod core;
pub mod heuristics;
pub mod stats;

#[cfg(test)]
mod tests;

pub use self::core::{Anticipatory, CoreState};
pub use heuristics::{Heuristic, Situation};
