"""`torpor bench` as text: one row per benchmark, what it simulated and how fast."""

from __future__ import annotations

from typing import Any

from rich.table import Table


def bench_table(rows: list[dict[str, Any]]) -> Table:
    """The benchmarks' rows: the work simulated, the wall time and the rate."""
    table = Table(title="torpor bench (one core)")
    for col in ("benchmark", "simulated", "wall s", "per second"):
        table.add_column(col, justify="right" if col != "benchmark" else "left")
    for r in rows:
        table.add_row(
            r["name"], f"{r['count']:,} {r['unit']}", f"{r['wall_s']:.3f}", f"{r['per_s']:,.0f}"
        )
    return table
