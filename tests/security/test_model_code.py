"""Issue 23 item 3: model-written rules that hid code from the static allow-list, and --trust-output.

The corpus in ``corpus/rules/`` holds complete rule files, each hiding code in a way the allow-list
once accepted (match class patterns, string annotations, decorators, default arguments, class bodies,
module-level values, names that made attributes legal). The allow-list is a filter, not a boundary:
what holds is that such code is never trusted automatically and runs only in the sandbox.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from odyssey_env import trust
from odyssey_gen.validate.static import check_source
from tests.kit import bwrap_works

from .conftest import CORPUS, game_folder, odyssey, one_line_refusal, payload

RULES = sorted(p.stem for p in (CORPUS / "rules").glob("*.txt") if not p.name.startswith("_"))
EXPECTED = {
    "match_class_keyword": "class pattern object(__self__=...)",
    "string_annotation": "the annotation",
    "file_decorator": "the decorator @hook",
    "default_argument": "the default argument",
    "class_body_call": "in class RingBell",
    "defined_name_attribute": "the attribute .system",
    "module_level_computed": "module level",
    "rebound_decorator": "a definition named action_rule",
    "with_statement": "with",
}


def test_the_base_of_the_corpus_passes(sentinel):
    assert check_source(payload("rules/_base.txt", sentinel)) == []


@pytest.mark.parametrize("name", RULES)
def test_every_hidden_code_form_is_refused_with_its_line(name, sentinel):
    found = check_source(payload(f"rules/{name}.txt", sentinel))
    text = "\n".join(map(str, found))
    assert found, f"{name} passed the allow-list"
    assert EXPECTED[name] in text, text
    assert all(str(r).startswith("rules.py line ") and "\n" not in str(r) for r in found)


def test_the_corpus_is_complete():
    assert set(RULES) == set(EXPECTED)


def test_string_annotations_are_never_evaluated_when_a_game_loads(tmp_path, store, sentinel):
    """Even trusted code's Params annotations are resolved by lookup, never eval (schema.type_hints)."""
    from odyssey_env.game import GameError, load_game

    world = json.loads((Path(__file__).parents[1] / "env" / "data" / "tiny" / "world.json").read_text())
    world["game"]["step_rules"] = ["high_tide"]
    folder = game_folder(tmp_path, rules=payload("rules/string_annotation.txt", sentinel))
    (folder / "world.json").write_text(json.dumps(world))
    with pytest.raises((GameError, TypeError)) as info:
        load_game(folder, cache=False, trust=True)
    assert "annotation" in str(info.value)
    assert not sentinel.exists()


def test_schema_type_hints_match_typing_for_the_engine_s_own_classes():
    import dataclasses
    import typing

    from odyssey_env import content, state
    from odyssey_env.quests import spec as quest_spec
    from odyssey_env.schema import type_hints

    for module in (content, state, quest_spec):
        for cls in vars(module).values():
            if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__:
                assert type_hints(cls) == typing.get_type_hints(cls), cls


@pytest.mark.skipif(not bwrap_works(), reason="bubblewrap (bwrap) is not usable here; .ci/run installs it")
def test_trust_output_trusts_no_model_written_code_end_to_end(tmp_path, store, sentinel):
    """A replayed model reply -> generate --trust-output: the hidden rules are refused statically, the
    repaired game is written for review, untrusted; play refuses it; no payload ran anywhere."""
    data = Path(__file__).parents[1] / "gen" / "data" / "llm"
    replies = [
        (data / "entities_good.txt").read_text(),
        "```python\n" + payload("rules/match_class_keyword.txt", sentinel) + "\n```",
        (data / "rules_good.txt").read_text(),
        (data / "quest_good.txt").read_text(),
    ]
    replay = tmp_path / "replies.json"
    replay.write_text(json.dumps(replies))
    out = tmp_path / "tide"
    done = odyssey(
        "generate",
        "a drowned cathedral city where the tide keeps the only records",
        "--name",
        "tide",
        "--out",
        str(out),
        "--backend",  # the author's former name, as scripts written for it say
        "llm",
        "--code",  # the model writes Python (without it: rules.json, data)
        "--replay",
        str(replay),
        "--trust-output",
        *(
            [
                "--places",
                "2",
                "--areas-per-place",
                "2",
                "--max-level",
                "2",
                "--objects",
                "16",
                "--npcs",
                "5",
                "--stages",
                "4",
            ]
        ),
        *(
            [
                "--action-rules",
                "1",
                "--step-rules",
                "1",
                "--no-tutorial",
                "--validation-seeds",
                "2",
                "--random-steps",
                "200",
            ]
        ),
        cwd=tmp_path,
        store=store,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "class pattern" in done.stdout  # the refusal went back to the model
    assert "nothing was trusted" in done.stdout and "odyssey trust" in done.stdout.splitlines()[-1]
    assert not store.exists() or trust.trusted_folders() == {}
    report = json.loads((out / "generation.json").read_text())
    assert report["trust"]["recorded"] is False
    one_line_refusal(odyssey("play", str(out), cwd=tmp_path, store=store), "not trusted")
    assert not sentinel.exists()
