"""Runs on CPUs through the Python API and the command line."""

from __future__ import annotations

from pathlib import Path

import torpor

HERE = Path(__file__).parent


def scenario(governor: str) -> dict:
    return {
        "platform": {"cpu": {"file": str(HERE / "cpu" / "one-cpu.toml")}},
        "policy": {"cpuidle": {"governor": governor}},
        # A real-time cyclictest (-p): no timer slack.
        "workload": {
            "task": [
                {
                    "name": "cyclictest",
                    "cpu": 0,
                    "period": "10ms",
                    "run": "5us",
                    "timer_slack": "0us",
                }
            ]
        },
        "run": {"duration": "995ms"},
    }


def test_the_api_gives_cpu_tables() -> None:
    r = torpor.run(scenario("oracle"))
    assert list(r.summary) == ["cpu"]
    row = r.summary["cpu"].iloc[0]
    assert (row.device, row.governor) == (str(HERE / "cpu" / "one-cpu.toml"), "oracle")
    # By hand (see the core's test): 99 wake-ups at SLEEP's 280 us exit latency; 0.0495 mJ
    # running (99 x 5 us at 100 mW), 0.994505 mJ in SLEEP (1 mW), and 100 entries at
    # (10 - 1) mW x 2 ms = 0.018 mJ each.
    assert abs(row.energy_mj - 2.844005) < 1e-9
    assert r.tasks.to_dict("records")[0] == {
        "variant": "base",
        "task": "cyclictest",
        "cpu": 0,
        "wakeups": 99,
        "latency_min_us": 280.0,
        "latency_avg_us": 280.0,
        # Every wake-up takes 280 us: each percentile is 280 us too.
        "latency_p50_us": 280.0,
        "latency_p99_us": 280.0,
        "latency_p99_9_us": 280.0,
        "latency_max_us": 280.0,
        # 99 bursts of 5 us of work in 0.995 s; the timer's period is never overrun.
        "work_ms_per_s": 99 * 0.005 / 0.995,
        "periods_missed": 0,
        # A timer's own chain: each burst ends 280 us + 5 us after its intended wake-up.
        "responses": 99,
        "response_avg_us": 285.0,
        "response_max_us": 285.0,
    }
    # Running and every idle state cover the whole run on each CPU.
    per_cpu = r.residency.groupby("cpu").time_pct.sum()
    assert abs(float(per_cpu.loc[0]) - 100.0) < 1e-9
    # Each row's energy, by hand as above: running 0.0495 mJ; SLEEP 0.994505 mJ and its 100
    # entries' 1.8 mJ; WFI never entered.
    energy = r.residency.set_index("state").energy_mj
    assert abs(energy["running"] - 0.0495) < 1e-12
    assert abs(energy["SLEEP"] - (0.994505 + 1.8)) < 1e-12
    assert energy["WFI"] == 0.0
    assert r.notes and "exit latency" in r.notes[0]


def test_overrides_choose_the_governor(tmp_path: Path) -> None:
    r = torpor.run(scenario("oracle"), **{"policy.cpuidle.governor": "ladder"})
    assert r.summary["cpu"].iloc[0].governor == "ladder"
    # ladder sits in WFI for its first three wake-ups (1 us), then in SLEEP (280 us).
    assert r.tasks.iloc[0].latency_min_us == 1.0


def test_the_command_line_prints_the_governors_and_writes_a_page(cli, tmp_path: Path) -> None:
    example = HERE.parent / "scenarios" / "cpu-gs101-governors.toml"
    out = cli("run", str(example), "--brief", "--report", str(tmp_path))
    assert out.exit_code == 0, out.output
    for governor in ("menu", "teo@5.13", "teo@6.3", "oracle"):
        assert governor in out.output
    page = (tmp_path / "report.html").read_text()
    assert page.count("<svg") == 2 and "Idle misses" in page
