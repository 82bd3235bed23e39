"""Issue 23, naming: one word for a process's name across the CLI, the DataFrames, CSV and JSON;
a wrapper labelled the same way everywhere; `dir(iosched)` without repeats and `iosched.replay`
always the function; errors in words ("a number"), tunables with their units."""

import csv
import io
import json
import subprocess
import sys

from typer.testing import CliRunner

import iosched
from iosched.cli import app

runner = CliRunner()


def test_a_process_is_called_name_everywhere():
    res = iosched.run(iosched.Scenario.default(), records=False)
    assert "name" in res.processes.columns and "process" not in res.processes.columns
    assert all("name" in p for s in res.summaries for p in s["processes"])
    r = runner.invoke(app, ["run"], env={"COLUMNS": "200"})
    header = next(line for line in r.stdout.splitlines() if "requests" in line and "┃" in line)
    assert [c.strip() for c in header.strip("┃").split("┃")][:2] == ["scheduler", "name"]  # was `process`
    r = runner.invoke(app, ["run", "--format", "csv"])
    procs = r.stdout.split("# processes\n")[1]
    assert next(csv.reader(io.StringIO(procs)))[:4] == ["run", "scheduler", "pid", "name"]


def test_a_wrapper_is_labelled_with_its_policy():
    scn = iosched.Scenario.from_text('[[process]]\nrequests = 5\n[[scheduler]]\nname = "anticipatory"\n'
                                     '[[scheduler]]\nname = "as"\npolicy = "clook"\n')
    assert [s["scheduler"] for s in iosched.run(scn).summaries] == ["anticipatory(aged-sptf)", "anticipatory(clook)"]


def test_dir_lists_each_name_once_and_replay_stays_the_function():
    code = ("import iosched, iosched.cli; iosched.run; iosched.replay; from iosched.trace_replay import trace_scenario; "
            "import iosched.experiments.traces; names = dir(iosched); "
            "print(len(names) == len(set(names)), callable(iosched.replay), iosched.replay.__name__)")
    env = {"PATH": "/usr/bin:/bin"}  # the installed package, as a user runs it (not the source tree: no native module there in CI)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    # Before: ['run', 'run', 'replay', 'replay', ...] and iosched.replay the module iosched/replay.py.
    assert out.split() == ["True", "True", "replay"]


def test_scenario_errors_say_a_number_not_a_rust_type(tmp_path):
    for body, says in [('[[process]]\nthink_us = "fast"\n', 'expected a number, got "fast"'),
                       ("[[process]]\ncount = 1.5\n", "expected a whole number from 0 to 4294967295, got 1.5"),
                       ("[run]\nseed = true\n[[process]]\n", "expected a whole number from 0 to"),
                       ("[[process]]\nfile_mib = [1]\n", "expected a number, got a list")]:
        f = tmp_path / "s.toml"
        f.write_text(body)
        r = runner.invoke(app, ["run", str(f)])
        assert r.exit_code == 2 and says in r.stderr, r.stderr
        for rust in ("f64", "u32", "u64", "invalid type", "floating point"):
            assert rust not in r.stderr, r.stderr


def test_a_bad_tunable_names_its_unit_and_range(tmp_path):
    f = tmp_path / "s.toml"
    for value, says in [('"soon"', "takes a whole number from 0 to 2147483647 ms"),
                        ("-5", "out of range: it takes a whole number from 0 to 2147483647 ms"),
                        ("1.5", "is not a whole number: it takes a whole number from 0 to 2147483647 ms")]:
        f.write_text(f'[[process]]\n[[scheduler]]\nname = "deadline"\nread_expire = {value}\n')
        r = runner.invoke(app, ["run", str(f)])
        assert r.exit_code == 2 and "read_expire" in r.stderr and says in r.stderr, r.stderr


def test_every_listed_tunable_shows_its_unit():
    schedulers = json.loads(runner.invoke(app, ["list", "schedulers", "--json"]).stdout)
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO(runner.invoke(app, ["list", "schedulers", "--format", "csv"]).stdout))}
    for s in schedulers:
        for t in s["tunables"]:
            # Linux's sysfs names, each with its unit (a tunable without one is a plain count).
            shown = next(x for x in rows[s["name"]]["tunables"].split("; ") if x.startswith(t["name"] + " = "))
            if t["unit"]:
                assert f" {t['unit']} [" in shown, shown


def test_a_bad_tunable_in_mount_names_its_unit_and_range(tmp_path):
    """Refused while the arguments are read, before anything is mounted."""
    # mount replaces the process (exec): run it as a user does.
    env = {"PATH": "/usr/bin:/bin"}  # the installed package, as a user runs it (not the source tree: no native module there in CI)
    r = subprocess.run([sys.executable, "-m", "iosched.cli", "mount", str(tmp_path), str(tmp_path / "m"), "--set",
                        "read_expire=soon", "--scheduler", "deadline"], capture_output=True, text=True, env=env)
    assert r.returncode == 2
    assert "`read_expire` takes a whole number from 0 to 2147483647 ms" in r.stderr, r.stderr
