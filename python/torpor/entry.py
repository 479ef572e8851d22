"""The ``torpor`` console script.

``torpor idle stats TRACE [--platform P] [--json]`` goes straight to the core and prints its
report; every other command line (other commands, other options, help, anything unusual) goes
to the click CLI (:mod:`torpor.cli`). Importing click and rich alone costs more than the
core's report of a 100 MB trace. The output, error lines and exit codes are the CLI's: an
``InputError`` is ``torpor: error: ...`` with exit code 2, Ctrl-C ``torpor: interrupted`` with
130, a failed write to standard output ``torpor: error: <stdout>: ...`` with 2. A report
holding escape characters goes to the CLI too, which strips them when the output is not a
terminal.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


def idle_stats_args(args: list[str]) -> tuple[str, str | None, bool] | None:
    """``(trace, platform, as_json)`` when ``args`` (after the program name) is exactly
    ``idle stats TRACE`` with at most one ``--platform VALUE`` (or ``--platform=VALUE``) and
    one ``--json``, in any order; else ``None``."""
    if args[:2] != ["idle", "stats"]:
        return None
    trace: str | None = None
    platform: str | None = None
    as_json = False
    rest = iter(args[2:])
    for arg in rest:
        if arg == "--json" and not as_json:
            as_json = True
        elif arg == "--platform" and platform is None:
            platform = next(rest, None)
            if platform is None or platform.startswith("-") or not platform:
                return None
        elif arg.startswith("--platform=") and platform is None and len(arg) > 11:
            platform = arg[11:]
        elif not arg.startswith("-") and arg and trace is None:
            trace = arg
        else:
            return None
    return None if trace is None else (trace, platform, as_json)


def main() -> None:
    parsed = idle_stats_args(sys.argv[1:])
    if parsed is not None:
        _idle_stats(*parsed)
    from torpor.cli import main as cli

    cli()


def _fail(message: str, code: int) -> NoReturn:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    sys.exit(code)


def _idle_stats(trace: str, platform: str | None, as_json: bool) -> None:
    """Prints the report and exits, or returns to let the CLI print it."""
    import json

    from torpor import InputError, _native

    try:
        stats = json.loads(_native.idle_stats(trace, platform))
    except InputError as e:
        _fail(f"torpor: error: {e}", 2)
    except KeyboardInterrupt:
        _fail("torpor: interrupted", 130)
    if as_json:
        out = json.dumps(stats, indent=2, sort_keys=False)
    else:
        from torpor.printable import printable_tree
        from torpor.report.idle_text import stats_text

        out = stats_text(printable_tree(stats))
    if "\x1b" in out:
        return
    try:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    except OSError as e:
        _fail(f"torpor: error: <stdout>: {' '.join((e.strerror or str(e)).split())}", 2)
    sys.exit(0)
