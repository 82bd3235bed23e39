"""Seelam et al. 2005's Table 4 (FFSB's web, mail, file server and metadata profiles), quick size."""

from iosched.experiments import seelam2005
from iosched.experiments.block import Plan
from iosched.ledger import Tables
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
    t = Tables()
    seelam2005.tables_t4(p, known, t)
    report = seelam2005.report_t4(t, known, quick=True)
    assert "## Table 4: FFSB's server and metadata profiles" in report
    # Every run finished: a time in every cell (no "> N" bound), every thread without errors.
    for label, _ in rows:
        line = next(x for x in report.splitlines() if x.startswith(f"| {label} |"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == 5 and all(c and not c.startswith(">") for c in cells), line
        for key in profiles:
            assert isinstance(t.ref(f"table4/{label}/{key}"), float)
            task = p[f"t4-{key}-{seelam2005._key(label)}"]["host"]["tasks"][0]
            assert task["children"] == 4 and task["errors"] == 0, (label, key, task)
    # CFQ's row is the paper's kernel's (cfq-2.6.9); today's cfq is a controlled run that changes
    # the scheduler's name only.
    assert "cfq-2.6.9" in known and "CFQ" in [label for label, _ in rows]
    assert 'name = "cfq-2.6.9"' in p.scenarios[f"t4-web-{seelam2005._key('CFQ')}"]
    assert 'name = "cfq"' in p.scenarios["t4-web-cfq-4.4"]
    assert p.scenarios["t4-web-cfq-4.4"].replace('name = "cfq"', 'name = "cfq-2.6.9"') == \
        p.scenarios[f"t4-web-{seelam2005._key('CFQ')}"]
    assert t.ref("table4/CFQ-4.4/meta") > 0
    assert "Ours, fastest first" in report
    assert t.ref("table4/deadline-read64/web") > 0
    # LAS's and CAS's counters by profile, which the notes quote.
    assert t.ref("table4_counters/mail/CAS_antic_waits") >= 0
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
