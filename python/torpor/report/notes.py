"""What a run assumed, estimated or left out, as the CLI prints it (``torpor: note: ...``) and
the run's page lists it: every component's notes, once each, in the order they came."""

from __future__ import annotations

from typing import Any

from torpor.report import apst_text


def run_notes(report: dict[str, Any]) -> list[str]:
    """The notes of every variant of a ``torpor run`` report, without repeats."""
    variants = report["variants"]
    notes = [n for v in variants for n in v.get("nvme", {}).get("notes", [])]
    notes += [n for v in variants for n in v.get("cpu", {}).get("notes", [])]
    notes += [n for v in variants for n in v.get("ufs", {}).get("notes", [])]
    notes += [n for v in variants if "nvme" in v for n in apst_text.replay_notes(v)]
    notes += [n for v in variants for n in v["io"].get("notes", [])]
    return list(dict.fromkeys(notes))
