"""Every figure of every page torpor writes keeps its text readable: no text drawn over other
text (titles, subplot titles, tick labels, axis labels, legends, annotations), no label or
title running into another panel, and no legend over a bar.

Tested through the figures themselves (matplotlib's extents of each text artist as drawn), not
through pixels: ``written_pages`` (conftest.py) records each figure a page draws.
"""

from __future__ import annotations

from typing import Any

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.transforms import Bbox

#: How far, in pixels at 100 dpi, two extents may run into each other before they overlap
#: (anti-aliasing; the glyphs' boxes include some space around them).
TOLERANCE_PX = 1.0

PAGES = [
    "run-nvme",
    "run-cpu",
    "run-ufs",
    "run-two-devices",
    "sweep",
    "reproduce-apst",
    "reproduce-teo",
    "reproduce-devfreq",
    "reproduce-hpb",
    "reproduce-qos",
    "index",
]


def overlap(a: Bbox, b: Bbox) -> bool:
    return (
        a.x0 < b.x1 - TOLERANCE_PX
        and b.x0 < a.x1 - TOLERANCE_PX
        and a.y0 < b.y1 - TOLERANCE_PX
        and b.y0 < a.y1 - TOLERANCE_PX
    )


def drawn_texts(fig: Figure) -> list[tuple[Text, Bbox]]:
    """Every text the figure draws, non-empty and visible, with its extent: tick labels only
    of the ticks inside the view (matplotlib keeps spare ones it does not draw), and no
    labels of a panel drawn without axes."""
    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    hidden: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            ticks = [*axis.majorTicks, *axis.minorTicks]
            labels = {id(t.label1) for t in ticks} | {id(t.label2) for t in ticks}
            shown: set[int] = set()
            if ax.axison and axis.get_visible():
                # The ticks drawn: those inside the view interval.
                shown = {id(x) for t in axis._update_ticks() for x in (t.label1, t.label2)}
            else:
                hidden |= {id(axis.label), id(axis.get_offset_text())}
            hidden |= labels - shown
    return [
        (text, text.get_window_extent(renderer))
        for text in fig.findobj(Text)
        if text.get_visible() and text.get_text().strip() and id(text) not in hidden
    ]


def owner(text: Text) -> Any:
    """The axes a text belongs to (its title, labels, ticks, legend, annotations), or None for
    the figure's own (suptitle, figure legend)."""
    return text.axes


def problems(fig: Figure) -> list[str]:
    texts = drawn_texts(fig)
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    found = []
    for i, (a, box_a) in enumerate(texts):
        for b, box_b in texts[i + 1 :]:
            if overlap(box_a, box_b):
                found.append(f"text {a.get_text()!r} over {b.get_text()!r}")
    # No text of one panel (or of the figure) inside another panel's plotting area.
    panels = [ax for ax in fig.axes if ax.axison]
    for text, box in texts:
        for ax in panels:
            if ax is not owner(text) and overlap(box, ax.bbox):
                found.append(f"text {text.get_text()!r} runs into the panel {ax.get_title()!r}")
    # No legend over a bar.
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    # Each bar as drawn: cut to its panel (on a log axis a bar from 0 reaches far below it).
    bars = [
        cut
        for ax in fig.axes
        for p in ax.patches
        if isinstance(p, Rectangle) and p.get_width() and p.get_height()
        if (cut := Bbox.intersection(p.get_window_extent(renderer), ax.bbox)) is not None
    ]
    for legend in legends:
        assert isinstance(legend, Legend)
        box = legend.get_window_extent(renderer)
        covered = [bar for bar in bars if overlap(box, bar)]
        if covered:
            names = [t.get_text() for t in legend.get_texts()]
            found.append(f"legend {names} covers {len(covered)} bars")
    return found


@pytest.mark.parametrize("page", PAGES)
def test_no_text_overlaps_in_the_figures_of(written_pages: dict[str, Any], page: str) -> None:
    path, figures = written_pages[page]
    assert figures, f"{page}: no figure recorded"
    assert len(figures) == path.read_text().count("<figure>")
    found = {
        f"figure {i + 1}": issues for i, fig in enumerate(figures) if (issues := problems(fig))
    }
    assert found == {}, f"{page}: {found}"


def test_the_check_finds_overlapping_text_and_a_legend_over_bars() -> None:
    # The checks themselves: a title on top of a subplot title, a y label inside the panel to
    # its left, a legend in the middle of tall bars.
    fig = Figure(figsize=(6, 3))
    left, right = fig.subplots(1, 2)
    left.set_title("left panel")
    left.text(0.5, 1.02, "on the title", transform=left.transAxes, ha="center")
    right.set_ylabel("a label", labelpad=120)
    left.bar([0, 1, 2], [10, 10, 10], width=0.9, label="bars")
    left.legend(loc="center")
    found = problems(fig)
    assert any("'left panel'" in p and "'on the title'" in p for p in found), found
    assert any("'a label' runs into the panel 'left panel'" in p for p in found), found
    assert any(p.startswith("legend ['bars'] covers") for p in found), found
    # A clean figure passes.
    fig = Figure(figsize=(6, 3), layout="constrained")
    ax = fig.subplots()
    ax.bar([0, 1], [1, 2], label="bars")
    ax.set_title("title")
    fig.legend(loc="outside upper center")
    assert problems(fig) == []


def test_the_sweep_figure_draws_its_constraint_and_spreads_decades_on_a_log_axis(
    written_pages: dict[str, Any],
) -> None:
    # apst-sn530-sweep.toml: p99.9 latency within 15 ms; its points' p99.9 run from 75 us (the
    # drive never sleeps) to tens of ms: more than two decades.
    _, (fig,) = written_pages["sweep"]
    (ax,) = fig.axes
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert [list(line.get_ydata()) for line in dashed] == [[15000.0, 15000.0]]
    assert ax.get_yscale() == "log" and ax.get_ylabel() == "lat_p999_us (log scale)"
