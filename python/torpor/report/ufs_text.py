"""Terminal view of UFS runs: latency, bandwidth, time at the low clock and power per variant,
then (with detail) fio-style latency, the devfreq parameters, what the host did, the device's
map cache and HPB's counters, and the device's time and energy per state."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from torpor import native
from torpor.report.apst_text import _num, fio_latency_lines


def print_ufs_run(
    console: Console, report: dict[str, Any], detail: bool = True, caption: str = ""
) -> None:
    variants = report["variants"]
    tables = native.report_rows(report)
    # MB/s (10^6 bytes per second) over each variant's span, as fio's BW in MB/s.
    bw_mbs = {r["variant"]: r["bw_mbs"] for r in tables["summary"].get("io", [])}
    devices = sorted({v["ufs"]["device"] for v in variants})
    spans = sorted({v["duration_s"] for v in variants})
    title = Text(
        f"{report['scenario']} on {', '.join(devices)} ({', '.join(f'{s:g}' for s in spans)} s)"
    )
    # Fits 80 columns: long variant names fold, numbers are never cut.
    table = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("variant", overflow="fold", min_width=8, max_width=14)
    for col in ("mean us", "p99 us", "max us", "MB/s", "low %", "mW", "up/down"):
        table.add_column(col, justify="right", no_wrap=True)
    for v in variants:
        lat, ufs = v["io"]["all"], v["ufs"]
        c = ufs["counters"]
        # With CPUs, these are fio jobs' ("-" without any; system_text shows the tasks' IO).
        shown = _num if "cpu" not in v or lat["count"] else lambda _: "-"
        table.add_row(
            Text(v["name"]),
            shown(lat["mean_us"]),
            shown(lat["p99_us"]),
            shown(lat["max_us"]),
            shown(bw_mbs.get(v["name"]) or 0.0),
            f"{ufs['low_clock_pct']:.1f}",
            f"{ufs['avg_power_mw']:.1f}",
            f"{c['scale_ups']}/{c['scale_downs']}",
        )
    console.print(table)
    if caption:
        console.print(Text(caption))
    if not detail:
        return
    for v in variants:
        ufs = v["ufs"]
        console.print()
        console.print(Text(v["name"], style="bold"))
        for direction in ("read", "write"):
            if v["io"][direction]["count"]:
                for line in fio_latency_lines(direction, v["io"]):
                    console.print(line, markup=False)
        console.print(f"  {policy_line(ufs)}", markup=False)
        c = ufs["counters"]
        console.print(
            f"  evaluations={c['evaluations']} (deferred {c['deferred_polls']}), "
            f"scale up/down={c['scale_ups']}/{c['scale_downs']} "
            f"(refused {c['scale_refusals']}; IO blocked {c['scale_blocked_ns'] / 1e6:.1f} ms), "
            f"suspensions={c['suspensions']}, boost set/removed="
            f"{c['boost_sets']}/{c['boost_removals']}, hibern8 exits={c['hibern8_exits']}",
            markup=False,
        )
        for line in map_lines(ufs):
            console.print(f"  {line}", markup=False)
        rows = [
            r for r in tables["residency"] if r["variant"] == v["name"] and r["component"] == "ufs"
        ]
        console.print(state_table(rows, ufs["energy_mj"]))


def map_lines(ufs: dict[str, Any]) -> list[str]:
    """The device's map cache (with an FTL) and HPB's counters, as ``hpb_stats`` names them."""
    lines = []
    f = ufs.get("ftl")
    if f:
        lines.append(
            f"device map: reads={f['reads']} (HPB {f['hpb_reads']}), map pages hit/missed="
            f"{f['map_hits']}/{f['map_misses']}, map loads served={f['map_reads']}"
        )
    h = ufs.get("hpb")
    if h:
        s, c, m = h["stats"], h["counters"], h["host_memory"]
        lines.append(
            f"HPB ({h['mode']} control; removed from Linux in v6.6, a what-if): "
            f"hit_cnt={s['hit_cnt']} miss_cnt={s['miss_cnt']} ({100 * h['hit_ratio']:.1f} % hit), "
            f"rcmd_noti_cnt={s['rcmd_noti_cnt']} rcmd_active_cnt={s['rcmd_active_cnt']} "
            f"rcmd_inactive_cnt={s['rcmd_inactive_cnt']} map_req_cnt={s['map_req_cnt']} "
            f"umap_req_cnt={s['umap_req_cnt']}; stale entries={c['stale_entries']}, past the "
            f"LU={c['outside_lu']}; host map "
            f"{m['map_bytes'] / 2**20:.1f} MiB (peak {m['peak_map_bytes'] / 2**20:.1f}, "
            f"bound {m['max_map_bytes'] / 2**20:.1f})"
        )
    return lines


def policy_line(ufs: dict[str, Any]) -> str:
    """The clock levels, the devfreq parameters and the boost, on one line."""
    levels = (
        f"{ufs['min_hz'] / 1e6:g} MHz HS-G{ufs['min_gear']} / "
        f"{ufs['max_hz'] / 1e6:g} MHz HS-G{ufs['max_gear']}"
    )
    d = ufs["devfreq"]
    if d is None:
        scaling = "clock scaling off"
    else:
        scaling = (
            f"devfreq {d['profile']}: {d['polling_ms']} ms {d['timer']}, "
            f"{d['upthreshold']}/{d['downdifferential']}, rounding {d['rounding']}"
            + (", suspend_on_no_request" if d["suspend_on_no_request"] else "")
        )
    boost = (
        f"boost {ufs['boost_timeout_ms']} ms ({ufs['boost_notify']})"
        if ufs["boost_timeout_ms"]
        else "boost off"
    )
    return f"{levels}; {scaling}; {boost}"


def state_table(rows: list[dict[str, Any]], energy_mj: float) -> Table:
    """Time and energy per device state (busy, idle, hibern8, clock-gated, scaling): the
    device's rows of the core's residency table, then the device's whole energy."""
    table = Table(box=box.SIMPLE, padding=(0, 1))
    for col in ("state", "time %", "entries", "mJ"):
        table.add_column(col, justify="right" if col != "state" else "left")
    for r in rows:
        table.add_row(
            r["state"],
            f"{r['time_pct']:.2f}",
            f"{r['entries']:,}",
            f"{r['energy_mj']:.3f}",
        )
    table.add_row("all", "100.00", "", f"{energy_mj:.3f}")
    return table
