"""iosched: disk I/O scheduling toolkit (Rust simulator core, Python API and CLI).

    >>> import iosched
    >>> res = iosched.run(iosched.Scenario.default())
    >>> res.runs[["scheduler", "throughput_mb_s", "response_ms_p99"]]
"""

from ._native import ScenarioError
from .api import list_devices, list_schedulers, run
from .results import Results
from .scenario import Scenario

__all__ = ["Scenario", "ScenarioError", "Results", "run", "list_schedulers", "list_devices"]
__version__ = "0.1.0"
