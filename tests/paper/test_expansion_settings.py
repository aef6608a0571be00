"""Each game's online-expansion setting is the reference's (issue 27, item 8): the paper's games as imported,
and odyssey's own games as the paper game each one stands in for."""

from __future__ import annotations

import json

import pytest

from odyssey_env.game import load_game
from odyssey_eval.paper.importer import import_release
from odyssey_eval.paper.release import cached_wheel, open_release

#: ``features.online_expansion`` of each game's ``default.json`` in the reference release (agentodyssey 0.1.0;
#: absent in Remnant and Mark, which the reference reads as off). The reference expands only with an OpenAI key.
REFERENCE = {
    "base": True,
    "remnant": False,
    "mark": False,
    "metropolis": True,
    "quarantine": True,
    "robot_kingdom": True,
    "saltglass": True,
}
#: odyssey's own games and the paper game of the same size each one stands in for (conf/experiment/table2.yaml).
STAND_INS = {
    "mossfall": "base",
    "quiet_bell": "remnant",
    "tallowmere": "mark",
    "gavelmoor": "metropolis",
    "lazaret": "quarantine",
    "rust_throne": "robot_kingdom",
    "mirror_salt": "saltglass",
}


@pytest.mark.parametrize("game", sorted(STAND_INS))
def test_odyssey_s_games_expand_as_the_paper_game_they_stand_in_for(game):
    assert bool(load_game(game).summary()["expansion"]) is REFERENCE[STAND_INS[game]]


WHEEL = cached_wheel()


@pytest.mark.skipif(
    WHEEL is None or not WHEEL.is_file(),
    reason="the reference wheel is not here: set ODYSSEY_REFERENCE_WHEEL or run `odyssey paper import` once",
)
def test_the_imported_paper_games_expand_as_the_reference_s(tmp_path):
    release = open_release(WHEEL)
    for game, expands in REFERENCE.items():
        folder = "base" if game == "base" else f"generated/{game}"
        features = release.json(f"assets/world_definitions/{folder}/default.json").get("features") or {}
        assert bool(features.get("online_expansion")) is expands, game
    import_release(release, tmp_path)
    for game, expands in REFERENCE.items():  # what the imported game's quest file switches on
        quest = json.loads((tmp_path / game / "quest.json").read_text(encoding="utf-8"))
        assert bool((quest.get("expansion") or {}).get("enabled")) is expands, game
