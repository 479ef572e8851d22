"""`torpor sweep` as text: the Pareto front of the points that meet the constraints, one row
per distinct result (tied points named beside it)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table

from torpor import sweeps as sw
from torpor.printable import printable


def sweep_table(
    title: str, plan: sw.Sweep, rows: list[dict[str, Any]], ranked: sw.Ranking
) -> Table:
    """The front's rows under a title (``title``: the sweep file as shown) counting the rows,
    the feasible ones and the front."""
    feasible, front, groups = ranked.feasible, ranked.front, ranked.groups
    axes = [a.path for a in plan.axes]
    on_front = f"{len(front)} on the Pareto front"
    if len(groups) < len(front):
        on_front = (
            f"{len(front)} points on the Pareto front with {len(groups)} distinct "
            f"result{'s' if len(groups) > 1 else ''} (tied points share a row)"
        )
    table = Table(
        title=f"{title}: {len(rows)} rows, {len(feasible)} meet the constraints, {on_front}",
        box=box.SIMPLE_HEAD,
    )
    for col in ["point", *[a.rsplit(".", 1)[-1] for a in axes], *plan.objectives]:
        table.add_column(printable(col), justify="right", overflow="fold")
    if len(groups) < len(front):
        table.add_column("tied with", overflow="fold")
    for group in groups:
        r = group[0]
        table.add_row(
            str(r["point"]),
            *[printable(str(r[a])) for a in axes],
            *[f"{r[o]:,.1f}" for o in plan.objectives],
            *([sw.point_list(group[1:]) or "-"] if len(groups) < len(front) else []),
        )
    return table
