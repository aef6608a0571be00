"""Voyager (paper §4, Wang et al. 2023): an automatic curriculum, a critic and a library of skills.

Three extra roles, each a counted model call with its own purpose:

* **curriculum** (``curriculum``): with no task at hand, the model proposes the next one from what it
  completed, what it failed, its notes (summarisation add-on) and what it sees now;
* **critic** (``critique``): before each act on a task, the model judges from the steps taken on it
  and the current observation whether the task is achieved; a task not achieved after
  ``max_task_steps`` steps is abandoned (recorded as failed) and a new one is proposed;
* **skill distiller** (``skill``): an achieved task becomes a skill {name, description, steps},
  embedded and stored in the skill library (a skill of the same name is replaced).

The act prompt carries the current task, the recently completed and failed tasks, and the ``top_k``
skills most similar to the task and the observation. The critic and distiller read at most the last
``trace_window`` steps of the task.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from odyssey_agents.base import Usage
from odyssey_agents.llm import LLM
from odyssey_agents.memory import StepRecord
from odyssey_agents.paradigms.react_agent import AgentConfigError
from odyssey_agents.prompting.prompt import Section
from odyssey_agents.retrieval import prompts
from odyssey_agents.retrieval.base import RetrievalAgent, TextMemory

__all__ = ["VoyagerAgent"]

_SHOWN_TASKS = 8
_YES = ("yes", "true", "success", "achieved", "done", "1")


class VoyagerAgent(RetrievalAgent):
    name = "voyager"
    stores = ("skills",)
    skills: TextMemory  # made from ``stores`` by RetrievalAgent.__init__
    retrieved_title = "Skills that may help"

    def __init__(self, llm: LLM, *, max_task_steps: int = 12, trace_window: int = 8, **kwargs: Any):
        if int(max_task_steps) < 1 or int(trace_window) < 1:
            raise AgentConfigError(
                f"max_task_steps and trace_window must be at least 1, got {max_task_steps}, {trace_window}"
            )
        self.max_task_steps, self.trace_window = int(max_task_steps), int(trace_window)
        super().__init__(llm, **kwargs)

    def _clear(self) -> None:
        super()._clear()
        self.goal = ""  # the current task ("": none; self.task is the episode's Task)
        self.task_steps = 0  # steps taken on it
        self.trace: list[StepRecord] = []  # its last trace_window steps
        self.completed: list[str] = []
        self.failed: list[str] = []
        self.counters.update(
            tasks_proposed=0,
            tasks_completed=0,
            tasks_abandoned=0,
            curriculum_failures=0,
            critique_failures=0,
            skills_added=0,
            skills_replaced=0,
            skill_failures=0,
        )

    # ------------------------------------------------------------------ one step
    def _step_memory(self, pending: StepRecord | None, observation: str, usage: Usage) -> list[str]:
        if self.goal and pending is not None:
            self.task_steps += 1
            self.trace = [*self.trace, pending][-self.trace_window :]
            self._judge(observation, usage)
        if not self.goal:
            self._propose(observation, usage)
        return self._pick(self._embed([f"{self.goal}\n{observation}"], usage)[0])

    def _recall(self, query: str, usage: Usage) -> list[str]:
        return self._pick(self._embed([query], usage)[0])

    def _pick(self, query: np.ndarray) -> list[str]:
        return [self.skills.items[k]["text"] for k, _ in self.skills.search(query, self.top_k)]

    def _own_sections(self) -> list[Section]:
        out: list[Section] = []
        if self.completed:
            out.append(("Tasks I completed", "\n".join(f"- {t}" for t in self.completed[-_SHOWN_TASKS:])))
        if self.failed:
            out.append(("Tasks I failed or gave up", "\n".join(f"- {t}" for t in self.failed[-_SHOWN_TASKS:])))
        out.extend(super()._own_sections())
        if self.goal:
            out.append(
                ("My current task", f"{self.goal} (step {self.task_steps + 1} of at most {self.max_task_steps})")
            )
        return out

    # ------------------------------------------------------------------ the roles
    def _trace_text(self) -> str:
        return "\n\n".join(r.render() for r in self.trace)

    def _propose(self, observation: str, usage: Usage) -> None:
        messages = prompts.curriculum(
            observation, self.completed[-_SHOWN_TASKS:], self.failed[-_SHOWN_TASKS:], self.summary, self.max_task_steps
        )
        fields = self._ask_json(messages, "curriculum", ("reasoning", "task"), usage)
        task = " ".join(str(fields.get("task", "")).split()) if fields else ""
        if not task:
            self.counters["curriculum_failures"] += 1
            return  # no task this step; the next step asks again
        self.goal, self.task_steps, self.trace = task[:300], 0, []
        self.counters["tasks_proposed"] += 1

    def _judge(self, observation: str, usage: Usage) -> None:
        fields = self._ask_json(
            prompts.critique(self.goal, self._trace_text(), observation), "critique", ("success", "critique"), usage
        )
        if fields is None:
            self.counters["critique_failures"] += 1
        elif str(fields.get("success", "")).strip().lower().startswith(_YES):
            self.completed.append(self.goal)
            self.counters["tasks_completed"] += 1
            self._distil(usage)
            self.goal = ""
            return
        if self.task_steps >= self.max_task_steps:
            self.failed.append(self.goal)
            self.counters["tasks_abandoned"] += 1
            self.goal = ""

    def _distil(self, usage: Usage) -> None:
        fields = self._ask_json(
            prompts.distil_skill(self.goal, self._trace_text()), "skill", ("name", "description", "steps"), usage
        )
        if fields is None:
            self.counters["skill_failures"] += 1
            return
        name = re.sub(r"[^a-z0-9_]+", "_", str(fields["name"]).strip().lower()).strip("_")[:60] or "skill"
        description, steps = (" ".join(str(fields[k]).split()) for k in ("description", "steps"))
        text = f"{name}: {description}\nSteps: {steps}"
        vector = self._embed([text], usage)[0]
        same = next((k for k, v in self.skills.items.items() if v["name"] == name), None)
        if same is None:
            self.skills.add(text, vector, name=name, task=self.goal)
            self.counters["skills_added"] += 1
        else:
            self.skills.update(same, text, vector, task=self.goal)
            self.counters["skills_replaced"] += 1

    # ------------------------------------------------------------------ checkpoints
    def _memory_state(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "task_steps": self.task_steps,
            "trace": [r.to_dict() for r in self.trace],
            "completed": self.completed,
            "failed": self.failed,
        }

    def _set_memory_state(self, state: dict[str, Any]) -> None:
        self.goal, self.task_steps = state["goal"], int(state["task_steps"])
        self.trace = [StepRecord.from_dict(d) for d in state["trace"]]
        self.completed, self.failed = list(state["completed"]), list(state["failed"])

    def _retrieval_description(self) -> dict[str, Any]:
        return {"max_task_steps": self.max_task_steps, "trace_window": self.trace_window}

    def stats(self) -> dict[str, Any]:
        return {**super().stats(), "current_task": self.goal}
