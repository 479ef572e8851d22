"""Block traces replayed on a simulated NVMe drive, end to end through ``torpor run``.

The hand-written blkparse scenario's counts are worked out from its data file's lines
(scenarios/data/README.md). The real traces are read in place from ../shared/real-data and the
tests skip where it is absent; their expected counts are those their ``.source.md`` files state,
checked there by a second method (awk on the MQSim traces, Python's csv reading of the gzipped
CSVs).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKIO = ROOT.parent / "shared" / "real-data" / "blockio"


def run_json(cli: Any, scenario: Path) -> dict[str, Any]:
    r = cli("run", str(scenario), "--json")
    assert r.exit_code == 0, r.output
    report: dict[str, Any] = json.loads(r.output[r.output.index("{") :])
    return report


def test_blkparse_scenario_replays_q_and_d_events(cli):
    rep = run_json(cli, ROOT / "scenarios/apst-blkparse-replay.toml")
    q, d = rep["variants"]
    # Six bursts. Q: a 16 KiB read, two 4 KiB journal writes and a flush per burst; the flush
    # is counted, not sent. D: the two writes merged into one.
    assert (q["io"]["ios"], q["io"]["read"]["count"], q["io"]["write"]["count"]) == (18, 6, 12)
    assert (d["io"]["ios"], d["io"]["read"]["count"], d["io"]["write"]["count"]) == (12, 6, 6)
    qc = q["io"]["workloads"][0]["block_trace"]
    dc = d["io"]["workloads"][0]["block_trace"]
    # 13 event lines a burst: 4 Q (9 others), 3 D (10 others); blkparse's own lines: one
    # `Input file` line and 11 summary lines.
    assert (qc["flushes"], qc["other_actions"], qc["report_lines"]) == (6, 54, 12)
    assert (dc["flushes"], dc["other_actions"], dc["report_lines"]) == (6, 60, 12)
    # 16 KiB reads, 4 KiB writes (Q) or 8 KiB (D): the bytes completed.
    assert q["io"]["bytes"] == 6 * 16384 + 12 * 4096
    assert d["io"]["bytes"] == 6 * 16384 + 6 * 8192


def test_the_run_notes_what_the_replay_left_out(cli):
    r = cli("run", str(ROOT / "scenarios/apst-blkparse-replay.toml"))
    assert r.exit_code == 0, r.output
    assert "6 flushes counted, not sent" in r.output
    assert "skipped 54 lines of other blkparse actions" in r.output


def replay_scenario(tmp_path: Path, trace: Path, extra: str = "") -> Path:
    s = tmp_path / "s.toml"
    s.write_text(
        '[platform.nvme]\npreset = "wdc-pc-sn530-256gb"\n[workload.replay]\n'
        f"file = {json.dumps(str(trace))}\niodepth = 32\nreplay_no_stall = true\n{extra}"
    )
    return s


def needs(path: Path) -> Any:
    return pytest.mark.skipif(not path.exists(), reason=f"{path} is absent (../shared)")


MQSIM = BLOCKIO / "mqsim"
PIXEL = BLOCKIO / "acsl-pixel6a"


@needs(MQSIM)
@pytest.mark.parametrize(
    ("name", "reads", "writes"),
    [
        # tpcc-small.trace.source.md: 6,999 requests, 2,618 writes / 4,381 reads.
        ("tpcc-small.trace", 4381, 2618),
        # wsrch-small.trace.source.md: 24,779 reads and 4 writes; its "24,782 requests" is
        # `wc -l`, which misses the last line (the file does not end with a newline).
        ("wsrch-small.trace", 24779, 4),
    ],
)
def test_mqsim_traces_replay_every_request(cli, tmp_path: Path, name: str, reads: int, writes: int):
    rep = run_json(cli, replay_scenario(tmp_path, MQSIM / name))
    v = rep["variants"][0]
    c = v["io"]["workloads"][0]["block_trace"]
    assert (c["format"], c["reads"], c["writes"]) == ("mqsim", reads, writes)
    assert (v["io"]["read"]["count"], v["io"]["write"]["count"]) == (reads, writes)


@needs(PIXEL)
@pytest.mark.parametrize(
    ("name", "reads", "writes", "out_of_order"),
    [
        # pubg_exec.csv.gz.source.md: 67,757 requests (50,737 R / 17,020 W).
        ("pubg_exec.csv.gz", 50737, 17020, 0),
        # genshin_impact_exec.csv.gz.source.md: 91,317 (81,697 R / 9,620 W). Rows 69,039 and
        # 69,040 are stamped before row 69,038, the first by 306 us (found with Python's
        # Decimal on the timestamps, comparing each with the latest so far).
        ("genshin_impact_exec.csv.gz", 81697, 9620, 2),
    ],
)
def test_pixel_csv_traces_replay_gzipped(
    cli, tmp_path: Path, name: str, reads: int, writes: int, out_of_order: int
):
    rep = run_json(cli, replay_scenario(tmp_path, PIXEL / name))
    v = rep["variants"][0]
    c = v["io"]["workloads"][0]["block_trace"]
    assert (c["format"], c["reads"], c["writes"]) == ("mobile-csv", reads, writes)
    assert (v["io"]["read"]["count"], v["io"]["write"]["count"]) == (reads, writes)
    assert c["out_of_order"] == out_of_order
    if out_of_order:
        assert c["max_step_back_ns"] == 306_000
