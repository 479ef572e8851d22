"""Terminal tables for runs on CPUs: one row per variant (governor, power, idle misses, wake-up
latency), then per CPU the residency of each idle state, where a cpufreq governor moved the
clock the busy time at each OPP, and per task its wake-up latency (tasks doing IO are shown by
``system_text``, with their IO's latency and its parts)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from torpor import native


def _us(ns: float) -> str:
    return f"{ns / 1000:.1f}"


def print_cpu_run(console: Console, report: dict[str, Any], detail: bool = True) -> None:
    """The CPU sections of ``report`` (a ``torpor run`` report)."""
    variants = report["variants"]
    platforms = sorted({v["cpu"]["platform"] for v in variants})
    spans = sorted({v["duration_s"] for v in variants})
    title = Text(
        f"{report['scenario']} on {', '.join(platforms)} ({', '.join(f'{s:g}' for s in spans)} s)"
    )
    table = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("variant", overflow="fold", min_width=8)
    table.add_column("governor", overflow="fold")
    for col in ("mW", "too deep %", "too shallow %", "wake-up us (gmean)"):
        table.add_column(col, justify="right", no_wrap=True)
    for v in variants:
        cpu = v["cpu"]
        table.add_row(
            Text(v["name"]),
            Text(cpu["governor"]),
            f"{cpu['avg_power_mw']:.1f}" if cpu["power_known"] else "n/a",
            f"{cpu['too_deep_pct']:.1f}",
            f"{cpu['too_shallow_pct']:.1f}",
            f"{cpu['wakeup_latency_gmean_us']:.1f}",
        )
    console.print(table)
    if not detail:
        return
    residency = native.report_rows(report)["residency"]
    for v in variants:
        cpu = v["cpu"]
        console.print()
        head = f"{v['name']} ({cpu['governor']}, cpufreq {cpu['cpufreq']}, HZ={cpu['hz']})"
        console.print(Text(head, style="bold"))
        states = Table(box=box.SIMPLE_HEAD, padding=(0, 1))
        for col in ("cpu", "state", "entries", "time %", "above", "below"):
            states.add_column(col, justify="left" if col == "state" else "right")
        # The core's residency rows: each CPU's running time, then its idle states.
        for r in residency:
            if r["variant"] != v["name"] or r["component"] != "cpu":
                continue
            if r["state"] == "running":
                states.add_row(str(r["cpu"]), "(running)", "", f"{r['time_pct']:.1f}")
            else:
                states.add_row(
                    "",
                    Text(r["state"]),
                    f"{r['entries']:,}",
                    f"{r['time_pct']:.1f}",
                    f"{r['above']:,}",
                    f"{r['below']:,}",
                )
        console.print(states)
        if any(c["freq_changes"] for c in cpu["cpus"]):
            console.print(frequency_table(cpu["cpus"]))
        # Tasks doing IO have their own table (system_text: their IO as they saw it).
        quiet = [t for t in cpu["tasks"] if not t.get("io")]
        if quiet or not cpu["tasks"]:
            console.print(wakeup_table(quiet))


def frequency_table(cpus: list[dict[str, Any]]) -> Table:
    """Per CPU whose frequency moved: its switches, then its busy time and energy at each OPP
    it was busy at (idle time has no OPP, as in idlestat's P-state report)."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1))
    for col in ("cpu", "switches", "MHz", "busy ms", "mJ"):
        table.add_column(col, justify="right")
    for c in cpus:
        if not c["freq_changes"]:
            continue
        first = True
        for o in c["opps"]:
            if not o["time_ns"]:
                continue
            table.add_row(
                str(c["cpu"]) if first else "",
                f"{c['freq_changes']:,}" if first else "",
                f"{o['khz'] / 1000:g}",
                f"{o['time_ns'] / 1e6:,.1f}",
                f"{o['energy_mj']:,.2f}",
            )
            first = False
    return table


def wakeup_table(tasks: list[dict[str, Any]]) -> Table:
    """Each task's wake-ups and wake-up latency (min, avg, p99, max), and where a periodic task
    ran past its period, the frames it missed."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1))
    missed = any(t.get("periods_missed") for t in tasks)
    for col in ("task", "cpu", "wake-ups", "min us", "avg us", "p99 us", "max us"):
        table.add_column(col, justify="left" if col == "task" else "right")
    if missed:
        table.add_column("missed", justify="right")
    for t in tasks:
        summary = t.get("latency", {}).get("summary")
        table.add_row(
            Text(t["name"]),
            str(t["cpu"]),
            f"{t['wakeups']:,}",
            _us(t["latency_min_ns"]),
            f"{t['latency_avg_us']:.1f}" if t["wakeups"] else "-",
            f"{summary['p99_us']:.1f}" if summary and summary["count"] else "-",
            _us(t["latency_max_ns"]),
            *([f"{t['periods_missed']:,}"] if missed else []),
        )
    return table
