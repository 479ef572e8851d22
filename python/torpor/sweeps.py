"""Sweeps: run a scenario over a grid or a sample of settings, keep the Pareto front of the
objectives among the points that meet the constraints, and recommend one setting in the form
users apply it.

A sweep file (TOML) names the base scenario and its axes, objectives and constraints::

    [sweep]
    scenario = "apst-sn530-mixed.toml"   # relative to the sweep file
    mode = "grid"                          # or "random" / "lhs" with `samples` and `seed`

    [[sweep.axis]]
    path = "policy.apst.primary_timeout_ms"  # any scenario field, by dotted path
    values = [50, 100, 200]                  # or range = [from, to, step], or for random/lhs
                                             # low / high (log = true for a log scale)

    [[sweep.objective]]
    minimise = "avg_power_mw"              # a column of the rows (see METRICS)

    [[sweep.constraint]]
    metric = "lat_p999_us"
    max = 5000.0                           # and/or min

Each point runs the base scenario with the axes' values set (every variant of it: one row
per point and variant). The points go to threads (the core releases the GIL), or, given a
Dask scheduler's address, to a `dask.distributed` cluster in chunks; the rows come back in
the points' order either way, identical. A point that fails keeps its row, with its
parameters and the error.
"""

from __future__ import annotations

import json
import math
import random
import re
import sys
import tomllib
import types
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torpor import InputError, native
from torpor.files import read_text, shown_path

#: The measurements each row carries, by column name.
METRICS = (
    "avg_power_mw",
    "energy_mj",
    "lat_mean_us",
    "lat_p99_us",
    "lat_p999_us",
    "lat_max_us",
    "woken_ios",
    "transitions_per_hour",
)


@dataclass(frozen=True)
class Axis:
    """A scenario field and the values a sweep gives it."""

    path: str
    values: tuple[Any, ...] = ()
    low: float | None = None
    high: float | None = None
    log: bool = False


@dataclass(frozen=True)
class Sweep:
    """A parsed sweep file."""

    scenario_text: str
    scenario_label: str
    axes: tuple[Axis, ...]
    objectives: tuple[str, ...]
    constraints: tuple[tuple[str, float | None, float | None], ...]
    mode: str = "grid"
    samples: int = 0
    seed: int = 1


def load(path: str | Path) -> Sweep:
    """Reads a sweep file; problems are ``InputError``s naming the file."""
    path = Path(path)
    label = shown_path(path)
    try:
        doc = tomllib.loads(read_text(path, "a sweep file"))
    except tomllib.TOMLDecodeError as e:
        # tomllib says "... (at line N, column M)": the line goes where every error has it.
        found = re.search(r"^(.*) \(at line (\d+), column (\d+)\)$", " ".join(str(e).split()))
        if found:
            what, line, column = found.groups()
            raise InputError(f"{label}:{line}: {what} (column {column})") from None
        raise InputError(f"{label}: {' '.join(str(e).split())}") from None
    s = doc.get("sweep")
    if not isinstance(s, dict):
        raise InputError(f"{label}: expected a [sweep] table")
    unknown = set(s) - {"scenario", "mode", "samples", "seed", "axis", "objective", "constraint"}
    if unknown:
        raise InputError(f"{label}: [sweep]: unknown key(s) {', '.join(sorted(unknown))}")
    if "scenario" not in s:
        raise InputError(f'{label}: [sweep]: expected `scenario = "<base scenario file>"`')
    scenario = path.parent / str(s["scenario"])
    text = read_text(scenario, "the sweep's base scenario")
    mode = s.get("mode", "grid")
    if mode not in ("grid", "random", "lhs"):
        raise InputError(f"{label}: [sweep] mode: expected grid, random or lhs, got {mode!r}")
    axes = tuple(_axis(label, a, mode) for a in s.get("axis", []))
    if not axes:
        raise InputError(f"{label}: expected at least one [[sweep.axis]]")
    objectives = tuple(
        _metric(label, o.get("minimise"), "objective") for o in s.get("objective", [])
    )
    if not objectives:
        raise InputError(f"{label}: expected at least one [[sweep.objective]] `minimise = ...`")
    constraints = tuple(
        (_metric(label, c.get("metric"), "constraint"), c.get("min"), c.get("max"))
        for c in s.get("constraint", [])
    )
    samples = int(s.get("samples", 0))
    if mode != "grid" and samples < 1:
        raise InputError(f"{label}: [sweep] mode {mode}: expected `samples` >= 1")
    return Sweep(
        text, str(scenario), axes, objectives, constraints, mode, samples, int(s.get("seed", 1))
    )


def _axis(label: str, a: dict[str, Any], mode: str) -> Axis:
    path = a.get("path")
    if not isinstance(path, str) or not path:
        raise InputError(f'{label}: [[sweep.axis]]: expected `path = "dotted.path"`')
    if "values" in a:
        return Axis(path, tuple(a["values"]))
    if "range" in a:
        start, stop, step = a["range"]
        if step <= 0 or stop < start:
            raise InputError(f"{label}: axis {path}: expected range = [from, to, step > 0]")
        count = math.floor((stop - start) / step + 1e-9) + 1
        return Axis(path, tuple(start + i * step for i in range(count)))
    if "low" in a and "high" in a and mode != "grid":
        return Axis(path, low=float(a["low"]), high=float(a["high"]), log=bool(a.get("log")))
    raise InputError(
        f"{label}: axis {path}: expected `values`, `range` or (random/lhs) `low` and `high`"
    )


def _metric(label: str, name: Any, what: str) -> str:
    if name not in METRICS:
        raise InputError(f"{label}: {what}: expected one of {', '.join(METRICS)}, got {name!r}")
    return str(name)


def points(sweep: Sweep) -> list[dict[str, Any]]:
    """The settings to run, in order: the grid's product, or ``samples`` random or
    Latin-hypercube draws (seeded)."""
    if sweep.mode == "grid":
        out: list[dict[str, Any]] = [{}]
        for axis in sweep.axes:
            out = [p | {axis.path: v} for p in out for v in axis.values]
        return out
    rng = random.Random(sweep.seed)
    n = sweep.samples
    columns: dict[str, list[Any]] = {}
    for axis in sweep.axes:
        if axis.values:
            columns[axis.path] = [rng.choice(axis.values) for _ in range(n)]
            continue
        if sweep.mode == "lhs":
            strata = list(range(n))
            rng.shuffle(strata)
            unit = [(k + rng.random()) / n for k in strata]
        else:
            unit = [rng.random() for _ in range(n)]
        columns[axis.path] = [_scale(axis, u) for u in unit]
    return [{path: columns[path][i] for path in columns} for i in range(n)]


def _scale(axis: Axis, u: float) -> Any:
    """``u`` in [0, 1) mapped onto the axis, as an integer when both bounds are."""
    assert axis.low is not None and axis.high is not None
    if axis.log:
        value = math.exp(math.log(axis.low) + u * (math.log(axis.high) - math.log(axis.low)))
    else:
        value = axis.low + u * (axis.high - axis.low)
    return round(value) if float(axis.low).is_integer() and float(axis.high).is_integer() else value


#: Points per Dask task: enough to amortise a task's overhead (about a millisecond) over
#: runs that take about as long.
CHUNK = 64


def run(
    sweep: Sweep,
    workers: int = 2,
    progress: Callable[[], None] | None = None,
    scheduler: str | None = None,
) -> list[dict[str, Any]]:
    """Every point of ``sweep``, one row per point and variant, in the points' order: in
    ``workers`` threads here, or on the Dask cluster whose scheduler is at ``scheduler``."""
    todo = list(enumerate(points(sweep)))
    # Small enough that every thread has work (four chunks each), at most CHUNK points.
    size = max(1, min(CHUNK, math.ceil(len(todo) / (4 * max(1, workers)))))
    if scheduler is not None:
        size = CHUNK
    chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
    rows: list[dict[str, Any]] = []

    def collect(chunk_rows: list[dict[str, Any]], size: int) -> None:
        rows.extend(chunk_rows)
        if progress:
            for _ in range(size):
                progress()

    if scheduler is None:
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            text, label = sweep.scenario_text, sweep.scenario_label
            for chunk, chunk_rows in zip(
                chunks, pool.map(lambda c: run_chunk(text, label, c), chunks), strict=True
            ):
                collect(chunk_rows, len(chunk))
        return rows
    from distributed import Client

    with Client(scheduler) as client:
        futures = [
            client.submit(run_chunk, sweep.scenario_text, sweep.scenario_label, c, pure=False)
            for c in chunks
        ]
        for chunk, future in zip(chunks, futures, strict=True):
            try:
                chunk_rows = future.result()
            except Exception as e:  # a lost worker: every point of the chunk says so
                chunk_rows = [
                    {"point": i} | p | {"variant": None, "error": f"worker failed: {e}"}
                    for i, p in chunk
                ]
            collect(chunk_rows, len(chunk))
    return rows


def run_chunk(
    text: str, label: str, chunk: Sequence[tuple[int, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The rows of some points (index, settings) of the scenario ``text``: what a thread or
    a Dask task runs."""
    rows: list[dict[str, Any]] = []
    for i, point in chunk:
        try:
            report = native.run_scenario_text(text, label, overrides_json=json.dumps(point))
        except InputError as e:
            rows.append({"point": i} | point | {"variant": None, "error": str(e)})
            continue
        rows += [{"point": i} | point | measures(v) for v in report["variants"]]
    return rows


def measures(v: dict[str, Any]) -> dict[str, Any]:
    """One variant of a report as a sweep row's measurements (the columns of METRICS)."""
    lat = v["io"]["all"]
    nvme = v.get("nvme", {})
    return {
        "variant": v["name"],
        "error": None,
        "avg_power_mw": nvme.get("avg_power_mw"),
        "energy_mj": nvme.get("energy_mj"),
        "lat_mean_us": lat["mean_us"],
        "lat_p99_us": lat["p99_us"],
        "lat_p999_us": lat["p99_9_us"],
        "lat_max_us": lat["max_us"],
        "woken_ios": nvme.get("wake_delayed_ios"),
        "transitions_per_hour": nvme.get("transitions_per_hour"),
    }


def feasible(rows: Sequence[dict[str, Any]], sweep: Sweep) -> list[dict[str, Any]]:
    """The rows that ran and meet every constraint."""

    def ok(row: dict[str, Any]) -> bool:
        if row.get("error"):
            return False
        for metric, low, high in sweep.constraints:
            value = row.get(metric)
            if value is None or (low is not None and value < low):
                return False
            if high is not None and value > high:
                return False
        return True

    return [r for r in rows if ok(r)]


def pareto(rows: Sequence[dict[str, Any]], objectives: Sequence[str]) -> list[dict[str, Any]]:
    """The rows no other row dominates (no worse in every objective, better in one), all to be
    minimised; in their original order."""

    def dominates(a: dict[str, Any], b: dict[str, Any]) -> bool:
        no_worse = all(a[o] <= b[o] for o in objectives)
        return no_worse and any(a[o] < b[o] for o in objectives)

    return [r for r in rows if not any(dominates(o, r) for o in rows if o is not r)]


def recommend(front: Sequence[dict[str, Any]], objectives: Sequence[str]) -> dict[str, Any] | None:
    """The front's best row by the first objective (ties broken by the next ones)."""
    if not front:
        return None
    return min(front, key=lambda r: tuple(r[o] for o in objectives))


def apply_lines(row: dict[str, Any], device: str) -> list[str]:
    """How to apply ``row``'s APST settings on a real machine: the kernel command line and
    modprobe options (as the core prints them), the sysfs writes that apply them to a running
    system, and the command that programs the same table at once with nvme-cli (until the next
    controller reset)."""
    params = {
        path.removeprefix("policy.apst."): value
        for path, value in row.items()
        if isinstance(path, str) and path.startswith("policy.apst.")
    }
    if not params:
        return []
    view = native.apst(device, params)
    lines = view["kernel_params"].rstrip("\n").splitlines()
    lines += view["sysfs_commands"].rstrip("\n").splitlines()
    flags = " ".join(
        f"--{key.replace('_', '-')}" if value is True else f"--{key.replace('_', '-')} {value}"
        for key, value in params.items()
        if value is not False
    )
    lines += [
        "# or program the table now, until the next controller reset:",
        f"torpor apst {device} {flags} --emit nvme-cli",
    ]
    return lines


def broken(row: dict[str, Any], sweep: Sweep) -> list[str]:
    """Each constraint of ``sweep`` that ``row`` breaks, in words (``lat_p999_us 11,075.0 >
    max 5,000.0``); empty when the row meets them all. A failed row breaks them all at once."""
    if row.get("error"):
        return [f"the run failed: {row['error']}"]
    out = []
    for metric, low, high in sweep.constraints:
        value = row.get(metric)
        if value is None:
            out.append(f"{metric} not measured")
        elif low is not None and value < low:
            out.append(f"{metric} {value:,.1f} < min {low:,.1f}")
        elif high is not None and value > high:
            out.append(f"{metric} {value:,.1f} > max {high:,.1f}")
    return out


def ties(front: Sequence[dict[str, Any]], objectives: Sequence[str]) -> list[list[dict[str, Any]]]:
    """The front's rows grouped by equal objective values (points whose settings differ but
    whose results are the same), each group in the front's order, groups by first member."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in front:
        groups.setdefault(tuple(r[o] for o in objectives), []).append(r)
    return list(groups.values())


def point_list(rows: Sequence[dict[str, Any]], limit: int = 8) -> str:
    """``3, 7, 12`` or, past ``limit`` points, ``3, 7, ... (30 points)``."""
    ids = [str(r["point"]) for r in rows]
    if len(ids) <= limit:
        return ", ".join(ids)
    return f"{', '.join(ids[:limit])}, ... ({len(ids)} points)"


def recommendation(
    best: dict[str, Any],
    baseline: dict[str, Any],
    sweep: Sweep,
    tied: Sequence[dict[str, Any]],
    axes: Sequence[str],
) -> list[str]:
    """What to print about the recommended row ``best`` against the scenario as written
    (``baseline``): whether the scenario as written meets the constraints and which it breaks,
    the setting (naming the points that tie with it), and each objective before and after,
    saying why one got worse."""
    lines = []
    breaks = broken(baseline, sweep)
    if not sweep.constraints:
        lines.append("As written: no constraints to meet.")
    elif breaks:
        lines.append(f"As written: breaks {'; '.join(breaks)}.")
    else:
        lines.append("As written: meets every constraint.")
    settings = ", ".join(f"{a} = {best[a]}" for a in axes)
    lines.append(f"Recommended (point {best['point']}): {settings}")
    others = [r for r in tied if r is not best]
    if others:
        lines.append(
            f"  tied with point(s) {point_list(others)}: the same objectives with other "
            "settings; the first is shown"
        )
    improved = [
        o for o in sweep.objectives if baseline.get(o) is not None and best[o] < baseline[o]
    ]
    for o in sweep.objectives:
        before, after = baseline.get(o), best[o]
        if before is None:
            lines.append(f"  {o}: not measured as written -> {after:,.1f}")
            continue
        change = f" ({(after - before) / before:+.1%})" if before else ""
        why = ""
        if after > before:
            if breaks:
                why = ": the price of meeting the constraints the scenario as written breaks"
            elif improved:
                why = f": traded for {', '.join(improved)}"
        lines.append(f"  {o}: {before:,.1f} as written -> {after:,.1f}{change}{why}")
    return lines


class _CallableModule(types.ModuleType):
    """``torpor.sweep`` is this module and, called, the Python API's sweep: the package gives
    both one name (:func:`torpor.api.sweep`), whichever was imported first."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from torpor.api import sweep

        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
