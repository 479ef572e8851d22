"""The Pixel 6a app block traces (acsl-technion/MobileBlockIOTraces) that devfreq and hpb
replay: they carry no licence, so torpor never ships them; `--traces DIR` points at a copy."""

from __future__ import annotations

from pathlib import Path

TRACES = ("pubg_exec.csv.gz", "genshin_impact_exec.csv.gz", "telegram_precond.csv.gz")


def why_not_run(traces: Path | None) -> str | None:
    """Why the traces cannot be replayed from `traces`, or None when all are there."""
    if traces is None:
        return (
            "not run: the Pixel 6a app traces (acsl-technion/MobileBlockIOTraces) carry no "
            "licence, so torpor does not ship them; pass `--traces DIR` with a copy"
        )
    missing = [t for t in TRACES if not (traces / t).is_file()]
    return f"not run: {traces} lacks {', '.join(missing)}" if missing else None


def stem(name: str) -> str:
    """A trace's name without its extensions (``pubg_exec``)."""
    return name.split(".")[0]
