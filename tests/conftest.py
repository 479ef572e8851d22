"""Shared helpers: run the real `torpor` CLI in-process and capture what a user would see."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from torpor.cli import main


@pytest.fixture
def cli():
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(main, list(args), catch_exceptions=False)

    return invoke


def reproduce_into(out, area: str, *extra: str):
    """Runs `torpor reproduce AREA --out OUT [extra...]` in-process and checks it succeeded."""
    got = CliRunner().invoke(main, ["reproduce", area, "--out", str(out), *extra])
    assert got.exit_code == 0, got.output
    return got
