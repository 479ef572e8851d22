"""``torpor run --fio``: each variant's jobs as fio's normal output prints them.

The layout follows fio's ``stat.c`` (axboe/fio): ``show_thread_status_normal`` (the job's
header), ``show_ddir_status`` (the ``IOPS=`` line, ``clat`` with fio's nsec/usec/msec switch,
the ``clat percentiles`` block) and ``show_group_stats`` (``Run status group 0 (all jobs):``),
with fio's ``num2str`` for every scaled number, its rounding quirks included, and fio's defaults
(``kb_base=1024``, 4 significant figures, bytes per second). The numbers come from the core
(``view::fio``): exact min/max/mean/stdev, the percentile values fio's own histogram gives, and
the job's runtime as fio counts it. torpor has no pid and no date: the header says ``pid=0``
and that the run is simulated. Lines about CPU use, IO depths and latency buckets are left
out: the simulation does not measure what they report. Every job is in group 0, as in a job
file without ``stonewall`` or ``new_group``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

# fio's N2S_* units, as num2str appends them.
NONE, BYTE, BYTEPERSEC = "", "B", "B/s"
SIG_FIGS = 4  # fio's sig_figs default
DIRECTIONS = (("read", "   READ"), ("write", "  WRITE"))


def num2str(num: int, maxlen: int, base: int, pow2: bool, unit: str) -> str:
    """fio's ``num2str``: ``num`` in at most ``maxlen`` digits with an SI or IEC prefix."""
    prefixes = ["", "Ki", "Mi", "Gi", "Ti", "Pi"] if pow2 else ["", "k", "M", "G", "T", "P"]
    thousand = 1024 if pow2 else 1000
    post = 0
    while base > 1:
        base //= thousand
        post += 1
    modulo: int | None = None
    carry = False
    # fio bounds this loop by sizeof() of its prefix array of 6 pointers, i.e. 48.
    while post < 48:
        if len(str(num)) <= maxlen:
            break
        modulo = num % thousand
        num //= thousand
        carry = modulo >= thousand // 2
        post += 1

    def done() -> str:
        return f"{num}{prefixes[post if post < len(prefixes) else 0]}{unit}"

    if modulo is None:
        return done()
    if maxlen - len(str(num)) <= 1:
        if carry:
            num += 1
        return done()
    decimals = maxlen - len(str(num)) - 1
    # fio prints the fraction's digits after "0." and drops a carry into the integer part.
    fraction = f"{modulo / thousand:.{decimals}f}"[2:]
    return f"{num}.{fraction}{prefixes[post]}{unit}"


def display_lat(name: str, lo: int, hi: int, mean: float, dev: float) -> str:
    """fio's ``display_lat``: nsec, switched to usec or msec when all four are large enough."""
    base = "(nsec)"
    if lo > 2_000_000 and hi > 99_999_999 and dev > 1_000_000.0:
        lo, hi, mean, dev, base = lo // 1_000_000, hi // 1_000_000, mean / 1e6, dev / 1e6, "(msec)"
    elif lo > 2000 and hi > 99_999 and dev > 1000.0:
        lo, hi, mean, dev, base = lo // 1000, hi // 1000, mean / 1e3, dev / 1e3, "(usec)"
    return (
        f"    {name} {base}: min={num2str(lo, 6, 1, False, NONE)}, "
        f"max={num2str(hi, 6, 1, False, NONE)}, avg={mean:5.2f}, stdev={dev:5.2f}"
    )


def clat_percentiles(points: list[tuple[float, int]], precision: int = 2) -> Iterator[str]:
    """fio's ``show_clat_percentiles`` for ``[percent, ns]`` points, line by line."""
    values = [v for _, v in points]
    if not values:
        return
    lo, hi = min(values), max(values)
    if lo > 2_000_000 and hi > 99_999_999:
        scale, divisor, unit = 2, 1_000_000, "msec"
    elif lo > 2000 and hi > 99_999:
        scale, divisor, unit = 1, 1000, "usec"
    else:
        scale, divisor, unit = 0, 1, "nsec"
    width = max(5, int(math.log10(hi // divisor) + 1)) if hi // divisor > 0 else 5
    per_line = (80 - 7) // (precision + 10 + width)
    yield f"    clat percentiles ({unit}):"
    line = "     |"
    for j, (pct, value) in enumerate(points):
        if j != 0 and j % per_line == 0:
            line = "     |"
        for _ in range(scale):
            value = (value + 999) // 1000
        last = j == len(points) - 1
        line += f" {pct:{precision + 3}.{precision}f}th=[{value:{width}d}]" + ("" if last else ",")
        if last or j % per_line == per_line - 1:
            yield line


def ddir_status(direction: str, stats: dict[str, Any], runtime_ms: int) -> Iterator[str]:
    """fio's ``show_ddir_status`` for one direction of a job."""
    io_bytes, ios = stats["bytes"], stats["ios"]
    bw = 1000 * io_bytes // runtime_ms
    iops = 1000 * ios // runtime_ms
    yield (
        f"  {direction}: IOPS={num2str(iops, SIG_FIGS, 1, False, NONE)}, "
        f"BW={num2str(bw, SIG_FIGS, 1, True, BYTEPERSEC)} "
        f"({num2str(bw, SIG_FIGS, 1, False, BYTEPERSEC)})"
        f"({num2str(io_bytes, SIG_FIGS, 1, True, BYTE)}/{runtime_ms}msec)"
    )
    stdev = stats["clat_stdev_ns"]
    yield display_lat(
        "clat",
        stats["clat_min_ns"],
        stats["clat_max_ns"],
        stats["clat_mean_ns"],
        math.nan if stdev is None else stdev,
    )
    yield from clat_percentiles([(p, v) for p, v in stats["clat_percentiles_ns"]])


def group_stats(jobs: list[dict[str, Any]]) -> Iterator[str]:
    """fio's ``__show_run_stats`` group sums and ``show_group_stats``, for group 0."""
    yield ""
    yield "Run status group 0 (all jobs):"
    for key, label in DIRECTIONS:
        runs = [(j["runtime_ms"], j[key]["bytes"]) for j in jobs if j[key] and j["runtime_ms"]]
        if not runs:
            continue
        min_run = min(r for r, _ in runs)
        max_run = max(r for r, _ in runs)
        bws = [b * 1000 // r for r, b in runs]
        total = sum(b for _, b in runs)
        agg = total * 1000 // max_run

        def both(n: int, unit: str) -> tuple[str, str]:
            return num2str(n, SIG_FIGS, 1, True, unit), num2str(n, SIG_FIGS, 1, False, unit)

        agg_p, agg_alt = both(agg, BYTEPERSEC)
        min_p, min_alt = both(min(bws), BYTEPERSEC)
        max_p, max_alt = both(max(bws), BYTEPERSEC)
        io_p, io_alt = both(total, BYTE)
        yield (
            f"{label}: bw={agg_p} ({agg_alt}), {min_p}-{max_p} ({min_alt}-{max_alt}), "
            f"io={io_p} ({io_alt}), run={min_run}-{max_run}msec"
        )


def variant_lines(variant: dict[str, Any]) -> Iterator[str]:
    """One variant's jobs and their group, as fio prints them."""
    jobs = [(w["name"], w["fio"]) for w in variant["io"]["workloads"] if "fio" in w]
    for name, fio in jobs:
        if not (fio["read"] or fio["write"]):
            continue
        yield f"{name}: (groupid=0, jobs=1): err= 0: pid=0: simulated by torpor"
        for key, _ in DIRECTIONS:
            if fio[key] and fio["runtime_ms"]:
                yield from ddir_status(key, fio[key], fio["runtime_ms"])
    yield from group_stats([fio for _, fio in jobs])


def fio_text(report: dict[str, Any]) -> str:
    """The whole ``--fio`` output of a ``torpor run`` report: a line naming each variant, then
    its jobs as fio prints them."""
    out: list[str] = []
    for v in report["variants"]:
        out.append(f"variant {v['name']}:")
        out.extend(variant_lines(v))
        out.append("")
    return "\n".join(out)


def has_jobs(report: dict[str, Any]) -> bool:
    """Whether any variant ran a fio-like job (the only workloads fio's output describes)."""
    return any("fio" in w for v in report["variants"] for w in v["io"]["workloads"])
