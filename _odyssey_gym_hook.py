"""Registers odyssey's Gymnasium ids right after ``import gymnasium``, in any process of this environment.

Gymnasium 1.x loads no plugins (0.26-0.29 read the ``gymnasium.envs`` entry-point group; 1.0 removed
that), so without this a process that never imports ``odyssey_env`` (an SB3 ``SubprocVecEnv``
worker started by spawn, a script that only calls ``gym.make("Odyssey/Mossfall-v0")``) cannot find
the ids. ``odyssey-gym.pth``, installed beside the packages, imports this module at interpreter
start-up; it puts one finder first on ``sys.meta_path`` that waits for ``gymnasium`` and, once that
module has run, calls ``odyssey_env.registration.register_envs`` (which loads no engine code).

Costs nothing measurable otherwise: nothing is imported at start-up but this module (it imports only
``os`` and ``sys``, which start-up has already loaded), and the finder answers every other import with
a name comparison. ``ODYSSEY_GYM_AUTOREGISTER=0`` switches it off.
A failure while registering is a warning, never a broken ``import gymnasium``.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing would cost every interpreter start
if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from typing import Any

_TARGET = "gymnasium"


def _register() -> None:
    try:
        from odyssey_env.registration import register_envs

        register_envs()
    except Exception as exc:  # a broken odyssey install must not break every user of gymnasium
        import warnings

        warnings.warn(
            f"odyssey-gym could not register its Gymnasium ids ({type(exc).__name__}: {exc}); "
            "import odyssey_env to see why",
            RuntimeWarning,
            stacklevel=2,
        )


class _RegisteringLoader:
    """Gymnasium's own loader, which registers odyssey's ids once the module has run."""

    def __init__(self, loader: Any):
        self._loader = loader

    def create_module(self, spec: ModuleSpec) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        module.__loader__ = module.__spec__.loader = self._loader  # leave no trace in the module
        _uninstall()
        self._loader.exec_module(module)
        _register()

    def __getattr__(self, name: str) -> Any:  # get_source, get_resource_reader, ...: Gymnasium's loader answers
        return getattr(self._loader, name)


class _GymnasiumFinder:
    """Finds nothing itself: for ``gymnasium``, asks the other finders and wraps the loader they give."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if fullname != _TARGET:
            return None
        # Stay installed until Gymnasium actually runs: importlib.util.find_spec("gymnasium"), which
        # libraries call to see whether it is there, asks the finders without importing anything.
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None and finder is not self else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _RegisteringLoader(spec.loader)
                return spec
        return None


def _uninstall() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _GymnasiumFinder)]


def install() -> None:
    """Register now if Gymnasium is already imported, else once it is (what the .pth file calls)."""
    if os.environ.get("ODYSSEY_GYM_AUTOREGISTER", "1").strip().lower() in ("0", "false", "no", "off"):
        return
    if _TARGET in sys.modules:
        _register()
    elif not any(isinstance(f, _GymnasiumFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _GymnasiumFinder())
