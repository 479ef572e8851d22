"""Shared helpers: run the real `torpor` CLI in-process and capture what a user would see."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from torpor.cli import main


@pytest.fixture
def cli():
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(main, list(args), catch_exceptions=False)

    return invoke


def reproduce_into(out, area: str, *extra: str):
    """Runs `torpor reproduce AREA --out OUT [extra...]` in-process and checks it succeeded."""
    got = CliRunner().invoke(main, ["reproduce", area, "--out", str(out), *extra])
    assert got.exit_code == 0, got.output
    return got


#: A two-device machine: the laptop's CPUs and drive, a UFS device beside them read by a task of
#: its own, and each CPU's and device's lanes over the first 200 ms.
TWO_DEVICES = """
[platform.cpu]
preset = "amd-zen2-acpi-idle"
[platform.nvme]
preset = "wdc-pc-sn530-256gb"
[platform.ufs]
preset = "samsung-ufs40-class"
[platform.irq.nvme]
mode = "managed"
[platform.irq.ufs]
mode = "fixed"
cpus = [0]
[[workload.task]]
name = "file reader"
cpu = 1
sleep_min = "50ms"
sleep_max = "250ms"
run = "2ms"
[workload.task.io]
device = "nvme"
rw = "randread"
bs = "128k"
[[workload.task]]
name = "photo reader"
cpu = 2
sleep = "20ms"
run = "100us"
[workload.task.io]
device = "ufs"
rw = "randread"
bs = "16k"
[run]
duration = "5s"
timeline = "200ms"
"""

UFS = """
[platform.ufs]
preset = "samsung-eufs31-512gb"
[workload]
[[workload.job]]
name = "r"
rw = "randread"
bs = "4k"
rate_iops = 50
[run]
duration = "2s"
"""


@pytest.fixture(scope="session")
def written_pages(tmp_path_factory: pytest.TempPathFactory):
    """Every kind of page torpor writes, written once: each `reproduce` area's report.html and
    the one report of `reproduce all` ("index"; its stdout kept beside it in stdout.txt), the
    `run --report` page of an NVMe drive, CPUs, a UFS device and a two-device machine, and a
    sweep's page. Returns ``{name: (path, figures)}``,
    ``figures`` the matplotlib figures drawn into that page (as they were drawn)."""
    from pathlib import Path

    from torpor.report import html

    root = Path(__file__).resolve().parent.parent
    scenarios = root / "scenarios"
    out = tmp_path_factory.mktemp("pages")
    (out / "two-devices.toml").write_text(TWO_DEVICES)
    (out / "ufs.toml").write_text(UFS)
    figures: list[object] = []
    draw = html._svg

    def recorded(fig, svg_id=""):
        figures.append(fig)
        return draw(fig, svg_id)

    runs = {
        "run-nvme": ["run", str(scenarios / "apst-sn530-workflow7.toml"), "--report"],
        "run-cpu": ["run", str(scenarios / "cpu-gs101-governors.toml"), "--report"],
        "run-ufs": ["run", str(out / "ufs.toml"), "--report"],
        "run-two-devices": ["run", str(out / "two-devices.toml"), "--report"],
        "sweep": ["sweep", str(scenarios / "apst-sn530-sweep.toml"), "--report"],
        "reproduce": ["reproduce", "all", "--out"],
    }
    pages: dict[str, tuple[Path, list[object]]] = {}
    runner = CliRunner()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(html, "_svg", recorded)
        for name, args in runs.items():
            target = out / "sweep.html" if name == "sweep" else out / name
            start = len(figures)
            got = runner.invoke(main, [*args, str(target)], catch_exceptions=False)
            assert got.exit_code == 0, (name, got.output)
            if name == "reproduce":
                # Each area's figures in the order the areas ran, then the one report's own;
                # it shows each area's first figure as drawn for the area's page.
                areas = [out / name / a / "report.html" for a in ("apst", "teo", "devfreq")]
                areas += [out / name / a / "report.html" for a in ("hpb", "qos")]
                drawn = figures[start:]
                for page in areas:
                    count = page.read_text().count("<figure>")
                    pages[f"reproduce-{page.parent.name}"] = (page, drawn[:count])
                    drawn = drawn[count:]
                keys = [pages[f"reproduce-{page.parent.name}"][1][0] for page in areas]
                pages["index"] = (out / name / "report.html", keys + drawn)
                # What the terminal showed, for the test of its last line.
                (out / name / "stdout.txt").write_text(got.output)
            else:
                page = target if name == "sweep" else target / "report.html"
                pages[name] = (page, figures[start:])
    return pages
