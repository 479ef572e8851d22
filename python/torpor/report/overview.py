"""The one report of `torpor reproduce all` (``out/report.html`` and ``out/report.md``): the
claims of every seed first (verdict, robustness, what each hinges on, whether it checks a
calibration), one section per seed with its key plot, the two whole-system scenarios (latency
decomposed, CPU and device energy, one request's path), then what to ship on each.

It renders ``overview.results`` and the figures the per-area pages and the run pages draw;
every number comes from there.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

from torpor.experiments import claims as claims_lib
from torpor.report import html as pages

_VERDICT = {True: "holds", False: "fails", None: "not checkable"}
_FIRST_FIGURE = re.compile(r"<figure>.*?</figure>", re.S)


def robust_text(c: dict[str, Any]) -> str:
    """The robustness cell: yes, no, n/a (not checkable) or not assessed."""
    if c["ok"] is None:
        return "n/a"
    if c["robust"] is None:
        return "not assessed"
    return "yes" if c["robust"] else "no"


def kind_text(c: dict[str, Any]) -> str:
    """Whether the claim checks a calibration (a figure it compares was fitted to this seed)
    or a prediction; n/a when it is not checkable."""
    if c["ok"] is None:
        return "n/a"
    return "calibration" if c["fitted"] else "prediction"


def title(results: dict[str, Any]) -> str:
    seeds = results["seeds"]
    return f"torpor: {len(seeds)} seeds and {len(results['systems'])} machines"


def summary(results: dict[str, Any]) -> str:
    """One sentence: how many claims, their verdicts, how many are robust and calibrations."""
    claims = results["claims"]
    robust = sum(c["robust"] is True for c in claims)
    fitted = sum(c["fitted"] for c in claims)
    return (
        f"{len(claims)} claims of {len(results['seeds'])} seeds: "
        f"{claims_lib.verdict_text(claims)}; {robust} hold at every end of the ranges they were "
        f"checked at; {fitted} compare a figure fitted to the same seed (calibration checks, "
        "not predictions)."
    )


def page(
    results: dict[str, Any], area_pages: dict[str, str], systems: Sequence[dict[str, Any]]
) -> str:
    """The HTML page. ``area_pages`` maps each experiment to its own page (its first figure is
    the seed's key plot); ``systems`` are the system runs' reports, in results' order."""
    body = [f"<h1>{html.escape(title(results))}</h1>", f"<p>{html.escape(summary(results))}</p>"]
    body += ["<h2>Claims</h2>", *_claims_table(results["claims"])]
    body += ["<h2>The seeds</h2>"]
    for s in results["seeds"]:
        body += _seed_section(s, results["claims"], area_pages[s["experiment"]])
    body += [
        "<h2>The whole machine</h2>",
        "<p>Each read a task waits for, decomposed into the device's service, the interrupt "
        "(and IPI), the CPUs' idle exits and the scheduler's switch; the energy of the CPUs and "
        "of the device; and the first moments of each run, lane by lane, with the slowest "
        "request's path drawn through them.</p>",
    ]
    for summary_, report in zip(results["systems"], systems, strict=True):
        body += _system_section(summary_, report)
    body += ["<h2>What to ship</h2>"]
    for advice in results["ship"]:
        body += _ship_section(advice)
    return pages._page(title(results), body)


def _claims_table(claims: list[dict[str, Any]]) -> list[str]:
    head = ["verdict", "seed", "claim", "seed's figure", "torpor's figure", "robust", "kind"]
    out = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for c in claims:
        verdict = _VERDICT[c["ok"]]
        hinge = f"<br><small>{html.escape(c['hinges_on'])}</small>" if c["hinges_on"] else ""
        fitted = f"<br><small>{html.escape(c['fitted_to'])}</small>" if c["fitted_to"] else ""
        source = "" if c["source"] == f"seed {c['seed']}" else f"<br><small>{c['source']}</small>"
        cells = [
            f'<td class="{verdict.replace(" ", "-")}">{verdict}</td>',
            f"<td>{c['seed']}{source}</td>",
            f"<td>{html.escape(c['claim'])}</td>",
            f"<td>{html.escape(c['seed_figure'])}</td>",
            f"<td>{html.escape(c['torpor_figure'])}</td>",
            f"<td>{robust_text(c)}{hinge}</td>",
            f"<td>{kind_text(c)}{fitted}</td>",
        ]
        out.append("<tr>" + "".join(cells) + "</tr>")
    return [*out, "</table>"]


def _seed_section(seed: dict[str, Any], claims: list[dict[str, Any]], area_page: str) -> list[str]:
    own = [c for c in claims if c["seed"] == seed["seed"]]
    basis = sorted({c["robust_basis"] for c in own})
    figure = _FIRST_FIGURE.search(area_page)
    link = html.escape(seed["report"])
    return [
        f"<h3>Seed {seed['seed']}: {html.escape(seed['title'])}</h3>",
        f"<p>{len(own)} claims: {html.escape(claims_lib.verdict_text(own))}. Robustness: "
        f"{html.escape('; '.join(basis))}. The whole reproduction: "
        f'<a href="{link}">{link}</a>.</p>',
        figure.group(0) if figure else "",
    ]


def _system_section(summary_: dict[str, Any], report: dict[str, Any]) -> list[str]:
    name = summary_["name"]
    variants = report["variants"]
    io_path = pages._io_path(report).replace('id="io-path"', f'id="{name}-io-path"', 1)
    timeline = pages._svg(pages.cpu_timeline_figure(report), f"{name}-timeline")
    timeline = timeline.replace('id="cpu-timeline-', f'id="{name}-timeline-')
    return [
        f"<h3>The {html.escape(name)} ({html.escape(report['scenario'])})</h3>",
        *pages.energy_table(variants),
        *pages.io_table(variants, totals=False),
        f"<figure>{io_path}</figure>",
        f"<figure>{timeline}</figure>",
    ]


def _ship_section(advice: dict[str, Any]) -> list[str]:
    out = [
        f"<h3>The {html.escape(advice['system'])}</h3>",
        f"<p>{html.escape(sweep_text(advice))}</p>",
    ]
    rec = advice["recommended"]
    if rec is None:
        return [*out, "<p>No point meets the constraints: nothing to recommend.</p>"]
    return [
        *out,
        f"<pre>{html.escape(chr(10).join(rec['lines']))}</pre>",
        "<p>As users apply it:</p>",
        f"<pre>{html.escape(chr(10).join(rec['apply']))}</pre>",
    ]


def sweep_text(advice: dict[str, Any]) -> str:
    """What the sweep ran and kept, in one sentence."""
    bounds = "; ".join(
        " and ".join(
            part
            for part in (
                f"{c['metric']} >= {c['min']:,.1f}" if c["min"] is not None else "",
                f"{c['metric']} <= {c['max']:,.1f}" if c["max"] is not None else "",
            )
            if part
        )
        for c in advice["constraints"]
    )
    return (
        f"{advice['sweep']}: {advice['points']} points, {advice['meet_constraints']} meet the "
        f"constraints ({bounds or 'none'}); minimising {', '.join(advice['objectives'])}, "
        "against the same machine at the kernel's defaults."
    )


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]


def markdown(results: dict[str, Any]) -> str:
    """report.md: the same sections as the page, the figures left to the page."""
    out = [f"# {title(results)}", "", summary(results), "", "## Claims", ""]
    out += _md_table(
        ["verdict", "seed", "claim", "seed's figure", "torpor's figure", "robust", "kind"],
        [
            [
                _VERDICT[c["ok"]],
                c["seed"] if c["source"] == f"seed {c['seed']}" else f"{c['seed']} ({c['source']})",
                c["claim"],
                c["seed_figure"],
                c["torpor_figure"],
                robust_text(c) + (f": {c['hinges_on']}" if c["hinges_on"] else ""),
                kind_text(c) + (f": {c['fitted_to']}" if c["fitted_to"] else ""),
            ]
            for c in results["claims"]
        ],
    )
    out += ["", "## The seeds", ""]
    for s in results["seeds"]:
        own = [c for c in results["claims"] if c["seed"] == s["seed"]]
        basis = "; ".join(sorted({c["robust_basis"] for c in own}))
        out += [
            f"### Seed {s['seed']}: {s['title']}",
            "",
            f"{len(own)} claims: {claims_lib.verdict_text(own)}. Robustness: {basis}. "
            f"The whole reproduction: {s['experiment']}/report.md (its plots in "
            f"{s['report']}).",
            "",
        ]
    out += ["## The whole machine", ""]
    for system in results["systems"]:
        out += [f"### The {system['name']} ({system['scenario']})", ""]
        out += _md_table(
            ["variant", "CPUs mJ", "device mJ", "total mJ", "avg mW"],
            [
                [
                    v["variant"],
                    _num(v["cpu_energy_mj"], ",.3f"),
                    _num(v["device_energy_mj"], ",.3f"),
                    _num(v["energy_mj"], ",.3f"),
                    _num(v["avg_power_mw"], ",.1f"),
                ]
                for v in system["variants"]
            ],
        )
        out += [""]
        out += _md_table(
            ["variant", "task", "part", "IOs", "mean us", "p50 us", "p99 us"],
            [
                [
                    v["variant"],
                    t["task"],
                    part,
                    f"{p['count']:,}",
                    *[_num(p[k], ",.1f") for k in ("mean_us", "p50_us", "p99_us")],
                ]
                for v in system["variants"]
                for t in v["io_tasks"]
                for part, p in t["parts"].items()
            ],
        )
        out += [""]
    out += ["## What to ship", ""]
    for advice in results["ship"]:
        out += [f"### The {advice['system']}", "", sweep_text(advice), ""]
        rec = advice["recommended"]
        if rec is None:
            out += ["No point meets the constraints: nothing to recommend.", ""]
            continue
        out += ["```", *rec["lines"], "```", "", "As users apply it:", "", "```"]
        out += [*rec["apply"], "```", ""]
    return "\n".join(out)


def _num(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)
