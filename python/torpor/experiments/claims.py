"""Claims of a seed document and their verdicts, the same shape for every experiment."""

from __future__ import annotations

from typing import Any


def claim(
    seed: str, claim: str, seed_value: str, torpor_value: str, ok: bool | None
) -> dict[str, Any]:
    """One claim and its verdict: True holds, False fails, None not checkable (``torpor_value``
    then says why)."""
    return {
        "seed": seed,
        "claim": claim,
        "seed_value": seed_value,
        "torpor_value": torpor_value,
        "ok": None if ok is None else bool(ok),
    }


def verdict_counts(claims: list[dict[str, Any]]) -> dict[str, int]:
    return {
        "hold": sum(c["ok"] is True for c in claims),
        "fail": sum(c["ok"] is False for c in claims),
        "not checkable": sum(c["ok"] is None for c in claims),
    }


def verdict_text(claims: list[dict[str, Any]]) -> str:
    """E.g. "10 hold, 4 fail, 1 not checkable" (of all claims)."""
    n = verdict_counts(claims)
    return f"{n['hold']} hold, {n['fail']} fail, {n['not checkable']} not checkable"
