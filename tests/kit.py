"""The engine test kit: one harness and a few helpers that every game's tests share.

In the spirit of PettingZoo's reusable test kit and Gymnasium's env checker, a game's tests do not rebuild
their own driver: they take :class:`Harness`, an engine on a game at a seed driven by hand (place things,
issue commands, read the feedback and the events), and say only what their game does differently: through
class attributes (:attr:`Harness.world_events`, :attr:`Harness.refusal_events`, :attr:`Harness.refusal_keeps`,
:attr:`Harness.refusal_unlisted`), and in a thin subclass for conveniences only that game has (a lamp's fuel,
a law's text). Everything goes through the public engine API (``Engine.step``, ``Engine.valid_actions``, the
world helpers), never internal caches.

Besides the harness: :class:`Scripted` (an RNG whose first rolls a test chooses), :func:`game_copy` and
:func:`load_with_rules` (a copy of a game whose data a test edits, loaded with the shipped rules module),
:func:`random_walk` and :func:`subprocess_digest` (seeded walks and the cross-process determinism check),
:func:`resolve` (fill ``{type}`` in a scripted command), :func:`conditions`, :func:`obtainable` and
:func:`fixed_supply` (walks over quest data).

Import it as ``kit`` (``tests/`` is on ``sys.path`` under pytest, as for ``env.conftest``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar
from unittest import mock

import odyssey_env.game
from odyssey_env import load_game
from odyssey_env.engine import Engine
from odyssey_env.env import OdysseyEnv
from odyssey_env.game import GAMES_DIR, Game
from odyssey_env.quests.conditions import owned
from odyssey_env.quests.spec import Condition
from odyssey_env.state import Area, Npc
from odyssey_env.turn import Event, Outcome
from odyssey_env.world import add, make_objects
from odyssey_env.worldgen import spawn_npc

TESTS = Path(__file__).parent
PLAYER = "player"
#: Events the base step rules report on their own (an enemy's blow, a level gained), whatever the command was.
WORLD_EVENTS = frozenset(
    {"agent_hit", "agent_ambushed", "agent_died", "level_up", "npc_wandered", "npc_respawned", "npc_spawned"}
)


#: Rule parameters that switch off the engine's surprises (ambushes, midnight spawns), so that a test of
#: some other rule sees only that rule's effect.
QUIET: dict[str, dict[str, Any]] = {"ambush": {"chance_by_level": [0, 0, 0, 0, 0]}, "night_spawn": {"chance": 0.0}}


class Scripted(random.Random):
    """A seeded RNG whose ``random()`` first returns scripted values, then 0.999 (no ambush, no spawn, no theft):
    a test forces exactly the rolls it talks about."""

    def __init__(self, values: tuple[float, ...] | list[float] = (), seed: int = 0):
        super().__init__(seed)
        self.values = list(values)

    def random(self) -> float:
        return self.values.pop(0) if self.values else 0.999


def engine_on(game: str | Path | Game, seed: int = 0, *, rng: random.Random | None = None, **engine_kw: Any) -> Engine:
    """An engine on ``game`` (a name, a folder or a loaded game) at ``seed``; ``rng`` replaces the episode RNG;
    the other keywords go to :class:`Engine` (``agents``, ``options``)."""
    engine = Engine(game if isinstance(game, Game) else load_game(game), seed, **engine_kw)
    if rng is not None:
        engine.rng = rng
    return engine


class Harness:
    """Drive one engine by hand: place things, issue commands, read feedback.

    A game whose step rules report events of their own, or whose refusals promise more than the engine's, says
    so in a subclass through the class attributes below; the methods stay the same for every game."""

    #: Event kinds the world reports on its own, whatever the command: :meth:`emitted` leaves them out, and a
    #: refused command may coincide with them.
    world_events: ClassVar[frozenset[str]] = WORLD_EVENTS
    #: The event kinds a refused command may coincide with, where a game's world does more than
    #: :attr:`world_events` says (None: those).
    refusal_events: ClassVar[frozenset[str] | None] = None
    #: Where set, the one promise a refusal makes about events: it reports none of these kinds (its verbs' own),
    #: whatever the world reports beside them.
    verb_events: ClassVar[frozenset[str] | None] = None
    #: Sections of ``WorldState.to_dict()`` a refused command must leave exactly as they were.
    refusal_keeps: ClassVar[tuple[str, ...]] = ()
    #: Whether a refused command must be missing from the valid actions listed after it.
    refusal_unlisted: ClassVar[bool] = False

    def __init__(self, engine: Engine):
        self.engine = engine
        self.outcome: Outcome | None = None

    # ----------------------------------------------------------- views
    @property
    def state(self):
        return self.engine.state

    @property
    def game(self) -> Game:
        return self.engine.game

    @property
    def agent(self):
        return self.engine.state.agents[PLAYER]

    @property
    def area(self) -> Area:
        return self.state.areas[self.agent.area]

    @property
    def feedback(self) -> str:
        return "\n".join(self.state.feedback[PLAYER])

    def carried(self, type_name: str) -> int:
        """Units of ``type_name`` I have (hands, containers, worn), as the quest conditions count them."""
        return owned(self.engine, self.agent, type_name)

    # ----------------------------------------------------------- setup
    def goto(self, area: str, clear: bool = True) -> None:
        """Stand in ``area``; ``clear`` empties it first (:meth:`clear`)."""
        self.agent.area = area
        if clear:
            self.clear()

    def clear(self, area: str | None = None, *, objects: bool = True) -> None:
        """Remove every NPC and (unless ``objects`` is false) every object from an area (the agent's by default)."""
        target = self.state.areas[area or self.agent.area]
        if objects:
            target.objects.clear()
        for handle in list(target.npcs):
            del self.state.npcs[handle]
        target.npcs.clear()

    def clear_everywhere(self, *, objects: bool = True, npcs: Callable[[Npc], bool] = lambda npc: True) -> None:
        """:meth:`clear` every area, removing only the NPCs ``npcs`` picks."""
        for area in self.state.areas.values():
            if objects:
                area.objects.clear()
            for handle in list(area.npcs):
                if npcs(self.state.npcs[handle]):
                    area.npcs.remove(handle)
                    del self.state.npcs[handle]

    def _make(self, type_name: str, n: int, text: str) -> list[tuple[str, int]]:
        pieces = make_objects(self.game, self.state, type_name, n)
        if text:
            for handle, _ in pieces:
                self.state.instances[handle].text = text
        return pieces

    def put(self, type_name: str, n: int = 1, area: str | None = None, text: str = "") -> list[str]:
        """Create objects on the ground; returns their handles (instance names for bags and paper). ``text``
        is written on each instance."""
        target = self.state.areas[area or self.agent.area]
        pieces = self._make(type_name, n, text)
        for handle, k in pieces:
            add(target.objects, handle, k)
        return [h for h, _ in pieces]

    def hold(self, type_name: str, n: int = 1, text: str = "") -> list[str]:
        """Create objects directly in the agent's hands."""
        pieces = self._make(type_name, n, text)
        for handle, k in pieces:
            add(self.agent.hands, handle, k)
        return [h for h, _ in pieces]

    def put_one(self, type_name: str, n: int = 1, area: str | None = None, text: str = "") -> str:
        """:meth:`put` of what makes one handle (one instance, or a stack): that handle."""
        (handle,) = self.put(type_name, n, area, text)
        return handle

    def hold_one(self, type_name: str, n: int = 1, text: str = "") -> str:
        """:meth:`hold` of what makes one handle (one instance, or a stack): that handle."""
        (handle,) = self.hold(type_name, n, text)
        return handle

    def wear(self, type_name: str) -> str:
        """Create an armor piece or a container and equip it directly."""
        (handle,) = [h for h, _ in make_objects(self.game, self.state, type_name, 1)]
        slot = self.game.objects[type_name].equip_slot
        assert slot is not None
        self.agent.equipment[slot] = handle
        return handle

    def stash(self, container: str, type_name: str, n: int = 1) -> None:
        """Put objects straight into a container instance."""
        for handle, k in make_objects(self.game, self.state, type_name, n):
            add(self.state.instances[container].contents, handle, k)

    def npc(self, type_name: str, area: str | None = None) -> Npc:
        return spawn_npc(self.game, self.state, self.game.npcs[type_name], area or self.agent.area)

    # ----------------------------------------------------------- acting
    def do(self, command) -> Outcome:
        self.outcome = self.engine.step({PLAYER: command})[PLAYER]
        return self.outcome

    def ok(self, command: str) -> str:
        """Run a command that must succeed; return its feedback."""
        out = self.do(command)
        assert not out.invalid and not out.failed, (command, self.feedback)
        return self.feedback

    def fails(self, command: str, message: str) -> str:
        """Run a command that must be refused by the state (not invalid) with ``message`` in the feedback.

        A refused command takes its step and changes nothing, so it reports nothing (the world may still report
        its own doings, :meth:`caused`); a game may promise more (:attr:`refusal_keeps`, :attr:`refusal_unlisted`)."""
        step = self.state.step
        before = self.state.to_dict() if self.refusal_keeps else None
        out = self.do(command)
        assert out.failed and not out.invalid, (command, self.feedback)
        assert self.state.step == step + 1
        assert message in self.feedback, (command, self.feedback)
        assert not self.caused(out.events), (command, out.events)
        if before is not None:
            after = self.state.to_dict()
            for key in self.refusal_keeps:
                assert after[key] == before[key], (command, key)
        if self.refusal_unlisted:
            assert command not in self.listed(), command
        return self.feedback

    def wait(self, n: int) -> str:
        """Wait ``n`` steps, each of which must succeed; everything I was told meanwhile."""
        return "\n".join(self.ok("wait") for _ in range(n))

    def idle(self, n: int) -> list[Event]:
        """Wait ``n`` steps whatever becomes of them; every event of those steps, in order."""
        events: list[Event] = []
        for _ in range(n):
            events += self.do("wait").events
        return events

    # ----------------------------------------------------------- reading
    def listed(self, verb: str | None = None) -> list[str]:
        """The valid actions of ``verb`` (every valid action when None), as the engine lists them."""
        va = self.engine.valid_actions(PLAYER)
        return va.get(verb, []) if verb else [c for cmds in va.values() for c in cmds]

    def valid(self) -> list[str]:
        return self.listed()

    def caused(self, events: list[Event]) -> list[Event]:
        """Those of a refused command's ``events`` that the world does not report on its own
        (:attr:`refusal_events`, :attr:`verb_events`): the ones the command itself must not have caused."""
        if self.verb_events is not None:
            return [e for e in events if e.kind in self.verb_events]
        quiet = self.world_events if self.refusal_events is None else self.refusal_events
        return [e for e in events if e.kind not in quiet]

    def events(self, kind: str) -> list[dict]:
        assert self.outcome is not None
        return [e.data for e in self.outcome.events if e.kind == kind]

    def emitted(self) -> list[tuple[str, dict]]:
        """``(kind, data)`` of every event of the last step but the world's own (:attr:`world_events`), in order."""
        assert self.outcome is not None
        return [(e.kind, e.data) for e in self.outcome.events if e.kind not in self.world_events]

    def kinds(self) -> list[str]:
        """The kinds of :meth:`emitted`, in order."""
        return [kind for kind, _ in self.emitted()]


# --------------------------------------------------------------------------- edited copies of a game
def game_copy(
    source: str | Path,
    folder: Path,
    change: Callable[[dict[str, Any]], None] | None = None,
    *,
    change_quest: Callable[[dict[str, Any]], None] | None = None,
    rules: ModuleType | None = None,
    trust: bool = True,
) -> Game:
    """The game of ``source`` (a shipped game's name or a folder) copied to ``folder`` (which must not exist),
    its world data edited by ``change`` and its quest by ``change_quest``, loaded afresh.

    ``rules``: the shipped rules module to load in place of the copy's ``rules.py``: the copy would import as a
    module of its own, and a test of the rules must run the one that ships (the one ``tools/mutation.py``
    mutates, whose parameter checks must be the ones that refuse a bad copy)."""
    shutil.copytree(
        GAMES_DIR / source if isinstance(source, str) else source,
        folder,
        ignore=shutil.ignore_patterns("__pycache__", "__init__.py"),  # a game folder's only code is rules.py
    )
    for name, edit in (("world.json", change), ("quest.json", change_quest)):
        if edit is not None:
            data = json.loads((folder / name).read_text(encoding="utf-8"))
            edit(data)
            (folder / name).write_text(json.dumps(data), encoding="utf-8")
    return load_with_rules(folder, rules, trust=trust)


_copies = itertools.count()


def variant(
    source: str | Path,
    root: Path,
    params: dict[str, dict[str, Any]] | None = None,
    *,
    change: Callable[[dict[str, Any]], None] | None = None,
    rules: ModuleType | None = None,
) -> Game:
    """A copy of game ``source`` in a new folder under ``root``, each rule named in ``params`` taking those
    parameters over the game's own (after ``change`` edited the world data), loaded afresh (``rules``: as
    for :func:`game_copy`)."""

    def edit(world: dict[str, Any]) -> None:
        if change is not None:
            change(world)
        own = world["game"].setdefault("params", {})
        for rule, values in (params or {}).items():
            own.setdefault(rule, {}).update(values)

    return game_copy(source, root / f"{Path(source).name}_{next(_copies)}", edit, rules=rules)


def load_with_rules(folder: Path, rules: ModuleType | None, *, trust: bool = True) -> Game:
    """The game in ``folder``, loaded afresh; with ``rules``, that module stands for the folder's ``rules.py``
    (see :func:`game_copy`)."""
    if rules is None:
        return load_game(folder, cache=False, trust=trust)
    with mock.patch.object(odyssey_env.game, "_compile_rules", lambda path, code: rules):
        return load_game(folder, cache=False, trust=trust)


# --------------------------------------------------------------------------- walks and determinism
def random_walk(
    game: str, seed: int, steps: int, *, tutorial: bool = True, check: bool = False
) -> tuple[list[str], dict, OdysseyEnv]:
    """A uniformly random valid command every step (verb first, as the paper's Random agent), until the episode
    ends; every observation, the last info and the env. ``check``: every command must succeed."""
    rng = random.Random(f"{game}-test:{seed}")
    env = OdysseyEnv(game, tutorial=tutorial, valid_actions=True)
    obs, info = env.reset(seed=seed)
    seen = [obs]
    for _ in range(steps):
        valid = info["valid_actions"]
        verb = rng.choice(sorted(valid))
        obs, _, terminated, _, info = env.step(rng.choice(valid[verb]))
        if check:
            assert not info["invalid_action"] and not info["action_failed"], obs
        seen.append(obs)
        if terminated:
            break
    return seen, info, env


def walk_digest(game: str, seed: int, steps: int, *, check: bool = False) -> str:
    """The sha256 of the observations of :func:`random_walk` (tutorial on)."""
    seen, _, _ = random_walk(game, seed, steps, check=check)
    return hashlib.sha256("\n".join(seen).encode()).hexdigest()


def in_fresh_process(code: str, *args: str, hash_seed: str, timeout: float | None = None) -> str:
    """Run ``code`` in a fresh interpreter with ``PYTHONHASHSEED=hash_seed`` and this folder importable (``kit``,
    ``env``, ``games``); its output, stripped."""
    path = os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=TESTS.parent,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": path},
    )
    return done.stdout.strip()


_DIGEST = """
import hashlib, random, sys
from odyssey_env.env import OdysseyEnv
game, seed, steps, pick_seed, order = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
env = OdysseyEnv(game, valid_actions=True)
obs, info = env.reset(seed=seed)
pick = random.Random(pick_seed)
digest = hashlib.sha256(obs.encode())
for _ in range(steps):
    va = info["valid_actions"]
    action = pick.choice(va[pick.choice(sorted(va) if order == "sorted" else list(va))])
    obs, reward, terminated, truncated, info = env.step(action)
    digest.update(f"{action}\\x00{obs}\\x00{reward}\\x00{info['events']}".encode())
print(digest.hexdigest())
"""


def subprocess_digest(
    game: str | Path, seed: int, steps: int, hash_seed: str, *, pick_seed: int | None = None, sort: bool = True
) -> str:
    """The digest of a seeded walk over the valid actions (commands, observations, rewards, events), computed in
    a fresh interpreter with ``PYTHONHASHSEED=hash_seed``: it must depend on the seeds and on nothing else.
    ``pick_seed`` seeds the choice of commands (``seed`` by default); ``sort``: pick the verb among the sorted
    verbs rather than in listing order."""
    return in_fresh_process(
        _DIGEST,
        str(game),
        str(seed),
        str(steps),
        str(seed if pick_seed is None else pick_seed),
        "sorted" if sort else "listed",
        hash_seed=hash_seed,
        timeout=120,
    )


# --------------------------------------------------------------------------- scripted play
def resolve(env: OdysseyEnv, command: str) -> str:
    """Fill ``{type}`` with the handle of an instance (or the type name of a stackable) I hold, wear, carry or
    see."""
    state = env.engine.state
    agent = state.agents[PLAYER]
    pool = [*agent.hands, *agent.equipment.values()]
    for handle in list(pool):
        inst = state.instances.get(handle)
        if inst is not None:
            pool += list(inst.contents)
    pool += [*state.areas[agent.area].objects, *state.areas[agent.area].npcs]

    def handle_of(m: re.Match) -> str:
        return next((h for h in pool if re.fullmatch(rf"{m.group(1)}(_\d+)?", h)), m.group(1))

    return re.sub(r"\{(\w+)\}", handle_of, command)


# --------------------------------------------------------------------------- quest data
def conditions(cond: Condition, *, plans: bool = True) -> Iterator[Condition]:
    """``cond`` and every condition inside it (and, with ``plans``, inside its predicates' plans)."""
    yield cond
    for sub in (*cond.conditions, *cond.plan) if plans else cond.conditions:
        yield from conditions(sub, plans=plans)


def obtainable(game: Game, fixed: set[str], name: str, seen: frozenset = frozenset()) -> bool:
    """Whether ``name`` comes from the ``fixed`` sources or from a recipe over them whose stations stand somewhere."""
    if name in fixed:
        return True
    recipe = game.objects[name].recipe
    if recipe is None or name in seen:
        return False
    stations = all(any(s in a.objects for a in game.areas.values()) for s in recipe.stations)
    return stations and all(obtainable(game, fixed, i, seen | {name}) for i in recipe.ingredients)


def fixed_supply(game: Game) -> tuple[set[str], set[str]]:
    """What a game supplies without its random scatter: the portable objects its areas and stages place, the
    stock and drops of the NPCs that stand there or that stages spawn (and the guide), and everything a recipe
    makes from those at stations so placed; with those NPC types."""
    present = {o for a in game.areas.values() for o in a.objects}
    npcs = {n for a in game.areas.values() for n in a.npcs} | {game.quest.main.guide.npc}
    for stage in game.quest.stages():
        present |= {p.object for p in stage.place}
        npcs |= {s.npc for s in stage.spawn}
    stations = {o for o in present if game.objects[o].category == "station"}
    have = {o for o in present if game.objects[o].portable}
    for n in npcs:
        have |= set(game.npcs[n].stock) | set(game.npcs[n].drops)
    grown = True
    while grown:
        grown = False
        for t in game.spec.objects:
            r = t.recipe
            if t.name not in have and r and set(r.ingredients) <= have and set(r.stations) <= stations:
                have.add(t.name)
                grown = True
    return have, npcs


def bwrap_works() -> bool:
    """Whether model-written code can be validated here: only under bubblewrap (``.ci/run`` installs it)."""
    from odyssey_gen.validate import sandbox

    try:
        sandbox.require_sandbox()
    except sandbox.SandboxUnavailable:
        return False
    return True
