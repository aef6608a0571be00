"""LongContext: every step in the prompt, so the prompt grows linearly with the episode (paper §4).

When the prompt plus the reply budget no longer fits the model's context window, ``on_overflow``
decides, and :meth:`stats` reports it (first step, how often, how many steps were dropped):

* ``truncate`` (default): drop the oldest steps until it fits, with a note in the prompt saying so;
* ``stop``: end the episode there (what the paper's runs did: the agent stops running);
* ``error``: raise :class:`ContextOverflow`.

The fit check is cheap: each step's token count is measured once, when it is stored, and the prompt
is measured exactly only when the running estimate comes near the limit.
"""

from __future__ import annotations

from typing import Any

from odyssey_agents.llm import LLM, ContextOverflow
from odyssey_agents.memory import StepRecord
from odyssey_agents.paradigms.react_agent import AgentConfigError, ReActAgent
from odyssey_agents.prompting.prompt import Section

__all__ = ["LongContextAgent"]

POLICIES = ("truncate", "stop", "error")
_JOIN_SLACK = 1.05  # joined text can tokenize a little longer than its parts


class LongContextAgent(ReActAgent):
    name = "long_context"
    window = None

    def __init__(self, llm: LLM, *, on_overflow: str = "truncate", **kwargs: Any):
        if on_overflow not in POLICIES:
            raise AgentConfigError(f"on_overflow must be one of {', '.join(POLICIES)}, got {on_overflow!r}")
        self.on_overflow = on_overflow
        super().__init__(llm, **kwargs)

    def _clear(self) -> None:
        super()._clear()
        self.dropped = 0  # steps removed from the prompt by truncation
        self.overflows = 0  # steps at which the prompt did not fit
        self.first_overflow: int | None = None
        self._tokens: dict[int, int] = {}  # step -> tokens of its rendered record

    def _remember(self, record: StepRecord) -> None:
        super()._remember(record)
        if self.llm.context_window is not None:
            self._tokens[record.step] = self.llm.count_text(record.render())

    def sections(self, records: list[StepRecord] | None = None) -> list[Section]:
        out = super().sections(records)
        if self.dropped:
            note = f"({self.dropped} earlier steps no longer fit in my context window and are left out.)"
            out = [(t, f"{note}\n\n{b}" if t == "My memories" else b) for t, b in out]
        return out

    def _fit(self, observation: str) -> list[dict[str, str]] | None:
        messages = self._act_prompt(observation)
        limit = self.llm.context_window
        if limit is None or not self.records:
            return messages
        reserve = self.llm.max_tokens
        rest = self.llm.count_tokens([messages[0], {"role": "user", "content": observation}]) + 64
        estimate = rest + _JOIN_SLACK * sum(self._tokens.get(r.step, 0) for r in self.records)
        if estimate + reserve <= 0.9 * limit:
            return messages
        used = self.llm.count_tokens(messages)
        if used + reserve <= limit:
            return messages
        self.overflows += 1
        if self.first_overflow is None:
            self.first_overflow = self.steps
        if self.on_overflow == "error":
            raise ContextOverflow(
                used + reserve,
                limit,
                f"long_context prompt of {used} tokens plus a reply "
                f"budget of {reserve} exceeds the context window of {limit} at step {self.steps}",
            )
        if self.on_overflow == "stop":
            return None
        while self.records and used + reserve > limit:
            # drop enough of the oldest steps for the excess, then re-measure exactly
            n = self._overflowing(self.records, used + reserve - limit)
            for r in self.records[:n]:
                self._tokens.pop(r.step, None)
            del self.records[:n]
            self.dropped += n
            messages = self._act_prompt(observation)
            used = self.llm.count_tokens(messages)
        if used + reserve > limit:
            raise ContextOverflow(used + reserve, limit, "even with no past steps the prompt does not fit")
        return messages

    def _answer_messages(
        self, question: str, choices: list[str], records: list[StepRecord] | None = None
    ) -> list[dict[str, str]]:
        """QA prompts follow the same window: the oldest steps are left out of that prompt only."""
        kept = self.records if records is None else records
        messages = super()._answer_messages(question, choices, kept)
        limit = self.llm.context_window
        if limit is None:
            return messages
        used = self.llm.count_tokens(messages)
        while kept and used + self.llm.max_tokens > limit:
            kept = kept[self._overflowing(kept, used + self.llm.max_tokens - limit) :]
            messages = super()._answer_messages(question, choices, kept)
            used = self.llm.count_tokens(messages)
        return messages

    def _overflowing(self, records: list[StepRecord], excess: int) -> int:
        """How many of the oldest ``records`` free at least ``excess`` tokens (at least one)."""
        n, freed = 0, 0
        while n < len(records) and freed < excess:
            freed += self._tokens.get(records[n].step, 1)
            n += 1
        return max(n, 1)

    def _state(self) -> dict[str, Any]:
        return {
            "dropped": self.dropped,
            "overflows": self.overflows,
            "first_overflow": self.first_overflow,
            "tokens": {str(k): v for k, v in self._tokens.items()},
        }

    def _set_state(self, state: dict[str, Any]) -> None:
        self.dropped, self.overflows = state["dropped"], state["overflows"]
        self.first_overflow = state["first_overflow"]
        self._tokens = {int(k): v for k, v in state["tokens"].items()}

    def _own_description(self) -> dict[str, Any]:
        return {"on_overflow": self.on_overflow}

    def stats(self) -> dict[str, Any]:
        return {
            **super().stats(),
            "context_overflow": {
                "policy": self.on_overflow,
                "context_window": self.llm.context_window,
                "overflowed_steps": self.overflows,
                "first_overflow_step": self.first_overflow,
                "dropped_steps": self.dropped,
            },
        }
