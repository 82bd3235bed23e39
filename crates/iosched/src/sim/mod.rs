//! The discrete-event simulator: one device, one scheduler, one workload.

pub mod engine;
pub mod event_queue;

pub use engine::{simulate, SimOutput};
