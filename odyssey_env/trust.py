"""Which game folders may run their ``rules.py``.

A game folder is data (``world.json``, ``quest.json``) plus, optionally, ``rules.py``, which is Python
code: loading the game imports it. Data is always safe to load; code runs only when the user has said
they trust it. The model, in the spirit of ``direnv allow``:

* Shipped games (``odyssey_env/games/``) come with the package and are trusted.
* A folder without ``rules.py`` is data only: nothing to trust.
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
import tempfile
from pathlib import Path

__all__ = [
    "CONTENT_FILES",
    "TRUST_FILE_ENV",
    "content_digest",
    "forget",
    "is_shipped",
    "is_trusted",
    "needs_trust",
    "trust",
    "trust_file",
    "trusted_folders",
]

#: The files that make a game what it is; their digests identify its content.
CONTENT_FILES = ("world.json", "quest.json", "rules.py")
TRUST_FILE_ENV = "ODYSSEY_TRUST_FILE"
_GAMES_DIR = (Path(__file__).parent / "games").resolve()


def trust_file() -> Path:
    """Where the user's trust store lives (see the module docstring)."""
    override = os.environ.get(TRUST_FILE_ENV)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "odyssey" / "trusted.json"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def content_digest(folder: str | Path) -> dict[str, str]:
    """SHA-256 of each content file the folder has, by file name (``rules.py`` only if present)."""
    folder = Path(folder)
    return {name: _sha256(folder / name) for name in CONTENT_FILES if (folder / name).is_file()}


def is_shipped(folder: str | Path) -> bool:
    return Path(folder).resolve().parent == _GAMES_DIR


def needs_trust(folder: str | Path) -> bool:
    """True when loading the folder would run code that did not come with the package."""
    folder = Path(folder)
    return (folder / "rules.py").is_file() and not is_shipped(folder)


def _read_store() -> dict[str, str]:
    path = trust_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise OSError(f"cannot read the trust store {path}: {exc}") from None
    folders = data.get("folders") if isinstance(data, dict) else None
    if not isinstance(folders, dict) or not all(isinstance(v, str) for v in folders.values()):
        raise OSError(f'the trust store {path} is damaged: expected {{"folders": {{path: sha256}}}}')
    return folders


def _write_store(folders: dict[str, str]) -> None:
    path = trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"folders": dict(sorted(folders.items()))}, indent=1) + "\n"
    # Written to a temporary file and renamed, so a crash never leaves a half-written store.
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp", encoding="utf-8") as tmp:
        tmp.write(text)
    os.replace(tmp.name, path)


def trusted_folders() -> dict[str, str]:
    """The trust store: resolved folder path -> SHA-256 of the ``rules.py`` the user trusted."""
    return _read_store()


def is_trusted(folder: str | Path) -> bool:
    """May the folder's ``rules.py`` run without a per-load ``trust=True``?"""
    folder = Path(folder).resolve()
    if not needs_trust(folder):
        return True
    recorded = _read_store().get(str(folder))
    return recorded is not None and recorded == _sha256(folder / "rules.py")


def trust(folder: str | Path) -> str:
    """Record the folder's current ``rules.py`` as trusted; returns its SHA-256."""
    folder = Path(folder).resolve()
    if not (folder / "rules.py").is_file():
        raise FileNotFoundError(f"{folder} has no rules.py: a data-only game needs no trust")
    digest = _sha256(folder / "rules.py")
    folders = _read_store()
    folders[str(folder)] = digest
    _write_store(folders)
    return digest


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
            elif not (path / "world.json").is_file():
                print(f"odyssey trust: {folder} is not a game folder (no world.json)", file=sys.stderr)
                return 2
            elif not needs_trust(path):
                print(
                    f"nothing to trust: {path.resolve()} "
                    f"{'is a shipped game' if is_shipped(path) else 'has no rules.py (data only)'}"
                )
            else:
                print(f"trusted: {path.resolve()} (rules.py sha256 {trust(path)[:16]}...)")
        if args.list:
            for folder, digest in trusted_folders().items():
                rules = Path(folder) / "rules.py"
                now = _sha256(rules) if rules.is_file() else None
                state = "ok" if now == digest else ("changed since trusted" if now else "missing")
                print(f"{folder}  [{state}]")
    except OSError as exc:
        print(f"odyssey trust: {exc}", file=sys.stderr)
        return 2
    return 0
