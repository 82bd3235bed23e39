//! The discrete-event simulator: one device, one scheduler, one workload.

pub mod control;
pub mod engine;
pub mod event_queue;

pub use control::RunControl;
pub use engine::{simulate, simulate_array, simulate_with, SimOptions, SimOutput, Stop};
