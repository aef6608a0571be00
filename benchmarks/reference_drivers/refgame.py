"""Helpers for drivers that run inside the reference engine's interpreter (see ``benchmarks/reference.py``).

Runs with the unpacked agentodyssey 0.1.0 wheel as the working folder and on ``sys.path``; imports nothing
of odyssey. How the reference builds and steps an env, read from its ``eval.py`` and ``games/*/env.py``:

* each game is a package, ``games.base`` or ``games.generated.<game>``, with its own ``env.AgentOdysseyEnv``
  and ``agent.Agent`` (``utils.dynamic_load_game_class`` picks them);
* ``AgentOdysseyEnv(seed, agents, world_definition_path, run_dir, config_path, enable_obs_valid_actions)``
  reads the game's world definition and its initial run state from ``config_path``, and ``reset()``
  writes that state back there, so each env gets a private copy in a temporary run folder;
* ``reset()`` returns ``{agent_id: {"step", "text", "valid_actions"}}`` (the last with
  ``enable_obs_valid_actions``, ``{verb: [command, ...]}``), and ``step({agent_id: command})`` returns
  ``(observations, rewards, terminated, info)``, the observations listing the valid actions again.

Its loggers write every step to stderr (``tools.logger``: a coloured line per action). ``make_env(quiet=True)``
switches logging off, so a measurement counts the engine and not the terminal: that makes the reference
faster, never slower, than as its ``eval.py`` runs it.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

RESULT_PREFIX = "ODYSSEY-REFERENCE-RESULT "  # benchmarks/reference.py reads this line
AGENT_ID, AGENT_NAME = "agent_player", "player"
TREE = Path(os.environ.get("ODYSSEY_REFERENCE_TREE", "."))


def emit(result: Any) -> None:
    """Hand ``result`` (JSON-ready) back to ``reference.run_json``."""
    print(RESULT_PREFIX + json.dumps(result), flush=True)


def without_tutorial(game: str) -> None:
    """Point ``TREE`` at a copy of ``game``'s assets whose world definition has no tutorial event (the
    reference starts every run in its tutorial room otherwise); the release's own files stay as they are."""
    global TREE
    where = "base" if game == "base" else f"generated/{game}"
    tree = Path(tempfile.mkdtemp(prefix="odyssey-reference-tree-"))
    for sub in ("world_definitions", "env_configs"):
        src = TREE / "assets" / sub / where
        dst = tree / "assets" / sub / where
        dst.mkdir(parents=True)
        for f in src.iterdir():
            (dst / f.name).write_bytes(f.read_bytes())
    path = tree / "assets" / "world_definitions" / where / "default.json"
    data = json.loads(path.read_text())
    data["custom_events"] = [e for e in data.get("custom_events", []) if e != "tutorial"]
    path.write_text(json.dumps(data))
    TREE = tree


def _run_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="odyssey-reference-run-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def make_env(game: str, seed: int, *, valid_actions: bool = True, quiet: bool = True) -> tuple[Any, Any]:
    """A fresh reference env of ``game`` with one agent, not yet reset: ``(env, agent)``."""
    if quiet:
        logging.disable(logging.CRITICAL)
    from utils import dynamic_load_game_class

    where = "base" if game == "base" else f"generated/{game}"
    world_definition = TREE / "assets" / "world_definitions" / where / "default.json"
    initial = TREE / "assets" / "env_configs" / where / "initial.json"
    run = _run_folder()
    config = run / "config.json"
    shutil.copyfile(initial, config)
    agent = dynamic_load_game_class(game, "agent", "Agent")(AGENT_ID, AGENT_NAME)
    env_class = dynamic_load_game_class(game, "env", "AgentOdysseyEnv")
    env = env_class(
        seed=seed,
        agents=[agent],
        world_definition_path=str(world_definition),
        run_dir=str(run),
        config_path=str(config),
        enable_obs_valid_actions=valid_actions,
    )
    return env, agent
