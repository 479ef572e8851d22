"""``torpor.trace(path)``: a trace's events as pandas DataFrames, one per event, so that a
trace can be analysed without LISA or Perfetto's trace processor.

Every format ``torpor idle stats`` reads, told by content: ftrace text (the kernel's ``trace``
file, ``trace-cmd report``, idlestat files; plain, gzip, zstd or a systrace page),
trace-cmd's ``trace.dat`` and Perfetto traces. Each DataFrame has the event's ``cpu`` and its
fields as the kernel names them (``cpu_idle``: ``state``, ``cpu_id``; ``sched_switch``:
``prev_pid``, ``prev_state``, ``next_pid``; ...), indexed by ``time_ns``. The Rust core reads
the trace (crates/torpor-core/src/trace/tables.rs); this module only builds the DataFrames.

>>> t = trace(_ROOT / "crates/torpor-core/tests/data/perfetto/every-event.pftrace")
>>> t["cpu_idle"].loc[1000].to_dict()
{'cpu': 1, 'state': 1, 'cpu_id': 1}
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from torpor import native

_ROOT = Path(__file__).resolve().parents[2]


def trace(path: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """The events of the trace at ``path``: event name -> DataFrame (``cpu`` and the event's
    fields as columns, ``time_ns`` as index), in time order."""
    tables = native.trace_tables(path)
    frames = {}
    for name, t in tables["events"].items():
        columns = {"cpu": t["cpu"], **dict(t["fields"])}
        frames[name] = pd.DataFrame(columns, index=pd.Index(t["time_ns"], name="time_ns"))
    return frames
