"""The ``torpor`` command line.

Every command prints a human table by default and machine JSON with ``--json``. Bad input is
one line, ``torpor: error: FILE:LINE: what was expected``, with exit code 2 and no traceback
unless ``--debug`` is given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from torpor import InputError, __version__, native
from torpor.report import apst_text

# The kernel's APST defaults and the builders' names, as the core defines them.
APST_DEFAULTS = native.apst_defaults()
APST_PARAMS = APST_DEFAULTS["params"]

# Wide enough for the run table when output goes to a file or a pipe (Rich assumes 80).
console = Console(highlight=False, width=None if sys.stdout.isatty() else 140)


class TorporGroup(click.Group):
    """Turns bad input into one line on stderr and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as e:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"torpor: error: {e}", err=True)
            ctx.exit(2)
        except OSError as e:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            where = e.filename or "torpor"
            click.echo(f"torpor: error: {where}: {e.strerror}", err=True)
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
    if as_json:
        emit_json(rows)
        return
    table = Table(title="Built-in NVMe presets")
    table.add_column("id", no_wrap=True)
    for col in ("vendor", "model", "firmware", "states", "APST commit"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["id"],
            r["vendor"],
            r["model"],
            r["firmware"],
            str(r["controller"]["npss"] + 1),
            "yes" if r["in_apst_commit"] else "",
        )
    console.print(table)


@main.command()
@click.argument("device")
@click.option(
    "--algorithm",
    type=click.Choice(APST_DEFAULTS["algorithms"]),
    default=APST_PARAMS["algorithm"],
    show_default=True,
    help="Kernel table builder: v5.14+ (commit ebd8a93aa4f5) or v4.11-v5.13.",
)
@click.option(
    "--primary-timeout-ms",
    type=click.IntRange(min=0),
    default=APST_PARAMS["primary_timeout_ms"],
    show_default=True,
    help="nvme_core.apst_primary_timeout_ms; 0 falls back to the legacy formula.",
)
@click.option(
    "--secondary-timeout-ms",
    type=click.IntRange(min=0),
    default=APST_PARAMS["secondary_timeout_ms"],
    show_default=True,
    help="nvme_core.apst_secondary_timeout_ms; 0 disables the secondary target.",
)
@click.option(
    "--primary-latency-tol-us",
    type=click.IntRange(min=0),
    default=APST_PARAMS["primary_latency_tol_us"],
    show_default=True,
    help="nvme_core.apst_primary_latency_tol_us (entry + exit latency); 0: legacy formula.",
)
@click.option(
    "--secondary-latency-tol-us",
    type=click.IntRange(min=0),
    default=APST_PARAMS["secondary_latency_tol_us"],
    show_default=True,
    help="nvme_core.apst_secondary_latency_tol_us (entry + exit latency).",
)
@click.option(
    "--ps-max-latency-us",
    type=click.IntRange(min=0),
    default=APST_PARAMS["ps_max_latency_us"],
    show_default=True,
    help="The controller's latency tolerance (default_ps_max_latency_us); 0 disables APST.",
)
@click.option("--no-deepest-ps", is_flag=True, help="Apply the NVME_QUIRK_NO_DEEPEST_PS quirk.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
@click.option(
    "--emit",
    type=click.Choice(["nvme-cli", "kernel"]),
    help="Print how to program this table: an nvme set-feature command, or module parameters.",
)
@click.option(
    "--data-file",
    default="apst-table.bin",
    show_default=True,
    help="Where --emit nvme-cli writes the 256-byte table.",
)
@click.option("--nvme-device", default="/dev/nvme0", show_default=True, help="For --emit nvme-cli.")
def apst(
    device: str, as_json: bool, emit: str | None, data_file: str, nvme_device: str, **kw: Any
) -> None:
    """Build the APST table Linux would program for DEVICE.

    DEVICE is a preset id (see `torpor devices`), `nvme id-ctrl -o json` output (nvme-cli 1.x
    or 2.x) or `smartctl -a` text.

    \b
    Examples:
      torpor apst wdc-pc-sn530-256gb
      torpor apst id-ctrl.json --algorithm legacy --json
      torpor apst smartctl.txt --emit nvme-cli --data-file /tmp/apst.bin
    """
    params = {
        "algorithm": kw["algorithm"],
        "ps_max_latency_us": kw["ps_max_latency_us"],
        "primary_timeout_ms": kw["primary_timeout_ms"],
        "secondary_timeout_ms": kw["secondary_timeout_ms"],
        "primary_latency_tol_us": kw["primary_latency_tol_us"],
        "secondary_latency_tol_us": kw["secondary_latency_tol_us"],
        "no_deepest_ps": kw["no_deepest_ps"],
    }
    result = native.apst(device, params, data_file, nvme_device)
    for note in result["device"]["notes"]:
        click.echo(f"torpor: note: {note}", err=True)
    if emit == "nvme-cli":
        if not result["sent"]:
            raise click.ClickException(f"the kernel sends no APST table here: {result['reason']}")
        Path(data_file).write_bytes(bytes(result["table_bytes"]))
        click.echo(result["nvme_cli_command"])
        click.echo(f"# wrote {data_file} (256 bytes: 32 little-endian 64-bit entries)")
        return
    if emit == "kernel":
        click.echo(result["kernel_params"])
        return
    if as_json:
        if not result["sent"]:
            click.echo(f"torpor: note: {result['reason']}", err=True)
        emit_json(result["table"])
        return
    apst_text.print_apst(console, result)


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@click.option("--brief", is_flag=True, help="Only the summary table, no per-variant detail.")
def run(scenario: str, as_json: bool, brief: bool) -> None:
    """Run a scenario file and print each variant's latency and power.

    \b
    Example:
      torpor run scenarios/apst-sn530-workflow7.toml
    """
    report = native.run_scenario_file(scenario)
    notes = [n for v in report["variants"] for n in v.get("nvme", {}).get("notes", [])]
    for note in dict.fromkeys(notes):
        click.echo(f"torpor: note: {note}", err=True)
    if as_json:
        emit_json(report)
        return
    apst_text.print_run(console, report, detail=not brief)


@main.command()
@click.argument("area", type=click.Choice(["apst", "all"]))
@click.option(
    "--out", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False)
)
@click.option("--json", "as_json", is_flag=True, help="Print results.json to stdout as well.")
def reproduce(area: str, out_dir: str, as_json: bool) -> None:
    """Re-run a built-in experiment and check the seed document's claims.

    Writes OUT/results.json and OUT/report.md.

    \b
    Example:
      torpor reproduce apst --out out/apst
    """
    from torpor import reproduce as rep

    results = rep.run(area, Path(out_dir), console=None if as_json else console)
    if as_json:
        emit_json(results)


@main.command()
@click.option("--seconds", default=1.0, show_default=True, help="Time budget per benchmark.")
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
    table = Table(title="torpor bench (one core)")
    for col in ("benchmark", "simulated", "wall s", "per second"):
        table.add_column(col, justify="right" if col != "benchmark" else "left")
    for r in rows:
        table.add_row(
            r["name"], f"{r['count']:,} {r['unit']}", f"{r['wall_s']:.3f}", f"{r['per_s']:,.0f}"
        )
    console.print(table)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
