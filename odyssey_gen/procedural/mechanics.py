"""Invented mechanics: new verbs and step rules composed in the rule language (``rules.json``), from the theme.

The procedural author writes no code. What it invents is data the engine interprets
(:mod:`odyssey_env.rulelang`, docs/game-format.md "Rules as data"), built from the lexicon's rule matter
(``transforms``, ``tended``, ``hazards``) and the draft's own things:

* a **transformation verb** (``smoke eels``): turns a carried raw material into a new product, gated by a
  tool carried and a place to stand; a quest stage asks for it (the verb's event, a bare ``did``), so the
  oracle proves it by play;
* a **tending verb** and its **decay** (``bank peat_fire``): a fixture whose care counter runs down on a
  timer unless the agent tends it; often it stands where a transformation is done, and that verb then
  needs it kept (a precondition on its counter, which the oracle plans as the tending verb's event);
* a **spreading hazard** (``bog_gas``): a fixture that creeps from area to area along a path of the map on
  a seeded timer and chance, and harms whoever stands in it without its ward (``herb_mask``);
* a **regrowing resource**: a raw material that comes back at its home, up to a cap;
* a **reaction**: a creature drawn by what a transformation verb does (a step rule on the verb's event
  that spawns an NPC where it was done).

What the quest asks of a transformation is drawn by seed (:data:`PRODUCT_USES`): its event, or its
product carried, delivered, or needed as an ingredient of a locked way's key or of the masterwork (the
oracle gets a product by the verb that declares it: ``ActionRule.produces``). When a spreading hazard
harms, it starts where a transformation is done, so that stage needs surviving it.

``action_rules`` verbs and ``step_rules`` step rules are invented (as many as the theme's records allow),
each choice drawn from a stream of the generation seed of its own, so the same spec gives the same rule
file in any process, and two seeds give different ones.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any

from odyssey_env.rules import BASE_VERBS, OPTIONAL_VERBS
from odyssey_gen.procedural.draft import AreaDraft, Draft, ObjDraft
from odyssey_gen.procedural.names import article, words_of

__all__ = ["MECHANIC_KINDS", "Mechanics", "invent"]

#: The kinds of mechanic the procedural author composes (what the diversity benchmark counts).
MECHANIC_KINDS = ("transform", "tend", "decay", "hazard_spread", "hazard_harm", "regrowth", "reaction")
#: What the quest asks of a transformation verb's product (drawn by seed): the verb's event, carrying two,
#: setting one down somewhere, or nothing of its own: the product becomes an ingredient of a locked way's
#: key or of the forging plot's masterwork, so the stage that needs that key or masterwork needs the verb.
PRODUCT_USES = ("did", "have", "deliver", "key", "masterwork")
#: Orders in which step rules are tried (drawn by seed; a maker that finds nothing to act on is skipped),
#: so that a game with two step rules may get a hazard that harms, a regrowth, a decay or a reaction.
STEP_ORDERS = (
    ("hazard_spread", "hazard_harm", "regrowth", "decay", "reaction"),
    ("hazard_spread", "hazard_harm", "reaction", "decay", "regrowth"),
    ("reaction", "regrowth", "hazard_spread", "hazard_harm", "decay"),
    ("regrowth", "decay", "hazard_spread", "hazard_harm", "reaction"),
    ("decay", "reaction", "hazard_spread", "hazard_harm", "regrowth"),
    ("reaction", "hazard_spread", "hazard_harm", "decay", "regrowth"),
)
#: Step rules run after the world's own processes and before the tutorial looks (docs/engine.md).
PLACING = {"after": ["respawn"], "before": ["tutorial"]}
CARE_MAX = 6
#: First words a new verb may not start with: the engine's verbs (a command is read by its first words).
TAKEN = {v.split()[0] for v in (*BASE_VERBS, *OPTIONAL_VERBS)} | {"go", "look", "help"}


@dataclass
class Mechanics:
    """What was invented: the rule file, and the facts the quest and the report need."""

    rules: dict[str, Any] = field(default_factory=dict)
    kinds: list[str] = field(default_factory=list)  # one per rule, from MECHANIC_KINDS (in rule order)
    stages: list[dict[str, Any]] = field(default_factory=list)  # quest stages the verbs ask for (title, hint, done)
    objects: list[str] = field(default_factory=list)  # object types the mechanics brought

    @property
    def verbs(self) -> list[str]:
        return [v["verb"] for v in self.rules.get("verbs", ())]

    @property
    def step_rules(self) -> list[str]:
        return [r["name"] for r in self.rules.get("step_rules", ())]


def _fact(topic: str, question: str, answer: str, wrong: list[str]) -> dict[str, Any]:
    distractors = [w for w in dict.fromkeys(wrong) if w != answer][:3] or ["nothing"]
    return {"topic": topic, "question": question, "answer": answer, "distractors": distractors}


class _Inventor:
    def __init__(self, d: Draft, attempt: int):
        self.d = d
        stream = "" if attempt == 1 else f":attempt{attempt}"
        self.rng = random.Random(f"odyssey-gen:mechanics:{d.spec.seed}:{d.spec.theme}{stream}")
        self.m = Mechanics(rules={"format": 1, "vars": [], "verbs": [], "step_rules": []})
        self.verb_words: set[str] = set()
        self.zone0 = d.zone_areas(0)
        self.tended: list[tuple[str, str, dict[str, str]]] = []  # (thing, area, record) with a tending verb
        self.hazard: tuple[str, list[str], dict[str, str]] | None = None  # (object, path of areas, record)
        self.made: list[tuple[str, str, str, dict[str, Any]]] = []  # (verb, product, place, stage) of transforms
        self.gated: set[str] = set()  # transformation verbs that need a tended thing kept

    # ------------------------------------------------------------------ helpers
    def _name(self, *parts: str) -> str | None:
        """A fresh object handle from ``parts`` (None when taken or too long)."""
        name = "_".join(p for p in parts if p)
        if len(name) > 60 or not self.d.namer.free(name):
            return None
        return self.d.namer.claim(name)

    def _base(self, name: str) -> str:
        """The theme's own noun a material's name ends with (``tide_sea_salt`` -> ``sea_salt``), else the name."""
        nouns = set(self.d.namer.lexicon.words("raw"))
        parts = name.split("_")
        return next(("_".join(parts[i:]) for i in range(len(parts)) if "_".join(parts[i:]) in nouns), name)

    def _fixture(self, name: str, kind: str, area: AreaDraft, description: str) -> ObjDraft:
        """An object that cannot be carried (a station no recipe names): a hazard or a tended thing."""
        o = self.d.add_object(ObjDraft(name, kind, "station", 1, {"value": 0, "spawn_weight": 0}, description))
        o.home, o.zone = area.name, area.zone
        self.d.place_object(area, name)
        self.m.objects.append(name)
        return o

    def _verb_ok(self, verb: str) -> bool:
        return bool(verb) and verb.split()[0] not in TAKEN and verb not in self.verb_words and verb.isalpha()

    def _add_verb(self, spec: dict[str, Any], kind: str) -> None:
        self.verb_words.add(spec["verb"])
        self.m.rules["verbs"].append(spec)
        self.m.kinds.append(kind)

    def _add_step(self, spec: dict[str, Any], kind: str) -> None:
        self.m.rules["step_rules"].append({**spec, **PLACING})
        self.m.kinds.append(kind)

    def _other_words(self, exclude: str, kinds: tuple[str, ...] = ("raw", "made")) -> list[str]:
        names = sorted(o.name for o in self.d.of_kind(*kinds) if o.name != exclude)
        self.rng.shuffle(names)
        return [words_of(n) for n in names[:3]]

    # ------------------------------------------------------------------ verbs
    def transform(self, record: dict[str, str]) -> bool:
        d, rng = self.d, self.rng
        verb, past = record["verb"], record["past"]
        inputs = [o for o in d.of_kind("raw") if o.zone == 0 and o.home]
        if not self._verb_ok(verb) or not inputs:
            return False
        suits = set(record.get("on", "").split())  # materials the verb suits (the lexicon's choice)
        fitting = [o for o in inputs if self._base(o.name) in suits]
        raw = rng.choice(sorted(fitting or inputs, key=lambda o: o.name))
        # "shucked_shell", not "shucked_tide_shell": the product keeps the material's own noun when free
        product = self._name(past, self._base(raw.name)) or self._name(past, raw.name)
        if product is None:
            return False
        tool_name = d.namer.name("tool")
        place = rng.choice(self.zone0)
        tool_home = rng.choice(self.zone0)
        tool = d.add_object(ObjDraft(tool_name, "rule_tool", "tool", 1, {"value": 3, "size": 1, "spawn_weight": 0}, ""))
        tool.description = f"{article(words_of(tool_name)).capitalize()}, what one needs to {verb} things."
        tool.home, tool.zone = tool_home.name, 0
        d.place_object(tool_home, tool_name)
        made = d.add_object(
            ObjDraft(
                product,
                "rule_product",
                "material",
                raw.level,
                {"value": raw.fields.get("value", 1) + 3, "size": raw.fields.get("size", 1), "spawn_weight": 0},
                f"{words_of(raw.name).capitalize()}, {past} the old way.",
            )
        )
        made.zone = 0
        d.place_object(d.home_of(raw), raw.name, 2)  # what the verb uses up is not taken from the recipes
        self.m.objects += [tool_name, product]
        t, i, p = words_of(tool_name), words_of(raw.name), words_of(product)
        stage = self._product_stage(verb, raw, product, tool_home, place, t, i, p)
        self._add_verb(
            {
                "verb": verb,
                "description": f"{verb.capitalize()} {i} I carry into {p}, with {article(t)} on me, in {place.name}.",
                "slots": [{"name": "thing", "domain": "carried", "types": [raw.name]}],
                "requires": [
                    {"check": {"has": tool_name}, "refuse": f"I need {article(t)} to {verb} anything."},
                    {
                        "check": {"in_area": [place.name]},
                        "refuse": f"This is no place to {verb} {{thing}}: it is done in {place.name}.",
                    },
                ],
                "effects": [
                    {"transform": "$thing", "into": product},
                    {"say": f"I {verb} the {i} in {{here}}: now I have {p}."},
                ],
                "facts": [
                    _fact("crafting", f"What does the verb '{verb}' turn {i} into?", p, [*self._other_words(raw.name)]),
                    _fact("places", f"Where can {i} be {past}?", place.name, [a.name for a in d.areas]),
                ],
            },
            "transform",
        )
        self.m.stages.append(stage)
        self.made.append((verb, product, place.name, stage))
        return True

    def _attachable(self, use: str) -> str | None:
        """The object a product can become an ingredient of for ``use`` (``key``, ``masterwork``), if any.

        Not an ingredient of the tutorial's lesson (that lesson's key gets the product laid out with the
        rest, :meth:`_product_stage`), nor of one the tutorial lays out."""
        d = self.d
        tutorial = d.quest.get("tutorial") or {}
        practised = {n for st in tutorial.get("steps", ()) for n in st.get("place", {})}
        crafted = {
            st["done"].get("object")
            for ch in d.quest["main"]["chapters"]
            for st in ch["stages"]
            if st["done"]["type"] == "object_crafted"
        }
        if use == "key":
            keys = [lock.key for lock in d.locks if d.objects[lock.key].recipe and lock.key not in practised]
            return keys[0] if keys else None
        if use == "masterwork" and d.plot == "forging":
            found = [o for o in d.of_kind("weapon", "armor") if o.recipe and o.name in crafted]
            trophy = d.of_kind("trophy")[0].name
            made = [o.name for o in found if o.recipe is not None and trophy in o.recipe["ingredients"]]
            return made[0] if made and made[0] not in practised else None
        return None

    def _product_stage(
        self, verb: str, raw: ObjDraft, product: str, tool_home: AreaDraft, place: AreaDraft, t: str, i: str, p: str
    ) -> dict[str, Any]:
        """What the quest asks of this transformation (:data:`PRODUCT_USES`, drawn by seed)."""
        d, rng = self.d, self.rng
        how = (
            f"{i.capitalize()} lies in {raw.home}, and {article(t)} in {tool_home.name}. "
            f"Carry both to {place.name} and {verb} the {i} there."
        )
        uses = [u for u in PRODUCT_USES if u not in ("key", "masterwork") or self._attachable(u)]
        attach = [u for u in uses if u in ("key", "masterwork")]
        use = rng.choice(uses + attach)  # an ingredient weighs double (it leaves a filler stage free)
        stage: dict[str, Any] = {"verb": verb, "use": use}
        if use in ("key", "masterwork"):
            target = self._attachable(use)
            assert target is not None
            recipe = d.objects[target].recipe
            assert recipe is not None
            recipe["ingredients"][product] = 1
            for lesson in (d.quest.get("tutorial") or {}).get("steps", ()):
                if lesson["done"].get("object") == target and "place" in lesson:  # the drill lays it out too
                    lesson["place"][product] = lesson["place"].get(product, 0) + 1
            return {**stage, "attach": target, "hint": f"The {words_of(target)} also takes {p}. {how}"}
        if use == "have":
            done: dict[str, Any] = {"type": "has_item_count", "object": product, "count": 2}
            return {**stage, "title": f"Carry two {p}", "hint": f"Carry two {product} at once. {how}", "done": done}
        if use == "deliver":
            friends = sorted({h for n in d.npcs_of("villager", "merchant") for h in n.homes[:1]})
            dest = rng.choice(friends) if friends else d.spawn.name
            done = {"type": "object_in_area", "object": product, "area": dest}
            return {
                **stage,
                "title": f"Bring {p} to {words_of(dest)}",
                "hint": f"Set {article(p)} down in {dest}. {how}",
                "done": done,
            }
        done = {"type": "predicate", "name": "did", "args": {"kind": verb}}
        return {**stage, "title": f"{verb.capitalize()} {i} into {p}", "hint": how, "done": done}

    def tend(self, record: dict[str, str]) -> bool:
        rng = self.rng
        verb, thing_word = record["tend"], record["thing"]
        if not self._verb_ok(verb):
            return False
        name = self._name(thing_word)
        if name is None:
            return False
        area = rng.choice([a for a in self.zone0 if a.index != 0] or self.zone0)
        # often the tended thing stands where a transformation is done, which then needs it kept
        gated = [t for t in self.made if self.d.area(t[2]).index != 0 and t[0] not in self.gated]
        gate = gated[0] if gated and rng.random() < 0.6 else None
        if gate is not None:
            area = self.d.area(gate[2])
        w = words_of(name)
        self._fixture(name, "rule_tended", area, f"{article(w).capitalize()} that {record['fades']} unless tended.")
        care = f"{name}_care"
        self.m.rules["vars"].append(
            {"name": care, "kind": "counter", "scope": "area", "max": CARE_MAX, "initial": CARE_MAX // 2}
        )
        self._add_verb(
            {
                "verb": verb,
                "description": f"{verb.capitalize()} the {w} lying here, before it {record['fades']}.",
                "slots": [{"name": "it", "domain": "ground", "types": [name]}],
                "requires": [
                    {"check": {"counter": care, "below": CARE_MAX}, "refuse": f"The {w} needs no tending yet."}
                ],
                "effects": [
                    {"set": care, "value": CARE_MAX},
                    {"change": "xp", "by": 1},
                    {"say": f"I {verb} the {w}; it will keep a while ({{var.{care}}} of {CARE_MAX})."},
                ],
                "facts": [
                    _fact("mechanics", f"What must be done to the {w} in {area.name}?", verb, ["nothing", "burn it"]),
                ],
            },
            "tend",
        )
        self.tended.append((name, area.name, record))
        if gate is not None:
            self.gated.add(gate[0])
            needed = CARE_MAX // 2 + 1  # above where it starts: it must be tended before the first use
            by_verb = {v["verb"]: v for v in self.m.rules["verbs"]}
            by_verb[gate[0]]["requires"].append(
                {
                    "check": {"counter": care, "at_least": needed},
                    "refuse": f"The {w} {record['fades']}; I must {verb} it before I can {gate[0]} anything here.",
                }
            )
            by_verb[gate[0]]["facts"].append(
                _fact(
                    "mechanics",
                    f"What must be done before one can {gate[0]} in {area.name}?",
                    f"{verb} the {w}",
                    [f"{v} the {w}" for v in ("burn", "break", "bury")],
                )
            )
            gate[3]["hint"] += f" The {w} there must be kept: {verb} it first."
            return True  # no stage of its own: the transformation's stage needs it
        self.m.stages.append(
            {
                "title": f"{verb.capitalize()} the {w}",
                "hint": f"The {w} in {area.name} {record['fades']} unless someone tends it. Go and {verb} it.",
                "done": {"type": "predicate", "name": "did", "args": {"kind": verb}},
                "verb": verb,
            }
        )
        return True

    # ------------------------------------------------------------------ step rules
    def decay(self) -> bool:
        if not self.tended:
            return False
        name, area, record = self.tended.pop(0)
        care, w = f"{name}_care", words_of(name)
        self._add_step(
            {
                "name": f"{name}_decay",
                "description": f"The {w} in {area} {record['fades']} unless it is tended: its care runs down.",
                "scope": "area",
                "areas": [area],
                "trigger": {"every": self.rng.choice((6, 8, 10, 12))},
                "when": {"counter": care, "at_least": 1},
                "effects": [
                    {"add": care, "value": -1},
                    {"if": {"counter": care, "below": 1}, "then": [{"tell": f"The {w} {record['fades']}."}]},
                ],
                "facts": [_fact("mechanics", f"What happens to the {w} left untended?", record["fades"], ["it grows"])],
            },
            "decay",
        )
        return True

    def _path(self) -> list[str]:
        """A walk along the map's links from an area away from the spawn: where a hazard spreads."""
        d, rng = self.d, self.rng
        links: dict[str, list[str]] = {a.name: [] for a in d.areas}
        for a, b in d.links:
            links[a].append(b)
            links[b].append(a)
        starts = [a.name for a in d.areas if a.index != 0 and links[a.name]]
        if not starts:
            return []
        worked = [place for _v, _p, place, _s in self.made if place in starts]  # where a transformation is done
        path = [rng.choice(worked or starts)]
        for _ in range(rng.randint(1, 3)):
            nxt = sorted(n for n in links[path[-1]] if n not in path and n != d.spawn.name)
            if not nxt:
                break
            path.append(rng.choice(nxt))
        return path if len(path) > 1 else []

    def hazard_spread(self) -> bool:
        records = list(self.d.namer.lexicon.records("hazards"))
        path = self._path()
        if not records or not path:
            return False
        record = self.rng.choice(records)
        name = self._name(record["name"])
        if name is None:
            return False
        noun = record["noun"]
        self._fixture(name, "rule_hazard", self.d.area(path[0]), f"{noun.capitalize()} hangs here.")
        self.hazard = (name, path, record)
        edges = [
            {
                "if": {"same": ["$here", a]},
                "then": [{"place": name, "area": b, "cap": 1}, {"tell": f"The {noun} {record['moves']} toward {b}."}],
            }
            for a, b in itertools.pairwise(path)
        ]
        self._add_step(
            {
                "name": f"{name}_spreads",
                "description": f"The {noun} {record['moves']} from {path[0]} along {', '.join(path[1:])}, a step "
                "at a time.",
                "scope": "object",
                "types": [name],
                "trigger": {"every": self.rng.choice((3, 4, 5)), "chance": self.rng.choice((0.5, 0.6, 0.75))},
                "effects": edges,
                "facts": [_fact("places", f"Where does the {noun} start?", path[0], [a.name for a in self.d.areas])],
            },
            "hazard_spread",
        )
        return True

    def hazard_harm(self) -> bool:
        """The hazard hurts whoever stands in it, unless they carry its ward (the lexicon's ``ward``, laid
        somewhere off its path, when that name is free): knowledge the agent gains by reading or asking."""
        if self.hazard is None:
            return False
        d = self.d
        name, path, record = self.hazard
        noun = record["noun"]
        ward = self._name(record["ward"])
        when: dict[str, Any] = {"lies_here": name}
        facts = [_fact("dangers", f"What does the {noun} do to me?", f"it {record['harm']} me", ["nothing"])]
        spared = ""
        if ward is not None:
            homes = [a for a in self.zone0 if a.name not in path] or self.zone0
            home = self.rng.choice(homes)
            o = d.add_object(ObjDraft(ward, "rule_ward", "tool", 1, {"value": 4, "size": 1, "spawn_weight": 0}, ""))
            wd = words_of(ward)
            o.description = f"{article(wd).capitalize()}: whoever carries it is spared the {noun}."
            o.home, o.zone = home.name, 0
            d.place_object(home, ward)
            self.m.objects.append(ward)
            when = {"all_of": [when, {"none_of": [{"has": ward}]}]}
            facts.append(
                _fact(
                    "dangers",
                    f"What spares me the {noun}?",
                    wd,
                    self._other_words(ward, ("rule_tool", "armor", "container")),
                )
            )
            spared = f" or carry {article(wd)} (one lies in {home.name})"
        self._add_step(
            {
                "name": f"{name}_harm",
                "description": f"The {noun} {record['harm']} whoever stands in it"
                + (f" without {article(words_of(ward))}." if ward else "."),
                "trigger": {"every": 2},
                "when": when,
                "effects": [{"change": "hp", "by": -1}, {"say": f"The {noun} {record['harm']} me."}],
                "facts": facts,
            },
            "hazard_harm",
        )
        self.hazard = None
        for _verb, _product, place, stage in self.made:
            if place == path[0]:  # that stage now needs surviving the hazard
                stage["hint"] += f" The {noun} hangs there and {record['harm']} whoever stands in it: be quick{spared}."
                if "title" in stage:
                    stage["title"] += f", braving the {noun}"
        return True

    def reaction(self) -> bool:
        """A creature drawn by a transformation: a step rule on the verb's event that spawns it right there."""
        d = self.d
        enemies = sorted((n for n in d.npcs_of("enemy") if n.homes), key=lambda n: (n.level, n.name))
        done = {r["trigger"].get("event") for r in self.m.rules["step_rules"]}
        todo = [(verb, product) for verb, product, _place, _stage in self.made if verb.replace(" ", "_") not in done]
        if not enemies or not todo:
            return False
        verb, product = todo[0]
        e = enemies[0]
        p, w = words_of(product), words_of(e.name)
        self._add_step(
            {
                "name": f"{verb.replace(' ', '_')}_draws_{e.name}"[:60],
                "description": f"Whoever {verb}s something draws {article(w)} to that place (one at a time).",
                "trigger": {"event": verb.replace(" ", "_")},
                "effects": [
                    {"spawn_npc": e.name, "max_alive": 1},
                    {"say": f"The smell of {p} draws {article(w)} to {{here}}."},
                ],
                "facts": [
                    _fact(
                        "dangers",
                        f"What comes when someone makes {p}?",
                        w,
                        [words_of(n.name) for n in enemies[1:]] + ["nothing"],
                    )
                ],
            },
            "reaction",
        )
        return True

    def regrowth(self) -> bool:
        d = self.d
        done = {
            r["areas"][0] + "/" + r["effects"][0]["place"] for r in self.m.rules["step_rules"] if "regrows" in r["name"]
        }
        found = [
            o
            for o in d.of_kind("raw")
            if o.home and f"{o.home}/{o.name}" not in done and d.area(o.home).objects.get(o.name)
        ]
        if not found:
            return False
        o = self.rng.choice(sorted(found, key=lambda x: x.name))
        home = d.home_of(o)
        cap = home.objects[o.name] + 2
        w = words_of(o.name)
        self._add_step(
            {
                "name": f"{o.name}_regrows",
                "description": f"{w.capitalize()} comes back in {home.name}, up to {cap} lying there.",
                "scope": "area",
                "areas": [home.name],
                "trigger": {"every": self.rng.choice((10, 15, 20, 25))},
                "effects": [{"place": o.name, "cap": cap}, {"tell": f"Fresh {w} turns up in {{here}}."}],
                "facts": [_fact("places", f"Where does {w} grow back?", home.name, [a.name for a in d.areas])],
            },
            "regrowth",
        )
        return True


def invent(d: Draft, attempt: int = 1) -> Mechanics:
    """Invent ``spec.action_rules`` verbs and ``spec.step_rules`` step rules for the draft (see the module)."""
    inv = _Inventor(d, attempt)
    spec, rng = d.spec, inv.rng
    lex = d.namer.lexicon
    transforms = list(lex.records("transforms"))
    tended = list(lex.records("tended"))
    rng.shuffle(transforms)
    rng.shuffle(tended)
    # a transformation first (the quest asks for it), then tending and transforming by turns
    verb_makers = [("transform", transforms.pop(0))] if transforms else []
    while transforms or tended:
        if tended:
            verb_makers.append(("tend", tended.pop(0)))
        if transforms:
            verb_makers.append(("transform", transforms.pop(0)))
    made = 0
    for kind, record in verb_makers:
        if made >= spec.action_rules:
            break
        made += getattr(inv, kind)(record)
    # step rules in an order drawn by seed; each order holds every kind, then more of those that repeat
    step_makers = [*rng.choice(STEP_ORDERS), "decay", "reaction", "regrowth", "regrowth"]
    made = 0
    for kind in step_makers:
        if made >= spec.step_rules:
            break
        made += getattr(inv, kind)()
    m = inv.m
    if not m.rules["vars"]:
        del m.rules["vars"]
    return m


def weave(d: Draft, m: Mechanics) -> None:
    """Put the verbs' stages into the main quest, each in place of a filler stage (ids and order are kept).

    A product that became an ingredient (of a key, of the masterwork) takes no stage: its line joins the
    hints of the stages that name what it goes into. With more new verbs than filler stages, the last filler
    asks for the rest together: a predicate of the rule file that holds once each of them was done (a flag
    each verb sets, or the stage's own condition), planned in order, so the oracle still proves every verb
    by play. The plot's opening is never taken, even when it is of a filler's kind.
    """
    if not m.stages:
        return
    stages = [st for chapter in d.quest["main"]["chapters"] for st in chapter["stages"]]
    own = []
    for new in m.stages:
        if "attach" not in new:
            own.append(new)
            continue
        for st in stages:
            if new["attach"] in st["hint"] or st["done"].get("object") == new["attach"]:
                st["hint"] += " " + new["hint"]
    fillers = [st for st in stages if st["id"] in d.filler_ids]
    if not own or not fillers:
        return
    rng = random.Random(f"odyssey-gen:weave:{d.spec.seed}:{d.spec.theme}")
    rng.shuffle(fillers)
    single, together = own[: len(fillers) - 1], own[len(fillers) - 1 :]
    rng.shuffle(together)  # the order the packed stage asks for them in
    for new, stage in zip(single, fillers, strict=False):
        stage.update(title=new["title"], hint=new["hint"], done=new["done"])
    if not together:
        return
    if len(together) == 1:
        fillers[len(single)].update(title=together[0]["title"], hint=together[0]["hint"], done=together[0]["done"])
        return
    verbs = [new["verb"] for new in together]
    by_verb = {v["verb"]: v for v in m.rules["verbs"]}
    checks = []
    for new in together:
        if new["done"]["type"] != "predicate":  # a state the quest vocabulary says: asked of the quest
            checks.append({"quest": new["done"]})
            continue
        flag = f"used_{new['verb'].replace(' ', '_')}"
        m.rules.setdefault("vars", []).append({"name": flag, "kind": "flag"})
        by_verb[new["verb"]]["effects"].append({"set_flag": flag})
        checks.append({"flag": flag})
    name = "used_" + "_and_".join(v.replace(" ", "_") for v in verbs)[:50]
    m.rules.setdefault("predicates", []).append({"name": name, "check": {"all_of": checks}})
    fillers[len(single)].update(
        title="; ".join(new["title"] for new in together),
        hint=" ".join(new["hint"] for new in together),
        done={"type": "predicate", "name": name, "plan": [new["done"] for new in together]},
    )
