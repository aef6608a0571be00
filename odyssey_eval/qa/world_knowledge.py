"""World-Knowledge QA: what a game's world is like, from its data and the episode's initial world.

Templates (paper §3.4 and the reference's question types, written anew):

* ``craft_ingredient``    which object is an ingredient of a recipe
* ``ingredient_quantity`` how many of an ingredient ``craft 1 <object>`` consumes
* ``npc_holds``           which object an NPC carries when it appears (a merchant's stock, an enemy's drops)
* ``object_location``     in which area an object lies at the start (or nowhere)
* ``area_connection``     which area a path joins to a given area (the graph is drawn per seed)
* ``rule_fact``           what a rule does, from the facts each rule declares (``Rule.facts``)

No LLM is involved in these. Each template computes the answer from data, draws distractors that are
false by the same data, and every question is re-checked by :func:`verify_world_knowledge`, which
recomputes the truth with code of its own. The paper's LLM-written questions about world dynamics
(``world_dynamics``) are in :mod:`odyssey_eval.qa.written`; they are checked here the same way,
against the fact a rule declares.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from odyssey_eval.qa.questions import Question, QuestionError, check_single_truth, make_question

if TYPE_CHECKING:
    from odyssey_env.game import Game
    from odyssey_env.state import WorldState

__all__ = ["NOWHERE", "TEMPLATES", "initial_world", "verify_world_knowledge", "world_knowledge_questions"]

NOWHERE = "nowhere"
TEMPLATES = ("craft_ingredient", "ingredient_quantity", "npc_holds", "object_location", "area_connection", "rule_fact")
KIND = "world_knowledge"


def initial_world(game: Game, seed: int, tutorial: bool = False) -> WorldState:
    """The world an episode with this seed starts in (the area graph and scatter are drawn per seed)."""
    from odyssey_env.engine import Engine

    return Engine(game, seed, options={"tutorial": tutorial}).state


def _carryable(game: Game) -> list[str]:
    return [name for name, o in game.objects.items() if o.portable]


def _ground(game: Game, world: WorldState) -> dict[str, list[str]]:
    """Object type -> areas (in world order) where it lies at the start; only the game's own areas."""
    where: dict[str, list[str]] = {}
    for area_name, area in world.areas.items():
        if area_name not in game.areas:
            continue  # tutorial rooms and other temporary areas
        for handle in area.objects:
            inst = world.instances.get(handle)
            kind = inst.type if inst is not None else handle
            spots = where.setdefault(kind, [])
            if area_name not in spots:
                spots.append(area_name)
    return where


def _neighbours(game: Game, world: WorldState, area: str) -> list[str]:
    return [b for b in world.areas[area].exits if b in game.areas]


def world_knowledge_questions(
    game: Game,
    world: WorldState,
    seed: int,
    *,
    per_template: int = 10,
    n_choices: int = 4,
    templates: tuple[str, ...] = TEMPLATES,
) -> list[Question]:
    """Sample up to ``per_template`` checked questions of each template for this (game, seed)."""
    unknown = sorted(set(templates) - set(TEMPLATES))
    if unknown:
        raise ValueError(f"unknown World-Knowledge template(s) {unknown}; known: {', '.join(TEMPLATES)}")
    out: list[Question] = []
    for template in templates:
        rng = random.Random(f"odyssey:qa:{KIND}:{game.name}:{seed}:{template}")
        made = _GENERATORS[template](game, world, rng, per_template, n_choices)
        for i, q in enumerate(made):
            q = Question(f"wk/{template}/{i}", q.kind, q.template, q.text, q.choices, q.answer, q.subject)
            verify_world_knowledge(q, game, world)
            out.append(q)
    return out


def _q(rng, template, text, answer, wrong, n, subject, extra=()):
    return make_question(
        rng,
        qid="",
        kind=KIND,
        template=template,
        text=text,
        answer=answer,
        wrong=wrong,
        n_choices=n,
        subject={"template": template, **subject},
        extra_wrong=extra,
    )


def _craft_ingredient(game, world, rng, count, n):
    recipes = sorted(game.recipes, key=lambda o: o.name)
    carry = _carryable(game)
    out = []
    for obj in rng.sample(recipes, min(count, len(recipes))):
        ingredients = sorted(obj.recipe.ingredients)
        q = _q(
            rng,
            "craft_ingredient",
            f"Which of these is an ingredient for crafting {obj.name}?",
            rng.choice(ingredients),
            [c for c in carry if c not in obj.recipe.ingredients and c != obj.name],
            n,
            {"object": obj.name},
        )
        if q:
            out.append(q)
    return out


def _ingredient_quantity(game, world, rng, count, n):
    pairs = sorted((o.name, ing) for o in game.recipes for ing in o.recipe.ingredients)
    out = []
    for obj, ing in rng.sample(pairs, min(count, len(pairs))):
        # what one craft takes, in whole units (a fractional amount, 0.5 iron_bar, uses up one unit)
        amount = game.objects[obj].recipe.uses(ing, 1)
        numbers = [str(k) for k in range(1, max(6, amount + 3))]
        q = _q(
            rng,
            "ingredient_quantity",
            f"How many {ing} does the command 'craft 1 {obj}' use up?",
            str(amount),
            numbers,
            n,
            {"object": obj, "ingredient": ing},
        )
        if q:
            out.append(q)
    return out


def _holdings(game: Game, npc: str) -> dict[str, int]:
    t = game.npcs[npc]
    return dict(t.stock if t.merchant else t.drops)


def _npc_holds(game, world, rng, count, n):
    npcs = sorted(name for name in game.npcs if _holdings(game, name))
    carry = _carryable(game)
    out = []
    for npc in rng.sample(npcs, min(count, len(npcs))):
        held = _holdings(game, npc)
        q = _q(
            rng,
            "npc_holds",
            f"Which of these objects does {npc} carry when it appears?",
            rng.choice(sorted(held)),
            [c for c in carry if c not in held],
            n,
            {"npc": npc},
        )
        if q:
            out.append(q)
    return out


def _object_location(game, world, rng, count, n):
    where = _ground(game, world)
    areas = list(game.areas)
    placed = [o for o in _carryable(game) if o in where]
    unplaced = [o for o in _carryable(game) if o not in where]
    n_nowhere = min(len(unplaced), count // 4) if placed else min(len(unplaced), count)
    picks = rng.sample(placed, min(count - n_nowhere, len(placed))) + rng.sample(unplaced, n_nowhere)
    out = []
    for obj in picks:
        spots = where.get(obj, [])
        answer = rng.choice(spots) if spots else NOWHERE
        q = _q(
            rng,
            "object_location",
            f"At the start of the game, in which area does {obj} lie on the ground? "
            f"Answer '{NOWHERE}' if it lies in no area.",
            answer,
            [a for a in areas if a not in spots],
            n,
            {"object": obj},
            extra=(NOWHERE,) if spots else (),
        )
        if q:
            out.append(q)
    return out


def _area_connection(game, world, rng, count, n):
    areas = [a for a in game.areas if a in world.areas and _neighbours(game, world, a)]
    out = []
    for area in rng.sample(areas, min(count, len(areas))):
        nbrs = _neighbours(game, world, area)
        q = _q(
            rng,
            "area_connection",
            f"Which area does a path from {area} lead to directly?",
            rng.choice(nbrs),
            [a for a in game.areas if a != area and a not in nbrs],
            n,
            {"area": area},
        )
        if q:
            out.append(q)
    return out


def _facts(game: Game) -> list[tuple[str, Any]]:
    out = []
    rules = [*game.rules.actions.values(), *game.rules.steps]
    for rule in rules:
        for i, fact in enumerate(rule.facts(game)):
            out.append((f"{rule.name}#{i}", fact))
    return out


def _rule_fact(game, world, rng, count, n):
    facts = _facts(game)
    out = []
    for key, fact in rng.sample(facts, min(count, len(facts))):
        q = _q(rng, "rule_fact", fact.question, fact.answer, fact.distractors, n, {"fact": key, "topic": fact.topic})
        if q:
            out.append(q)
    return out


_GENERATORS = {
    "craft_ingredient": _craft_ingredient,
    "ingredient_quantity": _ingredient_quantity,
    "npc_holds": _npc_holds,
    "object_location": _object_location,
    "area_connection": _area_connection,
    "rule_fact": _rule_fact,
}


# ------------------------------------------------------------------ independent check
def verify_world_knowledge(q: Question, game: Game, world: WorldState) -> None:
    """Recompute which choices are true from the game and the initial world; raise if not exactly the answer."""
    s = q.subject
    t = s["template"]
    recipe = game.objects[s["object"]].recipe if t in ("craft_ingredient", "ingredient_quantity") else None
    if t == "craft_ingredient":
        assert recipe is not None  # these templates ask only about craftable objects
        truth = {ing for ing, k in recipe.ingredients.items() if k > 0}
    elif t == "ingredient_quantity":
        assert recipe is not None
        truth = {str(recipe.uses(s["ingredient"], 1))}
    elif t == "npc_holds":
        t_npc = game.npcs[s["npc"]]
        truth = set(t_npc.stock if t_npc.role == "merchant" else t_npc.drops)
    elif t == "object_location":
        truth = set()
        for name, area in world.areas.items():
            if name in game.areas and any(
                (world.instances[h].type if h in world.instances else h) == s["object"] for h in area.objects
            ):
                truth.add(name)
        if not truth:
            truth = {NOWHERE}
    elif t == "area_connection":
        truth = {b for b in world.areas[s["area"]].exits if b in game.areas}
    elif t in ("rule_fact", "world_dynamics"):  # declared by a rule; world_dynamics reworded by an LLM writer
        fact = dict(_facts(game))[s["fact"]]
        if fact.answer in fact.distractors:
            raise QuestionError(f"rule fact {s['fact']} lists its answer among its distractors")
        truth = {fact.answer}
    else:
        raise ValueError(f"unknown World-Knowledge template {t!r}")
    check_single_truth(q, truth)
