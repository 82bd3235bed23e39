"""Samples of `perf script` output (a `perf record -a -g` of the whole machine) whose call chain
passes through an I/O scheduler's own functions, per scheduler (issue 28's kyber cost; see
measure.sh beside this file):
    perf script -i FILE | python3 elevator_time.py
prints `samples total` and, per scheduler, the samples with one of its functions on the stack
(each sample counted once: the time inside its hooks and whatever they call, their lock included)."""

import sys

# The functions of block/kyber-iosched.c, block/mq-deadline.c and block/bfq-*.c.
PREFIXES = {"kyber": ("kyber_",), "mq-deadline": ("dd_", "deadline_"), "bfq": ("bfq_", "bfqq_", "__bfq_")}


def main() -> None:
    total = 0
    hits = {name: 0 for name in PREFIXES}
    in_sample = set()

    def close() -> None:
        for name in in_sample:
            hits[name] += 1
        in_sample.clear()

    for line in sys.stdin:
        if not line.strip():
            continue
        if not line[0].isspace():  # a sample's header line
            close()
            total += 1
            continue
        parts = line.split()
        if len(parts) < 2:
            continue
        sym = parts[1].split("+", 1)[0]
        for name, prefixes in PREFIXES.items():
            if sym.startswith(prefixes):
                in_sample.add(name)
    close()
    print("samples", total)
    for name, n in hits.items():
        print(name, n)


if __name__ == "__main__":
    main()
