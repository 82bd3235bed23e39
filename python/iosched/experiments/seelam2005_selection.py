"""Seelam et al. 2005 section 6 in `iosched reproduce seelam2005`: Figure 5 (the schedulers ranked by
average request size on a RAID-0) and the `adaptive` scheduler, which switches among them at run
time by that ranking, on a workload whose request size changes by phases.

The ranking runs are the paper's measuring program ("a program that creates and randomly reads
data blocks of various sizes from several large files"), as `adaptive` simulates it before its
own run (`scenario/selection.rs`: four readers of random blocks of one size from their own 4 GiB
files, 5 s per size and scheduler, seed 1), one scenario per array, size and scheduler, for the
four schedulers the paper ranked: noop, deadline, AS (`las-2.6.9`) and CFQ (`cfq`, Linux ~4.4's;
`adaptive` itself chooses among its three candidates, CFQ not among them). Three arrays: the
paper's (four PATA drives, no command queueing, modelled by the Maxtor preset of section 5), four
SCSI drives with tagged queueing (depth 32), and sixteen of them (the "large RAID ... of SCSI
drives" of [13] that the paper cites).

`tables()` gives the ledger's tables `fig5_ARRAY` (rows: the readers' request size in KiB;
columns: each scheduler's MB/s and the mean request size the members saw) and `adaptive_ARRAY`
(rows: each scheduler on the phased workload; columns: time_s, mb_s, and adaptive's switches).
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

from ..ledger import Tables
from .block import Plan
from .sweep import markdown_table

# (key, description, [device] table, members): the arrays ranked.
ARRAYS: List[Tuple[str, str, dict, int]] = [
    ("ide", "RAID-0 of 4 x Maxtor 6L080L0 (7200 rpm PATA, no command queueing; the paper's four IDE drives)",
     {"preset": "maxtor-6l080l0"}, 4),
    ("scsi4", "RAID-0 of 4 x Seagate Cheetah X15 (15k rpm SCSI) with tagged queueing, depth 32",
     {"preset": "seagate-st318451lw", "queue_depth": 32}, 4),
    ("scsi16", "RAID-0 of 16 x Seagate Cheetah X15 with tagged queueing, depth 32 ([13]'s large SCSI RAID)",
     {"preset": "seagate-st318451lw", "queue_depth": 32}, 16),
]
# The figure's panel titles.
TITLES = {"ide": "4 x Maxtor PATA, no queueing", "scsi4": "4 x Cheetah SCSI, TCQ depth 32",
          "scsi16": "16 x Cheetah SCSI, TCQ depth 32"}
# The arrays the phased workload runs on (adaptive against each fixed scheduler).
PHASED_ARRAYS = ("ide", "scsi4")
# (label, scheduler): the four schedulers the paper ranked in Figure 5.
RANKED: List[Tuple[str, str]] = [("noop", "noop"), ("deadline", "deadline"), ("LAS", "las-2.6.9"), ("CFQ", "cfq")]
# A controlled run on the paper's array: LAS with no anticipation (antic_expire = 0), its elevator
# alone: (column, array, scheduler table).
CONTROLS: List[Tuple[str, str, dict]] = [("LAS-no-antic", "ide", {"name": "las-2.6.9", "antic_expire": 0})]
# adaptive's candidates (crates/iosched/src/sched/adaptive/mod.rs), in its order.
CANDIDATES = ["noop", "deadline", "las-2.6.9"]
CHUNK_KIB = 64  # mdadm's default chunk in 2005
# The measuring program (scenario/selection.rs): sizes, readers, file size, seed.
SIZES_KIB = [4, 8, 16, 32, 64, 128, 256, 512]
READERS = 4
FILE_MIB = 4096
# The phased workload: four readers per phase, each starting when its counterpart of the phase
# before exits; random reads of one size per phase (KiB, requests per reader).
PHASES = [("small", 4, 3000), ("large", 256, 400), ("mid", 16, 2000)]


def _array(key: str) -> Tuple[str, dict, int]:
    for k, desc, device, members in ARRAYS:
        if k == key:
            return desc, device, members
    raise KeyError(key)


def _measure_s(quick: bool) -> float:
    return 1.0 if quick else 5.0


def _ranking_scenario(device: dict, members: int, sched, kib: int, quick: bool) -> dict:
    return {
        "device": device,
        "array": {"members": members, "chunk_kib": CHUNK_KIB},
        "block": {"tags": "legacy"},
        # Direct reads of whole blocks (no page cache, no readahead), as adaptive's measurement.
        "process": [{"name": "reader", "count": READERS, "pattern": "random", "request_kib": kib,
                     "file_mib": FILE_MIB, "access": "mmap"}],
        "scheduler": [sched if isinstance(sched, dict) else {"name": sched}],
        "run": {"duration_s": _measure_s(quick), "seed": 1},
    }


def _phased_scenario(device: dict, members: int, sched: dict, quick: bool) -> dict:
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
        "array": {"members": members, "chunk_kib": CHUNK_KIB},
        "block": {"tags": "legacy"},
        "process": procs,
        "scheduler": [sched],
        "run": {"duration_s": 3600.0, "seed": 1},
    }


def _adaptive(quick: bool) -> dict:
    return {"name": "adaptive", "measure_ms": _measure_s(quick) * 1000.0}


def ranked(known: set) -> List[Tuple[str, str]]:
    return [(label, s) for label, s in RANKED if s in known]


def _controls(known: set) -> List[Tuple[str, str, dict]]:
    return [c for c in CONTROLS if c[2]["name"] in known]


def plan_f5(p: Plan, quick: bool, known: set) -> List[str]:
    """Plans the runs; returns the report lines for schedulers not registered."""
    skipped = [f"- `{s}`: not run (not registered)." for _, s in RANKED if s not in known]
    if "adaptive" not in known:
        skipped.append("- `adaptive`: not run (not registered).")
    for key, _, device, members in ARRAYS:
        for label, s in ranked(known):
            for kib in SIZES_KIB:
                p.add(f"f5-{key}-{s}-{kib}k", _ranking_scenario(device, members, s, kib, quick))
    for col, key, sched in _controls(known):
        _, device, members = _array(key)
        for kib in SIZES_KIB:
            p.add(f"f5-{key}-{col.lower()}-{kib}k", _ranking_scenario(device, members, sched, kib, quick))
    for key in PHASED_ARRAYS:
        _, device, members = _array(key)
        for _, s in ranked(known):
            p.add(f"f5-{key}-phased-{s}", _phased_scenario(device, members, {"name": s}, quick))
        if "adaptive" in known:
            p.add(f"f5-{key}-phased-adaptive", _phased_scenario(device, members, _adaptive(quick), quick))
    return skipped


def tables(p: Plan, known: set, t: Tables) -> None:
    """fig5_ARRAY and adaptive_ARRAY (see the module's doc)."""
    for key, _, _, _ in ARRAYS:
        rows = {}
        for kib in SIZES_KIB:
            row = {}
            for label, s in ranked(known):
                r = p[f"f5-{key}-{s}-{kib}k"]
                row[label] = r["throughput_mb_s"]
                if r["requests"]:
                    row[f"request_kib_{label}"] = r["bytes"] / r["requests"] / 1024
            for col, k, _ in _controls(known):
                if k == key:
                    row[col] = p[f"f5-{key}-{col.lower()}-{kib}k"]["throughput_mb_s"]
            rows[kib] = row
        if rows and any(rows.values()):
            t.add(f"fig5_{key}", rows)
    for key in PHASED_ARRAYS:
        rows = {}
        for label, s in ranked(known):
            r = p[f"f5-{key}-phased-{s}"]
            rows[label] = {"time_s": r["elapsed_s"], "mb_s": r["throughput_mb_s"]}
        if "adaptive" in known:
            r = p[f"f5-{key}-phased-adaptive"]
            c = r.get("scheduler_counters", {})
            rows["adaptive"] = {"time_s": r["elapsed_s"], "mb_s": r["throughput_mb_s"],
                                "switches": c.get("switches", 0), "drain_ms": c.get("drain_ms_total", 0)}
            for n in CANDIDATES:
                rows["adaptive"][f"dispatched_{n}"] = c.get(f"dispatched_{n}", 0)
        if rows:
            t.add(f"adaptive_{key}", rows)


def report_f5(p: Plan, t: Tables, out: Path, quick: bool, known: set, skipped: List[str]) -> str:
    labels = [label for label, _ in ranked(known)]
    parts = [
        "## Figure 5 and the adaptive scheduler (section 6)\n\n"
        "The paper measured, on a RAID-0 of four IDE 10 GB drives under Linux 2.6.11, the throughput of noop, deadline, "
        "AS and CFQ for \"a program that creates and randomly reads data blocks of various sizes from several large "
        "files\", and ranked the schedulers by average request size (Figure 5). The figure's data is not in the text "
        "(so no claim is made of it). The paper also cites [13]: deadline and CFQ do best on RAIDs of 2-5 "
        "disks, noop on large RAIDs of SCSI drives with their own scheduling; those are claims of [13], judged here on "
        "these runs (`cited13-*`). Selection \"experiments ... are in progress\": the paper did not build it; here it is "
        "built as `adaptive`, beyond the paper.\n\n"
        f"The ranking runs: the measuring program as `adaptive` simulates it ({READERS} readers of random blocks of one "
        f"size from their own {FILE_MIB // 1024} GiB files, direct reads, {_measure_s(quick):.0f} s per size and "
        "scheduler, seed 1), one run per array, size and scheduler. AS is `las-2.6.9`; CFQ is `cfq`, Linux ~4.4's "
        f"(time slices and idling), not 2.6.11's. Arrays: md raid0, {CHUNK_KIB} KiB chunks, Linux 2.6's block layer "
        "on each member. MB/s, and the mean request size the members saw (requests of 64 KiB and more are cut at the "
        "chunk).\n"
        + ("\n" + "\n".join(skipped) + "\n" if skipped else "")
    ]
    for key, desc, _, _ in ARRAYS:
        name = f"fig5_{key}"
        if not labels:
            continue
        rows = []
        for kib in SIZES_KIB:
            row = t.ref(f"{name}/{kib}/*")
            order = sorted(labels, key=lambda lb: -row[lb])
            size = row.get(f"request_kib_{labels[0]}")
            rows.append([str(kib), "-" if size is None else f"{size:.0f}"] + [f"{row[lb]:.2f}" for lb in labels]
                        + [" > ".join(order)])
        parts.append(f"### {desc}\n\n"
                     + markdown_table(["readers' KiB", "mean request KiB (at a member)"]
                                      + [f"{lb} MB/s" for lb in labels] + ["ranking"], rows) + "\n")
        for col, k, sched in _controls(known):
            if k == key:
                parts.append(f"Controlled run: `{col}`, `{sched['name']}` with "
                             + ", ".join(f"{n} = {v}" for n, v in sched.items() if n != "name")
                             + " (no anticipation: its elevator alone), MB/s by size: "
                             + ", ".join(f"{kib} KiB {t.ref(f'{name}/{kib}/{col}'):.2f}" for kib in SIZES_KIB) + ".\n")
    if labels:
        plot = _figure5(t, labels, out / "figure5.png")
        parts.append(f"![Figure 5]({plot.name})\n")
    if "adaptive" in known:
        phases = ", then ".join(f"{kib} KiB x {n // 4 if quick else n}" for _, kib, n in PHASES)
        parts.append("### adaptive against each fixed scheduler on a phased workload (not in the paper)\n\n"
                     "`adaptive` measures its own table (the program above, for its three candidates noop, deadline "
                     "and `las-2.6.9`) on the scenario's array before its run, keeps a decayed mean of the size of the "
                     "requests it dispatches, and switches to the table's best for that size, draining the queue as "
                     f"Linux's elevator_switch does. The workload: four readers per phase, random reads of {phases} "
                     "requests per reader (each reader of a phase starts when its counterpart of the phase before "
                     "exits). Time to the last completion.\n")
        for key in PHASED_ARRAYS:
            desc = _array(key)[0]
            name = f"adaptive_{key}"
            rows = []
            for label in labels + ["adaptive"]:
                r = t.ref(f"{name}/{label}/*")
                ran = ""
                if label == "adaptive":
                    ran = (", ".join(f"{n} {r[f'dispatched_{n}']:.0f}" for n in CANDIDATES)
                           + f"; switches {r['switches']:.0f}, draining {r['drain_ms']:.0f} ms")
                rows.append([label, f"{r['time_s']:.1f}", f"{r['mb_s']:.2f}", ran])
            best = min(labels, key=lambda lb: t.ref(f"{name}/{lb}/time_s"))
            ad, bt = t.ref(f"{name}/adaptive/time_s"), t.ref(f"{name}/{best}/time_s")
            parts.append(f"{desc}:\n\n"
                         + markdown_table(["scheduler", "time s", "MB/s", "adaptive: requests dispatched under each"], rows)
                         + f"\n\nadaptive {ad:.1f} s against the best fixed scheduler ({best}) {bt:.1f} s "
                         f"({(ad / bt - 1) * 100:+.1f}%).\n")
    if labels:
        parts.append(_observations(t, labels))
    return "\n".join(parts)


def _observations(t: Tables, labels: List[str]) -> str:
    """The best scheduler by size on each array, from the ranking runs (ours, not the paper's)."""
    lines = ["What the ranking runs show (ours; the paper's Figure 5 cannot be compared):", ""]
    for key, desc, _, _ in ARRAYS:
        best = []
        for kib in SIZES_KIB:
            row = t.ref(f"fig5_{key}/{kib}/*")
            top = max(row[lb] for lb in labels)
            best.append("=".join(lb for lb in labels if row[lb] == top))
        changes = sum(1 for a, b in zip(best, best[1:]) if a != b)
        lines.append(f"- {desc.split(' (')[0]}: best by size, 4 to 512 KiB: {' / '.join(best)} "
                     f"({changes} change(s) along the sizes).")
    lines += [
        "",
        "[13]'s findings that the paper cites are judged on these runs in the claims `cited13-*`. On drives that order "
        "32 commands themselves, noop and deadline hand them everything and tie; on drives that serve one command at a "
        "time the host's order decides. Which ranking the paper's own Figure 5 showed cannot be checked from its text.",
        "",
    ]
    return "\n".join(lines)


def _figure5(t: Tables, labels: List[str], path: Path) -> Path:
    from ..plots import _pyplot

    plt = _pyplot()
    fig, axes = plt.subplots(1, len(ARRAYS), figsize=(14, 4))
    for ax, (key, desc, _, _) in zip(axes, ARRAYS):
        # Each scheduler's throughput over the best at that size: the ranking by size.
        best = {kib: max(t.ref(f"fig5_{key}/{kib}/{lb}") for lb in labels) for kib in SIZES_KIB}
        for lb in labels:
            ax.plot(SIZES_KIB, [t.ref(f"fig5_{key}/{kib}/{lb}") / best[kib] for kib in SIZES_KIB], marker="o", label=lb)
        ax.set_xscale("log", base=2)
        ax.set_xticks(SIZES_KIB, [str(k) for k in SIZES_KIB])  # 4, 8, ... 512, not 2^2 ... 2^9
        ax.set_xlabel("readers' request size (KiB)")
        ax.set_title(f"RAID-0 of {TITLES[key]}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("throughput / the best scheduler's at that size")
    axes[0].legend(fontsize=8)
    fig.suptitle("Figure 5 (Seelam et al. 2005): each scheduler's throughput over the best at each request size, "
                 "on three RAID-0 arrays", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
