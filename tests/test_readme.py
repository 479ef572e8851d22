"""The README's pasted outputs against real runs: every `$ torpor ...` line of a code block is
run, and each line the README shows after it (but the `...` that mark a cut) must appear in
the real output, in order. Tables are compared word by word, so a terminal's width (which
wraps cells differently) does not matter; a number, a line or a section that changed does.
Commands that need files the README does not ship (`bad.txt`, `ten-years.toml`) or minutes of
wall time (`reproduce`) are skipped, each named."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Commands the README shows for what they print, not run here.
NOT_RUN = ("bad.txt", "ten-years.toml", "torpor reproduce")
BOX = re.compile(r"[\u2500-\u257f]")


def examples() -> list[tuple[str, list[str]]]:
    """Each `$ torpor` command of the README's code blocks and the lines shown after it."""
    out: list[tuple[str, list[str]]] = []
    fence: str | None = None  # the open block's language ("" for a plain block)
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.startswith("```"):
            fence = None if fence is not None else line[3:].strip()
            if fence is None and out:
                out.append(("", []))  # the block ends: lines after it are not output
            continue
        if fence != "":
            continue
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return [(cmd, lines) for cmd, lines in out if cmd.startswith("torpor ")]


def words(line: str) -> list[str]:
    return BOX.sub(" ", line).split()


@pytest.mark.parametrize("command,shown", examples(), ids=lambda x: x if isinstance(x, str) else "")
def test_a_readme_output_is_what_torpor_prints(command: str, shown: list[str], tmp_path: Path):
    if any(skip in command for skip in NOT_RUN):
        pytest.skip(f"not run here: {command}")
    # A real process (some commands print from the core), in a scratch folder (some write
    # files), the repository's files named by their full paths.
    args = [str(ROOT / a) if (ROOT / a).exists() else a for a in shlex.split(command)[1:]]
    r = subprocess.run(
        [sys.executable, "-m", "torpor.cli", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    # Paths print as given: show them as the README's relative ones.
    text = (r.stdout + r.stderr).replace(f"{ROOT}/", "")
    actual = [w for line in text.splitlines() for w in words(line)]
    at = 0
    for line in shown:
        expected = words(line)
        if not expected or "..." in line:
            continue
        # The line's words in order, from where the previous line's began.
        pos, start = at, None
        for w in expected:
            try:
                pos = actual.index(w, pos) + 1
            except ValueError:
                pytest.fail(f"{command}: README line not in the output: {line!r}")
            start = pos - 1 if start is None else start
        at = start if start is not None else at


@pytest.mark.parametrize(
    "command",
    [
        "apst",
        "run",
        "sweep",
        "qos",
        "probe",
        "devices",
        "reproduce",
        "bench",
        "idle stats",
        "idle replay",
        "idle decide",
    ],
)
def test_help_names_each_value_and_keeps_ranges_short(cli, command: str):
    # Every option's value has a name (DIR, FILE, MS, N, ...), not click's TEXT or INTEGER;
    # a range reads x>=0, not up to 18446744073709551615.
    text = cli(*command.split(), "--help").output
    for bad in (" TEXT ", "INTEGER", "18446744073709551615"):
        assert bad not in text, f"torpor {command} --help: {bad.strip()}"
