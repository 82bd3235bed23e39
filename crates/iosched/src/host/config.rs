//! The host's settings, already validated (the scenario's `[host]` table builds them).

use super::cpu::CpuModel;
use super::readahead::RaConfig;
use super::writeback::WritebackConfig;
use crate::time::Nanos;

/// Which kernel's read path the host follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelKind {
    /// Linux: on-demand readahead (mm/readahead.c), ext2/ext3-like layout.
    Linux,
    /// FreeBSD 4.x: the cluster read-ahead of vfs_cluster.c, FFS layout (Iyer & Druschel).
    FreeBsd,
}

impl KernelKind {
    pub fn as_str(self) -> &'static str {
        match self {
            KernelKind::Linux => "linux",
            KernelKind::FreeBsd => "freebsd",
        }
    }
}

/// Which Linux readahead algorithm read() follows (`[host] readahead`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RaAlgorithm {
    /// On-demand readahead (host/readahead.rs, Linux 2.6.23+; the default).
    #[default]
    OnDemand,
    /// 2.6.9's current and ahead windows (host/readahead_2_6_9.rs).
    Linux269,
}

impl RaAlgorithm {
    pub fn as_str(self) -> &'static str {
        match self {
            RaAlgorithm::OnDemand => "ondemand",
            RaAlgorithm::Linux269 => "2.6.9",
        }
    }
}

#[derive(Clone, Debug)]
pub struct HostConfig {
    pub kernel: KernelKind,
    /// Pages the page cache may hold (`memory_mib` / 4 KiB: the model gives all of the host's
    /// memory to the cache; processes' own memory is not modelled).
    pub memory_pages: u64,
    pub readahead: RaConfig,
    /// The algorithm using it (Linux host only).
    pub ra_algorithm: RaAlgorithm,
    pub writeback: WritebackConfig,
    pub cpu: CpuModel,
    /// Largest bio the host builds (pages): Linux's BIO_MAX_PAGES (256, 1 MiB).
    pub max_bio_pages: u64,
    /// Metadata is read and written in file-system blocks of this many pages (ext2: 1, FFS: 4).
    pub meta_block_pages: u64,
    /// Sample the writeback state this often (None: no timeline).
    pub sample_ns: Option<Nanos>,
    /// CPU per system call and per byte copied (`[host] syscall_us`, `copy_mb_s`; free by
    /// default).
    pub syscall_cost: super::syscall_cost::SyscallCost,
}
