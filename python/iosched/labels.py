"""Words for field names on plots: `process[0].think_us` -> "process 0 think time (us)",
`response_ms_p99` -> "response time p99 (ms)", `throughput_mb_s` -> "throughput (MB/s)".

Names keep their unit in a suffix or in the middle (`think_us`, `response_ms_p99`,
`seek_mean_cylinders`); the label says the words and puts the unit in parentheses.
"""

from __future__ import annotations

import re
from typing import List, Tuple

# Unit tokens, longest first (two-token units before their parts): token sequence -> shown as.
_UNITS: List[Tuple[Tuple[str, ...], str]] = [
    (("mb", "s"), "MB/s"), (("per", "s"), "per s"), (("kib",), "KiB"), (("mib",), "MiB"), (("gib",), "GiB"), (("gb",), "GB"), (("mb",), "MB"),
    (("ms",), "ms"), (("us",), "us"), (("ns",), "ns"), (("s",), "s"), (("sectors",), "sectors"),
    (("cylinders",), "cylinders"), (("bytes",), "bytes"), (("pct",), "%"), (("percent",), "%"),
]

# Words said otherwise on a plot.
_WORDS = {
    "think": "think time", "response": "response time", "service": "service time", "iops": "IOPS",
    "rpm": "rpm", "qd": "queue depth", "mb": "MB", "utilization": "utilization", "kib": "KiB",
}

# Whole names said otherwise (the unit comes from the name as usual).
_NAMES = {
    "request_kib": "request size (KiB)", "file_mib": "file size (MiB)", "file_offset_mib": "file offset (MiB)",
    "per_request_ms_seek": "seek time per request (ms)", "per_request_ms_rotation": "rotational latency per request (ms)",
    "per_request_ms_transfer": "transfer time per request (ms)", "elapsed_s": "simulated time (s)",
}


def field_label(name: str) -> str:
    """A snake_case field or metric name in words with its unit: `throughput_mb_s` ->
    "throughput (MB/s)", `response_ms_p99` -> "response time p99 (ms)", `utilization_busy` ->
    "utilization busy (fraction)"."""
    if name in _NAMES:
        return _NAMES[name]
    tokens = [t for t in name.lower().split("_") if t]
    unit = None
    words: List[str] = []
    i = 0
    while i < len(tokens):
        for seq, shown in _UNITS:
            # A unit token is one only after a word (`s` alone is not a unit).
            if tuple(tokens[i:i + len(seq)]) == seq and words and unit is None:
                unit = shown
                i += len(seq)
                break
        else:
            words.append(_WORDS.get(tokens[i], tokens[i]))
            i += 1
    if unit is None and tokens and tokens[0] == "utilization":
        unit = "fraction of the time"
    text = " ".join(words) or name
    return f"{text} ({unit})" if unit else text


def path_label(path: str) -> str:
    """A scenario field path in words: `process[0].think_us` -> "process 0 think time (us)",
    `workload.queue_depth` -> "workload queue depth", `device.preset` -> "device preset",
    `scheduler[1].timer_granularity_us` -> "scheduler 1 timer granularity (us)"."""
    parts = []
    for part in path.split("."):
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_-]*)((?:\[\d+\])*)", part)
        if not m:
            parts.append(part)
            continue
        indices = " ".join(re.findall(r"\d+", m.group(2)))
        parts.append((m.group(1), indices))
    out = []
    for n, p in enumerate(parts):
        if isinstance(p, str):
            out.append(p)
            continue
        name, indices = p
        # The last part carries the unit; the tables before it are plain words.
        text = field_label(name) if n == len(parts) - 1 else name.replace("_", " ")
        out.append(f"{text} {indices}" if indices else text)
    return " ".join(out)
