"""A quest predicate for events the closed condition vocabulary has no word for.

Tutorials gate steps on small acts (inspecting a bag, storing coins, taking one out, discarding)
that emit events but have no condition type of their own. ``did`` holds on the step the agent
caused an event of ``kind`` whose data match every other argument, for example::

    {"type": "predicate", "name": "did", "args": {"kind": "object_stored", "object": "coin"}}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from odyssey_env.rules import predicate

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.state import Agent


@predicate("did")
def did(engine: Engine, agent: Agent, kind: str, **match: Any) -> bool:
    """The agent caused an event ``kind`` this step with data equal to ``match`` (e.g. object=coin)."""
    for ev in engine.events:
        if ev.kind == kind and ev.agent == agent.id and all(ev.data.get(k) == v for k, v in match.items()):
            return True
    return False
