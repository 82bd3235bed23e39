"""iosched: disk I/O scheduling toolkit (Rust simulator core, Python API and CLI).

    >>> import iosched
    >>> res = iosched.run(iosched.Scenario.default())
    >>> res.runs[["scheduler", "throughput_mb_s", "response_ms_p99"]]

Names are imported on first use, so `import iosched` (and `iosched --version`) stays quick:
pandas is loaded only when a table is asked for, matplotlib only when a plot is drawn.
"""

__version__ = "0.1.0"
__all__ = ["Scenario", "ScenarioError", "Results", "run", "replay", "trace_scenario", "trace_stats", "list_schedulers",
           "list_devices", "list_flash_devices", "Pool", "__version__"]

_LAZY = {
    "Scenario": ("scenario", "Scenario"),
    "ScenarioError": ("scenario", "ScenarioError"),
    "Results": ("results", "Results"),
    "run": ("api", "run"),
    "list_schedulers": ("api", "list_schedulers"),
    "list_devices": ("api", "list_devices"),
    "list_flash_devices": ("api", "list_flash_devices"),
    "Pool": ("pool", "Pool"),
    # Not in a module named `replay`: importing it would bind iosched.replay to the module.
    "replay": ("trace_replay", "replay"),
    "trace_scenario": ("trace_replay", "trace_scenario"),
    "trace_stats": ("traces", "trace_stats"),
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'iosched' has no attribute {name!r}")


def __dir__():
    # A lazy name once used is in globals() too: each name once.
    return sorted(set(globals()) | set(_LAZY))
