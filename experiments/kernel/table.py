"""Markdown rows for docs/kernel-mode.md from `iosched kernel --out DIR` directories:

    python experiments/kernel/table.py LABEL=DIR ...

Per directory: aggregate MB/s (guest, sim, sim+think: mean ± sd over the repeats, ratios of the
means), per-job MB/s and clat p99, the drive's switches and cache hits (mount vs sim), and the
mount's drive against the simulator's drive replaying the mount's requests (MB/s over the
mount's whole span, cache hits). Everything is recomputed from the files of each repeat.
"""

import json
import sys
from pathlib import Path

from iosched.kernel import compare


def per_repeat(d: Path, prefix: Path, doc: dict) -> dict:
    fio = json.loads(Path(f"{prefix}.fio.json").read_text())
    sim = json.loads(Path(f"{prefix}.sim.summary.json").read_text())
    simt = json.loads(Path(f"{prefix}.sim-think.summary.json").read_text())
    names = [p["name"] for p in sim["processes"]]
    g, s, st = compare.fio_side(fio, names), compare.sim_side(sim), compare.sim_side(simt)
    mv = compare.drive_view(compare.read_csv_rows(Path(f"{prefix}.mount.requests.csv")))
    sv = compare.drive_view(compare.read_csv_rows(Path(f"{prefix}.sim.requests.csv"), run=0))
    mount = json.loads(Path(f"{prefix}.mount.summary.json").read_text())["runs"][0]
    rp = Path(f"{prefix}.replay.requests.csv")
    replay = compare.replay_mount(Path(f"{prefix}.mount.requests.csv"), rp, doc["device"], doc["queue_depth"],
                                  doc.get("queue_order") or "rpo")
    out = {"agg": (g.aggregate_mb_s, s.aggregate_mb_s, st.aggregate_mb_s),
           "switches": (mv["switches"], sv["switches"]), "hits": (mv["cache_hits"], sv["cache_hits"]),
           "replay": (mount["throughput_mb_s"], replay["throughput_mb_s"], mv["cache_hits"], replay["cache_hits"]),
           "think": (mount.get("think_us") or {}).get("p50")}
    for j in g.jobs:
        sj = next(x for x in s.jobs if x.name == j.name)
        out[j.name] = (j.mb_s, sj.mb_s, j.p99_ms, sj.p99_ms)
    return out


def pm(xs):
    m, sd = compare.mean_sd(list(xs))
    return compare.fmt_pm(m, sd), m


def main(args):
    for arg in args:
        label, _, d = arg.partition("=")
        d = Path(d)
        doc = json.loads((d / "comparison.json").read_text())
        reps = [per_repeat(d, d / f"rep{r['repeat']}", doc) for r in doc["repeats"]]
        ga, gm = pm(r["agg"][0] for r in reps)
        sa, sm = pm(r["agg"][1] for r in reps)
        ta, tm = pm(r["agg"][2] for r in reps)
        jobs = [k for k in reps[0] if k not in ("agg", "switches", "hits", "replay", "think")]
        per_job = "; ".join(
            f"{k} {pm(r[k][0] for r in reps)[0]} / {pm(r[k][1] for r in reps)[0]}" for k in jobs)
        p99 = "; ".join(f"{k} {pm(r[k][2] for r in reps)[0]} / {pm(r[k][3] for r in reps)[0]}" for k in jobs)
        sw = f"{pm(r['switches'][0] for r in reps)[0]} / {pm(r['switches'][1] for r in reps)[0]}"
        hits = f"{pm(r['hits'][0] for r in reps)[0]} / {pm(r['hits'][1] for r in reps)[0]}"
        rm, rmm = pm(r["replay"][0] for r in reps)
        rs, rsm = pm(r["replay"][1] for r in reps)
        think = pm(r["think"] for r in reps)[0]
        print(f"| {label} | {len(reps)} | {ga} | {sa} | {gm / sm:.2f} | {ta} | {gm / tm:.2f} | {think} | {per_job} | "
              f"{p99} | {sw} | {hits} | {rm} / {rs} ({rmm / rsm:.2f}) |")


if __name__ == "__main__":
    main(sys.argv[1:])
