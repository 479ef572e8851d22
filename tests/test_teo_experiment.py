"""`torpor reproduce teo`: seed 002's claims, each rule checked at its boundary on rows built
by hand, and the experiment's output."""

from __future__ import annotations

import json
from pathlib import Path

from torpor.experiments import teo


def rows_with(key: str, values: dict[str, tuple[float, ...]]) -> list[dict]:
    """Rows for every workload and governor, `key` set per workload to (menu, teo@5.13,
    teo-util, teo, oracle)."""
    out = []
    for w in teo.WORKLOADS:
        for g, v in zip(teo.GOVERNORS, values.get(w, values["*"]), strict=True):
            out.append(
                {
                    "workload": w,
                    "governor": g,
                    "too_deep_pct": 0.0,
                    "too_shallow_pct": 0.0,
                    "avg_power_mw": 100.0,
                    "wakeup_latency_gmean_us": 100.0,
                    "work_ms_per_s": 100.0,
                    "frame_ms": 10.0,
                    "frames_missed": 0,
                }
                | {key: v}
            )
    return out


def test_too_deep_needs_a_strict_order_on_every_workload() -> None:
    assert teo.claim_too_deep(rows_with("too_deep_pct", {"*": (15, 10, 4, 0, 0)}))["ok"] is True
    # A tie on one workload breaks the strict order.
    tie = rows_with("too_deep_pct", {"*": (15, 10, 4, 0, 0), "jankbench": (15, 4, 4, 0, 0)})
    assert teo.claim_too_deep(tie)["ok"] is False


def test_too_shallow_needs_the_reverse_order() -> None:
    assert teo.claim_too_shallow(rows_with("too_shallow_pct", {"*": (2, 6, 14, 0, 0)}))["ok"]
    flipped = rows_with("too_shallow_pct", {"*": (2, 6, 14, 0, 0), "speedometer": (6, 2, 14, 0, 0)})
    assert teo.claim_too_shallow(flipped)["ok"] is False


def test_latency_counts_only_the_latency_sensitive_workloads() -> None:
    key = "wakeup_latency_gmean_us"
    # teo-util below menu on geekbench and pcmark-web; worse on jankbench does not matter.
    ok = rows_with(key, {"*": (100, 90, 60, 0, 0), "jankbench": (100, 90, 200, 0, 0)})
    assert teo.claim_latency(ok)["ok"] is True
    # Equal to menu on one of them: fails.
    equal = rows_with(key, {"*": (100, 90, 60, 0, 0), "pcmark-web": (100, 90, 100, 0, 0)})
    assert teo.claim_latency(equal)["ok"] is False


def test_power_is_mixed_only_with_a_rise_and_a_fall_each_within_three_seed_figures() -> None:
    key = "avg_power_mw"
    # The seed: +6.7 % Geekbench, +2.71 % PCMark, -16.08 % Jankbench, +3.05 % Speedometer.
    mixed = rows_with(key, {"*": (100, 0, 101, 0, 0), "jankbench": (100, 0, 99, 0, 0)})
    assert teo.claim_power_mixed(mixed)["ok"] is True
    rising = rows_with(key, {"*": (100, 0, 101, 0, 0)})
    assert teo.claim_power_mixed(rising)["ok"] is False
    # Bounds: PCMark may rise up to 3 x 2.71 = 8.13 %, not 8.2 %; Jankbench may fall up to
    # 3 x 16.08 = 48.24 %, not 48.3 %.
    edge = {"*": (100, 0, 101, 0, 0), "jankbench": (100, 0, 51.77, 0, 0)}
    assert teo.claim_power_mixed(rows_with(key, edge | {"pcmark-web": (100, 0, 108.12, 0, 0)}))[
        "ok"
    ]
    assert not teo.claim_power_mixed(rows_with(key, edge | {"pcmark-web": (100, 0, 108.2, 0, 0)}))[
        "ok"
    ]
    too_low = {"*": (100, 0, 101, 0, 0), "jankbench": (100, 0, 51.7, 0, 0)}
    assert teo.claim_power_mixed(rows_with(key, too_low))["ok"] is False


def test_scores_improve_on_each_workload_within_three_seed_figures() -> None:
    # Work per second: Geekbench +1.36 % (bound 4.08 %), PCMark +0.15 % (0.45 %), Speedometer
    # +1.83 % (5.49 %); Jankbench's mean frame -9.0 % (a fall of up to 27 %).
    def rows(work: dict[str, float], frame_menu: float, frame_util: float) -> list[dict]:
        per = {w: (100, 0, 100 + g, 0, 0) for w, g in work.items()}
        out = rows_with("work_ms_per_s", per | {"*": (100, 0, 100, 0, 0)})
        for r in out:
            if r["workload"] == "jankbench" and r["governor"] in ("menu", "teo-util"):
                r["frame_ms"] = frame_menu if r["governor"] == "menu" else frame_util
        return out

    good = {"geekbench": 4.0, "pcmark-web": 0.4, "speedometer": 5.0, "jankbench": 0.0}
    assert teo.claim_benchmark_scores(rows(good, 10.0, 7.4))["ok"] is True
    # Jankbench's frame 26.9 % shorter passes, 28 % does not; a longer frame fails.
    assert teo.claim_benchmark_scores(rows(good, 10.0, 7.31))["ok"] is True
    assert teo.claim_benchmark_scores(rows(good, 10.0, 7.2))["ok"] is False
    assert teo.claim_benchmark_scores(rows(good, 10.0, 10.1))["ok"] is False
    # PCMark's +0.5 % is past its bound; no gain at all on Speedometer fails.
    assert teo.claim_benchmark_scores(rows(good | {"pcmark-web": 0.5}, 10, 9))["ok"] is False
    assert teo.claim_benchmark_scores(rows(good | {"speedometer": 0.0}, 10, 9))["ok"] is False


def test_the_revert_claim_needs_the_cluster_state_missed_and_paid_for() -> None:
    def revert(util_pct: float, teo_pct: float, util_mw: float) -> list[dict]:
        return [
            {"governor": "teo-util", "cluster_state_pct_cpu0": util_pct, "avg_power_mw": util_mw},
            {"governor": "teo@6.12", "cluster_state_pct_cpu0": teo_pct, "avg_power_mw": 10.0},
        ]

    assert teo.claim_revert(revert(0.5, 90.0, 11.0))["ok"] is True
    assert teo.claim_revert(revert(1.0, 90.0, 11.0))["ok"] is False  # bound: < 1 %
    assert teo.claim_revert(revert(0.5, 10.0, 11.0))["ok"] is False  # bound: > 10 %
    assert teo.claim_revert(revert(0.5, 90.0, 10.0))["ok"] is False  # no power cost


def test_reproduce_teo_writes_the_issues_columns(cli, tmp_path: Path) -> None:
    r = cli("reproduce", "teo", "--out", str(tmp_path))
    assert r.exit_code == 0, r.output
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["experiment"] == "teo"
    assert len(results["runs"]) == len(teo.WORKLOADS) * len(teo.GOVERNORS)
    for run in results["runs"]:
        assert set(run) == {
            "workload",
            "governor",
            "too_deep_pct",
            "too_shallow_pct",
            "avg_power_mw",
            "wakeup_latency_gmean_us",
            "work_ms_per_s",
            "frame_ms",
            "frames_missed",
        }
        # The frame columns are Jankbench's alone.
        assert (run["frame_ms"] is None) == (run["workload"] != "jankbench")
    # Every claim is checkable now that the runs scale frequency.
    assert [c["ok"] for c in results["claims"]].count(None) == 0
    page = (tmp_path / "report.html").read_text()
    assert page.count("<svg") == 6
    assert "perc_diff" in (tmp_path / "report.md").read_text()
