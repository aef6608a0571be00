"""A tiny three-area world, built in a temporary folder, for testing quest machinery in isolation."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from odyssey_env import load_game
from odyssey_env.engine import Engine

WORLD: dict[str, Any] = {
    "game": {"name": "tiny", "title": "Tiny", "description": "A test world.", "intro": "Hello."},
    "spawn": "yard",
    "places": [
        {
            "name": "Farm",
            "description": "A farm.",
            "areas": [
                {
                    "name": "yard",
                    "description": "A yard.",
                    "objects": {"coin": 5, "stick": 3, "bench": 1, "pen": 1, "note": 1},
                    "npcs": ["sage", "trader"],
                    "scatter": False,
                },
                {"name": "barn", "description": "A barn.", "objects": {"hay": 2}, "scatter": False},
                {"name": "loft", "description": "A loft.", "level": 2, "objects": {"hay": 1}, "scatter": False},
            ],
        },
    ],
    "graph": {"mode": "fixed", "connections": [{"a": "yard", "b": "barn"}, {"a": "barn", "b": "loft"}]},
    "objects": [
        {"name": "coin", "category": "currency", "description": "A coin.", "size": 0, "value": 1},
        {"name": "stick", "category": "material", "description": "A stick.", "value": 1},
        {"name": "hay", "category": "material", "description": "Hay.", "value": 1},
        {
            "name": "doll",
            "category": "misc",
            "description": "A hay doll.",
            "value": 3,
            "recipe": {"ingredients": {"hay": 1, "stick": 1}, "stations": ["bench"]},
        },
        {"name": "bench", "category": "station", "description": "A bench."},
        {"name": "pen", "category": "tool", "description": "A pen.", "uses": ["write"], "size": 0},
        {"name": "note", "category": "writable", "description": "A note.", "max_text": 50, "size": 0},
        {"name": "apple", "category": "food", "description": "An apple.", "hp_restore": 5, "value": 1},
        {"name": "relic", "category": "quest", "description": "A relic.", "spawn_weight": 0},
    ],
    "npcs": [
        {"name": "sage", "kind": "friendly", "role": "guide", "unique": True, "description": "A sage."},
        {
            "name": "trader",
            "kind": "friendly",
            "role": "merchant",
            "unique": True,
            "description": "A trader.",
            "stock": {"apple": 3},
        },
        {
            "name": "rat",
            "kind": "enemy",
            "description": "A rat.",
            "hp": 3,
            "attack": 1,
            "spawn_weight": 0,
            "drops": {"relic": 1},
        },
        {
            "name": "mentor",
            "kind": "friendly",
            "role": "villager",
            "unique": True,
            "description": "A mentor.",
            "spawn_weight": 0,
        },
    ],
}

QUEST: dict[str, Any] = {
    "main": {
        "title": "Tiny Quest",
        "guide": {"npc": "sage"},
        "chapters": [
            {
                "id": "one",
                "title": "One",
                "stages": [
                    {
                        "id": "talk",
                        "title": "Talk to the sage",
                        "hint": "Talk to me.",
                        "done": {"type": "talked_to", "npc": "sage"},
                    },
                    {
                        "id": "barn",
                        "title": "Go to the barn",
                        "hint": "East.",
                        "done": {"type": "in_area", "area": "barn"},
                    },
                ],
            },
            {
                "id": "two",
                "title": "Two",
                "stages": [
                    {
                        "id": "rat",
                        "title": "Kill the rat",
                        "hint": "In the loft.",
                        "done": {"type": "npc_defeated", "npc": "rat"},
                        "spawn": [{"npc": "rat", "area": "loft"}],
                    },
                    {
                        "id": "relic",
                        "title": "Hold the relic",
                        "hint": "Pick it up.",
                        "done": {"type": "has_item_count", "object": "relic"},
                    },
                ],
            },
        ],
    },
}


def write_game(
    root: Path, world: dict[str, Any] | None = None, quest: dict[str, Any] | None = None, name: str = "tiny"
) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    w = copy.deepcopy(world if world is not None else WORLD)
    w["game"]["name"] = name
    (folder / "world.json").write_text(json.dumps(w), encoding="utf-8")
    (folder / "quest.json").write_text(json.dumps(quest if quest is not None else QUEST), encoding="utf-8")
    return folder


@pytest.fixture
def make_engine(tmp_path):
    """Build an engine on the tiny world with a given quest (or the default one)."""
    counter = iter(range(1000))

    def make(
        quest: dict[str, Any] | None = None, world: dict[str, Any] | None = None, seed: int = 0, **options: Any
    ) -> Engine:
        folder = write_game(tmp_path, world, quest, name=f"tiny{next(counter)}")
        return Engine(load_game(folder, cache=False), seed, options=options)

    return make


def act(engine: Engine, *commands: str):
    """Play commands; return the last outcome and the concatenated feedback."""
    out = None
    for command in commands:
        out = engine.step({"player": command})["player"]
    return out, "\n".join(engine.state.feedback["player"])
