"""Generated games carry their mechanics as data: ``rules.json`` from both authors, counted by validation.

Nothing here needs bubblewrap: a folder without code is validated in an ordinary child process.
"""

from __future__ import annotations

import json
from pathlib import Path

from odyssey_env import load_game
from odyssey_env.rules import BASE_VERBS, OPTIONAL_VERBS
from odyssey_env.steprules.order import ENGINE_STEP_ORDER
from odyssey_gen.llm import LLMAuthor
from odyssey_gen.pipeline import generate
from odyssey_gen.procedural import ProceduralAuthor, draft
from odyssey_gen.procedural.mechanics import MECHANIC_KINDS
from odyssey_gen.validate import validate

from .conftest import FAST, quiet, spec
from .test_llm import Recorder, llm_spec, reply

ENGINE_VERBS = set(BASE_VERBS) | set(OPTIONAL_VERBS)


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


# ---------------------------------------------------------------------------- the procedural author
def test_the_procedural_author_invents_verbs_and_step_rules_as_data(tmp_path):
    s = spec(theme="a marsh of peat bogs and reed villages", seed=13, action_rules=2, step_rules=3)
    files = ProceduralAuthor(s).files()
    assert "rules.json" in files and not any(n.endswith(".py") for n in files)
    rules = json.loads(files["rules.json"])
    verbs = [v["verb"] for v in rules["verbs"]]
    steps = [r["name"] for r in rules["step_rules"]]
    assert len(verbs) == 2 and len(steps) == 3
    assert not set(verbs) & ENGINE_VERBS and not set(steps) & set(ENGINE_STEP_ORDER)
    folder = _write(tmp_path / "marsh", files)
    game = load_game(folder, cache=False)  # data only: no trust asked
    assert set(verbs) <= set(game.rules.actions)
    # the quest asks for the transformation verb: a stage is its event, or needs its product (carried,
    # delivered, or an ingredient of what a stage asks for: the key of a locked way, the masterwork)
    quest = json.loads(files["quest.json"])
    product = game.rules.actions[verbs[0]].produces[0]
    assert game.rules.actions[verbs[0]].produces == (rules["verbs"][0]["effects"][0]["into"],)
    asked = json.dumps(quest["main"])
    objects = json.loads(files["world.json"])["objects"]
    recipes = [o["name"] for o in objects if product in o.get("recipe", {}).get("ingredients", {})]
    assert f'"kind": "{verbs[0]}"' in asked or product in asked or any(r in asked for r in recipes)
    result = validate(folder, FAST)
    assert result.ok, [str(p) + "\n" + p.detail for p in result.problems]
    new = result.stats["new_rules"]
    assert new["verbs"] == verbs and new["step_rules"] == steps
    runs = result.stats["solvability"]["runs"]
    assert all(r["stages"] == r["total"] for r in runs)


def test_mechanics_follow_the_seed_and_the_theme():
    def rules(**over):
        return ProceduralAuthor(spec(action_rules=2, step_rules=2, **over)).files()["rules.json"]

    assert rules(seed=4) == rules(seed=4)  # deterministic
    kinds = set()
    files = {rules(seed=seed) for seed in range(6)}
    assert len(files) >= 4  # seeds give different rule sets
    for seed in range(6):
        d = draft(spec(seed=seed, action_rules=2, step_rules=2))
        kinds |= set(d.mechanics.kinds)
        assert d.mechanics.verbs and d.mechanics.step_rules
    assert {"transform", "hazard_spread", "regrowth"} <= kinds <= set(MECHANIC_KINDS)
    # names come from the theme's lexicon
    marsh = json.loads(rules(seed=1, theme="a marsh of peat bogs and reed villages"))
    desert = json.loads(rules(seed=1, theme="a desert of dunes, oases and caravans"))
    assert [v["verb"] for v in marsh["verbs"]] != [v["verb"] for v in desert["verbs"]]


def test_no_rules_asked_means_no_rule_file():
    assert "rules.json" not in ProceduralAuthor(spec(seed=2)).files()


# ---------------------------------------------------------------------------- the LLM author, without code
def _run_llm(tmp_path: Path, names: list[str], **over):
    s = llm_spec(**{"code": False, **over})  # the default: no code
    model = Recorder([reply(n) for n in names])
    lines: list[str] = []
    result = generate(s, tmp_path / "tide", author=LLMAuthor(s, model), settings=FAST, say=lines.append)
    return result, model, lines


def test_the_llm_author_writes_rules_json_and_repairs_it(tmp_path):
    result, model, lines = _run_llm(tmp_path, ["entities_good", "rules_json_bad", "rules_json_good", "quest_good"])
    assert result.ok, (result.reason, lines)
    assert (result.path / "rules.json").is_file() and not list(result.path.rglob("*.py"))
    rules_prompt = model.prompts[1][-1]["content"]
    assert "rule language" in rules_prompt and '"step_rules"' in rules_prompt  # the schema
    assert "lies_here" in rules_prompt and "spawn_npc" in rules_prompt  # the language's vocabulary
    assert "talk to" in rules_prompt and "respawn" in rules_prompt  # the engine's verbs and step rules
    # the load error went back to the model verbatim, naming the file and the field
    repair = model.prompts[2][-1]["content"]
    assert "rules.json: step_rules[0].effects[0].place: unknown object 'brine_wx'" in repair
    report = result.report
    assert [len(report["stages"][s]) for s in ("entities", "rules", "quest")] == [1, 2, 1]
    stats = report["validation"]["stats"]
    assert stats["new_rules"]["verbs"] == ["ring bell"] and stats["new_rules"]["step_rules"] == ["high_tide"]
    assert report["statistics"]["rule_file"] == {
        "verbs": ["ring bell"],
        "step_rules": ["high_tide"],
        "predicates": ["carries_both"],
    }
    # data only: it loads without trust, and the quest's Python block was not kept
    game = load_game(result.path, cache=False)
    assert "ring bell" in game.rules.actions and not result.needs_trust


def test_the_llm_author_refuses_engine_names_and_wrong_counts(tmp_path):
    result, _model, _ = _run_llm(
        tmp_path, ["entities_good", "rules_json_good", "rules_json_good", "rules_json_good"], step_rules=2
    )
    assert not result.ok
    assert "asked for exactly 2 new step rule(s), rules.json declares 1: high_tide" in result.reason


def test_new_names_from_describe_reach_rules_json(tmp_path):
    from odyssey_gen.llm import Describer

    s = spec(
        seed=1,
        places=1,
        areas_per_place=2,
        max_level=2,
        objects=12,
        npcs=4,
        stages=3,
        locks=0,
        tutorial=False,
        action_rules=1,
        step_rules=1,
    )
    d = draft(s)
    n_described = len(d.places) + len(d.areas) + len(d.objects) + len(d.npcs)
    n_named = len(d.areas) + len(d.objects) + len(d.npcs)
    words = [
        a + b for a in ("amber", "basalt", "cobalt", "ember", "garnet", "opal") for b in ("fen", "moor", "tor", "vale")
    ]
    assert n_named <= len(words)
    names = [f'{{"name": "Brine {words[i]}"}}' for i in range(n_named)]
    model = Recorder(["ok"] * n_described + names)
    result = generate(s, tmp_path / "tide", settings=FAST, say=quiet, describe=Describer(model, s, names=True))
    assert result.ok, result.reason
    info = result.report["describe"]
    assert not info["undone"] and info["names"]["accepted"] == n_named
    rules = (result.path / "rules.json").read_text()
    tool = next(name for name in d.mechanics.objects if d.objects[name].kind == "rule_tool")
    assert tool not in rules and info["names"]["renamed"][tool] in rules  # the verb's tool follows its new name
    load_game(result.path, cache=False)


def test_every_kind_of_mechanic_is_proven_by_play_even_with_more_verbs_than_fillers(tmp_path):
    s = spec(theme="a plague city of quarantined streets", seed=41, action_rules=4, step_rules=6)
    author = ProceduralAuthor(s)
    folder = _write(tmp_path / "plague", author.files())
    m = author.draft.mechanics
    assert set(m.kinds) == set(MECHANIC_KINDS) and len(m.verbs) == 4 and len(m.step_rules) == 6
    # four verbs, three filler stages: the last asks for the rest together, planned as their events
    packed = [p["name"] for p in m.rules.get("predicates", ())]
    assert len(packed) == 1
    result = validate(folder, FAST)
    assert result.ok, [str(p) + "\n" + p.detail for p in result.problems]
    assert result.stats["new_rules"]["predicates"] == packed


# ---------------------------------------------------------------------------- what the quest asks of them
def _uses(seed: int) -> tuple[ProceduralAuthor, list]:
    author = ProceduralAuthor(spec(seed=seed, action_rules=2, step_rules=2))
    author.files()
    return author, author.draft.mechanics.stages


def test_seeds_vary_what_the_quest_asks_of_the_invented_mechanics():
    uses, gated, reactions, braved = set(), 0, 0, 0
    for seed in range(20):
        author, stages = _uses(seed)
        d, m = author.draft, author.draft.mechanics
        uses |= {st["use"] for st in stages if "use" in st}
        verbs = {v["verb"]: v for v in m.rules["verbs"]}
        # a transformation that needs a tended thing kept: a counter precondition, and no stage of its own
        gated += any(len(v["requires"]) == 3 and "counter" in v["requires"][2]["check"] for v in verbs.values())
        reactions += "reaction" in m.kinds
        braved += any("braving" in st.get("title", "") for st in stages)
        # the plot's opening stays: the first stage is never one of the new verbs'
        first = d.quest["main"]["chapters"][0]["stages"][0]
        assert first["done"]["type"] != "predicate", (seed, first)
        for st in stages:
            if st.get("use") in ("key", "masterwork"):  # the product is an ingredient of what a stage names
                assert any(
                    st["attach"] in x["hint"] and st["hint"] in x["hint"]
                    for ch in d.quest["main"]["chapters"]
                    for x in ch["stages"]
                )
                product = next(v for v in m.rules["verbs"] if v["verb"] == st["verb"])["effects"][0]["into"]
                assert product in d.objects[st["attach"]].recipe["ingredients"]
    assert uses >= {"did", "have", "deliver", "key"}, uses
    assert gated >= 3 and reactions >= 5 and braved >= 1, (gated, reactions, braved)


def test_a_product_in_a_key_a_kept_fire_a_drawn_creature_and_a_hazard_are_proven_by_play(tmp_path):
    # seed 18: the product goes into the locked way's key, the tended thing gates the transformation,
    # and the harmful hazard starts where it is done; seed 4: a creature comes when the verb is used
    for seed, kinds in ((18, {"hazard_harm"}), (4, {"reaction"})):
        author, stages = _uses(seed)
        m = author.draft.mechanics
        assert kinds <= set(m.kinds) and [st["use"] for st in stages] == ["key"]
        folder = _write(tmp_path / f"s{seed}", author.files())
        if "hazard_harm" in kinds:  # the harm spares whoever carries the hazard's ward, which lies in the world
            harm = next(r for r in m.rules["step_rules"] if r["name"].endswith("_harm"))
            ward = harm["when"]["all_of"][1]["none_of"][0]["has"]
            assert ward in author.draft.objects and author.draft.objects[ward].home
        result = validate(folder, FAST)
        assert result.ok, [str(p) + "\n" + p.detail for p in result.problems]
        assert result.stats["new_rules"]["step_rules"] == m.step_rules
        assert all(r["stages"] == r["total"] for r in result.stats["solvability"]["runs"])


def test_a_tending_verb_done_right_before_a_fight_still_counts_for_its_stage(tmp_path):
    # seed 1907: the stage asks for a retie and a fuse; the oracle reties the shade sail, a mirage stalker
    # engages it the next step, and the retie's event (one step long) must still count for the plan, or
    # the oracle waits for a second retie the full counter refuses, and stalls for the rest of the episode
    from odyssey_agents.oracle.solve import solve

    s = spec(theme="a desert caravan city of glassblowers", name="dunes", seed=1907, action_rules=2, step_rules=2)
    folder = _write(tmp_path / "dunes", ProceduralAuthor(s).files())
    verbs = [v["verb"] for v in json.loads((folder / "rules.json").read_text())["verbs"]]
    assert "retie" in verbs
    result = solve(str(folder), 0, budget=500, tutorial=False)
    assert result.solved, result
