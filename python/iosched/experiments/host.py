"""`iosched reproduce host`: what the simulated host above the block layer shows, by mechanism.

- Writeback: `dd` of 2 GiB through the page cache of a 1 GiB host: throughput over time, the
  dirty-page level against the background and limit thresholds, the writer's throttled phases;
  today's I/O-less throttling beside 2.6.32's balance_dirty_pages, side by side.
- Readahead: the window sequence of a sequential reader against the example in the kernel's
  mm/readahead.c.
- `find TREE -type f -exec cat {} \\;` over a tree the size of the Linux 2.6 source tree
  (Seelam et al. 2005, section 3.1), beside a streaming reader (`while true; do cat big-file;
  done`) under C-LOOK and the anticipatory scheduler: the find side's time and how much of its
  I/O is metadata.

Every point is a generated scenario (kept in OUT/scenarios/); the runs go through the pool.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable, Optional

from ..pool import Pool
from .block import Plan
from .sweep import markdown_table

# -- writeback ------------------------------------------------------------------------------

DD_DEVICE = "wd-ultrastar-hc310"
THROTTLES = [("io-less", "today's kernel (I/O-less throttling, 3.2+)"), ("2.6", "2.6.32 (balance_dirty_pages)")]


def _dd_scenario(throttle: str, size_mib: int, memory_mib: int) -> dict:
    return {
        # NCQ: the model has no write-back cache in the drive, so at depth 1 every write would wait
        # most of a revolution; 32 queued writes let the drive stream them.
        "device": {"preset": DD_DEVICE, "queue_depth": 32},
        "block": {},
        "host": {"memory_mib": memory_mib, "dirty_throttle": throttle, "sample_ms": 100, "file": [{"path": "/big", "size_mib": 0}]},
        "task": [{"name": "dd", "command": "dd", "path": "/big", "size_mib": size_mib, "bs_kib": 1024}],
        "scheduler": [{"name": "deadline"}],
        "run": {"duration_s": 600, "seed": 1},
    }


def plan_writeback(p: Plan, quick: bool) -> None:
    size = 512 if quick else 2048
    memory = 256 if quick else 1024
    for t, _ in THROTTLES:
        p.add(f"dd-{t}", _dd_scenario(t, size, memory))


def _phases(timeline: list) -> str:
    """The throttled intervals as `a-b s` ranges."""
    spans, start = [], None
    for s in timeline:
        if s["throttled"] and start is None:
            start = s["t_s"]
        if not s["throttled"] and start is not None:
            spans.append((start, s["t_s"]))
            start = None
    if start is not None:
        spans.append((start, timeline[-1]["t_s"]))
    if not spans:
        return "never"
    total = sum(b - a for a, b in spans)
    shown = ", ".join(f"{a:.1f}-{b:.1f}" for a, b in spans[:6]) + (" ..." if len(spans) > 6 else "")
    return f"{len(spans)} phases, {total:.1f} s in all ({shown})"


def report_writeback(p: Plan, out: Path, quick: bool) -> str:
    rows, lines = [], []
    series = {}
    for t, what in THROTTLES:
        s = p[f"dd-{t}"]
        h = s["host"]
        task = h["tasks"][0]
        tl = h["timeline"]
        # The write() rate and the disk's write rate per sample interval.
        app, disk = [], []
        for a, b in zip(tl, tl[1:]):
            dt = b["t_s"] - a["t_s"]
            app.append((b["t_s"], (b["written_mib"] - a["written_mib"]) / dt))
            disk.append((b["t_s"], (b["disk_written_mib"] - a["disk_written_mib"]) / dt))
        series[t] = (tl, app, disk)
        peak_dirty = max(x["dirty_mib"] + x["writeback_mib"] for x in tl)
        busy = [b for a, b in app if a <= (task["elapsed_s"] or 0)]
        mean_rate = sum(busy) / max(1, len(busy))
        sd_rate = (sum((b - mean_rate) ** 2 for b in busy) / max(1, len(busy))) ** 0.5
        during = [x for x in tl if x["throttled"]]
        mean_level = sum(x["dirty_mib"] + x["writeback_mib"] for x in during) / max(1, len(during))
        left = next((x["dirty_mib"] for x in tl if x["t_s"] >= (task["elapsed_s"] or 0) + 1), 0.0)
        first_throttle = next((x["t_s"] for x in tl if x["throttled"]), None)
        mib = task["bytes_written"] / 2**20
        rows.append([
            what,
            f"{mib:.0f}",
            f"{task['elapsed_s']:.1f}" if task["elapsed_s"] is not None else "-",
            f"{mib / task['elapsed_s']:.1f}" if task["elapsed_s"] else "-",
            f"{tl[0]['background_mib']:.0f} / {tl[0]['limit_mib']:.0f}",
            f"{mean_level:.0f} / {peak_dirty:.0f}",
            f"{mean_rate:.0f} ± {sd_rate:.0f}",
            f"{first_throttle:.1f}" if first_throttle is not None else "-",
            f"{task['throttled_s']:.1f}",
            f"{task['pages_written'] * 4 / 1024:.0f}",
            f"{h['flusher_pages'] * 4 / 1024:.0f}",
        ])
        lines.append(f"- {what}: throttled {_phases(tl)}; {left:.0f} MiB still dirty when dd exits (below the background "
                     "threshold, so only dirty_expire_centisecs gets it written, 30 s after it was dirtied).")
    plot = _writeback_plot(series, out / "writeback.png")
    size = "512 MiB" if quick else "2 GiB"
    memory = "256 MiB" if quick else "1 GiB"
    return (
        "## Writeback: `dd` through the page cache\n\n"
        f"`dd if=/dev/zero of=/big bs=1M` of {size} on a host with {memory} of page cache (dirty_background_ratio 10, "
        f"dirty_ratio 20, dirty_expire_centisecs 3000, dirty_writeback_centisecs 500: Linux's defaults in 2.6.32 and "
        f"today), ext2 layout, {DD_DEVICE}, deadline, the block layer's defaults. The write() call returns once its pages "
        "are dirty; the flusher writes them back in file-offset order, 4 MiB per inode per pass, as asynchronous "
        "requests; a writer above the limit is throttled.\n\n"
        + markdown_table(["kernel", "MiB written", "dd time s", "dd MiB/s", "background / limit MiB", "dirty+writeback while throttled: mean / peak MiB", "write() MiB/s per 100 ms: mean ± sd",
                          "first throttled at s", "throttled s", "written by dd itself MiB", "written by the flusher MiB"], rows)
        + "\n\n" + "\n".join(lines) + "\n\n"
        f"![writeback]({plot.name})\n\n"
        "What the two throttles do with the same dd: 2.6.32's balance_dirty_pages lets the writer run until "
        "dirty + writeback reaches the limit, then makes it write back a chunk itself (write_chunk = 1.5 x the "
        "ratelimit) and, when it could not, sleep in congestion_wait (1 to 100 ms): the level sits at the limit and the "
        "write() rate comes in bursts (its spread per 100 ms is the larger one). The writer's own writeback finds the "
        "flusher already writing the same inode (pages under writeback are skipped), so it writes little itself; the "
        "disk's rate is the same. I/O-less throttling (3.2+) never lets the writer write: it pauses it for times computed "
        "from the distance to the setpoint between the background threshold and the limit and from the measured write "
        "bandwidth, so the level stays low in the band and the write() rate follows the disk's. In both, the flusher "
        "writes in file-offset order, 4 MiB per inode per pass, and dd is throttled from its first second, since nothing "
        "but the disk limits a write() of zeroes. Models: docs/host-writeback.md.\n"
    )


def _writeback_plot(series: dict, path: Path) -> Path:
    from ..plots import _pyplot

    plt = _pyplot()
    fig, axes = plt.subplots(2, len(series), figsize=(6 * len(series), 7), sharex=True, squeeze=False)
    for col, (t, (tl, app, disk)) in enumerate(series.items()):
        top, bottom = axes[0][col], axes[1][col]
        ts = [x["t_s"] for x in tl]
        top.plot([a for a, _ in app], [b for _, b in app], label="write() MiB/s", lw=0.8)
        top.plot([a for a, _ in disk], [b for _, b in disk], label="disk writes MiB/s", lw=0.8)
        top.set_title(f"dirty_throttle = {t}")
        top.set_ylabel("MiB/s")
        top.legend(fontsize=8)
        bottom.plot(ts, [x["dirty_mib"] for x in tl], label="dirty", lw=0.8)
        bottom.plot(ts, [x["writeback_mib"] for x in tl], label="under writeback", lw=0.8)
        bottom.plot(ts, [x["background_mib"] for x in tl], "--", label="background threshold", lw=0.8)
        bottom.plot(ts, [x["limit_mib"] for x in tl], "--", label="limit", lw=0.8)
        for x0, x1 in zip(ts, ts[1:]):
            pass
        thr = [x["t_s"] for x in tl if x["throttled"]]
        if thr:
            bottom.scatter(thr, [0] * len(thr), marker="|", s=30, color="red", label="dd throttled")
        bottom.set_xlabel("time (s)")
        bottom.set_ylabel("MiB")
        bottom.legend(fontsize=8)
    fig.suptitle("A 2 GiB dd through 1 GiB of memory: write() and disk rates (top), dirty and writeback pages (bottom)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# -- readahead ------------------------------------------------------------------------------

# mm/readahead.c, the comment above get_init_ra_size (5.10+): "for 128k (32 page) max ra:
# 1-2 page = 16k, 3-4 page 32k, 5-8 page = 64k, > 8 page = 128k initial".
KERNEL_DOC_INITIAL_KIB = {1: 16, 2: 16, 3: 32, 4: 32, 5: 64, 8: 64, 9: 128, 16: 128}


def report_readahead() -> str:
    from .. import _native

    rows = []
    for pages, doc in KERNEL_DOC_INITIAL_KIB.items():
        w = json.loads(_native.readahead_windows(128, pages, 1, 1 << 20))
        rows.append([str(pages), f"{pages * 4}", f"{w[0]['pages'] * 4}", str(doc), "yes" if w[0]["pages"] * 4 == doc else "NO"])
    seq = json.loads(_native.readahead_windows(128, 4, 64, 1 << 20))
    seq_rows = [[str(i + 1), w["kind"], str(w["trigger"]), str(w["start"]), str(w["pages"]), str(w.get("marker", "-"))]
                for i, w in enumerate(seq[:8])]
    return (
        "## Readahead: the window of a sequential reader\n\n"
        "Linux's on-demand readahead (mm/readahead.c, v5.10) with read_ahead_kb = 128 (32 pages). The kernel's "
        "documentation of the initial window (the comment above get_init_ra_size) against the model's first window:\n\n"
        + markdown_table(["read pages", "read KiB", "model initial window KiB", "kernel comment KiB", "same"], rows)
        + "\n\nThe windows of a reader doing 4-page (16 KiB) sequential reads from offset 0 (each: what triggered it, the "
        "window, and the page carrying PG_readahead whose hit starts the next one asynchronously):\n\n"
        + markdown_table(["window", "kind", "triggered at page", "start", "pages", "marker"], seq_rows)
        + "\n\nThe first read (a miss) gets 2 x its size rounded up (x4 only for reads of at most max/32 pages), the "
        "asynchronous windows then double (x4 below max/16) up to 32 pages, each started when the reader reaches the "
        "previous window's marker, so a sequential reader never waits for the disk once the window has ramped up. "
        "Details and sources: docs/host-readahead.md.\n"
    )


# -- find -exec cat beside a streaming reader -------------------------------------------------

# The Linux 2.6 source tree: about 17,000 files in 1,100 directories, about 230 MB. Here:
# 3 levels of 10 directories under the root (1,111 directories), 16 files in each (17,776
# files), lognormal sizes of mean 13 KiB (about 225 MiB).
TREE = {"path": "/linux", "depth": 3, "dirs_per_dir": 10, "files_per_dir": 16, "file_mean_kib": 13.0, "file_size_sigma": 1.2}
FIND_SCHEDULERS = [("C-LOOK", {"name": "clook"}), ("anticipatory (C-LOOK)", {"name": "anticipatory", "policy": "clook"}),
                   ("deadline (Linux 2.6)", {"name": "deadline"})]


def _find_scenario(sched: dict, with_stream: bool, quick: bool) -> dict:
    tree = dict(TREE)
    if quick:
        tree.update(depth=2)
    tasks = [{"name": "find", "command": "find-exec-cat", "path": "/linux"}]
    files = []
    if with_stream:
        files.append({"path": "/big", "size_mib": 2048})
        tasks.append({"name": "stream", "command": "cat", "path": "/big", "loops": 0})
    return {
        "device": {"preset": "ibm-deskstar-34gxp"},
        "block": {},
        "host": {"memory_mib": 512, "tree": [tree], "file": files},
        "task": tasks,
        "scheduler": [sched],
        "run": {"duration_s": 300 if quick else 1200, "seed": 1},
    }


def plan_find(p: Plan, quick: bool) -> None:
    for i, (_, sched) in enumerate(FIND_SCHEDULERS):
        p.add(f"find-alone-{i}", _find_scenario(sched, False, quick))
        p.add(f"find-stream-{i}", _find_scenario(sched, True, quick))


def report_find(p: Plan, quick: bool) -> str:
    rows = []
    for i, (what, _) in enumerate(FIND_SCHEDULERS):
        for key, beside in [(f"find-alone-{i}", "alone"), (f"find-stream-{i}", "with the streaming reader")]:
            s = p[key]
            tasks = {t["name"]: t for t in s["host"]["tasks"]}
            f = tasks["find"]
            meta, data = f["meta_pages_read"], f["data_pages_read"]
            stream = tasks.get("stream")
            stream_mb = f"{stream['bytes_read'] / 1e6 / s['elapsed_s']:.1f}" if stream and s["elapsed_s"] else "-"
            t = f"{f['elapsed_s']:.1f}" if f["elapsed_s"] is not None else f"> {s['elapsed_s']:.0f} (not finished)"
            rows.append([what, beside, t, str(f["children"]), f"{f['bytes_read'] / 2**20:.0f}", f"{meta}", f"{data}",
                         f"{100 * meta / max(1, meta + data):.1f}%", stream_mb, f"{s['throughput_mb_s']:.1f}"])
    return (
        "## `find -exec cat` beside a streaming reader\n\n"
        "`find /linux -type f -exec cat {} \\;` (each cat a new process: fork + exec 1 ms, then 128 KiB reads) over a "
        "tree the size of the Linux 2.6 source tree (" + ("2 levels" if quick else "1,111 directories, 17,776 files") +
        ", lognormal sizes of mean 13 KiB), ext2 layout, 512 MiB of page cache, cold cache; beside it (second row of each "
        "scheduler) `while true; do cat /big; done` over a 2 GiB file. IBM Deskstar, block layer defaults. Metadata = "
        "inode-table and directory blocks (and indirect blocks) read for the find side.\n\n"
        + markdown_table(["scheduler", "find runs", "find time s", "cat processes", "MiB read", "metadata pages read",
                          "data pages read", "metadata share", "stream MB/s", "disk MB/s"], rows)
        + "\n\nAlone, the find side's time is its metadata and small files: every directory's blocks, every file's "
        "inode block, then one or two reads per file (most are smaller than the first readahead window). Beside the "
        "stream, C-LOOK starves it: the stream always has its next request just ahead of the head, so the sweep never "
        "reaches the cats' requests behind it until the stream wraps to its file's start; the anticipation framework "
        "around C-LOOK cannot change that (it only adds waits for the stream, whose next request is already the "
        "sweep's next). Linux 2.6's deadline serves a read queued for 500 ms first, so every cat gets its turn after at "
        "most about half a second: the find side finishes, at the price of the stream's rate (the head goes back and forth "
        "between the two). Seelam et al.'s Table 2 on their disk and tree: deadline 297 s, LAS 4767 s, CAS 255 s; Linux's "
        "anticipatory scheduler (LAS) and CAS are issue 13.\n"
    )


# -- entry point ----------------------------------------------------------------------------

def reproduce(out_dir: "str | Path", quick: bool = False, progress: Optional[Callable[[int, int], None]] = None,
              pool: Optional[Pool] = None) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    p = Plan(out, pool or Pool())
    t0 = time.perf_counter()
    plan_writeback(p, quick)
    plan_find(p, quick)
    p.execute(progress)
    wall = time.perf_counter() - t0
    sections = [
        "# The host: page cache, writeback, readahead, files with metadata\n\n"
        f"Generated by `iosched reproduce host`{' --quick' if quick else ''}: {len(p.results)} runs in {wall:.1f} s "
        "(every scenario in scenarios/). Models: docs/host.md.\n",
        report_writeback(p, out, quick),
        report_readahead(),
        report_find(p, quick),
    ]
    report = out / "report.md"
    report.write_text("\n".join(sections))
    return report
