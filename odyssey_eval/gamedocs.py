"""A documentation page per game, written from its data: its map, sizes, verbs, dynamics and quest outline.

Gymnasium and PettingZoo present every environment on a page of its own; here those pages are computed
from the game folder, never written by hand, so they cannot drift from the game. The docs site
(``mkdocs build``, see ``tools/mkdocs_hooks.py``) renders one per shipped game, and
``python -m odyssey_eval.gamedocs GAME`` prints one (a shipped game's name or a game folder).

The map is the world an episode of the given seed starts in (the area graph of a game in random mode is
drawn per seed), laid out as the trajectory viewer lays it out (:func:`odyssey_eval.viewer.worldmap.layout`:
places as a graph, each place's areas around its centre) and drawn as an inline SVG, so the page needs
no script and no image file. Tutorial rooms are left out: they are removed when the tutorial ends.
"""

from __future__ import annotations

import argparse
import html
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from odyssey_env.game import Game
    from odyssey_env.state import WorldState

__all__ = ["game_page", "map_svg"]

#: Colours of places on the map, in the order places are listed (cycled for more places).
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f")
WIDTH, HEIGHT = 760, 520


def map_svg(game: Game, world: WorldState, spawn: str | None = None) -> str:
    """The world's areas and connections as an SVG: one colour per place, locked connections dashed,
    the spawn area ringed, a legend of places."""
    from odyssey_eval.viewer.worldmap import WorldMap, layout

    world_map = WorldMap()
    world_map.add_world({name: area for name, area in world.areas.items() if name in game.areas or area.place})
    names = list(world_map.places)
    pos = layout(names, world_map.places, world_map.unlocked, seed=0)
    places = list(dict.fromkeys(world_map.places[n] for n in names))
    colour = {p: PALETTE[i % len(PALETTE)] for i, p in enumerate(places)}
    legend_h = 22 * ((len(places) + 2) // 3)
    box_h = HEIGHT - legend_h

    def xy(area: str) -> tuple[float, float]:
        x, y = pos[area]
        return round(40 + x * (WIDTH - 80), 1), round(20 + y * (box_h - 40), 1)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" role="img" '
        f'aria-label="map of {html.escape(game.name)}" font-family="sans-serif" font-size="11">'
    ]
    for a, b in sorted(world_map.unlocked):
        (x1, y1), (x2, y2) = xy(a), xy(b)
        dash = ' stroke-dasharray="5 4"' if world_map.unlocked[(a, b)] is None else ""
        out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#999" stroke-width="1.5"{dash}/>')
    for area in names:
        x, y = xy(area)
        fill = colour[world_map.places[area]]
        level = game.areas[area].level if area in game.areas else world.areas[area].level
        ring = f'<circle cx="{x}" cy="{y}" r="11" fill="none" stroke="#222" stroke-width="2"/>' if area == spawn else ""
        out.append(
            f"<g><title>{html.escape(area)} ({html.escape(world_map.places[area])}, level {level})</title>{ring}"
            f'<circle cx="{x}" cy="{y}" r="7" fill="{fill}"/>'
            f'<text x="{x}" y="{y + 19}" text-anchor="middle" fill="#333" stroke="#fff" stroke-width="3" '
            f'paint-order="stroke">{html.escape(area)}</text></g>'
        )
    for i, place in enumerate(places):
        lx, ly = 20 + (i % 3) * 250, box_h + 16 + 22 * (i // 3)
        out.append(
            f'<circle cx="{lx}" cy="{ly - 4}" r="6" fill="{colour[place]}"/>'
            f'<text x="{lx + 12}" y="{ly}" fill="#333">{html.escape(place)}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def _cell(text: str) -> str:
    """Prose safe in Markdown (a table cell included): one line, HTML's special characters escaped."""
    return html.escape(" ".join(str(text).split()), quote=False).replace("|", "\\|")


def _code(text: str) -> str:
    """A code span in a table cell (a code span shows entities as typed: only the pipe is escaped)."""
    return "`" + " ".join(str(text).split()).replace("|", "\\|") + "`"


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def game_page(game: str | Game, *, seed: int = 0) -> str:
    """The Markdown page of one game (see the module docstring)."""
    from odyssey_env.game import load_game
    from odyssey_env.registration import env_id
    from odyssey_env.rules import BASE_VERBS, OPTIONAL_VERBS
    from odyssey_eval.qa.world_knowledge import initial_world

    g = load_game(game) if isinstance(game, str) else game
    s = g.summary()
    world = initial_world(g, seed, tutorial=False)
    spawn = next(iter(world.agents.values())).area if world.agents else None
    q = g.quest
    lines = [
        f"# {g.title} (`{g.name}`)",
        "",
        _cell(g.spec.game.description),
        "",
        f'`odyssey play {g.name}` · `gym.make("{env_id(g.name)}")` · `odyssey run game={g.name}`',
        "",
        "*This page is generated from the game's data (`odyssey_eval.gamedocs`).*",
        "",
        "## Sizes",
        "",
        "| | |",
        "|---|---|",
        f"| places | {s['places']} |",
        f"| areas | {s['areas']} (levels {s['area_levels']}) |",
        f"| object types | {s['object_types']} ({len(g.recipes)} craftable) |",
        f"| NPC types | {s['npc_types']} ({_n(s['enemy_types'], 'enemy', 'enemies')}, "
        f"{_n(s['merchant_types'], 'merchant')}) |",
        f"| main quest | {s['stages']} stages in {s['chapters']} chapters, "
        + ("a goal tree (DAG)" if s["dag"] else "linear")
        + " |",
        "| side quests | " + (", ".join(s["side_quest_kinds"]) if s["side_quests"] else "none") + " |",
        f"| tutorial | {s['tutorial_steps']} steps |" if s["tutorial_steps"] else "| tutorial | none |",
        f"| online expansion | {'on' if s['expansion'] else 'off'} |",
        f"| verbs | {s['verbs']} ({len(s['extra_verbs'])} beyond the 17 core verbs) |",
        f"| step rules | {len(s['step_rules'])} |",
        "",
        "## Map",
        "",
        f"The world an episode with seed {seed} starts in: one colour per place, dashed connections locked, the "
        "spawn area ringed (hover an area for its place and level).",
        "",
        map_svg(g, world, spawn),
        "",
        "## Verbs",
        "",
        "| command | what it does | |",
        "|---|---|---|",
    ]
    for verb, rule in g.rules.actions.items():
        kind = "core" if verb in BASE_VERBS else "optional" if verb in OPTIONAL_VERBS else "this game's own"
        lines.append(f"| {_code(rule.usage())} | {_cell(rule.description)} | {kind} |")
    lines += ["", "## World dynamics", "", "Step rules, in the order they run after every action:", ""]
    lines += ["| rule | what it does | |", "|---|---|---|"]
    extra = set(s["extra_step_rules"])
    for step_rule in g.rules.steps:
        origin = "this game adds it" if step_rule.name in extra else "core"
        lines.append(f"| {_code(step_rule.name)} | {_cell(step_rule.description)} | {origin} |")
    lines += ["", "## Quest outline", ""]
    main = q.main
    if main is None:
        lines.append("This game has no main quest.")
    else:
        lines += [f"**{_cell(main.title)}**" + (f": {_cell(main.intro)}" if main.intro else ""), ""]
        titles = {st.id: st.title for ch in main.chapters for st in ch.stages}
        previous: str | None = None
        for ch in main.chapters:
            lines += [f"### {_cell(ch.title)}", ""]
            for st in ch.stages:
                needs = st.requires if st.requires is not None else ((previous,) if previous else ())
                after = ""
                if s["dag"] and needs:
                    after = " — after " + ", ".join(f"*{_cell(titles.get(n, n))}*" for n in needs)
                lines.append(f"1. {_cell(st.title)}{after}")
                previous = st.id
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m odyssey_eval.gamedocs", description=__doc__.split("\n\n")[0])
    parser.add_argument("game", help="a shipped game's name or a game folder")
    parser.add_argument("--seed", type=int, default=0, help="the seed whose starting world is drawn (default 0)")
    args = parser.parse_args(argv)
    sys.stdout.write(game_page(args.game, seed=args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
