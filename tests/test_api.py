"""The Python API (`import torpor`), checked against values derived by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import torpor

ROOT = Path(__file__).resolve().parent.parent

SN530_W7 = {
    "platform": {"nvme": {"preset": "wdc-pc-sn530-256gb"}},
    "workload": {"apst_workflow": 7},
    "run": {"duration": "3s"},
}


def test_run_takes_a_dict_and_returns_tables():
    r = torpor.run(SN530_W7)
    # v5.14: PS3 is reached 100 + 3.9 ms into each 150 ms gap, so every read after the first
    # waits PS3's 11 ms exit: reads at 0, 150.075 ms, then every 150 + 11.075 = 161.075 ms;
    # the last before 3 s is k = 18 (150.075 + 17 x 161.075 = 2888.35 ms): 19 reads.
    reads = r.latency[r.latency.op == "read"].iloc[0]
    assert reads["count"] == 19
    assert reads["max_us"] == 11075.0
    assert list(r.summary) == ["io", "nvme"]
    assert r.summary["io"].ios.tolist() == [19]
    assert r.summary["nvme"].device.tolist() == ["wdc-pc-sn530-256gb"]
    # Residency covers the whole run: PS0, PS3 and the entries and exits add up to 100 %.
    assert r.residency.time_pct.sum() == pytest.approx(100.0, abs=1e-9)
    assert set(r.residency.state) >= {"PS0", "PS3", "entry/exit"}
    assert any("PS0 idle power 700 mW" in n for n in r.notes)


def test_the_notes_are_the_lines_the_cli_prints(cli):
    # A blkparse replay: its flushes and skipped lines are notes beside the drive's estimates.
    path = ROOT / "scenarios" / "apst-blkparse-replay.toml"
    printed = cli("run", str(path), "--brief").stderr.splitlines()
    notes = torpor.run(path).notes
    assert any("flushes counted, not sent" in n for n in notes)
    assert [f"torpor: note: {n}" for n in notes] == printed


def test_overrides_by_dotted_path_or_double_underscore_are_the_same():
    # A 200 ms primary timeout is longer than the 150 ms gaps: the drive never sleeps and
    # every read takes its 75 us.
    dotted = torpor.run(SN530_W7, **{"policy.apst.primary_timeout_ms": 200})
    underscored = torpor.run(SN530_W7, policy__apst__primary_timeout_ms=200)
    assert dotted.report == underscored.report
    assert dotted.latency.max_us.max() == 75.0
    with pytest.raises(torpor.InputError, match="nope"):
        torpor.run(SN530_W7, **{"policy.apst.nope": 1})


def test_an_override_reaches_every_variant_and_is_checked():
    # Every variant but the first names its own governor: the override replaces them all.
    path = ROOT / "scenarios" / "cpu-gs101-governors.toml"
    r = torpor.run(path, policy__cpuidle__governor="menu", run__duration="1s")
    assert set(r.summary["cpu"].governor) == {"menu"}
    with pytest.raises(torpor.InputError, match=r"policy\.cpuidle\.governor"):
        torpor.run(path, policy__cpuidle__governor="nonexistent", run__duration="1s")


def test_a_path_and_its_text_give_the_same_report(tmp_path: Path):
    path = ROOT / "scenarios" / "apst-sn530-workflow7.toml"
    from_path = torpor.run(path, **{"run.duration": "2s"})
    from_text = torpor.run(path.read_text(), **{"run.duration": "2s"})
    assert from_path.report["variants"] == from_text.report["variants"]


def test_devices_and_apst_table_match_the_rules_by_hand():
    d = torpor.devices().set_index("id")
    # PS0 idle estimate: 0.2 x min(3.5 W, 5 W) = 0.7 W, range 0.35-1.05 W.
    sn530 = d.loc["wdc-pc-sn530-256gb"]
    assert (sn530.ps0_idle_low_mw, sn530.ps0_idle_mw, sn530.ps0_idle_high_mw) == (
        350.0,
        700.0,
        1050.0,
    )
    assert len(d) == 17
    # Legacy: PS0 -> PS3 after ceil((3900 + 11000) / 20) = 745 ms; PS3 -> PS4 after
    # ceil((5000 + 39000) / 20) = 2200 ms.
    t = torpor.apst_table("wdc-pc-sn530-256gb", algorithm="legacy")
    assert t.attrs["sent"] and t.attrs["apste"]
    assert t.loc[0, ["itps", "itpt_ms"]].tolist() == [3, 745]
    assert t.loc[3, ["itps", "itpt_ms"]].tolist() == [4, 2200]
    assert len(t) == 32


def test_a_timeline_comes_back_as_a_table_of_state_changes_and_requests():
    r = torpor.run(SN530_W7, **{"run.timeline": "400ms"})
    # The run-level test in drivers/run/tests.rs derives these by hand: PS3 entered at
    # 100.075 ms and 265.05 ms, reads at 0, 150.075 and 311.15 ms.
    t = r.timeline
    assert list(t.columns) == ["variant", "t_s", "state", "power_mw"]
    entered = t[t.state == "PS3"].t_s.round(6).tolist()
    assert entered == [0.103975, 0.26505]
    assert r.requests.t_s.round(6).tolist() == [0.0, 0.150075, 0.31115]
    # Per IO: the first read finds the drive awake (75 us); the others wait PS3's 11 ms exit.
    assert r.requests.latency_us.tolist() == [75.0, 11075.0, 11075.0]
    assert r.requests.op.tolist() == ["read", "read", "read"]
    assert torpor.run(SN530_W7).timeline.empty


def test_timeline_columns_keep_their_compact_types():
    r = torpor.run(SN530_W7, **{"run.timeline": "1s"})
    t = r.timeline
    # Floats for times and power, categories (codes of a byte or two) for names.
    assert (str(t.t_s.dtype), str(t.power_mw.dtype)) == ("float64", "float32")
    assert str(t.state.dtype) == "category" and str(t.variant.dtype) == "category"
    assert set(t.state.cat.categories) == {"PS0", "PS1", "PS2", "PS3", "PS4", "entry/exit"}
    # The JSON report keeps the timeline's names and window, not its rows.
    meta = r.report["variants"][0]["nvme"]["timeline"]
    assert meta["until_s"] == 1.0 and meta["t_s"] == []


def test_derived_measures_come_from_the_core_not_recomputed():
    # The core serializes energy per IO, transitions per hour and each task's mean wake-up
    # latency; the tables carry those very numbers.
    r = torpor.run(SN530_W7, **{"run.duration": "3s"})
    nvme = r.summary["nvme"]
    core = [v["nvme"]["energy_per_io_uj"] for v in r.report["variants"]]
    assert list(nvme.energy_per_io_uj) == core
    cpu = torpor.run(ROOT / "scenarios" / "cpu-gs101-governors.toml", run__duration="1s")
    core = [t["latency_avg_us"] for v in cpu.report["variants"] for t in v["cpu"]["tasks"]]
    assert list(cpu.tasks.latency_avg_us) == core
    # No module of the package rebuilds them from their parts.
    for path in (ROOT / "python" / "torpor").rglob("*.py"):
        text = path.read_text()
        assert "latency_sum_ns" not in text, path
        assert not re.search(r"energy_mj\W+\*\s*1000\s*/", text), path
        assert not re.search(r"transitions\W.*/\s*hours", text), path


def test_task_tables_carry_the_cores_percentiles_and_histogram():
    r = torpor.run(ROOT / "scenarios" / "cpu-gs101-governors.toml", run__duration="1s")
    core = r.report["variants"][0]["cpu"]["tasks"][0]
    row = r.tasks.iloc[0]
    summary = core["latency"]["summary"]
    assert (row.latency_p50_us, row.latency_p99_us, row.latency_p99_9_us) == (
        summary["p50_us"],
        summary["p99_us"],
        summary["p99_9_us"],
    )
    first = r.task_histogram[
        (r.task_histogram.variant == row.variant) & (r.task_histogram.task == row.task)
    ]
    # Every wake-up is in one 1 us bin.
    assert int(first["count"].sum()) == core["wakeups"]


def test_sweep_idle_stats_and_idle_replay_are_public():
    assert callable(torpor.sweep) and callable(torpor.idle_stats) and callable(torpor.idle_replay)
    # torpor.sweep is the API's function, also once the sweep machinery has been imported.
    import importlib
    import inspect

    importlib.import_module("torpor.sweeps")
    assert inspect.isfunction(torpor.sweep) and torpor.sweep is torpor.api.sweep


# Wrong types through the API: one InputError line saying what was expected, as the CLI words
# it, never a TypeError, OverflowError or RecursionError with a traceback (issue 22, item 10).


def nested(depth: int) -> dict:
    tree: dict = {}
    for _ in range(depth):
        tree = {"a": tree}
    return tree


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: torpor.run(SN530_W7, policy__apst__primary_timeout_ms={100}),
            r"^<overrides>: `policy\.apst\.primary_timeout_ms`: \{100\} \(set\) has no "
            r"TOML form \(give a list\)$",
        ),
        (
            lambda: torpor.run(b"[platform.nvme]\npreset = 'wdc-pc-sn530-256gb'\n"),
            r"^scenario: expected a path to a TOML file, TOML text or a dict of the same "
            r"tables, got b.* \(bytes\) \(decode it first: data\.decode\(\)\)$",
        ),
        (
            lambda: torpor.run({"platform": {"nvme": {1: "x"}}}),
            r"^<dict>: `platform\.nvme`: a key must be a string, got 1 \(int\)$",
        ),
        (
            lambda: torpor.run(SN530_W7 | {"run": {"duration": None}}),
            r"^<dict>: `run\.duration`: None \(NoneType\) has no TOML form$",
        ),
        (
            lambda: torpor.run(SN530_W7 | {"run": {"seed": 2**64}}),
            r"^<dict>: `run\.seed`: 18446744073709551616 does not fit a TOML integer",
        ),
        (
            lambda: torpor.run(nested(100_000)),
            r"^<dict>: `a(\.a){64}`: nested more than 64 tables or arrays deep$",
        ),
        (lambda: torpor.run(SN530_W7, max_ios=-1), r"^max_ios: -1 is below 1$"),
        (
            lambda: torpor.run(SN530_W7, max_ios=2**64),
            r"^max_ios: 18446744073709551616 is above the largest value, 18446744073709551615$",
        ),
        (
            lambda: torpor.run(SN530_W7, max_ios="10"),
            r"^max_ios: expected an integer, got '10' \(str\)$",
        ),
        (
            lambda: torpor.run(SN530_W7, progress=5),
            r"^progress: expected a function .* or None, got 5 \(int\)$",
        ),
        (
            lambda: torpor.run(SN530_W7, run__duration=float("nan")),
            r"^<overrides>: `run\.duration`: nan is not a finite number$",
        ),
        (lambda: torpor.run(None), r"^scenario: expected a path .*, got None \(NoneType\)$"),
        (
            lambda: torpor.idle_stats(None),
            r"^trace: expected a path to an ftrace text trace \(a str or a pathlib\.Path\), "
            r"got None \(NoneType\)$",
        ),
        (
            lambda: torpor.idle_stats(ROOT / "tests/ftrace/two-clusters.report.txt", 7),
            r"^platform: expected a CPU preset id or a platform TOML path .*, got 7 \(int\)$",
        ),
        (
            lambda: torpor.idle_replay(ROOT / "tests/ftrace/replay-timers.report.txt", ["menu"]),
            r"^governors: expected comma-separated governor names \(a str\), got \['menu'\]",
        ),
        (
            lambda: torpor.idle_replay(ROOT / "tests/ftrace/replay-timers.report.txt", "nope"),
            r'^governors: unknown governor "nope"; expected one of menu@6\.6, menu, ',
        ),
        (
            lambda: torpor.idle_replay(
                ROOT / "tests/ftrace/replay-timers.report.txt", "menu", hz=-1
            ),
            r"^hz: -1 is below 0$",
        ),
        (
            lambda: torpor.reproduce("apst-v2", "out"),
            r"^area: 'apst-v2' \(str\) is not one of 'apst', 'teo', 'devfreq', 'hpb', 'qos', "
            r"'all'$",
        ),
        (
            lambda: torpor.reproduce("apst", None),
            r"^out: expected a folder to write into \(a str or a pathlib\.Path\), got None",
        ),
        (
            lambda: torpor.apst_table(None),
            r"^device: expected a preset id or a path to a dump .*, got None \(NoneType\)$",
        ),
        (
            lambda: torpor.apst_table("wdc-pc-sn530-256gb", ps_max_latency_us={1}),
            r"^<apst parameters>: `ps_max_latency_us`: \{1\} \(set\) has no TOML form",
        ),
    ],
    ids=[
        "override-set",
        "bytes-scenario",
        "non-string-key",
        "none-value",
        "int-beyond-toml",
        "deep-dict",
        "max-ios-negative",
        "max-ios-beyond-u64",
        "max-ios-str",
        "progress-not-callable",
        "override-nan",
        "none-scenario",
        "idle-stats-none",
        "idle-stats-platform-int",
        "idle-replay-governors-list",
        "idle-replay-unknown-governor",
        "idle-replay-hz-negative",
        "reproduce-unknown-area",
        "reproduce-none-out",
        "apst-table-none",
        "apst-table-set",
    ],
)
def test_a_wrong_argument_is_an_input_error_saying_what_was_expected(call, message):
    with pytest.raises(torpor.InputError) as raised:
        call()
    assert re.search(message, str(raised.value)), str(raised.value)
    # One line, as the CLI prints it.
    assert "\n" not in str(raised.value)
