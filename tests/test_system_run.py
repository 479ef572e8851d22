"""Whole-system runs (CPUs with a device) through the command line and the Python API.

The CPU platform is written here with a `[wakeup]` table of fixed costs (min_us == max_us, and
each state's real exit its declared one), so every part of a task's request latency is known
beforehand (docs/scenario.md, "The whole system"; docs/cpu-platform.md, "The wake-up path"):

- irq: the completion's interrupt handler, IO_IRQ, on the reader's own CPU under the managed
  mapping (no IPI); with a fixed mapping on another CPU, IO_IRQ + IPI;
- exit: the reader's CPU leaving WFI, WFI_EXIT (the only state, so the governor has no other
  choice; `exit = 1.0` makes the real exit the declared one); with an IPI, both CPUs' exits;
- sched: the switch to the reader, SCHED, as nothing else runs on its CPU;
- device: the SN530 preset's 4 KiB read in PS0 (`[service] read_4k_us` of presets/nvme), as the
  reader's 20 ms sleeps are far below the APST table's 100 ms idle time before PS3.

A task without IO on another CPU, woken by its timer (no slack), waits WFI_EXIT + TIMER_IRQ +
SCHED each time. Its timer fires at 1 + 10k ms, never on a 4 ms tick (HZ = 250).
"""

from __future__ import annotations

import json
import re
import tomllib
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import torpor
from torpor import native
from torpor.report import system_text

ROOT = Path(__file__).resolve().parent.parent

TIMER_IRQ, IO_IRQ, IPI, SCHED, WFI_EXIT = 10.0, 20.0, 5.0, 30.0, 7.0
SN530 = "wdc-pc-sn530-256gb"
READ_4K_US = tomllib.loads((ROOT / "presets" / "nvme" / f"{SN530}.toml").read_text())["service"][
    "read_4k_us"
]

PLATFORM = f"""
id = "test-three"
name = "three CPUs with a fixed wake-up path"
source = "tests/test_system_run.py"
[wakeup]
timer_irq = {{ min_us = {TIMER_IRQ}, max_us = {TIMER_IRQ}, source = "test" }}
io_irq = {{ min_us = {IO_IRQ}, max_us = {IO_IRQ}, source = "test" }}
ipi = {{ min_us = {IPI}, max_us = {IPI}, source = "test" }}
sched = {{ min_us = {SCHED}, max_us = {SCHED}, source = "test" }}
exit = {{ min = 1.0, max = 1.0, source = "test" }}
[[cluster]]
name = "c"
cpus = [0, 1, 2]
capacity = 1024
[[cluster.state]]
name = "WFI"
exit_latency_us = {WFI_EXIT:g}
target_residency_us = {WFI_EXIT:g}
power_mw = {{ mw = 5.0, source = "test" }}
[[cluster.opp]]
freq_khz = 1000000
power_mw = {{ mw = 100.0, source = "test" }}
"""

TICKER = """
[[workload.task]]
name = "ticker"
cpu = 2
period = "10ms"
phase = "1ms"
run = "20us"
timer_slack = "0us"
"""


def scenario(
    device: str = f'[platform.nvme]\npreset = "{SN530}"',
    irq: str = 'mode = "managed"',
    ticker: str = TICKER,
) -> str:
    return f"""
[platform.cpu]
file = "cpus.toml"
{device}
[platform.irq]
{irq}
[policy.cpuidle]
governor = "menu"
[[workload.task]]
name = "reader"
cpu = 0
sleep = "20ms"
run = "50us"
timer_slack = "0us"
[workload.task.io]
device = "{"ufs" if "ufs" in device else "nvme"}"
rw = "randread"
bs = "4k"
{ticker}
[run]
duration = "1s"
"""


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "cpus.toml").write_text(PLATFORM)
    path = tmp_path / "system.toml"
    path.write_text(text)
    return path


def io_rows(text: str, variant: str = "base") -> dict[tuple[str, str], list[str]]:
    """The "IO as the tasks saw it" table: (task, part) -> [IOs, p50, p99, p99.9, max] on a
    task's first row (total), [p50, p99, p99.9, max] on the others."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if f"IO as the tasks saw it: {variant}" in line)
    rows: dict[tuple[str, str], list[str]] = {}
    task = ""
    for line in lines[start + 1 :]:
        words = line.split()
        part = next((w for w in words if w in system_text.IO_PARTS), None)
        if part is None:
            continue
        at = words.index(part)
        if part == "total":  # task, cpu (none for "all"), total, IOs, ...
            task = " ".join(words[: at - 1] if words[at - 1].isdigit() else words[:at])
        rows[(task, part)] = words[at + 1 :]
        if (task, part) == ("all", "sched"):
            return rows
    raise AssertionError(f"no IO table for {variant}")


def wakeup_rows(text: str) -> dict[str, list[str]]:
    """The wake-up table: task -> [cpu, wake-ups, min, avg, p99, max]."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.search(r"task\s+cpu\s+wake-ups", line))
    assert "p99 us" in lines[start]
    rows = {}
    for line in lines[start + 2 :]:
        words = line.split()
        if len(words) < 7:
            break
        rows[" ".join(words[:-6])] = words[-6:]
    return rows


def run_json(cli: Any, path: Path) -> dict[str, Any]:
    got = cli("run", str(path), "--json")
    assert got.exit_code == 0, got.output
    return json.loads(got.stdout)


def test_the_run_shows_the_drive_the_cpus_the_io_path_and_the_energy(cli, tmp_path: Path):
    path = write(tmp_path, scenario())
    got = cli("run", str(path))
    assert got.exit_code == 0, got.output
    text = got.stdout
    # The drive's usual view, then the CPUs', then the IO table, then the energy line.
    drive = text.index("woken")  # the drive's table (its title may wrap the long tmp path)
    cpus = text.index("too shallow %")
    io_at = text.index("IO as the tasks saw it: base")
    energy_at = text.index("base: energy CPUs")
    assert drive < cpus < io_at < energy_at
    assert "power states" in text[drive:cpus]  # the drive's residency table

    rows = io_rows(text)
    device = READ_4K_US
    total = device + IO_IRQ + WFI_EXIT + SCHED
    for task in ("reader", "all"):
        # Every part is fixed: p50, p99, p99.9 and max are one value each.
        for part, value in (
            ("device", device),
            ("irq", IO_IRQ),
            ("exit", WFI_EXIT),
            ("sched", SCHED),
            ("total", total),
        ):
            assert rows[(task, part)][-4:] == [f"{value:.1f}"] * 4, (task, part, rows)
    # The reader's IOs are all the drive served (no fio job here).
    report = run_json(cli, path)
    v = report["variants"][0]
    assert rows[("reader", "total")][0] == f"{v['nvme']['ios']:,}"

    # The task without IO keeps the wake-up table, with its p99; the reader is not in it.
    wake = wakeup_rows(text)
    assert set(wake) == {"ticker"}
    assert wake["ticker"][2:] == [f"{WFI_EXIT + TIMER_IRQ + SCHED:.1f}"] * 4

    # The energy line shows the report's system section.
    s = v["system"]
    assert (
        f"base: energy CPUs {s['cpu_energy_mj']:,.3f} mJ + {SN530} "
        f"{s['device_energy_mj']:,.3f} mJ = {s['energy_mj']:,.3f} mJ; average power "
        f"{s['avg_power_mw']:,.1f} mW"
    ) in text
    assert s["device_energy_mj"] == v["nvme"]["energy_mj"]


def test_the_energy_line_is_the_cpus_and_the_drives_energy(cli, tmp_path: Path):
    """The reader alone, by hand. Each cycle: 20 ms asleep, the timer's wake-up (WFI's exit,
    the handler, the switch), a 50 us burst, the read (its total latency), a 50 us burst. The
    CPU is busy (at the OPP's 100 mW) in the handlers, switches and bursts, idle in WFI (5 mW,
    its exit included; entering state 0 costs nothing) the rest of the second; CPUs 1 and 2
    idle throughout. The drive stays in PS0: 1.8 W (its active power) while it serves a read,
    0.7 W (the preset's PS0 idle estimate) otherwise."""
    got = cli("run", str(write(tmp_path, scenario(ticker=""))))
    assert got.exit_code == 0, got.output
    read = READ_4K_US + IO_IRQ + WFI_EXIT + SCHED
    cycle_us = 20_000 + (WFI_EXIT + TIMER_IRQ + SCHED) + 50 + read + 50
    reads = int(1e6 // cycle_us)  # the last one ends within the second
    busy_s = reads * (TIMER_IRQ + SCHED + 50 + IO_IRQ + SCHED + 50) / 1e6
    cpu_mj = 100.0 * busy_s + 5.0 * (1.0 - busy_s) + 2 * 5.0 * 1.0
    sn530 = tomllib.loads((ROOT / "presets" / "nvme" / f"{SN530}.toml").read_text())
    idle_mw = sn530["estimate"]["ps0_idle_power_w"]["central"] * 1000
    active_mw = sn530["power_state"][0]["active_power_w"] * 1000
    served_s = reads * READ_4K_US / 1e6
    drive_mj = active_mw * served_s + idle_mw * (1.0 - served_s)
    line = next(line for line in got.stdout.splitlines() if line.startswith("base: energy"))
    shown = [float(x.replace(",", "")) for x in re.findall(r"[\d,]+\.\d+", line)]
    # mJ to 3 decimals, then mW to 1 (over 1 s the same number as the total mJ).
    assert shown[:3] == pytest.approx([cpu_mj, drive_mj, cpu_mj + drive_mj], abs=6e-4), line
    assert shown[3] == pytest.approx(cpu_mj + drive_mj, abs=0.06), line
    assert f"+ {SN530} " in line


def test_brief_keeps_the_summaries_the_io_table_and_the_energy(cli, tmp_path: Path):
    got = cli("run", str(write(tmp_path, scenario())), "--brief")
    assert got.exit_code == 0, got.output
    text = got.stdout
    assert "IO as the tasks saw it: base" in text and "base: energy CPUs" in text
    assert "power states" not in text and "WFI" not in text


def test_an_interrupt_on_another_cpu_adds_the_ipi_and_its_exit(cli, tmp_path: Path):
    ufs = '[platform.ufs]\npreset = "samsung-ufs40-class"'
    path = write(tmp_path, scenario(ufs, 'mode = "fixed"\ncpus = [1]'))
    got = cli("run", str(path))
    assert got.exit_code == 0, got.output
    text = got.stdout
    assert "low %" in text and "up/down" in text  # the UFS table
    rows = io_rows(text)
    # CPU 1 leaves WFI, runs the handler and sends the IPI; CPU 0 leaves WFI and switches.
    assert rows[("reader", "irq")][-4:] == [f"{IO_IRQ + IPI:.1f}"] * 4
    assert rows[("reader", "exit")][-4:] == [f"{2 * WFI_EXIT:.1f}"] * 4
    assert rows[("reader", "sched")][-4:] == [f"{SCHED:.1f}"] * 4
    # No fio job: the UFS table's latency and bandwidth are "-", and it says why.
    assert "fio jobs' only" in text


def test_two_devices_each_with_its_own_interrupt_mapping(cli, tmp_path: Path):
    # The drive's reader as before (managed: its own CPU); a second reader on CPU 1 reads the
    # UFS device, whose one interrupt is fixed on CPU 2: the handler there, then the IPI.
    two = scenario(
        f'[platform.nvme]\npreset = "{SN530}"\n[platform.ufs]\npreset = "samsung-ufs40-class"',
        '[platform.irq.nvme]\nmode = "managed"\n[platform.irq.ufs]\nmode = "fixed"\ncpus = [2]',
        ticker="",
    ).replace('device = "ufs"', 'device = "nvme"')  # the first reader reads the drive
    two += """
[[workload.task]]
name = "ufs reader"
cpu = 1
sleep = "20ms"
run = "50us"
timer_slack = "0us"
[workload.task.io]
device = "ufs"
rw = "randread"
bs = "4k"
"""
    path = write(tmp_path, two)
    got = cli("run", str(path))
    assert got.exit_code == 0, got.output
    text = got.stdout
    rows = io_rows(text)
    assert rows[("reader", "device")][-4:] == [f"{READ_4K_US:.1f}"] * 4
    assert rows[("reader", "irq")][-4:] == [f"{IO_IRQ:.1f}"] * 4
    assert rows[("ufs reader", "irq")][-4:] == [f"{IO_IRQ + IPI:.1f}"] * 4
    assert rows[("ufs reader", "exit")][-4:] == [f"{2 * WFI_EXIT:.1f}"] * 4
    # Each device's rows count its reader's requests; the energy line names both devices.
    report = run_json(cli, path)
    v = report["variants"][0]
    by = {d["device"]: d["path"]["total"]["count"] for d in v["cpu"]["io_by_device"]}
    tasks = {t["name"]: t["io"]["total"]["count"] for t in v["cpu"]["tasks"]}
    assert by == {"nvme": tasks["reader"], "ufs": tasks["ufs reader"]}
    assert rows[("all on nvme", "total")][0] == f"{by['nvme']:,}"
    assert rows[("all on ufs", "total")][0] == f"{by['ufs']:,}"
    assert v["nvme"]["ios"] == by["nvme"]
    assert f"+ {SN530} {v['nvme']['energy_mj']:,.3f} mJ + samsung-ufs40-class" in text


def test_cpu_only_runs_keep_their_view_with_the_p99(cli, tmp_path: Path):
    text = (
        scenario().split("[[workload.task]]")[0].replace(f'[platform.nvme]\npreset = "{SN530}"', "")
    )
    text = text.replace('[platform.irq]\nmode = "managed"', "")
    path = write(tmp_path, text + TICKER + '[run]\nduration = "1s"\n')
    got = cli("run", str(path))
    assert got.exit_code == 0, got.output
    wake = wakeup_rows(got.stdout)
    assert wake["ticker"][2:] == [f"{WFI_EXIT + TIMER_IRQ + SCHED:.1f}"] * 4
    assert "IO as the tasks saw it" not in got.stdout and "energy CPUs" not in got.stdout


def report_pages(cli: Any, path: Path, tmp_path: Path) -> str:
    """The page of two `--report` runs of ``path``, checked to be the same bytes."""
    pages = []
    for out in ("a", "b"):
        got = cli("run", str(path), "--report", str(tmp_path / out))
        assert got.exit_code == 0, got.output
        pages.append((tmp_path / out / "report.html").read_bytes())
    assert pages[0] == pages[1]  # same results, same bytes
    return pages[0].decode()


def test_the_report_page_draws_the_io_path_and_the_wakeup_histogram(cli, tmp_path: Path):
    page = report_pages(cli, write(tmp_path, scenario()), tmp_path)
    assert '<svg id="io-path"' in page and '<svg id="wakeup-histogram"' in page
    assert "<h2>IO as the tasks saw it</h2>" in page
    # Every figure is whole inside its <figure>.
    assert page.count("<figure>") == page.count("</svg>\n</figure>") >= 5
    # A CPU-only page has neither.
    cpu_only = native.run_scenario_file(str(ROOT / "scenarios" / "cpu-gs101-governors.toml"))
    from torpor.report import html

    assert 'id="io-path"' not in html.run_page(cpu_only)


def test_the_api_copies_the_system_section_and_the_io_path(tmp_path: Path):
    path = write(tmp_path, scenario())
    r = torpor.run(path)
    v = r.report["variants"][0]
    assert list(r.summary) == ["cpu", "io", "nvme", "system"]
    row = r.summary["system"].iloc[0]
    for key in ("cpu_energy_mj", "device_energy_mj", "energy_mj", "avg_power_mw"):
        assert row[key] == v["system"][key]
    assert row.io_irq_p50_us == row.io_irq_max_us == IO_IRQ
    assert row.io_sched_p99_us == SCHED
    assert row.io_device_p99_us == READ_4K_US
    assert row.io_total_p99_us == READ_4K_US + IO_IRQ + WFI_EXIT + SCHED
    assert row.io_total_count == v["nvme"]["ios"]
    # One row per IO task and part; the ticker does no IO.
    p = r.io_path
    assert list(p.part) == list(system_text.IO_PARTS) and set(p.task) == {"reader"}
    by_part = p.set_index("part")
    assert by_part.loc["exit", "p50_us"] == by_part.loc["exit", "max_us"] == WFI_EXIT
    assert by_part.loc["irq", "p99_9_us"] == IO_IRQ


def test_runs_without_a_device_have_an_empty_io_path():
    r = torpor.run(
        {
            "platform": {"cpu": {"file": str(ROOT / "tests" / "cpu" / "one-cpu.toml")}},
            "workload": {"task": [{"name": "t", "cpu": 0, "period": "10ms", "run": "5us"}]},
            "run": {"duration": "100ms"},
        }
    )
    assert r.io_path.empty and "part" in r.io_path
    assert list(r.summary) == ["cpu"]


def test_the_io_table_fits_80_columns(tmp_path: Path):
    width = 80
    report = native.run_scenario_file(str(write(tmp_path, scenario())))
    out = StringIO()
    console = Console(file=out, width=width, markup=False, highlight=False)
    system_text.print_system_run(console, report, detail=False)
    table = out.getvalue().split("IO as the tasks saw it")[1].split("base: energy")[0]
    assert "…" not in table
    assert max(len(line) for line in table.splitlines()) <= width
