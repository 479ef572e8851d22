"""Real device dumps collected by public projects, read from ../shared/real-data where it
exists (CI has it; a user's clone does not, and these files are not ours to copy into the
repo). Each must parse with the number of power states its source table lists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from torpor import native

PYSMART = Path(__file__).resolve().parents[2] / "shared" / "real-data" / "nvme" / "pysmart"


def listed_state_counts() -> dict[str, int]:
    """The `N PS` column of the collection's README, by file name."""
    counts = {}
    for line in (PYSMART / "README.source.md").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 4 and (m := re.search(r"(\d+) PS", cells[3])):
            counts[f"{cells[1]}.smartctl.txt"] = int(m.group(1))
    return counts


@pytest.mark.skipif(
    not PYSMART.is_dir(), reason=f"{PYSMART} is absent (real data lives beside the repo)"
)
def test_every_pysmart_smartctl_dump_parses_with_its_listed_states() -> None:
    counts = listed_state_counts()
    files = sorted(PYSMART.glob("*.smartctl.txt"))
    assert len(files) == len(counts) == 14
    for f in files:
        drive = native.load_device(f)
        assert drive["format"] == "smartctl -a"
        assert len(drive["controller"]["power_states"]) == counts[f.name], f.name
    # The Windows capture with localized digit grouping: its stray bytes are noted, not fatal.
    kingston = native.load_device(PYSMART / "kingston-a2000-sa2000m8500g.smartctl.txt")
    assert any("not UTF-8 were read as U+FFFD" in n for n in kingston["notes"])
