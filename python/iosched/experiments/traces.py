"""`iosched reproduce traces`: real block traces replayed under every scheduler (issue 15).

The WebSearch and TPC-C samples (MQSim's small traces, derived from the UMass WebSearch and a
TPC-C trace; ../shared/traces/README.md) replayed on a 7200 rpm drive (the Maxtor STM332061 preset,
320 GB: it holds TPC-C's 233 GB span without remapping) under noop, deadline, mq-deadline, kyber,
C-LOOK, SPTF, Aged-SPTF, anticipatory (Iyer & Druschel, around Aged-SPTF), LAS, CAS, CFQ, BFQ and
BFQ+, in four settings:

- open loop at the trace's own times (both traces arrive faster than one disk serves random
  requests: TPC-C at about 6,500 requests/s, WebSearch about 410/s: a growing queue);
- open loop with the times stretched so that the mean arrival rate is 100 requests/s (the
  time scale is computed from the trace, not chosen per result);
- the same with the drive queueing 32 commands (NCQ, its own rotational ordering);
- per-stream dependent replay (a stream's next request after its previous one completes; these
  traces have no completion times, so a request goes at max(completion, previous issue + gap)).

Then `iosched advise` on each trace (open loop at 100 requests/s, the mixed objective). The traces
are read from the directory given at run time (`--traces`); a missing one is skipped with a note.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable, List, Optional

from ..pool import Pool
from ..trace_replay import trace_scenario
from .block import Plan
from .seelam2005 import registered_names
from .sweep import markdown_table

DEVICE = "maxtor-stm332061"
TRACES = [("websearch", "mqsim_wsrch-small.trace"), ("tpcc", "mqsim_tpcc-small.trace")]
SCHEDULERS = [
    ("noop", {"name": "noop"}),
    ("deadline", {"name": "deadline"}),
    ("mq-deadline", {"name": "mq-deadline"}),
    ("kyber", {"name": "kyber"}),
    ("C-LOOK", {"name": "clook"}),
    ("SPTF", {"name": "sptf"}),
    ("Aged-SPTF", {"name": "aged-sptf"}),
    ("anticipatory", {"name": "anticipatory", "policy": "aged-sptf"}),
    ("LAS", {"name": "las"}),
    ("CAS", {"name": "cas"}),
    ("CFQ", {"name": "cfq"}),
    ("BFQ", {"name": "bfq"}),
    ("BFQ+", {"name": "bfq-plus"}),
]
TARGET_IOPS = 100.0
# The candidates that never hold the disk idle while requests wait.
WORK_CONSERVING = {"noop", "deadline", "mq-deadline", "kyber", "clook", "sptf", "aged-sptf"}


def traces_dir(traces: "Optional[str | Path]") -> Path:
    """--traces, else the shared rule (python/iosched/paths.py)."""
    from ..paths import traces_dir as shared

    return shared(traces)


def trace_rate(path: Path) -> tuple:
    """(requests, duration_s) of a trace, from its streaming summary."""
    from ..traces import trace_stats

    s = trace_stats(path)
    return s["requests"], s["duration_s"]


def settings(requests: int, duration_s: float) -> List[tuple]:
    scale = (requests / duration_s) / TARGET_IOPS if duration_s > 0 else 1.0
    return [
        ("open, trace times", {"replay": "open"}),
        (f"open, {TARGET_IOPS:.0f}/s (time x {scale:.2f})", {"replay": "open", "time_scale": round(scale, 6)}),
        (f"open, {TARGET_IOPS:.0f}/s, NCQ 32", {"replay": "open", "time_scale": round(scale, 6), "drive_queue_depth": 32}),
        ("dependent", {"replay": "dependent"}),
    ]


def _key(name: str, si: int, label: str, table: dict) -> str:
    return f"{name}-s{si}-{table['name']}-{label.replace('+', 'plus').replace(' ', '_')}"


def findings(p: Plan, found: list, plans: dict, scheds: list, advice: dict) -> str:
    """What the tables show, with the mechanism behind each point (the numbers come from this
    run's results, so the text stays true when the model changes)."""
    if not found:
        return ""
    by = {label: table for label, table in scheds}

    def s(name, si, label):
        return p[_key(name, si, label, by[label])] if label in by else None

    def mean(name, si, label):
        r = s(name, si, label)
        return r["response_ms"]["mean"] if r else float("nan")

    out = ["\n## What the tables show\n"]
    for name, _ in found:
        if "noop" not in by or "SPTF" not in by:
            break
        out.append(
            f"\n- **{name}, open loop at the trace's times.** Both traces arrive faster than one disk serves random "
            f"requests, so the queue grows and the order decides everything: SPTF's mean response {mean(name, 0, 'SPTF'):,.0f} ms "
            f"against noop's {mean(name, 0, 'noop'):,.0f} ms (Seltzer et al.'s long-queue result). kyber is FIFO on a "
            f"rotational disk with one command ({mean(name, 0, 'kyber'):,.0f} ms). deadline (2.6) ends a batch at the first "
            f"non-contiguous request, so with random requests it serves its FIFO one request at a time "
            f"({mean(name, 0, 'deadline'):,.0f} ms), while mq-deadline has no contiguity test and serves 16 in sector order "
            f"per batch ({mean(name, 0, 'mq-deadline'):,.0f} ms; docs/schedulers/mq-deadline.md).")
        if "Aged-SPTF" in by:
            out.append(
                f" Aged-SPTF ({mean(name, 0, 'Aged-SPTF'):,.0f} ms) serves any request older than its 1 s latency bound "
                "first, oldest first: where the backlog holds requests older than 1 s it is FIFO.")
        ncq = [mean(name, 2, label) for label, t in scheds if t["name"] in WORK_CONSERVING]
        out.append(
            f"\n- **{name}, 100 requests/s.** SPTF {mean(name, 1, 'SPTF'):,.1f} ms, C-LOOK {mean(name, 1, 'C-LOOK'):,.1f} ms, "
            f"noop {mean(name, 1, 'noop'):,.1f} ms: the mean rate is within the disk's reach, but the arrivals come in bursts "
            f"(the gaps' coefficient of variation is in the advise section), and a burst is a long queue again. With NCQ 32 "
            f"the drive reorders what it holds (RPO), and the work-conserving schedulers give "
            f"{min(ncq):,.1f}-{max(ncq):,.1f} ms; the idling ones hold back commands from the drive and do no better.")
        if "BFQ" in by:
            b = s(name, 1, "BFQ")
            c = b["scheduler_counters"]
            worst = max(b["processes"], key=lambda q: q["response_ms"]["mean"])
            out.append(
                f" Linux's BFQ: {mean(name, 1, 'BFQ'):,.1f} ms mean, p99 {b['response_ms']['p99']:,.0f} ms. Each trace stream "
                f"is one queue issuing open-loop; streams raised as interactive or soft real-time "
                f"({c.get('wr_starts', 0)} raisings) preempt the others ({c.get('preemptions', 0)} preemptions), and it idles "
                f"for streams with nothing more to send ({c.get('idle_waits', 0)} idle waits, {c.get('too_idle', 0)} ended "
                f"too idle); the worst stream ({worst['name']}) waits {worst['response_ms']['mean']:,.0f} ms on average. "
                + (f"BFQ+ (the paper's rules, without preemption): {mean(name, 1, 'BFQ+'):,.1f} ms. " if "BFQ+" in by else "")
                + "Not compared with the kernel's BFQ on such a replay.")
        out.append(
            f"\n- **{name}, dependent.** Each stream waits for its previous request, so at most one request per stream is "
            f"queued: SPTF {mean(name, 3, 'SPTF'):,.1f} ms, noop {mean(name, 3, 'noop'):,.1f} ms, anticipatory "
            f"{mean(name, 3, 'anticipatory'):,.1f} ms, CFQ {mean(name, 3, 'CFQ'):,.1f} ms. The streams are random (their "
            "sequential fraction is in the advise section), so waiting for a stream's next request rarely finds it close.")
        a = advice.get(name)
        if a:
            rank = {r["candidate"]: r for r in a["ranking"]}
            rule = rank.get("adaptive (Seelam's rule)")
            best = a["ranking"][0]
            if rule:
                out.append(
                    f"\n- **{name}, advise.** The best by the mixed objective is {best['candidate']} (score {best['score']:.3f}); "
                    f"Seelam et al.'s rule (`adaptive`, choosing among noop, deadline and LAS by request size) ranks "
                    f"{rule['rank']} of {len(a['ranking'])} (score {rule['score']:.3f}, mean {rule['response_ms_mean']:.1f} ms "
                    f"against {best['response_ms_mean']:.1f} ms).")
    return "".join(out) + "\n"


def reproduce(out_dir: "str | Path", quick: bool = False, progress: Optional[Callable[[int, int], None]] = None,
              pool: Optional[Pool] = None, traces: "Optional[str | Path]" = None) -> Path:
    from .. import advise as adv

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pool = pool or Pool()
    known = registered_names()
    scheds = [(label, t) for label, t in SCHEDULERS if t["name"] in known]
    tdir = traces_dir(traces)
    found = [(name, tdir / f) for name, f in TRACES if (tdir / f).is_file()]
    p = Plan(out, pool)
    t0 = time.perf_counter()
    plans = {}
    for name, path in found:
        requests, duration_s = trace_rate(path)
        plans[name] = (requests, duration_s, settings(requests, duration_s))
        for si, (_, opts) in enumerate(plans[name][2]):
            for label, table in scheds:
                scn = trace_scenario(path, [dict(table, label=label)], device=DEVICE,
                                     max_requests=2000 if quick else None, name=f"{name} {label}", **opts)
                p.add(_key(name, si, label, table), scn)
    p.execute(progress)
    advice = {}
    for name, path in found:
        requests, duration_s, sets = plans[name]
        _, opts = sets[1]
        scn = trace_scenario(path, ["noop"], device=DEVICE, max_requests=2000 if quick else None, **opts)
        advice[name] = adv.advise(scn, adv.select_candidates(None), "mix", adv.parse_weights(None), pool)
    wall = time.perf_counter() - t0
    lines = [
        "# Real block traces under every scheduler\n",
        f"Generated by `iosched reproduce traces`{' --quick (first 2,000 requests)' if quick else ''}: "
        f"{len(p.results)} replays and {len(found)} advice runs in {wall:.1f} s; traces read from `{tdir}`"
        + ("" if len(found) == len(TRACES) else f" (not found: {', '.join(f for n, f in TRACES if n not in dict(found))})")
        + f". Device: `{DEVICE}` (7200 rpm, 320 GB), one command at a time unless NCQ is said. Every scenario is in "
        "scenarios/. Response times are from arrival at the block layer to completion.\n",
    ]
    for name, path in found:
        requests, duration_s, sets = plans[name]
        lines.append(f"\n## {name} ({path.name}: {requests:,} requests over {duration_s:.2f} s, "
                     f"{requests / max(duration_s, 1e-9):,.0f} requests/s)\n")
        for si, (title, _) in enumerate(sets):
            rows = []
            for label, table in scheds:
                s = p[_key(name, si, label, table)]
                rows.append([label, f"{s['throughput_mb_s']:.2f}", f"{s['iops']:.1f}", f"{s['response_ms']['mean']:,.1f}",
                             f"{s['response_ms']['p95']:,.1f}", f"{s['response_ms']['p99']:,.1f}", f"{s['elapsed_s']:.1f}"])
            best = min(rows, key=lambda r: float(r[3].replace(",", "")))
            lines.append(f"\n### {title}\n\n" + markdown_table(
                ["scheduler", "MB/s", "IOPS", "mean ms", "p95 ms", "p99 ms", "elapsed s"], rows)
                + f"\nLowest mean response: {best[0]}.\n")
        a = advice[name]
        lines.append(f"\n### iosched advise ({sets[1][0]}, objective: mix of throughput, mean, p99 and fairness, equal weights)\n\n"
                     "Characterisation (baseline run under noop): "
                     + ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in a["characterisation"].items())
                     + "\n\n" + markdown_table(
                         ["rank", "candidate", "score", "MB/s", "mean ms", "p99 ms", "fairness"],
                         [[str(r["rank"]), r["candidate"], f"{r['score']:.3f}", f"{r['throughput_mb_s']:.2f}",
                           f"{r['response_ms_mean']:,.1f}", f"{r['response_ms_p99']:,.1f}", f"{r['fairness_jain']:.3f}"]
                          for r in a["ranking"]]))
    lines.append(findings(p, found, plans, scheds, advice))
    report = out / "report.md"
    report.write_text("".join(lines))
    (out / "advice.json").write_text(json.dumps(advice, indent=1))
    return report
