//! Files and directories of the simulated host: the namespace ([`Tree`], from a description or
//! from a real listing) and where a file system puts it on the disk ([`Layout`]: ext2/ext3 or
//! FreeBSD's FFS). Pure and deterministic: random choices come from the seeded stream given to
//! [`TreeSpec::build`] and [`Layout::build`], and nothing iterates a hash map.
//! Page: docs/host-files.md.

mod dirent;
mod ext2;
mod ffs;
mod geometry;
pub mod journal;
pub mod layout;
pub mod listing;
mod space;
pub mod spec;
pub mod tree;
mod tree_ops;
mod unlink;

pub use layout::{Alloc, Extent, FsKind, Layout, JOURNAL_MKE2FS};
pub use listing::{parse_listing, read_listing, MAX_LISTED_BYTES, MAX_LISTING_BYTES};
pub use spec::{SizeDist, TreeSpec, MAX_FILE_BYTES};
pub use tree::{check_name, Kind, Node, Tree, MAX_ENTRIES, MAX_NAME_BYTES, ROOT_INO};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_unlink;
