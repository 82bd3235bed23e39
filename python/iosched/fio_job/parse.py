"""Reading a fio job file: sections, options, comments, [global] inheritance.

As fio's own reader (init.c __parse_jobs_ini, parse.c strip_blank_end) and its HOWTO ("Job file
format") describe: an INI file whose `[name]` sections are jobs, except sections whose name
starts with `global`, which set defaults for the jobs *below* them (a later [global] adds to and
overrides the earlier ones for the jobs that follow it). Each option is `key=value` or a bare
`key` (a flag). A line whose first non-blank character is `;` or `#` is a comment, and so is the
rest of any line from its first `;` or `#`. `${VAR}` in a value is the environment variable
(empty when unset), as fio expands it. `include FILE` is refused: iosched reads one file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

# Options fio knows by two names, mapped to the one iosched's tables use.
ALIASES = {
    "readwrite": "rw",
    "blocksize": "bs",
    "blocksize_range": "bsrange",
    "blockalign": "ba",
    "blocksize_unaligned": "bs_unaligned",
    "io_limit": "io_size",
    "wait_for_previous": "stonewall",
    "iomem": "mem",
    "iomem_align": "mem_align",
    "fill_fs": "fill_device",
    "iodepth_batch": "iodepth_batch_submit",
    "iodepth_batch_complete": "iodepth_batch_complete_min",
    "log_max_value": "log_window_value",
    "disable_bw_measurement": "disable_bw",
    "steadystate": "ss",
    "steadystate_duration": "ss_dur",
    "steadystate_ramp_time": "ss_ramp",
    "steadystate_check_interval": "ss_interval",
    # buffered=X is direct=!X (fio's HOWTO: "the opposite of the direct option").
    "buffered": "direct",
}

# fio's reserved keywords: their value is the machine's, not the job file's.
_RESERVED = re.compile(r"\$(pagesize|mb_memory|ncpus)\b")
_ENV = re.compile(r"\$\{([^}]*)\}")


@dataclass(frozen=True)
class Setting:
    """One `option[=value]` line: `option` is the canonical name, `written` the name as written."""

    option: str
    written: str
    value: Optional[str]
    line: int
    section: str

    def shown(self) -> str:
        return self.written if self.value is None else f"{self.written}={self.value}"


@dataclass
class Job:
    """A job section with the [global] settings above it and its own (its own win)."""

    name: str
    line: int
    settings: Dict[str, Setting] = field(default_factory=dict)


@dataclass
class JobFile:
    path: str
    jobs: List[Job]


class JobFileError(ValueError):
    """Problems found reading the file, one message per line of `problems`."""

    def __init__(self, problems: List[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


def _expand(value: str) -> str:
    return _ENV.sub(lambda m: os.environ.get(m.group(1), ""), value)


def parse_job_file(text: str, path: str) -> JobFile:
    """The jobs of fio job file `text` (read from `path`, used in messages)."""
    problems: List[str] = []
    jobs: List[Job] = []
    globals_: Dict[str, Setting] = {}
    current: Optional[Dict[str, Setting]] = None  # the section being read
    current_job: Optional[Job] = None
    section = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        # The rest of a line from its first ';' or '#' is a comment (fio's strip_blank_end).
        cut = min([i for i in (line.find(";"), line.find("#")) if i >= 0], default=len(line))
        line = line[:cut].strip()
        if not line:
            continue
        if line.startswith("["):
            if not line.endswith("]") or len(line) < 3:
                problems.append(f"{path}: line {number}: `{line}`: a section header is `[name]`")
                current = None
                continue
            section = line[1:-1].strip()
            if section.startswith("global"):
                current, current_job = globals_, None
            else:
                current_job = Job(section, number, dict(globals_))
                jobs.append(current_job)
                current = current_job.settings
            continue
        if current is None:
            problems.append(f"{path}: line {number}: `{line}` is outside any [section] (fio: options belong to a job or [global])")
            continue
        if line == "include" or line.startswith("include ") or line.startswith("include\t"):
            problems.append(f"{path}: line {number}: `{line}`: include is not read: iosched reads one job file; "
                            f"paste the included options into this section")
            continue
        if "=" in line:
            key, value = line.split("=", 1)
            key, value = key.strip(), value.strip()
        else:
            key, value = line, None
        if value is not None:
            reserved = _RESERVED.search(value)
            if reserved:
                problems.append(f"{path}: line {number}: option `{key}`: `${reserved.group(1)}` is the value of the machine "
                                f"fio runs on, not of the simulated one; write the number")
                continue
            value = _expand(value)
        name = key.lower()
        setting = Setting(ALIASES.get(name, name), key, value, number, section)
        current[setting.option] = setting
    if problems:
        raise JobFileError(problems)
    if not jobs:
        raise JobFileError([f"{path}: no job section: a fio job file needs at least one [job] besides [global]"])
    return JobFile(path, jobs)


_KEY_LINE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*(=|$)")


def looks_like_job_file(path: str, text: str) -> bool:
    """Whether `text` (from `path`) is a fio job file: its name ends in .fio, or it is not a
    .toml file and its first meaningful lines are an INI section with fio's `rw`, `bs`,
    `ioengine`, `size` or `filename` below it, written `key=value` without TOML's quotes."""
    if path.lower().endswith(".fio"):
        return True
    if path.lower().endswith(".toml"):
        return False
    seen_section = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("["):
            if line.startswith("[["):
                return False  # a TOML array of tables
            seen_section = True
            continue
        m = _KEY_LINE.match(line)
        if not (seen_section and m):
            return False
        key = m.group(1).lower()
        value = line.split("=", 1)[1].strip() if "=" in line else ""
        if value.startswith(('"', "'", "[", "{")) or value in ("true", "false"):
            return False  # TOML values
        if ALIASES.get(key, key) in ("rw", "bs", "ioengine", "size", "filename", "iodepth", "direct", "numjobs"):
            return True
    return False
