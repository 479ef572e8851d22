"""Writes an idle-decide/1 sequence as the whitespace-separated numbers driver.c reads, with
the defaults of docs/idle-decide.md filled in (null `entered` becomes -2)."""

import json
import sys

NO_CONSTRAINT_NS = 2_000_000_000_000

with open(sys.argv[1]) as f:
    lines = [line for line in f if line.strip()]
platform = json.loads(lines[0])
tick_ns = platform.get("tick_ns", 4_000_000)
print(tick_ns, len(platform["states"]))
for s in platform["states"]:
    print(s["exit_latency_ns"], s["target_residency_ns"], int(s.get("polling", False)))
for line in lines[1:]:
    step = json.loads(line)
    sleep = step["sleep_length_ns"]
    stopped = step.get("tick_stopped", False)
    delta_tick = step.get("delta_tick_ns", sleep if stopped else min(sleep, tick_ns))
    mask = sum(1 << i for i in step.get("disabled", []))
    entered = step.get("entered")
    print(
        sleep,
        delta_tick,
        step.get("latency_req_ns", NO_CONSTRAINT_NS),
        int(stopped),
        step.get("nr_iowait", 0),
        mask,
        -2 if entered is None else entered,
        step["residency_ns"],
        int(step.get("poll_time_limit", False)),
        int(step.get("got_tick", False)),
    )
