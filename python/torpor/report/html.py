"""A self-contained HTML report: the claims first, then plots as inline SVG (matplotlib), no
script, stylesheet or font fetched from anywhere, so the page opens offline and can be mailed.
"""

from __future__ import annotations

import hashlib
import html
import io
import re
from collections.abc import Sequence
from typing import Any

import matplotlib
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from torpor import native
from torpor.experiments import apst, devfreq, hpb, qos, teo
from torpor.report import system_text
from torpor.report.notes import run_notes

# Same results, same bytes: fixed SVG element ids (and no creation date, in `_svg`).
matplotlib.rcParams["svg.hashsalt"] = "torpor"

_VERDICT = {True: "holds", False: "fails", None: "not checkable"}
# The IO path figure's bars per task: its parts at these percentiles of the report.
_IO_BARS = ("p50_us", "p99_us")
_STYLE = """
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em;
  color: #222; overflow-wrap: anywhere; }
table { border-collapse: collapse; font-size: 0.9em; overflow-wrap: normal; }
td, th { border: 1px solid #ccc; padding: 0.3em 0.5em; vertical-align: top; }
td.holds { background: #e5f5e0; } td.fails { background: #fde0dd; }
td.not-checkable { background: #eee; }
.wide { overflow-x: auto; }
pre { white-space: pre-wrap; }
figure { margin: 1.5em 0; }
figure > svg { display: block; max-width: 100%; height: auto; }
"""


def _svg(fig: Figure, svg_id: str = "") -> str:
    """``fig`` as inline SVG markup, its ``<svg>`` element given the fixed id ``svg_id`` when
    one is given. Figures are made without pyplot: no display, no GUI toolkit, nothing global
    to close."""
    out = io.StringIO()
    fig.savefig(out, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = _stable_clip_ids(out.getvalue())
    text = text[text.index("<svg") :]
    return text.replace("<svg", f'<svg id="{svg_id}"', 1) if svg_id else text


_CLIP_PATH = re.compile(r'<clipPath id="(p[0-9a-f]+)">(.*?)</clipPath>', re.DOTALL)


def _stable_clip_ids(svg: str) -> str:
    """``svg`` with each clip path's id named after its own shape: matplotlib names a clip
    path (as opposed to a clip rectangle) after the object's address in memory, so the same
    figure drawn twice would differ."""
    renamed = {
        old: "p" + hashlib.sha256(shape.encode()).hexdigest()[:10]
        for old, shape in _CLIP_PATH.findall(svg)
    }
    for old, new in renamed.items():
        svg = svg.replace(f'id="{old}"', f'id="{new}"').replace(f"url(#{old})", f"url(#{new})")
    return svg


#: Values whose largest is at least this many times their smallest (two decades) go on a log
#: axis: on a linear one, 75 us bars vanish beside 11 ms ones.
_LOG_SPAN = 100.0


def _figure(width: float, height: float) -> Figure:
    """A figure under matplotlib's constrained layout, so that titles, labels, tick labels and
    legends outside the axes make room for each other rather than overlap. At most 10 in
    wide: the page scales figures down to fit, never up."""
    return Figure(figsize=(min(width, 10.0), height), layout="constrained")


def _spans_decades(values: Sequence[float]) -> bool:
    """Whether the positive ``values`` span two decades or more: then they go on a log axis
    (where a zero has no place and is not drawn)."""
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) >= _LOG_SPAN * min(positive)


def _legend_above(fig: Figure, ax: Any, ncol: int, fontsize: float = 8) -> None:
    """``ax``'s legend above the figure's axes, outside them, so that it covers no bar."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=ncol, fontsize=fontsize)


def _per_workflow(rows: list[dict[str, Any]], key: str, title: str, unit: str) -> str:
    """One panel per drive, three to a row: ``key`` per workflow, legacy beside v5.14 (the
    legend in the last row's free cell or above); a log axis where the values span decades."""
    drives = list(apst.DRIVES.items())
    cols = 3
    nrows = -(-len(drives) // cols)
    fig = _figure(10, 2.6 * nrows + 0.6)
    grid = fig.subplots(nrows, cols, squeeze=False)
    axes = [ax for row in grid for ax in row]
    width = 0.4
    log = _spans_decades([r[key] for r in rows])
    for ax, (device, name) in zip(axes, drives, strict=False):
        for shift, algorithm in ((-width / 2, "legacy"), (width / 2, "v5.14")):
            values = [apst.row(rows, device, w, algorithm)[key] for w in apst.WORKFLOWS]
            ax.bar([w + shift for w in apst.WORKFLOWS], values, width, label=algorithm)
        ax.set_title(name, fontsize=10)
        ax.set_xticks(list(apst.WORKFLOWS))
        ax.set_xlabel("workflow")
        if log:
            ax.set_yscale("log")
    for ax in grid[:, 0]:
        ax.set_ylabel(f"{unit} (log scale)" if log else unit)
    spare = axes[len(drives) :]
    for ax in spare:
        ax.set_axis_off()
    if spare:
        handles, labels = axes[0].get_legend_handles_labels()
        spare[0].legend(handles, labels, loc="center", title="table builder")
    else:
        _legend_above(fig, axes[0], 2)
    fig.suptitle(title)
    return _svg(fig)


def _timeline(report: dict[str, Any]) -> str:
    """The seed's picture: each variant's power over time, with the requests marked."""
    variants = [v for v in report["variants"] if v.get("nvme", {}).get("timeline")]
    fig = _figure(10, 1.9 * len(variants) + 0.4)
    axes = fig.subplots(len(variants), 1, sharex=True, squeeze=False)[:, 0]
    for ax, v in zip(axes, variants, strict=True):
        t = v["nvme"]["timeline"]
        end = t["until_s"]
        times = [*t["t_s"], end]
        powers = [*t["power_mw"], t["power_mw"][-1]]
        ax.step([x * 1000 for x in times], powers, where="post", linewidth=1)
        ax.vlines([x * 1000 for x in t["request_t_s"]], 0, max(powers), colors="tab:red", lw=0.6)
        ax.set_ylabel("mW")
        ax.set_title(f"{v['nvme']['device']}, {v['name']}: power (requests in red)", fontsize=10)
    axes[-1].set_xlabel("ms")
    return _svg(fig)


def _cdf(report: dict[str, Any]) -> str:
    """Each variant's latency CDF, on a log scale of latency; the legend beside the plot."""
    fig = _figure(10, 3.5)
    ax = fig.subplots()
    for v in report["variants"]:
        points = v["io"]["cdf"]
        if not points:
            continue
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        ax.step([xs[0], *xs], [0.0, *ys], where="post", label=v["name"])
    ax.set_xscale("log")
    ax.set_xlabel("latency, us")
    ax.set_ylabel("share of IOs at or below")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return _svg(fig)


def _page(title: str, body: list[str]) -> str:
    """The page: as wide as the screen up to 1100 px, every table in a box of its own that
    scrolls sideways on a narrow screen (the page itself never does), figures scaled down."""
    text = "\n".join(body).replace("<table>", '<div class="wide"><table>')
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        + text.replace("</table>", "</table></div>")
        + "</body></html>\n"
    )


def _residency(report: dict[str, Any]) -> str:
    """Share of the run per power state, one bar per variant: the drives' rows of the core's
    residency table."""
    variants = [v["name"] for v in report["variants"] if v.get("nvme")]
    rows = [r for r in native.report_rows(report)["residency"] if r["component"] == "nvme"]
    fig = _figure(10, 0.6 * len(variants) + 1.6)
    ax = fig.subplots()
    left = [0.0] * len(variants)
    # The first variant's states, in its order (each power state, then the time between).
    states = [r["state"] for r in rows if r["variant"] == variants[0]]
    share = {(r["variant"], r["state"]): r["time_pct"] for r in rows}
    for state in states:
        shares = [share[(v, state)] for v in variants]
        if any(shares):
            ax.barh(variants, shares, left=left, label=state)
            left = [a + b for a, b in zip(left, shares, strict=True)]
    ax.set_xlabel("% of the run")
    _legend_above(fig, ax, len(states))
    return _svg(fig)


def _cpu_misses(report: dict[str, Any]) -> str:
    """Too-deep and too-shallow idle periods per variant (governor)."""
    variants = report["variants"]
    fig = _figure(10, 0.5 * len(variants) + 1.7)
    ax = fig.subplots()
    names = [f"{v['name']} ({v['cpu']['governor']})" for v in variants]
    y = list(range(len(variants)))
    deep = [v["cpu"]["too_deep_pct"] for v in variants]
    shallow = [v["cpu"]["too_shallow_pct"] for v in variants]
    ax.barh([i - 0.2 for i in y], deep, height=0.4, label="too deep (above)")
    ax.barh([i + 0.2 for i in y], shallow, height=0.4, label="too shallow (below)")
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlabel("% of idle periods")
    _legend_above(fig, ax, 2)
    return _svg(fig)


def _cpu_residency(report: dict[str, Any]) -> str:
    """Share of all CPUs' time per idle state (and running), one bar per variant."""
    variants = report["variants"]
    fig = _figure(10, 0.6 * len(variants) + 1.8)
    ax = fig.subplots()
    names = [v["name"] for v in variants]
    # The core's shares of all CPUs' time (running, then every state any CPU names), a bar
    # segment per state any variant has, in first-seen order; 0 where a variant lacks it.
    buckets: dict[str, list[float]] = {}
    for i, v in enumerate(variants):
        cpu_time = native.residency_shares(v["cpu"]["cpus"], v["duration_s"])["cpu_time"]
        for s in cpu_time:
            buckets.setdefault(s["state"], [0.0] * len(variants))[i] = s["pct"]
    left = [0.0] * len(variants)
    for state, shares in buckets.items():
        if any(shares):
            ax.barh(names, shares, left=left, label=state)
            left = [a + b for a, b in zip(left, shares, strict=True)]
    ax.set_xlabel("% of CPU time")
    _legend_above(fig, ax, min(len(buckets), 6))
    return _svg(fig)


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    """An HTML table, every cell escaped."""
    out = ["<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows]
    return [*out, "</table>"]


def _claims_table(claims: list[dict[str, Any]]) -> list[str]:
    return _table(
        ["claim", "seed", "torpor", "verdict"],
        [[c["claim"], c["seed_value"], c["torpor_value"], _VERDICT[c["ok"]]] for c in claims],
    )


def _cpu_table(report: dict[str, Any]) -> list[str]:
    head = ["variant", "governor", "avg mW", "too deep %", "too shallow %", "wake-up us (gmean)"]
    rows = [
        [
            v["name"],
            v["cpu"]["governor"],
            f"{v['cpu']['avg_power_mw']:,.1f}" if v["cpu"]["power_known"] else "n/a",
            f"{v['cpu']['too_deep_pct']:.1f}",
            f"{v['cpu']['too_shallow_pct']:.1f}",
            f"{v['cpu']['wakeup_latency_gmean_us']:,.1f}",
        ]
        for v in report["variants"]
    ]
    return _table(head, rows)


def _cpu_run_page(report: dict[str, Any]) -> str:
    body = [f"<h1>{html.escape(report['scenario'])}</h1>", *_cpu_table(report)]
    body += [
        "<h2>Idle misses</h2>",
        f"<figure>{_cpu_misses(report)}</figure>",
        "<h2>Where the time went</h2>",
        f"<figure>{_cpu_residency(report)}</figure>",
        *_cpu_timeline_section(report),
    ]
    return _page(f"torpor: {report['scenario']}", body)


def freq_timeline(variants: list[dict[str, Any]], until_s: float | None = None) -> str:
    """The UFS host's first clock over time, one step line per variant (the seed's ASCII
    timeline, drawn)."""
    fig = _figure(10, 0.9 * len(variants) + 1.4)
    axes = fig.subplots(len(variants), 1, sharex=True, squeeze=False)[:, 0]
    for ax, v in zip(axes, variants, strict=True):
        ufs = v["ufs"]
        end = v["duration_s"] if until_s is None else min(until_s, v["duration_s"])
        points = [(t / 1e9, hz / 1e6) for t, hz in ufs["freq_timeline"] if t / 1e9 <= end]
        xs = [p[0] for p in points] + [end]
        ys = [p[1] for p in points] + [points[-1][1]]
        ax.step(xs, ys, where="post")
        ax.set_yticks([ufs["min_hz"] / 1e6, ufs["max_hz"] / 1e6])
        ax.set_ylabel("MHz", fontsize=8)
        ax.set_title(v["name"], fontsize=9, loc="left")
    axes[-1].set_xlabel("time, s")
    return _svg(fig)


def _ufs_run_page(report: dict[str, Any]) -> str:
    head = ["variant", "IOs", "mean us", "p99 us", "max us", "MB/s", "low clock %", "avg mW"]
    io_rows = {r["variant"]: r for r in native.report_rows(report)["summary"].get("io", [])}
    rows = [
        [
            v["name"],
            f"{v['io']['ios']:,}",
            f"{v['io']['all']['mean_us']:,.1f}",
            f"{v['io']['all']['p99_us']:,.1f}",
            f"{v['io']['all']['max_us']:,.1f}",
            f"{io_rows[v['name']]['bw_mbs'] or 0.0:,.1f}",
            f"{v['ufs']['low_clock_pct']:.1f}",
            f"{v['ufs']['avg_power_mw']:,.1f}",
        ]
        for v in report["variants"]
    ]
    body = [f"<h1>{html.escape(report['scenario'])}</h1>", *_table(head, rows)]
    body += [
        "<h2>Latency</h2>",
        f"<figure>{_cdf(report)}</figure>",
        "<h2>The host's clock</h2>",
        f"<figure>{freq_timeline(report['variants'])}</figure>",
    ]
    return _page(f"torpor: {report['scenario']}", body)


def _io_path(report: dict[str, Any]) -> str:
    """Each IO task's request latency as it saw it, at p50 and at p99: one bar per task and
    percentile, stacked from its parts (device, interrupt, idle exit, scheduler), each the
    part's own percentile; a black tick marks the total's. One panel per variant, each on its
    own scale (a drive's exit can dwarf the CPUs' parts)."""
    variants = [v for v in report["variants"] if system_text.io_tasks(v)]
    bars = [[(t, stat) for t in system_text.io_tasks(v) for stat in _IO_BARS] for v in variants]
    fig = Figure(figsize=(10, sum(0.42 * len(b) + 0.9 for b in bars) + 0.8), layout="constrained")
    axes = fig.subplots(len(variants), 1, squeeze=False, height_ratios=[len(b) for b in bars])[:, 0]
    colors = {part: f"C{i}" for i, part in enumerate(system_text.IO_PARTS[1:])}
    for ax, v, rows in zip(axes, variants, bars, strict=True):
        y = list(range(len(rows)))
        left = [0.0] * len(rows)
        for part in system_text.IO_PARTS[1:]:
            widths = [t["io"][part][stat] for t, stat in rows]
            ax.barh(y, widths, left=left, height=0.6, color=colors[part], label=part)
            left = [a + b for a, b in zip(left, widths, strict=True)]
        totals = [t["io"]["total"][stat] for t, stat in rows]
        ax.scatter(totals, y, marker="|", s=300, color="black", zorder=3, label="total")
        for i, total in enumerate(totals):
            ax.annotate(
                f"{total:,.1f}",
                (max(total, left[i]), i),
                xytext=(6, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
            )
        ax.set_yticks(y, [f"{t['name']} {stat.removesuffix('_us')}" for t, stat in rows])
        ax.invert_yaxis()
        ax.margins(x=0.12)
        ax.set_title(v["name"], fontsize=9, loc="left")
    axes[-1].set_xlabel("us (each part its own percentile; the tick and number: the total's)")
    _legend_above(fig, axes[0], 5)
    return _svg(fig, "io-path")


def _wakeup_histogram(report: dict[str, Any]) -> str:
    """The wake-up latency histogram of each task without IO, as cyclictest prints it
    (count per bin, log count axis), one panel per variant."""
    variants = [
        v
        for v in report["variants"]
        if any(not t.get("io") and t["latency"]["histogram_us"] for t in v["cpu"]["tasks"])
    ]
    fig = _figure(10, 2.4 * len(variants) + 0.8)
    axes = fig.subplots(len(variants), 1, squeeze=False, sharex=True)[:, 0]
    for ax, v in zip(axes, variants, strict=True):
        for t in v["cpu"]["tasks"]:
            bins = t["latency"]["histogram_us"]
            if t.get("io") or not bins:
                continue
            ax.plot(
                [b[0] for b in bins],
                [b[1] for b in bins],
                drawstyle="steps-mid",
                marker=".",
                markersize=3,
                label=f"{t['name']} (cpu {t['cpu']})",
            )
        ax.set_yscale("log")
        ax.set_ylabel("wake-ups")
        ax.set_title(v["name"], fontsize=9, loc="left")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    axes[-1].set_xlabel("wake-up latency, us (each bin at its lower edge)")
    return _svg(fig, "wakeup-histogram")


#: The CPU lanes beyond the idle states (drawn in blues, shallow light, deep dark), and their
#: colours.
_LANE_COLORS = {"exit": "tab:orange", "kernel": "tab:red", "running": "tab:green"}
#: The slowest IO's path drawn over the lanes.
_PATH_COLOR = "black"


def _shades(cmap: str, names: list[str]) -> dict[str, str]:
    """``names`` in ``cmap``'s colours, the first lightest, the last darkest."""
    last = max(len(names) - 1, 1)
    colors = matplotlib.colormaps[cmap]
    return {n: matplotlib.colors.to_hex(colors(0.3 + 0.6 * i / last)) for i, n in enumerate(names)}


def _idle_order(variants: list[dict[str, Any]]) -> list[str]:
    """Every CPU's idle state names, shallow to deep: by their mean place in their CPUs' lists
    (clusters may name and count their states differently), then by first appearance."""
    places: dict[str, list[float]] = {}
    for v in variants:
        for tl in v["cpu"]["timelines"]:
            idle = tl["states"][: -len(_LANE_COLORS)]
            for i, name in enumerate(idle):
                places.setdefault(name, []).append(i / max(len(idle) - 1, 1))
    return sorted(places, key=lambda n: sum(places[n]) / len(places[n]))


#: A lane: its key (``device-<section>``, ``cpu-<id>``), its label, its changes (time in s, the
#: state's name) and whether changes past the recording limit were dropped.
_Lane = tuple[str, str, list[tuple[float, str]], bool]


def _device_lanes(v: dict[str, Any], until_s: float) -> list[_Lane]:
    """The variant's device lanes over the window, the drive's first (its slot): an NVMe
    drive's power states, a UFS host's clock level; each keyed ``device-<section>`` (the
    report's section, which the slowest IO's ``device`` names); none without a device."""
    lanes: list[_Lane] = []
    if (t := v.get("nvme", {}).get("timeline")) is not None:
        names = [native.BETWEEN_STATES if n == "transition" else n for n in t["states"]]
        changes = [(at, names[s]) for at, s in zip(t["t_s"], t["state"], strict=True)]
        lanes.append(("device-nvme", v["nvme"]["device"], changes, bool(t["dropped"])))
    if "ufs" in v:
        ufs = v["ufs"]
        changes = [(ns / 1e9, _clock(hz)) for ns, hz in ufs["freq_timeline"] if ns / 1e9 <= until_s]
        lanes.append(("device-ufs", ufs["device"], changes, bool(ufs["freq_changes_dropped"])))
    return lanes


def _clock(hz: float) -> str:
    return f"{hz / 1e6:g} MHz"


def _device_colors(variants: list[dict[str, Any]]) -> dict[str, str]:
    """NVMe power states in purples, shallow light to deep dark, the time between them
    (``entry/exit``, as the CLI names it) in gold; a UFS host's clock levels in purples, the
    highest lightest."""
    colors: dict[str, str] = {}
    for v in variants:
        if (t := v.get("nvme", {}).get("timeline")) is not None:
            states = [s for s in t["states"] if s != "transition"]
            colors |= _shades("Purples", states) | {native.BETWEEN_STATES: "gold"}
        if "ufs" in v:
            levels = sorted({hz for _, hz in v["ufs"]["freq_timeline"]}, reverse=True)
            colors |= _shades("Purples", [_clock(hz) for hz in levels])
    return colors


def _spans(
    changes: list[tuple[float, str]], until_s: float, cut: bool, lo: float, hi: float
) -> list[tuple[float, float, str]]:
    """A lane's stretches inside ``[lo, hi]`` s, in ms as (start, width, state): each change
    holds until the next or the window's end; with changes dropped, the lane ends at the last
    one kept (what came after is unknown)."""
    ends = [at for at, _ in changes[1:]] + [changes[-1][0] if cut else until_s]
    out = []
    for (start, state), end in zip(changes, ends, strict=True):
        a, b = max(start, lo), min(end, hi, until_s)
        if b > a:
            out.append((a * 1e3, (b - a) * 1e3, state))
    return out


def _lane_of(lanes: list[_Lane], key: str) -> int | None:
    """The row of the lane keyed ``key``, if drawn."""
    return next((y for y, lane in enumerate(lanes) if lane[0] == key), None)


def _lanes(
    ax: Any,
    lanes: list[_Lane],
    colors: dict[str, str],
    until_s: float,
    window: tuple[float, float],
    prefix: str,
) -> set[str]:
    """One row of bars per lane, the first on top, each bars' SVG group ``<prefix>-<key>``;
    the states drawn."""
    drawn: set[str] = set()
    for y, (key, _, changes, cut) in enumerate(lanes):
        spans = _spans(changes, until_s, cut, *window) if changes else []
        bars = ax.broken_barh(
            [(a, w) for a, w, _ in spans],
            (y - 0.4, 0.8),
            facecolors=[colors[s] for _, _, s in spans],
            linewidth=0,
        )
        bars.set_gid(f"{prefix}-{key}")
        drawn |= {s for _, _, s in spans}
    ax.set_yticks(range(len(lanes)), [label for _, label, _, _ in lanes], fontsize=8)
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    ax.set_xlim(window[0] * 1e3, window[1] * 1e3)
    ax.ticklabel_format(axis="x", useOffset=False)
    ax.set_xlabel("ms", fontsize=8)
    return drawn


def _request_path(
    ax: Any, req: dict[str, Any], device_y: int, cpu_y: int, notes: bool, prefix: str
) -> None:
    """The slowest IO over the lanes: on the device from its submission to its completion,
    then on the task's CPU until the task runs (interrupt handlers and IPI, idle exits, the
    scheduler's switch); with ``notes``, its times and parts as the core gave them."""
    sub, done, run = (req[k] * 1e3 for k in ("submitted_s", "device_done_s", "running_s"))
    on_device = ax.hlines(device_y, sub, done, colors=_PATH_COLOR, linewidth=3)
    on_device.set_gid(f"{prefix}-request")
    ax.vlines(done, device_y, cpu_y, colors=_PATH_COLOR, linewidth=0.8, linestyles="dotted")
    ax.hlines(cpu_y, done, run, colors=_PATH_COLOR, linewidth=1.5)
    ax.plot([sub], [device_y], marker="|", markersize=12, color=_PATH_COLOR)
    ax.plot([run], [cpu_y], marker=">", markersize=6, color=_PATH_COLOR)
    if not notes:
        return
    note = {"xytext": (0, 9), "textcoords": "offset points", "fontsize": 7, "va": "bottom"}
    box = {"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.85}
    ax.annotate(
        f"submitted {sub:.4f} ms, done on the device {done:.4f} ms",
        (sub, device_y),
        ha="left",
        bbox=box,
        **note,
    )
    ax.annotate(
        f"irq {req['irq_us']:,.1f} us + exit {req['exit_us']:,.1f} us, then the scheduler: "
        f"{req['task']} runs at {run:.4f} ms",
        (done, cpu_y),
        ha="left",
        bbox=box,
        **note,
    )


def cpu_timeline_figure(report: dict[str, Any]) -> Figure:
    """The run's first moments (``[run] timeline``) per variant: a lane per CPU (its idle
    states in blues, leaving one orange, kernel work red, running a task green) and one per
    device (an NVMe drive's power state, a UFS host's clock level) over the recorded window;
    the slowest IO a task waited for in it marked there, from the lane of the device that
    served it, and drawn again zoomed in below."""
    variants = [v for v in report["variants"] if v["cpu"].get("timelines")]
    idle = _shades("Blues", _idle_order(variants))
    colors = idle | _LANE_COLORS | _device_colors(variants)
    panels: list[tuple[int, dict[str, Any], list[_Lane], bool]] = []  # (index, v, lanes, zoom)
    for i, v in enumerate(variants):
        until_s = v["cpu"]["timelines"][0]["timeline"]["until_s"]
        lanes = _device_lanes(v, until_s)
        for tl in v["cpu"]["timelines"]:
            t = tl["timeline"]
            changes = [(at, tl["states"][s]) for at, s in zip(t["t_s"], t["state"], strict=True)]
            cut = bool(t["dropped"])
            lanes.append((f"cpu-{tl['cpu']}", f"cpu {tl['cpu']}", changes, cut))
        panels.append((i, v, lanes, False))
        req = v["cpu"].get("slowest_io")
        if req and _lane_of(lanes, f"device-{req['device']}") is not None:
            panels.append((i, v, lanes, True))
    # A zoomed panel keeps a lane's height free above its top lane for the path's notes.
    heights = [len(lanes) + 1.5 + zoomed for _, _, lanes, zoomed in panels]
    fig = Figure(figsize=(10, sum(0.32 * h for h in heights) + 1.2), layout="constrained")
    axes = fig.subplots(len(panels), 1, squeeze=False, height_ratios=heights)[:, 0]
    drawn: set[str] = set()
    for ax, (i, v, lanes, zoomed) in zip(axes, panels, strict=True):
        until_s = v["cpu"]["timelines"][0]["timeline"]["until_s"]
        req = v["cpu"].get("slowest_io")
        window = (0.0, until_s)
        title = f"{v['name']}: the first {until_s * 1e3:g} ms"
        prefix = f"cpu-timeline-{'zoom-' if zoomed else ''}{i}"
        if zoomed:
            # Around the path, within the window unless the task ran after its end.
            span = req["running_s"] - req["submitted_s"]
            hi = min(until_s, req["running_s"] + 1.6 * span)
            window = (
                max(0.0, req["submitted_s"] - 0.4 * span),
                max(hi, req["running_s"] + 0.2 * span),
            )
            title = (
                f"{v['name']}: the slowest IO a task waited for, {req['task']}'s (cpu {req['cpu']})"
            )
        elif any(cut for *_, cut in lanes):
            title += " (changes past the recording limit not kept: those lanes end early)"
        drawn |= _lanes(ax, lanes, colors, until_s, window, prefix)
        if window[1] > until_s:
            ax.axvline(until_s * 1e3, color="grey", linestyle="--", linewidth=0.8)
            title += " (the recording ends at the dashed line)"
        device_y = _lane_of(lanes, f"device-{req['device']}") if req else None
        cpu_y = _lane_of(lanes, f"cpu-{req['cpu']}") if req else None
        if req and device_y is not None and cpu_y is not None:
            _request_path(ax, req, device_y, cpu_y, zoomed, prefix)
            if zoomed:
                ax.set_ylim(len(lanes) - 0.5, -1.5)
        ax.set_title(title, fontsize=9, loc="left")
    handles: list[Artist] = [Patch(facecolor=c, label=n) for n, c in colors.items() if n in drawn]
    if any(v["cpu"].get("slowest_io") for v in variants):
        handles.append(Line2D([], [], color=_PATH_COLOR, linewidth=2, label="slowest IO"))
    fig.legend(handles=handles, loc="outside upper center", ncol=min(len(handles), 8), fontsize=8)
    return fig


def _cpu_timeline_section(report: dict[str, Any]) -> list[str]:
    """The lanes figure under its heading, when a variant recorded them; else nothing."""
    if not any(v["cpu"].get("timelines") for v in report["variants"]):
        return []
    return [
        "<h2>Moment by moment</h2>",
        "<p>Each CPU's lane over the recorded window (<code>[run] timeline</code>) and each "
        "device's; the slowest IO a task waited for in the window, zoomed in: on the device "
        "that served it from its submission to its completion, then interrupt handlers and IPI "
        "(irq) and leaving idle states (exit), the scheduler's switch the rest, until the task "
        "runs.</p>",
        f"<figure>{_svg(cpu_timeline_figure(report), 'cpu-timeline')}</figure>",
    ]


def energy_table(variants: list[dict[str, Any]]) -> list[str]:
    """Each variant's energy: the CPUs', the device's, the whole machine's and its power."""
    energy = [
        [
            v["name"],
            system_text.known(v["system"], "cpu_energy_mj", ",.3f"),
            f"{v['system']['device_energy_mj']:,.3f}",
            system_text.known(v["system"], "energy_mj", ",.3f"),
            system_text.known(v["system"], "avg_power_mw", ",.1f"),
        ]
        for v in variants
        if v.get("system")
    ]
    return _table(["variant", "CPUs mJ", "device mJ", "total mJ", "avg mW"], energy)


def io_table(variants: list[dict[str, Any]], totals: bool = True) -> list[str]:
    """Each IO task's requests as it saw them, by part (device, irq, exit, sched), then (with
    ``totals``) per device and over all tasks."""
    rows = [
        [
            v["name"],
            name,
            part,
            f"{io[part]['count']:,}",
            *[f"{io[part][key]:,.1f}" for _, key in system_text.IO_STATS],
        ]
        for v in variants
        if system_text.io_tasks(v)
        for name, io in [
            *((t["name"], t["io"]) for t in system_text.io_tasks(v)),
            *(
                [
                    *(
                        (f"all on {d['device']}", d["path"])
                        for d in v["cpu"].get("io_by_device", [])
                    ),
                    ("all", v["cpu"]["io"]),
                ]
                if totals
                else []
            ),
        ]
        for part in system_text.IO_PARTS
    ]
    heads = [f"{h} us" for h, _ in system_text.IO_STATS]
    return _table(["variant", "task", "part", "IOs", *heads], rows)


def _system_run_page(report: dict[str, Any]) -> str:
    """CPUs with a device: the energy of each and of the whole, the CPUs' and the device's
    tables, the IO tasks' latency decomposed, the lanes of the CPUs and the device with
    `[run] timeline`, the other tasks' wake-up histogram, then the CPUs' and the device's
    figures."""
    variants = report["variants"]
    body = [
        f"<h1>{html.escape(report['scenario'])}</h1>",
        "<h2>Energy</h2>",
        *energy_table(variants),
        "<h2>CPUs</h2>",
        *_cpu_table(report),
        "<h2>Device</h2>",
        *_table(
            ["variant", "device", "avg mW", "mJ"],
            [
                [
                    v["name"],
                    v[kind]["device"],
                    f"{v[kind]['avg_power_mw']:,.1f}",
                    f"{v[kind]['energy_mj']:,.3f}",
                ]
                for v in variants
                for kind in system_text.devices_of(v)
            ],
        ),
    ]
    if any(system_text.io_tasks(v) for v in variants):
        body += [
            "<h2>IO as the tasks saw it</h2>",
            *io_table(variants),
            f"<figure>{_io_path(report)}</figure>",
        ]
    body += _cpu_timeline_section(report)
    if any(
        not t.get("io") and t["latency"]["histogram_us"]
        for v in variants
        for t in v["cpu"]["tasks"]
    ):
        body += ["<h2>Wake-up latency</h2>", f"<figure>{_wakeup_histogram(report)}</figure>"]
    body += [
        "<h2>Idle misses</h2>",
        f"<figure>{_cpu_misses(report)}</figure>",
        "<h2>Where the CPUs' time went</h2>",
        f"<figure>{_cpu_residency(report)}</figure>",
    ]
    if any(v["io"]["cdf"] for v in variants):
        body += ["<h2>fio jobs' latency</h2>", f"<figure>{_cdf(report)}</figure>"]
    if all("nvme" in v for v in variants):
        body += ["<h2>Where the drive's time went</h2>", f"<figure>{_residency(report)}</figure>"]
    elif all("ufs" in v for v in variants):
        body += ["<h2>The host's clock</h2>", f"<figure>{freq_timeline(variants)}</figure>"]
    return _page(f"torpor: {report['scenario']}", body)


def run_page(report: dict[str, Any]) -> str:
    """One scenario's run (`torpor run --report`): the variants' figures, where each spent
    its time, and its power over time when the scenario records a timeline; then the notes the
    CLI prints (estimates, assumptions, what was left out)."""
    if system_text.is_system(report):
        page = _system_run_page(report)
    elif all("cpu" in v for v in report["variants"]):
        page = _cpu_run_page(report)
    elif all("ufs" in v for v in report["variants"]):
        page = _ufs_run_page(report)
    else:
        page = _nvme_run_page(report)
    items = "".join(f"<li>{html.escape(n)}</li>" for n in run_notes(report))
    notes = f'<h2 id="notes">Notes</h2><ul>{items}</ul>' if items else ""
    return page.replace("</body></html>", notes + "</body></html>")


def _nvme_run_page(report: dict[str, Any]) -> str:
    """An NVMe drive's run: the variants' figures, residency, latency and power over time."""
    head = ["variant", "IOs", "mean us", "p99.9 us", "max us", "avg mW", "uJ/IO", "transitions"]
    body = [
        f"<h1>{html.escape(report['scenario'])}</h1>",
        "<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>",
    ]
    for v in report["variants"]:
        lat, nvme, ios = v["io"]["all"], v.get("nvme", {}), v["io"]["ios"]
        cells = [
            html.escape(v["name"]),
            f"{ios:,}",
            f"{lat['mean_us']:,.1f}",
            f"{lat['p99_9_us']:,.1f}",
            f"{lat['max_us']:,.1f}",
            f"{nvme.get('avg_power_mw', 0):,.1f}",
            "-" if nvme.get("energy_per_io_uj") is None else f"{nvme['energy_per_io_uj']:,.1f}",
            f"{nvme.get('transitions', 0):,}",
        ]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    body += [
        "</table>",
        "<h2>Latency</h2>",
        f"<figure>{_cdf(report)}</figure>",
        "<h2>Where the time went</h2>",
        f"<figure>{_residency(report)}</figure>",
    ]
    if any(v.get("nvme", {}).get("timeline") for v in report["variants"]):
        body += ["<h2>Power over time</h2>", f"<figure>{_timeline(report)}</figure>"]
    return _page(f"torpor: {report['scenario']}", body)


def sweep_page(
    title: str,
    rows: list[dict[str, Any]],
    feasible: list[dict[str, Any]],
    front: list[dict[str, Any]],
    objectives: tuple[str, ...],
    axes: list[str],
    constraints: tuple[tuple[str, float | None, float | None], ...] = (),
    recommendation: Sequence[str] = (),
) -> str:
    """A sweep: its constraints and recommendation (the lines the CLI prints), every point
    that ran against the first two objectives, the feasible ones and the Pareto front marked,
    and the front as a table."""
    body = [f"<h1>{html.escape(title)}</h1>"]
    bounds = [
        " and ".join(
            part
            for part in (
                f"{metric} >= {low:,.1f}" if low is not None else "",
                f"{metric} <= {high:,.1f}" if high is not None else "",
            )
            if part
        )
        for metric, low, high in constraints
    ]
    body.append(
        f"<p>Constraints: {html.escape('; '.join(bounds))}.</p>"
        if bounds
        else "<p>Constraints: none.</p>"
    )
    body.append("<h2>Recommendation</h2>")
    if recommendation:
        body.append(f"<pre>{html.escape(chr(10).join(recommendation))}</pre>")
    else:
        body.append("<p>No point meets the constraints: nothing to recommend.</p>")
    failed = [r for r in rows if r.get("error")]
    if failed:
        items = "".join(
            f"<li>point {r['point']} failed: {html.escape(str(r['error']))}</li>" for r in failed
        )
        body.append(f'<h2 id="notes">Notes</h2><ul>{items}</ul>')
    if len(objectives) >= 2:
        x, y = objectives[0], objectives[1]
        fig = _figure(8, 5)
        ax = fig.subplots()
        ran = [r for r in rows if not r.get("error")]
        for group, color, marker, label in (
            (ran, "#bbb", "o", "all points"),
            (feasible, "tab:blue", "o", "meet the constraints"),
            (front, "tab:red", "D", "Pareto front"),
        ):
            xs, ys = [r[x] for r in group], [r[y] for r in group]
            ax.scatter(xs, ys, color=color, marker=marker, label=label)
        # Each bound on a plotted objective as a dashed line: the feasible side is plain.
        for metric, low, high in constraints:
            for bound in (b for b in (low, high) if b is not None):
                if metric in (x, y):
                    line = ax.axhline if metric == y else ax.axvline
                    line(bound, color="grey", linestyle="--", linewidth=1, label="constraint")
        if _spans_decades([r[x] for r in ran]):
            ax.set_xscale("log")
        if _spans_decades([r[y] for r in ran]):
            ax.set_yscale("log")
        ax.set_xlabel(x + (" (log scale)" if ax.get_xscale() == "log" else ""))
        ax.set_ylabel(y + (" (log scale)" if ax.get_yscale() == "log" else ""))
        handles, labels = ax.get_legend_handles_labels()
        shown = dict(zip(labels, handles, strict=True))  # one "constraint" entry
        fig.legend(shown.values(), shown.keys(), loc="outside upper center", ncol=4, fontsize=8)
        body.append(f"<figure>{_svg(fig)}</figure>")
    head = ["point", *axes, *objectives]
    body.append("<h2>The Pareto front</h2>")
    body.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>")
    for r in front:
        cells = [str(r["point"]), *[str(r[a]) for a in axes], *[f"{r[o]:,.1f}" for o in objectives]]
        body.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    body.append("</table>")
    return _page(f"torpor: {title}", body)


def apst_page(results: dict[str, Any], timeline: dict[str, Any] | None = None) -> str:
    """The APST reproduction as one HTML page; ``timeline`` is a run report with timelines
    (the power-state picture of one drive and workflow under both builders)."""
    claims = results["claims"]
    rows = results["runs"]
    body = [
        "<h1>NVMe APST: legacy (v4.12-v5.13) vs v5.14 table builder</h1>",
        f"<p>Seed 000 (Linux commit ebd8a93aa4f5) reproduced in simulation: {len(rows)} runs "
        f"of {html.escape(apst.DURATION)}. Claims: {html.escape(apst.verdict_text(claims))}. "
        "Robust: the verdict also holds at both ends of every estimated power's range.</p>",
        "<h2>Claims</h2>",
        "<table><tr><th>verdict</th><th>claim</th><th>seed</th><th>torpor</th><th>robust</th></tr>",
    ]
    for c in claims:
        verdict = _VERDICT[c["ok"]]
        robust = {True: "yes", False: "no", None: "n/a"}[c.get("robust")]
        hinge = f"<br><small>{html.escape(c['hinges_on'])}</small>" if c.get("hinges_on") else ""
        body.append(
            f'<tr><td class="{verdict.replace(" ", "-")}">{verdict}</td>'
            f"<td>{html.escape(c['claim'])}</td><td>{html.escape(c['seed_value'])}</td>"
            f"<td>{html.escape(c['torpor_value'])}</td><td>{robust}{hinge}</td></tr>"
        )
    body.append("</table>")
    body += [
        "<h2>Average power</h2>",
        f"<figure>{_per_workflow(rows, 'avg_power_mw', 'Average power per workflow', 'mW')}"
        "</figure>",
        "<h2>Latency</h2>",
        f"<figure>{_per_workflow(rows, 'lat_mean_us', 'Mean latency per workflow', 'us')}</figure>",
        f"<figure>{_per_workflow(rows, 'lat_p999_us', 'p99.9 latency per workflow', 'us')}"
        "</figure>",
    ]
    if timeline:
        body += [
            "<h2>Power over time</h2>",
            f"<p>{html.escape(timeline['scenario'])}: the first "
            f"{timeline['variants'][0]['nvme']['timeline']['until_s']:g} s of each variant.</p>",
            f"<figure>{_timeline(timeline)}</figure>",
            "<h2>Latency distribution</h2>",
            f"<figure>{_cdf(timeline)}</figure>",
        ]
    return _page("torpor: APST reproduction", body)


def _teo_bars(rows: list[dict[str, Any]], key: str, label: str) -> str:
    """One group of bars per workload, one bar per governor."""
    workloads = list(teo.WORKLOADS)
    fig = _figure(10, 3.9)
    ax = fig.subplots()
    width = 0.8 / len(teo.GOVERNORS)
    for i, g in enumerate(teo.GOVERNORS):
        xs = [w + (i - (len(teo.GOVERNORS) - 1) / 2) * width for w in range(len(workloads))]
        ax.bar(xs, [teo.row(rows, w, g)[key] for w in workloads], width=width, label=g)
    ax.set_xticks(range(len(workloads)), workloads)
    if _spans_decades([r[key] for r in rows]):
        ax.set_yscale("log")
        label += " (log scale)"
    ax.set_ylabel(label)
    _legend_above(fig, ax, len(teo.GOVERNORS))
    return _svg(fig)


def teo_page(results: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """Seed 002 reproduced: the claims, then idle misses, power and wake-up latency per
    workload and governor, and where each governor's CPUs spent their idle time."""
    claims = results["claims"]
    body = [
        "<h1>cpuidle: teo util-awareness (seed 002) on a simulated Pixel 6</h1>",
        f"<p>{len(teo.WORKLOADS)} workload stand-ins x {len(teo.GOVERNORS)} governors, "
        f"{html.escape(teo.DURATION)} each. Claims: {html.escape(teo.verdict_text(claims))}.</p>",
        *_claims_table(claims),
    ]
    body += [
        "<h2>Too deep (above)</h2>",
        f"<figure>{_teo_bars(rows, 'too_deep_pct', '% of idle periods')}</figure>",
        "<h2>Too shallow (below)</h2>",
        f"<figure>{_teo_bars(rows, 'too_shallow_pct', '% of idle periods')}</figure>",
        "<h2>Average power</h2>",
        f"<figure>{_teo_bars(rows, 'avg_power_mw', 'mW')}</figure>",
        "<h2>Wake-up latency (geometric mean over tasks)</h2>",
        f"<figure>{_teo_bars(rows, 'wakeup_latency_gmean_us', 'us')}</figure>",
        "<h2>Work done per second (all tasks, as time at the highest OPP)</h2>",
        f"<figure>{_teo_bars(rows, 'work_ms_per_s', 'ms per s')}</figure>",
        "<h2>Idle residency per state (all CPUs)</h2>",
        f"<figure>{_teo_residency(rows)}</figure>",
    ]
    return _page("torpor: teo util-awareness (seed 002)", body)


def _teo_residency(rows: list[dict[str, Any]]) -> str:
    """Per workload and governor, the share of idle time in each state name."""
    labels = [f"{r['workload']} / {r['governor']}" for r in rows]
    states = sorted({s for r in rows for s in r["_states"]})
    fig = _figure(10, 0.28 * len(rows) + 1.8)
    ax = fig.subplots()
    left = [0.0] * len(rows)
    for state in states:
        shares = []
        for r in rows:
            total = sum(r["_states"].values()) or 1
            shares.append(100 * r["_states"].get(state, 0) / total)
        if any(shares):
            ax.barh(labels, shares, left=left, label=state)
            left = [a + b for a, b in zip(left, shares, strict=True)]
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelsize=7)
    ax.set_xlabel("% of idle time")
    _legend_above(fig, ax, min(len(states), 6), fontsize=7)
    return _svg(fig)


def devfreq_page(results: dict[str, Any], timelines: list[dict[str, Any]]) -> str:
    """Seed 001 reproduced: the claims, the fio cases, and the host's clock over time (the
    seed's ASCII timeline as a plot), for the fio cases and, when run, the Pixel 6a traces'
    first seconds."""
    claims = results["claims"]
    head = ["case", "variant", "clat avg us", "p99 us", "BW MB/s", "low clock %", "mJ"]
    body = [
        "<h1>Block-layer device-frequency boost for UFS (seed 001), simulated</h1>",
        f"<p>Claims: {html.escape(devfreq.verdict_text(claims))}.</p>",
        *_claims_table(claims),
        "<h2>The fio cases</h2>",
        *_table(
            head,
            [
                [
                    r["case"],
                    r["variant"],
                    f"{r['clat_avg_us']:.1f}",
                    f"{r['clat_p99_us']:.1f}",
                    f"{r['bw_mbs']:.1f}",
                    f"{r['low_clock_pct']:.1f}",
                    f"{r['energy_mj']:.0f}",
                ]
                for r in results["variants"]
            ],
        ),
    ]
    fio = [t for t in timelines if t["name"].startswith("case")]
    pixel = [t for t in timelines if not t["name"].startswith("case")]
    body += [
        "<h2>The host's clock, fio cases (first job, 0-12 s)</h2>",
        f"<figure>{freq_timeline(fio, until_s=12.0)}</figure>",
    ]
    if pixel:
        body += [
            "<h2>The host's clock, Pixel 6a traces (first 30 s)</h2>",
            f"<figure>{freq_timeline(pixel, until_s=30.0)}</figure>",
        ]
    return _page("torpor: UFS frequency boost (seed 001)", body)


def _hpb_plots(
    rows: list[dict[str, Any]], detail: list[dict[str, Any]], seed_iozone: list[dict[str, Any]]
) -> str:
    """Throughput against range (torpor and the seed's table, ``seed_iozone``, HPB on and off)
    and HPB's hit ratio."""
    fig = _figure(10, 3.9)
    bw_ax, hit_ax = fig.subplots(1, 2)
    ranges = list(hpb.RANGES_GB)
    for on, label in ((True, "HPB on"), (False, "HPB off")):
        got = [next(r for r in rows if r["range_gb"] == gb and r["hpb"] == on) for gb in ranges]
        bw_ax.plot(ranges, [r["bw_mbs"] for r in got], marker="o", label=f"torpor, {label}")
        by_range = {s["range_gb"]: s for s in seed_iozone}
        seed = [by_range[gb]["hpb_on_mbs" if on else "hpb_off_mbs"] for gb in ranges]
        bw_ax.plot(ranges, seed, marker="x", linestyle="--", label=f"seed, {label}")
    bw_ax.set_xscale("log", base=2)
    bw_ax.set_xticks(ranges, [f"{gb}" for gb in ranges])
    bw_ax.set_xlabel("IO range, GB")
    bw_ax.set_ylabel("MB/s")
    bw_ax.set_ylim(bottom=0)
    bw_ax.legend(fontsize=7)
    bw_ax.set_title("iozone 4 KiB random read, 16 threads", fontsize=10)
    on_rows = [d for d in detail if d["hpb"]]
    hit_ax.bar([str(d["range_gb"]) for d in on_rows], [d["hit_ratio"] for d in on_rows])
    hit_ax.set_xlabel("IO range, GB")
    hit_ax.set_ylabel("HPB READs / eligible reads")
    hit_ax.set_ylim(0, 1)
    hit_ax.set_title("HPB hit ratio", fontsize=10)
    return _svg(fig)


def _launch_plot(launch: list[dict[str, Any]]) -> str:
    fig = _figure(6, 3.2)
    ax = fig.subplots()
    for on, label in ((False, "HPB off"), (True, "HPB on")):
        pts = sorted((r["cycle"], r["storage_s"]) for r in launch if r["hpb"] == on)
        ax.plot([c for c, _ in pts], [s for _, s in pts], marker="o", label=label)
    ax.set_xlabel("cycle")
    ax.set_ylabel("storage time of 36 launches, s")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    return _svg(fig)


def _warmup_plot(figures: dict[str, Any]) -> str:
    """HPB's launch gain per cycle: one panel per warm-up lever (the others central), and the
    seed's (the core's ``figures``)."""
    curves = {(c["lever"], c["value"]): c["gains_s"] for c in figures["warmup"]}
    levers = list(hpb.WARMUP_LEVERS)
    fig = _figure(10, 5.6)
    axes = [ax for row in fig.subplots(2, -(-(len(levers) + 1) // 2), squeeze=False) for ax in row]
    cycles = list(range(1, hpb.CYCLES + 1))
    for ax, lever in zip(axes, levers, strict=False):
        for value in hpb.WARMUP_LEVERS[lever]:
            ax.plot(cycles, curves[(lever, value)], marker="o", label=str(value))
        ax.set_title(lever, fontsize=9)
        ax.set_xlabel("cycle")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    seed = axes[len(levers)]
    seed.plot(cycles, figures["seed_gains_s"], marker="o", color="black")
    seed.set_title("seed (whole start-up)", fontsize=9)
    seed.set_xlabel("cycle")
    seed.set_ylim(bottom=0)
    for ax in axes[len(levers) + 1 :]:
        ax.set_axis_off()
    for ax in axes[:: len(axes) // 2]:
        ax.set_ylabel("gain, s (storage time)")
    return _svg(fig)


def hpb_page(results: dict[str, Any], figures: dict[str, Any]) -> str:
    """Seed 003 reproduced: the claims, throughput against range and the hit ratio, the
    app-launch cycles and what sets the pace of their warm-up; ``figures`` are the core's
    (``native.judge_hpb``)."""
    claims = results["claims"]
    body = [
        "<h1>UFS Host Performance Booster (seed 003), simulated</h1>",
        "<p>HPB was removed from Linux in v6.6; torpor models the v6.5 driver as a what-if.</p>",
        f"<p>Claims: {html.escape(hpb.verdict_text(claims))}.</p>",
        *_claims_table(claims),
        "<h2>Throughput against range, and the hit ratio</h2>",
        f"<figure>{_hpb_plots(results['runs'], results['detail'], figures['seed_iozone'])}"
        "</figure>",
        "<h2>App launch cycles (synthetic launches; storage time only)</h2>",
        f"<figure>{_launch_plot(results['launch'])}</figure>",
        "<h2>Warm-up: HPB's launch gain per cycle, one lever moved at a time</h2>",
        f"<figure>{_warmup_plot(figures)}</figure>",
    ]
    return _page("torpor: UFS HPB (seed 003)", body)


def _qos_residency(rows: list[dict[str, Any]]) -> str:
    """Each CPU's time in WFI and spc per configuration (the seed's idlestat comparison)."""
    fig = _figure(10, 3.5)
    axes = fig.subplots(1, len(qos.CONFIGS), sharey=True)
    for ax, config in zip(axes, qos.CONFIGS, strict=True):
        cpus = [r for r in rows if r["config"] == config and r["cpu"] != "all"]
        bottom = [0.0] * len(cpus)
        for state in ("WFI", "spc"):
            vals = [r["residency_pct"].get(state, 0.0) for r in cpus]
            ax.bar([f"cpu{r['cpu']}" for r in cpus], vals, bottom=bottom, label=state)
            bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
        ax.set_title(config)
    axes[0].set_ylabel("% of the run")
    _legend_above(fig, axes[0], 2)
    return _svg(fig)


def qos_page(results: dict[str, Any]) -> str:
    """Seed 004 reproduced: the claims, each CPU's residency per configuration, and the NVMe
    latency-tolerance scenario's tables."""
    claims = results["claims"]
    nvme = results["nvme_tolerance"]
    body = [
        "<h1>Per-CPU resume latency against cpu_dma_latency (seed 004), simulated</h1>",
        f"<p>Claims: {html.escape(qos.verdict_text(claims))}.</p>",
        *_claims_table(claims),
        "<h2>cyclictest</h2>",
        "<pre>"
        + html.escape("\n".join(f"{c:8s} {line}" for c, line in results["cyclictest"].items()))
        + "</pre>",
        "<h2>Residency per CPU</h2>",
        f"<figure>{_qos_residency(results['runs'])}</figure>",
        "<h2>An NVMe drive's latency tolerance lowered mid-run</h2>",
        f"<p>Table before: {html.escape('; '.join(nvme['table_before']))}.<br>"
        f"Table after {nvme['at_s']:g} s: {html.escape('; '.join(nvme['table_after']))}.</p>",
        *_table(
            ["window", "IOs", "lat avg us", "lat max us", "avg mW"],
            [
                [w["window"], w["ios"], w["lat_avg_us"], w["lat_max_us"], w["avg_power_mw"]]
                for w in nvme["windows"]
            ],
        ),
    ]
    return _page("torpor: PM QoS (seed 004)", body)
