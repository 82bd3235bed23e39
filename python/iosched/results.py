"""Results of running a scenario: summaries as dicts and tidy pandas DataFrames."""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "_"))
        else:
            out[key] = v
    return out


class Results:
    """What one run of a scenario produced: one summary per scheduler ("run").

    Attributes
    ----------
    summaries : list[dict]
        The native summaries, in scheduler order (scheduler, device, throughput_mb_s, iops,
        utilization_busy, utilization_transfer, response_ms{...}, service_ms{...}, seek{...},
        processes[...], invariants{...}).
    runs : DataFrame
        One row per run; nested fields flattened with "_" (response_ms_p99, seek_mean_ms, ...).
    processes : DataFrame
        One row per (run, process): run, scheduler, pid, name, requests, bytes,
        throughput_mb_s, response_ms_{mean,p50,p95,p99,max}.
    requests : DataFrame or None
        One row per request (None when run with records=False): run, scheduler (categorical),
        req_id, pid, group, op (categorical read/write), sync, start_sector, size_sectors,
        issue_ns, dispatch_ns, complete_ns, seek_cylinders, seek_ns, rotation_ns, transfer_ns,
        cache_hit. Units are in the column names.
    """

    def __init__(self, scenario_name: str, summaries: list, columns: list):
        self.scenario_name = scenario_name
        self.summaries = summaries
        self._columns = columns
        self._requests: Optional[pd.DataFrame] = None

    @property
    def runs(self) -> pd.DataFrame:
        rows = []
        for i, s in enumerate(self.summaries):
            row = {"run": i}
            row.update(_flatten({k: v for k, v in s.items() if k != "processes"}))
            rows.append(row)
        return pd.DataFrame(rows)

    @property
    def processes(self) -> pd.DataFrame:
        rows = []
        for i, s in enumerate(self.summaries):
            for p in s["processes"]:
                row = {"run": i, "scheduler": s["scheduler"]}
                row.update(_flatten(p))
                rows.append(row)
        return pd.DataFrame(rows)

    @property
    def requests(self) -> Optional[pd.DataFrame]:
        if any(c is None for c in self._columns):
            return None
        if self._requests is None:
            self._requests = self._build_requests()
        return self._requests

    def _build_requests(self) -> pd.DataFrame:
        labels = [s["scheduler"] for s in self.summaries]
        categories = list(dict.fromkeys(labels))
        parts = []
        for i, cols in enumerate(self._columns):
            arrays = {name: np.frombuffer(buf, dtype=dtype) for name, (dtype, buf) in cols.items()}
            n = len(next(iter(arrays.values()))) if arrays else 0
            df = pd.DataFrame({"run": np.full(n, i, dtype=np.int32)})
            df["scheduler"] = pd.Categorical([labels[i]] * n, categories=categories)
            for name, a in arrays.items():
                if name == "is_write":
                    df["op"] = pd.Categorical.from_codes(a.astype(np.int8), ["read", "write"])
                elif name in ("sync", "cache_hit"):
                    df[name] = a.astype(bool)
                else:
                    df[name] = a
            parts.append(df)
        if not parts:
            return pd.DataFrame()
        out = pd.concat(parts, ignore_index=True)
        out["scheduler"] = pd.Categorical(out["scheduler"], categories=categories)
        return out

    def __len__(self) -> int:
        return len(self.summaries)

    def __repr__(self) -> str:
        labels = ", ".join(s["scheduler"] for s in self.summaries)
        return f"Results({self.scenario_name!r}: {labels})"
