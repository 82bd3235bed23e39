"""Progress: what `iosched.api.run` reports to its `progress` callback. A module of its own so
that a run without a callback (`iosched run FILE --json`) does not import collections for
namedtuple (a millisecond, the largest import left on that path); iosched.api.Progress is this
class."""

from collections import namedtuple


class Progress(namedtuple("Progress", ("runs_done", "runs_total", "completed", "simulated_s"))):
    """What a running scenario has done: runs (schedulers) finished of `runs_total`, and in the
    current run the requests completed and the simulated time reached. (Immutable; a named
    tuple rather than a dataclass, whose import is a tenth of a short run's time.)"""

    __slots__ = ()
