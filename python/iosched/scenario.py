"""Scenario: the TOML text of one simulation setup, validated by the native parser.

The format (devices, workloads, schedulers, units in field names) is defined by the Rust core;
see crates/iosched/src/scenario.rs. A Scenario is immutable: its text is what gets run.
"""

from __future__ import annotations

import os
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up

from . import _native, path_text
from .paths import expand_traces

# collections.abc and pathlib are imported where used: `iosched run FILE --json` needs neither.
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any, Optional

ScenarioError = _native.ScenarioError

# The core's limit for text inputs other than traces (crates/iosched/src/input.rs).
MAX_SCENARIO_BYTES = _native.MAX_SCENARIO_BYTES


def _check_encodable(text: str, source: str) -> None:
    """Text that cannot be UTF-8 (a lone surrogate, from a bad decode) is a scenario error."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        bad = text[e.start]
        line = text.count("\n", 0, e.start) + 1
        raise ScenarioError(f"{source}: not valid text: lone surrogate U+{ord(bad):04X} at line {line}") from None


def _file_name(path: "str | os.PathLike[str]") -> str:
    """`path` as str(pathlib.Path(path)): what messages and a scenario's source show."""
    text = os.fspath(path) if isinstance(path, os.PathLike) else path
    if not isinstance(text, str):
        raise TypeError(f"path: expected a str or Path, got {type(path).__name__} {path!r:.80}")
    return path_text.normalized(text)


def _plain(value: Any, path: str, source: str = "<dict>") -> Any:
    """`value` with numpy scalars and arrays turned into Python ones and tuples into lists, so
    that it can be written as TOML; anything else unwritable is named by its path."""
    from collections.abc import Mapping

    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ScenarioError(f"{source}: key {k!r} at `{path or '.'}`: keys must be strings")
            out[k] = _plain(v, f"{path}.{k}" if path else k, source)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{path}[{i}]", source) for i, v in enumerate(value)]
    if isinstance(value, (str, bool, int, float)):
        return value
    module = type(value).__module__
    if module == "numpy" or module.startswith("numpy."):
        if hasattr(value, "tolist"):  # scalars and arrays alike
            return _plain(value.tolist(), path, source)
    if value is None:
        raise ScenarioError(f"{source}: field `{path}` is None: leave a field out to take its default")
    raise ScenarioError(f"{source}: field `{path}`: {type(value).__name__} {value!r:.60} cannot be written as TOML")


class Scenario:
    """A validated scenario: TOML `text` plus `source` (the name used in error messages).

    Construct with one of the class methods; invalid scenarios raise ScenarioError, whose
    message names the source, the field and the value.
    """

    def __init__(self, text: str, source: str = "<string>"):
        if not isinstance(text, str):
            raise TypeError(f"text: expected TOML text (str), got {type(text).__name__}")
        if not isinstance(source, str):
            raise TypeError(f"source: expected a name (str), got {type(source).__name__}")
        _check_encodable(source, "<source>")
        _check_encodable(text, source)
        text = text.removeprefix("\ufeff")  # a byte-order mark is not part of the TOML
        text = expand_traces(text, source)
        self._declared_name, self.scheduler_count = _native.check_scenario(text, source)
        self.text = text
        self.source = source
        # What a conversion (a fio job file) assumed or ignored, shown by `iosched run`.
        self.notes: list = []

    # -- constructors -------------------------------------------------------------------------

    @classmethod
    def from_text(cls, text: str, source: str = "<string>") -> "Scenario":
        """Parse and validate scenario TOML text."""
        return cls(text, source)

    @staticmethod
    def read_text_file(path: "str | Path") -> str:
        """The UTF-8 text of a regular file of at most MAX_SCENARIO_BYTES; ScenarioError (the
        message starts with the path) for a missing, unreadable, special or non-UTF-8 file."""
        p = _file_name(path)
        # Only regular files of a sane size: /dev/zero or a FIFO would be read forever.
        try:
            st = os.stat(p)
        except FileNotFoundError:
            raise ScenarioError(f"{p}: no such file") from None
        except OSError as e:
            raise ScenarioError(f"{p}: cannot read: {e.strerror or e}") from None
        import stat as stat_module

        if stat_module.S_ISDIR(st.st_mode):
            raise ScenarioError(f"{p}: is a directory, not a scenario file")
        if not stat_module.S_ISREG(st.st_mode):
            raise ScenarioError(f"{p}: not a regular file (a device, FIFO or socket): refused")
        if st.st_size > MAX_SCENARIO_BYTES:
            raise ScenarioError(f"{p}: {st.st_size} bytes: larger than a scenario file may be ({MAX_SCENARIO_BYTES} bytes)")
        try:
            with open(p, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise ScenarioError(f"{p}: no such file") from None
        except IsADirectoryError:
            raise ScenarioError(f"{p}: is a directory, not a scenario file") from None
        except OSError as e:
            raise ScenarioError(f"{p}: cannot read: {e.strerror or e}") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ScenarioError(
                f"{p}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})"
            ) from None

    @classmethod
    def from_file(cls, path: "str | Path") -> "Scenario":
        """Read a scenario file (UTF-8 TOML), or a fio job file (named *.fio, or recognised by
        its content: docs/fio.md), which becomes the scenario `from_fio` makes of it.

        Raises ScenarioError for a missing, unreadable or non-UTF-8 file as well as for bad
        content; every message starts with the path.
        """
        text = cls.read_text_file(path)
        source = _file_name(path)
        # A job file given as a str is named as given (as before); any other path-like (a Path,
        # an os.DirEntry) by its path as str(Path(...)) writes it, never by its repr.
        name = path if isinstance(path, str) else source
        # A .toml file is never a job file: the fio reader is not even imported for it.
        if not name.lower().endswith(".toml"):
            from .fio_job import looks_like_job_file

            if looks_like_job_file(name, text):
                return cls.from_fio(name, text)
        return cls(text, source)

    @classmethod
    def from_fio(cls, path: "str | Path", text: Optional[str] = None, device: Optional[str] = None,
                 schedulers: Optional[list] = None) -> "Scenario":
        """The scenario of a fio job file (`iosched import-fio` writes it as TOML): its jobs as
        processes or host tasks on device preset `device`, run under `schedulers` (default:
        the job file's ioscheduler=). What fio options mean here, and which are refused:
        docs/fio.md. `notes` holds what the conversion assumed or ignored."""
        from . import fio_job

        conv = fio_job.read(path, text, device, schedulers)
        try:
            scenario = cls.from_dict(conv.scenario, str(path))
        except ScenarioError as e:
            raise ScenarioError(f"{e} (in the scenario made from this fio job file: `iosched import-fio {path}` "
                                f"writes it)") from None
        scenario.notes = list(conv.notes)
        return scenario

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "<dict>") -> "Scenario":
        """Build a scenario in code, e.g. ``{"workload": {"kind": "closed-queue"}, ...}``.

        Tables are dicts, arrays of tables (``[[scheduler]]``, ``[[process]]``) are lists of
        dicts. The dict is serialized to TOML and validated like a file.
        """
        from collections.abc import Mapping

        if not isinstance(d, Mapping):
            raise TypeError(f"d: expected a dict of scenario sections, got {type(d).__name__} {d!r:.80}")
        plain = _plain(d, "", source)
        try:
            import tomli_w

            text = tomli_w.dumps(plain)
        except (TypeError, ValueError) as e:
            raise ScenarioError(f"{source}: cannot be written as TOML: {e}") from None
        return cls(text, source)

    @classmethod
    def default(cls) -> "Scenario":
        """The built-in default scenario (what `iosched run` uses without a file)."""
        return cls(_native.default_scenario(), "<built-in default scenario>")

    # -- inspection and derivation ------------------------------------------------------------

    def to_dict(self) -> dict:
        """The scenario as nested dicts (only the fields written in the text)."""
        tomllib = _tomllib()
        try:
            return tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as e:  # the native parser accepted it; say so plainly
            raise ScenarioError(f"{self.source}: {e}") from None

    @property
    def schedulers(self) -> list:
        """The `[[scheduler]]` tables as written (empty: fcfs alone)."""
        return list(self.to_dict().get("scheduler") or [])

    @property
    def name(self) -> str:
        """The `name` field, else the file stem, else the source."""
        if self._declared_name:
            return self._declared_name
        if self.source.startswith("<"):
            return self.source.strip("<>")
        return path_text.stem(self.source)

    def replace(self, source: Optional[str] = None, **sections: Any) -> "Scenario":
        """A copy with top-level entries replaced, e.g. ``replace(scheduler=[{"name": "sstf"}])``.

        Tables given as dicts are merged key by key into the existing table
        (``replace(workload={"queue_depth": 10})`` keeps the other workload fields).
        """
        import copy
        from collections.abc import Mapping

        d = copy.deepcopy(self.to_dict())
        for key, value in sections.items():
            if isinstance(value, Mapping) and isinstance(d.get(key), dict):
                d[key].update(value)
            else:
                d[key] = value
        return Scenario.from_dict(d, source or self.source)

    def split(self) -> "list[Scenario]":
        """One scenario per ``[[scheduler]]`` table (a scenario without any stays whole).

        Each scheduler's run is independent (fresh disk, same seeded workload), so running the
        parts gives the same results as running the whole.
        """
        d = self.to_dict()
        scheds = d.get("scheduler") or []
        if len(scheds) <= 1:
            return [self]
        return [self.replace(scheduler=[s]) for s in scheds]

    def __repr__(self) -> str:
        return f"Scenario(name={self.name!r}, source={self.source!r})"


def _tomllib():
    """Python's TOML reader (imported when a scenario is read as dicts: `iosched run` does not)."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib
