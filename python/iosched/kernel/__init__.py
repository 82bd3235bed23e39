"""Kernel mode: Linux's own I/O schedulers in a QEMU guest whose disk is `iosched mount`'s
emulated drive, run on a fio job file and compared with the simulator on the same job
(`iosched kernel JOB.fio --scheduler bfq --device PRESET`). docs/kernel-mode.md.

One concept per file:

- errors.py: KernelError, the one exception users see (the CLI prints it, exit 2);
- cache.py: the host tools (qemu, kmod, fio) from apt-get, Debian's kernel and busybox-static
  from `apt-get download`, unpacked into ~/.cache/iosched-kernel (never installed);
- initramfs.py: the guest's initramfs (newc cpio written here): busybox, modules, fio and its
  libraries, `init.sh` (package data: the guest's /init), plus a small per-run archive with the
  job file and the parameters;
- workload.py: the one workload description, a fio job file: the guest's copy (filename
  /dev/sda) and the simulator's scenario;
- guest.py: one boot (mount, qemu, the serial log's fio JSON) and its teardown;
- compare.py: fio JSON, the mount's view (summary and per-request CSV), the simulator's, side
  by side with ratios, mean and spread over repeats;
- run.py: the whole command (repeats, the simulator columns, files written to --out).
"""

from .errors import KernelError

__all__ = ["KernelError"]
