"""fio job files through `torpor run`, and `--fio` output in fio's layout.

Every expected line is worked out by hand from the drive's preset (WD SN530: 75 us 4 KiB reads,
PS3 after 100 ms idle under the default table, 3.9 ms in and 11 ms out) and fio's `stat.c`
rules as ``view::fio_text`` (crates/torpor-core) states them, not taken from torpor's output;
fio's ``num2str`` and ``display_lat`` have their unit tests there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCENARIO = """[platform.nvme]
preset = "wdc-pc-sn530-256gb"
[workload]
fio = "jobs.fio"
[run]
duration = "3s"
"""


def run_fio(tmp_path: Path, jobs: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "s.toml").write_text(SCENARIO)
    (tmp_path / "jobs.fio").write_text(jobs)
    return subprocess.run(
        [sys.executable, "-m", "torpor.cli", "run", "s.toml", "--fio"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_paced_job_prints_fios_lines(tmp_path: Path) -> None:
    # rate_iops=100 for runtime=2 (seconds): reads at 0, 10, ..., 1990 ms, 200 of them, never
    # idle 100 ms, so each takes 75 us. fio's runtime: 2000 ms. IOPS 1000 x 200 / 2000 = 100;
    # BW 1000 x 819 200 / 2000 = 409 600 B/s: 400KiB/s, and 409.6 k -> 410kB/s (5 digits > 4:
    # 409 rest 600, carry); io 819 200 B = 800KiB exactly, 819.2 k -> 819kB. clat: one value,
    # stdev 0, so fio stays in nsec; its bucket for 75 000 ns is 713, midpoint 75 264 ns.
    got = run_fio(
        tmp_path,
        "; paced reads\n[global]\nioengine=libaio\ndirect=1\nruntime=2\n\n[paced]\n"
        "rw=randread\nrate_iops=100\n",
    )
    assert got.returncode == 0, got.stderr
    row = "[75264]"
    assert got.stdout.splitlines() == [
        "variant base:",
        "paced: (groupid=0, jobs=1): err= 0: pid=0: simulated by torpor",
        "  read: IOPS=100, BW=400KiB/s (410kB/s)(800KiB/2000msec)",
        "    clat (nsec): min=75000, max=75000, avg=75000.00, stdev= 0.00",
        "    clat percentiles (nsec):",
        f"     |  1.00th={row},  5.00th={row}, 10.00th={row}, 20.00th={row},",
        f"     | 30.00th={row}, 40.00th={row}, 50.00th={row}, 60.00th={row},",
        f"     | 70.00th={row}, 80.00th={row}, 90.00th={row}, 95.00th={row},",
        f"     | 99.00th={row}, 99.50th={row}, 99.90th={row}, 99.95th={row},",
        f"     | 99.99th={row}",
        "",
        "Run status group 0 (all jobs):",
        "   READ: bw=400KiB/s (410kB/s), 400KiB/s-400KiB/s (410kB/s-410kB/s), io=800KiB "
        "(819kB), run=2000-2000msec",
    ]
    assert "jobs.fio:3: [paced] ioengine=libaio accepted" in got.stderr


def test_a_job_that_lets_the_drive_sleep_switches_to_usec(tmp_path: Path) -> None:
    # rate_iops=5: reads 200 ms apart; the drive enters PS3 after 100 ms idle, so all but the
    # first wake it: 1 x 75 us, 9 x 11 075 us. Mean 9975 us; squared deviations 9900^2 +
    # 9 x 1100^2 = 108 900 000, / 9 = 12 100 000, stdev 3478.51 us. min 75 000 > 2000, max
    # 11 075 000 > 99 999 and stdev > 1000 ns: usec. Percentiles: fio buckets 75 264 and
    # 11 075 584 ns, rounded up to 76 and 11 076 us; the first holds 1 of 10, so 1, 5 and 10
    # (rank 1.0, reached exactly) take it. 10 IOs x 4 KiB = 40 960 B in 2000 ms: BW 20 480 B/s
    # = 20.0KiB/s, 20.48 k -> 20.5kB/s; io 40.0KiB, and 40.96 k prints 40.0kB (fio's num2str
    # drops the carry of 0.96 -> "1.0" into the integer part).
    got = run_fio(tmp_path, "[sleepy]\nrw=randread\nrate_iops=5\nruntime=2s\ndirect=1\n")
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[2:6] == [
        "  read: IOPS=5, BW=20.0KiB/s (20.5kB/s)(40.0KiB/2000msec)",
        "    clat (usec): min=75, max=11075, avg=9975.00, stdev=3478.51",
        "    clat percentiles (usec):",
        "     |  1.00th=[   76],  5.00th=[   76], 10.00th=[   76], 20.00th=[11076],",
    ]
    assert lines[-1] == (
        "   READ: bw=20.0KiB/s (20.5kB/s), 20.0KiB/s-20.0KiB/s (20.5kB/s-20.5kB/s), "
        "io=40.0KiB (40.0kB), run=2000-2000msec"
    )


def test_numjobs_clones_print_under_the_jobs_name_and_sum_in_the_group(tmp_path: Path) -> None:
    # Two clones of a 1 s job at 100 IOPS: 100 reads each (their IOs 10 ms apart never let the
    # drive idle), 400 KiB each, 1000 ms. Group: 800 KiB over the longest run, 1000 ms:
    # 819 200 B/s = 800KiB/s (819kB/s); each job 409 600 B/s: 400KiB/s (410kB/s).
    got = run_fio(tmp_path, "[c]\nrw=read\nrate_iops=100\nruntime=1\nnumjobs=2\ndirect=1\n")
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    headers = [line for line in lines if line.startswith("c: ")]
    assert len(headers) == 2
    assert lines.count("  read: IOPS=100, BW=400KiB/s (410kB/s)(400KiB/1000msec)") == 2
    assert lines[-1] == (
        "   READ: bw=800KiB/s (819kB/s), 400KiB/s-400KiB/s (410kB/s-410kB/s), io=800KiB "
        "(819kB), run=1000-1000msec"
    )
