"""A planted two-action policy on a real (tiny) model, for the tests of the learning agents."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from odyssey_agents.llm.protocol import Completion
from odyssey_agents.llm.transformers_local import TransformersLLM

NORTH = '{"reasoning": "The path forks.", "action": "north"}'
SOUTH = '{"reasoning": "The path forks.", "action": "south"}'


class TwoActions(TransformersLLM):
    """A model whose act replies are one of two fixed replies, drawn with the model's own probabilities
    of each (seeded per call like every local backend); other calls generate as usual. The policy is
    the model's: training the model changes which reply it draws."""

    replies: tuple[str, ...] = (NORTH, SOUTH)

    def probabilities(self, messages: Sequence[dict[str, str]]) -> Any:
        import torch

        from odyssey_agents.training.sequences import ChatExample, batch_logprobs, encode, pad_id

        encoded = [encode(self, ChatExample(0, list(messages), r)) for r in self.replies]
        with torch.no_grad():
            logp, _ = batch_logprobs(self.model, encoded, pad_id(self))
        return torch.softmax(logp.sum(-1), dim=-1)

    def complete(self, messages, *, purpose, max_tokens=None, json_keys=None, starts=None) -> Completion:
        if purpose != "act":
            return super().complete(
                messages, purpose=purpose, max_tokens=max_tokens, json_keys=json_keys, starts=starts
            )
        import torch

        probs = self.probabilities(messages)
        generator = torch.Generator().manual_seed(self.seed * 1_000_003 + self.calls)
        self.calls += 1
        choice = int(torch.multinomial(probs.cpu(), 1, generator=generator))
        reply = self.replies[choice]
        return Completion(reply, self.count_tokens(messages), self.count_text(reply), 0.0, purpose)


def fork_info(previous: str | None, rewarded: str) -> dict[str, Any]:
    """The step info after ``previous``: one exploration point for the rewarded command."""
    reward = {
        "quest": 0,
        "side_quest": 0,
        "exploration": int(previous == rewarded),
        "craft": 0,
        "defeat": 0,
        "trade": 0,
        "death": 0,
    }
    return {"reward_breakdown": reward, "invalid_action": False}
