//! The CPU a system call costs its task: entering and leaving the kernel (`[host] syscall_us`)
//! and copying the data between the process and the page cache (`[host] copy_mb_s`), as lmbench
//! measures them (`lat_syscall null`; `bw_file_rd`, read() of a file in the page cache into a
//! reused buffer). Both default to zero: a host without them charges nothing and runs exactly as
//! before.
//!
//! The cost is charged as a compute step on the host's CPUs when the call returns (a read's copy
//! happens once its pages are in; a write's copy is charged after the call, not before it: the
//! same CPU time, a little later). O_DIRECT moves data by DMA: no copy. A page fault on a mapping
//! is not a system call, and the program's own loads from the mapping are its computation.

use super::syscall::{Syscall, WriteMode};
use crate::time::Nanos;

/// Per-call and per-byte CPU costs of the host's system calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyscallCost {
    /// Entering and leaving the kernel, once per call.
    pub syscall_ns: Nanos,
    /// Bytes copied per second between user and kernel memory (0: copies are free). lmbench's
    /// MB is 10^6 bytes (lib_timing.c).
    pub copy_bytes_per_s: u64,
}

impl SyscallCost {
    pub fn is_free(&self) -> bool {
        self.syscall_ns == 0 && self.copy_bytes_per_s == 0
    }

    /// Nanoseconds of CPU `call` costs (0 for what is not a system call).
    pub fn cost_ns(&self, call: &Syscall) -> Nanos {
        let copied = match *call {
            Syscall::Read { len, .. } => len,
            Syscall::Write { len, mode, .. } if mode != WriteMode::Direct => len,
            Syscall::Lookup(_)
            | Syscall::Readdir(_)
            | Syscall::Write { .. }
            | Syscall::DirectRead { .. }
            | Syscall::DirectReadAsync { .. }
            | Syscall::AioWait
            | Syscall::Fsync(_)
            | Syscall::Sync
            | Syscall::Create { .. }
            | Syscall::Unlink(_) => 0,
            _ => return 0,
        };
        self.syscall_ns.saturating_add(self.copy_ns(copied))
    }

    fn copy_ns(&self, bytes: u64) -> Nanos {
        if self.copy_bytes_per_s == 0 || bytes == 0 {
            return 0;
        }
        crate::time::ns_to_move(bytes, self.copy_bytes_per_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost() -> SyscallCost {
        // An example: the 2.4 GHz Xeon's null call (0.49 us) and its lmbench bcopy rate (549.1 MB/s).
        SyscallCost { syscall_ns: 490, copy_bytes_per_s: 549_100_000 }
    }

    #[test]
    fn a_4_kib_read_costs_the_call_and_its_copy() {
        let c = cost().cost_ns(&Syscall::Read { ino: 1, off: 0, len: 4096 });
        // 4096 B / 549.1e6 B/s = 7459.47 ns, rounded up.
        assert_eq!(c, 490 + 7460);
    }

    #[test]
    fn direct_io_and_metadata_calls_copy_nothing() {
        let c = cost();
        assert_eq!(c.cost_ns(&Syscall::DirectRead { ino: 1, off: 0, len: 1 << 20 }), 490);
        assert_eq!(c.cost_ns(&Syscall::Write { ino: 1, off: 0, len: 1 << 20, mode: WriteMode::Direct }), 490);
        assert_eq!(c.cost_ns(&Syscall::Lookup(3)), 490);
        assert_eq!(c.cost_ns(&Syscall::Fsync(3)), 490);
    }

    #[test]
    fn what_is_not_a_system_call_costs_nothing() {
        let c = cost();
        assert_eq!(c.cost_ns(&Syscall::Compute(5)), 0);
        assert_eq!(c.cost_ns(&Syscall::Fault { ino: 1, off: 0, len: 4096 }), 0);
        assert_eq!(c.cost_ns(&Syscall::Sleep(5)), 0);
    }

    #[test]
    fn the_default_is_free_and_huge_copies_saturate() {
        assert!(SyscallCost::default().is_free());
        assert_eq!(SyscallCost::default().cost_ns(&Syscall::Read { ino: 1, off: 0, len: 4096 }), 0);
        let slow = SyscallCost { syscall_ns: 0, copy_bytes_per_s: 1 };
        assert_eq!(slow.cost_ns(&Syscall::Read { ino: 1, off: 0, len: u64::MAX }), Nanos::MAX);
    }
}
