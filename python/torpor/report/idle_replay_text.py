"""`torpor idle replay` as text: the totals per column (the trace's own choices, then each
governor's), too deep / too shallow per CPU, and how the replay's inputs were had."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from torpor.report import idle_text


def _mix(summary: dict[str, Any]) -> str:
    """The state mix: each entered state's share of the periods."""
    parts = [f"{s['name']} {s['entries_pct']:.0f}%" for s in summary["states"] if s["entries"] > 0]
    return ", ".join(parts) or "-"


def _replay_row(name: str, s: dict[str, Any]) -> list[str]:
    energy = "-" if s["energy_mj"] is None else f"{s['energy_mj']:.4g}"
    idle = "-" if s["idle_energy_mj"] is None else f"{s['idle_energy_mj']:.4g}"
    kept = "-" if s["tick_kept"] is None else f"{s['tick_kept']}"
    return [
        name,
        f"{s['periods']}",
        f"{s['too_deep_pct']:.1f}",
        f"{s['too_shallow_pct']:.1f}",
        f"{s['added_latency_mean_ns'] / 1000:.1f}",
        idle,
        energy,
        kept,
    ]


def print_replay(console: Console, r: dict[str, Any]) -> None:
    """The totals per column, too-deep/too-shallow per CPU, then how the inputs were had."""
    p = r["platform"]
    console.print(
        f"{r['file']}: {r['periods']} idle periods; platform {p['id'] or p['from']} "
        f"({p['from']}), HZ={p['hz']} ({p['hz_from']})"
    )
    columns = [("actual (trace)", r["actual"]), *r["governors"].items()]
    # Short headers (the caption says them in full) and the state mix below the table: 80
    # columns hold it whole.
    table = Table(
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        title="Totals",
        caption="deep / shallow: too deep / too shallow, % of periods; added: latency added "
        "per period, us; idle: idle energy, mJ; mJ: idle + active energy; tick: periods that "
        "kept the tick",
    )
    table.add_column("column", no_wrap=True)
    for head in ("periods", "deep %", "shallow %", "added us", "idle", "mJ", "tick"):
        table.add_column(head, justify="right", no_wrap=True)
    for name, col in columns:
        table.add_row(*_replay_row(name, col))
    console.print(table)
    a = r["active"]
    active = "-" if a["energy_mj"] is None else f"{a['energy_mj']:.4g} mJ"
    console.print(f"active energy (every column; rule: {a['rule']}): {active}")
    console.print("state mix (share of periods):")
    for name, col in columns:
        console.print(f"  {name}: {_mix(col)}")
    per_cpu = Table(
        box=box.SIMPLE_HEAD,
        title="Per CPU: too deep % / too shallow %",
        collapse_padding=True,
        pad_edge=False,
    )
    per_cpu.add_column("CPU", justify="right", no_wrap=True)
    per_cpu.add_column("cluster", no_wrap=True)
    per_cpu.add_column("periods", justify="right", no_wrap=True)
    for name, _ in columns:
        per_cpu.add_column(name.removesuffix(" (trace)"), justify="right", no_wrap=True)
    for i, cpu in enumerate(r["actual"]["per_cpu"]):
        cells = [
            f"{col['per_cpu'][i]['too_deep_pct']:.1f}/{col['per_cpu'][i]['too_shallow_pct']:.1f}"
            for _, col in columns
        ]
        per_cpu.add_row(f"{cpu['cpu']}", cpu["cluster"], f"{cpu['periods']}", *cells)
    console.print(per_cpu)
    kernel = r["actual"]["kernel_reported"]
    console.print(
        f"the traced kernel's own cpu_idle_miss events: {kernel['too_deep']} too deep, "
        f"{kernel['too_shallow']} too shallow"
    )
    c = r["wake_causes"]
    console.print(
        "wake-up causes: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in c.items() if v)
    )
    console.print("inputs (periods observed / reconstructed):")
    for i in r["inputs"]:
        console.print(f"  {i['input']}: {i['observed']} / {i['reconstructed']}: {i['how']}")
    d = r["dropped"]
    console.print(
        f"left out: {d['exits_without_entry']} exits without an entry, "
        f"{d['entries_without_exit']} entries without an exit, "
        f"{d['non_positive']} periods of zero or negative length, "
        f"{d['open_at_end']} still open at the end; {d['timers_ignored']} timer starts ignored"
    )
    console.print(idle_text.read_as(r["format"], r["trace"]))
    for line in idle_text.trace_warnings(r["trace"]):
        console.print(line)
    for n in r["notes"]:
        console.print(f"note: {n}")
