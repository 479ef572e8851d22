"""Terminal tables for ``torpor qos``: per variant, the PM QoS constraints at the start and after
each request, and the idle states (CPUs) or APST targets (NVMe) each still allows."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text


def _seconds(ns: int) -> str:
    return f"{ns / 1e9:g}"


def _request(step: dict[str, Any]) -> Text:
    if step["holder"] is None:
        return Text("(start)")
    # A sysfs path breaks after its directories: the file's name is the longest word then.
    target = step["target"].replace("/", "/ ") if len(step["target"]) > 16 else step["target"]
    return Text(f"{step['holder']}: {target}\n  <- {step['written']}")


#: `cpuidle_governor_latency_req` with nothing asked: the global list's default, 2e9 us.
NO_LATENCY_REQ_US = 2_000_000_000


def _cpus(ids: list[int]) -> str:
    """``cpu0-3`` for a run of consecutive CPUs, else ``cpu0,2``."""
    if len(ids) > 1 and ids == list(range(ids[0], ids[-1] + 1)):
        return f"cpu{ids[0]}-{ids[-1]}"
    return "cpu" + ",".join(str(i) for i in ids)


def _cpu_rows(step: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(CPUs, latency_req, states): CPUs that see the same constraint share one row."""
    groups: dict[tuple[int, tuple[str, ...]], list[int]] = {}
    for c in step["cpus"]:
        groups.setdefault((c["latency_req_us"], tuple(c["states"])), []).append(c["cpu"])
    rows = [
        (_cpus(ids), "none" if req == NO_LATENCY_REQ_US else str(req), " ".join(states))
        for (req, states), ids in groups.items()
    ]
    rows += [
        (f"cluster {k['name']}", "", " ".join(k["states"]) or "(no cluster state)")
        for k in step["clusters"]
    ]
    return rows


def _us(value: int | None) -> str:
    return "none" if value is None else str(value)


def _longest_word(texts: list[str]) -> int:
    """The longest word of ``texts``: a column at least this wide wraps them between words,
    never inside a state name or a file name."""
    return max((len(w) for t in texts for w in t.split()), default=1)


def _step_table(variant: dict[str, Any], narrow: bool = False) -> Table:
    """A variant's table with the columns every step has: its time and its request (``narrow``:
    as wide as its longest word, wrapped between words)."""
    table = Table(
        title=Text(f"{variant['name']} on {variant['device']}"),
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
    )
    table.add_column("t (s)", justify="right", no_wrap=True)
    requests = [_request(step).plain for step in variant["steps"]]
    width = _longest_word(requests) if narrow else None
    table.add_column("request", width=width, min_width=_longest_word(requests), overflow="fold")
    return table


def _cpu_table(variant: dict[str, Any], narrow: bool = False) -> Table:
    table = _step_table(variant, narrow)
    rows = [row for step in variant["steps"] for row in _cpu_rows(step)]
    table.add_column("global\nus", justify="right", no_wrap=True)
    cpus = _longest_word([r[0] for r in rows])
    table.add_column("cpus", width=cpus if narrow else None, min_width=cpus)
    table.add_column("req us", justify="right", no_wrap=True)
    table.add_column(
        "idle states it may use", min_width=_longest_word([r[2] for r in rows]), overflow="fold"
    )
    for step in variant["steps"]:
        first = True
        for cpu, req, states in _cpu_rows(step):
            head = (
                (_seconds(step["at_ns"]), _request(step), _us(step["global_limit_us"]))
                if first
                else ("", Text(""), "")
            )
            table.add_row(*head, cpu, req, Text(states), end_section=False)
            first = False
        table.rows[-1].end_section = True
    return table


def _nvme_table(variant: dict[str, Any]) -> Table:
    table = _step_table(variant)
    table.add_column("tolerance us", justify="right", no_wrap=True)
    table.add_column("ps_max_latency_us", justify="right", no_wrap=True)
    table.add_column("table", no_wrap=True)
    table.add_column("APST targets", overflow="fold")
    for step in variant["steps"]:
        if step["apst_off"] is not None:
            targets = f"APST off: {step['apst_off']}"
        else:
            targets = " ".join(f"PS{ps}" for ps in step["targets"]) or "none"
        table.add_row(
            _seconds(step["at_ns"]),
            _request(step),
            _us(step["tolerance_us"]),
            _us(step["ps_max_latency_us"]),
            "sent" if step["sent"] else "kept",
            Text(targets),
        )
    return table


#: The most steps the terminal tables show in all (rich lays out a few milliseconds per step:
#: 65,536 requests would take minutes); ``--json`` lists every step.
SHOWN_STEPS = 200


def print_qos(console: Console, view: dict[str, Any]) -> int:
    """The variants of a ``torpor qos`` view, up to [`SHOWN_STEPS`] steps in all; returns how
    many steps were left out."""
    budget = SHOWN_STEPS
    left_out = 0
    for variant in view["variants"]:
        steps = variant["steps"]
        left_out += max(len(steps) - budget, 0)
        if budget == 0:
            continue
        shown = {**variant, "steps": steps[:budget]}
        budget -= len(shown["steps"])
        if variant["platform"] == "cpu":
            table = _cpu_table(shown)
            # Too wide for the terminal: the word-wide layout, so that Rich never cuts a state
            # name to fit.
            unbounded = console.options.update_width(1 << 16)
            if Measurement.get(console, unbounded, table).maximum > console.width:
                table = _cpu_table(shown, narrow=True)
            console.print(table)
        else:
            console.print(_nvme_table(shown))
    return left_out
