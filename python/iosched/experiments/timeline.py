"""The host's sampled timeline (a run's `host.timeline`, `[host] sample_ms`): values between
samples, and the MB the disk moved in a time window. Shared by the reproductions."""

from __future__ import annotations

from typing import Tuple


def at(timeline: list, field: str, t: float) -> float:
    """`field` of the timeline linearly interpolated at time t (0 before the first sample)."""
    prev_t, prev_v = 0.0, 0.0
    for x in timeline:
        if x["t_s"] >= t:
            dt = x["t_s"] - prev_t
            return prev_v if dt <= 0 else prev_v + (x[field] - prev_v) * (t - prev_t) / dt
        prev_t, prev_v = x["t_s"], x[field]
    return prev_v


def disk_mb(s: dict, t0: float, t1: float) -> Tuple[float, float]:
    """MB (10^6 B) the disk read and wrote in [t0, t1] (a run without a timeline: 0, 0)."""
    tl = (s.get("host") or {}).get("timeline") or []
    r = (at(tl, "disk_read_mib", t1) - at(tl, "disk_read_mib", t0)) * 2**20 / 1e6
    w = (at(tl, "disk_written_mib", t1) - at(tl, "disk_written_mib", t0)) * 2**20 / 1e6
    return r, w
