"""Bounds on everything a game folder or a command may contain, in one place (docs/game-format.md, "Limits").

Game folders come from people and from LLMs: an absurd number must be an error naming its field at load
time, never a hang, a MemoryError or a ZeroDivisionError an hour into a run. The bounds are far above
anything a playable game needs. The checks that apply them live in :mod:`odyssey_env.checks`; the parser
and the rule book read theirs from here too.
"""

from __future__ import annotations

import string

from odyssey_env.schema import Limits

#: Everything the engine prints or accepts: printable ASCII and newlines (the env's spaces use it: ``env.CHARSET``).
TEXT_CHARS = frozenset(string.printable) - frozenset("\t\r\x0b\x0c")

# ------------------------------------------------------------------ game files (world.json, quest.json)
MAX_FILE_BYTES = 4 * 2**20
#: What the schema reader accepts in a game file: numbers, list lengths, text lengths, nesting.
LIMITS = Limits(max_number=1e9, max_items=2_000, max_text=20_000, max_depth=64)
MAX_STAT = 1_000_000  # hp, attack, defense, value, size, capacity, coins, experience, amounts of stackables
MAX_LEVEL = 1_000
MAX_INSTANCES = 100  # individually named objects (containers, writables) in one placement
MAX_WORLD_INSTANCES = 10_000  # ... and in the whole initial world
MAX_PLACED_NPCS = 5_000
MAX_AREAS = 1_000
MAX_SCATTER = 100  # objects or NPCs scattered into one area
MAX_DRAWS = 10  # the reference-style placement's draws per candidate object (placement.draws)
MAX_RECIPE_AMOUNT = 1_000
MAX_NAME = 64  # the parser takes names of up to MAX_NAME_LENGTH characters; instance handles add "_<number>"
MAX_TUTORIAL_STEPS = 10_000
MAX_EXPANSIONS = 100
MAX_EXPANSION_PLACES = 10
MAX_EXPANSION_AREAS_PER_PLACE = 20

# ------------------------------------------------------------------ rule parameters (game.params.<rule>)
#: What a game's overrides of a rule's ``Params`` may hold.
PARAM_LIMITS = Limits(max_number=1_000_000, max_items=1_000, max_text=20_000, max_depth=16)

# ------------------------------------------------------------------ commands
MAX_AMOUNT = 1_000_000  # the largest amount a command may name
MAX_NAME_LENGTH = 100  # the longest name a command may carry
