"""Files the CLI writes, and file names as they are shown.

A file name may hold bytes that are not UTF-8 (Python carries them as lone surrogates); it is
shown with those bytes escaped, so that printing it never fails. A write that fails part-way
(a full disk) names the file, as a failed open already does.
"""

from __future__ import annotations

import os
from pathlib import Path


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` printable: bytes that are not UTF-8 become ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


#: The largest text file the Python side reads whole (sweep files and the scenarios they
#: name), as the core bounds its own inputs.
MAX_TEXT_BYTES = 4 << 20


def read_text(path: Path, what: str) -> str:
    """``path`` as UTF-8 text, refusing more than :data:`MAX_TEXT_BYTES` (``/dev/zero``),
    directories and unreadable files with one ``InputError`` line naming the file."""
    from torpor import InputError

    label = shown_path(path)
    if path.is_dir():
        raise InputError(f"{label}: is a directory; expected {what}")
    try:
        with path.open("rb") as f:
            data = f.read(MAX_TEXT_BYTES + 1)
    except OSError as e:
        raise InputError(f"{label}: cannot read {what}: {e.strerror}") from None
    if len(data) > MAX_TEXT_BYTES:
        raise InputError(f"{label}: larger than {MAX_TEXT_BYTES >> 20} MiB, the limit for {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(f"{label}:{line}: expected UTF-8 text") from None


def output_dir(path: str, option: str) -> Path:
    """The directory an option names for output, created if missing; a file there, or a
    directory that cannot be made, is one error line naming it."""
    from torpor import InputError

    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InputError(f"{shown_path(path)}: is a file; {option} expects a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OSError(e.errno, e.strerror, path) from e
    return out


def write_file(path: Path, data: str | bytes) -> None:
    """Writes ``data`` to ``path``; any OS error names the file."""
    try:
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)
    except OSError as e:
        if e.filename is None:
            raise OSError(e.errno, e.strerror, str(path)) from e
        raise
