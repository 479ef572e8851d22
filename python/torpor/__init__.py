"""torpor: what Linux's latency-versus-power policies do to latency, throughput and energy.

The simulation lives in the Rust core (``torpor._native``); this package parses arguments,
orchestrates runs and renders reports.
"""

from torpor._native import InputError, version

__version__ = version()

__all__ = ["InputError", "__version__"]
