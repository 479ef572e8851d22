"""`torpor idle replay`: a trace's idle periods replayed through governors.

* The hand-made fixture tests/ftrace/replay-timers.report.txt on the Juno preset: every number
  of the oracle and of the traced kernel's column is worked out by hand below.
* The real traces of ../shared/real-data/ftrace (skipped where that folder is absent): the
  period counts against the event counts their .source.md files state, the oracle's zero
  misses, and that every governor replays every period.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent / "ftrace"
REAL = Path(__file__).resolve().parents[1].parent / "shared" / "real-data" / "ftrace"

needs_real = pytest.mark.skipif(
    not REAL.is_dir(), reason=f"{REAL} is absent (real data lives beside the repo)"
)


def torpor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "torpor.cli", "idle", "replay", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def replay(*args: str) -> dict[str, Any]:
    got = torpor("--json", *args)
    assert got.returncode == 0, got.stderr
    result: dict[str, Any] = json.loads(got.stdout)
    return result


def entries(column: dict[str, Any]) -> list[int]:
    return [s["entries"] for s in column["states"]]


def test_the_fixture_by_hand() -> None:
    r = replay(
        str(HERE / "replay-timers.report.txt"),
        "--platform",
        "arm-juno-r0",
        "--governor",
        "oracle,teo",
    )
    # Juno: WFI 1/1 us, CPU_SLEEP_0 1500/2000 us, CLUSTER_SLEEP_0 1600/2500 us (exit/target).
    # CPU 0: WFI for 10 ms, woken by the hrtimer pending since entry; CLUSTER_SLEEP_0 for
    # 500 us, woken by an IPI. CPU 1: CPU_SLEEP_0 for 3 ms, no cause traced.
    assert r["periods"] == 3
    assert r["wake_causes"] == {
        "timer": 1,
        "tick": 0,
        "ipi": 1,
        "irq": 0,
        "remote_wakeup": 0,
        "remote_waking": 0,
        "unknown": 1,
    }
    inputs = {i["input"]: (i["observed"], i["reconstructed"]) for i in r["inputs"]}
    # Only the first period had a timer pending; the others are reconstructed.
    assert inputs["sleep_length"] == (1, 2)
    assert inputs["wake_cause"] == (2, 1)
    assert inputs["utilization"] == (0, 3)
    # The oracle: 10 ms -> CLUSTER_SLEEP_0, 500 us -> WFI, 3 ms -> CLUSTER_SLEEP_0; no miss;
    # exit latencies 1600 + 1 + 1600 us.
    o = r["governors"]["oracle"]
    assert (o["periods"], o["too_deep"], o["too_shallow"]) == (3, 0, 0)
    assert entries(o) == [1, 0, 2]
    assert o["added_latency_ns"] == 3_201_000
    # The traced kernel: WFI for 10 ms: 10 ms >= 2 ms of CPU_SLEEP_0, too shallow;
    # CLUSTER_SLEEP_0 for 500 us: 2.1 ms < 2.5 ms, too deep; CPU_SLEEP_0 for 3 ms:
    # 4.5 ms - 1.5 ms = 3 ms >= 2.5 ms, too shallow. Exits 1 + 1600 + 1500 us.
    a = r["actual"]
    assert (a["too_deep"], a["too_shallow"]) == (1, 2)
    assert a["added_latency_ns"] == 3_101_000
    assert [c["cpu"] for c in a["per_cpu"]] == [0, 1]
    assert [c["periods"] for c in a["per_cpu"]] == [2, 1]
    # The Juno preset has no power figures: no energy, and the report says so.
    assert a["energy_mj"] is None
    assert any("energy is not available" in n for n in r["notes"])
    assert r["governors"]["teo"]["periods"] == 3


def test_the_text_report_names_every_column_and_the_inputs() -> None:
    got = torpor(str(HERE / "replay-timers.report.txt"), "--platform", "arm-juno-r0")
    assert got.returncode == 0, got.stderr
    for word in ("actual (trace)", "menu", "teo-util", "oracle", "sleep_length: 1 / 2"):
        assert word in got.stdout, word


@needs_real
def test_the_juno_trace_replays_every_closed_period() -> None:
    r = replay(
        str(REAL / "lisa-sched_load-juno.report.txt"),
        "--platform",
        "arm-juno-r0",
        "--governor",
        "menu,teo,teo-util,oracle,ladder",
    )
    d = r["dropped"]
    # lisa-sched_load-juno.trace.dat.source.md: 237 exits, 122 + 62 + 53 = 237 entries.
    assert r["periods"] + d["exits_without_entry"] == 237
    assert r["periods"] + d["open_at_end"] + d["entries_without_exit"] + d["non_positive"] == 237
    a = r["actual"]
    # The source's per-state entry counts bound the closed periods' states.
    assert all(x <= y for x, y in zip(entries(a), [122, 62, 53], strict=True))
    for name, col in r["governors"].items():
        assert col["periods"] == r["periods"], name
        assert sum(entries(col)) == r["periods"], name
    # No hrtimer, irq or ipi events: every sleep length and cause is reconstructed.
    inputs = {i["input"]: (i["observed"], i["reconstructed"]) for i in r["inputs"]}
    assert inputs["sleep_length"] == (0, r["periods"])
    assert r["wake_causes"]["unknown"] == r["periods"]
    o = r["governors"]["oracle"]
    assert (o["too_deep"], o["too_shallow"]) == (0, 0)


@needs_real
def test_the_android_systrace_on_an_8_cpu_table_with_power() -> None:
    # The phone's own table is not among the presets: the HiKey960's (8 CPUs, WFI / CPU / cluster
    # sleep, with power figures) stands in, as the trace only uses states 0 and 2.
    r = replay(
        str(REAL / "trappy-surfaceflinger-systrace.ftrace.txt"),
        "--platform",
        "hisilicon-hi3660-hikey960",
    )
    d = r["dropped"]
    # trappy-surfaceflinger-systrace.ftrace.txt.source.md: 176 + 134 = 310 entries, 311 exits.
    assert r["periods"] + d["open_at_end"] + d["entries_without_exit"] + d["non_positive"] == 310
    assert r["periods"] + d["exits_without_entry"] <= 311
    a = r["actual"]
    assert entries(a)[1] == 0
    # sched_wakeup events give remote wake-ups; sched_switch gives PELT utilization.
    assert r["wake_causes"]["remote_wakeup"] > 0
    inputs = {i["input"]: (i["observed"], i["reconstructed"]) for i in r["inputs"]}
    assert inputs["utilization"][0] > 0
    assert a["energy_mj"] is not None and a["energy_mj"] > 0
    for col in r["governors"].values():
        assert col["energy_mj"] > 0
        assert len(col["per_cpu"]) == len(a["per_cpu"])


@needs_real
@pytest.mark.parametrize(
    "name", [f"lisa-sched_load-juno.{ext}" for ext in ("report.txt", "trace.dat")]
)
def test_the_juno_traces_active_energy_at_its_traced_frequencies(name: str) -> None:
    """Second method: the running time `idle stats -p` reports per CPU and frequency, times the
    preset's OPP power at that frequency (presets/cpu/arm-juno-r0.toml, read here with tomllib),
    plus each CPU's time at an unknown frequency at its cluster's highest OPP (the preset sets
    no scaling limits), gives the replay's active energy."""
    import tomllib

    trace = str(REAL / name)
    r = replay(trace, "--platform", "arm-juno-r0", "--governor", "menu,oracle")
    a = r["active"]
    assert a["cpu_frequency_events"] == 16
    assert a["rule"] in ("traced frequency", "traced frequency, else highest OPP")
    assert a["unlisted_frequency_ns"] == 0
    preset = tomllib.loads((Path(__file__).parents[1] / "presets/cpu/arm-juno-r0.toml").read_text())
    power: dict[int, dict[int, float]] = {}
    for cluster in preset["cluster"]:
        table = {o["freq_khz"]: o["power_mw"]["mw"] for o in cluster["opp"]}
        for cpu in cluster["cpus"]:
            power[cpu] = table
    got = subprocess.run(
        [sys.executable, "-m", "torpor.cli", "idle", "stats", "--json", trace],
        capture_output=True,
        text=True,
        timeout=300,
    )
    p = json.loads(got.stdout)["pstates"]
    mj = 0.0
    for section, rows in p["sections"].items():
        if section.startswith("cpu"):
            cpu = int(section[3:])
            mj += sum(row["total_us"] * power[cpu][row["freq_khz"]] * 1e-6 for row in rows)
    for u in p["unknown_frequency"]:
        mj += u["total_ns"] * max(power[u["cpu"]].items())[1] * 1e-9
    assert a["energy_mj"] == pytest.approx(mj, rel=1e-9)
    assert a["energy_mj"] > 0
    # The Juno preset has no power for every idle state: no idle part, so no total; the active
    # part is there, the same in every column.
    for col in [r["actual"], *r["governors"].values()]:
        assert col["active_energy_mj"] == a["energy_mj"]
        assert col["idle_energy_mj"] is None and col["energy_mj"] is None


@needs_real
def test_the_systraces_energy_parts_add_up() -> None:
    r = replay(
        str(REAL / "trappy-surfaceflinger-systrace.ftrace.txt"),
        "--platform",
        "hisilicon-hi3660-hikey960",
    )
    for col in [r["actual"], *r["governors"].values()]:
        assert col["energy_mj"] == pytest.approx(
            col["idle_energy_mj"] + col["active_energy_mj"], rel=1e-12
        )
    assert r["active"]["cpu_frequency_events"] == 104
    assert any(n.startswith("active energy:") for n in r["notes"])
