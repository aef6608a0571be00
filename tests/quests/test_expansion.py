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
