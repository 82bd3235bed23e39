//! The classic seek-reducing policies of the disk-scheduling literature (Seltzer et al. 1990,
//! Iyer & Druschel 2001, Jacobson & Wilkes 1991): work-conserving orderings ([`Policy`]) of one
//! queue, by arrival (FCFS), by cylinder distance (SSTF, SCAN, C-SCAN, LOOK, C-LOOK) or by
//! positioning time (SPTF and its variants GSTF, WSTF and Aged-SPTF, all through the bounded
//! search of `sptf_search`).
//!
//! [`Policy`]: crate::sched::Policy

pub mod aged_sptf;
pub mod clook;
pub mod cscan;
pub mod fcfs;
pub mod gstf;
pub mod look;
pub mod scan;
pub mod sptf;
pub mod sptf_search;
pub mod sstf;
pub mod wstf;

#[cfg(test)]
mod tests;
