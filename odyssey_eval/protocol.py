"""Run protocols: what a run's budget, ``max_steps``, counts.

* ``odyssey`` (the default): play steps. Steps taken in the tutorial are recorded and reported apart and
  use none of the budget, so every agent gets the same amount of play however long it takes to learn
  the tutorial.
* ``paper``: every step, tutorial included, as the paper's reference implementation counts its 500-step
  budget: an agent that needs 35 steps for the tutorial plays 465. The TTCL challenge and the Table 2
  preset use it, so their figures are comparable with the paper's (docs/fidelity.md).

A cell's protocol is part of what it is: a run of the paper protocol is filed in its own directory
(``seed_0_protocol=paper``), records its protocol in ``results.json``, and ``odyssey challenge`` refuses
to rank runs of different protocols together. A run recorded before protocols existed is ``odyssey``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from odyssey_agents.errors import ConfigError

__all__ = ["DEFAULT", "PROTOCOLS", "budget_counter", "check", "of", "spent"]

#: protocol -> the runner's counter that ``max_steps`` bounds (``play``: play steps; ``total``: every step).
PROTOCOLS: dict[str, str] = {"odyssey": "play", "paper": "total"}
DEFAULT = "odyssey"


def check(value: Any) -> str:
    """The protocol a config names (``protocol=...``), or a one-line error naming the known ones."""
    if value is None:
        return DEFAULT
    if not isinstance(value, str) or value not in PROTOCOLS:
        raise ConfigError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {value!r}")
    return value


def of(record: Mapping[str, Any]) -> str:
    """The protocol of a cell key or a run's ``results.json`` (``odyssey`` where none is recorded)."""
    return str(record.get("protocol") or DEFAULT)


def budget_counter(protocol: str) -> str:
    """The name of the runner's step counter that may not exceed ``max_steps`` under ``protocol``."""
    return PROTOCOLS[protocol]


def spent(results: Mapping[str, Any]) -> int:
    """The steps of a finished run that count against its budget under its own protocol."""
    if PROTOCOLS.get(of(results)) == "total":
        return int(results["steps"])
    play = results.get("play_steps")
    return int(results["metrics"]["play_steps"] if play is None else play)
