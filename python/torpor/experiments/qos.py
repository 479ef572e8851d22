"""Seed 004: per-CPU resume latency against the global CPU latency limit (Alex Shi, "[PATCH v2
0/3] per cpu resume latency", 2017-01-12), and an NVMe drive's latency tolerance lowered
mid-run.

The seed ran ``cyclictest -t 1 -n -i 10000 -l 1000 -q --latency=10000`` on a DragonBoard 410c
(MSM8916, 4x Cortex-A53; cpuidle states WFI and ``spc``, whose latency is 280 us) three ways:
no limit; the global limit (``/dev/cpu_dma_latency``) below 280 us; cpu0's
``pm_qos_resume_latency_us`` below 280 us. It printed cyclictest's latency line for cpu0 and
compared idlestat's per-CPU tables: under the global limit every CPU stays in WFI, under the
per-CPU one cpu1-3 sleep in ``spc``.

torpor runs cyclictest as a task on cpu0 (a 10 ms periodic timer, a short burst, holding
``/dev/cpu_dma_latency`` at 10000 us as ``--latency=10000`` makes it) for 10 s on the MSM8916
as its kernel of the time had it (``platform_toml``): cpuidle states WFI and ``spc`` only (the
cluster states of today's DT came with the PSCI OS-initiated domains, years later). Limits are
written at 279 us ("any value between 1 to 279", the seed). Readings, stated where chosen:

- cyclictest's burst (reading the clock, computing the latency, sleeping again) is an
  ESTIMATE of 20 us (range 5-50 us) at the A53's top OPP; the claims are checked again at
  both ends of the range (``burst_ends``: their robustness).
- cyclictest without ``-p`` is a normal task: its timer fires at the end of the kernel's 50 us
  default slack. The rest of its latency is the wake-up path of the ``qcom-msm8916`` preset's
  ``[wakeup]`` table: the timer interrupt and the scheduler, FITTED to the seed's WFI-only run
  (min 82, avg 95, max 110 us less the slack), so that run checks calibration; spc's real exit
  is the DT's own 150 us (of its declared 280), not fitted, so the unconstrained run (87 / 205
  / 239 us) is a prediction.
- Frequency: ``performance`` holds the A53s at their top OPP (ASSUMPTION: the seed does not
  name a cpufreq governor, and the wake-up path was fitted at whatever clock the board ran;
  with this DT's ``CPUFREQ_ETERNAL`` transition latency, schedutil could change the clock at
  most every 6.44 s, its default rate limit).
- Power: the MSM8916's DT gives no voltages or power; every figure of ``platform_toml`` is the
  ``qcom-msm8916`` preset's ESTIMATE (docs/cpu-platform.md: the C x V^2 x f rule for its OPPs,
  the idle-state rule for WFI and spc, spc being the preset's CPU_SLEEP_0), so only the ordering
  of the configurations' energy is compared.

The seed's figures, the claim rules and the measures the reports quote are the core's
(``torpor_core::experiments::qos``, through ``native.judge_qos``); this module writes
the scenarios, runs them and hands their rows over.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomli_w

from torpor import native
from torpor.experiments import claims as claims_lib
from torpor.experiments.inputs import run_kept

SEED = "004"
CONFIGS = ("none", "global", "per-cpu")
#: What the seed writes: "any value between 1 to 279".
LIMIT_US = 279
SPC_US = 280
DURATION_S = 10
CPUS = (0, 1, 2, 3)
#: The cpuidle governor of the runs: v4.10 had menu and ladder, and cpuidle takes the one
#: of highest rating, menu (20; ladder 10).
GOVERNOR = "menu"
#: The cpufreq governor of the runs (see the module's note).
CPUFREQ = "performance"
#: cyclictest's burst, us: an ESTIMATE, and the ends of its range (the module's note).
BURST_US = 20
BURST_RANGE_US = (5, 50)


def _without_nulls(table: dict[str, Any]) -> dict[str, Any]:
    """A table as TOML writes it: keys whose value is null (absent in TOML) left out."""
    return {
        k: _without_nulls(v) if isinstance(v, dict) else v
        for k, v in table.items()
        if v is not None
    }


def _preset() -> dict[str, Any]:
    return next(p for p in native.cpu_presets() if p["id"] == "qcom-msm8916")


def platform_toml() -> str:
    """The MSM8916 as Linux v4.10 drove it (the seed's time): WFI and spc per CPU, no cluster
    state; the OPPs, the power of WFI and spc, the wake-up path, and spc's real entry and exit,
    the ``qcom-msm8916`` preset's (spc is its CPU_SLEEP_0)."""
    preset = _preset()
    cluster = preset["cluster"][0]
    wfi = next(s for s in cluster["state"] if s["name"] == "WFI")
    spc = next(s for s in cluster["state"] if s["name"] == "CPU_SLEEP_0")

    doc = {
        "id": "qcom-msm8916-v4.10",
        "name": "Qualcomm MSM8916 (DragonBoard 410c) as Linux v4.10 drove it",
        "source": "msm8916.dtsi of 2017 (cpu idle state spc: entry 130 + exit 150 = 280 us, "
        "min-residency 2000 us; the seed: 'the latency of state1 is 280us'); torpor preset "
        "qcom-msm8916 for the rest",
        "notes": ["Written by torpor reproduce qos: WFI and spc only, as cpuidle had them then."],
        "cluster": [
            {
                "name": "cpu0-3",
                "cpus": list(CPUS),
                "core": "Cortex-A53",
                "capacity": 1024,
                "state": [
                    {
                        "name": "WFI",
                        "exit_latency_us": 1,
                        "target_residency_us": 1,
                        "power_mw": wfi["power_mw"],
                        "source": "cpuidle-arm.c: state 0 is WFI, exit latency 1 us",
                    },
                    {
                        "name": "spc",
                        "exit_latency_us": SPC_US,
                        "target_residency_us": 2000,
                        "entry_us": spc["entry_us"],
                        "exit_us": spc["exit_us"],
                        "power_mw": spc["power_mw"],
                        "source": "msm8916.dtsi spc: entry 130 + exit 150 us, min-residency "
                        "2000 us",
                    },
                ],
                "opp": [_without_nulls(o) for o in cluster["opp"]],
            }
        ],
        "wakeup": _without_nulls(preset["wakeup"]),
    }
    return tomli_w.dumps(doc)


def scenario(burst_us: int = BURST_US) -> dict[str, Any]:
    """cyclictest on cpu0 for 10 s, under the three configurations; its burst ``burst_us``."""
    limits: dict[str, dict[str, Any]] = {
        "global": {
            "at": "0s",
            "holder": "limit",
            "target": "cpu_dma_latency",
            "value": LIMIT_US,
        },
        "per-cpu": {
            "at": "0s",
            "holder": "limit",
            "target": "cpu0/power/pm_qos_resume_latency_us",
            "value": str(LIMIT_US),
        },
    }
    variants: list[dict[str, Any]] = []
    for config in CONFIGS:
        v: dict[str, Any] = {"name": config}
        if config in limits:
            v["qos"] = {"request": [limits[config]]}
        variants.append(v)
    return {
        "platform": {"cpu": {"file": "msm8916-v4.10.toml"}},
        "policy": {"cpuidle": {"governor": GOVERNOR}, "cpufreq": {"governor": CPUFREQ}},
        "workload": {
            "task": [
                {
                    "name": "cyclictest",
                    "cpu": 0,
                    "period": "10ms",
                    "run": f"{burst_us}us",
                    "cpu_dma_latency_us": 10000,
                }
            ]
        },
        "run": {"duration": f"{DURATION_S}s", "seed": 1},
        "variant": variants,
    }


def runs(work: Path, burst_us: int = BURST_US) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The `runs` rows (config x cpu, and "all") and cyclictest's line per configuration,
    with cyclictest's burst ``burst_us`` (its scenario kept as ``qos-cyclictest.toml``, or
    ``qos-cyclictest-burst<N>us.toml`` away from the central value)."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "msm8916-v4.10.toml").write_text(platform_toml())
    name = "qos-cyclictest" + ("" if burst_us == BURST_US else f"-burst{burst_us}us")
    report = run_kept(work, f"{name}.toml", scenario(burst_us))
    rows: list[dict[str, Any]] = []
    lines: dict[str, str] = {}
    for v in report["variants"]:
        cpu = v["cpu"]
        task = next(t for t in cpu["tasks"] if t["name"] == "cyclictest")
        latency = task["latency"]["summary"]
        avg_us = latency["mean_us"]
        lines[v["name"]] = (
            f"T: 0 P: 0 I:10000 C:{task['wakeups']:7d} Min:{latency['min_us']:7.0f} "
            f"Act:{task['latency_last_ns'] / 1e3:5.0f} Avg:{avg_us:5.0f} "
            f"Max:{latency['max_us']:8.0f}"
        )
        # Each state's share of the run per CPU, and of all CPUs' time: the core's measure.
        shares = native.residency_shares(cpu["cpus"], v["duration_s"])
        for c, (_, states) in zip(cpu["cpus"], shares["per_cpu"], strict=True):
            rows.append(
                {
                    "config": v["name"],
                    "cpu": c["cpu"],
                    "lat_min_us": round(latency["min_us"], 3) if c["cpu"] == 0 else None,
                    "lat_avg_us": round(avg_us, 3) if c["cpu"] == 0 else None,
                    "lat_max_us": round(latency["max_us"], 3) if c["cpu"] == 0 else None,
                    "residency_pct": {s["state"]: round(s["pct"], 3) for s in states},
                    "energy_mj": round(c["energy_mj"], 3),
                }
            )
        rows.append(
            {
                "config": v["name"],
                "cpu": "all",
                "lat_min_us": None,
                "lat_avg_us": None,
                "lat_max_us": None,
                "residency_pct": {s["state"]: round(s["pct"], 3) for s in shares["all"]},
                "energy_mj": round(cpu["energy_mj"], 3),
            }
        )
    states = {v["name"]: v["cpu"]["cpus"] for v in report["variants"]}
    return rows, {"cyclictest": lines, "states": states}


# The second built-in scenario: an NVMe drive under APST workflow 7 whose latency tolerance a
# holder lowers mid-run.
NVME_DRIVE = "wdc-pc-sn530-256gb"
NVME_WORKFLOW = 7
NVME_DURATION_S = 60
NVME_AT_S = 30
#: Below PS3's exit latency (11 ms): the driver's rebuilt table keeps no non-operational target.
NVME_TOLERANCE_US = 10000


def nvme_scenario() -> dict[str, Any]:
    return {
        "platform": {"nvme": {"preset": NVME_DRIVE}},
        "workload": {"apst_workflow": NVME_WORKFLOW},
        "qos": {
            "request": [
                {
                    "at": f"{NVME_AT_S}s",
                    "holder": "tuned",
                    "target": "nvme0/power/pm_qos_latency_tolerance_us",
                    "value": str(NVME_TOLERANCE_US),
                }
            ]
        },
        "run": {"duration": f"{NVME_DURATION_S}s", "timeline": f"{NVME_DURATION_S}s", "seed": 1},
    }


def transitions(table: dict[str, Any] | None) -> list[str]:
    """A table's enabled entries as "PSa -> PSb after N ms" (or why there is none)."""
    if table is None:
        return ["no table sent"]
    if not table["apste"]:
        return ["APST disabled (APSTE = 0)"]
    out = [
        f"PS{e['ps']} -> PS{e['itps']} after {e['itpt_ms']} ms"
        for e in table["entries"]
        if e["itpt_ms"]
    ]
    return out or ["APST enabled, no transition"]


def nvme_runs(work: Path) -> dict[str, Any]:
    """Both tables and, before and after the change, the requests' latency and the drive's
    average power (from the run's timeline)."""
    v = run_kept(work, "qos-nvme-tolerance.toml", nvme_scenario())["variants"][0]
    nvme = v["nvme"]
    change = nvme["apst"]["latency_tolerance"][0]
    tl = nvme["timeline"]
    windows = []
    for name, lo, hi in (("before", 0.0, NVME_AT_S), ("after", NVME_AT_S, NVME_DURATION_S)):
        w = native.timeline_window(tl, lo, hi)
        windows.append(
            {
                "window": name,
                "from_s": lo,
                "to_s": hi,
                "ios": w["ios"],
                "lat_avg_us": None if w["lat_avg_us"] is None else round(w["lat_avg_us"], 3),
                "lat_max_us": None if w["lat_max_us"] is None else round(w["lat_max_us"], 3),
                "avg_power_mw": round(w["avg_power_mw"], 3),
            }
        )
    return {
        "drive": NVME_DRIVE,
        "workflow": NVME_WORKFLOW,
        "at_s": change["at_s"],
        "tolerance_us": change["tolerance_us"],
        "ps_max_latency_us": change["ps_max_latency_us"],
        "table_before": transitions(nvme["apst"]["table"]),
        "table_after": transitions(change["table"]),
        "windows": windows,
        "dropped": tl["dropped"],
    }


def burst_ends(work: Path) -> list[dict[str, Any]]:
    """The `runs` rows with cyclictest's burst at each end of its range (``burst_us``,
    ``runs``): the claims' robustness, judged by the core."""
    return [{"burst_us": b, "runs": runs(work, b)[0]} for b in BURST_RANGE_US]


def results(
    rows: list[dict[str, Any]],
    extra: dict[str, Any],
    nvme: dict[str, Any],
    ends: list[dict[str, Any]],
) -> dict[str, Any]:
    judgement = native.judge_qos({"burst_us": BURST_US, "runs": rows, "burst_ends": ends})
    return {
        "experiment": "qos",
        "claims": judgement["claims"],
        "runs": rows,
        "cyclictest": extra["cyclictest"],
        "idlestat": {
            c: native.idlestat_comparison(
                extra["states"][c], None if c == "none" else extra["states"]["none"]
            )
            for c in CONFIGS
        },
        "nvme_tolerance": nvme,
    }


verdict_text = claims_lib.verdict_text
