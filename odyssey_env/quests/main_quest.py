"""The main quest: chapters of stages, linear or a DAG, a guide who hints, bosses introduced on cue.

A stage is *open* once every stage it requires is complete, and it can only complete while open, so
no stage is awarded before its prerequisites (paper A3.1, "Quest progression"). Completing a stage
emits exactly one ``quest_stage_completed`` event, so the maximum main-quest reward equals the number
of stages in every game (the reference's base game could only reach 7 of its 9).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from odyssey_env.quests.conditions import holds
from odyssey_env.quests.spec import Chapter, Guide, MainQuest, Stage
from odyssey_env.rules import StepRule, step_rule
from odyssey_env.weakcache import IdentityCache
from odyssey_env.world import add, make_objects
from odyssey_env.worldgen import spawn_npc

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.game import Game
    from odyssey_env.state import Agent

NAME = "main_quest"


def _main(game: Game) -> MainQuest:
    """The game's main quest; this rule is active only in games that have one."""
    main = game.quest.main
    assert main is not None, "the main-quest rule runs only in a game with a main quest"
    return main


@dataclass(frozen=True)
class Plan:
    """The stage graph with every ``requires`` made explicit, in a valid completion order."""

    stages: tuple[Stage, ...]  # file order
    requires: dict[str, tuple[str, ...]]
    chapter_of: dict[str, Chapter]  # stage id -> its chapter
    last_of_chapter: dict[str, Chapter]  # stage id that closes a chapter -> that chapter
    by_id: dict[str, Stage]
    #: stage id -> its entry in ``progress()["current"]`` (copied there: info is built every step)
    summary: dict[str, dict[str, str]]


def plan(main: MainQuest) -> Plan:
    """The plan of a main quest (worked out once per main quest object); raises ValueError if some stage
    can never open."""
    hit = _plans.entries.get(id(main))  # the cache read inline: asked two or three times a step
    return hit[1] if hit is not None else _plans(main)


def _make_plan(main: MainQuest) -> Plan:
    stages: list[Stage] = []
    requires: dict[str, tuple[str, ...]] = {}
    chapter_of: dict[str, Chapter] = {}
    last_of: dict[str, Chapter] = {}
    previous: str | None = None
    for ch in main.chapters:
        for st in ch.stages:
            stages.append(st)
            requires[st.id] = st.requires if st.requires is not None else ((previous,) if previous else ())
            chapter_of[st.id] = ch
            previous = st.id
        if ch.stages:
            last_of[ch.stages[-1].id] = ch
    # Kahn's algorithm in file order: detects cycles and proves every stage is reachable.
    done: set[str] = set()
    remaining = [s.id for s in stages]
    while remaining:
        ready = [s for s in remaining if all(r in done for r in requires[s])]
        if not ready:
            raise ValueError(f"stages {', '.join(remaining)} can never open: their requires form a cycle")
        done.update(ready)
        remaining = [s for s in remaining if s not in done]
    summary = {s.id: {"id": s.id, "title": s.title, "chapter": chapter_of[s.id].title} for s in stages}
    return Plan(tuple(stages), requires, chapter_of, last_of, {s.id: s for s in stages}, summary)


_plans: IdentityCache[MainQuest, Plan] = IdentityCache(_make_plan)


def open_stages(p: Plan, done: list[str]) -> list[Stage]:
    finished = set(done)
    return [s for s in p.stages if s.id not in finished and all(r in finished for r in p.requires[s.id])]


class Progress(TypedDict):
    """``info["quest"]``: the quest's title, stages completed of the total, and the open ones."""

    title: str
    completed: int
    total: int
    current: list[dict[str, str]]  # the open stages' summaries: id, title, chapter
    done: bool  # no stage left open


def progress(engine: Engine, agent_id: str) -> Progress:
    """Main-quest progress for ``info["quest"]``."""
    main = _main(engine.game)
    data = engine.state.rule_data[NAME]["agents"][agent_id]
    p = plan(main)
    summary = p.summary
    current = [summary[s].copy() for s in data["open"]]
    return {
        "title": main.title,
        "completed": len(data["done"]),
        "total": len(p.stages),
        "current": current,
        "done": not current,
    }


@step_rule
class MainQuestRule(StepRule):
    name = NAME
    description = "Checks the open main-quest stages, awards completed ones, opens the next, answers the guide."

    def active(self, game: Game) -> bool:
        return game.quest.main is not None

    def start(self, engine: Engine) -> None:
        main = engine.game.quest.main
        state = engine.state
        if main is None:
            return
        initial = [s.id for s in open_stages(plan(main), [])]
        state.rule_data[NAME] = {
            "agents": {a: {"done": [], "open": list(initial), "announced": False} for a in state.agents},
            "introduced": [],
        }
        if main.guide is not None:
            guide = spawn_npc(
                engine.game, state, engine.game.npcs[main.guide.npc], main.guide.area or state.spawn, origin="quest"
            )
            state.rule_data[NAME]["guide"] = guide.handle
        p = plan(main)
        for stage in open_stages(p, []):
            self._introduce(engine, stage)
        for agent in state.agents.values():
            if not agent.in_tutorial:
                self._announce(engine, agent)

    def apply(self, engine: Engine) -> None:
        main = engine.game.quest.main
        if main is None:
            return
        data = engine.state.rule_data[NAME]
        for agent in engine.state.agents.values():
            if agent.in_tutorial:
                continue
            mine = data["agents"][agent.id]
            opened = not mine["announced"]
            if opened:
                self._announce(engine, agent)
            before = len(mine["done"])
            self._advance(engine, agent, mine)
            if main.guide is not None and main.guide.follows:
                self._follow(engine, agent, mine, main.guide, opened or len(mine["done"]) != before)
            if main.guide is not None and "talked_to" in engine.kinds:
                self._answer_guide(engine, agent, mine, main.guide.npc)
        if "npc_defeated" in engine.kinds and len(data["agents"]) > 1:
            self._bring_back(engine, data)

    # ------------------------------------------------------------------ internals
    def _advance(self, engine: Engine, agent: Agent, mine: dict[str, Any]) -> None:
        main = _main(engine.game)
        p = plan(main)
        progressed = True
        while progressed:  # a completion may open a stage whose condition already holds
            progressed = False
            for stage_id in mine["open"]:
                stage = p.by_id[stage_id]
                if not holds(engine, agent, stage.done):
                    continue
                mine["done"].append(stage.id)
                progressed = True
                n = len(mine["done"])
                text = stage.on_complete or f"I completed: {stage.title}."
                engine.say(agent.id, f"Stage complete ({n}/{len(p.stages)}): {text}")
                engine.emit(
                    "quest_stage_completed", agent.id, stage=stage.id, chapter=p.chapter_of[stage.id].title, index=n
                )
                if stage.id in p.last_of_chapter:
                    engine.say(agent.id, f"=== Chapter complete: {p.last_of_chapter[stage.id].title} ===")
                was_open = mine["open"]
                opened = open_stages(p, mine["done"])
                mine["open"] = [s.id for s in opened]
                if not opened:
                    engine.say(agent.id, f"=== {main.outro} ===")
                    engine.emit("quest_completed", agent.id, title=main.title)
                    engine.state.done = True
                    return
                told: set[str] = set()
                introduced = engine.state.rule_data[NAME]["introduced"]
                for nxt in opened:
                    if nxt.id in was_open:
                        continue
                    if nxt.id not in introduced:
                        self._introduce(engine, nxt)
                    else:  # another agent opened it first: what it needs may be gone
                        self._respawn(engine, nxt)
                    self._tell_stage(engine, agent, nxt, told)
                break  # the open list changed: rescan it

    def _introduce(self, engine: Engine, stage: Stage) -> None:
        """Bring a stage's NPCs and objects into the world, once per episode."""
        state = engine.state
        state.rule_data[NAME]["introduced"].append(stage.id)
        for sp in stage.spawn:
            spawn_npc(engine.game, state, engine.game.npcs[sp.npc], sp.area, origin="quest")
        for pl in stage.place:
            for handle, k in make_objects(engine.game, state, pl.object, pl.amount):
                add(state.areas[pl.area].objects, handle, k)

    def _respawn(self, engine: Engine, stage: Stage) -> None:
        """Bring back a stage's NPCs of which none is alive, in the stage's area.

        With several agents in one world, one agent may defeat the boss of a stage another agent has
        yet to clear; each agent's quest must stay completable, so the boss returns for it.
        """
        state = engine.state
        for sp in stage.spawn:
            if not any(npc.type == sp.npc for npc in state.npcs.values()):
                spawn_npc(engine.game, state, engine.game.npcs[sp.npc], sp.area, origin="quest")

    def _bring_back(self, engine: Engine, data: dict[str, Any]) -> None:
        """After a stage NPC fell to someone other than an agent whose open stage needs it, bring it back."""
        p = plan(_main(engine.game))
        for ev in engine.events:
            if ev.kind != "npc_defeated":
                continue
            for agent_id, mine in data["agents"].items():
                if agent_id == ev.agent or agent_id not in engine.state.agents:
                    continue
                for stage_id in mine["open"]:
                    stage = p.by_id[stage_id]
                    if any(sp.npc == ev.data["type"] for sp in stage.spawn):
                        self._respawn(engine, stage)

    def _tell_stage(self, engine: Engine, agent: Agent, stage: Stage, told: set[str]) -> None:
        """Announce a stage that opened; ``told`` holds the chapters announced in the same breath (a
        DAG chapter opens all its leaves at once, and its heading is said once)."""
        p = plan(_main(engine.game))
        chapter = p.chapter_of[stage.id]
        first_of_chapter = all(r not in p.chapter_of or p.chapter_of[r] is not chapter for r in p.requires[stage.id])
        if first_of_chapter and chapter.id not in told:
            told.add(chapter.id)
            engine.say(agent.id, f"=== {chapter.title} ===" + (f" {chapter.intro}" if chapter.intro else ""))
        engine.say(agent.id, f"New objective: {stage.title}." + (f" {stage.on_open}" if stage.on_open else ""))

    def _announce(self, engine: Engine, agent: Agent) -> None:
        main = _main(engine.game)
        mine = engine.state.rule_data[NAME]["agents"][agent.id]
        mine["announced"] = True
        engine.say(agent.id, f"=== MAIN QUEST: {main.title} ===" + (f" {main.intro}" if main.intro else ""))
        told: set[str] = set()
        for stage_id in mine["open"]:
            self._tell_stage(engine, agent, plan(main).by_id[stage_id], told)

    def _follow(self, engine: Engine, agent: Agent, mine: dict[str, Any], guide: Guide, opened: bool) -> None:
        """The guide joins me when a stage opens for me, and again after ``guide.reminder`` steps without one."""
        state = engine.state
        if state.done:
            return
        since = mine.setdefault("guide_step", state.step)
        reminded = not opened and guide.reminder > 0 and state.step - since >= guide.reminder
        if not (opened or reminded):
            return
        mine["guide_step"] = state.step
        npc = state.npcs.get(state.rule_data[NAME].get("guide", ""))
        if npc is None or npc.hp <= 0:
            return
        if npc.area != agent.area:
            for other in state.agents.values():
                if other.area == npc.area:
                    engine.say(other.id, f"{npc.handle} leaves.")
            state.areas[npc.area].npcs.remove(npc.handle)
            state.areas[agent.area].npcs.append(npc.handle)
            npc.area = agent.area
            engine.say(agent.id, f"{npc.handle} joins me here.")
        if reminded:
            engine.say(agent.id, f'{npc.handle} says: "Still on it? Talk to me when you want your task again."')

    def _answer_guide(self, engine: Engine, agent: Agent, mine: dict[str, Any], guide: str) -> None:
        if "talked_to" not in engine.kinds:
            return
        for ev in engine.events:
            if ev.kind == "talked_to" and ev.agent == agent.id and ev.data["type"] == guide:
                current = [plan(_main(engine.game)).by_id[s] for s in mine["open"]]
                if not current:
                    engine.say(agent.id, f'{ev.data["npc"]} says: "You have done all I could ask."')
                for stage in current:
                    engine.say(agent.id, f'{ev.data["npc"]} says: "{stage.title}: {stage.hint}"')
