"""Seed 000: commit ebd8a93aa4f5 "nvme: extend and modify the APST configuration algorithm".

The commit message reports, for five drives and seven workflows, how the v5.14 table builder
changed the tables, average power and latency compared with the legacy one. This experiment
runs the same 5 x 7 x 2 grid in the simulator and checks each statement with a rule written
next to it: a direction and a stated tolerance, never a judgement by hand.
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

# The seed's figures, stated once: the claims and the report compare against these.
SEED_SN530_SAVING = 0.62  # "up to 62 % lower power on scenarios 4, 5 and 6"
# How far above the seed's "up to" figure torpor's largest saving may go and still match it,
# in percentage points: past it the model overshoots the measurement.
SN530_OVERSHOOT_POINTS = 0.10
SEED_PM991_INCREASE = 0.18  # "up to 18 % more power in worst-case scenarios"
# Workflow 7 mean latency, legacy -> v5.14, ms.
SEED_W7_MS = {"wdc-pc-sn530-256gb": (0.6, 10.0), "intel-760p-ssdpekkw256g8": (2.0, 53.0)}


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


# ---------------------------------------------------------------------------------------------
# Claims: each returns (claim, seed_value, torpor_value, ok).


def row(rows: list[dict[str, Any]], device: str, workflow: int, algorithm: str) -> dict[str, Any]:
    return next(
        r
        for r in rows
        if r["device"] == device and r["workflow"] == workflow and r["algorithm"] == algorithm
    )


def relative_change(rows: list[dict[str, Any]], device: str, workflow: int, key: str) -> float:
    """Relative change v5.14 vs legacy, as a fraction."""
    old = row(rows, device, workflow, "legacy")[key]
    new = row(rows, device, workflow, "v5.14")[key]
    return (new - old) / old


def schedule(t: dict[str, Any]) -> list[tuple[int, float]]:
    """(state, ms of idle after which it is reached) from PS0, following the table's chain."""
    return [(s["ps"], s["reached_after_ms"]) for s in t["idle_schedule"]]


def first_itpt_ms(t: dict[str, Any]) -> int:
    """PS0's idle time before its first transition, as the table states it (0: none)."""
    return t["table"]["entries"][0]["itpt_ms"]


def schedule_text(t: dict[str, Any]) -> str:
    sched = schedule(t)
    if not sched:
        return "no transitions"
    return ", ".join(f"PS{ps} after {ms:g} ms" for ps, ms in sched)


def _claim(claim: str, seed_value: str, torpor_value: str, ok: bool | None) -> dict[str, Any]:
    return claims_lib.claim(SEED, claim, seed_value, torpor_value, ok)


def claim_tables_identical(tabs: dict[str, Any]) -> dict[str, Any]:
    # Rule: same ITPS in all 32 entries, and each non-zero ITPT within a factor 1.25.
    d = "kioxia-bg4-kbg40zns256g"
    old = tabs[d]["legacy"]["table"]["entries"]
    new = tabs[d]["v5.14"]["table"]["entries"]
    same_targets = all(a["itps"] == b["itps"] for a, b in zip(old, new, strict=True))
    ratios = [
        max(a["itpt_ms"], b["itpt_ms"]) / min(a["itpt_ms"], b["itpt_ms"])
        for a, b in zip(old, new, strict=True)
        if a["itpt_ms"] and b["itpt_ms"]
    ]
    ok = same_targets and all(r <= 1.25 for r in ratios)
    return _claim(
        "Kioxia BG4: legacy and v5.14 tables are virtually identical "
        "(rule: same targets, ITPTs within x1.25)",
        "virtually identical",
        f"legacy: {schedule_text(tabs[d]['legacy'])}; v5.14: {schedule_text(tabs[d]['v5.14'])}",
        ok,
    )


def claim_quicker(tabs: dict[str, Any], device: str) -> dict[str, Any]:
    # The claim is about the tables, so the rule reads the tables: PS0's idle time before its
    # first transition (ITPT) at most half legacy's, and the deepest state reached sooner.
    old_t, new_t = tabs[device]["legacy"], tabs[device]["v5.14"]
    old, new = schedule(old_t), schedule(new_t)
    old_itpt, new_itpt = first_itpt_ms(old_t), first_itpt_ms(new_t)
    ok = bool(old and new) and 0 < new_itpt <= 0.5 * old_itpt
    ok = ok and new[-1][0] >= old[-1][0] and new[-1][1] < old[-1][1]
    ratio = new_itpt / old_itpt if old_itpt else float("inf")
    return _claim(
        f"{DRIVES[device]}: v5.14 makes the transitions to PS3/PS4 much quicker "
        "(rule: PS0's ITPT at most half legacy's, deepest state reached sooner)",
        "much quicker transitions to PS3 and PS4",
        f"PS0 ITPT {old_itpt} -> {new_itpt} ms (x{ratio:.2f}, rule <= x0.50: "
        f"{_margin(0.5 - ratio)}); legacy: {schedule_text(old_t)}; "
        f"v5.14: {schedule_text(new_t)}",
        ok,
    )


def _margin(slack: float) -> str:
    """How far a value is inside (+) or outside (-) its rule's bound, in words."""
    if slack == 0:
        return "exactly at the bound"
    return f"{abs(slack):.2f} {'inside' if slack > 0 else 'beyond'} the bound"


def claim_deeper_similar_time(tabs: dict[str, Any]) -> dict[str, Any]:
    # Rule: first target PS3 under legacy, PS4 under v5.14; first ITPTs within a factor 2.
    d = "skhynix-bc511-hfm256gdjtni"
    old, new = schedule(tabs[d]["legacy"]), schedule(tabs[d]["v5.14"])
    ok = bool(old and new) and old[0][0] == 3 and new[0][0] == 4
    ok = ok and max(old[0][1], new[0][1]) <= 2 * min(old[0][1], new[0][1])
    return _claim(
        "SK hynix BC511: PS4 rather than PS3 after a similar idle time "
        "(rule: first target PS3 -> PS4, idle times within x2)",
        "PS4 rather than PS3 after a similar amount of time",
        f"legacy: {schedule_text(tabs[d]['legacy'])}; v5.14: {schedule_text(tabs[d]['v5.14'])}",
        ok,
    )


def claim_deeper_later(tabs: dict[str, Any]) -> dict[str, Any]:
    # Rule: the first transition under v5.14 goes to a deeper state and happens later.
    d = "samsung-pm991-mzvlq256hajd"
    old, new = schedule(tabs[d]["legacy"]), schedule(tabs[d]["v5.14"])
    ok = bool(old and new) and new[0][0] > old[0][0] and new[0][1] > old[0][1]
    return _claim(
        "Samsung PM991: the first transition happens after a longer idle time but to a "
        "lower power state (rule: deeper first target, later)",
        "initial transition later, but to a lower power state",
        f"legacy: {schedule_text(tabs[d]['legacy'])}; v5.14: {schedule_text(tabs[d]['v5.14'])}",
        ok,
    )


def sn530_savings(rows: list[dict[str, Any]]) -> dict[int, float]:
    """The SN530's power saving under v5.14 on workflows 4-6, as fractions."""
    d = "wdc-pc-sn530-256gb"
    return {w: -relative_change(rows, d, w, "avg_power_mw") for w in (4, 5, 6)}


def pm991_worst_increase(rows: list[dict[str, Any]]) -> tuple[int, float]:
    """The PM991's workflow with the largest power change under v5.14, and that change."""
    d = "samsung-pm991-mzvlq256hajd"
    changes = {w: relative_change(rows, d, w, "avg_power_mw") for w in WORKFLOWS}
    return max(changes.items(), key=lambda kv: kv[1])


def claim_sn530_savings(rows: list[dict[str, Any]]) -> dict[str, Any]:
    # Rule, bounded on both sides: at least 30 % lower average power on each of workflows 4-6,
    # and the largest saving no more than 10 points above the seed's "up to 62 %" (beyond it
    # the model overshoots the measurement).
    savings = sn530_savings(rows)
    ceiling = SEED_SN530_SAVING + SN530_OVERSHOOT_POINTS
    largest = max(savings.values())
    low = [w for w, s in savings.items() if s < 0.30]
    verdict = (
        f"; workflow(s) {', '.join(map(str, low))} below 30 %"
        if low
        else f"; largest {largest:.0%} overshoots the seed's {SEED_SN530_SAVING:.0%} by more "
        f"than {SN530_OVERSHOOT_POINTS * 100:.0f} points"
        if largest > ceiling
        else ""
    )
    return _claim(
        "WD SN530: large power savings on workflows 4-6 (rule: >= 30 % lower average power on "
        f"each, the largest at most {ceiling:.0%})",
        f"up to {SEED_SN530_SAVING:.0%} lower power on scenarios 4, 5 and 6",
        ", ".join(f"workflow {w}: {s:.0%} lower" for w, s in savings.items()) + verdict,
        not low and largest <= ceiling,
    )


def claim_kioxia_flat(rows: list[dict[str, Any]]) -> dict[str, Any]:
    # Rule: |change in average power| <= 10 % on every workflow.
    d = "kioxia-bg4-kbg40zns256g"
    changes = [relative_change(rows, d, w, "avg_power_mw") for w in WORKFLOWS]
    worst = max(changes, key=abs)
    return _claim(
        "Kioxia BG4: little or no change in average power on all workflows "
        "(rule: |change| <= 10 % on each)",
        "little or no change",
        f"largest change {worst:+.1%} (workflows 1-7: "
        + ", ".join(f"{c:+.1%}" for c in changes)
        + ")",
        all(abs(c) <= 0.10 for c in changes),
    )


def claim_pm991_increase(rows: list[dict[str, Any]]) -> dict[str, Any]:
    # Rule: the worst workflow shows a power increase, between 0 and 2 x the seed's figure.
    w, worst = pm991_worst_increase(rows)
    return _claim(
        "Samsung PM991: moderate increase in power in the worst case "
        f"(rule: worst-case increase > 0 and <= {2 * SEED_PM991_INCREASE:.0%}, twice the seed's "
        "figure)",
        f"up to {SEED_PM991_INCREASE:.0%} more power in worst-case scenarios",
        f"worst: workflow {w}, {worst:+.1%}",
        0 < worst <= 2 * SEED_PM991_INCREASE,
    )


def claim_sustained_unchanged(rows: list[dict[str, Any]]) -> dict[str, Any]:
    # Rule: workflow 1 mean latency and power change by at most 1 % on every drive.
    changes = [
        max(
            abs(relative_change(rows, d, 1, "lat_mean_us")),
            abs(relative_change(rows, d, 1, "avg_power_mw")),
        )
        for d in DRIVES
    ]
    return _claim(
        "Sustained writes (workflow 1): minimal effect, the drive does not enter low-power "
        "states (rule: latency and power within 1 % on every drive)",
        "effect minimal",
        f"largest change {max(changes):.2%}",
        max(changes) <= 0.01,
    )


def claim_w7_latency(
    rows: list[dict[str, Any]],
    tabs: dict[str, Any],
    device: str,
    seed_old_ms: float,
    seed_new_ms: float,
) -> list[dict[str, Any]]:
    """Two rules: direction (v5.14 mean >= 3 x legacy) and magnitude (within x2 of the seed)."""
    old = row(rows, device, 7, "legacy")["lat_mean_us"] / 1000
    new = row(rows, device, 7, "v5.14")["lat_mean_us"] / 1000
    name = DRIVES[device]
    direction = _claim(
        f"{name}: workflow 7 mean latency rises sharply under v5.14 (rule: >= 3 x legacy)",
        f"{seed_old_ms:g} ms -> {seed_new_ms:g} ms",
        f"{old:.3f} ms -> {new:.2f} ms",
        new >= 3 * old,
    )
    ok = seed_new_ms / 2 <= new <= seed_new_ms * 2
    deepest = schedule(tabs[device]["v5.14"])
    exlat_ms = None
    if deepest:
        ps = deepest[0][0]
        exlat_ms = (
            tabs[device]["v5.14"]["device"]["controller"]["power_states"][ps]["exit_lat_us"] / 1000
        )
    explain = ""
    if not ok and exlat_ms is not None and exlat_ms < seed_new_ms / 2:
        explain = (
            f"; the declared exit latency of PS{deepest[0][0]} is {exlat_ms:g} ms, so a "
            f"{seed_new_ms:g} ms mean cannot come from the declared latencies: the real drive "
            "wakes slower than its descriptor says (or the host adds delay)"
        )
    magnitude = _claim(
        f"{name}: workflow 7 mean latency under v5.14 matches the seed's figure (rule: within x2)",
        f"{seed_new_ms:g} ms",
        f"{new:.2f} ms{explain}",
        ok,
    )
    return [direction, magnitude]


def claim_others_milder(rows: list[dict[str, Any]]) -> dict[str, Any]:
    # Rule: on the three other drives the workflow-7 latency increase (ms) is smaller than the
    # smaller of SN530's and 760p's.
    def inc(d: str) -> float:
        return (
            row(rows, d, 7, "v5.14")["lat_mean_us"] - row(rows, d, 7, "legacy")["lat_mean_us"]
        ) / 1000

    # "Much" milder: at most half of the smaller of the two drives' increases.
    bound = 0.5 * min(inc("wdc-pc-sn530-256gb"), inc("intel-760p-ssdpekkw256g8"))
    others = {
        d: inc(d) for d in DRIVES if d not in ("wdc-pc-sn530-256gb", "intel-760p-ssdpekkw256g8")
    }
    return _claim(
        "Other drives: the workflow-7 latency increase is much milder or non-existent "
        "(rule: at most half of the smaller of SN530's and 760p's increase)",
        "much milder or non-existent",
        f"increase bound {bound:.2f} ms; "
        + ", ".join(
            f"{DRIVES[d]} {v:+.2f} ms ({_margin(bound - v).replace('the bound', 'it')})"
            for d, v in others.items()
        ),
        all(v <= bound for v in others.values()),
    )


def claim_background_ops() -> dict[str, Any]:
    return _claim(
        "Intel and Samsung drives: longer stays in deep states trigger background operations "
        "that raise power on workflows 3, 4 and 7",
        "more complex impact observed on scenarios 3, 4 and 7",
        "not checkable: background operations are not modelled, the drive model has no "
        "background-operation power",
        None,
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


#: What ``robustness`` re-evaluates the claims at (``robust_basis`` in results.json).
ROBUST_BASIS = (
    "each drive's PS0 idle and active power and the transition power, each at both ends of "
    "its range, the others central"
)


def robustness(
    central: list[dict[str, Any]], ends: dict[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Each claim with ``robust`` (True: holds at the central values and at every end of every
    range; False: fails at one of them; None: not checkable) and ``hinges_on`` (the ends at
    which the verdict differs from the central one; None when none does). ``ends`` maps each
    end (``assumption_ends``' keys) to the claims evaluated there."""
    return claims_lib.robustness(central, ends, ROBUST_BASIS)


def claims(rows: list[dict[str, Any]], tabs: dict[str, Any]) -> list[dict[str, Any]]:
    out = [
        claim_tables_identical(tabs),
        claim_quicker(tabs, "wdc-pc-sn530-256gb"),
        claim_quicker(tabs, "intel-760p-ssdpekkw256g8"),
        claim_deeper_similar_time(tabs),
        claim_deeper_later(tabs),
        claim_sn530_savings(rows),
        claim_kioxia_flat(rows),
        claim_pm991_increase(rows),
        claim_sustained_unchanged(rows),
    ]
    for device, (old_ms, new_ms) in SEED_W7_MS.items():
        out += claim_w7_latency(rows, tabs, device, old_ms, new_ms)
    out += [claim_others_milder(rows), claim_background_ops()]
    return out
