"""Reading and writing files that someone else may have prepared: game folders and run directories.

A game folder or a run directory may come from anyone (a ``git clone``, a tarball, a colleague's
results), so every file the package reads from one is treated as hostile input:

* **regular files only.** An entry is opened with ``O_NOFOLLOW`` (and ``O_NONBLOCK``, so a planted
  FIFO cannot hang the reader) and checked with ``fstat`` on the open descriptor: a directory, a
  symbolic link, a device, a FIFO or a socket is refused with one line naming the entry, never
  followed. The check and the read use the same descriptor, so the bytes read are the bytes checked;
* **bounded and read once.** A file larger than its bound is refused before it is read whole, and
  callers get the bytes (to hash and then use exactly those bytes: no read-check-read race);
* **bounded nesting.** JSON nested deeper than a bound is refused before :func:`json.loads` sees it,
  so a 200,000-deep array is one line of error, not a ``RecursionError``.

Writes into a folder someone else prepared go through :func:`write_atomic`: a temporary file made
with ``mkstemp`` (``O_CREAT | O_EXCL``: never an existing path, never through a link) in the target's
own folder, then ``os.replace``; a target, or a folder on the way to it, that is a symbolic link is
refused rather than followed.

:func:`printable` is for the terminal: text that came from a run directory, a game folder or a model
reply has its control characters escaped before it is printed, so it cannot move the cursor, clear
the screen, retitle the terminal or forge a line.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_JSON_DEPTH",
    "UnsafeFile",
    "check_depth",
    "entry_kind",
    "parse_json",
    "printable",
    "read_json",
    "read_regular",
    "write_atomic",
]

#: Nesting bound of JSON read from game folders and run directories (the package writes at most ~10).
MAX_JSON_DEPTH = 100


class UnsafeFile(ValueError):
    """A file that may not be read or written as asked; the message is one line that names it."""


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "regular file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISLNK(mode):
        return "symbolic link"
    if stat.S_ISFIFO(mode):
        return "named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


def entry_kind(path: str | Path) -> str | None:
    """What ``path`` is, without following a link: ``"regular file"``, ``"directory"``,
    ``"symbolic link"``, ... or None when nothing is there."""
    try:
        return _kind(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None


def _refuse(path: str | Path, kind: str) -> UnsafeFile:
    return UnsafeFile(f"{path} is a {kind}, not a regular file: refused (only regular files are read)")


def read_regular(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``, read once through one descriptor; refuses anything else.

    Raises :class:`FileNotFoundError` when nothing is there, :class:`UnsafeFile` for an entry that is
    not a regular file or is larger than ``max_bytes``, :class:`OSError` for other failures.
    """
    kind = entry_kind(path)
    if kind is None:
        raise FileNotFoundError(errno.ENOENT, "no such file", str(path))
    if kind != "regular file":  # refused before it is opened: opening a device or a FIFO can have effects
        raise _refuse(path, kind)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # swapped for a link since the lstat
            raise _refuse(path, "symbolic link") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped since the lstat: the descriptor is what counts
            raise _refuse(path, _kind(st.st_mode))
        if st.st_size > max_bytes:
            raise UnsafeFile(f"{path} is {st.st_size:,} bytes, more than the {max_bytes:,} allowed: refused")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:  # it grew while being read
                raise UnsafeFile(f"{path} is more than the {max_bytes:,} bytes allowed: refused")
        return b"".join(chunks)
    finally:
        os.close(fd)


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_DEPTH_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_NOT_BRACKETS = bytes(c for c in range(256) if c not in _DEPTH_STEP)


def check_depth(data: bytes, max_depth: int = MAX_JSON_DEPTH) -> int | None:
    """The nesting depth of the JSON text ``data`` when it exceeds ``max_depth``, else None.

    Cheap for ordinary files: a text with fewer brackets than the bound cannot be deeper, and is not
    scanned; otherwise strings are cut out (brackets inside them do not nest) and the rest is counted.
    """
    if data.count(b"[") + data.count(b"{") <= max_depth:
        return None
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for step in map(_DEPTH_STEP.__getitem__, brackets):
        depth += step
        if depth > deepest:
            deepest = depth
            if deepest > max_depth:
                return deepest
    return None


def parse_json(data: bytes, where: str | Path, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` of ``data`` (read from ``where``), with a depth bound; errors are one line naming it."""
    if check_depth(data, max_depth) is not None:
        raise UnsafeFile(f"{where}: JSON nested deeper than {max_depth} levels: refused")
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise UnsafeFile(f"{where}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # ValueError: e.g. a 5,000-digit number
        raise UnsafeFile(f"{where}: invalid JSON: {str(exc).splitlines()[0][:200]}") from None


def read_json(path: str | Path, max_bytes: int, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """A JSON file from a folder someone else prepared: :func:`read_regular` then :func:`parse_json`."""
    return parse_json(read_regular(path, max_bytes), path, max_depth)


def _check_folder(folder: Path, root: Path) -> None:
    """Refuse ``folder`` if it, or a folder between ``root`` and it, is a link or not a folder; make the
    missing ones (``root`` itself is the caller's choice and may be anything that leads to a folder)."""
    try:
        rel = folder.relative_to(root)
    except ValueError:
        raise UnsafeFile(f"{folder} is not inside {root}: refused") from None
    os.makedirs(root, exist_ok=True)  # the caller's own choice of folder
    here = root
    for part in rel.parts:
        here = here / part
        kind = entry_kind(here)
        if kind is None:
            os.mkdir(here)
        elif kind != "directory":
            raise UnsafeFile(f"{here} is a {kind}, not a folder: refused (writes never follow links)")


def write_atomic(path: str | Path, data: bytes | str, *, root: str | Path | None = None) -> Path:
    """Write ``data`` to ``path`` so that no reader sees half a file and nothing outside is touched.

    ``root``: the folder the caller chose (default: ``path``'s folder); every folder between it and
    ``path`` must be a real folder (missing ones are made), and ``path`` itself, when it exists, a
    regular file: a symbolic link planted there is refused, never written through.
    """
    path = Path(path)
    folder = path.parent
    _check_folder(folder, Path(root) if root is not None else folder)
    kind = entry_kind(path)
    if kind is not None and kind != "regular file":
        raise UnsafeFile(f"{path} is a {kind}, not a regular file: refused (writes never follow links)")
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


# ---------------------------------------------------------------------------- the terminal
#: C0 and C1 controls, DEL, and the invisible format characters that reorder or hide text (bidi
#: overrides and isolates, zero-width characters, the BOM, interlinear annotations, tag characters).
_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: Any) -> str:
    """``str(text)`` with every control and invisible format character escaped (``\\x1b``, ``\\u202e``),
    newlines and tabs included: safe to print on a terminal, and always one line."""
    return _CONTROL.sub(_escape, str(text))
