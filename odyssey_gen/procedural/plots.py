"""Quest skeletons: the plot shapes and the branch structures the quest builder chooses from by seed.

A *plot* fixes the arc of the main quest: how it opens (hear out the guide, take up a weapon, explore,
talk to a trader), what comes right before the boss (a siege culls the boss's kin first), how it ends
after the boss (bring the trophy home, report to the guide with it, forge it into a masterwork, write a
vow where the journey began, pay a trader's debt with it) and which filler stages it favours. A
*structure* fixes how a forking chapter (``branching`` > 1) is wired: parallel chains of equal length
that join, chains of uneven length, or a lattice whose chains also wait on their neighbour's first step.
Every part names only what the draft guarantees, so each shape is solvable by construction; the tests
prove it by play (tests/gen/test_plots.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["PLOTS", "STRUCTURES", "Plot"]


@dataclass(frozen=True)
class Plot:
    """One plot shape. ``opening``, ``before_boss`` and ``finale`` name stage builders of the quest builder."""

    name: str
    opening: str
    finale: tuple[str, ...]
    before_boss: tuple[str, ...] = ()
    weights: dict[str, float] = field(default_factory=dict)  # filler kind -> multiplier
    choice_rate: float = 0.15  # share of fillers that become "either this or that" (any_of)
    title: str = "The {trophy}"
    intro: str = ""
    outro: str = ""


PLOTS: dict[str, Plot] = {
    p.name: p
    for p in (
        Plot(
            "recovery",
            opening="talk_guide",
            finale=("bring_trophy",),
            title="The {trophy}",
            intro="{guide} waits in {spawn} with a task: the {boss} keeps the {trophy} in {deepest}, "
            "and it must be taken back.",
            outro="The {trophy} is home again. I have completed the main quest.",
        ),
        Plot(
            "hunt",
            opening="talk_guide",
            finale=("report_to_guide",),
            weights={"hunt": 3, "slay": 2.5, "equip": 2, "level": 2},
            title="The Hunt for the {boss}",
            intro="{guide} in {spawn} wants the {boss} dead, and the {trophy} it carries as proof.",
            outro="{guide} turns the {trophy} over in their hands. The hunt is over; I have completed the main quest.",
        ),
        Plot(
            "forging",
            opening="talk_guide",
            finale=("forge_masterwork",),
            weights={"craft": 2.5, "gather": 1.5, "buy": 1.5},
            choice_rate=0.2,
            title="Forging the {masterwork}",
            intro="{guide} in {spawn} knows how the {masterwork} is made; its heart is the {trophy}, "
            "which the {boss} keeps in {deepest}.",
            outro="The {masterwork} is whole at last. I have completed the main quest.",
        ),
        Plot(
            "pilgrimage",
            opening="open_explore",
            finale=("vow_note",),
            weights={"explore": 3, "note": 2.5, "deliver": 2, "write": 1.5, "talk": 1.5},
            choice_rate=0.2,
            title="The Road to {deepest_words}",
            intro="The road runs from {spawn} to {deepest}, where the {boss} waits. {guide} keeps the vow of "
            "those who walked it before.",
            outro="The vow is written where the road began. I have completed the main quest.",
        ),
        Plot(
            "trade",
            opening="talk_merchant",
            finale=("trophy_to_merchant",),
            weights={"buy": 3, "sell": 3, "deliver": 2, "talk": 2, "craft": 1.5},
            choice_rate=0.25,
            title="A Debt to {merchant}",
            intro="{merchant} will clear every debt of {spawn} for the {trophy} that the {boss} keeps in {deepest}.",
            outro="{merchant} takes the {trophy}; the debt is paid. I have completed the main quest.",
        ),
        Plot(
            "siege",
            opening="open_arm",
            before_boss=("cull",),
            finale=("bring_trophy",),
            weights={"hunt": 2.5, "slay": 2, "equip": 2, "level": 2, "arm": 0},
            title="The Siege of {place}",
            intro="{place} is besieged: the {boss}'s kin push up from {deepest}. {guide} in {spawn} asks for "
            "a fighter.",
            outro="The siege is broken and the {trophy} is home. I have completed the main quest.",
        ),
    )
}

#: How a forking chapter's inner stages are wired (see the module docstring).
STRUCTURES = ("fork_join", "uneven", "lattice")
