"""The core's row tables (``view::rows``, docs/rows.md), which the Python API's summary and a
sweep's rows wrap: each column is the report's own value, whichever way the rows are made."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import torpor
from torpor import native

ROOT = Path(__file__).resolve().parent.parent

UFS_AND_CPUS = """
[platform.ufs]
preset = "samsung-ufs40-class"
[platform.cpu]
preset = "google-gs101"
[[workload.job]]
name = "reads"
rw = "randread"
bs = "4k"
rate_iops = 200
cpus_allowed = "3"
[run]
duration = "200ms"
"""


def test_a_run_s_own_rows_equal_the_rows_of_its_report_read_back():
    # Two ways to the same table: from the typed report as the run ends, and from its JSON.
    report, tables = native.run_scenario_text_rows(UFS_AND_CPUS, "<ufs and cpus>")
    assert native.report_rows(report) == tables
    assert list(tables["summary"]) == ["cpu", "io", "ufs", "system"]


def test_each_column_is_the_report_s_value_under_its_documented_name():
    r = torpor.run(UFS_AND_CPUS)
    v = r.report["variants"][0]
    io, ufs, system = (r.summary[s].iloc[0] for s in ("io", "ufs", "system"))
    assert (io.ios, io.lat_p999_us) == (v["io"]["ios"], v["io"]["all"]["p99_9_us"])
    assert (ufs.scale_ups, ufs.low_clock_pct) == (
        v["ufs"]["counters"]["scale_ups"],
        v["ufs"]["low_clock_pct"],
    )
    # No [policy.hpb]: the hit ratio is a measure the run could not give.
    assert math.isnan(ufs.hpb_hit_ratio)
    assert system.io_total_p99_us == v["cpu"]["io"]["total"]["p99_us"]
    assert r.summary["cpu"].iloc[0].device == "google-gs101"
    # The sweep's row: the device's power, the whole machine's beside it.
    sweep = native.report_rows(r.report)["sweep"][0]
    assert sweep["avg_power_mw"] == v["ufs"]["avg_power_mw"]
    assert sweep["system_energy_mj"] == v["system"]["energy_mj"]
    assert sweep["task_io_p99_us"] == v["cpu"]["io"]["total"]["p99_us"]


def test_each_cpu_s_residency_covers_its_run():
    # Running time and idle states partition each CPU's run: their shares add up to 100 %,
    # and each share is its time over the run's duration.
    r = torpor.run(ROOT / "scenarios" / "qos-msm8916.toml")
    sums = r.residency.groupby(["variant", "cpu"]).time_pct.sum()
    assert sums.tolist() == pytest.approx([100.0] * len(sums), abs=1e-9)
    v = r.report["variants"][0]
    wfi = v["cpu"]["cpus"][1]["states"][0]
    row = r.residency[(r.residency.cpu == 1) & (r.residency.state == wfi["name"])].iloc[0]
    assert row.time_pct == pytest.approx(100 * wfi["time_ns"] / (v["duration_s"] * 1e9))
    assert row.entries == wfi["entries"]
