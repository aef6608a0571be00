"""A scripted stand-in for a language model: fixed replies, or a small rule-based player.

Tests and sweeps need a backend that is instant, offline and exactly reproducible, yet exercises the
whole agent: prompts, parsing, memory, add-ons, token accounting and checkpoints. Two modes:

* ``replies=[...]``: return these texts in order, whatever is asked (recorded real model output,
  malformed replies included); running out is an error unless ``cycle`` is set.
* ``policy="explore"`` (default): read the observation in the prompt and answer the JSON the caller
  expects (``json_keys``): a plausible command (enter a neighbouring area, pick something up, talk,
  fight, inspect, wait), a bounded internal state, a short reflection or summary, a choice letter.
  ``policy="wait"`` always waits. Draws come from a RNG seeded by ``(seed, call number)``, and the
  call number is saved state, so resumed runs are identical.

``malformed_every=k`` makes every k-th ``act`` reply unusable prose, to exercise the malformed-reply path.
Token counts are words and punctuation marks of the prompt and the reply: a deterministic tokenizer.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from odyssey_agents.llm.protocol import LLM, Completion, LLMError, Message
from odyssey_agents.llm.tokens import PER_MESSAGE, word_tokens

__all__ = ["ScriptedLLM"]

_POLICIES = ("explore", "wait")
_SEE = re.compile(r"^I see (.+) near me\.$", re.MULTILINE)
_NEAR = re.compile(r"^I see (.+) nearby\.$", re.MULTILINE)
_EXITS = re.compile(r"^Neighboring areas: (.+)\.$", re.MULTILINE)
_HOLD = re.compile(r"^I am holding (.+)\.$", re.MULTILINE)
_PLACE = re.compile(r"^Current Location: (.+)$", re.MULTILINE)
_CHOICE = re.compile(r"^\s*([A-Z])[).:]\s", re.MULTILINE)
_STORED = re.compile(r"^\[(\d+)\] (.+)$", re.MULTILINE)
_NEW_FACT = re.compile(r"^- (.+)$", re.MULTILINE)
_TASK = re.compile(r"^Task: (.+)$", re.MULTILINE)
_DID = re.compile(r"^Action: (.+)$", re.MULTILINE)
_DECLARED = re.compile(r"^Declared (question|answer|wrong answers): (.+)$", re.MULTILINE)
_VISITS = re.compile(r"\b([a-z][a-z0-9_]*) \((\d+) times?\)")


class ScriptedLLM(LLM):
    backend = "scripted"

    def __init__(
        self,
        replies: Sequence[str] | None = None,
        *,
        policy: str = "explore",
        seed: int = 0,
        cycle: bool = False,
        malformed_every: int = 0,
        context_window: int | None = None,
        max_tokens: int = 256,
        model: str = "explore",
    ):
        if policy not in _POLICIES:
            raise ValueError(f"scripted policy must be one of {_POLICIES}, got {policy!r}")
        if malformed_every < 0:
            raise ValueError("malformed_every must be >= 0")
        self.replies = list(replies) if replies is not None else None
        self.policy = policy
        self.seed = int(seed)
        self.cycle = cycle
        self.malformed_every = malformed_every
        self.context_window = context_window
        self.max_tokens = max_tokens
        self.model = model
        self.calls = 0
        self.acts = 0

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return sum(word_tokens(m.get("content") or "") for m in messages) + PER_MESSAGE * len(messages)

    def count_text(self, text: str) -> int:
        return word_tokens(text)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        purpose: str,
        max_tokens: int | None = None,
        json_keys: Sequence[str] | None = None,
        starts: Mapping[str, Sequence[str]] | None = None,
    ) -> Completion:
        start = time.perf_counter()
        prompt_tokens = self.count_tokens(messages)
        self.reply_budget(prompt_tokens, max_tokens)  # the same overflow rule as a real model
        index = self.calls
        self.calls += 1
        acts = self.acts
        self.acts += purpose == "act"
        if self.replies is not None:
            if index >= len(self.replies) and not (self.cycle and self.replies):
                raise LLMError(f"scripted backend ran out of replies after {len(self.replies)} calls")
            text = self.replies[index % len(self.replies)]
        elif purpose == "act" and self.malformed_every and (acts + 1) % self.malformed_every == 0:
            text = "I think I should look around first, then decide what to do."
        else:
            rng = random.Random(f"odyssey:scripted:{self.seed}:{index}")
            text = json.dumps(self._reply(messages, json_keys or ("reasoning", "action"), rng))
        return Completion(text, prompt_tokens, word_tokens(text), time.perf_counter() - start, purpose)

    # ------------------------------------------------------------------ the rule-based player
    def _reply(self, messages: Sequence[Message], keys: Sequence[str], rng: random.Random) -> dict[str, Any]:
        prompt = messages[-1].get("content", "") if messages else ""
        seen = _last(_SEE, prompt)
        objects = [] if seen in (None, "no objects") else [_strip_count(x) for x in seen.split(", ")]
        near = _last(_NEAR, prompt)
        npcs = [] if near in (None, "no one") else near.split(", ")
        exits = [x for x in (_last(_EXITS, prompt) or "").split(", ") if x and x != "none" and "(" not in x]
        place = _last(_PLACE, prompt) or "somewhere"
        hands_full = (_last(_HOLD, prompt) or "").count(",") >= 1
        action = self._action(objects, npcs, exits, hands_full, rng)
        holding = _last(_HOLD, prompt) or ""
        task = _last(_TASK, prompt) or ""
        if "question" in keys:  # a question writer (World-Knowledge QA): a question of its own on the declared fact
            return _written_question(prompt, keys)
        if "places" in keys:  # an online-expansion writer: a small pack of places, objects and NPCs
            return _written_pack(prompt, rng)
        out: dict[str, Any] = {}
        for key in keys:
            if key == "action":
                out[key] = action
            elif key == "reasoning":
                out[key] = f"I am at {place}. Trying '{action}' to learn more about this world."
            elif key == "memory":
                out[key] = f"Last place: {place}. Exits: {', '.join(exits) or 'none'}. Last action: {action}."
            elif key == "reflection":
                out[key] = f"At {place}, keep exploring; exits {', '.join(exits[:3]) or 'none'} remain."
            elif key == "summary":
                out[key] = _summary(prompt, place, objects)
            elif key == "answer":
                letters = _CHOICE.findall(prompt)
                out[key] = rng.choice(letters) if letters else "A"
            # the retrieval paradigms' roles: Mem0's extraction and update, Voyager's curriculum, critic, skills
            elif key == "facts":
                out[key] = _facts(place, exits, objects, npcs)
            elif key == "operations":
                out[key] = _operations(prompt)
            elif key == "task":
                targets = [f"go to {e}" for e in exits] + [f"pick up {o}" for o in objects[:3]]
                out[key] = rng.choice(targets) if targets else "look around"
            elif key == "success":
                goal = task.rpartition(" ")[2]
                done = (task.startswith("go to ") and place.endswith(goal)) or (
                    task.startswith("pick up ") and goal in holding
                )
                out[key] = "yes" if goal and done else "no"
            elif key == "critique":
                out[key] = f"I am at {place}, holding {holding or 'nothing'}."
            elif key == "name":
                out[key] = "_".join(task.split()[:4]) or "skill"
            elif key == "description":
                out[key] = f"How to {task or 'act'}."
            elif key == "steps":
                out[key] = "; ".join(_DID.findall(prompt)[-4:]) or "wait"
            else:
                out[key] = ""
        return out

    def _action(
        self, objects: list[str], npcs: list[str], exits: list[str], hands_full: bool, rng: random.Random
    ) -> str:
        if self.policy == "wait":
            return "wait"
        options: list[tuple[float, str]] = [(0.05, "wait")]
        options += [(0.4 / len(exits), f"enter {e}") for e in exits]
        if objects and not hands_full:
            options += [(0.25 / len(objects), f"pick up {o}") for o in objects]
        if objects:
            options += [(0.1 / len(objects), f"inspect {o}") for o in objects]
        if npcs:
            options += [(0.1 / len(npcs), f"talk to {n}") for n in npcs]
            options += [(0.1 / len(npcs), f"attack {n}") for n in npcs]
        weights, choices = zip(*options, strict=True)
        return rng.choices(choices, weights=weights)[0]

    # ------------------------------------------------------------------ state
    def state(self) -> dict[str, Any]:
        return {"calls": self.calls, "acts": self.acts}

    def set_state(self, state: dict[str, Any]) -> None:
        self.calls = int(state.get("calls", 0))
        self.acts = int(state.get("acts", 0))

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "model": self.model,
            "policy": self.policy,
            "seed": self.seed,
            "replies": None if self.replies is None else len(self.replies),
            "malformed_every": self.malformed_every,
            "context_window": self.context_window,
        }


def _last(pattern: re.Pattern[str], text: str) -> str | None:
    found = pattern.findall(text)
    return found[-1] if found else None


_SYLLABLES = ("vor", "ash", "mel", "dun", "keth", "rin", "sol", "bar", "ith", "gal", "tess", "wyr")
_NUMBER = re.compile(r"^Expansion number: (\d+)$", re.MULTILINE)


def _written_pack(prompt: str, rng: random.Random) -> dict[str, Any]:
    """An expansion pack: one place of two areas, a material and a weapon, an enemy that drops the material."""
    number = int(_last(_NUMBER, prompt) or 1)
    stem = "".join(rng.choice(_SYLLABLES) for _ in range(2)) + "abcdefghij"[number % 10]
    material, weapon, enemy = f"{stem}_shard", f"{stem}_blade", f"{stem}_warden"
    return {
        "places": [
            {
                "name": f"{stem.capitalize()} Reach",
                "description": "A reach nobody has mapped.",
                "areas": [
                    {"name": f"{stem}_gate", "description": "A gate of old stone.", "objects": {material: 2}},
                    {
                        "name": f"{stem}_hall",
                        "description": "A hall in the dark.",
                        "npcs": [enemy],
                        "objects": {weapon: 1},
                    },
                ],
            }
        ],
        "objects": [
            {"name": material, "category": "material", "description": "A sharp shard.", "level": 3, "value": 3},
            {"name": weapon, "category": "weapon", "description": "A keen blade.", "level": 3, "value": 9, "attack": 6},
        ],
        "npcs": [
            {
                "name": enemy,
                "kind": "enemy",
                "role": "fighter",
                "description": "A warden of the reach.",
                "level": 3,
                "hp": 25,
                "attack": 6,
                "drops": {material: 1},
            }
        ],
    }


def _written_question(prompt: str, keys: Sequence[str]) -> dict[str, Any]:
    """The declared fact reworded, its answer kept, its wrong answers and two more of the writer's own."""
    declared = dict(_DECLARED.findall(prompt))
    question = declared.get("question", "What is true in this world?")
    wrong = [w.strip() for w in declared.get("wrong answers", "").split("|") if w.strip()]
    own = ["it depends on the weather", "nothing happens at all"]
    fields = {
        "question": f"In this world, {question[0].lower()}{question[1:]}",
        "answer": declared.get("answer", ""),
        "distractors": " | ".join([*wrong, *own]),
    }
    return {k: fields.get(k, "") for k in keys}


def _summary(prompt: str, place: str, objects: list[str]) -> str:
    """Notes as a note-taker would keep them: how often each place was visited over everything the notes
    cover (the visits counted in earlier notes, plus each step's location), so a summary holds a fact no
    single step does; then the latest place and what lay there."""
    visits: dict[str, int] = {}
    for name, n in _VISITS.findall(prompt):
        visits[name] = visits.get(name, 0) + int(n)
    for where in _PLACE.findall(prompt):
        area = where.rpartition(", ")[2]
        visits[area] = visits.get(area, 0) + 1
    counted = ", ".join(f"{a} ({n} time{'s' if n != 1 else ''})" for a, n in visits.items())
    return f"Places visited: {counted or 'none'}. Latest place {place}; objects seen: {', '.join(objects[:5])}."


def _facts(place: str, exits: list[str], objects: list[str], npcs: list[str]) -> list[str]:
    """What a note-taker would keep of an observation: connections, objects, people."""
    where = place.rpartition(", ")[2]
    out = []
    if exits:
        out.append(f"{where} connects to {', '.join(exits)}.")
    if objects:
        out.append(f"{where} has {', '.join(objects[:6])}.")
    if npcs:
        out.append(f"{where} is where {', '.join(npcs)} can be found.")
    return out


def _operations(prompt: str) -> list[dict[str, str]]:
    """Mem0's update by rule: a known fact is NONE, a fact about a stored subject (same first two words)
    UPDATEs it, anything else is ADDed."""
    stored_part, _, new_part = prompt.partition("New facts:")
    stored = _STORED.findall(stored_part)
    ops: list[dict[str, str]] = []
    used: set[str] = set()
    for fact in _NEW_FACT.findall(new_part):
        same = next((k for k, text in stored if text == fact and k not in used), None)
        subject = next((k for k, text in stored if text.split()[:2] == fact.split()[:2] and k not in used), None)
        if same is not None:
            ops.append({"event": "NONE", "id": same})
            used.add(same)
        elif subject is not None:
            ops.append({"event": "UPDATE", "id": subject, "text": fact})
            used.add(subject)
        else:
            ops.append({"event": "ADD", "text": fact})
    return ops


def _strip_count(item: str) -> str:
    head, _, rest = item.partition(" ")
    return rest if head.isdigit() and rest else item
