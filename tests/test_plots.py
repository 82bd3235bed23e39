"""Issue 23, plots: a sweep over a category is drawn as bars, a confidence interval only with more
than one seed, axes in words with units, a title on every sweep plot; run's response-time CDF
per process (a 38-request process has its own panel)."""

import pandas as pd
import pytest
from matplotlib.collections import PolyCollection

import iosched
from iosched.labels import field_label, path_label
from iosched.plots import response_cdf_figure, run_plots, sweep_figure
from iosched.sweep import Parameter


def summary(values, seeds: int, schedulers=("clook", "deadline")):
    rows = []
    for i, v in enumerate(values):
        for k, s in enumerate(schedulers):
            mean = 10.0 + i + k
            half = 0.5 if seeds > 1 else float("nan")
            rows.append({"param:x": v, "scheduler": s, "metric": "throughput_mb_s", "n": seeds, "mean": mean,
                         "std": half, "ci95_half_width": half, "ci95_low": mean - half, "ci95_high": mean + half})
    return pd.DataFrame(rows).rename(columns={"param:x": "param:device.preset" if isinstance(values[0], str)
                                              else "param:process[0].think_us"})


def texts(fig) -> str:
    ax = fig.axes[0]
    return " | ".join([ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
                      + [t.get_text() for t in ax.get_legend().get_texts()] + [ax.get_legend().get_title().get_text()])


def test_a_sweep_over_presets_is_bars_not_lines():
    presets = ("ibm-deskstar-34gxp", "maxtor-stm332061", "fujitsu-m2361a")
    fig = sweep_figure(summary(presets, 1), [Parameter("device.preset", presets)], "throughput_mb_s", "two-readers")
    ax = fig.axes[0]
    assert not ax.lines  # before: one line per scheduler joining the presets
    assert len(ax.patches) == 2 * 3
    assert [t.get_text() for t in ax.get_xticklabels()] == list(presets)
    text = texts(fig)
    assert "two-readers: throughput (MB/s) against device preset" in text
    assert "95%" not in text.replace("no confidence interval", "") and "one seed" in text
    assert ax.get_xlabel() == "device preset" and ax.get_ylabel() == "throughput (MB/s)"


def test_a_numeric_sweep_with_seeds_has_lines_and_bands():
    values = (0, 2000, 8000)
    fig = sweep_figure(summary(values, 5), [Parameter("process[0].think_us", values)], "throughput_mb_s", "t")
    ax = fig.axes[0]
    assert len(ax.lines) == 2 and sum(isinstance(c, PolyCollection) for c in ax.collections) == 2
    assert ax.get_xlabel() == "process 0 think time (us)"  # was `process[0].think_us`
    assert "mean of 5 seeds" in ax.get_title() and "95% confidence interval" in ax.get_title()


def test_one_seed_draws_no_band():
    values = (0, 2000)
    fig = sweep_figure(summary(values, 1), [Parameter("process[0].think_us", values)], "throughput_mb_s")
    ax = fig.axes[0]
    assert not any(isinstance(c, PolyCollection) for c in ax.collections)
    assert "one seed" in ax.get_title() and "95%" not in ax.get_ylabel()


@pytest.mark.parametrize("name,label", [
    ("throughput_mb_s", "throughput (MB/s)"), ("response_ms_p99", "response time p99 (ms)"), ("iops", "IOPS"),
    ("seek_mean_cylinders", "seek mean (cylinders)"), ("utilization_busy", "utilization busy (fraction of the time)"),
])
def test_metric_labels_in_words(name, label):
    assert field_label(name) == label


def test_path_labels_in_words():
    assert path_label("workload.queue_depth") == "workload queue depth"
    assert path_label("scheduler[1].timer_granularity_us") == "scheduler 1 timer granularity (us)"
    assert path_label("run.duration_s") == "run duration (s)"


WAL = """name = "wal"
[device]
preset = "ibm-deskstar-34gxp"
[[process]]
name = "scan"
request_kib = 128
file_mib = 2048
think_us = 0
[[process]]
name = "wal-writer"
op = "write"
request_kib = 8
file_mib = 64
think_us = 50000
requests = 38
[run]
duration_s = 4
[[scheduler]]
name = "clook"
[[scheduler]]
name = "deadline"
"""


def test_run_cdf_is_per_process_and_a_small_process_has_its_panel(tmp_path):
    res = iosched.run(iosched.Scenario.from_text(WAL))
    fig = response_cdf_figure(res.summaries, "wal")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    # Before: one pooled curve per scheduler, where 38 writes vanish among the scan's reads.
    assert [ax.get_title().split(":")[0] for ax in panels] == ["scan", "wal-writer"]
    wal = panels[1]
    assert len(wal.lines) == 2 and "38 requests" in wal.get_title()
    assert fig._suptitle.get_text() == "wal: response-time CDF per process"
    paths = run_plots(res.summaries, tmp_path, "wal")
    assert [p.name for p in paths] == ["response_cdf.png", "throughput.png"] and all(p.stat().st_size > 1000 for p in paths)


def test_a_sweep_over_scheduler_names_draws_one_bar_per_run_centred():
    names = ("clook", "sptf", "bfq")
    rows = [{"param:scheduler[0].name": n, "scheduler": n, "metric": "throughput_mb_s", "n": 1, "mean": 3.0 + i,
             "std": float("nan"), "ci95_half_width": float("nan"), "ci95_low": float("nan"), "ci95_high": float("nan")}
            for i, n in enumerate(names)]
    fig = sweep_figure(pd.DataFrame(rows), [Parameter("scheduler[0].name", names)], "throughput_mb_s")
    ax = fig.axes[0]
    assert not ax.lines and len(ax.patches) == 3
    assert [round(p.get_x() + p.get_width() / 2, 6) for p in ax.patches] == [0, 1, 2]  # each on its category
    assert ax.get_xlabel() == "scheduler 0 name"
