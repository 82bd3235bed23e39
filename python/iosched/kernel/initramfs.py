"""The guest's initramfs, as two gzip'd newc cpio archives concatenated (Linux unpacks each in
turn; a later file replaces an earlier one):

1. the base, built once per kernel/fio/init and kept in the cache (initramfs-<key>.cpio.gz,
   ~38 MB): static busybox, the modules for ata_piix/ahci/sd_mod/kyber/bfq in the insmod order
   `modprobe --show-depends` gives (/lib/modules/order), the host's fio with every library `ldd`
   names, and /init (init.sh, package data);
2. per run, a few KiB: /ios/job.fio (the guest's copy of the job) and /ios/params (the
   controller, the scheduler, the tunables: `encode_params`).

The cpio writer is here (no `cpio` tool needed).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import shlex
import subprocess
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from .errors import KernelError

INIT = Path(__file__).with_name("init.sh")
MODULES = ("ata_piix", "ahci", "sd_mod", "kyber-iosched", "bfq")
CONTROLLERS = ("ide", "ahci")

# A tunable's name and value as /init writes them to sysfs: no shell metacharacters.
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_VALUE = re.compile(r"^[A-Za-z0-9_.:+-]+$")
# A fio job's or cgroup's name as /init uses it (a word: no spaces, colons or shell syntax).
_WORD = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


class Cpio:
    """A newc ("070701") archive in memory: directories, files, in the order added."""

    def __init__(self) -> None:
        self._buf = io.BytesIO()
        self._ino = 1
        self._dirs: set = set()

    def _entry(self, name: str, mode: int, data: bytes = b"") -> None:
        nameb = name.encode() + b"\0"
        fields = [self._ino, mode, 0, 0, 2 if mode & 0o040000 else 1, 0, len(data), 0, 0, 0, 0, len(nameb), 0]
        self._ino += 1
        head = b"070701" + b"".join(b"%08X" % f for f in fields)
        self._buf.write(head + nameb)
        self._buf.write(b"\0" * (-(len(head) + len(nameb)) % 4))
        self._buf.write(data)
        self._buf.write(b"\0" * (-len(data) % 4))

    def dir(self, name: str) -> None:
        """Directory `name` (relative, no leading slash) and its parents."""
        parts = name.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            if d and d not in self._dirs:
                self._dirs.add(d)
                self._entry(d, 0o040755)

    def file(self, name: str, data: bytes, mode: int = 0o644) -> None:
        name = name.strip("/")
        if "/" in name:
            self.dir(name.rsplit("/", 1)[0])
        self._entry(name, 0o100000 | mode, data)

    def gz(self) -> bytes:
        """The archive with its trailer, gzip'd (level 1: the base is mostly shared libraries)."""
        self._entry("TRAILER!!!", 0)
        return gzip.compress(self._buf.getvalue(), compresslevel=1)


def read_cpio(data: bytes) -> Dict[str, bytes]:
    """The files of a gzip'd newc archive, name -> content (directories: b""; for tests)."""
    raw = gzip.decompress(data)
    out: Dict[str, bytes] = {}
    pos = 0
    while pos < len(raw):
        if raw[pos:pos + 6] != b"070701":
            raise ValueError(f"bad cpio magic at {pos}")
        f = [int(raw[pos + 6 + 8 * i:pos + 14 + 8 * i], 16) for i in range(13)]
        size, namesize = f[6], f[11]
        name = raw[pos + 110:pos + 110 + namesize - 1].decode()
        pos += 110 + namesize
        pos += -pos % 4
        if name == "TRAILER!!!":
            break
        out[name] = raw[pos:pos + size]
        pos += size
        pos += -pos % 4
    return out


def check_tunables(sets: Iterable[str]) -> List[Tuple[str, str]]:
    """`--set K=V` values as (K, V), checked so /init can write them safely; KernelError names the bad one."""
    out = []
    for s in sets:
        k, eq, v = s.partition("=")
        k, v = k.strip(), v.strip()
        if not eq or not _NAME.match(k) or not _VALUE.match(v):
            raise KernelError(f"--set {s!r}: expected NAME=VALUE, NAME Linux's sysfs name (e.g. low_latency, "
                              f"slice_idle, nr_requests), VALUE letters, digits, . : + - _")
        out.append((k, v))
    return out


def encode_params(controller: str, scheduler: str, tunables: List[Tuple[str, str]],
                  groups: Optional[List[Tuple[str, str, int]]] = None) -> str:
    """/ios/params: shell assignments /init sources. `groups`: (job, cgroup, weight) per job
    section (workload.cgroup_plan): IOS_GROUPS='job:cgroup:weight ...' (cgroup "" = the root)."""
    if controller not in CONTROLLERS:
        raise KernelError(f"controller {controller!r}: expected one of {', '.join(CONTROLLERS)}")
    if not _NAME.match(scheduler.replace("-", "_")):
        raise KernelError(f"--scheduler {scheduler!r}: not an elevator name")
    for k, v in tunables:
        if not _NAME.match(k) or not _VALUE.match(v):
            raise KernelError(f"tunable {k}={v}: not writable safely")
    sets = " ".join(f"{k}={v}" for k, v in tunables)
    for job, cg, weight in groups or []:
        if not _WORD.match(job) or (cg and not _WORD.match(cg)):
            raise KernelError(f"job {job!r} / cgroup {cg!r}: not a safe name")
    grouped = " ".join(f"{job}:{cg or '-'}:{int(weight)}" for job, cg, weight in groups or [])
    return (f"IOS_CTRL={shlex.quote(controller)}\nIOS_SCHED={shlex.quote(scheduler)}\n"
            f"IOS_SET={shlex.quote(sets)}\nIOS_GROUPS={shlex.quote(grouped)}\n")


def decode_params(text: str) -> Dict[str, str]:
    """The assignments of encode_params read back as the shell reads them (for tests)."""
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition("=")
        out[k] = " ".join(shlex.split(v))
    return out


def module_order(modules_root: Path, release: str) -> List[Path]:
    """The .ko files to insmod, dependencies first, each once."""
    seen: List[Path] = []
    for m in MODULES:
        try:
            p = subprocess.run(["modprobe", "-d", str(modules_root), "-S", release, "--show-depends", m],
                               capture_output=True, text=True)
        except FileNotFoundError:
            raise KernelError("modprobe not found (apt-get install kmod)") from None
        if p.returncode != 0:
            raise KernelError(f"modprobe --show-depends {m} in {modules_root}: {p.stderr.strip()}")
        for line in p.stdout.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0] == "insmod":
                path = Path(parts[1])
                if path not in seen:
                    seen.append(path)
    return seen


def fio_files(fio: Path) -> List[Path]:
    """fio and every library its loader needs (ldd), the loader included."""
    try:
        p = subprocess.run(["ldd", str(fio)], capture_output=True, text=True)
    except FileNotFoundError:
        raise KernelError("ldd not found (libc-bin)") from None
    if p.returncode != 0:
        raise KernelError(f"ldd {fio}: {p.stderr.strip() or p.stdout.strip()} (fio must be a dynamic x86-64 binary)")
    libs = [fio]
    for line in p.stdout.splitlines():
        parts = line.split()
        if "=>" in parts and len(parts) > parts.index("=>") + 1 and parts[parts.index("=>") + 1].startswith("/"):
            libs.append(Path(parts[parts.index("=>") + 1]))
        elif parts and parts[0].startswith("/"):
            libs.append(Path(parts[0]))
    return libs


def base_key(pieces) -> str:
    """The base archive's cache key: the kernel release, init.sh's text, fio's identity."""
    h = hashlib.sha256()
    st = pieces.fio.stat()
    h.update(f"{pieces.kernel_release}\n{pieces.fio}\n{st.st_size}\n{st.st_mtime_ns}\n".encode())
    h.update(INIT.read_bytes())
    return h.hexdigest()[:16]


def base(pieces, log=lambda s: None) -> Path:
    """The cached base archive, built when missing."""
    out = pieces.cache / f"initramfs-{base_key(pieces)}.cpio.gz"
    if out.exists():
        return out
    log(f"building the guest's initramfs {out.name} (busybox, modules, fio and its libraries)")
    c = Cpio()
    for d in ("bin", "dev", "proc", "sys", "tmp", "ios", "lib/modules", "usr/bin"):
        c.dir(d)
    c.file("bin/busybox", pieces.busybox.read_bytes(), 0o755)
    order = []
    for ko in module_order(pieces.modules_root, pieces.kernel_release):
        c.file(f"lib/modules/{ko.name}", ko.read_bytes())
        order.append(ko.name)
    c.file("lib/modules/order", ("\n".join(order) + "\n").encode())
    files = fio_files(pieces.fio)
    c.file("usr/bin/fio", files[0].read_bytes(), 0o755)
    for lib in files[1:]:
        c.file(str(lib).lstrip("/"), lib.resolve().read_bytes(), 0o755)
    if not any(str(lib).startswith("/lib64/ld-linux") for lib in files[1:]):
        ld = Path("/lib64/ld-linux-x86-64.so.2")
        c.file(str(ld).lstrip("/"), ld.resolve().read_bytes(), 0o755)
    c.file("init", INIT.read_bytes(), 0o755)
    tmp = out.with_suffix(".tmp")
    tmp.write_bytes(c.gz())
    tmp.rename(out)
    for old in pieces.cache.glob("initramfs-*.cpio.gz"):
        if old != out and re.fullmatch(r"initramfs-[0-9a-f]{16}\.cpio\.gz", old.name):
            old.unlink()
    return out


def per_run(job_text: str, params: str) -> bytes:
    """The per-run archive: /ios/job.fio and /ios/params."""
    c = Cpio()
    c.file("ios/job.fio", job_text.encode())
    c.file("ios/params", params.encode())
    return c.gz()


def write_initrd(base_path: Path, job_text: str, params: str, out: Path) -> Path:
    """base + per-run archive, concatenated into `out`."""
    with open(out, "wb") as f:
        f.write(base_path.read_bytes())
        f.write(per_run(job_text, params))
    return out
