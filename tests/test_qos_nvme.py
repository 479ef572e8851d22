"""An NVMe controller's latency tolerance changed mid-run (`[[qos.request]]` on
`nvme0/power/pm_qos_latency_tolerance_us`): the tables the driver sends, and the reads' latency,
worked by hand from the SN530 preset's power states (PS3: ENLAT 3.9 ms, EXLAT 11 ms; PS4: EXLAT
39 ms) and the v5.14 builder's defaults (PS3 after 100 ms idle, PS4 after 2 s)."""

from __future__ import annotations

from pathlib import Path

import torpor

# Reads at 500, 1000 and 1700 ms (fio iolog v3: timestamps in microseconds).
IOLOG = (
    "fio version 3 iolog\n0 /dev/nvme0n1 add\n0 /dev/nvme0n1 open\n"
    "500000 /dev/nvme0n1 read 0 4096\n1000000 /dev/nvme0n1 read 4096 4096\n"
    "1700000 /dev/nvme0n1 read 8192 4096\n1800000 /dev/nvme0n1 close\n"
)
SCENARIO = """
[platform.nvme]
preset = "wdc-pc-sn530-256gb"

[workload.replay]
file = "reads.iolog"

[[variant]]
name = "no writes"

[[variant]]
name = "tolerance lowered, then auto"
[[variant.qos.request]]
at = "300ms"
holder = "tuned"
target = "nvme0/power/pm_qos_latency_tolerance_us"
value = "10000"
[[variant.qos.request]]
at = "1500ms"
holder = "tuned"
target = "/sys/class/nvme/nvme0/power/pm_qos_latency_tolerance_us"
value = "auto"
"""


def test_a_latency_tolerance_write_reprograms_apst_at_its_time(tmp_path: Path) -> None:
    (tmp_path / "reads.iolog").write_text(IOLOG)
    (tmp_path / "s.toml").write_text(SCENARIO)
    report = torpor.run(str(tmp_path / "s.toml")).report
    plain, tuned = report["variants"]
    # Without writes every read finds the drive settled in PS3 (100 ms + 3.9 ms after the last
    # completion): each pays the 11 ms exit, so all three take the same time.
    lat = plain["io"]["read"]
    assert lat["count"] == 3
    assert abs(lat["max_us"] - lat["min_us"]) < 1
    assert plain["nvme"]["apst"]["latency_tolerance"] == []
    # 10000 us at 300 ms: PS3's EXLAT (11 ms) and PS4's (39 ms) exceed it, so the driver sends
    # APSTE = 1 with no target. The drive, settled in PS3 since 103.9 ms, is not woken by the
    # command: the read at 500 ms still pays 11 ms. Back in PS0 it never leaves: the read at
    # 1000 ms pays nothing. `auto` at 1500 ms drops the request (no limit): the v5.14 table
    # again, PS3 at 1600 -> 1603.9 ms, and the read at 1700 ms pays 11 ms.
    changes = tuned["nvme"]["apst"]["latency_tolerance"]
    assert [(c["at_s"], c["tolerance_us"], c["ps_max_latency_us"]) for c in changes] == [
        (0.3, 10000, 10000),
        (1.5, -1, None),
    ]
    first, second = (c["table"] for c in changes)
    assert first["apste"] and all(e["raw"] == 0 for e in first["entries"])
    assert second == plain["nvme"]["apst"]["table"]
    lat = tuned["io"]["read"]
    assert lat["count"] == 3
    assert abs(lat["max_us"] - lat["min_us"] - 11_000) < 1
    assert abs(lat["mean_us"] - (lat["min_us"] + 22_000 / 3)) < 1
    # The no-wait read is the plain run's read less the exit.
    assert abs(plain["io"]["read"]["min_us"] - 11_000 - lat["min_us"]) < 1
    assert tuned["nvme"]["table_changes"] == 2
