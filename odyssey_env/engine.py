"""The engine: one episode of one game, as pure logic (no Gymnasium, no I/O).

A step is: the clock advances, each agent's command is parsed and applied by its verb's rule, every
step rule runs in its place (:func:`odyssey_env.rules.step_order`), and the events the step emitted become
the reward breakdown.
Everything that plays drives this class: the Gymnasium face (``odyssey_env.env``), the evaluation
runner, the oracle, and faces for several agents, who can all act in one step.
"""

from __future__ import annotations

import datetime
import functools
import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from odyssey_env import worldgen
from odyssey_env.listing import Listing, check_from_environment
from odyssey_env.observation import render
from odyssey_env.parsing import command_echo, parse
from odyssey_env.rewards import RewardBreakdown, breakdown
from odyssey_env.state import Agent, WorldState
from odyssey_env.turn import Event, Outcome, Turn
from odyssey_env.world import drop_all

if TYPE_CHECKING:
    from odyssey_env.game import Game
    from odyssey_env.provenance import ProvenanceTracker
    from odyssey_env.rules import ActionRule, RuleBook

STATE_FORMAT = 1
#: How many command texts an engine remembers parsed (``Engine._parse``), and the longest it remembers.
PARSED_COMMANDS = 1024
_PARSE_MEMO_TEXT = 200


class Engine:
    """One seeded episode. Create a new engine (or ``load_state``) to start another."""

    def __init__(
        self,
        game: Game,
        seed: int,
        *,
        agents: tuple[str, ...] = ("player",),
        options: Mapping[str, Any] | None = None,
        check_valid_actions: bool | None = None,
    ):
        """``check_valid_actions``: list every verb afresh beside the cache and raise on any difference
        (a debugging aid, about twice the listing cost); None reads ``ODYSSEY_CHECK_VALID_ACTIONS``."""
        self.game = game
        self.rules = game.rules
        self.seed = seed
        self.options: dict[str, Any] = dict(options or {})
        self.rng = random.Random(f"odyssey:{seed}:play")
        supply = len(agents) if self.options.get("supplies") == "per_agent" else 1
        self.state: WorldState = worldgen.generate(game, random.Random(f"odyssey:{seed}:world"), agents, supply=supply)
        self.events: list[Event] = []
        self.kinds: set[str] = set()  # kinds of this step's events, so rules can skip what did not happen
        self.check_valid_actions = check_from_environment() if check_valid_actions is None else check_valid_actions
        self._listings: dict[str, Listing] = {}  # per agent: the valid-action cache (odyssey_env.listing)
        #: Parsed commands by their text, for the rule book in ``_parsed_rules`` (``_parse``).
        self._parsed: dict[str, tuple[ActionRule, tuple[Any, ...]] | str] = {}
        self._parsed_rules: RuleBook | None = None
        self._clock_minute, self._clock_text = -1, ""
        self.state.feedback = {a: [] for a in agents}
        intro = game.spec.game.intro
        for a in agents:
            self.state.agents[a].visited[self.state.spawn] = 0  # waking there is not exploring
            if intro:
                self.state.feedback[a].append(intro)
        for rule in self.rules.steps:
            rule.start(self)
        #: The object-provenance tracker (``options["provenance"]``); None, and never consulted, when off.
        self.provenance: ProvenanceTracker | None = None
        if self.options.get("provenance"):
            self.track_provenance()

    # ------------------------------------------------------------------ stepping
    def step(self, actions: Mapping[str, Any]) -> dict[str, Outcome]:
        """Apply one command per agent (in the given order), then the step rules.

        Whatever the commands are, they are parsed (and unknown agents refused) before the clock
        moves, so a bad action never leaves the episode half-stepped.
        """
        state = self.state
        rules = self.rules
        agents = state.agents
        for agent_id in actions:
            if agent_id not in agents:
                unknown = [a for a in actions if a not in agents]
                raise KeyError(f"unknown agent(s) {unknown!r}; this episode has {list(agents)}")
        parse_command = self._parse
        parsed_actions = [(agent_id, command, parse_command(command)) for agent_id, command in actions.items()]
        state.step += 1
        state.minute += self.game.spec.game.minutes_per_step
        events: list[Event] = []
        self.events = events
        self.kinds = set()
        acted: list[tuple[str, bool, bool]] = []  # (agent, invalid, failed)
        for agent_id, command, parsed in parsed_actions:
            agent = agents[agent_id]
            state.feedback[agent_id] = []
            agent.defending = False
            turn = Turn(self, agent)
            if isinstance(parsed, str):
                invalid = True
                turn.say(parsed + " The turn passes as a wait.")
                rule, args = rules.actions["wait"], ()
                self.emit("invalid_action", agent_id, command=command_echo(command))
            else:
                invalid = False
                rule, args = parsed
            rule.apply(turn, *args)
            acted.append((agent_id, invalid, not turn.ok))
        for step_rule in rules.steps:
            step_rule.apply(self)
        single = len(acted) == 1
        outcomes: dict[str, Outcome] = {}
        for agent_id, invalid, failed in acted:
            mine = events if single else [e for e in events if e.agent == agent_id or e.agent is None]
            reward = RewardBreakdown() if state.agents[agent_id].in_tutorial else breakdown(mine, agent_id)
            outcomes[agent_id] = Outcome(reward, invalid, failed, mine)
        return outcomes

    def _parse(self, command: Any) -> tuple[ActionRule, tuple[Any, ...]] | str:
        """:func:`odyssey_env.parsing.parse`, remembered per command text: a command depends on nothing
        but the rule book, and agents repeat the same few commands. Bounded: long texts are parsed
        every time, and the memory starts over once it holds ``PARSED_COMMANDS`` texts."""
        if type(command) is not str or len(command) > _PARSE_MEMO_TEXT:
            return parse(self.rules, command)
        memo = self._parsed
        if self._parsed_rules is not self.rules:  # another rule book (provenance tracing, a test)
            memo.clear()
            self._parsed_rules = self.rules
        hit = memo.get(command)
        if hit is None:
            if len(memo) >= PARSED_COMMANDS:
                memo.clear()
            hit = memo[command] = parse(self.rules, command)
        return hit

    def say(self, agent_id: str, text: str) -> None:
        self.state.feedback[agent_id].append(text)

    def remove_agent(self, agent_id: str) -> None:
        """Take an agent's body out of the world between steps (a finished or retired player).

        What it holds and wears stays on the ground where it stood and the enemies fighting it let go;
        rules no longer see it, so it is not hit, and no feedback piles up for it. Its quest and
        tutorial records stay in ``rule_data``.
        """
        state = self.state
        agent = state.agents.pop(agent_id)
        drop_all(self.game, state, agent, state.areas[agent.area])
        for npc in state.npcs.values():
            if npc.engaged == agent_id:
                npc.engaged = None
                npc.stance_index = 0
        state.feedback.pop(agent_id, None)

    def emit(self, kind: str, agent_id: str | None, /, **data: Any) -> None:
        self.events.append(Event(kind, agent_id, data))
        self.kinds.add(kind)

    def first(self, agent: Agent, book: str, key: str) -> bool:
        """Record a first time (a new area, a new crafted type...) and say whether it was one.

        Nothing counts inside the tutorial: its bookkeeping is not the agent's progress.
        """
        if agent.in_tutorial:
            return False
        seen: dict[str, int] = getattr(agent, book)
        if key in seen:
            return False
        seen[key] = self.state.step
        return True

    # ------------------------------------------------------------------ reading
    def observe(self, agent_id: str) -> str:
        return render(self, agent_id)

    def valid_actions(self, agent_id: str) -> dict[str, list[str]]:
        """Commands applicable now, grouped by verb (sound and complete; amounts summarised).

        Each verb's commands are reused while the parts of the state they depend on are unchanged
        (:mod:`odyssey_env.listing`); the result is the same as listing every verb afresh.
        """
        listing = self._listings.get(agent_id)
        if listing is None:
            if agent_id not in self.state.agents:
                raise KeyError(f"no agent {agent_id!r} in this episode (agents: {', '.join(self.state.agents)})")
            listing = self._listings[agent_id] = Listing(self, agent_id, check=self.check_valid_actions)
        return listing.valid_actions()

    def clock(self) -> str:
        """Game time as ``0001-01-01 08:10:00`` (the format of paper appendix A5.2)."""
        minute = self.state.minute
        if minute != self._clock_minute:  # read twice a step (observation and info): format it once
            self._clock_minute, self._clock_text = minute, _clock(minute)
        return self._clock_text

    # ------------------------------------------------------------------ persistence
    def save_state(self) -> dict[str, Any]:
        """Everything needed to continue this episode exactly, as JSON-ready data."""
        version, internal, gauss = self.rng.getstate()
        return {
            "format": STATE_FORMAT,
            "game": self.game.name,
            "seed": self.seed,
            "options": dict(self.options),
            "rng": [version, list(internal), gauss],
            "world": self.state.to_dict(),
            **({"provenance": self.provenance.to_dict()} if self.provenance is not None else {}),
        }

    def load_state(self, data: Mapping[str, Any]) -> None:
        if data.get("format") != STATE_FORMAT:
            raise ValueError(f"unsupported state format {data.get('format')!r} (expected {STATE_FORMAT})")
        if data.get("game") != self.game.name:
            raise ValueError(f"state is for game {data.get('game')!r}, this engine runs {self.game.name!r}")
        version, internal, gauss = data["rng"]
        state = WorldState.from_dict(data["world"])
        self.rng.setstate((version, tuple(internal), gauss))
        self.seed = data["seed"]
        self.options = dict(data.get("options", {}))
        self.state = state
        self.events = []
        self.kinds = set()
        self.rules, self.provenance = self.game.rules, None
        if self.options.get("provenance"):
            self.track_provenance(data.get("provenance"))

    def track_provenance(self, saved: Mapping[str, Any] | None = None) -> None:
        """Start tracking object provenance now (what exists now is "the world"), or continue ``saved``."""
        from odyssey_env.provenance import ProvenanceTracker

        self.options["provenance"] = True
        self.provenance = ProvenanceTracker(self, saved)


_EPOCH = datetime.datetime(1, 1, 1)


def _clock(minute: int) -> str:
    day, in_day = divmod(minute, 1440)
    return f"{_date(day)} {in_day // 60:02d}:{in_day % 60:02d}:00"


@functools.lru_cache(maxsize=1024)
def _date(day: int) -> str:
    return (_EPOCH + datetime.timedelta(days=day)).strftime("%Y-%m-%d").zfill(10)
