//! Real mode: a FUSE passthrough file system whose reads and writes are scheduled by any
//! scheduler of the toolkit and timed by an emulated rotational disk. See docs/real-mode.md.

pub mod address_view;
pub mod backing_io;
pub mod cli;
pub mod dispatcher;
pub mod exit_watch;
pub mod fiemap;
pub mod fs;
pub mod layout;
pub mod mount;
pub mod principal;
pub mod probe;
