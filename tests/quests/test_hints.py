"""The plan-hint builders (odyssey_env.quests.hints): the conditions they name, one object per content."""

from __future__ import annotations

from odyssey_env.quests import hints
from odyssey_env.quests.spec import Condition


def test_the_builders_make_the_conditions_they_name() -> None:
    # ``__wrapped__``: the builders' own code, as a call with new arguments runs it (they are memoised)
    assert hints.in_area.__wrapped__("ossuary") == Condition(type="in_area", area="ossuary")
    assert hints.has.__wrapped__("pitch", 2) == Condition(type="has_item_count", object="pitch", count=2)
    assert hints.text_written.__wrapped__("edict") == Condition(type="text_written", text="edict")
    assert hints.did("corpses_burned", area="ossuary") == Condition(
        type="predicate", name="did", args={"kind": "corpses_burned", "area": "ossuary"}
    )
    assert hints.any_has.__wrapped__("pitch") == Condition(type="has_item_count", object="pitch")
    assert hints.any_has.__wrapped__("pitch", "tallow") == Condition(
        type="any_of", conditions=(hints.has("pitch"), hints.has("tallow"))
    )


def test_one_object_per_content() -> None:
    """Planners memoise by identity: the same hint asked twice is the same object, a different one is not."""
    assert hints.in_area("ossuary") is hints.in_area("ossuary")
    assert hints.did("object_taken_out", object="lamp", handle="lamp_1") is hints.did(
        "object_taken_out", object="lamp", handle="lamp_1"
    )
    assert hints.did("object_taken_out", object="lamp") is not hints.did("object_taken_out", object="oil")
    assert hints.any_has("pitch", "tallow").conditions[0] is hints.has("pitch")
