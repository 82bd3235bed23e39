"""`iosched sweep`: a grid x seeds in a pool; the tables do not depend on the pool (one process,
two processes, a local Dask cluster); the summary's confidence interval is Student's t."""

import math

import pandas as pd
import pytest
from typer.testing import CliRunner

from iosched import sweep as sw
from iosched.cli import app

runner = CliRunner()

BASE = """
name = "q-sweep"
[device]
preset = "fujitsu-m2361a"
[workload]
kind = "closed-queue"
queue_depth = 10
requests = 1500
[[scheduler]]
name = "clook"
[[scheduler]]
name = "sptf"
"""


def _sweep(tmp_path, name, *extra):
    scn = tmp_path / "base.toml"
    scn.write_text(BASE)
    out = tmp_path / name
    r = runner.invoke(app, ["--quiet", "sweep", str(scn), "--set", "workload.queue_depth=1,10,100", "--seeds", "3",
                            "--out", str(out), *extra])
    assert r.exit_code == 0, r.output
    return out


def test_tables_do_not_depend_on_the_pool(tmp_path):
    one = _sweep(tmp_path, "one", "--jobs", "1")
    two = _sweep(tmp_path, "two", "--jobs", "2")
    for name in ["runs.csv", "summary.csv"]:
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    runs = pd.read_parquet(one / "runs.parquet")
    assert len(runs) == 3 * 3 * 2  # points x seeds x schedulers
    assert sorted(runs.seed.unique()) == [1, 2, 3]
    assert (runs.groupby(["param:workload.queue_depth", "scheduler"]).size() == 3).all()
    # Seeds differ, so the runs of one point differ.
    assert runs.groupby(["param:workload.queue_depth", "scheduler"]).response_ms_mean.nunique().min() > 1
    assert (one / "throughput_mb_s.png").read_bytes()[:4] == b"\x89PNG"


def test_a_local_dask_cluster_gives_the_same_tables(tmp_path):
    pytest.importorskip("dask.distributed")
    one = _sweep(tmp_path, "one", "--jobs", "1")
    dask = _sweep(tmp_path, "dask", "--jobs", "2", "--dask", "local")
    for name in ["runs.csv", "summary.csv"]:
        assert (one / name).read_bytes() == (dask / name).read_bytes(), name


def test_summary_is_mean_and_student_t_interval():
    df = pd.DataFrame({"param:x": [1, 1, 1, 2], "scheduler": ["a"] * 4, "seed": [1, 2, 3, 1],
                       "throughput_mb_s": [1.0, 2.0, 3.0, 5.0]})
    s = sw.summarize(df, [sw.Parameter("x", (1, 2))]).set_index("param:x")
    row = s.loc[1]
    assert row["n"] == 3 and row["mean"] == 2.0 and row["std"] == 1.0
    assert row["ci95_half_width"] == pytest.approx(4.303 / math.sqrt(3))
    assert s.loc[2]["n"] == 1 and math.isnan(s.loc[2]["ci95_half_width"])


def test_t_quantiles():
    assert sw.t975(1) == 12.706 and sw.t975(30) == 2.042 and sw.t975(45) == 2.021 and sw.t975(10**6) == 1.96


@pytest.mark.parametrize("bad, message", [
    ("workload.queue_depth", "expected PATH=VALUE"),
    ("workload.queue_depth=", "empty value"),
    ("workload.queue_depth=1,1", "a value is given twice"),
    ("process[0].think_us=5", "the scenario has no array `process`"),
    ("scheduler[5].name=fcfs", "`scheduler` has 2 entries, no [5]"),
    ("workload.queue_depth=0", "workload.queue_depth=0"),
    ("workload..x=1", "is not a field path"),
])
def test_bad_sets_are_one_line_errors(tmp_path, bad, message):
    scn = tmp_path / "base.toml"
    scn.write_text(BASE)
    r = runner.invoke(app, ["sweep", str(scn), "--set", bad, "--out", str(tmp_path / "o")])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr


def test_unknown_plot_metric(tmp_path):
    scn = tmp_path / "base.toml"
    scn.write_text(BASE)
    r = runner.invoke(app, ["sweep", str(scn), "--set", "workload.queue_depth=1,2", "--plot", "nope", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "--plot: unknown metric `nope`" in r.stderr


def test_a_swept_seed_is_the_seed_the_run_uses(tmp_path):
    # Issue 23: `--set run.seed=5,6` wrote 5 and 6 in the table and ran seed 1 twice.
    scn = tmp_path / "base.toml"
    scn.write_text(BASE)
    out = tmp_path / "seeds"
    r = runner.invoke(app, ["--quiet", "sweep", str(scn), "--set", "run.seed=5,6", "--seeds", "2", "--out", str(out), "-j", "1"])
    assert r.exit_code == 0, r.output
    runs = pd.read_csv(out / "runs.csv")
    assert sorted(runs[runs["param:run.seed"] == 5].seed.unique()) == [5, 6]
    assert sorted(runs[runs["param:run.seed"] == 6].seed.unique()) == [6, 7]
    sptf = runs[runs.scheduler == "sptf"].set_index(["param:run.seed", "seed"]).response_ms_mean
    assert sptf[(5, 5)] != sptf[(5, 6)]
    # The same seed is the same run, whichever point it came from.
    assert sptf[(5, 6)] == sptf[(6, 6)]


def test_seeds_stop_where_a_scenario_file_can_hold_them(tmp_path):
    scn = tmp_path / "big.toml"
    scn.write_text(BASE + "[run]\nseed = 9223372036854775807\n")
    r = runner.invoke(app, ["sweep", str(scn), "--seeds", "2", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "would pass 2**63 - 1" in r.output, r.output
    scn.write_text(BASE + "[run]\nseed = 18446744073709551615\n")
    r = runner.invoke(app, ["run", str(scn)])
    assert r.exit_code == 2 and "beyond TOML's integers (at most 9223372036854775807) (line" in r.output, r.output
    r = runner.invoke(app, ["run", str(tmp_path / "big.toml"), "--seed", str(2**63)])
    assert r.exit_code == 2 and "Traceback" not in r.output
