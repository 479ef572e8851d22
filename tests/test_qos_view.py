"""`torpor qos`: the PM QoS constraints of a scenario over its run, as a user reads them.

Expected values are worked by hand from the presets' figures and the governors' admission
test (a state is usable when its exit latency is at most `latency_req`; state 0 always), not
taken from the program's output.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).parent.parent

WFI = ["WFI"]
CPU_ALL = ["WFI", "CPU_SLEEP_0", "CLUSTER_RET", "CLUSTER_PWRDN"]
CLUSTER_ALL = ["CLUSTER_RET", "CLUSTER_PWRDN"]


def qos_json(cli, path: Path) -> dict:
    r = cli("qos", str(path), "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_msm8916_steps_by_hand(cli) -> None:
    view = qos_json(cli, ROOT / "scenarios" / "qos-msm8916.toml")
    (variant,) = view["variants"]
    assert variant["platform"] == "cpu"
    steps = variant["steps"]
    # The start, cyclictest's held file at 0 s, cpu0's file at 2 s, the daemon's write at 4 s.
    assert [s["at_ns"] for s in steps] == [0, 0, 2_000_000_000, 4_000_000_000]
    assert [s["holder"] for s in steps] == [None, "cyclictest", "rt-daemon", "rt-daemon"]
    assert [s["global_limit_us"] for s in steps] == [None, 10000, 10000, 0]

    def per_cpu(step: dict) -> list[tuple[int, list[str]]]:
        return [(c["latency_req_us"], c["states"]) for c in step["cpus"]]

    none = 2_000_000_000  # PM_QOS_CPU_LATENCY_DEFAULT_VALUE: nothing asked
    # Start: no constraint, every state; the cluster may power down.
    assert per_cpu(steps[0]) == [(none, CPU_ALL)] * 4
    # 10 000 us: the deepest exit latency is 4000 us, so nothing changes but the limit.
    assert per_cpu(steps[1]) == [(10000, CPU_ALL)] * 4
    assert steps[1]["clusters"] == [{"name": "cpu0-3", "states": CLUSTER_ALL}]
    # cpu0 at 100 us: CPU_SLEEP_0's 280 us is over, so WFI alone; cpu1-3 keep 10 000 us and
    # every state, but the cluster states need cpu0 too: none left for the cluster.
    assert per_cpu(steps[2]) == [(100, WFI)] + [(10000, CPU_ALL)] * 3
    assert steps[2]["cpus"][0]["resume_latency_us"] == 100
    assert steps[2]["clusters"] == [{"name": "cpu0-3", "states": []}]
    # Global 0: every CPU at 0 us; WFI (1 us) stays, as the governors' state 0.
    assert per_cpu(steps[3]) == [(0, WFI)] * 4
    assert steps[3]["clusters"][0]["states"] == []


def test_msm8916_table(cli) -> None:
    r = cli("qos", str(ROOT / "scenarios" / "qos-msm8916.toml"))
    assert r.exit_code == 0, r.output
    assert "cyclictest: cpu_dma_latency" in r.output
    assert "<- 10000" in r.output
    # At 2 s, CPUs 1-3 share one row (same limit, same states); cpu0 has its own.
    assert "cpu1-3" in r.output
    assert "cluster cpu0-3" in r.output
    assert "(no cluster state)" in r.output


def nvme_scenario(tmp_path: Path) -> Path:
    path = tmp_path / "sn530.toml"
    path.write_text(
        """[platform.nvme]
preset = "wdc-pc-sn530-256gb"

[workload]
apst_workflow = 7

[[qos.request]]
at = "10s"
holder = "tuned"
target = "nvme0/power/pm_qos_latency_tolerance_us"
value = "10000"

[[qos.request]]
at = "20s"
holder = "tuned"
target = "nvme0/power/pm_qos_latency_tolerance_us"
value = "auto"
"""
    )
    return path


def test_sn530_tolerance_steps_by_hand(cli, tmp_path: Path) -> None:
    # SN530: PS3 ENLAT 3900 + EXLAT 11000 = 14 900 us, PS4 5000 + 39000 = 44 000 us. v5.14
    # defaults: ps_max_latency_us 100 000 (both EXLATs within it); PS3's total is within the
    # 15 000 us primary tolerance, PS4's within the 100 000 us secondary: both are targets.
    # "10000": both EXLATs exceed it, no target. "auto": no limit, both again.
    view = qos_json(cli, nvme_scenario(tmp_path))
    (variant,) = view["variants"]
    assert variant["platform"] == "nvme"
    got = [
        (
            s["at_ns"] // 1_000_000_000,
            s["written"],
            s["tolerance_us"],
            s["ps_max_latency_us"],
            s["sent"],
            s["targets"],
            s["apst_off"],
        )
        for s in variant["steps"]
    ]
    assert got == [
        (0, None, 100000, 100000, True, [3, 4], None),
        (10, "10000", 10000, 10000, True, [], None),
        (20, "auto", None, None, True, [3, 4], None),
    ]
    r = cli("qos", str(nvme_scenario(tmp_path)))
    assert r.exit_code == 0, r.output
    assert "PS3 PS4" in r.output


def test_a_bad_sysfs_value_is_one_line_at_its_line(cli, tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    text = (ROOT / "scenarios" / "qos-msm8916.toml").read_text()
    path.write_text(text.replace('value = "100"', 'value = "-100"'))
    line = text.splitlines().index('value = "100"') + 1
    r = cli("qos", str(path))
    assert r.exit_code == 2
    assert r.output.startswith(f"torpor: error: {path}:{line}: ")
    assert "pm_qos_resume_latency_us" in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_ufs_is_refused(cli) -> None:
    path = ROOT / "scenarios" / "ufs-boost.toml"
    r = cli("qos", str(path))
    assert r.exit_code == 2
    assert r.output.startswith(f"torpor: error: {path}:")
    assert "[platform.ufs]" in r.output
