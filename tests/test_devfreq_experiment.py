"""`torpor reproduce devfreq` (seed 001): its rows against values worked out by hand from the
preset's figures and the poll schedule, its claims, and the Pixel 6a traces where ../shared
holds them."""

from __future__ import annotations

import gzip
import json
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PIXEL = ROOT.parent / "shared" / "real-data" / "blockio" / "acsl-pixel6a"


def central(figure: dict) -> float:
    return figure["value"] if "value" in figure else figure["central"]


def read_latency_s(preset: str, bytes_: int, level: str, gear: int | None = None) -> float:
    """A QD1 read's latency at a level, by the calibration written in service.rs's module
    documentation, from the preset TOML's own figures: host c_h / f, the device's 4 KiB time
    N / IOPS plus the rest at the streaming rate, the link at lanes x Rate-B x 8/10 x 0.91."""
    p = tomllib.loads((ROOT / "presets" / "ufs" / f"{preset}.toml").read_text())
    lanes = central(p["link"]["lanes"])
    max_gear = central(p["link"]["max_gear"])
    f_max = central(p["host"]["max_freq_hz"])
    f = f_max if level == "max" else central(p["host"]["min_freq_hz"])
    g = max_gear if level == "max" else (gear or central(p["host"]["min_gear"]))
    perf = p["performance"]
    iops = central(perf["rand_read_iops"])
    qd = central(perf["iops_queue_depth"])
    l1 = central(perf["read_4k_qd1_us"]) * 1e-6
    seq = central(perf["seq_read_mb_s"]) * 1e6

    def link(gear: int) -> float:
        return lanes * 145.76e6 * 2 ** (gear - 1) * 0.91

    slots = max(1, min(qd, round(iops * (l1 - 1000 / f_max - 4096 / link(max_gear)))))
    t_4k = slots / iops
    s = 512 * 1024
    stream = (s - 4096) / (slots * s / seq - t_4k)
    return 1000 / f + t_4k + (bytes_ - 4096) / stream + bytes_ / link(g)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from click.testing import CliRunner

    from torpor.cli import main

    out = tmp_path_factory.mktemp("devfreq")
    got = CliRunner().invoke(main, ["reproduce", "devfreq", "--out", str(out)])
    assert got.exit_code == 0, got.output
    assert "Pixel 6a traces not run" in got.output
    return json.loads((out / "results.json").read_text())


def row(results: dict, case: int, boost: bool) -> dict:
    return next(r for r in results["runs"] if r["case"] == case and r["boost"] == boost)


def test_rows_have_exactly_the_issue_columns(results: dict) -> None:
    cols = [
        "case",
        "boost",
        "clat_avg_us",
        "clat_device_avg_us",
        "clat_p99_us",
        "bw_mbs",
        "low_clock_pct",
    ]
    assert [list(r) for r in results["runs"]] == [cols] * 4
    assert sorted((r["case"], r["boost"]) for r in results["runs"]) == [
        (1, False),
        (1, True),
        (2, False),
        (2, True),
    ]


def test_case_1_runs_at_the_min_level_without_the_boost_and_at_max_with_it(
    results: dict,
) -> None:
    # 64 KiB reads: 277.104 us at 300 MHz / HS-G5 and 518.705 us at 75 MHz / HS-G1 (the
    # preset's calibration, by hand above). An IO every 10 ms loads the host ~3-5 %: without
    # the boost it goes down at the first poll and stays; with it, every poll sees the floor.
    # The few IOs that meet a scale operation move the mean by well under 1 %.
    at_max = read_latency_s("samsung-ufs40-class", 65536, "max") * 1e6
    at_min = read_latency_s("samsung-ufs40-class", 65536, "min") * 1e6
    on, off = row(results, 1, True), row(results, 1, False)
    assert at_max <= on["clat_device_avg_us"] <= at_max * 1.01
    assert at_min <= off["clat_device_avg_us"] <= at_min * 1.01
    assert on["low_clock_pct"] == 0.0


def host_path_bounds_us() -> tuple[float, float]:
    """What fio's thread on CPU 3 adds to each completion, by the gs101 preset's own figures:
    at least the interrupt on CPU 0, the IPI and the switch at their minimum; at most each at
    its maximum plus, on both CPUs, the little cluster's longest real entry and exit."""
    p = tomllib.loads((ROOT / "presets" / "cpu" / "google-gs101.toml").read_text())
    w = p.get("wakeup")
    costs = ("io_irq", "ipi", "sched")
    lo = sum(w[c]["min_us"] for c in costs) if w else 0.0
    hi = sum(w[c]["max_us"] for c in costs) if w else 0.0
    frac = w["exit"]["max"] if w else 1.0
    little = next(c for c in p["cluster"] if 3 in c["cpus"])
    worst = max(
        s.get("entry_us", 0.0) + s.get("exit_us", s["exit_latency_us"] * frac)
        for s in little["state"]
    )
    return lo, hi + 2 * worst


def test_fio_sees_each_completion_after_the_host_path(results: dict) -> None:
    # The clat fio prints is the device's time plus the path to its thread on CPU 3 (the
    # interrupt on CPU 0, an IPI, CPU 3's wake-up), within the preset's bounds for every IO.
    lo, hi = host_path_bounds_us()
    for r in results["runs"]:
        assert lo <= r["clat_avg_us"] - r["clat_device_avg_us"] <= hi, r


def test_case_1_goes_down_at_the_first_poll(results: dict) -> None:
    # ufs-qcom polls every 60 ms: 15 jiffies at HZ=250, and the timer wheel fires a level-0
    # bucket one jiffy after its expiry, so the first poll comes at jiffy 16, 64 ms. It finds
    # ~3 % load and no IO in flight (the IO of 60 ms is done in well under 1 ms): down, after
    # the gear and clock switch; the min level then holds to the end of the 90 s run.
    p = tomllib.loads((ROOT / "presets" / "ufs" / "samsung-ufs40-class.toml").read_text())
    stall_s = (
        central(p["latency"]["gear_switch_us"]) + central(p["latency"]["clock_switch_us"])
    ) * 1e-6
    expected = 100 * (90 - 0.064 - stall_s) / 90
    assert row(results, 1, False)["low_clock_pct"] == pytest.approx(expected, abs=1e-3)


def test_case_2_bandwidth_is_one_continuous_reader_per_job(results: dict) -> None:
    # Continuous QD1 reads at the max level: each job issues its next 64 KiB read when its
    # thread sees the last one complete, so 65536 B per (host) clat over the jobs' 50 s; the
    # device's part is the preset's 277.104 us, but for the reads of the one poll at the min
    # level at jobs 2 to 5's starts (below). The boost as the patch does it acts at the same
    # poll as the load does, so it changes nothing here.
    at_max = read_latency_s("samsung-ufs40-class", 65536, "max") * 1e6
    for boost in (False, True):
        r = row(results, 2, boost)
        assert r["bw_mbs"] == pytest.approx(65536 / r["clat_avg_us"], rel=0.01)
        assert at_max <= r["clat_device_avg_us"] <= at_max * 1.01
    assert row(results, 2, True)["bw_mbs"] == row(results, 2, False)["bw_mbs"]


def hibern8_exit_and_stall_us() -> tuple[float, float]:
    p = tomllib.loads((ROOT / "presets" / "ufs" / "samsung-ufs40-class.toml").read_text())
    lat = p["latency"]
    stall = central(lat["gear_switch_us"]) + central(lat["clock_switch_us"])
    return central(lat["hibern8_exit_us"]), stall


def test_case_2_leaves_the_clock_low_for_one_poll_at_a_jobs_start(results: dict) -> None:
    # After a continuous job ends, the next poll (every 64 ms: 15 jiffies, fired a jiffy late)
    # sees a window only partly busy; at or below 68 % x 150 / 300 = 34 % (SM8450's clock table
    # has 150 MHz below 300) it goes down, and with nothing outstanding ufs-qcom suspends
    # scaling. The next job's first read resumes it; the poll comes 16 jiffies after the
    # start of that read's jiffy, which is the job's start (20, 40, 60, 80 s: jiffy
    # boundaries), then drains the read in flight (at most one 64 KiB read at the min level)
    # and stalls for the gear and clock switch. At once, the boost scales up at the first
    # read itself: its hibern8 exit (10 s idle), its 64 KiB at the min level, the stall.
    at_min = read_latency_s("samsung-ufs40-class", 65536, "min") * 1e6
    exit_us, stall_us = hibern8_exit_and_stall_us()
    by = {r["variant"]: r for r in results["case2"] if "assumption" not in r}
    off, on, now = by["boost-off"], by["boost-on"], by["boost-at-once"]
    assert off["polling_period_ms"] == 64.0
    assert (off["down_at_or_below_pct"], off["up_from_pct"]) == (34, 71)
    for r in (off, on):
        lows = r["low_ms_at_job_starts"]
        assert lows[0] == 0.0  # the host starts at the max level
        for ms in lows[1:]:
            assert 64 + stall_us / 1000 <= ms <= 64 + (stall_us + at_min) / 1000
    for ms in now["low_ms_at_job_starts"][1:]:
        assert ms == pytest.approx((exit_us + at_min + stall_us) / 1000, abs=1e-3)
    # No oscillation: only the windows in which a job ended were light enough to go down.
    assert off["scale_downs"] == off["windows_at_max_at_or_below_down"] == 4
    assert off["windows_at_min"]["n"] == off["scale_ups"] == 4
    # Under 70/65 a poll goes down only at 5 % or less, which no window reached: no scale.
    dd65 = next(
        r
        for r in results["case2"]
        if r["variant"] == "boost-off" and r.get("assumption", "").startswith("downdiff")
    )
    assert dd65["down_at_or_below_pct"] == 5
    assert dd65["scale_downs"] == 0 and dd65["windows_at_max"]["lowest_pct"] > 5


def test_claims_and_their_verdicts(results: dict) -> None:
    verdicts = {c["claim"].split(":")[0]: c["ok"] for c in results["claims"]}
    assert verdicts["Intermittent IO (case 1)"] is True
    assert verdicts["Continuous IO (case 2)"] is False
    assert verdicts["Measured on a Snapdragon (1+3+4) phone with UFS 4.1"] is None
    assert results["pixel"] == [] and results["pixel_note"].startswith("not run")


def test_the_sensitivity_run_at_hs_g4_matches_its_level_by_hand(results: dict) -> None:
    at_min_g4 = read_latency_s("samsung-ufs40-class", 65536, "min", gear=4) * 1e6
    off = next(
        r
        for r in results["sensitivity"]
        if r["case"] == 1 and r["variant"] == "boost-off" and "HS-G4" in r["assumption"]
    )
    assert at_min_g4 <= off["clat_device_avg_us"] <= at_min_g4 * 1.01


def requests(trace: Path) -> tuple[int, int]:
    """Reads and writes in a MobileBlockIOTraces CSV, counted from the file itself."""
    reads = writes = 0
    with gzip.open(trace, "rt") as f:
        next(f)
        for line in f:
            flag = line.rstrip("\n").split(",")[-4]
            reads += flag == "R"
            writes += flag == "W"
    return reads, writes


@pytest.mark.skipif(
    not PIXEL.is_dir(), reason=f"the Pixel 6a traces are read from {PIXEL} (not shipped)"
)
def test_pixel_traces_under_the_three_boost_modes(cli, tmp_path: Path) -> None:
    got = cli("reproduce", "devfreq", "--out", str(tmp_path), "--traces", str(PIXEL))
    assert got.exit_code == 0
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["pixel_note"] is None
    by = {(r["trace"], r["boost"]): r for r in res["pixel"]}
    for name in ("pubg_exec", "genshin_impact_exec", "telegram_precond"):
        reads, writes = requests(PIXEL / f"{name}.csv.gz")
        for mode in ("off", "next-poll", "at-once"):
            assert by[(name, mode)]["ios"] == reads + writes
    # Telegram's install trace holds no read, and the traces mark no write synchronous: no bio
    # qualifies, the boost never arms, and the three runs are the same run.
    assert requests(PIXEL / "telegram_precond.csv.gz")[0] == 0
    runs = [by[("telegram_precond", m)] for m in ("off", "next-poll", "at-once")]
    assert all(
        {k: v for k, v in r.items() if k != "boost"}
        == {k: v for k, v in runs[0].items() if k != "boost"}
        for r in runs
    )
    # Where reads exist the boost does act: more scale-ups than without it.
    assert (
        by[("genshin_impact_exec", "next-poll")]["scale_ups"]
        > by[("genshin_impact_exec", "off")]["scale_ups"]
    )
    assert (tmp_path / "report.html").read_text().count("<figure>") == 2
