"""The shape of a quest, computed from its data: which stages each stage waits for, the leaves of each
chapter's goal tree, whether the quest is a tree at all, and the summary ``odyssey games`` prints."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from odyssey_env.quests.spec import Chapter, MainQuest, QuestSpec, Stage

__all__ = ["leaf_stages", "quest_summary"]


def quest_summary(quest: QuestSpec) -> dict[str, Any]:
    m = quest.main
    return {
        "quest": m.title if m else None,
        "chapters": len(m.chapters) if m else 0,
        "stages": len(quest.stages()),
        "leaves": len(leaf_stages(m)) if m else 0,
        "dag": _is_dag(m),
        "side_quests": quest.side_quests.enabled,
        "side_quest_kinds": list(quest.side_quests.kinds) if quest.side_quests.enabled else [],
        "tutorial_steps": len(quest.tutorial.steps) if quest.tutorial else 0,
        "expansion": quest.expansion.enabled,
    }


def _requires(m: MainQuest) -> Iterator[tuple[Chapter, Stage, tuple[str, ...]]]:
    """Every stage with the stages it requires (a stage without ``requires`` follows the previous one)."""
    previous: str | None = None
    for ch in m.chapters:
        for st in ch.stages:
            yield ch, st, st.requires if st.requires is not None else ((previous,) if previous else ())
            previous = st.id


def _is_dag(m: MainQuest | None) -> bool:
    """Whether some stage opens on other prerequisites than the one stage before it (a goal tree)."""
    if m is None:
        return False
    order = [st.id for ch in m.chapters for st in ch.stages]
    return any(req != ((order[i - 1],) if i else ()) for i, (_, _, req) in enumerate(_requires(m)))


def leaf_stages(main: MainQuest) -> list[str]:
    """Stages that need no other stage of their own chapter: the leaves of each chapter's goal tree,
    the tasks its later stages are built on (a linear chapter has one, its first stage)."""
    return [st.id for ch, st, requires in _requires(main) if not {s.id for s in ch.stages}.intersection(requires)]
