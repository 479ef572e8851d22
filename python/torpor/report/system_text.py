"""Terminal view of whole-system runs (CPUs with a device): the device's view, the CPUs' view,
each IO task's requests as it saw them (total latency and its parts: device, interrupt, idle
exit, scheduler), and the CPUs', the device's and the whole system's energy. Every number is the
core's (the run's JSON report); nothing here is derived."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from torpor.report import apst_text, cpu_text, ufs_text
from torpor.report.apst_text import _num

#: The parts of an IO's latency as its task saw it, in the report's order and names.
IO_PARTS = ("total", "device", "irq", "exit", "sched")
#: The percentiles shown of each part, as (column head, report key).
IO_STATS = (("p50", "p50_us"), ("p99", "p99_us"), ("p99.9", "p99_9_us"), ("max", "max_us"))


def devices_of(variant: dict[str, Any]) -> list[str]:
    """The variant's device sections (``"nvme"``, ``"ufs"`` or both), in run order."""
    return [d for d in ("nvme", "ufs") if d in variant]


def is_system(report: dict[str, Any]) -> bool:
    """Every variant runs CPUs, and some a device beside them."""
    variants = report["variants"]
    return all("cpu" in v for v in variants) and any(devices_of(v) for v in variants)


def io_tasks(variant: dict[str, Any]) -> list[dict[str, Any]]:
    """The variant's tasks that did IO (fio jobs' threads among them)."""
    return [t for t in variant["cpu"]["tasks"] if t.get("io")]


def print_system_run(console: Console, report: dict[str, Any], detail: bool = True) -> None:
    """The device's view, the CPUs' (their per-variant detail with ``detail``), the IO tasks'
    requests per variant, and one energy line per variant."""
    variants = report["variants"]
    captions = {
        "nvme": "IOs: all the drive served; latency: fio jobs' only (- if none); the tasks' IO "
        "is below, as they saw it",
        "ufs": "latency and MB/s: fio jobs' only (- if none); the tasks' IO is below, as they "
        "saw it",
    }
    for kind, show in (("nvme", apst_text.print_run), ("ufs", ufs_text.print_ufs_run)):
        own = [v for v in variants if kind in v]
        if own:
            jobless = any(not v["io"]["all"]["count"] for v in own)
            show(
                console,
                {**report, "variants": own},
                detail=detail,
                caption=captions[kind] if jobless else "",
            )
            console.print()
    cpu_text.print_cpu_run(console, report, detail=detail)
    # The IO tables are the run's point: --brief keeps them (it drops the per-variant detail).
    for v in variants:
        if io_tasks(v):
            console.print()
            console.print(io_table(v))
    console.print()
    for v in variants:
        if v.get("system"):
            console.print(Text(energy_line(v)))


def io_table(variant: dict[str, Any]) -> Table:
    """One group of rows per IO task, one per device when the run had two, and one for all of
    them: each part's percentiles."""
    table = Table(
        title=Text(f"IO as the tasks saw it: {variant['name']} (us)"),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
    )
    table.add_column("task", overflow="fold", max_width=20)
    table.add_column("cpu", justify="right")
    table.add_column("part")
    table.add_column("IOs", justify="right", no_wrap=True)
    for head, _ in IO_STATS:
        table.add_column(head, justify="right", no_wrap=True)
    groups = [(t["name"], str(t["cpu"]), t["io"]) for t in io_tasks(variant)]
    per_device = variant["cpu"].get("io_by_device", [])
    groups += [(f"all on {d['device']}", "", d["path"]) for d in per_device]
    groups.append(("all", "", variant["cpu"]["io"]))
    for name, cpu, io in groups:
        for part in IO_PARTS:
            s = io[part]
            table.add_row(
                Text(name) if part == "total" else "",
                cpu if part == "total" else "",
                part,
                f"{s['count']:,}" if part == "total" else "",
                *[_num(s[key]) if s["count"] else "-" for _, key in IO_STATS],
                end_section=part == IO_PARTS[-1],
            )
    return table


def known(section: dict[str, Any], key: str, spec: str) -> str:
    """``section[key]`` formatted by ``spec``, or ``n/a`` where the section's power is not
    known (a CPU state or OPP without a power figure: the core's figure leaves it out)."""
    return format(section[key], spec) if section["power_known"] else "n/a"


def energy_line(variant: dict[str, Any]) -> str:
    """The CPUs', each device's and the whole system's energy, and its average power."""
    s = variant["system"]
    devices = "".join(
        f" + {variant[k]['device']} {variant[k]['energy_mj']:,.3f} mJ" for k in devices_of(variant)
    )
    return (
        f"{variant['name']}: energy CPUs {known(s, 'cpu_energy_mj', ',.3f')} mJ{devices} = "
        f"{known(s, 'energy_mj', ',.3f')} mJ; average power {known(s, 'avg_power_mw', ',.1f')} mW"
    )
