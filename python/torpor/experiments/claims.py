"""Claims of a seed document and their verdicts, the same shape for every experiment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torpor import native


def claim(
    seed: str,
    claim: str,
    seed_value: str,
    torpor_value: str,
    ok: bool | None,
    fitted_to: str | None = None,
) -> dict[str, Any]:
    """One claim and its verdict: True holds, False fails, None not checkable (``torpor_value``
    then says why). ``fitted_to`` names the seed's own figure a model number read by the rule
    was fitted to (the verdict is then partly a calibration check, not a prediction); None
    when nothing the rule reads was fitted to this seed."""
    return {
        "seed": seed,
        "claim": claim,
        "seed_value": seed_value,
        "torpor_value": torpor_value,
        "ok": None if ok is None else bool(ok),
        "fitted": fitted_to is not None,
        "fitted_to": fitted_to,
    }


def verdict_counts(claims: list[dict[str, Any]]) -> dict[str, int]:
    return native.verdict_counts(claims)


def verdict_text(claims: list[dict[str, Any]]) -> str:
    """E.g. "10 hold, 4 fail, 1 not checkable" (of all claims)."""
    n = verdict_counts(claims)
    return f"{n['hold']} hold, {n['fail']} fail, {n['not checkable']} not checkable"


def robustness(
    central: list[dict[str, Any]],
    ends: Mapping[str, Sequence[dict[str, Any] | None]],
    basis: str,
) -> list[dict[str, Any]]:
    """Each claim with ``robust`` (True: holds at the central values and at every end it was
    evaluated at; False: fails at one of them; None: not checkable), ``hinges_on`` (the ends
    at which the verdict differs from the central one; None when none does) and
    ``robust_basis`` (``basis``: what the ends are). ``ends`` maps each end to the claims
    evaluated there, in the central list's order; None where that end cannot evaluate a claim
    (its runs do not cover what the claim reads)."""
    out = []
    for i, c in enumerate(central):
        if c["ok"] is None:
            out.append(c | {"robust": None, "hinges_on": None, "robust_basis": basis})
            continue
        verdicts = {end: at["ok"] for end, e in ends.items() if (at := e[i]) is not None}
        robust = c["ok"] is True and all(v is True for v in verdicts.values())
        flips = [
            f"{'holds' if v else 'fails'} with {end}" for end, v in verdicts.items() if v != c["ok"]
        ]
        hinge = f"{'holds' if c['ok'] else 'fails'} at the central values; " + "; ".join(flips)
        out.append(
            c | {"robust": robust, "hinges_on": hinge if flips else None, "robust_basis": basis}
        )
    return out


def not_assessed(claims: list[dict[str, Any]], reason: str) -> list[dict[str, Any]]:
    """The claims of an experiment that runs no alternative assumptions: ``robust`` and
    ``hinges_on`` None, ``robust_basis`` saying why."""
    return [c | {"robust": None, "hinges_on": None, "robust_basis": reason} for c in claims]
