"""The reference release as a read-only bag of files: a wheel, an sdist or an unpacked folder.

Nothing from the release is ever imported or executed: files are read as bytes (JSON as JSON, Python as
text for :mod:`ast`), each at most :data:`MAX_MEMBER_BYTES`, and only those under the release's
``games/`` and ``assets/`` folders. The release's identity for provenance is the SHA-256 of the archive
(or, for a folder, of the files read from it), so a run can say exactly which bytes its game came from.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from odyssey_agents.errors import OdysseyError

__all__ = [
    "NAME",
    "VERSION",
    "WHEEL_NAME",
    "WHEEL_SHA256",
    "Release",
    "ReleaseError",
    "cached_wheel",
    "download",
    "open_release",
]

NAME, VERSION = "agentodyssey", "0.1.0"
WHEEL_NAME = f"{NAME}-{VERSION}-py3-none-any.whl"
#: SHA-256 of the wheel PyPI serves for agentodyssey 0.1.0 (benchmarks/reference.py checks the same).
WHEEL_SHA256 = "d849dd9d6ae48590aab76cad04ea7d2f65c52d96541c48a605a31e5c20b1ab94"
MAX_MEMBER_BYTES = 8 << 20
_MARKER = "games/base/rules/step_rules/main_quest.py"


class ReleaseError(OdysseyError):
    """The release cannot be read (missing, not an archive, no ``games/base``); the message says why."""


def cache_dir() -> Path:
    """Where the downloaded wheel is kept: benchmarks/reference.py's cache, so both share one download."""
    explicit = os.environ.get("ODYSSEY_REFERENCE_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "odyssey" / "reference"


def cached_wheel() -> Path | None:
    """``ODYSSEY_REFERENCE_WHEEL`` if set, else the cached download, else None."""
    given = os.environ.get("ODYSSEY_REFERENCE_WHEEL")
    if given:
        return Path(given).expanduser()
    path = cache_dir() / WHEEL_NAME
    return path if path.is_file() else None


def download() -> Path:
    """``pip download --no-deps agentodyssey==0.1.0`` into the cache (once); refused if its SHA-256 is not PyPI's."""
    cache = cache_dir()
    target = cache / WHEEL_NAME
    if not target.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp, f"{NAME}=={VERSION}"]
            done = subprocess.run(command, capture_output=True, text=True)
            got = Path(tmp) / WHEEL_NAME
            if done.returncode != 0 or not got.is_file():
                said = (done.stderr.strip().splitlines() or ["no output"])[-1]
                raise ReleaseError(
                    f"cannot download {NAME}=={VERSION} ({said}); pass --from PATH to a wheel, sdist or checkout"
                )
            os.replace(got, target)
    digest = _sha256_file(target)
    if digest != WHEEL_SHA256:
        raise ReleaseError(f"{target} has SHA-256 {digest}, not PyPI's {WHEEL_SHA256}; delete it and retry")
    return target


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class Release:
    """The files of one release under its root (``games/...``, ``assets/...``), read lazily and never run."""

    source: str  # what the user gave (a path), for messages and provenance
    kind: str  # "wheel", "sdist" or "folder"
    sha256: str  # of the archive; of the files read, for a folder
    version: str
    _files: dict[str, Any] = field(default_factory=dict, repr=False)  # member path -> loader
    _read: dict[str, bytes] = field(default_factory=dict, repr=False)

    def has(self, path: str) -> bool:
        return path in self._files

    def names(self, prefix: str = "") -> list[str]:
        return sorted(p for p in self._files if p.startswith(prefix))

    def read(self, path: str) -> bytes:
        if path not in self._files:
            raise ReleaseError(f"{self.source}: no file {path}")
        if path not in self._read:
            data = self._files[path]()
            if len(data) > MAX_MEMBER_BYTES:
                raise ReleaseError(f"{self.source}: {path} is {len(data):,} bytes (at most {MAX_MEMBER_BYTES:,})")
            self._read[path] = data
        return self._read[path]

    def text(self, path: str) -> str:
        try:
            return self.read(path).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ReleaseError(f"{self.source}: {path} is not UTF-8 text ({exc})") from None

    def json(self, path: str) -> Any:
        try:
            return json.loads(self.text(path))
        except json.JSONDecodeError as exc:
            raise ReleaseError(f"{self.source}: {path} line {exc.lineno}: invalid JSON ({exc.msg})") from None

    def folder_digest(self) -> str:
        """SHA-256 over the files read so far (path and bytes, sorted): a folder's identity."""
        h = hashlib.sha256()
        for path in sorted(self._read):
            h.update(path.encode() + b"\0" + hashlib.sha256(self._read[path]).digest())
        return h.hexdigest()


def _root_of(paths: list[str]) -> str | None:
    """The prefix under which the release's ``games/`` lives: ``""`` in a wheel, ``agentodyssey-0.1.0/`` in an sdist."""
    hits = sorted((p[: -len(_MARKER)] for p in paths if p.endswith(_MARKER)), key=len)
    return hits[0] if hits else None


def _wanted(rel: str) -> bool:
    return rel.startswith(("games/", "assets/")) and rel.endswith((".py", ".json"))


def open_release(source: str | Path) -> Release:
    """Open a wheel (``.whl``), an sdist (``.tar.gz``) or a folder holding the release's ``games/`` tree."""
    path = Path(source).expanduser()
    if not path.exists():
        raise ReleaseError(f"{path}: no such file or folder")
    if path.is_dir():
        return _open_folder(path)
    name = path.name
    if name.endswith(".whl") or zipfile.is_zipfile(path):
        return _open_zip(path)
    if name.endswith((".tar.gz", ".tgz", ".tar")):
        return _open_tar(path)
    raise ReleaseError(f"{path}: not a wheel, an sdist or a folder")


def _version_from(paths: list[str], default: str) -> str:
    for p in paths:
        head = p.split("/", 1)[0]
        if head.startswith(f"{NAME}-") and head.endswith((".dist-info", ".egg-info")):
            return head[len(NAME) + 1 :].rsplit(".", 1)[0]
        if head.startswith(f"{NAME}-") and "/" in p:
            return head[len(NAME) + 1 :]
    return default


def _open_zip(path: Path) -> Release:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise ReleaseError(f"{path}: not a readable wheel ({exc})") from None
    members = [m for m in archive.infolist() if not m.is_dir()]
    root = _root_of([m.filename for m in members])
    if root is None:
        raise ReleaseError(f"{path}: no {_MARKER} inside; is this the agentodyssey release?")
    release = Release(str(path), "wheel", _sha256_file(path), _version_from([m.filename for m in members], "unknown"))
    for m in members:
        rel = m.filename[len(root) :] if m.filename.startswith(root) else None
        if rel and _wanted(rel):
            if m.file_size > MAX_MEMBER_BYTES:
                raise ReleaseError(f"{path}: {m.filename} is {m.file_size:,} bytes (at most {MAX_MEMBER_BYTES:,})")
            release._files[rel] = lambda m=m: archive.read(m)
    return release


def _open_tar(path: Path) -> Release:
    try:
        archive = tarfile.open(path)  # noqa: SIM115 - kept open: members are read lazily
    except tarfile.TarError as exc:
        raise ReleaseError(f"{path}: not a readable sdist ({exc})") from None
    members = [m for m in archive.getmembers() if m.isfile()]
    root = _root_of([m.name for m in members])
    if root is None:
        raise ReleaseError(f"{path}: no {_MARKER} inside; is this the agentodyssey release?")
    release = Release(str(path), "sdist", _sha256_file(path), _version_from([m.name for m in members], "unknown"))
    for m in members:
        rel = m.name[len(root) :] if m.name.startswith(root) else None
        if rel and _wanted(rel):
            if m.size > MAX_MEMBER_BYTES:
                raise ReleaseError(f"{path}: {m.name} is {m.size:,} bytes (at most {MAX_MEMBER_BYTES:,})")

            def load(m: tarfile.TarInfo = m) -> bytes:
                handle = archive.extractfile(m)
                return handle.read() if handle is not None else b""

            release._files[rel] = load
    return release


def _open_folder(path: Path) -> Release:
    found: list[str] = []
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            found.append(os.path.relpath(os.path.join(dirpath, f), path).replace(os.sep, "/"))
    root = _root_of(found)
    if root is None:
        raise ReleaseError(f"{path}: no {_MARKER} inside; is this an agentodyssey checkout?")
    release = Release(str(path), "folder", "", _version_from(found, "unknown"))
    for rel_full in found:
        rel = rel_full[len(root) :]
        if _wanted(rel):
            full = path / rel_full
            if full.is_symlink():
                continue  # a link could point outside the release
            release._files[rel] = lambda full=full: full.read_bytes()
    return release
