"""Results of running a scenario: summaries as dicts and tidy pandas DataFrames (pandas and
numpy are imported only when a table is asked for)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    from typing import Optional

# Summary fields that are not one number per run (left out of the `runs` table).
_NOT_SCALAR = ("processes", "response_cdf_ms", "scheduler_counters", "notices")


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "_"))
        else:
            out[key] = v
    return out


def flat_run_rows(summaries: list) -> list:
    """One dict per run: `run` (its index) and every number of its summary, nested fields
    flattened with "_" (the rows of Results.runs, and of `iosched run --format csv`)."""
    rows = []
    for i, s in enumerate(summaries):
        row = {"run": i}
        row.update(_flatten({k: v for k, v in s.items() if k not in _NOT_SCALAR}))
        rows.append(row)
    return rows


def flat_process_rows(summaries: list) -> list:
    """One dict per (run, process): run, scheduler, pid, name, requests, ... (the rows of
    Results.processes)."""
    rows = []
    for i, s in enumerate(summaries):
        for p in s["processes"]:
            row = {"run": i, "scheduler": s["scheduler"]}
            row.update(_flatten({k: v for k, v in p.items() if k != "response_cdf_ms"}))
            rows.append(row)
    return rows


class Results:
    """What one run of a scenario produced: one summary per scheduler ("run").

    Attributes
    ----------
    summaries : list[dict]
        The native summaries, in scheduler order (scheduler, device, throughput_mb_s, iops,
        utilization_busy, utilization_transfer, response_ms{...}, service_ms{...},
        response_cdf_ms (the response-time distribution at `CDF_QUANTILES`), seek{...},
        processes[...], invariants{...}, scheduler_counters{...}, stopped). Percentiles are
        within 0.05% of the exact nearest-rank values; means and maxima are exact.
    runs : DataFrame
        One row per run; nested fields flattened with "_" (response_ms_p99, seek_mean_ms, ...).
    processes : DataFrame
        One row per (run, process): run, scheduler, pid, name, requests, bytes,
        throughput_mb_s, response_ms_{mean,p50,p95,p99,max}.
    requests : DataFrame or None
        One row per request (None unless run with records=True): run, scheduler (categorical),
        req_id, pid, group, op (categorical read/write/flush), sync, start_sector, size_sectors,
        bios (how many bios the request carried), issue_ns (its first bio submitted), insert_ns
        (it got a request structure), dispatch_ns (sent to the drive), start_ns (the mechanism
        began it), complete_ns, seek_cylinders, seek_ns, rotation_ns, transfer_ns, cache_hit.
        Units are in the column names.
    requests_csv : str or None
        Where the records were streamed, when run with requests_csv.
    requests_parquet : str or None
        Where the records were written as Parquet, when run with requests_parquet.
    interrupted : bool
        The run was stopped by Ctrl-C; the last summary covers it up to that point.
    """

    def __init__(self, scenario_name: str, summaries: Optional[list], columns: list, interrupted: bool = False,
                 requests_csv: Optional[str] = None, requests_parquet: Optional[str] = None,
                 summary_texts: Optional[list] = None):
        self.scenario_name = scenario_name
        # The native summaries as JSON text, parsed when first asked for (`run --json` writes
        # the text as it is: a thousand processes' distributions are 200,000 numbers).
        self._summaries = summaries
        self.summary_texts = summary_texts
        self._columns = columns
        self._requests = None
        self.interrupted = interrupted
        self.requests_csv = requests_csv
        self.requests_parquet = requests_parquet

    @property
    def summaries(self) -> list:
        if self._summaries is None:
            import json

            self._summaries = [json.loads(t) for t in (self.summary_texts or [])]
        return self._summaries

    @property
    def runs(self):
        import pandas as pd

        return pd.DataFrame(flat_run_rows(self.summaries))

    @property
    def processes(self):
        import pandas as pd

        return pd.DataFrame(flat_process_rows(self.summaries))

    @property
    def requests(self):
        if not self._columns or any(c is None for c in self._columns):
            return None
        if self._requests is None:
            self._requests = self._build_requests()
        return self._requests

    def response_cdf(self):
        """One row per (run, quantile): run, scheduler, quantile, response_ms: the response-time
        distribution of every run (from its histogram; no per-request records needed)."""
        import pandas as pd

        from . import _native

        rows = []
        for i, s in enumerate(self.summaries):
            values = s.get("response_cdf_ms") or []
            for q, v in zip(_native.CDF_QUANTILES, values):
                rows.append({"run": i, "scheduler": s["scheduler"], "quantile": q, "response_ms": v})
        return pd.DataFrame(rows)

    def _build_requests(self):
        import numpy as np
        import pandas as pd

        labels = [s["scheduler"] for s in self.summaries]
        categories = list(dict.fromkeys(labels))
        parts = []
        for i, cols in enumerate(self._columns):
            arrays = {name: np.frombuffer(buf, dtype=dtype) for name, (dtype, buf) in cols.items()}
            n = len(next(iter(arrays.values()))) if arrays else 0
            df = pd.DataFrame({"run": np.full(n, i, dtype=np.int32)})
            df["scheduler"] = pd.Categorical([labels[i]] * n, categories=categories)
            for name, a in arrays.items():
                if name == "op_code":
                    df["op"] = pd.Categorical.from_codes(a.astype(np.int8), ["read", "write", "flush", "discard"])
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

