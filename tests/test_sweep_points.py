"""A property test of a sweep's points: many sweep files drawn by a seeded generator, each read
and checked by the core (``sweeps.load``) and drawn by ``sweeps.points``, every point held to
the rules docs/sweep.md states, worked out here from the file itself, never from the program's
output:

- a grid is every combination of the axes' values, the first axis varying slowest, so its
  count is their product; a ``range = [from, to, step]`` is from, from + step, ... up to
  ``to`` (included when on a step), integers when all three are;
- ``random`` and ``lhs`` draw ``samples`` points; a ``values`` axis takes one of its values, a
  ``low``/``high`` axis a number within them (integers when both bounds are; on a log scale
  with ``log``); ``lhs`` puts one draw in each of ``samples`` strata of an axis' range;
- the same seed gives the same points;
- the bounds are refused before anything runs, at the line that breaks them: at most 100,000
  points, ``samples`` 1 to 100,000, ``low <= high``, ``log`` with ``low > 0``, a range with
  ``step > 0`` and ``from <= to``, at least one value.

The generator is Python's seeded ``random``: hypothesis is not among the test dependencies.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from torpor import InputError
from torpor import sweeps as sw

ROOT = Path(__file__).resolve().parent.parent

#: Scenario fields of the base scenario an axis may vary: (path, integer field, lowest,
#: highest value its check accepts, as far as the generator goes).
FIELDS = (
    ("policy.apst.primary_timeout_ms", True, 0, 10_000),
    ("policy.apst.secondary_timeout_ms", True, 0, 10_000),
    ("policy.apst.primary_latency_tol_us", True, 0, 100_000),
    ("policy.apst.secondary_latency_tol_us", True, 0, 100_000),
    ("platform.nvme.latency_scale", False, 0.125, 64.0),
    ("platform.nvme.transition_power_share", False, 0.0, 1.0),
)

#: How many sweep files the property test draws.
FILES = 60

OBJECTIVE = '[[sweep.objective]]\nminimise = "avg_power_mw"\n'


def _base(folder: Path) -> None:
    base = (ROOT / "scenarios" / "apst-sn530-mixed.toml").read_text()
    (folder / "base.toml").write_text(base)


def _write(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text('[sweep]\nscenario = "base.toml"\n' + body)
    return path


def _dyadic(rng: random.Random, low: float, high: float) -> Fraction:
    """A number in [low, high] with a short binary fraction (exact as a float, so a range's
    steps can be added up by hand without rounding)."""
    return Fraction(rng.randint(math.ceil(low * 8), math.floor(high * 8)), 8)


def _axis(rng: random.Random, field: tuple, mode: str) -> tuple[str, dict[str, Any]]:
    """One [[sweep.axis]] table for ``field`` and what the docs say it holds: ``values`` (the
    list a point takes from) or ``bounds`` (low, high, log, integral)."""
    _, integral, lo, hi = field
    kinds = ["values", "range"] + (["bounds", "log"] if mode != "grid" else [])
    kind = rng.choice(kinds)
    if kind == "values":
        n = rng.randint(1, 5)
        if integral:
            values: list[Any] = [rng.randint(lo, hi) for _ in range(n)]
        else:
            values = [float(_dyadic(rng, lo, hi)) for _ in range(n)]
        text = f"values = [{', '.join(repr(v) for v in values)}]"
        return text, {"values": values}
    if kind == "range":
        if integral:
            start = rng.randint(lo, hi // 2)
            step = rng.randint(1, max(1, (hi - start) // 4))
            stop = rng.randint(start, min(hi, start + 6 * step))
            text = f"range = [{start}, {stop}, {step}]"
            # Independently of the core: Python's own range, which includes `stop` on a step.
            return text, {"values": list(range(start, stop + 1, step)), "type": int}
        start_f = _dyadic(rng, lo, hi / 2)
        step_f = Fraction(rng.randint(1, 16), 8)
        stop_f = _dyadic(rng, float(start_f), min(hi, float(start_f + 6 * step_f)))
        text = f"range = [{float(start_f)!r}, {float(stop_f)!r}, {float(step_f)!r}]"
        count = math.floor((stop_f - start_f) / step_f) + 1  # exact: Fractions
        values = [float(start_f + k * step_f) for k in range(count)]
        return text, {"values": values, "type": float}
    log = kind == "log"
    if integral:
        low = rng.randint(max(lo, 1 if log else lo), hi // 2)
        high = rng.randint(low, hi)
    else:
        # low is never a whole number (k/8 + 1/16), so the points are floats.
        low_f = _dyadic(rng, lo, hi / 2) + Fraction(1, 16)
        high_f = low_f + Fraction(rng.randint(0, math.floor((hi - low_f) * 32)), 32)
        low, high = float(low_f), float(high_f)
    text = f"low = {low!r}\nhigh = {high!r}" + ("\nlog = true" if log else "")
    return text, {"bounds": (low, high, log, integral)}


def _draw_file(rng: random.Random) -> tuple[str, str, int, int, list[tuple[str, dict]]]:
    """A sweep file's body: (body, mode, samples, seed, [(path, expectation)])."""
    mode = rng.choice(["grid", "random", "lhs"])
    fields = rng.sample(FIELDS, rng.randint(1, 3))
    samples = rng.randint(1, 40)
    seed = rng.randint(0, 2**31)
    body = f'mode = "{mode}"\n'
    if mode != "grid":
        body += f"samples = {samples}\nseed = {seed}\n"
    axes = []
    for field in fields:
        text, expect = _axis(rng, field, mode)
        body += f'[[sweep.axis]]\npath = "{field[0]}"\n{text}\n'
        axes.append((field[0], expect))
    return body + OBJECTIVE, mode, samples, seed, axes


def _check_drawn(
    points: list[dict[str, Any]], mode: str, samples: int, axes: list[tuple[str, dict]]
) -> None:
    paths = [p for p, _ in axes]
    assert all(list(point) == paths for point in points)
    if mode == "grid":
        combos = itertools.product(*(e["values"] for _, e in axes))
        assert points == [dict(zip(paths, c, strict=True)) for c in combos]
        assert len(points) == math.prod(len(e["values"]) for _, e in axes)
        # A range gives integers when its three numbers are, floats otherwise.
        for path, expect in axes:
            if "type" in expect:
                assert all(type(p[path]) is expect["type"] for p in points), path
        return
    assert len(points) == samples
    for path, expect in axes:
        got = [p[path] for p in points]
        if "values" in expect:
            assert all(v in expect["values"] for v in got), (path, got)
            continue
        low, high, log, integral = expect["bounds"]
        if integral:
            assert all(type(v) is int and low <= v <= high for v in got), (path, got)
        else:
            # exp(log(...)) may land a rounding error past a bound.
            slack = 1e-12 * high if log else 0.0
            assert all(type(v) is float for v in got), (path, got)
            assert all(low - slack <= v <= high + slack for v in got), (path, got)
        if mode == "lhs":
            _check_strata(got, low, high, log, integral, samples)


def _check_strata(
    got: list[Any], low: float, high: float, log: bool, integral: bool, n: int
) -> None:
    """One draw in each of the n equal strata of [low, high) (of its logarithm with ``log``):
    sorted, the k-th draw lies in stratum k. An integer axis rounds each draw, so its k-th
    lies between the rounded ends of stratum k."""

    def edge(k: int) -> float:
        if log:
            return math.exp(math.log(low) + k / n * (math.log(high) - math.log(low)))
        return low + k / n * (high - low)

    for k, v in enumerate(sorted(got)):
        a, b = edge(k), edge(k + 1)
        if integral:
            assert math.floor(a) - 1 <= v <= math.ceil(b) + 1, (k, v, a, b)
        else:
            tol = 1e-9 * max(1.0, abs(b))
            assert a - tol <= v <= b + tol, (k, v, a, b)


def test_drawn_points_follow_the_sweep_files_rules(tmp_path: Path):
    _base(tmp_path)
    rng = random.Random(20261127)
    modes = []
    for i in range(FILES):
        body, mode, samples, seed, axes = _draw_file(rng)
        path = _write(tmp_path, f"s{i}.toml", body)
        sweep = sw.load(path)
        assert (sweep.mode, sweep.samples, sweep.seed) == (
            mode,
            samples if mode != "grid" else 0,
            seed if mode != "grid" else 1,
        )
        points = sw.points(sweep)
        _check_drawn(points, mode, samples, axes)
        # The same seed gives the same points: drawn again, and from the file read again.
        assert sw.points(sweep) == points
        assert sw.points(sw.load(path)) == points
        modes.append(mode)
    # The generator reached every mode (else the test proved less than it says).
    assert set(modes) == {"grid", "random", "lhs"}


def test_another_seed_draws_other_points(tmp_path: Path):
    _base(tmp_path)
    axis = '[[sweep.axis]]\npath = "platform.nvme.latency_scale"\nlow = 0.5\nhigh = 2.5\n'
    drawn = []
    for seed in (1, 2):
        for mode in ("random", "lhs"):
            body = f'mode = "{mode}"\nsamples = 5\nseed = {seed}\n{axis}{OBJECTIVE}'
            drawn.append(sw.points(sw.load(_write(tmp_path, f"{mode}{seed}.toml", body))))
    # Floats drawn from a continuous interval: two seeds agreeing would be a broken seed.
    assert drawn[0] != drawn[2] and drawn[1] != drawn[3]
    # Without `seed` the draw is seed 1's.
    body = f'mode = "random"\nsamples = 5\n{axis}{OBJECTIVE}'
    assert sw.points(sw.load(_write(tmp_path, "default.toml", body))) == drawn[0]


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.startswith(needle))


TIMEOUT = '[[sweep.axis]]\npath = "policy.apst.primary_timeout_ms"\n'

#: (sweep file body, the start of the line the error must name), each breaking one bound.
REFUSED = (
    (f'mode = "random"\nsamples = 0\n{TIMEOUT}low = 1\nhigh = 9\n', "samples = 0"),
    (f'mode = "lhs"\nsamples = 100001\n{TIMEOUT}low = 1\nhigh = 9\n', "samples = 100001"),
    (f'mode = "random"\n{TIMEOUT}low = 1\nhigh = 9\n', "[sweep]"),
    (f"samples = 4\n{TIMEOUT}values = [1, 2]\n", "samples = 4"),
    (f'mode = "random"\nsamples = 4\nseed = -1\n{TIMEOUT}values = [1]\n', "seed = -1"),
    (f'mode = "random"\nsamples = 4\n{TIMEOUT}low = 9\nhigh = 1\n', "low = 9"),
    (f'mode = "lhs"\nsamples = 4\n{TIMEOUT}low = 0\nhigh = 9\nlog = true\n', "low = 0"),
    (f'mode = "lhs"\nsamples = 4\n{TIMEOUT}low = -2\nhigh = 9\nlog = true\n', "low = -2"),
    (f"{TIMEOUT}low = 1\nhigh = 9\n", "[[sweep.axis]]"),
    (f"{TIMEOUT}values = []\n", "values = []"),
    (f"{TIMEOUT}range = [10, 20, 0]\n", "range = [10, 20, 0]"),
    (f"{TIMEOUT}range = [10, 20, -5]\n", "range = [10, 20, -5]"),
    (f"{TIMEOUT}range = [20, 10, 5]\n", "range = [20, 10, 5]"),
    (f"{TIMEOUT}range = [0, 100000, 1]\n", "range = [0, 100000, 1]"),
    # 401 x 250 = 100,250 points: each axis alone is within the bound, the grid is not.
    (
        f"{TIMEOUT}range = [0, 400, 1]\n"
        '[[sweep.axis]]\npath = "policy.apst.primary_latency_tol_us"\nrange = [1, 250, 1]\n',
        "[[sweep.axis]]",
    ),
)


@pytest.mark.parametrize(("body", "culprit"), REFUSED, ids=[c for _, c in REFUSED])
def test_a_sweep_past_its_bounds_is_refused_at_its_line(tmp_path: Path, body: str, culprit: str):
    _base(tmp_path)
    path = _write(tmp_path, "s.toml", body + OBJECTIVE)
    with pytest.raises(InputError) as e:
        sw.load(path)
    line = _line_of(path.read_text(), culprit)
    assert re.fullmatch(rf"{re.escape(str(path))}:{line}: [^\n]+", str(e.value)), str(e.value)


def test_the_bounds_themselves_are_accepted(tmp_path: Path):
    _base(tmp_path)
    # 100,000 points, the limit: a grid of one axis and a draw of as many samples.
    grid = _write(tmp_path, "grid.toml", f"{TIMEOUT}range = [0, 99999, 1]\n{OBJECTIVE}")
    assert sw.points(sw.load(grid))[-1] == {"policy.apst.primary_timeout_ms": 99999}
    assert len(sw.points(sw.load(grid))) == 100_000
    drawn = _write(
        tmp_path,
        "drawn.toml",
        f'mode = "lhs"\nsamples = 100000\nseed = 0\n{TIMEOUT}low = 5\nhigh = 5\n{OBJECTIVE}',
    )
    # low == high: every draw is that value (and an integer, as both bounds are).
    points = sw.points(sw.load(drawn))
    assert len(points) == 100_000
    assert {p["policy.apst.primary_timeout_ms"] for p in points} == {5}
