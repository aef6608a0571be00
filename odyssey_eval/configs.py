"""Where the Hydra configs live: the packaged defaults and, in a source checkout, the repository's presets.

A module of its own because the runners, the sweep entry point and the tests all need the paths, and
none of them should import the ``odyssey run`` command to get them.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CONFIG_DIR", "REPO_CONFIG_DIR"]

#: The packaged defaults (game/, agent/, llm/, eval/, launcher/, run.yaml): what a plain install has.
CONFIG_DIR = Path(__file__).resolve().parent / "conf"
#: Repository-level presets (``conf/experiment/``: the paper's experiments). On Hydra's search path when
#: the package runs from a source checkout (an editable install); a plain install has only CONFIG_DIR.
REPO_CONFIG_DIR = Path(__file__).resolve().parents[1] / "conf"
