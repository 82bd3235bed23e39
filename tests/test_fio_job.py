"""fio job files in (issue 23): parsing (suffixes, kb_base, comments, [global], numjobs), each
option's mapping to a scenario, each refusal (file, line, job, option, why; exit 2), and runs end
to end checked against the disk's own figures."""

import json
import textwrap

import pytest
from typer.testing import CliRunner

import iosched
from iosched import fio_job
from iosched.cli import app
from iosched.fio_job.parse import looks_like_job_file, parse_job_file
from iosched.fio_job.units import UnitError, parse_size, parse_time_us

from conftest import REPO

runner = CliRunner()
MIB = 1 << 20
DESKSTAR_BYTES = fio_job.device_capacity_bytes("ibm-deskstar-34gxp") // MIB * MIB


def job_file(tmp_path, text, name="job.fio"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def convert(tmp_path, text, **kw):
    return fio_job.read(job_file(tmp_path, text), **kw)


def processes(tmp_path, text, **kw):
    return convert(tmp_path, text, **kw).scenario["process"]


def refusal(tmp_path, text):
    with pytest.raises(iosched.ScenarioError) as e:
        convert(tmp_path, text)
    return str(e.value)


# -- numbers -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text,kb_base,want", [
    ("4096", 1024, 4096), ("4k", 1024, 4096), ("4K", 1024, 4096), ("4kb", 1024, 4096), ("4KiB", 1024, 4000),
    ("1m", 1024, MIB), ("1g", 1024, 1 << 30), ("2t", 1024, 2 << 40), ("0x10", 1024, 16), ("512b", 1024, 512),
    ("4k", 1000, 4000), ("4kib", 1000, 4096), ("1mib", 1000, MIB), ("1m", 1000, 10**6),
])
def test_sizes_follow_kb_base_as_fio_reads_them(text, kb_base, want):
    assert parse_size(text, kb_base) == (want, False)


@pytest.mark.parametrize("text,why", [
    ("4ki", "ambiguous: fio's HOWTO reads `ki` as 1,000 per unit with kb_base=1024, its parser as `k`, 1,024"),
    ("1.5g", "fio reads whole numbers and stops at the `.`"),
    ("4q", "unknown size suffix `q`"),
    ("-4k", "a negative value"),
    ("(4*1024)", "arithmetic expressions are not read"),
    ("8z", "zoned block devices"),
])
def test_sizes_fio_would_misread_are_refused_with_the_reason(text, why):
    with pytest.raises(UnitError) as e:
        parse_size(text, 1024)
    assert why in str(e.value)


def test_times_have_the_options_default_unit_and_fios_suffixes():
    assert parse_time_us("30", 1_000_000) == 30_000_000      # runtime: seconds
    assert parse_time_us("100", 1) == 100                    # thinktime: microseconds
    assert parse_time_us("250ms", 1) == 250_000
    assert parse_time_us("2m", 1_000_000) == 120_000_000     # minutes, not milli
    assert parse_time_us("1h", 1) == 3_600_000_000
    assert parse_time_us("10usec", 1_000_000) == 10
    with pytest.raises(UnitError, match="its parser \\(get_mult_time\\) as microseconds; write `10s`"):
        parse_time_us("10sec", 1_000_000)


# -- the INI file --------------------------------------------------------------------------------

def test_globals_are_inherited_by_the_jobs_below_them_and_jobs_override():
    jf = parse_job_file(textwrap.dedent("""\
        ; a comment
        # another
        [global]
        bs=8k   ; inline comment
        rw=randread
        [a]
        [b]
        bs=16k
        [global]
        direct=1
        [c]
        time_based
        """), "x.fio")
    a, b, c = jf.jobs
    assert a.settings["bs"].value == "8k" and b.settings["bs"].value == "16k" and c.settings["bs"].value == "8k"
    assert "direct" not in a.settings and c.settings["direct"].value == "1"
    assert c.settings["time_based"].value is None            # a bare flag
    assert (a.settings["bs"].line, b.settings["bs"].line) == (4, 8)


def test_aliases_env_and_buffered_as_the_opposite_of_direct(tmp_path, monkeypatch):
    monkeypatch.setenv("FIO_BS", "64k")
    p = processes(tmp_path, """\
        [j]
        readwrite=randwrite
        blocksize=${FIO_BS}
        buffered=0
        filename=/dev/sdb
        size=1g
        """)[0]
    assert (p["op"], p["pattern"], p["request_kib"], p["access"]) == ("write", "random", 64, "direct")


def test_kb_base_applies_to_the_whole_section_wherever_it_is_written(tmp_path):
    p = processes(tmp_path, """\
        [j]
        size=1m
        direct=1
        filename=/dev/sdb
        kb_base=1000
        """)[0]
    assert p["file_mib"] == 10**6 / MIB


def test_numjobs_makes_clones_with_their_own_files_and_offset_increment(tmp_path):
    ps = processes(tmp_path, """\
        [global]
        direct=1
        size=100m
        [own]
        numjobs=3
        [shared]
        filename=/data/f
        numjobs=2
        offset_increment=50m
        size=50m
        """)
    assert [p["name"] for p in ps] == ["own.0", "own.1", "own.2", "shared.0", "shared.1"]
    # Files back to back from 0, 1 MiB aligned, in order of first use; clones of `shared` share
    # its file, 50 MiB apart.
    assert [p["file_offset_mib"] for p in ps] == [0, 100, 200, 300, 350]
    assert all(p["file_mib"] == (100 if p["name"].startswith("own") else 50) for p in ps)


def test_content_detection(tmp_path):
    fio_text = "[job]\nrw=randread\nsize=1m\n"
    assert looks_like_job_file("jobs.ini", fio_text)
    assert looks_like_job_file("x.fio", "anything")
    assert not looks_like_job_file("x.toml", fio_text)
    assert not looks_like_job_file("s", '[device]\npreset = "ibm-deskstar-34gxp"\n')
    assert not looks_like_job_file("s", '[[process]]\nname = "a"\n')
    # `iosched run` finds a job file without the .fio extension.
    p = job_file(tmp_path, "[j]\nrw=randread\ndirect=1\nfilename=/dev/sdb\nsize=64m\nnumber_ios=50\n", "jobs.ini")
    r = runner.invoke(app, ["run", str(p), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["runs"][0]["requests"] == 50


# -- mappings ----------------------------------------------------------------------------------

BASE = "[global]\ndirect=1\nfilename=/dev/sdb\nsize=1g\n"


@pytest.mark.parametrize("rw,op,pattern", [
    ("read", "read", "sequential"), ("write", "write", "sequential"), ("randread", "read", "random"),
    ("randwrite", "write", "random"), ("rw", "mixed", "sequential"), ("readwrite", "mixed", "sequential"),
    ("randrw", "mixed", "random"), ("trim", "discard", "sequential"), ("randtrim", "discard", "random"),
])
def test_rw_maps_to_op_and_pattern(tmp_path, rw, op, pattern):
    p = processes(tmp_path, BASE + f"[j]\nrw={rw}\n")[0]
    assert (p["op"], p["pattern"]) == (op, pattern)
    assert p.get("read_fraction") == (0.5 if op == "mixed" else None)


def test_rwmix_the_later_of_rwmixread_and_rwmixwrite_wins(tmp_path):
    assert processes(tmp_path, BASE + "[j]\nrw=randrw\nrwmixread=70\n")[0]["read_fraction"] == 0.7
    assert processes(tmp_path, BASE + "[j]\nrw=randrw\nrwmixread=70\nrwmixwrite=20\n")[0]["read_fraction"] == 0.8


def test_bs_per_direction(tmp_path):
    assert processes(tmp_path, BASE + "[j]\nrw=write\nbs=4k,64k\n")[0]["request_kib"] == 64
    assert processes(tmp_path, BASE + "[j]\nrw=read\nbs=4k,64k\n")[0]["request_kib"] == 4
    assert processes(tmp_path, BASE + "[j]\nrw=write\nbs=,8k\n")[0]["request_kib"] == 8
    assert processes(tmp_path, BASE + "[j]\nrw=read\nbs=,8k\n")[0]["request_kib"] == 4  # fio's default
    # The third value is the trims'; a value not followed by a comma goes on to them.
    assert processes(tmp_path, BASE + "[j]\nrw=trim\nbs=4k,8k,1m\n")[0]["request_kib"] == 1024
    assert processes(tmp_path, BASE + "[j]\nrw=randtrim\nbs=4k,64k\n")[0]["request_kib"] == 64
    # fio trims with BLKDISCARD: a block device, whatever direct= says.
    assert processes(tmp_path, "[j]\nfilename=/dev/sdb\nsize=1g\nrw=trim\n")[0]["op"] == "discard"


def test_iodepth_counts_only_with_an_asynchronous_engine(tmp_path):
    conv = convert(tmp_path, BASE + "[j]\nioengine=psync\niodepth=32\n")
    assert "iodepth" not in conv.scenario["process"][0]
    assert any("iodepth=32 with ioengine=psync: one I/O at a time" in n for n in conv.notes)
    for engine in ("libaio", "io_uring"):
        assert processes(tmp_path, BASE + f"[j]\nioengine={engine}\niodepth=32\n")[0]["iodepth"] == 32


def test_size_offset_and_the_raw_device(tmp_path):
    p = processes(tmp_path, "[j]\ndirect=1\nfilename=/dev/sdb\noffset=1g\nsize=512m\n")[0]
    assert (p["file_offset_mib"], p["file_mib"], p["requests"]) == (1024, 512, 512 * MIB // 4096)
    whole = processes(tmp_path, "[j]\ndirect=1\nfilename=/dev/sdb\nbs=1m\n")[0]
    assert whole["file_mib"] == DESKSTAR_BYTES // MIB and whole["requests"] == DESKSTAR_BYTES // MIB
    half = processes(tmp_path, "[j]\ndirect=1\nfilename=/dev/sdb\nsize=50%\nbs=1m\n")[0]
    assert half["file_mib"] == DESKSTAR_BYTES // 2 // MIB


def test_requests_from_size_loops_io_size_and_number_ios(tmp_path):
    assert processes(tmp_path, BASE + "[j]\nloops=3\nbs=1m\n")[0]["requests"] == 3 * 1024
    assert processes(tmp_path, BASE + "[j]\nio_size=10m\nbs=1m\n")[0]["requests"] == 10
    assert processes(tmp_path, BASE + "[j]\nnumber_ios=7\n")[0]["requests"] == 7


def test_runtime_time_based_and_startdelay(tmp_path):
    conv = convert(tmp_path, BASE + "[j]\nruntime=20\ntime_based\nstartdelay=500ms\n")
    p = conv.scenario["process"][0]
    assert (p["runtime_s"], p["start_us"], "requests" in p) == (20, 500_000, False)
    assert conv.scenario["run"]["duration_s"] == 20.5
    # Without time_based: the size or the runtime, whichever first.
    p = processes(tmp_path, BASE + "[j]\nruntime=2m\nbs=1m\n")[0]
    assert (p["runtime_s"], p["requests"]) == (120, 1024)


def test_thinktime_and_thinktime_blocks(tmp_path):
    p = processes(tmp_path, BASE + "[j]\nthinktime=2ms\nthinktime_blocks=8\n")[0]
    assert (p["think_us"], p["think_every"]) == (2000, 8)
    assert processes(tmp_path, BASE + "[j]\nthinktime=100\nthinktime_spin=300\n")[0]["think_us"] == 300


def test_rate_and_rate_iops_cap_the_process(tmp_path):
    assert processes(tmp_path, BASE + "[j]\nrate=400k\nbs=4k\n")[0]["rate_iops"] == 100
    assert processes(tmp_path, BASE + "[j]\nrw=write\nrate_iops=,25\n")[0]["rate_iops"] == 25
    assert "rate_iops" not in processes(tmp_path, BASE + "[j]\nrw=read\nrate=,1m\n")[0]  # writes only


def test_prio_and_prioclass_as_fio_sets_them(tmp_path):
    p = processes(tmp_path, BASE + "[j]\nprio=2\nprioclass=1\n")[0]
    assert (p["prio_class"], p["prio_level"]) == ("rt", 2)
    p = processes(tmp_path, BASE + "[j]\nprio=6\n")[0]            # no class: best-effort
    assert (p["prio_class"], p["prio_level"]) == ("be", 6)
    p = processes(tmp_path, BASE + "[j]\nprioclass=3\n")[0]       # no level: 0
    assert (p["prio_class"], p["prio_level"]) == ("idle", 0)
    assert "prio_class" not in processes(tmp_path, BASE + "[j]\n")[0]


def test_cgroups_become_groups_with_weights(tmp_path):
    ps = processes(tmp_path, BASE + "[a]\ncgroup=fast\ncgroup_weight=800\n[b]\ncgroup=slow\n[c]\ncgroup=fast\n[d]\n")
    assert [(p.get("group"), p.get("group_weight")) for p in ps] == [
        (1_000_000, 800), (1_000_001, 500), (1_000_000, 800), (None, None)]


def test_stonewall_starts_the_next_group_when_the_previous_ends(tmp_path):
    ps = processes(tmp_path, BASE + "[a]\nruntime=10\ntime_based\nnumjobs=2\n[b]\nstonewall\nruntime=5\ntime_based\n")
    assert [p.get("start_us", 0) for p in ps] == [0, 0, 10_000_000]
    # After one job that ends by its size: `after` it.
    ps = processes(tmp_path, BASE + "[a]\nbs=1m\n[b]\nstonewall\nstartdelay=1\n")
    assert (ps[1]["after"], ps[1]["start_us"]) == ("a", 1_000_000)


def test_ioscheduler_and_scheduler_override(tmp_path):
    assert convert(tmp_path, BASE + "[j]\nioscheduler=bfq\n").scenario["scheduler"] == [{"name": "bfq"}]
    assert convert(tmp_path, BASE + "[j]\nioscheduler=none\n").scenario["scheduler"] == [{"name": "noop"}]
    conv = convert(tmp_path, BASE + "[j]\nioscheduler=bfq\n", schedulers=["mq-deadline", "kyber"])
    assert conv.scenario["scheduler"] == [{"name": "mq-deadline"}, {"name": "kyber"}]


def test_options_without_effect_are_accepted_and_listed(tmp_path):
    conv = convert(tmp_path, BASE + "group_reporting\ndescription=x\n[j]\nname=renamed\nverify=0\nrandrepeat=0\n")
    notes = "\n".join(conv.notes)
    assert conv.scenario["process"][0]["name"] == "renamed"
    assert "group_reporting (line 5)" in notes and "description (line 6)" in notes
    assert "verify (line 9): at 0, fio's default, it changes nothing" in notes
    assert "randrepeat (line 10)" in notes and "name=renamed" in notes


def test_buffered_jobs_run_as_host_tasks(tmp_path):
    conv = convert(tmp_path, """\
        [global]
        size=256m
        runtime=10
        time_based
        [seq]
        rw=read
        [rand]
        rw=randread
        [w]
        rw=write
        rate=2m
        bs=64k
        [rw]
        rw=randwrite
        """)
    assert conv.target == "host"
    tasks = conv.scenario["task"]
    assert [t["command"] for t in tasks] == ["seq-read", "rand-read", "seq-write", "rand-write"]
    assert tasks[2]["rate_kib_s"] == 2048
    assert [f["path"] for f in conv.scenario["host"]["file"]] == ["/seq.0.0", "/rand.0.0", "/w.0.0", "/rw.0.0"]
    ends = convert(tmp_path, "[global]\nsize=64m\nbs=128k\n[r]\nrw=read\nloops=2\n[w]\nrw=write\nend_fsync=1\n")
    r, w = ends.scenario["task"]
    assert (r["command"], r["loops"], w["command"], w["fsync"]) == ("cat", 2, "dd", True)


# -- refusals ----------------------------------------------------------------------------------

@pytest.mark.parametrize("job,line,option,why", [
    ("[j]\nfoo=1\n", 6, "foo=1", "not an option iosched models"),
    ("[j]\nverify=crc32c\n", 6, "verify=crc32c", "data verification"),
    ("[j]\nbssplit=4k/50:64k/50\n", 6, "bssplit=4k/50:64k/50", "one request size"),
    ("[j]\nrw=randread:8\n", 6, "rw=randread:8", "offset modifier"),
    ("[j]\nrw=trimwrite\n", 6, "rw=trimwrite", "one operation"),
    ("[j]\nioengine=mmap\n", 6, "ioengine=mmap", "iosched models the engines"),
    ("[j]\nioengine=libaio\niodepth=8\nthinktime=100\n", 8, "thinktime=100", "waits for every I/O in flight"),
    ("[j]\nrw=randrw\nrate=1m\n", 7, "rate=1m", "fio caps each direction on its own"),
    ("[j]\nramp_time=5\n", 6, "ramp_time=5", "statistics"),
    ("[j]\nrandom_distribution=zipf:1.2\n", 6, "random_distribution=zipf:1.2", "uniform"),
    ("[j]\ntime_based\n", 6, "time_based", "give runtime"),
    ("[j]\nsize=4ki\n", 6, "size=4ki", "ambiguous"),
    ("[j]\nrw=rw\nbs=4k,8k\n", 7, "bs=4k,8k", "one request size"),
    ("[j]\nread_iolog=x.log\n", 6, "read_iolog=x.log", "kind = \"trace\""),
    ("[j]\nfilename=/dev/sda:/dev/sdb\n", 6, "filename=/dev/sda:/dev/sdb", "one file"),
    ("[j]\noffset=40g\n", 6, "offset=40g", "pass its end"),
    ("[j]\nstartdelay=1-5\n", 6, "startdelay=1-5", "a range"),
    ("[j]\nrw=write\nsync=1\n", 7, "sync=1", "FUA"),
])
def test_each_refusal_names_file_line_job_option_and_why(tmp_path, job, line, option, why):
    msg = refusal(tmp_path, BASE + job)
    assert msg.startswith(f"{tmp_path / 'job.fio'}: line {line}: job [j], option `{option}`: "), msg
    assert why in msg, msg


@pytest.mark.parametrize("text,why", [
    ("[a]\nsize=1m\ndirect=1\n[b]\nsize=1m\nfilename=/dev/sdb\ndirect=1\n", "files and the raw device"),
    ("[a]\nfilename=/dev/sda\ndirect=1\n[b]\nfilename=/dev/sdb\ndirect=1\n", "iosched simulates one disk"),
    ("[a]\ndirect=1\nrw=randread\n", "fio needs size="),
    ("[a]\nsize=1m\nrw=randread\n", "rand-read and rand-write run until the run ends"),
    ("[a]\nsize=1m\nrw=randrw\nruntime=1\ntime_based\n", "a buffered read/write mix"),
    ("[a]\nsize=1m\nthinktime=10\n", "a think time with buffered I/O"),
    ("[a]\nsize=1m\nrw=trim\n", "fio trims Linux block devices only"),
    ("[a]\nsize=1m\ndirect=1\nfilename=/d\n[b]\nsize=1m\ndirect=1\n[c]\nstonewall\nsize=1m\ndirect=1\n",
     "waits for 2 jobs that end by their size"),
    ("[a]\nsize=1m\ndirect=1\ncgroup=x\ncgroup_weight=200\n[b]\nsize=1m\ndirect=1\ncgroup=x\ncgroup_weight=300\n",
     "cgroup `x` has weight 200"),
    ("[global]\ninclude other.fio\n[a]\n", "include is not read"),
    ("rw=read\n[a]\n", "outside any [section]"),
    ("[global]\nrw=read\n", "no job section"),
    ("[a]\nsize=$mb_memory\n", "the machine fio runs on"),
])
def test_file_level_refusals(tmp_path, text, why):
    assert why in refusal(tmp_path, text)


def test_all_problems_are_reported_at_once(tmp_path):
    msg = refusal(tmp_path, BASE + "[j]\nverify=md5\nramp_time=3\nfoo\n")
    assert [ln.split(": ")[1] for ln in msg.splitlines()] == ["line 6", "line 7", "line 8"]


def test_the_cli_refuses_with_exit_2_and_no_traceback(tmp_path):
    p = job_file(tmp_path, BASE + "[j]\nverify=md5\n")
    for args in (["run", str(p)], ["import-fio", str(p)]):
        r = runner.invoke(app, args)
        assert r.exit_code == 2, r.output
        assert "Traceback" not in r.output and r.exception is None or isinstance(r.exception, SystemExit)
        assert f"error: {p}: line 6: job [j], option `verify=md5`: data verification" in r.stderr


# -- end to end ----------------------------------------------------------------------------------

def deskstar():
    return next(d for d in iosched.list_devices() if d["name"] == "ibm-deskstar-34gxp")


def test_example_randread_qd1_is_seek_plus_half_a_rotation():
    """4 KiB random reads at depth 1 over the whole Deskstar: each costs the average seek, half a
    rotation, the command overhead and a 4 KiB transfer (docs/fio.md)."""
    r = runner.invoke(app, ["run", str(REPO / "experiments/examples/deskstar-randread-qd1.fio"), "--json"])
    assert r.exit_code == 0, r.output
    run = json.loads(r.stdout)["runs"][0]
    d = deskstar()
    # 4 KiB at the outer zone's rate (0.19 ms; the inner zones' are 1.6x slower, within the tolerance).
    transfer_ms = 4096 / (d["media_rate_outer_mb_s"] * 1e6) * 1e3
    expected = d["seek_average_ms"] + d["revolution_ms"] / 2 + d["command_overhead_ms"] + transfer_ms
    assert run["response_ms"]["mean"] == pytest.approx(expected, rel=0.03)
    assert run["iops"] == pytest.approx(1000 / expected, rel=0.03)
    assert 29.9 < run["elapsed_s"] < 30.1


def test_example_seqread_runs_near_the_outer_zones_media_rate():
    r = runner.invoke(app, ["run", str(REPO / "experiments/examples/deskstar-seqread.fio"), "--json"])
    assert r.exit_code == 0, r.output
    run = json.loads(r.stdout)["runs"][0]
    d = deskstar()
    track_ms = d["revolution_ms"]
    # The media rate less a head switch per track (the first GiB lies in the outer zone).
    expected = d["media_rate_outer_mb_s"] * track_ms / (track_ms + d["head_switch_ms"])
    assert run["requests"] == 8192
    assert run["throughput_mb_s"] == pytest.approx(expected, rel=0.03)
    assert run["throughput_mb_s"] < d["media_rate_outer_mb_s"]


def test_import_fio_writes_a_scenario_that_runs_as_the_job_file_does(tmp_path):
    src = job_file(tmp_path, BASE + "[a]\nrw=randrw\nrwmixread=70\nnumber_ios=3000\n[b]\nrw=read\nrate_iops=20\nruntime=5\n")
    out = tmp_path / "out.toml"
    r = runner.invoke(app, ["import-fio", str(src), "-o", str(out), "--scheduler", "bfq", "--scheduler", "mq-deadline"])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "# [a] (line 5): /dev/sdb" in text and "# - " in text
    direct = runner.invoke(app, ["run", str(src), "--json"])
    via_toml = runner.invoke(app, ["run", str(out), "--json"])
    assert direct.exit_code == 0 and via_toml.exit_code == 0, direct.output + via_toml.output
    runs_toml = json.loads(via_toml.stdout)["runs"]
    assert [r["scheduler"] for r in runs_toml] == ["bfq", "mq-deadline"]
    # Same workload: the fio file under bfq equals the TOML's bfq run.
    conv = fio_job.read(src, schedulers=["bfq"])
    again = iosched.run(iosched.Scenario.from_dict(conv.scenario), records=True)
    assert again.summaries[0]["requests"] == runs_toml[0]["requests"]
    req = again.requests
    a = req[req["pid"] == 1]
    assert len(a) == 3000
    assert (a["op"] == "read").mean() == pytest.approx(0.7, abs=0.03)
    b = req[req["pid"] == 2]
    assert len(b) == pytest.approx(100, abs=2)  # 20 IOPS for 5 s


def test_python_api_runs_a_job_file():
    res = iosched.run(str(REPO / "experiments/examples/deskstar-seqread.fio"), records=False)
    assert res.summaries[0]["requests"] == 8192


def test_wait_for_and_a_buffered_stonewall_use_after(tmp_path):
    ps = processes(tmp_path, BASE + "[a]\nbs=1m\n[b]\nbs=1m\n[c]\nwait_for=a\n")
    assert "after" not in ps[1] and ps[2]["after"] == "a"
    tasks = convert(tmp_path, "[global]\nsize=8m\n[w]\nrw=write\n[r]\nstonewall\nrw=read\n").scenario["task"]
    assert (tasks[0]["command"], tasks[1]["command"], tasks[1]["after"]) == ("dd", "cat", "w")
    assert "the host's tasks cannot stop" in refusal(
        tmp_path, "[global]\nsize=8m\nruntime=2\ntime_based\n[w]\nrw=write\n[r]\nstonewall\nrw=read\n")


def test_the_run_is_capped_when_a_job_ends_by_its_size(tmp_path):
    conv = convert(tmp_path, BASE + "[a]\nruntime=5\ntime_based\n[b]\nbs=1m\n")
    assert conv.scenario["run"]["duration_s"] == 3600
    assert any(n.startswith("run.duration_s = 3600: a cap") for n in conv.notes)


def test_a_stonewalled_time_based_group_runs_after_the_first(tmp_path):
    conv = convert(tmp_path, BASE + "runtime=1\ntime_based\n[a]\nrw=randread\n[b]\nstonewall\nrw=read\nthinktime=5ms\n")
    req = iosched.run(iosched.Scenario.from_dict(conv.scenario), records=True).requests
    a, b = req[req["pid"] == 1], req[req["pid"] == 2]
    assert a["issue_ns"].max() < 1e9 <= b["issue_ns"].min() == 1e9
    assert b["issue_ns"].max() < 2e9
    # b thinks 5 ms after each completion: its issues are at least 5 ms apart.
    assert (b["issue_ns"].diff().dropna() >= 5e6).all()
