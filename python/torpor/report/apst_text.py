"""Terminal views of APST tables and scenario runs."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from torpor import native


def _num(x: float) -> str:
    """One decimal below 1000, whole numbers with thousands separators above."""
    return f"{x:.1f}" if x < 1000 else f"{x:,.0f}"


def _w(mw: float | None) -> str:
    return "-" if mw is None else f"{mw / 1000:.4f} W"


def power_state_table(device: dict[str, Any]) -> Table:
    """The drive's power states, laid out like smartctl's "Supported Power States", titled by
    the model number (a dump's file name says little) and where it came from."""
    ctrl = device["controller"]
    if device["format"] == "preset":
        title = f"{device['label']}: power states (NPSS {ctrl['npss']})"
    else:
        model = ctrl["model"] or "(no model number)"
        title = (
            f"{model}: power states (NPSS {ctrl['npss']}), from {device['label']} "
            f"(read as `{device['format']}` output)"
        )
    table = Table(title=Text(title))
    for col in ("St", "Op", "Max", "Active", "Idle", "Ent_Lat us", "Ex_Lat us"):
        table.add_column(col, justify="right")
    for i, ps in enumerate(ctrl["power_states"]):
        table.add_row(
            str(i),
            "-" if ps["non_operational"] else "+",
            _w(ps["max_power_mw"]),
            _w(ps["active_power_mw"]),
            _w(ps["idle_power_mw"]),
            str(ps["entry_lat_us"]),
            str(ps["exit_lat_us"]),
        )
    return table


def print_apst(console: Console, result: dict[str, Any], entries: bool = False) -> None:
    """Power-state table, one line per transition, and (with ``entries``) the 32 entries as
    ``nvme get-feature -H`` prints them."""
    console.print(power_state_table(result["device"]))
    for kind in ("idle", "active"):
        e = result["device"].get(f"ps0_{kind}")
        if e:
            console.print(
                Text(
                    f"PS0 {kind} power (not reported): torpor simulates {e['central_mw']:g} mW, "
                    f"range {e['low_mw']:g}-{e['high_mw']:g} mW ({e['source'].split(':')[0]})"
                )
            )
    p = result["params"]
    console.print(
        Text(
            f"APST algorithm {p['algorithm']}: ps_max_latency_us={p['ps_max_latency_us']} "
            f"primary {p['primary_timeout_ms']} ms / {p['primary_latency_tol_us']} us, "
            f"secondary {p['secondary_timeout_ms']} ms / {p['secondary_latency_tol_us']} us"
            + (", NO_DEEPEST_PS" if p["no_deepest_ps"] else "")
        )
    )
    if not result["sent"]:
        console.print(Text.assemble(("No APST table is sent:", "bold"), " ", result["reason"]))
        return
    console.print()
    lines = result["transitions"] or ["no autonomous transitions (every ITPT is 0)"]
    for line in lines:
        console.print(line, markup=False)
    console.print()
    if entries:
        console.print(result["get_feature_text"], markup=False)
    else:
        console.print("(--entries prints the 32 entries as `nvme get-feature -f 0x0c -H` does)")


def fio_latency_lines(name: str, io: dict[str, Any]) -> list[str]:
    """A direction's latency in fio's layout, so it reads like a real fio run beside it, from
    the report's ``io`` section (the direction's summary and its ``<name>_iops``)."""
    lat, iops = io[name], io[f"{name}_iops"]
    return [
        f"  {name}: IOPS={iops:.1f}, ios={lat['count']}",
        # One precision for all three, so that min <= avg <= max also reads so.
        f"    clat (usec): min={lat['min_us']:.2f}, max={lat['max_us']:.2f}, "
        f"avg={lat['mean_us']:.2f}",
        "     clat percentiles (usec):",
        f"     | 50.00th=[{lat['p50_us']:6.0f}], 90.00th=[{lat['p90_us']:6.0f}], "
        f"99.00th=[{lat['p99_us']:6.0f}], 99.90th=[{lat['p99_9_us']:6.0f}]",
    ]


def residency_table(name: str, rows: list[dict[str, Any]]) -> Table:
    """Time, entries and energy per power state, plus the time between them: the drive's rows
    of the core's residency table for the variant ``name``."""
    table = Table(title=Text(f"{name}: power states"), title_justify="left")
    for col in ("state", "time %", "time ms", "entries", "energy mJ"):
        table.add_column(col, justify="left" if col == "state" else "right")
    for r in rows:
        if r["state"] != native.BETWEEN_STATES and r["time_s"] == 0 and r["entries"] == 0:
            continue
        table.add_row(
            r["state"],
            f"{r['time_pct']:.2f}",
            f"{r['time_s'] * 1e3:.1f}",
            str(r["entries"]),
            f"{r['energy_mj']:.1f}",
        )
    return table


def replay_notes(variant: dict[str, Any]) -> list[str]:
    """What a replay left out: lines or requests counted but not sent, lines skipped, and lines
    the run's end cut off."""
    notes = []
    for w in variant["io"]["workloads"]:
        counts = w.get("iolog")
        if counts and (counts["syncs"] or counts["trims"]):
            notes.append(
                f"replay {w['name']}: {counts['syncs']} sync and {counts['trims']} trim lines "
                "were counted, not sent (the simulated device takes reads and writes)"
            )
        block = w.get("block_trace")
        if block:
            notes += _block_trace_notes(w["name"], block)
        cut = w.get("lines_not_reached")
        if cut:
            notes.append(
                f"replay {w['name']}: variant {variant['name']} ended at "
                f"{variant['duration_s']:g} s with {cut:,} lines of the trace not reached"
            )
    return notes


def _block_trace_notes(name: str, c: dict[str, Any]) -> list[str]:
    """A block trace's requests not sent and lines skipped, each kind said once."""
    notes = []
    unsent = [f"{c[k]:,} {k}" for k in ("discards", "flushes") if c[k]]
    if unsent:
        notes.append(
            f"replay {name}: {' and '.join(unsent)} counted, not sent (the simulated device "
            "takes reads and writes)"
        )
    if c["preflush_writes"]:
        notes.append(
            f"replay {name}: {c['preflush_writes']:,} writes asked for a cache flush first; "
            "sent as plain writes"
        )
    skipped = [
        (c["no_data"], "requests without data"),
        (c["other_actions"], "lines of other blkparse actions"),
        (c["messages"], "blkparse messages"),
        (c["report_lines"], "lines of blkparse's own report"),
    ]
    said = [f"{n:,} {what}" for n, what in skipped if n]
    if said:
        notes.append(f"replay {name}: skipped " + ", ".join(said))
    if c["on_other_devices"]:
        notes.append(
            f"replay {name}: {c['on_other_devices']:,} requests were on other devices than "
            "the first; all map onto the one simulated device"
        )
    if c["out_of_order"]:
        notes.append(
            f"replay {name}: {c['out_of_order']:,} requests were stamped before the one above "
            f"them (at most {c['max_step_back_ns'] / 1e3:g} us); issued at that one's time"
        )
    return notes


def print_run(
    console: Console, report: dict[str, Any], detail: bool = True, caption: str = ""
) -> None:
    """One row per variant (``caption`` under it), then (with ``detail``) fio-style latency and
    residency per variant."""
    variants = report["variants"]
    devices = sorted({v["nvme"]["device"] for v in variants if "nvme" in v})
    spans = sorted({v["duration_s"] for v in variants})
    title = Text(
        f"{report['scenario']} on {', '.join(devices)} ({', '.join(f'{s:g}' for s in spans)} s)"
    )
    # Fits 80 columns: light borders, numbers never wrapped or cut, long names fold.
    table = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("variant", overflow="fold", min_width=8)
    for col in ("IOs", "mean us", "p99.9 us", "max us", "woken", "mW", "uJ/IO", "trans."):
        table.add_column(col, justify="right", no_wrap=True)
    for v in report["variants"]:
        lat = v["io"]["all"]
        nvme = v["nvme"]
        count = lat["count"]
        # With CPUs, the tasks' IO reaches the drive too: count what the drive served; the
        # latency columns stay fio jobs' ("-" without any; system_text shows the tasks').
        shown = _num if "cpu" not in v or count else lambda _: "-"
        if "cpu" in v:
            count = nvme["ios"]
        # Variants on different drives: each row says which (the title lists them all).
        name = v["name"] if len(devices) == 1 else f"{v['name']} ({nvme['device']})"
        table.add_row(
            Text(name),
            f"{count:,}",
            shown(lat["mean_us"]),
            shown(lat["p99_9_us"]),
            shown(lat["max_us"]),
            f"{nvme['wake_delayed_ios']:,}",
            f"{nvme['avg_power_mw']:.0f}",
            "-" if nvme["energy_per_io_uj"] is None else _num(nvme["energy_per_io_uj"]),
            f"{nvme['transitions']:,}",
        )
    console.print(table)
    if caption:
        console.print(Text(caption))
    if not detail:
        return
    residency = native.report_rows(report)["residency"]
    for v in report["variants"]:
        console.print()
        console.print(Text(v["name"], style="bold"))
        for direction in ("read", "write"):
            if v["io"][direction]["count"]:
                for line in fio_latency_lines(direction, v["io"]):
                    console.print(line, markup=False)
        nvme = v["nvme"]
        console.print(
            f"  wakeups={nvme['wakeups']} (latency added: "
            f"{nvme['wake_latency_total_ns'] / 1e6:.1f} ms in all), "
            f"avg power={nvme['avg_power_mw']:.1f} mW",
            markup=False,
        )
        rows = [r for r in residency if r["variant"] == v["name"] and r["component"] == "nvme"]
        console.print(residency_table(v["name"], rows))
