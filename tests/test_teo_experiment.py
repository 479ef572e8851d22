"""`torpor reproduce teo`: the experiment's output (its claim rules are tested in the core:
`experiments::teo`)."""

from __future__ import annotations

import json
from pathlib import Path

from torpor.experiments import teo


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
