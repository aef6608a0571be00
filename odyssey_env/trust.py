"""Which game folders may run their ``rules.py``.

A game folder is data (``world.json``, ``quest.json``) plus, optionally, ``rules.py``, which is Python
code: loading the game imports it. Data is always safe to load; code runs only when the user has said
they trust it. The model, in the spirit of ``direnv allow``:

* Shipped games (``odyssey_env/games/``) come with the package and are trusted.
* A folder *has code* (:func:`code_entries`) when it holds any top-level entry named ``rules.py``,
  ``__pycache__``, or ending in ``.py``, ``.pyc``, ``.pyo``, ``.so`` or ``.pyd``, whatever kind of
  entry it is. A folder without code is data only: nothing to trust. The only code a game folder may
  hold is one regular file, ``rules.py``; any other code entry, and a ``rules.py`` that is a
  directory, a link, a device or a FIFO, is refused with one line naming it (:func:`read_code`), by
  the loader and by ``odyssey trust`` alike. The loader compiles exactly the bytes :func:`read_code`
  returned, whose digest it checked: never a ``.pyc``, never through the import system.
* Any other folder's ``rules.py`` runs only when the caller passes ``trust=True`` for this load
  (``load_game(path, trust=True)``, ``register_game(path, trust=True)``, ``game.trust=true`` in
  ``odyssey run``, ``--trust`` in ``odyssey play``), or when the user has recorded the folder in
  their trust store with ``odyssey trust PATH``. The store keeps the SHA-256 of the ``rules.py`` it
  was shown: editing the file afterwards withdraws the trust until it is given again.

A hash written *inside* the folder (a ``generation.json``, say) proves nothing, since whoever wrote
the code could write the hash too; trust therefore lives with the user, in a file outside every game
folder: ``$ODYSSEY_TRUST_FILE`` if set, else ``$XDG_CONFIG_HOME/odyssey/trusted.json`` (by default
``~/.config/odyssey/trusted.json``).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from odyssey_env.safeio import UnsafeFile, entry_kind, parse_json, printable, read_regular, write_atomic

__all__ = [
    "CODE_SUFFIXES",
    "CONTENT_FILES",
    "TRUST_FILE_ENV",
    "CodeRefused",
    "code_entries",
    "content_digest",
    "forget",
    "has_code",
    "is_shipped",
    "is_trusted",
    "needs_trust",
    "read_code",
    "trust",
    "trust_file",
    "trusted_folders",
]

#: The files that make a game what it is; their digests identify its content. ``rules.json`` is data (it
#: needs no trust) but it holds the game's mechanics, so a run that resumes or a result that is read against
#: an edited one must see the change as surely as an edited ``rules.py``.
CONTENT_FILES = ("world.json", "quest.json", "rules.json", "rules.py")
TRUST_FILE_ENV = "ODYSSEY_TRUST_FILE"
RULES = "rules.py"
#: Names of entries that are code (or compiled code) wherever they sit at the top of a game folder.
CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".so", ".pyd")
CODE_NAMES = ("__pycache__",)
#: The largest rules.py read (the shipped ones are under 100 kB).
MAX_CODE_BYTES = 2 * 2**20
MAX_STORE_BYTES = 16 * 2**20
_GAMES_DIR = (Path(__file__).parent / "games").resolve()


class CodeRefused(UnsafeFile):
    """A code entry of a game folder that is never run: the message is one line naming it."""

    def __init__(self, message: str, entry: str = RULES):
        super().__init__(message)
        self.entry = entry


def trust_file() -> Path:
    """Where the user's trust store lives (see the module docstring)."""
    override = os.environ.get(TRUST_FILE_ENV)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "odyssey" / "trusted.json"


def digest(code: bytes) -> str:
    """The SHA-256 the trust store records for these bytes of ``rules.py``."""
    return hashlib.sha256(code).hexdigest()


def content_digest(folder: str | Path) -> dict[str, str]:
    """SHA-256 of each content file the folder has, by file name (``rules.json``, ``rules.py`` only if present).

    Only regular files are read (:func:`odyssey_env.safeio.read_regular`); another kind of entry is an
    error naming it, not a digest of whatever it leads to."""
    folder = Path(folder)
    return {
        name: digest(read_regular(folder / name, MAX_CODE_BYTES if name == RULES else 64 * 2**20))
        for name in CONTENT_FILES
        if entry_kind(folder / name) is not None
    }


def is_shipped(folder: str | Path) -> bool:
    return Path(folder).resolve().parent == _GAMES_DIR


def _is_code(name: str) -> bool:
    return name == RULES or name in CODE_NAMES or name.endswith(CODE_SUFFIXES)


def code_entries(folder: str | Path) -> list[str]:
    """The names of the folder's top-level entries that are code, of whatever kind (see the module
    docstring); empty for a data-only folder. The one predicate "this folder has code"."""
    try:
        with os.scandir(folder) as entries:
            return sorted(e.name for e in entries if _is_code(e.name))
    except (FileNotFoundError, NotADirectoryError):
        return []


def has_code(folder: str | Path) -> bool:
    return bool(code_entries(folder))


def needs_trust(folder: str | Path) -> bool:
    """True when the folder holds code that did not come with the package (loading needs trust, or
    is refused when that code is not one regular ``rules.py``)."""
    return not is_shipped(folder) and has_code(folder)


def read_code(folder: str | Path) -> bytes | None:
    """The bytes of the folder's ``rules.py`` (read once, to be hashed and then compiled), or None for
    a data-only folder. Raises :class:`CodeRefused` for a code entry that would never be run: a
    ``rules.py`` that is not a regular file, and any other code (compiled files, ``__pycache__``,
    other ``.py`` files), since a game folder's only code is its ``rules.py``."""
    folder = Path(folder)
    for name in code_entries(folder):
        if name == RULES:
            continue
        kind = entry_kind(folder / name) or "entry"
        compiled = name in CODE_NAMES or not name.endswith(".py")
        raise CodeRefused(
            f"{folder / name} ({kind}) is {'compiled code' if compiled else 'Python code'} in a game folder: refused; "
            f"the only code a game folder may hold is its rules.py, which odyssey compiles from source"
            f"{' (it never runs .pyc files)' if compiled else ''}: remove {name}",
            name,
        )
    if entry_kind(folder / RULES) is None:
        return None
    try:
        return read_regular(folder / RULES, MAX_CODE_BYTES)
    except CodeRefused:
        raise
    except UnsafeFile as exc:
        raise CodeRefused(str(exc)) from None


def _read_store() -> dict[str, str]:
    path = trust_file().resolve()  # the user's own file: a link they made to it is followed, on purpose
    try:
        data = parse_json(read_regular(path, MAX_STORE_BYTES), path)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise OSError(f"cannot read the trust store {path}: {exc}") from None
    folders = data.get("folders") if isinstance(data, dict) else None
    if not isinstance(folders, dict) or not all(isinstance(v, str) for v in folders.values()):
        raise OSError(f'the trust store {path} is damaged: expected {{"folders": {{path: sha256}}}}')
    return folders


def _write_store(folders: dict[str, str]) -> None:
    path = trust_file().resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"folders": dict(sorted(folders.items()))}, indent=1) + "\n"
    # Written to a temporary file and renamed, so a crash never leaves a half-written store.
    write_atomic(path, text)


def trusted_folders() -> dict[str, str]:
    """The trust store: resolved folder path -> SHA-256 of the ``rules.py`` the user trusted."""
    return _read_store()


def is_trusted(folder: str | Path, code: bytes | None = None) -> bool:
    """May the folder's ``rules.py`` run without a per-load ``trust=True``?

    ``code``: the bytes about to be compiled (the loader passes what it read, so the bytes checked are
    the bytes run); read here when not given. Raises :class:`CodeRefused` for code that never runs."""
    folder = Path(folder).resolve()
    if is_shipped(folder):
        return True
    if code is None:
        code = read_code(folder)
        if code is None:
            return True
    recorded = _read_store().get(str(folder))
    return recorded is not None and recorded == digest(code)


def trust(folder: str | Path) -> str:
    """Record the folder's current ``rules.py`` as trusted; returns its SHA-256."""
    folder = Path(folder).resolve()
    code = read_code(folder)
    if code is None:
        raise FileNotFoundError(f"{folder} has no rules.py: a data-only game needs no trust")
    recorded = digest(code)
    folders = _read_store()
    folders[str(folder)] = recorded
    _write_store(folders)
    return recorded


def forget(folder: str | Path) -> bool:
    """Withdraw trust from a folder; False if it was not in the store."""
    key = str(Path(folder).resolve())
    folders = _read_store()
    if key not in folders:
        return False
    del folders[key]
    _write_store(folders)
    return True


def main(argv: list[str] | None = None) -> int:
    """``odyssey trust``: record, list or withdraw the user's trust in game folders."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="odyssey trust",
        description="Let a game folder's rules.py run without --trust / game.trust=true. Read the file first: "
        "it is Python code. Editing it afterwards withdraws the trust until it is given again.",
    )
    parser.add_argument("folders", nargs="*", metavar="FOLDER", help="game folders to trust")
    parser.add_argument("--forget", action="store_true", help="withdraw trust from the folders instead")
    parser.add_argument("--list", action="store_true", help="list the trusted folders and whether each still matches")
    args = parser.parse_args(argv)
    if not args.folders and not args.list:
        parser.error("name at least one game folder, or --list")
    try:
        for folder in args.folders:
            path = Path(folder)
            if args.forget:
                print(f"{'forgot' if forget(path) else 'was not trusted'}: {path.resolve()}")
            elif entry_kind(path / "world.json") is None:
                print(f"odyssey trust: {printable(folder)} is not a game folder (no world.json)", file=sys.stderr)
                return 2
            elif is_shipped(path):
                print(f"nothing to trust: {printable(path.resolve())} is a shipped game")
            elif not has_code(path):
                print(f"nothing to trust: {printable(path.resolve())} has no code (data only)")
            else:
                print(f"trusted: {printable(path.resolve())} (rules.py sha256 {trust(path)[:16]}...)")
        if args.list:
            for folder, recorded in trusted_folders().items():
                print(f"{printable(folder)}  [{_state(Path(folder), recorded)}]")
    except (OSError, ValueError) as exc:
        print(f"odyssey trust: {printable(exc)}", file=sys.stderr)
        return 2
    return 0


def _state(folder: Path, recorded: str) -> str:
    """What ``--list`` says of a trusted folder: whether what would be loaded now is what was trusted."""
    try:
        code = read_code(folder)
    except CodeRefused as exc:
        return f"refused: {exc}"
    except OSError as exc:
        return f"unreadable: {exc}"
    if code is None:
        return "missing"
    return "ok" if digest(code) == recorded else "changed since trusted"
