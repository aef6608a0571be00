"""The paper's LLM expander (A3.4): new places, objects and NPCs written by a model, as data, for a cell.

The reference asks a model, during play and in a background thread, for new places, objects and NPCs
once the world is explored; its answer is not checked and differs from run to run. Here a writer (any
``odyssey_agents.llm`` backend, ``game.expander_llm``) writes the game's online expansions **before
play**, one :class:`~odyssey_env.quests.expansion.ExpansionPack` per expansion the game allows
(``quest.json`` ``expansion.max_expansions``): one or two places of two or three areas, a few new object
types and NPC types, and what lies where. Each pack is

* data: JSON of the pack format, never code (the engine places it; nothing the model wrote runs);
* validated like generated content: the world checks every game folder gets (schema, names, references,
  reachability) with the packs written before it, then a smoke play — the pack added to an engine on a
  seed, every new area entered, every new object picked up, every new NPC fought — and a pack that fails
  goes back to the writer with the problems, at most ``attempts`` times;
* cached by seed: the game's content digest, the writer's backend and model, the seed and the prompt's
  version name a file under ``$ODYSSEY_CACHE/expansions/`` (never inside the installed package), holding
  the packs with their provenance (writer, date, tokens, rejected attempts and why). A run reads them
  from there — and keeps a copy in its run directory — so it reproduces, offline and in any process.

The procedural expander stays the default (``game.expander=procedural``); with ``game.expander=llm`` the
k-th expansion of a run adds the k-th pack, and if the writer produced fewer packs than expansions the
procedural expander adds the rest (the cache file says how many were written).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from odyssey_agents.errors import ConfigError

if TYPE_CHECKING:
    from odyssey_env.game import Game

__all__ = ["PROMPT_VERSION", "ExpanderError", "cache_file", "smoke_play", "write_packs"]

PROMPT_VERSION = "x1"
MAX_TOKENS = 4000
KEYS = ("places", "objects", "npcs")


class ExpanderError(ConfigError):
    """An LLM expander that cannot work: no writer, a game without expansion, or no usable pack."""


def cache_file(game: Game, writer: Mapping[str, Any], seed: int) -> Path:
    from odyssey_agents.llm.written import entry

    return entry("expansions", game, writer, f"seed{seed}-{PROMPT_VERSION}")


def messages(game: Game, number: int, taken: list[str], problems: list[str]) -> list[dict[str, str]]:
    """The writer's prompt for expansion ``number`` (from 1)."""
    deepest = max(a.level for a in game.areas.values())
    by_kind: dict[str, list[str]] = {}
    for o in game.spec.objects:
        by_kind.setdefault(o.category, []).append(o.name)
    objects = "; ".join(f"{k}: {', '.join(v[:8])}" for k, v in sorted(by_kind.items()))
    enemies = ", ".join(n.name for n in game.spec.npcs if n.hostile)[:600]
    system = (
        "You extend a text adventure game with new content once its player has explored every area. "
        "Write one expansion as a JSON object with three keys:\n"
        '"places": 1 or 2 places, each {"name": "Title Case Name", "description": "...", "areas": 2 or 3 of '
        '{"name": "lower_snake_case", "description": "one sentence", "objects": {"object_name": count}, '
        '"npcs": ["npc_name", ...]}};\n'
        '"objects": 2 to 4 new object types, each {"name": "lower_snake_case", "category": one of material, '
        'tool, weapon, armor, food, misc, "description": "...", "level": n, "value": coins, and "attack" for a '
        'weapon, "defense" for armor, "hp_restore" for food};\n'
        '"npcs": 1 or 2 new NPC types, each {"name": "lower_snake_case", "kind": "enemy" or "friendly", '
        '"role": "fighter" (enemy) or "villager" (friendly), "description": "...", "level": n, "hp": n, '
        '"attack": n, "defense": n, "drops": {"object_name": count}, "dialogue": ["..."] for a villager}.\n'
        "Names must be new (not used by the game) and must not end in an underscore and a number. Areas may "
        "hold the game's own objects and NPCs or the new ones. Reply with the JSON object only."
    )
    user = (
        f"Game: {game.title}. {game.spec.game.description}\n"
        f"Places: {', '.join(p.name for p in game.spec.places)}. The deepest areas are at level {deepest}; "
        f"the new places come after them, at levels {deepest + 1} and {deepest + 2}.\n"
        f"Object types: {objects}\nEnemies: {enemies}\n"
        f"Expansion number: {number}\nNames already taken by earlier expansions: {', '.join(taken) or 'none'}\n"
    )
    if problems:
        user += "\nYour previous answer was refused:\n" + "\n".join(f"- {p}" for p in problems[:20]) + "\n"
    return [{"role": "system", "content": system}, {"role": "user", "content": user + "\nReturn only the JSON object."}]


def _names(pack: Mapping[str, Any]) -> list[str]:
    out = [str(o.get("name")) for o in pack.get("objects", []) if isinstance(o, dict)]
    out += [str(n.get("name")) for n in pack.get("npcs", []) if isinstance(n, dict)]
    for place in pack.get("places", []) if isinstance(pack.get("places"), list) else []:
        if isinstance(place, dict) and isinstance(place.get("areas"), list):
            out += [str(a.get("name")) for a in place["areas"] if isinstance(a, dict)]
    return out


def smoke_play(game: Game, index: int, seed: int = 0) -> list[str]:
    """Add pack ``index`` of ``game`` to an engine and play through it: problems found (empty: it plays)."""
    from odyssey_env.engine import Engine
    from odyssey_env.quests.expansion import NAME, PackExpander

    try:
        engine = Engine(game, seed, options={"tutorial": False})
        engine.state.rule_data.setdefault(NAME, {"expansions": 0})["expansions"] = index
        created = PackExpander().expand(engine)
        pack = game.expansion_packs[index]
        agent = next(iter(engine.state.agents.values()))
        commands = []
        for name in created:
            agent.area = name  # walk in: the smoke test checks the content, not the way there
            commands += ["wait", *(f"pick up {o}" for o in engine.state.areas[name].objects)]
            commands += [f"attack {n}" for n in engine.state.areas[name].npcs for _ in range(3)]
        commands += [f"inspect {o.name}" for o in pack.objects]
        for command in commands:
            engine.step({agent.id: command})
            if engine.state.done:
                break
    except Exception as exc:  # a pack that breaks the engine is refused with what broke
        return [f"playing the expansion failed: {type(exc).__name__}: {exc}"]
    return []


def write_packs(
    game: Game,
    writer: Mapping[str, Any] | None,
    *,
    seed: int = 0,
    attempts: int = 3,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """The game's expansion packs for ``seed`` by ``writer``: from the cache, or written, checked and cached."""
    if not writer or writer.get("name") in (None, "none"):
        raise ExpanderError(
            "game.expander=llm needs a writer: game.expander_llm (an llm group, e.g. game.expander_llm='${llm}')"
        )
    if not game.quest.expansion.enabled:
        raise ExpanderError(f"game {game.name} has no online expansion (quest.json expansion.enabled is false)")
    from odyssey_agents.llm.factory import build_llm, refuse_secrets

    refuse_secrets(writer, "game.expander_llm")
    path = cache_file(game, writer, seed)
    from odyssey_agents.llm.written import game_digest, written_once
    from odyssey_agents.prompting.reply import parse_reply
    from odyssey_env.game import GameError
    from odyssey_env.quests.expansion import with_packs

    def write() -> dict[str, Any]:
        llm = build_llm(dict(writer), seed=seed)
        log(f"writing the online expansions of {game.name} with {writer.get('name')} (once per seed; cached in {path})")
        packs: list[dict[str, Any]] = []
        rejected: list[dict[str, Any]] = []
        tokens = [0, 0]
        for number in range(1, game.quest.expansion.max_expansions + 1):
            taken = [n for p in packs for n in _names(p)]
            problems: list[str] = []
            for attempt in range(1, attempts + 1):
                completion = llm.complete(
                    messages(game, number, taken, problems), purpose="expand", max_tokens=MAX_TOKENS, json_keys=KEYS
                )
                tokens[0] += completion.input_tokens
                tokens[1] += completion.output_tokens
                reply = parse_reply(completion.text, KEYS, required=("places",))
                pack = {k: v for k, v in reply.fields.items() if k in KEYS} if reply.ok else {}
                try:
                    if not reply.ok:
                        problems = [f"the reply holds no expansion: {reply.error}; write one JSON object"]
                    else:
                        problems = smoke_play(with_packs(game, [*packs, pack]), len(packs), seed)
                except GameError as exc:
                    problems = [str(p) for p in exc.problems]
                if not problems:
                    packs.append({**pack, "provenance": {"writer": llm.describe(), "expansion": number}})
                    break
                rejected.append({"expansion": number, "attempt": attempt, "problems": problems[:20]})
            else:
                log(f"expansion {number} of {game.name}: no usable pack in {attempts} attempts; procedural instead")
        log(f"{len(packs)} expansion pack(s) written for {game.name}, {len(rejected)} attempt(s) refused")
        return {"writer": llm.describe(), "tokens": tokens, "packs": packs, "rejected": rejected}

    return written_once(
        path, write, prompt_version=PROMPT_VERSION, game=game.name, game_digest=game_digest(game.path), seed=seed
    )
