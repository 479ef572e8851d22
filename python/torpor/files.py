"""Files the CLI writes, and file names as they are shown.

A file name may hold bytes that are not UTF-8 (Python carries them as lone surrogates); it is
shown with those bytes escaped, so that printing it never fails. A write that fails part-way
(a full disk) names the file, as a failed open already does, and leaves the old file whole.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from torpor.printable import printable


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` printable: bytes that are not UTF-8 become ``\\xNN``, control characters
    ``\\n`` or ``\\u{1b}`` (:func:`torpor.printable.printable`)."""
    return printable(os.fsencode(path).decode("utf-8", "backslashreplace"))


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
    """Writes ``data`` to ``path`` whole or not at all; any OS error names the file."""
    write_files([(path, data)])


def write_files(files: list[tuple[Path, str | bytes]]) -> None:
    """Writes each ``(path, data)`` whole or not at all: to a temporary file beside it
    (``.NAME.PID.tmp``), and only once every one is written, renames each over its target. A
    failure, Ctrl-C or a kill leaves the old files as they were, never one cut short nor a new
    page beside an old ``results.json``. A target that is not a regular file (``/dev/full``, a
    FIFO) is written in place, as renaming over it would replace the device."""
    staged: list[tuple[Path, Path]] = []
    try:
        for path, data in files:
            raw = data.encode("utf-8") if isinstance(data, str) else data
            target = _target(path)
            try:
                if target is None:
                    path.write_bytes(raw)
                    continue
                temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
                staged.append((temp, target))
                _write_synced(temp, raw, target)
            except OSError as e:
                raise _naming(e, path) from e
        for temp, target in staged:
            try:
                os.replace(temp, target)
            except OSError as e:
                raise _naming(e, target) from e
    finally:
        for temp, _ in staged:
            temp.unlink(missing_ok=True)


def _target(path: Path) -> Path | None:
    """The file a write to ``path`` replaces (through a symlink, the file it names), or None
    to write in place."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return path
    except OSError:
        return path  # the write names the error
    return Path(os.path.realpath(path)) if stat.S_ISREG(st.st_mode) else None


def _write_synced(temp: Path, data: bytes, target: Path) -> None:
    """``data`` into ``temp``, on disk, with ``target``'s permissions if it exists."""
    with temp.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    with contextlib.suppress(FileNotFoundError):
        os.chmod(temp, stat.S_IMODE(target.stat().st_mode))


def _naming(e: OSError, path: Path) -> OSError:
    """``e`` naming ``path`` (not a temporary file)."""
    return OSError(e.errno, e.strerror, str(path))
