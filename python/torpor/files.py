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
