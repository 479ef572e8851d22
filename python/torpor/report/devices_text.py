"""`torpor devices` as text: the built-in NVMe, CPU and UFS presets, one table each in 80
columns, each followed by what its columns mean."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table


def print_devices(
    console: Console,
    rows: list[dict[str, Any]],
    cpus: list[dict[str, Any]],
    ufs: list[dict[str, Any]],
) -> None:
    """The NVMe presets ``rows``, the CPU presets ``cpus`` (and their frequency domains) and
    the UFS presets ``ufs``."""
    # Fits 80 columns: long names fold onto more lines, nothing is cut.
    table = Table(title="Built-in NVMe presets", box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("id", no_wrap=True)
    table.add_column("model", overflow="fold")
    table.add_column("states", justify="right", no_wrap=True)
    table.add_column("PS0 idle W", justify="right", no_wrap=True)
    table.add_column("seed", no_wrap=True)
    for r in rows:
        idle = r.get("ps0_idle")
        table.add_row(
            r["id"],
            r["model"],
            str(r["controller"]["npss"] + 1),
            f"{idle['central_mw'] / 1000:g}" if idle else "-",
            "000" if r["in_apst_commit"] else "",
        )
    console.print(table)
    console.print(
        "PS0 idle W: the idle power torpor simulates where the drive reports none (an estimate "
        "with a range). seed 000: a drive of the APST commit. --json shows vendor, firmware and "
        "every source."
    )
    console.print(cpu_table(cpus))
    console.print(
        "CPUs: per cluster, CPU count x capacity (1024 = the biggest). states: per cluster, the "
        "idle states, c = cluster states among them. power: idle-state power sourced, estimated "
        "(with a range) or none. --json shows every state, OPP and source."
    )
    console.print(cpufreq_table(cpus))
    console.print(
        "CPU frequency domains: per cluster with OPPs, their count and range, how their active "
        "power is known (derived from a DT or firmware, sourced, estimated with a range, or "
        "none) and the driver's transition latency, lat. us (none: not given). --json shows "
        "each OPP's voltage, power and source, and each domain's sources."
    )
    console.print(ufs_table(ufs))
    console.print(
        "UFS: levels = the host's first clock and link gear at min / max. QD1 us and seq MB/s: "
        "the model's 4 KiB read latency (through the FTL where the preset has one, its map "
        "entry cached) and the calibrated 512 KiB read bandwidth at min / max. "
        "--json shows every figure with its source or estimate range."
    )


def ufs_table(devices: list[dict[str, Any]]) -> Table:
    """The UFS presets, one row each, in 80 columns."""
    table = Table(title="Built-in UFS presets", box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("id", no_wrap=True)
    table.add_column("UFS", no_wrap=True)
    table.add_column("levels", overflow="fold")
    table.add_column("QD1 us", justify="right", no_wrap=True)
    table.add_column("seq MB/s", justify="right", no_wrap=True)
    for u in devices:
        lo, hi = u["levels"]["min"], u["levels"]["max"]
        mhz = [lvl["level"]["freq_hz"] / 1e6 for lvl in (lo, hi)]
        table.add_row(
            u["id"],
            u["ufs_version"],
            f"{mhz[0]:g}MHz G{lo['level']['gear']} / {mhz[1]:g}MHz G{hi['level']['gear']}",
            f"{lo['qd1_read_4k_us']:.0f} / {hi['qd1_read_4k_us']:.0f}",
            f"{lo['seq_read_mb_s']:.0f} / {hi['seq_read_mb_s']:.0f}",
        )
    return table


def cpu_table(cpus: list[dict[str, Any]]) -> Table:
    """The CPU presets, one row each, in 80 columns."""
    table = Table(title="Built-in CPU presets", box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("id", no_wrap=True)
    table.add_column("CPUs", overflow="fold")
    table.add_column("states", overflow="fold")
    table.add_column("deepest us", justify="right", no_wrap=True)
    table.add_column("power", no_wrap=True)
    for c in cpus:
        clusters = c["cluster"]
        states = [s for cl in clusters for s in cl["state"]]
        powers = [s["power_mw"] for s in states if s.get("power_mw")]
        if not powers:
            power = "none"
        elif all("mw" in p for p in powers):
            power = "sourced"
        else:
            power = "estimate"
        table.add_row(
            c["id"],
            " + ".join(f"{len(cl['cpus'])}x{cl['capacity']}" for cl in clusters),
            " + ".join(
                str(len(cl["state"]))
                + (f" ({n}c)" if (n := sum(s["level"] == "cluster" for s in cl["state"])) else "")
                for cl in clusters
            ),
            str(max(s["exit_latency_us"] for s in states)),
            power,
        )
    return table


def cpufreq_table(cpus: list[dict[str, Any]]) -> Table:
    """The CPU presets' frequency domains, one row per cluster with OPPs, in 80 columns."""
    table = Table(title="CPU frequency domains", box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("id", no_wrap=True)
    table.add_column("cluster", no_wrap=True)
    table.add_column("OPPs MHz", no_wrap=True)
    table.add_column("power", no_wrap=True)
    # "lat. us", not "latency us": the widest row (18: 307.2-1593.6) must still fit in 80 columns.
    table.add_column("lat. us", justify="right", no_wrap=True)
    for c in cpus:
        for cl in c["cluster"]:
            opps = cl.get("opp") or []
            if not opps:
                continue
            powers = [o.get("power_mw") for o in opps]
            if not all(powers):
                power = "none" if not any(powers) else "partly"
            elif all("mw" not in p for p in powers):
                power = "estimate"
            elif all(p.get("source", "").startswith("DERIVED") for p in powers):
                power = "derived"
            else:
                power = "sourced"
            latency = (cl.get("cpufreq") or {}).get("transition_latency")
            if latency is None:
                shown = "none"
            else:
                shown = str(round(latency.get("ns", latency.get("central")) / 1000))
            mhz = [o["freq_khz"] / 1000 for o in opps]
            table.add_row(
                c["id"],
                cl["name"],
                f"{len(opps)}: {mhz[0]:g}-{mhz[-1]:g}",
                power,
                shown,
            )
    return table
