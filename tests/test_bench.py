"""`iosched bench` runs and reports every case (a smoke test of the command, not a timing)."""

import json

from typer.testing import CliRunner

from iosched.bench import CASES
from iosched.cli import app


def test_bench_json_reports_every_case():
    res = CliRunner().invoke(app, ["bench", "--scale", "0.002", "--repeats", "1", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    cases = {(r["case"], r["scheduler"]) for r in out["results"]}
    assert cases == {(case, sched) for case, _, _, scheds in CASES for sched in scheds}
    assert len(cases) == 18
    assert all(r["requests"] >= 1000 and r["requests_per_cpu_s"] > 0 for r in out["results"])


def test_bench_sched_scaling_reports_every_scheduler_and_size():
    from iosched.bench import SCALING_CASES, SCALING_PROCESSES

    res = CliRunner().invoke(app, ["bench", "--sched-scaling", "--scale", "0.005", "--repeats", "1", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["results"]
    assert len(rows) == len(SCALING_CASES) * len(SCALING_PROCESSES) == 32
    assert {r["processes"] for r in rows} == {10, 100, 1000, 10000}
    assert all(r["requests"] == 1000 and r["ns_per_request"] > 0 for r in rows)
    # max_budget = 8 sectors: every BFQ request is a service slot of its own.
    assert all(r["requests_per_slot"] == 1.0 for r in rows if r["setting"] == "max_budget=8")
