"""`iosched run` on a terminal (a pseudo-terminal): a short run draws its table with styles and
no progress bar; Ctrl-C at any moment of a long run, the bar starting or not, leaves the
terminal as it was (every cursor hide matched by a show), exits 130 and prints the results so
far, on the terminal or into the file stdout goes to."""

import os
import select
import signal
import subprocess
import sys
import time

import pytest

ENTRY = [sys.executable, "-m", "iosched.entry"]
HIDE, SHOW = b"\x1b[?25l", b"\x1b[?25h"

SHORT = """[device]
preset = "wd-ultrastar-hc310"
[workload]
kind = "poisson"
requests = 200
rate_iops = 60
request_kib = 4
[[scheduler]]
name = "fcfs"
"""
# Three runs of many requests: seconds each, so that Ctrl-C lands in the first.
LONG = SHORT.replace("requests = 200", "requests = 50000000") + '[[scheduler]]\nname = "sptf"\n[[scheduler]]\nname = "noop"\n'

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminals as Linux has them")


def _run_on_pty(args, cwd, interrupt_after_s=None, stdout_file=None):
    """Runs `args` with stderr (and stdout, unless `stdout_file`) on a pseudo-terminal; sends
    SIGINT after `interrupt_after_s`. Returns (exit status, what the terminal received)."""
    master, slave = os.openpty()
    out = open(stdout_file, "wb") if stdout_file else slave
    env = dict(os.environ, COLUMNS="100", TERM="xterm")
    env.pop("NO_COLOR", None)
    env.pop("FORCE_COLOR", None)
    env.pop("TTY_COMPATIBLE", None)
    p = subprocess.Popen(args, stdin=slave, stdout=out, stderr=slave, cwd=cwd, env=env)
    os.close(slave)
    if stdout_file:
        out.close()
    received, sent, t0 = b"", False, time.monotonic()
    while True:
        if interrupt_after_s is not None and not sent and time.monotonic() - t0 >= interrupt_after_s:
            p.send_signal(signal.SIGINT)
            sent = True
        ready, _, _ = select.select([master], [], [], 0.01)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's other end closed (the process has exited)
                break
            if not chunk:
                break
            received += chunk
        elif p.poll() is not None and not ready:
            # Drain what is left, then stop.
            try:
                while select.select([master], [], [], 0.05)[0]:
                    chunk = os.read(master, 65536)
                    if not chunk:
                        break
                    received += chunk
            except OSError:
                pass
            break
        assert time.monotonic() - t0 < 60, "the run did not end"
    os.close(master)
    return p.wait(timeout=30), received


def test_a_short_run_on_a_terminal_draws_styles_and_no_bar(tmp_path):
    path = tmp_path / "short.toml"
    path.write_text(SHORT)
    status, seen = _run_on_pty([*ENTRY, "run", str(path)], tmp_path)
    assert status == 0, seen
    assert HIDE not in seen and b"ETA" not in seen, "no progress bar for a run this short"
    assert b"\x1b[1m" in seen and b"runs" in seen and "┏".encode() in seen, seen


# Around the bar's start (a tenth of a second in, once requests complete), and well after it.
@pytest.mark.parametrize("after_s", [0.05, 0.12, 0.2, 0.35, 1.0])
def test_ctrl_c_on_a_terminal_leaves_it_as_it_was(tmp_path, after_s):
    path = tmp_path / "long.toml"
    path.write_text(LONG)
    status, seen = _run_on_pty([*ENTRY, "run", str(path)], tmp_path, interrupt_after_s=after_s)
    assert status == 130, seen
    assert seen.count(HIDE) == seen.count(SHOW), f"cursor left hidden: {seen[-400:]!r}"
    assert b"Traceback" not in seen and b"runs" in seen, seen[-400:]
    if after_s >= 1.0:
        assert HIDE in seen and b"ETA" in seen, "a run this long shows its bar"


@pytest.mark.parametrize("after_s", [0.08, 0.25])
def test_ctrl_c_with_stdout_to_a_file_puts_the_results_in_the_file(tmp_path, after_s):
    path = tmp_path / "long.toml"
    path.write_text(LONG)
    results = tmp_path / "results.txt"
    status, seen = _run_on_pty([*ENTRY, "run", str(path)], tmp_path, interrupt_after_s=after_s, stdout_file=results)
    assert status == 130, seen
    assert seen.count(HIDE) == seen.count(SHOW)
    text = results.read_text()
    assert "runs" in text and "\x1b" not in text, text
    assert b"runs" not in seen, "the table went to the terminal, not to stdout's file"
