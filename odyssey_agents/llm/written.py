"""Content a model writes once and every later run reads: the cache entry, its name and its provenance.

World-Knowledge questions about world dynamics (``odyssey_eval.qa.written``) and online-expansion packs
(``odyssey_eval.expansion``) are written by a model, checked, and then must be the same for every process and
run that asks for them, offline. Each lives in one JSON file under the cache directory (never inside the
installed package), named by what it was written from — the game's content digest, the writer's backend
and model, a seed, the prompt's version — and written once: processes take a file lock, the one that
writes replaces the file whole (a reader never sees half of it), the others read what it wrote.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["entry", "game_digest", "written_once"]


def game_digest(folder: str | Path) -> str:
    """One digest of a game folder's content files."""
    from odyssey_env.trust import content_digest

    return hashlib.sha256(json.dumps(content_digest(folder), sort_keys=True).encode()).hexdigest()


def entry(kind: str, game: Any, writer: Mapping[str, Any], name: str) -> Path:
    """``<cache>/<kind>/<game>-<digest>/<backend>-<model>-<name>.json``."""
    from odyssey_agents.llm.embedded import cache_root

    who = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{writer.get('name')}-{writer.get('model') or 'default'}").strip("._")
    return cache_root() / kind / f"{game.name}-{game_digest(game.path)[:12]}" / f"{who}-{name}.json"


def written_once(path: Path, write: Callable[[], dict[str, Any]], **provenance: Any) -> dict[str, Any]:
    """The entry at ``path``, or ``write()``'s result stored there with ``provenance`` and the time."""
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        if path.is_file():  # another process wrote it while this one waited
            return json.loads(path.read_text(encoding="utf-8"))
        data = {
            "format": 1,
            **provenance,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            **write(),
        }
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
        return data
