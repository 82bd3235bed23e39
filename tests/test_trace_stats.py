"""`iosched trace stats|formats`, the Python trace API, `run --requests-parquet` and the trace
benchmarks' generators. The shared samples are read from ../shared/traces (never copied into the
repository); tests needing one skip when it is absent."""

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iosched.cli import app
from iosched.traces import TraceError, trace_formats, trace_stats

from conftest import REPO

runner = CliRunner()
from conftest import TRACES
# Counts by awk over the files; WebSearch's last line has no newline (its README's 24,782 is wc -l).
SAMPLES = {
    "mqsim_wsrch-small.trace": {"requests": 24_783, "reads": 24_779, "writes": 4, "bytes": 382_117_888},
    "mqsim_tpcc-small.trace": {"requests": 6_999, "reads": 4_381, "writes": 2_618, "bytes": 59_718_656},
}


def sample(name: str) -> Path:
    p = TRACES / name
    if not p.exists():
        pytest.skip(f"{p} not present")
    return p


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_stats_on_the_mqsim_samples_exact_counts(name):
    s = trace_stats(sample(name))
    for k, v in SAMPLES[name].items():
        assert s[k] == v, k
    assert (s["format"], s["compression"], s["skipped"], s["flushes"]) == ("mqsim", "none", 0, 0)
    assert s["duration_s"] > 0 and s["iops"] == pytest.approx(s["requests"] / s["duration_s"])
    assert sum(b["requests"] for b in s["size_sectors"]["histogram"]) == s["requests"]
    assert sum(b["requests"] for b in s["seek_sectors"]["histogram"]) == s["seek_sectors"]["seeks"]
    # MQSim names no process: one row, pid None; no completion times, so no latencies.
    assert [p["pid"] for p in s["processes"]] == [None] and s["processes"][0]["requests"] == s["requests"]
    assert s["queue_depth"] is None and s["q2c_ms"] is None


def test_gzip_reads_the_same(tmp_path):
    src = sample("mqsim_tpcc-small.trace")
    gz = tmp_path / "tpcc.trace.gz"
    gz.write_bytes(gzip.compress(src.read_bytes()))
    a, b = trace_stats(src), trace_stats(gz)
    assert b["compression"] == "gzip"
    for k in ("requests", "reads", "bytes", "size_sectors", "seek_sectors", "interarrival_ms", "sequentiality"):
        assert a[k] == b[k], k


def test_cli_json_keys_and_progress_callback():
    path = sample("mqsim_wsrch-small.trace")
    r = runner.invoke(app, ["trace", "stats", str(path), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert {"requests", "reads", "writes", "bytes", "duration_s", "size_sectors", "interarrival_ms", "sequentiality",
            "seek_sectors", "processes", "queue_depth", "q2c_ms", "d2c_ms", "out_of_order", "skipped"} <= set(doc)
    assert doc["requests"] == 24_783
    calls = []
    trace_stats(path, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1] == path.stat().st_size


def test_cli_tables_and_plots(tmp_path):
    path = sample("mqsim_tpcc-small.trace")
    r = runner.invoke(app, ["trace", "stats", str(path), "--plot", str(tmp_path / "plots"), "--top", "3"])
    assert r.exit_code == 0, r.output
    assert "6,999" in r.stdout and "request sizes" in r.stdout and "seek distances" in r.stdout
    for name in ("sizes.png", "interarrival_cdf.png", "seeks.png"):
        f = tmp_path / "plots" / name
        assert f.exists() and f.stat().st_size > 1000, name
    # Issue 23: an MQSim trace has no completion times and names no process: an empty
    # queue_depth.png and a one-bar, unlabelled processes.png were written; now neither is, and
    # a line on stderr says why.
    for name in ("queue_depth.png", "processes.png"):
        assert not (tmp_path / "plots" / name).exists(), name
    assert "queue_depth.png not written" in r.stderr and "no completion times" in r.stderr
    assert "processes.png not written" in r.stderr and "names no processes" in r.stderr


def test_trace_plots_with_completion_times_and_processes(tmp_path):
    """A blkparse trace has completion times (queue_depth.png) but one process (no
    processes.png); the S suite's start-up trace names two (processes.png)."""
    r = runner.invoke(app, ["trace", "stats", str(sample("takeoverjp_sample.blkparse.txt")), "--plot", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "a" / "queue_depth.png").stat().st_size > 1000
    assert not (tmp_path / "a" / "processes.png").exists() and "one process" in r.stderr
    r = runner.invoke(app, ["trace", "stats", str(sample("s_startup_xterm.trace")), "--plot", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "b" / "processes.png").stat().st_size > 1000


def test_malformed_trace_exit_2_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.trace"
    bad.write_text("1000 0 8 8 1\n2000 0 x 8 1\n3000 0 16 8 0\n")
    r = runner.invoke(app, ["trace", "stats", str(bad), "--format", "mqsim"])
    assert r.exit_code == 2
    assert r.stderr.startswith(f"error: {bad}:2: ") and len(r.stderr.strip().splitlines()) == 1
    with pytest.raises(TraceError, match=r"bad.trace:2: start block"):
        trace_stats(bad, format="mqsim")
    r = runner.invoke(app, ["trace", "stats", str(bad), "--format", "mqsim", "--skip-bad", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert (doc["requests"], doc["skipped"], doc["writes"]) == (2, 1, 1)
    assert doc["skipped_examples"][0].startswith(f"{bad}:2:")


def test_cli_errors_are_one_line(tmp_path):
    r = runner.invoke(app, ["trace", "stats", str(tmp_path / "missing.trace")])
    assert r.exit_code == 2 and r.stderr.startswith("error: ") and "missing.trace" in r.stderr
    (tmp_path / "x.trace").write_text("1 0 8 8 1\n")
    r = runner.invoke(app, ["trace", "stats", str(tmp_path / "x.trace"), "--format", "nope"])
    assert r.exit_code == 2 and "unknown trace format `nope`" in r.stderr


def test_formats():
    assert "mqsim" in trace_formats() and "blktrace" in trace_formats()
    r = runner.invoke(app, ["trace", "formats", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout) == trace_formats()
    r = runner.invoke(app, ["trace", "formats"])
    assert r.exit_code == 0 and "disksim-validate" in r.stdout


def test_requests_parquet_equals_csv(tmp_path):
    import pandas as pd

    import iosched
    from conftest import SELTZER_Q10

    csv, pq = tmp_path / "req.csv", tmp_path / "req.parquet"
    r = runner.invoke(app, ["run", "--requests-csv", str(csv), "--requests-parquet", str(pq)])
    assert r.exit_code == 0, r.output
    a, b = pd.read_csv(csv), pd.read_parquet(pq)
    assert list(a.columns) == list(b.columns) and len(a) == len(b) > 0
    for col in a.columns:
        assert (a[col].astype(str).values == b[col].astype(str).values).all(), col
    # Parquet alone: the temporary CSV beside it is removed; the API takes the same option.
    pq2 = tmp_path / "api.parquet"
    res = iosched.run(SELTZER_Q10, records=True, requests_parquet=pq2)
    assert res.requests_parquet == str(pq2) and sorted(p.name for p in tmp_path.iterdir()) == ["api.parquet", "req.csv",
                                                                                                "req.parquet"]
    c = pd.read_parquet(pq2)
    assert len(c) == len(res.requests) == 1000
    assert (c["complete_ns"].values == res.requests["complete_ns"].values).all()


def test_generated_traces_read_where_readers_exist(tmp_path):
    from iosched import _native
    from iosched.trace_gen import FORMATS, write_mqsim_bytes, write_trace

    for fmt in ("mqsim", "disksim-ascii", "disksim-validate"):
        p = write_trace(fmt, tmp_path / FORMATS[fmt], 1000)
        assert _native.trace_count(str(p), fmt)[0] == 1000
        assert trace_stats(p)["format"] == fmt
    # The same seed gives the same file.
    a = write_trace("msr", tmp_path / "a.csv", 100).read_bytes()
    assert a == write_trace("msr", tmp_path / "b.csv", 100).read_bytes()
    n = write_mqsim_bytes(tmp_path / "m.trace", 3_000_000)
    assert trace_stats(tmp_path / "m.trace")["requests"] == n


def test_reader_bench_reads_every_format_whole():
    from iosched.trace_bench import run_reader_bench

    rows = {r.format: r.as_dict() for r in run_reader_bench(2000, repeats=1)}
    assert rows["mqsim"]["records"] == 2000
    assert rows["mqsim + trace stats"]["records"] == 2000
    # Every reader now exists: each reads back every generated request.
    assert all(r["records"] == 2000 and r["records_per_s"] > 0 for r in rows.values()), rows


def test_an_exception_in_the_progress_callback_stops_the_reading():
    path = sample("mqsim_tpcc-small.trace")

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        trace_stats(path, progress=stop)
