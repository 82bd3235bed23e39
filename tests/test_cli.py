import json

import pytest
from typer.testing import CliRunner

import iosched
from iosched.cli import app

from conftest import REPO

runner = CliRunner()

RUN_KEYS = {"scheduler", "device", "throughput_mb_s", "iops", "utilization_busy",
            "utilization_transfer", "response_ms", "processes"}
LATENCY_KEYS = {"mean", "p50", "p95", "p99", "max"}


def test_run_default_prints_tables():
    r = runner.invoke(app, ["run"])
    assert r.exit_code == 0, r.output
    assert "two-readers" in r.stdout
    assert "util transfer" in r.stdout and "clook" in r.stdout
    assert "processes" in r.stdout and "reader1" in r.stdout


def test_run_json_is_one_object():
    r = runner.invoke(app, ["run", "--json", "--seed", "3"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert set(doc) == {"iosched_version", "scenario", "resolved_scenario", "runs"}
    assert doc["iosched_version"] == iosched.__version__
    # Every default filled in: the scheduler's tunables and the device's parameters.
    sched = {s["label"]: s for s in doc["resolved_scenario"]["scheduler"]}
    assert sched["anticipatory(aged-sptf)"]["tunables"]["timer_granularity_us"] == 500
    assert doc["resolved_scenario"]["device"]["resolved"]["spec"]["rpm"] > 0
    assert doc["scenario"] == "two-readers"
    assert len(doc["runs"]) == 3
    for run in doc["runs"]:
        assert RUN_KEYS <= set(run)
        assert run["seed"] == 3
        assert LATENCY_KEYS <= set(run["response_ms"])
        for p in run["processes"]:
            assert {"name", "bytes", "throughput_mb_s", "response_ms"} <= set(p)
            assert LATENCY_KEYS <= set(p["response_ms"])
    # The runs are the simulator's summaries as written (not parsed and written again): the same
    # values the Python API gives for the same scenario and seed.
    api_runs = iosched.run(iosched.Scenario.default(), seed=3).summaries

    def timeless(x):
        if isinstance(x, dict):
            return {k: timeless(v) for k, v in x.items() if k not in ("wall_s", "elapsed_wall_s", "cpu_s")}
        return [timeless(v) for v in x] if isinstance(x, list) else x

    assert timeless(doc["runs"]) == timeless(api_runs)


@pytest.mark.parametrize("name", ["seltzer-q100.toml", "two-readers.toml"])
def test_example_files_run(name):
    path = REPO / "experiments" / "examples" / name
    r = runner.invoke(app, ["run", str(path), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert len(doc["runs"]) == 2
    assert all(run["requests"] > 0 for run in doc["runs"])


def test_requests_csv(tmp_path):
    out = tmp_path / "req.csv"
    r = runner.invoke(app, ["run", "--requests-csv", str(out)])
    assert r.exit_code == 0, r.output
    header = out.read_text().splitlines()[0].split(",")
    assert header[:3] == ["run", "scheduler", "req_id"] and "op" in header


BASE = '[device]\npreset = "fujitsu-m2361a"\n[workload]\nkind = "closed-queue"\n'
BAD = {
    "unknown-field": (BASE + "queue_dept = 10\n", "workload.queue_dept"),
    "wrong-type": (BASE + 'queue_depth = "ten"\n', "workload.queue_depth"),
    "unknown-scheduler": (BASE + '[[scheduler]]\nname = "elevator9"\n', "scheduler[0].name"),
    "unknown-preset": ('[device]\npreset = "floppy"\n[workload]\nkind = "closed-queue"\n',
                       "device.preset"),
    "negative-size": (BASE + "request_kib = -4\n", "workload.request_kib"),
    "beyond-disk": ('[device]\npreset = "fujitsu-m2361a"\n[[process]]\nfile_mib = 10\n'
                    "file_offset_mib = 600\n", "process[0].file_offset_mib"),
    "bad-toml": ("[device\n", "line 1"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_exit_2_one_line(tmp_path, case):
    text, field = BAD[case]
    path = tmp_path / f"{case}.toml"
    path.write_text(text)
    r = runner.invoke(app, ["run", str(path)])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: ")
    assert str(path) in lines[0]
    assert field in lines[0]


def test_missing_and_non_utf8_files(tmp_path):
    missing = tmp_path / "nope.toml"
    r = runner.invoke(app, ["run", str(missing)])
    assert r.exit_code == 2
    assert r.stderr.strip() == f"error: {missing}: no such file"
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"name = \"\xff\xfe\"\n")
    r = runner.invoke(app, ["run", str(binary)])
    assert r.exit_code == 2
    assert "Traceback" not in r.output
    assert str(binary) in r.stderr and "UTF-8" in r.stderr


def test_list_schedulers():
    r = runner.invoke(app, ["list", "schedulers"])
    assert r.exit_code == 0, r.output
    for word in ["fcfs", "sstf", "cscan", "sptf", "gstf", "wstf", "group_cylinders",
                 "max_response_ms"]:
        assert word in r.stdout


def test_list_devices():
    r = runner.invoke(app, ["list", "devices"])
    assert r.exit_code == 0, r.output
    assert "fujitsu-m2361a" in r.stdout and "3600" in r.stdout and "estimated" in r.stdout
    # The flash presets follow, each with its sources and estimates.
    assert "samsung-970-evo-plus-1tb: Samsung 970 EVO Plus" in r.stdout


def test_list_devices_flash_in_every_format():
    """CSV and JSON list the disks unless --flash asks for the flash presets; each flash preset
    says its sources and what is estimated."""
    import csv
    import io

    names = ["samsung-870-evo-1tb", "samsung-970-evo-plus-1tb", "samsung-pm9a3-7.68tb"]
    r = runner.invoke(app, ["list", "devices", "--flash", "--format", "csv"])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [row["name"] for row in rows] == names and r.stdout.startswith("name,interface,")
    r = runner.invoke(app, ["list", "devices", "--flash", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [d["name"] for d in doc] == names
    for d in doc:
        assert "data sheet" in d["source"] or "product brief" in d["source"]
        assert "controller latency" in d["estimated"] and d["queue_source"].startswith(("SATA", "NVMe"))
    r = runner.invoke(app, ["list", "devices", "--format", "csv"])
    assert "samsung" not in r.stdout and "fujitsu-m2361a" in r.stdout


def test_seltzer_catalogue_scenarios_run():
    files = sorted((REPO / "experiments" / "seltzer1990").glob("fig*.toml"))
    assert len(files) == 7
    for f in files:
        r = runner.invoke(app, ["run", str(f), "--json"])
        assert r.exit_code == 0, (f, r.output)
        assert all(run["device"] == "fujitsu-m2361a" for run in json.loads(r.stdout)["runs"])


def test_review_regressions_no_tracebacks(tmp_path):
    """Inputs found in review: markup in labels, an out-of-range seed, a malformed catalogue."""
    from typer.testing import CliRunner
    from iosched.cli import app

    runner = CliRunner()
    scn = tmp_path / "[x].toml"
    scn.write_text('name = "[/b]"\n[workload]\nkind = "closed-queue"\nrequests = 50\n'
                   '[[scheduler]]\nname = "fcfs"\nlabel = "[/x]"\n')
    res = runner.invoke(app, ["run", str(scn)])
    assert res.exit_code == 0, res.output
    assert "[/x]" in res.output and "[x].toml" in res.output
    res = runner.invoke(app, ["run", str(scn), "--seed", str(2**64)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "catalogue.toml").write_text('title = "x"\n')
    res = runner.invoke(app, ["reproduce", "seltzer1990", "--catalogue", str(cat), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    assert "catalogue.toml" in res.output and "Traceback" not in res.output


def test_progress_status_first_and_last_frames():
    # Issue 23: the first frame showed 102,399,000,000,000 requests/s (one tick over no time),
    # the last "0 requests, 0.0 s simulated" after every run had finished.
    from iosched.api import Progress
    from iosched.cli import RATE_AFTER_S, progress_status

    first = progress_status(Progress(runs_done=0, runs_total=3, completed=102_399, simulated_s=1.5), 1e-9)
    assert "requests/s" not in first and "run 1/3: 102,399 requests" in first
    later = progress_status(Progress(runs_done=1, runs_total=3, completed=50_000, simulated_s=9.0), 2 * RATE_AFTER_S)
    assert later.startswith("run 2/3") and "50,000 requests/s" in later
    last = progress_status(Progress(runs_done=3, runs_total=3, completed=0, simulated_s=0.0), 5.0)
    assert last == "3 runs done"


def test_global_options_after_the_subcommand(tmp_path):
    # Issue 23: `iosched run x.toml -q` said "No such option: -q".
    scn = tmp_path / "x.toml"
    scn.write_text('[workload]\nkind = "closed-queue"\nrequests = 50\n[[scheduler]]\nname = "fcfs"\n')
    for args in (["run", str(scn), "-q"], ["run", "--quiet", str(scn)], ["-q", "run", str(scn)]):
        res = runner.invoke(app, args)
        assert res.exit_code == 0, (args, res.output)


def test_bfq_says_why_two_sequential_readers_get_noops_numbers(tmp_path):
    # Issue 23: both readers weight-raised, so Linux's BFQ never idles and gives exactly noop's
    # numbers; the run now says so.
    scn = tmp_path / "two-seq.toml"
    scn.write_text('[device]\npreset = "ibm-deskstar-34gxp"\n[[process]]\nname = "reader"\ncount = 2\n'
                   'pattern = "sequential"\nrequest_kib = 64\nthink_us = 200\n[run]\nduration_s = 3\n'
                   '[[scheduler]]\nname = "bfq"\n[[scheduler]]\nname = "noop"\n'
                   '[[scheduler]]\nname = "bfq"\nlabel = "bfq-ll0"\nlow_latency = 0\n')
    res = runner.invoke(app, ["run", str(scn), "--json"])
    assert res.exit_code == 0, res.output
    runs = {r["scheduler"]: r for r in json.loads(res.output)["runs"]}
    assert runs["bfq"]["throughput_mb_s"] == runs["noop"]["throughput_mb_s"]
    assert runs["bfq"]["notices"] and "weight-raised" in runs["bfq"]["notices"][0]
    assert not runs["bfq-ll0"].get("notices") and runs["bfq-ll0"]["throughput_mb_s"] > 3 * runs["noop"]["throughput_mb_s"]
    res = runner.invoke(app, ["run", str(scn)])
    assert "note (bfq): bfq did not idle" in " ".join(res.output.split())


def test_the_examples_run_from_a_copy_anywhere(tmp_path, monkeypatch):
    # Issue 23: experiments/examples/trace-replay.toml pointed at ../../../shared/traces, so a
    # copy of the repository elsewhere could not run it. `{traces}` is the traces' directory.
    import shutil

    from conftest import TRACES

    copy = tmp_path / "elsewhere" / "examples"
    shutil.copytree(REPO / "experiments" / "examples", copy)
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["run", str(copy / "trace-replay.toml")])
    assert res.exit_code == 2 and "{traces}" in res.output and "--traces DIR" in res.output, res.output
    if not (TRACES / "mqsim_wsrch-small.trace").is_file():
        pytest.skip(f"the run itself needs {TRACES}/mqsim_wsrch-small.trace")
    res = runner.invoke(app, ["run", str(copy / "trace-replay.toml"), "--traces", str(TRACES), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["runs"][0]["requests"] == 24_783
    monkeypatch.setenv("IOSCHED_TRACES", str(TRACES))
    assert runner.invoke(app, ["run", str(copy / "trace-replay.toml"), "--json"]).exit_code == 0


def test_the_readme_test_command_says_why_tests_skip():
    readme = (REPO / "README.md").read_text()
    command = next(line for line in readme.splitlines() if "pytest" in line and line.startswith("pip install"))
    assert " -rs" in command
    assert command.split("#")[0].strip() in (REPO / ".ci" / "run").read_text()


def test_run_overrides_the_files_schedulers_and_device(tmp_path):
    # Issue 23: `iosched run SCENARIO --scheduler NAME[:k=v,...] --device PRESET`, as fio's
    # command line overrides its job file.
    scn = tmp_path / "x.toml"
    scn.write_text('[device]\npreset = "fujitsu-m2361a"\n[workload]\nkind = "closed-queue"\nqueue_depth = 8\nrequests = 400\n'
                   '[[scheduler]]\nname = "fcfs"\n')
    res = runner.invoke(app, ["run", str(scn), "--json", "--scheduler", "sptf", "--scheduler", "gstf:group_cylinders=210,label=g210",
                              "--device", "ibm-deskstar-34gxp"])
    assert res.exit_code == 0, res.output
    runs = json.loads(res.stdout)["runs"]
    assert [r["scheduler"] for r in runs] == ["sptf", "g210"]
    assert {r["device"] for r in runs} == {"ibm-deskstar-34gxp"}
    resolved = json.loads(res.stdout)["resolved_scenario"]
    assert resolved["scheduler"][1]["tunables"]["group_cylinders"] == 210
    for args, message in [
        (["--scheduler", "gstf:group_size=3"], "--scheduler gstf:group_size=3: "),
        (["--scheduler", "gstf:group_cylinders"], "is not key=value"),
        (["--device", "floppy"], "--device floppy: "),
    ]:
        res = runner.invoke(app, ["run", str(scn), *args])
        assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output, (args, res.output)


def _commands(group, path=()):
    """(path, click command) of every command and subcommand of the command line. (A group is
    whatever has subcommands: typer 0.29 vendors click as `typer._click`, older typers depend on
    click itself, so the test names neither.)"""
    for name, cmd in group.commands.items():
        yield path + (name,), cmd
        if isinstance(getattr(cmd, "commands", None), dict):
            yield from _commands(cmd, path + (name,))


def test_help_shows_every_bracket_of_the_help_texts():
    """Help is plain text: `[device]`, `[[scheduler]]` or `[summary, ...]` in a help string is
    printed as written (rich markup took them for tags and dropped them), and a command's
    summary in the list is one line, not the docstring's line breaks."""
    import re

    import typer

    root = typer.main.get_command(app)
    checked = 0
    for path, cmd in _commands(root):
        out = " ".join(runner.invoke(app, [*path, "--help"], terminal_width=100).stdout.split())
        for param in cmd.params:
            for bracket in re.findall(r"\[[^\]]*\]+", getattr(param, "help", None) or ""):
                assert " ".join(bracket.split()) in out, (path, param.name, bracket)
                checked += 1
    assert checked >= 5  # the run command alone has [[scheduler]], [device], [summary, ...]
    listing = runner.invoke(app, ["--help"], terminal_width=100).stdout
    run_line = next(line for line in listing.splitlines() if line.strip().startswith("run "))
    assert "Run every scheduler of a scenario" in run_line


def test_a_flash_run_shows_its_ftl_counters(tmp_path):
    """The text output of a flash run names its write amplification and what was programmed;
    counters that stayed zero are left out; a disk run has no flash line."""
    scenario = tmp_path / "f.toml"
    scenario.write_text(
        '[device]\npreset = "samsung-970-evo-plus-1tb"\n[device.flash]\nprecondition = "none"\nmapping_unit_kib = 16\n'
        'write_buffer_kib = 256\n[workload]\nkind = "closed-queue"\nqueue_depth = 4\nrequest_kib = 4\nrequests = 300\n'
        'read_fraction = 0.0\nregion_end_fraction = 0.0005\n[[scheduler]]\nname = "fcfs"\n')
    r = runner.invoke(app, ["run", str(scenario)])
    assert r.exit_code == 0, r.output
    line = next(l for l in r.output.splitlines() if l.startswith("flash (fcfs):"))
    assert "write amplification" in line and "for the host" in line and "padding" in line, line
    assert "merged into wider mapping units" in line and "in SLC mode" in line, line
    assert "mapping-cache" not in line and "erases" not in line, line
    disk = runner.invoke(app, ["run"])
    assert disk.exit_code == 0 and "flash (" not in disk.output


def test_flash_text_leaves_zero_counters_out():
    from iosched.run_command import flash_text

    f = {"write_amplification": 1.0, "precondition_write_amplification": 1.0, "host_units": 10, "gc_units": 0,
         "padding_units": 2, "erases": 0, "gc_runs": 0, "trimmed_units": 0}
    assert flash_text(f) == ("write amplification 1.00 (preconditioning 1.00); 4 KiB units programmed: 10 for the host, "
                             "0 by GC, 2 padding")
    f.update(merged_units=6, update_reads=3, erases=1)
    assert flash_text(f).endswith("; 6 merged into wider mapping units, 3 update reads, 1 erases")
