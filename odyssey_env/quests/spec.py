"""The quest format (``quest.json``): main quest, side quests, tutorial and online expansion.

Quests are data. A stage's ``done`` condition is written in a closed, documented vocabulary (see
:mod:`odyssey_env.quests.conditions` and ``docs/quests.md``) plus predicates a game registers in its
``rules.py``. These are plain dataclasses: loading checks every reference
(:mod:`odyssey_env.checks.quest`), so a quest cannot name an object, NPC, area or stage that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from odyssey_env.content import Connection


@dataclass(frozen=True)
class Condition:
    """One node of a condition tree; which fields matter depends on ``type`` (docs/quests.md)."""

    type: str
    object: str | None = None
    objects: tuple[str, ...] = ()
    npc: str | None = None
    npcs: tuple[str, ...] = ()
    area: str | None = None
    areas: tuple[str, ...] = ()
    category: str | None = None
    count: int = 1
    text: str | None = None
    stage: str | None = None
    name: str | None = None  # predicate name
    args: dict[str, Any] = field(default_factory=dict)
    conditions: tuple[Condition, ...] = ()
    #: ``predicate`` only: a sequence of vocabulary conditions that, done in order, makes the predicate
    #: hold. The oracle follows it (it cannot read a predicate's code), so a game's own predicates stay
    #: plannable and its quests provably solvable.
    plan: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class Spawn:
    """An NPC placed in an area (bosses when a stage opens, tutorial sparring partners)."""

    npc: str
    area: str


@dataclass(frozen=True)
class Placement:
    """Objects placed in an area."""

    object: str
    area: str
    amount: int = 1


@dataclass(frozen=True)
class Stage:
    """One step of the main quest. Linear chapters need no ``requires``: each stage follows the previous."""

    id: str
    title: str
    hint: str
    done: Condition
    requires: tuple[str, ...] | None = None  # None: the previous stage (the last of the previous chapter)
    spawn: tuple[Spawn, ...] = ()  # introduced when the stage opens
    place: tuple[Placement, ...] = ()
    on_open: str = ""
    on_complete: str = ""


@dataclass(frozen=True)
class Chapter:
    id: str
    title: str
    stages: tuple[Stage, ...]
    intro: str = ""


@dataclass(frozen=True)
class Guide:
    """The NPC who gives the current stage's hint when talked to.

    ``follows``: the guide comes to where I stand whenever a stage opens for me (the paper's games: the
    reference's guide joins the agent at each new stage); ``reminder``: after that many steps without a new
    stage it comes again and says so (the paper's Mark: 30; 0: never). In a world of several agents there is
    one guide, who goes to the agent it came to last.
    """

    npc: str
    area: str | None = None  # None: the spawn area
    follows: bool = False
    reminder: int = 0


@dataclass(frozen=True)
class MainQuest:
    title: str
    chapters: tuple[Chapter, ...]
    intro: str = ""
    outro: str = "I have completed the main quest."
    guide: Guide | None = None


@dataclass(frozen=True)
class SideQuests:
    """Seeded side quests that each newly explored area may unlock (collect, talk, craft, trade)."""

    enabled: bool = True
    kinds: tuple[str, ...] = ("collect", "talk", "craft", "trade")
    unlock_after: int = 2  # areas explored (besides the spawn) before side quests begin
    reward: tuple[int, int] = (1, 6)  # coins
    collect_amount: tuple[int, int] = (1, 3)


@dataclass(frozen=True)
class TutorialStep:
    id: str
    say: str
    done: Condition
    place: dict[str, int] = field(default_factory=dict)  # objects put in the first room when the step begins
    npcs: tuple[str, ...] = ()  # NPC types put in the first room when the step begins


@dataclass(frozen=True)
class TutorialRoom:
    name: str
    description: str


@dataclass(frozen=True)
class Tutorial:
    """An isolated set of rooms with a gated sequence of steps; removed when finished (paper A3.4)."""

    rooms: tuple[TutorialRoom, ...]
    steps: tuple[TutorialStep, ...]
    links: tuple[Connection, ...] = ()
    intro: str = ""
    outro: str = "The tutorial is over. The real journey begins."
    max_steps: int = 150  # the tutorial ends by itself after this many steps


@dataclass(frozen=True)
class Expansion:
    """Online expansion: once every reachable area is explored, new places appear."""

    enabled: bool = False
    max_expansions: int = 2
    places: tuple[int, int] = (1, 2)
    areas_per_place: tuple[int, int] = (2, 3)


@dataclass(frozen=True)
class QuestSpec:
    """Everything in ``quest.json``. Every part is optional."""

    main: MainQuest | None = None
    side_quests: SideQuests = field(default_factory=lambda: SideQuests(enabled=False))
    tutorial: Tutorial | None = None
    expansion: Expansion = field(default_factory=Expansion)

    def stages(self) -> list[Stage]:
        return [s for ch in self.main.chapters for s in ch.stages] if self.main else []
