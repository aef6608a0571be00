"""Numbers from an odyssey state for RL policies: hashed words, a state vector, per-slot action features.

Everything here is a pure function of the observation text or the engine state, deterministic in any
process (hashes are CRC-32, never Python's salted ``hash``), and sized by the game alone, so a policy
trained on one seed sees the same layout on every other. The wrappers in ``odyssey_env.wrappers`` put
these into Gymnasium spaces; the PettingZoo face can use them per agent the same way.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from odyssey_env.quests import main_quest

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.game import Game
    from odyssey_env.state import Agent, WorldState

__all__ = ["StateFeatures", "TokenHasher", "slot_features"]

_TOKEN = re.compile(r"[a-z][a-z0-9_]*|[0-9]+")
_INSTANCE = re.compile(r"_[0-9]+$")
_MINUTES_PER_DAY = 24 * 60


class TokenHasher:
    """Words of a text to buckets ``0..dim-1``: lower-cased, instance numbers stripped, CRC-32 hashed.

    ``cave_stalker_6`` and ``cave_stalker_7`` are one word (``cave_stalker``): what a policy can learn
    about one stalker holds for the next. Bare numbers (the clock, health, amounts) are dropped unless
    ``numbers`` is set; the state vector carries the numbers that matter, scaled. Token -> bucket is
    memoised (a game has a few hundred words), within a bound so no text can grow it without limit.
    """

    _MEMO_LIMIT = 1 << 16

    def __init__(self, dim: int, *, numbers: bool = False):
        if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
            raise ValueError(f"the hash size must be a positive integer, got {dim!r}")
        self.dim = int(dim)
        self.numbers = bool(numbers)
        self._words: dict[str, int | None] = {}  # raw word -> bucket (None: dropped)
        self._texts: dict[str, tuple[int, ...]] = {}  # short texts (commands) -> buckets

    def tokens(self, text: str) -> list[str]:
        """The words of ``text`` as they are hashed."""
        out = []
        for token in _TOKEN.findall(text.lower()):
            if not token[0].isdigit():
                out.append(_INSTANCE.sub("", token))
            elif self.numbers:
                out.append(token)
        return out

    def buckets(self, text: str) -> list[int]:
        """The bucket of every word of ``text``, in order, repeats kept."""
        memo = self._words
        out = []
        for raw in _TOKEN.findall(text.lower()):
            if raw in memo:
                bucket = memo[raw]
            else:
                if len(memo) >= self._MEMO_LIMIT:
                    memo.clear()
                bucket = memo[raw] = self._bucket(raw)
            if bucket is not None:
                out.append(bucket)
        return out

    def command_buckets(self, command: str) -> tuple[int, ...]:
        """:meth:`buckets` of a short text that recurs (a command), memoised whole."""
        hit = self._texts.get(command)
        if hit is None:
            if len(self._texts) >= self._MEMO_LIMIT:
                self._texts.clear()
            hit = self._texts[command] = tuple(self.buckets(command))
        return hit

    def counts(self, text: str) -> np.ndarray:
        """``log1p`` of how often each bucket occurs in ``text``: float32, shape ``(dim,)``."""
        counts = np.bincount(np.asarray(self.buckets(text), dtype=np.intp), minlength=self.dim)
        return np.log1p(counts, dtype=np.float32)

    def _bucket(self, raw: str) -> int | None:
        if raw[0].isdigit():
            if not self.numbers:
                return None
            token = raw
        else:
            token = _INSTANCE.sub("", raw)
        return zlib.crc32(token.encode("utf-8")) % self.dim


def slot_features(
    commands: Sequence[str], verbs: Sequence[str], verb_index: Mapping[str, int], hasher: TokenHasher, size: int
) -> np.ndarray:
    """One row per action slot: the slot's verb one-hot, then its argument words hashed (0/1).

    ``verbs[i]`` is the verb of ``commands[i]``; rows past ``len(commands)`` (padding) stay zero.
    The words after the verb are hashed, so ``enter smithy_yard`` and ``sell 3 iron_bar`` say where and
    what, not only which verb: with a slot's meaning changing every step, that is what lets a policy
    over slots generalise.
    """
    n_verbs = len(verb_index)
    out = np.zeros((size, n_verbs + hasher.dim), dtype=np.float32)
    rows: list[int] = []
    columns: list[int] = []
    for row, (command, verb) in enumerate(zip(commands, verbs, strict=True)):
        column = verb_index.get(verb)
        if column is not None:
            rows.append(row)
            columns.append(column)
        words = hasher.command_buckets(command[len(verb) :] if command.lower().startswith(verb) else command)
        rows.extend([row] * len(words))
        columns.extend([n_verbs + b for b in words])
    out[rows, columns] = 1.0
    return out


class StateFeatures:
    """The structured state vector of one agent, laid out by the game (see :attr:`names`).

    Blocks, in order: the area (one-hot over the game's areas, plus one for any other: the tutorial
    room, places online expansion adds), the area's level; what the agent carries (hands, equipment
    and the contents of worn containers; ``log1p`` counts per object type, plus one for types the game
    does not list); what lies in the area and who is there (``log1p`` counts per object and NPC type);
    health (fraction and ``log1p``), attack, defense, level, experience (``log1p``), deaths; whether
    it is fighting, defending, in the tutorial; main-quest progress (stages done / total, done);
    the time of day (sine and cosine). Bounds: every entry lies in ``[-1, log1p(1e9)]``.
    """

    #: The largest value any entry takes (``log1p`` of the largest stat or amount a game allows).
    HIGH = float(np.log1p(1e9))

    def __init__(self, game: Game, *, surroundings: bool = True):
        self.game = game
        self.surroundings = bool(surroundings)
        self._areas = {name: i for i, name in enumerate(game.areas)}
        self._objects = {name: i for i, name in enumerate(game.objects)}
        self._npcs = {name: i for i, name in enumerate(game.npcs)}
        self._max_level = max([a.level for a in game.areas.values()] + [1])
        n_area, n_obj, n_npc = len(self._areas) + 1, len(self._objects) + 1, len(self._npcs) + 1
        names = [f"area={a}" for a in game.areas] + ["area=<other>", "area_level"]
        names += [f"carried={o}" for o in game.objects] + ["carried=<other>"]
        if self.surroundings:
            names += [f"here={o}" for o in game.objects] + ["here=<other>"]
            names += [f"npc={n}" for n in game.npcs] + ["npc=<other>"]
        names += ["health_fraction", "health", "max_health", "attack", "defense", "level", "experience", "deaths"]
        names += ["fighting", "defending", "in_tutorial", "quest_fraction", "quest_done", "time_sin", "time_cos"]
        #: What each entry of the vector is, e.g. ``carried=iron_bar``.
        self.names: tuple[str, ...] = tuple(names)
        self.size = len(names)
        self._carried = n_area + 1
        self._here = self._carried + n_obj
        self._npc = self._here + n_obj
        self._stats = self._npc + n_npc if self.surroundings else self._here
        self._quest_total = self._quest_stages()

    def __call__(self, engine: Engine, agent_id: str) -> np.ndarray:
        state = engine.state
        agent = state.agents[agent_id]
        out = np.zeros(self.size, dtype=np.float32)
        out[self._areas.get(agent.area, len(self._areas))] = 1.0
        area = state.areas.get(agent.area)
        if area is not None:
            out[len(self._areas) + 1] = min(area.level / self._max_level, self.HIGH)
        self._count(out, self._carried, _carried(state, agent))
        if self.surroundings and area is not None:
            self._count(out, self._here, _types(state, area.objects))
            npc_counts: dict[str, int] = {}
            for handle in area.npcs:
                npc = state.npcs.get(handle)
                if npc is not None:
                    npc_counts[npc.type] = npc_counts.get(npc.type, 0) + 1
            self._count_into(out, self._npc, self._npcs, npc_counts)
        s = self._stats
        out[s] = agent.hp / agent.max_hp if agent.max_hp > 0 else 0.0
        out[s + 1 : s + 8] = np.log1p(
            np.maximum(
                [agent.hp, agent.max_hp, agent.attack, agent.defense, agent.level, agent.xp, agent.deaths], 0
            ).astype(np.float64)
        )
        out[s + 8] = agent.combat is not None
        out[s + 9] = agent.defending
        out[s + 10] = agent.in_tutorial
        done = self._quest_done(engine, agent_id)
        if self._quest_total:
            out[s + 11] = done / self._quest_total
            out[s + 12] = done >= self._quest_total
        angle = 2 * math.pi * (state.minute % _MINUTES_PER_DAY) / _MINUTES_PER_DAY
        out[s + 13], out[s + 14] = math.sin(angle), math.cos(angle)
        return np.minimum(out, self.HIGH, out=out)

    # ------------------------------------------------------------------ internals
    def _count(self, out: np.ndarray, start: int, counts: Mapping[str, int]) -> None:
        self._count_into(out, start, self._objects, counts)

    @staticmethod
    def _count_into(out: np.ndarray, start: int, index: Mapping[str, int], counts: Mapping[str, int]) -> None:
        other = start + len(index)
        for name, count in counts.items():
            out[start + index.get(name, len(index))] += count
        block = out[start : other + 1]
        np.log1p(block, out=block)

    def _quest_stages(self) -> int:
        if self.game.quest.main is None:
            return 0
        return len(main_quest.plan(self.game.quest.main).stages)

    def _quest_done(self, engine: Engine, agent_id: str) -> int:
        if not self._quest_total:
            return 0
        return int(main_quest.progress(engine, agent_id)["completed"])


def _types(state: WorldState, holding: Mapping[str, int]) -> dict[str, int]:
    """Counts per object type of a holding (instance handles such as ``small_bag_0`` count as their type)."""
    out: dict[str, int] = {}
    instances = state.instances
    for handle, count in holding.items():
        kind = instances[handle].type if handle in instances else handle
        out[kind] = out.get(kind, 0) + count
    return out


def _carried(state: WorldState, agent: Agent) -> dict[str, int]:
    """What the agent carries: hands, equipment, and what worn containers hold (one level, as they do)."""
    out = _types(state, agent.hands)
    worn: Iterable[str] = agent.equipment.values()
    for handle in worn:
        instance = state.instances.get(handle)
        kind = instance.type if instance is not None else handle
        out[kind] = out.get(kind, 0) + 1
        if instance is not None:
            for kind, count in _types(state, instance.contents).items():
                out[kind] = out.get(kind, 0) + count
    return out
