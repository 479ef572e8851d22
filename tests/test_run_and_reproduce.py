"""Scenario runs and the APST reproduction, checked against hand-derived values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_sn530_workflow7_latency_is_the_ps3_exit_latency(cli):
    r = cli("run", str(ROOT / "scenarios" / "apst-sn530-workflow7.toml"), "--json")
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    by = {v["name"]: v for v in rep["variants"]}
    # Legacy: PS3 only after 745 ms of idle, the reads come every 150 ms -> never asleep;
    # each read takes the preset's 75 us QD1 read latency, and no transition happens.
    legacy = by["legacy"]["io"]["all"]
    assert legacy["min_us"] == legacy["max_us"] == 75.0
    assert by["legacy"]["nvme"]["transitions"] == 0
    # v5.14: PS3 reached 100 + 3.9 ms into each 150 ms gap, so every read but the first (the
    # drive starts awake) pays PS3's 11 ms exit latency: 11000 + 75 = 11075 us.
    v514 = by["v5.14"]["io"]["all"]
    assert v514["min_us"] == 75.0
    assert v514["p50_us"] == pytest.approx(11075.0, rel=0.004)
    assert v514["max_us"] == 11075.0
    # One transition into PS3 per gap: reads - 1 of them started a gap that ended in PS3
    # (the last gap is cut by the end of the run, which may or may not reach PS3).
    n = v514["count"]
    assert by["v5.14"]["nvme"]["transitions"] in (n - 1, n)


def test_same_scenario_same_bytes(cli):
    a = cli("run", str(ROOT / "scenarios" / "apst-fio-job.toml"), "--json").output
    b = cli("run", str(ROOT / "scenarios" / "apst-fio-job.toml"), "--json").output
    assert a == b


def test_reproduce_apst_writes_results_and_report(cli, tmp_path: Path):
    r = cli("reproduce", "apst", "--out", str(tmp_path))
    assert r.exit_code == 0, r.output
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["experiment"] == "apst"
    assert len(results["runs"]) == 5 * 7 * 2
    keys = {
        "device",
        "workflow",
        "algorithm",
        "avg_power_mw",
        "lat_mean_us",
        "lat_p99_us",
        "lat_p999_us",
        "lat_max_us",
        "woken_ios",
        "energy_per_io_uj",
        "transitions",
    }
    assert all(set(row) == keys for row in results["runs"])
    assert {row["algorithm"] for row in results["runs"]} == {"legacy", "v5.14"}
    for c in results["claims"]:
        assert set(c) == {
            "seed",
            "claim",
            "seed_value",
            "torpor_value",
            "ok",
            "robust",
            "hinges_on",
            "robust_basis",
            "fitted",
            "fitted_to",
        }
        # Robust only where it holds; a claim that is not checkable is not robust either way.
        assert c["robust"] is None if c["ok"] is None else (not c["robust"] or c["ok"])
        assert c["seed"] == "000"
    report = (tmp_path / "report.md").read_text()
    assert "## Claims" in report and "WD SN530" in report
    # The HTML page: self-contained (nothing fetched), the claims first, three inline plots.
    page = (tmp_path / "report.html").read_text()
    assert page.index("<h2>Claims</h2>") < page.index("<svg")
    # Power, mean and p99.9 latency per workflow; power over time; the latency CDF.
    assert page.count("<svg") == 5
    assert "<script" not in page and 'src="http' not in page and "<link" not in page
    assert page.count('<td class="fails">') == sum(c["ok"] is False for c in results["claims"])
    # SN530, workflow 7 (a 4 KiB read every 150 ms): legacy never leaves PS0, so no read waits
    # and the slowest is the 75 us service time; v5.14 reaches PS3 in every gap, so every read
    # but the first waits PS3's 11 ms exit: the slowest (and p99.9) is 11 075 us.
    by = {
        r["algorithm"]: r
        for r in results["runs"]
        if r["device"] == "wdc-pc-sn530-256gb" and r["workflow"] == 7
    }
    assert (by["legacy"]["woken_ios"], by["legacy"]["lat_max_us"]) == (0, 75.0)
    assert by["v5.14"]["lat_max_us"] == 11075.0
    assert by["v5.14"]["lat_p999_us"] == pytest.approx(11075.0, rel=0.004)
    assert by["v5.14"]["woken_ios"] > 0
    # Energy per IO under legacy, by hand: reads at k x (150 ms + 75 us), k = 0..399 (the
    # 401st would start after 60 s); each is busy 75 us at ACTP 1.8 W, the rest of the minute
    # idles in PS0 at the preset's 700 mW: (400 x 75 us x 1800 mW + (60 s - 400 x 75 us) x
    # 700 mW) / 400 = (54 + 41 979) mJ / 400 = 105 082.5 uJ.
    assert by["legacy"]["energy_per_io_uj"] == pytest.approx(105082.5, rel=1e-9)
    assert by["v5.14"]["energy_per_io_uj"] > 0


def test_every_reproduce_area_is_byte_identical_across_runs(cli, tmp_path: Path):
    from torpor.reproduction import AREAS

    for area in AREAS:
        a, b = tmp_path / f"{area}-a", tmp_path / f"{area}-b"
        for out in (a, b):
            assert cli("reproduce", area, "--out", str(out)).exit_code == 0
        for name in ("results.json", "report.md", "report.html"):
            assert (a / name).read_bytes() == (b / name).read_bytes(), f"{area}/{name}"


def test_apst_runs_do_not_depend_on_the_thread_count():
    from torpor.experiments import apst

    assert apst.runs(workers=1) == apst.runs(workers=3)


def test_make_demo_prints_one_line_per_step_and_where_the_report_is():
    # make -n shows the recipes: pip quiet, maturin's output kept in a log unless it fails,
    # and the last is `reproduce all`, whose last line printed names the page to open.
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    root = Path(__file__).resolve().parents[1]
    text = subprocess.run(
        ["make", "-n", "-B", "--no-print-directory", "demo"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert all("--quiet" in line for line in text.splitlines() if "pip install" in line)
    assert "> .venv/build.log 2>&1 || { cat .venv/build.log; exit 1; }" in " ".join(text.split())
    assert text.rstrip().splitlines()[-1] == ".venv/bin/torpor reproduce all --out out"


def test_a_run_page_lists_the_notes_the_cli_prints(cli, tmp_path: Path):
    # The SN530's PS0 idle power is an estimate: the terminal says so, and so does the page.
    out = tmp_path / "rep"
    r = cli("run", str(ROOT / "scenarios" / "apst-sn530-workflow7.toml"), "--report", str(out))
    assert r.exit_code == 0, r.output
    page = (out / "report.html").read_text()
    assert '<h2 id="notes">Notes</h2>' in page
    assert "PS0 idle power 700 mW, range 350-1050 mW" in r.stderr
    assert "PS0 idle power 700 mW, range 350-1050 mW" in page
