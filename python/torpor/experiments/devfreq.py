"""Seed 001: the block layer's device-frequency PM QoS boost for UFS (Wang Jianzheng, "[PATCH
0/3] block: device frequency PM QoS tuning", 2025-09-14), an unmerged RFC.

The seed ran fio (randread, 64 KiB, iodepth 1, libaio with ``--hipri``, pinned to CPU 3) as five
jobs of 10 s started 20 s apart, on a Snapdragon phone with UFS 4.1, with
``/sys/block/sda/dev_freq_timeout_ms`` = 30 and without. Case 1 set ``--rate=10ms``
(intermittent IO), case 2 ``--rate=0ms`` (continuous).

torpor runs the same jobs as a fio job file on the ``samsung-ufs40-class`` preset (the closest
to UFS 4.1: HS-G5, 2 lanes) behind a Qualcomm host (``ufs-qcom``: 60 ms delayed monitor, 70/5,
suspend when idle), with the boost as the patch does it (devfreq sees it at its next poll) and
as a merged version likely would (at once).

Readings of the seed, stated where they are chosen:

- ``--rate=10ms`` is not a fio rate (``rate`` takes bytes per second); torpor reads it as one
  IO every 10 ms (``rate_iops=100`` per job), the "intermittent" the cover letter describes.
- The seed's latency is fio's clat on the host: fio's thread on CPU 3 sees each completion
  after the UFS host's interrupt (on CPU 0, the host's one interrupt at its default affinity),
  the IPI to CPU 3 and CPU 3's wake-up. torpor runs the jobs as threads on the ``google-gs101``
  CPUs (the phone preset torpor has; the seed's Snapdragon 1+3+4 is not in its data; CPU 3 is
  a little core on both) under teo, so its clat is host-side too; the device-side part is
  reported beside it (``clat_device_avg_us``). ``--hipri`` polls nothing here: fio's libaio
  has no polled path in mainline kernels and a UFS host without MCQ has no poll queues.
- The min level's gear is ufshcd's default HS-G1 (``clk_scaling.min_gear``); a host that keeps
  a higher gear at the min level loses less there, so the size of the case-1 gain hinges on it
  (a sensitivity run at HS-G4 is reported beside the claims).
- The host's devfreq tuning is today's ``ufs-qcom`` (the seed's kernel is not named); the same
  jobs under ufshcd's core defaults (100 ms deferrable monitor, no suspension at the max level)
  are reported beside it, since the two react differently to a job's start, and under
  ``downdifferential`` 65, the value Qualcomm's 2025 patch gives (it says Android has shipped it
  for long).
- Case 2 is also run without ufshcd's CPU latency vote (``pm_qos_enable`` off): the host holds
  the CPUs at 0 us only from its first scale-up (it starts released, as after probe), so whether
  a run ever scales up moves the fio thread's wake-ups, and the bandwidth, by far more than the
  boost does.

The seed's figures, the claim rules and the measures the reports quote are the core's
(``torpor_core::experiments::devfreq``, through ``native.judge_devfreq``); this module writes
the scenarios, runs them and hands their rows over.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torpor import native
from torpor.experiments import claims as claims_lib
from torpor.experiments import pixel
from torpor.experiments.inputs import run_kept

SEED = "001"

DEVICE = "samsung-ufs40-class"
#: The phone CPUs fio's threads run on (CPU 3, as the seed's --cpus_allowed=3).
CPUS = "google-gs101"
PROFILE = "ufs-qcom"
TIMEOUT_MS = 30

#: Each job's start, s: the seed's "job1~5 startdelay = [0s, 20s, 40s, 60s, 80s]".
STARTDELAYS = (0, 20, 40, 60, 80)
RUNTIME_S = 10
#: The run covers the last job's end.
DURATION = f"{STARTDELAYS[-1] + RUNTIME_S}s"

#: Sensitivity runs: each changes [policy.devfreq] from the ufs-qcom profile, for the cases
#: listed.
SENSITIVITY: tuple[tuple[str, dict[str, Any], tuple[int, ...]], ...] = (
    ("min level keeps HS-G4", {"min_gear": 4}, (1, 2)),
    ("ufshcd core defaults", {"profile": "ufshcd"}, (1, 2)),
    ("downdifferential 65 (Android's ufs-qcom)", {"downdifferential": 65}, (1, 2)),
    ("no CPU latency vote (pm_qos_enable off)", {"pm_qos_enable": False}, (2,)),
)

#: The Pixel 6a's UFS 3.1 behind a Qualcomm-style host (the phone's Exynos-derived host's
#: clocks are not in torpor's data: a what-if on the closest preset).
PIXEL_DEVICE = "samsung-eufs31-512gb"
BOOST_MODES = ("off", "next-poll", "at-once")


def job_file(case: int) -> str:
    """The seed's fio configuration for `case` (1: intermittent, 2: continuous)."""
    lines = [
        "; seed 001: fio 3.9, --rw=randread --bs=64k --iodepth=1 --numjobs=5 --time_based",
        "; --runtime=10 --ioengine=libaio --hipri --cpus_allowed=3; job1~5 startdelay 0..80 s",
        "[global]",
        "rw=randread",
        "bs=64k",
        "iodepth=1",
        "time_based",
        f"runtime={RUNTIME_S}",
        "ioengine=libaio",
        "hipri",
        "cpus_allowed=3",
        "direct=1",
    ]
    if case == 1:
        lines += ["; --rate=10ms read as one IO every 10 ms", "rate_iops=100"]
    for i, delay in enumerate(STARTDELAYS, 1):
        lines += [f"[job{i}]", f"startdelay={delay}"]
    return "\n".join(lines) + "\n"


def scenario(case: int, devfreq_keys: dict[str, Any] | None = None) -> dict[str, Any]:
    """The scenario of `case` (its job file beside it as ``case<N>.fio``): boost off, on as the
    patch does it, and at once; `devfreq_keys` change [policy.devfreq] from the ufs-qcom
    profile."""
    devfreq: dict[str, Any] = {"profile": PROFILE} | (devfreq_keys or {})
    return {
        "platform": {
            "ufs": {"preset": DEVICE, "hz": 250},
            "cpu": {"preset": CPUS, "hz": 250},
            "irq": {"mode": "fixed", "cpus": [0]},
        },
        "policy": {"devfreq": devfreq, "cpuidle": {"governor": "teo"}},
        "workload": {"fio": f"case{case}.fio"},
        "run": {"duration": DURATION, "seed": 1},
        "variant": [
            {"name": "boost-off"},
            {"name": "boost-on", "policy": {"boost": {"dev_freq_timeout_ms": TIMEOUT_MS}}},
            {
                "name": "boost-at-once",
                "policy": {"boost": {"dev_freq_timeout_ms": TIMEOUT_MS, "notify": "at-once"}},
            },
        ],
    }


def run_case(
    case: int, work: Path, devfreq_keys: dict[str, Any] | None = None, tag: str = ""
) -> dict[str, Any]:
    """Runs one case from files written into `work` (its job file, `case<N>.fio`, and the
    scenario naming it, ``case<N><tag>.toml``); returns the report."""
    work.mkdir(parents=True, exist_ok=True)
    (work / f"case{case}.fio").write_text(job_file(case))
    return run_kept(work, f"case{case}{tag}.toml", scenario(case, devfreq_keys))


def measures(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per variant, its rows of the core's tables (docs/rows.md): the jobs' IO (``io``), the
    UFS device (``ufs``), the fio threads' IO as the core decomposed it (``system``:
    ``io_device_mean_us`` is the clat's device-side part, submission to the device's
    completion), the clock at each job's start (``starts``, a list) and the loads devfreq's
    polls saw at each level (``windows``, level -> row)."""
    tables = native.report_rows(report)
    s = tables["summary"]
    out: dict[str, dict[str, Any]] = {
        io["variant"]: {"io": io, "ufs": ufs, "system": system, "starts": [], "windows": {}}
        for io, ufs, system in zip(s["io"], s["ufs"], s["system"], strict=True)
    }
    for r in tables["clock_at_job_starts"]:
        out[r["variant"]]["starts"].append(r)
    for r in tables["poll_windows"]:
        out[r["variant"]]["windows"][r["level"]] = r
    return out


def bw_mbs(io: dict[str, Any]) -> float:
    """Bandwidth over the time the jobs ran (5 x 10 s), MB/s as fio prints it (10^6 B/s), of
    a variant's ``io`` row."""
    return io["bytes"] / (len(STARTDELAYS) * RUNTIME_S) / 1e6


def row(case: int, name: str, m: dict[str, Any]) -> dict[str, Any]:
    """A `runs` row: variant `name`'s measures `m` (:func:`measures`) in case `case`."""
    io = m["io"]
    return {
        "case": case,
        "boost": name == "boost-on",
        "clat_avg_us": round(io["lat_mean_us"], 3),
        "clat_device_avg_us": round(m["system"]["io_device_mean_us"], 3),
        "clat_p99_us": round(io["lat_p99_us"], 3),
        "bw_mbs": round(bw_mbs(io), 3),
        "low_clock_pct": round(m["ufs"]["low_clock_pct"], 3),
    }


def runs(work: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The `runs` rows (boost off and on, as the patch does it, per case), and everything
    else the report shows: the at-once variant, energy, the sensitivity runs, case 2's clock
    at each job's start and the loads its polls saw, and the clock timelines."""
    rows: list[dict[str, Any]] = []
    extra: dict[str, Any] = {"variants": [], "timelines": {}, "sensitivity": [], "case2": []}
    for case in (1, 2):
        report = run_case(case, work)
        by_variant = measures(report)
        for v in report["variants"]:
            m = by_variant[v["name"]]
            if v["name"] != "boost-at-once":
                rows.append(row(case, v["name"], m))
            extra["variants"].append(variant_summary(case, v["name"], m))
            if case == 2:
                extra["case2"].append(clock_anatomy(v["name"], m))
            extra["timelines"][f"case {case}, {v['name']}"] = {
                "name": f"case {case}, {v['name']}",
                "duration_s": v["duration_s"],
                "ufs": {
                    k: v["ufs"][k] for k in ("freq_timeline", "min_hz", "max_hz", "low_clock_pct")
                },
            }
        for i, (assumption, keys, cases) in enumerate(SENSITIVITY):
            if case not in cases:
                continue
            report = run_case(case, work, keys, f"-s{i}")
            by_variant = measures(report)
            for v in report["variants"]:
                m = by_variant[v["name"]]
                summary = variant_summary(case, v["name"], m)
                extra["sensitivity"].append(summary | {"assumption": assumption})
                if case == 2:
                    anatomy = clock_anatomy(v["name"], m)
                    extra["case2"].append(anatomy | {"assumption": assumption})
    return rows, extra


def clock_anatomy(name: str, m: dict[str, Any]) -> dict[str, Any]:
    """Case 2's clock (variant `name`, its measures `m`, :func:`measures`): how long it stayed
    below the max level from each job's start (0 when the job started at the max level), and
    the window loads devfreq's polls saw at each level against the loads at which a poll
    leaves it."""
    at_max, at_min = m["windows"]["max"], m["windows"]["min"]

    def windows(w: dict[str, Any]) -> dict[str, Any]:
        mean = w["mean_load_pct"]
        return {
            "n": w["windows"],
            "mean_pct": None if mean is None else round(mean, 1),
            "lowest_pct": w["lowest_load_pct"],
        }

    ufs = m["ufs"]
    return {
        "variant": name,
        "bw_mbs": round(bw_mbs(m["io"]), 3),
        "low_ms_at_job_starts": [round(r["below_max_ms"], 3) for r in m["starts"]],
        "polling_period_ms": at_max["polling_period_ms"],
        "down_at_or_below_pct": at_max["down_at_or_below_pct"],
        "up_from_pct": at_max["up_from_pct"],
        "windows_at_max": windows(at_max),
        "windows_at_max_at_or_below_down": at_max["at_or_below_down"],
        "windows_at_min": windows(at_min),
        "scale_ups": ufs["scale_ups"],
        "scale_downs": ufs["scale_downs"],
    }


def variant_summary(case: int, name: str, m: dict[str, Any]) -> dict[str, Any]:
    """Variant `name`'s measures `m` (:func:`measures`) in case `case`, as the report shows
    them."""
    io, ufs = m["io"], m["ufs"]
    return {
        "case": case,
        "variant": name,
        "clat_min_us": round(io["lat_min_us"], 3),
        "clat_avg_us": round(io["lat_mean_us"], 3),
        "clat_device_avg_us": round(m["system"]["io_device_mean_us"], 3),
        "clat_max_us": round(io["lat_max_us"], 3),
        "clat_p99_us": round(io["lat_p99_us"], 3),
        "bw_mbs": round(bw_mbs(io), 3),
        "low_clock_pct": round(ufs["low_clock_pct"], 3),
        "energy_mj": round(ufs["energy_mj"], 3),
        "avg_power_mw": round(ufs["avg_power_mw"], 3),
        "scale_ups": ufs["scale_ups"],
        "scale_downs": ufs["scale_downs"],
    }


def pixel_scenario(trace: Path) -> dict[str, Any]:
    """One Pixel 6a trace replayed at its own timestamps, boost off / next-poll / at-once."""
    variants: list[dict[str, Any]] = []
    for mode in BOOST_MODES:
        v: dict[str, Any] = {"name": mode}
        if mode != "off":
            v["policy"] = {"boost": {"dev_freq_timeout_ms": TIMEOUT_MS, "notify": mode}}
        variants.append(v)
    return {
        "platform": {"ufs": {"preset": PIXEL_DEVICE, "hz": 250}},
        "policy": {"devfreq": {"profile": PROFILE}},
        "workload": {"replay": {"file": str(trace), "format": "mobile-csv"}},
        "run": {"seed": 1},
        "variant": variants,
    }


def pixel_runs(
    traces: Path | None, work: Path
) -> tuple[list[dict[str, Any]], dict[str, Any], str | None]:
    """Per trace and boost mode: latency, energy and clock; the clock timelines (by trace and
    mode); or why they were not run."""
    timelines: dict[str, Any] = {}
    note = pixel.why_not_run(traces)
    if traces is None or note:
        return [], timelines, note
    out = []
    for name in pixel.TRACES:
        path = f"pixel-{pixel.stem(name)}.toml"
        report = run_kept(work, path, pixel_scenario((traces / name).resolve()))
        s = native.report_rows(report)["summary"]
        for v, io, ufs_row in zip(report["variants"], s["io"], s["ufs"], strict=True):
            ufs = v["ufs"]
            timelines[f"{pixel.stem(name)}, boost {v['name']}"] = {
                "name": f"{pixel.stem(name)}, boost {v['name']}",
                "duration_s": v["duration_s"],
                "ufs": {k: ufs[k] for k in ("freq_timeline", "min_hz", "max_hz")},
            }
            out.append(
                {
                    "trace": pixel.stem(name),
                    "boost": v["name"],
                    "ios": io["ios"],
                    "lat_avg_us": round(io["lat_mean_us"], 3),
                    "lat_p99_us": round(io["lat_p99_us"], 3),
                    "read_avg_us": round(v["io"]["read"]["mean_us"], 3)
                    if v["io"]["read"]["count"]
                    else None,
                    "energy_mj": round(ufs_row["energy_mj"], 3),
                    "energy_per_io_uj": None
                    if ufs_row["energy_per_io_uj"] is None
                    else round(ufs_row["energy_per_io_uj"], 3),
                    "low_clock_pct": round(ufs_row["low_clock_pct"], 3),
                    "scale_ups": ufs_row["scale_ups"],
                }
            )
    return out, timelines, None


def results(
    rows: list[dict[str, Any]],
    extra: dict[str, Any],
    pixel_rows: list[dict[str, Any]],
    pixel_note: str | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """results.json (the claims, the `runs` rows, and the rest the report shows) and the
    figures the report quotes, both judged by the core: each claim with its robustness over
    the sensitivity runs that ran the cases it reads."""
    judgement = native.judge_devfreq(
        {
            "runs": rows,
            "variants": extra["variants"],
            "sensitivity": extra["sensitivity"],
            "assumptions": [{"name": n, "cases": list(c)} for n, _, c in SENSITIVITY],
        }
    )
    return {
        "experiment": "devfreq",
        "claims": judgement["claims"],
        "runs": rows,
        "variants": extra["variants"],
        "sensitivity": extra["sensitivity"],
        "case2": extra["case2"],
        "pixel": pixel_rows,
        "pixel_note": pixel_note,
    }, judgement["figures"]


verdict_text = claims_lib.verdict_text
