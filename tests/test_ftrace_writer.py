"""`torpor run --ftrace DIR`: the idle traces torpor writes for simulated CPU runs, read by
idlestat and by `torpor idle stats`.

Three scenarios (tests/cpu/trace-*.toml: one CPU; four CPUs in two clusters with a cluster
state; the msm8916 preset's four CPUs in one cluster), five traces. On each:

* Debian's `idlestat --import FILE` (skipped where it is not installed) and `torpor idle
  stats` must agree on every number of every section (clusters and CPUs): counts exactly,
  times to 0.001 us (idlestat computes in `double` seconds, see tests/test_idle_stats.py);
* both must agree with the simulation's own report where the definitions coincide, per CPU and
  state: an idlestat interval runs from the `cpu_idle` entry to the exit line, which the
  kernel writes after the exit latency, so its hits are the run's entries less the one interval
  still open at the end, and its total is the run's time in the state (which, as the kernel's
  residency, includes the exit latency). idlestat's "over" is the kernel's
  "above" for every state with a shallower one (all enabled here). Its "under" asks about the
  next state only and ignores the exit latency, the kernel's "below" subtracts it: those are not
  compared. The interval open at the end is checked only one way (the run may end while the CPU
  wakes: it has counted the period, the trace has no exit line yet).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from test_idle_stats import IDLESTAT, assert_agrees, idlestat_csv, stats

HERE = Path(__file__).parent / "cpu"
SCENARIOS = ["trace-one-cpu.toml", "trace-two-clusters.toml", "trace-msm8916.toml"]
IDLE = re.compile(r"\[(\d+)\] \S+ +(\d+)\.(\d{9}): cpu_idle: state=(\d+) cpu_id=(\d+)$")


def run_traced(scenario: Path, out: Path) -> dict[str, Any]:
    got = subprocess.run(
        [sys.executable, "-m", "torpor.cli", "run", str(scenario), "--json", "--ftrace", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert got.returncode == 0, got.stderr
    report: dict[str, Any] = json.loads(got.stdout)
    return report


def open_at_end(trace: Path) -> dict[int, int]:
    """Per CPU whose last `cpu_idle` is an entry: that state."""
    last: dict[int, int] = {}
    with trace.open() as f:
        for line in f:
            m = IDLE.search(line.rstrip("\n"))
            if m:
                last[int(m.group(5))] = int(m.group(4))
    return {c: s for c, s in last.items() if s != 4294967295}


@pytest.fixture(scope="module", params=SCENARIOS)
def traced(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = tmp_path_factory.mktemp("ftrace")
    scenario = HERE / request.param
    return scenario, out, run_traced(scenario, out)


def test_each_variant_writes_its_trace_and_says_where(traced: Any) -> None:
    _, out, report = traced
    names = [v["name"] for v in report["variants"]]
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{n}.trace" for n in names)
    for v in report["variants"]:
        assert any(f"{v['name']}.trace" in n for n in v["cpu"]["notes"])
        assert (out / f"{v['name']}.trace").read_text().startswith("idlestat version = 0.8\n")


def test_torpor_idle_stats_agrees_with_the_simulation(traced: Any) -> None:
    _, out, report = traced
    checked = 0
    for v in report["variants"]:
        trace = out / f"{v['name']}.trace"
        ours = stats(str(trace))
        assert ours["dropped"]["non_positive_intervals"] == 0
        assert ours["trace"]["unknown_events"].keys() <= {"sched_wake_idle_without_ipi"}
        still = open_at_end(trace)
        for cpu in v["cpu"]["cpus"]:
            c = cpu["cpu"]
            rows = {r["state"]: r for r in ours["sections"].get(f"cpu{c}", [])}
            for i, st in enumerate(cpu["states"]):
                row = rows.get(st["name"])
                hits = row["hits"] if row else 0
                is_open = still.get(c) == i
                assert hits == st["entries"] - is_open, (v["name"], c, st["name"])
                if not row:
                    continue
                closed_us = row["total_us"]
                if is_open:
                    assert closed_us <= st["time_ns"] / 1000 + 1e-6
                    assert 0 <= st["above"] - row["over"] <= 1 or i == 0
                    continue
                assert closed_us == pytest.approx(st["time_ns"] / 1000, abs=1e-6)
                if i > 0:
                    assert row["over"] == st["above"], (v["name"], c, st["name"])
                checked += 1
    assert checked >= len(report["variants"])


@pytest.mark.skipif(IDLESTAT is None, reason="idlestat is not installed (apt-get install idlestat)")
def test_idlestat_agrees_with_torpor_idle_stats(traced: Any) -> None:
    _, out, report = traced
    for v in report["variants"]:
        trace = out / f"{v['name']}.trace"
        ours = stats(str(trace))
        theirs = idlestat_csv(trace)
        assert_agrees(ours, theirs)
        assert sum(len(rows) for rows in theirs.values()) >= 3


def test_the_two_cluster_trace_has_a_cluster_in_its_cluster_state(tmp_path: Path) -> None:
    report = run_traced(HERE / "trace-two-clusters.toml", tmp_path)
    for v in report["variants"]:
        ours = stats(str(tmp_path / f"{v['name']}.trace"))
        assert list(ours["sections"])[:1] == ["clusterA"]
        big = {r["state"]: r for r in ours["sections"]["clusterB"]}
        assert big["CLUSTER_OFF"]["hits"] > 0, v["name"]


def test_an_nvme_scenario_is_refused_with_one_line(tmp_path: Path) -> None:
    scenario = tmp_path / "nvme.toml"
    scenario.write_text(
        '[platform.nvme]\npreset = "wdc-pc-sn530-256gb"\n[workload]\napst_workflow = 7\n'
    )
    got = subprocess.run(
        [sys.executable, "-m", "torpor.cli", "run", str(scenario), "--ftrace", str(tmp_path / "t")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert got.returncode == 2
    assert got.stderr == (
        f"torpor: error: {scenario}:1: --ftrace writes the idle traces of CPU runs; this "
        "scenario runs a storage device, which has no cpu_idle events\n"
    )
