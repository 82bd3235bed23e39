"""`iosched run` on a terminal (a pseudo-terminal): a short run draws its table with styles and
no progress bar; a Ctrl-C while the bar runs, or just as rich starts or stops it, leaves the
terminal as it was (every cursor hide matched by a show) and prints the results, on the terminal
or into the file stdout goes to.

The Ctrl-Cs inside rich's start and stop are sent by the run itself (wrappers around rich's
`Console.show_cursor` and `Live.stop` that signal their own process), so they land in those few
bytecodes every time instead of by chance."""

import os
import select
import signal
import subprocess
import sys
import time

import pytest

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
# About half a second per run: the bar starts, and stops at the end.
MEDIUM = SHORT.replace("requests = 200", "requests = 1000000")
# Three runs of many requests: seconds each, so that a Ctrl-C lands in the first.
LONG = SHORT.replace("requests = 200", "requests = 50000000") + '[[scheduler]]\nname = "sptf"\n[[scheduler]]\nname = "noop"\n'

# The lean entry, with SIGINT sent to this process inside rich (SIGNAL_IN): "start" as the bar
# hides the cursor, half-way through `Live.start`; "stop" as `Live.stop` begins. Without Ctrl-C
# held there, the interrupt lands inside rich.
ENTRY = """
import os, signal, sys
where = os.environ.get("SIGNAL_IN")
if where == "start":
    import rich.console
    show_cursor = rich.console.Console.show_cursor
    def hiding(self, show=True):
        result = show_cursor(self, show)
        if not show:
            os.kill(os.getpid(), signal.SIGINT)
        return result
    rich.console.Console.show_cursor = hiding
elif where == "stop":
    import rich.live
    stop = rich.live.Live.stop
    def stopping(self):
        os.kill(os.getpid(), signal.SIGINT)
        return stop(self)
    rich.live.Live.stop = stopping
from iosched.entry import main
main()
"""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminals as Linux has them")


def _run_on_pty(tmp_path, scenario, interrupt_after_s=None, stdout_file=None, signal_in=None):
    """Runs `iosched run` on `scenario` with stderr (and stdout, unless `stdout_file`) on a
    pseudo-terminal; sends SIGINT after `interrupt_after_s`. Returns (exit status, what the
    terminal received)."""
    path = tmp_path / "scenario.toml"
    path.write_text(scenario)
    master, slave = os.openpty()
    out = open(stdout_file, "wb") if stdout_file else slave
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    env.update(COLUMNS="100", TERM="xterm")
    if signal_in:
        env["SIGNAL_IN"] = signal_in
    p = subprocess.Popen([sys.executable, "-c", ENTRY, "run", str(path)], stdin=slave, stdout=out, stderr=slave,
                         cwd=tmp_path, env=env)
    os.close(slave)
    if stdout_file:
        out.close()
    received, t0 = b"", time.monotonic()
    try:
        while True:
            if interrupt_after_s is not None and time.monotonic() - t0 >= interrupt_after_s:
                p.send_signal(signal.SIGINT)
                interrupt_after_s = None
            if select.select([master], [], [], 0.01)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the terminal's other end closed: the process has exited
                    break
                if not chunk:
                    break
                received += chunk
            elif p.poll() is not None:
                break
            assert time.monotonic() - t0 < 120, "the run did not end"
        return p.wait(timeout=30), received
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(master)


def test_a_short_run_on_a_terminal_draws_styles_and_no_bar(tmp_path):
    status, seen = _run_on_pty(tmp_path, SHORT)
    assert status == 0, seen
    assert HIDE not in seen and b"ETA" not in seen, "no progress bar for a run this short"
    assert b"\x1b[1m" in seen and b"runs" in seen and "┏".encode() in seen, seen


def test_ctrl_c_while_the_bar_runs_leaves_the_terminal_as_it_was(tmp_path):
    status, seen = _run_on_pty(tmp_path, LONG, interrupt_after_s=1.5)
    assert status == 130, seen
    assert HIDE in seen and b"ETA" in seen, "a run this long shows its bar"
    assert seen.count(HIDE) == seen.count(SHOW), f"cursor left hidden: {seen[-400:]!r}"
    assert b"Traceback" not in seen and b"runs" in seen, seen[-400:]


def test_ctrl_c_as_rich_starts_the_bar_stops_the_run_cleanly(tmp_path):
    status, seen = _run_on_pty(tmp_path, LONG, signal_in="start")
    assert status == 130, seen
    assert seen.count(HIDE) == seen.count(SHOW), f"cursor left hidden: {seen[-400:]!r}"
    assert b"Traceback" not in seen and b"runs" in seen, seen[-400:]


def test_ctrl_c_as_rich_stops_the_bar_lets_the_finished_run_print(tmp_path):
    # The run is over when the bar stops: its results are complete and are printed (exit 0).
    status, seen = _run_on_pty(tmp_path, MEDIUM, signal_in="stop")
    assert status == 0, seen
    assert HIDE in seen and seen.count(HIDE) == seen.count(SHOW), f"cursor left hidden: {seen[-400:]!r}"
    assert b"Traceback" not in seen and b"runs" in seen, seen[-400:]


def test_ctrl_c_with_stdout_to_a_file_puts_the_results_in_the_file(tmp_path):
    results = tmp_path / "results.txt"
    status, seen = _run_on_pty(tmp_path, LONG, interrupt_after_s=1.5, stdout_file=results)
    assert status == 130, seen
    assert seen.count(HIDE) == seen.count(SHOW)
    text = results.read_text()
    assert "runs" in text and "\x1b" not in text, text
    assert b"runs" not in seen, "the table went to the terminal, not to stdout's file"
