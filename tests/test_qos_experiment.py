"""`torpor reproduce qos` (seed 004 and the NVMe latency-tolerance scenario): rows against values
worked by hand from the platform the experiment writes (WFI 1 us, spc 280 us; power by the
stated estimates) and from the SN530's power states, and the claims' verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from conftest import reproduce_into

    out = tmp_path_factory.mktemp("qos")
    reproduce_into(out, "qos")
    return out


@pytest.fixture(scope="module")
def results(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())


def row(results: dict, config: str, cpu: int | str) -> dict:
    return next(r for r in results["runs"] if r["config"] == config and r["cpu"] == cpu)


def test_rows_have_exactly_the_issue_columns(results: dict) -> None:
    cols = ["config", "cpu", "lat_min_us", "lat_avg_us", "lat_max_us", "residency_pct", "energy_mj"]
    assert [list(r) for r in results["runs"]] == [cols] * 15
    assert [(r["config"], r["cpu"]) for r in results["runs"]] == [
        (c, cpu) for c in ("none", "global", "per-cpu") for cpu in (0, 1, 2, 3, "all")
    ]


def test_cpu0_latency_is_slack_path_and_the_exit_of_the_state_each_limit_leaves(
    results: dict,
) -> None:
    # cyclictest (a normal task) wakes 50 us after each 10 ms point (its timer slack), then
    # pays the state's real exit, the timer interrupt (10-24 us) and the scheduler (22-36 us),
    # each uniform (the qcom-msm8916 preset). Without a limit menu picks spc (real exit 150
    # us): 232-260 us, mean 50 + 150 + 17 + 29 = 246. A 279 us limit (global or cpu0's)
    # excludes spc (280 > 279), leaving WFI (exit 0.05-1 us): 82.05-111 us, mean ~96.5.
    # Over 999 wake-ups the mean's standard error is ~0.2 us.
    none = row(results, "none", 0)
    assert none["lat_min_us"] >= 232 and none["lat_max_us"] <= 260
    assert none["lat_avg_us"] == pytest.approx(246, abs=1.5)
    for config in ("global", "per-cpu"):
        r = row(results, config, 0)
        assert r["lat_min_us"] >= 82 and r["lat_max_us"] <= 111
        assert r["lat_avg_us"] == pytest.approx(96.5, abs=1.5)
        assert all(row(results, config, c)["lat_avg_us"] is None for c in (1, 2, 3))


def test_idle_cpus_follow_the_limit_that_reaches_them(results: dict) -> None:
    # cpu1-3 run nothing: one idle period each, the whole 10 s, in the deepest state the
    # limit allows: spc without a limit or with cpu0's, WFI under the global one.
    for c in (1, 2, 3):
        assert row(results, "none", c)["residency_pct"] == {"WFI": 0.0, "spc": 100.0}
        assert row(results, "per-cpu", c)["residency_pct"] == {"WFI": 0.0, "spc": 100.0}
        assert row(results, "global", c)["residency_pct"] == {"WFI": 100.0, "spc": 0.0}


def test_energy_of_an_idle_cpu_by_the_estimate_rule(results: dict) -> None:
    # P0 = 110 uW/MHz/V^2 x 0.9 V^2 x 200 MHz = 17.8 mW (rounded to 0.1); WFI 0.07 x P0 =
    # 1.246 mW and spc 0.035 x P0 = 0.623 mW, for 10 s: 12.46 and 6.23 mJ.
    assert row(results, "global", 1)["energy_mj"] == pytest.approx(12.46, abs=1e-3)
    assert row(results, "per-cpu", 1)["energy_mj"] == pytest.approx(6.23, abs=1e-3)
    # The platform row adds its CPUs.
    for config in ("none", "global", "per-cpu"):
        total = sum(row(results, config, c)["energy_mj"] for c in (0, 1, 2, 3))
        assert row(results, config, "all")["energy_mj"] == pytest.approx(total, abs=0.01)


def test_claims_and_the_nvme_scenario(results: dict, out: Path) -> None:
    verdicts = [c["ok"] for c in results["claims"]]
    # Halving holds (246 -> 96.5 us, 0.39), the residency and energy claims hold; without a
    # limit the avg is within 30 % of 205 but the min (232) is not of 87; with cpu0's limit
    # both sit on the fitted figures.
    assert verdicts == [True, True, True, True, False, True]
    nvme = results["nvme_tolerance"]
    # v5.14 on the SN530 (PS3 14.9 ms total <= 15 ms at 100 ms; PS4 44 ms <= 100 ms at 2 s);
    # after 10000 us: PS3's 11 ms and PS4's 39 ms exits exceed it, no transition left.
    assert nvme["table_before"] == [
        "PS0 -> PS3 after 100 ms",
        "PS1 -> PS3 after 100 ms",
        "PS2 -> PS3 after 100 ms",
        "PS3 -> PS4 after 2000 ms",
    ]
    assert nvme["table_after"] == ["APST enabled, no transition"]
    before, after = nvme["windows"]
    assert before["lat_max_us"] >= 11_000 > after["lat_max_us"]
    assert (out / "report.html").read_text().count("<svg") == 1


def test_idlestat_comparison_against_no_limit(results: dict) -> None:
    # Under the global limit cpu1 spends its one 10 s idle period in WFI instead of spc:
    # WFI +10 s and +1 hit, spc -10 s and -1 hit against the baseline.
    table = results["idlestat"]["global"]
    at = table.index("| cpu1 |")
    assert table[at + 2 : at + 6] == [
        "| WFI      |   10.00s |   10.00s |     1 |     0 |     0 |",
        "|          |  +10.00s |  +10.00s |    +1 |    +0 |    +0 |",
        "| spc      |      0us |      0us |     0 |     0 |     0 |",
        "|          |  -10.00s |  -10.00s |    -1 |    +0 |    +0 |",
    ]
