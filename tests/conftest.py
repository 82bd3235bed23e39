from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

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
