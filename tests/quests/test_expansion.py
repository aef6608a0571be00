"""Online expansion: seeded, triggered by full exploration, linked to the furthest area, bounded."""

from __future__ import annotations

from .conftest import act

EXPANSION = {"expansion": {"enabled": True, "max_expansions": 1, "places": [1, 1], "areas_per_place": [2, 2]}}


def explore(engine):
    act(engine, "enter barn", "enter loft")


def test_expansion_adds_higher_level_areas_beyond_the_furthest(make_engine):
    engine = make_engine(EXPANSION)
    before = set(engine.state.areas)
    explore(engine)
    new = [a for a in engine.state.areas if a not in before]
    assert len(new) == 2
    assert all(engine.state.areas[a].level == 3 for a in new)
    assert any(a in engine.state.areas["loft"].exits for a in new)  # loft is furthest from the yard
    assert any(e.kind == "world_expanded" for e in engine.events)


def test_expansion_is_seeded_and_bounded(make_engine):
    worlds = []
    for _ in range(2):
        engine = make_engine(EXPANSION, seed=3)
        explore(engine)
        new = [a for a in engine.state.areas if a not in ("yard", "barn", "loft")]
        act(engine, *(f"enter {a}" for a in new))
        worlds.append(sorted(engine.state.areas))
    assert worlds[0] == worlds[1]
    assert len(worlds[0]) == 5  # max_expansions = 1


def test_expansion_can_be_switched_off(make_engine):
    engine = make_engine(EXPANSION, expansion=False)
    explore(engine)
    assert sorted(engine.state.areas) == ["barn", "loft", "yard"]


PACK = {
    "places": [
        {
            "name": "Ash Hollow",
            "description": "A hollow of grey ash.",
            "areas": [
                {"name": "ash_gate", "description": "A gate of cinders.", "objects": {"cinder_husk": 2}},
                {"name": "ash_pit", "description": "A pit.", "npcs": ["ash_hound"]},
            ],
        }
    ],
    "objects": [{"name": "cinder_husk", "category": "material", "description": "A warm husk.", "level": 3}],
    "npcs": [
        {
            "name": "ash_hound",
            "kind": "enemy",
            "description": "A hound of ash.",
            "level": 3,
            "drops": {"cinder_husk": 1},
        }
    ],
    "provenance": {"writer": "a person"},
}


def test_a_written_pack_is_added_by_the_next_expansion_and_the_world_before_it_is_unchanged(make_engine):
    from odyssey_env.engine import Engine
    from odyssey_env.quests.expansion import with_packs

    plain = make_engine(EXPANSION, seed=2)
    game = with_packs(plain.game, [PACK])
    assert "cinder_husk" in game.objects and "ash_hound" in game.npcs and "cinder_husk" not in plain.game.objects
    engine = Engine(game, 2)
    assert engine.state.to_dict() == Engine(plain.game, 2).state.to_dict()  # the seed's world is the same
    explore(engine)
    assert engine.state.areas["ash_gate"].objects == {"cinder_husk": 2}
    assert engine.state.areas["ash_gate"].place == "Ash Hollow" and engine.state.areas["ash_gate"].level == 3
    assert "ash_gate" in engine.state.areas["loft"].exits and "ash_pit" in engine.state.areas["ash_gate"].exits
    hound = next(n for n in engine.state.npcs.values() if n.type == "ash_hound")
    assert hound.area == "ash_pit" and hound.origin == "expansion"
    assert any(e.kind == "world_expanded" and e.data["areas"] == ["ash_gate", "ash_pit"] for e in engine.events)


def test_a_pack_is_checked_like_a_games_own_content(make_engine):
    import pytest

    from odyssey_env.game import GameError
    from odyssey_env.quests.expansion import with_packs

    game = make_engine(EXPANSION).game
    bad = {
        "places": [
            {
                "name": "X",
                "description": "x",
                "areas": [{"name": "barn", "description": "again", "objects": {"gold": 1}}],
            }
        ],
        "objects": [{"name": "bag2", "category": "container", "description": "A bag.", "capacity": 3}],
        "npcs": [{"name": "boss2", "kind": "enemy", "role": "boss", "description": "A boss."}],
    }
    with pytest.raises(GameError) as info:
        with_packs(game, [bad])
    text = str(info.value)
    assert "name 'barn' is already used" in text and "unknown object 'gold'" in text
    assert "a pack's object is a plain" in text and "a pack's NPC is a fighter or a villager" in text
    with pytest.raises(GameError, match="expansion pack 0"):
        with_packs(game, [{"places": "nowhere"}])
