//! Linux's I/O schedulers (elevators), each family in its own place as in the kernel's block/:
//! noop; the deadline family (2.5's deadline, 2.6's deadline and blk-mq's mq-deadline, on one
//! core); the anticipatory scheduler (`las`: as-iosched.c, with Seelam et al.'s cooperative
//! variant CAS; the directory is not called `as`, a Rust keyword); CFQ (~4.4's in `cfq`, 2.6.9's
//! first CFQ in `cfq269`); BFQ (with the paper's
//! original and BFQ+ rule sets); kyber.
//!
//! Some parts cross families as they did in the kernel: LAS keeps deadline's per-direction
//! queues (as-iosched.c began as a copy of deadline-iosched.c), CFQ and LAS take deadline's
//! tunable bounds, and BFQ uses CFQ's request choice (bfq_choose_req is cfq_choose_req).

pub mod bfq;
pub mod cfq;
pub mod cfq269;
pub mod deadline;
pub mod kyber;
pub mod las;
pub mod noop;
