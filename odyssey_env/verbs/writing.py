"""Writing: a writing tool in one hand, a writable in the other (paper A3.4, physical alignment)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from odyssey_env.limits import TEXT_CHARS
from odyssey_env.rules import ActionRule, Fact, action_rule
from odyssey_env.turn import Turn
from odyssey_env.world import held_for

if TYPE_CHECKING:
    from odyssey_env.game import Game

PLACEHOLDER = "notes"


@action_rule
class Write(ActionRule):
    verb = "write"
    params = (("text", "text"), ("writable_name", "writable"))
    description = "Write text (in double quotes) on a writable I hold, with a writing tool in my other hand."
    depends_on = ("hands",)

    def apply(self, turn: Turn, text: str, handle: str) -> None:
        state, game = turn.state, turn.game
        inst = state.instances.get(handle)
        if handle not in turn.agent.hands or inst is None or game.objects[inst.type].category != "writable":
            return turn.fail(f"Cannot write on {handle}: I must hold it, and it must be something to write on.")
        if held_for(game, state, turn.agent, "write") is None:
            return turn.fail("Cannot write: I need a writing tool in my other hand.")
        limit = game.objects[inst.type].max_text
        if len(text) > limit:
            return turn.fail(f"Cannot write that on {handle}: it holds at most {limit} characters.")
        if not text or set(text) - TEXT_CHARS or "\n" in text:
            return turn.fail("Cannot write that: use plain printable characters on one line.")
        inst.text = text
        turn.say(f'I wrote "{text}" on {handle}.')
        turn.emit("text_written", writable=handle, object=inst.type, text=text, area=turn.agent.area)

    def candidates(self, turn: Turn) -> Iterable[str]:
        if held_for(turn.game, turn.state, turn.agent, "write") is None:
            return
        objects, instances = turn.game.objects, turn.state.instances
        for handle in turn.agent.hands:
            inst = instances.get(handle)
            if inst is not None and objects[inst.type].category == "writable":
                # The listed command must succeed, so the placeholder text must fit this writable.
                yield f'write "{PLACEHOLDER[: objects[inst.type].max_text]}" {handle}'

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "writing",
            "What do I need to write a note?",
            "a writing tool in one hand and something to write on in the other",
            ("only paper", "a desk", "nothing"),
        )
