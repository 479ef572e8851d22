"""torpor from Python: run a scenario, get pandas DataFrames.

A scenario is a path to a TOML file, TOML text, or a dict with the same tables
(``docs/scenario.md``). Keyword arguments set single fields by their dotted path, as a sweep
does; since dots cannot appear in Python names, pass them with ``**`` or write the dots as
double underscores:

>>> import torpor
>>> scenario = {
...     "platform": {"nvme": {"preset": "wdc-pc-sn530-256gb"}},
...     "workload": {"apst_workflow": 7},
...     "run": {"duration": "3s"},
... }
>>> r = torpor.run(scenario)
>>> r.latency.loc[r.latency.op == "read", ["variant", "count", "max_us"]].to_string(index=False)
'variant  count  max_us\\n   base     19 11075.0'
>>> longer = torpor.run(scenario, policy__apst__primary_timeout_ms=200)
>>> float(longer.latency.max_us.max())
75.0

Bad input raises :class:`torpor.InputError` with the same ``FILE:LINE: message`` the CLI
prints; Ctrl-C raises ``KeyboardInterrupt`` out of a run within a fraction of a second.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from torpor import InputError, arguments, native

#: A drive's time between power states, as the core's residency table names it (the
#: report's ``transition``).
BETWEEN_STATES = native.BETWEEN_STATES

#: What :func:`run` accepts as a scenario.
Scenario = str | os.PathLike[str] | Mapping[str, Any]


@dataclass(frozen=True)
class Result:
    """One scenario's run: the report as the core wrote it, and tables of it."""

    #: The full report (``torpor run --json``): one entry per variant, one section per
    #: component (timelines apart, in ``columns``).
    report: dict[str, Any]
    #: Each variant's timeline as NumPy columns (``None`` without one).
    columns: list[native.Columns | None] = field(default_factory=list, repr=False)
    #: The run's row tables as the core gives them (``native.report_rows``); made from
    #: ``report`` when not given.
    rows: dict[str, Any] = field(default_factory=dict, repr=False)
    #: One table per component the run had, by its name: ``io``, ``nvme``, ``ufs``, ``cpu``,
    #: ``system``; each a row per variant (see :func:`run`).
    summary: dict[str, pd.DataFrame] = field(init=False, repr=False)
    latency: pd.DataFrame = field(init=False, repr=False)
    residency: pd.DataFrame = field(init=False, repr=False)
    #: With ``run.timeline`` set: every state change of the drive in that window (variant,
    #: t_s, state, power_mw), and every request (variant, t_s of its arrival, op, latency_us:
    #: the per-IO records). Empty otherwise.
    timeline: pd.DataFrame = field(init=False, repr=False)
    requests: pd.DataFrame = field(init=False, repr=False)
    #: On CPUs: each task's wake-ups and wake-up latencies (variant, task, cpu, wakeups,
    #: latency_min_us, latency_avg_us, latency_p50_us, latency_p99_us, latency_p99_9_us,
    #: latency_max_us; work_ms_per_s: work done, as time at the highest OPP; periods_missed:
    #: a periodic task's frames that ran past their period; responses, response_avg_us,
    #: response_max_us: bursts finished and their time from the cause of their chain's first
    #: wake-up to their end, a frame's time on its last thread), as the core reports them.
    #: Empty otherwise.
    tasks: pd.DataFrame = field(init=False, repr=False)
    #: On CPUs: each task's wake-up latency histogram, cyclictest's 1 us bins (variant, task,
    #: us: the bin's lower edge, count), as the core reports it. Empty otherwise.
    task_histogram: pd.DataFrame = field(init=False, repr=False)
    #: CPUs with a device: each IO task's request latency as it saw it and its parts (variant,
    #: task, cpu, part: ``total``, ``device``, ``irq``, ``exit``, ``sched``; count, min_us,
    #: mean_us, p50_us, p90_us, p99_us, p99_9_us, max_us), one row per task and part, copied
    #: from the report's ``cpu.tasks[].io``. Empty otherwise.
    io_path: pd.DataFrame = field(init=False, repr=False)

    def __post_init__(self) -> None:
        variants = self.report["variants"]
        rows = self.rows or native.report_rows(self.report)
        object.__setattr__(self, "summary", _summary(rows["summary"]))
        object.__setattr__(self, "tasks", _tasks(variants))
        object.__setattr__(self, "task_histogram", _task_histogram(variants))
        object.__setattr__(self, "io_path", _io_path(variants))
        object.__setattr__(self, "latency", _latency(variants))
        object.__setattr__(self, "residency", _residency(rows["residency"]))
        timeline, requests = _timeline(variants, self.columns)
        object.__setattr__(self, "timeline", timeline)
        object.__setattr__(self, "requests", requests)

    @property
    def notes(self) -> list[str]:
        """What the run assumed, estimated or left out (estimated powers, decoding, defaults,
        replayed lines not sent), once each: the lines ``torpor run`` prints as notes."""
        from torpor.report.notes import run_notes

        return run_notes(self.report)


def run(
    scenario: Scenario,
    *,
    max_ios: int = native.DEFAULT_MAX_IOS,
    progress: native.ProgressFn | None = None,
    **overrides: Any,
) -> Result:
    """Runs ``scenario`` with ``overrides`` (dotted paths, or ``__`` for the dots) applied.

    An override applies to every variant: it replaces the value of each variant that sets the
    same field itself (``policy__cpuidle__governor="teo-util"`` runs every variant under
    teo-util), and it is checked like a value written in the file, in every variant (an
    unknown governor is an ``InputError`` naming ``policy.cpuidle.governor``).

    ``summary`` holds one table per component (the core's row tables, docs/rows.md), each a
    row per variant with ``variant`` and ``duration_s`` first: ``io`` (the jobs' IO, with a
    drive or a UFS device), ``nvme`` and ``ufs`` (the device: ``device`` its preset id or
    file, power, energy, its counters), ``cpu`` (``device`` the platform's preset id or file,
    the governor, power and energy, NaN where a state or OPP has no power figure, the idle
    misses), and ``system`` for CPUs with a device (the report's ``system`` energies and
    power, ``cpu_energy_mj``, ``device_energy_mj``, ``energy_mj`` (their sum) and
    ``avg_power_mw``, and the tasks' IO as they saw it, ``io_<part>_<stat>`` from ``cpu.io``,
    e.g. ``io_total_p99_us``;
    ``io_path`` has it per task and part). ``latency`` has one row per variant and direction
    (``read``, ``write``, ``all``); ``residency`` one per variant, ``component`` and state: per
    CPU and idle state (plus ``running``), with its energy and the idle misses (``above``:
    too deep, ``below``: too shallow), then per power state of a drive (plus ``entry/exit``,
    the time between states, as the CLI's table names it) or state of a UFS device.
    ``max_ios`` and ``progress`` are as in :func:`torpor.native.run_scenario_file`.

    A wrong argument (a set as an override, bytes as the scenario, ``max_ios=-1``, ...)
    raises :class:`torpor.InputError` saying what was expected, as bad input does.

    >>> r = run({"platform": {"nvme": {"preset": "kioxia-bg4-kbg40zns256g"}},
    ...          "workload": {"apst_workflow": 2}, "run": {"duration": "1s"}})
    >>> list(r.summary)
    ['io', 'nvme']
    >>> r.summary["nvme"][["variant", "device"]].to_dict("records")
    [{'variant': 'base', 'device': 'kioxia-bg4-kbg40zns256g'}]
    >>> round(float(r.residency.time_pct.sum()), 6)
    100.0
    """
    fields = {path.replace("__", "."): value for path, value in overrides.items()}
    arguments.fields("<overrides>", fields)
    overrides_json = json.dumps(fields) if fields else None
    source, is_text, label = arguments.scenario_source(scenario)
    max_ios = arguments.integer("max_ios", max_ios, 1, arguments.U64_MAX)
    report, columns, rows = native.run_scenario_columns(
        source, is_text, label, max_ios, arguments.progress(progress), overrides_json
    )
    return Result(report, columns, rows)


def devices() -> pd.DataFrame:
    """The built-in drive presets, one row each, with the PS0 powers torpor simulates where
    the drive reports none (estimates: ``*_low_mw`` and ``*_high_mw`` bound them).

    >>> d = devices()
    >>> d.loc[d.id == "wdc-pc-sn530-256gb", ["states", "ps0_idle_mw"]].to_dict("records")
    [{'states': 5, 'ps0_idle_mw': 700.0}]
    """
    rows = []
    for p in native.presets():
        row = {k: p[k] for k in ("id", "vendor", "model", "firmware", "in_apst_commit")}
        row["states"] = p["controller"]["npss"] + 1
        for kind in ("idle", "active"):
            e = p.get(f"ps0_{kind}") or {}
            for end in ("low", "central", "high"):
                suffix = "" if end == "central" else f"_{end}"
                row[f"ps0_{kind}{suffix}_mw"] = e.get(f"{end}_mw")
        rows.append(row)
    return pd.DataFrame(rows)


def apst_table(device: str | os.PathLike[str], **params: Any) -> pd.DataFrame:
    """The APST table the kernel would program for ``device`` (a preset id or a dump), one
    row per entry; ``params`` are the APST settings (``algorithm``, ``ps_max_latency_us``,
    ``primary_timeout_ms``, ...). ``attrs`` holds ``sent``, ``reason`` and ``apste``.

    >>> t = apst_table("wdc-pc-sn530-256gb", algorithm="legacy")
    >>> t.loc[t.itpt_ms > 0, ["ps", "itps", "itpt_ms"]].to_dict("records")[:1]
    [{'ps': 0, 'itps': 3, 'itpt_ms': 745}]
    """
    device = arguments.path("device", device, "a preset id or a path to a dump")
    arguments.fields("<apst parameters>", params)
    result = native.apst(device, params)
    table = pd.DataFrame(result["table"]["entries"])
    table.attrs.update(sent=result["sent"], reason=result["reason"], apste=result["table"]["apste"])
    return table


def reproduce(area: str, out: str | os.PathLike[str]) -> dict[str, Any]:
    """Re-runs a built-in experiment (``apst``, ``teo``, ``devfreq``, ``hpb``, ``qos``) into
    ``out`` (``results.json``, ``report.md``, ``report.html``) and returns its results,
    ``claims`` and ``runs`` as DataFrames; ``all`` runs each into its own folder under ``out``,
    then the phone and laptop scenarios and their sweeps, and returns the one report's results
    (``out/results.json``, docs/results.md) with its ``claims`` as a DataFrame."""
    from torpor import reproduction as rep

    area = arguments.choice("area", area, (*rep.AREAS, "all"))
    out = arguments.path("out", out, "a folder to write into")
    results = rep.run(area, Path(out))

    def tables(r: dict[str, Any]) -> dict[str, Any]:
        return r | {"claims": pd.DataFrame(r["claims"]), "runs": pd.DataFrame(r["runs"])}

    if area == "all":
        return results | {"claims": pd.DataFrame(results["claims"])}
    return tables(results)


def _summary(tables: dict[str, list[dict[str, Any]]]) -> dict[str, pd.DataFrame]:
    """The core's summary tables (``view::rows``, docs/rows.md) as DataFrames: a null there
    is a measure the run could not give, NaN here."""
    return {
        section: pd.DataFrame(rows).fillna(np.nan).infer_objects()
        for section, rows in tables.items()
    }


#: The parts of a task's IO latency as it saw it, as the report names them.
_IO_PARTS = ("total", "device", "irq", "exit", "sched")


def _latency(variants: list[dict[str, Any]]) -> pd.DataFrame:
    rows = [
        {"variant": v["name"], "op": op} | v["io"][op]
        for v in variants
        for op in ("read", "write", "all")
    ]
    return pd.DataFrame(rows)


def _timeline(
    variants: list[dict[str, Any]], columns: list[native.Columns | None]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The timelines as two tables. The state column is categorical (codes into the state
    names), so that millions of rows cost two bytes each, as the core sent them."""
    changes, requests = [], []
    for v, cols in zip(variants, columns, strict=False):
        t = v.get("nvme", {}).get("timeline")
        if not t or cols is None:
            continue
        names = [BETWEEN_STATES if name == "transition" else name for name in t["states"]]
        n = len(cols["t_s"])
        changes.append(
            pd.DataFrame(
                {
                    "variant": pd.Categorical.from_codes(
                        np.zeros(n, dtype=np.int8), categories=pd.Index([v["name"]])
                    ),
                    "t_s": cols["t_s"],
                    "state": pd.Categorical.from_codes(
                        cols["state"].astype(np.int16), categories=pd.Index(names)
                    ),
                    "power_mw": cols["power_mw"],
                },
                copy=False,
            )
        )
        requests.append(
            pd.DataFrame(
                {
                    "variant": v["name"],
                    "t_s": cols["request_t_s"],
                    "op": pd.Categorical.from_codes(
                        cols["request_write"].astype(np.int8),
                        categories=pd.Index(["read", "write"]),
                    ),
                    "latency_us": cols["request_latency_us"],
                },
                copy=False,
            )
        )
    empty = pd.DataFrame({"variant": [], "t_s": []})
    return (
        pd.concat(changes, ignore_index=True) if changes else empty,
        pd.concat(requests, ignore_index=True) if requests else empty,
    )


def _tasks(variants: list[dict[str, Any]]) -> pd.DataFrame:
    rows = [
        {
            "variant": v["name"],
            "task": t["name"],
            "cpu": t["cpu"],
            "wakeups": t["wakeups"],
            "latency_min_us": t["latency_min_ns"] / 1000,
            "latency_avg_us": t["latency_avg_us"],
            **{
                f"latency_{p}_us": (t["latency"]["summary"] or {}).get(f"{p}_us")
                for p in ("p50", "p99", "p99_9")
            },
            "latency_max_us": t["latency_max_ns"] / 1000,
            "work_ms_per_s": t["work_ms_per_s"],
            "periods_missed": t["periods_missed"],
            "responses": t["responses"],
            "response_avg_us": t["response_avg_us"],
            "response_max_us": t["response_max_ns"] / 1000,
        }
        for v in variants
        for t in v.get("cpu", {}).get("tasks", [])
    ]
    return pd.DataFrame(rows)


def _task_histogram(variants: list[dict[str, Any]]) -> pd.DataFrame:
    rows = [
        {"variant": v["name"], "task": t["name"], "us": us, "count": count}
        for v in variants
        for t in v.get("cpu", {}).get("tasks", [])
        for us, count in t["latency"].get("histogram_us") or []
    ]
    return pd.DataFrame(rows, columns=["variant", "task", "us", "count"])


def _io_path(variants: list[dict[str, Any]]) -> pd.DataFrame:
    rows = [
        {"variant": v["name"], "task": t["name"], "cpu": t["cpu"], "part": part} | t["io"][part]
        for v in variants
        for t in v.get("cpu", {}).get("tasks", [])
        if t.get("io")
        for part in _IO_PARTS
    ]
    columns = ["variant", "task", "cpu", "part", "count", "min_us", "mean_us", "p50_us"]
    columns += ["p90_us", "p99_us", "p99_9_us", "max_us"]
    return pd.DataFrame(rows, columns=columns if not rows else None)


def _residency(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The core's residency table (``view::rows``, docs/rows.md): a null energy there (a
    state or OPP of the platform has no power figure) is NaN here; counts are nullable
    integers (a drive's rows have no ``cpu``, ``above`` or ``below``)."""
    table = pd.DataFrame(rows).fillna(np.nan).infer_objects()
    counts = ["cpu", "entries", "above", "below"]
    return table.astype({c: "Int64" for c in counts if c in table})


#: The repository's root, for the examples below (the package lives in ``python/torpor``).
_ROOT = Path(__file__).resolve().parents[2]


def sweep(path: str | os.PathLike[str], workers: int = 2) -> pd.DataFrame:
    """Runs the sweep file at ``path`` (docs/sweep.md) in ``workers`` threads: one row per
    point and variant, with its point index, the axes' values, ``variant``, ``error`` (the
    message of a point that failed) and the measurements the core reports (``avg_power_mw``,
    ``lat_p999_us``, ``transitions_per_hour``, ...). ``torpor sweep`` prints the Pareto front
    and a recommendation from the same rows.

    >>> rows = sweep(_ROOT / "scenarios" / "apst-sn530-sweep.toml")
    >>> len(rows), rows.point.nunique()
    (24, 24)
    >>> bool((rows.primary_timeout_ms == rows["policy.apst.primary_timeout_ms"]).all())
    True
    """
    from torpor import sweeps as sw

    rows = pd.DataFrame(sw.run(sw.load(Path(path)), workers))
    # The axes also by their last name, as the CLI's table shows them.
    for column in [c for c in rows.columns if "." in c]:
        rows[column.rsplit(".", 1)[-1]] = rows[column]
    return rows


def idle_stats(
    trace: str | os.PathLike[str],
    platform: str | os.PathLike[str] | None = None,
    frequency: bool = False,
) -> pd.DataFrame:
    """idlestat's C-state report of an ftrace trace (docs/idle-stats.md): one row per section
    (each cluster, core and CPU, as idlestat names them) and state, with ``min_us``,
    ``max_us``, ``avg_us``, ``total_us``, ``hits``, ``over`` and ``under``. With
    ``frequency=True``, its P-state report (``torpor idle stats -p``) instead: one row per
    section and frequency (``freq_khz``), with the same times and ``hits``; only time while the
    CPU runs counts.

    >>> s = idle_stats(_ROOT / "tests/ftrace/two-clusters.report.txt",
    ...                _ROOT / "tests/ftrace/two-clusters.toml")
    >>> s[s.section == "cpu1"][["state", "hits", "over", "under"]].to_dict("records")[0]
    {'state': 'WFI', 'hits': 2, 'over': 1, 'under': 1}
    >>> p = idle_stats(_ROOT / "tests/ftrace/pstates.report.txt", frequency=True)
    >>> p[p.section == "cpu1"][["freq_khz", "total_us", "hits"]].values.tolist()
    [[500000.0, 550.0, 2.0], [1000000.0, 300.0, 1.0]]
    """
    trace = arguments.path("trace", trace, "a path to an ftrace text trace")
    if platform is not None:
        platform = arguments.path("platform", platform, "a CPU preset id or a platform TOML path")
    report = native.idle_stats(trace, platform)
    sections = report["pstates"]["sections"] if frequency else report["sections"]
    rows = [
        {"section": section, **state} for section, states in sections.items() for state in states
    ]
    return pd.DataFrame(rows)


def idle_replay(
    trace: str | os.PathLike[str],
    governors: str,
    platform: str | None = None,
    hz: int | None = None,
) -> pd.DataFrame:
    """A trace's idle periods replayed through ``governors`` (comma-separated names, as
    ``torpor idle replay`` takes them; docs/idle-replay.md): one row per governor, and one
    ``actual`` row for what the traced kernel chose, with ``periods``, ``too_deep_pct``,
    ``too_shallow_pct``, ``added_latency_mean_us``, ``idle_energy_mj``, ``active_energy_mj``
    (the traced running time, the same in every row) and ``energy_mj`` (their sum; each NaN
    where the platform gives no power), as the core reports them. An unknown or repeated
    governor, like any wrong argument, raises :class:`torpor.InputError`.

    >>> r = idle_replay(_ROOT / "tests/ftrace/replay-timers.report.txt", "menu,teo",
    ...                 "arm-juno-r0")
    >>> r[["governor", "periods", "too_deep_pct"]].round(1).to_dict("records")[0]
    {'governor': 'actual', 'periods': 3, 'too_deep_pct': 33.3}
    """
    trace = arguments.path("trace", trace, "a path to an ftrace text trace")
    governors = arguments.text("governors", governors, "comma-separated governor names")
    if platform is not None:
        platform = arguments.text("platform", platform, "a CPU preset id or a platform TOML path")
    if hz is not None:
        hz = arguments.integer("hz", hz, 0, 2**32 - 1)
    try:
        report = native.idle_replay(trace, governors, platform, hz)
    except ValueError as e:  # the core's word on the governor list, as the CLI shows it
        raise InputError(f"governors: {e}") from None
    rows = []
    for name, g in [("actual", report["actual"]), *report["governors"].items()]:
        rows.append(
            {
                "governor": name,
                "periods": g["periods"],
                "too_deep_pct": g["too_deep_pct"],
                "too_shallow_pct": g["too_shallow_pct"],
                "added_latency_mean_us": g["added_latency_mean_ns"] / 1000,
                **{
                    k: math.nan if g[k] is None else g[k]
                    for k in ("idle_energy_mj", "active_energy_mj", "energy_mj")
                },
            }
        )
    return pd.DataFrame(rows)
