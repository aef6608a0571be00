"""The paper's metrics (§3.4, A3.1), computed from a trajectory and the game it was played in.

Conventions, each chosen so a number means one thing:

* Only play steps count: steps whose command was chosen inside the tutorial are left out (and
  summarised apart by :func:`tutorial_summary`). The engine already gives no reward in the tutorial.
* Main reward = quest stages completed. Supplementary = side quests + areas explored + object types
  crafted + NPC types defeated (each counted the first time, as the engine's reward breakdown does).
* Object exploration = object types acquired (picked up, taken, received, bought) / carryable object
  types of the game.
* Action exploration = verbs used in well-formed commands / verbs of the game. A command refused by
  the state (``action_failed``) still counts as trying the verb; an invalid one names no verb.
* Action diversity = Shannon entropy of the verb distribution divided by ln(number of verbs of the
  game), over the whole run and over sliding windows of 100 commands (invalid commands left out).
* Invalid-action rate = invalid commands / play steps. Malformed model replies (turned into ``wait``
  before the engine saw them) are counted apart.
* Failed-action rate = well-formed commands the world refused (``action_failed``: "Cannot take
  anything out of coins") / play steps. The paper counts these nowhere; they are what an agent that
  has the format right but not the world gets wrong, so they are reported beside the invalid rate.
* Tokens (the paper's model cost) are the input and output tokens of model calls, whatever their
  purpose (act, reflect, summarise, answer, extract, update, curriculum...), summed over play steps;
  the work that is not a model call is counted apart, by kind: ``training_tokens`` (what training
  updates read), ``embedding_tokens`` (what embedding models read), ``memory_write_tokens`` (what a
  latent memory read to write itself). Decision time is summed like tokens; the tutorial's tokens and
  time are reported with it.

What the metrics need to know about the game (its verbs, its carryable object types) is plain data,
:class:`GameFacts`: the runner records it in the run directory, so reports recompute every metric
without loading the game, whose ``rules.py`` is code that reading results must never run.
"""

from __future__ import annotations

import enum
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Final

from odyssey_agents.base import WORK_PURPOSES
from odyssey_env.parsing import match_verb, verb_index
from odyssey_env.rewards import COMPONENTS, SUPPLEMENTARY  # the env defines the reward components
from odyssey_eval.trajectory import Trajectory

if TYPE_CHECKING:
    from odyssey_env.game import Game

__all__ = [
    "SUPPLEMENTARY",
    "WINDOW",
    "WORK_PURPOSES",
    "GameFacts",
    "RunningMetrics",
    "action_verbs",
    "compute_metrics",
    "cumulative_rewards",
    "main_quest_size",
    "normalized_combined",
    "normalized_entropy",
    "tutorial_summary",
    "windowed_diversity",
    "work_tokens",
]

WINDOW = 100
_EMPTY: dict[str, int] = {}
_NO_TOKENS = (0, 0)


class _Unseen(enum.Enum):
    """A command not looked up yet (a looked-up one may have no verb: None). An enum member rather than a
    bare ``object()`` so that ``verb is _UNSEEN`` narrows the type as well as the value."""

    TOKEN = 0


_UNSEEN: Final = _Unseen.TOKEN


@dataclass(frozen=True)
class GameFacts:
    """What metrics need to know about a game, as data: its verbs, in the rules' order, and its
    carryable object types. :meth:`of` reads them from a loaded game at run time; the run directory
    keeps them (``cell.json``), and :meth:`from_dict` reads them back without touching the game."""

    verbs: tuple[str, ...]
    carryable: tuple[str, ...]

    @classmethod
    def of(cls, game: Game) -> GameFacts:
        return cls(tuple(game.rules.actions), tuple(n for n, o in game.objects.items() if o.portable))

    def to_dict(self) -> dict[str, list[str]]:
        return {"verbs": list(self.verbs), "carryable": list(self.carryable)}

    @classmethod
    def from_dict(cls, data: Any) -> GameFacts:
        """Raises ValueError for anything but ``{"verbs": [str, ...], "carryable": [str, ...]}``."""
        if not isinstance(data, Mapping):
            raise ValueError("expected an object with verbs and carryable")
        fields = []
        for key in ("verbs", "carryable"):
            value = data.get(key)
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                raise ValueError(f"{key} must be a list of names")
            fields.append(tuple(value))
        return cls(*fields)

    @cached_property
    def _index(self) -> dict[str, list[str]]:
        return verb_index(self.verbs)

    def verb_of(self, command: Any) -> str | None:
        """The verb a well-formed command starts with (the engine's own matching, on names only)."""
        if not isinstance(command, str) or not command.strip():
            return None
        found = match_verb(self._index, command.strip().lower())
        return None if found is None else found[0]


def verb_of(game: Game | GameFacts, command: str) -> str | None:
    """The verb a command uses. With a loaded game: by the engine's own parser (None for an invalid
    command). With :class:`GameFacts`: the verb it starts with (metrics ask only about commands the
    engine accepted)."""
    if isinstance(game, GameFacts):
        return game.verb_of(command)
    from odyssey_env.parsing import parse

    parsed = parse(game.rules, command)
    return None if isinstance(parsed, str) else parsed[0].verb


def action_verbs(steps: Sequence[dict[str, Any]], game: Game | GameFacts) -> list[str]:
    """Verbs of the well-formed commands, in order (each distinct command is looked up once)."""
    seen: dict[Any, str | None] = {}
    verbs: list[str] = []
    for s in steps:
        if s.get("invalid"):
            continue
        action = s.get("action")
        key = action if isinstance(action, str) else repr(action)  # a damaged line must not crash a report
        if key not in seen:
            seen[key] = verb_of(game, action) if isinstance(action, str) else None
        if (v := seen[key]) is not None:
            verbs.append(v)
    return verbs


def normalized_entropy(verbs: Sequence[str], n_verbs: int) -> float:
    """H(verbs) / ln(n_verbs), in [0, 1]; 0 for fewer than two verbs available or no actions."""
    if n_verbs < 2 or not verbs:
        return 0.0
    total = len(verbs)
    h = -sum(c / total * math.log(c / total) for c in Counter(verbs).values())
    return h / math.log(n_verbs)


def windowed_diversity(verbs: Sequence[str], n_verbs: int, window: int = WINDOW) -> list[float]:
    """Diversity of every full window of ``window`` consecutive commands (one value if shorter).

    Incremental: with S = sum of c*ln(c) over the window's counts, H = ln(W) - S/W, and sliding the
    window changes two counts, so a run of n commands costs O(n) rather than O(n * window).

    The loop runs once per play step of every run the runner finishes, so it is kept lean (a plain
    dict holding every verb, no ``max`` call); its float operations, and their order, are fixed:
    ``results.json`` files written before must come out the same, bit for bit.
    """
    if not verbs:
        return []
    if len(verbs) <= window:
        return [normalized_entropy(verbs, n_verbs)]
    if n_verbs < 2:
        return [0.0] * (len(verbs) - window + 1)
    first = Counter(verbs[:window])
    xlogx = [0.0] + [c * math.log(c) for c in range(1, window + 1)]
    s = sum(xlogx[c] for c in first.values())
    counts = dict.fromkeys(verbs, 0)  # every verb present: no missing-key path in the loop
    counts.update(first)
    log_w, log_n = math.log(window), math.log(n_verbs)
    h = log_w - s / window
    out = [(h if h > 0.0 else 0.0) / log_n]  # max(0.0, h), NaN included
    append = out.append
    # new: the command entering the window, old: the one leaving it (verbs is the longer: not strict)
    for new, old in zip(itertools.islice(verbs, window, None), verbs, strict=False):
        if new != old:
            c_new, c_old = counts[new], counts[old]
            s += xlogx[c_new + 1] - xlogx[c_new] + xlogx[c_old - 1] - xlogx[c_old]
            counts[new] = c_new + 1
            counts[old] = c_old - 1
        h = log_w - s / window
        append((h if h > 0.0 else 0.0) / log_n)
    return out


def cumulative_rewards(traj: Trajectory) -> tuple[list[int], list[int]]:
    """Cumulative main and supplementary reward after each play step (R_t of paper §3.4)."""
    main, sup = [], []
    m = s = 0
    for step in traj.play:
        r = step.get("reward", _EMPTY)
        m += r.get("quest", 0)
        s += sum(r.get(k, 0) for k in SUPPLEMENTARY)
        main.append(m)
        sup.append(s)
    return main, sup


def normalized_combined(curves: Sequence[tuple[Sequence[float], Sequence[float]]]) -> list[list[float]]:
    """R_t^combined = ½ (R_t^main / M_main + R_t^sup / M_sup) for runs of one game (paper §3.4).

    M_main and M_sup are the maxima over all the given runs and steps. A component whose maximum is 0
    (no run earned any) contributes 0 rather than dividing by zero.
    """
    m_main = max((max(m, default=0) for m, _ in curves), default=0)
    m_sup = max((max(s, default=0) for _, s in curves), default=0)
    out = []
    for main, sup in curves:
        out.append(
            [
                0.5 * ((a / m_main if m_main else 0.0) + (b / m_sup if m_sup else 0.0))
                for a, b in zip(main, sup, strict=True)
            ]
        )
    return out


def _tokens(steps: Iterable[dict[str, Any]]) -> tuple[int, int]:
    i = o = 0
    for s in steps:
        a, b = s.get("tokens", _NO_TOKENS)
        i += a
        o += b
    return i, o


def tutorial_summary(traj: Trajectory) -> dict[str, Any]:
    steps = traj.tutorial
    i, o = _tokens(steps)
    return {
        "steps": len(steps),
        "invalid_actions": sum(bool(s.get("invalid")) for s in steps),
        "input_tokens": i,
        "output_tokens": o,
        "decision_time": round(sum(s.get("decision_time", 0.0) for s in steps), 6),
    }


def compute_metrics(
    traj: Trajectory,
    game: Game | GameFacts,
    *,
    window: int = WINDOW,
    stop_tokens: Sequence[int] | None = None,
    stop_calls: Mapping[str, Mapping[str, int]] | None = None,
) -> dict[str, Any]:
    """Every per-run metric of the paper, from one trajectory (see the module docstring).

    ``stop_tokens`` ([input, output]) are the model calls of a decision to stop the episode: no step
    follows it, so no trajectory line records them, yet they were spent; they count in every token
    metric and are also reported apart as ``stop_decision_tokens``. The runner passes them, and
    reports pass them back from ``results.json``, so both compute the same numbers. ``stop_calls`` is
    the same decision's calls by purpose, for ``tokens_by_purpose``.

    ``tokens_by_purpose`` breaks the play steps' tokens down by the purpose of each model call (act,
    reflect, summarise, extract, update, curriculum, critique, skill...); its totals are the token
    totals. Training, embedding and latent-memory writes are not model calls: their tokens are in
    ``training_tokens``, ``embedding_tokens`` and ``memory_write_tokens``.

    One pass over the play steps; a step with no reward and no events (most of them) costs a few
    dictionary reads, so metrics stay cheap next to the run that produced them.
    """
    play = traj.play
    n = len(play)
    totals = dict.fromkeys(COMPONENTS, 0)
    acquired: dict[str, None] = {}
    invalid = failed = malformed = tokens_in = tokens_out = 0
    decision = 0.0
    purposes: dict[str, dict[str, int]] = {}
    for s in play:  # lines are sparse: a missing key is false, zero or empty
        if "reward" in s:
            for k, v in s["reward"].items():
                totals[k] = totals.get(k, 0) + v
        if "events" in s:
            for ev in s["events"]:
                if ev.get("kind") == "object_acquired":
                    acquired.setdefault(ev["object"])
        if s.get("invalid"):
            invalid += 1
        if s.get("failed"):
            failed += 1
        if s.get("malformed"):
            malformed += 1
        if "tokens" in s:
            a, b = s["tokens"]
            tokens_in += a
            tokens_out += b
            _add_calls(purposes, s.get("calls", {}))
        decision += s.get("decision_time", 0.0)
    if stop_tokens is not None:
        tokens_in += stop_tokens[0]
        tokens_out += stop_tokens[1]
    if stop_calls:
        _add_calls(purposes, stop_calls)
    facts = game if isinstance(game, GameFacts) else GameFacts.of(game)
    return _assemble(
        facts,
        window,
        n=n,
        terminated=bool(traj.steps and traj.steps[-1].get("terminated")),
        totals=totals,
        acquired=acquired,
        verbs=action_verbs(play, facts),
        stages=main_quest_size(traj),
        invalid=invalid,
        failed=failed,
        malformed=malformed,
        tokens=(tokens_in, tokens_out),
        purposes=purposes,
        decision=decision,
        tutorial=tutorial_summary(traj),
        stop_tokens=stop_tokens,
        stop_calls=stop_calls,
    )


def _assemble(
    facts: GameFacts,
    window: int,
    *,
    n: int,
    terminated: bool,
    totals: dict[str, int],
    acquired: Iterable[str],
    verbs: Sequence[str],
    stages: int | None,
    invalid: int,
    failed: int,
    malformed: int,
    tokens: tuple[int, int],
    purposes: Mapping[str, dict[str, int]],
    decision: float,
    tutorial: dict[str, Any],
    stop_tokens: Sequence[int] | None,
    stop_calls: Mapping[str, Mapping[str, int]] | None,
) -> dict[str, Any]:
    """The metrics dict from what a pass over the play steps gathered (by :func:`compute_metrics` over
    a whole trajectory, or by :class:`RunningMetrics` as the run went)."""
    tokens_in, tokens_out = tokens
    acquired = list(acquired)
    carryable = facts.carryable
    game_verbs = facts.verbs
    used = sorted(set(verbs))
    windows = windowed_diversity(verbs, len(game_verbs), window)
    metrics = {
        "play_steps": n,
        "terminated": terminated,
        "main_reward": totals["quest"],
        "main_stages": stages,
        "main_fraction": totals["quest"] / stages if stages else None,
        "supplementary_reward": sum(totals[k] for k in SUPPLEMENTARY),
        "rewards": totals,
        "object_exploration": len(acquired) / len(carryable) if carryable else 0.0,
        "objects_acquired": acquired,
        "action_exploration": len(used) / len(game_verbs) if game_verbs else 0.0,
        "verbs_used": used,
        "action_diversity": normalized_entropy(verbs, len(game_verbs)),
        "action_diversity_window": window,
        "action_diversity_windows": windows,
        "action_diversity_window_mean": sum(windows) / len(windows) if windows else 0.0,
        "invalid_actions": invalid,
        "invalid_action_rate": invalid / n if n else 0.0,
        "failed_actions": failed,
        "failed_action_rate": failed / n if n else 0.0,
        "malformed_replies": malformed,
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "total_tokens": tokens_in + tokens_out,
        "tokens_per_step": (tokens_in + tokens_out) / n if n else 0.0,
        "tokens_by_purpose": {k: purposes[k] for k in sorted(purposes) if k not in WORK_PURPOSES},
        **work_tokens(purposes),
        **prompt_cache(purposes, tokens_in),
        "decision_time_total": round(decision, 6),
        "decision_time_mean": decision / n if n else 0.0,
        "tutorial": tutorial,
    }
    if stop_tokens is not None:
        metrics["stop_decision_tokens"] = list(stop_tokens)
    if stop_calls:
        metrics["stop_decision_calls"] = {k: dict(v) for k, v in stop_calls.items()}
    return metrics


class RunningMetrics:
    """:func:`compute_metrics` fed one step line at a time, as the run goes, so the runner need not
    keep its lines until the end: ``add`` every step line in order (with or without its observation),
    and ``metrics()`` equals ``compute_metrics`` of the whole trajectory, float for float.

    What it keeps grows with the run only by the verb of each play step (a reference to an interned
    name): the windowed diversity needs them all, and the floats come out identical only if the same
    functions add them in the same order. The tutorial's decision times are kept too (a tutorial is
    short) so that they are summed by ``sum``, as :func:`tutorial_summary` sums them.
    """

    def __init__(self, reset: Mapping[str, Any], game: Game | GameFacts, *, window: int = WINDOW):
        self.facts = game if isinstance(game, GameFacts) else GameFacts.of(game)
        self.window = window
        self.n = self.invalid = self.failed = self.malformed = self.tokens_in = self.tokens_out = 0
        self.totals = dict.fromkeys(COMPONENTS, 0)
        self.acquired: dict[str, None] = {}
        self.purposes: dict[str, dict[str, int]] = {}
        self.decision = 0.0
        self.verbs: list[str] = []
        self.terminated = False
        self.stages = _quest_total(reset)
        self._verb_of: dict[Any, str | None] = {}  # command -> verb, as action_verbs looks them up
        self._tutorial_steps = self._tutorial_invalid = self._tutorial_in = self._tutorial_out = 0
        self._tutorial_seconds: list[float] = []

    def add(self, s: Mapping[str, Any]) -> None:
        """Count one step line (lines are sparse: a missing key is false, zero or empty; most steps
        have no reward, events, tokens or flags, so the common path is a few key tests)."""
        self.terminated = "terminated" in s and bool(s["terminated"])
        if self.stages is None and "quest" in s:
            self.stages = _quest_total(s)
        if s.get("tutorial"):
            self._add_tutorial(s)
            return
        self.n += 1
        if "reward" in s:
            totals = self.totals
            for k, v in s["reward"].items():
                totals[k] = totals.get(k, 0) + v
        if "events" in s:
            for ev in s["events"]:
                if ev.get("kind") == "object_acquired":
                    self.acquired.setdefault(ev["object"])
        if s.get("invalid"):
            self.invalid += 1
        else:
            action = s.get("action")
            verb = self._verb_of.get(action, _UNSEEN) if action.__class__ is str else _UNSEEN
            if verb is _UNSEEN:
                verb = self._look_up(action)
            if verb is not None:
                self.verbs.append(verb)
        if s.get("failed"):
            self.failed += 1
        if s.get("malformed"):
            self.malformed += 1
        if "tokens" in s:
            a, b = s["tokens"]
            self.tokens_in += a
            self.tokens_out += b
            _add_calls(self.purposes, s.get("calls", {}))
        if "decision_time" in s:
            self.decision += s["decision_time"]

    @property
    def main_reward(self) -> int:
        """Main reward so far (quest stages completed in play), as :meth:`metrics` would report it."""
        return self.totals["quest"]

    @property
    def supplementary_reward(self) -> int:
        """Supplementary reward so far, as :meth:`metrics` would report it."""
        return sum(self.totals[k] for k in SUPPLEMENTARY)

    def _look_up(self, action: Any) -> str | None:
        """A command's verb, looked up once per distinct command (as :func:`action_verbs` does)."""
        key = action if isinstance(action, str) else repr(action)  # a damaged line must not crash a report
        if key not in self._verb_of:
            self._verb_of[key] = self.facts.verb_of(action) if isinstance(action, str) else None
        return self._verb_of[key]

    def _add_tutorial(self, s: Mapping[str, Any]) -> None:
        self._tutorial_steps += 1
        if s.get("invalid"):
            self._tutorial_invalid += 1
        a, b = s.get("tokens", _NO_TOKENS)
        self._tutorial_in += a
        self._tutorial_out += b
        self._tutorial_seconds.append(s.get("decision_time", 0.0))

    def metrics(
        self, *, stop_tokens: Sequence[int] | None = None, stop_calls: Mapping[str, Mapping[str, int]] | None = None
    ) -> dict[str, Any]:
        """The metrics of the steps added so far (``stop_tokens``, ``stop_calls``: as for
        :func:`compute_metrics`)."""
        tokens_in, tokens_out = self.tokens_in, self.tokens_out
        purposes = {k: dict(v) for k, v in self.purposes.items()}  # the run may go on after a look
        if stop_tokens is not None:
            tokens_in += stop_tokens[0]
            tokens_out += stop_tokens[1]
        if stop_calls:
            _add_calls(purposes, stop_calls)
        tutorial = {
            "steps": self._tutorial_steps,
            "invalid_actions": self._tutorial_invalid,
            "input_tokens": self._tutorial_in,
            "output_tokens": self._tutorial_out,
            "decision_time": round(sum(self._tutorial_seconds), 6),
        }
        return _assemble(
            self.facts,
            self.window,
            n=self.n,
            terminated=self.terminated,
            totals=dict(self.totals),
            acquired=self.acquired,
            verbs=self.verbs,
            stages=self.stages,
            invalid=self.invalid,
            failed=self.failed,
            malformed=self.malformed,
            tokens=(tokens_in, tokens_out),
            purposes=purposes,
            decision=self.decision,
            tutorial=tutorial,
            stop_tokens=stop_tokens,
            stop_calls=stop_calls,
        )


def main_quest_size(traj: Trajectory) -> int | None:
    """Stages in the run's main quest, as the env reported them (``info["quest"]["total"]``, kept on the
    reset line and on every line where progress changed); None for a game without a main quest. The
    normalised challenge score divides by it, so games with more stages do not weigh more."""
    for record in (traj.reset, *traj.steps):
        if (total := _quest_total(record)) is not None:
            return total
    return None


def _quest_total(record: Mapping[str, Any]) -> int | None:
    quest = record.get("quest")
    if isinstance(quest, Mapping) and isinstance(quest.get("total"), int) and quest["total"] > 0:
        return quest["total"]
    return None


def work_tokens(purposes: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """The tokens of the work that is not a model call, one field per kind (every field present, 0 when
    the agent did none of it), from calls by purpose."""
    out = dict.fromkeys(WORK_PURPOSES.values(), 0)
    for purpose, field in WORK_PURPOSES.items():
        row = purposes.get(purpose)
        if row:
            out[field] += row.get("input_tokens", 0) + row.get("output_tokens", 0)
    return out


#: Keys of a calls-by-purpose row that only some rows have (prompt-cache counts, see ``Call``).
_CACHE_KEYS = ("prefix_tokens", "cached_tokens")


def _add_calls(into: dict[str, dict[str, int]], calls: Mapping[str, Mapping[str, int]]) -> None:
    for purpose, row in calls.items():
        acc = into.setdefault(purpose, {"calls": 0, "input_tokens": 0, "output_tokens": 0})
        acc["calls"] += row.get("calls", 0)
        acc["input_tokens"] += row.get("input_tokens", 0)
        acc["output_tokens"] += row.get("output_tokens", 0)
        for key in _CACHE_KEYS:
            if key in row:
                acc[key] = acc.get(key, 0) + row[key]


def prompt_cache(purposes: Mapping[str, Mapping[str, int]], input_tokens: int) -> dict[str, Any]:
    """How much of the model calls' input repeated the start of an earlier prompt of the run
    (``cacheable_prefix_tokens``: what a prompt cache could serve, an estimate) and how much the server
    said it served from its cache (``cached_tokens``, 0 where it says nothing)."""
    prefix = sum(r.get("prefix_tokens", 0) for p, r in purposes.items() if p not in WORK_PURPOSES)
    cached = sum(r.get("cached_tokens", 0) for p, r in purposes.items() if p not in WORK_PURPOSES)
    return {
        "cacheable_prefix_tokens": prefix,
        "cacheable_prefix_share": prefix / input_tokens if input_tokens else 0.0,
        "cached_tokens": cached,
    }
