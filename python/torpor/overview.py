"""`torpor reproduce all`'s one report: every seed's claims, the two whole-system scenarios and
what to ship on each, as ``out/results.json`` (its schema: docs/results-schema.json, described
in docs/results.md), ``out/report.md`` and ``out/report.html``.

Nothing here decides a verdict or a setting: the claims come as each experiment checked them,
the systems' figures as the core reports them, and each recommendation as the sweep code
(``torpor.sweeps``) ranks its points; this module gathers and renders them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from torpor import InputError, native
from torpor import sweeps as sw
from torpor.experiments import apst, devfreq, hpb, qos, teo
from torpor.experiments import claims as claims_lib

#: The seeds, in their order: number, the experiment reproducing it, what it is about.
SEEDS = (
    (apst.SEED, "apst", "NVMe APST: the v5.14 table builder against the legacy one"),
    (devfreq.SEED, "devfreq", "UFS: the block layer's device-frequency boost (2025 RFC)"),
    (teo.SEED, "teo", "cpuidle: teo's util-awareness on a Pixel 6"),
    (hpb.SEED, "hpb", "UFS Host Performance Booster (v14 series; removed in v6.6)"),
    (qos.SEED, "qos", "PM QoS: per-CPU resume latency against cpu_dma_latency"),
)

#: The whole-system scenarios (in scenarios/): name, the scenario its section runs, and the
#: sweep that recommends its settings (whose base is the same machine at the kernel's
#: defaults, one variant).
SYSTEMS = (
    ("phone", "system-phone.toml", "system-phone-sweep.toml"),
    ("laptop", "system-laptop.toml", "system-laptop-sweep.toml"),
)

#: The window each system scenario records for the one-request timeline.
TIMELINE = "400ms"

#: The built-in scenarios, in the source tree `make install` installs from (editable).
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def _scenario(name: str) -> Path:
    """A built-in scenario or sweep file, or an error saying where it was looked for."""
    path = SCENARIOS / name
    if not path.is_file():
        raise InputError(
            f"{path}: not found; `reproduce all` reads the scenarios/ folder of the source tree "
            "torpor was installed from (make install's editable install)"
        )
    return path


def claims(experiments: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every claim of every experiment once, in the seeds' order, with results.json's field
    names: ``seed`` is the experiment's seed number, ``source`` where the claim comes from
    (the seed, or the spec section a claim beyond it cites)."""
    by_area = {r["experiment"]: r for r in experiments}
    out = []
    for seed, area, _ in SEEDS:
        for c in by_area[area]["claims"]:
            own = c["seed"]
            out.append(
                {
                    "seed": seed,
                    "experiment": area,
                    "source": f"seed {own}" if own == seed else own,
                    "claim": c["claim"],
                    "seed_figure": c["seed_value"],
                    "torpor_figure": c["torpor_value"],
                    "ok": c["ok"],
                    "robust": c["robust"],
                    "hinges_on": c["hinges_on"],
                    "robust_basis": c["robust_basis"],
                    "fitted": c["fitted"],
                    "fitted_to": c["fitted_to"],
                }
            )
    return out


def run_system(name: str) -> dict[str, Any]:
    """One whole-system scenario's report, recording its first moments (``TIMELINE``)."""
    scenario = next(s for n, s, _ in SYSTEMS if n == name)
    path = _scenario(scenario)
    return native.run_scenario_text(
        path.read_text(),
        f"scenarios/{scenario}",
        overrides_json=json.dumps({"run.timeline": TIMELINE}),
        base=str(SCENARIOS),
    )


def system_summary(name: str, report: dict[str, Any]) -> dict[str, Any]:
    """What results.json keeps of a system run: per variant, the energy of the CPUs and the
    device, and each IO task's latency as it saw it, by part (device, irq, exit, sched)."""
    variants = []
    for v in report["variants"]:
        s = v["system"]
        tasks = [
            {
                "task": t["name"],
                "cpu": t["cpu"],
                "parts": {
                    part: {k: t["io"][part][k] for k in ("count", "mean_us", "p50_us", "p99_us")}
                    for part in ("total", "device", "irq", "exit", "sched")
                },
            }
            for t in v["cpu"]["tasks"]
            if t.get("io")
        ]
        variants.append(
            {
                "variant": v["name"],
                "cpu_energy_mj": s.get("cpu_energy_mj"),
                "device_energy_mj": s["device_energy_mj"],
                "energy_mj": s.get("energy_mj"),
                "avg_power_mw": s.get("avg_power_mw"),
                "io_tasks": tasks,
            }
        )
    return {"name": name, "scenario": report["scenario"], "variants": variants}


def ship(name: str, progress: Callable[[], None] | None = None) -> dict[str, Any]:
    """The sweep of system ``name``: its points run, the Pareto front of its objectives among
    those meeting its constraints, the recommended point against the scenario as written,
    and how to apply it (``torpor.sweeps``, as `torpor sweep` prints them)."""
    sweep_file = next(f for n, _, f in SYSTEMS if n == name)
    plan = sw.load(_scenario(sweep_file))
    rows = sw.run(plan, workers=2, progress=progress)
    ranked = sw.rank(plan, rows)
    out: dict[str, Any] = {
        "system": name,
        "sweep": f"scenarios/{sweep_file}",
        "points": len(sw.points(plan)),
        "meet_constraints": len(ranked.feasible),
        "objectives": list(plan.objectives),
        "constraints": [{"metric": m, "min": lo, "max": hi} for m, lo, hi in plan.constraints],
        "as_written": {o: ranked.baseline.get(o) for o in (*plan.objectives, *_constrained(plan))},
        "breaks": sw.broken(ranked.baseline, plan),
        "recommended": None,
    }
    best = ranked.best
    if best is None:
        return out
    out["recommended"] = {
        "point": best["point"],
        "settings": {a.path: best[a.path] for a in plan.axes},
        "measures": {o: best.get(o) for o in (*plan.objectives, *_constrained(plan))},
        "lines": ranked.lines,
        "apply": ranked.apply,
    }
    return out


def _constrained(plan: sw.Sweep) -> list[str]:
    """The constrained metrics that are not objectives."""
    return [m for m, _, _ in plan.constraints if m not in plan.objectives]


def seeds(experiments: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per seed: its experiment, title, verdict counts and the area's own report."""
    by_area = {r["experiment"]: r for r in experiments}
    return [
        {
            "seed": seed,
            "experiment": area,
            "title": title,
            "verdicts": claims_lib.verdict_counts(by_area[area]["claims"]),
            "report": f"{area}/report.html",
        }
        for seed, area, title in SEEDS
    ]


def results(
    experiments: Sequence[dict[str, Any]],
    systems: Sequence[dict[str, Any]],
    advice: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """results.json (docs/results.md)."""
    return {
        "schema": "torpor-results/1",
        "claims": claims(experiments),
        "seeds": seeds(experiments),
        "systems": [system_summary(n, r) for (n, _, _), r in zip(SYSTEMS, systems, strict=True)],
        "ship": list(advice),
    }
