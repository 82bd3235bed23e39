"""Markdown rows for docs/kernel-mode.md from `iosched kernel --out DIR` directories:

    python experiments/kernel/table.py LABEL=DIR ...

Two tables. First, aggregate MB/s: guest, sim, sim+think, sim+path (mean ± sd over the
repeats, ratios of the means), the guest path's latencies fed to sim+path (p50 / p90 µs) and
the drive's cache hits (mount / sim / sim+path). Second, per job MB/s and clat p99 (guest /
sim+path), the drive's switches (mount / sim / sim+path), and the mount's drive against the
simulator's drive replaying the mount's requests (MB/s over the mount's whole span). Everything
is recomputed from the files of each repeat; sim+path is run here from the mount's requests
when the directory predates it (the same computation `iosched kernel` does).
"""

import json
import sys
from pathlib import Path

from iosched.kernel import compare, workload
from iosched.kernel.run import run_simulator


def _sim_path(prefix: Path, doc: dict, seed: int) -> "tuple[dict, Path]":
    """sim+path's summary and requests CSV: from the directory, else run now as `iosched kernel`
    runs it."""
    summary_path, csv_path = Path(f"{prefix}.sim-path.summary.json"), Path(f"{prefix}.sim-path.requests.csv")
    if summary_path.exists() and csv_path.exists():
        return json.loads(summary_path.read_text()), csv_path
    w = workload.load(Path(doc["job"]), doc["device"])
    sim_tunables, _ = workload.split_tunables(list(doc["tunables"].items()), doc["scheduler"])
    path_us = compare.path_latencies_us(compare.read_csv_rows(Path(f"{prefix}.mount.requests.csv")))
    return run_simulator(w, doc["scheduler"], sim_tunables, doc["queue_depth"], 0.0, seed,
                         doc.get("queue_order") or "rpo", path_us, prefix, "sim-path")


def per_repeat(prefix: Path, doc: dict, repeat: int) -> dict:
    fio = json.loads(Path(f"{prefix}.fio.json").read_text())
    sim = json.loads(Path(f"{prefix}.sim.summary.json").read_text())
    simt = json.loads(Path(f"{prefix}.sim-think.summary.json").read_text())
    simp, simp_csv = _sim_path(prefix, doc, repeat)
    names = [p["name"] for p in sim["processes"]]
    g, s, st, sp = compare.fio_side(fio, names), compare.sim_side(sim), compare.sim_side(simt), compare.sim_side(simp)
    mount_rows = compare.read_csv_rows(Path(f"{prefix}.mount.requests.csv"))
    mv = compare.drive_view(mount_rows)
    sv = compare.drive_view(compare.read_csv_rows(Path(f"{prefix}.sim.requests.csv"), run=0))
    pv = compare.drive_view(compare.read_csv_rows(simp_csv, run=0))
    mount = json.loads(Path(f"{prefix}.mount.summary.json").read_text())["runs"][0]
    replay = compare.replay_mount(Path(f"{prefix}.mount.requests.csv"), Path(f"{prefix}.replay.requests.csv"),
                                  doc["device"], doc["queue_depth"], doc.get("queue_order") or "rpo")
    lat = sorted(compare.path_latencies_us(mount_rows)) or [0.0]
    out = {"agg": (g.aggregate_mb_s, s.aggregate_mb_s, st.aggregate_mb_s, sp.aggregate_mb_s),
           "switches": (mv["switches"], sv["switches"], pv["switches"]),
           "hits": (mv["cache_hits"], sv["cache_hits"], pv["cache_hits"]),
           "replay": (mount["throughput_mb_s"], replay["throughput_mb_s"]),
           "lat": (lat[len(lat) // 2], lat[int(len(lat) * 0.9)]), "jobs": {}}
    for j in g.jobs:
        pj = next(x for x in sp.jobs if x.name == j.name)
        out["jobs"][j.name] = (j.mb_s, pj.mb_s, j.p99_ms, pj.p99_ms)
    return out


def pm(xs):
    m, sd = compare.mean_sd(list(xs))
    return compare.fmt_pm(m, sd), m


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "-"


def main(args):
    first, second = [], []
    for arg in args:
        label, _, d = arg.partition("=")
        d = Path(d)
        doc = json.loads((d / "comparison.json").read_text())
        reps = [per_repeat(d / f"rep{r['repeat']}", doc, r["repeat"]) for r in doc["repeats"]]
        (ga, gm), (sa, sm), (ta, tm), (pa, pmn) = (pm(r["agg"][k] for r in reps) for k in range(4))
        lat = f"{pm(r['lat'][0] for r in reps)[0]} / {pm(r['lat'][1] for r in reps)[0]}"
        hits = " / ".join(pm(r["hits"][k] for r in reps)[0] for k in range(3))
        first.append(f"| {label} | {len(reps)} | {ga} | {sa} | {ratio(gm, sm)} | {ta} | {ratio(gm, tm)} | {pa} | "
                     f"{ratio(gm, pmn)} | {lat} | {hits} |")
        jobs = list(reps[0]["jobs"])
        per_job = "; ".join(f"{k} {pm(r['jobs'][k][0] for r in reps)[0]} / {pm(r['jobs'][k][1] for r in reps)[0]}"
                            for k in jobs)
        p99 = "; ".join(f"{k} {pm(r['jobs'][k][2] for r in reps)[0]} / {pm(r['jobs'][k][3] for r in reps)[0]}"
                        for k in jobs)
        sw = " / ".join(pm(r["switches"][k] for r in reps)[0] for k in range(3))
        (rm, rmm), (rs, rsm) = pm(r["replay"][0] for r in reps), pm(r["replay"][1] for r in reps)
        second.append(f"| {label} | {per_job} | {p99} | {sw} | {rm} / {rs} ({ratio(rmm, rsm)}) |")
    print("| workload, scheduler | n | guest MB/s | sim | g/sim | sim+think | g/(sim+think) | sim+path | g/(sim+path) "
          "| path latency p50 / p90 µs | cache hits guest / sim / sim+path |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(first))
    print()
    print("| workload, scheduler | per job MB/s guest / sim+path | clat p99 ms guest / sim+path "
          "| switches guest / sim / sim+path | mount / replay MB/s |")
    print("|---|---|---|---|---|")
    print("\n".join(second))


if __name__ == "__main__":
    main(sys.argv[1:])
