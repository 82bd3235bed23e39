"""fio job files as iosched scenarios: `iosched run job.fio`, `iosched import-fio job.fio`.

    >>> from iosched import fio_job
    >>> conv = fio_job.read("experiments/examples/deskstar-randread.fio")
    >>> conv.scenario["process"][0]["pattern"], conv.notes[:1]

- parse.py: the INI file (sections, options, comments, [global] inheritance, ${VAR});
- units.py: sizes under kb_base, times with their suffixes;
- options.py: what is modelled, accepted without effect, or refused (and why);
- jobs.py: one job's options read and checked;
- convert.py: the clones laid out on the disk, the scenario, the notes, the TOML.

Every problem is a ScenarioError naming the file, the line, the job and the option (the CLI
prints it and exits 2). docs/fio.md describes the mapping.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional, Union

from .convert import DEFAULT_DEVICE, Conversion, FioJobError, convert, to_toml
from .parse import JobFileError, looks_like_job_file, parse_job_file

__all__ = ["read", "convert", "to_toml", "looks_like_job_file", "device_capacity_bytes", "Conversion", "DEFAULT_DEVICE"]


def device_capacity_bytes(preset: str) -> int:
    """The capacity of device preset `preset` in bytes (ScenarioError for an unknown preset)."""
    from .. import _native
    from ..scenario import ScenarioError

    probe = (f'[device]\npreset = {json.dumps(preset)}\n[[process]]\nname = "probe"\nfile_mib = 1\n'
             f'file_offset_mib = 0\nrequest_kib = 4\n')
    try:
        resolved = json.loads(_native.resolved_scenario(probe, "--device"))
    except ScenarioError as e:
        raise ScenarioError(f"--device {preset}: {str(e).split(': ', 1)[-1]}") from None
    return int(resolved["device"]["resolved"]["capacity_sectors"]) * 512


def read(path: Union[str, Path], text: Optional[str] = None, device: Optional[str] = None,
         schedulers: Optional[List[str]] = None) -> Conversion:
    """The scenario for fio job file `path` (its `text` if already read) on device preset `device`
    (default: the scenario format's, the IBM Deskstar 34GXP), with `schedulers` (default: the
    job file's ioscheduler=, else the scenario's default). Raises ScenarioError."""
    from ..scenario import ScenarioError, Scenario

    if text is None:
        text = Scenario.read_text_file(path)
    try:
        job_file = parse_job_file(text, str(path))
        device = device or DEFAULT_DEVICE
        return convert(job_file, device_capacity_bytes(device), device, schedulers)
    except (JobFileError, FioJobError) as e:
        raise ScenarioError(str(e)) from None
