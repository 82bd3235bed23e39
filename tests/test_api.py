import os
import pickle
from pathlib import Path

import numpy as np
import pandas as pd

import pytest

import iosched
from iosched import Scenario, ScenarioError

from conftest import SELTZER_Q10

REQUEST_COLUMNS = [
    "run", "scheduler", "req_id", "pid", "group", "op", "sync", "start_sector", "size_sectors",
    "bios", "issue_ns", "insert_ns", "dispatch_ns", "start_ns", "complete_ns", "seek_cylinders", "seek_ns", "rotation_ns",
    "transfer_ns", "cache_hit",
]


def test_default_scenario_round_trip():
    res = iosched.run(Scenario.default())
    assert len(res.summaries) == 3
    runs = res.runs
    assert len(runs) == 3
    for col in ["scheduler", "device", "throughput_mb_s", "iops", "utilization_busy",
                "utilization_transfer", "response_ms_mean", "response_ms_p50",
                "response_ms_p95", "response_ms_p99", "response_ms_max", "service_ms_mean"]:
        assert col in runs.columns
    procs = res.processes
    assert list(procs.columns[:2]) == ["run", "scheduler"]
    assert len(procs) == sum(len(s["processes"]) for s in res.summaries)
    req = res.requests
    assert list(req.columns) == REQUEST_COLUMNS
    assert len(req) == sum(s["requests"] for s in res.summaries)
    for i, s in enumerate(res.summaries):
        assert (req.run == i).sum() == s["requests"]
    assert isinstance(req.scheduler.dtype, pd.CategoricalDtype)
    assert list(req.scheduler.cat.categories) == [s["scheduler"] for s in res.summaries]
    assert isinstance(req.op.dtype, pd.CategoricalDtype)
    assert set(req.op.cat.categories) == {"read", "write", "flush", "discard"}
    assert (req.complete_ns >= req.dispatch_ns).all() and (req.dispatch_ns >= req.issue_ns).all()


def test_records_false_has_no_requests():
    res = iosched.run(Scenario.from_text(SELTZER_Q10), records=False)
    assert res.requests is None
    assert len(res.runs) == 2


def test_from_dict_and_replace():
    d = {
        "device": {"preset": "fujitsu-m2361a"},
        "workload": {"kind": "closed-queue", "queue_depth": 5, "requests": 200},
        "scheduler": [{"name": "gstf", "label": "gstf210", "group_cylinders": 210}],
    }
    scn = Scenario.from_dict(d)
    res = iosched.run(scn)
    assert res.summaries[0]["scheduler"] == "gstf210"
    assert res.summaries[0]["requests"] == 200
    more = scn.replace(workload={"requests": 300})
    assert more.to_dict()["workload"]["queue_depth"] == 5
    assert iosched.run(more).summaries[0]["requests"] == 300


def test_split_gives_same_results():
    scn = Scenario.from_text(SELTZER_Q10)
    whole = iosched.run(scn, records=False).summaries
    parts = [s for part in scn.split() for s in iosched.run(part, records=False).summaries]
    assert whole == parts


def test_progress_reports_every_run():
    scn = Scenario.from_text(SELTZER_Q10)
    calls = []
    iosched.run(scn, records=False, progress=calls.append)
    assert calls[-1].runs_done == calls[-1].runs_total == 2
    # Progress is made on first use (iosched/progress.py), still iosched.api.Progress.
    from iosched.api import Progress

    assert all(type(c) is Progress for c in calls) and iosched.api.Progress is Progress
    p = Progress(1, 2, 3, 0.5)
    assert pickle.loads(pickle.dumps(p)) == p and p.completed == 3
    assert repr(p) == "Progress(runs_done=1, runs_total=2, completed=3, simulated_s=0.5)"


def test_determinism():
    scn = Scenario.from_text(SELTZER_Q10)
    a = iosched.run(scn, seed=7).requests
    b = iosched.run(scn, seed=7).requests
    pd.testing.assert_frame_equal(a, b)
    c = iosched.run(scn, seed=8).requests
    assert not np.array_equal(a.start_sector.to_numpy(), c.start_sector.to_numpy())


def test_errors_name_source_and_field(tmp_path):
    with pytest.raises(ScenarioError, match=r"mine\.toml: field `workload\.queue_depth`"):
        Scenario.from_text('[workload]\nkind = "closed-queue"\nqueue_depth = "x"\n', "mine.toml")
    with pytest.raises(ScenarioError, match="no such file"):
        Scenario.from_file(tmp_path / "absent.toml")
    assert issubclass(ScenarioError, ValueError)


class _PathLike:
    def __init__(self, path: str):
        self.path = path

    def __fspath__(self) -> str:
        return self.path


def test_scenario_files_read_alike_by_str_or_path(tmp_path, monkeypatch):
    """A scenario file given as a str, a Path or another os.PathLike (read without pathlib):
    the source, name and messages show it as str(Path(...)) writes it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "q10.v2.toml").write_text(SELTZER_Q10.replace('name = "tiny-seltzer"\n', ""))
    for given in ("./d//q10.v2.toml", Path("./d//q10.v2.toml"), _PathLike("d/./q10.v2.toml")):
        for scn in (Scenario.from_file(given), iosched.api.as_scenario(given)):
            assert (scn.source, scn.name, scn.scheduler_count) == ("d/q10.v2.toml", "q10.v2", 2)
    with pytest.raises(ScenarioError, match=r"^d/absent\.toml: no such file$"):
        Scenario.from_file("d/./absent.toml")
    with pytest.raises(ScenarioError, match=r"^d: is a directory"):
        Scenario.from_file("d/")
    with pytest.raises(TypeError, match="path: expected a str or Path, got bytes"):
        Scenario.from_file(b"d/q10.v2.toml")
    with pytest.raises(TypeError, match="expected a Scenario, a path"):
        iosched.api.as_scenario(3)


def test_fio_job_files_are_named_by_their_path_whatever_path_like_names_them(tmp_path, monkeypatch):
    """A fio job file given as a Path, another os.PathLike or an os.DirEntry (whose str() is a
    repr) is found by its .fio name and named by its path; a job file without the suffix is
    still found by its content (a review found the fio branch naming path-likes by str())."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    job = "[global]\ndirect=1\nfilename=/dev/sdb\nsize=64m\n[j]\nrw=randread\nio_size=1m\n"
    (tmp_path / "d" / "c.fio").write_text(job)
    (tmp_path / "d" / "quoted.fio").write_text('[job]\ndescription="sequential read"\nrw=read\nsize=1m\n')
    entries = {e.name: e for e in os.scandir("d")}
    for given in (Path("d/c.fio"), _PathLike("d/./c.fio"), entries["c.fio"]):
        scn = Scenario.from_file(given)
        assert (scn.source, scn.name) == ("d/c.fio", "c"), given
    # Found by its .fio name although its content alone would not say so (a quoted value).
    for given in (Path("d/quoted.fio"), entries["quoted.fio"]):
        assert Scenario.from_file(given).source == "d/quoted.fio", given


def test_lists():
    scheds = iosched.list_schedulers()
    names = {s["name"] for s in scheds}
    assert {"fcfs", "sstf", "cscan", "sptf", "gstf", "wstf"} <= names
    gstf = next(s for s in scheds if s["name"] == "gstf")
    assert {t["name"] for t in gstf["tunables"]} >= {"group_cylinders", "frozen"}
    devices = iosched.list_devices()
    eagle = next(d for d in devices if d["name"] == "fujitsu-m2361a")
    assert eagle["cylinders"] == 840 and eagle["rpm"] == 3600


def test_flash_presets_are_listed_with_their_model_capacity():
    import iosched

    flash = {d["name"]: d for d in iosched.list_flash_devices()}
    assert set(flash) == {"samsung-870-evo-1tb", "samsung-970-evo-plus-1tb", "samsung-pm9a3-7.68tb"}
    ssd = flash["samsung-870-evo-1tb"]
    assert ssd["interface"] == "sata" and ssd["max_queue_depth"] == 32 and ssd["capacity_gb"] > 0
    assert ssd["dies"] == ssd["geometry"]["channels"] * ssd["geometry"]["dies_per_channel"]
    # The disks' list is unchanged (every entry a rotational drive).
    assert all("rpm" in d for d in iosched.list_devices())
