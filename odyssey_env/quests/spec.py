"""The quest format (``quest.json``). Filled in by the quest machinery; empty quests are allowed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from odyssey_env.schema import Problem

if TYPE_CHECKING:
    from odyssey_env.game import Game


@dataclass(frozen=True)
class QuestSpec:
    """Everything in ``quest.json``."""

    main: dict[str, Any] | None = None


def check_quest(game: Game) -> list[Problem]:
    return []


def quest_summary(quest: QuestSpec) -> dict[str, Any]:
    return {}
