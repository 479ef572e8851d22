"""The experiments' scenario files: each is written into the report's `inputs` folder, where
the user can re-run it by hand, and run from there (relative paths in it resolve there)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomli_w

from torpor import native


def run_kept(work: Path, name: str, scenario: dict[str, Any]) -> dict[str, Any]:
    """Writes `scenario` as ``work/name`` and returns the report of running it."""
    work.mkdir(parents=True, exist_ok=True)
    path = work / name
    path.write_text(tomli_w.dumps(scenario))
    return native.run_scenario_file(str(path))
