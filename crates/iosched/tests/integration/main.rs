//! The core's integration tests, one module per subject, in one test binary: each file under
//! tests/ used to be its own binary linked against the library, which made the test build
//! (about two dozen links of a debug binary) most of `cargo test`'s time (docs/benchmarks.md,
//! "Building and testing"). A new subject is a file here and a `mod` line below; one test runs
//! as `cargo test --test integration MODULE::NAME`.

mod adaptive;
mod apps;
mod bfq;
mod blktrace_sample;
mod block_layer;
mod calibration;
mod cfq269;
mod deadline;
mod discard;
mod disk_model;
mod disksim_buffer;
mod disksim_drives;
mod disksim_mechanics;
mod engine;
mod flash;
mod hardening;
mod host;
mod host_ext3;
mod host_ffsb;
mod long_runs;
mod mqsim_config;
mod nvme;
mod raid0;
mod s_suite;
mod scenario_errors;
mod tiny_disksim;
mod trace_validation;
mod unchanged_results;
mod workloads;
