"""What a new user meets first (issue 9): the package works from any directory, starts quickly,
takes scenarios in every form the API promises, and answers bad input with one clear line.
Each test names the case it guards."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import iosched
from iosched.cli import app

from conftest import SELTZER_Q10

runner = CliRunner()
CLI = [sys.executable, "-m", "iosched.cli"]


def _error_line(args, **kw) -> str:
    r = runner.invoke(app, args, **kw)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


# -- packaging and start-up ------------------------------------------------------------------

def test_catalogues_are_package_data():
    from iosched.catalogues import catalogue_dir

    assert (catalogue_dir("seltzer1990") / "catalogue.toml").is_file()
    assert (catalogue_dir("iyer2001") / "andrew.toml").is_file()
    # Inside site-packages (or python/ in an editable install), not a path into a checkout's experiments/.
    assert "experiments" not in catalogue_dir("iyer2001").parts[-3:]


def test_real_mode_runs_from_the_package(tmp_path):
    """`iosched mount` needs no separately built binary: the extension runs real mode."""
    r = subprocess.run([sys.executable, "-m", "iosched._fuse", "--help"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "iosched-fuse mount BACKING_DIR MOUNTPOINT" in r.stdout


def test_version_and_help_import_neither_pandas_nor_matplotlib(tmp_path):
    probe = ("import sys, runpy; sys.argv = ['iosched', '--version']\n"
             "try:\n    runpy.run_module('iosched.cli', run_name='__main__')\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in ('pandas', 'matplotlib', 'numpy') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines() == [f"iosched {iosched.__version__}", "[]"]


def test_a_run_without_tables_or_plots_imports_no_pandas(tmp_path):
    probe = ("import sys, iosched; r = iosched.run(iosched.Scenario.default(), records=False)\n"
             "print(len(r.summaries), 'pandas' in sys.modules, 'matplotlib' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert r.stdout.split() == ["3", "False", "False"], r.stderr


# -- the API takes what it promises ----------------------------------------------------------

def test_run_takes_a_path_text_dict_or_scenario(tmp_path):
    path = tmp_path / "q.toml"
    path.write_text(SELTZER_Q10)
    scn = iosched.Scenario.from_text(SELTZER_Q10)
    want = iosched.run(scn, records=False).summaries
    for given in (str(path), path, SELTZER_Q10, scn.to_dict()):
        assert iosched.run(given, records=False).summaries == want


def test_run_names_the_argument_it_cannot_use():
    with pytest.raises(TypeError, match="scenario: expected a Scenario, a path"):
        iosched.run(42)
    with pytest.raises(ValueError, match=r"seed: must be in \[0, 2\*\*63\) .*, got -1"):
        iosched.run(SELTZER_Q10, seed=-1)
    with pytest.raises(TypeError, match="seed: expected an integer"):
        iosched.run(SELTZER_Q10, seed=1.5)
    with pytest.raises(iosched.ScenarioError, match="nosuch.toml: no such file"):
        iosched.run("nosuch.toml")


def test_numpy_values_in_dicts():
    d = iosched.Scenario.from_text(SELTZER_Q10).to_dict()
    d["workload"]["queue_depth"] = np.int64(10)
    d["workload"]["request_kib"] = np.float32(4.0)
    d["run"] = {"seed": np.uint64(3)}
    base = iosched.Scenario.from_text(SELTZER_Q10 + "[run]\nseed = 3\n")
    assert iosched.run(d, records=False).summaries == iosched.run(base, records=False).summaries


def test_unusable_dict_values_name_their_field():
    d = iosched.Scenario.from_text(SELTZER_Q10).to_dict()
    d["workload"]["queue_depth"] = None
    with pytest.raises(iosched.ScenarioError, match="field `workload.queue_depth` is None"):
        iosched.Scenario.from_dict(d)
    d["workload"]["queue_depth"] = object()
    with pytest.raises(iosched.ScenarioError, match="field `workload.queue_depth`: object"):
        iosched.Scenario.from_dict(d)


def test_lone_surrogate_is_a_scenario_error():
    with pytest.raises(iosched.ScenarioError, match="lone surrogate U\\+D800 at line 1"):
        iosched.Scenario.from_text('name = "\ud800"\n')
    with pytest.raises(iosched.ScenarioError, match="lone surrogate"):
        iosched.Scenario.from_dict({"name": "\udcff", "workload": {"kind": "closed-queue"}})


def test_records_stream_to_csv_and_match_the_in_memory_table(tmp_path):
    csv = tmp_path / "r.csv"
    streamed = iosched.run(SELTZER_Q10, records=False, requests_csv=csv)
    assert streamed.requests is None and streamed.requests_csv == str(csv)
    kept = iosched.run(SELTZER_Q10).requests
    import pandas as pd

    got = pd.read_csv(csv)
    assert len(got) == len(kept)
    for col in ["run", "req_id", "start_sector", "issue_ns", "complete_ns"]:
        assert (got[col].to_numpy() == kept[col].to_numpy()).all(), col
    assert list(got.scheduler.unique()) == ["fcfs", "stf"]


def test_response_cdf_comes_from_the_histograms():
    r = iosched.run(SELTZER_Q10, records=True)
    cdf = r.response_cdf()
    req = r.requests
    for run, g in cdf.groupby("run"):
        exact = np.sort((req[req.run == run].complete_ns - req[req.run == run].issue_ns).to_numpy()) / 1e6
        median = g[g["quantile"] == 0.5].response_ms.iloc[0]
        nearest = exact[int(np.ceil(0.5 * len(exact))) - 1]
        assert abs(median - nearest) <= nearest / 2048 + 1e-9
        assert g.response_ms.iloc[-1] == pytest.approx(exact[-1])


# -- bad input: one line, the value, exit 2, nothing lost ------------------------------------

def test_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + SELTZER_Q10.encode())
    r = runner.invoke(app, ["run", str(path), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["scenario"] == "tiny-seltzer"


@pytest.mark.parametrize("option", ["--requests-csv", "--plot"])
def test_unwritable_output_fails_before_the_run(tmp_path, option):
    target = tmp_path / "missing-dir" / "x.csv" if option == "--requests-csv" else tmp_path / "file"
    if option == "--plot":
        target.write_text("a file, not a directory")
    path = tmp_path / "q.toml"
    path.write_text(SELTZER_Q10.replace("requests = 500", "requests = 100000000"))
    line = _error_line(["run", str(path), option, str(target)])  # would take minutes if it ran first
    assert option in line and str(target) in line


def test_unwritable_reproduce_out_fails_before_running(tmp_path):
    blocker = tmp_path / "f"
    blocker.write_text("x")
    line = _error_line(["reproduce", "seltzer1990", "--quick", "--out", str(blocker / "sub")])
    assert "--out" in line and str(blocker / "sub") in line


def test_duplicate_labels_and_names(tmp_path):
    path = tmp_path / "dup.toml"
    path.write_text('[workload]\nkind = "closed-queue"\n[[scheduler]]\nname = "fcfs"\n[[scheduler]]\nname = "fcfs"\n')
    assert "label `fcfs` is already used by scheduler[0]" in _error_line(["run", str(path)])


def test_validate_with_neither_file_nor_preset(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("")
    line = _error_line(["validate", "nosuch-preset", str(trace)])
    assert line.startswith("error: nosuch-preset: no such file, and not a device preset (known presets: ")


def test_poisson_honours_a_given_duration(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('[workload]\nkind = "poisson"\nrate_iops = 40\nrequests = 1000000\n[run]\nduration_s = 2\n')
    r = runner.invoke(app, ["run", str(path), "--json"])
    assert r.exit_code == 0, r.output
    run = json.loads(r.stdout)["runs"][0]
    # About 40 IOPS for 2 s (the disk keeps up, so the run ends soon after the last arrival).
    assert 50 <= run["requests"] <= 110 and run["elapsed_s"] < 2.5, run


def test_list_json():
    for what, key in [("schedulers", "tunables"), ("devices", "rpm")]:
        r = runner.invoke(app, ["list", what, "--json"])
        assert r.exit_code == 0, r.output
        items = json.loads(r.stdout)
        assert items and all(key in x for x in items)


def test_run_plot_draws_cdfs_and_throughput(tmp_path):
    path = tmp_path / "q.toml"
    path.write_text(SELTZER_Q10)
    r = runner.invoke(app, ["run", str(path), "--plot", str(tmp_path / "plots")])
    assert r.exit_code == 0, r.output
    for name in ["response_cdf.png", "throughput.png"]:
        data = (tmp_path / "plots" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_ctrl_c_prints_what_the_run_has(tmp_path):
    """SIGINT to a long run: the partial summary is printed, exit status 130, no traceback."""
    import signal
    import time

    path = tmp_path / "long.toml"
    path.write_text(SELTZER_Q10.replace("requests = 500", "requests = 1000000000"))
    p = subprocess.Popen([*CLI, "run", str(path), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    time.sleep(2.0)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    run = json.loads(out)["runs"][0]
    assert run["stopped"].startswith("cancelled at") and 0 < run["requests"] < 1_000_000_000


def test_ctrl_c_while_the_drive_is_aged_stops_at_once(tmp_path):
    """SIGINT while an aged flash drive is prepared (the PM9A3 preset: seconds of random
    overwrites before the first request): the aging stops, exit status 130, the message says no
    run started, the JSON has no run, no traceback."""
    import signal
    import time

    path = tmp_path / "aged.toml"
    path.write_text('[device]\npreset = "samsung-pm9a3-7.68tb"\n[workload]\nkind = "closed-queue"\n'
                    'queue_depth = 32\nrequests = 1000\nrequest_kib = 4\nread_fraction = 0.5\n'
                    '[[scheduler]]\nname = "noop"\n')
    p = subprocess.Popen([*CLI, "run", str(path), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    time.sleep(1.0)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    stopped_after_s = time.monotonic() - sent
    assert p.returncode == 130, err
    assert "Traceback" not in err and "interrupted before any run started (while preparing the drive)" in err, err
    assert json.loads(out)["runs"] == []
    assert stopped_after_s < 3.0, f"aging went on {stopped_after_s:.1f} s after the interrupt"


def test_special_files_are_refused_not_read(tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    for path, why in [("/dev/zero", "not a regular file"), (str(fifo), "not a regular file"), (str(tmp_path), "is a directory")]:
        line = _error_line(["run", path])
        assert path in line and why in line, line
