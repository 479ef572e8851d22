"""Thin JSON-speaking wrappers over ``torpor._native`` (the Rust core): the only place Python
calls it.

The core exchanges JSON text so that its schema stays defined once, in Rust; these helpers
decode it into plain dicts and lists.
"""

from __future__ import annotations

import json
from typing import Any

from torpor import _native


def presets() -> list[dict[str, Any]]:
    """Every built-in device preset: id, vendor, model, firmware, source, ..."""
    return json.loads(_native.presets())


def load_device(spec: str) -> dict[str, Any]:
    """A preset id or a path to nvme-cli JSON / smartctl text -> controller, notes, label."""
    return json.loads(_native.load_device(spec))


def apst(
    spec: str,
    params: dict[str, Any],
    data_file: str = "apst-table.bin",
    nvme_device: str = "/dev/nvme0",
) -> dict[str, Any]:
    """Builds the APST table the kernel would program for ``spec`` under ``params``.

    ``data_file`` and ``nvme_device`` only shape the ``nvme set-feature`` command returned in
    ``nvme_cli_command``.
    """
    return json.loads(_native.apst(spec, json.dumps(params), data_file, nvme_device))


def run_scenario_file(path: str) -> dict[str, Any]:
    """Runs a scenario file; relative paths inside resolve against its directory."""
    return json.loads(_native.run_scenario_file(path))


def run_scenario_text(text: str, label: str) -> dict[str, Any]:
    """Runs scenario text (``label`` names it in errors)."""
    return json.loads(_native.run_scenario_text(text, label))


def bench(seconds: float) -> dict[str, Any]:
    """Times the engine's hot loops for about ``seconds`` each."""
    return json.loads(_native.bench(seconds))


def apst_defaults() -> dict[str, Any]:
    """The kernel's APST defaults (``params``) and the table builders' names (``algorithms``,
    the default first), as the core defines them."""
    return json.loads(_native.apst_defaults())


def apst_workflow_titles() -> list[str]:
    """One line per workflow of the APST commit message (1-7)."""
    return json.loads(_native.apst_workflow_titles())
