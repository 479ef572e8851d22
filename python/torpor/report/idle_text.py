"""`torpor idle stats` as text: idlestat's boxed C-state table, its P-state table (`-p`), and
its comparison report (each row followed by its change from a baseline trace)."""

from __future__ import annotations

# Imported by the console script's fast path: no `typing` at run time (~8 ms).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

RULE = "-" * 80
HEADER = "| C-state  |   min    |   max    |   avg    |   total  | hits  |  over | under |"
TIMES = ("min_us", "max_us", "avg_us", "total_us")


def factored_time(us: float) -> str:
    """A duration as idlestat prints it: whole us below 1 ms, then ms, then s, two decimals."""
    if us < 1000:
        return f"{us:.0f}us"
    if us < 1_000_000:
        return f"{us / 1000:.2f}ms"
    return f"{us / 1_000_000:.2f}s"


def _section_head(name: str, width: int) -> str:
    """A section's title line, indented by kind as idlestat's ``default_cpu_header`` does."""
    indent = 0 if name.startswith("cluster") else 5 if "core" in name else 12
    return f"| {' ' * indent}{name:<{width - 4 - indent}} |"


def stats_text(stats: dict[str, Any], cstates: bool = True, pstates: bool = False) -> str:
    """idlestat's boxed C-state table and (``pstates``) its P-state table, then what torpor
    assumed and dropped for each, and how the trace was read."""
    lines = []
    if cstates:
        lines += [RULE, HEADER]
        for name, rows in stats["sections"].items():
            lines += [RULE, _section_head(name, 80), RULE]
            lines += [_row_line(r) for r in rows]
        lines.append(RULE)
    if pstates:
        lines += pstates_table(stats["pstates"])
    if cstates:
        lines += _cstates_summary(stats)
    if pstates:
        lines += pstates_summary(stats["pstates"])
    t = stats["trace"]
    lines.append(read_as(stats["format"], t))
    lines += trace_warnings(t)
    if t["unknown_events"]:
        skipped = ", ".join(f"{k} {v}" for k, v in t["unknown_events"].items())
        lines.append(f"other events skipped: {skipped}")
    lines += [_fit(f"note: {n}") for n in stats["notes"]]
    return "\n".join(lines)


def _fit(line: str) -> str:
    """``line`` wrapped at 80 columns, continued lines indented (long words kept whole)."""
    if len(line) <= 80:
        return line
    import textwrap

    return textwrap.fill(
        line, 80, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
    )


def _cstates_summary(stats: dict[str, Any]) -> list[str]:
    """The C-state legend, the span and what the C-state rows left out."""
    lines = []
    if stats["states"]:
        legend = ", ".join(
            f"{s['index']} {s['name'] or '(null)'}"
            + (f" exit {s['exit_latency_us']}us" if s["exit_latency_us"] is not None else "")
            + (
                f" residency {s['target_residency_us']}us"
                if s["target_residency_us"] is not None
                else ""
            )
            for s in stats["states"]
        )
        lines.append(f"C-states ({stats['states_from']}): {legend}")
    first, last = stats["first_ns"], stats["last_ns"]
    span = (last - first) / 1e9 if first is not None else 0.0
    lines.append(f"{stats['cpu_idle_events']} cpu_idle events over {span:.6f} s")
    d = stats["dropped"]
    lines.append(
        f"left out: {d['exits_before_entry']} exits before a first entry, "
        f"{d['non_positive_intervals']} intervals of zero or negative length, "
        f"{d['open_at_end']} intervals still open at the end"
    )
    return lines


PRULE = "-" * 64
PHEADER = "| P-state  |   min    |   max    |   avg    |   total  | hits  |"


def factored_freq(khz: int) -> str:
    """A frequency as idlestat prints one from a trace (in kHz): MHz below 1 GHz, then GHz, two
    decimals; below 1 MHz in kHz (idlestat labels those ``Hz``)."""
    if khz < 1000:
        return f"{khz}kHz"
    if khz < 1_000_000:
        return f"{khz / 1000:.2f}MHz"
    return f"{khz / 1_000_000:.2f}GHz"


def pstates_table(p: dict[str, Any]) -> list[str]:
    """idlestat's boxed P-state table (64 columns; a frequency in MHz overflows its column by
    one character, as in idlestat)."""
    lines = [PRULE, PHEADER]
    for name, rows in p["sections"].items():
        lines += [PRULE, _section_head(name, 64), PRULE]
        for r in rows:
            times = " | ".join(f"{factored_time(r[k]):>8}" for k in TIMES)
            lines.append(f"| {factored_freq(r['freq_khz']):>8} | {times} | {r['hits']:5} |")
    lines.append(PRULE)
    return lines


def pstates_summary(p: dict[str, Any]) -> list[str]:
    """The P-state event count and the running time no row holds."""
    lines = [f"{p['cpu_frequency_events']} cpu_frequency events"]
    if not p["cpu_frequency_events"]:
        lines.append("no P-states: the trace has no cpu_frequency events")
    for u in p["unknown_frequency"]:
        lines.append(
            f"cpu{u['cpu']}: {factored_time(u['total_ns'] / 1000)} running in "
            f"{u['intervals']} interval(s) before its first cpu_frequency event: frequency "
            "unknown, in no row"
        )
    d = p["dropped"]
    left = (
        f"P-states left out: {d['non_positive_intervals']} intervals of zero or negative "
        f"length, {d['open_at_end']} intervals still open at the end"
    )
    if d["beyond_max_frequencies"]:
        left += (
            f", {d['beyond_max_frequencies']} intervals "
            f"({factored_time(d['beyond_max_frequencies_ns'] / 1000)}) at frequencies beyond "
            "a section's first 128"
        )
    lines.append(left)
    return [_fit(line) for line in lines]


FORMATS = {
    "raw": "ftrace text (the kernel's trace file)",
    "trace-cmd": "`trace-cmd report` text",
    "idlestat": "an idlestat trace file",
    "trace-dat": "trace-cmd's binary trace.dat",
    "perfetto": "a Perfetto protobuf trace",
}


def read_as(fmt: str, t: dict[str, Any]) -> str:
    """What the trace was read as (told by its content), and what a trace.dat said of itself."""
    line = f"read as {FORMATS.get(fmt, fmt)}"
    if t.get("packed"):
        line += f", unpacked from {t['packed']}"
    d = t.get("trace_dat")
    if d:
        parts = [
            f"version {d['version']}",
            "big-endian" if d["big_endian"] else "little-endian",
            d["compression"] or "uncompressed",
            f"clock {d['clock'] or 'not recorded'}",
            f"{d['pages']} pages of {d['page_bytes']} bytes from {d['cpus_with_data']} CPUs",
        ]
        line += f" ({', '.join(parts)})"
        if d["instances_skipped"]:
            line += f"; {d['instances_skipped']} other trace instances not read"
    p = t.get("perfetto")
    if p:
        line += (
            f" ({p['packets']} packets, {p['compressed_packets']} compressed, "
            f"{p['ftrace_bundles']} ftrace bundles from {p['cpus_with_data']} CPUs, "
            f"clock {p['clock']})"
        )
    return line


def trace_warnings(t: dict[str, Any]) -> list[str]:
    """What the parser met in a trace that may bend the figures (its counts, as `idle stats`
    and `idle replay` both report them)."""
    lines = []
    if t["backwards_timestamps"]:
        first = t["first_backwards_line"]
        lines.append(
            f"warning: {t['backwards_timestamps']} timestamps go backwards on their CPU"
            + (f" (first at line {first})" if first is not None else "")
        )
    if t["truncated_last_line"]:
        lines.append("warning: the last line is cut short and was skipped")
    if t["lost_markers"]:
        uncounted = (t.get("trace_dat") or {}).get("lost_uncounted_pages", 0)
        lines.append(
            f"warning: {t['lost_markers']} lost-events markers ({t['lost_events']} events lost"
            + (f"; {uncounted} markers without a count" if uncounted else "")
            + ")"
        )
    lines += perfetto_warnings(t.get("perfetto"))
    if t["buffer_started_markers"]:
        lines.append(
            f"warning: {t['buffer_started_markers']} `buffer started` markers "
            "(earlier events were overwritten)"
        )
    return lines


def perfetto_warnings(p: dict[str, Any] | None) -> list[str]:
    """What a Perfetto trace's reader dropped or could not place (its counts)."""
    if not p:
        return []
    said = [
        ("dropped_packets", "packets say the packet before them was dropped"),
        ("late_events", "events came after later events of other CPUs (merge queue full)"),
        ("compact_switches_skipped", "compact sched_switch events skipped (task before unknown)"),
        ("unresolved_functions", "timer functions without a kernel symbol"),
        ("symbols_dropped", "interned kernel symbols dropped (too many)"),
        ("names_overflow", "names past the 65,536 kept"),
    ]
    # The kernel's overruns are the lost events of the lost-events line.
    return [f"warning: {p[k]} {what}" for k, what in said if p.get(k)]


def factored_delta(us: float) -> str:
    """A change of duration as idlestat's comparison report prints it: signed, whole us below
    1 ms, then ms and s with one decimal."""
    if abs(us) < 1000:
        return f"{us:+.0f}us"
    if abs(us) < 1_000_000:
        return f"{us / 1000:+.1f}ms"
    return f"{us / 1_000_000:+.1f}s"


def _int_delta(n: int) -> str:
    return f" {n:+5d} |" if n else f" {n:5d} |"


def _row_line(r: dict[str, Any]) -> str:
    times = " | ".join(f"{factored_time(r[k]):>8}" for k in TIMES)
    over = "-" if r["over"] is None else r["over"]
    under = "-" if r["under"] is None else r["under"]
    return f"| {r['state']:>8} | {times} | {r['hits']:5} | {over:>5} | {under:>5} |"


def delta(row: dict[str, Any], base: dict[str, Any] | None) -> dict[str, Any]:
    """``row`` minus its baseline row (a state the baseline never entered counts as zeros)."""
    b = base or {}
    out: dict[str, Any] = {"state": row["state"]}
    for k in (*TIMES, "hits", "over", "under"):
        mine, theirs = row.get(k), b.get(k, 0)
        out[k] = None if mine is None or theirs is None else mine - theirs
    return out


def deltas(stats: dict[str, Any], baseline: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per section and state of ``stats``, its change from ``baseline`` (matched by section
    and state name)."""
    out = {}
    for name, rows in stats["sections"].items():
        base_rows = {r["state"]: r for r in baseline["sections"].get(name, [])}
        out[name] = [delta(r, base_rows.get(r["state"])) for r in rows]
    return out


PTIMES = (*TIMES, "hits")


def pstate_deltas(
    stats: dict[str, Any], baseline: dict[str, Any]
) -> dict[str, list[dict[str, Any]]]:
    """Per section of ``stats`` (then those only ``baseline`` has) and per frequency of either
    (idlestat's ``merge_pstates``), ``stats``'s row (zeros where it has none) as ``row`` and its
    change from ``baseline``'s (zeros where that has none) as ``delta``; the change of ``min_us``
    is ``None`` where either side has no interval (idlestat leaves that cell blank: its empty
    row's minimum is ``DBL_MAX``). Rows are paired by frequency in every section (idlestat
    pairs a cluster's or core's rows by position, so a frequency only one trace has shifts
    the pairs after it)."""
    mine, theirs = stats["pstates"]["sections"], baseline["pstates"]["sections"]
    out: dict[str, list[dict[str, Any]]] = {}
    for name in [*mine, *(n for n in theirs if n not in mine)]:
        rows = {r["freq_khz"]: r for r in mine.get(name, [])}
        base = {r["freq_khz"]: r for r in theirs.get(name, [])}
        out[name] = []
        for khz in sorted({*rows, *base}):
            row = rows.get(khz) or {"freq_khz": khz, **dict.fromkeys(PTIMES, 0)}
            b = base.get(khz, {})
            change: dict[str, Any] = {k: row[k] - b.get(k, 0) for k in PTIMES}
            if not (row["hits"] and b.get("hits")):
                change["min_us"] = None
            out[name].append({"row": row, "delta": {"freq_khz": khz, **change}})
    return out


def pstates_comparison_lines(stats: dict[str, Any], baseline: dict[str, Any]) -> list[str]:
    """idlestat's P-state comparison report: each frequency's row, then its change."""
    lines = [PRULE, PHEADER]
    for name, pairs in pstate_deltas(stats, baseline).items():
        lines += [PRULE, _section_head(name, 64), PRULE]
        for pair in pairs:
            r, d = pair["row"], pair["delta"]
            times = " | ".join(f"{factored_time(r[k]):>8}" for k in TIMES)
            lines.append(f"| {factored_freq(r['freq_khz']):>8} | {times} | {r['hits']:5} |")
            changes = " | ".join(
                " " * 8 if d[k] is None else f"{factored_delta(d[k]):>8}" for k in TIMES
            )
            lines.append(f"|          | {changes} |{_int_delta(d['hits'])}")
    lines.append(PRULE)
    return lines


def comparison_text(
    stats: dict[str, Any], baseline: dict[str, Any], cstates: bool = True, pstates: bool = False
) -> str:
    """idlestat's comparison report: each row, then its change from the baseline; C-states,
    and (``pstates``) P-states."""
    if not cstates:
        return "\n".join(pstates_comparison_lines(stats, baseline))
    lines = [RULE, HEADER]
    changes = deltas(stats, baseline)
    for name, rows in stats["sections"].items():
        lines += [RULE, _section_head(name, 80), RULE]
        for r, d in zip(rows, changes[name], strict=True):
            lines.append(_row_line(r))
            times = " | ".join(f"{factored_delta(d[k]):>8}" for k in TIMES)
            counts = "".join(
                _int_delta(d[k]) if d[k] is not None else "     - |"
                for k in ("hits", "over", "under")
            )
            lines.append(f"|          | {times} |{counts}")
    lines.append(RULE)
    if pstates:
        lines += pstates_comparison_lines(stats, baseline)
    return "\n".join(lines)
