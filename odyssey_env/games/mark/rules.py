"""Mark's one quest predicate, used by its tutorial.

The condition vocabulary has no event for inspecting, storing, taking out or discarding, yet the
tutorial must gate on exactly those lessons (paper A3.4: "inventory management"). ``did`` holds on the
step the agent caused an event of a given kind, on an object of a given type if one is named. The
main quest does not use it: its stages stay within the documented vocabulary, which the oracle reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from odyssey_env.rules import predicate

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.state import Agent


@predicate("did")
def did(engine: Engine, agent: Agent, kind: str, object: str | None = None) -> bool:
    """The agent caused an event of ``kind`` this step (on an object of type ``object``, if given)."""
    return any(ev.kind == kind and ev.agent == agent.id and (object is None or ev.data.get("object") == object)
               for ev in engine.events)
