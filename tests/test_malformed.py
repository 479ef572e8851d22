"""Every malformed input in tests/malformed/ gets its one exact error line.

``tests/malformed/expected.txt`` pairs each command (``$ torpor ARGS``, run from that folder)
with the one line it must print on stderr. The test runs the installed CLI as a user would (a
new process each time) and checks: exit code 2, nothing on stdout, that line and nothing else
on stderr. Every file under ``dump/``, ``scenario/``, ``sweep/``, ``idle/`` and ``ftrace/``, and
every scenario under ``fio/``, must be named by some command; every trace under ``iolog/`` and
``blocktrace/`` must be replayed by some ``scenario/replay-*.toml`` and every job file under
``fio/`` named by one of the ``fio/`` scenarios, so a case cannot be added without its expected
error.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "malformed"


def cases() -> list[tuple[list[str], str]]:
    out = []
    command: list[str] | None = None
    for n, line in enumerate((HERE / "expected.txt").read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("$ torpor "):
            assert command is None, f"expected.txt:{n}: two commands in a row"
            command = shlex.split(line[len("$ torpor ") :])
        else:
            assert command is not None, f"expected.txt:{n}: an error line with no command"
            out.append((command, line))
            command = None
    assert command is None, "expected.txt ends with a command and no error line"
    return out


CASES = cases()


def torpor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "torpor.cli", *args],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(("args", "expected"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_malformed_input_gets_one_exact_error_line(args: list[str], expected: str) -> None:
    got = torpor(*args)
    assert (got.returncode, got.stdout, got.stderr) == (2, "", expected + "\n")


def test_the_folder_holds_at_least_50_cases_and_each_file_has_one() -> None:
    assert len(CASES) >= 50
    named = {a for args, _ in CASES for a in args}
    for sub in ("dump", "scenario", "sweep", "idle", "ftrace"):
        for f in sorted((HERE / sub).iterdir()):
            assert f"{sub}/{f.name}" in named, f"{sub}/{f.name} has no case in expected.txt"
    for f in sorted((HERE / "fio").glob("*.toml")):
        assert f"fio/{f.name}" in named, f"fio/{f.name} has no case in expected.txt"
    job_files = {
        line.split('"')[1]
        for s in (HERE / "fio").glob("*.toml")
        for line in s.read_text().splitlines()
        if line.startswith("fio = ")
    }
    for f in sorted((HERE / "fio").glob("*.fio")):
        assert f.name in job_files, f"fio/{f.name} is named by no scenario in fio/"
    replayed = (HERE / "scenario").glob("replay-*.toml")
    logs = {
        line.split('"')[1]
        for s in replayed
        for line in s.read_text().splitlines()
        if line.startswith("file = ")
    }
    for sub in ("iolog", "blocktrace"):
        for f in sorted((HERE / sub).iterdir()):
            assert f"../{sub}/{f.name}" in logs, f"{sub}/{f.name} is replayed by no scenario"
