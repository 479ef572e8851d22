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

The core reads and checks the whole file before anything runs (``native.load_sweep``: each
part at its line, at most 100,000 points, the base scenario alone and with each axis' first
and last value); this module draws the points, runs them and ranks the rows. Each point runs
the base scenario with the axes' values set (every variant of it: one row per point and
variant). The points go to threads (the core releases the GIL), or, given a Dask scheduler's
address, to a `dask.distributed` cluster in chunks; the rows come back in the points' order
either way, identical. A point that fails keeps its row, with its parameters and the error;
when every point fails with the same error, that error is raised once.
"""

from __future__ import annotations

import json
import math
import random
import threading
import tomllib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torpor import InputError, native

#: The measurements each row carries, by column name (the core checks that the base scenario
#: measures each one a sweep file names).
METRICS = (
    "avg_power_mw",
    "energy_mj",
    "lat_mean_us",
    "lat_p99_us",
    "lat_p999_us",
    "lat_max_us",
    "woken_ios",
    "transitions_per_hour",
    "system_avg_power_mw",
    "system_energy_mj",
    "task_io_mean_us",
    "task_io_p99_us",
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
    """A sweep file as the core checked it."""

    scenario_text: str
    scenario_label: str
    axes: tuple[Axis, ...]
    objectives: tuple[str, ...]
    constraints: tuple[tuple[str, float | None, float | None], ...]
    mode: str = "grid"
    samples: int = 0
    seed: int = 1
    #: The folder the base scenario's relative paths resolve against.
    scenario_base: str = ""
    #: The platforms the base scenario runs: ``nvme``, ``ufs``, ``cpu`` -> bool.
    platforms: tuple[tuple[str, bool], ...] = ()


def load(path: str | Path) -> Sweep:
    """Reads and checks a sweep file (the core's ``load_sweep``); problems are one
    ``InputError`` line naming the file and line."""
    s = native.load_sweep(path)
    axes = tuple(
        Axis(a["path"], tuple(a["values"]), a["low"], a["high"], a["log"]) for a in s["axes"]
    )
    return Sweep(
        s["scenario_text"],
        s["scenario_label"],
        axes,
        tuple(s["objectives"]),
        tuple((c["metric"], c["min"], c["max"]) for c in s["constraints"]),
        s["mode"],
        s["samples"],
        s["seed"],
        s["scenario_base"],
        tuple(s["platforms"].items()),
    )


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
    ``workers`` threads here, or on the Dask cluster whose scheduler is at ``scheduler``.
    Raises ``InputError`` once when every point failed with the same error."""
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
        _run_threads(sweep, chunks, workers, collect)
    else:
        _run_dask(sweep, chunks, scheduler, collect)
    errors = {r["error"] for r in rows}
    if len(errors) == 1 and None not in errors:
        raise InputError(f"every point of the sweep failed: {errors.pop()}")
    return rows


Chunk = list[tuple[int, dict[str, Any]]]


def _run_threads(
    sweep: Sweep,
    chunks: list[Chunk],
    workers: int,
    collect: Callable[[list[dict[str, Any]], int], None],
) -> None:
    """Runs ``chunks`` in ``workers`` threads. Ctrl-C (or any error) here stops at once: no
    point starts after it, the points in flight stop at the core's next check (``cancel``:
    within milliseconds), and nothing waits for them."""
    stop = threading.Event()
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    text, label, base = sweep.scenario_text, sweep.scenario_label, sweep.scenario_base
    futures = [pool.submit(run_chunk, text, label, c, base, stop) for c in chunks]
    try:
        for chunk, future in zip(chunks, futures, strict=True):
            collect(future.result(), len(chunk))
    except BaseException:
        stop.set()
        native.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _run_dask(
    sweep: Sweep,
    chunks: list[Chunk],
    scheduler: str,
    collect: Callable[[list[dict[str, Any]], int], None],
) -> None:
    """Runs ``chunks`` as tasks of the Dask cluster at ``scheduler``; Ctrl-C cancels the
    tasks not yet finished."""
    from distributed import Client

    text, label, base = sweep.scenario_text, sweep.scenario_label, sweep.scenario_base
    with Client(scheduler) as client:
        futures = [client.submit(run_chunk, text, label, c, base, pure=False) for c in chunks]
        try:
            for chunk, future in zip(chunks, futures, strict=True):
                try:
                    chunk_rows = future.result()
                except Exception as e:  # a lost worker: every point of the chunk says so
                    chunk_rows = [
                        {"point": i} | p | {"variant": None, "error": f"worker failed: {e}"}
                        for i, p in chunk
                    ]
                collect(chunk_rows, len(chunk))
        except BaseException:
            client.cancel(futures)
            raise


def run_chunk(
    text: str,
    label: str,
    chunk: Sequence[tuple[int, dict[str, Any]]],
    base: str = "",
    stop: threading.Event | None = None,
) -> list[dict[str, Any]]:
    """The rows of some points (index, settings) of the scenario ``text`` (its relative paths
    resolving from ``base``): what a thread or a Dask task runs. A set ``stop`` ends it
    before its next point."""
    rows: list[dict[str, Any]] = []
    for i, point in chunk:
        if stop is not None and stop.is_set():
            break
        try:
            _, tables = native.run_scenario_text_rows(
                text, label, overrides_json=json.dumps(point), base=base
            )
        except InputError as e:
            rows.append({"point": i} | point | {"variant": None, "error": str(e)})
            continue
        rows += [{"point": i} | point | m for m in tables["sweep"]]
    return rows


def measures(v: dict[str, Any]) -> dict[str, Any]:
    """One variant of a report as a sweep row's measurements (the columns of METRICS), as
    the core's ``sweep`` row table defines them (``view::rows``, docs/rows.md): power and
    energy of the device (the NVMe drive, else the UFS device) or, in a CPU-only run, of the
    CPUs; IO latencies when the run completed IOs; APST's counts from the NVMe drive; with
    CPUs beside a device, the whole machine's power and energy and the latency of every
    request its tasks (fio jobs' threads among them) waited for, as they saw it. What the run
    did not measure is None. A run's own rows come with it (:func:`run_chunk`); this reads a
    variant given as a dict."""
    return native.report_rows({"variants": [v]})["sweep"][0]


def feasible(rows: Sequence[dict[str, Any]], sweep: Sweep) -> list[dict[str, Any]]:
    """The rows that ran, measured every objective and meet every constraint."""

    def ok(row: dict[str, Any]) -> bool:
        if row.get("error") or any(row.get(o) is None for o in sweep.objectives):
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


def applied(row: dict[str, Any], axes: Sequence[str], nvme_drive: str | None) -> list[str]:
    """How to apply ``row``'s settings of ``axes`` on a running system: APST's (for the base
    scenario's NVMe drive ``nvme_drive``) as ``apply_lines`` prints them, every other field as
    the core's ``view::knobs`` writes it, or a comment saying it has no such form."""
    lines = apply_lines(row, nvme_drive) if nvme_drive else []
    others = {a: row[a] for a in axes if not a.startswith("policy.apst.")}
    for path, forms in native.applied_settings(others).items():
        lines += forms or [f"# {path} = {others[path]}: no sysfs or command-line form known"]
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


@dataclass(frozen=True)
class Ranking:
    """A sweep's points ranked against the scenario as written: what `torpor sweep` prints and
    the one report's "what to ship" shows."""

    #: The scenario as written, measured (its first variant).
    baseline: dict[str, Any]
    feasible: list[dict[str, Any]]
    front: list[dict[str, Any]]
    #: The front grouped by equal objectives (``ties``).
    groups: list[list[dict[str, Any]]]
    best: dict[str, Any] | None
    #: ``recommendation``'s lines and ``applied``'s for ``best`` (empty without one).
    lines: list[str]
    apply: list[str]


def rank(sweep: Sweep, rows: Sequence[dict[str, Any]]) -> Ranking:
    """Runs the scenario as written and ranks ``rows`` (the sweep's points, run) against it."""
    _, as_written = native.run_scenario_text_rows(
        sweep.scenario_text, sweep.scenario_label, base=sweep.scenario_base
    )
    baseline = as_written["sweep"][0]
    ok = feasible(rows, sweep)
    front = pareto(ok, sweep.objectives)
    groups = ties(front, sweep.objectives)
    best = recommend(front, sweep.objectives)
    if best is None:
        return Ranking(baseline, ok, front, groups, None, [], [])
    axes = [a.path for a in sweep.axes]
    tied = next(g for g in groups if best in g)
    return Ranking(
        baseline,
        ok,
        front,
        groups,
        best,
        recommendation(best, baseline, sweep, tied, axes),
        applied(best, axes, _nvme_drive(sweep)),
    )


def _nvme_drive(sweep: Sweep) -> str | None:
    """The drive as the base scenario (checked by the core) names it: a preset id, or its
    dump's path; ``None`` without a drive."""
    if not dict(sweep.platforms).get("nvme"):
        return None
    nvme = tomllib.loads(sweep.scenario_text).get("platform", {}).get("nvme", {})
    return nvme.get("preset") or str(Path(sweep.scenario_base) / nvme.get("file", ""))
