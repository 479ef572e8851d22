"""The Python API's arguments, checked before they reach the core.

The CLI only ever hands the core text from files and the command line; Python callers can
hand it anything: a set, bytes, a dict keyed by numbers, -1 where a count goes, None where a
path goes. Each such mistake raises :class:`torpor.InputError` with one line in the CLI's
form, ``WHERE: what was expected``, never a TypeError, OverflowError or RecursionError from
deep inside (issue 22, item 10).
"""

from __future__ import annotations

import datetime
import math
import os
from collections.abc import Mapping
from typing import Any

from torpor import InputError

#: The core's unsigned 64-bit ceiling (counts such as ``max_ios``).
U64_MAX = 2**64 - 1
#: TOML's integers: signed 64-bit.
I64 = (-(2**63), 2**63 - 1)
#: The deepest nesting of tables and arrays a scenario given as a dict may have: far beyond
#: any real scenario (docs/scenario.md nests four deep), far below Python's recursion limit.
MAX_DEPTH = 64
#: How much of a wrong value an error line shows.
SHOWN_CHARS = 60


def shown(value: Any) -> str:
    """``value`` as an error line shows it: its repr, cut short, and its type."""
    text = repr(value)
    if len(text) > SHOWN_CHARS:
        text = text[: SHOWN_CHARS - 3] + "..."
    return f"{text} ({type(value).__name__})"


def path(name: str, value: Any, what: str) -> str | os.PathLike[str]:
    """A path argument: a ``str`` or an ``os.PathLike`` of text."""
    if isinstance(value, str) or (
        isinstance(value, os.PathLike) and isinstance(os.fspath(value), str)
    ):
        return value
    raise InputError(f"{name}: expected {what} (a str or a pathlib.Path), got {shown(value)}")


def text(name: str, value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    raise InputError(f"{name}: expected {what} (a str), got {shown(value)}")


def integer(name: str, value: Any, least: int, most: int) -> int:
    """A whole number from ``least`` to ``most``, worded as the CLI words its ranges."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{name}: expected an integer, got {shown(value)}")
    if value < least:
        raise InputError(f"{name}: {value} is below {least}")
    if value > most:
        raise InputError(f"{name}: {value} is above the largest value, {most}")
    return value


def choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """One of ``choices``, refused as the CLI refuses a value not in its list."""
    if isinstance(value, str) and value in choices:
        return value
    listed = ", ".join(repr(c) for c in choices)
    raise InputError(f"{name}: {shown(value)} is not one of {listed}")


def progress(value: Any) -> Any:
    """A progress callback, or None."""
    if value is None or callable(value):
        return value
    raise InputError(
        "progress: expected a function progress(variant, variants, name, now_s, until_s) or "
        f"None, got {shown(value)}"
    )


def scenario_source(scenario: Any) -> tuple[Any, bool, str]:
    """What :func:`torpor.run` was given as a scenario, checked: ``(source, is_text, label)``
    with a dict as TOML text (``<dict>`` in errors), TOML text as itself (``<text>``), else a
    path."""
    if isinstance(scenario, Mapping):
        import tomli_w

        toml_tree("<dict>", scenario)
        return tomli_w.dumps(dict(scenario)), True, "<dict>"
    if isinstance(scenario, str):
        return scenario, _is_text(scenario), "<text>" if _is_text(scenario) else ""
    if isinstance(scenario, os.PathLike) and isinstance(os.fspath(scenario), str):
        return scenario, False, ""
    hint = " (decode it first: data.decode())" if isinstance(scenario, bytes | bytearray) else ""
    raise InputError(
        "scenario: expected a path to a TOML file, TOML text or a dict of the same tables, "
        f"got {shown(scenario)}{hint}"
    )


def _is_text(scenario: str) -> bool:
    """TOML text rather than a path: several lines, or a table header or `key = value` in a
    string that names no file (pass a ``Path`` for a file name with a newline)."""
    from pathlib import Path

    if "\n" in scenario:
        return True
    if not ("=" in scenario or scenario.lstrip().startswith("[")):
        return False
    try:
        return not Path(scenario).exists()
    except (OSError, ValueError):  # too long for a file name, or a NUL byte in it
        return True


#: The Python values that have a TOML form, beside tables and arrays.
_SCALARS = (str, bool, int, float, datetime.datetime, datetime.date, datetime.time)


def toml_tree(label: str, tree: Mapping[Any, Any]) -> None:
    """Checks that ``tree`` (a scenario, overrides, parameters) has a TOML form: string keys,
    values that are strings, numbers that fit TOML, booleans, dates and times, lists and
    tables, at most :data:`MAX_DEPTH` deep. Walked without recursion, so that no nesting
    reaches Python's recursion limit."""
    stack: list[tuple[str, Any, int]] = [("", tree, 0)]
    while stack:
        where, value, depth = stack.pop()
        at = f"{label}: `{where}`" if where else label
        if depth > MAX_DEPTH:
            raise InputError(f"{at}: nested more than {MAX_DEPTH} tables or arrays deep")
        if isinstance(value, Mapping):
            for key, item in reversed(list(value.items())):
                if not isinstance(key, str):
                    raise InputError(f"{at}: a key must be a string, got {shown(key)}")
                stack.append((f"{where}.{key}" if where else key, item, depth + 1))
        elif isinstance(value, list | tuple):
            for i, item in reversed(list(enumerate(value))):
                stack.append((f"{where}[{i}]", item, depth + 1))
        elif isinstance(value, int) and not isinstance(value, bool):
            if not I64[0] <= value <= I64[1]:
                raise InputError(f"{at}: {value} does not fit a TOML integer (-2^63 to 2^63 - 1)")
        elif not isinstance(value, _SCALARS):
            hint = " (give a list)" if isinstance(value, set | frozenset) else ""
            raise InputError(f"{at}: {shown(value)} has no TOML form{hint}")


def fields(label: str, values: Mapping[str, Any]) -> None:
    """Checks dotted-path overrides (or parameters), which reach the core as JSON, as
    :func:`toml_tree` checks a scenario; a float must be finite too (JSON has no NaN), and a
    date or time is given as text."""
    toml_tree(label, values)
    stack: list[tuple[str, Any]] = list(values.items())
    while stack:
        where, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{label}: `{where}`: {value} is not a finite number")
        if isinstance(value, Mapping):
            stack += [(f"{where}.{k}", v) for k, v in value.items()]
        elif isinstance(value, list | tuple):
            stack += [(f"{where}[{i}]", v) for i, v in enumerate(value)]
        elif isinstance(value, datetime.date | datetime.time):
            raise InputError(f"{label}: `{where}`: {shown(value)}: give a date or time as text")
