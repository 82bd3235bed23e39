"""Where the shared traces are: one rule for the CLI, scenario files, the reproductions and the
tests.

The traces (MQSim's samples, the S suite's start-up traces, the blktrace sample) keep their own
licences and are never copied into the repository; they are read from a directory:

1. the one given (`--traces DIR`),
2. else `$IOSCHED_TRACES` (`$IOSCHED_S_TRACES`, its older name, is read too),
3. else `../shared/traces` relative to the current directory (beside a checkout run from its
   root, where this workplace keeps them).

A scenario file names a trace in it as `{traces}/NAME`, so it works from any copy.
"""

from __future__ import annotations

import os
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Optional, Union

ENV = "IOSCHED_TRACES"
OLD_ENV = "IOSCHED_S_TRACES"
# Text, not a Path: pathlib is imported only when a scenario names a trace (every scenario
# goes through expand_traces).
DEFAULT = "../shared/traces"
# The token a scenario's trace path may start with.
TOKEN = "{traces}"


def traces_dir(given: Optional[Union[str, Path]] = None) -> Path:
    """The traces directory by the rule above (it may not exist: callers say what is missing)."""
    from pathlib import Path

    if given is not None:
        return Path(given)
    for var in (ENV, OLD_ENV):
        value = os.environ.get(var)
        if value:
            return Path(value)
    return Path(DEFAULT)


def expand_traces(text: str, source: str) -> str:
    """Scenario text with `{traces}` replaced by the traces directory (absolute), or an error
    naming the directory when the text uses it and it does not exist."""
    if TOKEN not in text:
        return text
    d = traces_dir()
    if not d.is_dir():
        from ._native import ScenarioError

        raise ScenarioError(f"{source}: a trace path uses {TOKEN}, the traces directory, and {d} is not a directory: "
                            f"pass --traces DIR or set ${ENV} (default: {DEFAULT} from the current directory)")
    return text.replace(TOKEN, d.resolve().as_posix())
