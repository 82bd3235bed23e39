"""Command-line overrides of a scenario file, as fio's command line overrides its job file:
`iosched run SCENARIO --scheduler NAME[:k=v,...] --device PRESET`.

- `--scheduler` (repeatable) replaces the file's `[[scheduler]]` list: `bfq`, `bfq:low_latency=0`,
  `anticipatory:policy=clook,max_wait_us=8000`; `label=...` names the run. Values are read as TOML
  values (numbers, true/false) or else as bare words.
- `--device PRESET` replaces the file's `[device]` table by that preset alone (a preset is a whole
  drive: the file's cache or queue settings belonged to its own drive).
"""

from __future__ import annotations

import re
from typing import List, Optional, Sequence

from .scenario import Scenario, ScenarioError
from .sweep import parse_value

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def parse_scheduler(text: str) -> dict:
    """`NAME[:k=v,...]` as a [[scheduler]] table."""
    name, _, rest = text.partition(":")
    name = name.strip()
    if not _NAME.match(name):
        raise ScenarioError(f"--scheduler {text}: expected NAME[:key=value,...], e.g. bfq:low_latency=0")
    table = {"name": name}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not _NAME.match(key) or not value.strip():
            raise ScenarioError(f"--scheduler {text}: `{part}` is not key=value")
        if key in table:
            raise ScenarioError(f"--scheduler {text}: `{key}` given twice")
        try:
            table[key] = parse_value(value.strip())
        except ScenarioError:
            raise ScenarioError(f"--scheduler {text}: `{value.strip()}` is neither a TOML value nor a bare word") from None
    return table


def apply(scenario: Scenario, schedulers: Sequence[str] = (), device: Optional[str] = None) -> Scenario:
    """The scenario with the overrides applied (unchanged when none are given); an override the
    scenario rejects is an error naming the option."""
    if not schedulers and device is None:
        return scenario
    d = scenario.to_dict()
    said: List[str] = []
    if schedulers:
        d["scheduler"] = [parse_scheduler(s) for s in schedulers]
        said += [f"--scheduler {s}" for s in schedulers]
    if device is not None:
        d["device"] = {"preset": device}
        said.append(f"--device {device}")
    try:
        out = Scenario.from_dict(d, scenario.source)
    except ScenarioError as e:
        raise ScenarioError(f"{' '.join(said)}: {e}") from None
    out.notes = list(scenario.notes)  # what a fio job file's conversion said still holds
    return out
