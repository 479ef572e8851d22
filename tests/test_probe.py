"""`torpor probe`: sysfs trees in, platform TOML out.

The fixtures under tests/sysfs/ are written for these tests (their values are chosen, not
copied from a machine); what each assertion expects is worked out from those files by hand. The
last test rebuilds the sysfs trees of 45 real machines from intel/pepc's captures in
../shared/real-data and checks every state against pepc's CSV of the same captures.
"""

from __future__ import annotations

import csv
import shutil
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "sysfs"
SHARED = ROOT.parent / "shared"
PEPC = SHARED / "real-data" / "sysfs-cpuidle"


def probe(cli, root: Path) -> dict:
    r = cli("probe", "--sysfs-root", str(root))
    assert r.exit_code == 0, r.stderr
    return tomllib.loads(r.stdout)


def table(cluster: dict) -> list[tuple]:
    return [
        (s["name"], s["exit_latency_us"], s["target_residency_us"], s.get("disabled", False))
        for s in cluster["state"]
    ]


def test_x86_acpi_idle_poll_power_qos_and_an_offline_cpu(cli):
    doc = probe(cli, FIXTURES / "x86-acpi-idle")
    # CPU 3 has topology but no cpuidle directory: left out. CPUs 0-2 share package 0,
    # cluster 0, no cpu_capacity, and the same four states: one cluster at 1024.
    [c] = doc["cluster"]
    assert (c["name"], c["cpus"], c["capacity"]) == ("package0-cluster0", [0, 1, 2], 1024)
    assert table(c) == [
        ("POLL", 0, 0, False),
        ("C1", 1, 2, False),
        ("C2", 18, 36, False),
        ("C3", 350, 700, True),  # disable = 1
    ]
    poll, c1, c2, c3 = c["state"]
    assert poll["polling"] is True and not any(s.get("polling") for s in (c1, c2, c3))
    # power: POLL 4294967295 (-1) -> none; C1 1000, C2 500 -> kept; C3 12000 > 10000 -> none.
    assert "power_mw" not in poll and "power_mw" not in c3
    assert (c1["power_mw"]["mw"], c2["power_mw"]["mw"]) == (1000.0, 500.0)
    assert all(s.get("level", "cpu") == "cpu" for s in c["state"])
    notes = doc["notes"]
    assert "cpuidle governor: menu (current_governor)" in notes  # from current_governor_ro
    assert "cpuidle driver: acpi_idle" in notes
    assert "pm_qos_resume_latency_us of CPU(s) 0,2: 0 (no constraint)" in notes
    assert any(n.startswith("pm_qos_resume_latency_us of CPU(s) 1: n/a") for n in notes)
    assert any(n.startswith("CPU(s) 3 without a cpuidle directory") for n in notes)


def test_arm_big_little_groups_by_cluster_and_capacity(cli):
    doc = probe(cli, FIXTURES / "arm-big-little")
    little, big = doc["cluster"]  # ordered by their first CPU: 0 is little
    assert (little["name"], little["cpus"], little["capacity"]) == (
        "package0-cluster1",
        [0, 3, 4, 5],
        446,
    )
    assert (big["name"], big["cpus"], big["capacity"]) == ("package0-cluster0", [1, 2], 1024)
    want = [("WFI", 1, 1, False), ("cpu-sleep-0", 1500, 2000, False)]
    want.append(("cluster-sleep-0", 1600, 2500, False))
    assert table(little) == table(big) == want
    # PSCI publishes no power (0): no state has one; sysfs cannot say cluster-sleep-0 is a
    # cluster state, so it is written as a CPU state and the header says so.
    assert not any("power_mw" in s or s.get("polling") for s in little["state"])
    assert "cpuidle governor: teo (current_governor)" in doc["notes"]
    text = (cli("probe", "--sysfs-root", str(FIXTURES / "arm-big-little"))).stdout
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any('level = "cpu"' in line for line in header)
    assert any("cpu_capacity: 6 of 6" in line for line in header)
    assert any(
        "cluster_id 6" in line and "core_id 6 of 6 CPUs (6 cores)" in line for line in header
    )


def test_probe_writes_the_file_that_out_names(cli, tmp_path: Path):
    out = tmp_path / "p.toml"
    r = cli("probe", "--sysfs-root", str(FIXTURES / "arm-big-little"), "--out", str(out))
    assert r.exit_code == 0 and r.stdout == ""
    assert tomllib.loads(out.read_text())["id"] == "probed"


def one_error(r) -> str:
    assert r.exit_code == 2 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("torpor: error: ")
    return lines[0]


def test_a_broken_tree_is_one_line_naming_the_file(cli):
    root = FIXTURES / "broken-latency"
    line = one_error(cli("probe", "--sysfs-root", str(root)))
    state = root / "devices/system/cpu/cpu1/cpuidle/state1"
    assert line == f'torpor: error: {state}/latency:1: "2us": expected the exit latency in us'


def test_missing_and_misordered_files_are_named(cli, tmp_path: Path):
    def broken(change) -> str:
        root = tmp_path / f"t{len(list(tmp_path.iterdir()))}"
        shutil.copytree(FIXTURES / "arm-big-little", root)
        change(root / "devices/system/cpu")
        return one_error(cli("probe", "--sysfs-root", str(root)))

    def drop(rel: str):
        return lambda cpu: (cpu / rel).unlink()

    def put(rel: str, text: str):
        return lambda cpu: (cpu / rel).write_text(text)

    s = "cpu2/cpuidle/state1"
    line = broken(drop(f"{s}/residency"))
    assert line.endswith(f"{s}/residency: missing; expected the target residency in us")
    line = broken(put(f"{s}/residency", "3000\n"))  # above state2's 2500
    assert line.endswith(
        "cpu2/cpuidle/state2/residency:1: 2500 us is below state1's 3000 us; expected states "
        "ordered shallow to deep, as cpuidle drivers register them"
    )
    # 2^64 ns in us, rounded up: past the kernel's `unsigned int` of microseconds.
    line = broken(put(f"{s}/latency", "18446744073709552\n"))
    assert line.endswith(
        f"{s}/latency:1: 18446744073709552: expected the exit latency in us, at most "
        "4294967295 (the kernel's `unsigned int`)"
    )
    line = broken(put("cpu4/cpu_capacity", "2048\n"))
    assert line.endswith("cpu4/cpu_capacity:1: 2048: expected a capacity in 0..=1024")
    line = broken(put("cpu0/power/pm_qos_resume_latency_us", "soon\n"))
    assert line.endswith('pm_qos_resume_latency_us:1: "soon": expected a latency in us or `n/a`')

    def no_governor(cpu: Path):
        (cpu / "cpuidle/current_governor").unlink()
        (cpu / "cpuidle/current_governor_ro").unlink()

    line = broken(no_governor)
    assert line.endswith(
        "cpuidle/current_governor_ro: missing; expected the cpuidle governor's "
        "name (no current_governor either)"
    )
    line = one_error(cli("probe", "--sysfs-root", str(tmp_path / "nowhere")))
    assert line.endswith(
        "nowhere/devices/system/cpu: missing; expected the sysfs CPU directory "
        "(is --sysfs-root where sysfs is mounted?)"
    )


def pepc_trees(tmp: Path) -> dict[str, Path]:
    """One sysfs tree per pepc capture: its `rw|/sys/...|value` lines written as files."""
    trees = {}
    for raw in sorted((PEPC / "pepc-cpu0-raw").glob("*.txt")):
        root = tmp / raw.stem
        for line in raw.read_text().splitlines():
            if line.startswith("#") or not line.strip():
                continue
            _, path, value = line.split("|", 2)
            f = root / path.removeprefix("/sys/")
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(value + "\n")
        trees[raw.stem] = root
    return trees


@pytest.mark.skipif(not PEPC.is_dir(), reason=f"real data not here: {PEPC} is absent")
def test_probe_reads_the_45_machines_pepc_captured(cli, tmp_path: Path):
    rows: dict[str, list[dict]] = defaultdict(list)
    with (PEPC / "pepc-cpuidle-states.csv").open() as f:
        for row in csv.DictReader(f):
            rows[row["platform"]].append(row)
    trees = pepc_trees(tmp_path)
    assert len(rows) == 45 and set(trees) == set(rows)
    for machine, want in rows.items():
        doc = probe(cli, trees[machine])
        [c] = doc["cluster"]  # pepc kept CPU0 only
        assert c["cpus"] == [0] and c["capacity"] == 1024, machine
        want_table = [
            (r["name"], int(r["latency_us"]), int(r["residency_us"]), r["disable"] != "0")
            for r in sorted(want, key=lambda r: int(r["state"]))
        ]
        assert table(c) == want_table, machine
        assert f"cpuidle governor: {want[0]['governor']} (current_governor)" in doc["notes"]
        assert f"cpuidle driver: {want[0]['driver']}" in doc["notes"]
        # Every capture's state 0 is the poll state, and no driver published a power.
        assert c["state"][0].get("polling") is True, machine
        assert not any("power_mw" in s for s in c["state"]), machine
        for s, r in zip(c["state"], sorted(want, key=lambda r: int(r["state"])), strict=True):
            assert f"default_status {r['default_status']}" in s["source"], machine


def test_an_unknown_cluster_id_groups_by_package(cli, tmp_path: Path):
    # x86 prints cluster_id 65535 (BAD_APICID) where it knows no L2 cluster, as in a VM.
    root = tmp_path / "vm"
    shutil.copytree(FIXTURES / "x86-acpi-idle", root)
    for f in (root / "devices/system/cpu").glob("cpu*/topology/cluster_id"):
        f.write_text("65535\n")
    [c] = probe(cli, root)["cluster"]
    assert (c["name"], c["cpus"]) == ("package0", [0, 1, 2])


def test_a_cpu_number_past_linuxs_largest_is_named_by_its_folder(cli, tmp_path: Path):
    root = tmp_path / "t"
    shutil.copytree(FIXTURES / "arm-big-little", root)
    cpus = root / "devices/system/cpu"
    shutil.copytree(cpus / "cpu0", cpus / "cpu9000")
    line = one_error(cli("probe", "--sysfs-root", str(root)))
    assert line == (
        f"torpor: error: {cpus}/cpu9000: expected CPU numbers below 8192 (Linux's largest "
        "CONFIG_NR_CPUS)"
    )
