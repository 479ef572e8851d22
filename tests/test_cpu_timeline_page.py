"""The `--report` page's lanes figure (`cpu-timeline`) for scenarios with `[run] timeline`: a
lane per CPU, one per device beside them (an NVMe drive's power state, a UFS host's clock),
and the slowest IO a task waited for drawn over them from its device's lane, zoomed in below.

Each lane's bars are one SVG group, `cpu-timeline-<variant>-<cpu-ID | device-<nvme | ufs>>`
(the zoomed panel's `cpu-timeline-zoom-<variant>-...`), and the path's
`cpu-timeline-<variant>-request`: the tests count them against the CPUs the platform file lists.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from matplotlib.colors import to_rgb

from test_system_run import PLATFORM, SN530, TICKER, report_pages, scenario, write
from torpor import native
from torpor.report import html

HERE = Path(__file__).resolve().parent
TWO_CLUSTERS = HERE / "cpu" / "two-clusters.toml"
WINDOW_MS = 100
LANE = re.compile(r'<g id="cpu-timeline-(\d+)-(cpu-\d+|device-\w+)"')

NVME = f'[platform.nvme]\npreset = "{SN530}"'
UFS = '[platform.ufs]\npreset = "samsung-ufs40-class"'
# UFS has one interrupt (no MCQ): a fixed CPU, not the reader's, so the path has an IPI.
DEVICES = {"nvme": (NVME, 'mode = "managed"'), "ufs": (UFS, 'mode = "fixed"\ncpus = [1]')}


def cpu_ids(platform: str) -> set[int]:
    """The CPUs a platform file lists, over its clusters."""
    return {cpu for cluster in tomllib.loads(platform)["cluster"] for cpu in cluster["cpus"]}


def lanes(page: str) -> dict[str, list[str]]:
    """Per variant index, the lanes of its full-window panel, top to bottom."""
    out: dict[str, list[str]] = {}
    for variant, lane in LANE.findall(page):
        out.setdefault(variant, []).append(lane)
    return out


def run_json(cli: Any, path: Path) -> dict[str, Any]:
    got = cli("run", str(path), "--json")
    assert got.exit_code == 0, got.output
    return json.loads(got.stdout)


@pytest.mark.parametrize("device", list(DEVICES))
def test_the_system_page_draws_a_lane_per_cpu_the_device_and_the_slowest_io(
    cli, tmp_path: Path, device: str
):
    platform, irq = DEVICES[device]
    text = scenario(platform, irq) + f'timeline = "{WINDOW_MS}ms"\n'
    page = report_pages(cli, write(tmp_path, text), tmp_path)
    assert page.count('<svg id="cpu-timeline"') == 1
    # Beside the IO decomposition.
    assert page.index('<svg id="io-path"') < page.index('<svg id="cpu-timeline"')
    # The device on top, then one lane per CPU of the platform file.
    cpus = cpu_ids(PLATFORM)
    assert lanes(page) == {"0": [f"device-{device}", *[f"cpu-{c}" for c in sorted(cpus)]]}
    # The reader reads every 20 ms: its slowest IO, in the window and zoomed in.
    assert page.count('<g id="cpu-timeline-0-request"') == 1
    assert page.count('<g id="cpu-timeline-zoom-0-request"') == 1
    assert page.count(f'<g id="cpu-timeline-zoom-0-device-{device}"') == 1
    # Every figure is whole inside its <figure>.
    assert page.count("<figure>") == page.count("</svg>\n</figure>")


def test_the_figure_shows_the_recorded_window_and_zooms_on_the_slowest_io(tmp_path: Path):
    text = scenario() + f'timeline = "{WINDOW_MS}ms"\n'
    report = native.run_scenario_file(str(write(tmp_path, text)))
    fig = html.cpu_timeline_figure(report)
    full, zoom = fig.axes
    assert full.get_xlim() == (0.0, WINDOW_MS)
    path = report["variants"][0]["cpu"]["slowest_io"]
    lo, hi = zoom.get_xlim()
    assert 0 <= lo < path["submitted_s"] * 1e3 < path["running_s"] * 1e3 < hi <= WINDOW_MS
    assert [t.get_text() for t in full.get_yticklabels()] == [
        report["variants"][0]["nvme"]["device"],
        *[f"cpu {c}" for c in sorted(cpu_ids(PLATFORM))],
    ]
    # The legend names what the lanes show: the platform's idle state, the other CPU lanes,
    # the drive's power state (the reader's 20 ms sleeps keep it in PS0), the path.
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    states = [s["name"] for c in tomllib.loads(PLATFORM)["cluster"] for s in c["state"]]
    assert legend == [*states, "exit", "kernel", "running", "PS0", "slowest IO"]


def test_with_two_devices_the_slowest_io_starts_on_the_lane_of_the_device_that_served_it(
    tmp_path: Path,
):
    """A drive and a UFS device: a lane each, the drive's (slot 0) first. Only the reader's IO
    (to the UFS device) is a task's, so the slowest IO a task waited for is the UFS device's,
    and its path must start on the UFS lane, in the full window and zoomed in."""
    text = f"""
[platform.cpu]
file = "cpus.toml"
{NVME}
{UFS}
[platform.irq.nvme]
mode = "managed"
[platform.irq.ufs]
mode = "fixed"
cpus = [1]
[policy.cpuidle]
governor = "menu"
[[workload.task]]
name = "reader"
cpu = 0
sleep = "20ms"
run = "50us"
timer_slack = "0us"
[workload.task.io]
device = "ufs"
rw = "randread"
bs = "4k"
[workload]
device = "nvme"
[[workload.job]]
name = "backup"
rw = "write"
bs = "128k"
rate_iops = 50
time_based = true
[run]
duration = "200ms"
timeline = "{WINDOW_MS}ms"
"""
    report = native.run_scenario_file(str(write(tmp_path, text)))
    v = report["variants"][0]
    assert v["cpu"]["slowest_io"]["device"] == "ufs"
    fig = html.cpu_timeline_figure(report)
    assert len(fig.axes) == 2
    for ax in fig.axes:
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels[:2] == [v["nvme"]["device"], v["ufs"]["device"]]
        path = next(c for c in ax.collections if (c.get_gid() or "").endswith("-request"))
        (start, _end), *_ = path.get_segments()
        assert labels[round(start[1])] == v["ufs"]["device"]


def test_the_cpu_only_page_draws_a_lane_per_cpu_per_variant(cli, tmp_path: Path):
    """Two clusters with their own idle states, two governors; no device, no IO."""
    path = tmp_path / "cpus.toml"
    path.write_text(
        f"""
[platform.cpu]
file = "{TWO_CLUSTERS}"
[policy.cpuidle]
governor = "menu"
[[workload.task]]
name = "little"
cpu = 0
period = "3ms"
run = "200us"
[[workload.task]]
name = "big"
cpu = 3
period = "7ms"
run = "1ms"
[run]
duration = "200ms"
timeline = "{WINDOW_MS}ms"
[[variant]]
name = "menu"
[[variant]]
name = "teo"
[variant.policy.cpuidle]
governor = "teo"
"""
    )
    page = report_pages(cli, path, tmp_path)
    assert page.count('<svg id="cpu-timeline"') == 1
    cpus = [f"cpu-{c}" for c in sorted(cpu_ids(TWO_CLUSTERS.read_text()))]
    assert lanes(page) == {"0": cpus, "1": cpus}
    assert '-request"' not in page and "cpu-timeline-zoom" not in page

    # Idle states in blues, darker the deeper (each cluster lists its states shallow first).
    fig = html.cpu_timeline_figure(run_json(cli, path))
    legend = fig.legends[0]
    shown = {
        t.get_text(): h.get_facecolor()
        for t, h in zip(legend.get_texts(), legend.legend_handles, strict=True)
    }
    for cluster in tomllib.loads(TWO_CLUSTERS.read_text())["cluster"]:
        idle = [s["name"] for s in cluster["state"] if s["name"] in shown]
        light = [sum(to_rgb(shown[name])) for name in idle]
        assert light == sorted(light, reverse=True), (idle, light)
    for lane, color in (("exit", "tab:orange"), ("running", "tab:green")):
        assert to_rgb(shown[lane]) == to_rgb(color)


def test_without_a_timeline_there_is_no_lanes_figure(cli, tmp_path: Path):
    page = report_pages(cli, write(tmp_path, scenario()), tmp_path)
    assert 'id="io-path"' in page and 'id="cpu-timeline"' not in page
    cpu_only = tmp_path / "cpu-only.toml"
    cpu_only.write_text(
        f'[platform.cpu]\nfile = "{tmp_path / "cpus.toml"}"\n{TICKER}[run]\nduration = "100ms"\n'
    )
    page = report_pages(cli, cpu_only, tmp_path / "cpu")
    assert "Idle misses" in page and 'id="cpu-timeline"' not in page
