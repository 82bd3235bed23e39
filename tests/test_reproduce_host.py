"""`iosched reproduce host --quick` and the host's scenarios through the Python API."""

import json

from typer.testing import CliRunner

from iosched import _native
from iosched.cli import app


def test_host_quick(tmp_path):
    out = tmp_path / "host"
    res = CliRunner().invoke(app, ["reproduce", "host", "--quick", "--out", str(out)])
    assert res.exit_code == 0, res.output
    report = (out / "report.md").read_text()
    for section in ["Writeback: `dd` through the page cache", "Readahead: the window", "`find -exec cat` beside a streaming reader"]:
        assert section in report, section
    assert (out / "writeback.png").stat().st_size > 1000
    # The kernel's documented initial windows: every row agrees.
    assert "| NO |" not in report


def test_readahead_windows_binding():
    w = json.loads(_native.readahead_windows(128, 4, 3, 1 << 20))
    assert [(x["start"], x["pages"], x["kind"]) for x in w] == [(0, 8, "sync"), (8, 16, "async"), (24, 32, "async")]


def test_host_run_reports_tasks(tmp_path):
    from iosched import run

    scn = {
        "device": {"preset": "ibm-deskstar-34gxp"},
        "host": {"memory_mib": 64, "file": [{"path": "/f", "size_mib": 4}]},
        "task": [{"name": "c", "command": "cat", "path": "/f"}],
        "scheduler": [{"name": "clook"}],
    }
    res = run(scn)
    s = res.summaries[0]
    t = s["host"]["tasks"][0]
    assert t["name"] == "c" and t["bytes_read"] == 4 << 20 and t["data_pages_read"] == 1024


def test_bad_host_input_is_an_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[host]\nmemory_mib = 100\ndirty_background_ratio = 30\ndirty_ratio = 20\n'
                   '[[task]]\nname = "s"\ncommand = "sync"\n[[scheduler]]\nname = "clook"\n')
    res = CliRunner().invoke(app, ["run", str(bad)])
    assert res.exit_code != 0
    assert "dirty_background_ratio" in res.output and "Traceback" not in res.output


def test_host_reproduction_is_deterministic(tmp_path):
    """The same reproduction twice (and with one worker or two) gives the same report, apart
    from its wall time."""
    import re

    reports = []
    for out, jobs in [(tmp_path / "a", "1"), (tmp_path / "b", "2")]:
        res = CliRunner().invoke(app, ["reproduce", "host", "--quick", "--out", str(out), "--jobs", jobs])
        assert res.exit_code == 0, res.output
        reports.append(re.sub(r"runs in [0-9.]+ s", "runs in X s", (out / "report.md").read_text()))
    assert reports[0] == reports[1]
