"""`torpor run` as text: each kind of run (CPUs with a device, CPUs alone, a UFS device, an
NVMe drive) printed by its own view."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from torpor.report import apst_text, cpu_text, system_text, ufs_text


def print_run(console: Console, report: dict[str, Any], detail: bool) -> None:
    """The report's summary table and, with ``detail``, each variant's detail."""
    if system_text.is_system(report):
        system_text.print_system_run(console, report, detail=detail)
    elif all("cpu" in v for v in report["variants"]):
        cpu_text.print_cpu_run(console, report, detail=detail)
    elif all("ufs" in v for v in report["variants"]):
        ufs_text.print_ufs_run(console, report, detail=detail)
    else:
        apst_text.print_run(console, report, detail=detail)
