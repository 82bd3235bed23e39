"""Block traces from Python: a btt-like summary read in constant memory (`trace_stats`) and the
formats read (`trace_formats`). Definitions and JSON keys: docs/traces.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Optional, Union

from . import _native

TraceError = _native.TraceError

# One line per format for `iosched trace formats` (the names come from the native reader).
FORMAT_DESCRIPTIONS = {
    "blktrace": "blktrace's binary per-CPU files (dev.blktrace.N), either byte order",
    "blkparse": "blkparse's default text output",
    "ftrace-blk": "the kernel's blk ftrace tracer's text (/sys/kernel/tracing/trace with current_tracer = blk)",
    "fio-v2": "fio iolog version 2 (no timestamps)",
    "fio-v3": "fio iolog version 3 (µs timestamps)",
    "msr": "MSR Cambridge (SNIA) CSV: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
    "umass-spc": "UMass SPC (Financial, WebSearch): ASU,LBA,Size,Opcode,Timestamp",
    "alibaba": "Alibaba block traces 2020: device_id,opcode,offset,length,timestamp",
    "tencent": "Tencent CBS: Timestamp,Offset,Size,IOType,VolumeID",
    "systor": "SNIA Systor '17: Timestamp,Response,IOType,LUN,Offset,Size",
    "disksim-ascii": "DiskSim ascii: arrival_ms device block size flags",
    "disksim-validate": "DiskSim validate: R|W tag block size response_us gap_us",
    "mqsim": "MQSim: DiskSim's ascii columns with times in ns, type 1 = read",
    "s-startup": "the S suite's start-up traces (comm_startup_lat/*.trace)",
    "requests-csv": "iosched's own per-request table (iosched run --requests-csv)",
}


def trace_formats() -> list:
    """Format names accepted by `format=` (detected from the file when not given)."""
    return list(_native.trace_formats())


def trace_stats(
    path: Union[str, Path],
    format: Optional[str] = None,
    skip_bad: bool = False,
    progress: Optional[Callable[[int, int], None]] = None,
    top: int = 20,
) -> dict:
    """Summary of the trace at `path` (gzip or zstd read on the fly), read in constant memory with
    the GIL released. `progress(bytes_read, total_bytes)` is called about 20 times a second;
    `top` processes are listed (the rest summed in `processes_other`). Raises TraceError (a
    ValueError) naming the file and line of a malformed record unless `skip_bad`."""
    if top < 0:
        raise ValueError(f"top: must be at least 0, got {top}")
    return json.loads(_native.trace_stats(str(path), format, skip_bad, progress, top))


__all__ = ["trace_stats", "trace_formats", "TraceError", "FORMAT_DESCRIPTIONS"]
