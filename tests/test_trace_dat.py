"""trace-cmd's binary trace.dat and packed text traces through the CLI, as a user runs them.

The real trace.dat files of ../shared/real-data/ftrace (skipped where that folder is absent)
must give `torpor idle stats` and `torpor idle replay` what their `trace-cmd report` text gives:
the same intervals and periods, the same counts; times may differ by the report's rounding to
the microsecond (the binary file has nanoseconds). Text traces in gzip say so in the output.
The Rust tests (crates/torpor-core/tests/trace_dat*.rs) check every event field.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).parent
REAL = TESTS.resolve().parents[1] / "shared" / "real-data" / "ftrace"

needs_real = pytest.mark.skipif(
    not REAL.is_dir(), reason=f"{REAL} is absent (real data lives beside the repo)"
)


def torpor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "torpor.cli", *args], capture_output=True, text=True, timeout=300
    )


def as_json(*args: str) -> dict[str, Any]:
    got = torpor(*args, "--json")
    assert got.returncode == 0, got.stderr
    result: dict[str, Any] = json.loads(got.stdout)
    return result


@needs_real
def test_idle_stats_of_the_juno_trace_dat_is_that_of_its_report() -> None:
    dat = as_json(
        "idle", "stats", str(REAL / "lisa-sched_load-juno.trace.dat"), "--platform", "arm-juno-r0"
    )
    txt = as_json(
        "idle", "stats", str(REAL / "lisa-sched_load-juno.report.txt"), "--platform", "arm-juno-r0"
    )
    assert (dat["format"], txt["format"]) == ("trace-dat", "trace-cmd")
    assert dat["trace"]["trace_dat"]["version"] == 6
    assert dat["cpu_idle_events"] == txt["cpu_idle_events"] == 474
    assert dat["trace"]["known_events"] == txt["trace"]["known_events"]
    assert dat["trace"]["unknown_events"] == txt["trace"]["unknown_events"]
    assert dat["sections"].keys() == txt["sections"].keys()
    for name, rows in dat["sections"].items():
        for a, b in zip(rows, txt["sections"][name], strict=True):
            assert (a["state"], a["hits"], a["over"], a["under"]) == (
                b["state"],
                b["hits"],
                b["over"],
                b["under"],
            ), name
            # Each interval's ends are rounded to the microsecond in the report.
            assert abs(a["total_us"] - b["total_us"]) <= a["hits"] * 1.0, name
    text = torpor("idle", "stats", str(REAL / "lisa-sched_load-juno.trace.dat"))
    assert text.returncode == 0, text.stderr
    assert "read as trace-cmd's binary trace.dat (version 6, little-endian, uncompressed" in (
        text.stdout
    )


@needs_real
def test_idle_replay_of_a_trace_dat_replays_the_same_periods() -> None:
    args = ["--platform", "arm-juno-r0", "--governor", "menu,teo"]
    dat = as_json("idle", "replay", str(REAL / "trappy-trace_idle-juno.trace.dat"), *args)
    txt = as_json("idle", "replay", str(REAL / "trappy-trace_idle-juno.report.txt"), *args)
    assert dat["format"] == "trace-dat"
    assert dat["periods"] == txt["periods"]
    assert dat["dropped"] == txt["dropped"]
    for name in ("menu", "teo"):
        a, b = dat["governors"][name], txt["governors"][name]
        assert [s["entries"] for s in a["states"]] == [s["entries"] for s in b["states"]], name


def test_a_gzip_trace_is_read_and_says_so(tmp_path: Path) -> None:
    plain = TESTS / "ftrace" / "two-clusters.report.txt"
    packed = tmp_path / "trace"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    got = torpor(
        "idle", "stats", str(packed), "--platform", str(TESTS / "ftrace" / "two-clusters.toml")
    )
    want = torpor(
        "idle", "stats", str(plain), "--platform", str(TESTS / "ftrace" / "two-clusters.toml")
    )
    assert got.returncode == 0, got.stderr
    assert "read as `trace-cmd report` text, unpacked from gzip" in got.stdout
    assert got.stdout.replace(", unpacked from gzip", "") == want.stdout
