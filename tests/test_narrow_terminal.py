"""At 80 columns, tables wrap between whole words: no state name or header is cut or broken
(`torpor qos`, `torpor idle replay`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

import torpor.cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def narrow(monkeypatch):
    monkeypatch.setattr(torpor.cli, "console", Console(highlight=False, markup=False, width=80))


def words_of(text: str) -> set[str]:
    return {w.strip(",:%()") for line in text.splitlines() for w in line.split()}


def test_qos_keeps_state_names_whole_at_80_columns(cli, narrow):
    text = cli("qos", str(ROOT / "scenarios/qos-msm8916.toml")).output
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    # MSM8916's four states, each printed whole at least once; no fragment of one.
    names = {"WFI", "CPU_SLEEP_0", "CLUSTER_RET", "CLUSTER_PWRDN"}
    assert names <= words_of(text)
    assert not {"CPU_SLEEP_", "CLUSTER_RE", "CLUSTER_PW", "CLUSTER_PWRD"} & words_of(text)


def test_idle_replay_fits_80_columns_without_cutting(cli, narrow):
    trace = str(ROOT / "tests/ftrace/replay-timers.report.txt")
    text = cli(
        "idle",
        "replay",
        trace,
        "--governor",
        "menu,teo,teo-util,oracle",
        "--platform",
        "arm-juno-r0",
    ).output
    assert "…" not in text
    assert "actual (trace): WFI 33%, CPU_SLEEP_0 33%, CLUSTER_SLEEP_0 33%" in text
    assert "oracle: WFI 33%, CLUSTER_SLEEP_0 67%" in text
