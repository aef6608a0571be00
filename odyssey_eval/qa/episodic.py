"""Episodic-Memory QA: what happened to the agent, from its own trajectory (play steps only).

Templates:

* ``visited_area``    which area the agent has been in
* ``crafted_object``  which object it crafted (``none`` when it crafted nothing)
* ``defeated_npc``    which kind of NPC it defeated (``none`` likewise)
* ``acquired_object`` which object it came to hold (``none`` likewise)
* ``action_at``       what it did in a given area at a given time
* ``next_action``     which command followed five given consecutive commands (asked only when those
                      five are always followed by the same command, so the answer is unambiguous)
* ``drop_location``   where it left an object on the ground (asked only for objects left in one area)

Questions about the tutorial are not asked: its room is gone and its steps are not play.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from odyssey_eval.qa.questions import NONE, Question, check_single_truth, make_question
from odyssey_eval.trajectory import Trajectory

if TYPE_CHECKING:
    from odyssey_env.game import Game

__all__ = ["TEMPLATES", "EpisodeLog", "episodic_questions", "verify_episodic"]

TEMPLATES = (
    "visited_area",
    "crafted_object",
    "defeated_npc",
    "acquired_object",
    "action_at",
    "next_action",
    "drop_location",
)
KIND = "episodic"
WINDOW = 5


#: The keys of a trajectory line that Episodic-Memory questions read (and nothing else of a line).
_READ = ("action", "area", "time", "tutorial", "events")
_ABSENT = object()


class EpisodeLog:
    """What Episodic-Memory questions read of a run, kept as the run goes: per step, the keys in
    :data:`_READ` as one small tuple, instead of whole trajectory lines. A runner asking rounds during
    and after play ``add``s every step line and hands :meth:`trajectory` to :func:`episodic_questions`;
    the questions and answers are those the whole trajectory gives, since they read nothing else.
    Tuples of names and numbers drop out of the garbage collector's sight, so a long run's log costs
    little memory and no collection time."""

    def __init__(self, reset: Mapping[str, Any]):
        self.reset = {k: reset[k] for k in ("area", "time") if k in reset}
        self._steps: list[tuple[Any, ...]] = []

    def add(self, step: Mapping[str, Any]) -> None:
        get = step.get
        self._steps.append(
            (
                get("action", _ABSENT),
                get("area", _ABSENT),
                get("time", _ABSENT),
                get("tutorial", _ABSENT),
                get("events", _ABSENT),
            )
        )

    def __len__(self) -> int:
        return len(self._steps)

    def trajectory(self) -> Trajectory:
        """The run so far, as lines holding only what the questions read."""
        return Trajectory(
            dict(self.reset),
            [{k: v for k, v in zip(_READ, row, strict=True) if v is not _ABSENT} for row in self._steps],
        )


class _Memory:
    """What the play part of a trajectory says, gathered once (lists in order of first occurrence)."""

    def __init__(self, traj: Trajectory):
        self.decisions = [(b, s) for b, s in traj.decisions() if not s.get("tutorial")]
        self.visited: dict[str, None] = {}
        self.crafted: dict[str, None] = {}
        self.defeated: dict[str, None] = {}
        self.acquired: dict[str, None] = {}
        self.left: dict[str, dict[str, None]] = {}  # handle -> areas where it was put down
        for before, step in self.decisions:
            self.visited.setdefault(before["area"])
            self.visited.setdefault(step["area"])
            for ev in step.get("events", ()):
                kind = ev.get("kind")
                if kind == "object_crafted":
                    self.crafted.setdefault(ev["object"])
                elif kind == "npc_defeated":
                    self.defeated.setdefault(ev["type"])
                elif kind == "object_acquired":
                    self.acquired.setdefault(ev["object"])
                elif kind in ("object_dropped", "object_discarded"):
                    self.left.setdefault(ev["handle"], {}).setdefault(ev["area"])
                elif kind == "agent_died":
                    for handle in ev.get("dropped", ()):
                        self.left.setdefault(handle, {}).setdefault(ev["area"])
        self.actions = [s["action"] for _, s in self.decisions]
        # every WINDOW consecutive commands -> the commands that followed them, in one pass (asking each
        # window's followers by scanning the run would cost O(steps^2) per QA round)
        self.followers: dict[tuple[str, ...], set[str]] = {}
        acts = self.actions
        for i in range(len(acts) - WINDOW):
            self.followers.setdefault(tuple(acts[i : i + WINDOW]), set()).add(acts[i + WINDOW])


def episodic_questions(
    traj: Trajectory,
    game: Game,
    seed: int,
    *,
    per_template: int = 5,
    n_choices: int = 4,
    salt: str = "",
    templates: tuple[str, ...] = TEMPLATES,
) -> list[Question]:
    """Sample up to ``per_template`` checked questions of each template about this trajectory.

    ``salt`` (e.g. the step) varies the sample between rounds of the same run.
    """
    unknown = sorted(set(templates) - set(TEMPLATES))
    if unknown:
        raise ValueError(f"unknown Episodic-Memory template(s) {unknown}; known: {', '.join(TEMPLATES)}")
    mem = _Memory(traj)
    out: list[Question] = []
    for template in templates:
        rng = random.Random(f"odyssey:qa:{KIND}:{game.name}:{seed}:{salt}:{template}")
        for i, q in enumerate(_GENERATORS[template](mem, game, rng, per_template, n_choices)):
            q = Question(f"em/{template}/{i}", q.kind, q.template, q.text, q.choices, q.answer, q.subject)
            verify_episodic(q, traj)
            out.append(q)
    return out


def _q(rng, template, text, answer, wrong, n, subject, extra=()):
    return make_question(
        rng,
        qid="",
        kind=KIND,
        template=template,
        text=text,
        answer=answer,
        wrong=wrong,
        n_choices=n,
        subject={"template": template, **subject},
        extra_wrong=extra,
    )


def _set_question(template: str, attr: str, text: str, universe_of, *, can_be_empty: bool = True):
    """A 'which X did you ...' template: one member of ``mem.<attr>`` against non-members of the
    game's ``universe_of(game)``. Where the set can be empty (nothing crafted yet), ``none`` is always a
    choice, and the answer when it is empty; every run has visited an area, so that template has none."""

    def generate(mem: _Memory, game, rng, count, n):
        truth = list(getattr(mem, attr))
        wrong = [x for x in universe_of(game) if x not in truth]
        out = []
        answers = rng.sample(truth, min(count, len(truth))) if truth or not can_be_empty else [NONE]
        for answer in answers:
            extra = (NONE,) if can_be_empty and answer != NONE else ()
            q = _q(rng, template, text, answer, wrong, n, {}, extra=extra)
            if q:
                out.append(q)
        return out

    return generate


def _action_at(mem: _Memory, game, rng, count, n):
    distinct = sorted(set(mem.actions))
    out = []
    indices = list(range(len(mem.decisions)))
    for i in rng.sample(indices, min(count, len(indices))):
        before, step = mem.decisions[i]
        q = _q(
            rng,
            "action_at",
            f"What did you do in {before['area']} at {before['time']}?",
            step["action"],
            distinct,
            n,
            {"area": before["area"], "time": before["time"]},
        )
        if q:
            out.append(q)
    return out


def _next_action(mem: _Memory, game, rng, count, n):
    acts = mem.actions
    distinct = sorted(set(acts))
    starts = [i for i in range(len(acts) - WINDOW) if len(mem.followers[tuple(acts[i : i + WINDOW])]) == 1]
    out = []
    for i in rng.sample(starts, min(count, len(starts))):
        window = acts[i : i + WINDOW]
        listed = "; ".join(f"'{a}'" for a in window)
        q = _q(
            rng,
            "next_action",
            f"You did these {WINDOW} things in a row: {listed}. What did you do next?",
            acts[i + WINDOW],
            distinct,
            n,
            {"window": list(window)},
        )
        if q:
            out.append(q)
    return out


def _drop_location(mem: _Memory, game, rng, count, n):
    single = [h for h, areas in mem.left.items() if len(areas) == 1]
    out = []
    for handle in rng.sample(single, min(count, len(single))):
        area = next(iter(mem.left[handle]))
        q = _q(
            rng,
            "drop_location",
            f"In which area did you leave {handle} on the ground (dropped, discarded, or lost when defeated)?",
            area,
            [a for a in game.areas if a != area],
            n,
            {"object": handle},
        )
        if q:
            out.append(q)
    return out


_GENERATORS: dict[str, Any] = {
    "visited_area": _set_question(
        "visited_area", "visited", "Which of these areas have you been in?", lambda g: list(g.areas), can_be_empty=False
    ),
    "crafted_object": _set_question(
        "crafted_object", "crafted", "Which of these objects have you crafted?", lambda g: [o.name for o in g.recipes]
    ),
    "defeated_npc": _set_question(
        "defeated_npc",
        "defeated",
        "Which of these kinds of creature have you defeated?",
        lambda g: [name for name, t in g.npcs.items() if t.hostile],
    ),
    "acquired_object": _set_question(
        "acquired_object",
        "acquired",
        "Which of these objects have you held or carried?",
        lambda g: [name for name, o in g.objects.items() if o.portable],
    ),
    "action_at": _action_at,
    "next_action": _next_action,
    "drop_location": _drop_location,
}


# ------------------------------------------------------------------ independent check
def verify_episodic(q: Question, traj: Trajectory) -> None:
    """Recompute the truth by scanning the trajectory again; raise if it is not exactly the answer."""
    s = q.subject
    t = s["template"]
    play = [(b, st) for b, st in traj.decisions() if not st.get("tutorial")]
    events = [ev for _, st in play for ev in st.get("events", ())]
    if t == "visited_area":
        truth = {b["area"] for b, _ in play} | {st["area"] for _, st in play}
    elif t in ("crafted_object", "defeated_npc", "acquired_object"):
        kind, field = {
            "crafted_object": ("object_crafted", "object"),
            "defeated_npc": ("npc_defeated", "type"),
            "acquired_object": ("object_acquired", "object"),
        }[t]
        truth = {ev[field] for ev in events if ev["kind"] == kind} or {NONE}
    elif t == "action_at":
        truth = {st["action"] for b, st in play if b["area"] == s["area"] and b["time"] == s["time"]}
    elif t == "next_action":
        acts = [st["action"] for _, st in play]
        w = s["window"]
        truth = {acts[i + len(w)] for i in range(len(acts) - len(w)) if acts[i : i + len(w)] == w}
    elif t == "drop_location":
        put_down = [
            ev for ev in events if ev["kind"] in ("object_dropped", "object_discarded") and ev["handle"] == s["object"]
        ]
        lost = [ev for ev in events if ev["kind"] == "agent_died" and s["object"] in ev.get("dropped", ())]
        truth = {ev["area"] for ev in put_down + lost}
    else:
        raise ValueError(f"unknown Episodic-Memory template {t!r}")
    check_single_truth(q, truth)
