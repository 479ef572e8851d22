"""`torpor reproduce`: run the built-in experiments and write results.json and report.md.

results.json is one object per experiment: ``{"experiment", "claims", "runs"}`` (DESIGN.md).
``reproduce all`` runs the five, then the two whole-system scenarios and their sweeps, and
writes the one report of all of them beside the five folders (``torpor.overview``).
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from torpor import native
from torpor.experiments import apst, devfreq, hpb, qos, teo
from torpor.experiments import claims as claims_lib
from torpor.files import write_files
from torpor.report import markdown

#: The built-in experiments, by the name `torpor reproduce` takes.
AREAS = ("apst", "teo", "devfreq", "hpb", "qos")


#: An experiment's results and its page.
Outcome = tuple[dict[str, Any], str]


def run_apst(out: Path, console: Console | None, shared: Progress | None = None) -> Outcome:
    """Seed 000's grid at the central power figures and at each end of each range; its
    progress on ``shared`` when given (``reproduce all``'s display), else a bar of its own."""
    grid = len(apst.DRIVES) * len(apst.WORKFLOWS)
    # The central grid, then the same grid at each end of each power assumption's range.
    settings: dict[str, dict[str, Any]] = {"central": {}}
    settings |= apst.assumption_ends(apst.ps0_ranges())
    grids: dict[str, list[dict[str, Any]]] = {}
    label = f"apst: {2 * grid} runs x {len(settings)} power assumptions"
    own = Progress(console=console, transient=True, disable=console is None or shared is not None)
    with own:
        progress = shared or own
        task = progress.add_task(label, total=grid * len(settings))
        for name, overrides in settings.items():
            grids[name] = apst.runs(lambda: progress.advance(task), **overrides)
        progress.remove_task(task)
    rows = grids.pop("central")
    judgement = apst.judge(rows, grids, apst.tables())
    results: dict[str, Any] = {"experiment": "apst", "claims": judgement["claims"], "runs": rows}
    from torpor.report import html  # matplotlib: loaded only when a report is drawn

    # The seed's picture: the SN530 on workflow 7, where the two builders differ most.
    picture = native.run_scenario_text(
        apst.scenario_text("wdc-pc-sn530-256gb", 7),
        "<apst wdc-pc-sn530-256gb workflow 7>",
        overrides_json=json.dumps({"run.timeline": "1s"}),
    )
    page = html.apst_page(results, picture)
    report_md = markdown.apst_report(results, judgement["figures"])
    _publish(out, results, report_md, page, len(rows), console)
    return results, page


def run_teo(out: Path, console: Console | None) -> Outcome:
    rows = teo.runs()
    revert = teo.revert_runs()
    judgement = teo.judge(rows, revert)
    results: dict[str, Any] = {
        "experiment": "teo",
        "claims": judgement["claims"],
        "runs": teo.public(rows),
        "revert": revert,
    }
    from torpor.report import html

    page = html.teo_page(results, rows)
    report_md = markdown.teo_report(results, rows, judgement["figures"])
    _publish(out, results, report_md, page, len(rows), console)
    return results, page


def run_devfreq(out: Path, console: Console | None, traces: Path | None) -> Outcome:
    """Seed 001's fio cases, the sensitivity runs, and the Pixel 6a traces when `traces`
    holds them; the scenarios and job files are kept in ``out/inputs`` to re-run by hand."""
    work = out / "inputs"
    rows, extra = devfreq.runs(work)
    pixel_rows, pixel_timelines, pixel_note = devfreq.pixel_runs(traces, work)
    results, figures = devfreq.results(rows, extra, pixel_rows, pixel_note)
    from torpor.report import html

    timelines = [*extra["timelines"].values(), *pixel_timelines.values()]
    page = html.devfreq_page(results, timelines)
    _publish(out, results, markdown.devfreq_report(results, figures), page, len(rows), console)
    if console is not None and pixel_note:
        console.print(f"devfreq: Pixel 6a traces {pixel_note}")
    return results, page


def run_hpb(out: Path, console: Console | None, traces: Path | None) -> Outcome:
    """Seed 003: iozone over five ranges with HPB off and on, the app-launch cycles, and the
    Pixel 6a traces with HPB when `traces` holds them; the scenarios are kept in
    ``out/inputs``."""
    work = out / "inputs"
    rows, detail = hpb.runs(work)
    launch = hpb.launch_runs(work)
    pixel, pixel_note = hpb.pixel_runs(traces, work)
    warmup = hpb.warmup_runs(work)
    results, figures = hpb.results(rows, detail, launch, warmup, pixel, pixel_note)
    from torpor.report import html

    page = html.hpb_page(results, figures)
    _publish(out, results, markdown.hpb_report(results, figures), page, len(rows), console)
    if console is not None and pixel_note:
        console.print(f"hpb: Pixel 6a traces {pixel_note}")
    return results, page


def run_qos(out: Path, console: Console | None) -> Outcome:
    """Seed 004 (cyclictest under no limit, the global limit and cpu0's resume latency, again
    with its burst at each end of its range) and the NVMe latency-tolerance scenario; the
    platform and scenarios are kept in ``out/inputs``."""
    work = out / "inputs"
    rows, extra = qos.runs(work)
    results = qos.results(rows, extra, qos.nvme_runs(work), qos.burst_ends(work))
    from torpor.report import html

    page = html.qos_page(results)
    _publish(out, results, markdown.qos_report(results), page, 3, console)
    return results, page


def _publish(
    out: Path,
    results: dict[str, Any],
    report_md: str,
    report_html: str,
    runs: int,
    console: Console | None,
) -> None:
    """Writes an experiment's results.json, report.md and report.html into `out`, and says so."""
    out.mkdir(parents=True, exist_ok=True)
    write_files(
        [
            (out / "results.json", json.dumps(results, indent=1) + "\n"),
            (out / "report.md", report_md),
            (out / "report.html", report_html),
        ]
    )
    if console is not None:
        claims = results["claims"]
        console.print(
            f"{results['experiment']}: {runs} runs, {len(claims)} claims: "
            f"{claims_lib.verdict_text(claims)} -> {out / 'report.md'}"
        )


def run(
    area: str, out: Path, console: Console | None = None, traces: Path | None = None
) -> dict[str, Any]:
    """Runs one experiment into ``out``, or all of them, each into its own folder under it,
    with the one report beside them (then the result is that report's results.json:
    ``torpor.overview``). ``traces`` is where devfreq and hpb find the Pixel 6a block traces
    (not shipped)."""
    if area == "all":
        return run_all(out, console, traces)
    runners = {
        "apst": lambda: run_apst(out, console),
        "teo": lambda: run_teo(out, console),
        "devfreq": lambda: run_devfreq(out, console, traces),
        "hpb": lambda: run_hpb(out, console, traces),
        "qos": lambda: run_qos(out, console),
    }
    if area in runners:
        return runners[area]()[0]
    raise ValueError(f"unknown experiment {area!r}")


def run_all(out: Path, console: Console | None, traces: Path | None) -> dict[str, Any]:
    """The five experiments, the two whole-system scenarios and their sweeps, under one
    progress display (a bar of the steps, and apst's and the sweeps' points); then
    out/results.json, report.md and report.html, whose path is the last line printed."""
    from torpor import overview
    from torpor.report import overview as overview_report

    steps = [*AREAS, *(f"{n} scenario" for n, _, _ in overview.SYSTEMS)]
    steps += [f"{n} sweep" for n, _, _ in overview.SYSTEMS]
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=console is None,
    )
    experiments, area_pages, systems, advice = [], {}, [], []
    with bar:
        overall = bar.add_task("reproduce all", total=len(steps))

        def step(name: str) -> None:
            bar.update(overall, description=f"reproduce all: {name}")

        for area in AREAS:
            step(area)
            outcome = {
                "apst": lambda: run_apst(out / "apst", console, bar),
                "teo": lambda: run_teo(out / "teo", console),
                "devfreq": lambda: run_devfreq(out / "devfreq", console, traces),
                "hpb": lambda: run_hpb(out / "hpb", console, traces),
                "qos": lambda: run_qos(out / "qos", console),
            }[area]()
            experiments.append(outcome[0])
            area_pages[area] = outcome[1]
            bar.advance(overall)
        for name, _, _ in overview.SYSTEMS:
            step(f"{name} scenario")
            systems.append(overview.run_system(name))
            bar.advance(overall)
        for name, _, _ in overview.SYSTEMS:
            step(f"{name} sweep")
            points = bar.add_task(f"{name} sweep: points", total=None)
            advice.append(overview.ship(name, partial(bar.advance, points)))
            bar.remove_task(points)
            bar.advance(overall)
    results = overview.results(experiments, systems, advice)
    page = overview_report.page(results, area_pages, systems)
    write_files(
        [
            (out / "results.json", json.dumps(results, indent=1) + "\n"),
            (out / "report.md", overview_report.markdown(results)),
            (out / "report.html", page),
        ]
    )
    if console is not None:
        console.print(f"all: {claims_lib.verdict_text(results['claims'])} over every seed")
        console.print(str(out / "report.html"), markup=False, highlight=False)
    return results
