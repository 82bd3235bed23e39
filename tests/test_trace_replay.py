"""Trace replay from the CLI and the Python API, `iosched advise`, `iosched validate --scheduler`.
The samples are read from ../shared/traces (never copied into the repository)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import iosched

from conftest import TRACES
WSRCH = TRACES / "mqsim_wsrch-small.trace"
needs_traces = pytest.mark.skipif(not WSRCH.exists(), reason=f"{WSRCH} not present")


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "iosched.cli", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def small_trace(tmp_path, lines):
    p = tmp_path / "t.trace"
    p.write_text("".join(f"{l}\n" for l in lines))
    return p


def test_replay_api_modes_on_a_small_trace(tmp_path):
    # MQSim format: time_ns device sector size type(1 read).
    p = small_trace(tmp_path, [f"{i * 1_000_000} {i % 2} {i * 1000} 8 1" for i in range(50)])
    for mode in ["open", "closed", "dependent"]:
        res = iosched.replay(p, ["noop", "sptf"], device="ibm-deskstar-34gxp", replay=mode)
        runs = res.runs
        assert list(runs["requests"]) == [50, 50], mode
    open_ = iosched.replay(p, ["noop"], device="ibm-deskstar-34gxp")
    half = iosched.replay(p, ["noop"], device="ibm-deskstar-34gxp", time_scale=0.5)
    # Half the time scale compresses the arrivals: the run cannot take longer.
    assert half.runs["elapsed_s"][0] <= open_.runs["elapsed_s"][0]


def test_trace_workload_errors_name_the_field_and_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[workload]\nkind = "trace"\ntrace = "nope.trace"\n')
    r = cli("run", bad)
    assert r.returncode == 2
    assert "workload.trace" in r.stderr and "nope.trace: cannot read the trace: no such file" in r.stderr, r.stderr
    p = small_trace(tmp_path, ["0 0 0 8 1", "1000 0 x 8 1"])
    sc = tmp_path / "s.toml"
    sc.write_text(f'[workload]\nkind = "trace"\ntrace = "{p.name}"\nformat = "mqsim"\n')
    r = cli("run", sc)
    assert r.returncode == 2
    assert f"{p}:2: start block: expected a non-negative integer: `x`" in r.stderr, r.stderr
    sc.write_text(f'[workload]\nkind = "trace"\ntrace = "{p.name}"\nformat = "mqsim"\nskip_bad = true\n')
    r = cli("run", sc, "--json")
    assert r.returncode == 0, r.stderr
    counts = json.loads(r.stdout)["runs"][0]["trace_replay"]
    assert (counts["replayed"], counts["skipped_bad"]) == (1, 1)
    sc.write_text('[workload]\nkind = "closed-queue"\ntrace = "x"\n')
    r = cli("run", sc)
    assert r.returncode == 2 and "field `workload.trace`: applies to kind = \"trace\" only" in r.stderr, r.stderr


@needs_traces
def test_advise_ranks_every_candidate_and_writes_a_report(tmp_path):
    r = cli("advise", WSRCH, "--candidates", "noop,sptf,clook,cfq", "--objective", "mean", "--json", "--out", tmp_path / "adv", "-j", "1")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["characterisation"]["requests"] == 24_783
    assert d["characterisation"]["streams"] == 6
    ranked = [x["candidate"] for x in d["ranking"]]
    assert sorted(ranked) == ["cfq", "clook", "noop", "sptf"]
    means = [x["response_ms_mean"] for x in d["ranking"]]
    assert means == sorted(means), "ranked by mean response time"
    assert (tmp_path / "adv" / "report.md").exists() and (tmp_path / "adv" / "ranking.csv").exists()


def test_advise_default_candidates_write_the_whole_ranking(tmp_path):
    # The default candidates include `adaptive`, whose row alone has a `note`: the CSV's header
    # must be every row's keys (issue 23: it was the first row's, and the write stopped part-way).
    p = small_trace(tmp_path, [f"{i * 2_000_000} 0 {(i * 7919) % 100000 * 8} 8 1" for i in range(200)])
    r = cli("advise", p, "--out", tmp_path / "adv", "-j", "1")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    import csv

    with (tmp_path / "adv" / "ranking.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    names = [row["candidate"] for row in rows]
    assert "adaptive (Seelam's rule)" in names and len(names) == len(set(names)) > 5
    assert "note" in rows[0] and any(row["note"] for row in rows)
    assert not (tmp_path / "adv" / "ranking.csv.part").exists()


def test_advise_bad_options_exit_2(tmp_path):
    p = small_trace(tmp_path, ["0 0 0 8 1"])
    r = cli("advise", p, "--objective", "speed")
    assert r.returncode == 2 and "--objective: unknown objective `speed`" in r.stderr
    r = cli("advise", p, "--weights", "speed=1")
    assert r.returncode == 2 and "--weights" in r.stderr
    r = cli("advise", p, "--candidates", "nope")
    assert r.returncode == 2 and "unknown scheduler `nope`" in r.stderr
    r = cli("advise", tmp_path / "missing.trace")
    assert r.returncode == 2 and "no such file" in r.stderr


def test_validate_scheduler_option(tmp_path):
    # A validate trace: one request at a time, so a work-conserving scheduler changes nothing.
    p = tmp_path / "v.trace"
    p.write_text("R Miss 1000 8 5000 1000\nR Miss 900000 8 9000 1000\nR Miss 2000 16 6000 0\n")
    out = {}
    for s in ["fcfs", "clook"]:
        r = cli("validate", "ibm-deskstar-34gxp", p, "--scheduler", s, "--json")
        assert r.returncode == 0, r.stderr
        out[s] = json.loads(r.stdout)
        assert out[s]["scheduler"] == s
    assert out["fcfs"]["simulated_mean_ms"] == out["clook"]["simulated_mean_ms"]
    r = cli("validate", "ibm-deskstar-34gxp", p, "--scheduler", "nope")
    assert r.returncode == 2 and "unknown scheduler `nope`" in r.stderr


def test_a_simulated_run_converts_to_a_fio_log_and_blkparse(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text('[workload]\nkind = "closed-queue"\nqueue_depth = 8\nrequests = 300\nread_fraction = 0.7\n'
                  '[[scheduler]]\nname = "sptf"\n[[scheduler]]\nname = "fcfs"\n')
    csv = tmp_path / "req.csv"
    r = cli("run", sc, "--requests-csv", csv)
    assert r.returncode == 0, r.stderr
    log = tmp_path / "run.iolog"
    r = cli("trace", "convert", csv, log, "--to", "fio-v3", "--device", "1", "--fio-file", "/dev/sdb")
    assert r.returncode == 0, r.stderr
    assert "300 requests written" in r.stdout and "300 of other devices" in r.stdout, r.stdout
    lines = log.read_text().splitlines()
    assert lines[0] == "fio version 3 iolog" and lines[1] == "0 /dev/sdb add"
    ios = [l.split() for l in lines if l.split()[2] in ("read", "write")]
    assert len(ios) == 300
    stamps = [int(x[0]) for x in ios]
    assert stamps == sorted(stamps), "in issue order (the table is in completion order)"
    s = iosched.trace_stats(log)
    assert s["requests"] == 300 and s["reads"] + s["writes"] == 300
    txt = tmp_path / "run.txt"
    r = cli("trace", "convert", csv, txt, "--to", "blkparse", "--device", "0")
    assert r.returncode == 0, r.stderr
    s = iosched.trace_stats(txt)
    assert s["requests"] == 300
    r = cli("trace", "convert", csv, tmp_path / "x", "--to", "pdf")
    assert r.returncode == 2 and "--to: unknown output format `pdf`" in r.stderr
    assert not (tmp_path / "x").exists() and not list(tmp_path.glob("x*.part"))
    # Issue 23: a table of two runs was merged into one log when no run was chosen. Now it is
    # refused with the runs listed, and a run is chosen by its scheduler's label.
    r = cli("trace", "convert", csv, tmp_path / "both.iolog", "--to", "fio-v3")
    assert r.returncode == 2, r.stdout
    assert "the table holds 2 runs: choose one with --scheduler LABEL: `sptf` (run 0, 300 requests), `fcfs` (run 1, 300 requests)" in r.stderr, r.stderr
    assert not (tmp_path / "both.iolog").exists()
    by_label = tmp_path / "fcfs.iolog"
    r = cli("trace", "convert", csv, by_label, "--to", "fio-v3", "--scheduler", "fcfs", "--fio-file", "/dev/sdb")
    assert r.returncode == 0, r.stderr
    assert by_label.read_text() == log.read_text(), "--scheduler fcfs is run 1"
    r = cli("trace", "convert", csv, tmp_path / "y", "--to", "fio-v3", "--scheduler", "cfq")
    assert r.returncode == 2 and "--scheduler cfq: no run of that scheduler" in r.stderr, r.stderr


@needs_traces
def test_reproduce_traces_quick_is_deterministic_across_pools(tmp_path):
    for jobs, out in [("1", tmp_path / "a"), ("2", tmp_path / "b")]:
        r = cli("reproduce", "traces", "--quick", "--out", out, "--traces", TRACES, "-j", jobs)
        assert r.returncode == 0, r.stderr
    a = (tmp_path / "a" / "report.md").read_text().splitlines()
    b = (tmp_path / "b" / "report.md").read_text().splitlines()
    # Identical apart from the wall time on the second line.
    assert a[0] == b[0] and a[2:] == b[2:]
    assert "## websearch" in "\n".join(a) and "## tpcc" in "\n".join(a)
    assert "iosched advise" in "\n".join(a)
    r = cli("reproduce", "traces", "--traces", tmp_path / "nope")
    assert r.returncode == 2 and "not a directory" in r.stderr
