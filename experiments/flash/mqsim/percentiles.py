"""Mean, p50 and p99 (nearest rank: the sorted value at ceil(p x n) - 1) of each request's
response time in us, all requests and reads and writes apart, from either side of the MQSim side
by side (docs/reproductions/flash/mqsim.md, "MQSim's percentiles"):
    python3 percentiles.py run.csv        # iosched run FILE --requests-csv run.csv (completion - issue;
                                          # one line per run and scheduler of the CSV)
    python3 percentiles.py rr-qd16-ideal.resp[.gz]   # MQSim's per-request log (run_mqsim.sh with RESPLOGS)
MQSim's log lines: flow, read|write, arrival, enqueue, completion, device response, end-to-end
delay (ns); the device response time is the one MQSim's mean reports."""

import csv
import gzip
import math
import sys


def responses_us(path):
    """(group, op, response us) per request: the group is the CSV's run and scheduler, or the log."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        if path.endswith((".csv", ".csv.gz")):
            for r in csv.DictReader(f):
                yield f"run {r['run']} {r['scheduler']}", r["op"], (int(r["complete_ns"]) - int(r["issue_ns"])) / 1000
        else:
            for line in f:
                if line.strip():
                    fields = line.split()
                    yield "", fields[1], int(fields[5]) / 1000


def summary(values):
    v = sorted(values)
    rank = lambda p: v[max(0, math.ceil(p * len(v)) - 1)]
    return f"n={len(v)} mean={sum(v) / len(v):.1f} p50={rank(0.5):.1f} p99={rank(0.99):.1f}"


def main(path):
    groups = {}
    n = 0
    try:
        for group, op, us in responses_us(path):
            groups.setdefault(group, {}).setdefault(op, []).append(us)
            n += 1
    except (OSError, EOFError) as e:
        sys.exit(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}")
    except (KeyError, IndexError, ValueError) as e:
        sys.exit(f"{path}: request {n + 1}: not an iosched requests CSV nor an MQSim log line ({e!r})")
    if not groups:
        sys.exit(f"{path}: no requests")
    for group, by_op in groups.items():
        parts = [f"all {summary([x for v in by_op.values() for x in v])}"]
        if len(by_op) > 1:
            parts += [f"{op} {summary(v)}" for op, v in sorted(by_op.items())]
        print(f"{path}{' ' + group if group else ''}: " + " | ".join(parts))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        main(p)
