"""iosched kernel's parts that need nothing (no root, FUSE, QEMU or cache): option checks, the
/init parameter encoding, the cpio writer, the job file's guest copy, fio JSON and serial-log
parsing, the comparison arithmetic, the teardown with a fake QEMU. The end-to-end run is
test_kernel_e2e.py."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iosched.cli import app
from iosched.kernel import KernelError, cache, compare, guest, initramfs, run, workload

from conftest import REPO

runner = CliRunner()
DATA = REPO / "tests" / "data" / "kernel"
JOBS = REPO / "experiments" / "kernel"


# --- command line -----------------------------------------------------------------------------

def test_help_names_the_options():
    r = runner.invoke(app, ["kernel", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    for opt in ("--scheduler", "--set", "--device", "--controller", "--repeat", "--out", "--mount-scheduler",
                "--queue-order", "--timeout"):
        assert opt in r.output


def test_unknown_scheduler_names_the_guests():
    r = runner.invoke(app, ["kernel", str(JOBS / "two-readers.fio"), "--scheduler", "cfq"])
    assert r.exit_code == 2
    assert "--scheduler cfq: guest kernel has: mq-deadline kyber bfq none" in r.output
    assert "Traceback" not in r.output


@pytest.mark.parametrize("args, message", [
    (["--controller", "scsi"], "--controller scsi: expected one of auto, ide, ahci"),
    (["--queue-order", "lifo"], "--queue-order lifo"),
    (["--repeat", "0"], "--repeat 0"),
    (["--set", "low_latency"], "--set 'low_latency': expected NAME=VALUE"),
    (["--set", "x=1;reboot"], "--set 'x=1;reboot'"),
])
def test_bad_options_exit_2(args, message):
    r = runner.invoke(app, ["kernel", str(JOBS / "two-readers.fio"), "--scheduler", "bfq", *args])
    assert r.exit_code == 2, r.output
    assert message in r.output


def test_bad_job_files_exit_2(tmp_path):
    bad = tmp_path / "bad.fio"
    bad.write_text("[a]\nfilename=/dev/sdb\nrw=read\ndirect=1\nverify=crc32c\n")
    r = runner.invoke(app, ["kernel", str(bad), "--scheduler", "bfq"])
    assert r.exit_code == 2 and "option `verify=crc32c`" in r.output
    nofile = tmp_path / "nofile.fio"
    nofile.write_text("[a]\nrw=read\ndirect=1\nsize=1m\n")
    r = runner.invoke(app, ["kernel", str(nofile), "--scheduler", "bfq"])
    assert r.exit_code == 2 and "job [a]: filename=(none)" in r.output
    cg = tmp_path / "cg.fio"
    cg.write_text("[a]\nfilename=/dev/sdb\nrw=read\ndirect=1\nsize=1m\ncgroup=x\ncgroup_weight=100\n"
                  "[b]\nfilename=/dev/sdb\nrw=read\ndirect=1\nsize=1m\nstonewall\n")
    r = runner.invoke(app, ["kernel", str(cg), "--scheduler", "bfq"])
    assert r.exit_code == 2 and "option `stonewall`" in r.output and "its own fio process" in r.output
    cg.write_text("[a]\nfilename=/dev/sdb\nrw=read\ndirect=1\nsize=1m\ncgroup=x y\n")
    r = runner.invoke(app, ["kernel", str(cg), "--scheduler", "bfq"])
    assert r.exit_code == 2 and "a cgroup name of letters" in r.output
    r = runner.invoke(app, ["kernel", str(tmp_path / "missing.fio"), "--scheduler", "bfq"])
    assert r.exit_code == 2 and "missing.fio" in r.output


def test_not_root_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(KernelError, match="needs root"):
        guest.preflight()
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(KernelError, match="no /nonexistent/fuse"):
        guest.preflight("/nonexistent/fuse")


@pytest.mark.parametrize("asked, qmax, has_queue, want", [
    ("auto", 1, True, ("ide", 1)),
    ("auto", 32, True, ("ahci", 32)),
    ("auto", 32, False, ("ide", 1)),
    ("ide", 32, True, ("ide", 1)),
    ("ahci", 1, True, ("ahci", 1)),
    ("ahci", 64, True, ("ahci", 64)),
])
def test_controller_choice(asked, qmax, has_queue, want):
    controller, depth, notes = run.choose_controller(asked, qmax, has_queue)
    assert (controller, depth) == want
    if asked == "ahci" and depth == 1:
        assert "one at a time" in notes[0]


# --- the guest's parameters and initramfs -----------------------------------------------------

def test_params_round_trip_through_the_shell(tmp_path):
    sets = initramfs.check_tunables(["low_latency=0", "slice_idle=4", "nr_requests=8"])
    text = initramfs.encode_params("ide", "bfq", sets)
    assert initramfs.decode_params(text) == {"IOS_CTRL": "ide", "IOS_SCHED": "bfq",
                                             "IOS_SET": "low_latency=0 slice_idle=4 nr_requests=8", "IOS_GROUPS": ""}
    p = tmp_path / "params"
    p.write_text(text)
    out = subprocess.run(["sh", "-c", f'. {p}; for kv in $IOS_SET; do echo "${{kv%%=*}} ${{kv#*=}}"; done; '
                                      f'echo "$IOS_CTRL $IOS_SCHED"'], capture_output=True, text=True).stdout
    assert out.splitlines() == ["low_latency 0", "slice_idle 4", "nr_requests 8", "ide bfq"]


def test_params_refuse_unsafe_values():
    with pytest.raises(KernelError, match="controller 'scsi'"):
        initramfs.encode_params("scsi", "bfq", [])
    with pytest.raises(KernelError, match="not an elevator name"):
        initramfs.encode_params("ide", "bfq;reboot", [])
    with pytest.raises(KernelError):
        initramfs.check_tunables(["a=$(reboot)"])
    with pytest.raises(KernelError):
        initramfs.check_tunables(["A=1"])


def test_per_run_archive_reads_back():
    files = initramfs.read_cpio(initramfs.per_run("[a]\nrw=read\n", "IOS_CTRL=ide\n"))
    assert files["ios/job.fio"] == b"[a]\nrw=read\n"
    assert files["ios/params"] == b"IOS_CTRL=ide\n"
    assert files["ios"] == b""


def test_cpio_is_newc_as_cpio_reads_it(tmp_path):
    c = initramfs.Cpio()
    c.file("bin/x", b"hello", 0o755)
    c.file("a/b/c", b"123")
    arch = tmp_path / "a.cpio.gz"
    arch.write_bytes(c.gz())
    if subprocess.run(["sh", "-c", "command -v cpio"], capture_output=True).returncode != 0:
        pytest.skip("no cpio tool to cross-check with")
    listing = subprocess.run(["sh", "-c", f"gzip -dc {arch} | cpio -it --quiet"], capture_output=True, text=True)
    assert listing.stdout.split() == ["bin", "bin/x", "a", "a/b", "a/b/c"]


def test_init_script_is_package_data():
    text = initramfs.INIT.read_text()
    assert text.startswith("#!/bin/busybox sh")
    for marker in (guest.BEGIN, guest.END, guest.ERROR, "guest kernel has:"):
        assert marker in text
    assert subprocess.run(["sh", "-n", str(initramfs.INIT)]).returncode == 0


# --- the workload --------------------------------------------------------------------------

def test_guest_copy_rewrites_filenames_and_drops_ioscheduler():
    text, notes = workload.guest_job_text("[global]\nfilename=/dev/sdb\nioscheduler=bfq\n[a]\n  FileName = /dev/sdc\n",
                                          "j.fio")
    assert text == ("[global]\nfilename=/dev/sda\n; ioscheduler=bfq  (dropped by iosched kernel)\n[a]\n"
                    "  filename=/dev/sda\n")
    assert "dropped in the guest" in notes[0]


def test_load_and_simulator_scenario():
    w = workload.load(JOBS / "two-readers.fio", "maxtor-stm332061")
    assert w.job_names == ["a", "b"]
    assert "filename=/dev/sda" in w.guest_text
    scn = workload.sim_scenario(w, "none", {}, queue_depth=32, think_us=412.5, seed=3)
    d = scn.to_dict()
    assert d["scheduler"] == [{"name": "noop"}]
    assert d["device"]["queue_depth"] == 32 and d["device"]["queue_order"] == "rpo"
    assert [p["think_us"] for p in d["process"]] == [412.5, 412.5]
    assert d["run"]["seed"] == 3


def test_tunables_split_between_guest_and_simulator():
    sim, notes = workload.split_tunables([("low_latency", "0"), ("nr_requests", "4"), ("slice_idle", "2.5")], "bfq")
    assert sim == {"low_latency": 0, "slice_idle": 2.5}
    assert notes == ["--set nr_requests=4: guest only (the simulator's bfq has no nr_requests)"]


# --- parsing and arithmetic ----------------------------------------------------------------

def test_fio_json_sample():
    doc = json.loads((DATA / "fio-two-readers-bfq.json").read_text())
    side = compare.fio_side(doc, ["a", "b"])
    a, b = side.jobs
    assert (a.name, a.op) == ("a", "read")
    assert a.mb_s == pytest.approx(33554432 / 2.416 / 1e6)
    assert a.p50_ms == pytest.approx(2.736128) and b.p99_ms == pytest.approx(17.170432)
    assert side.aggregate_mb_s == pytest.approx(2 * 33554432 / 2.434 / 1e6)
    assert compare.fio_side(doc).jobs[1].name == "b"


def test_writer_uses_its_write_direction():
    doc = {"jobs": [{"jobname": "w", "read": {"io_bytes": 0, "runtime": 0, "clat_ns": {}},
                     "write": {"io_bytes": 2_000_000, "runtime": 1000,
                               "clat_ns": {"percentile": {"50.000000": 1_500_000, "99.000000": 9_000_000}}}}]}
    j = compare.fio_side(doc).jobs[0]
    assert (j.op, j.mb_s, j.p50_ms, j.p99_ms) == ("write", 2.0, 1.5, 9.0)


SERIAL = ("SeaBIOS\r\nIOS ready at uptime 3.2 ctrl=ide\r\nIOS queue queue_depth=1 nr_requests=2 max_sectors_kb=1280\r\n"
          "IOS scheduler mq-deadline kyber [bfq] none\r\nIOS tunable low_latency=0\r\n"
          "IOS fio start at uptime 3.3\r\nIOS fio end at uptime 6.3 rc=0\r\n"
          "IOS-FIO-JSON-BEGIN\r\nnote: something fio says\r\n{\"jobs\": [\r\n{\"jobname\": \"a\"}]}\r\n\r\n"
          "IOS-FIO-JSON-END\r\nIOS done\r\n")


def test_serial_log_parsing():
    doc, facts = guest.parse_serial(SERIAL, "x.log")
    assert doc == {"jobs": [{"jobname": "a"}]}
    assert facts["queue_depth"] == 1 and facts["nr_requests"] == 2
    assert facts["scheduler_line"] == "mq-deadline kyber [bfq] none"
    assert facts["tunables"] == {"low_latency": "0"}
    assert facts["fio_end_uptime_s"] - facts["fio_start_uptime_s"] == pytest.approx(3.0)


def test_serial_log_errors():
    with pytest.raises(KernelError, match=r"guest: unknown scheduler cfq: guest kernel has: mq-deadline kyber bfq none "
                                          r"\(serial log x.log\)"):
        guest.parse_serial("IOS ready\r\nIOS-ERROR unknown scheduler cfq: guest kernel has: mq-deadline kyber bfq none\r\n",
                           "x.log")
    with pytest.raises(KernelError, match="no fio JSON"):
        guest.parse_serial("IOS ready\nKernel panic\n", "x.log")
    with pytest.raises(KernelError, match="unreadable"):
        guest.parse_serial("IOS-FIO-JSON-BEGIN\n{oops\nIOS-FIO-JSON-END\n", "x.log")


def test_drive_view():
    rows = [  # out of start order on purpose: sorted by start_ns
        {"start_ns": "30", "start_sector": "4096", "size_sectors": "128", "complete_ns": "1000030", "cache_hit": "false"},
        {"start_ns": "10", "start_sector": "0", "size_sectors": "128", "complete_ns": "3000010", "cache_hit": "false"},
        {"start_ns": "20", "start_sector": "128", "size_sectors": "128", "complete_ns": "1000020", "cache_hit": "true"},
        {"start_ns": "40", "start_sector": "256", "size_sectors": "128", "complete_ns": "3000040", "cache_hit": "false"},
    ]
    v = compare.drive_view(rows)
    # gaps: 0 (contiguous), 4096-256 = 3840 (> 2048: a switch), |256-4224| = 3968 (a switch)
    assert v == {"requests": 4, "request_kib": 64.0, "seek_mib": pytest.approx((0 + 3840 + 3968) / 3 / 2048),
                 "switches": 2, "cache_hits": 0.25, "service_ms": 2.0}
    assert compare.drive_view([])["requests"] == 0


def test_summary_arithmetic():
    g = compare.Side(10.0, [compare.JobStats("a", 5.0, 1.0, 2.0, "read")], {"requests": 10})
    s = compare.Side(8.0, [compare.JobStats("a", 4.0, 2.0, 4.0, "")], {"requests": 8})
    rows1 = compare.rows_for(g, s, None)
    g2 = compare.Side(12.0, [compare.JobStats("a", 7.0, 1.0, 2.0, "read")], {"requests": 12})
    rows2 = compare.rows_for(g2, s, s)
    summ = {r["metric"]: r for r in compare.summarize([rows1, rows2])}
    agg = summ["aggregate"]
    assert agg["guest_mean"] == 11.0 and agg["guest_sd"] == pytest.approx(2 ** 0.5)
    assert agg["sim_mean"] == 8.0 and agg["sim_sd"] == 0.0
    assert agg["ratio_sim"] == pytest.approx(11 / 8)
    assert agg["sim_think_mean"] == 8.0 and agg["repeats"] == 2  # one repeat had no sim+think
    assert summ["a p99"]["ratio_sim"] == 0.5
    assert summ["drive requests"]["guest_mean"] == 11.0
    assert compare.ratio(1.0, 0) is None and compare.mean_sd([None]) == (None, None)
    assert compare.fmt_pm(27.55, 0.4) == "27.6 ± 0.40" and compare.fmt_pm(3.0, 0.0) == "3.00"


# --- cache rules ---------------------------------------------------------------------------

def test_cache_dir_rule():
    assert cache.cache_dir({"IOSCHED_KERNEL_CACHE": "/c", "XDG_CACHE_HOME": "/x", "HOME": "/h"}) == Path("/c")
    assert cache.cache_dir({"XDG_CACHE_HOME": "/x", "HOME": "/h"}) == Path("/x/iosched-kernel")
    assert cache.cache_dir({"HOME": "/h"}) == Path("/h/.cache/iosched-kernel")


def test_missing_tools_are_apt_packages():
    assert cache.missing_tools(lambda t: None) == ["qemu-system-x86", "kmod", "fio", "dpkg"]
    assert cache.missing_tools(lambda t: None if t == "modprobe" else "/bin/" + t) == ["kmod"]


def test_cached_reports_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "missing_tools", lambda: [])
    assert "no unpacked kernel" in cache.cached(tmp_path)
    (tmp_path / "x" / "linux-image-6.1.0-9-amd64").mkdir(parents=True)
    (tmp_path / "x" / "linux-image-6.1.0-9-amd64" / ".unpacked").write_text("x")
    assert "busybox" in cache.cached(tmp_path)


# --- teardown ------------------------------------------------------------------------------

def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie not yet reaped counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("ignores_term", [False, True])
def test_teardown_stops_qemu_and_removes_the_directory(tmp_path, ignores_term):
    s = guest.Session(["false"], kill_grace_s=0.3)
    tmp = s.make_tmp()
    (tmp / "backing").mkdir()
    (tmp / "backing" / "disk.raw").write_bytes(b"x")
    fake = ["sh", "-c", ("trap '' TERM; " if ignores_term else "") + "sleep 600"]
    q = s.start(fake, tmp_path / "serial.log")
    time.sleep(0.2)
    s.teardown()
    assert q.poll() is not None and not _alive(q.pid)
    assert not tmp.exists()
    s.teardown()  # twice: nothing left to do, no error


def test_teardown_goes_on_after_a_failing_step(tmp_path):
    s = guest.Session(["false"])
    tmp = s.make_tmp()
    s.mountpoint = tmp / "mnt"  # not mounted: umount has nothing to do

    def boom():
        raise RuntimeError("qemu step failed")

    s.stop_qemu = boom
    logged = []
    s.log = logged.append
    s.teardown()
    assert not tmp.exists() and "qemu step failed" in logged[0]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_tears_down(tmp_path, sig):
    """A process running a boot-like session gets a signal: the fake QEMU and the directory go."""
    script = textwrap.dedent("""
        import sys, time
        from iosched.kernel import guest
        s = guest.Session(["false"], kill_grace_s=0.3)
        try:
            with guest.signals_interrupt():
                tmp = s.make_tmp()
                q = s.start(["sh", "-c", "trap '' TERM; sleep 600"], tmp / "serial.log")
                print(tmp, q.pid, flush=True)
                time.sleep(60)
        except KeyboardInterrupt as e:
            print("interrupted", type(e).__name__, flush=True)
        finally:
            s.teardown()
    """)
    env = dict(os.environ)  # the installed package (the checkout's python/ has no built extension)
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    tmp, pid = p.stdout.readline().split()
    p.send_signal(sig)
    out, _ = p.communicate(timeout=30)
    assert "interrupted" in out
    assert not Path(tmp).exists()
    assert not _alive(int(pid))


def test_replay_of_a_mount_csv(tmp_path):
    """The mount's CSV (no run/scheduler columns) replayed in the simulator's drive."""
    header = ("req_id,pid,group,op,sync,start_sector,size_sectors,bios,issue_ns,insert_ns,dispatch_ns,start_ns,"
              "complete_ns,seek_cylinders,seek_ns,rotation_ns,transfer_ns,cache_hit")
    lines = [header]
    t = 1_000_000
    for i in range(20):
        sector = (i // 2) * 128 + (0 if i % 2 == 0 else 1_048_576)
        lines.append(f"{i},7,7,read,true,{sector},128,1,{t},{t},{t},{t},{t + 1_000_000},0,0,0,0,false")
        t += 1_300_000
    mount_csv = tmp_path / "m.csv"
    mount_csv.write_text("\n".join(lines) + "\n")
    view = compare.replay_mount(mount_csv, tmp_path / "r.csv", "maxtor-stm332061")
    assert view["requests"] == 20 and view["request_kib"] == 64.0 and view["switches"] == 19
    assert view["throughput_mb_s"] > 0 and 0 <= view["cache_hits"] <= 1
    assert not (tmp_path / "r.input.csv").exists()
    rows = compare.replay_rows({"cache_hits": 0.9, "service_ms": 1.0}, 12.0, view)
    assert [r["metric"] for r in rows] == ["replay drive MB/s", "replay cache hits", "replay service"]
    assert rows[0]["guest"] == 12.0 and rows[1]["guest"] == 0.9 and rows[0]["sim_think"] is None


def test_path_latencies_are_the_drives_idle_gaps_after_the_boot():
    # The partition probe (two reads), the boot's long gap, then the job: a request already
    # there when the previous completed counts 0.
    rows = [dict(start_ns=s, issue_ns=i, complete_ns=c) for s, i, c in [
        (1000, 1000, 2000), (2500, 2500, 3000),            # probe
        (5_000_000_000, 5_000_000_000, 5_000_100_000),     # the job's first request, after the boot
        (5_000_400_000, 5_000_400_000, 5_000_500_000),     # 300 us idle
        (5_000_500_000, 5_000_450_000, 5_000_600_000),     # arrived before the completion: 0
        (5_001_600_000, 5_001_600_000, 5_001_700_000),     # 1 ms idle
        (5_301_700_000, 5_301_700_000, 5_301_800_000)]]    # 300 ms: the guest shutting down
    assert compare.path_latencies_us(list(reversed(rows))) == [300.0, 0.0, 1000.0]
    assert compare.path_latencies_us([]) == []


def test_sim_scenario_takes_the_path_latencies_as_the_drives_command_latency(tmp_path):
    job = tmp_path / "two.fio"
    job.write_text("[global]\nfilename=/dev/sdb\nrw=read\nbs=64k\ndirect=1\nsize=8M\n[a]\n[b]\noffset=512M\n")
    w = workload.load(job, "maxtor-stm332061")
    scn = workload.sim_scenario(w, "none", {}, command_latency_us=[300.0, 0.0, 1000.0])
    assert scn.to_dict()["device"]["command_latency_us"] == [300.0, 0.0, 1000.0]
    assert "command_latency_us" not in workload.sim_scenario(w, "none", {}).to_dict()["device"]


def test_cgroup_jobs_become_one_fio_each_in_its_group(tmp_path):
    job = tmp_path / "cg.fio"
    job.write_text("[global]\nfilename=/dev/sdb\nrw=read\nbs=64k\ndirect=1\nsize=8M\n"
                   "[low]\ncgroup=slow\ncgroup_weight=100\n[high]\noffset=512M\ncgroup=fast\ncgroup_weight=200\n"
                   "[free]\noffset=1G\n")
    w = workload.load(job, "maxtor-stm332061")
    assert w.groups == [("low", "slow", 100), ("high", "fast", 200), ("free", "", 0)]
    assert "cgroup=" not in "\n".join(ln for ln in w.guest_text.splitlines() if not ln.startswith(";"))
    text = initramfs.encode_params("ahci", "bfq", [], w.groups)
    assert initramfs.decode_params(text)["IOS_GROUPS"] == "low:slow:100 high:fast:200 free:-:0"
    # The simulator runs the same weights as groups (fio_job's conversion).
    procs = {p["name"]: p for p in workload.sim_scenario(w, "bfq", {}).to_dict()["process"]}
    assert (procs["low"]["group_weight"], procs["high"]["group_weight"]) == (100, 200)
    assert "group" not in procs["free"]
    with pytest.raises(KernelError, match="not a safe name"):
        initramfs.encode_params("ahci", "bfq", [], [("a;reboot", "x", 1)])


def test_one_json_block_per_job_is_joined():
    block = lambda name: ["IOS-FIO-JSON-BEGIN", json.dumps({"fio version": "3.33", "jobs": [{"jobname": name}]}),
                          "IOS-FIO-JSON-END"]
    text = "\n".join(["IOS queue queue_depth=32", "IOS cgroup slow io.bfq.weight=default 100", *block("low"), *block("high")])
    doc, facts = guest.parse_serial(text, "log")
    assert [j["jobname"] for j in doc["jobs"]] == ["low", "high"]
    assert facts["cgroups"] == {"slow": "io.bfq.weight=default 100"}


def test_a_cgroup_job_joins_its_group_with_its_own_pid(tmp_path):
    # The line of /init that starts a job in its group, run with fio replaced by `true`: the pid
    # written to cgroup.procs must be the started process's own (not /init's: `$$` in a
    # subshell is the parent shell's).
    from iosched.kernel import initramfs

    line = next(ln for ln in initramfs.INIT.read_text().splitlines() if 'sh -c "echo' in ln)
    launch = line.strip().replace("/usr/bin/fio --section=$job --output-format=json --output=/tmp/fio-$job.json "
                                  "/ios/job.fio", "true").replace("/tmp/fio-$job.out", str(tmp_path / "out"))
    procs = tmp_path / "cgroup.procs"
    script = f'procs={procs}; job=a; {launch}\nchild=$!; wait $child; echo "$child"'
    child = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout.strip()
    assert procs.read_text().strip() == child
