//! iosched: disk I/O scheduling on a deterministic simulator with validated disk models.
//!
//! No wall clock, no PyO3, no file I/O here (except the readers of input files, all through
//! [`input`]): time is an argument.

pub mod anticipation;
pub mod block;
pub mod dense_map;
pub mod device;
pub mod divisor;
pub mod fast_hash;
pub mod host;
pub mod input;
pub mod metrics;
pub mod pid_map;
pub mod request;
pub mod scenario;
pub mod sched;
pub mod serde_skip;
pub mod sim;
pub mod small_sorted_map;
pub mod time;
pub mod trace;
pub mod workload;

#[cfg(test)]
pub(crate) mod testkit;
