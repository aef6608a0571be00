"""The paper games' own verbs and dynamics, bound to odyssey's implementations (odyssey_eval/paper/mechanics.py).

Each game is imported from the real release (the wheel, as in test_import_reference.py: skipped without it) and
each of its own verbs is shown listed among the valid actions and succeeding from a state set up by hand, with
the parameters the import read from the reference's rules. The oracle's solve of these games is checked in
test_import_reference.py; the reference's rules are listed in docs/fidelity.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kit import Harness, engine_on

from odyssey_eval.paper.importer import import_release
from odyssey_eval.paper.mechanics import OWN
from odyssey_eval.paper.release import cached_wheel, open_release

WHEEL = cached_wheel()
pytestmark = pytest.mark.skipif(
    WHEEL is None or not WHEEL.is_file(),
    reason="the reference wheel is not here: set ODYSSEY_REFERENCE_WHEEL or run `odyssey paper import` once",
)


def _imported(tmp_path_factory: pytest.TempPathFactory, game: str) -> Path:
    out = tmp_path_factory.mktemp(f"paper-{game}")
    assert WHEEL is not None
    import_release(open_release(WHEEL), out, (game,))
    return out / game


def _hostile(h: Harness) -> str:
    """An enemy NPC type of the game that is not a boss of its quest (a common enemy)."""
    return next(n.name for n in h.game.npcs.values() if n.hostile and n.common_enemy)


def _writable(h: Harness) -> str:
    """A writable type of the world's own (the reference's ``obj_paper`` is Metropolis's ``legal_brief``)."""
    return next(o.name for o in h.game.spec.objects if o.category == "writable" and not o.quest)


def _bound(folder: Path, shipped: str) -> None:
    """Every game-specific rule of the reference's game is bound to ``shipped``'s, and says how it differs."""
    world = json.loads((folder / "world.json").read_text())
    assert world["game"]["rules_from"] == [shipped]
    notes = json.loads((folder / "paper.json").read_text())["differences"]
    assert not [n for n in notes if "has no odyssey implementation" in n["difference"]]
    played = [n for n in notes if n["difference"].startswith(f"played by odyssey's {shipped} rule")]
    assert len(played) == sum(1 for rule in OWN.values() if rule.game == shipped)


# ============================================================================ Metropolis: Gavelmoor's law
@pytest.fixture(scope="module")
def metropolis(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _imported(tmp_path_factory, "metropolis")


def test_metropolis_binds_every_rule_of_its_own_to_gavelmoor_s(metropolis: Path) -> None:
    _bound(metropolis, "gavelmoor")
    h = Harness(engine_on(metropolis))
    assert {"invoke law", "file objection", "appeal verdict"} <= set(h.game.rules.actions)
    steps = {r.name for r in h.game.rules.steps}
    assert {"nightly_rewrite", "law_expiry", "objection_effects", "legal_paradox", "contempt_of_court"} <= steps
    assert {"binding_precedent", "contraband_suspicion", "trial_proceedings"} <= steps
    # the reference's numbers: an invocation lasts DURATION (3) turns, contempt fines FINE_COINS_PER_TURN (2)
    assert h.game.rules.actions["invoke law"].settings.term == 3
    assert h.game.rules.step_rule("contempt_of_court").settings.fine == 2


def test_metropolis_laws_are_invoked_and_objected_to(metropolis: Path) -> None:
    h = Harness(engine_on(metropolis))
    h.clear()
    sheet = h.hold_one(_writable(h), text="the ward keeps the peace")
    assert f"invoke law {sheet}" in h.listed("invoke law")
    h.ok(f"invoke law {sheet}")
    assert h.events("law_invoked")[0]["statute"] == "peace"
    h.hold_one(h.game.currency, 5)
    assert h.listed("file objection") == [f"file objection {sheet}"]
    h.ok(f"file objection {sheet}")
    assert h.events("objection_filed")


def test_metropolis_verdicts_are_appealed(metropolis: Path) -> None:
    h = Harness(engine_on(metropolis))
    h.clear()
    h.hold_one(h.game.currency, 5)
    enemy = h.npc(_hostile(h))
    enemy.hp = 1
    h.ok(f"attack {enemy.handle}")  # unprovoked: the spectral judge finds me guilty, sentence next turn
    assert h.events("verdict")[0]["guilty"]
    assert h.listed("appeal verdict") == ["appeal verdict"]
    h.ok("appeal verdict")
    assert h.events("verdict_overturned") == [{"kinds": ["fine"]}]
