"""Perfetto traces checked against an independent decoder, and through the CLI.

`crates/torpor-core/tests/data/perfetto/every-event.pftrace` is a trace the Rust tests write
with their own encoder; `every-event.expected` lists the events torpor's reader must give from
it (hand-derived, checked in crates/torpor-core/tests/perfetto.rs). Here the `perfetto`
package from PyPI (Google's compiled .proto schema, decoded by the `protobuf` package: no code
shared with torpor's reader) decodes the same bytes, and the same lines must come out: the
field numbers, the packet nesting, the compressed packets and the compact scheduler encoding
are then read the same way by both. Skipped when the package is absent.

A trace written here with that package's encoder goes through `torpor idle stats`, which must
say it read a Perfetto trace and give the residency worked out by hand.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "crates" / "torpor-core" / "tests" / "data"
FIXTURE = FIXTURES / "perfetto" / "every-event.pftrace"
EXPECTED = FIXTURES / "perfetto" / "every-event.expected"

EXIT = 4294967295
# prev_state bits of Linux 4.14+ (include/trace/events/sched.h) and the preemption bit.
LETTERS = [(0x01, "S"), (0x02, "D"), (0x04, "T"), (0x08, "t"), (0x10, "X"), (0x20, "Z")]
LETTERS += [(0x40, "P"), (0x80, "I")]
PREEMPTED = 0x100
TICK_DEPS = {0: "NONE", 1: "POSIX_TIMER", 2: "PERF_EVENTS", 4: "SCHED", 8: "CLOCK_UNSTABLE"}
TICK_DEPS |= {16: "RCU", 32: "RCU_EXP"}


def schema() -> Any:
    return pytest.importorskip(
        "perfetto.protos.perfetto.trace.perfetto_trace_pb2",
        reason="the `perfetto` package (PyPI) is not installed",
    )


def prev_state(v: int) -> str:
    low = v & (PREEMPTED - 1)
    text = "|".join(letter for bit, letter in LETTERS if low & bit) or "R"
    return text + ("+" if v & PREEMPTED else "")


def packets(pb2: Any, trace: Any) -> Any:
    for p in trace.packet:
        if p.HasField("compressed_packets"):
            yield from packets(pb2, pb2.Trace.FromString(zlib.decompress(p.compressed_packets)))
        else:
            yield p


def event_text(e: Any, symbols: dict[int, str]) -> str | None:
    """One FtraceEvent as a line's body, or None for an event torpor skips."""
    kind = e.WhichOneof("event")

    def fn(v: int) -> str:
        return symbols.get(v, hex(v))

    if kind == "cpu_idle":
        return f"cpu_idle state={e.cpu_idle.state} cpu_id={e.cpu_idle.cpu_id}"
    if kind == "cpu_frequency":
        return f"cpu_frequency state={e.cpu_frequency.state} cpu_id={e.cpu_frequency.cpu_id}"
    if kind == "sched_switch":
        s = e.sched_switch
        return (
            f"sched_switch prev_pid={s.prev_pid} prev_state={prev_state(s.prev_state)} "
            f"next_pid={s.next_pid}"
        )
    if kind in ("sched_wakeup", "sched_wakeup_new", "sched_waking"):
        w = getattr(e, kind)
        return f"{kind} comm={w.comm} pid={w.pid} target_cpu={w.target_cpu}"
    if kind == "irq_handler_entry":
        return f"irq_handler_entry irq={e.irq_handler_entry.irq} name={e.irq_handler_entry.name}"
    if kind == "ipi_raise":
        r = e.ipi_raise
        return f"ipi_raise target_cpus={r.target_cpus:08x} reason={r.reason}"
    if kind in ("ipi_entry", "ipi_exit"):
        return f"{kind} reason={getattr(e, kind).reason}"
    if kind == "hrtimer_start":
        h = e.hrtimer_start
        return (
            f"hrtimer_start hrtimer={h.hrtimer} function={fn(h.function)} expires={h.expires} "
            f"softexpires={h.softexpires}"
        )
    if kind == "hrtimer_expire_entry":
        h = e.hrtimer_expire_entry
        return f"hrtimer_expire_entry hrtimer={h.hrtimer} function={fn(h.function)} now={h.now}"
    if kind == "hrtimer_cancel":
        return f"hrtimer_cancel hrtimer={e.hrtimer_cancel.hrtimer}"
    if kind == "timer_start":
        t = e.timer_start
        return f"timer_start timer={t.timer} function={fn(t.function)} expires={t.expires}"
    if kind == "timer_expire_entry":
        t = e.timer_expire_entry
        return f"timer_expire_entry timer={t.timer} function={fn(t.function)} now={t.now}"
    if kind == "timer_cancel":
        return f"timer_cancel timer={e.timer_cancel.timer}"
    if kind == "generic":
        g = e.generic
        f = {x.name: getattr(x, x.WhichOneof("value")) for x in g.field}
        if g.event_name == "cpu_idle_miss":
            return f"cpu_idle_miss cpu_id={f['cpu_id']} state={f['state']} below={f['below']}"
        if g.event_name == "tick_stop":
            return f"tick_stop success={f['success']} dependency={TICK_DEPS[f['dependency']]}"
    return None


def decode(path: Path) -> list[str]:
    """The events of a trace as `TIME CPU EVENT FIELDS` lines, merged by time."""
    pb2 = schema()
    trace = pb2.Trace.FromString(path.read_bytes())
    symbols: dict[int, str] = {}
    running: dict[int, int] = {}
    events: list[tuple[int, int, str]] = []
    for p in packets(pb2, trace):
        if p.sequence_flags & 1 or p.incremental_state_cleared:
            symbols.clear()
        for s in p.interned_data.kernel_symbols:
            symbols[s.iid] = s.str.decode()
        if not p.HasField("ftrace_events"):
            continue
        b = p.ftrace_events
        if b.lost_events:
            running.pop(b.cpu, None)
        bundle: list[tuple[int, str]] = []
        for e in b.event:
            if e.WhichOneof("event") == "sched_switch":
                running[b.cpu] = e.sched_switch.next_pid
            text = event_text(e, symbols)
            if text is not None:
                bundle.append((e.timestamp, text))
        c = b.compact_sched
        ts = 0
        for i, delta in enumerate(c.switch_timestamp):
            ts += delta
            prev = running.get(b.cpu)
            running[b.cpu] = c.switch_next_pid[i]
            if prev is not None:
                state = prev_state(c.switch_prev_state[i])
                bundle.append(
                    (
                        ts,
                        f"sched_switch prev_pid={prev} prev_state={state} "
                        f"next_pid={c.switch_next_pid[i]}",
                    )
                )
        ts = 0
        for i, delta in enumerate(c.waking_timestamp):
            ts += delta
            comm = c.intern_table[c.waking_comm_index[i]]
            text = f"comm={comm} pid={c.waking_pid[i]} target_cpu={c.waking_target_cpu[i]}"
            bundle.append((ts, f"sched_waking {text}"))
        bundle.sort(key=lambda x: x[0])
        events += [(t, b.cpu, text) for t, text in bundle]
    events.sort(key=lambda x: (x[0], x[1]))
    return [f"{t} {cpu} {text}" for t, cpu, text in events]


def test_the_perfetto_package_reads_the_fixture_as_torpor_does() -> None:
    assert decode(FIXTURE) == EXPECTED.read_text().splitlines()


def torpor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "torpor.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


def test_the_docs_example_prints_what_the_docs_show() -> None:
    doc = (ROOT / "docs" / "perfetto.md").read_text()
    command = re.search(r"```console\n\$ torpor (.*)\n```", doc)
    shown = re.search(r"```text\n(.*?)```", doc, re.S)
    assert command and shown
    got = torpor(*command.group(1).split())
    assert got.returncode == 0, got.stderr
    printed = got.stdout.splitlines()
    for line in shown.group(1).splitlines():
        assert line in printed, (line, got.stdout)


def test_idle_stats_reads_a_trace_the_perfetto_package_wrote(tmp_path: Path) -> None:
    pb2 = schema()
    trace = pb2.Trace()
    # CPU 0: state 1 from 1 ms to 3 ms, state 0 from 4 ms to 4.5 ms; CPU 1: state 1 from
    # 2 ms to 7 ms. In two bundles per CPU, interleaved as a recorder writes them.
    bundles = [
        (0, [(1_000_000, 1), (3_000_000, EXIT)]),
        (1, [(2_000_000, 1)]),
        (0, [(4_000_000, 0), (4_500_000, EXIT)]),
        (1, [(7_000_000, EXIT)]),
    ]
    for cpu, events in bundles:
        b = trace.packet.add().ftrace_events
        b.cpu = cpu
        for ts, state in events:
            e = b.event.add()
            e.timestamp = ts
            e.pid = 0
            e.cpu_idle.state = state
            e.cpu_idle.cpu_id = cpu
    path = tmp_path / "idle.pftrace"
    path.write_bytes(trace.SerializeToString())
    got = torpor("idle", "stats", str(path), "--json")
    assert got.returncode == 0, got.stderr
    stats = json.loads(got.stdout)
    assert stats["format"] == "perfetto"
    assert stats["cpu_idle_events"] == 6
    cpu0 = {r["state"]: r for r in stats["sections"]["cpu0"]}
    cpu1 = {r["state"]: r for r in stats["sections"]["cpu1"]}
    assert (cpu0["state1"]["total_us"], cpu0["state0"]["total_us"]) == (2000.0, 500.0)
    assert cpu1["state1"]["total_us"] == 5000.0
    assert stats["trace"]["perfetto"]["ftrace_bundles"] == 4
    text = torpor("idle", "stats", str(path))
    assert text.returncode == 0, text.stderr
    assert "read as a Perfetto protobuf trace (4 packets" in text.stdout


def test_a_cut_perfetto_trace_is_one_line(tmp_path: Path) -> None:
    data = FIXTURE.read_bytes()
    path = tmp_path / "cut.pftrace"
    path.write_bytes(data[: len(data) // 2])
    got = torpor("idle", "stats", str(path))
    assert got.returncode == 2
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"torpor: error: {path}: "), got.stderr
    assert "(at byte " in lines[0]


def test_idle_stats_reads_a_perfetto_trace_from_a_pipe() -> None:
    got = subprocess.run(
        [sys.executable, "-m", "torpor.cli", "idle", "stats", "-", "--json"],
        input=FIXTURE.read_bytes(),
        capture_output=True,
        timeout=300,
        cwd=ROOT,
    )
    assert got.returncode == 0, got.stderr
    stats = json.loads(got.stdout)
    assert stats["format"] == "perfetto"
    # The fixture's cpu_idle events (crates/torpor-core/tests/perfetto.rs).
    assert stats["cpu_idle_events"] == 5


def replay_json(source: str, **run: Any) -> dict[str, Any]:
    options = ["--json", "--platform", "intel-skylake-client", "--governor", "menu,teo"]
    got = subprocess.run(
        [sys.executable, "-m", "torpor.cli", "idle", "replay", source, *options],
        capture_output=True,
        timeout=300,
        cwd=ROOT,
        **run,
    )
    assert got.returncode == 0, got.stderr
    report: dict[str, Any] = json.loads(got.stdout)
    return report


def test_idle_replay_reads_a_perfetto_trace_from_stdin_and_a_fifo(tmp_path: Path) -> None:
    # The same report as from the file, but the name it is given.
    want = replay_json(str(FIXTURE))
    assert want["format"] == "perfetto"
    # The fixture's closed idle periods (crates/torpor-core/tests/perfetto.rs).
    assert want["periods"] == 2
    got = replay_json("-", input=FIXTURE.read_bytes())
    assert got.pop("file") == "<stdin>"
    want.pop("file")
    assert got == want
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat '{FIXTURE}' > '{fifo}'"])
    got = replay_json(str(fifo))
    writer.wait(timeout=60)
    assert got.pop("file") == str(fifo)
    assert got == want


def test_torpor_trace_gives_one_dataframe_per_event() -> None:
    import torpor

    frames = torpor.trace(FIXTURE)
    # The fixture's events by name (every-event.expected).
    assert frames["cpu_idle"].index.tolist() == [1000, 1100, 1400, 2000, 3500]
    assert frames["cpu_idle"]["state"].tolist() == [1, 2, EXIT, EXIT, 0]
    switches = frames["sched_switch"]
    assert switches.index.name == "time_ns"
    assert switches[["cpu", "prev_pid", "prev_state", "next_pid"]].values.tolist() == [
        [0, 10, "S", 0],
        [0, 0, "R+", 55],
        [1, 0, "R", 77],
        [1, 77, "D", 0],
    ]
    assert frames["hrtimer_start"]["function"].tolist() == ["tick_sched_timer"]
    # torpor.trace is the function, also once its module has been imported.
    import importlib
    import inspect

    importlib.import_module("torpor.traces")
    assert inspect.isfunction(torpor.trace) and torpor.trace(FIXTURE).keys() == frames.keys()
