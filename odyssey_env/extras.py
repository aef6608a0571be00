"""What to type to add an optional extra, worded for how this copy of odyssey was installed.

``pip install "odyssey-gym[rag]"`` works only where the package came from an index. From a clone
installed with ``pip install -e .`` the command that works is ``pip install -e ".[rag]"`` (in the
clone; its path from anywhere else); from a wheel file or a git URL it is the package with that URL.
pip records where a distribution came from in its ``direct_url.json`` (PEP 610), so the command is
read from there, once per process, and every message that names an extra goes through
:func:`install_command` or :func:`missing_extra`.

A missing extra is an installation problem, not a bug: its traceback says nothing its message does
not. :func:`missing_extra` returns a :class:`MissingExtra` (a ``ModuleNotFoundError``, so code that
catches that keeps working); if one reaches the top of a script run by the plain interpreter, it is
printed as its one line. (Only when Python's own excepthook is in place: IPython, rich and other hooks
are left alone, and so is every other exception.)

Only the standard library is used here: the env package depends on gymnasium alone.
"""

from __future__ import annotations

import functools
import json
import sys
from importlib import metadata
from pathlib import Path
from types import TracebackType
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

__all__ = ["DISTRIBUTION", "MissingExtra", "install_command", "missing_extra"]

DISTRIBUTION = "odyssey-gym"
_ROOT = Path(__file__).resolve().parents[1]  # the checkout, when this file is in one


class MissingExtra(ModuleNotFoundError):
    """An optional dependency that is not installed; the message names the command that installs it.

    Creating one makes sure a plain script that does not catch it prints it as one line (see the
    module docstring)."""

    def __init__(self, *args: object, **kwargs: str | None) -> None:
        super().__init__(*args, **kwargs)
        _install_hook()


def install_command(extra: str) -> str:
    """The pip command that adds ``extra`` to this installation (see the module docstring)."""
    kind, where = _origin()
    if kind == "editable":
        return f'pip install -e "{_here(where)}[{extra}]"'
    if kind == "folder":
        return f'pip install "{_here(where)}[{extra}]"'
    if kind == "url":
        return f'pip install "{DISTRIBUTION}[{extra}] @ {where}"'
    return f'pip install "{DISTRIBUTION}[{extra}]"'


def missing_extra(what: str, extra: str, module: str | None = None) -> MissingExtra:
    """``{what} needs the "{extra}" extra: {command}`` as an exception to raise (``module``: the
    missing top-level module, kept as the exception's ``name``, as Python's own import errors do)."""
    return MissingExtra(f'{what} needs the "{extra}" extra: {install_command(extra)}', name=module)


@functools.cache
def _origin() -> tuple[str, str]:
    """Where this installation came from: ``("index", "")``, ``("editable", folder)``, ``("folder",
    folder)`` (a non-editable install of a source folder) or ``("url", url)`` (a wheel or sdist file,
    an archive URL, a git URL with its commit)."""
    # Every copy of the metadata on sys.path: run from a clone, its own ``odyssey_gym.egg-info`` (which
    # setuptools leaves there, without pip's record) comes before the installed one.
    direct = None
    for dist in metadata.distributions(name=DISTRIBUTION):
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "null")
        except (OSError, ValueError):
            continue
        if isinstance(direct, dict) and isinstance(direct.get("url"), str):
            break
        direct = None
    if direct is None:
        if (_ROOT / "pyproject.toml").is_file():  # a source tree pip never installed (PYTHONPATH, a clone)
            return "editable", str(_ROOT)
        return "index", ""  # from an index: pip records no URL for those
    url = direct["url"]
    dir_info = direct.get("dir_info")
    if isinstance(dir_info, dict) and url.startswith("file:"):
        folder = url2pathname(unquote(urlparse(url).path))
        return ("editable" if dir_info.get("editable") else "folder"), folder
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str):
        commit = vcs.get("commit_id")
        url = f"{vcs['vcs']}+{url}" + (f"@{commit}" if isinstance(commit, str) else "")
    return "url", url


def _here(folder: str) -> str:
    """``.`` for the current directory (what a user in the clone types), else the folder's path."""
    try:
        same = Path(folder).resolve() == Path.cwd().resolve()
    except OSError:
        same = False
    return "." if same else folder


def _one_line(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    if isinstance(value, MissingExtra):
        print(f"{kind.__name__}: {value}", file=sys.stderr)
    else:
        sys.__excepthook__(kind, value, tb)


def _install_hook() -> None:
    if sys.excepthook is sys.__excepthook__:
        sys.excepthook = _one_line
