"""`torpor reproduce`: run the built-in experiments and write results.json and report.md.

results.json is one object per experiment: ``{"experiment", "claims", "runs"}`` (DESIGN.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress

from torpor import native
from torpor.experiments import apst, devfreq, hpb, qos, teo
from torpor.experiments import claims as claims_lib
from torpor.files import write_file, write_files
from torpor.report import markdown

#: The built-in experiments, by the name `torpor reproduce` takes.
AREAS = ("apst", "teo", "devfreq", "hpb", "qos")


def run_apst(out: Path, console: Console | None) -> dict[str, Any]:
    grid = len(apst.DRIVES) * len(apst.WORKFLOWS)
    # The central grid, then the same grid at each end of each power assumption's range.
    settings: dict[str, dict[str, Any]] = {"central": {}}
    settings |= apst.assumption_ends(apst.ps0_ranges())
    grids: dict[str, list[dict[str, Any]]] = {}
    with Progress(console=console, transient=True, disable=console is None) as progress:
        task = progress.add_task(
            f"apst: 5 drives x 7 workflows x 2 algorithms x {len(settings)} power assumptions",
            total=grid * len(settings),
        )
        for name, overrides in settings.items():
            grids[name] = apst.runs(lambda: progress.advance(task), **overrides)
    rows = grids.pop("central")
    tabs = apst.tables()
    claims = apst.robustness(
        apst.claims(rows, tabs),
        {end: apst.claims(end_rows, tabs) for end, end_rows in grids.items()},
    )
    results: dict[str, Any] = {"experiment": "apst", "claims": claims, "runs": rows}
    from torpor.report import html  # matplotlib: loaded only when a report is drawn

    # The seed's picture: the SN530 on workflow 7, where the two builders differ most.
    picture = native.run_scenario_text(
        apst.scenario_text("wdc-pc-sn530-256gb", 7),
        "<apst wdc-pc-sn530-256gb workflow 7>",
        overrides_json=json.dumps({"run.timeline": "1s"}),
    )
    page = html.apst_page(results, picture)
    _publish(out, results, markdown.apst_report(results, tabs), page, len(rows), console)
    return results


def run_teo(out: Path, console: Console | None) -> dict[str, Any]:
    rows = teo.runs()
    revert = teo.revert_runs()
    claims = [*teo.claims(rows), teo.claim_revert(revert)]
    results: dict[str, Any] = {
        "experiment": "teo",
        "claims": claims,
        "runs": teo.public(rows),
        "revert": revert,
    }
    from torpor.report import html

    page = html.teo_page(results, rows)
    _publish(out, results, markdown.teo_report(results, rows), page, len(rows), console)
    return results


def run_devfreq(out: Path, console: Console | None, traces: Path | None) -> dict[str, Any]:
    """Seed 001's fio cases, the sensitivity runs, and the Pixel 6a traces when `traces`
    holds them; the scenarios and job files are kept in ``out/inputs`` to re-run by hand."""
    work = out / "inputs"
    rows, extra = devfreq.runs(work)
    pixel_rows, pixel_timelines, pixel_note = devfreq.pixel_runs(traces, work)
    results = devfreq.results(rows, extra, pixel_rows, pixel_note)
    from torpor.report import html

    timelines = [*extra["timelines"].values(), *pixel_timelines.values()]
    page = html.devfreq_page(results, timelines)
    _publish(out, results, markdown.devfreq_report(results), page, len(rows), console)
    if console is not None and pixel_note:
        console.print(f"devfreq: Pixel 6a traces {pixel_note}")
    return results


def run_hpb(out: Path, console: Console | None, traces: Path | None) -> dict[str, Any]:
    """Seed 003: iozone over five ranges with HPB off and on, the app-launch cycles, and the
    Pixel 6a traces with HPB when `traces` holds them; the scenarios are kept in
    ``out/inputs``."""
    work = out / "inputs"
    rows, detail = hpb.runs(work)
    launch = hpb.launch_runs(work)
    pixel, pixel_note = hpb.pixel_runs(traces, work)
    warmup = hpb.warmup_runs(work)
    results = hpb.results(rows, detail, launch, warmup, pixel, pixel_note)
    from torpor.report import html

    _publish(out, results, markdown.hpb_report(results), html.hpb_page(results), len(rows), console)
    if console is not None and pixel_note:
        console.print(f"hpb: Pixel 6a traces {pixel_note}")
    return results


def run_qos(out: Path, console: Console | None) -> dict[str, Any]:
    """Seed 004 (cyclictest under no limit, the global limit and cpu0's resume latency) and the
    NVMe latency-tolerance scenario; the platform and scenarios are kept in ``out/inputs``."""
    work = out / "inputs"
    rows, extra = qos.runs(work)
    results = qos.results(rows, extra, qos.nvme_runs(work))
    from torpor.report import html

    _publish(out, results, markdown.qos_report(results), html.qos_page(results), 3, console)
    return results


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
    """Runs one experiment into ``out``, or all of them, each into its own folder under it
    (then the result is ``{"experiments": [...]}``). ``traces`` is where devfreq and hpb find
    the Pixel 6a block traces (not shipped)."""
    runners = {
        "apst": lambda o: run_apst(o, console),
        "teo": lambda o: run_teo(o, console),
        "devfreq": lambda o: run_devfreq(o, console, traces),
        "hpb": lambda o: run_hpb(o, console, traces),
        "qos": lambda o: run_qos(o, console),
    }
    if area == "all":
        from torpor.report import html

        results = {"experiments": [runners[a](out / a) for a in AREAS]}
        # One page to open: each experiment's verdicts and a link to its own report.
        write_file(out / "report.html", html.index_page(AREAS, results["experiments"]))
        return results
    if area in runners:
        return runners[area](out)
    raise ValueError(f"unknown experiment {area!r}")
