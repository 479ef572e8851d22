"""The CLI as a user meets it: versions, presets, tables, errors."""

from __future__ import annotations

import json
from pathlib import Path

import torpor

ROOT = Path(__file__).resolve().parent.parent


def test_version_matches_the_package(cli):
    r = cli("--version")
    assert r.exit_code == 0
    assert r.output.strip() == f"torpor, version {torpor.__version__}"


def test_devices_lists_the_seventeen_presets(cli):
    r = cli("devices", "--json")
    assert r.exit_code == 0
    drives = [d for d in json.loads(r.stdout) if d["kind"] == "nvme"]
    ids = {d["id"] for d in drives}
    assert len(ids) == 17
    # The five drives named in commit ebd8a93aa4f5.
    commit = {d["id"] for d in drives if d["in_apst_commit"]}
    assert commit == {
        "wdc-pc-sn530-256gb",
        "intel-760p-ssdpekkw256g8",
        "samsung-pm991-mzvlq256hajd",
        "skhynix-bc511-hfm256gdjtni",
        "kioxia-bg4-kbg40zns256g",
    }


def test_apst_json_is_exactly_the_documented_shape(cli):
    r = cli("apst", "wdc-pc-sn530-256gb", "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert set(doc) == {"apste", "entries"}
    assert doc["apste"] == 1
    assert len(doc["entries"]) == 32
    assert all(set(e) == {"ps", "itps", "itpt_ms", "raw"} for e in doc["entries"])
    # SN530 v5.14 by hand (spec 1.4): PS3 total 3900+11000 = 14900 <= 15000 -> primary
    # (100 ms); PS4 total 44000 in (15000, 100000] -> secondary (2000 ms), found first.
    # Entries PS0-PS2 -> (3, 100): raw = 3<<3 | 100<<8 = 25624; PS3 -> (4, 2000): 512032.
    raw = [e["raw"] for e in doc["entries"]]
    assert raw[:5] == [25624, 25624, 25624, 512032, 0]
    assert raw[5:] == [0] * 27


def test_apst_legacy_algorithm_gives_the_50x_rule(cli):
    r = cli("apst", "wdc-pc-sn530-256gb", "--algorithm", "legacy", "--json")
    # Legacy by hand: PS4 total 44000 us -> (44000+19)//20 = 2200 ms; PS3 14900 -> 745 ms.
    entries = json.loads(r.stdout)["entries"]
    assert [(e["itps"], e["itpt_ms"]) for e in entries[:5]] == [
        (3, 745),
        (3, 745),
        (3, 745),
        (4, 2200),
        (0, 0),
    ]


def test_apst_text_shows_the_transitions(cli):
    r = cli("apst", "wdc-pc-sn530-256gb")
    assert r.exit_code == 0
    assert "PS0 -> PS3 after 100 ms idle" in r.output
    assert "PS3 -> PS4 after 2000 ms idle" in r.output
    # The 32 entries only on request.
    assert "Entry[31]" not in r.output and "--entries" in r.output
    assert "Entry[31]" in cli("apst", "wdc-pc-sn530-256gb", "--entries").output


def test_apst_reads_standard_input_and_titles_a_dump_by_its_model():
    # The core reads file descriptor 0, as a pipe from nvme-cli gives it: a real process.
    import subprocess
    import sys

    dump = ROOT / "crates/torpor-core/tests/data/nvme/wdc-pc-sn530-256gb-synthetic.smartctl.txt"
    with dump.open("rb") as stdin:
        r = subprocess.run(
            [sys.executable, "-m", "torpor.cli", "apst", "-"],
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert r.returncode == 0, r.stderr
    assert "PC SN530 NVMe WDC 256GB: power states (NPSS 4), from <stdin>" in " ".join(
        r.stdout.split()
    )
    assert "PS0 -> PS3 after 100 ms idle" in r.stdout


def test_a_mistyped_preset_suggests_the_close_ones(cli):
    r = cli("apst", "wdc-pc-sn530")
    assert r.exit_code == 2
    assert 'did you mean "wdc-pc-sn530-256gb"?' in r.stderr


def test_emit_nvme_cli_writes_the_256_byte_table(cli, tmp_path: Path):
    data = tmp_path / "apst.bin"
    r = cli("apst", "wdc-pc-sn530-256gb", "--emit", "nvme-cli", "--data-file", str(data))
    assert r.exit_code == 0
    assert "set-feature" in r.output and str(data) in r.output
    blob = data.read_bytes()
    assert len(blob) == 256
    assert int.from_bytes(blob[0:8], "little") == 25624
    assert int.from_bytes(blob[24:32], "little") == 512032
    # Never overwritten silently; --force does.
    again = cli("apst", "wdc-pc-sn530-256gb", "--emit", "nvme-cli", "--data-file", str(data))
    assert again.exit_code == 2
    assert again.stderr == (
        f"torpor: error: {data}: exists; --emit nvme-cli does not overwrite it without --force "
        "(or choose another --data-file)\n"
    )
    forced = cli(
        "apst", "wdc-pc-sn530-256gb", "--emit", "nvme-cli", "--data-file", str(data), "--force"
    )
    assert forced.exit_code == 0
    both = cli("apst", "wdc-pc-sn530-256gb", "--emit", "kernel", "--json")
    assert (both.exit_code, both.stderr) == (
        2,
        "torpor: error: --json and --emit print different things; give one of them\n",
    )


def test_emit_kernel_for_legacy_sets_primary_timeout_zero(cli):
    r = cli("apst", "wdc-pc-sn530-256gb", "--algorithm", "legacy", "--emit", "kernel")
    assert r.exit_code == 0
    assert "nvme_core.apst_primary_timeout_ms=0" in r.output


def test_missing_device_is_one_line_exit_2(cli):
    r = cli("apst", "no-such-drive.json")
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("torpor: error: no-such-drive.json: ")
    assert "Traceback" not in r.output


def test_malformed_device_dump_names_file_and_line(cli, tmp_path: Path):
    bad = tmp_path / "ctrl.json"
    bad.write_text('{\n  "npss": 4,\n  "apsta": 1,\n  "psds": [\n')
    r = cli("apst", str(bad))
    assert r.exit_code == 2
    assert r.output.startswith(f"torpor: error: {bad}:")
    assert len(r.output.strip().splitlines()) == 1


def test_malformed_scenario_names_file_line_and_key(cli, tmp_path: Path):
    s = tmp_path / "s.toml"
    s.write_text(
        '[platform.nvme]\npreset = "wdc-pc-sn530-256gb"\n[workload]\napst_workflow = 7\n'
        '[run]\nduration = "10s"\nseed = 1\ncolour = "blue"\n'
    )
    r = cli("run", str(s))
    assert r.exit_code == 2
    assert r.output.startswith(f"torpor: error: {s}:8: ")
    assert "colour" in r.output


def test_debug_flag_shows_the_traceback(tmp_path: Path):
    import pytest
    from click.testing import CliRunner

    from torpor.cli import main

    with pytest.raises(torpor.InputError):
        CliRunner().invoke(main, ["--debug", "apst", "nope.json"], catch_exceptions=False)


def test_apsta_zero_sends_no_table(cli, tmp_path: Path):
    fixture = ROOT / "crates/torpor-core/tests/data/nvme/samsung-950-pro.nvme-cli-1.x.json"
    ctrl = tmp_path / "apsta0.json"
    ctrl.write_text(fixture.read_text().replace('"apsta" : 1', '"apsta" : 0'))
    r = cli("apst", str(ctrl))
    assert r.exit_code == 0
    assert "No APST table is sent" in r.output and "APSTA = 0" in r.output


def test_smartctl_dump_notes_the_apsta_assumption(cli):
    dump = ROOT / "scenarios/data/intel-760p-synthetic.smartctl.txt"
    r = cli("apst", str(dump), "--algorithm", "legacy")
    assert r.exit_code == 0
    # 760p legacy by hand: PS3 total 4000 us -> 200 ms; PS4 total 14000 us -> 700 ms.
    assert "PS0 -> PS3 after 200 ms idle" in r.output
    assert "PS3 -> PS4 after 700 ms idle" in r.output


def test_iolog_replay_scenario_replays_every_io(cli):
    r = cli("run", str(ROOT / "scenarios/apst-iolog-replay.toml"), "--json")
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output[r.output.index("{") :])
    # scenarios/data/read-bursts.iolog: 12 repeats x 7 gaps = 84 bursts of 8 reads + 1 write.
    for v in rep["variants"]:
        assert v["io"]["ios"] == 84 * 9
        assert v["io"]["read"]["count"] == 84 * 8
        assert v["io"]["write"]["count"] == 84
        # The synthetic dump is the 760p preset's drive: its figures are borrowed, and said.
        assert any(
            n.startswith("matched built-in preset intel-760p-ssdpekkw256g8: same model")
            for n in v["nvme"]["notes"]
        ), v["nvme"]["notes"]


def test_every_shipped_smartctl_dump_is_synthetic_and_says_where_it_comes_from():
    # Real dumps from collections without a licence are not shipped (docs/data-files.md).
    dumps = [
        p
        for p in ROOT.rglob("*.smartctl.txt")
        if not {"fuzz", "target", ".venv"} & set(p.relative_to(ROOT).parts)
    ]
    assert len(dumps) == 2
    for p in dumps:
        assert "SYNTHETIC" in p.read_text().splitlines()[0], p
        assert p.with_name(p.name + ".source.md").is_file(), p


def test_malformed_iolog_names_its_line(cli, tmp_path: Path):
    (tmp_path / "bad.iolog").write_text(
        "fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n10 /dev/x read 0 4096\n"
        "20 /dev/x read zero 4096\n"
    )
    s = tmp_path / "s.toml"
    s.write_text(
        '[platform.nvme]\npreset = "wdc-pc-sn530-256gb"\n[workload.replay]\nfile = "bad.iolog"\n'
        '[run]\nduration = "1s"\nseed = 1\n'
    )
    r = cli("run", str(s))
    assert r.exit_code == 2
    # Named by its path from where torpor runs, so the user can open it.
    assert r.output.startswith(f"torpor: error: {tmp_path / 'bad.iolog'}:5: ")


def test_apst_option_defaults_are_the_kernels(cli):
    # drivers/nvme/host/core.c (v5.14+): default_ps_max_latency_us 100000,
    # apst_primary_timeout_ms 100, apst_secondary_timeout_ms 2000,
    # apst_primary_latency_tol_us 15000, apst_secondary_latency_tol_us 100000.
    r = cli("apst", "--help")
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split("Options:")[1].split())
    for option, default in [
        ("--primary-timeout-ms", "100"),
        ("--secondary-timeout-ms", "2000"),
        ("--primary-latency-tol-us", "15000"),
        ("--secondary-latency-tol-us", "100000"),
        ("--algorithm", "v5.14"),
    ]:
        start = text.index(option)
        assert f"[default: {default}" in text[start : text.index(" --", start + 2)], option
    # The latency limit's default depends on the release: 100000 since v4.12, 25000 in v4.11
    # (c5552fde102f); the table the CLI prints says which applied.
    start = text.index("--ps-max-latency-us")
    assert "(100000; 25000 for v4.11)" in text[start : text.index(" --", start + 2)]
    for algorithm, limit in [("v5.14", 100000), ("legacy", 100000), ("v4.11", 25000)]:
        r = cli("apst", "wdc-pc-sn530-256gb", "--algorithm", algorithm)
        assert f"ps_max_latency_us={limit}" in r.output, algorithm


def test_dumps_with_a_byte_order_mark_or_in_utf16_are_decoded_and_noted(cli, tmp_path: Path):
    data = ROOT / "crates/torpor-core/tests/data/nvme"
    plain = cli("apst", str(data / "wdc-pc-sn530-256gb.nvme-cli-2.x.json"), "--json")
    smart = cli("apst", str(data / "wdc-pc-sn530-256gb-synthetic.smartctl.txt"), "--json")
    assert plain.exit_code == smart.exit_code == 0
    cases = [
        ("bom.json", b"\xef\xbb\xbf", "utf-8", "wdc-pc-sn530-256gb.nvme-cli-2.x.json", plain),
        ("le.txt", b"\xff\xfe", "utf-16-le", "wdc-pc-sn530-256gb-synthetic.smartctl.txt", smart),
        ("be.json", b"\xfe\xff", "utf-16-be", "wdc-pc-sn530-256gb.nvme-cli-2.x.json", plain),
    ]
    notes = {
        "utf-8": "the file starts with a UTF-8 byte-order mark; skipped",
        "utf-16-le": "the file is UTF-16 (little-endian); decoded",
        "utf-16-be": "the file is UTF-16 (big-endian); decoded",
    }
    for name, bom, codec, source, expected in cases:
        f = tmp_path / name
        f.write_bytes(bom + (data / source).read_text().encode(codec))
        r = cli("apst", str(f), "--json")
        assert r.exit_code == 0, r.stderr
        # The same table as from the plain file, and a note saying what was decoded.
        assert r.stdout == expected.stdout
        assert f"torpor: note: {f}: {notes[codec]}\n" in r.stderr


def test_dumps_are_recognised_by_content_and_say_as_what(cli, tmp_path: Path):
    from torpor import native

    data = ROOT / "crates/torpor-core/tests/data/nvme"
    # Names that say nothing: the content decides.
    for source, fmt in [
        ("wdc-pc-sn530-256gb.nvme-cli-2.x.json", "nvme id-ctrl -o json"),
        ("wdc-pc-sn530-256gb-synthetic.smartctl.txt", "smartctl -a"),
    ]:
        f = tmp_path / "dump"
        f.write_bytes((data / source).read_bytes())
        assert native.load_device(f)["format"] == fmt
    assert native.load_device("wdc-pc-sn530-256gb")["format"] == "preset"
    r = cli("apst", str(tmp_path / "dump"))
    assert "(read as `smartctl -a` output)" in r.stdout


def test_a_zero_watt_state_and_a_table_that_ends_the_file_are_noted(cli, tmp_path: Path):
    # PS0 with MP 0 W beside ACTP 180 x 0.01 W = 1.8 W: its power is unknown, said aloud.
    psd = (
        '{"max_power":0,"max_power_scale":0,"non-operational_state":0,"entry_lat":0,'
        '"exit_lat":0,"idle_power":0,"idle_scale":0,"active_power":180,"active_scale":2}'
    )
    dump = tmp_path / "zero.json"
    dump.write_text('{"mn":"Z","npss":0,"apsta":1,"psds":[' + psd + "]}\n")
    r = cli("apst", str(dump))
    assert r.exit_code == 0, r.stderr
    assert (
        "torpor: note: PS0 declares a maximum power of 0 W (beside an active power of "
        "1800 mW): its power is unknown" in r.stderr
    )
    # A smartctl table cut after PS1: nothing follows it, which smartctl never does.
    dump = ROOT / "crates/torpor-core/tests/data/nvme/wdc-pc-sn530-256gb-synthetic.smartctl.txt"
    full = dump.read_text()
    lines = full.splitlines(keepends=True)
    header = next(i for i, line in enumerate(lines) if line.startswith("St Op"))
    cut = tmp_path / "cut.txt"
    cut.write_text("".join(lines[: header + 3]))
    r = cli("apst", str(cut))
    assert r.exit_code == 0, r.stderr
    assert "the power-state table ends the file after PS1" in r.stderr
    r = cli("apst", str(dump))
    assert "ends the file" not in r.stderr


def test_the_run_table_fits_80_columns_without_cutting_numbers():
    from io import StringIO

    from rich.console import Console

    from torpor import native
    from torpor.report import apst_text

    out = StringIO()
    console = Console(file=out, width=80, markup=False, highlight=False)
    report = native.run_scenario_file(str(ROOT / "scenarios" / "apst-fio-job.toml"))
    apst_text.print_run(console, report, detail=True)
    text = out.getvalue()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    # Every variant's figures appear whole (PM991, 100 reads each).
    for v in report["variants"]:
        assert f"{v['nvme']['avg_power_mw']:.0f}" in text
        lat = v["io"]["all"]
        assert f"min={lat['min_us']:.2f}, max={lat['max_us']:.2f}, avg={lat['mean_us']:.2f}" in text


def test_a_replay_says_what_it_did_not_send_and_did_not_reach(cli, tmp_path: Path):
    # Two reads 2 s apart, a sync and a trim between them; the run stops at 1 s.
    (tmp_path / "t.iolog").write_text(
        "fio version 3 iolog\n0 /d add\n0 /d open\n0 /d read 0 4096\n10 /d sync 0 0\n"
        "20 /d trim 0 4096\n2000000 /d read 4096 4096\n2000001 /d close\n"
    )
    (tmp_path / "s.toml").write_text(
        '[platform.nvme]\npreset = "wdc-pc-sn530-256gb"\n[workload.replay]\nfile = "t.iolog"\n'
        '[run]\nduration = "1s"\n'
    )
    r = cli("run", str(tmp_path / "s.toml"), "--brief")
    assert r.exit_code == 0, r.stderr
    log = tmp_path / "t.iolog"
    assert f"torpor: note: replay {log}: 1 sync and 1 trim lines were counted, not sent" in r.stderr
    # Not reached: the second read (read ahead) and the close.
    assert f"replay {log}: variant base ended at 1 s with 2 lines of the trace not reached" in (
        r.stderr
    )


def test_devices_fits_80_columns_without_cutting_anything():
    from io import StringIO

    from rich.console import Console

    from torpor import cli as torpor_cli
    from torpor import native

    out = StringIO()
    saved = torpor_cli.console
    torpor_cli.console = Console(file=out, width=80, markup=False, highlight=False)
    try:
        torpor_cli.devices.callback(as_json=False)
    finally:
        torpor_cli.console = saved
    text = out.getvalue()
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    for preset in native.presets():
        assert preset["id"] in text
        assert f"{preset['ps0_idle']['central_mw'] / 1000:g}" in text
    for platform in native.cpu_presets():
        assert platform["id"] in text
    for device in native.ufs_presets():
        assert device["id"] in text


def test_devices_lists_the_ten_cpu_presets_with_their_kind(cli):
    r = cli("devices", "--json")
    assert r.exit_code == 0
    cpus = {d["id"]: d for d in json.loads(r.stdout) if d["kind"] == "cpu"}
    assert set(cpus) == {
        "qcom-msm8916",
        "qcom-msm8996-pixel",
        "google-gs101",
        "arm-juno-r0",
        "hisilicon-hi3660-hikey960",
        "hisilicon-hi6220-hikey",
        "intel-skylake-client",
        "intel-alderlake",
        "amd-zen2-acpi-idle",
        "intel-haswell-broadwell-client",
    }
    # Juno r0 (juno.dts): A53s are CPUs 0, 3, 4, 5; A57s 1, 2; the cluster state is the third.
    juno = {c["name"]: c for c in cpus["arm-juno-r0"]["cluster"]}
    assert juno["little"]["cpus"] == [0, 3, 4, 5] and juno["big"]["cpus"] == [1, 2]
    assert [s["level"] for s in juno["big"]["state"]] == ["cpu", "cpu", "cluster"]
    # The table's row: CPUs as count x capacity per cluster, states with cluster states marked,
    # the deepest exit latency (CLUSTER_SLEEP_0: 400 + 1200 us).
    r = cli("devices")
    row = next(line for line in r.stdout.splitlines() if "arm-juno-r0" in line)
    assert row.split() == [
        "arm-juno-r0",
        "4x446",
        "+",
        "2x1024",
        "3",
        "(1c)",
        "+",
        "3",
        "(1c)",
        "1600",
        "none",
    ]


def test_devices_shows_each_cpu_frequency_domain_and_its_sources(cli):
    # The frequency-domain table: gs101's X1 (gs101.dtsi: 17 OPPs, 500-2802 MHz, power derived
    # from the DT coefficient and voltages, clock-latency-ns 500 000); MSM8916 (4 OPPs, power
    # estimated, CPUFREQ_ETERNAL); the AMD preset (_PSS powers, no latency given).
    r = cli("devices")
    rows = [line.split() for line in r.stdout.split("CPU frequency domains")[1].splitlines()]
    assert ["google-gs101", "big", "17:", "500-2802", "derived", "500"] in rows
    assert ["qcom-msm8916", "cpu0-3", "4:", "200-998.4", "estimate", "4294967"] in rows
    assert ["amd-zen2-acpi-idle", "all", "3:", "1400-1700", "sourced", "none"] in rows
    # --json: every OPP's voltage and power with its source, every domain's sources.
    cpus = {d["id"]: d for d in json.loads(cli("devices", "--json").stdout) if d["kind"] == "cpu"}
    big = cpus["google-gs101"]["cluster"][2]
    assert big["opp"][-1]["microvolt"] == 1_056_250
    assert big["opp"][-1]["power_mw"]["source"].startswith("DERIVED: 650 uW/MHz/V^2")
    assert big["cpufreq"]["dynamic_power_coefficient"] == 650
    assert "clock-latency-ns" in big["cpufreq"]["transition_latency"]["source"]


def test_devices_lists_the_three_ufs_presets_with_their_levels(cli):
    r = cli("devices", "--json")
    assert r.exit_code == 0
    ufs = {d["id"]: d for d in json.loads(r.stdout) if d["kind"] == "ufs"}
    assert set(ufs) == {"ufs21-64gb-class", "samsung-eufs31-512gb", "samsung-ufs40-class"}
    # Every figure has a source; estimates carry a range.
    for d in ufs.values():
        for _key, f in d["figures"]:
            assert f["source"]
            assert f["low"] <= f["central"] <= f["high"]
            assert f["estimate"] or f["low"] == f["high"]
    # The UFS 2.1 row by hand (sdm845: 50 / 200 MHz; HS-G1 / HS-G3 on 2 lanes; link efficiency
    # 0.91; 1000 host cycles). Its reads go through its FTL: controller 90 us, tR 58 us, 4 KiB
    # over a 400 MB/s channel 10.24 us, so a QD1 4 KiB read with its map entry cached takes
    # 20 + 158.24 + 4096 / 265.2832 = 193.7 us at min, 5 + 158.24 + 4096 / 1061.1328 = 167.1
    # at max; 512 KiB reads (the calibrated slots): the G1 link's 2 x 145.76 x 0.91 = 265.3
    # MB/s at min, the preset's 850 MB/s at max.
    r = cli("devices")
    row = next(line for line in r.stdout.splitlines() if "ufs21-64gb-class" in line)
    assert row.split() == [
        "ufs21-64gb-class",
        "2.1",
        "50MHz",
        "G1",
        "/",
        "200MHz",
        "G3",
        "194",
        "/",
        "167",
        "265",
        "/",
        "850",
    ]


def test_run_report_writes_the_full_json_and_a_self_contained_page(cli, tmp_path: Path):
    out = tmp_path / "rep"
    scenario = ROOT / "scenarios" / "apst-sn530-workflow7.toml"
    r = cli("run", str(scenario), "--brief", "--report", str(out))
    assert r.exit_code == 0, r.stderr
    report = json.loads((out / "results.json").read_text())
    assert [v["name"] for v in report["variants"]] == ["legacy", "v5.14", "v5.14, primary 200 ms"]
    page = (out / "report.html").read_text()
    assert page.count("<svg") == 2 and "<script" not in page  # the CDF, the residency
    for v in report["variants"]:
        assert v["name"] in page
    # A file where the directory should be is refused in one line.
    r = cli("run", str(scenario), "--report", str(out / "results.json"))
    assert r.exit_code == 2 and "is a file; --report expects a directory" in r.stderr


def test_variants_on_different_drives_name_their_drive_in_the_run_table(cli, tmp_path: Path):
    s = tmp_path / "two.toml"
    s.write_text(
        '[platform.nvme]\npreset = "wdc-pc-sn530-256gb"\n[workload]\napst_workflow = 7\n'
        '[run]\nduration = "1s"\n[[variant]]\nname = "a"\n[[variant]]\nname = "b"\n'
        '[variant.platform.nvme]\npreset = "kioxia-bg4-kbg40zns256g"\n'
    )
    r = cli("run", str(s), "--brief")
    assert r.exit_code == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "a (wdc-pc-sn530-256gb)" in text and "b (kioxia-bg4-kbg40zns256g)" in text
