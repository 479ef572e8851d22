"""torpor: what Linux's latency-versus-power policies do to latency, throughput and energy.

The simulation lives in the Rust core (``torpor._native``); this package parses arguments,
orchestrates runs and renders reports. The Python API (:mod:`torpor.api`: ``run``,
``devices``, ``apst_table``, ``reproduce``, ``sweep``, ``idle_stats``, ``idle_replay``, and
:func:`torpor.traces.trace` as ``trace``) is loaded on first use, so that the CLI does not
pay for pandas.
"""

from __future__ import annotations

from torpor._native import InputError, version

__version__ = version()

_API = (
    "run",
    "devices",
    "apst_table",
    "reproduce",
    "sweep",
    "idle_stats",
    "idle_replay",
    "Result",
)

__all__ = ["InputError", "__version__", "trace", *_API]


# `typing` costs ~8 ms to import, a tenth of `torpor idle stats` on a 100 MB trace.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def __getattr__(name: str) -> Any:
    if name == "trace":
        from torpor.traces import trace

        return trace
    if name in _API:
        from torpor import api

        return getattr(api, name)
    raise AttributeError(f"module 'torpor' has no attribute {name!r}")
