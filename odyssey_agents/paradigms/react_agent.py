"""The ReAct agent every LLM paradigm builds on: one model call per step, memory in the prompt.

Per step: reflect on the previous move and fold old steps into the summary when those add-ons are
due, build the prompt (memory sections + current observation), call the model with purpose ``act``,
parse the JSON reply, remember the step. A reply that cannot be used becomes ``wait`` and the
decision is marked ``malformed`` (the runner counts it apart from engine-invalid actions).

Paradigms differ only in what they keep and show: :attr:`window` says how many raw steps the prompt
holds (0, N, or all), :meth:`sections` may add their own state, :meth:`_absorb` reads extra reply
keys. Everything the agent knows lives in plain data saved by :meth:`save`, together with the
backend's sampling counter, so a resumed run continues with the same memory and the same draws.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar

from odyssey_agents.addons import AddonConfigError, Addons, canonical_addons
from odyssey_agents.base import Agent, Answer, Call, Decision, Task, Usage
from odyssey_agents.errors import ConfigError
from odyssey_agents.llm import LLM, ContextOverflow, build_llm
from odyssey_agents.llm.prefix_meter import PrefixMeter
from odyssey_agents.llm.protocol import Completion
from odyssey_agents.memory import StepRecord
from odyssey_agents.options import keyword_options
from odyssey_agents.prompting.prompt import ACT_KEYS, PromptBuilder, Section
from odyssey_agents.prompting.reply import Reply, parse_choice, parse_reply

__all__ = ["AgentConfigError", "ReActAgent"]

MEMORY_FILE = "memory.json"
FORMAT = 1


class AgentConfigError(AddonConfigError):
    """Agent settings that do not fit the paradigm (unknown option, add-on clash, bad value)."""


class ReActAgent(Agent):
    """Base of the LLM paradigms; on its own it is NoMemory (see :mod:`odyssey_agents.paradigms`)."""

    name: ClassVar[str] = "react"
    #: Keys of the reply JSON object, in order.
    keys: ClassVar[tuple[str, ...]] = ACT_KEYS
    #: Raw steps shown in the prompt: 0 (none), a number (the last N), None (every step).
    window: int | None = 0
    #: Reply-key descriptions beyond the standard ones.
    key_docs: Mapping[str, str] = {}  # a class default; an agent may set its own (``Mem1Agent``)

    def __init__(self, llm: LLM, *, addons: Sequence[str] | str | None = (), **settings: Any):
        self.llm = llm
        names = canonical_addons(addons)
        for key, owner in Addons.SETTINGS.items():
            if key in settings and owner not in names:
                raise AgentConfigError(
                    f"{key} is a setting of the {owner} add-on; add {owner} to agent.addons or drop the setting"
                )
        if "memory_size" in settings and "short_term_memory" not in names:
            raise AgentConfigError(
                "memory_size is a setting of the short_term_memory add-on (or of the "
                "short_term_memory agent); add short_term_memory to agent.addons"
            )
        self.addons = Addons(names, **settings)
        if self.addons.short_term_memory:
            if self.window != 0:
                raise AgentConfigError(
                    f"{self.name} already keeps its recent steps in the prompt; the "
                    "short_term_memory add-on would add nothing"
                )
            self.window = self.addons.memory_size
        self.task: Task | None = None
        self._clear()

    # ------------------------------------------------------------------ building from configs
    @classmethod
    def from_config(cls, params: Mapping[str, Any], llm_cfg: Mapping[str, Any], seed: int) -> ReActAgent:
        """The factory contract of :mod:`odyssey_eval.factory`: agent params, llm group, cell seed."""
        params = dict(params)
        accepted = cls.settings()
        unknown = sorted(set(params) - accepted)
        if unknown:
            raise AgentConfigError(
                f"agent {cls.name!r} has no setting(s) {', '.join(unknown)}; it takes: {', '.join(sorted(accepted))}"
            )
        llm = build_llm(llm_cfg, seed=seed)
        try:
            return cls(llm, **params)
        except (TypeError, ValueError) as exc:  # a setting of the wrong type (memory_size=abc, ...)
            if isinstance(exc, ConfigError):
                raise
            raise AgentConfigError(f"cannot build agent {cls.name!r}: {exc}") from exc

    @classmethod
    def settings(cls) -> set[str]:
        """Every setting this paradigm accepts (its own and the add-ons')."""
        return keyword_options(cls, keyword_only=True) | set(Addons.SETTINGS) | {"memory_size"}

    # ------------------------------------------------------------------ episode
    def _clear(self) -> None:
        self.records: list[StepRecord] = []  # raw steps the paradigm keeps (trimmed to the window)
        self.pending: list[StepRecord] = []  # steps the summary does not cover yet
        self.previous: StepRecord | None = None
        self.summary = ""
        self.reflection = ""
        self.steps = 0
        self.counters: dict[str, int] = {
            "malformed": 0,
            "reflections": 0,
            "reflection_failures": 0,
            "summaries": 0,
            "summary_failures": 0,
        }
        self._summary_at = self.addons.summarise_every
        self.meter = PrefixMeter()  # the share of each prompt a server's prompt cache could serve

    def reset(self, task: Task) -> None:
        super().reset(task)
        self.prompts = PromptBuilder(task.verbs, self.keys, self.key_docs)
        self._clear()

    # ------------------------------------------------------------------ acting
    def act(self, observation: str, info: dict[str, Any]) -> Decision:
        usage = Usage()
        self.meter.step()
        if self.previous is not None and self.addons.reflection and self.steps % self.addons.reflect_every == 0:
            self._reflect(observation, usage)
        if self.addons.summarisation and len(self.pending) >= self._summary_at:
            self._summarise(usage)
        self._prepare(observation, usage)
        messages = self._fit(observation)
        if messages is None:  # the long-context "stop" policy
            return Decision("wait", reasoning="context window full: the agent stops", usage=usage, stop=True)
        completion, call = self._complete(
            messages, purpose="act", json_keys=self.keys, starts={"action": self.prompts.verb_words}
        )
        usage.add(call)
        reply = parse_reply(completion.text, self.keys)
        if reply.ok:
            action, reasoning = reply.action, reply.text("reasoning")
        else:
            self.counters["malformed"] += 1
            action, reasoning = "wait", f"(unusable reply: {reply.error}; waiting)"
        self._absorb(reply)
        self._acted(messages, completion, reply)
        self._remember(StepRecord(self.steps, observation, reasoning, action, not reply.ok))
        return Decision(action, reasoning, usage, malformed=not reply.ok, raw=_raw(completion))

    def _fit(self, observation: str) -> list[dict[str, str]] | None:
        """The act prompt; Long Context overrides this to apply its overflow policy (None: stop)."""
        return self._act_prompt(observation)

    def _act_prompt(self, observation: str) -> list[dict[str, str]]:
        """The act prompt over the memory kept now, whatever its length."""
        return self.prompts.act(self.sections(), observation)

    def sections(self, records: list[StepRecord] | None = None) -> list[Section]:
        """The memory blocks of the prompt, most stable first (summary, state, reflection, steps).

        ``records`` replaces the kept steps for one prompt (Long Context's QA prompts that must fit)."""
        records = self.records if records is None else records
        out: list[Section] = []
        if self.summary:
            out.append(("Summary of my experience so far", self.summary))
        out.extend(self._own_sections())
        if self.reflection and self.window == 0:
            out.append(("My latest reflection", self.reflection))
        if self.window != 0 and records:
            out.append(("My memories", "\n\n".join(r.render() for r in records)))
        return out

    def _own_sections(self) -> list[Section]:
        """Paradigm state shown in the prompt (Mem1's internal state)."""
        return []

    def _prepare(self, observation: str, usage: Usage) -> None:
        """Work a paradigm does before its act prompt, after the add-ons (the retrieval paradigms
        store the previous step and retrieve for this one); its model calls go into ``usage``."""

    def _absorb(self, reply: Reply) -> None:
        """Read paradigm-specific keys of the reply (Mem1's ``memory``)."""

    def _acted(self, messages: list[dict[str, str]], completion: Completion, reply: Reply) -> None:
        """The act call's prompt and reply, for paradigms that learn from them (LoRA SFT, RL)."""

    def _remember(self, record: StepRecord) -> None:
        self.steps += 1
        self.previous = record
        if self.window != 0:
            self.records.append(record)
            if self.window is not None and len(self.records) > self.window:
                del self.records[: len(self.records) - self.window]
        if self.addons.summarisation:
            self.pending.append(record)

    # ------------------------------------------------------------------ add-ons
    def _ask(
        self, messages: list[dict[str, str]], purpose: str, key: str, usage: Usage, max_tokens: int | None = None
    ) -> str:
        """One add-on call whose reply is ``{key: text}``: the text, or "" when the reply is unusable
        (the caller counts the failure; an add-on that fails never stops the agent from acting)."""
        completion, call = self._complete(messages, purpose=purpose, max_tokens=max_tokens, json_keys=(key,))
        usage.add(call)
        reply = parse_reply(completion.text, (key,), required=(key,))
        return reply.text(key) if reply.ok else ""

    def _complete(
        self, messages: list[dict[str, str]], *, purpose: str, question: bool = False, **hints: Any
    ) -> tuple[Completion, Call]:
        """Every model call of the agent: the backend's reply and its ledger entry, which counts how
        much of the prompt repeats the start of a previous prompt (measured once the call succeeded;
        ``question``: a QA call, which leaves the saved state alone, see :class:`PrefixMeter`)."""
        completion = self.llm.complete(messages, purpose=purpose, **hints)
        share = self.meter.measure(messages, purpose, question)
        return completion, completion.call(PrefixMeter.tokens(share, completion.input_tokens))

    def _reflect(self, observation: str, usage: Usage) -> None:
        prev = self.previous
        assert prev is not None
        messages = self.prompts.reflect(prev.observation, prev.reasoning, prev.action, observation)
        text = self._ask(messages, "reflect", "reflection", usage, self.addons.reflect_max_tokens)
        if not text:
            self.counters["reflection_failures"] += 1
            return
        self.counters["reflections"] += 1
        prev.reflect(text)
        self.reflection = text

    def _summarise(self, usage: Usage) -> None:
        words = self.addons.summary_words
        steps = "\n\n".join(r.render() for r in self.pending)
        messages = self.prompts.summarise(self.summary, steps, words)
        text = self._ask(messages, "summarise", "summary", usage)
        if not text:
            self.counters["summary_failures"] += 1
            self._summary_at = len(self.pending) + self.addons.summarise_every  # try again later
            return
        self.counters["summaries"] += 1
        cut = text.split()
        self.summary = text if len(cut) <= 2 * words else " ".join(cut[: 2 * words])
        covered = self.pending[-1].step
        self.pending = []
        self._summary_at = self.addons.summarise_every
        if self.window is None:  # Long Context: the notes replace the steps they cover
            self.records = [r for r in self.records if r.step > covered]

    # ------------------------------------------------------------------ QA
    def answer(self, question: str, choices: list[str]) -> Answer:
        """Answer from the same memory the agent acts with; answering never changes that memory.

        A prompt that cannot fit the context window leaves the question unanswered (index None)
        rather than failing the run's QA round."""
        try:
            messages = self._answer_messages(question, choices)
            completion, call = self._complete(
                messages,
                purpose="answer",
                question=True,
                json_keys=("answer",),
                starts={"answer": self.prompts.letters(len(choices))},
            )
        except ContextOverflow as exc:
            return Answer(None, Usage(), f"(not asked: {exc})")
        usage = Usage([call])
        return Answer(parse_choice(completion.text, len(choices), choices), usage, _raw(completion))

    def _answer_messages(
        self, question: str, choices: list[str], records: list[StepRecord] | None = None
    ) -> list[dict[str, str]]:
        sections = self.sections(records)
        if self.previous is not None and self.window == 0:
            sections.append(("My latest observation", self.previous.observation))
        return self.prompts.answer(sections, question, choices)

    # ------------------------------------------------------------------ checkpoints
    def save(self, directory: Path) -> None:
        pool = {r.step: r for r in [*self.records, *self.pending, *([self.previous] if self.previous else [])]}
        data = {
            "format": FORMAT,
            "agent": self.name,
            "task": asdict(self.task) if self.task else None,
            "steps": self.steps,
            "records": [pool[k].to_dict() for k in sorted(pool)],
            "window": [r.step for r in self.records],
            "pending": [r.step for r in self.pending],
            "previous": self.previous.step if self.previous else None,
            "summary": self.summary,
            "reflection": self.reflection,
            "summary_at": self._summary_at,
            "counters": self.counters,
            "paradigm": self._state(),
            "llm": self.llm.state(),
            "meter": self.meter.state(),
        }
        tmp = Path(directory) / (MEMORY_FILE + ".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        tmp.replace(Path(directory) / MEMORY_FILE)

    def load(self, directory: Path) -> None:
        data = json.loads((Path(directory) / MEMORY_FILE).read_text(encoding="utf-8"))
        if data.get("format") != FORMAT or data.get("agent") != self.name:
            raise ValueError(
                f"{directory} holds memory of agent {data.get('agent')!r} (format "
                f"{data.get('format')}), not of {self.name!r}"
            )
        if self.task is None and data.get("task"):
            task = dict(data["task"])
            task["verbs"] = tuple(task["verbs"])
            self.reset(Task(**task))
        pool = {int(d["step"]): StepRecord.from_dict(d) for d in data["records"]}
        self.records = [pool[k] for k in data["window"]]
        self.pending = [pool[k] for k in data["pending"]]
        self.previous = pool[data["previous"]] if data["previous"] is not None else None
        self.steps, self.summary, self.reflection = data["steps"], data["summary"], data["reflection"]
        self._summary_at = data["summary_at"]
        self.counters = dict(data["counters"])
        self._set_state(data["paradigm"])
        self.llm.set_state(data["llm"])
        self.meter.set_state(data.get("meter"))  # memory written before prompts were measured: none

    def _state(self) -> dict[str, Any]:
        """Paradigm state beyond the common memory (Mem1's internal state, overflow counts)."""
        return {}

    def _set_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`_state`."""

    # ------------------------------------------------------------------ reporting
    @property
    def label(self) -> str:
        """The exact combination: ``long_context+reflection+summarisation``."""
        return "+".join([self.name, *self.addons.names])

    def describe(self) -> dict[str, Any]:
        a = self.addons
        out: dict[str, Any] = {
            "name": self.name,
            "label": self.label,
            "addons": list(a.names),
            "window": "all" if self.window is None else self.window,
        }
        if a.reflection:
            out.update(reflect_every=a.reflect_every, reflect_max_tokens=a.reflect_max_tokens)
        if a.summarisation:
            out.update(summarise_every=a.summarise_every, summary_words=a.summary_words)
        out.update(self._own_description())
        out["llm"] = self.llm.describe()
        out["run"] = self.stats()  # results.json takes describe(): the run's memory facts travel with it
        return out

    def _own_description(self) -> dict[str, Any]:
        return {}

    def stats(self) -> dict[str, Any]:
        """Run facts only the agent knows (malformed replies, add-on calls, overflow), for results."""
        return {"label": self.label, "steps": self.steps, **self.counters}


def _raw(completion: Completion) -> str:
    if completion.reasoning:
        return f"<think>\n{completion.reasoning}\n</think>\n{completion.text}"
    return completion.text
