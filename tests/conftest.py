import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# The shared traces (never copied into the repository): $IOSCHED_TRACES, else ../shared/traces
# beside this checkout, as python/iosched/paths.py finds them from the checkout's root.
TRACES = Path(os.environ.get("IOSCHED_TRACES") or os.environ.get("IOSCHED_S_TRACES") or REPO.parent / "shared" / "traces")

SELTZER_Q10 = """
name = "tiny-seltzer"
[device]
preset = "fujitsu-m2361a"
[workload]
kind = "closed-queue"
queue_depth = 10
request_kib = 4
requests = 500
[[scheduler]]
name = "fcfs"
[[scheduler]]
name = "sptf"
label = "stf"
"""


@pytest.fixture
def repo() -> Path:
    return REPO
