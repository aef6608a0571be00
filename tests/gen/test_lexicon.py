"""The themed lexicon: shipped data, names on-theme for the themes below, the same in every process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources

import pytest

from odyssey_gen.procedural import draft
from odyssey_gen.procedural.lexicon import LIST_KINDS, LexiconError, _read, blend, themes
from odyssey_gen.procedural.names import theme_words

from .conftest import spec

#: One line per lexicon theme, as a user might write it, and the theme it must be read as.
THEMES = {
    "an observatory where astronomers chart a dying comet": "observatory",
    "a drowned harbour city where the tide floods the quays": "tidal",
    "a plague ward under quarantine, failing lamps, corpses that must be burned": "plague",
    "a kingdom of broken gears and rusting clockwork kings": "clockwork",
    "a salt glass desert under a mirror sky where caravans trade in sealed water": "desert",
    "a city of laws that rewrite themselves at night, courts, objections and verdicts": "court",
    "a mossy forest of fungus groves and spore-choked glades": "forest",
    "a frozen tundra of glaciers and endless winter": "frozen",
    "a volcano of lava rivers, obsidian and ash": "volcanic",
    "a monastery of bells where monks chant through the night": "monastery",
    "a swamp of peat bogs, reeds and herons": "marsh",
    "a great library where scribes copy every manuscript": "archive",
    "a deep mine of crystal caverns and ore shafts": "mine",
    "an orchard village at harvest, mills and barns": "harvest",
}


def handles(d) -> list[str]:
    out = [a.name for a in d.areas] + list(d.objects) + list(d.npcs)
    for room in d.quest.get("tutorial", {}).get("rooms", []):
        out.append(room["name"])
    return out


def test_the_lexicon_holds_ten_themes_with_every_kind():
    ts = {n: t for n, t in themes().items() if n != "common"}
    assert len(ts) >= 10
    for t in ts.values():
        for kind in LIST_KINDS[:19]:
            assert len(t.kinds[kind]) >= (2 if kind in ("currency", "key") else 3), (t.name, kind)
        assert len(t.kinds["area"]) >= 20 and len(t.kinds["enemy"]) >= 12 and len(t.kinds["raw"]) >= 15
        assert len(t.adjectives) >= 12 and len(t.motifs) >= 6 and len(t.places) >= 6
        for kind in ("transforms", "hazards", "tended", "omens"):
            assert len(t.rules[kind]) >= 3, (t.name, kind)
        assert t.neighbours and all(n in ts for n in t.neighbours)


@pytest.mark.parametrize("text", sorted(THEMES), ids=[THEMES[t] for t in sorted(THEMES)])
def test_names_come_from_the_theme_lexicon(text):
    expected = THEMES[text]
    b = blend(text)
    assert b.matched and b.order[0] == expected, (b.order, b.scores)
    allowed = b.vocabulary()
    others = set().union(*(t.tokens() for n, t in themes().items() if n not in (*b.order, "common")))
    raw_words = {w for w in theme_words(text) if w not in allowed}  # "astronomers" must never make a name
    for seed in range(3):
        d = draft(spec(theme=text, seed=seed, objects=40, npcs=8))
        invented = set(d.namer.invented_words)
        for name in handles(d):
            tokens = set(name.split("_"))
            assert tokens <= allowed | invented, (text, name, tokens - allowed - invented)
            assert not tokens & raw_words, (text, name)
        # plain lexicon entries make most of the names: the game reads as written, not as a template
        plain = [n for n in handles(d) if not set(n.split("_")) & invented]
        assert len(plain) >= 0.7 * len(handles(d))
    assert others  # the check above would be empty if every theme shared every word


def test_an_observatory_has_no_quay_and_no_word_salad():
    d = draft(spec(theme="an observatory where astronomers chart a dying comet", seed=5, objects=60, npcs=10))
    names = handles(d)
    assert not any("quay" in n or "drowned" in n or "astronomers" in n for n in names)
    texts = [a.description for a in d.areas] + [o.description for o in d.objects.values()]
    assert not any("astronomers" in t for t in texts)  # descriptions use the lexicon's motifs, not raw theme words


def test_a_theme_about_two_things_blends_them():
    b = blend("a sunken jungle temple of jade serpents")
    assert set(b.order) == {"monastery", "tidal"} and abs(sum(b.shares) - 1) < 1e-9


def test_an_unknown_theme_falls_back_to_a_theme_and_its_neighbour():
    b = blend("a haunted carnival of masks")
    assert not b.matched and len(b.order) == 2
    assert b.order[1] == themes()[b.order[0]].neighbours[0]
    # another unknown text may fall elsewhere: the choice depends on the text, not on a fixed default
    firsts = {blend(f"a carnival number {w}").order[0] for w in ("alpha", "beta", "gamma", "delta", "omega", "zeta")}
    assert len(firsts) > 1


def test_blend_and_names_are_the_same_in_any_process():
    text = "a haunted carnival of masks"
    here = {"order": list(blend(text).order), "names": handles(draft(spec(theme=text, seed=2)))}
    code = (
        "import json, sys; from odyssey_gen.procedural import draft; from odyssey_gen.procedural.lexicon import blend;"
        "from odyssey_gen.spec import GameSpec; from tests.gen.test_lexicon import handles; t = sys.argv[1];"
        "d = draft(GameSpec(theme=t, name='tide', seed=2));"
        "print(json.dumps({'order': list(blend(t).order), 'names': handles(d)}))"
    )
    for hashseed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        out = subprocess.run([sys.executable, "-c", code, text], env=env, capture_output=True, text=True, check=True)
        assert json.loads(out.stdout) == here


def _mine() -> dict:
    return json.loads((resources.files("odyssey_gen.procedural.lexicon") / "mine.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"keywords": None}, r"broken\.json: missing field 'keywords'"),
        ({"enemy": ["Cave Bat"]}, r"broken\.json: enemy: 'Cave Bat' is not a lower_snake_case"),
        ({"raw": []}, r"broken\.json: raw: expected a non-empty list"),
        ({"area": ["pit", "pit"]}, r"broken\.json: area: repeated entries"),
        ({"hazards": [{"name": "x"}]}, r"broken\.json: hazards\[0\]: expected exactly the text fields"),
        (
            {"hazards": [{"name": "x", "noun": "x", "moves": "x", "harm": "x", "ward": "x", "on": "ore"}]},
            r"hazards\[0\]",
        ),
        ({"transforms": [{"verb": "smelt", "past": "smelted", "on": "Iron Ore"}]}, r"transforms\[0\]\.on: expected"),
    ],
)
def test_a_broken_theme_file_names_file_and_field(change, message):
    data = _mine()
    for key, value in change.items():
        if value is None:
            del data[key]
        else:
            data[key] = value
    with pytest.raises(LexiconError, match=message):
        _read("broken", data)


def test_a_transformation_works_on_the_materials_its_record_names():
    # tidal's "shuck" suits shells and pearls: given one in the draft, the verb takes it, not sand
    from odyssey_gen.procedural import ProceduralAuthor
    from odyssey_gen.spec import GameSpec

    author = ProceduralAuthor(
        GameSpec(theme="a lighthouse keeper's island beset by storms", name="x", seed=11, action_rules=2)
    )
    author.files()
    shuck = next(v for v in author.draft.mechanics.rules["verbs"] if v["verb"] == "shuck")
    raw = shuck["slots"][0]["types"][0]
    assert raw.split("_")[-1] in ("shell", "pearl", "coral") or raw.endswith("oyster_grit"), raw
    assert (
        shuck["effects"][0]["into"] == "shucked_" + raw.split("_", 1)[-1]
        or shuck["effects"][0]["into"] == "shucked_" + raw
    )
