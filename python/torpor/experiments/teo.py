"""Seed 002: teo's util-awareness on a Pixel 6, against menu and teo (Kajetan Puchalski,
"[v6,0/2] cpuidle: teo: Introduce util-awareness", 2023-01-05), and the cluster-state cost
behind its revert in v6.11.

The seed ran Geekbench 5, PCMark Web Browsing and Jankbench (60 Hz) on a Pixel 6 with a 5.18
kernel, an hour in a fridge before each run, and counted ``cpu_idle_miss`` events. torpor runs
stand-ins for those workloads (and the Speedometer the series mentions) on the gs101 preset,
under ``menu``, ``teo@5.13`` (the seed's "teo": the teo of 5.18), ``teo-util`` (``teo@6.3``,
the merged util-awareness), today's ``teo`` and the ``oracle``.

Each stand-in is a handful of tasks pinned to CPUs whose shape follows what the benchmark
does; their numbers are torpor's choices, not measurements (no per-thread trace of these
benchmarks is public): the claims are about orderings and signs, which is what such stand-ins
can test, with bounds wide enough for a stand-in's guessed shape (the rules are the core's:
``experiments::teo``).

Every run scales frequency with ``schedutil`` (ASSUMPTION: the seed does not name its cpufreq
governor; schedutil is Android's and mainline's default for such SoCs), so a burst's work takes
longer at a lower clock and each CPU draws its OPP's power while running. The score proxies:
work done per second (time at the highest OPP) for Geekbench, PCMark and Speedometer, and for
Jankbench the mean frame time (the vsync interrupt to the end of the RenderThread's burst it
led to) and the frames the UI thread missed.
"""

from __future__ import annotations

from typing import Any

import tomli_w

from torpor import native
from torpor.experiments import claims as claims_lib

SEED = "002"

#: The governors compared, as `[policy.cpuidle] governor` names them.
GOVERNORS = ("menu", "teo@5.13", "teo-util", "teo", "oracle")

#: The platform: the Pixel 6's gs101 (little 0-3, mid 4-5, big 6-7), HZ=250 as Android builds.
PLATFORM = {"preset": "google-gs101", "hz": 250}

VSYNC_US = 16667
VSYNC = f"{VSYNC_US}us"

#: The cpufreq governor every run uses (see the module's note).
CPUFREQ = "schedutil"

#: Stand-ins: name -> (what it models, its tasks). A task wakes by timer (seen by the
#: governor), interrupt (not seen: input, network, futex or binder wake-ups from elsewhere) or
#: another task's wake-up call; it runs one burst per wake-up.
WORKLOADS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "geekbench": (
        "Geekbench 5 (heavy, latency-sensitive): a worker thread per CPU running 1-4 ms "
        "compute bursts and blocking on each other for a few hundred microseconds (futex "
        "wake-ups: interrupts to the governor), the benchmark's main thread on a big CPU, and an "
        "AsyncTask helper on a mid CPU.",
        [
            {
                "name": f"worker-{cpu}",
                "cpu": cpu,
                "sleep_mean": "400us",
                "source": "interrupt",
                "run_min": "1ms",
                "run_max": "4ms",
            }
            for cpu in range(8)
            if cpu != 6
        ]
        + [
            {
                "name": "labs.geekbench5",
                "cpu": 6,
                "sleep_mean": "300us",
                "source": "interrupt",
                "run_mean": "2ms",
            },
            {
                "name": "AsyncTask #1",
                "cpu": 4,
                "sleep_mean": "2ms",
                "source": "interrupt",
                "run_mean": "200us",
            },
        ],
    ),
    "pcmark-web": (
        "PCMark Web Browsing (normal use): the renderer's main thread on a big CPU woken by "
        "input and network (interrupts) every few milliseconds for 1.5 ms bursts, the "
        "benchmark's workload thread on a 10 ms timer, SurfaceFlinger composing at 60 Hz on a "
        "little CPU, and light background work on the other little CPUs.",
        [
            {
                "name": "CrRendererMain",
                "cpu": 6,
                "sleep_mean": "4ms",
                "source": "interrupt",
                "run_mean": "1500us",
            },
            {"name": "chmark:workload", "cpu": 4, "period": "10ms", "run_mean": "500us"},
            {
                "name": "surfaceflinger",
                "cpu": 0,
                "period": VSYNC,
                "source": "interrupt",
                "run_min": "500us",
                "run_max": "1500us",
            },
        ]
        + [
            {
                "name": f"kworker-{cpu}",
                "cpu": cpu,
                "sleep_mean": "8ms",
                "source": "interrupt",
                "run_mean": "150us",
            }
            for cpu in (1, 2, 3)
        ],
    ),
    "jankbench": (
        "Jankbench at 60 Hz (UI): each vsync (an interrupt every 16.667 ms) wakes the UI thread "
        "on a mid CPU for ~4 ms, which wakes its RenderThread on a big CPU for ~5 ms, which "
        "wakes SurfaceFlinger on a little CPU for ~1.5 ms; binder and kworkers on the other "
        "little CPUs.",
        [
            {
                "name": "UI thread",
                "cpu": 4,
                "period": VSYNC,
                "source": "interrupt",
                "run_mean": "4ms",
                "wakes": "RenderThread",
            },
            {"name": "RenderThread", "cpu": 6, "run_mean": "5ms", "wakes": "surfaceflinger"},
            {"name": "surfaceflinger", "cpu": 0, "run_min": "1ms", "run_max": "2ms"},
        ]
        + [
            {
                "name": f"binder-{cpu}",
                "cpu": cpu,
                "sleep_mean": "5ms",
                "source": "interrupt",
                "run_mean": "100us",
            }
            for cpu in (1, 2, 3)
        ],
    ),
    "speedometer": (
        "Speedometer (browser, JavaScript-heavy): the renderer's main thread on a big CPU "
        "running ~6 ms bursts between short timer sleeps (setTimeout and animation frames of "
        "1-2 ms), a thread-pool helper on a mid CPU woken by IPC, SurfaceFlinger at 60 Hz.",
        [
            {
                "name": "CrRendererMain",
                "cpu": 7,
                "sleep_min": "500us",
                "sleep_max": "2ms",
                "run_mean": "6ms",
            },
            {
                "name": "ThreadPoolForeg",
                "cpu": 5,
                "sleep_mean": "2ms",
                "source": "interrupt",
                "run_mean": "1ms",
            },
            {
                "name": "surfaceflinger",
                "cpu": 0,
                "period": VSYNC,
                "source": "interrupt",
                "run_min": "500us",
                "run_max": "1500us",
            },
        ],
    ),
}

#: Jankbench's frame: the thread whose burst ends it (its response time is the frame time)
#: and the periodic thread whose missed periods are dropped frames.
FRAME_THREAD = "RenderThread"
FRAME_HEAD = "UI thread"

#: Simulated time per run.
DURATION_S = 20
DURATION = f"{DURATION_S}s"


def scenario(workload: str, duration: str = DURATION) -> dict[str, Any]:
    """The scenario of one workload, one variant per governor."""
    _, tasks = WORKLOADS[workload]
    return {
        "platform": {"cpu": dict(PLATFORM)},
        "workload": {"task": tasks},
        "run": {"duration": duration, "seed": 1},
        "policy": {"cpufreq": {"governor": CPUFREQ}},
        "variant": [{"name": g, "policy": {"cpuidle": {"governor": g}}} for g in GOVERNORS],
    }


def _task(tasks: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((t for t in tasks if t["name"] == name), None)


#: The columns of the core's `cpu` summary table (``view::rows``) each row keeps.
CPU_MEASURES = ("too_deep_pct", "too_shallow_pct", "avg_power_mw", "wakeup_latency_gmean_us")


def runs(duration: str = DURATION) -> list[dict[str, Any]]:
    """One row per workload and governor (the `runs` of results.json), with each run's tasks
    and residency kept apart for the report."""
    rows = []
    for workload in WORKLOADS:
        text = tomli_w.dumps(scenario(workload, duration))
        report, tables = native.run_scenario_text_rows(text, f"<teo {workload}>")
        for v, summary in zip(report["variants"], tables["summary"]["cpu"], strict=True):
            cpu = v["cpu"]
            frame = _task(cpu["tasks"], FRAME_THREAD) if workload == "jankbench" else None
            head = _task(cpu["tasks"], FRAME_HEAD) if workload == "jankbench" else None
            rows.append(
                {
                    "workload": workload,
                    "governor": v["name"],
                    # The CPUs' measures as the core's summary table names them.
                    **{m: round(summary[m], 3) for m in CPU_MEASURES},
                    "work_ms_per_s": round(sum(t["work_ms_per_s"] for t in cpu["tasks"]), 3),
                    "frame_ms": round(frame["response_avg_us"] / 1000, 3) if frame else None,
                    "frames_missed": head["periods_missed"] if head else None,
                    "_tasks": [
                        {
                            "task": t["name"],
                            "latency_avg_us": t["latency_avg_us"],
                        }
                        for t in cpu["tasks"]
                    ],
                    "_states": {s["name"]: s["time_ns"] for c in cpu["cpus"] for s in c["states"]},
                }
            )
    return rows


def public(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows as results.json keeps them: exactly the issue's columns."""
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]


def row(rows: list[dict[str, Any]], workload: str, governor: str) -> dict[str, Any]:
    return next(r for r in rows if r["workload"] == workload and r["governor"] == governor)


#: The revert of v6.11 (spec-cpu.md §3.5): a HiKey960's little cluster, whose cluster state
#: needs all four CPUs in it, with one CPU lightly but steadily busy (a 10 ms periodic task of
#: 250 us: 2.5 %, util ~11 against the threshold capacity >> 6 = 7 of 462) and three CPUs
#: with rare wake-ups.
REVERT_GOVERNORS = ("teo-util", "teo@6.12")


#: The revert case's tasks: CPU0 busy `REVERT_LIGHT_RUN_US` every `REVERT_LIGHT_PERIOD_MS`,
#: CPUs 1-3 each waking every `REVERT_RARE_PERIOD_MS` for 50 us.
REVERT_LIGHT_RUN_US = 250
REVERT_LIGHT_PERIOD_MS = 10
REVERT_RARE_PERIOD_MS = 50


def revert_scenario(duration: str = DURATION) -> dict[str, Any]:
    light = {"period": f"{REVERT_LIGHT_PERIOD_MS}ms", "run": f"{REVERT_LIGHT_RUN_US}us"}
    tasks = [{"name": "light", "cpu": 0, **light}] + [
        {"name": f"rare-{cpu}", "cpu": cpu, "period": f"{REVERT_RARE_PERIOD_MS}ms", "run": "50us"}
        for cpu in (1, 2, 3)
    ]
    return {
        "platform": {"cpu": {"preset": "hisilicon-hi3660-hikey960", "hz": 250}},
        "workload": {"task": tasks},
        "run": {"duration": duration, "seed": 1},
        "variant": [{"name": g, "policy": {"cpuidle": {"governor": g}}} for g in REVERT_GOVERNORS],
    }


def _cluster_pct(cpus: list[dict[str, Any]], duration_s: float) -> float:
    """The cluster state's share of `cpus`' time over a run of `duration_s`, percent (the
    core's platform share of those CPUs)."""
    shares = native.residency_shares(cpus, duration_s)["all"]
    return next(s["pct"] for s in shares if s["state"] == "CLUSTER_SLEEP_0")


def revert_runs(duration: str = DURATION) -> list[dict[str, Any]]:
    """Per governor: the cluster state's share of the run on the lightly busy CPU and on the
    cluster's idle ones (their platform share, ``view::residency_share``), and the cluster's
    power."""
    report = native.run_scenario_text(tomli_w.dumps(revert_scenario(duration)), "<teo revert>")
    out = []
    for v in report["variants"]:
        cpus = [c for c in v["cpu"]["cpus"] if c["cpu"] in (0, 1, 2, 3)]
        span_s = v["duration_s"]
        out.append(
            {
                "governor": v["name"],
                "cluster_state_pct_cpu0": round(_cluster_pct(cpus[:1], span_s), 3),
                "cluster_state_pct_others": round(_cluster_pct(cpus[1:], span_s), 3),
                "avg_power_mw": round(v["cpu"]["avg_power_mw"], 3),
            }
        )
    return out


def judge(rows: list[dict[str, Any]], revert: list[dict[str, Any]]) -> dict[str, Any]:
    """The core's judgement of the seed's claims and the revert's: ``claims`` (robustness not
    assessed) and ``figures`` (what the report quotes)."""
    return native.judge_teo(
        {"runs": rows, "revert": revert, "vsync_us": VSYNC_US, "duration_s": DURATION_S}
    )


verdict_text = claims_lib.verdict_text
