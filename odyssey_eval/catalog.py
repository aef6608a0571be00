"""``odyssey games``: what each game contains, computed from its data (never hand-written).

Shipped games by name, any other game folder (a generated one) by path: ``odyssey games path/to/tide``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from odyssey_env.game import GameError, available_games, load_game
from odyssey_env.userdir import origin, user_games

COLUMNS = (
    ("env id", "env_id"),
    ("places", "places"),
    ("areas", "areas"),
    ("levels", "area_levels"),
    ("objects", "object_types"),
    ("NPCs", "npc_types"),
    ("stages", "stages"),
    ("leaves", "leaves"),
    ("chapters", "chapters"),
    ("side quests", "side_quests"),
    ("tutorial", "tutorial_steps"),
    ("expansion", "expansion"),
    ("verbs", "verbs"),
    ("step rules", "step_rule_count"),
)


def describe_games(names: Sequence[str] | None = None, *, trust: bool = False) -> list[dict[str, Any]]:
    """One summary dict per game (see :meth:`odyssey_env.game.Game.summary`); names or folders."""
    rows = []
    shipped = available_games()
    for name in names or shipped + [g for g in user_games() if g not in shipped]:
        game = load_game(name, trust=trust)
        summary = game.summary()
        summary["step_rule_count"] = len(summary["step_rules"])
        where = origin(game.path)
        summary["origin"] = where
        summary["env_id"] = where["env_id"]
        rows.append(summary)
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    header = ["game", *(label for label, _ in COLUMNS)]
    body = [[r["name"], *(_cell(r.get(key)) for _, key in COLUMNS)] for r in rows]  # env id: rows of describe_games
    widths = [max(len(str(x)) for x in col) for col in zip(header, *body, strict=True)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) for row in body]
    notes = sorted({r["origin"]["summary"] for r in rows if r.get("origin", {}).get("kind") == "paper"})
    if notes:
        out.append("")
        out.append(
            "AgentOdyssey/* are the paper's games, " + "; ".join(notes) + "; Odyssey/* are odyssey's own games "
            "(docs/games.md says how each relates to the paper)"
        )
    elif any(r.get("origin", {}).get("kind") == "odyssey" for r in rows):
        out.append("")
        out.append(
            "Odyssey/* are odyssey's own games, not the paper's; for the paper's games run: odyssey paper import"
        )
    return "\n".join(out)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def format_details(row: dict[str, Any]) -> str:
    where = f" ({row['env_id']}; {row['origin']['summary']})" if "origin" in row else ""
    lines = [f"{row['name']}: {row['title']}{where}"]
    if row["quest"]:
        shape = "a DAG" if row["dag"] else "linear"
        lines.append(
            f"  main quest: {row['quest']} ({row['stages']} stages, {row['leaves']} leaves, {shape}, "
            f"in {row['chapters']} chapter{'' if row['chapters'] == 1 else 's'})"
        )
    lines.append(f"  NPC types ({row['npc_types']}): {row['enemy_types']} enemies, {row['merchant_types']} merchants")
    lines.append(f"  verbs ({row['verbs']}): {', '.join(row['verb_list'])}")
    lines.append(f"  extra verbs ({len(row['extra_verbs'])}): {', '.join(row['extra_verbs']) or 'none'}")
    places = row.get("step_rule_places", {})
    steps = [f"{name} ({places[name]})" if name in places else name for name in row["step_rules"]]
    lines.append(f"  step rules ({len(steps)}, in run order): {', '.join(steps)}")
    lines.append(f"  extra step rules ({len(row['extra_step_rules'])}): {', '.join(row['extra_step_rules']) or 'none'}")
    if row["side_quests"]:
        lines.append(f"  side quests: {', '.join(row['side_quest_kinds'])}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="odyssey games", description="List games and their sizes.")
    parser.add_argument("games", nargs="*", help="shipped game names or game folders (default: every shipped game)")
    parser.add_argument(
        "--trust",
        action="store_true",
        help="let a game folder's rules.py run (it is code; shipped games need no trust)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--details", action="store_true", help="also list verbs and step rules per game")
    args = parser.parse_args(argv)
    known = set(available_games()) | set(user_games())
    unknown = [g for g in args.games if g not in known and not (Path(g) / "world.json").is_file()]
    if unknown:
        parser.error(
            f"unknown game(s) {', '.join(unknown)}; shipped: {', '.join(available_games())}; "
            f"in the user games directory: {', '.join(user_games()) or 'none (odyssey paper import)'}; "
            "or give a folder with a world.json"
        )
    try:
        rows = describe_games(args.games, trust=args.trust)
    except GameError as exc:
        print(f"odyssey games: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(format_table(rows))
    if args.details:
        for row in rows:
            print()
            print(format_details(row))
    return 0
