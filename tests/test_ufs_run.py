"""UFS scenarios end to end, through the command line and the Python API.

Every expected number is worked out here, independently of torpor's output: service times from
the preset TOML's own figures by the calibration formulas of
``crates/torpor-core/src/storage/ufs/service.rs`` (its module documentation), and clock
timelines from the devfreq schedule (``docs/scenario.md``: polls in whole jiffies on the
kernel's timer wheel, the first command opening the load window, a scale stalling IO for the
preset's gear and clock switch).
"""

from __future__ import annotations

import itertools
import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import torpor

ROOT = Path(__file__).resolve().parent.parent
PRESETS = ROOT / "presets" / "ufs"
UFS40 = "samsung-ufs40-class"

# The model's two stated constants (service.rs module documentation): host cycles per command
# c_h, and the link's UniPro/UPIU framing efficiency. The rest comes from each preset.
HOST_CYCLES = 1000
LINK_EFFICIENCY = 0.91
SMALL = 4096
SEQ_REFERENCE = 512 * 1024


def nearest(num: int, den: int) -> int:
    """num / den rounded half up, in integers (the model's nanosecond rounding)."""
    return (2 * num + den) // (2 * den)


class HandModel:
    """The calibration of service.rs's module documentation, applied to a preset file."""

    def __init__(self, preset_id: str) -> None:
        self.doc = tomllib.loads((PRESETS / f"{preset_id}.toml").read_text())
        self.lanes = int(self.fig("link", "lanes"))
        self.max_gear = int(self.fig("link", "max_gear"))
        self.min_gear = int(self.fig("host", "min_gear"))
        self.max_hz = int(self.fig("host", "max_freq_hz"))
        self.min_hz = int(self.fig("host", "min_freq_hz"))
        iops_r = self.fig("performance", "rand_read_iops")
        iops_w = self.fig("performance", "rand_write_iops")
        qd = int(self.fig("performance", "iops_queue_depth"))
        l1 = self.fig("performance", "read_4k_qd1_us") * 1e-6
        seq_r = self.fig("performance", "seq_read_mb_s") * 1e6
        b = self.link_bps(self.max_gear)
        # N = round(IOPS_read x (L1 - t_h - 4096 / B)), within 1..=QD.
        n = min(max(round(iops_r * (l1 - HOST_CYCLES / self.max_hz - SMALL / b)), 1), qd)
        self.slots = n
        # t_4k = N / IOPS, in whole ns.
        self.read_4k_ns = round(n / iops_r * 1e9)
        self.write_4k_ns = round(n / iops_w * 1e9)
        # r solves N x S / t_d(S) = seq: r = (S - 4096) / (N x S / seq - t_4k).
        self.read_stream = round((SEQ_REFERENCE - SMALL) / (n * SEQ_REFERENCE / seq_r - n / iops_r))

    def fig(self, section: str, key: str) -> float:
        """A figure as the run takes it: `value`, or the estimate's `central`."""
        f = self.doc[section][key]
        return float(f["value"] if "value" in f else f["central"])

    def link_bps(self, gear: int) -> int:
        """B(g) = lanes x 1457.6 Mbit/s x 2^(g-1) x 8/10 / 8 x efficiency, bytes/s."""
        lane = 145_760_000 * 2 ** (gear - 1)
        return round(self.lanes * lane * LINK_EFFICIENCY)

    def host_ns(self, hz: int) -> int:
        return nearest(HOST_CYCLES * 10**9, hz)

    def read_ns(self, nbytes: int, hz: int, gear: int) -> int:
        """QD1 read latency: t_h + t_d(read, b) + t_l(b)."""
        device = self.read_4k_ns + nearest((nbytes - SMALL) * 10**9, self.read_stream)
        return self.host_ns(hz) + device + nearest(nbytes * 10**9, self.link_bps(gear))

    def at_max(self, nbytes: int) -> int:
        return self.read_ns(nbytes, self.max_hz, self.max_gear)

    def at_min(self, nbytes: int) -> int:
        return self.read_ns(nbytes, self.min_hz, self.min_gear)

    def stall_ns(self) -> int:
        """A scale between the levels changes both gear and clock: both switches, in full."""
        us = self.fig("latency", "gear_switch_us") + self.fig("latency", "clock_switch_us")
        return round(us * 1000)

    def hibern8_exit_ns(self) -> int:
        return round(self.fig("latency", "hibern8_exit_us") * 1000)


def poll_ns(ms: int, hz: int = 250) -> int:
    """How long after a jiffy's tick a delayed work queued in that jiffy runs: msecs_to_jiffies
    (rounded up) jiffies, and the timer wheel's level 0 (delays below 63 jiffies) fires a bucket
    one jiffy after its expiry (calc_index: (expires >> 0) + 1), so one tick more."""
    delay = math.ceil(ms * hz / 1000)
    assert delay < 63, "level 0 of the wheel only"
    return (delay + 1) * (10**9 // hz)


def poll_after_ns(t_ns: int, ms: int, hz: int = 250) -> int:
    """When a delayed work queued at t_ns runs: from the start of t_ns's jiffy."""
    tick = 10**9 // hz
    return t_ns // tick * tick + poll_ns(ms, hz)


def ufs_toml(preset: str, devfreq: str, jobs: str, run: str, variants: str = "") -> str:
    return (
        f'[platform.ufs]\npreset = "{preset}"\n\n[policy.devfreq]\n{devfreq}\n\n'
        f"{jobs}\n[run]\n{run}\n{variants}"
    )


def job(name: str, bs: str, extra: str) -> str:
    return f'[[workload.job]]\nname = "{name}"\nrw = "randread"\nbs = "{bs}"\n{extra}\n'


def only_variant(report: dict[str, Any], name: str = "base") -> dict[str, Any]:
    return next(v for v in report["variants"] if v["name"] == name)


def fio_read(variant: dict[str, Any], job_name: str) -> dict[str, Any]:
    w = next(w for w in variant["io"]["workloads"] if w["name"] == job_name)
    return w["fio"]["read"]


def run_json(cli, tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "s.toml"
    path.write_text(text)
    r = cli("run", str(path), "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


# (a) Clock scaling off: every IO at the max level.


@pytest.mark.parametrize(
    ("preset", "bs", "nbytes"),
    [
        ("samsung-ufs40-class", "4k", 4096),
        ("samsung-eufs31-512gb", "4k", 4096),
        ("ufs21-64gb-class", "4k", 4096),
        ("samsung-ufs40-class", "64k", 65536),
    ],
)
def test_with_scaling_off_a_qd1_read_takes_host_device_and_link_at_max(
    cli, tmp_path, preset, bs, nbytes
):
    text = ufs_toml(
        preset, "enabled = false", job("qd1", bs, "number_ios = 500"), 'duration = "1s"'
    )
    v = only_variant(run_json(cli, tmp_path, text))
    # Back to back at QD1: each IO is issued as the previous completes, so the device never
    # idles (no hibern8 exit) and every IO takes t_h(f_max) + t_d + t_l(g_max) from the preset's
    # figures (HandModel). samsung-ufs40-class 4k by hand: B(G5) = 2 x 2332.16e6 x 0.91 =
    # 4244.53 MB/s, t_h = 1000 / 300 MHz = 3333 ns, N = round(130000 x (100 - 3.333 - 0.965)
    # us) = 12, t_4k = 12 / 130000 = 92308 ns, t_l = 4096 / B = 965 ns: 96606 ns.
    fio = fio_read(v, "qd1")
    assert fio["ios"] == 500
    doc = tomllib.loads((PRESETS / f"{preset}.toml").read_text())
    if "ftl" in doc:
        # A preset with an FTL serves reads from it (ftl.rs): t_h + controller + tR + the NAND
        # page's transfer + t_l when the device's map cache holds the entry, one map-page read
        # (tR + 4 KiB over the channel) more when not. ufs21-64gb-class by hand: 5000 + 90000
        # + 58000 + 10240 + 3860 = 167100 ns, and 235340 ns with the miss.
        m = HandModel(preset)
        f = {k: v["value"] if "value" in v else v["central"] for k, v in doc["ftl"].items()}
        nand = round(f["nand_read_us"] * 1000) + nearest(
            nbytes * 10**9, int(f["channel_mb_s"] * 10**6)
        )
        hit = nearest(HOST_CYCLES * 10**9, m.max_hz) + round(f["controller_us"] * 1000) + nand
        hit += nearest(nbytes * 10**9, round(m.link_bps(m.max_gear)))
        miss = (
            hit
            + round(f["nand_read_us"] * 1000)
            + nearest(4096 * 10**9, int(f["channel_mb_s"] * 10**6))
        )
        if preset == "ufs21-64gb-class":
            assert (hit, miss) == (167100, 235340)
        assert (fio["clat_min_ns"], fio["clat_max_ns"]) == (hit, miss)
    else:
        expected = HandModel(preset).at_max(nbytes)
        if (preset, bs) == (UFS40, "4k"):
            assert expected == 3333 + 92308 + 965
        assert fio["clat_min_ns"] == fio["clat_max_ns"] == expected
        assert abs(fio["clat_mean_ns"] - expected) <= 1
        assert abs(v["io"]["read"]["mean_us"] * 1000 - expected) <= 1
    ufs = v["ufs"]
    assert ufs["devfreq"] is None
    assert ufs["freq_timeline"] == [[0, HandModel(preset).max_hz]]
    assert ufs["low_clock_pct"] == 0.0
    assert ufs["counters"]["hibern8_exits"] == 0


# (b) The min level, reached by an exact schedule.

# 4 KiB reads at 100 IOPS from 3 ms (one every 10 ms); polls every 101 ms -> 26 jiffies at
# HZ=250, fired a tick later: every 27 jiffies = 108 ms, so no poll or scale end falls on an
# IO's submission; a delayed timer, so polls run on time.
SLOW_READS = ufs_toml(
    UFS40,
    'profile = "ufshcd"\ntimer = "delayed"\npolling_ms = 101\nrounding = "up"',
    job("slow", "4k", 'rate_iops = 100\nstartdelay = "3ms"\ntime_based = true'),
    'duration = "1s"',
)


def test_rate_limited_reads_scale_down_at_the_first_poll_and_run_at_the_min_level(cli, tmp_path):
    m = HandModel(UFS40)
    period = poll_ns(101)
    assert period == 108_000_000
    # The first read (3 ms) opens the load window; the first poll at 108 ms sees the reads at
    # 3, 13, ..., 103 ms (11) busy t_max each over 105 ms: 1.01 %, below the scale-down
    # threshold (70 - 5 // 2) x 150 / 300 = 34 % (ufshcd's 70/5, rounding up to SM8450's
    # clock table). The scale stalls gear_switch + clock_switch = 1000 + 1000 us: the min level
    # serves from 110 ms on. At the min level the load, 121 us per 10 ms, never exceeds 70 %:
    # no scale back up.
    down_at = period + m.stall_ns()
    assert down_at == 110_000_000
    v = only_variant(run_json(cli, tmp_path, SLOW_READS))
    ufs = v["ufs"]
    assert ufs["freq_timeline"] == [[0, m.max_hz], [down_at, m.min_hz]]
    assert ufs["counters"]["scale_downs"] == 1 and ufs["counters"]["scale_ups"] == 0
    assert ufs["counters"]["scale_blocked_ns"] == m.stall_ns()  # nothing to drain
    # Reads from 113 ms on run at 75 MHz and HS-G1: t_h = 1000 / 75 MHz = 13333 ns,
    # t_l = 4096 / (2 x 145.76e6 x 0.91) = 15440 ns, the same 92308 ns in the device.
    t_max, t_min = m.at_max(4096), m.at_min(4096)
    assert t_min == 13333 + 92308 + 15440
    fio = fio_read(v, "slow")
    # 100 reads in the second (3 ms + k x 10 ms, k = 0..99): 11 before the scale, 89 after.
    assert fio["ios"] == 100
    assert (fio["clat_min_ns"], fio["clat_max_ns"]) == (t_max, t_min)
    assert abs(fio["clat_mean_ns"] - (11 * t_max + 89 * t_min) / 100) <= 1
    # low_clock_pct from the timeline: the spans at min_hz over the run.
    end = 10**9
    times = [t for t, _ in ufs["freq_timeline"]] + [end]
    at_min = sum(
        b - a
        for (a, b), (_, hz) in zip(itertools.pairwise(times), ufs["freq_timeline"], strict=True)
        if hz == m.min_hz
    )
    assert abs(ufs["low_clock_pct"] - 100 * at_min / end) < 1e-9
    assert ufs["time_at_min_ns"] == at_min
    # And from the poll schedule alone: nothing scales before the first poll and its stall,
    # so at most (1 s - 108 ms - 2 ms); the second poll (216 ms) would see a full window of
    # the same load, so at least (1 s - 216 ms - 2 ms); the first poll had a window here.
    assert 100 * (end - 2 * period - m.stall_ns()) / end <= ufs["low_clock_pct"]
    assert ufs["low_clock_pct"] <= 100 * (end - period - m.stall_ns()) / end
    assert abs(ufs["low_clock_pct"] - 89.0) < 1e-9


# (c) The boost.


def test_the_boost_at_once_lowers_the_mean_latency_of_the_rfc_workload(cli):
    r = cli("run", str(ROOT / "scenarios" / "ufs-boost.toml"), "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    off = only_variant(report, "boost off")
    at_once = only_variant(report, "boost 30 ms, at once")
    assert off["io"]["ios"] == at_once["io"]["ios"] == 5 * 1000
    assert at_once["io"]["read"]["mean_us"] < off["io"]["read"]["mean_us"]
    for name in ("job1", "job2", "job3", "job4", "job5"):
        assert fio_read(at_once, name)["clat_mean_ns"] < fio_read(off, name)["clat_mean_ns"]
    # At once, by hand: the first read sets the floor and devfreq's range becomes {max}, so
    # no poll can scale down while it holds; when it goes (9 jiffies after each job's last read)
    # ufs-qcom has already suspended scaling at the max level (suspend_on_no_request), so the
    # notifier's evaluation is skipped. Every read runs at max: t_max(64k), plus the hibern8
    # exit for the first read of jobs 2 to 5 (10 s idle before each, over the 150 ms timers).
    m = HandModel(UFS40)
    assert at_once["ufs"]["freq_timeline"] == [[0, m.max_hz]]
    expected = m.at_max(65536) + 4 * m.hibern8_exit_ns() / 5000
    assert abs(at_once["io"]["read"]["mean_us"] * 1000 - expected) <= 1
    # Off: reads at 100 IOPS keep the host 3-5 % busy, below every threshold: most run at
    # min, so the mean is at least 90 % of the way to t_min(64k).
    t_max, t_min = m.at_max(65536), m.at_min(65536)
    assert off["io"]["read"]["mean_us"] * 1000 > t_max + 0.9 * (t_min - t_max)


# One job of 64 KiB reads at 100 IOPS starting at 1003 ms after an idle start, with polls every
# 108 ms (101 ms: 26 jiffies, a tick later) on a delayed timer.
LATE_JOB = ufs_toml(
    UFS40,
    'profile = "ufshcd"\ntimer = "delayed"\npolling_ms = 101',
    job("late", "64k", 'rate_iops = 100\nstartdelay = "1003ms"\nruntime = "300ms"'),
    'duration = "1400ms"',
    '[[variant]]\nname = "off"\n'
    '[[variant]]\nname = "next-poll"\n[variant.policy.boost]\ndev_freq_timeout_ms = 30\n'
    '[[variant]]\nname = "at-once"\n[variant.policy.boost]\ndev_freq_timeout_ms = 30\n'
    'notify = "at-once"\n',
)


def test_the_boost_at_the_next_poll_acts_a_polling_period_after_the_job_starts(cli, tmp_path):
    m = HandModel(UFS40)
    period, stall = poll_ns(101), m.stall_ns()
    start = 1_003_000_000
    # Idle start: the poll at 108 ms finds no window (no command yet) and asks for the
    # maximum, which holds; the poll at 216 ms sees an empty window, load 0, and scales down:
    # min from 216 + 2 = 218 ms, and scaling suspends (nothing outstanding).
    down = 2 * period + stall
    assert down == 218_000_000
    report = run_json(cli, tmp_path, LATE_JOB)
    off, next_poll, at_once = (only_variant(report, n) for n in ("off", "next-poll", "at-once"))
    # Next poll: the job's first read (1003 ms, in the jiffy that starts at 1000 ms) resumes
    # scaling, so the next poll comes one period after that jiffy's tick, at 1108 ms; the
    # boost's floor, set by that read, makes it choose max; the read of 1103 ms finished long
    # before (519 us at min), so the scale only stalls: max from 1110 ms. The floor then holds
    # past the run's end (its last read is at 1293 ms, jiffy 323: the work removes it a jiffy
    # after 323 + 8, at 1328 ms; the polls at 1216 and 1324 ms both see it).
    up = poll_after_ns(start, 101) + stall
    assert up == 1_110_000_000
    assert next_poll["ufs"]["freq_timeline"] == [[0, m.max_hz], [down, m.min_hz], [up, m.max_hz]]
    # Without the boost the poll at 1108 ms sees 11 reads of t_min(64k) in 105 ms, about 5.4 %,
    # far below 70 %: the clock stays at min.
    assert off["ufs"]["freq_timeline"] == [[0, m.max_hz], [down, m.min_hz]]
    # At once: the floor's notifier evaluates when the first read's boost work runs (at its
    # submission), which drains that read first: the hibern8 exit (idle since 210 ms, over the
    # 150 ms timers), its 64 KiB at min, then the stall.
    first_read_done = start + m.hibern8_exit_ns() + m.at_min(65536)
    assert at_once["ufs"]["freq_timeline"][:3] == [
        [0, m.max_hz],
        [down, m.min_hz],
        [first_read_done + stall, m.max_hz],
    ]


# (d) The command line's views.


def test_fio_view_prints_the_ufs_job_as_fio_does(cli, tmp_path):
    path = tmp_path / "slow.toml"
    path.write_text(SLOW_READS)
    r = cli("run", str(path), "--fio")
    assert r.exit_code == 0, r.output
    out = r.stdout
    m = HandModel(UFS40)
    t_max, t_min = m.at_max(4096), m.at_min(4096)
    mean_us = (11 * t_max + 89 * t_min) / 100 / 1000
    # 100 reads of 4 KiB: 400 KiB; fio's line for the group and its clat (usec) line with the
    # hand figures of test (b): min 96.606, max 121.081 us, printed as fio does (whole us).
    assert re.search(r"^slow: \(groupid=0, jobs=1\): err= 0", out, re.M), out
    assert re.search(r"^  read: IOPS=100, BW=.*\(400KiB/", out, re.M), out
    clat = re.search(r"clat \(usec\): min=(\d+), max=(\d+), avg=([\d.]+),", out)
    assert clat, out
    assert (int(clat[1]), int(clat[2])) == (t_max // 1000, t_min // 1000)
    assert clat[3] == f"{mean_us:.2f}"
    assert "clat percentiles (usec):" in out
    assert "Run status group 0 (all jobs):" in out


# The `ufs` section's keys, as report.rs's UfsSection (with UfsStats flattened into it) and
# docs/scenario.md ("What a UFS run reports") list them.
UFS_KEYS = {
    "device",
    "min_hz",
    "max_hz",
    "min_gear",
    "max_gear",
    "devfreq",
    "boost_timeout_ms",
    "boost_notify",
    "notes",
    "energy_mj",
    "energy_per_io_uj",
    "avg_power_mw",
    "states",
    "time_at_min_ns",
    "low_clock_pct",
    "counters",
    "freq_timeline",
    "freq_changes_dropped",
    "poll_loads",
    "ftl",
    "hpb",
}
DEVFREQ_KEYS = {
    "profile",
    "polling_ms",
    "polling_period_ns",
    "timer",
    "upthreshold",
    "downdifferential",
    "rounding",
    "suspend_on_no_request",
    "hz",
    "freq_range",
    "down_at_or_below_pct",
    "up_from_pct",
}
COUNTER_KEYS = {
    "evaluations",
    "deferred_polls",
    "scale_ups",
    "scale_downs",
    "scale_refusals",
    "scale_blocked_ns",
    "suspensions",
    "boost_sets",
    "boost_removals",
    "hibern8_exits",
}


def test_json_has_the_promised_ufs_section(cli, tmp_path):
    v = only_variant(run_json(cli, tmp_path, SLOW_READS))
    ufs = v["ufs"]
    assert set(ufs) == UFS_KEYS
    assert set(ufs["devfreq"]) == DEVFREQ_KEYS
    assert set(ufs["counters"]) == COUNTER_KEYS
    assert [s["name"] for s in ufs["states"]] == [
        "busy",
        "idle",
        "hibern8",
        "clock-gated",
        "scaling",
    ]
    # The resolved parameters are the scenario's: ufshcd's 70/5 with the overrides, and the
    # polling period in whole jiffies (101 ms: 26 jiffies, fired a tick later: 27 x 4 ms).
    assert ufs["devfreq"] == {
        "profile": "ufshcd",
        "polling_ms": 101,
        "polling_period_ns": 108_000_000,
        "timer": "delayed",
        "upthreshold": 70,
        "downdifferential": 5,
        "rounding": "up",
        "suspend_on_no_request": False,
        "hz": 250,
        "freq_range": "v6.17",
        # samsung-ufs40-class's clock table has 150 MHz below its 300 MHz max: a poll at max
        # goes down up to 68 % x 150 / 300 = 34 % busy; one at min goes up above 70 %.
        "down_at_or_below_pct": 34,
        "up_from_pct": 71,
    }
    m = HandModel(UFS40)
    assert (ufs["min_hz"], ufs["max_hz"], ufs["min_gear"], ufs["max_gear"]) == (
        m.min_hz,
        m.max_hz,
        m.min_gear,
        m.max_gear,
    )
    # The states cover the run: 1 s.
    assert sum(s["time_ns"] for s in ufs["states"]) == 10**9
    assert (ufs["boost_timeout_ms"], ufs["boost_notify"]) == (0, "next-poll")


def test_the_profiles_resolve_to_their_drivers_parameters(cli, tmp_path):
    # docs/scenario.md's table: ufshcd 100 ms deferrable 70/5; ufs-qcom 60 ms delayed 70/5
    # suspend_on_no_request; ufs-mediatek 200 ms deferrable 50/20 with HS-G4 at min. Polling
    # periods at HZ=250 in 4 ms jiffies: 25, 15 and 50 jiffies, each fired a tick later (the
    # timer wheel's level 0): 26, 16 and 51.
    variants = "".join(
        f'[[variant]]\nname = "{p}"\n[variant.policy.devfreq]\nprofile = "{p}"\n'
        for p in ("ufshcd", "ufs-qcom", "ufs-mediatek")
    )
    text = ufs_toml(UFS40, "", job("r", "4k", "rate_iops = 100"), 'duration = "300ms"', variants)
    report = run_json(cli, tmp_path, text)
    got = {
        v["name"]: (
            v["ufs"]["devfreq"]["polling_period_ns"],
            v["ufs"]["devfreq"]["timer"],
            v["ufs"]["devfreq"]["upthreshold"],
            v["ufs"]["devfreq"]["downdifferential"],
            v["ufs"]["devfreq"]["suspend_on_no_request"],
            v["ufs"]["min_gear"],
        )
        for v in report["variants"]
    }
    assert got == {
        "ufshcd": (104_000_000, "deferrable", 70, 5, False, 1),
        "ufs-qcom": (64_000_000, "delayed", 70, 5, True, 1),
        "ufs-mediatek": (204_000_000, "deferrable", 50, 20, False, 4),
    }


def test_a_max_freq_past_an_s32_of_khz_caps_at_zero_as_the_kernel_does(cli, tmp_path):
    # 4294967296000 Hz written to max_freq: 4294967296 kHz, passed to dev_pm_qos_update_request
    # as an s32: 0 kHz. The first poll (108 ms: SLOW_READS's 101 ms, 26 jiffies, a tick later)
    # finds a window loaded 1 % and the cap at 0: down, from 108 + 2 ms (the stall), under
    # either form of devfreq_get_freq_range; the run says why.
    text = SLOW_READS.replace('rounding = "up"', 'rounding = "up"\nmax_freq = 4294967296000')
    text += '[[variant]]\nname = "v5.5"\n[variant.policy.devfreq]\nfreq_range = "v5.5"\n'
    text += '[[variant]]\nname = "v6.17"\n'
    report = run_json(cli, tmp_path, text)
    m = HandModel(UFS40)
    for name in ("v5.5", "v6.17"):
        ufs = only_variant(report, name)["ufs"]
        assert ufs["devfreq"]["freq_range"] == name
        assert ufs["freq_timeline"] == [[0, m.max_hz], [poll_ns(101) + m.stall_ns(), m.min_hz]]
        note = "max_freq = 4294967296000 Hz"
        assert any(note in n and "a cap of 0 kHz" in n for n in ufs["notes"]), ufs["notes"]


def test_report_dir_holds_an_html_page_whose_figures_are_svg(cli, tmp_path):
    path = tmp_path / "late.toml"
    path.write_text(LATE_JOB)
    out = tmp_path / "out"
    r = cli("run", str(path), "--brief", "--report", str(out))
    assert r.exit_code == 0, r.output
    report = json.loads((out / "results.json").read_text())
    assert [v["name"] for v in report["variants"]] == ["off", "next-poll", "at-once"]
    page = (out / "report.html").read_text()
    figures = re.findall(r"<figure>(.*?)</figure>", page, re.S)
    assert len(figures) == 2  # the latency CDF and the host's clock
    assert all("<svg" in f for f in figures)
    assert "The host&#x27;s clock" in page or "The host's clock" in page
    for name in ("off", "next-poll", "at-once"):
        assert name in page


# (e) The Python API.


def test_the_api_summary_has_a_ufs_row_per_variant():
    text = SLOW_READS + '[[variant]]\nname = "scaling"\n[[variant]]\nname = "fixed max"\n'
    text += "[variant.policy.devfreq]\nenabled = false\n"
    r = torpor.run(text)
    ufs = r.summary["ufs"]
    assert list(ufs.variant) == ["scaling", "fixed max"]
    assert set(ufs.device) == {UFS40}
    # By hand (test (b)): 89.0 % at min with one scale down; with scaling off, none.
    low = dict(zip(ufs.variant, ufs.low_clock_pct, strict=True))
    assert abs(low["scaling"] - 89.0) < 1e-9 and low["fixed max"] == 0.0
    downs = dict(zip(ufs.variant, ufs.scale_downs, strict=True))
    assert (downs["scaling"], downs["fixed max"]) == (1, 0)
    # Energy per IO is the section's energy over the variant's 100 reads.
    for row in ufs.itertuples():
        assert abs(row.energy_per_io_uj - row.energy_mj * 1000 / 100) < 1e-9
    assert any("calibrated from the preset" in n for n in r.notes)


def test_every_ufs_example_in_the_scenario_reference_runs():
    # The Rust test only parses the examples; the UFS ones must also run, one `ufs` row per
    # variant.
    doc = (ROOT / "docs" / "scenario.md").read_text()
    examples = [b.split("```")[0] for b in doc.split("```toml\n")[1:]]
    ufs_examples = [e for e in examples if "[platform.ufs]" in e]
    assert ufs_examples
    for text in ufs_examples:
        names = [v["name"] for v in tomllib.loads(text).get("variant", [])] or ["base"]
        r = torpor.run(text)
        assert list(r.summary["ufs"].variant) == names


def test_the_api_summary_has_hpbs_hit_ratio():
    # iozone over 256 MiB: 65536 reads over 64 sub-regions of 4 MiB. With HPB each sub-region's
    # first read is a miss (its map is not loaded), and so is every read that arrives while its
    # READ BUFFER is in flight, at most the other 15 threads' one each: between 64 and 64 x 16
    # misses. Without HPB there is no ratio.
    text = (
        '[platform.ufs]\npreset = "ufs21-64gb-class"\n[policy.devfreq]\nenabled = false\n'
        '[policy.hpb]\n[workload.iozone]\nrange = "256m"\n'
        '[[variant]]\nname = "off"\n[variant.policy.hpb]\nenabled = false\n'
        '[[variant]]\nname = "on"\n'
    )
    ufs = torpor.run(text).summary["ufs"].set_index("variant")
    assert pd.isna(ufs.loc["off", "hpb_hit_ratio"])
    assert 1 - 64 * 16 / 65536 <= ufs.loc["on", "hpb_hit_ratio"] <= 1 - 64 / 65536


def test_an_iolog_replays_with_hpb(tmp_path):
    # fio iolog v3 (times in ms): four one-block reads and a 16 KiB read, with a write in
    # between. HPB 1.0 counts exactly the one-block reads, as a hit or a miss; the 16 KiB read
    # and the write are never HPB READs. The first read of sub-region 0 cannot be a hit (no
    # map is loaded yet).
    (tmp_path / "t.iolog").write_text(
        "fio version 3 iolog\n0 /dev/sda add\n0 /dev/sda open\n"
        "0 /dev/sda read 0 4096\n10 /dev/sda read 4096 4096\n20 /dev/sda write 0 4096\n"
        "30 /dev/sda read 0 4096\n40 /dev/sda read 8192 4096\n50 /dev/sda read 16384 16384\n"
        "60 /dev/sda close\n"
    )
    (tmp_path / "s.toml").write_text(
        '[platform.ufs]\npreset = "ufs21-64gb-class"\n[policy.devfreq]\nenabled = false\n'
        '[policy.hpb]\n[workload.replay]\nfile = "t.iolog"\n'
    )
    v = only_variant(torpor.run(str(tmp_path / "s.toml")).report)
    hpb = v["ufs"]["hpb"]["stats"]
    assert hpb["hit_cnt"] + hpb["miss_cnt"] == 4
    assert hpb["miss_cnt"] >= 1
    assert v["io"]["ios"] == 6
