"""Thin JSON-speaking wrappers over ``torpor._native`` (the Rust core): the only place Python
calls it.

The core exchanges JSON text so that its schema stays defined once, in Rust; these helpers
decode it into plain dicts and lists.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from os import PathLike
from typing import Any

from torpor import _native

#: The most IOs a scenario's jobs may issue before ``run_*`` refuses it (``max_ios``).
DEFAULT_MAX_IOS: int = _native.DEFAULT_MAX_IOS

#: An NVMe drive's time between power states, as the core's residency table names it.
BETWEEN_STATES: str = _native.BETWEEN_STATES

#: ``progress(variant, variants, name, now_s, until_s)``, called about ten times a second.
ProgressFn = Callable[[int, int, str, float, "float | None"], None]


def presets() -> list[dict[str, Any]]:
    """Every built-in device preset: id, vendor, model, firmware, source, ..."""
    return json.loads(_native.presets())


def cpu_presets() -> list[dict[str, Any]]:
    """Every built-in CPU platform preset: id, name, source, clusters (states, OPPs), notes."""
    return json.loads(_native.cpu_presets())


def ufs_presets() -> list[dict[str, Any]]:
    """Every built-in UFS device preset: figures with sources, host levels, the calibrated
    service model, and what it gives at each level (``levels``)."""
    return json.loads(_native.ufs_presets())


def probe_sysfs(root: str | PathLike[str]) -> str:
    """The platform TOML ``torpor probe`` writes for the sysfs tree mounted at ``root``."""
    return _native.probe_sysfs(root)


def load_device(spec: str | PathLike[str]) -> dict[str, Any]:
    """A preset id or a path to nvme-cli JSON / smartctl text -> controller, notes, label."""
    return json.loads(_native.load_device(spec))


def applied_settings(settings: dict[str, Any]) -> dict[str, list[str] | None]:
    """How each scenario field of ``settings`` (dotted path -> value) is applied on a running
    system: its lines (kernel command line, sysfs writes), or None when none is known."""
    return json.loads(_native.applied_settings(json.dumps(settings)))


def apst(
    spec: str | PathLike[str],
    params: dict[str, Any],
    data_file: str = "apst-table.bin",
    nvme_device: str = "/dev/nvme0",
) -> dict[str, Any]:
    """Builds the APST table the kernel would program for ``spec`` under ``params``.

    ``data_file`` and ``nvme_device`` only shape the ``nvme set-feature`` command returned in
    ``nvme_cli_command``.
    """
    return json.loads(_native.apst(spec, json.dumps(params), data_file, nvme_device))


def qos_view(path: str | PathLike[str]) -> dict[str, Any]:
    """Each variant's PM QoS constraints over its run (``torpor qos``); nothing is simulated."""
    return json.loads(_native.qos_view(path))


def run_scenario_file(
    path: str | PathLike[str],
    max_ios: int = DEFAULT_MAX_IOS,
    progress: ProgressFn | None = None,
    overrides_json: str | None = None,
    ftrace_dir: str | None = None,
) -> dict[str, Any]:
    """Runs a scenario file; relative paths inside resolve against its directory.

    Refuses (``InputError``) a scenario whose jobs could issue more than ``max_ios`` IOs.
    Ctrl-C raises ``KeyboardInterrupt`` out of the run within a fraction of a second.
    ``overrides_json`` (``{"dotted.path": value}``) sets fields as a sweep point does.
    With ``ftrace_dir`` (an existing folder) each variant of a CPU scenario also writes its idle
    trace there, ``<variant>.trace`` in idlestat's form; an NVMe scenario is refused.
    """
    return json.loads(
        _native.run_scenario_file(path, max_ios, progress, overrides_json, ftrace_dir=ftrace_dir)
    )


def run_scenario_text(
    text: str,
    label: str,
    max_ios: int = DEFAULT_MAX_IOS,
    progress: ProgressFn | None = None,
    overrides_json: str | None = None,
    base: str | PathLike[str] | None = None,
) -> dict[str, Any]:
    """Runs scenario text (``label`` names it in errors); as :func:`run_scenario_file`, its
    relative paths resolving from ``base`` (default: the current folder)."""
    return json.loads(
        _native.run_scenario_text(text, label, max_ios, progress, overrides_json, base=base)
    )


def load_sweep(path: str | PathLike[str]) -> dict[str, Any]:
    """The sweep file at ``path`` read and checked whole by the core (its parts at their
    lines, the point count, the base scenario alone and with each axis' ends): ``scenario_text``,
    ``scenario_label``, ``scenario_base``, ``mode``, ``samples``, ``seed``, ``axes`` (``path``,
    ``line``, ``values`` or ``low``/``high``/``log``), ``objectives``, ``constraints``
    (``metric``, ``min``, ``max``), ``points`` and ``platforms`` (``nvme``, ``ufs``, ``cpu``)."""
    return json.loads(_native.load_sweep(path))


#: A variant's timeline columns: NumPy arrays that own the core's vectors (no copy).
Columns = dict[str, Any]


def run_scenario_columns(
    source: str | PathLike[str],
    is_text: bool,
    label: str = "<text>",
    max_ios: int = DEFAULT_MAX_IOS,
    progress: ProgressFn | None = None,
    overrides_json: str | None = None,
) -> tuple[dict[str, Any], list[Columns | None], dict[str, Any]]:
    """As :func:`run_scenario_file` (or ``_text`` when ``is_text``), with each variant's
    timeline moved out of the report into NumPy columns (millions of rows without JSON), and
    the run's row tables (as :func:`report_rows`)."""
    if is_text:
        out = _native.run_scenario_text(
            str(source), label, max_ios, progress, overrides_json, columns=True, rows=True
        )
    else:
        out = _native.run_scenario_file(
            source, max_ios, progress, overrides_json, columns=True, rows=True
        )
    text, columns, rows = out
    return json.loads(text), columns, json.loads(rows)


def run_scenario_text_rows(
    text: str,
    label: str,
    overrides_json: str | None = None,
    base: str | PathLike[str] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """As :func:`run_scenario_text`, with the run's row tables beside the report (as
    :func:`report_rows` gives them, from the run's own values)."""
    out = _native.run_scenario_text(
        text, label, DEFAULT_MAX_IOS, None, overrides_json, base=base, rows=True
    )
    report, _, rows = out
    return json.loads(report), json.loads(rows)


def report_rows(report: dict[str, Any]) -> dict[str, Any]:
    """A report's row tables (``view::rows``, docs/rows.md): ``summary`` (section -> rows,
    one per variant that has the section), ``residency``, ``sweep`` (one row of a sweep's
    measures per variant), ``jobs`` (what fio prints per variant, job and direction) and
    ``hpb`` (HPB's counters per variant with a UFS device). Columns are named with their
    units; null is a measure the run could not give."""
    return json.loads(_native.report_rows(report))


def fio_text(report: dict[str, Any]) -> str | None:
    """``torpor run --fio``'s output for a report (``view::fio_text``, docs/fio-jobs.md):
    per variant, its jobs as fio's normal output prints them and their group's run status;
    ``None`` when no variant ran a fio job."""
    return _native.fio_text(report)


def timeline_window(timeline: dict[str, Any], from_s: float, to_s: float) -> dict[str, Any]:
    """A report timeline's measures over ``[from_s, to_s)`` (``view::timeline_window``):
    ``ios``, ``lat_avg_us`` and ``lat_max_us`` of the requests that arrived in it (None
    without any), and ``avg_power_mw``, the mean of the power step function."""
    return json.loads(
        _native.timeline_window(
            list(timeline["t_s"]),
            list(timeline["power_mw"]),
            list(timeline["request_t_s"]),
            list(timeline["request_latency_us"]),
            from_s,
            to_s,
        )
    )


def residency_shares(cpus: list[dict[str, Any]], duration_s: float) -> dict[str, Any]:
    """Idle-state shares of a CPU report's ``cpus`` over a run of ``duration_s``
    (``view::residency_share``): ``per_cpu`` as ``[cpu, [{state, pct}]]``, ``all``, the
    platform's for the first CPU's states, and ``cpu_time``, all CPUs' time by ``running``
    and every state any CPU names (first-seen order), each a percentage."""
    return json.loads(_native.residency_shares(json.dumps(cpus), duration_s))


def idlestat_comparison(
    cpus: list[dict[str, Any]], baseline: list[dict[str, Any]] | None = None
) -> list[str]:
    """idlestat's comparison report (``view::idlestat_comparison``) of a CPU report's ``cpus``
    against ``baseline``'s (None: the baseline's own table, without difference rows)."""
    base = None if baseline is None else json.dumps(baseline)
    return _native.idlestat_comparison(json.dumps(cpus), base)


def ufs_link_times(device: str, size_bytes: int) -> dict[str, Any]:
    """How long ``size_bytes`` cross the link of the built-in UFS preset ``device`` at the
    host's ``min`` and ``max`` levels: ``{gear, link_us}`` each (``view::ufs_link``)."""
    return json.loads(_native.ufs_link_times(device, size_bytes))


def cancel() -> None:
    """Stops every run in progress in this process; each raises ``KeyboardInterrupt``."""
    _native.cancel()


def verdict_counts(claims: list[dict[str, Any]]) -> dict[str, int]:
    """How many of ``claims`` hold, fail and are not checkable (keys "hold", "fail",
    "not checkable"), counted by the core from each claim's ``ok``."""
    return json.loads(_native.verdict_counts(json.dumps([{"ok": c["ok"]} for c in claims])))


def judge_apst(inputs: dict[str, Any]) -> dict[str, Any]:
    """Seed 000's judgement by the core: ``claims`` (each with its robustness) and
    ``figures`` (the derived numbers the reports quote), from ``inputs``: ``runs`` (the
    central grid's rows), ``ends`` (``[{"name", "runs"}]``, each power assumption's end) and
    ``tables`` (per drive, each builder's ``apst`` view). Malformed inputs raise ValueError."""
    return json.loads(_native.judge_apst(json.dumps(inputs)))


def judge_teo(inputs: dict[str, Any]) -> dict[str, Any]:
    """Seed 002's judgement by the core (``claims``, ``figures``) from ``inputs``: ``runs``
    (the rows, with their ``_tasks``), ``revert`` (the revert case's rows), ``vsync_us`` and
    ``duration_s``. Malformed inputs raise ValueError."""
    return json.loads(_native.judge_teo(json.dumps(inputs)))


def bench(seconds: float) -> list[dict[str, Any]]:
    """Times the engine's hot loops for about ``seconds`` each."""
    return json.loads(_native.bench(seconds))


def apst_defaults() -> dict[str, Any]:
    """The kernel's APST defaults (``params``) and the table builders' names (``algorithms``,
    the default first), as the core defines them."""
    return json.loads(_native.apst_defaults())


def apst_workflow_titles() -> list[str]:
    """One line per workflow of the APST commit message (1-7)."""
    return json.loads(_native.apst_workflow_titles())


def idle_decide(path: str | PathLike[str], governor: str, as_json: bool) -> int:
    """Runs an idle-decide sequence; the decisions go straight to standard output."""
    return _native.idle_decide(path, governor, as_json)


def idle_governors() -> list[str]:
    """The cpuidle governor variants and aliases torpor has (``teo@6.6``, ``menu``, ...)."""
    return _native.idle_governors()


def idle_stats(
    trace: str | PathLike[str], platform: str | PathLike[str] | None = None
) -> dict[str, Any]:
    """idlestat's C-state report of an ftrace text trace (docs/idle-stats.md)."""
    return json.loads(_native.idle_stats(trace, platform))


def trace_tables(trace: str | PathLike[str]) -> dict[str, Any]:
    """Every event of a trace, one table per event (``torpor.trace``; docs/perfetto.md)."""
    return json.loads(_native.trace_tables(trace))


def idle_replay(
    trace: str | PathLike[str],
    governors: str,
    platform: str | None = None,
    hz: int | None = None,
) -> dict[str, Any]:
    """A trace's idle periods replayed through governors (docs/idle-replay.md).

    ``governors`` is a comma-separated list (ValueError if a name is unknown or repeated);
    ``platform`` a CPU preset id or a platform TOML path."""
    return json.loads(_native.idle_replay(trace, governors, platform, hz))


def judge_qos(inputs: dict[str, Any]) -> dict[str, Any]:
    """Seed 004's claims judged by the core from ``inputs`` (``burst_us``, the central
    ``runs`` rows and ``burst_ends``: ``burst_us`` and ``runs`` at each end of cyclictest's
    burst): ``{"claims": [...]}``, each claim with its robustness."""
    return json.loads(_native.judge_qos(json.dumps(inputs)))


def judge_devfreq(inputs: dict[str, Any]) -> dict[str, Any]:
    """Seed 001's claims judged by the core from ``inputs`` (the ``runs`` rows, the
    ``variants`` and ``sensitivity`` summaries, the sensitivity runs' ``assumptions``: name
    and cases): ``{"claims": [...], "figures": {...}}`` (the gains the report quotes)."""
    return json.loads(_native.judge_devfreq(json.dumps(inputs)))


def judge_hpb(inputs: dict[str, Any]) -> dict[str, Any]:
    """Seed 003's claims judged by the core from ``inputs`` (the iozone ``runs``, the
    ``launch`` and ``warmup`` rows, ``working_set_regions``): ``{"claims": [...], "figures":
    {...}}`` (the seed's tables and the warm-up curves the reports quote)."""
    return json.loads(_native.judge_hpb(json.dumps(inputs)))
