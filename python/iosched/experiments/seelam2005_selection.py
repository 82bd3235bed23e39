"""Seelam et al. 2005 section 6 in `iosched reproduce seelam2005`: Figure 5 (the schedulers ranked by
average request size on a RAID-0 of four IDE drives) and the `adaptive` scheduler, which switches
among them at run time by that ranking, on a workload whose request size changes by phases.

The ranking is the table `adaptive` measures before its run on the scenario's device (the paper's
"program that creates and randomly reads data blocks of various sizes from several large files",
simulated: `scenario/selection.rs`); it is reported in every adaptive run's summary. Two arrays:
the paper's (four PATA drives, no command queueing, modelled by the Maxtor preset of section 5)
and, for contrast, four SCSI drives with tagged queueing (depth 32), the configuration of the
paper's remark that noop suits large RAIDs of SCSI drives with their own scheduling.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

from .block import Plan
from .sweep import markdown_table

# (key, description, [device] table): the arrays compared.
ARRAYS: List[Tuple[str, str, dict]] = [
    ("ide", "RAID-0 of 4 x Maxtor 6L080L0 (7200 rpm PATA, no command queueing; the paper's four IDE drives)",
     {"preset": "maxtor-6l080l0"}),
    ("scsi-tcq", "RAID-0 of 4 x Seagate Cheetah X15 (15k rpm SCSI) with tagged queueing, depth 32 (contrast)",
     {"preset": "seagate-st318451lw", "queue_depth": 32}),
]
FIXED = ["noop", "deadline", "las-2.6.9"]
CHUNK_KIB = 64  # mdadm's default chunk in 2005
# The phased workload: four readers per phase, each starting when its counterpart of the phase
# before exits; random reads of one size per phase (KiB, requests per reader).
PHASES = [("small", 4, 3000), ("large", 256, 400), ("mid", 16, 2000)]


def _scenario(device: dict, sched: dict, quick: bool) -> dict:
    procs = []
    prev = None
    for name, kib, n in PHASES:
        n = n // 4 if quick else n
        for k in range(1, 5):
            # Twelve 4 GiB files spread evenly over the array (the default placement).
            p = {"name": f"{name}{k}", "pattern": "random", "request_kib": kib, "file_mib": 4096, "access": "mmap",
                 "requests": n}
            if prev:
                p["after"] = f"{prev}{k}"
            procs.append(p)
        prev = name
    return {
        "device": device,
        "array": {"members": 4, "chunk_kib": CHUNK_KIB},
        "block": {"tags": "legacy"},
        "process": procs,
        "scheduler": [sched],
        "run": {"duration_s": 3600.0, "seed": 1},
    }


def _adaptive(quick: bool) -> dict:
    return {"name": "adaptive", "measure_ms": 1000.0 if quick else 5000.0}


def plan_f5(p: Plan, quick: bool, known: set) -> List[str]:
    """Plans the runs; returns the report lines for schedulers not registered."""
    skipped = [f"- `{s}`: not run (not registered)." for s in FIXED + ["adaptive"] if s not in known]
    for key, _, device in ARRAYS:
        for s in FIXED:
            if s in known:
                p.add(f"f5-{key}-{s}", _scenario(device, {"name": s}, quick))
        if "adaptive" in known:
            p.add(f"f5-{key}-adaptive", _scenario(device, _adaptive(quick), quick))
    return skipped


def report_f5(p: Plan, out: Path, quick: bool, known: set, skipped: List[str]) -> str:
    if "adaptive" not in known:
        return "## Figure 5 and the adaptive scheduler (section 6)\n\nNot run: " + " ".join(skipped) + "\n"
    parts = [
        "## Figure 5 and the adaptive scheduler (section 6)\n\n"
        "The paper measured, on a RAID-0 of four IDE 10 GB drives under Linux 2.6.11, the throughput of noop, deadline, "
        "AS and CFQ for \"a program that creates and randomly reads data blocks of various sizes from several large "
        "files\", and ranked the schedulers by average request size (Figure 5); the text gives no figures (the figure's "
        "data is not in our copy), so there is nothing numeric to compare. Its conclusions, cited from [13]: deadline "
        "and CFQ do best on RAIDs of 2-5 disks, noop on large RAIDs of SCSI drives with their own scheduling. Selection "
        "\"experiments ... are in progress\": the paper did not build it. Here it is built: `adaptive` measures the "
        "table on the scenario's device before its run (4 readers of random blocks from their own 4 GiB files, "
        f"{'1' if quick else '5'} s per size and scheduler), keeps a decayed mean of the size of the requests it "
        "dispatches, and switches to the table's best for that size, draining the queue as Linux's elevator_switch does. "
        "CFQ is not implemented yet (issue 14), so the candidates are noop, deadline and LAS (`las-2.6.9`, the AS of "
        f"2.6.11). Arrays: md raid0, {CHUNK_KIB} KiB chunks, Linux 2.6's block layer on each member.\n"
    ]
    tables = {}
    for key, desc, _ in ARRAYS:
        s = p[f"f5-{key}-adaptive"]
        t = s["selection"]
        tables[key] = t
        names = t["candidates"]
        rows = []
        for pt in t["points"]:
            order = sorted(range(len(names)), key=lambda i: -pt["mb_s"][i])
            ranking = " > ".join(f"{names[i]}" for i in order)
            rows.append([", ".join(f"{k:.0f}" for k in pt["readers_kib"]), f"{pt['mean_request_kib']:.0f}"] + [f"{v:.2f}" for v in pt["mb_s"]] + [ranking])
        parts.append(f"### Ranking by request size: {desc}\n\n"
                     + markdown_table(["readers' KiB", "mean request KiB (at a member)"] + [f"{n} MB/s" for n in names] + ["ranking"], rows)
                     + "\n")
    plot = _figure5(tables, out / "figure5.png")
    parts.append(f"![Figure 5]({plot.name})\n")
    phases = ", then ".join(f"{kib} KiB x {n // 4 if quick else n}" for _, kib, n in PHASES)
    parts.append(f"### adaptive against each fixed scheduler on a phased workload\n\nFour readers per phase, random reads of "
                 f"{phases} requests per reader (each reader of a phase starts when its counterpart of the phase before "
                 "exits). Time to the last completion.\n")
    for key, desc, _ in ARRAYS:
        rows = []
        for s in FIXED + ["adaptive"]:
            r = p[f"f5-{key}-{s}"]
            c = r.get("scheduler_counters", {})
            ran = ""
            if s == "adaptive":
                ran = ", ".join(f"{n} {c.get('dispatched_' + n, 0)}" for n in FIXED) + f"; switches {c.get('switches', 0)}, draining {c.get('drain_ms_total', 0)} ms"
            rows.append([s, f"{r['elapsed_s']:.1f}", f"{r['throughput_mb_s']:.2f}", ran])
        best = min(FIXED, key=lambda s: p[f"f5-{key}-{s}"]["elapsed_s"])
        ad = p[f"f5-{key}-adaptive"]["elapsed_s"]
        bt = p[f"f5-{key}-{best}"]["elapsed_s"]
        parts.append(f"{desc}:\n\n" + markdown_table(["scheduler", "time s", "MB/s", "adaptive: requests dispatched under each"], rows)
                     + f"\n\nadaptive {ad:.1f} s vs the best fixed scheduler ({best}) {bt:.1f} s ({(ad / bt - 1) * 100:+.1f}%).\n")
    parts.append(_verdict(p, tables))
    return "\n".join(parts)


def _crossings(t: dict) -> int:
    bests = [max(range(len(pt["mb_s"])), key=lambda i: pt["mb_s"][i]) for pt in t["points"]]
    return sum(1 for a, b in zip(bests, bests[1:]) if a != b)


def _verdict(p: Plan, tables: dict) -> str:
    names = lambda t: [t["candidates"][pt["mb_s"].index(max(pt["mb_s"]))] for pt in t["points"]]
    lines = ["\nWhat this shows (from the tables above, not the paper):"]
    for key, desc, _ in ARRAYS:
        t = tables[key]
        best = names(t)
        changes = sum(1 for a, b in zip(best, best[1:]) if a != b)
        c = p[f"f5-{key}-adaptive"].get("scheduler_counters", {})
        fixed = {s: p[f"f5-{key}-{s}"]["elapsed_s"] for s in FIXED}
        top = min(fixed, key=fixed.get)
        ad = p[f"f5-{key}-adaptive"]["elapsed_s"]
        lines.append(f"- {desc.split(' (')[0]}: best by size {' / '.join(best)} ({changes} change(s) along the sizes); adaptive "
                     f"switched {c.get('switches', 0)} time(s) and took {ad:.1f} s against {top}'s {fixed[top]:.1f} s, "
                     f"the best fixed scheduler ({(ad / fixed[top] - 1) * 100:+.1f}%).")
    lines.append(
        "\nIn our model the ranking depends on the hardware more than on the request size, as [13] found: on drives that "
        "serve one command at a time LAS's elevator (backward seeks at twice the cost) beats deadline's one-way sweep and "
        "noop's FIFO at every size; on drives that order 32 commands themselves, handing them everything (noop, deadline) "
        "wins for small requests, while for large ones LAS's anticipation pays. An array cuts every bio at its chunk "
        "size, so readers of 64 KiB and larger give the members requests of one mean size: the table merges them (the "
        "throughputs averaged), since at run time only that size is known. Whether the paper's Figure 5 had such "
        "crossings cannot be checked from its text.\n")
    return "\n".join(lines)


def _figure5(tables: dict, path: Path) -> Path:
    from ..plots import _pyplot

    plt = _pyplot()
    fig, axes = plt.subplots(1, len(tables), figsize=(11, 4))
    for ax, (key, desc, _) in zip(axes, ARRAYS):
        t = tables[key]
        xs = [pt["mean_request_kib"] for pt in t["points"]]
        for i, name in enumerate(t["candidates"]):
            ax.plot(xs, [pt["mb_s"][i] for pt in t["points"]], marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("mean request size at a member (KiB)")
        ax.set_title(desc.split(" (")[0], fontsize=9)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("throughput (MB/s)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
