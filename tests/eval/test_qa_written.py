"""World-Knowledge questions about world dynamics written by a model (paper §3.4), on the scripted backend:
checked against the rules' declared facts, written once per game and writer and cached with provenance
outside the package, the same in every process, and asked in a run at the paper's sizes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from odyssey_env.game import GAMES_DIR, load_game
from odyssey_eval.lifecycle import draw_questions
from odyssey_eval.qa.questions import QuestionError
from odyssey_eval.qa.world_knowledge import initial_world, verify_world_knowledge
from odyssey_eval.qa.written import TEMPLATE, WriterError, cache_file, check, dynamics_questions, written_questions

SCRIPTED = {"name": "scripted"}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ODYSSEY_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def game():
    return load_game("quiet_bell")


def test_written_once_per_game_and_writer_and_cached_with_provenance_outside_the_package(game, cache):
    logs: list[str] = []
    first = written_questions(game, SCRIPTED, log=logs.append)
    path = cache_file(game, SCRIPTED, 0)
    assert path.is_file() and cache in path.parents and GAMES_DIR not in path.parents
    stored = json.loads(path.read_text())
    assert stored == first and stored["writer"]["backend"] == "scripted" and stored["game"] == "quiet_bell"
    assert stored["game_digest"] and stored["created"] and stored["tokens"][0] > 0 and stored["prompt_version"]
    declared = [f for r in [*game.rules.actions.values(), *game.rules.steps] for f in r.facts(game)]
    assert len(stored["accepted"]) == len(declared) and stored["rejected"] == []
    item = stored["accepted"][0]
    assert item["question"].startswith("In this world,") and "nothing happens at all" in item["distractors"]
    assert any("writing the world-dynamics questions" in m for m in logs)
    path.write_text(json.dumps({**stored, "accepted": stored["accepted"][:3]}))  # the cache is what is asked
    assert len(written_questions(game, SCRIPTED)["accepted"]) == 3
    other = {"name": "scripted", "model": "other-writer"}
    assert cache_file(game, other, 0) != path and len(written_questions(game, other)["accepted"]) == len(declared)


def test_a_question_whose_answer_cannot_be_verified_is_rejected(game, cache):
    good = json.dumps({"question": "How long does stamina take?", "answer": "all of it", "distractors": "some | none"})
    wrong = json.dumps({"question": "How much stamina?", "answer": "half of it", "distractors": "all of it | none"})
    writer = {"name": "scripted", "model": "planted", "replies": [good, wrong, "not json"], "cycle": True}
    stored = written_questions(game, writer)
    reasons = [r["reason"] for r in stored["rejected"]]
    assert stored["accepted"][0]["fact"] == "wait#0" and stored["accepted"][0]["distractors"] == ["some", "none"]
    assert any("is not the declared answer" in r for r in reasons)
    fact = game.rules.actions["wait"].facts(game).__next__()
    kept, why = check(
        fact, {"question": "Restored stamina?", "answer": "All of it.", "distractors": "all of it|ALL OF IT"}
    )
    assert kept is None and why == "no distractor other than the answer"  # the same answer, reworded, is no distractor
    assert any("unusable reply" in r for r in reasons)
    assert all(a["answer"] == "all of it" for a in stored["accepted"])  # only the facts whose answer that is
    with pytest.raises(WriterError, match=r"name their writer with eval\.qa\.writer"):
        written_questions(game, None)


def test_cells_sample_checked_questions_with_up_to_ten_choices(game, cache):
    world = initial_world(game, 4)
    written = written_questions(game, SCRIPTED)
    qs = dynamics_questions(game, written, 4, per_template=20, n_choices=10)
    assert len(qs) == 20 and {q.template for q in qs} == {TEMPLATE}
    assert all(len(q.choices) == 6 and len(set(q.choices)) == 6 for q in qs)  # 3 declared + 2 written + answer
    for q in qs:
        verify_world_knowledge(q, game, world)
    planted = qs[0]
    lying = type(planted)(**{**planted.__dict__, "answer": (planted.answer + 1) % len(planted.choices)})
    with pytest.raises(QuestionError):
        verify_world_knowledge(lying, game, world)
    assert [q.to_dict() for q in dynamics_questions(game, written, 4, per_template=20, n_choices=10)] == [
        q.to_dict() for q in qs
    ]
    settings = {"world_knowledge": 20, "choices": 10, "world_dynamics": 20, "writer": SCRIPTED}
    drawn = draw_questions(game, 4, True, settings)
    assert sum(q.template == TEMPLATE for q in drawn) == 20 and max(len(q.choices) for q in drawn) == 10


def test_every_process_asks_the_same_written_questions(game, cache):
    code = (
        "import json; from odyssey_env.game import load_game; from odyssey_eval.lifecycle import draw_questions;"
        "qs = draw_questions(load_game('quiet_bell'), 2, True, {'world_knowledge': 2, 'choices': 10,"
        " 'world_dynamics': 5, 'writer': {'name': 'scripted'}});"
        "print(json.dumps([q.to_dict() for q in qs]))"
    )
    outs = set()
    for hashseed in ("0", "1", "777"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed, "ODYSSEY_CACHE": str(cache / hashseed)}  # written anew each
        outs.add(
            subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
        )
    assert len(outs) == 1


def test_a_run_asks_the_written_questions_before_and_after_play(tmp_path, cache):
    from odyssey_eval.runner import run_cell

    from .conftest import cell, lines, quiet

    cfg = cell(
        tmp_path,
        agent={"name": "no_memory"},
        llm={"name": "scripted"},
        max_steps=5,
        tutorial=False,
        qa={"world_knowledge": 1, "episodic": 1, "choices": 10, "world_dynamics": 4, "writer": {"name": "scripted"}},
    )
    out = run_cell(cfg, log=quiet)
    asked = json.loads((out.path / "qa_questions.json").read_text())
    written = [q for q in asked if q["template"] == TEMPLATE]
    assert len(written) == 4 and all(len(q["choices"]) == 6 for q in written)
    rounds = [r for r in lines(out.path / "qa.jsonl") if r["kind"] == "world_knowledge"]
    assert [r["phase"] for r in rounds] == ["before", "after"] and all(TEMPLATE in r["by_template"] for r in rounds)
    assert cache_file(load_game("mossfall"), {"name": "scripted"}, 0).is_file()
