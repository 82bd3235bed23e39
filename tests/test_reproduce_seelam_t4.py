"""Seelam et al. 2005's Table 4 (FFSB's web, mail, file server and metadata profiles), quick size."""

from iosched.experiments import seelam2005
from iosched.experiments.block import Plan
from iosched.pool import Pool


def test_table4_quick(tmp_path):
    known = seelam2005.registered_names()
    p = Plan(tmp_path, Pool())
    seelam2005.plan_t4(p, known, quick=True)
    rows, skipped = seelam2005.t4_rows(known)
    profiles = [k for k, _, _ in seelam2005.T4_PROFILES]
    assert profiles == ["web", "mail", "file", "meta"]
    for label, _ in rows:
        for key in profiles:
            assert f"t4-{key}-{seelam2005._key(label)}" in p.scenarios
    p.execute()
    report = seelam2005.report_t4(p, known, quick=True)
    assert "## Table 4: FFSB's server and metadata profiles" in report
    # The paper's figures beside ours, every run finished (a time, not "-").
    assert "| deadline | 924 |" in report
    for label, _ in rows:
        line = next(x for x in report.splitlines() if x.startswith(f"| {label} |"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == 9 and all(c and "not finished" not in c for c in cells), line
        for key in profiles:
            task = p[f"t4-{key}-{seelam2005._key(label)}"]["host"]["tasks"][0]
            assert task["children"] == 4 and task["errors"] == 0, (label, key, task)
    # CFQ has a row in the paper: run once `cfq` is registered, else skipped with a line.
    if "cfq" in known:
        assert "CFQ" in [label for label, _ in rows]
    else:
        assert "- CFQ: not run: scheduler `cfq` is not registered" in report
    assert "LAS trails CAS on the mail server by 62%" in report
    assert "Rankings (fastest first)" in report
    # The metadata profile reads no file data.
    meta = p[f"t4-meta-{seelam2005._key(rows[0][0])}"]["host"]["tasks"][0]
    assert meta["bytes_read"] == 0 and meta["bytes_written"] > 0


def test_table4_sizes():
    full, quick = seelam2005.t4_size(False), seelam2005.t4_size(True)
    assert (full["files"], full["dirs"], full["ops"], full["memory_mib"]) == (100_000, 100, 20_000, 1024)
    assert quick["files"] < full["files"] and quick["ops"] < full["ops"]
    # The file set (4-64 KiB, mean 34 KiB) stays larger than memory at both sizes.
    for z in (full, quick):
        assert z["files"] * 34 / 1024 > 3 * z["memory_mib"]
