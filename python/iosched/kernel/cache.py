"""What the guest needs, from Debian's registry only, at first use:

- host tools by `apt-get install` when missing: qemu-system-x86 (qemu-system-x86_64), kmod
  (depmod, modprobe), fio (the guest runs the host's dynamic fio with its libraries);
- Debian's kernel (linux-image-<ABI>-amd64, the version `linux-image-amd64` depends on) and
  busybox-static by `apt-get download` into CACHE/debs, unpacked with `dpkg-deb -x` into
  CACHE/x/<package> (never installed), then `depmod` on the unpacked tree (the package's
  postinst would run it).

CACHE is $IOSCHED_KERNEL_CACHE, else $XDG_CACHE_HOME/iosched-kernel, else
~/.cache/iosched-kernel. About 75 MB downloaded, 480 MB unpacked; fio's libraries another
~80 MB on the host when apt-get installs fio.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional

from .errors import KernelError

ENV = "IOSCHED_KERNEL_CACHE"
# apt package -> the command it provides that we need
HOST_TOOLS = {"qemu-system-x86_64": "qemu-system-x86", "depmod": "kmod", "modprobe": "kmod", "fio": "fio",
              "dpkg-deb": "dpkg"}
KERNEL_META = "linux-image-amd64"


def cache_dir(env: Optional[dict] = None) -> Path:
    """The cache directory by the rule in the module's docstring (it may not exist yet)."""
    env = os.environ if env is None else env
    if env.get(ENV):
        return Path(env[ENV])
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "iosched-kernel"
    return Path(env.get("HOME") or Path.home()) / ".cache" / "iosched-kernel"


@dataclass
class Pieces:
    """The unpacked pieces: the kernel image, its module tree and release, busybox, fio."""

    cache: Path
    kernel_release: str      # e.g. 6.1.0-50-amd64
    vmlinuz: Path
    modules_root: Path       # the unpacked package root (lib/modules/<release> under it)
    busybox: Path
    fio: Path
    qemu: Path


def _run(cmd: List[str], what: str, cwd: Optional[Path] = None) -> str:
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    except FileNotFoundError:
        raise KernelError(f"{what}: `{cmd[0]}` not found") from None
    if p.returncode != 0:
        tail = " ".join((p.stderr or p.stdout).strip().splitlines()[-3:])
        raise KernelError(f"{what}: `{' '.join(cmd)}` exited {p.returncode}: {tail}")
    return p.stdout


def missing_tools(which: Callable[[str], Optional[str]] = shutil.which) -> List[str]:
    """The apt packages to install for the host tools not on PATH (in a stable order)."""
    pkgs: List[str] = []
    for tool, pkg in HOST_TOOLS.items():
        if which(tool) is None and pkg not in pkgs:
            pkgs.append(pkg)
    return pkgs


def ensure_host_tools(log: Callable[[str], None] = lambda s: None) -> None:
    """apt-get install what is missing (root only); KernelError naming the packages if that fails."""
    pkgs = missing_tools()
    if not pkgs:
        return
    if shutil.which("apt-get") is None:
        raise KernelError(f"missing host tools (packages {' '.join(pkgs)}) and no apt-get to install them: install them")
    log(f"apt-get install {' '.join(pkgs)} (first use)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    p = subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *pkgs], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, text=True)
        p = subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *pkgs], env=env,
                           capture_output=True, text=True)
    if p.returncode != 0:
        tail = " ".join(p.stderr.strip().splitlines()[-2:])
        raise KernelError(f"apt-get install {' '.join(pkgs)} failed (apt unreachable?): {tail}")
    still = missing_tools()
    if still:
        raise KernelError(f"after apt-get install, still missing: {' '.join(still)}")


def _kernel_package(cache: Path) -> str:
    """linux-image-<release>: the one already unpacked in the cache, else the one Debian's
    linux-image-amd64 depends on now."""
    have = sorted(p.name for p in (cache / "x").glob("linux-image-*-amd64") if (p / "boot").is_dir())
    if have:
        return have[-1]
    out = _run(["apt-cache", "depends", KERNEL_META], f"which kernel {KERNEL_META} names")
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("Depends:") and "linux-image-" in line:
            return line.split()[-1]
    raise KernelError(f"apt-cache depends {KERNEL_META}: no linux-image-* dependency (run apt-get update?)")


def _download(cache: Path, pkg: str) -> Path:
    debs = cache / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    found = sorted(debs.glob(f"{pkg}_*.deb"))
    if not found:
        try:
            _run(["apt-get", "download", pkg], f"apt-get download {pkg} (apt unreachable?)", cwd=debs)
        except KernelError:
            subprocess.run(["apt-get", "update", "-q"], capture_output=True, text=True)
            _run(["apt-get", "download", pkg], f"apt-get download {pkg} (apt unreachable?)", cwd=debs)
        found = sorted(debs.glob(f"{pkg}_*.deb"))
        if not found:
            raise KernelError(f"apt-get download {pkg}: no {pkg}_*.deb in {debs}")
    return found[-1]


def _unpack(cache: Path, pkg: str) -> Path:
    root = cache / "x" / pkg
    if (root / ".unpacked").exists():
        return root
    deb = _download(cache, pkg)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    _run(["dpkg-deb", "-x", str(deb), str(root)], f"unpacking {deb}")
    (root / ".unpacked").write_text(deb.name + "\n")
    return root


def ensure(cache: Optional[Path] = None, log: Callable[[str], None] = lambda s: None) -> Pieces:
    """Every piece, fetched and unpacked when missing; KernelError on any failure."""
    cache = cache_dir() if cache is None else cache
    ensure_host_tools(log)
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise KernelError(f"cache directory {cache}: {e.strerror} (set ${ENV})") from None
    kpkg = _kernel_package(cache)
    release = kpkg[len("linux-image-"):]
    if not (cache / "x" / kpkg / ".unpacked").exists():
        log(f"apt-get download {kpkg} busybox-static into {cache}/debs (first use, ~72 MB)")
    kroot = _unpack(cache, kpkg)
    bb = _unpack(cache, "busybox-static") / "bin" / "busybox"
    if not (kroot / "lib" / "modules" / release / "modules.dep").exists() or \
            not (kroot / ".depmod").exists():
        _run(["depmod", "-b", str(kroot), release], f"depmod of {kroot}")
        (kroot / ".depmod").write_text("done\n")
    vmlinuz = kroot / "boot" / f"vmlinuz-{release}"
    for p, what in ((vmlinuz, "kernel image"), (bb, "busybox")):
        if not p.exists():
            raise KernelError(f"{what} {p} missing after unpacking (remove {cache} and retry)")
    return Pieces(cache, release, vmlinuz, kroot, bb, Path(shutil.which("fio") or "fio"),
                  Path(shutil.which("qemu-system-x86_64") or "qemu-system-x86_64"))


def cached(cache: Optional[Path] = None) -> Optional[str]:
    """None when everything is in place without fetching, else what is missing (for tests' skips)."""
    cache = cache_dir() if cache is None else cache
    pkgs = missing_tools()
    if pkgs:
        return f"host packages missing: {' '.join(pkgs)}"
    kernels = [p for p in (cache / "x").glob("linux-image-*-amd64") if (p / ".unpacked").exists()]
    if not kernels:
        return f"no unpacked kernel in {cache}/x"
    if not (cache / "x" / "busybox-static" / ".unpacked").exists():
        return f"no busybox-static in {cache}/x"
    return None
