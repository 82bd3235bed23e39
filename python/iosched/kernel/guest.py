"""One boot: a temporary directory, `iosched mount` of a sparse raw file the size of the
preset, QEMU (TCG) booting Debian's kernel with the initramfs, the serial log read back for
fio's JSON; then the teardown, which always runs (success, failure, exception, SIGINT,
SIGTERM, SIGHUP): QEMU TERM then KILL, `iosched umount` (fallback `fusermount -uz`), the
directory removed.

TCG always: KVM on the machines this was built on is a software virtualizer that cannot run a
stock kernel, and TCG's timing is the same everywhere (docs/kernel-mode.md).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional

from .errors import KernelError

TMP_PREFIX = "ios-kernel."
BEGIN, END, ERROR = "IOS-FIO-JSON-BEGIN", "IOS-FIO-JSON-END", "IOS-ERROR"


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived (SIGINT is KeyboardInterrupt itself): tear down and stop."""


@contextmanager
def signals_interrupt():
    """SIGTERM/SIGHUP raise Interrupted in the main thread while inside (so `finally` blocks run)."""
    def handler(signum, frame):
        raise Interrupted(signal.Signals(signum).name)

    old = {}
    for s in (signal.SIGTERM, signal.SIGHUP):
        try:
            old[s] = signal.signal(s, handler)
        except ValueError:  # not the main thread
            pass
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def mounted(path: Path) -> bool:
    """Whether `path` is a mount point now (/proc/mounts; never a stat of the mount)."""
    want = str(path).replace(" ", "\\040")
    try:
        with open("/proc/mounts") as f:
            return any(line.split()[1] == want for line in f if len(line.split()) > 1)
    except OSError:
        return False


class Session:
    """The resources of one boot, each released by `teardown` (idempotent, never raises)."""

    def __init__(self, fuse_command: List[str], log: Callable[[str], None] = lambda s: None,
                 kill_grace_s: float = 2.0):
        self.fuse_command = fuse_command
        self.log = log
        self.kill_grace_s = kill_grace_s
        self.tmp: Optional[Path] = None
        self.mountpoint: Optional[Path] = None
        self.qemu: Optional[subprocess.Popen] = None

    def make_tmp(self) -> Path:
        self.tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX))
        return self.tmp

    def mount(self, backing: Path, mountpoint: Path, args: List[str]) -> None:
        self.mountpoint = mountpoint
        p = subprocess.run([*self.fuse_command, "mount", str(backing), str(mountpoint), *args],
                           capture_output=True, text=True)
        if p.returncode != 0 or not mounted(mountpoint):
            raise KernelError(f"iosched mount failed (exit {p.returncode}): {(p.stderr or p.stdout).strip()}")

    def start(self, cmd: List[str], stdout_path: Path) -> subprocess.Popen:
        with open(stdout_path, "wb") as out:
            # Its own session: a terminal's Ctrl-C reaches us, and we stop QEMU in order.
            self.qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        return self.qemu

    def stop_qemu(self) -> None:
        q, self.qemu = self.qemu, None
        if q is None or q.poll() is not None:
            return
        try:
            q.terminate()
            q.wait(self.kill_grace_s)
        except subprocess.TimeoutExpired:
            q.kill()
            q.wait()
        except OSError:
            pass

    def umount(self) -> None:
        m, self.mountpoint = self.mountpoint, None
        if m is None or not mounted(m):
            return
        try:
            subprocess.run([*self.fuse_command, "umount", str(m), "--timeout", "20"], capture_output=True, timeout=40)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if mounted(m):
            self.log(f"iosched umount left {m} mounted: fusermount -uz")
            for tool in ("fusermount3", "fusermount"):
                if shutil.which(tool):
                    subprocess.run([tool, "-uz", str(m)], capture_output=True)
                    break
            if mounted(m):
                subprocess.run(["umount", "-l", str(m)], capture_output=True)

    def teardown(self) -> None:
        """QEMU, then the mount, then the directory; each step even if an earlier one failed."""
        for step in (self.stop_qemu, self.umount):
            try:
                step()
            except BaseException as e:  # noqa: BLE001 - teardown goes on
                self.log(f"teardown: {step.__name__}: {e}")
        t, self.tmp = self.tmp, None
        if t is not None:
            shutil.rmtree(t, ignore_errors=True)


@dataclass
class Boot:
    fio: dict                 # fio's JSON document
    serial: str               # the serial log, \r removed
    facts: dict               # "IOS queue ..." key=values, the scheduler line, init times
    host_s: float             # QEMU start to exit, host seconds


def parse_serial(text: str, where: str) -> "tuple[dict, dict]":
    """fio's JSON and the facts from a serial log; KernelError for the guest's IOS-ERROR lines,
    a missing or unreadable JSON."""
    text = text.replace("\r", "")
    lines = text.splitlines()
    for line in lines:
        if line.startswith(ERROR):
            raise KernelError(f"guest: {line[len(ERROR):].strip()} (serial log {where})")
    facts: dict = {}
    for line in lines:
        if line.startswith("IOS queue "):
            for kv in line.split()[2:]:
                k, _, v = kv.partition("=")
                facts[k] = int(v) if v.isdigit() else v
        elif line.startswith("IOS scheduler "):
            facts["scheduler_line"] = line[len("IOS scheduler "):].strip()
        elif line.startswith("IOS fio start at uptime "):
            facts["fio_start_uptime_s"] = float(line.split()[5])
        elif line.startswith("IOS fio end at uptime "):
            facts["fio_end_uptime_s"] = float(line.split()[5])
        elif line.startswith("IOS tunable "):
            k, _, v = line[len("IOS tunable "):].partition("=")
            facts.setdefault("tunables", {})[k] = v
        elif line.startswith("IOS cgroup "):
            name, _, setting = line[len("IOS cgroup "):].partition(" ")
            facts.setdefault("cgroups", {})[name] = setting.strip()
    if BEGIN not in lines or END not in lines:
        last = [ln for ln in lines if ln.strip()][-3:]
        raise KernelError(f"guest: no fio JSON in the serial log {where} (last lines: {' | '.join(last)})")
    # One JSON block, or one per job section (cgroups: a fio process per job): their jobs are
    # joined in order into one document.
    doc: Optional[dict] = None
    i = 0
    while BEGIN in lines[i:]:
        b = lines.index(BEGIN, i)
        if END not in lines[b:]:
            raise KernelError(f"guest: a fio JSON block without its end (serial log {where})")
        e = lines.index(END, b)
        body = lines[b + 1:e]
        start = next((k for k, ln in enumerate(body) if ln.startswith("{")), None)
        if start is None:
            raise KernelError(f"guest: fio wrote no JSON (serial log {where})")
        try:
            part = json.loads("\n".join(body[start:]))
        except json.JSONDecodeError as err:
            raise KernelError(f"guest: fio's JSON unreadable ({err}) (serial log {where})") from None
        if doc is None:
            doc = part
        else:
            doc.setdefault("jobs", []).extend(part.get("jobs", []))
        i = e + 1
    return doc, facts


def qemu_command(qemu: Path, vmlinuz: Path, initrd: Path, disk: Path, controller: str, memory_mib: int = 512) -> List[str]:
    cmd = [str(qemu), "-accel", "tcg", "-m", str(memory_mib), "-smp", "1", "-nographic", "-no-reboot",
           "-kernel", str(vmlinuz), "-initrd", str(initrd),
           "-append", "console=ttyS0 quiet loglevel=1 panic=-1"]
    if controller == "ide":
        cmd += ["-drive", f"file={disk},format=raw,if=ide,cache=none,aio=threads"]
    else:
        cmd += ["-drive", f"file={disk},format=raw,if=none,id=d,cache=none,aio=threads",
                "-device", "ahci,id=ahci", "-device", "ide-hd,drive=d,bus=ahci.0"]
    return cmd


def wait(session: Session, timeout_s: float) -> int:
    q = session.qemu
    t0 = time.monotonic()
    while True:
        try:
            return q.wait(0.2)
        except subprocess.TimeoutExpired:
            if time.monotonic() - t0 > timeout_s:
                raise KernelError(f"the guest did not power off within {timeout_s:.0f} s (--timeout)") from None


def boot(session: Session, pieces, initrd_base: Path, job_text: str, params: str, controller: str,
         capacity_bytes: int, mount_args: List[str], out_prefix: Path, timeout_s: float = 900.0) -> Boot:
    """One boot in `session` (the caller tears it down). Files written: OUT.serial.log,
    OUT.mount.summary.json, OUT.mount.requests.csv, OUT.mount.log, OUT.fio.json."""
    from .initramfs import write_initrd

    tmp = session.make_tmp()
    backing, mnt = tmp / "backing", tmp / "mnt"
    backing.mkdir()
    mnt.mkdir()
    with open(backing / "disk.raw", "wb") as f:
        f.truncate(capacity_bytes)  # sparse: the mount lays it out from sector 0
    initrd = write_initrd(initrd_base, job_text, params, tmp / "initrd.cpio.gz")
    summary = Path(f"{out_prefix}.mount.summary.json")
    session.mount(backing, mnt, [*mount_args, "--daemon", "--summary", str(summary),
                                 "--log", f"{out_prefix}.mount.log",
                                 "--requests-csv", f"{out_prefix}.mount.requests.csv"])
    serial = Path(f"{out_prefix}.serial.log")
    t0 = time.monotonic()
    session.start(qemu_command(pieces.qemu, pieces.vmlinuz, initrd, mnt / "disk.raw", controller), serial)
    rc = wait(session, timeout_s)
    host_s = time.monotonic() - t0
    session.qemu = None
    text = serial.read_text(errors="replace").replace("\r", "")
    if rc != 0:
        raise KernelError(f"qemu exited {rc}: {' | '.join(text.strip().splitlines()[-3:])} (serial log {serial})")
    doc, facts = parse_serial(text, str(serial))
    Path(f"{out_prefix}.fio.json").write_text(json.dumps(doc, indent=1) + "\n")
    session.umount()  # the summary is written at unmount
    if not summary.exists():
        raise KernelError(f"the mount wrote no summary {summary} (see {out_prefix}.mount.log)")
    return Boot(doc, text, facts, host_s)


def preflight(fuse_dev: str = "/dev/fuse") -> None:
    """Root and /dev/fuse, checked before anything is fetched or started."""
    if os.geteuid() != 0:
        raise KernelError("iosched kernel needs root (it installs host packages on first use and mounts with FUSE)")
    if not os.path.exists(fuse_dev):
        raise KernelError(f"no {fuse_dev}: FUSE is needed for the emulated drive (modprobe fuse, or run the container "
                          f"with --device /dev/fuse)")
