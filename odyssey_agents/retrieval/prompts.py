"""Every prompt the retrieval paradigms add to the ReAct ones: Mem0's extraction and update, Voyager's
curriculum, critic and skill distiller. (RAPTOR's summaries reuse the summarisation prompt of
:mod:`odyssey_agents.prompting.prompt`.) Each reply is one strict JSON object, parsed by the same
tolerant parser as an act reply.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["critique", "curriculum", "distil_skill", "extract_facts", "update_memories"]

_GAME = "You are the player in a text adventure game"


def _json_only(body: str) -> str:
    return (
        "Output format (STRICT): Return a single JSON object:\n"
        f"{body}\nThe JSON must be the ONLY content in your reply."
    )


def _messages(system: str, user: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user + "\n\nReturn only the JSON object."},
    ]


# ---------------------------------------------------------------------- Mem0
def extract_facts(step: str, outcome: str, summary: str, max_facts: int) -> list[dict[str, str]]:
    system = (
        f"{_GAME}, keeping a memory of facts about the world. From your last step and what came "
        f"of it, extract at most {max_facts} short, self-contained facts worth remembering later: "
        "places and how they connect, where objects and people are, what they sell or want, "
        "recipes, what works and what fails, quest progress. Each fact is one sentence that "
        "names its subject. Extract nothing that is already obvious from the step itself.\n"
        + _json_only('{\n  "facts": ["<fact>", "..."]\n}')
    )
    notes = f"My notes so far:\n{summary}\n\n" if summary else ""
    user = f"{notes}My last step:\n{step}\n\nWhat I observed after it:\n{outcome}"
    return _messages(system, user)


def update_memories(existing: Sequence[tuple[str, str]], facts: Sequence[str]) -> list[dict[str, str]]:
    system = (
        f"{_GAME}, maintaining your memory of facts. Compare each new fact with the stored "
        "memories it resembles and decide one operation per fact: ADD it as a new memory; UPDATE "
        "a stored memory (give its id and the merged text) when the fact refines or changes it; "
        "DELETE a stored memory (give its id) that the fact shows to be wrong or no longer true; "
        "NONE when the fact is already known.\n"
        + _json_only(
            '{\n  "operations": [{"event": "ADD|UPDATE|DELETE|NONE", "id": "<stored memory id, '
            'for UPDATE, DELETE and NONE>", "text": "<memory text, for ADD and UPDATE>"}]\n}'
        )
    )
    stored = "\n".join(f"[{key}] {text}" for key, text in existing) or "(none)"
    new = "\n".join(f"- {f}" for f in facts)
    return _messages(system, f"Stored memories:\n{stored}\n\nNew facts:\n{new}")


# ---------------------------------------------------------------------- Voyager
def curriculum(
    observation: str, completed: Sequence[str], failed: Sequence[str], notes: str, max_steps: int
) -> list[dict[str, str]]:
    system = (
        f"{_GAME}, choosing your next task so that you keep learning and make progress in the "
        "main quest. Propose ONE concrete task that you can finish in at most "
        f"{max_steps} actions from where you are now, that is new or worth retrying, and that "
        "builds on what you have done.\n"
        + _json_only('{\n  "reasoning": "<why this task now>",\n  "task": "<the task, one sentence>"\n}')
    )
    done = "\n".join(f"- {t}" for t in completed) or "(none yet)"
    bad = "\n".join(f"- {t}" for t in failed) or "(none)"
    notes_part = f"My notes:\n{notes}\n\n" if notes else ""
    user = (
        f"{notes_part}Tasks I completed:\n{done}\n\nTasks I failed or gave up:\n{bad}\n\n"
        f"My current observation:\n{observation}"
    )
    return _messages(system, user)


def critique(task: str, trace: str, observation: str) -> list[dict[str, str]]:
    system = (
        f"{_GAME}, judging whether you achieved your current task. Look only at what the "
        "observations show.\n"
        + _json_only('{\n  "success": "yes or no",\n  "critique": "<what is missing, or how it was done>"\n}')
    )
    user = f"Task: {task}\n\nMy steps on this task:\n{trace}\n\nWhat I observe now:\n{observation}"
    return _messages(system, user)


def distil_skill(task: str, trace: str) -> list[dict[str, str]]:
    system = (
        f"{_GAME}, turning a task you just completed into a reusable skill: the general "
        "procedure, with the exact commands that worked, so that you can do it again elsewhere.\n"
        + _json_only(
            '{\n  "name": "<short_snake_case_name>",\n  "description": "<when to use it, one '
            'sentence>",\n  "steps": "<the commands, in order>"\n}'
        )
    )
    return _messages(system, f"Task: {task}\n\nMy steps:\n{trace}")
