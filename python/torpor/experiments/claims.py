"""A list of claims' verdicts, counted by the core and put in words (the claims themselves and
their rules are the core's: ``torpor_core::experiments``)."""

from __future__ import annotations

from typing import Any

from torpor import native


def verdict_counts(claims: list[dict[str, Any]]) -> dict[str, int]:
    return native.verdict_counts(claims)


def verdict_text(claims: list[dict[str, Any]]) -> str:
    """E.g. "10 hold, 4 fail, 1 not checkable" (of all claims)."""
    n = verdict_counts(claims)
    return f"{n['hold']} hold, {n['fail']} fail, {n['not checkable']} not checkable"
