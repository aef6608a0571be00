"""The LLM expander (paper A3.4) on the scripted backend: packs of places, objects and NPCs written before
play, checked like generated content, cached by seed outside the package, and used by a cell's game."""

from __future__ import annotations

import json

import pytest

from odyssey_env.engine import Engine
from odyssey_env.game import GAMES_DIR, load_game
from odyssey_env.quests.expansion import with_packs
from odyssey_eval.expansion import ExpanderError, cache_file, smoke_play, write_packs

WRITER = {"name": "scripted"}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ODYSSEY_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_packs_are_written_checked_and_cached_by_seed_with_provenance(cache):
    game = load_game("mossfall")
    logs: list[str] = []
    data = write_packs(game, WRITER, seed=3, log=logs.append)
    path = cache_file(game, WRITER, 3)
    assert path.is_file() and cache in path.parents and GAMES_DIR not in path.parents
    assert json.loads(path.read_text()) == data
    assert len(data["packs"]) == game.quest.expansion.max_expansions and data["rejected"] == []
    assert data["writer"]["backend"] == "scripted" and data["seed"] == 3 and data["tokens"][1] > 0
    assert data["packs"][0]["provenance"]["expansion"] == 1 and any("writing the online expansions" in m for m in logs)
    assert write_packs(game, WRITER, seed=3) == data  # read from the cache: same packs, no call
    other = write_packs(game, WRITER, seed=4)
    assert other["packs"] != data["packs"] and cache_file(game, WRITER, 4) != path  # another seed, other packs
    derived = with_packs(game, data["packs"])
    assert smoke_play(derived, 0) == []


def test_a_pack_that_fails_its_checks_goes_back_to_the_writer_and_is_recorded(cache):
    game = load_game("mossfall")
    bad = json.dumps(
        {"places": [{"name": "X", "description": "x", "areas": [{"name": "hearth_square", "description": "d"}]}]}
    )
    short_writer = {"name": "scripted", "model": "two-bad-replies", "replies": [bad, "no json at all"], "cycle": False}
    with pytest.raises(Exception, match="ran out of replies"):  # two refusals, then the writer has nothing left
        write_packs(game, short_writer, seed=0, attempts=3)
    writer = {"name": "scripted", "model": "always-bad", "replies": [bad], "cycle": True}
    data = write_packs(game, writer, seed=0, attempts=2)
    assert data["packs"] == [] and len(data["rejected"]) == 2
    assert "already used" in " ".join(data["rejected"][0]["problems"])
    with pytest.raises(ExpanderError, match="needs a writer"):
        write_packs(game, None)
    with pytest.raises(ExpanderError, match="has no online expansion"):
        write_packs(load_game("tallowmere"), WRITER)  # as the paper's Mark: no expansion


def test_a_cell_plays_the_written_packs_and_a_resume_checks_them(cache, tmp_path):
    from odyssey_eval import lifecycle
    from odyssey_eval.rundir import RunDir, RunDirError

    cfg = {"name": "mossfall", "path": None, "expander": "llm", "expander_llm": WRITER}
    rd = RunDir(tmp_path / "run")
    game, content, facts = lifecycle.open_game(cfg, rd, overwrite=False, seed=5)
    assert len(game.expansion_packs) == 1 and "expansion_packs" in content
    assert facts.carryable == lifecycle.open_game({"name": "mossfall"}, rd, overwrite=False)[2].carryable
    plain = Engine(load_game("mossfall"), 5)
    assert Engine(game, 5).state.to_dict() == plain.state.to_dict()  # the same world until it expands
    rd.start({"game": cfg}, None, content=content, facts=facts.to_dict())
    stored = json.loads(cache_file(load_game("mossfall"), WRITER, 5).read_text())
    stored["packs"][0]["places"][0]["description"] = "Edited since the run began."
    cache_file(load_game("mossfall"), WRITER, 5).write_text(json.dumps(stored))
    with pytest.raises(RunDirError, match="expansion_packs \\(changed\\)"):
        lifecycle.open_game(cfg, rd, overwrite=False, seed=5)
    with pytest.raises(Exception, match=r"game\.expander must be one of procedural, llm"):
        lifecycle.open_game({**cfg, "expander": "magic"}, rd, overwrite=True)
