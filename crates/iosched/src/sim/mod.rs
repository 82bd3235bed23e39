//! The discrete-event simulator: one workload on one device with its scheduler, or on a RAID-0
//! array of them.

pub mod control;
pub mod engine;
pub mod event_queue;
mod striping;

pub use control::RunControl;
pub use engine::{simulate, simulate_array, simulate_with, SimOptions, SimOutput, Stop};
