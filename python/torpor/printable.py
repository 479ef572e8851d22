"""Strings from the user's files, made safe to print on a terminal.

Variant, job and task names, idle-state names from a trace, file names: any of them may hold
control characters, and a terminal acts on them (ESC[2J clears the screen, OSC 52 writes the
clipboard). Every such string is printed with its control characters escaped, as the core's
error lines and ``torpor probe`` print them (``error::shown``): ``\\n``, ``\\t``, ``\\r``, else
``\\u{1b}``, so the text stays on one line and reads as written.
"""

from __future__ import annotations

import unicodedata

# `idle stats`'s fast path imports this module: no `typing` at run time (entry.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

#: The escapes Rust's ``char::escape_default`` gives for the common controls.
_SHORT = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escaped(c: str) -> str:
    if unicodedata.category(c) != "Cc":
        return c
    return _SHORT.get(c) or f"\\u{{{ord(c):x}}}"


def printable(text: str) -> str:
    """``text`` with its control characters (C0, DEL and C1) escaped."""
    if text.isprintable():
        return text
    return "".join(_escaped(c) for c in text)


def printable_lines(text: str) -> str:
    """Text torpor laid out itself (lines, tab-indented fields) with any other control
    character escaped: for multi-line output that quotes the user's strings."""
    return "\n".join(
        "\t".join(printable(part) for part in line.split("\t")) for line in text.split("\n")
    )


def printable_tree(value: T) -> T:
    """A copy of a report (dicts, lists, strings, numbers) with every string, keys included,
    made :func:`printable`."""
    if isinstance(value, str):
        return printable(value)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {printable_tree(k): printable_tree(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [printable_tree(v) for v in value]  # type: ignore[return-value]
    return value
