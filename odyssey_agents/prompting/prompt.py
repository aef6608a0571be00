"""The ReAct prompt of paper appendix A5.1, built from the game's own verbs.

One system prompt per episode (the action space is the game's verb list, so a game with new verbs
gets them listed, and a prompt never offers a verb the game lacks) and one user prompt per step:
the agent's memory sections, then ``My Current Observation:``, then the closing question. The reply
is a strict JSON object; paradigms that keep extra state in the reply (Mem1's ``memory``) add a key
with its own description. Reflection, summarisation and QA prompts live here too, so every word an
agent sends to a model can be read in one file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["ACT_KEYS", "KEY_DOCS", "PromptBuilder", "Section"]

#: The keys of a ReAct reply, in the order the model should write them.
ACT_KEYS: tuple[str, ...] = ("reasoning", "action")

#: What each reply key means, as shown in the output format.
KEY_DOCS: dict[str, str] = {
    "reasoning": "A few sentences explaining why you choose the action.",
    "action": "<action>",
}

#: A titled block of the user prompt: ``("My memories", "...")``.
Section = tuple[str, str]

INTRO = (
    "You are the player in a text adventure game. The world is described in text form. At each turn, "
    "you may choose ONE action from the action space below."
)
RULES = (
    "Rules:\n"
    "- The JSON must be the ONLY content in your reply (no extra text before/after).\n"
    "- The action must exactly match one option from the action space."
)
QUESTION = "What should I do next? Return only the JSON object."


def _format_block(keys: Sequence[str], docs: Mapping[str, str]) -> str:
    body = ",\n".join(f'  "{k}": "{docs[k]}"' for k in keys)
    return "Output format (STRICT): Return a single JSON object with exactly these keys:\n{\n" + body + "\n}"


def _one_key_format(key: str, doc: str) -> str:
    """The strict output format of an add-on or QA call, whose reply is one key."""
    return (
        "Output format (STRICT): Return a single JSON object with exactly this key:\n"
        f'{{\n  "{key}": "{doc}"\n}}\n'
        "The JSON must be the ONLY content in your reply."
    )


def _opening(usage: str) -> str:
    words, _, args = usage.partition("<")
    return words.strip() + (" " if args else "")


def render_sections(sections: Sequence[Section]) -> str:
    return "".join(f"{title}:\n{body}\n\n" for title, body in sections if body)


class PromptBuilder:
    """Prompts for one game: the system prompt is built once, user prompts per call."""

    def __init__(self, verbs: Sequence[str], keys: Sequence[str] = ACT_KEYS, key_docs: Mapping[str, str] | None = None):
        if not verbs:
            raise ValueError("the game lists no verbs: the prompt would offer no action")
        docs = {**KEY_DOCS, **(key_docs or {})}
        missing = [k for k in keys if k not in docs]
        if missing:
            raise ValueError(f"no description for reply key(s) {missing}")
        self.verbs = tuple(sorted(verbs))
        #: How a command may begin: each verb's words, with the space before its first argument
        #: (``pick up ``, ``talk to ``, ``wait``).
        self.verb_words = tuple(dict.fromkeys(_opening(v) for v in self.verbs if v.strip()))
        self.keys = tuple(keys)
        space = "\n".join(f"- {v}" for v in self.verbs)
        self.system = f"{INTRO}\nAction space:\n{space}\n{_format_block(self.keys, docs)}\n{RULES}"

    # ------------------------------------------------------------------ acting
    def act(self, sections: Sequence[Section], observation: str) -> list[dict[str, str]]:
        user = f"{render_sections(sections)}My Current Observation:\n{observation}\n\n{QUESTION}"
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]

    # ------------------------------------------------------------------ add-ons
    def reflect(
        self, before: str, reasoning: str, action: str, after: str, sections: Sequence[Section] = ()
    ) -> list[dict[str, str]]:
        system = (
            "You are the player in a text adventure game, looking back at your last move to learn "
            "from it. Say in one to three sentences what the outcome taught you about this world "
            "(what works, what fails, where things are) and what to do differently.\n"
            + _one_key_format("reflection", "What I learned and what I will do next.")
        )
        user = (
            f"{render_sections(sections)}Before my move I observed:\n{before}\n\n"
            f"I reasoned: {reasoning or '(nothing)'}\nI did: {action}\n\n"
            f"Then I observed:\n{after}\n\nReturn only the JSON object."
        )
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def summarise(self, summary: str, steps: str, max_words: int) -> list[dict[str, str]]:
        system = (
            "You are the player in a text adventure game, keeping notes of your experience. Merge "
            "your previous notes and the new steps into updated notes that keep what will matter "
            "later: places and how they connect, objects and where they are, NPCs and what they do, "
            "recipes, prices, quest progress, where you died or left things, what failed and why. "
            f"Use at most {max_words} words.\n" + _one_key_format("summary", "The updated notes.")
        )
        user = f"My previous notes:\n{summary or '(none yet)'}\n\nNew steps:\n{steps}\n\nReturn only the JSON object."
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    @staticmethod
    def letters(n: int) -> tuple[str, ...]:
        """The choice letters of an n-choice question."""
        return tuple(chr(ord("A") + i) for i in range(n))

    # ------------------------------------------------------------------ QA diagnostics
    def answer(self, sections: Sequence[Section], question: str, choices: Sequence[str]) -> list[dict[str, str]]:
        system = (
            "You are the player in a text adventure game, answering a question about the game from "
            "what you have experienced. Choose exactly one option.\n"
            + _one_key_format("answer", "<the letter of your choice>")
        )
        options = "\n".join(f"{letter}) {c}" for letter, c in zip(self.letters(len(choices)), choices, strict=True))
        user = f"{render_sections(sections)}Question: {question}\n{options}\n\nReturn only the JSON object."
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]
