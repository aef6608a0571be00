"""MkDocs hooks for the docs site (``mkdocs.yml``): pages generated at build time, never committed.

* ``index.md``: the README, its ``docs/...`` links made relative to the site.
* ``games/<name>.md``: one page per shipped game, from its data (:func:`odyssey_eval.gamedocs.game_page`),
  listed in the nav after ``games.md``.
* ``api/<module>.md``: the API reference of each public module (mkdocstrings reads the docstrings),
  listed in the nav after ``api.md``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: The modules of the API reference, in nav order: what a user of the package imports.
API_MODULES = (
    "odyssey_env",
    "odyssey_env.env",
    "odyssey_env.wrappers",
    "odyssey_env.multiagent",
    "odyssey_env.sb3",
    "odyssey_env.game",
    "odyssey_env.extras",
    "odyssey_agents.base",
    "odyssey_agents.registry",
    "odyssey_agents.llm",
    "odyssey_eval.metrics",
    "odyssey_eval.collect",
    "odyssey_eval.report",
    "odyssey_eval.gamedocs",
)


def _games() -> list[str]:
    from odyssey_env.game import available_games

    return available_games()


def on_config(config: Any) -> Any:
    """Put the generated pages in the nav, after the page that introduces them."""
    extra = {"games.md": [f"games/{g}.md" for g in _games()], "api.md": [f"api/{m}.md" for m in API_MODULES]}
    nav = []
    for entry in config["nav"]:
        ((title, page),) = entry.items()
        if isinstance(page, str) and page in extra:
            nav.append({title: [{"Overview": page}, *extra[page]]})
        else:
            nav.append(entry)
    config["nav"] = nav
    return config


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    from odyssey_eval.gamedocs import game_page

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    readme = re.sub(r"\]\(docs/", "](", readme)
    files.append(File.generated(config, "index.md", content=readme))
    for game in _games():
        files.append(File.generated(config, f"games/{game}.md", content=game_page(game)))
    for module in API_MODULES:
        files.append(File.generated(config, f"api/{module}.md", content=f"# `{module}`\n\n::: {module}\n"))
    return files
