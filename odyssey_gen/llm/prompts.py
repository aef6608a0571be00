"""The prompts of the LLM author: what each stage tells the model, built from the engine itself.

Every fact a prompt states comes from the code or the data it describes, so the prompts cannot drift
from the engine: the JSON Schema of ``world.json`` (:func:`odyssey_env.schema.json_schema`), an
excerpt of the base game and an analysis chart of its entity distribution (paper A3.3), the optional
verbs and dynamics of the engine's library, the allow-list of rule code, the source of two engine
rules as examples, and the condition vocabulary of quests.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from typing import Any

from odyssey_env.content import WorldSpec
from odyssey_env.game import GAMES_DIR
from odyssey_env.quests.conditions import describe_vocabulary
from odyssey_env.rules import OPTIONAL_VERBS, core_step_rules
from odyssey_env.schema import json_schema
from odyssey_env.steprules.order import ENGINE_STEP_ORDER
from odyssey_gen.report import entity_statistics
from odyssey_gen.spec import OPTIONAL_DYNAMICS, GameSpec
from odyssey_gen.validate import Problem
from odyssey_gen.validate.static import ALLOWED_IMPORTS

__all__ = ["entities_prompt", "quest_prompt", "repair_note", "rule_file_prompt", "rules_prompt", "world_digest"]

Messages = list[dict[str, str]]

SYSTEM = (
    "You are a game designer and a careful Python and JSON programmer. You extend AgentOdyssey, a text "
    "RPG engine, with new games. Follow the formats exactly: the engine validates everything you write, "
    "and any problem comes back to you to fix."
)


def _base_excerpt() -> dict[str, Any]:
    """A small, complete-looking slice of the base game's world.json (one of each kind of thing)."""
    world = json.loads((GAMES_DIR / "mossfall" / "world.json").read_text(encoding="utf-8"))
    picked, seen = [], set()
    for o in world["objects"]:
        kind = (o["category"], bool(o.get("recipe")))
        if kind not in seen:
            seen.add(kind)
            picked.append(o)
    npcs, roles = [], set()
    for n in world["npcs"]:
        if n.get("role", "fighter") not in roles:
            roles.add(n.get("role", "fighter"))
            npcs.append(n)
    place = dict(world["places"][0])
    place["areas"] = place["areas"][:2]
    first, second = place["areas"][0]["name"], place["areas"][1]["name"]
    return {
        "format": 1,
        "game": world["game"],
        "agent": world["agent"],
        "spawn": world["spawn"],
        "places": [place],
        "graph": {"mode": "fixed", "connections": [{"a": first, "b": second}]},
        "placement": world["placement"],
        "objects": picked,
        "npcs": npcs,
    }


def repair_note(problems: list[Problem], what: str) -> str:
    """The problems of the last attempt, verbatim, for the next one."""
    lines = [
        f"Your previous {what} was rejected. Fix every problem below and reply with the complete corrected "
        "version (not a patch):"
    ]
    for p in problems[:30]:
        lines.append(f"- {p.message}")
        if p.detail:
            lines.append("  " + p.detail.strip().replace("\n", "\n  ")[-1500:])
    if len(problems) > 30:
        lines.append(f"- ... and {len(problems) - 30} more")
    return "\n".join(lines)


def _request(spec: GameSpec) -> str:
    lock = f"{spec.lock_count} locked path(s), each opened by a key object that can be crafted before it"
    return (
        f"Theme: {spec.theme.strip()}\n"
        f"Game name: {spec.name} (title: {spec.display_title})\n"
        f"Size: exactly {spec.places} place(s) with {', '.join(map(str, spec.place_sizes))} areas "
        f"({spec.areas} in all), "
        f"area levels 1 to {spec.max_level} rising away from the spawn; about {spec.objects} object types; "
        f"about {spec.npcs} NPC types (at least a friendly guide, a merchant, a boss enemy with role 'boss' "
        f"and unique true, and ordinary enemies of each level); {lock}; recipe chains up to "
        f"{spec.craft_depth} steps deep."
    )


def entities_prompt(spec: GameSpec, feedback: list[Problem]) -> Messages:
    base = GAMES_DIR / "mossfall"
    chart = entity_statistics(base)
    text = f"""Design the entities of a new game: its world.json.

{_request(spec)}

The file must validate against this JSON Schema (unknown fields are errors):
{json.dumps(json_schema(WorldSpec), separators=(",", ":"))}

Rules the loader checks besides the schema:
- Names of areas, objects and NPCs are lower_snake_case, unique across all three, and never end in _<number>.
- Every reference resolves: recipe ingredients and stations, drops and stock, area objects and npcs, graph
  connections, the spawn area, keys of locked connections (an object with uses ["unlock"]).
- Use graph mode "fixed" and list every connection; every area must be reachable from the spawn.
- Exactly one object of category "currency" (merchants need it). Stations are never carried.
- Recipe ingredients are plain carried objects (not containers or writables); stations must be category "station".
- Text is printable ASCII.
- game.verbs may switch on optional verbs of the engine ({", ".join(OPTIONAL_VERBS)}) and game.step_rules
  optional dynamics ({", ".join(OPTIONAL_DYNAMICS)}). Do not invent names there.

Balance (the player starts with 100 health, attack 10, two hands): an enemy of level L has about 16*L health
and 4*L+1 attack; a boss about 40*L+30 health; weapons of level L add about 5*L+4 attack; armor adds 1 to 2*L+2
defense; the first container (capacity 16) and the first weapon should lie in or near the spawn area. Put the
things a recipe needs, and its station, where the player can reach them before they are needed.

An excerpt of the base game, to show the format and the tone:
{json.dumps(_base_excerpt(), separators=(",", ":"))}

Analysis chart of the base game's entity distribution (shape yours for the size asked, with object levels spread
evenly over 1..{spec.max_level}):
{json.dumps(chart, separators=(",", ":"))}

Reply with the whole world.json in one ```json block, and nothing else."""
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
    if feedback:
        messages.append({"role": "user", "content": repair_note(feedback, "world.json")})
    return messages


def world_digest(world: dict[str, Any]) -> str:
    """The entities of a world.json in a few lines per kind (what the rule and quest prompts refer to)."""
    lines = [f"spawn: {world.get('spawn')}", "areas (name, level, place):"]
    for p in world.get("places", []):
        for a in p.get("areas", []):
            lines.append(f"  {a.get('name')} L{a.get('level', 1)} ({p.get('name')})")
    locked = [c for c in (world.get("graph") or {}).get("connections", []) if c.get("locked")]
    lines.append("locked paths: " + (", ".join(f"{c['a']}-{c['b']} (key {c.get('key')})" for c in locked) or "none"))
    lines.append("objects (name, category, level, recipe):")
    for o in world.get("objects", []):
        r = o.get("recipe")
        recipe = ""
        if r:
            ings = " + ".join(f"{n} {i}" for i, n in r.get("ingredients", {}).items())
            recipe = f" <- {ings}" + (f" at {', '.join(r.get('stations', []))}" if r.get("stations") else "")
        lines.append(f"  {o.get('name')} {o.get('category')} L{o.get('level', 1)}{recipe}")
    lines.append("NPCs (name, kind, role, level):")
    for n in world.get("npcs", []):
        lines.append(f"  {n.get('name')} {n.get('kind')} {n.get('role', 'fighter')} L{n.get('level', 1)}")
    return "\n".join(lines)


def _example_rules() -> str:
    from odyssey_env.steprules import crafting_momentum
    from odyssey_env.verbs import food

    step = inspect.getsource(crafting_momentum.CraftingMomentum)
    return inspect.getsource(food) + "\n\n# a step rule, from odyssey_env/steprules/crafting_momentum.py\n" + step


def _allow_list() -> str:
    lines = []
    for module, names in ALLOWED_IMPORTS.items():
        if module == "math":
            lines.append("  import math (or from math import ...)")
        else:
            lines.append(f"  from {module} import {', '.join(sorted(names))}")
    return "\n".join(lines)


#: The engine's own core step rules in run order (every game has them), for the rules prompt.
BASE_STEP_ORDER = ", ".join(n for n in ENGINE_STEP_ORDER if n in core_step_rules())

RULE_API = (
    """The rule API (odyssey_env.rules):
- An action rule is a class decorated with @action_rule, deriving from ActionRule, with: verb (new lowercase
  words, not a verb the game has), params (a tuple of (label, kind) with kind one of object, npc, area,
  container, writable, amount, text), description (one sentence: agents read it), apply(self, turn, *args) and
  candidates(self, turn). apply changes the state; when the state does not allow the command it calls
  turn.fail(message) and returns (corrective feedback). candidates yields every command apply would accept
  right now, and only those (valid actions must be sound and complete). Optionally facts(self, game) yields
  Fact(topic, question, answer, distractors) for world-knowledge QA.
- turn.agent: id, area, hp, max_hp, attack, defense, level, xp, hands {handle: count}, equipment {slot: handle};
  turn.area: name, level, objects {handle: count}, npcs [handles], exits {area: Exit(locked, key)};
  turn.state: step, minute, areas, npcs {handle: Npc(type, area, hp, max_hp, attack, defense, inventory, coins)},
  instances {handle: Instance(type, contents, text)}, agents, rule_data; turn.game: objects {name: ObjectType},
  npcs {name: NpcType}, areas, currency; turn.rng (the episode's random.Random); turn.say(text);
  turn.fail(text); turn.emit(kind, **data) (events: quests, rewards and metrics read them).
- A step rule is a class decorated with @step_rule, deriving from StepRule, with name, after and/or before
  (tuples naming the step rules it must run after / before; the base rules run in this order:
  """
    + BASE_STEP_ORDER
    + """; a rule runs as early as these allow,
  so name what it must follow, e.g. after = ("respawn",); there is no priority), description, and
  apply(self, engine), run once per step after the actions: engine.state, engine.game, engine.rng,
  engine.events (this step's: ev.kind, ev.agent, ev.data),
  engine.say(agent_id, text), engine.emit(kind, agent_id, **data). Tunable numbers go in a nested frozen
  @dataclass class Params (read as self.settings.<name>).
- Rules keep no state on themselves: memory goes in engine.state.rule_data.setdefault(self.name, {...}) (or
  turn.state.rule_data), holding only JSON values (dicts, lists, strings, numbers).
- A quest predicate is a function decorated with @predicate("name"), called as fn(engine, agent, **args) and
  returning a bool.
- Randomness only from turn.rng / engine.rng (a seed must reproduce its game). Objects held: hands map handles
  to counts; containers and writables are instances with names like small_bag_3.
- A new verb must come up in ordinary play (a random player must see it among the valid actions and succeed
  with it); a new step rule must change something (say, emit or change the state) in ordinary play."""
)


def rules_prompt(spec: GameSpec, world: dict[str, Any], feedback: list[Problem]) -> Messages:
    text = f"""Write the rules.py of the game below: exactly {spec.action_rules} new action rule(s) (new verbs) and
exactly {spec.step_rules} new step rule(s), in the spirit of the theme, using its objects, NPCs and areas.

{_request(spec)}

The game's entities:
{world_digest(world)}

{RULE_API}

The file is checked statically before it ever runs. Allowed imports, and nothing else:
{_allow_list()}
Not allowed: any other import (os, sys, random, importlib...), builtins such as open, eval, exec, compile,
getattr, setattr, globals, vars, type, id, hash, print; names or strings with double underscores; private
attributes (._x); global/nonlocal; code at module level other than imports, definitions and constants.

Two rules of the engine, as examples of the style:
```python
{_example_rules()}
```

Reply with the whole rules.py in one ```python block."""
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
    if feedback:
        messages.append({"role": "user", "content": repair_note(feedback, "rules.py")})
    return messages


def _language_summary() -> str:
    """The rule language's conditions and effects, one line each, from the language's own dataclasses."""
    from odyssey_env.rulelang import spec as rl

    def line(cls: type) -> str:
        fields = [f.name for f in dataclasses.fields(cls)]
        tag = rl.JSON_KEYS.get(fields[0], fields[0])
        tag = {"if_": "if"}.get(tag, tag)
        rest = ", ".join({"otherwise": "else"}.get(f, f) for f in fields[1:])
        doc = (inspect.getdoc(cls) or "").split("\n")[0]
        return f"  {tag}" + (f" (+ {rest})" if rest else "") + f": {doc}"

    return (
        "Conditions (one key tells them apart):\n"
        + "\n".join(line(c) for c in rl.CONDITIONS)
        + "\nEffects:\n"
        + "\n".join(line(e) for e in rl.EFFECTS)
    )


#: The example rule file of docs/game-format.md ("Rules as data"), for the tiny game's objects.
RULE_FILE_EXAMPLE = {
    "format": 1,
    "vars": [{"name": "whittled", "kind": "counter", "max": 1000}],
    "verbs": [
        {
            "verb": "whittle",
            "description": "Carve a stick I carry into a plank, with a club in hand.",
            "slots": [{"name": "wood", "domain": "carried", "types": ["stick"]}],
            "requires": [{"check": {"holds": "club"}, "refuse": "I need a club in hand to whittle {wood}."}],
            "effects": [
                {"transform": "$wood", "into": "plank"},
                {"add": "whittled"},
                {"say": "I whittle {wood} into a plank ({var.whittled} so far)."},
            ],
            "facts": [
                {
                    "topic": "crafting",
                    "question": "What does whittling a stick make?",
                    "answer": "a plank",
                    "distractors": ["a club", "nothing"],
                }
            ],
        }
    ],
    "step_rules": [
        {
            "name": "cold_night",
            "description": "At night the cold bites whoever holds no torch.",
            "after": ["day_night"],
            "trigger": {"every": 2, "hours": [20, 6]},
            "when": {"none_of": [{"holds": "torch"}]},
            "effects": [{"change": "hp", "by": -1}, {"say": "The cold bites."}],
        }
    ],
    "predicates": [{"name": "whittled_many", "check": {"counter": "whittled", "at_least": 3}}],
}


def rule_file_prompt(spec: GameSpec, world: dict[str, Any], feedback: list[Problem]) -> Messages:
    """The rules stage without code: the model writes ``rules.json`` in the rule language (data only)."""
    from odyssey_env.rulelang import json_schema as rule_schema
    from odyssey_env.rules import BASE_VERBS

    text = f"""Write the rules.json of the game below, in the engine's rule language (data, not code): exactly
{spec.action_rules} new verb(s) and exactly {spec.step_rules} new step rule(s), in the spirit of the theme, using its
objects, NPCs and areas.

{_request(spec)}

The game's entities:
{world_digest(world)}

The file must validate against this JSON Schema (unknown fields are errors):
{json.dumps(rule_schema(), separators=(",", ":"))}

{_language_summary()}

How it works: a verb's "slots" take their values from a domain (held, carried, worn, ground, near, npc, exit,
area, amount, text), narrowed by "types"; each of "requires" must hold ("check"), else the command fails saying
"refuse"; then the "effects" run and the verb records an event named after it. A step rule runs every step for
each item of its "scope" (agent, area, npc, object) when its "trigger" (every, offset, hours, enter, event,
match, becomes, chance) and "when" hold. Values are literal names or references ($here, $<slot>, $npc,
$object, $event.<field>); texts are templates ({{<slot>}}, {{here}}, {{npc}}, {{object}}, {{step}},
{{event.<field>}}, {{var.<counter>}}). Variables ("vars": flag, counter with max, set) are kept per agent,
area or globally. "produce" and "place" need a "cap", "spawn_npc" a "max_alive".

The engine's vocabulary: its verbs are {", ".join(BASE_VERBS)} and the optional {", ".join(OPTIONAL_VERBS)};
a new verb must have another name (its first word too). Every step rule needs "after" or "before" naming step
rules; the engine's run in this order: {BASE_STEP_ORDER}; for example "after": ["respawn"].
A new verb must come up in ordinary play (a random player must see it among the valid actions and succeed
with it); a new step rule must change something (say, tell, place, change a stat or a variable) in ordinary play.

An example, for another game:
```json
{json.dumps(RULE_FILE_EXAMPLE, separators=(",", ":"))}
```

Reply with the whole rules.json in one ```json block."""
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
    if feedback:
        messages.append({"role": "user", "content": repair_note(feedback, "rules.json")})
    return messages


def quest_prompt(
    spec: GameSpec,
    world: dict[str, Any],
    predicates: list[tuple[str, str]],
    feedback: list[Problem],
    *,
    code: bool = True,
) -> Messages:
    if spec.branching > 1:
        shape = (
            f"Each chapter is a DAG: a first stage, then {spec.branching} parallel chains of stages, then a stage "
            'that joins them. Give every stage an explicit "requires": [stage ids] (the first stage of the '
            "first chapter requires [])."
        )
    else:
        shape = 'Chapters are linear: leave out "requires" and each stage follows the previous one.'
    known = "\n".join(f"  {name}: {doc}" for name, doc in predicates) or "  none"
    more = (
        "You may add predicates in a ```python block (the same rules as rules.py; it is appended to it). "
        if code
        else ""
    )
    reply_more = " (and the optional ```python block of new predicates)" if code else " (no code)"
    text = f"""Write the quest.json of the game below.

{_request(spec)}

The game's entities:
{world_digest(world)}

The main quest has exactly {spec.chapters} chapter(s) of exactly {spec.stages} stage(s) each. {shape}
A stage is {{"id", "title", "hint", "done": condition, optional "requires", "spawn": [{{"npc", "area"}}] (NPCs
brought in when the stage opens: the boss), "place": [{{"object", "area", "amount"}}], "on_open", "on_complete"}}.
Put a friendly guide in "guide": {{"npc", "area"}}. The last stage defeats the boss (spawned by its stage).
Every stage must be achievable in this world, in order: name only existing objects, NPCs and areas, and ask
only for objects that can be had (lying in an area, sold, crafted from obtainable things, or dropped).
Include "side_quests": {{"enabled": true}} and "expansion": {{"enabled": true, "max_expansions": 1}}.

Conditions use only this vocabulary:
{describe_vocabulary()}

Predicates registered by the game's rules:
{known}
{more}Every
{{"type": "predicate"}} condition must carry "plan": a list of vocabulary conditions (not predicates) which,
done in order, make the predicate hold (a bare "did" of a new verb's event needs none). A planner follows
that plan to prove the quest can be completed.

Reply with quest.json in one ```json block{reply_more}."""
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
    if feedback:
        messages.append({"role": "user", "content": repair_note(feedback, "quest.json")})
    return messages
