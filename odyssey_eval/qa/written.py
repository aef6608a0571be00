"""World-Knowledge questions about world dynamics written by a language model (paper §3.4, A3.1).

The paper has an LLM write the questions about world dynamics, and their distractors, from the game's
rules; they are checked by hand. Here the writer is any backend of :mod:`odyssey_agents.llm` (the
``eval.qa.writer`` group), and every question is checked by code before it is kept: the writer is given
one fact a rule declares about itself (:meth:`odyssey_env.rules.Fact`: a question, its answer, wrong
answers) with the rule's description, and asked for a question of its own about that fact, whose answer
is the declared one, and plausible wrong answers of its own. A question is kept only if

* its answer is the declared answer (compared without case, spacing or end punctuation): an answer that
  cannot be verified against the rules' facts rejects the question;
* it has a question text and at least one distractor that is not the answer (distractors equal to it,
  repeated ones, and over-long ones are dropped).

What code cannot check is whether the reworded question still asks about the declared fact, and whether a
distractor is a paraphrase of the truth; those are the writer's (see ``docs/fidelity.md``).

Questions are written **once per game and writer model** — the game's content digest, the writer's
backend, model and seed and the prompt's version name a cache entry — and stored with their provenance
(writer, game digest, when, accepted and rejected items with reasons, tokens spent) under the cache
directory (``$ODYSSEY_CACHE/qa/world_dynamics/``, never inside the installed package), so every process
and every later run asks the same ones and pays nothing. Each cell then samples its questions from the
stored set with a string seed, as every template does.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from odyssey_agents.errors import ConfigError
from odyssey_eval.qa.questions import Question, make_question

if TYPE_CHECKING:
    from odyssey_env.game import Game

__all__ = ["PROMPT_VERSION", "TEMPLATE", "WriterError", "dynamics_questions", "written_questions"]

TEMPLATE = "world_dynamics"
KIND = "world_knowledge"
#: Bump when the prompt or the checks change: questions written by the old prompt are not reused.
PROMPT_VERSION = "wd1"
KEYS = ("question", "answer", "distractors")
MAX_TEXT = 300
WRITE_DISTRACTORS = 9  # as many as a ten-choice question needs


class WriterError(ConfigError):
    """No writer configured, or a writer that gave no usable question at all."""


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).strip().strip(".!;:").strip().lower()


def _facts(game: Game) -> list[tuple[str, str, Any]]:
    """(fact id, rule description, fact) for every fact the game's rules declare, in rule order."""
    out = []
    for rule in [*game.rules.actions.values(), *game.rules.steps]:
        for i, fact in enumerate(rule.facts(game)):
            out.append((f"{rule.name}#{i}", rule.description, fact))
    return out


def messages(game: Game, description: str, fact: Any) -> list[dict[str, str]]:
    """The writer's prompt for one declared fact."""
    system = (
        "You write multiple-choice questions that test whether a player of a text adventure game has "
        "learned how its world works. You are given one fact the game's rules declare. Write a new "
        "question in your own words that asks about exactly this fact, keep the declared answer word for "
        f"word, and write {WRITE_DISTRACTORS} wrong answers that a player who had not learned the fact might "
        "believe, each short and clearly false by the fact.\n"
        'Reply with a JSON object: {"question": "...", "answer": "<the declared answer>", '
        '"distractors": "<wrong answer> | <wrong answer> | ..."}'
    )
    user = (
        f"Game: {game.title}\nRule: {description}\nDeclared question: {fact.question}\n"
        f"Declared answer: {fact.answer}\nDeclared wrong answers: {' | '.join(fact.distractors)}\n\n"
        "Return only the JSON object."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def check(fact: Any, fields: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The kept question (``question``, ``answer``, ``distractors``) or the reason it is rejected."""
    question = str(fields.get("question") or "").strip()
    answer = str(fields.get("answer") or "").strip()
    if not question or len(question) > MAX_TEXT:
        return None, "no question text" if not question else "question too long"
    if _norm(answer) != _norm(fact.answer):
        return None, f"answer {answer[:60]!r} is not the declared answer {fact.answer!r}"
    raw = fields.get("distractors") or ""
    items = raw if isinstance(raw, list) else str(raw).split("|")
    seen, distractors = {_norm(fact.answer)}, []
    for item in items:
        d = str(item).strip()
        if d and len(d) <= MAX_TEXT and _norm(d) not in seen:
            seen.add(_norm(d))
            distractors.append(d)
    if not distractors:
        return None, "no distractor other than the answer"
    return {"question": question, "answer": fact.answer, "distractors": distractors}, None


def cache_file(game: Game, writer: Mapping[str, Any], seed: int) -> Path:
    from odyssey_agents.llm.written import entry

    return entry("qa/world_dynamics", game, writer, f"s{seed}-{PROMPT_VERSION}")


def written_questions(
    game: Game, writer: Mapping[str, Any] | None, *, seed: int = 0, log: Callable[[str], None] = lambda _: None
) -> dict[str, Any]:
    """The game's LLM-written world-dynamics questions, from the cache or written now (and cached)."""
    if not writer or writer.get("name") in (None, "none"):
        raise WriterError(
            "eval.qa.world_dynamics asks for LLM-written questions: name their writer with eval.qa.writer "
            "(an llm group, e.g. eval.qa.writer='${llm}' or {name: openai, model: gpt-5-mini})"
        )
    from odyssey_agents.llm.factory import build_llm, refuse_secrets
    from odyssey_agents.llm.written import game_digest, written_once

    refuse_secrets(writer, "eval.qa.writer")
    path = cache_file(game, writer, seed)

    def write() -> dict[str, Any]:
        from odyssey_agents.prompting.reply import parse_reply

        llm = build_llm(dict(writer), seed=seed)
        log(f"writing the world-dynamics questions of {game.name} with {writer.get('name')} (once; cached in {path})")
        accepted, rejected = [], []
        tokens = [0, 0]
        for fact_id, description, fact in _facts(game):
            completion = llm.complete(messages(game, description, fact), purpose="write_question", json_keys=KEYS)
            tokens[0] += completion.input_tokens
            tokens[1] += completion.output_tokens
            reply = parse_reply(completion.text, KEYS, required=("question", "answer"))
            kept, why = check(fact, reply.fields) if reply.ok else (None, f"unusable reply: {reply.error}")
            if kept is None:
                rejected.append({"fact": fact_id, "reason": why})
            else:
                accepted.append({"fact": fact_id, "topic": fact.topic, **kept})
        if not accepted:
            example = rejected[0]["reason"] if rejected else "-"
            raise WriterError(
                f"the writer {writer.get('name')} {writer.get('model') or ''} wrote no usable world-dynamics "
                f"question for {game.name} ({len(rejected)} rejected, e.g. {example})"
            )
        log(f"{len(accepted)} world-dynamics questions kept, {len(rejected)} rejected")
        return {"writer": llm.describe(), "tokens": tokens, "accepted": accepted, "rejected": rejected}

    return written_once(
        path,
        write,
        template=TEMPLATE,
        prompt_version=PROMPT_VERSION,
        game=game.name,
        game_digest=game_digest(game.path),
        seed=seed,
    )


def dynamics_questions(
    game: Game, written: Mapping[str, Any], seed: int, *, per_template: int, n_choices: int
) -> list[Question]:
    """Up to ``per_template`` of the written questions for this cell (seeded), with ``n_choices`` choices:
    the writer's distractors first, the rule's declared ones after them when more are needed."""
    facts = {fid: fact for fid, _, fact in _facts(game)}
    items = [w for w in written.get("accepted", []) if w["fact"] in facts]
    rng = random.Random(f"odyssey:qa:{KIND}:{game.name}:{seed}:{TEMPLATE}")
    out = []
    for i, item in enumerate(rng.sample(items, min(per_template, len(items)))):
        fact = facts[item["fact"]]
        wrong = [d for d in item["distractors"] if _norm(d) != _norm(fact.answer)]
        own = rng.sample(wrong, min(len(wrong), n_choices - 1))
        extra = [d for d in fact.distractors if _norm(d) not in {_norm(x) for x in own}]
        q = make_question(
            rng,
            qid=f"wk/{TEMPLATE}/{i}",
            kind=KIND,
            template=TEMPLATE,
            text=item["question"],
            answer=fact.answer,
            wrong=[],
            n_choices=n_choices,
            subject={"template": TEMPLATE, "fact": item["fact"], "topic": fact.topic, "writer": written.get("writer")},
            extra_wrong=(own + extra)[: n_choices - 1],
        )
        if q is not None:
            out.append(q)
    return out
