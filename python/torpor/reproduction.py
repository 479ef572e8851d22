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
from torpor.experiments import apst
from torpor.files import write_file
from torpor.report import markdown

#: The built-in experiments, by the name `torpor reproduce` takes.
AREAS = ("apst",)


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
    out.mkdir(parents=True, exist_ok=True)
    write_file(out / "results.json", json.dumps(results, indent=1) + "\n")
    write_file(out / "report.md", markdown.apst_report(results, tabs))
    from torpor.report import html  # matplotlib: loaded only when a report is drawn

    # The seed's picture: the SN530 on workflow 7, where the two builders differ most.
    picture = native.run_scenario_text(
        apst.scenario_text("wdc-pc-sn530-256gb", 7),
        "<apst wdc-pc-sn530-256gb workflow 7>",
        overrides_json=json.dumps({"run.timeline": "1s"}),
    )
    write_file(out / "report.html", html.apst_page(results, picture))
    if console is not None:
        console.print(
            f"apst: {len(rows)} runs, {len(results['claims'])} claims: "
            f"{apst.verdict_text(claims)} -> {out / 'report.md'}"
        )
    return results


def run(area: str, out: Path, console: Console | None = None) -> dict[str, Any]:
    """Runs one experiment (or all of them) into ``out``."""
    if area in ("apst", "all"):
        return run_apst(out if area == "apst" else out / "apst", console)
    raise ValueError(f"unknown experiment {area!r}")
