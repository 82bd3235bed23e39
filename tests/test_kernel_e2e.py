"""End to end: `iosched kernel` boots Linux under QEMU on the emulated drive, two small
sequential readers, none then bfq, and leaves nothing behind.

Runs only with IOSCHED_KERNEL_TESTS=1 (a first run fetches ~75 MB of Debian packages and
apt-installs qemu-system-x86, kmod and fio: not for every CI machine), as root, with /dev/fuse,
qemu-system-x86_64 and the cache in place (`iosched kernel` once, or IOSCHED_KERNEL_TESTS=fetch
to let this test fetch). Otherwise it skips, with the reason. Each boot takes about 10 s under
TCG; the test is not timed.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest


JOB = """[global]
filename=/dev/sdb
rw=read
bs=64k
direct=1
ioengine=psync
size=8M
[a]
offset=0
[b]
offset=256M
"""


def _skip_reason():
    from iosched.kernel import cache

    flag = os.environ.get("IOSCHED_KERNEL_TESTS", "")
    if flag not in ("1", "fetch"):
        return "set IOSCHED_KERNEL_TESTS=1 (or =fetch) to boot a QEMU guest"
    if os.geteuid() != 0:
        return "needs root"
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse"
    if flag != "fetch":
        if shutil.which("qemu-system-x86_64") is None:
            return "no qemu-system-x86_64 (IOSCHED_KERNEL_TESTS=fetch installs it)"
        missing = cache.cached()
        if missing:
            return f"kernel cache incomplete: {missing} (IOSCHED_KERNEL_TESTS=fetch fetches it)"
    return None


def _leftovers():
    mounts = [ln for ln in Path("/proc/mounts").read_text().splitlines() if "ios-kernel." in ln]
    qemus = subprocess.run(["pgrep", "-f", "ios-kernel."], capture_output=True, text=True).stdout.split()
    dirs = list(Path("/tmp").glob("ios-kernel.*"))
    return mounts, qemus, dirs


def _kernel(tmp_path, *args) -> subprocess.CompletedProcess:
    """`iosched kernel` (the installed package's: the checkout's python/ has no built extension)
    on JOB, at IDE depth 1, one repeat; skips, saying why, where the machine cannot boot a guest."""
    reason = _skip_reason()
    if reason:
        print(f"skipped: {reason}")
        pytest.skip(reason)
    job = tmp_path / "two.fio"
    job.write_text(JOB)
    return subprocess.run([os.sys.executable, "-m", "iosched.cli", "kernel", str(job), "--controller", "ide",
                           "--repeat", "1", *args], capture_output=True, text=True)


def test_two_readers_none_and_bfq(tmp_path):
    for sched in ("none", "bfq"):
        out = tmp_path / sched
        p = _kernel(tmp_path, "--scheduler", sched, "--out", str(out), "--format", "json")
        assert p.returncode == 0, p.stderr
        doc = json.loads(p.stdout)
        assert doc["controller"] == "ide" and doc["queue_depth"] == 1
        rows = {r["metric"]: r for r in doc["summary"]}
        assert rows["aggregate"]["guest_mean"] > 0 and rows["aggregate"]["sim_mean"] > 0
        assert rows["a"]["guest_mean"] > 0 and rows["b"]["guest_mean"] > 0
        # 2 x 8 MiB in 64 KiB requests, plus the kernel's partition probe
        assert 256 <= rows["drive requests"]["guest_mean"] < 300
        facts = doc["repeats"][0]["guest_facts"]
        assert facts["queue_depth"] == 1 and f"[{sched}]" in facts["scheduler_line"]
        for name in ("rep1.serial.log", "rep1.fio.json", "rep1.mount.summary.json", "rep1.mount.requests.csv",
                     "rep1.sim.summary.json", "rep1.sim-think.summary.json", "comparison.json", "comparison.csv"):
            assert (out / name).exists(), name
        assert _leftovers() == ([], [], [])


def test_unknown_tunable_fails_in_the_guest_and_cleans_up(tmp_path):
    p = _kernel(tmp_path, "--scheduler", "mq-deadline", "--set", "no_such_tunable=1", "--out", str(tmp_path / "o"))
    assert p.returncode == 2
    assert "tunable no_such_tunable: neither queue/iosched/no_such_tunable nor queue/no_such_tunable" in p.stderr
    assert "Traceback" not in p.stderr
    assert _leftovers() == ([], [], [])
