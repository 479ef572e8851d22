"""Seed 000: commit ebd8a93aa4f5 "nvme: extend and modify the APST configuration algorithm".

The commit message reports, for five drives and seven workflows, how the v5.14 table builder
changed the tables, average power and latency compared with the legacy one. This experiment
runs the same 5 x 7 x 2 grid in the simulator, at the central power figures and at each end of
each power assumption's range; the core (``experiments::apst``) checks each statement with a
rule written next to it: a direction and a stated tolerance, never a judgement by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from torpor import native
from torpor.experiments import claims as claims_lib

SEED = "000"
DRIVES = {
    "wdc-pc-sn530-256gb": "WD SN530",
    "intel-760p-ssdpekkw256g8": "Intel 760p",
    "samsung-pm991-mzvlq256hajd": "Samsung PM991",
    "skhynix-bc511-hfm256gdjtni": "SK hynix BC511",
    "kioxia-bg4-kbg40zns256g": "Kioxia BG4",
}
WORKFLOWS = range(1, 8)
ALGORITHMS = ("legacy", "v5.14")
DURATION = "60s"


def scenario_text(
    device: str,
    workflow: int,
    ps0_idle_mw: float | None = None,
    ps0_active_mw: float | None = None,
    transition_share: float | None = None,
) -> str:
    """One scenario per (drive, workflow): both table builders as variants on identical IO.
    ``ps0_idle_mw``, ``ps0_active_mw`` and ``transition_share`` set PS0's idle and active
    power and the transition power (ends of their ranges) instead of the central values."""
    idle = "" if ps0_idle_mw is None else f"idle_power_mw = {{ PS0 = {ps0_idle_mw!r} }}"
    active = "" if ps0_active_mw is None else f"active_power_mw = {{ PS0 = {ps0_active_mw!r} }}"
    share = "" if transition_share is None else f"transition_power_share = {transition_share!r}"
    return f"""
[platform.nvme]
preset = "{device}"
{idle}
{active}
{share}

[workload]
apst_workflow = {workflow}

[run]
duration = "{DURATION}"
seed = 1

[[variant]]
name = "legacy"
[variant.policy.apst]
algorithm = "legacy"

[[variant]]
name = "v5.14"
[variant.policy.apst]
algorithm = "v5.14"
"""


#: A row's measures, named as the core's summary tables (``view::rows``) name them: the
#: drive's (its ``nvme`` table) and its IO's (``io``). p99.9 is kept: the wake penalty hides
#: above p99 when few IOs wait (the first of a burst).
MEASURES = (
    "avg_power_mw",
    "lat_mean_us",
    "lat_p99_us",
    "lat_p999_us",
    "lat_max_us",
    "woken_ios",
    "energy_per_io_uj",
    "transitions",
)


def _run_one(device: str, workflow: int, **assumptions: Any) -> list[dict[str, Any]]:
    _, tables = native.run_scenario_text_rows(
        scenario_text(device, workflow, **assumptions),
        f"<apst {device} workflow {workflow}>",
    )
    summary = tables["summary"]
    return [
        {"device": device, "workflow": workflow, "algorithm": nvme["variant"]}
        | {m: (io | nvme)[m] for m in MEASURES}
        for io, nvme in zip(summary["io"], summary["nvme"], strict=True)
    ]


def runs(
    progress: Callable[[], None] | None = None,
    workers: int = 2,
    ps0_idle_mw: dict[str, float] | None = None,
    ps0_active_mw: dict[str, float] | None = None,
    transition_share: float | None = None,
) -> list[dict[str, Any]]:
    """The 70 rows (5 drives x 7 workflows x 2 algorithms), in a fixed order.

    Runs go to ``workers`` threads (the core releases the GIL); the result does not depend
    on how many, nor on which finishes first. Ctrl-C cancels the runs in progress and those
    not started. ``ps0_idle_mw``, ``ps0_active_mw`` (per drive) and ``transition_share``
    override the central power assumptions (to an end of their ranges).
    """
    grid = [(d, w) for d in DRIVES for w in WORKFLOWS]
    out: list[dict[str, Any]] = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:

            def one(device: str, workflow: int) -> list[dict[str, Any]]:
                return _run_one(
                    device,
                    workflow,
                    ps0_idle_mw=(ps0_idle_mw or {}).get(device),
                    ps0_active_mw=(ps0_active_mw or {}).get(device),
                    transition_share=transition_share,
                )

            for rows in pool.map(lambda dw: one(*dw), grid):
                out.extend(rows)
                if progress:
                    progress()
        except KeyboardInterrupt:
            pool.shutdown(wait=False, cancel_futures=True)
            native.cancel()
            raise
    return out


def tables() -> dict[str, dict[str, dict[str, Any]]]:
    """The APST table each builder produces for each drive, with its idle schedule."""
    return {d: {a: native.apst(d, {"algorithm": a}) for a in ALGORITHMS} for d in DRIVES}


def row(rows: list[dict[str, Any]], device: str, workflow: int, algorithm: str) -> dict[str, Any]:
    return next(
        r
        for r in rows
        if r["device"] == device and r["workflow"] == workflow and r["algorithm"] == algorithm
    )


def judge(
    rows: list[dict[str, Any]], ends: dict[str, list[dict[str, Any]]], tabs: dict[str, Any]
) -> dict[str, Any]:
    """The core's judgement of the seed's claims: ``claims`` (each with its robustness over
    ``ends``, which maps each end, ``assumption_ends``' keys, to its grid) and ``figures``
    (what the report quotes)."""
    return native.judge_apst(
        {
            "runs": rows,
            "ends": [{"name": name, "runs": end_rows} for name, end_rows in ends.items()],
            "tables": tabs,
        }
    )


verdict_counts = claims_lib.verdict_counts
verdict_text = claims_lib.verdict_text


def ps0_ranges() -> dict[str, dict[str, dict[str, Any]]]:
    """Each drive's PS0 power estimates (``low_mw``, ``central_mw``, ``high_mw``, ``source``)
    by kind, "idle" and "active", for the drives whose preset has them."""
    presets = {p["id"]: p for p in native.presets()}
    out = {}
    for kind in ("idle", "active"):
        per_drive = {d: presets[d][f"ps0_{kind}"] for d in DRIVES if presets[d].get(f"ps0_{kind}")}
        if per_drive:
            out[kind] = per_drive
    return out


def assumption_ends(
    ranges: dict[str, dict[str, dict[str, Any]]],
) -> dict[str, dict[str, Any]]:
    """The runs beyond the central one: each assumption torpor cannot check, at each end of
    its range, as the ``runs`` keyword arguments that set it. ``ranges`` maps "idle" and
    "active" to each drive's PS0 estimate. Keys name the assumption and the end, as
    ``hinges_on`` quotes them."""
    ends: dict[str, dict[str, Any]] = {}
    for kind, per_drive in ranges.items():
        span = ", ".join(
            f"{DRIVES[d]} {r['low_mw']:g}-{r['high_mw']:g} mW" for d, r in per_drive.items()
        )
        for end in ("low", "high"):
            ends[f"PS0 {kind} power at the {end} end of its range ({span})"] = {
                f"ps0_{kind}_mw": {d: r[f"{end}_mw"] for d, r in per_drive.items()}
            }
    for share, words in ((0.0, "idle power (share 0)"), (1.0, "maximum power (share 1)")):
        ends[f"transition power at {words}"] = {"transition_share": share}
    return ends
