"""Where the Hydra configs live: the packaged defaults and, in a source checkout, the repository's presets.

A module of its own because the runners, the sweep entry point and the tests all need the paths, and
none of them should import the ``odyssey run`` command to get them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hydra.core.override_parser.types import Override

__all__ = ["CONFIG_DIR", "REPO_CONFIG_DIR", "override_line", "plain_dict"]

#: The packaged defaults (game/, agent/, llm/, eval/, launcher/, run.yaml): what a plain install has.
CONFIG_DIR = Path(__file__).resolve().parent / "conf"
#: Repository-level presets (``conf/experiment/``: the paper's experiments). On Hydra's search path when
#: the package runs from a source checkout (an editable install); a plain install has only CONFIG_DIR.
REPO_CONFIG_DIR = Path(__file__).resolve().parents[1] / "conf"


def plain_dict(node: object, *, resolve: bool = True, throw_on_missing: bool = False) -> dict[str, Any]:
    """``node`` (a mapping config node, or a plain mapping) as a plain dict with string keys.

    ``OmegaConf.to_container`` takes any node, so it is typed to return any container (a dict, a list, a
    string, None); every caller here converts a mapping and reads string keys. One check, here, narrows
    the type for all of them, and a list or scalar where a mapping belongs fails on this line rather
    than as a ``KeyError`` deep in a caller. A plain mapping is copied as it is (shallowly).
    """
    from omegaconf import DictConfig, OmegaConf

    out: object
    if isinstance(node, DictConfig):
        out = OmegaConf.to_container(node, resolve=resolve, throw_on_missing=throw_on_missing)
    elif isinstance(node, Mapping):
        out = dict(node)
    else:
        raise TypeError(f"expected a mapping config node, got {type(node).__name__}")
    if not isinstance(out, dict) or not all(isinstance(key, str) for key in out):
        raise TypeError(f"expected a mapping with string keys, got {out!r}")
    return out


def override_line(override: Override) -> str:
    """The text ``override`` was parsed from (``seed=3``).

    Hydra types ``Override.input_line`` as optional because an override can be built in code; every
    override here comes from ``OverridesParser.parse_overrides``, which always sets it.
    """
    line = override.input_line
    if line is None:
        raise ValueError(f"override of {override.key_or_group!r} was not parsed from a line")
    return line
