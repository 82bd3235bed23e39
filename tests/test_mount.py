"""Real mode through the Python CLI: `iosched mount` (real mode run by the native extension) with
two dd readers under --direct-io, checksums, SIGINT, and `iosched umount` of a --daemon mount.
A fixture always unmounts (lazily, then aborting the FUSE connection). Skipped only where
/dev/fuse is missing."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/dev/fuse").exists(), reason="/dev/fuse is missing: FUSE mounts are impossible here")

CLI = [sys.executable, "-m", "iosched.cli"]


def mount_entry(path: Path):
    """(major:minor, source) of the visible mount at `path`, or None."""
    found = None
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        f = line.split(" ")
        sep = f.index("-")
        if f[4].replace("\\040", " ") == str(path):
            found = (f[2], f[sep + 2])
    return found


def force_unmount(path: Path) -> None:
    entry = mount_entry(path)
    if entry is None:
        return
    subprocess.run(["umount", "-l", str(path)], capture_output=True)
    minor = entry[0].split(":")[1]
    try:
        Path(f"/sys/fs/fuse/connections/{minor}/abort").write_text("1")
    except OSError:
        pass


@pytest.fixture
def dirs(tmp_path):
    backing, mnt = tmp_path / "backing", tmp_path / "mnt"
    backing.mkdir()
    mnt.mkdir()
    procs = []
    yield backing, mnt, procs
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    force_unmount(mnt)


def wait_mounted(mnt: Path, proc=None, timeout=30.0):
    start = time.time()
    while not (mount_entry(mnt) or ("", ""))[1].startswith("iosched:"):
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"iosched mount exited {proc.returncode}: {proc.stderr.read()}")
        assert time.time() - start < timeout, "not mounted in time"
        time.sleep(0.02)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_two_dd_readers_direct_io_then_sigint(dirs):
    backing, mnt, procs = dirs
    for name, seed in (("a", b"a"), ("b", b"b")):
        (backing / name).write_bytes(hashlib.sha512(seed).digest() * (2 * 1024 * 1024 // 64))
    proc = subprocess.Popen(
        # No --policy: the default, aged-sptf, is named in the label as the simulator names it
        # (issue 23: real mode said `anticipatory`).
        CLI + ["mount", str(backing), str(mnt), "--scheduler", "anticipatory", "--direct-io"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    procs.append(proc)
    wait_mounted(mnt, proc)
    readers = [
        subprocess.Popen(["dd", f"if={mnt / n}", f"of={backing.parent / (n + '.out')}", "bs=64k", "status=none"]) for n in ("a", "b")
    ]
    for r in readers:
        assert r.wait(timeout=60) == 0
    for n in ("a", "b"):
        assert sha(backing.parent / (n + ".out")) == sha(backing / n)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert mount_entry(mnt) is None
    doc = json.loads(out)
    assert set(doc) == {"scenario", "runs"}
    run = doc["runs"][0]
    assert run["scheduler"] == "anticipatory(aged-sptf)"
    dds = [p for p in run["processes"] if p["name"] == "dd"]
    assert len(dds) == 2 and all(p["requests"] == 32 and p["bytes"] == 2 * 1024 * 1024 for p in dds), run["processes"]
    assert {"mean", "p50", "p95", "p99", "max"} <= set(run["lateness_us"])
    # The anticipation counters are reported (how often it waits depends on real timing: two
    # real dd processes may not even overlap, so no count is asserted).
    assert set(run["scheduler_counters"]) == {"waits", "waits_rewarded", "waits_timed_out"}, run["scheduler_counters"]


def test_daemon_and_umount(dirs, tmp_path):
    backing, mnt, _ = dirs
    (backing / "f").write_bytes(os.urandom(300_000))
    summary = tmp_path / "summary.json"
    r = subprocess.run(
        CLI + ["mount", str(backing), str(mnt), "--daemon", "--scheduler", "clook", "--summary", str(summary)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert mount_entry(mnt) is not None
    assert sha(mnt / "f") == sha(backing / "f")
    r = subprocess.run(CLI + ["umount", str(mnt)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert mount_entry(mnt) is None
    assert json.loads(summary.read_text())["runs"][0]["scheduler"] == "clook"


def daemon_pid(mnt: Path) -> int:
    """The mount's pid from its pidfile ("PID START_TIME")."""
    name = "".join(c if c.isascii() and c.isalnum() else "_" for c in str(mnt))
    return int(Path(f"/tmp/iosched-fuse{name}.pid").read_text().split()[0])


def test_umount_of_a_stopped_daemon_and_mount_over_a_killed_one(dirs, tmp_path):
    """Issue 10 through the Python CLI: `iosched umount` of a SIGSTOP'd daemon returns (and the
    daemon finishes), and after SIGKILL the next `iosched mount` removes the dead mount."""
    backing, mnt, _ = dirs
    (backing / "f").write_bytes(b"data")
    summary = tmp_path / "summary.json"
    r = subprocess.run(CLI + ["mount", str(backing), str(mnt), "--daemon", "--summary", str(summary)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    pid = daemon_pid(mnt)
    os.kill(pid, signal.SIGSTOP)
    try:
        r = subprocess.run(CLI + ["umount", str(mnt), "--timeout", "5"], capture_output=True, text=True, timeout=30)
    finally:
        os.kill(pid, signal.SIGCONT) if Path(f"/proc/{pid}").exists() else None
    assert r.returncode == 0, r.stderr
    assert mount_entry(mnt) is None and json.loads(summary.read_text())["runs"][0]["requests"] == 0
    r = subprocess.run(CLI + ["mount", str(backing), str(mnt), "--daemon"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    pid = daemon_pid(mnt)
    os.kill(pid, signal.SIGKILL)
    for _ in range(250):
        st = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] if Path(f"/proc/{pid}").exists() else "X"
        if st in "ZX":
            break
        time.sleep(0.02)
    assert mount_entry(mnt) is not None  # the dead mount
    r = subprocess.run(CLI + ["mount", str(backing), str(mnt), "--daemon"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "removed a dead mount" in r.stderr, r.stderr
    assert (mnt / "f").read_bytes() == b"data"
    r = subprocess.run(CLI + ["umount", str(mnt)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert mount_entry(mnt) is None


def test_bad_input_one_message(dirs):
    backing, mnt, _ = dirs
    r = subprocess.run(CLI + ["mount", str(backing), str(mnt), "--scheduler", "nope"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "unknown scheduler `nope`" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert mount_entry(mnt) is None


def test_real_backend_reads_writes_and_fsync_at_dispatch(dirs, tmp_path):
    """--backend real: the dispatcher does the backing I/O; data round-trips, writes and fsync
    reach the backing file, the summary says how requests were addressed, and there is no
    lateness (nothing is held to a modelled time)."""
    backing, mnt, _ = dirs
    (backing / "f").write_bytes(os.urandom(1_000_000))
    summary = tmp_path / "summary.json"
    requests_csv = tmp_path / "requests.csv"
    r = subprocess.run(
        CLI + ["mount", str(backing), str(mnt), "--daemon", "--backend", "real", "--scheduler", "noop", "--direct-io",
               "--summary", str(summary), "--requests-csv", str(requests_csv)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert sha(mnt / "f") == sha(backing / "f")
    payload = os.urandom(200_000)
    fd = os.open(mnt / "g", os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, payload)
    os.fsync(fd)
    os.close(fd)
    assert (backing / "g").read_bytes() == payload
    assert (mnt / "g").read_bytes() == payload
    r = subprocess.run(CLI + ["umount", str(mnt)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    run = json.loads(summary.read_text())["runs"][0]
    assert run["backend"] == "real" and run["device"] == "real" and run["lateness_us"] is None
    n = run["addresses"]["fiemap"] + run["addresses"]["layout"]
    assert n == run["requests"] > 0
    rows = requests_csv.read_text().splitlines()
    assert rows[0].startswith("req_id,pid,group,op,") and len(rows) == 1 + run["requests"]


def test_bad_outputs_stats_interval_and_nonempty_mountpoint_refused(dirs, tmp_path):
    """Issue 10: output paths that cannot be written, a too short --stats-interval and a
    non-empty mountpoint are refused at mount time with one line naming the option and value."""
    backing, mnt, _ = dirs
    missing = tmp_path / "missing" / "out.json"
    cases = [
        (["--summary", str(missing)], f"--summary {missing}"),
        (["--requests-csv", str(missing)], f"--requests-csv {missing}"),
        (["--stats", str(missing)], f"--stats {missing}"),
        (["--stats-interval", "0.000001"], "--stats-interval 0.000001"),
    ]
    for extra, want in cases:
        for daemon in ([], ["--daemon"]):
            r = subprocess.run(CLI + ["mount", str(backing), str(mnt), *extra, *daemon], capture_output=True, text=True, timeout=30)
            assert r.returncode == 2, (extra, r.stderr)
            assert want in r.stderr and len(r.stderr.strip().splitlines()) == 1, (extra, r.stderr)
            assert mount_entry(mnt) is None
    (mnt / "precious").write_text("would be hidden")
    r = subprocess.run(CLI + ["mount", str(backing), str(mnt)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "is not empty" in r.stderr, r.stderr
    assert mount_entry(mnt) is None


def test_unknown_backend_one_message(dirs):
    backing, mnt, _ = dirs
    r = subprocess.run(CLI + ["mount", str(backing), str(mnt), "--backend", "nvme"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "unknown backend `nvme`" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert mount_entry(mnt) is None


def test_calibration_is_for_the_real_backend(dirs, tmp_path):
    backing, mnt, _ = dirs
    curve = tmp_path / "curve.json"
    curve.write_text('{"zero_ns": 0.0, "forward": [], "backward": []}')
    r = subprocess.run(CLI + ["mount", str(backing), str(mnt), "--calibration", str(curve)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--backend real" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    (tmp_path / "bad.json").write_text("[1, 2]")
    r = subprocess.run(CLI + ["mount", str(backing), str(mnt), "--backend", "real", "--calibration", str(tmp_path / "bad.json")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "no positioning curve" in r.stderr
    assert mount_entry(mnt) is None
