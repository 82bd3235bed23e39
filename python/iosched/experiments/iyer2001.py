"""`iosched reproduce iyer2001`: the microbenchmarks of Iyer & Druschel, "Anticipatory
scheduling", SOSP 2001 (sections 4.1, 4.2 and 4.8), run by mechanism on the disk models.

Every point is a generated scenario (written to OUT/scenarios/ so any point can be rerun with
`iosched run`): two processes reading their own 1 GiB files in 64 KiB synchronous requests on
the IBM Deskstar 34GXP model, under Aged-SPTF ("original": the paper's default scheduler, with a
1 s latency bound) and under the anticipatory scheduler around Aged-SPTF. Throughput is the
application-observed aggregate MB/s (10^6 B); utilization is `utilization_busy`, the paper's
definition (fraction of time the disk is servicing requests).

The paper's numbers are typed in from the text (figures have no tables); each report row puts
ours beside them with a verdict. Nothing is tuned to them.
"""

from __future__ import annotations

import json
import time
from statistics import median
from collections import defaultdict
from pathlib import Path
from typing import Callable, Optional

import pandas as pd

from ..pool import Pool
from ..scenario import Scenario, ScenarioError
from .sweep import markdown_table

try:
    import tomli_w
except ImportError:  # pragma: no cover - a declared dependency
    tomli_w = None

DESKSTAR = "ibm-deskstar-34gxp"
CHEETAH = "seagate-st318451lw"
SCHEDULERS = {
    "original": {"name": "aged-sptf"},
    "anticipatory": {"name": "anticipatory", "policy": "aged-sptf"},
}
DURATION_S = 20
# A process cannot issue its next request at the very instant the previous one completes: the
# paper's processes issue it "a few hundred microseconds after its previous one finishes"
# (section 2). Every think time below is this plus the experiment's own pause t.
REISSUE_US = 200.0


# The adversary pauses "for a duration that just exceeds the timeout set by the heuristic":
# the longest wait the anticipation core allows (max_wait_us, 15 ms: the think-time table's
# span) plus a 500 us timer tick, plus a tick of margin.
ADVERSARY_WAIT_US = 15_000 + 500 + 500


def scenario(processes: list, scheduler: dict, device: str = DESKSTAR, duration_s: float = DURATION_S,
             seed: int = 1, estimator: str = "model") -> dict:
    dev = {"preset": device}
    if estimator != "model":
        dev["positioning_estimator"] = estimator
    return {
        "device": dev,
        "process": processes,
        "run": {"duration_s": duration_s, "seed": seed},
        "scheduler": [scheduler],
    }


def reader(name: str, pattern: str = "sequential", think_us: float = 0.0, think: str = "fixed",
           access: Optional[str] = None, **extra) -> dict:
    """A 64 KiB reader of its own 1 GiB file; `think_us` is the pause on top of REISSUE_US
    (for uniform think times, the upper end of the pause's range)."""
    p = {"name": name, "pattern": pattern, "request_kib": 64, "file_mib": 1024,
         "think_us": REISSUE_US + think_us, "think": think}
    if access is not None:
        p["access"] = access
    p.update(extra)
    return p


class Runner:
    """Runs generated scenarios once each and keeps their text for the record.

    Two passes over the same figure functions: while `planning`, `run` only collects the
    scenarios (and answers with zeros, which the figure functions just copy into rows); then
    `execute` runs them all in the pool; the second pass reads the results."""

    def __init__(self, out: Path, pool: Optional[Pool] = None):
        self.out = out
        (out / "scenarios").mkdir(parents=True, exist_ok=True)
        self.pool = pool or Pool()
        self.planning = True
        self.planned: dict = {}
        self.results: dict = {}

    @property
    def count(self) -> int:
        return len(self.results)

    def run(self, key: str, scn: dict) -> dict:
        if self.planning:
            self.planned[key] = tomli_w.dumps(scn)
            return defaultdict(float)
        return self.results[key]

    def execute(self, progress=None) -> None:
        """Runs every planned scenario; writes each to scenarios/KEY.toml."""
        keys = list(self.planned)
        for k in keys:
            (self.out / "scenarios" / f"{k}.toml").write_text(self.planned[k])
        tasks = [(self.planned[k], f"scenarios/{k}.toml", None) for k in keys]
        for k, [summary] in zip(keys, self.pool.map(tasks, progress)):
            self.results[k] = summary
        self.planning = False


def _pct(a: float, b: float) -> str:
    return f"{(a / b - 1) * 100:+.0f}%" if b else "n/a"


# -- experiments ----------------------------------------------------------------------------

def fig4(r: Runner, device: str = DESKSTAR, tag: str = "fig4") -> pd.DataFrame:
    """Access patterns x read/mmap, original vs anticipatory."""
    accesses = ["mmap", "read"]
    rows = []
    for access in accesses:
        for pattern in ["sequential", "alternate", "random"]:
            for label, sched in SCHEDULERS.items():
                procs = [reader("p", pattern, 0.0, access=None if access == "mmap" else access, count=2)]
                s = r.run(f"{tag}-{pattern}-{access}-{label}", scenario(procs, sched, device))
                rows.append({"pattern": pattern, "access": access, "scheduler": label,
                             "throughput_mb_s": s["throughput_mb_s"], "utilization_busy": s["utilization_busy"]})
    return pd.DataFrame(rows)


def estimators(r: Runner) -> pd.DataFrame:
    """Figure 4 (mmap) with the paper's own estimator: a calibrated LBA-distance curve."""
    rows = []
    for est in ["model", "calibrated"]:
        for pattern in ["sequential", "alternate", "random"]:
            s = r.run(f"est-{est}-{pattern}", scenario([reader("p", pattern, count=2)], SCHEDULERS["anticipatory"], estimator=est))
            rows.append({"estimator": est, "pattern": pattern, "throughput_mb_s": s["throughput_mb_s"]})
    return pd.DataFrame(rows)


def think_sweep(r: Runner, kind: str, think_ms: list) -> pd.DataFrame:
    """fig5: both processes think t; fig6: one process thinks t; random: both uniform on [0, t]."""
    rows = []
    for t in think_ms:
        us = t * 1000.0
        if kind == "fig5":
            procs = [reader("p", think_us=us, count=2)]
        elif kind == "fig6":
            procs = [reader("slow", think_us=us), reader("quick")]
        else:
            procs = [reader("p", think_us=us, think="uniform", count=2)]
        for label, sched in SCHEDULERS.items():
            s = r.run(f"{kind}-t{t:g}ms-{label}", scenario(procs, sched))
            rows.append({"think_ms": t, "scheduler": label, "throughput_mb_s": s["throughput_mb_s"],
                         "utilization_busy": s["utilization_busy"]})
    return pd.DataFrame(rows)


def timer_granularity(r: Runner) -> pd.DataFrame:
    """Anticipation with timer ticks of 50 us - 1 ms on the adversary (n = 2), as the paper did."""
    rows = []
    for tick in [50, 200, 500, 1000]:
        procs = [reader("p", think="adversary", adversary_quick=2, adversary_wait_us=ADVERSARY_WAIT_US, count=2)]
        workload = "adversary (n = 2)"
        sched = dict(SCHEDULERS["anticipatory"], timer_granularity_us=tick)
        s = r.run(f"timer-{tick}us", scenario(procs, sched))
        rows.append({"timer_us": tick, "workload": workload, "throughput_mb_s": s["throughput_mb_s"]})
    return pd.DataFrame(rows)


def adversary(r: Runner) -> pd.DataFrame:
    rows = []
    for n in [0, 1, 2, 3, 4, 6, 8]:
        procs = [reader("p", think="adversary", adversary_quick=n, adversary_wait_us=ADVERSARY_WAIT_US, count=2)]
        for label, sched in SCHEDULERS.items():
            s = r.run(f"fig7-n{n}-{label}", scenario(procs, sched))
            rows.append({"n": n, "scheduler": label, "throughput_mb_s": s["throughput_mb_s"]})
    return pd.DataFrame(rows)


# The host of experiments/iyer2001/host/*.toml: FreeBSD 4.3's read path and FFS layout, 96 MiB
# of page cache, one CPU shared by processor sharing.
HOST = {"kernel": "freebsd", "memory_mib": 96, "cpus": 1, "cpu_sched": "ps", "fs": "ffs", "fs_mib": 8192}


def adversary_host(r: Runner) -> pd.DataFrame:
    """Figure 7 on the host: the same two adversary processes, copying 64 KiB at a time out of
    mappings of their own 1 GiB files, which FFS lays out in their directories' cylinder groups."""
    rows = []
    for n in [0, 1, 2, 3, 4, 6, 8]:
        host = dict(HOST, file=[{"path": f"/p{i}/data", "size_mib": 1024} for i in (1, 2)])
        tasks = [{"name": f"p{i}", "command": "reader", "path": f"/p{i}/data", "bs_kib": 64, "access": "mmap",
                  "think_us": REISSUE_US, "think": "adversary", "adversary_quick": n, "adversary_wait_us": ADVERSARY_WAIT_US}
                 for i in (1, 2)]
        for label, sched in SCHEDULERS.items():
            scn = {"device": {"preset": DESKSTAR}, "host": host, "task": tasks, "scheduler": [sched],
                   "run": {"duration_s": DURATION_S, "seed": 1}}
            s = r.run(f"fig7-host-n{n}-{label}", scn)
            rows.append({"n": n, "scheduler": label, "throughput_mb_s": s["throughput_mb_s"],
                         "seek_ms": s["seek"]["mean_ms"] if "seek" in s else 0.0})
    return pd.DataFrame(rows)


# -- applications (sections 4.3-4.7): the scenario files in experiments/iyer2001/ -------------

def find_experiments() -> Path:
    """The application scenarios installed with the package (experiments/iyer2001 in a
    checkout); an error, not a silent omission, when they are missing."""
    from ..catalogues import catalogue_dir

    c = catalogue_dir("iyer2001")
    if not (c / "andrew.toml").is_file():
        raise ScenarioError(f"{c / 'andrew.toml'}: no such file: the package's iyer2001 catalogue is incomplete (reinstall iosched)")
    return c


# Experiments whose original-scheduler figure varies a lot with the seed (Andrew's Aged-SPTF
# scan time is bimodal; a 60 s Apache run is noisy): run with these seeds, report the median.
SEEDED = ("andrew", "andrew-scan", "apache-read", "apache-mmap", "apache-default")
SEEDS = [1, 2, 3, 4, 5]


def _seeded(path: Path) -> bool:
    return path.stem in SEEDED


def _app_tasks(files: list) -> int:
    return sum(len(Scenario.from_file(f).split()) * (len(SEEDS) if _seeded(f) else 1) for f in files)


def _run_seeds(paths: list, pool: Pool, progress=None) -> dict:
    """Runs every scheduler of each scenario file (one task per scheduler and seed), each file with SEEDS if it is in SEEDED (else its own seed); returns
    {file stem: {label: [summary per seed]}}."""
    parts = [(p, part, seed) for p in paths for part in Scenario.from_file(p).split() for seed in (SEEDS if _seeded(p) else [None])]
    results = pool.map([(part.text, str(p), seed) for p, part, seed in parts], progress)
    out: dict = {}
    for (p, _, _), summaries in zip(parts, results):
        for s in summaries:
            out.setdefault(p.stem, {}).setdefault(s["scheduler"], []).append(s)
    return out


def _served_mb_s(s: dict) -> float:
    """Application-observed throughput (the paper's metric): bytes the reads returned, cache hits
    included, per second (MB = 10^6 B)."""
    return (s.get("bytes_served") or 0) / 1e6 / max(s["elapsed_s"], 1e-9)


def _clients(summary: dict) -> list:
    return [p for p in summary["processes"] if p["name"] != "syncer"]


def _tps(s: dict) -> float:
    return sum(p["requests"] for p in _clients(s) if p["name"] != "flush") / max(s["elapsed_s"], 1e-9)


def _host_tasks(s: dict) -> dict:
    return {t["name"]: t for t in s["host"]["tasks"]}


def _phase_s(s: dict, phase: str) -> float:
    """A phase's time on the host: the mean over the clients of their phase task's time."""
    ts = [t["elapsed_s"] for n, t in _host_tasks(s).items() if n.rstrip("0123456789") == phase and t["elapsed_s"] is not None]
    return sum(ts) / len(ts) if ts else float("nan")


def _reduction(before: float, after: float) -> float:
    """The paper's "X% faster" for a time: the fraction of the time saved."""
    return 1 - after / before if before else float("nan")


def applications(directory: Path, pool: Optional[Pool] = None, progress=None, adversary: Optional[tuple] = None) -> tuple:
    """Runs the application scenarios on the workload's own kernel model (directory/*.toml)
    and on the host (directory/host/*.toml); returns (markdown, rows)."""
    pool = pool or Pool()
    old_files = sorted(directory.glob("*.toml"))
    host_files = sorted((directory / "host").glob("*.toml"))
    n_old = _app_tasks(old_files)
    prog_host = (lambda done, total: progress(n_old + done, total)) if progress else None
    old_all = _run_seeds(old_files, pool, progress)
    host_all = _run_seeds(host_files, pool, prog_host)
    # Single-seed experiments: their one summary.
    old = {k: {l: v[0] for l, v in d.items()} for k, d in old_all.items()}
    host = {k: {l: v[0] for l, v in d.items()} for k, d in host_all.items()}
    O, A = "aged-sptf", "anticipatory(aged-sptf)"
    md = ["## Applications (sections 4.3-4.7)\n",
          "Each experiment twice: on the workload's own kernel model (`experiments/iyer2001/*.toml`: a shared LRU page "
          "cache, FreeBSD's read-ahead, files as contiguous extents placed by the model, no metadata, no CPU contention) "
          "and on the host (`experiments/iyer2001/host/*.toml`: FreeBSD 4.3's read path through the host's page cache of "
          "96 MiB, FFS laying the files out in cylinder groups with inode, directory and indirect blocks read when not "
          "cached and new inodes and directory entries written synchronously, delayed writes by the syncer, one CPU "
          "shared by processor sharing). Verdicts use the paper's own metrics: a time's \"X% faster\" is the fraction "
          "of the time saved; throughput is application-observed (bytes the reads returned, cache hits included, per "
          f"second). Andrew and Apache, whose figures vary with the seed, ran with seeds {SEEDS[0]}-{SEEDS[-1]}: the "
          "median is shown, with the range. The verdict column judges the host. AS = the anticipatory scheduler around "
          "the same policy.\n"]
    table = []

    def seeds_range(xs: list, fmt: str) -> str:
        return f"{fmt.format(median(xs))} (seeds: {fmt.format(min(xs))} to {fmt.format(max(xs))})"

    # 4.3 Andrew: the scan phase's time.
    def andrew_saved(runs: dict, phase_time) -> list:
        return [_reduction(phase_time(o), phase_time(a)) for o, a in zip(runs[O], runs[A])]
    old_saved = andrew_saved(old_all["andrew"], lambda x: x["elapsed_s"])
    full_saved = andrew_saved(host_all["andrew"], lambda x: _phase_s(x, "scan"))
    scan_saved = andrew_saved(host_all["andrew-scan"], lambda x: _phase_s(x, "scan"))
    hf = host["andrew"]
    table.append(["4.3 Andrew: scan phase time saved by AS", "54%", seeds_range(old_saved, "{:.0%}"),
                  f"whole benchmark: {seeds_range(full_saved, '{:.0%}')}; scan phase alone: {seeds_range(scan_saved, '{:.0%}')}",
                  _verdict(0.4 < median(full_saved) < 0.7)])
    # 4.4 Apache: application-observed throughput.
    for variant, paper, lo, hi in [("read", "+29%", 0.15, 0.45), ("mmap", "+71%", 0.45, 1.0), ("default", "+59% (2.2 -> 3.5 MB/s)", 0.4, 0.8)]:
        name = f"apache-{variant}"
        g_old = [_served_mb_s(a) / _served_mb_s(o) - 1 for o, a in zip(old_all[name][O], old_all[name][A])]
        g = [_served_mb_s(a) / _served_mb_s(o) - 1 for o, a in zip(host_all[name][O], host_all[name][A])]
        ho = median([_served_mb_s(x) for x in host_all[name][O]])
        ha = median([_served_mb_s(x) for x in host_all[name][A]])
        oo = median([_served_mb_s(x) for x in old_all[name][O]])
        oa = median([_served_mb_s(x) for x in old_all[name][A]])
        table.append([f"4.4 Apache ({variant}{', the default configuration' if variant == 'default' else ''}): throughput", paper,
                      f"{oo:.1f} -> {oa:.1f} MB/s, gain {seeds_range(g_old, '{:+.0%}')}",
                      f"{ho:.1f} -> {ha:.1f} MB/s, gain {seeds_range(g, '{:+.0%}')}", _verdict(lo < median(g) < hi)])
    apache_rows, ratios = [], []
    for variant in ["read", "mmap", "default"]:
        name = f"apache-{variant}"
        for where, runs in [("model", old_all), ("host", host_all)]:
            cells = []
            for label in (O, A):
                served = median([_served_mb_s(x) for x in runs[name][label]])
                disk = median([x["throughput_mb_s"] for x in runs[name][label]])
                ratios.append(served / max(disk, 1e-9))
                cells += [f"{served:.1f}", f"{disk:.2f}"]
            apache_rows.append([variant, where] + cells)
    apache_md = ("\n### Apache: what the processes got and what the disk read\n\nMedians over the seeds, MB/s. Served = bytes "
                 "the processes' reads and copies returned (the paper's application-observed throughput); disk = bytes the disk "
                 "transferred. Most requests hit the page cache (the document tree is about 137 MB), so the two differ by "
                 f"{min(ratios):.1f} to {max(ratios):.1f} times, and a scheduler can raise one while lowering the other.\n\n"
                 + markdown_table(["mode", "where", "Aged-SPTF served", "disk", "AS served", "disk"], apache_rows)
                 + "\n\nOn the model, AS doubles the disk's rate with mmap yet lowers what the processes get; with the disk's "
                 "rate as the metric the model gave +94% (the paper: +71%), with the paper's metric it gives the loss above. "
                 "Why the model's mmap processes get less when the disk reads more is not explained yet (the host does not "
                 "show it).\n")
    # 4.5 GnuLD.
    def gnuld(run):
        one = run["gnuld-1"][O]["elapsed_s"]
        two = run["gnuld-2"]
        return one, two[O]["elapsed_s"], two[A]["elapsed_s"], two["clook"]["elapsed_s"], two["anticipatory(clook)"]["elapsed_s"]
    g_old, g_host = gnuld(old), gnuld(host)
    table.append(["4.5 GnuLD: two instances' time over one's (Aged-SPTF)", "5.5x (1.8 s for one)",
                  f"{g_old[1] / g_old[0]:.2f}x ({g_old[0]:.2f} s -> {g_old[1]:.2f} s)",
                  f"{g_host[1] / g_host[0]:.2f}x ({g_host[0]:.2f} s -> {g_host[1]:.2f} s)", _verdict(4.0 < g_host[1] / g_host[0] < 7.0)])
    for label, (io, ia), paper, lo, hi in [("Aged-SPTF", (1, 2), "68%", 0.5, 0.8), ("C-LOOK", (3, 4), "48%", 0.3, 0.65)]:
        r_old, r_host = _reduction(g_old[io], g_old[ia]), _reduction(g_host[io], g_host[ia])
        table.append([f"4.5 GnuLD: two instances' time saved by AS ({label})", paper,
                      f"{r_old:.0%} ({g_old[io]:.2f} -> {g_old[ia]:.2f} s)", f"{r_host:.0%} ({g_host[io]:.2f} -> {g_host[ia]:.2f} s)",
                      _verdict(lo < r_host < hi)])
    # 4.6 TPC-B.
    for name, label, paper, lo, hi in [("tpcb-update-1", "update, one database", "+2%", -0.03, 0.07),
                                       ("tpcb-update-2", "update, two databases", "+30%", 0.15, 0.45),
                                       ("tpcb-select-1", "select, one database", "+5%", -0.02, 0.12),
                                       ("tpcb-select-2", "select, two databases", "+60% (61 -> 98 tps)", 0.4, 0.8)]:
        o, a = old[name][O], old[name][A]
        ho, ha = host[name][O], host[name][A]
        g_o, g_h = _tps(a) / _tps(o) - 1, _tps(ha) / _tps(ho) - 1
        table.append([f"4.6 TPC-B {label}: transactions/s", paper, f"{_tps(o):.0f} -> {_tps(a):.0f} tps ({g_o:+.0%})",
                      f"{_tps(ho):.0f} -> {_tps(ha):.0f} tps ({g_h:+.0%})", _verdict(lo < g_h < hi)])
    # Figure 7 on the host beside the model's.
    if adversary is not None:
        f7_old, f7_host = adversary
        def worst(df):
            piv = df.pivot(index="n", columns="scheduler", values="throughput_mb_s")
            return min((row["anticipatory"] / row["original"], n) for n, row in piv.iterrows() if 1 <= n <= 4)
        w_old, w_host = worst(f7_old), worst(f7_host)
        table.append(["Figure 7 adversary: AS's least gain for n in 1-4", "about -20%", f"{w_old[0] - 1:+.0%} (n = {w_old[1]})",
                      f"{w_host[0] - 1:+.0%} (n = {w_host[1]})", _verdict(0.6 < w_host[0] < 1.0)])
    md.append(markdown_table(["experiment", "paper", "workload's model", "host", "verdict (host)"], table))
    md.append(apache_md)

    # Figure 8: every phase of the whole benchmark on the host.
    phases = ["mkdir", "cp", "stat", "scan", "gcc"]
    paper8 = {"mkdir": "16%", "cp": "5%", "stat": "5%", "scan": "54%", "gcc": "-1.7%"}
    prow = []
    for ph in phases:
        t_o, t_a = _phase_s(hf[O], ph), _phase_s(hf[A], ph)
        prow.append([ph, paper8[ph], f"{t_o:.1f}", f"{t_a:.1f}", f"{_reduction(t_o, t_a):+.0%}"])
    tasks_o = _host_tasks(hf[O])
    meta = sum(t["meta_pages_read"] for n, t in tasks_o.items() if n.startswith("scan"))
    data = sum(t["data_pages_read"] for n, t in tasks_o.items() if n.startswith("scan"))
    md.append("\n### Figure 8 on the host: the Andrew benchmark's phases\n\n"
              "Two clients, each mkdir, cp, stat, scan (grep then wc per directory, each a new process), gcc (each file "
              "compiled to an object, then linked) on its own repository of 500 directories of 71 files; the phase time "
              "is the mean over the clients. The paper gives the time saved by AS per phase.\n\n"
              + markdown_table(["phase", "paper: time saved", "Aged-SPTF s", "AS s", "time saved"], prow)
              + f"\n\nThe scan phase (Aged-SPTF) read {data} data pages and {meta} metadata pages "
              f"({100 * meta / max(1, meta + data):.1f}% metadata). The gcc phase's computation (1 ms per fork + exec, 2 ms "
              "per KiB of source) is an assumption kept small so the run stays short, so gcc does not dominate the total "
              "as in the paper; the verdict is on the scan phase, the paper's headline. (Seed 1; the table above has the seeds' median.)\n")
    md.append("\n### What moved the host's figures\n\n"
              "Controlled runs, one host factor at a time: docs/reproductions/iyer2001/host-notes.md. In short: "
              "**GnuLD, TPC-B with two databases and the Figure 7 adversary** moved because FFS puts the competing files "
              "close together (two new directories go to neighbouring cylinder groups; large files spread over the same "
              "groups), so the original scheduler's switches between processes cost tens of cylinders where the model's "
              "placements (trees 2 GiB apart, databases and adversary files half a disk apart) cost thousands; moving the "
              "model's files to the host's distances gives the host's figures. The paper's 5.5x and 68% need the trees "
              "far apart (8 GiB apart on the model: 3.1x and 42%). **Andrew**: the original scheduler's scan time is "
              "bimodal in the seed on both the model and the host (AS's is steady), and with FFS's neighbouring cylinder "
              "groups most seeds land in the fast mode, hence the wide range; spreading the directories (`fs = \"ext2\"`) "
              "gives 74-82% on every seed tried; CPU contention and the read path do not matter. **Apache**: no host "
              "mechanism costs AS throughput; what the processes get is mostly cache hits, a 60 s run is noisy, and the "
              "seeds' median is small either way; neither side approaches the paper's +29%.\n")
    # 4.7 Stride (on the workload's model).
    st = old["tpcb-stride"]
    srows = []
    for label, s in st.items():
        c = _clients(s)
        tps = sum(p["requests"] for p in c) / s["elapsed_s"]
        disk = c[1]["disk_time_s"] / max(c[0]["disk_time_s"], 1e-9)
        req = c[1]["requests"] / max(c[0]["requests"], 1)
        verdict = _verdict(1.8 <= disk <= 2.2) if "combination" in label or "proportional" in label else "-"
        srows.append([label, f"{tps:.0f}", f"1:{req:.2f}", f"1:{disk:.2f}", verdict])
    md.append("\n### Section 4.7 / Figure 1: Stride with a 1:2 contract (TPC-B select, two databases)\n\n"
              "Paper: without anticipation 60 transactions/s at about 1:1; proportional heuristic 77 tps at 1:2; "
              "combination heuristic (tau = 1 s) 98 tps at 1:2. The contract is in disk time; the verdict checks it "
              "(1:2 within 10%).\n\n"
              + markdown_table(["scheduler", "transactions/s", "requests client1:client2", "disk time client1:client2", "contract 1:2"], srows)
              + "\n\nThe relaxed Stride keeps the clocks (disk time / weight) within tau of each other, so in 60 s the "
              "combination heuristic's ratio may be off 1:2 by about tau = 1 s of the weight-1 client's disk time. Until "
              "this release it held only 1:1.28: Stride forgave a client's lag whenever the other client was served while "
              "it thought between requests (each anticipation timeout did it); the mechanism, the fix and tau against the "
              "ratio: docs/reproductions/iyer2001/stride-notes.md.")
    rows = [{"figure": "apps", "experiment": r[0], "paper": r[1], "model": r[2], "host": r[3], "verdict": r[4]} for r in table]
    return "\n".join(md), rows, old, host


# -- report ---------------------------------------------------------------------------------

def _val(df: pd.DataFrame, **where) -> float:
    sel = df
    for k, v in where.items():
        sel = sel[sel[k] == v]
    return float(sel["throughput_mb_s"].iloc[0])


def _fig4_section(df: pd.DataFrame, title: str, paper: list) -> str:
    rows = []
    for (pattern, access), g in df.groupby(["pattern", "access"], sort=False):
        o = g[g.scheduler == "original"].iloc[0]
        a = g[g.scheduler == "anticipatory"].iloc[0]
        rows.append([pattern, access, f"{o.throughput_mb_s:.1f}", f"{o.utilization_busy:.0%}",
                     f"{a.throughput_mb_s:.1f}", f"{a.utilization_busy:.0%}", _pct(a.throughput_mb_s, o.throughput_mb_s)])
    table = markdown_table(["pattern", "access", "original MB/s", "util", "anticipatory MB/s", "util", "gain"], rows)
    claims = markdown_table(["paper", "ours", "verdict"], paper)
    return f"## {title}\n\n{table}\n\n{claims}\n"


def _verdict(ok: bool) -> str:
    return "reproduced" if ok else "differs"


def _plot_sweep(df: pd.DataFrame, x: str, title: str, path: Path, xlabel: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for label, g in df.groupby("scheduler", sort=False):
        ax.plot(g[x], g["throughput_mb_s"], marker="o", label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("throughput (MB/s)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def reproduce(out_dir: "str | Path", quick: bool = False, progress: Optional[Callable[[int, int], None]] = None,
              pool: Optional[Pool] = None) -> Path:
    """Runs every experiment (in `pool`: default, one process per CPU) and writes report.md,
    runs.csv, the plots and every point's scenario into `out_dir`; returns the report's path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pool = pool or Pool()
    r = Runner(out, pool)
    t0 = time.perf_counter()
    thinks = [0, 2, 4, 8, 12] if quick else [0, 1, 2, 3, 4, 6, 8, 10, 12, 15, 20]
    apps_dir = None if quick else find_experiments()

    def figures():
        return (fig4(r), fig4(r, CHEETAH, "fig13"), think_sweep(r, "fig5", thinks), think_sweep(r, "fig6", thinks),
                think_sweep(r, "random", thinks), adversary(r), timer_granularity(r), estimators(r), adversary_host(r))

    figures()  # plan
    app_files = (sorted(apps_dir.glob("*.toml")) + sorted((apps_dir / "host").glob("*.toml"))) if apps_dir is not None else []
    app_tasks = _app_tasks(app_files)
    total = len(r.planned) + app_tasks
    r.execute(progress=(lambda done, _: progress(done, total)) if progress else None)
    f4, f13, f5, f6, fr, f7, ft, fe, f7h = figures()
    apps_md = None
    if apps_dir is not None:
        offset = len(r.planned)
        apps_md = applications(apps_dir, pool, (lambda done, _: progress(offset + done, total)) if progress else None, (f7, f7h))[0]
    wall = time.perf_counter() - t0

    sections = [
        f"# Iyer & Druschel 2001: Anticipatory scheduling (microbenchmarks)\n\n"
        f"Generated by `iosched reproduce iyer2001`{' --quick' if quick else ''}: {r.count} runs of "
        f"{DURATION_S} s simulated time in {wall:.1f} s. Disk: {DESKSTAR} (section 4.8: {CHEETAH}). "
        "Original = Aged-SPTF (1 s latency bound); anticipatory = the anticipation core with the "
        "Aged-SPTF heuristic. Two processes, 64 KiB synchronous reads of separate 1 GiB files "
        "(placed at the start and the middle of the disk), each issuing its next request "
        f"{REISSUE_US:.0f} us after the previous one completes plus the experiment's pause t "
        "(section 2: 'a few hundred microseconds'). Utilization = fraction of time the disk "
        "is servicing requests. Every point's scenario is in scenarios/.\n"
    ]
    # Figure 4
    o_seq = _val(f4, pattern="sequential", access="mmap", scheduler="original")
    a_seq = _val(f4, pattern="sequential", access="mmap", scheduler="anticipatory")
    o_alt = _val(f4, pattern="alternate", access="mmap", scheduler="original")
    a_alt = _val(f4, pattern="alternate", access="mmap", scheduler="anticipatory")
    o_rnd = _val(f4, pattern="random", access="mmap", scheduler="original")
    a_rnd = _val(f4, pattern="random", access="mmap", scheduler="anticipatory")
    paper4 = [
        ["mmap seq: original about 5 MB/s", f"{o_seq:.1f} MB/s", _verdict(abs(o_seq - 5) / 5 < 0.3)],
        ["mmap seq: anticipatory about 20 MB/s (max 21), 4x", f"{a_seq:.1f} MB/s, {a_seq / o_seq:.1f}x", _verdict(abs(a_seq - 20) / 20 < 0.15)],
        ["alter: original about 5 MB/s; anticipatory half the bandwidth (~10.5)", f"{o_alt:.1f} -> {a_alt:.1f} MB/s", _verdict(abs(a_alt - 10.5) / 10.5 < 0.25)],
        ["random: anticipatory +28% (read) / +30% (mmap)", f"{_pct(a_rnd, o_rnd)} (mmap)", _verdict(0.15 < a_rnd / o_rnd - 1 < 0.45)],
    ]
    o_rs = _val(f4, pattern="sequential", access="read", scheduler="original")
    a_rs = _val(f4, pattern="sequential", access="read", scheduler="anticipatory")
    paper4.append(["read seq: about 21 MB/s with prefetch; +5% with anticipation", f"{o_rs:.1f} -> {a_rs:.1f} MB/s ({_pct(a_rs, o_rs)})",
                   _verdict(abs(a_rs - 21) / 21 < 0.15 and -0.02 < a_rs / o_rs - 1 < 0.12)])
    sections.append(_fig4_section(f4, "Figure 4: access patterns (section 4.1)", paper4)
                    + "\nWhy ours differ. *Original 3.5 vs about 5 MB/s*: by default the two files lie half a disk apart "
                    "(file i of n at i/n of the disk), so every switch costs about 11 ms of seek plus half a revolution "
                    "(4.2 ms) before the 3 ms transfer; the paper's estimate (9 ms average seek + 3 ms) ignores rotation "
                    "and its files were probably closer. *Random +63% vs +30%*: the same long inter-file repositioning "
                    "makes the switches anticipation avoids a larger share of the time. *read() sequential*: the "
                    "prefetches keep a request of the streaming process queued, and SPTF (whose estimate knows the "
                    "drive's buffer) serves them before the other file's; the best rates (about 17-19 MB/s against "
                    "the paper's 21) are lower because the second file lies in a slower middle zone and Aged-SPTF's "
                    "1 s bound forces a switch every second.\n")
    # Figure 13 (Cheetah)
    o13 = _val(f13, pattern="sequential", access="mmap", scheduler="original")
    a13 = _val(f13, pattern="sequential", access="mmap", scheduler="anticipatory")
    gains = [(_val(f13, pattern=p, access="mmap", scheduler="anticipatory") / _val(f13, pattern=p, access="mmap", scheduler="original"), p)
             for p in ["sequential", "alternate", "random"]]
    best = max(gains)
    paper13 = [
        ["15,000 rpm disk: maximum bandwidth 55% above the IDE disk", f"anticipatory seq {a13:.1f} vs {a_seq:.1f} MB/s: {_pct(a13, a_seq)}", _verdict(0.3 < a13 / a_seq - 1 < 0.8)],
        ["deceptive idleness gives nearly the same low throughput on both disks", f"original seq {o13:.1f} vs {o_seq:.1f} MB/s", _verdict(abs(o13 / o_seq - 1) < 0.5)],
        ["gains up to 5.5x on the microbenchmark", f"best gain {best[0]:.1f}x ({best[1]})", _verdict(4.0 < best[0] < 7.0)],
    ]
    sections.append(_fig4_section(f13, "Figure 13 (section 4.8): the same on the 15,000 rpm Seagate Cheetah", paper13)
                    + "\nWhy ours differ. The Cheetah preset's media rate (37.4-48.9 MB/s, from the drive's manual) is 2.2x the "
                    "Deskstar model's, so its best case is 136% higher where the paper measured 55%: the paper's throughput "
                    "went through FreeBSD's file system and an Ultra160 controller on an 800 MHz host, which this model does "
                    "not have. Deceptive idleness costs proportionally the same on both disks: without anticipation each "
                    "64 KiB request pays a long seek and half a revolution, which the faster disk shortens (7.6 vs 3.5 MB/s).\n")
    # Figures 5, 6, random
    for df, fid, title, claims in [
        (f5, "fig5", "Figure 5: both processes think t ms between requests", "original about 5 MB/s up to t = 8 ms; anticipatory 4x at t = 0, declining; the two meet near t = 8 ms"),
        (f6, "fig6", "Figure 6: one process thinks t ms, the other none", "anticipatory well above original throughout; dips, then rises back to the maximum beyond about 4 ms (waits only for the quick process)"),
        (fr, "random", "Section 4.2.3: both think uniformly on [0, t] ms", "almost as well as the deterministic counterpart (Figure 5)"),
    ]:
        _plot_sweep(df, "think_ms", title, out / f"{fid}.png", "think time t (ms)")
        piv = df.pivot(index="think_ms", columns="scheduler", values="throughput_mb_s")
        rows = [[f"{t:g}", f"{row['original']:.1f}", f"{row['anticipatory']:.1f}", _pct(row["anticipatory"], row["original"])] for t, row in piv.iterrows()]
        cross = next((t for t, row in piv.iterrows() if row["anticipatory"] <= row["original"] * 1.05), None)
        sections.append(f"## {title}\n\nPaper: {claims}.\n\n" + markdown_table(["t ms", "original MB/s", "anticipatory MB/s", "gain"], rows)
                        + f"\n\nOurs: anticipation's gain falls to within 5% of the original at t = {cross if cross is not None else '> ' + str(piv.index.max())} ms.\n\n![{fid}]({fid}.png)\n")
    # Figure 7
    _plot_sweep(f7, "n", "Figure 7: adversary (n quick requests, then a wait past the timeout)", out / "fig7.png", "n")
    piv = f7.pivot(index="n", columns="scheduler", values="throughput_mb_s")
    worst = min((row["anticipatory"] / row["original"], n) for n, row in piv.iterrows() if 1 <= n <= 4)
    pivh = f7h.pivot(index="n", columns="scheduler", values="throughput_mb_s")
    worst_h = min((row["anticipatory"] / row["original"], n) for n, row in pivh.iterrows() if 1 <= n <= 4)
    rows = [[n, f"{row['original']:.1f}", f"{row['anticipatory']:.1f}", _pct(row["anticipatory"], row["original"]),
             f"{pivh.loc[n, 'original']:.1f}", f"{pivh.loc[n, 'anticipatory']:.1f}", _pct(pivh.loc[n, "anticipatory"], pivh.loc[n, "original"])]
            for n, row in piv.iterrows()]
    sections.append("## Figure 7: adversary\n\nPaper: for n between 1 and 4 the anticipatory scheduler is only about 20% worse than the original.\n\n"
                    "Left: the workload's model (two 1 GiB files at the start and the middle of the disk, each access one 64 KiB "
                    "request); right: the host (the files laid out by FFS on an 8 GiB partition, each 64 KiB copy out of the "
                    "mapping faulting through vm_fault's read-behind/ahead window).\n\n"
                    + markdown_table(["n", "model: original MB/s", "AS MB/s", "gain", "host: original MB/s", "AS MB/s", "gain"], rows)
                    + f"\n\nOn the host the least gain for n in 1-4 is {worst_h[0] - 1:+.0%} (n = {worst_h[1]}): "
                    + _verdict(0.6 < worst_h[0] < 1.0)
                    + f"; on the model {worst[0] - 1:+.0%} (n = {worst[1]}). Each cycle wastes one timeout (the adversary "
                    "pauses 16 ms, just past the 15 ms the heuristic can wait) but saves the inter-file repositioning for its "
                    "n quick requests. On the model the files lie half a disk apart (about 11 ms of seek plus rotation per "
                    "switch), which outweighs the wasted wait; on the host FFS puts "
                    f"both files near the start of the partition (mean seek {f7h.seek_ms.mean():.1f} ms under the original "
                    "scheduler), so a switch costs little and the wasted timeouts weigh more.\n\n![fig7](fig7.png)\n")
    spread = ft.throughput_mb_s.max() / ft.throughput_mb_s.min() - 1
    rows = [[t, w, f"{v:.2f}"] for t, w, v in ft[["timer_us", "workload", "throughput_mb_s"]].itertuples(index=False)]
    sections.append("## Timer granularity (section 4.2.4)\n\nPaper: with timers of 50 us, 200 us, 500 us and 1 ms the greatest difference was 10% (peak at 500 us).\n\n"
                    + markdown_table(["timer us", "workload", "anticipatory MB/s"], rows)
                    + f"\n\nOurs: greatest difference {spread:.0%} ({_verdict(spread <= 0.15)}).\n")
    piv = fe.pivot(index="pattern", columns="estimator", values="throughput_mb_s")
    rows = [[p, f"{row['model']:.2f}", f"{row['calibrated']:.2f}", _pct(row["calibrated"], row["model"])] for p, row in piv.iterrows()]
    sections.append("## Positioning-time estimators (section 3.6)\n\nPaper: a calibrated LBA-distance curve (about 75% accurate) "
                    "is sufficient, 'given the insensitivity of the anticipation heuristic'. Anticipatory Aged-SPTF, mmap, "
                    "Figure 4's patterns:\n\n" + markdown_table(["pattern", "model MB/s", "calibrated MB/s", "difference"], rows)
                    + "\n\n(`iosched calibrate --device ibm-deskstar-34gxp` measures the curve and its accuracy.)\n")
    if apps_md is not None:
        sections.append(apps_md)
    else:
        sections.append("## Applications (sections 4.3-4.7)\n\nNot run with --quick.\n")
    report = out / "report.md"
    report.write_text("\n".join(sections))
    pd.concat([f4.assign(figure="fig4"), f13.assign(figure="fig13"), f5.assign(figure="fig5"), f6.assign(figure="fig6"),
               fr.assign(figure="random"), ft.assign(figure="timer")] + [f7.assign(figure="fig7")]).to_csv(out / "runs.csv", index=False)
    f7h.assign(figure="fig7-host").to_csv(out / "runs-host.csv", index=False)
    return report
