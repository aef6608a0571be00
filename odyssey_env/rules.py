"""How rules are declared, collected and composed.

Two kinds of rules make a game's dynamics (paper §3.2):

* an :class:`ActionRule` owns one verb: it checks preconditions, changes the state, says what
  happened, and lists the commands of its verb that are applicable now (the valid actions);
* a :class:`StepRule` runs after the actions of every step, for processes that go on without the
  player (combat rhythm, ambushes, the clock, respawns, quests). The engine's own step rules run in the
  order declared in :mod:`odyssey_env.steprules.order`; any other rule places itself with ``after`` /
  ``before`` (see :func:`step_order`).

Rules are classes marked with :func:`action_rule` / :func:`step_rule`; a :class:`RuleBook` collects
the base rules and then a game's own ``rules.py``, where a rule with the same verb or name replaces
the base one. Rules hold no episode state: whatever they must remember goes in
``state.rule_data[rule.name]`` so that saving, loading and pickling stay exact. Tunable numbers are
declared as a ``Params`` dataclass and may be overridden per game in ``world.json``
(``game.params.<rule name>``).
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
import importlib
import itertools
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from odyssey_env import schema
from odyssey_env.limits import PARAM_LIMITS
from odyssey_env.parsing import verb_index
from odyssey_env.steprules.order import ENGINE_STEP_ORDER

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.game import Game
    from odyssey_env.quests.spec import Condition
    from odyssey_env.state import Agent
    from odyssey_env.turn import Turn

__all__ = [
    "DEPENDENCIES",
    "ActionRule",
    "Dependency",
    "Fact",
    "ParamKind",
    "RuleBook",
    "RuleError",
    "StepRule",
    "action_rule",
    "predicate",
    "step_rule",
]

ParamKind = Literal["object", "npc", "area", "container", "writable", "amount", "text"]

#: What a verb's valid actions may depend on (:attr:`ActionRule.depends_on`), each seen from the listing
#: agent; ``odyssey_env.listing`` reads a fingerprint of each from the live state (docs/engine.md).
Dependency = Literal[
    "place",
    "exits",
    "hands",
    "worn",
    "containers",
    "purse",
    "ground",
    "ground_contents",
    "npcs",
    "npc_goods",
    "npc_moods",
    "combat",
    "body",
    "time",
    "vars",
    "data",
    "company",
]
DEPENDENCIES: tuple[Dependency, ...] = typing.get_args(Dependency)
R = TypeVar("R", bound=type)

#: Base verbs every game has (paper A3.1: "every game shares the base game's 17 core verbs").
BASE_VERBS: tuple[str, ...] = (
    "wait",
    "defend",
    "pick up",
    "drop",
    "enter",
    "attack",
    "talk to",
    "inspect",
    "equip",
    "unequip",
    "take out",
    "craft",
    "write",
    "store",
    "discard",
    "buy",
    "sell",
)
#: Verbs the engine implements but a game must switch on in ``game.verbs``.
OPTIONAL_VERBS: tuple[str, ...] = ("lockpick", "eat", "throw", "disassemble", "pickpocket")

BASE_RULE_MODULES: tuple[str, ...] = (
    "odyssey_env.verbs.basic",
    "odyssey_env.verbs.items",
    "odyssey_env.verbs.containers",
    "odyssey_env.verbs.movement",
    "odyssey_env.verbs.combat",
    "odyssey_env.verbs.social",
    "odyssey_env.verbs.trade",
    "odyssey_env.verbs.crafting",
    "odyssey_env.verbs.writing",
    "odyssey_env.verbs.food",
    "odyssey_env.steprules.stats",
    "odyssey_env.steprules.combat",
    "odyssey_env.steprules.clock",
    "odyssey_env.steprules.spawning",
    "odyssey_env.steprules.death",
    "odyssey_env.steprules.craft_hints",
    "odyssey_env.steprules.patrols",
    "odyssey_env.steprules.regrowth",
    "odyssey_env.steprules.danger_hours",
    "odyssey_env.steprules.day_cycle",
    "odyssey_env.steprules.shifting_paths",
    "odyssey_env.steprules.crafting_momentum",
    "odyssey_env.steprules.rumor_notes",
    "odyssey_env.quests.predicates",
    "odyssey_env.quests.tutorial",
    "odyssey_env.quests.main_quest",
    "odyssey_env.quests.side_quests",
    "odyssey_env.quests.expansion",
)


@functools.cache
def core_step_rules() -> frozenset[str]:
    """Names of the step rules every game runs (the engine's non-optional ones)."""
    names = set()
    for module in BASE_RULE_MODULES:
        for kind, value in _members(importlib.import_module(module)):
            if kind == "step" and not value.optional:
                names.add(value.name)
    return frozenset(names)


def step_rule_names(modules: Iterable[types.ModuleType | str]) -> set[str]:
    """Names of the step rules the given rule modules declare (optional ones included)."""
    names: set[str] = set()
    for module in modules:
        if isinstance(module, str):
            module = importlib.import_module(module)
        names.update(value.name for kind, value in _members(module) if kind == "step")
    return names


class RuleError(ValueError):
    """A rule set that cannot be assembled (unknown name, bad parameters, clashing verbs)."""


@dataclasses.dataclass(frozen=True)
class Fact:
    """A checkable statement a rule declares about itself, for World-Knowledge QA.

    ``answer`` is the correct choice and ``distractors`` plausible wrong ones; all are short strings.
    """

    topic: str
    question: str
    answer: str
    distractors: tuple[str, ...]


class _Rule:
    Params: ClassVar[type | None] = None
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: Set by the @action_rule and @step_rule decorators ("action", "step"): what RuleBook collects.
    __odyssey_rule__: ClassVar[str]

    def __init__(self, settings: Any = None):
        #: The rule's ``Params`` as this game sets them (``game.params.<rule>`` over the defaults); None
        #: for a rule without ``Params``. Not ``params``: on a verb that name holds its argument slots.
        self.settings = settings

    def facts(self, game: Game) -> Iterable[Fact]:
        """Statements about this rule's effects; override to feed World-Knowledge QA."""
        return ()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class ActionRule(_Rule):
    """One verb. Subclasses set ``verb``, ``params`` and ``description`` and implement two methods.

    ``apply(turn, *args)`` performs the command; it calls ``turn.fail(message)`` (and returns) when
    the state does not allow it, which is corrective feedback rather than an invalid action.
    ``candidates(turn)`` yields every command of this verb that ``apply`` would accept now; for
    amounts it yields the smallest and the largest feasible amount rather than every number.

    ``depends_on`` names everything ``candidates`` reads besides the game's fixed data, from the
    closed vocabulary :data:`DEPENDENCIES`; the engine then reuses the verb's last listing while the
    fingerprints of those parts of the state stay the same. ``None`` (the default, and what a subclass
    that does not declare it gets) lists the verb afresh every time: slower, never stale. ``()``
    declares commands that never change (``wait``).
    """

    verb: ClassVar[str] = ""
    params: ClassVar[tuple[tuple[str, ParamKind], ...]] = ()
    optional: ClassVar[bool] = False
    #: Kinds of events a command of this verb may emit, for planners that cause an event by trying the
    #: game's verbs (the oracle's ``did``): only these verbs are asked what they :meth:`needs`.
    emits: ClassVar[tuple[str, ...]] = ()
    #: Object types every command of this verb that succeeds gives the agent (a rule file's own ``transform``
    #: / ``produce``), so that a planner that needs one knows which verb's event to cause: declared, not read
    #: from code.
    produces: ClassVar[tuple[str, ...]] = ()
    depends_on: ClassVar[tuple[Dependency, ...] | None] = None
    #: With ``"vars"`` in ``depends_on``: the rule-language variables (``rules.json``'s ``vars``) that
    #: ``candidates`` reads, whose tables the listing fingerprints (a counter written every step makes the verb
    #: listed afresh every step, a flag set once in a while almost never).
    reads_vars: ClassVar[tuple[str, ...]] = ()
    #: With ``"data"`` in ``depends_on``: the keys of ``state.rule_data`` (a Python rule's own memory: a law
    #: registry, what an area still hides) whose values ``candidates`` reads; the listing fingerprints them
    #: as marshal bytes, exact for the JSON-ready values ``rule_data`` must hold anyway.
    reads_data: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def usage(cls) -> str:
        return " ".join([cls.verb, *(f"<{label}>" for label, _ in cls.params)])

    def apply(self, turn: Turn, *args: Any) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def candidates(self, turn: Turn) -> Iterable[str]:  # pragma: no cover - interface
        raise NotImplementedError

    def needs(self, engine: Engine, agent: Agent, match: Mapping[str, Any]) -> Condition | None:
        """A plan hint for planners that cannot read this rule's code (the oracle): what ``agent`` should
        make hold next before a command of this verb can succeed with event data ``match`` (for
        ``enter``: ``{"area": target, "from": where}``), or None when nothing is missing that the agent
        could bring about. A condition of the quest vocabulary, or the engine's ``did``; asked again every
        step, so it names the next missing piece only (a lamp, then its oil, then refuelling it)."""
        return None


class StepRule(_Rule):
    """A process that runs once per step after the actions.

    Where it runs among the other step rules: the engine's own rules run in the order declared in
    :mod:`odyssey_env.steprules.order`; any other rule names the rules it must follow (``after``) and
    precede (``before``), and runs as soon as those it follows have run (:func:`step_order`). A name
    that is not in the game's rule book (an optional rule the game leaves off, a disabled one) is
    ignored, so a rule may name what it must follow wherever that is present.

    ``optional`` rules belong to the engine's library of world dynamics but run only in games that
    name them in ``game.step_rules`` (as optional verbs are named in ``game.verbs``).
    """

    after: ClassVar[tuple[str, ...]] = ()
    before: ClassVar[tuple[str, ...]] = ()
    optional: ClassVar[bool] = False

    def active(self, game: Game) -> bool:
        """Whether this rule has anything to do in ``game``; inactive rules are left out of its rule book."""
        return True

    def start(self, engine: Engine) -> None:
        """Called once when an episode begins (after world generation), before the first observation."""

    def phantoms(self, engine: Engine) -> Iterable[tuple[str, str, int]]:
        """``(area, handle, count)`` of things this rule shows lying on the ground that are not really
        there (a game's mirages). Players see them and may try them like anything else; planners that
        read the true state (the oracle) leave them out. Most rules show none."""
        return ()

    def apply(self, engine: Engine) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def veil(self, engine: Engine, agent: Agent) -> str | None:
        """Why ``agent`` cannot see what lies and stands in its area now ("it is pitch dark"), or None.

        The observation then says so instead of listing them. Only rules that override this are asked.
        """
        return None


def action_rule(cls: R) -> R:
    """Mark an :class:`ActionRule` subclass for collection by :class:`RuleBook`."""
    if not (isinstance(cls, type) and issubclass(cls, ActionRule) and cls.verb):
        raise RuleError(f"@action_rule needs an ActionRule subclass with a verb, got {cls!r}")
    declared = cls.__dict__.get("depends_on")
    if declared is not None:
        unknown = [d for d in declared if d not in DEPENDENCIES] if isinstance(declared, tuple) else [declared]
        if unknown:
            raise RuleError(
                f"verb {cls.verb!r}: depends_on must be a tuple of {', '.join(DEPENDENCIES)}; "
                f"got {', '.join(map(repr, unknown))}"
            )
        if "vars" in declared and not cls.__dict__.get("reads_vars"):
            raise RuleError(f"verb {cls.verb!r}: depends_on names 'vars' but the class names no reads_vars")
        if "data" in declared and not cls.__dict__.get("reads_data"):
            raise RuleError(f"verb {cls.verb!r}: depends_on names 'data' but the class names no reads_data")
    cls.name = cls.name or cls.verb
    cls.__odyssey_rule__ = "action"
    return cls


def step_rule(cls: R) -> R:
    """Mark a :class:`StepRule` subclass for collection by :class:`RuleBook`."""
    if not (isinstance(cls, type) and issubclass(cls, StepRule) and cls.name):
        raise RuleError(f"@step_rule needs a StepRule subclass with a name, got {cls!r}")
    if hasattr(cls, "priority"):
        raise RuleError(
            f"step rule {cls.name!r}: 'priority' is gone; place the rule with after = (...) and/or "
            f"before = (...) naming the step rules it must follow or precede (docs/engine.md)"
        )
    for field in ("after", "before"):
        names = getattr(cls, field)
        if not (isinstance(names, tuple) and all(isinstance(n, str) and n for n in names)):
            raise RuleError(f"step rule {cls.name!r}: {field} must be a tuple of step rule names, got {names!r}")
    cls.__odyssey_rule__ = "step"
    return cls


def step_order(rules: Iterable[type[StepRule]], known: Iterable[str] = ()) -> list[type[StepRule]]:
    """The run order of ``rules`` (one class per name, in load order).

    Constraints: the engine's rules present keep the order of :data:`ENGINE_STEP_ORDER`; every rule runs
    after the rules named in its ``after`` and before those named in its ``before``; a name that is known
    (in ``known``, in ``rules`` or in the engine's order) but absent from ``rules`` is ignored. The order is
    the topological one that runs each rule as early as its constraints allow: whenever several rules
    could run next, a rule outside the engine's order goes first (by load order), then the engine's next
    rule. So ``after = ("ambush",)`` runs a rule right after ``ambush``. A name nobody knows, or
    constraints that contradict each other (a cycle), raise :class:`RuleError` naming the rules.
    """
    classes = list(rules)
    present = {cls.name: i for i, cls in enumerate(classes)}
    known_names = set(known) | set(present) | set(ENGINE_STEP_ORDER)
    preds: dict[str, set[str]] = {name: set() for name in present}
    engine_chain = [name for name in ENGINE_STEP_ORDER if name in present]
    for earlier, later in itertools.pairwise(engine_chain):
        preds[later].add(earlier)
    for cls in classes:
        if not (cls.after or cls.before or cls.name in ENGINE_STEP_ORDER):
            # no silent default: such a rule once ran mid-order (priority 50); now it would run first
            raise RuleError(
                f"step rule {cls.name!r} does not say when it runs: give it after = (...) and/or "
                f"before = (...) naming the step rules it follows or precedes (the engine's order is "
                f"in odyssey_env/steprules/order.py; before = ({ENGINE_STEP_ORDER[0]!r},) runs it first)"
            )
        unknown = [n for n in (*cls.after, *cls.before) if n not in known_names]
        if unknown:
            raise RuleError(
                f"step rule {cls.name!r} names unknown step rule(s) {', '.join(map(repr, unknown))} "
                f"in after/before; known: {', '.join(sorted(known_names))}"
            )
        preds[cls.name].update(n for n in cls.after if n in present)
        for n in cls.before:
            if n in present:
                preds[n].add(cls.name)
    rank = {name: i for i, name in enumerate(ENGINE_STEP_ORDER)}
    # ready rules by (engine rule?, position): a rule outside the engine order first, by load order
    key = {name: (1, rank[name]) if name in rank else (0, i) for name, i in present.items()}
    waiting = {name: len(p) for name, p in preds.items()}
    follows: dict[str, list[str]] = {name: [] for name in present}
    for name, p in preds.items():
        for q in sorted(p):
            follows[q].append(name)
    ready = [(key[name], name) for name, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(name)
        for nxt in follows[name]:
            waiting[nxt] -= 1
            if waiting[nxt] == 0:
                heapq.heappush(ready, (key[nxt], nxt))
    if len(order) < len(present):
        raise RuleError(f"step rules ordered in a cycle by after/before: {' -> '.join(_cycle(preds, set(order)))}")
    return [classes[present[name]] for name in order]


def placement(rule: type[StepRule] | StepRule, quote: str = "") -> str:
    """How a step rule is placed, in words: ``"after ambush; before death"`` from its ``after`` / ``before``
    (each name between ``quote``: docs/games.md uses backticks); ``"engine order"`` for one placed by
    :data:`ENGINE_STEP_ORDER` alone."""
    parts = [
        f"{word} {', '.join(quote + n + quote for n in names)}"
        for word, names in (("after", rule.after), ("before", rule.before))
        if names
    ]
    if parts:
        return "; ".join(parts)
    return "engine order"


def _cycle(preds: Mapping[str, set[str]], placed: set[str]) -> list[str]:
    """One cycle among the rules a topological sort could not place: each of them waits on another unplaced
    rule, so walking back along those waits must come round; the walk is by name, so the message is stable."""
    name = min(n for n in preds if n not in placed)
    path: list[str] = []
    while name not in path:
        path.append(name)
        name = min(p for p in preds[name] if p not in placed)
    cycle = path[path.index(name) :][::-1]  # in run order: each must run before the next
    start = cycle.index(min(cycle))  # from its first name alphabetically, so the message is one for one cycle
    cycle = cycle[start:] + cycle[:start]
    return [*cycle, cycle[0]]


def predicate(name: str) -> Callable[[Callable[..., bool]], Callable[..., bool]]:
    """Register a named quest predicate ``fn(engine, agent, **args) -> bool`` (see docs/quests.md)."""

    def mark(fn: Callable[..., bool]) -> Callable[..., bool]:
        marks = vars(fn)  # the function's own attributes (a Callable type declares none)
        marks["__odyssey_rule__"] = "predicate"
        marks["__odyssey_name__"] = name
        return fn

    return mark


def _members(module: types.ModuleType) -> Iterator[tuple[str, Any]]:
    """Marked members in definition order (module dicts preserve it)."""
    for value in vars(module).values():
        kind = getattr(value, "__odyssey_rule__", None)
        if kind and getattr(value, "__module__", None) == module.__name__:
            yield kind, value


class RuleBook:
    """The assembled rules of one game: verbs by name, step rules in run order, quest predicates."""

    def __init__(
        self,
        modules: Iterable[types.ModuleType | str] = BASE_RULE_MODULES,
        *,
        verbs: Iterable[str] = (),
        step_rules: Iterable[str] = (),
        disable: Iterable[str] = (),
        params: Mapping[str, Mapping[str, Any]] | None = None,
    ):
        action_classes: dict[str, type[ActionRule]] = {}
        step_classes: dict[str, type[StepRule]] = {}
        predicates: dict[str, Callable[..., bool]] = {}
        for module in modules:
            if isinstance(module, str):
                module = importlib.import_module(module)
            for kind, value in _members(module):
                if kind == "action":
                    action_classes[value.verb] = value  # a later module overrides by verb
                elif kind == "hook":  # rules.json's hook on a verb: wraps the class the verb has so far
                    if value.verb in action_classes:
                        action_classes[value.verb] = value.over(action_classes[value.verb])
                elif kind == "step":
                    step_classes[value.name] = value
                else:
                    predicates[value.__odyssey_name__] = value

        verbs = set(verbs)
        wanted_steps = set(step_rules)
        disable = set(disable)
        unknown = (
            (verbs - set(action_classes))
            | (wanted_steps - set(step_classes))
            | (disable - set(action_classes) - set(step_classes))
        )
        if unknown:
            raise RuleError(
                f"unknown rule or verb name(s): {', '.join(sorted(unknown))}; "
                f"known verbs: {', '.join(action_classes)}; known step rules: {', '.join(step_classes)}"
            )
        params = dict(params or {})
        self.actions: dict[str, ActionRule] = {}
        for verb, cls in action_classes.items():
            if verb in disable or (cls.optional and verb not in verbs):
                continue
            self.actions[verb] = cls(_params(cls, params.pop(verb, None)))
        in_book = [
            cls
            for cls in step_classes.values()
            if cls.name not in disable and (not cls.optional or cls.name in wanted_steps)
        ]
        self.steps = [cls(_params(cls, params.pop(cls.name, None))) for cls in step_order(in_book, known=step_classes)]
        if params:
            raise RuleError(f"parameters given for rule(s) that are not active: {', '.join(sorted(params))}")
        self.predicates = predicates
        self.verbs_by_first_word: dict[str, list[str]] = verb_index(self.actions)

    @property
    def steps(self) -> tuple[StepRule, ...]:
        """The step rules in run order. Assign a new sequence to change them (a game drops its inactive
        rules once loaded); the tuple cannot be changed in place, so the index by name always follows."""
        return self._steps

    @steps.setter
    def steps(self, rules: Iterable[StepRule]) -> None:
        self._steps = tuple(rules)
        self._step_by_name = {r.name: r for r in self._steps}
        self.__dict__.pop("veils", None)  # found again from the new rules when next asked

    def step_rule(self, name: str) -> StepRule | None:
        """The step rule ``name`` of this game, or None when it does not run it (a dict look-up: rules
        and verbs ask on every step and every listing)."""
        return self._step_by_name.get(name)

    @functools.cached_property
    def veils(self) -> tuple[StepRule, ...]:
        """The step rules that may hide an agent's surroundings (see :meth:`StepRule.veil`); asked by
        every observation, so found once (after the game has dropped its inactive rules)."""
        return tuple(r for r in self.steps if getattr(r.veil, "__func__", None) is not StepRule.veil)

    def describe(self) -> dict[str, Any]:
        return {
            "verbs": [r.usage() for r in self.actions.values()],
            "step_rules": [{"name": r.name, "runs": placement(r), "description": r.description} for r in self.steps],
            "predicates": sorted(self.predicates),
        }


def _params(cls: type[_Rule], overrides: Mapping[str, Any] | None) -> Any:
    """A rule's parameters with a game's overrides, checked against the parameter conventions.

    Conventions (so that an override can never crash a step): every number is finite and at most
    1,000,000 in size; a field named ``period`` or ``*_period`` is a whole number of at least 1 (rules
    take the step number modulo it); one named ``chance``, ``*_chance`` or ``chance_by_*`` holds
    probabilities in [0, 1]; a ``(min, max)`` pair (``tuple[int, int]``) has ``0 <= min <= max``. A rule
    that needs more checks them in its ``Params.__post_init__`` (raising ValueError).
    """
    if cls.Params is None:
        if overrides:
            raise RuleError(f"rule {cls.name!r} takes no parameters, got {', '.join(overrides)}")
        return None
    base = dataclasses.asdict(cls.Params())
    base.update(overrides or {})
    where = f"params of rule {cls.name!r}"
    try:
        params: object = schema.load(cls.Params, base, file=where, limits=PARAM_LIMITS)
    except schema.FormatError as exc:
        raise RuleError(str(exc)) from None
    problems = list(_convention_problems(params))
    if problems:
        raise RuleError("\n".join(f"{where}: {p}" for p in problems))
    return params


def _convention_problems(params: Any) -> Iterator[str]:
    hints = schema.type_hints(type(params))  # never eval: a game folder's annotations are its text
    for f in dataclasses.fields(params):
        name, value = f.name, getattr(params, f.name)
        if name == "period" or name.endswith("_period"):
            if not isinstance(value, int) or value < 1:
                yield f"{name}: {value!r} must be a whole number of at least 1 (steps between two runs)"
        elif name == "chance" or name.endswith("_chance") or name.startswith("chance_by_"):
            values = value if isinstance(value, tuple) else (value,)
            if not values or not all(isinstance(v, int | float) and 0 <= v <= 1 for v in values):
                yield f"{name}: {value!r} must hold probabilities between 0 and 1"
        elif hints.get(name) == tuple[int, int] and not 0 <= value[0] <= value[1]:
            yield f"{name}: expected [min, max] with 0 <= min <= max, got {list(value)}"
