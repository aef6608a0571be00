"""The rule language: game mechanics as data (``rules.json``), interpreted by the engine.

A game folder's ``rules.json`` declares verbs, step rules, variables and quest predicates
(:mod:`odyssey_env.rulelang.spec`, documented in docs/game-format.md). Loading checks it against the
world (:mod:`~odyssey_env.rulelang.checks`: every problem names the file and field) and compiles it into
the engine's own :class:`~odyssey_env.rules.ActionRule` / :class:`~odyssey_env.rules.StepRule` classes
(:mod:`~odyssey_env.rulelang.compiler`). A rule file is data: loading it runs no code from the folder, so a
game made only of JSON files needs no trust.
"""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import Any

from odyssey_env.rulelang.checks import Checked, check_rules
from odyssey_env.rulelang.compiler import compile_rules
from odyssey_env.rulelang.spec import FORMAT, RulesSpec, json_schema

__all__ = ["FORMAT", "Checked", "RulesSpec", "check_rules", "compile_rules", "json_schema", "load_rules"]


def load_rules(
    raw: Any, world_spec: Any, known_steps: Iterable[str] = (), file: str = "rules.json"
) -> tuple[types.ModuleType, Checked]:
    """Check and compile a rule file's data; raise :class:`~odyssey_env.schema.FormatError` on any problem."""
    checked = check_rules(raw, world_spec, file=file, known_steps=known_steps)
    return compile_rules(checked, world_spec, file=file), checked
