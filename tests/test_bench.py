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
    assert len(cases) == 16
    assert all(r["requests"] >= 1000 and r["requests_per_cpu_s"] > 0 for r in out["results"])
