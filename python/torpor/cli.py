"""The ``torpor`` command line.

Every command prints a human table by default and machine JSON with ``--json``. Bad input is
one line, ``torpor: error: FILE:LINE: what was expected``, with exit code 2 and no traceback
unless ``--debug`` is given; so is a bad option or argument (click's usage errors, folded into
the same one line). Ctrl-C stops a run within a fraction of a second: ``torpor: interrupted``,
exit code 130. User text (file names, variant names, model strings) is never read as Rich
markup: the consoles have markup off.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console

from torpor import InputError, __version__, native
from torpor.files import output_dir, shown_path, write_file, write_files
from torpor.printable import printable, printable_lines, printable_tree
from torpor.progress import RunProgress
from torpor.report import (
    apst_text,
    bench_text,
    devices_text,
    idle_replay_text,
    idle_text,
    qos_text,
    run_text,
)
from torpor.reproduction import AREAS as REPRODUCE_AREAS

# The kernel's APST defaults and the builders' names, as the core defines them.
APST_DEFAULTS = native.apst_defaults()
APST_PARAMS = APST_DEFAULTS["params"]

# Wide enough for the run table when output goes to a file or a pipe (Rich assumes 80).
console = Console(highlight=False, markup=False, width=None if sys.stdout.isatty() else 140)

# The largest value of the APST module parameters (unsigned 64-bit in the core).
U64_MAX = 2**64 - 1


class U64(click.IntRange):
    """An integer from ``min`` to the core's unsigned 64-bit ceiling, whose help says ``x>=min``
    rather than printing the 20-digit ceiling."""

    def __init__(self, min: int = 0) -> None:
        super().__init__(min=min, max=U64_MAX)
        self.least = min

    def _describe_range(self) -> str:
        return f"x>={self.least}"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.INT.convert(value, param, ctx)
        if number < self.least:
            self.fail(f"{number} is below {self.least}.", param, ctx)
        if number > U64_MAX:
            self.fail(f"{number} is above the largest value, {U64_MAX} (2^64 - 1).", param, ctx)
        return number


def _error_line(message: str) -> str:
    """``message`` on one line: click's usage errors and OS messages can hold newlines."""
    return " ".join(message.split())


def _second_interrupt_exits() -> None:
    """After a first Ctrl-C, a second one ends the process at once (exit 130), without
    waiting for threads winding down (a sweep's points in flight)."""
    import os
    import signal

    signal.signal(signal.SIGINT, lambda *_: os._exit(130))


class TorporGroup(click.Group):
    """Turns bad input, bad options and Ctrl-C into one line on stderr."""

    def main(self, *args: Any, **kwargs: Any) -> NoReturn:
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
            # Without standalone mode click returns `ctx.exit(n)`'s code instead of exiting.
            sys.exit(code if isinstance(code, int) else 0)
        except click.exceptions.NoArgsIsHelpError as e:
            click.echo(e.ctx.get_help())
            sys.exit(2)
        except click.UsageError as e:
            click.echo(f"torpor: error: {_error_line(e.format_message())}", err=True)
            sys.exit(2)
        except click.ClickException as e:
            click.echo(f"torpor: error: {_error_line(e.format_message())}", err=True)
            sys.exit(e.exit_code)
        except (click.Abort, KeyboardInterrupt):
            click.echo("torpor: interrupted", err=True)
            _second_interrupt_exits()
            sys.exit(130)

    def invoke(self, ctx: click.Context) -> Any:
        def debug() -> bool:
            # Set by the group's own callback, which runs inside super().invoke().
            return bool(ctx.obj and ctx.obj.get("debug"))

        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            # Caught here, before click's own handler prints a bare newline.
            click.echo("torpor: interrupted", err=True)
            _second_interrupt_exits()
            ctx.exit(130)
        except InputError as e:
            if debug():
                raise
            click.echo(f"torpor: error: {e}", err=True)
            ctx.exit(2)
        except OSError as e:
            if debug():
                raise
            # Files torpor writes name themselves (files.write_file); what is left is stdout.
            where = shown_path(e.filename) if e.filename else "<stdout>"
            click.echo(f"torpor: error: {where}: {_error_line(e.strerror or str(e))}", err=True)
            ctx.exit(2)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False))


@click.group(cls=TorporGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="torpor")
@click.option("--debug", is_flag=True, help="Show the full traceback on errors.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """torpor: what Linux latency-vs-power policies do to latency and energy.

    \b
    Examples:
      torpor devices
      torpor probe --out my-machine.toml
      torpor apst wdc-pc-sn530-256gb --algorithm legacy
      torpor run scenarios/apst-sn530-workflow7.toml
      torpor reproduce apst --out out/apst
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def devices(as_json: bool) -> None:
    """List the built-in device presets.

    \b
    Example:
      torpor devices --json
    """
    rows = native.presets()
    cpus = native.cpu_presets()
    ufs = native.ufs_presets()
    if as_json:
        emit_json(
            [{"kind": "nvme", **r} for r in rows]
            + [{"kind": "cpu", **c} for c in cpus]
            + [{"kind": "ufs", **u} for u in ufs]
        )
        return
    devices_text.print_devices(console, rows, cpus, ufs)


@main.command()
@click.option(
    "--sysfs-root",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("/sys"),
    show_default=True,
    help="Where sysfs is mounted (a copied tree works too).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the platform TOML here instead of printing it.",
)
def probe(sysfs_root: Path, out: Path | None) -> None:
    """Read this machine's CPU platform from sysfs and print it as a platform TOML.

    Reads each CPU's cpuidle states (name, latency, residency, power, disable), the cpuidle
    governor, each CPU's PM QoS resume latency, its topology and capacity; CPUs with the same
    package, cluster, capacity and states become one [[cluster]]. The file's header says what
    was read and what had to be assumed (docs/cpu-platform.md).

    \b
    Examples:
      torpor probe
      torpor probe --out my-laptop.toml
      torpor probe --sysfs-root /mnt/other-machine/sys
    """
    text = native.probe_sysfs(sysfs_root)
    if out is None:
        click.echo(text, nl=False)
        return
    write_file(out, text)
    click.echo(f"wrote {shown_path(out)}", err=True)


@main.command()
@click.argument("device")
@click.option(
    "--algorithm",
    type=click.Choice(APST_DEFAULTS["algorithms"]),
    default=APST_PARAMS["algorithm"],
    show_default=True,
    help="Kernel table builder: v5.14+ (commit ebd8a93aa4f5), legacy (v4.12-v5.13, and "
    "v5.14's fallback) or v4.11 (the first, which limits ENLAT + EXLAT).",
)
@click.option(
    "--primary-timeout-ms",
    type=U64(),
    metavar="MS",
    default=APST_PARAMS["primary_timeout_ms"],
    show_default=True,
    help="nvme_core.apst_primary_timeout_ms; 0 falls back to the legacy formula.",
)
@click.option(
    "--secondary-timeout-ms",
    type=U64(),
    metavar="MS",
    default=APST_PARAMS["secondary_timeout_ms"],
    show_default=True,
    help="nvme_core.apst_secondary_timeout_ms; 0 disables the secondary target.",
)
@click.option(
    "--primary-latency-tol-us",
    type=U64(),
    metavar="US",
    default=APST_PARAMS["primary_latency_tol_us"],
    show_default=True,
    help="nvme_core.apst_primary_latency_tol_us (entry + exit latency); 0: legacy formula.",
)
@click.option(
    "--secondary-latency-tol-us",
    type=U64(),
    metavar="US",
    default=APST_PARAMS["secondary_latency_tol_us"],
    show_default=True,
    help="nvme_core.apst_secondary_latency_tol_us (entry + exit latency).",
)
@click.option(
    "--ps-max-latency-us",
    type=U64(),
    metavar="US",
    default=None,
    help="The controller's latency tolerance (default_ps_max_latency_us); 0 disables APST. "
    "Default: the algorithm's releases' (100000; 25000 for v4.11).",
)
@click.option("--no-deepest-ps", is_flag=True, help="Apply the NVME_QUIRK_NO_DEEPEST_PS quirk.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
@click.option(
    "--emit",
    type=click.Choice(["nvme-cli", "kernel", "sysfs"]),
    help="Print how to program this table: an nvme set-feature command, module parameters "
    "(boot), or sysfs writes (a running system).",
)
@click.option(
    "--data-file",
    metavar="FILE",
    default="apst-table.bin",
    show_default=True,
    help="Where --emit nvme-cli writes the 256-byte table.",
)
@click.option(
    "--nvme-device",
    metavar="DEVICE",
    default="/dev/nvme0",
    show_default=True,
    help="For --emit nvme-cli and sysfs.",
)
@click.option("--force", is_flag=True, help="Let --emit nvme-cli overwrite --data-file.")
@click.option(
    "--entries", is_flag=True, help="Also print the 32 entries as `nvme get-feature -H` does."
)
def apst(
    device: str,
    as_json: bool,
    emit: str | None,
    data_file: str,
    nvme_device: str,
    force: bool,
    entries: bool,
    **kw: Any,
) -> None:
    """Build the APST table Linux would program for DEVICE.

    DEVICE is a preset id (see `torpor devices`), `nvme id-ctrl -o json` output (nvme-cli 1.x
    or 2.x) or `smartctl -a` text, or `-` to read either from standard input.

    \b
    Examples:
      torpor apst wdc-pc-sn530-256gb
      torpor apst id-ctrl.json --algorithm legacy --json
      nvme id-ctrl -o json /dev/nvme0 | torpor apst -
      torpor apst smartctl.txt --emit nvme-cli --data-file /tmp/apst.bin
    """
    if emit and as_json:
        raise click.UsageError("--json and --emit print different things; give one of them")
    if emit == "nvme-cli" and not force and Path(data_file).exists():
        raise InputError(
            f"{shown_path(data_file)}: exists; --emit nvme-cli does not overwrite it without "
            "--force (or choose another --data-file)"
        )
    params = {
        "algorithm": kw["algorithm"],
        "ps_max_latency_us": kw["ps_max_latency_us"],
        "primary_timeout_ms": kw["primary_timeout_ms"],
        "secondary_timeout_ms": kw["secondary_timeout_ms"],
        "primary_latency_tol_us": kw["primary_latency_tol_us"],
        "secondary_latency_tol_us": kw["secondary_latency_tol_us"],
        "no_deepest_ps": kw["no_deepest_ps"],
    }
    raw = native.apst(device, params, shown_path(data_file), shown_path(nvme_device))
    # The tool's own multi-line texts keep their layout; everything else prints on one line.
    texts = {k: printable_lines(raw[k]) for k, v in raw.items() if isinstance(v, str) and "\n" in v}
    result = {**printable_tree(raw), **texts}
    for note in result["device"]["notes"]:
        click.echo(f"torpor: note: {note}", err=True)
    if emit == "nvme-cli":
        if not result["sent"]:
            raise click.ClickException(f"the kernel sends no APST table here: {result['reason']}")
        write_file(Path(data_file), bytes(result["table_bytes"]))
        click.echo(result["nvme_cli_command"])
        click.echo(f"# wrote {shown_path(data_file)} (256 bytes: 32 little-endian 64-bit entries)")
        return
    if emit == "kernel":
        click.echo(result["kernel_params"])
        return
    if emit == "sysfs":
        click.echo(result["sysfs_commands"], nl=False)
        return
    if as_json:
        if not result["sent"]:
            click.echo(f"torpor: note: {result['reason']}", err=True)
        emit_json(result["table"])
        return
    apst_text.print_apst(console, result, entries=entries)


@main.command()
@click.argument("scenario")
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@click.option("--brief", is_flag=True, help="Only the summary table, no per-variant detail.")
@click.option(
    "--report",
    "report_dir",
    metavar="DIR",
    help="Also write DIR/results.json (the full report) and DIR/report.html (tables and plots).",
)
@click.option(
    "--max-ios",
    type=U64(min=1),
    metavar="N",
    default=native.DEFAULT_MAX_IOS,
    show_default=True,
    help="Refuse a scenario whose jobs could issue more IOs than this (about a minute of "
    "wall time per 2e9).",
)
@click.option(
    "--ftrace",
    "ftrace_dir",
    metavar="DIR",
    help="CPU scenarios: also write each variant's idle trace as DIR/<variant>.trace "
    "(idlestat's trace file; docs/ftrace-writer.md).",
)
@click.option(
    "--fio",
    "as_fio",
    is_flag=True,
    help="Print each variant's jobs as fio prints them: clat, percentiles, IOPS and BW per job, "
    "and the group's run status (docs/fio-jobs.md).",
)
def run(
    scenario: str,
    as_json: bool,
    brief: bool,
    max_ios: int,
    report_dir: str | None,
    ftrace_dir: str | None,
    as_fio: bool,
) -> None:
    """Run a scenario file and print each variant's latency and power.

    A run that lasts more than a second shows its progress on a terminal; Ctrl-C stops it.

    \b
    Example:
      torpor run scenarios/apst-sn530-workflow7.toml
    """
    if as_fio and as_json:
        raise click.UsageError("--fio and --json each choose the output; give one")
    traces = str(output_dir(ftrace_dir, "--ftrace")) if ftrace_dir else None
    with RunProgress() as progress:
        report = native.run_scenario_file(
            scenario, max_ios=max_ios, progress=progress.update, ftrace_dir=traces
        )
    if report_dir:
        from torpor.report import html

        out = output_dir(report_dir, "--report")
        page = html.run_page(report)
        write_files(
            [
                (out / "results.json", json.dumps(report, indent=1) + "\n"),
                (out / "report.html", page),
            ]
        )
    from torpor.report.notes import run_notes

    # Names from the scenario (variants, jobs, tasks) reach the terminal escaped; --json
    # prints them as they are.
    shown = printable_tree(report)
    for note in run_notes(shown):
        click.echo(f"torpor: note: {note}", err=True)
    if as_json:
        emit_json(report)
        return
    report = shown
    if as_fio:
        text = native.fio_text(report)
        if text is None:
            raise click.UsageError(
                f"{scenario}: --fio prints fio jobs' results; this scenario runs no job "
                "(`[[workload.job]]`, `[workload] fio` or `apst_workflow`)"
            )
        click.echo(text, nl=False)
        return
    run_text.print_run(console, report, detail=not brief)


@main.command()
@click.argument("scenario")
@click.option("--json", "as_json", is_flag=True, help="Print the timeline as JSON.")
def qos(scenario: str, as_json: bool) -> None:
    """Show a scenario's PM QoS constraints over its run, variant by variant.

    CPUs: at the start and after each [[qos.request]] (and each task's held
    cpu_dma_latency), the global limit, each CPU's latency_req and the idle states its
    governor may still choose (exit latency <= latency_req; state 0 always), and the
    cluster states each cluster may still enter. NVMe: the controller's latency tolerance,
    ps_max_latency_us and the power states its APST table targets. Nothing is simulated.

    \b
    Example:
      torpor qos scenarios/qos-msm8916.toml
    """
    view = native.qos_view(scenario)
    if as_json:
        emit_json(view)
        return
    left_out = qos_text.print_qos(console, printable_tree(view))
    if left_out:
        click.echo(
            f"torpor: note: {left_out} more steps not shown (the tables show the first "
            f"{qos_text.SHOWN_STEPS}); --json lists them all",
            err=True,
        )


@main.command()
@click.argument("area", type=click.Choice([*REPRODUCE_AREAS, "all"]))
@click.option(
    "--out", "out_dir", metavar="DIR", default="out", show_default=True, help="Report directory."
)
@click.option("--json", "as_json", is_flag=True, help="Print results.json to stdout as well.")
@click.option(
    "--traces",
    "traces_dir",
    type=click.Path(exists=True, file_okay=False),
    help="devfreq and hpb: a folder with the Pixel 6a block traces of acsl-technion/"
    "MobileBlockIOTraces (not shipped: they carry no licence), replayed with the boost off, "
    "at the next poll and at once (devfreq), and with HPB off and on (hpb).",
)
def reproduce(area: str, out_dir: str, as_json: bool, traces_dir: str | None) -> None:
    """Re-run a built-in experiment and check the seed document's claims.

    Writes OUT/results.json, OUT/report.md and OUT/report.html.

    \b
    Example:
      torpor reproduce apst --out out/apst
      torpor reproduce devfreq --out out/devfreq --traces MobileBlockIOTraces/pixel6a
      torpor reproduce hpb --out out/hpb

    hpb models UFS Host Performance Booster as the Linux driver had it until v6.5 (HPB was
    removed in v6.6): a what-if.
    """
    from torpor import reproduction as rep

    out = output_dir(out_dir, "--out")
    traces = Path(traces_dir) if traces_dir else None
    results = rep.run(area, out, console=None if as_json else console, traces=traces)
    if as_json:
        emit_json(results)


@main.command()
@click.argument("sweep_file")
@click.option(
    "--out",
    "out_file",
    metavar="FILE",
    help="Write every row to FILE.csv, FILE.json or FILE.parquet.",
)
@click.option(
    "--report",
    "report_file",
    metavar="FILE",
    help="Write a page with the constraints, the recommendation and the Pareto plot to FILE.html.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1, max=256),
    metavar="N",
    default=2,
    show_default=True,
    help="Threads running points at once.",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    help="Run the points on this dask.distributed scheduler (e.g. tcp://10.0.0.5:8786) "
    "instead of local threads; the rows are the same.",
)
def sweep(
    sweep_file: str,
    out_file: str | None,
    report_file: str | None,
    workers: int,
    scheduler: str | None,
) -> None:
    """Run a scenario over a grid or sample of settings and recommend one.

    Prints the Pareto front of the objectives among the points that meet the constraints,
    the recommended setting (the front's best by the first objective) as kernel parameters,
    and what it buys against the scenario as written.

    \b
    Example:
      torpor sweep scenarios/apst-sn530-sweep.toml --out sweep.csv
      torpor sweep scenarios/apst-sn530-sweep.toml --scheduler tcp://127.0.0.1:8786
    """
    import pandas as pd
    from rich.progress import Progress

    from torpor import sweeps as sw
    from torpor.report import sweep_text

    if out_file and Path(out_file).suffix not in (".csv", ".json", ".parquet"):
        raise click.UsageError("--out: expected a file name ending in .csv, .json or .parquet")
    plan = sw.load(sweep_file)
    count = len(sw.points(plan))
    stderr = Console(stderr=True)
    if stderr.is_terminal:
        with Progress(console=stderr, transient=True) as progress:
            task = progress.add_task(f"sweep: {count} points", total=count)
            rows = sw.run(plan, workers, lambda: progress.advance(task), scheduler)
    else:
        # No bar where nobody sees it: stderr keeps only the lines a script reads.
        rows = sw.run(plan, workers, None, scheduler)
    ranked = sw.rank(plan, rows)
    if out_file:
        frame = pd.DataFrame(rows)
        data: str | bytes
        if out_file.endswith(".csv"):
            data = frame.to_csv(index=False)
        elif out_file.endswith(".parquet"):
            data = frame.to_parquet(None, index=False)
        else:
            data = frame.to_json(orient="records", indent=1)
        write_file(Path(out_file), data)
    failed = [r for r in rows if r.get("error")]
    for r in failed[:5]:
        click.echo(f"torpor: note: point {r['point']} failed: {printable(r['error'])}", err=True)
    feasible, front = ranked.feasible, ranked.front
    axes = [a.path for a in plan.axes]
    console.print(sweep_text.sweep_table(shown_path(sweep_file), plan, rows, ranked))
    lines = ranked.lines
    if report_file:
        from torpor.report import html

        page = html.sweep_page(
            sweep_file, rows, feasible, front, plan.objectives, axes, plan.constraints, lines
        )
        write_file(Path(report_file), page)
    if ranked.best is None:
        breaks = sw.broken(ranked.baseline, plan)
        if breaks:
            console.print(f"As written: breaks {'; '.join(breaks)}.")
        console.print("No point meets the constraints: nothing to recommend.")
        return
    # Plain echo: these lines are copied into a shell and must not wrap.
    for line in [*lines, *ranked.apply]:
        click.echo(printable(line))


@main.command()
@click.option(
    "--seconds",
    type=float,
    default=1.0,
    show_default=True,
    help="Time budget per benchmark, in seconds (at most 3600).",
)
@click.option("--json", "as_json", is_flag=True)
def bench(seconds: float, as_json: bool) -> None:
    """Measure the simulator's speed (simulated events per wall-clock second).

    \b
    Example:
      torpor bench --seconds 2
    """
    rows = native.bench(seconds)
    if as_json:
        emit_json(rows)
        return
    console.print(bench_text.bench_table(rows))


@main.group()
def idle() -> None:
    """CPU idle: governors, their decisions and idle statistics of real traces."""


@idle.command()
@click.argument("sequence")
@click.option(
    "--governor",
    required=True,
    metavar="NAME[@VERSION]",
    help="menu, menu@6.6, teo, teo@6.6, teo-util, ladder, haltpoll, oracle, ... "
    "(`torpor idle governors` lists them).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON line per step, nothing else.")
def decide(sequence: str, governor: str, as_json: bool) -> None:
    """Run a governor alone on an idle-decide sequence: one decision per step.

    SEQUENCE is JSON lines (docs/idle-decide.md): the platform, then one line per select
    with what the kernel helpers returned. `-` reads standard input.

    \b
    Example:
      torpor idle decide --governor teo@6.6 tests/idle/teo-short.jsonl --json
    """
    names = native.idle_governors()
    if governor not in names:
        raise click.BadParameter(
            f"unknown governor {governor!r}; expected one of {', '.join(names)}",
            param_hint="'--governor'",
        )
    sys.stdout.flush()
    native.idle_decide(sequence, governor, as_json)


@idle.command("governors")
def idle_governors() -> None:
    """List the governor variants (NAME@VERSION names the first kernel release followed)."""
    for name in native.idle_governors():
        click.echo(name)


@idle.command("stats")
@click.argument("trace")
@click.option(
    "--platform",
    metavar="FILE",
    help="The topology and C-state tables: a CPU preset id, a CPU platform file "
    "(docs/cpu-platform.md, `torpor probe` writes one) or a topology file with SMT cores "
    "(docs/idle-stats.md); idlestat trace files carry their own.",
)
@click.option(
    "-b",
    "--baseline",
    metavar="TRACE",
    help="A baseline trace (same platform) for -r comparison.",
)
@click.option(
    "-r",
    "--report-format",
    type=click.Choice(["default", "comparison"]),
    default="default",
    show_default=True,
    help="comparison: each row followed by its change from the baseline, as idlestat prints it "
    "(C-states, or with -p P-states).",
)
@click.option("-c", "--idle", "cstates", is_flag=True, help="The C-state table (the default).")
@click.option(
    "-p",
    "--frequency",
    "pstates",
    is_flag=True,
    help="The P-state table: time at each cpu_frequency while not idle (idlestat's -p).",
)
@click.option("--json", "as_json", is_flag=True, help="The report as JSON (both tables).")
def idle_stats(
    trace: str,
    platform: str | None,
    baseline: str | None,
    report_format: str,
    cstates: bool,
    pstates: bool,
    as_json: bool,
) -> None:
    """idlestat's C-state (and with -p P-state) report of an ftrace trace: per cluster, core
    and CPU.

    TRACE is the kernel's `trace` file, `trace-cmd report` output, an idlestat trace file or
    trace-cmd's binary trace.dat (versions 6 and 7; told apart by content).
    over: intervals shorter than the state's target residency; under: intervals long enough
    for the next deeper state (idlestat's definitions, docs/idle-stats.md). -p: per
    frequency, the time CPUs ran at it (cpu_frequency events; idle time does not count).

    \b
    Examples:
      torpor idle stats tests/ftrace/two-clusters.report.txt \\
        --platform tests/ftrace/two-clusters.toml
      torpor idle stats tests/ftrace/pstates.report.txt -p
      torpor idle stats after.trace -b before.trace -r comparison --platform google-gs101
    """
    if report_format == "comparison" and baseline is None:
        raise click.UsageError("-r comparison needs a baseline trace (-b TRACE)")
    if baseline is not None and report_format != "comparison":
        raise click.UsageError("-b TRACE is for -r comparison")
    stats = native.idle_stats(trace, platform)
    base = native.idle_stats(baseline, platform) if baseline is not None else None
    if as_json:
        if base is not None:
            stats = stats | {
                "baseline": base,
                "deltas": idle_text.deltas(stats, base),
                "pstate_deltas": idle_text.pstate_deltas(stats, base),
            }
        emit_json(stats)
        return
    if base is not None:
        click.echo(
            idle_text.comparison_text(
                printable_tree(stats), printable_tree(base), cstates or not pstates, pstates
            )
        )
    else:
        click.echo(idle_text.stats_text(printable_tree(stats), cstates or not pstates, pstates))


@idle.command("replay")
@click.argument("trace")
@click.option(
    "--governor",
    "governors",
    default="menu,teo,teo-util,oracle",
    show_default=True,
    metavar="NAME,...",
    help="Comma-separated governor variants (`torpor idle governors` lists them).",
)
@click.option(
    "--platform",
    metavar="PRESET|FILE",
    help="The traced machine's CPU platform: a preset id (`torpor devices`) or a platform "
    "TOML (`torpor probe`); idlestat trace files carry a C-state table of their own.",
)
@click.option(
    "--hz",
    type=click.IntRange(24, 10_000),
    metavar="HZ",
    help="The traced kernel's CONFIG_HZ (the tick period); 250 when not given.",
)
@click.option("--json", "as_json", is_flag=True, help="The report as JSON.")
def idle_replay(
    trace: str, governors: str, platform: str | None, hz: int | None, as_json: bool
) -> None:
    """Replay a real ftrace's idle periods through governors: what each would have chosen.

    Each idle period (cpu_idle entry to exit) keeps its real duration; each governor picks a
    state from the period's inputs (sleep length, tick, utilization), rebuilt from the trace or
    reconstructed where the trace lacks the events (the report says which and how). Reported
    per CPU and in total: state mix, too deep / too shallow (the cpuidle core's above / below),
    added wake-up latency, idle energy; "actual" is what the traced kernel chose.

    \b
    Example:
      torpor idle replay tests/ftrace/replay-timers.report.txt \\
        --platform arm-juno-r0 \\
        --governor menu,teo,oracle
    """
    try:
        report = native.idle_replay(trace, governors, platform, hz)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="'--governor'") from e
    if as_json:
        emit_json(report)
        return
    idle_replay_text.print_replay(console, printable_tree(report))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
