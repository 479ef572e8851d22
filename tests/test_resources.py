"""Hostile inputs end with their one-line error inside a memory and a time limit; Ctrl-C
stops a run at once; names that are not UTF-8, hold Rich markup or a newline print safely.

Each command runs in a new process limited to 1 GiB of address space (``RLIMIT_AS``) and a
time limit of a minute: an input that made torpor read a device whole, allocate per IO in
flight, or run for days fails here instead of passing slowly.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SN530 = '[platform.nvme]\npreset = "wdc-pc-sn530-256gb"\n'
MEMORY_LIMIT = 1 << 30


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def torpor(*args: str | bytes, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "torpor.cli", *args],
        cwd=cwd,
        capture_output=True,
        timeout=60,
        preexec_fn=limited,
    )


def one_error(got: subprocess.CompletedProcess[bytes]) -> str:
    """The one error line of a run that must fail with exit code 2, and nothing else."""
    err = got.stderr.decode("utf-8", "backslashreplace")
    assert got.returncode == 2, err
    assert got.stdout == b""
    assert err.startswith("torpor: error: ") and err.count("\n") == 1, err
    return err.rstrip("\n")


def test_a_normal_run_fits_in_the_limits(tmp_path: Path) -> None:
    s = tmp_path / "s.toml"
    s.write_text(SN530 + '[workload]\napst_workflow = 3\n[run]\nduration = "2s"\n')
    got = torpor("run", "--json", str(s), cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["variants"][0]["io"]["ios"] > 0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["apst", "/dev/zero"], "torpor: error: /dev/zero: larger than 1 MiB"),
        (["run", "/dev/zero"], "torpor: error: /dev/zero: larger than 4 MiB"),
        (["bench", "--seconds", "1e308"], "torpor: error: --seconds: expected"),
    ],
)
def test_endless_devices_and_budgets_are_refused(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    assert one_error(torpor(*args, cwd=tmp_path)).startswith(expected)


def test_an_iolog_of_one_gigabyte_without_a_newline_stops_at_its_first_long_line(
    tmp_path: Path,
) -> None:
    log = tmp_path / "big.iolog"
    with log.open("wb") as f:
        f.write(b"fio version 2 iolog\n")
        f.truncate(1 << 30)  # sparse: a gigabyte of NULs on line 2, no disk used
    (tmp_path / "s.toml").write_text(SN530 + '[workload.replay]\nfile = "big.iolog"\n')
    err = one_error(torpor("run", "s.toml", cwd=tmp_path))
    assert err == (
        "torpor: error: big.iolog:2: the line is longer than 64 KiB, the limit for one line "
        "of a trace; is this a text trace?"
    )


def test_dev_zero_as_an_iolog_is_one_overlong_line(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SN530 + '[workload.replay]\nfile = "/dev/zero"\n')
    err = one_error(torpor("run", "s.toml", cwd=tmp_path))
    assert err.startswith("torpor: error: /dev/zero:1: the line is longer than 64 KiB")


def test_a_billion_ios_in_flight_and_ten_years_are_refused_before_running(
    tmp_path: Path,
) -> None:
    (tmp_path / "deep.toml").write_text(
        SN530 + '[[workload.job]]\nname = "d"\nrw = "randread"\niodepth = 1000000000\n'
    )
    assert "at most 65536 IOs in flight" in one_error(torpor("run", "deep.toml", cwd=tmp_path))
    (tmp_path / "long.toml").write_text(
        SN530 + '[workload]\napst_workflow = 1\n[run]\nduration = "315576000s"\n'
    )
    assert "more than the limit" in one_error(torpor("run", "long.toml", cwd=tmp_path))


def test_a_million_variants_are_refused_by_the_files_size(tmp_path: Path) -> None:
    s = tmp_path / "many.toml"
    s.write_text(
        SN530
        + "[workload]\napst_workflow = 1\n"
        + "".join(f'[[variant]]\nname = "v{i}"\n' for i in range(10**6))
    )
    assert one_error(torpor("run", "many.toml", cwd=tmp_path)).startswith(
        "torpor: error: many.toml: larger than 4 MiB, the limit for a scenario file"
    )


def test_a_fifo_without_a_writer_is_said_to_be_one_not_a_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "dump")
    assert one_error(torpor("apst", "dump", cwd=tmp_path)) == (
        "torpor: error: dump: a FIFO (named pipe) that gave nothing to read: no process was "
        "writing to it; expected a device dump (`nvme id-ctrl -o json` or `smartctl -a` output)"
    )
    # Not "missing top-level table `platform`".
    os.mkfifo(tmp_path / "s.toml")
    assert one_error(torpor("run", "s.toml", cwd=tmp_path)) == (
        "torpor: error: s.toml: a FIFO (named pipe) that gave nothing to read: no process was "
        "writing to it; expected a scenario file"
    )


def test_a_fifo_as_a_sweeps_base_scenario_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "base.toml")
    (tmp_path / "sweep.toml").write_text(
        '[sweep]\nscenario = "base.toml"\n[[sweep.axis]]\npath = "run.seed"\nvalues = [1]\n'
        '[[sweep.objective]]\nminimise = "avg_power_mw"\n'
    )
    assert one_error(torpor("sweep", "sweep.toml", cwd=tmp_path)) == (
        "torpor: error: sweep.toml:2: the base scenario base.toml: is a FIFO (a named pipe), "
        "not a regular file; expected a scenario file"
    )


def test_ctrl_c_stops_a_sweep_with_two_workers_within_a_second(tmp_path: Path) -> None:
    # Four points of workflow 1 for 600 s each: seconds of work per point, two in flight.
    (tmp_path / "base.toml").write_text(
        SN530 + '[workload]\napst_workflow = 1\n[run]\nduration = "600s"\n'
    )
    (tmp_path / "sweep.toml").write_text(
        '[sweep]\nscenario = "base.toml"\n[[sweep.axis]]\npath = "run.seed"\n'
        "values = [1, 2, 3, 4]\n"
        '[[sweep.objective]]\nminimise = "avg_power_mw"\n'
    )
    p = subprocess.Popen(
        [sys.executable, "-m", "torpor.cli", "sweep", "--workers", "2", "sweep.toml"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    time.sleep(3.0)
    assert p.poll() is None, "the sweep ended before it could be interrupted"
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    waited = time.monotonic() - sent
    assert (p.returncode, out, err) == (130, b"", b"torpor: interrupted\n")
    assert waited < 1.5, waited


def test_ctrl_c_stops_a_long_run_within_a_second(tmp_path: Path) -> None:
    # Workflow 1 for 3000 s: about 4e8 IOs, tens of seconds of work.
    (tmp_path / "s.toml").write_text(
        SN530 + '[workload]\napst_workflow = 1\n[run]\nduration = "3000s"\n'
    )
    p = subprocess.Popen(
        [sys.executable, "-m", "torpor.cli", "run", "s.toml"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    time.sleep(2.0)
    assert p.poll() is None, "the run ended before it could be interrupted"
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    waited = time.monotonic() - sent
    assert (p.returncode, out, err) == (130, b"", b"torpor: interrupted\n")
    # The watcher checks for signals ten times a second; allow for a loaded machine.
    assert waited < 3.0, waited


def test_file_names_that_are_not_utf8_hold_markup_or_a_newline_print_on_one_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "a[").mkdir()
    for name in (b"caf\xe9.json", b"a[/b]x.json", b"two\nlines.json"):
        (tmp_path / os.fsdecode(name)).write_text("[]\n")
        err = one_error(torpor("apst", name, cwd=tmp_path))
        assert err.endswith(
            ":1: a JSON array; expected the JSON object `nvme id-ctrl -o json` "
            "prints for one controller"
        ), err
    assert "a[/b]x.json" in one_error(torpor("apst", b"a[/b]x.json", cwd=tmp_path))
    assert "two\\nlines.json" in one_error(torpor("apst", b"two\nlines.json", cwd=tmp_path))


def test_a_scenario_at_a_path_that_is_not_utf8_runs(tmp_path: Path) -> None:
    name = b"sc\xe9nario.toml"
    (tmp_path / os.fsdecode(name)).write_text(
        SN530 + '[workload]\napst_workflow = 7\n[run]\nduration = "1s"\n'
    )
    got = torpor("run", "--brief", name, cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert b"sc\\xe9nario.toml" in got.stdout or "sc\ufffdnario.toml".encode() in got.stdout


def test_variant_names_with_markup_print_as_written(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(
        SN530
        + '[workload]\napst_workflow = 7\n[run]\nduration = "1s"\n'
        + '[[variant]]\nname = "[/oops]"\n[[variant]]\nname = "[bold]x"\n'
    )
    got = torpor("run", "s.toml", cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert b"[/oops]" in got.stdout and b"[bold]x" in got.stdout


def test_a_full_disk_names_what_could_not_be_written(tmp_path: Path) -> None:
    data = [
        "apst",
        "wdc-pc-sn530-256gb",
        "--emit",
        "nvme-cli",
        "--data-file",
        "/dev/full",
        "--force",
    ]
    assert one_error(torpor(*data, cwd=tmp_path)) == (
        "torpor: error: /dev/full: No space left on device"
    )
    with open("/dev/full", "wb") as full:
        got = subprocess.run(
            [sys.executable, "-m", "torpor.cli", "devices"], stdout=full, stderr=subprocess.PIPE
        )
    assert (got.returncode, got.stderr) == (
        2,
        b"torpor: error: <stdout>: No space left on device\n",
    )


MSM8916_TASK = (
    '[platform.cpu]\npreset = "qcom-msm8916"\n'
    '[[workload.task]]\nname = "cyclictest"\ncpu = 0\nperiod = "10ms"\nrun = "5us"\n'
    '[run]\nduration = "1s"\n'
)


def most_qos_requests(variants: str = "") -> str:
    """The most `[[qos.request]]`s a variant may hold (65,536), each from its own holder, as
    one inline array so that the file stays under the 4 MiB a scenario may take."""
    requests = "".join(
        f'{{at="1ms",holder="{i:x}",target="cpu_dma_latency",value={i % 500}}},\n'
        for i in range(65_536)
    )
    return MSM8916_TASK + variants + "[qos]\nrequest = [\n" + requests + "]\n"


def test_the_most_qos_requests_are_read_shown_and_run_in_seconds(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(most_qos_requests())
    for args in (["qos", "s.toml"], ["run", "--brief", "s.toml"]):
        started = time.monotonic()
        got = torpor(*args, cwd=tmp_path)
        took = time.monotonic() - started
        assert got.returncode == 0, got.stderr
        # Mapping each key to its line scanned the file from its start: minutes, not seconds.
        assert took < 30, (args, took)
    shown = torpor("qos", "s.toml", cwd=tmp_path).stderr.decode()
    # 65,537 steps (the start, then each request), 200 shown.
    assert "torpor: note: 65337 more steps not shown (the tables show the first 200)" in shown


def test_variants_that_would_resolve_to_too_many_keys_are_refused_at_once(
    tmp_path: Path,
) -> None:
    # 4 variants over a base of 65,536 requests of 4 keys each: 4 x 262,144 and more.
    variants = "".join(f'[[variant]]\nname = "v{i}"\n' for i in range(4))
    (tmp_path / "s.toml").write_text(most_qos_requests(variants))
    started = time.monotonic()
    err = one_error(torpor("qos", "s.toml", cwd=tmp_path))
    assert time.monotonic() - started < 15
    assert err.startswith("torpor: error: s.toml:10: [[variant]]: 4 variants over a base of "), err
    assert err.endswith("more than the limit of 1048576; split the file"), err


def test_ctrl_c_stops_reading_a_large_scenario(tmp_path: Path) -> None:
    # Three variants over the most requests: seconds of checking, the last variant at fault.
    variants = "".join(f'[[variant]]\nname = "v{i}"\n' for i in range(2))
    variants += '[[variant]]\nname = "bad"\n[variant.run]\nseed = "x"\n'
    (tmp_path / "s.toml").write_text(most_qos_requests(variants))
    started = time.monotonic()
    whole = torpor("qos", "s.toml", cwd=tmp_path)
    reading = time.monotonic() - started
    assert whole.returncode == 2, whole.stderr
    p = subprocess.Popen(
        [sys.executable, "-m", "torpor.cli", "qos", "s.toml"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    time.sleep(reading / 2)
    assert p.poll() is None, "the file was read before it could be interrupted"
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    waited = time.monotonic() - sent
    assert (p.returncode, out, err) == (130, b"", b"torpor: interrupted\n")
    # Stopped well before the end of reading, which would have taken the other half.
    assert waited < max(reading / 4, 1.0), (waited, reading)


def test_an_override_path_of_a_hundred_thousand_keys_is_refused_not_a_crash(
    tmp_path: Path,
) -> None:
    # Each key of the path made a table: 100,000 nested tables overflowed the stack on drop.
    (tmp_path / "s.toml").write_text(SN530 + "[workload]\napst_workflow = 7\n")
    code = (
        "import torpor\n"
        "try:\n"
        "    torpor.run('s.toml', **{'.'.join(['a'] * 100_000): 1})\n"
        "except torpor.InputError as e:\n"
        "    print(e)\n"
    )
    got = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
        preexec_fn=limited,
    )
    assert got.returncode == 0, got.stderr
    out = got.stdout.decode()
    assert out.startswith('s.toml: "a.a.a.a'), out
    assert out.endswith(
        " (199999 bytes in all): expected a dotted path of at most 8 keys and 256 bytes, "
        "such as policy.apst.algorithm\n"
    ), out


ESC_NAMES = ("\\u001b[2J", "\\u001b]52;c;aGk=\\u0007")


def test_names_holding_terminal_escapes_print_escaped(tmp_path: Path) -> None:
    # Clear screen, and OSC 52 (write the clipboard), as variant, job and task names.
    clear, osc = ESC_NAMES
    (tmp_path / "nvme.toml").write_text(
        SN530
        + f'[[workload.job]]\nname = "{osc}"\nrw = "randread"\nruntime = "100ms"\n'
        + '[run]\nduration = "200ms"\n'
        + f'[[variant]]\nname = "{clear}"\n[[variant]]\nname = "{osc}x"\n'
    )
    (tmp_path / "cpu.toml").write_text(
        '[platform.cpu]\npreset = "qcom-msm8916"\n'
        f'[[workload.task]]\nname = "{clear}"\ncpu = 0\nperiod = "10ms"\nrun = "5us"\n'
        f'[[qos.request]]\nat = "1ms"\nholder = "{osc}"\ntarget = "cpu_dma_latency"\nvalue = 5\n'
        f'[run]\nduration = "100ms"\n[[variant]]\nname = "{clear}v"\n'
    )
    for args in (
        ["run", "nvme.toml"],
        ["run", "--fio", "nvme.toml"],
        ["run", "cpu.toml"],
        ["qos", "cpu.toml"],
    ):
        got = torpor(*args, cwd=tmp_path)
        assert got.returncode == 0, got.stderr
        shown = got.stdout + got.stderr
        assert b"\x1b" not in shown and b"\x07" not in shown, args
        assert b"\\u{1b}" in shown, args
