"""`iosched advise --objective METRIC@PROCESS`: rank the schedulers by one process's (or one
[[process]] entry's instances') throughput, mean or p99 (issue 23)."""

import json
import subprocess
import sys

SCENARIO = """
name = "wal-beside-readers"
[device]
preset = "ibm-deskstar-34gxp"
[[process]]
name = "reader"
count = 2
pattern = "sequential"
request_kib = 64
think_us = 200
[[process]]
name = "wal"
pattern = "sequential"
op = "write"
request_kib = 8
think_us = 20000
file_mib = 64
[run]
duration_s = 4
"""


def cli(*args):
    return subprocess.run([sys.executable, "-m", "iosched.cli", *map(str, args)], capture_output=True, text=True)


def test_a_process_focused_objective_ranks_by_that_process(tmp_path):
    scn = tmp_path / "wal.toml"
    scn.write_text(SCENARIO)
    r = cli("advise", scn, "--objective", "p99@wal", "--candidates", "noop,clook,anticipatory,cfq", "--json", "-j", "1")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert (d["objective"], d["focus"]) == ("p99", "wal")
    p99 = [x["response_ms_p99"] for x in d["ranking"]]
    assert p99 == sorted(p99), "ranked by the WAL writer's p99"
    # The focused p99 is the writer's own, not the run's pooled one.
    r2 = cli("advise", scn, "--objective", "p99", "--candidates", "noop,clook,anticipatory,cfq", "--json", "-j", "1")
    pooled = {x["candidate"]: x["response_ms_p99"] for x in json.loads(r2.stdout)["ranking"]}
    mine = {x["candidate"]: x["response_ms_p99"] for x in d["ranking"]}
    assert mine != pooled
    # `reader` is the entry's instances, reader1 and reader2, together.
    r3 = cli("advise", scn, "--objective", "throughput@reader", "--candidates", "noop,anticipatory", "--json", "-j", "1")
    assert r3.returncode == 0, r3.stderr
    tp = [x["throughput_mb_s"] for x in json.loads(r3.stdout)["ranking"]]
    assert tp == sorted(tp, reverse=True)


def test_a_focus_that_names_nothing_is_an_error(tmp_path):
    scn = tmp_path / "wal.toml"
    scn.write_text(SCENARIO)
    r = cli("advise", scn, "--objective", "p99@db", "--candidates", "noop", "-j", "1")
    assert r.returncode == 2 and "no process `db`" in r.stderr and "wal" in r.stderr, r.stderr
    r = cli("advise", scn, "--objective", "fairness@wal", "--candidates", "noop")
    assert r.returncode == 2 and "only throughput, mean, p99 can be about one process" in r.stderr, r.stderr
