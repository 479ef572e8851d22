"""Files torpor writes are replaced whole or not at all (torpor/files.py and the core's
output_file.rs): a failure, Ctrl-C or a kill part-way leaves the old files as they were, and
an `--ftrace` trace is bounded (1 GiB per trace, refused up front from the work estimate)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from torpor.files import write_file, write_files


def test_a_set_of_files_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    results, page = tmp_path / "results.json", tmp_path / "report.html"
    results.write_text("old json\n")
    page.write_text("old page\n")
    # The page cannot be written (its folder is missing): the new JSON must not land either.
    with pytest.raises(OSError) as e:
        write_files([(results, "new json\n"), (tmp_path / "gone" / "report.html", "new page\n")])
    assert e.value.filename == str(tmp_path / "gone" / "report.html")
    assert results.read_text() == "old json\n" and page.read_text() == "old page\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "results.json"]
    write_files([(results, "new json\n"), (page, "new page\n")])
    assert results.read_text() == "new json\n" and page.read_text() == "new page\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "results.json"]


def test_a_replaced_file_keeps_its_mode_and_a_symlink_keeps_pointing_at_it(
    tmp_path: Path,
) -> None:
    target = tmp_path / "real.json"
    target.write_text("old\n")
    target.chmod(0o600)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_file(link, "new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_device_is_written_in_place() -> None:
    write_file(Path("/dev/null"), "x")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


CPU = (
    '[platform.cpu]\npreset = "qcom-msm8916"\n'
    '[[workload.task]]\nname = "t"\ncpu = 0\nperiod = "{period}"\nrun = "5us"\n'
    '[run]\nduration = "{duration}"\n'
)


def test_ctrl_c_during_ftrace_leaves_the_old_trace_and_nothing_cut_short(
    tmp_path: Path,
) -> None:
    # 10 ms periods for 9000 s at HZ=100: 3.6e6 + 9e5 tick CPU events by the estimate (9e8
    # bytes, under the limit), tens of seconds of work.
    scenario = CPU.format(period="10ms", duration="9000s")
    (tmp_path / "s.toml").write_text(scenario.replace('msm8916"\n', 'msm8916"\nhz = 100\n'))
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "base.trace").write_text("the old trace\n")
    p = subprocess.Popen(
        [sys.executable, "-m", "torpor.cli", "run", "--ftrace", "traces", "s.toml"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    time.sleep(3.0)
    assert p.poll() is None, p.communicate()
    # The new trace is being written beside the old one, under another name.
    assert len(list(traces.iterdir())) == 2
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert (p.returncode, out, err) == (130, b"", b"torpor: interrupted\n")
    assert [f.name for f in traces.iterdir()] == ["base.trace"]
    assert (traces / "base.trace").read_text() == "the old trace\n"


def test_a_trace_over_the_limit_by_the_estimate_is_refused_before_it_runs(
    tmp_path: Path,
) -> None:
    # A 10 us period for 20 s: 2e6 wake-ups x 4 events + 5000 ticks = 8,005,000 CPU events,
    # about 1.6e9 bytes at 200 bytes each, over 1 GiB.
    (tmp_path / "s.toml").write_text(CPU.format(period="10us", duration="20s"))
    got = subprocess.run(
        [sys.executable, "-m", "torpor.cli", "run", "--ftrace", "traces", "s.toml"],
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    assert (got.returncode, got.stdout) == (2, b"")
    assert got.stderr.decode() == (
        "torpor: error: s.toml:9: --ftrace: this variant's idle trace would take about 1.6e9 "
        "bytes (8.0e6 CPU events at about 200 bytes each), more than the limit of 1 GiB per "
        "trace; shorten `[run] duration`\n"
    )
    assert list((tmp_path / "traces").iterdir()) == []
