//! Real mode's end-to-end tests (mounts of the iosched-fuse binary), in one test binary:
//! `common` is the fixture they share, `mount` the normal use, `hardening` the faults.

mod common;
mod drive_queue;
mod hardening;
mod mount;
