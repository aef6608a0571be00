"""The user games directory: games made by ``odyssey generate`` or imported by ``odyssey paper import``.

Games there are found by name like the shipped ones (``odyssey play remnant``, ``odyssey run game=remnant``,
``gym.make("AgentOdyssey/Remnant-v0")``). The folder is ``$ODYSSEY_GAMES_DIR``, else
``$XDG_DATA_HOME/odyssey/games``, else ``~/.local/share/odyssey/games``. A shipped game's name always
means the shipped game. This module reads only folder names and the small ``paper.json`` provenance
file, so registration at start-up stays cheap and imports nothing of the engine.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

__all__ = ["PAPER_FORMAT", "PROVENANCE", "find", "games_dir", "origin", "provenance", "stale_import", "user_games"]

PROVENANCE = "paper.json"
#: The format of what ``odyssey paper import`` writes, stamped into every imported folder's ``paper.json``
#: (``"format"``). Raised whenever the importer's output changes (new mechanics bound, conditions
#: translated otherwise), so a folder imported by an older odyssey is refused with the command that
#: renews it instead of playing a conversion that this odyssey no longer makes. 2: the paper games'
#: own verbs bound, the oracle-era fixes of issue 26. 3: Quarantine takes Lazaret's corpse corruption from its
#: rules.json (a format-2 folder disables a Python rule that no longer exists, and would not load). 4:
#: Quarantine plays Lazaret's light and dark (``lamp_fuel``) from the rules.json the import writes (a format-3
#: folder sets params for a Python rule that no longer exists, and would not load). 5: recipes keep the
#: reference's fractional amounts (0.5 iron_bar: a format-4 folder rounded them up to whole units) and
#: Remnant's lockpick binds the reference's per-tool odds, tools spent on success and hurt on a failure.
#: 6: the engine's day_night and night_spawn are off in every imported game and respawn where the reference has
#: none; Remnant's and Mark's DayCycle is played by ``day_cycle`` (a format-5 folder binds danger_hours).
#: 7: Saltglass's mirages are Mirror Salt's rules.json ``salt_mirage``, which takes its own ``sheltered`` areas
#: (a format-6 folder leaves them unset, so mirages would form under its awnings too).
#: 8: objects are scattered as each reference game's own world.py does (``placement.draws``, ``guarantee``:
#: Mark draws more, five games first give each area its own materials); a format-7 folder scatters them as Remnant does.
#: 9: the guide comes to the agent at each new stage (``guide.follows``; Mark's also after 30 steps without one).
#: 10: Saltglass's ``listen`` and ``refract`` are Mirror Salt's rules.json verbs, each with its lenses (a format-9
#: folder's copy of that file lacks them, and its ``game.params.refract`` would name a verb that no code declares
#: any more).
#: 11: each game's own bounds of an area's enemy count (``placement.enemies_per_level``, Mark's 1 to the level;
#: a format-10 folder drew every game's with Remnant's, so Mark's level-1 areas often had no enemy), and Mark's
#: enemies respawn in the reference's waves (``respawn.waves``) and patrol as the reference's do (every step,
#: into the spawn too, ``room_by_level``), where a format-10 folder binds odyssey's quiet refill and patrols.
#: 12: Quarantine's refusal of the way from a dark area on into another without a light is the hook on ``enter``
#: the import writes into its rules.json (Lazaret's requirement that reads ``lamp_fuel``'s params), where a
#: format-11 folder relied on Lazaret's Python ``enter``, which no longer refuses it.
PAPER_FORMAT = 12
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_ID = re.compile(r"^AgentOdyssey/[A-Z][A-Za-z0-9]*-v0$")


def games_dir() -> Path:
    explicit = os.environ.get("ODYSSEY_GAMES_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "odyssey" / "games"


def user_games() -> list[str]:
    """Names of the game folders in the user games directory (those with a ``world.json``), sorted."""
    root = games_dir()
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return []
    return [p.name for p in entries if _NAME.match(p.name) and (p / "world.json").is_file()]


def find(name: str) -> Path | None:
    """The folder of the user game ``name``, or None."""
    if not _NAME.match(name):
        return None
    path = games_dir() / name
    return path if (path / "world.json").is_file() else None


def provenance(folder: Path) -> dict[str, Any] | None:
    """The import record of a game folder (``paper.json``), or None for a game that was not imported."""
    path = Path(folder) / PROVENANCE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not _ID.match(str(data.get("env_id", ""))):
        return None
    return data


def origin(folder: Path, shipped_dir: Path | None = None) -> dict[str, Any]:
    """What a game folder is relative to the paper: odyssey's own, imported from the reference, or the user's.

    ``{"kind": "odyssey" | "paper" | "user", "env_id": ..., "summary": one line}``; a paper game's line names
    the release and its SHA-256 (``imported from agentodyssey 0.1.0 (sha256 d849dd9d6ae4)``).
    """
    folder = Path(folder)
    shipped_dir = shipped_dir or Path(__file__).parent / "games"
    record = provenance(folder)
    if record is not None:
        src = record.get("imported_from", {})
        return {
            "kind": "paper",
            "env_id": record["env_id"],
            "summary": str(record.get("summary", "")),
            "release": f"{src.get('package', 'agentodyssey')} {src.get('version', '?')}",
            "sha256": str(src.get("sha256", "")),
        }
    title = "".join(part.capitalize() for part in folder.name.split("_"))
    if folder.resolve().parent == shipped_dir.resolve():
        return {"kind": "odyssey", "env_id": f"Odyssey/{title}-v0", "summary": "odyssey's own game"}
    return {"kind": "user", "env_id": f"Odyssey/{title}-v0", "summary": f"a game folder ({folder})"}


def stale_import(folder: Path) -> str | None:
    """One line saying why an imported game folder must be imported again (made by another version of
    the importer than this odyssey's), or None when it is current or was not imported at all."""
    record = provenance(folder)
    if record is None:
        return None
    made = record.get("format")
    if made == PAPER_FORMAT:
        return None
    src = record.get("imported_from", {})
    release = f"{src.get('package', 'agentodyssey')} {src.get('version', '?')}"
    age = "an older" if isinstance(made, int) and made < PAPER_FORMAT else "another"
    return (
        f"{Path(folder).name} was imported from {release} by {age} version of the importer (format {made}; "
        f"this odyssey reads format {PAPER_FORMAT}): run `odyssey paper import` again"
    )
