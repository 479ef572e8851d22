"""A run under schedutil (docs/cpufreq.md, "In a run"): the per-OPP busy time the run reports is
checked against a second method, the trace the same run writes read back by `torpor idle stats
-p` (time at each `cpu_frequency` while not idle, as idlestat counts it), and the energy parts
against the CPU's total."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def docs_example() -> str:
    """The TOML example of docs/cpufreq.md's "In a run" section."""
    text = (ROOT / "docs/cpufreq.md").read_text()
    section = text.split("## In a run", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```toml\n(.*?)```", section, re.S)
    assert match, "docs/cpufreq.md: no TOML example under 'In a run'"
    return match.group(1)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    folder = tmp_path_factory.mktemp("cpufreq")
    scenario = folder / "frame.toml"
    scenario.write_text(docs_example() + '[run]\nduration = "3s"\n')
    out = subprocess.run(
        [sys.executable, "-m", "torpor.cli", "run", str(scenario), "--json", "--ftrace", "t"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(out.stdout)
    [trace] = sorted((folder / "t").iterdir())
    stats = subprocess.run(
        [sys.executable, "-m", "torpor.cli", "idle", "stats", str(trace), "-p", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return report["variants"][0]["cpu"], json.loads(stats.stdout)["pstates"]


def test_the_run_and_its_trace_agree_on_the_time_at_each_opp(run: tuple[dict, dict]) -> None:
    cpu, pstates = run
    frame = next(c for c in cpu["cpus"] if c["cpu"] == 6)
    # The governor moved the frame CPU's clock, over more than one OPP.
    assert frame["freq_changes"] > 1
    busy = {o["khz"]: o["time_ns"] for o in frame["opps"] if o["time_ns"]}
    assert len(busy) > 1
    traced = {row["freq_khz"]: row["total_us"] for row in pstates["sections"]["cpu6"]}
    # The trace prints times in whole ns: the same time at each frequency, to the ns.
    assert sorted(traced) == sorted(busy)
    for khz, ns in busy.items():
        assert traced[khz] * 1000 == pytest.approx(ns, abs=1), khz
    # The trace says where each CPU starts: no time at an unknown frequency.
    assert pstates["unknown_frequency"] == []


def test_each_cpus_energy_is_its_busy_part_plus_its_states(run: tuple[dict, dict]) -> None:
    cpu, _ = run
    for c in cpu["cpus"]:
        # Busy time at each OPP adds up to the busy time; its energy to the busy energy.
        assert sum(o["time_ns"] for o in c["opps"]) == c["busy_ns"]
        assert sum(o["energy_mj"] for o in c["opps"]) == pytest.approx(c["busy_energy_mj"])
        parts = c["busy_energy_mj"] + sum(s["energy_mj"] for s in c["states"])
        assert parts == pytest.approx(c["energy_mj"])
