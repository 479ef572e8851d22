"""`torpor idle decide`: the idle-decide/1 contract through the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SEQUENCE = Path(__file__).parent / "idle" / "poll-c1-c6.jsonl"


def torpor(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "torpor.cli", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
    )


# The oracle on the fixture, by hand: 1.2 ms fits C6 (400 us) and outlasts delta_tick (1 ms):
# stop; 100 us fits only C1 and ends before the 1.5 ms tick: keep; a 50 us limit rules out C6
# (100 us exit): C1, the 9 ms stay outlasts the tick: stop; C1 disabled and C6 too deep: POLL,
# which keeps the tick.
ORACLE = [(2, True), (1, False), (1, True), (0, False)]


def test_json_output_is_one_line_per_step_and_nothing_else() -> None:
    got = torpor("idle", "decide", "--governor", "oracle", str(SEQUENCE), "--json")
    assert got.returncode == 0, got.stderr
    rows = [json.loads(line) for line in got.stdout.splitlines()]
    assert rows == [
        {"step": k, "idx": idx, "stop_tick": stop} for k, (idx, stop) in enumerate(ORACLE)
    ]


def test_standard_input_and_the_table() -> None:
    got = torpor("idle", "decide", "--governor", "oracle", "-", stdin=SEQUENCE.read_text())
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[0].startswith("# oracle on 3 states (POLL, C1, C6)")
    assert lines[2].split() == ["0", "2", "C6", "stop"]
    assert lines[5].split() == ["3", "0", "POLL", "keep", "rejected"]


def test_every_listed_governor_runs_the_fixture() -> None:
    names = torpor("idle", "governors").stdout.split()
    assert {"ladder", "haltpoll", "oracle"} <= set(names)
    for name in names:
        got = torpor("idle", "decide", "--governor", name, str(SEQUENCE), "--json")
        assert got.returncode == 0, (name, got.stderr)
        assert len(got.stdout.splitlines()) == 4, name


def test_an_unknown_governor_is_a_usage_error() -> None:
    got = torpor("idle", "decide", "--governor", "teo@9.9", str(SEQUENCE))
    assert got.returncode == 2
    assert got.stdout == ""
    assert got.stderr.startswith("torpor: error: Invalid value for '--governor': unknown governor")
