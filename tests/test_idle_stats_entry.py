"""The console script's fast path for `torpor idle stats` (torpor/entry.py): the command lines
it takes (the rest go to the click CLI), and, on fixtures and bad input, output, error lines
and exit codes byte for byte the click CLI's, without importing click."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from torpor.entry import idle_stats_args

TESTS = Path(__file__).parent
FTRACE = TESTS / "ftrace"
CLI = "import sys; from torpor.cli import main; sys.argv[0] = 'torpor'; main()"
ENTRY = "import sys; from torpor.entry import main; sys.argv[0] = 'torpor'; main()"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["idle", "stats", "t"], ("t", None, False)),
        (["idle", "stats", "--json", "t"], ("t", None, True)),
        (["idle", "stats", "t", "--platform", "p.toml"], ("t", "p.toml", False)),
        (["idle", "stats", "--platform=p", "t", "--json"], ("t", "p", True)),
        (["idle", "stats"], None),
        (["idle", "stats", "t", "u"], None),
        (["idle", "stats", "t", "--json", "--json"], None),
        (["idle", "stats", "t", "--platform"], None),
        (["idle", "stats", "t", "--platform", "--json"], None),
        (["idle", "stats", "t", "--platform="], None),
        (["idle", "stats", "t", "-b", "u", "-r", "comparison"], None),
        (["idle", "stats", "--help"], None),
        (["idle", "stats", "-"], None),
        (["--debug", "idle", "stats", "t"], None),
        (["idle", "replay", "t"], None),
        ([], None),
    ],
)
def test_command_lines_taken(args: list[str], expected: object) -> None:
    assert idle_stats_args(args) == expected


def run(code: str, args: list[str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, timeout=120, check=False
    )


@pytest.mark.parametrize(
    "args",
    [
        ["idle", "stats", str(FTRACE / "two-clusters.idlestat")],
        ["idle", "stats", str(FTRACE / "two-clusters.idlestat"), "--json"],
        [
            "idle",
            "stats",
            str(FTRACE / "two-clusters.report.txt"),
            "--platform",
            str(FTRACE / "two-clusters.toml"),
        ],
        ["idle", "stats", str(FTRACE / "replay-timers.report.txt"), "--platform=google-gs101"],
        ["idle", "stats", str(TESTS / "malformed" / "ftrace" / "bad-state.txt")],
        ["idle", "stats", str(TESTS / "malformed" / "ftrace" / "trace.dat")],
        ["idle", "stats", str(FTRACE / "no-such-file.txt")],
        ["idle", "stats", str(FTRACE / "two-clusters.idlestat"), "--platform", "no-such"],
        ["idle", "stats", str(FTRACE / "two-clusters.idlestat"), "-r", "comparison"],
    ],
)
def test_same_bytes_as_the_click_cli(args: list[str]) -> None:
    fast, slow = run(ENTRY, args), run(CLI, args)
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        slow.returncode,
        slow.stdout,
        slow.stderr,
    )
    assert fast.stdout or fast.stderr.startswith(b"torpor: error: ")


def test_fast_path_imports_no_click() -> None:
    code = (
        "import sys, atexit; "
        "atexit.register(lambda: sys.stderr.write(str(sorted("
        "m for m in ('click', 'rich', 'pandas', 'typing') if m in sys.modules))));"
        " from torpor.entry import main; main()"
    )
    out = run(code, ["idle", "stats", str(FTRACE / "two-clusters.idlestat")])
    assert out.returncode == 0
    assert out.stderr == b"[]"
