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


HPB_JOB = """
[platform.ufs]
preset = "ufs21-64gb-class"
[policy.devfreq]
enabled = false
[policy.hpb]
enabled = true
[[workload.job]]
name = "reads"
rw = "randread"
bs = "4k"
iodepth = 1
number_ios = 20
startdelay = "50ms"
[run]
seed = 1
"""


def test_a_job_s_row_is_fio_s_figures_and_hpb_s_row_the_driver_s_counters():
    report, tables = native.run_scenario_text_rows(HPB_JOB, "<hpb job>")
    w = report["variants"][0]["io"]["workloads"][0]
    (job,) = tables["jobs"]
    # By hand: 20 reads of 4 KiB (81 920 B), started at its 50 ms startdelay.
    assert (job["job"], job["dir"], job["ios"], job["bytes"]) == ("reads", "read", 20, 81920)
    assert job["started_s"] == 0.05
    assert job["start_to_finish_s"] == w["finished_s"] - 0.05
    assert job["bw_mbs"] == 81920 / w["fio"]["runtime_ms"] / 1000
    fio = w["fio"]["read"]
    assert job["clat_mean_us"] == fio["clat_mean_ns"] / 1000
    assert job["clat_p99_9_us"] == dict(fio["clat_percentiles_ns"])[99.9] / 1000
    (hpb,) = tables["hpb"]
    stats = report["variants"][0]["ufs"]["hpb"]["stats"]
    assert hpb["hpb"] is True
    assert (hpb["hit_cnt"], hpb["miss_cnt"]) == (stats["hit_cnt"], stats["miss_cnt"])
    # Every read is 4 KiB, so each is eligible: sent as HPB READ or not, 20 in all.
    assert hpb["hit_cnt"] + hpb["miss_cnt"] == 20
