"""Deterministic synthetic traces in every format the readers take (the benchmark's input): the
same request stream (seeded: times, devices, processes, sectors, sizes, reads and writes), written
as each format writes it, following the documented layouts (shared/reference/trace-formats.md)."""

from __future__ import annotations

import gzip
import random
import struct
from pathlib import Path
from typing import IO, Iterator, NamedTuple, Union

# Text formats, then blktrace's binary; the file name each is written as (a name some detection
# rules look at).
FORMATS = {
    "mqsim": "gen.mqsim.trace",
    "disksim-ascii": "gen.disksim.trace",
    "disksim-validate": "gen.validate.trace",
    "blkparse": "gen.blkparse.txt",
    "ftrace-blk": "gen.ftrace.txt",
    "fio-v2": "gen_v2.iolog",
    "fio-v3": "gen_v3.iolog",
    "msr": "gen_msr.csv",
    "umass-spc": "gen_websearch.spc",
    "alibaba": "gen_alibaba.csv",
    "tencent": "gen_tencent.csv",
    "systor": "gen_systor.csv",
    "s-startup": "gen_startup.trace",
    "blktrace": "gen.blktrace.0",
}
PROCESSES = [(4100 + i, f"proc{i}") for i in range(8)]


class Req(NamedTuple):
    t_ns: int
    device: int
    pid: int
    comm: str
    read: bool
    sector: int
    sectors: int
    response_ns: int


def requests(n: int, seed: int = 1) -> Iterator[Req]:
    """`n` requests: Poisson-like arrivals (mean 100 µs), 4 devices, 8 processes, 70% reads,
    half of each process's requests sequential, sizes 4-256 KiB, response 50 µs-10 ms."""
    rng = random.Random(seed)
    t = 0
    ends = {}
    for _ in range(n):
        t += int(rng.expovariate(1 / 100_000)) + 1
        pid, comm = PROCESSES[rng.randrange(len(PROCESSES))]
        sectors = 8 << rng.randrange(6)
        sector = ends.get(pid) if rng.random() < 0.5 and pid in ends else rng.randrange(1 << 30) * 8
        ends[pid] = sector + sectors
        yield Req(t, rng.randrange(4), pid, comm, rng.random() < 0.7, sector, sectors, rng.randrange(50_000, 10_000_000))


def _lines(fmt: str, reqs: Iterator[Req]) -> Iterator[str]:
    if fmt == "mqsim":
        for r in reqs:
            yield f"{r.t_ns} {r.device} {r.sector} {r.sectors} {int(r.read)}\n"
    elif fmt == "disksim-ascii":
        for r in reqs:
            yield f"{r.t_ns / 1e6:.6f} {r.device} {r.sector} {r.sectors} {'1' if r.read else '0'}\n"
    elif fmt == "disksim-validate":
        for r in reqs:
            yield f"{'R' if r.read else 'W'} Miss {r.sector} {r.sectors} {r.response_ns / 1000:.3f} {r.t_ns % 5000 / 10:.1f}\n"
    elif fmt == "blkparse":
        seq = 0
        for r in reqs:
            rwbs = "RS" if r.read else "WS"
            dev = f"8,{16 * r.device}"
            for dt, action, pid in ((0, "Q", r.pid), (20_000, "D", r.pid), (20_000 + r.response_ns, "C", 0)):
                seq += 1
                t = r.t_ns + dt
                tail = "[0]" if action == "C" else f"[{r.comm}]"
                yield f"{dev:>5} {0:>2} {seq:>8} {t // 10**9:>5}.{t % 10**9:09d} {pid:>5}  {action} {rwbs:>3} {r.sector} + {r.sectors} {tail}\n"
    elif fmt == "ftrace-blk":
        # The kernel's blk tracer: `task-pid [cpu] flags seconds.micros: maj,min action RWBS ...`.
        yield "# tracer: blk\n#\n"
        for r in reqs:
            rwbs = "RS" if r.read else "WS"
            dev = f"8,{16 * r.device}"
            for dt, action, task in ((0, "Q", f"{r.comm}-{r.pid}"), (20_000, "D", f"{r.comm}-{r.pid}"),
                                     (20_000 + r.response_ns, "C", "<idle>-0")):
                us = (r.t_ns + dt) // 1000
                tail = "[0]" if action == "C" else f"[{r.comm}]"
                yield f"{task:>16} [000] d..1. {us // 10**6:>6}.{us % 10**6:06d}: {dev:>5}    {action} {rwbs:>3} {r.sector} + {r.sectors} {tail}\n"
    elif fmt in ("fio-v2", "fio-v3"):
        v3 = fmt == "fio-v3"
        pre = (lambda us: f"{us} ") if v3 else (lambda us: "")
        yield f"fio version {3 if v3 else 2} iolog\n"
        yield f"{pre(0)}/dev/sdb add\n{pre(0)}/dev/sdb open\n"
        last = 0
        for r in reqs:
            last = r.t_ns // 1000
            yield f"{pre(last)}/dev/sdb {'read' if r.read else 'write'} {r.sector * 512} {r.sectors * 512}\n"
        yield f"{pre(last)}/dev/sdb close\n"
    elif fmt == "msr":
        base = 128166372000000000  # FILETIME, 100 ns ticks
        for r in reqs:
            yield (f"{base + r.t_ns // 100},hm,{r.device},{'Read' if r.read else 'Write'},{r.sector * 512},"
                   f"{r.sectors * 512},{r.response_ns // 100}\n")
    elif fmt == "umass-spc":
        for r in reqs:
            yield f"{r.device},{r.sector},{r.sectors * 512},{'r' if r.read else 'w'},{r.t_ns / 1e9:.6f}\n"
    elif fmt == "alibaba":
        for r in reqs:
            yield f"{r.device},{'R' if r.read else 'W'},{r.sector * 512},{r.sectors * 512},{1577808000000000 + r.t_ns // 1000}\n"
    elif fmt == "tencent":
        for r in reqs:
            yield f"{1538323200 + r.t_ns // 10**9},{r.sector},{r.sectors},{0 if r.read else 1},{r.device}\n"
    elif fmt == "systor":
        yield "Timestamp,Response,IOType,LUN,Offset,Size\n"
        for r in reqs:
            yield f"{1487348329 + r.t_ns / 1e9:.6f},{r.response_ns / 1e9:.6f},{'R' if r.read else 'W'},{r.device},{r.sector * 512},{r.sectors * 512}\n"
    elif fmt == "s-startup":
        prev_t, ends = 0, {}
        for r in reqs:
            seq = ends.get(r.pid) == r.sector
            dist = r.sector - ends.get(r.pid, 0)
            ends[r.pid] = r.sector + r.sectors
            delta = (r.t_ns - prev_t) / 1e9
            prev_t = r.t_ns
            yield (f"{r.comm}-{r.pid} {delta:.6f} {r.sectors} {r.sector} {'Seq' if seq else 'Rand'} {dist} "
                   f"{r.sectors if seq else 0} {'R' if r.read else 'RA'} {r.t_ns / 1e9:.6f} C\n")
    else:
        raise ValueError(f"no text generator for `{fmt}`")


# blktrace: 48-byte little-endian records (magic | version 7), actions Q, D, C with categories.
_BLK = struct.Struct("<IIQQIIIIIHH")
_MAGIC = 0x65617400 | 0x07
_ACT = {"Q": 1, "D": 7, "C": 8}
_CAT = {"Q": 0x10, "D": 0x40, "C": 0x80}


def _blktrace(reqs: Iterator[Req], out: IO[bytes]) -> None:
    seq = 0
    for r in reqs:
        cat = (0x1 if r.read else 0x2) | 0x8 | 0x100
        dev = (8 << 20) | (16 * r.device)
        for dt, a, pid in ((0, "Q", r.pid), (20_000, "D", r.pid), (20_000 + r.response_ns, "C", 0)):
            seq += 1
            action = _ACT[a] | ((cat | _CAT[a]) << 16)
            out.write(_BLK.pack(_MAGIC, seq, r.t_ns + dt, r.sector, r.sectors * 512, action, pid, dev, 0, 0, 0))


def _open(path: Path, compress: bool):
    """The file to write: gzip level 1 when `compress`."""
    return gzip.open(path, "wb", compresslevel=1) if compress else open(path, "wb")


def write_trace(fmt: str, path: Union[str, Path], n: int, seed: int = 1, compress: bool = False) -> Path:
    """Writes `n` requests (`requests(n, seed)`) as `fmt` to `path` (gzip level 1 if `compress`)."""
    path = Path(path)
    with _open(path, compress) as out:
        if fmt == "blktrace":
            _blktrace(requests(n, seed), out)
        else:
            chunk = []
            for line in _lines(fmt, requests(n, seed)):
                chunk.append(line)
                if len(chunk) >= 65536:
                    out.write("".join(chunk).encode())
                    chunk.clear()
            out.write("".join(chunk).encode())
    return path


def write_bytes(fmt: str, path: Union[str, Path], target_bytes: int, seed: int = 1, compress: bool = False) -> int:
    """A trace of about `target_bytes` (uncompressed), quickly, in `fmt`: "mqsim" (a pool of
    65,536 random request tails (device, sector, size, type) cycled under increasing times) or
    "disksim-validate" (a pool of 65,536 lines cycled: its times are rebuilt from the response
    times and gaps, so every request has a completion time). Returns the records written."""
    rng = random.Random(seed)
    if fmt == "mqsim":
        pool = [f" {rng.randrange(4)} {rng.randrange(1 << 30) * 8} {8 << rng.randrange(6)} {int(rng.random() < 0.7)}\n"
                for _ in range(65536)]
    elif fmt == "disksim-validate":
        pool = [f"{'R' if rng.random() < 0.7 else 'W'} Miss {rng.randrange(1 << 30) * 8} {8 << rng.randrange(6)} "
                f"{rng.randrange(100, 4000)}.{rng.randrange(1000):03d} {rng.randrange(0, 200)}.0\n" for _ in range(65536)]
        block = "".join(pool).encode()
    elif fmt == "blktrace":
        return _blktrace_bytes(Path(path), target_bytes, rng, compress)
    else:
        raise ValueError(f"no bulk generator for `{fmt}`")
    written, records, t = 0, 0, 1_000_000
    with _open(Path(path), compress) as out:
        while written < target_bytes:
            if fmt == "mqsim":
                parts = []
                for tail in pool:
                    t += 100_000 + (records & 1023)
                    parts.append(f"{t}{tail}")
                    records += 1
                data = "".join(parts).encode()
            else:
                data = block
                records += len(pool)
            out.write(data)
            written += len(data)
    return records


def _blktrace_bytes(path: Path, target_bytes: int, rng: random.Random, compress: bool) -> int:
    """blktrace records in blocks of 65,536 requests (Q, D and C each, 48 bytes a record, built
    with numpy), each block 100 µs per request later than the one before. Returns requests."""
    import numpy as np

    dtype = np.dtype([("magic", "<u4"), ("seq", "<u4"), ("time", "<u8"), ("sector", "<u8"), ("bytes", "<u4"),
                      ("action", "<u4"), ("pid", "<u4"), ("dev", "<u4"), ("cpu", "<u4"), ("error", "<u2"), ("pdu", "<u2")])
    n = 65536
    gen = np.random.default_rng(rng.randrange(1 << 32))
    sector = gen.integers(0, 1 << 30, n, dtype=np.uint64) * 8
    size = (8 << gen.integers(0, 6, n)).astype(np.uint32) * 512
    read = gen.random(n) < 0.7
    cat = np.where(read, 0x1, 0x2) | 0x8 | 0x100
    pid = gen.integers(1000, 1008, n).astype(np.uint32)
    dev = np.uint32((8 << 20) | 16)
    resp = gen.integers(100_000, 10_000_000, n).astype(np.uint64)
    block = np.zeros(3 * n, dtype=dtype)
    block["magic"] = _MAGIC
    block["dev"] = dev
    for k, a in enumerate("QDC"):
        view = block[k::3]
        view["sector"], view["bytes"] = sector, size
        view["action"] = _ACT[a] | ((cat | _CAT[a]) << 16)
        view["pid"] = pid if a != "C" else 0
    base = np.arange(n, dtype=np.uint64) * 100_000
    offsets = (np.zeros(n, dtype=np.uint64), np.full(n, 20_000, dtype=np.uint64), 20_000 + resp)
    written, requests, t0 = 0, 0, np.uint64(1_000_000)
    with _open(path, compress) as out:
        while written < target_bytes:
            for k in range(3):
                block["time"][k::3] = t0 + base + offsets[k]
            block["seq"] = np.arange(requests * 3 + 1, requests * 3 + 1 + 3 * n, dtype=np.uint64).astype(np.uint32)
            data = block.tobytes()
            out.write(data)
            written += len(data)
            requests += n
            t0 += np.uint64(n * 100_000)
    return requests


def write_mqsim_bytes(path: Union[str, Path], target_bytes: int, seed: int = 1, compress: bool = False) -> int:
    """`write_bytes("mqsim", ...)`."""
    return write_bytes("mqsim", path, target_bytes, seed, compress)
