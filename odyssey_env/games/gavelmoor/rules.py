"""Gavelmoor: a city where every law is paper, and the paper changes at night.

What the data cannot say lives here: three verbs (``invoke law``, ``file objection``, ``appeal
verdict``), eight processes of the city's legal life, and a death rule that lets the condemned appeal.

**Laws.** Any writable carrying text becomes a law when I hold it and ``invoke law`` with it: the
sheet is posted on the ground of the area and binds that area until its term runs out. Six texts are
*statutes* of the city and have force (below); any other text stands on record without effect. The
city posts its own *edicts* at the start (``law_expiry`` params): cast placards that never lapse.
A law is in force while its notice lies where it was posted; a notice taken down takes its law
with it (tearing down a city edict is fined, and the clerks post a fresh copy later).

| statute | text | in force in an area |
|---|---|---|
| peace | the ward keeps the peace | enemies there strike at half strength; a killing there is a crime |
| strife | the ward bares its blades | enemies there strike half again as hard; every killing there is lawful |
| amnesty | the watch stands down | the watch searches no pack there |
| search | every pack shall be searched | the watch searches lighter packs there |
| recess | the court is in recess | nobody is held in contempt there for idling |
| session | the court is in session | idling there is held in contempt almost at once |

Each statute has a *twin* (peace/strife, amnesty/search, recess/session): twins in force in one area
cancel each other out, every midnight the Codex rewrites each statute into its twin wherever it is
written (except inside a sealed folio), and three or more laws in one area that include a pair of
twins are a *legal paradox* that freezes the area's enemies.

**Verdicts.** A guilty verdict (a killing, tearing down an edict) and death itself are *sentences*
that take effect one turn later; ``appeal verdict`` in that turn overturns every sentence pending
against me, once per day.

State lives in ``state.rule_data``: the law registry under ``"invoke law"``, pending objections under
``"file objection"``, sentences and appeals heard under ``"appeal verdict"``, and each step rule's
memory under its own name. Everything is JSON-ready, so saving, loading and pickling stay exact.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from odyssey_env.quests.conditions import normalize_text
from odyssey_env.quests.hints import did, in_area, text_written
from odyssey_env.quests.spec import Condition
from odyssey_env.rules import ActionRule, Fact, StepRule, action_rule, predicate, step_rule
from odyssey_env.state import Instance
from odyssey_env.steprules.death import fall
from odyssey_env.steprules.living import tell
from odyssey_env.world import add, give, held_containers, take_carried, type_of

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.game import Game
    from odyssey_env.state import Agent, WorldState
    from odyssey_env.turn import Turn


# ============================================================================ the law book
@dataclass(frozen=True)
class Statute:
    """A law text the city gives force to, the twin the Codex turns it into at midnight, and its effect."""

    key: str
    text: str
    twin: str
    effect: str


STATUTES: dict[str, Statute] = {
    s.key: s
    for s in (
        Statute(
            "peace",
            "the ward keeps the peace",
            "strife",
            "enemies here strike at half strength, and a killing here is a crime",
        ),
        Statute(
            "strife",
            "the ward bares its blades",
            "peace",
            "enemies here strike half again as hard, and every killing here is lawful",
        ),
        Statute("amnesty", "the watch stands down", "search", "the watch searches no pack here"),
        Statute("search", "every pack shall be searched", "amnesty", "the watch searches lighter packs here"),
        Statute("recess", "the court is in recess", "session", "nobody is held in contempt here for idling"),
        Statute("session", "the court is in session", "recess", "idling here is held in contempt almost at once"),
    )
}
BY_TEXT: dict[str, Statute] = {s.text: s for s in STATUTES.values()}

LAWS = "invoke law"  # rule_data key of the law registry
OBJECTIONS = "file objection"  # rule_data key of the objections awaiting their hearing
VERDICTS = "appeal verdict"  # rule_data key of the sentences pending and the appeals heard
PARADOX = "legal_paradox"
MINUTES_PER_DAY = 1440
TRIAL_EVENTS = frozenset({"npc_defeated", "agent_hit", "agent_ambushed"})
FROZEN = "@paradox"  # Npc.engaged of an enemy frozen by a legal paradox: it neither fights back nor ambushes
_NO_LAWS: tuple[dict[str, Any], ...] = ()


def _reads(state: WorldState, handle: str, text: str) -> bool:
    """Whether ``handle`` is an instance whose text reads ``text`` (as text conditions compare it)."""
    inst = state.instances.get(handle)
    return inst is not None and bool(inst.text) and normalize_text(inst.text) == normalize_text(text)


def statute_of(text: str) -> Statute | None:
    return BY_TEXT.get(normalize_text(text))


def laws(state: WorldState) -> list[dict[str, Any]] | tuple[dict[str, Any], ...]:
    """Every law in force, oldest first (read-only use)."""
    data = state.rule_data.get(LAWS)
    return data["laws"] if data else _NO_LAWS


def _registry(state: WorldState) -> dict[str, Any]:
    data = state.rule_data.get(LAWS)
    if data is None:
        data = state.rule_data[LAWS] = {"laws": [], "next_id": 0, "edicts": []}
    return data


def statutes_in(state: WorldState, area: str) -> set[str]:
    """Keys of the statutes posted in ``area`` (twins included; see :func:`force`)."""
    out = set()
    for law in laws(state):
        if law["area"] == area:
            s = BY_TEXT.get(law["text"])
            if s is not None:
                out.add(s.key)
    return out


def force(keys: set[str], key: str) -> bool:
    """Whether statute ``key`` has force among ``keys``: posted, and its twin not posted beside it."""
    return key in keys and STATUTES[key].twin not in keys


def post_law(
    engine: Engine, notice: str, area: str, text: str, by: str | None, until: int | None, edict: int | None = None
) -> dict[str, Any]:
    reg = _registry(engine.state)
    law = {
        "id": reg["next_id"],
        "notice": notice,
        "area": area,
        "text": text,
        "by": by,
        "since": engine.state.step,
        "until": until,
        "edict": edict,
    }
    reg["next_id"] += 1
    reg["laws"].append(law)
    return law


def unpost_law(engine: Engine, law: dict[str, Any], *, erase: bool) -> None:
    """Take ``law`` out of force; ``erase`` clears its notice (faded ink, a notice struck through)."""
    _registry(engine.state)["laws"].remove(law)
    inst = engine.state.instances.get(law["notice"])
    if erase and inst is not None:
        inst.text = ""


def remove_object(state: WorldState, area: str, handle: str) -> None:
    """Take an instance out of the world for good (a placard the clerks carry away)."""
    objects = state.areas[area].objects
    if handle in objects:
        del objects[handle]
        state.instances.pop(handle, None)


def describe_law(law: dict[str, Any], agent_id: str | None = None) -> str:
    if law["edict"] is not None:
        return f"'{law['text']}' on {law['notice']} (city edict)"
    who = "my law" if law["by"] == agent_id else f"posted by {law['by']}"
    return f"'{law['text']}' on {law['notice']} ({who})"


def carried_units(engine: Engine, agent: Agent) -> Iterator[tuple[str, int]]:
    """``(handle, units)`` of everything in the agent's hands and in the containers it holds or wears."""
    state = engine.state
    yield from agent.hands.items()
    for c in held_containers(engine.game, state, agent):
        yield from state.instances[c].contents.items()


def carried_coins(engine: Engine, agent: Agent) -> int:
    currency = engine.game.currency
    return sum(n for h, n in carried_units(engine, agent) if h == currency)


def pay(engine: Engine, agent: Agent, amount: int) -> int:
    """Take up to ``amount`` coins from what the agent carries; returns what was paid."""
    paid = min(amount, carried_coins(engine, agent))
    if paid:
        assert engine.game.currency is not None, "coins were carried, so the game has a currency"
        take_carried(engine.game, engine.state, agent, engine.game.currency, paid)
    return paid


# ============================================================================ sentences
def _verdicts(state: WorldState) -> dict[str, Any]:
    data = state.rule_data.get(VERDICTS)
    if data is None:
        data = state.rule_data[VERDICTS] = {"pending": {}, "heard": {}}
    return data


def sentence(engine: Engine, agent_id: str, kind: str, reason: str, amount: int = 0) -> None:
    """Pass a sentence (``fine`` or ``death``) that takes effect next turn unless it is appealed then."""
    pending = _verdicts(engine.state)["pending"].setdefault(agent_id, [])
    pending.append({"kind": kind, "reason": reason, "amount": amount, "deadline": engine.state.step + 1})


def appealable(state: WorldState, agent_id: str) -> list[dict[str, Any]]:
    """Sentences against the agent that may still be appealed this turn."""
    data = state.rule_data.get(VERDICTS)
    if not data:
        return []
    return [s for s in data["pending"].get(agent_id, ()) if s["deadline"] >= state.step]


def take_due(state: WorldState, agent_id: str, kind: str) -> list[dict[str, Any]]:
    """Remove and return the agent's sentences of ``kind`` whose turn to appeal has passed."""
    data: dict[str, Any] | None = state.rule_data.get(VERDICTS)
    pending = data["pending"].get(agent_id) if data else None
    if not pending:
        return []
    assert data is not None, "pending sentences come from the verdicts' data"
    due = [s for s in pending if s["kind"] == kind and s["deadline"] <= state.step]
    if due:
        data["pending"][agent_id] = [s for s in pending if s not in due]
    return due


def day_of(minute: int) -> int:
    """The day of the game clock (day 0 begins at midnight before the first morning)."""
    return minute // MINUTES_PER_DAY


def appeals_left(engine: Engine, agent_id: str) -> int:
    """Appeals the court will still hear from the agent today (0 without the appeal verb)."""
    rule = engine.rules.actions.get(VERDICTS)
    if rule is None:
        return 0
    data = engine.state.rule_data.get(VERDICTS)
    heard = data["heard"].get(agent_id) if data else None
    used: int = heard["count"] if heard and heard["day"] == day_of(engine.state.minute) else 0
    per_day: int = rule.settings.per_day
    return max(0, per_day - used)


# ============================================================================ verbs
@action_rule
class InvokeLaw(ActionRule):
    verb = "invoke law"
    params = (("writable_name", "writable"),)
    emits = ("law_invoked",)
    # no depends_on: candidates read the text written on what I hold, which no dependency covers
    description = "Post the law written on a writable I hold here: it binds this area until its term runs out."

    @dataclass(frozen=True)
    class Params:
        term: int = 48  # steps a law stays in force (8 hours at 10 minutes a step)

    def _problem(self, turn: Turn, handle: str) -> str | None:
        inst = turn.state.instances.get(handle)
        if inst is None or turn.game.objects[inst.type].category != "writable":
            return f"Cannot invoke law with {handle}: only something written on can carry a law."
        if handle not in turn.agent.hands:
            return f"Cannot invoke law with {handle}: I must hold it in my hand."
        if not inst.text.strip():
            return f"Cannot invoke law with {handle}: it is blank; write the law on it first."
        return None

    def apply(self, turn: Turn, handle: str) -> None:
        problem = self._problem(turn, handle)
        if problem is not None:
            return turn.fail(problem)
        state, agent = turn.state, turn.agent
        text = normalize_text(state.instances[handle].text)
        twins_before = statutes_in(state, agent.area)
        del agent.hands[handle]
        add(turn.area.objects, handle)
        until = state.step + self.settings.term
        post_law(turn.engine, handle, agent.area, text, agent.id, until)
        statute = BY_TEXT.get(text)
        hours = self.settings.term * turn.game.spec.game.minutes_per_step / 60
        turn.say(f"I post the law on {handle} in {agent.area}: '{text}'. It binds this area for {hours:g} hours.")
        if statute is None:
            turn.say("No statute of the city gives it force, but it stands on record here.")
        elif statute.twin in twins_before:
            turn.say(f"It contradicts '{STATUTES[statute.twin].text}', already posted here: the two cancel out.")
        else:
            turn.say(f"By the city's statute, {statute.effect}.")
        turn.emit(
            "law_invoked",
            notice=handle,
            text=text,
            statute=statute.key if statute else None,
            area=agent.area,
            until=until,
        )

    def candidates(self, turn: Turn) -> Iterable[str]:
        for handle in turn.agent.hands:
            if self._problem(turn, handle) is None:
                yield f"invoke law {handle}"

    def needs(self, engine: Engine, agent: Agent, match: Mapping[str, Any]) -> Condition | None:
        """The law's ``text`` on a writable I carry (written, if I carry none that reads it), then the
        ``area`` to post it in, then that writable in hand (taken out of the container it is packed in)."""
        text, area = match.get("text"), match.get("area")
        carried: list[str] = []
        if isinstance(text, str) and text:
            carried = [h for h, _ in carried_units(engine, agent) if _reads(engine.state, h, text)]
            if not carried:  # written afresh: a copy lying about may be a posted law, not paper to take
                return text_written(text)
        if isinstance(area, str) and area in engine.state.areas and agent.area != area:
            return in_area(area)
        if carried and not any(h in agent.hands for h in carried):
            handle = carried[0]
            return did("object_taken_out", object=type_of(engine.state, handle), handle=handle)
        return None

    def facts(self, game: Game) -> Iterable[Fact]:
        hours = self.settings.term * game.spec.game.minutes_per_step / 60
        yield Fact(
            "law",
            "What happens to a law I invoke?",
            f"it is posted in the area and binds it for {hours:g} hours",
            ("it binds the whole city forever", "it is read aloud and then lost", "nothing until a judge signs it"),
        )
        yield Fact(
            "law",
            "What can carry a law that I invoke?",
            "any writable with text, held in my hand",
            ("only a city edict", "only a sealed charter", "a spoken oath"),
        )
        for s in STATUTES.values():
            yield Fact(
                "law",
                f"What does the statute '{s.text}' do in an area where it is in force?",
                s.effect,
                tuple(o.effect for o in STATUTES.values() if o.key not in (s.key, s.twin))[:3],
            )


@action_rule
class FileObjection(ActionRule):
    verb = "file objection"
    params = (("notice_name", "writable"),)
    # no depends_on: candidates read the law registry and the pending objections in rule_data; declared as
    # ("place", "ground", "purse", "data") with reads_data = (LAWS, OBJECTIONS) they are exact (the check mode
    # passes) but the registry's repr costs more time than listing the verb afresh (docs/engine.md)
    description = (
        "Object before the court to a law posted here, for a fee: at the hearing a few turns later it is struck down."
    )

    @dataclass(frozen=True)
    class Params:
        fee: int = 2
        hearing_delay: int = 2  # steps until the court hears it

    def _law(self, turn: Turn, handle: str) -> dict[str, Any] | str:
        here = turn.agent.area
        law = next((x for x in laws(turn.state) if x["notice"] == handle and x["area"] == here), None)
        if law is None or handle not in turn.area.objects:
            return f"Cannot file objection against {handle}: no law posted here is written on it."
        data = turn.state.rule_data.get(OBJECTIONS)
        if data and any(o["law"] == law["id"] for o in data["pending"]):
            return f"Cannot file objection against {handle}: an objection to it already awaits its hearing."
        have = carried_coins(turn.engine, turn.agent)
        if have < self.settings.fee:
            fee = self.settings.fee
            return f"Cannot file objection: the court's fee is {fee} {turn.game.currency}, and I carry {have}."
        return law

    def apply(self, turn: Turn, handle: str) -> None:
        law = self._law(turn, handle)
        if isinstance(law, str):
            return turn.fail(law)
        fee = pay(turn.engine, turn.agent, self.settings.fee)
        data = turn.state.rule_data.setdefault(OBJECTIONS, {"pending": []})
        hearing = turn.state.step + self.settings.hearing_delay
        data["pending"].append({"law": law["id"], "by": turn.agent.id, "hearing": hearing, "fee": fee})
        paid = f" and pay the fee of {fee} {turn.game.currency}" if fee else ""
        turn.say(
            f"I file an objection against {describe_law(law, turn.agent.id)}{paid}. "
            f"The court will hear it in {self.settings.hearing_delay} turns."
        )
        turn.emit(
            "objection_filed",
            notice=handle,
            text=law["text"],
            area=law["area"],
            edict=law["edict"] is not None,
            hearing=hearing,
        )

    def candidates(self, turn: Turn) -> Iterable[str]:
        here = turn.agent.area
        for law in laws(turn.state):
            if law["area"] == here and not isinstance(self._law(turn, law["notice"]), str):
                yield f"file objection {law['notice']}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "law",
            "What does filing an objection against a posted law do?",
            f"after a hearing {self.settings.hearing_delay} turns later the law is struck down",
            ("the law is struck down at once", "the law doubles its term", "nothing without a bribe"),
        )
        yield Fact(
            "law",
            "What does the court charge to file an objection?",
            f"{self.settings.fee} {game.currency}",
            ("nothing at all", "half of what I carry", "a writ signed by a judge"),
        )


@action_rule
class AppealVerdict(ActionRule):
    verb = "appeal verdict"
    params = ()
    # no depends_on: candidates read the sentences in rule_data, against the step and the day of the clock
    description = (
        "In the turn after a verdict against me (a fine, or death itself), appeal it: the court "
        "overturns it, once a day."
    )

    @dataclass(frozen=True)
    class Params:
        per_day: int = 1  # appeals the court hears from one citizen per day
        revive: float = 0.5  # share of full health an overturned death sentence leaves me

        def __post_init__(self) -> None:
            if not 0 < self.revive <= 1:
                raise ValueError(f"revive: {self.revive!r} must lie in (0, 1]")

    def _problem(self, turn: Turn) -> str | None:
        if not appealable(turn.state, turn.agent.id):
            return "Cannot appeal verdict: there is no verdict against me to appeal."
        if appeals_left(turn.engine, turn.agent.id) < 1:
            return "Cannot appeal verdict: the court has already heard my appeal today."
        return None

    def apply(self, turn: Turn) -> None:
        problem = self._problem(turn)
        if problem is not None:
            return turn.fail(problem)
        state, agent = turn.state, turn.agent
        data = _verdicts(state)
        overturned = appealable(state, agent.id)
        data["pending"][agent.id] = [s for s in data["pending"][agent.id] if s not in overturned]
        today = day_of(state.minute)
        heard = data["heard"].get(agent.id)
        count = heard["count"] + 1 if heard and heard["day"] == today else 1
        data["heard"][agent.id] = {"day": today, "count": count}
        for s in overturned:
            if s["kind"] == "death":
                agent.hp = max(agent.hp, round(agent.max_hp * self.settings.revive))
                turn.say(f"The court hears my appeal and overturns my death sentence: I rise with {agent.hp} health.")
            else:
                turn.say(f"The court hears my appeal and overturns the verdict ({s['reason']}).")
        turn.emit("verdict_overturned", kinds=[s["kind"] for s in overturned])

    def candidates(self, turn: Turn) -> Iterable[str]:
        if self._problem(turn) is None:
            yield "appeal verdict"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "verdicts",
            "How long do I have to appeal a verdict against me?",
            "one turn",
            ("one day", "three turns", "as long as I like"),
        )
        times = "once" if self.settings.per_day == 1 else f"{self.settings.per_day} times"
        yield Fact(
            "verdicts",
            "How often will the court hear my appeals?",
            f"{times} a day",
            ("as often as I like", "once an hour", "never, once I am sentenced"),
        )


# ============================================================================ step rules
@step_rule
class ContemptOfCourt(StepRule):
    name = "contempt_of_court"
    before = ("attack_update",)  # first: the events so far are exactly what the agents' own commands did
    description = (
        "Turns in a row in which I achieve nothing outside a fight (waiting, refused or invalid "
        "commands) are held in contempt: a warning, then a fine each turn."
    )

    @dataclass(frozen=True)
    class Params:
        patience: int = 3  # idle turns allowed; the next ones are fined
        session_patience: int = 1  # the same where the court is in session
        fine: int = 1  # coins per fined turn
        hp_penalty: int = 3  # health lost instead when I carry no coins

    def apply(self, engine: Engine) -> None:
        state = engine.state
        actors = {ev.agent for ev in engine.events if ev.kind != "invalid_action"}
        data = state.rule_data.setdefault(self.name, {})
        for agent in state.agents.values():
            if agent.combat is not None or agent.id in actors:
                data.pop(agent.id, None)
                continue
            keys = statutes_in(state, agent.area)
            if force(keys, "recess"):
                data.pop(agent.id, None)
                continue
            patience = self.settings.session_patience if force(keys, "session") else self.settings.patience
            idle = data.get(agent.id, 0) + 1
            data[agent.id] = idle
            if idle < patience:
                continue
            if idle == patience:
                engine.say(
                    agent.id,
                    "A clerk of the court coughs pointedly: whoever idles here any longer is held in contempt.",
                )
            else:
                paid = pay(engine, agent, self.settings.fine)
                if paid:
                    engine.say(
                        agent.id, f"I am held in contempt of court for idling and fined {paid} {engine.game.currency}."
                    )
                else:
                    agent.hp = max(1, agent.hp - self.settings.hp_penalty)
                    engine.say(
                        agent.id,
                        f"I am held in contempt of court for idling; with no coin to pay, "
                        f"the bailiff's cane costs me {self.settings.hp_penalty} health.",
                    )
                engine.emit("contempt_fined", agent.id, paid=paid, idle=idle)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "verdicts",
            "What happens if I idle turn after turn outside a fight?",
            f"after {self.settings.patience} idle turns I am fined for contempt every further idle turn",
            ("nothing", "I fall asleep and lose my things", "enemies come to me"),
        )


@step_rule
class NightlyRewrite(StepRule):
    name = "nightly_rewrite"
    after = ("attack_update",)  # rewrites the statutes before law_expiry and the laws' effects read them
    description = (
        "At midnight the Codex rewrites every statute written anywhere into its twin (peace into "
        "strife, search into amnesty...), except papers inside a sealed folio."
    )

    @dataclass(frozen=True)
    class Params:
        hour: int = 0
        sealed: tuple[str, ...] = ("notary_folio",)  # container types whose papers are safe

        def __post_init__(self) -> None:
            if not 0 <= self.hour < 24:
                raise ValueError(f"hour: {self.hour!r} must lie in 0..23")

    def _midnight(self, engine: Engine) -> bool:
        """Whether this step's clock passed the rewrite hour (once a day, whatever the step length)."""
        minute = engine.state.minute - self.settings.hour * 60
        return day_of(minute) != day_of(minute - engine.game.spec.game.minutes_per_step)

    def apply(self, engine: Engine) -> None:
        if not self._midnight(engine):
            return
        state = engine.state
        safe = {h for inst in state.instances.values() if inst.type in self.settings.sealed for h in inst.contents}
        rewritten: dict[str, tuple[str, str]] = {}
        for handle, inst in state.instances.items():
            if not inst.text or handle in safe:
                continue
            statute = statute_of(inst.text)
            if statute is not None:
                inst.text = STATUTES[statute.twin].text
                rewritten[handle] = (statute.text, inst.text)
        if not rewritten:
            return
        for law in laws(state):
            if law["notice"] in rewritten:
                law["text"] = rewritten[law["notice"]][1]
        for agent in state.agents.values():
            seen = [h for h, _ in carried_units(engine, agent) if h in rewritten]
            seen += [h for h in state.areas[agent.area].objects if h in rewritten]
            for h in seen:
                old, new = rewritten[h]
                engine.say(
                    agent.id,
                    f"At the stroke of midnight the ink on {h} crawls across the page: '{old}' now reads '{new}'.",
                )
        engine.emit("laws_rewritten", None, notices=sorted(rewritten))

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "law",
            "What happens to the laws written in the city at midnight?",
            "each statute is rewritten into its twin, except papers in a sealed folio",
            ("they all fade away", "nothing happens", "they double in force"),
        )


@step_rule
class ObjectionEffects(StepRule):
    name = "objection_effects"
    after = ("law_expiry",)  # a notice taken down this very step makes its objection moot
    description = (
        "At its hearing an objection strikes down the law it names (a city edict for good); "
        "if the law is already gone the objection is moot and the fee is returned."
    )

    def apply(self, engine: Engine) -> None:
        state = engine.state
        data = state.rule_data.get(OBJECTIONS)
        if not data or not data["pending"]:
            return
        due = [o for o in data["pending"] if o["hearing"] <= state.step]
        if not due:
            return
        data["pending"] = [o for o in data["pending"] if o not in due]
        reg = _registry(state)
        for o in due:
            law = next((x for x in reg["laws"] if x["id"] == o["law"]), None)
            agent = state.agents.get(o["by"])
            if law is None:
                if agent is not None:
                    if o["fee"]:
                        assert engine.game.currency is not None, "a fee was paid, so the game has a currency"
                        give(engine.game, state, agent, engine.game.currency, o["fee"])
                    engine.say(
                        agent.id,
                        "The court finds my objection moot: that law is no longer in force. "
                        f"My fee of {o['fee']} {engine.game.currency} is returned.",
                    )
                engine.emit("objection_moot", o["by"], fee=o["fee"])
                continue
            unpost_law(engine, law, erase=True)
            if law["edict"] is not None:  # the clerks take a repealed edict's placard away
                reg["edicts"][law["edict"]]["repealed"] = True
                remove_object(state, law["area"], law["notice"])
            text = f"The court upholds the objection: the law '{law['text']}' in {law['area']} is struck down"
            text += " for good." if law["edict"] is not None else "."
            for a in state.agents.values():
                if a.id == o["by"] or a.area == law["area"]:
                    engine.say(a.id, text)
            engine.emit("objection_upheld", o["by"], area=law["area"], text=law["text"], edict=law["edict"] is not None)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "law",
            "What happens to a city edict struck down after an objection?",
            "it is repealed for good",
            ("the clerks post it again the next day", "it comes back at midnight", "it moves to another area"),
        )


@step_rule
class LawExpiry(StepRule):
    name = "law_expiry"
    after = ("nightly_rewrite",)  # reads the statutes as rewritten at midnight
    description = (
        "An invoked law fades when its term runs out; a notice taken down takes its law with it "
        "(tearing down a city edict is fined, and the clerks post a fresh copy later)."
    )

    @dataclass(frozen=True)
    class Params:
        edicts: tuple[tuple[str, str], ...] = ()  # (area, text) of the city's standing edicts
        edict_object: str = "city_edict"  # the writable type the city casts its edicts on
        repost_after: int = 30  # steps until the clerks replace a torn-down edict
        tear_fine: int = 3

    def start(self, engine: Engine) -> None:
        state, game = engine.state, engine.game
        if self.settings.edicts:
            t = game.objects.get(self.settings.edict_object)
            if t is None or t.category != "writable":
                raise ValueError(
                    f"law_expiry.edict_object: {self.settings.edict_object!r} is not a writable of this game"
                )
        for i, (area, text) in enumerate(self.settings.edicts):
            if area not in state.areas or not normalize_text(text):
                raise ValueError(f"law_expiry.edicts[{i}]: unknown area {area!r} or empty text")
            _registry(state)["edicts"].append(
                {"area": area, "text": normalize_text(text), "notice": None, "repealed": False, "repost_at": None}
            )
            self._post_edict(engine, i)

    def _post_edict(self, engine: Engine, i: int) -> None:
        state = engine.state
        edict = _registry(state)["edicts"][i]
        handle = state.new_handle(self.settings.edict_object)
        state.instances[handle] = Instance(type=self.settings.edict_object, text=edict["text"])
        add(state.areas[edict["area"]].objects, handle)
        edict["notice"], edict["repost_at"] = handle, None
        post_law(engine, handle, edict["area"], edict["text"], None, None, edict=i)

    def apply(self, engine: Engine) -> None:
        state = engine.state
        reg = state.rule_data.get(LAWS)
        if not reg:
            return
        for law in list(reg["laws"]):
            if law["notice"] not in state.areas[law["area"]].objects:
                self._withdrawn(engine, reg, law)
            elif law["until"] is not None and law["until"] <= state.step:
                unpost_law(engine, law, erase=True)
                for a in state.agents.values():
                    if a.id == law["by"] or a.area == law["area"]:
                        engine.say(
                            a.id,
                            f"The ink of the law '{law['text']}' on {law['notice']} fades: "
                            f"its term in {law['area']} is over.",
                        )
                engine.emit("law_expired", law["by"], area=law["area"], text=law["text"], notice=law["notice"])
        for i, edict in enumerate(reg["edicts"]):
            if edict["repost_at"] is not None and edict["repost_at"] <= state.step and not edict["repealed"]:
                self._post_edict(engine, i)
                for a in state.agents.values():
                    if a.area == edict["area"]:
                        engine.say(a.id, f"A clerk of the city posts a fresh edict here: '{edict['text']}'.")
        if "area_entered" in engine.kinds or "area_inspected" in engine.kinds:
            for ev in engine.events:
                if ev.kind in ("area_entered", "area_inspected") and ev.agent in state.agents:
                    here = [describe_law(x, ev.agent) for x in reg["laws"] if x["area"] == ev.data["area"]]
                    if here:
                        engine.say(ev.agent, "Laws in force here: " + "; ".join(here) + ".")
                    elif ev.kind == "area_inspected":
                        engine.say(ev.agent, "No law is posted here.")

    def _withdrawn(self, engine: Engine, reg: dict[str, Any], law: dict[str, Any]) -> None:
        """A notice left the ground where it was posted: its law is gone, and whoever took it down is named."""
        unpost_law(engine, law, erase=False)
        taker = next(
            (ev.agent for ev in engine.events if ev.agent is not None and ev.data.get("handle") == law["notice"]), None
        )
        if law["edict"] is not None:
            edict = reg["edicts"][law["edict"]]
            edict["notice"], edict["repost_at"] = None, engine.state.step + self.settings.repost_after
            if taker is not None:
                engine.say(
                    taker,
                    f"I tore down the city's edict '{law['text']}'. The watch has seen it: "
                    f"a fine of {self.settings.tear_fine} {engine.game.currency} unless I appeal verdict.",
                )
                sentence(engine, taker, "fine", "tearing down an edict of the city", self.settings.tear_fine)
        elif taker is not None:
            engine.say(taker, f"I took down the law '{law['text']}': it no longer binds {law['area']}.")
        engine.emit("law_withdrawn", taker, area=law["area"], text=law["text"], edict=law["edict"] is not None)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "law",
            "What happens if I take down a notice that carries a law?",
            "the law stops binding the area",
            ("the law spreads to my area", "nothing", "the notice burns my hands"),
        )
        yield Fact(
            "law",
            "What does tearing down a city edict cost?",
            f"a fine of {self.settings.tear_fine} {game.currency}",
            ("nothing", "my life", "a level"),
        )


@step_rule
class BindingPrecedent(StepRule):
    name = "binding_precedent"
    after = ("day_night",)  # with the hour's modifiers set, before the paradox check and the fights
    description = (
        "Once I defeat an enemy of a kind, the city holds a precedent against it: every enemy of that "
        "kind is weaker (stacking a few times). Enemies also answer to the peace or strife of their area."
    )

    @dataclass(frozen=True)
    class Params:
        weaken: float = 0.15  # attack and health lost per precedent
        max_stacks: int = 3
        peace_attack: float = 0.5
        strife_attack: float = 1.5

        def __post_init__(self) -> None:
            if not 0 <= self.weaken * self.max_stacks < 1:
                raise ValueError("weaken * max_stacks must lie in [0, 1)")

    def apply(self, engine: Engine) -> None:
        state, kinds = engine.state, engine.game.npcs
        data = state.rule_data.setdefault(self.name, {"kills": {}, "sig": None})
        if "npc_defeated" in engine.kinds:
            for ev in engine.events:
                if ev.kind == "npc_defeated" and kinds[ev.data["type"]].common_enemy:
                    n = data["kills"].get(ev.data["type"], 0) + 1
                    data["kills"][ev.data["type"]] = n
                    if n <= self.settings.max_stacks:
                        assert ev.agent is not None, '"npc_defeated" always names the agent who struck the blow'
                        engine.say(
                            ev.agent,
                            f"The city records a precedent against the {ev.data['type']} "
                            f"({n} of {self.settings.max_stacks}): every one of them is weaker now.",
                        )
                        engine.emit("precedent_set", ev.agent, type=ev.data["type"], stacks=n)
        sig = [
            [[x["area"], x["text"]] for x in laws(state)],
            sum(data["kills"].values()),
            len(state.npcs),
            sum(state.counters.values()),
        ]
        if sig == data["sig"]:
            return  # no law, precedent or enemy changed: strengths stand
        data["sig"] = sig
        laws_by_area: dict[str, set[str]] = {}
        for npc in state.npcs.values():
            t = kinds[npc.type]
            if not t.hostile or npc.origin == "expansion":
                continue
            stacks = min(data["kills"].get(npc.type, 0), self.settings.max_stacks) if t.common_enemy else 0
            factor = 1 - self.settings.weaken * stacks
            new_max = round(t.hp * factor)
            if npc.max_hp != new_max:  # a new precedent (or a new enemy of a kind with one): its health too
                npc.hp = max(1, round(npc.hp * new_max / npc.max_hp))
                npc.max_hp = new_max
            keys = laws_by_area.get(npc.area)
            if keys is None:
                keys = laws_by_area[npc.area] = statutes_in(state, npc.area)
            if force(keys, "peace"):
                factor *= self.settings.peace_attack
            elif force(keys, "strife"):
                factor *= self.settings.strife_attack
            npc.attack = round(t.attack * factor)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "combat",
            "What happens to a kind of enemy once I have defeated one of them?",
            "every enemy of that kind becomes weaker",
            ("they grow stronger for revenge", "nothing", "they flee the city"),
        )


@step_rule
class LegalParadox(StepRule):
    name = PARADOX
    after = ("binding_precedent",)  # after the laws of the step are settled, before enemies act
    before = ("combat_rhythm",)
    description = (
        "Three or more laws in one area that include a statute and its twin are a paradox: the "
        "area's enemies stand frozen (no blows, no ambushes) until it is resolved."
    )

    @dataclass(frozen=True)
    class Params:
        threshold: int = 3

    def apply(self, engine: Engine) -> None:
        state = engine.state
        posted = laws(state)
        threshold = self.settings.threshold
        now: list[str] = []
        if len(posted) >= threshold:  # fewer laws in the whole city: no area can hold a paradox (most steps)
            counts: dict[str, int] = {}
            keys: dict[str, set[str]] = {}
            for law in posted:
                counts[law["area"]] = counts.get(law["area"], 0) + 1
                s = BY_TEXT.get(law["text"])
                if s is not None:
                    keys.setdefault(law["area"], set()).add(s.key)
            now = sorted(
                a
                for a, n in counts.items()
                if n >= threshold and any(STATUTES[k].twin in keys.get(a, ()) for k in keys.get(a, ()))
            )
        data = state.rule_data.get(self.name)
        before = data["areas"] if data else []
        if now != before:
            state.rule_data[self.name] = {"areas": now}
            for a in before:
                if a not in now:
                    for handle in state.areas[a].npcs:
                        npc = state.npcs[handle]
                        if npc.engaged == FROZEN:
                            npc.engaged = None
                    self._announce(engine, a, "The contradiction in {a} is resolved: its enemies stir again.")
                    engine.emit("paradox_ended", None, area=a)
            for a in now:
                if a not in before:
                    self._announce(
                        engine,
                        a,
                        "The laws of {a} contradict each other: every enemy here stands "
                        "frozen, unable to tell which to obey.",
                    )
                    engine.emit("paradox_began", None, area=a)
        kinds = engine.game.npcs
        for a in now:
            for handle in state.areas[a].npcs:
                npc = state.npcs[handle]
                if kinds[npc.type].hostile:
                    npc.engaged = FROZEN

    def _announce(self, engine: Engine, area: str, text: str) -> None:
        tell(engine, area, text.format(a=area))

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "law",
            "What happens in an area where three laws contradict each other?",
            "its enemies stand frozen",
            ("the laws all vanish", "the area is locked", "enemies there grow stronger"),
        )


@step_rule
class TrialProceedings(StepRule):
    name = "trial_proceedings"
    after = ("ambush",)  # after the blows of combat and ambushes, which count as provocation
    description = (
        "Every killing is tried by a spectral judge: lawful if the victim struck me first or the "
        "area's law bares the blades, a crime without provocation or under the peace (a fine)."
    )

    @dataclass(frozen=True)
    class Params:
        fine: int = 2
        hp_penalty: float = 0.1  # share of full health lost instead of an unpaid fine

    def apply(self, engine: Engine) -> None:
        state = engine.state
        struck = state.rule_data.setdefault(self.name, {"struck": {}})["struck"]
        events = () if engine.kinds.isdisjoint(TRIAL_EVENTS) else engine.events  # most steps: no killing, no blow
        for ev in events:  # in order: a killing (an action) comes before this step's blows
            if ev.kind == "npc_defeated":
                hit = {a: mine.pop(ev.data["npc"], None) for a, mine in struck.items()}  # the dead strike no more
                assert ev.agent is not None, '"npc_defeated" always names the agent who struck the blow'
                self._try(engine, ev.agent, ev.data, provoked=hit.get(ev.agent) is not None)
            elif ev.kind in ("agent_hit", "agent_ambushed"):
                struck.setdefault(ev.agent, {})[ev.data["npc"]] = state.step
        for agent in state.agents.values():
            for s in take_due(state, agent.id, "fine"):
                paid = pay(engine, agent, s["amount"])
                if paid:
                    engine.say(
                        agent.id, f"The sentence for {s['reason']} is carried out: I pay {paid} {engine.game.currency}."
                    )
                else:
                    loss = round(agent.max_hp * self.settings.hp_penalty)
                    agent.hp = max(1, agent.hp - loss)
                    engine.say(
                        agent.id,
                        f"The sentence for {s['reason']} is carried out: with no coin to pay, "
                        f"I am flogged for {loss} health.",
                    )
                engine.emit("sentence_carried_out", agent.id, kind="fine", paid=paid)

    def _try(self, engine: Engine, agent_id: str, killed: dict[str, Any], provoked: bool) -> None:
        keys = statutes_in(engine.state, killed["area"])
        if force(keys, "peace"):
            guilty, reason = True, f"killing {killed['npc']} under the peace of {killed['area']}"
        elif force(keys, "strife"):
            guilty, reason = False, f"the law of {killed['area']} bares the blades"
        elif provoked:
            guilty, reason = False, f"{killed['npc']} struck first"
        else:
            guilty, reason = True, f"killing {killed['npc']} without provocation"
        if guilty:
            engine.say(
                agent_id,
                f"A spectral judge rises from the stones to try the death of {killed['npc']}: "
                f"GUILTY of {reason}. Sentence: a fine of {self.settings.fine} {engine.game.currency}, "
                "carried out next turn unless I appeal verdict.",
            )
            sentence(engine, agent_id, "fine", reason, self.settings.fine)
        else:
            engine.say(
                agent_id,
                f"A spectral judge rises from the stones to try the death of {killed['npc']}: acquitted, for {reason}.",
            )
        engine.emit("verdict", agent_id, npc=killed["npc"], type=killed["type"], guilty=guilty, reason=reason)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "verdicts",
            "When does the spectral judge acquit me of a killing?",
            "when the victim struck me first, or the area's law bares the blades",
            ("never", "always", "only at night"),
        )
        yield Fact(
            "verdicts",
            "What is the sentence for an unlawful killing?",
            f"a fine of {self.settings.fine} {game.currency}",
            ("death", "banishment from the city", "the loss of everything I carry"),
        )


@step_rule
class ContrabandSuspicion(StepRule):
    name = "contraband_suspicion"
    after = ("respawn",)  # once the world's processes have run, before the quests look
    description = (
        "Carrying more than the watch allows draws suspicion: a warning, then now and then the "
        "watch seizes a unit of the goods I carry most of (materials and trade goods)."
    )

    @dataclass(frozen=True)
    class Params:
        limit: int = 14  # units carried (coins aside) before the watch takes an interest
        chance: float = 0.25  # odds of a search each step while over the limit
        search_limit: int = 7  # the same where every pack shall be searched
        seized: tuple[str, ...] = ("material", "misc")  # categories the watch calls contraband
        fine: int = 1  # coins taken when nothing seizable is found

        def __post_init__(self) -> None:
            if not 0 <= self.search_limit <= self.limit:  # apply reads no law under the lower limit
                raise ValueError(f"search_limit: {self.search_limit!r} must lie in 0..limit ({self.limit})")

    def apply(self, engine: Engine) -> None:
        state, game = engine.state, engine.game
        data = state.rule_data.setdefault(self.name, {})
        for agent in state.agents.values():
            load: dict[str, int] = {}
            for handle, n in carried_units(engine, agent):
                if handle != game.currency:
                    load[handle] = load.get(handle, 0) + n
            total = sum(load.values())
            search_limit: int = self.settings.search_limit
            limit: int | None = search_limit
            if total > search_limit:  # over the lower limit: the area's laws decide (under it, they need not be read)
                keys = statutes_in(state, agent.area)
                limit = None if force(keys, "amnesty") else limit if force(keys, "search") else self.settings.limit
            if limit is None or total <= limit:  # no suspicion: a later heavy load is warned of afresh
                data.pop(agent.id, None)
                continue
            if not data.get(agent.id):
                data[agent.id] = True
                engine.say(
                    agent.id, f"The watch eyes my load: {total} things, where the law of {agent.area} allows {limit}."
                )
            if engine.rng.random() >= self.settings.chance:
                continue
            goods = [
                (n, h) for h, n in load.items() if game.objects[type_of(state, h)].category in self.settings.seized
            ]
            if goods:
                n, handle = max(goods, key=lambda g: g[0])  # the first of the largest, in carried order
                take_carried(game, state, agent, handle, 1)
                engine.say(agent.id, f"The watch searches me and seizes 1 {handle} as contraband.")
                engine.emit("contraband_seized", agent.id, object=type_of(state, handle), amount=1)
            else:
                paid = pay(engine, agent, self.settings.fine)
                engine.say(
                    agent.id,
                    f"The watch searches me, finds no contraband, and fines me {paid} {game.currency} for the trouble.",
                )
                engine.emit("contraband_seized", agent.id, object=None, amount=0, paid=paid)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "law",
            "What happens if I carry a great many things through the city?",
            "the watch may seize some of my goods as contraband",
            ("I move more slowly", "nothing", "my pack tears"),
        )


@step_rule
class CondemnedDeath(StepRule):
    """The base death rule, with a court between the fall and the grave."""

    name = "death"
    description = (
        "At zero health the city sentences me to death, but I have one turn to appeal verdict; "
        "unappealed, I drop everything where I fell and wake at the spawn area."
    )

    def apply(self, engine: Engine) -> None:
        state = engine.state
        for agent in state.agents.values():
            if take_due(state, agent.id, "death"):
                engine.say(agent.id, "My death sentence stands.")
                fall(engine, agent)
            elif agent.hp <= 0:
                if appeals_left(engine, agent.id) < 1:
                    fall(engine, agent)
                    continue
                agent.hp = 1
                agent.combat = None
                for handle in state.areas[agent.area].npcs:
                    npc = state.npcs[handle]
                    if npc.engaged == agent.id:
                        npc.engaged = None
                        npc.stance_index = 0
                sentence(engine, agent.id, "death", "falling in the streets")
                engine.say(
                    agent.id,
                    "I fall, and a spectral court pronounces me dead. The fighting stops; I have "
                    "one turn to appeal verdict before the sentence stands.",
                )
                engine.emit("death_sentenced", agent.id, area=agent.area)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "death",
            "What happens when my health reaches zero?",
            "I am sentenced to death but may appeal the verdict in the next turn",
            ("I die at once and lose everything", "nothing", "I become a wraith"),
        )


# ============================================================================ quest predicates
@predicate("edict_repealed")
def edict_repealed(engine: Engine, agent: Agent, area: str) -> bool:
    """A city edict posted in ``area`` has been struck down by the court for good."""
    data = engine.state.rule_data.get(LAWS)
    if not data:
        return False
    return any(e["area"] == area and e["repealed"] for e in data["edicts"])


@predicate("paradox_in")
def paradox_in(engine: Engine, agent: Agent, area: str) -> bool:
    """The laws of ``area`` are in paradox now (its enemies stand frozen)."""
    data = engine.state.rule_data.get(PARADOX)
    if not data:
        return False
    return area in data["areas"]
