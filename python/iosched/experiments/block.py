"""`iosched reproduce block`: what the Linux-like block layer shows, by mechanism.

- NCQ: random 4 KiB reads on 7200 rpm presets with the drive holding 1..32 commands in its
  own order (rotational position ordering, or FIFO), IOPS against depth; host C-LOOK/SPTF at
  drive depth 1 against noop over NCQ at depth 32.
- Merging: a sequential reader issuing 4 KiB bios, 32 in flight, against one issuing 512 KiB
  requests; with and without the block layer's merging.
- Request limits: a greedy asynchronous writer against a synchronous random reader with
  `nr_requests` = 128 (blk-mq tags, and Linux 2.6's per-direction lists): the reader's wait for
  a free request shown apart from its time in the scheduler and at the drive.
- Deadline and kyber: the I/O schedulers that bound a reader's latency behind a writer (run when
  those schedulers are registered).

Every point is a generated scenario (kept in OUT/scenarios/); the runs go through the pool.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

import tomli_w

from ..plots import line_plot
from ..pool import Pool
from .sweep import markdown_table

NCQ_DEVICES = ["wd-ultrastar-hc310", "maxtor-7l250s0"]
DEPTHS = [1, 2, 4, 8, 16, 32]


def _closed_queue(device: str, q: int, drive_depth: int, order: str, scheduler: dict, requests: int) -> dict:
    return {
        "device": {"preset": device, "queue_depth": drive_depth, "queue_order": order},
        "workload": {"kind": "closed-queue", "queue_depth": q, "request_kib": 4, "requests": requests},
        "scheduler": [scheduler],
        "run": {"seed": 1},
    }


def _reader(name: str, **extra) -> dict:
    p = {"name": name, "pattern": "random", "request_kib": 4, "file_mib": 100_000, "file_offset_mib": 200_000}
    p.update(extra)
    return p


class Plan:
    """Scenarios by key, run together in the pool; `summary(key)` after `execute`."""

    def __init__(self, out: Path, pool: Pool):
        self.out, self.pool = out, pool
        self.scenarios: Dict[str, str] = {}
        self.results: Dict[str, dict] = {}
        (out / "scenarios").mkdir(parents=True, exist_ok=True)

    def add(self, key: str, scn: dict) -> str:
        self.scenarios[key] = tomli_w.dumps(scn)
        return key

    def execute(self, progress=None) -> None:
        keys = list(self.scenarios)
        for k in keys:
            (self.out / "scenarios" / f"{k}.toml").write_text(self.scenarios[k])
        tasks = [(self.scenarios[k], f"scenarios/{k}.toml", None) for k in keys]
        for k, [summary] in zip(keys, self.pool.map(tasks, progress)):
            self.results[k] = summary

    def __getitem__(self, key: str) -> dict:
        return self.results[key]


# -- NCQ ------------------------------------------------------------------------------------

def plan_ncq(p: Plan, quick: bool) -> None:
    n = 4000 if quick else 20000
    for dev in NCQ_DEVICES:
        for order in ["rpo", "fifo"]:
            for d in DEPTHS:
                p.add(f"ncq-{dev}-{order}-q{d}", _closed_queue(dev, d, d, order, {"name": "noop"}, n))
        for sched in ["clook", "sptf"]:
            p.add(f"ncq-{dev}-host-{sched}-q32", _closed_queue(dev, 32, 1, "rpo", {"name": sched}, n))


def report_ncq(p: Plan, out: Path) -> str:
    rows, series = [], {}
    for dev in NCQ_DEVICES:
        for order in ["rpo", "fifo"]:
            iops = [p[f"ncq-{dev}-{order}-q{d}"]["iops"] for d in DEPTHS]
            series[f"{dev} ({order})"] = iops
            rows.append([dev, order] + [f"{x:.0f}" for x in iops] + [f"{iops[-1] / iops[0]:.2f}x"])
    line_plot(DEPTHS, series, "drive queue depth (commands held)", "random 4 KiB read IOPS",
                "NCQ: IOPS against the drive's queue depth (noop host)", out / "ncq.png", logx=True)
    host = []
    for dev in NCQ_DEVICES:
        ncq32 = p[f"ncq-{dev}-rpo-q32"]
        for sched in ["clook", "sptf"]:
            s = p[f"ncq-{dev}-host-{sched}-q32"]
            host.append([dev, f"host {sched}, drive depth 1", f"{s['iops']:.0f}", f"{s['response_ms']['mean']:.1f}",
                         f"{s['response_ms']['p99']:.0f}", f"{s['response_ms']['max']:.0f}"])
        host.append([dev, "noop, NCQ depth 32 (RPO)", f"{ncq32['iops']:.0f}", f"{ncq32['response_ms']['mean']:.1f}",
                     f"{ncq32['response_ms']['p99']:.0f}", f"{ncq32['response_ms']['max']:.0f}"])
    return (
        "## NCQ: queueing inside the drive\n\n"
        "A closed queue of Q random 4 KiB reads over the whole disk, Q = the drive's queue depth, host scheduler noop "
        "(so every request waits inside the drive, which orders them). RPO = rotational position ordering (the "
        "firmware's SPTF with the head's exact angle), with a 500 ms aging bound; FIFO = the drive serves in arrival "
        "order (no benefit expected beyond overlapping nothing: one actuator).\n\n"
        + markdown_table(["drive", "order"] + [f"QD{d}" for d in DEPTHS] + ["QD32/QD1"], rows)
        + "\n\n![ncq](ncq.png)\n\n"
        "Host scheduling at drive depth 1 against the drive's own ordering at depth 32 (same closed queue of 32):\n\n"
        + markdown_table(["drive", "who orders", "IOPS", "mean ms", "p99 ms", "max ms"], host)
        + "\n\nThe drive's RPO knows the platter's angle, which the host's C-LOOK does not; host SPTF uses the same "
        "positioning model as the firmware (an idealized host), so it matches RPO at depth 32. Published figures for "
        "real NCQ drives: docs/research/ncq-published-figures.md.\n"
    )


# -- merging --------------------------------------------------------------------------------

def plan_merge(p: Plan, quick: bool) -> None:
    dur = 2 if quick else 10
    dev = "wd-ultrastar-hc310"
    seq = {"name": "reader", "pattern": "sequential", "access": "direct", "file_mib": 100_000}
    small = dict(seq, request_kib=4, iodepth=32)
    big = dict(seq, request_kib=512, iodepth=1)
    for key, proc, block in [("merge-4k-block", small, {}), ("merge-4k-noblock", small, None),
                             ("merge-512k-block", big, {}), ("merge-4k-depth1-block", dict(small, iodepth=1), {})]:
        scn = {"device": {"preset": dev}, "process": [proc], "run": {"duration_s": dur}, "scheduler": [{"name": "noop"}]}
        if block is not None:
            scn["block"] = block
        p.add(key, scn)


def report_merge(p: Plan) -> str:
    rows = []
    for key, what in [("merge-4k-block", "4 KiB bios, 32 in flight, block layer (plug + merges, max 512 KiB)"),
                      ("merge-4k-noblock", "4 KiB bios, 32 in flight, no block layer (each bio a request)"),
                      ("merge-4k-depth1-block", "4 KiB bios, one at a time, block layer"),
                      ("merge-512k-block", "512 KiB requests, one at a time, block layer")]:
        s = p[key]
        kib = s["bytes"] / max(s["requests"], 1) / 1024
        rows.append([what, f"{s['throughput_mb_s']:.1f}", f"{s['iops']:.0f}", f"{s['bios'] / max(s['requests'], 1):.1f}", f"{kib:.0f}",
                     f"{s['cache_hit_fraction']:.0%}"])
    return (
        "## Merging\n\n"
        "A sequential reader on the WD Ultrastar preset, noop, 10 s. Requests/s and their mean size show what the block "
        "layer did; bios per request come from the per-request records (`bios` column).\n\n"
        + markdown_table(["reader", "MB/s", "requests/s", "bios per request", "mean request KiB", "drive cache hits"], rows)
        + "\n\nWith 32 bios in flight, each completion returns 32 bios at one instant; the process's next 32 are plugged "
        "and merged into one 128 KiB request (the sizes in the records). The 512 KiB reader and the merged 4 KiB reader "
        "reach the same throughput: the drive's media rate. Without the block layer the 4 KiB requests are "
        "served one by one; the drive's read-ahead turns most of them into cache hits, so on this drive the loss is "
        "in per-command overhead rather than in rotations.\n"
    )


# -- request limits -------------------------------------------------------------------------

def plan_limits(p: Plan, quick: bool, schedulers: List[str]) -> None:
    dur = 5 if quick else 20
    writer = {"name": "writer", "op": "write", "access": "direct", "sync": False, "pattern": "sequential",
              "request_kib": 64, "iodepth": 4096, "file_mib": 100_000}
    reader = _reader("reader")
    for tags in ["blk-mq", "legacy"]:
        for sched in schedulers:
            p.add(f"limits-{tags}-{sched}", {
                "device": {"preset": "wd-ultrastar-hc310"},
                "block": {"nr_requests": 128, "tags": tags},
                "process": [writer, reader],
                "run": {"duration_s": dur},
                "scheduler": [{"name": sched}],
            })


def report_limits(p: Plan, schedulers: List[str]) -> str:
    rows = []
    for tags in ["blk-mq", "legacy"]:
        for sched in schedulers:
            s = p[f"limits-{tags}-{sched}"]
            procs = {x["name"]: x for x in s["processes"]}
            r, w = procs["reader"], procs["writer"]
            rows.append([tags, sched, f"{r['requests']}", f"{r['response_ms']['mean']:.0f}", f"{r['response_ms']['p99']:.0f}",
                         f"{r['request_wait_ms']['mean']:.0f}", f"{r['request_wait_ms']['p99']:.0f}",
                         f"{w['throughput_mb_s']:.1f}", f"{s['block']['waited_bios']}"])
    return (
        "## Request limits\n\n"
        "A greedy asynchronous writer (64 KiB sequential writes, 4096 in flight: 256 MiB, 512 merged requests, four times what the queue takes) and a "
        "synchronous random 4 KiB reader, `nr_requests` = 128. With blk-mq's shared scheduler tags the writer holds "
        "every tag; the reader's request first waits for a free tag (request wait), then for its turn in the scheduler. "
        "With Linux 2.6's per-direction request lists the reader's reads have their own 128 and never wait for one; the "
        "writer is throttled by its own list (and, having filled it, allocates in batches of 32). Under noop (one FIFO, "
        "drive depth 1) the reader's read waits behind every queued write either way: about 1.3 s. kyber keeps reads and "
        "writes in separate domains and dispatches them in turn, and caps asynchronous requests at 3/4 of the tags "
        "(its limit_depth), so the reader neither waits for a tag nor behind the writes' queue.\n\n"
        + markdown_table(["tags", "scheduler", "reader requests", "reader mean ms", "reader p99 ms",
                          "of which request wait mean ms", "request wait p99 ms", "writer MB/s", "bios that waited"], rows)
        + "\n"
    )


# -- deadline -------------------------------------------------------------------------------

DEADLINES = ["noop", "deadline-2.5", "deadline", "mq-deadline"]


def plan_deadline(p: Plan, quick: bool) -> None:
    dur = 20 if quick else 60
    for iodepth in [4, 32]:
        writer = {"name": "writer", "op": "write", "access": "direct", "iodepth": iodepth, "request_kib": 1024,
                  "pattern": "sequential", "file_mib": 4096}
        reader = {"name": "reader", "pattern": "random", "request_kib": 4, "file_mib": 1024}
        for sched in DEADLINES:
            p.add(f"deadline-q{iodepth}-{sched}", {
                "device": {"preset": "ibm-deskstar-34gxp"},
                "block": {},
                "process": [writer, reader],
                "run": {"duration_s": dur},
                "scheduler": [{"name": sched}],
            })


def report_deadline(p: Plan, out: Path) -> str:
    from .. import _native

    rows, curves = [], {}
    for iodepth in [4, 32]:
        for sched in DEADLINES:
            s = p[f"deadline-q{iodepth}-{sched}"]
            procs = {x["name"]: x for x in s["processes"]}
            r, w = procs["reader"], procs["writer"]
            rt = r["response_ms"]
            rows.append([str(iodepth), sched, str(r["requests"]), f"{rt['p50']:.0f}", f"{rt['p99']:.0f}", f"{rt['max']:.0f}",
                         f"{w['throughput_mb_s']:.1f}"])
            if iodepth == 32:
                curves[sched] = r["response_cdf_ms"]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for sched, values in curves.items():
        ax.step(values, _native.CDF_QUANTILES[: len(values)], where="post", label=sched)
    ax.axvline(500, color="grey", linestyle=":", label="read_expire (500 ms)")
    ax.set_xscale("log")
    ax.set_xlabel("reader response time (ms, log scale)")
    ax.set_ylabel("fraction of reads")
    ax.set_title("A random reader beside a writer with 32 x 1 MiB in flight", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "deadline.png", dpi=110)
    plt.close(fig)
    return (
        "## Deadline: a streaming writer against a random reader\n\n"
        "A direct-I/O writer (1 MiB sequential writes, 4 or 32 in flight; each split into two 512 KiB requests at "
        "max_sectors_kb) and a synchronous random 4 KiB reader with no think time, IBM Deskstar 34GXP, `[block]` "
        "defaults, one minute. Reader response = issue to completion.\n\n"
        + markdown_table(["writes in flight", "scheduler", "reader requests", "reader p50 ms", "reader p99 ms",
                          "reader max ms", "writer MB/s"], rows)
        + "\n\n![deadline](deadline.png)\n\n"
        "Under noop the reader waits behind every queued write request, so its latency grows with the writer's queue "
        "(8 requests: about 0.3 s; 64: about 2.3 s). The deadline schedulers bound it independently of the writer's "
        "depth, but by a write batch, not by read_expire: the writer's requests are contiguous, so 2.6's deadline and "
        "mq-deadline run a full batch of fifo_batch = 16 of them (about 16 x 36 ms) before the read's deadline is "
        "looked at again, and the tail sits just past read_expire (the dotted line). Linux 2.5's rule charged a seek "
        "as 16 contiguous requests, so a write batch that starts with a seek is one request, and the reader waits for "
        "at most the write in service, at the price of writer throughput (docs/schedulers/deadline.md).\n"
    )


# -- kyber ----------------------------------------------------------------------------------

KYBER_VARIANTS = [
    ("noop", {"name": "noop"}),
    ("kyber (Linux defaults: read 2 ms, write 10 ms)", {"name": "kyber"}),
    ("kyber, read 30 ms (suited to the disk)", {"name": "kyber", "read_lat_nsec": 30_000_000}),
    ("kyber, read 30 ms, write 1 s", {"name": "kyber", "read_lat_nsec": 30_000_000, "write_lat_nsec": 1_000_000_000}),
    ("kyber, loosened (read 1 s, write 1 s)", {"name": "kyber", "read_lat_nsec": 1_000_000_000, "write_lat_nsec": 1_000_000_000}),
]


def plan_kyber(p: Plan, quick: bool) -> None:
    dur = 60 if quick else 300
    writer = {"name": "writer", "op": "write", "access": "direct", "iodepth": 16, "request_kib": 512,
              "pattern": "sequential", "file_mib": 65_536}
    reader = {"name": "reader", "access": "direct", "pattern": "random", "request_kib": 4, "file_mib": 102_400}
    for order in ["fifo", "rpo"]:
        for i, (_, sched) in enumerate(KYBER_VARIANTS):
            p.add(f"kyber-{order}-{i}", {
                "device": {"preset": "wd-ultrastar-hc310", "queue_depth": 32, "queue_order": order},
                "block": {"tags": "blk-mq"},
                "process": [writer, reader],
                "run": {"duration_s": dur, "seed": 1},
                "scheduler": [dict(sched, label=f"v{i}")],
            })


def report_kyber(p: Plan, out: Path) -> str:
    rows = []
    for order in ["fifo", "rpo"]:
        for i, (what, _) in enumerate(KYBER_VARIANTS):
            s = p[f"kyber-{order}-{i}"]
            procs = {x["name"]: x for x in s["processes"]}
            r, w = procs["reader"]["response_ms"], procs["writer"]
            c = s.get("scheduler_counters", {})
            depth = c.get("write_depth_final", "-")
            rows.append([order, what, f"{r['p50']:.1f}", f"{r['p99']:.1f}", f"{w['throughput_mb_s']:.1f}", str(depth)])
    return (
        "## kyber\n\n"
        "A streaming writer (16 O_DIRECT 512 KiB sequential writes in flight) saturating the WD Ultrastar model at NCQ "
        "depth 32 (blk-mq tags), beside a synchronous random 4 KiB reader; each row a run of the same workload. "
        "Write depth = kyber's WRITE-domain token depth at the end (Linux's maximum 128).\n\n"
        + markdown_table(["drive order", "scheduler", "reader p50 ms", "reader p99 ms", "writer MB/s", "write depth at end"], rows)
        + "\n\nkyber lowers the depth of a domain only while another domain misses its target *and* this one meets "
        "its own (block/kyber-iosched.c, kyber_timer_fn: with congestion, domains with good latency are throttled; a "
        "domain with bad latency is eased). On a disk, 16 large writes at the drive take far longer than the default "
        "10 ms write target, so WRITE is itself \"bad\" and is never throttled: with Linux's defaults, and with a read "
        "target suited to the disk, kyber behaves as noop. Only when writes are declared latency-tolerant (write target "
        "1 s) does kyber throttle them, to depth 1, on the FIFO drive cutting the reader's latency at the price of most "
        "of the writer's throughput; each step needs 500 write samples, so the descent takes tens of seconds and the "
        "p99 over the run includes it. The reader's p99 does not reach the 30 ms target: one read waits behind the write "
        "at the drive. With both targets loosened nothing is congested and kyber costs nothing. On the RPO drive (the "
        "default order) the reader's tail is the firmware's aging bound (500 ms): a write is always at the drive beside "
        "the read and RPO prefers it, so throttling writes costs throughput without cutting the tail. kyber was designed "
        "for devices whose latencies are in the targets' range (SSDs); these runs show why it is rarely chosen for disks.\n"
    )


# -- entry point ----------------------------------------------------------------------------

def reproduce(out_dir: "str | Path", quick: bool = False, progress: Optional[Callable[[int, int], None]] = None,
              pool: Optional[Pool] = None) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    p = Plan(out, pool or Pool())
    t0 = time.perf_counter()
    plan_ncq(p, quick)
    plan_merge(p, quick)
    limit_scheds = ["noop", "deadline", "mq-deadline", "kyber"]
    plan_limits(p, quick, limit_scheds)
    plan_kyber(p, quick)
    plan_deadline(p, quick)
    p.execute(progress)
    wall = time.perf_counter() - t0
    sections = [
        "# The block layer: queueing in the drive, merging, request limits\n\n"
        f"Generated by `iosched reproduce block`{' --quick' if quick else ''}: {len(p.results)} runs in {wall:.1f} s "
        "(every scenario in scenarios/). Models: docs/block-layer.md.\n",
        report_ncq(p, out),
        report_merge(p),
        report_limits(p, limit_scheds),
        report_deadline(p, out),
        report_kyber(p, out),
    ]
    report = out / "report.md"
    report.write_text("\n".join(sections))
    return report
