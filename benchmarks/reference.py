"""The reference engine (PyPI ``agentodyssey==0.1.0``) run from its wheel, in a subprocess, for side-by-side figures.

Comparisons against the reference implementation measure it in the same run as odyssey, never against
figures from another day. Its release is a wheel whose engine runs with three light dependencies
(gymnasium, termcolor, psutil) when its unpacked folder is on ``sys.path``; installing it would pull vllm
and diffusers. So this module:

* gets the wheel once into a cache folder (``pip download --no-deps``), or takes the one you give it
  (``wheel=`` / ``--wheel PATH`` / ``ODYSSEY_REFERENCE_WHEEL``, for offline use), and checks its SHA-256
  against PyPI's: the reference's code runs on this machine only from those exact bytes;
* unpacks it once into the cache;
* builds a private venv in the cache with the engine's three dependencies (gymnasium at the version this
  interpreter has, so both engines step on the same library), or uses the interpreter named by
  ``ODYSSEY_REFERENCE_PYTHON`` (one that already has them: for offline use);
* runs a *driver* script with that interpreter, its working folder the unpacked wheel and the wheel's
  top-level modules (``games``, ``utils``, ``tools``) importable. The driver is the caller's: it never
  imports odyssey, and odyssey never imports the reference.

The subprocess gets a minimal environment (``PATH``, ``HOME``, locale, temp folder): no API keys reach it,
which matters because the reference starts calling OpenAI for online world expansion when
``OPENAI_API_KEY`` is set. ``PYTHONHASHSEED`` is fixed (0 unless the caller says otherwise) because the
reference's world generation iterates over sets and is not reproducible without it.

Use from another benchmark (``benchmarks/`` on ``sys.path``, as a script in that folder has it)::

    import reference

    result = reference.run_json(reference.DRIVERS / "throughput.py", ["base", "2000", "0"])

A driver prints its result with ``refgame.emit(obj)`` (``benchmarks/reference_drivers/refgame.py``,
importable from every driver in that folder, which also builds a game's env: ``refgame.make_env``);
:func:`run_json` returns it. ``python benchmarks/reference.py`` prepares everything and steps each game
once, to check a machine (``--wheel PATH`` for an offline copy, ``--cache DIR``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from importlib import metadata
from pathlib import Path

__all__ = [
    "DRIVERS",
    "GAMES",
    "RESULT_PREFIX",
    "ReferenceUnavailable",
    "ensure_python",
    "ensure_tree",
    "ensure_wheel",
    "game_files",
    "run_driver",
    "run_json",
]

NAME, VERSION = "agentodyssey", "0.1.0"
WHEEL_NAME = f"{NAME}-{VERSION}-py3-none-any.whl"
#: SHA-256 of the wheel PyPI serves for agentodyssey 0.1.0.
WHEEL_SHA256 = "d849dd9d6ae48590aab76cad04ea7d2f65c52d96541c48a605a31e5c20b1ab94"
#: The reference's seven games, by its own names (``base`` lives in ``games/base``, the others in ``games/generated``).
GAMES = ("base", "remnant", "mark", "metropolis", "quarantine", "robot_kingdom", "saltglass")
#: Drivers shipped with the benchmarks; each runs inside the reference's interpreter.
DRIVERS = Path(__file__).resolve().parent / "reference_drivers"
#: The line prefix a driver's result is printed with (``refgame.emit``): the reference's own prints never start so.
RESULT_PREFIX = "ODYSSEY-REFERENCE-RESULT "
#: What the engine imports beyond the standard library; gymnasium is pinned to this interpreter's version.
EXTRA_REQUIREMENTS = ("termcolor==3.3.0", "psutil==7.2.2")
_ENV_KEPT = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TEMP", "TMP", "SYSTEMROOT")


class ReferenceUnavailable(RuntimeError):
    """The reference engine cannot be set up here; the message says why and what to pass instead."""


def cache_dir() -> Path:
    """``ODYSSEY_REFERENCE_CACHE``, else ``$XDG_CACHE_HOME/odyssey/reference`` (``~/.cache/...``)."""
    explicit = os.environ.get("ODYSSEY_REFERENCE_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "odyssey" / "reference"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def _locked(cache: Path) -> Iterator[None]:
    """One process at a time prepares the cache (two benchmarks started together must not both unpack)."""
    cache.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock, the atomic renames below still keep the cache whole
        yield
        return
    with (cache / ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_wheel(wheel: str | Path | None = None, cache: Path | None = None) -> Path:
    """The verified wheel: ``wheel`` (or ``ODYSSEY_REFERENCE_WHEEL``) if given, else the cached download.

    Downloads it (``pip download --no-deps``) on first use. A wheel whose SHA-256 is not PyPI's is refused.
    """
    cache = cache or cache_dir()
    given = wheel or os.environ.get("ODYSSEY_REFERENCE_WHEEL")
    if given:
        path = Path(given).expanduser()
        if not path.is_file():
            raise ReferenceUnavailable(f"reference wheel {path} does not exist")
    else:
        path = cache / WHEEL_NAME
        with _locked(cache):
            if not path.is_file():
                _download(cache)
    found = _sha256(path)
    if found != WHEEL_SHA256:
        raise ReferenceUnavailable(
            f"{path} is not PyPI's {NAME} {VERSION} wheel (SHA-256 {found}, expected {WHEEL_SHA256}); "
            "refusing to run its code"
        )
    return path


def _download(cache: Path) -> None:
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp, f"{NAME}=={VERSION}"]
        done = subprocess.run(command, capture_output=True, text=True)
        got = Path(tmp) / WHEEL_NAME
        if done.returncode != 0 or not got.is_file():
            said = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise ReferenceUnavailable(
                f"cannot download {NAME}=={VERSION} ({said}); pass --wheel PATH or set ODYSSEY_REFERENCE_WHEEL "
                "to a copy of the wheel"
            )
        os.replace(got, cache / WHEEL_NAME)


def ensure_tree(wheel: str | Path | None = None, cache: Path | None = None) -> Path:
    """The unpacked wheel (its ``games/``, ``assets/``, ``utils.py``...), unpacked once into the cache."""
    cache = cache or cache_dir()
    path = ensure_wheel(wheel, cache)
    tree = cache / f"{NAME}-{VERSION}-{WHEEL_SHA256[:12]}"
    with _locked(cache):
        if not (tree / "games" / "base" / "env.py").is_file():
            unpacking = Path(tempfile.mkdtemp(dir=cache, prefix=".unpacking-"))
            try:
                with zipfile.ZipFile(path) as archive:
                    archive.extractall(unpacking)  # zipfile drops absolute paths and ".." from member names
                shutil.rmtree(tree, ignore_errors=True)
                os.replace(unpacking, tree)  # whole or not at all: a killed unpack leaves no half tree
            finally:
                shutil.rmtree(unpacking, ignore_errors=True)
    return tree


def _requirements() -> list[str]:
    try:
        gymnasium = metadata.version("gymnasium")
    except metadata.PackageNotFoundError:  # a benchmark run from an interpreter without gymnasium
        gymnasium = None
    return [f"gymnasium=={gymnasium}" if gymnasium else "gymnasium", *EXTRA_REQUIREMENTS]


def ensure_python(cache: Path | None = None) -> Path:
    """An interpreter with the reference engine's dependencies: ``ODYSSEY_REFERENCE_PYTHON``, else a private
    venv built once in the cache (rebuilt when the pinned requirements change)."""
    explicit = os.environ.get("ODYSSEY_REFERENCE_PYTHON")
    if explicit:
        return Path(explicit).expanduser()
    cache = cache or cache_dir()
    venv = cache / f"venv-py{sys.version_info.major}{sys.version_info.minor}"
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    wanted = "\n".join(_requirements())
    stamp = venv / "odyssey-requirements.txt"
    with _locked(cache):
        if python.is_file() and stamp.is_file() and stamp.read_text() == wanted:
            return python
        shutil.rmtree(venv, ignore_errors=True)
        made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
        if made.returncode == 0:
            made = subprocess.run(
                [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *_requirements()],
                capture_output=True,
                text=True,
            )
        if made.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            said = (made.stderr.strip().splitlines() or ["no output"])[-1]
            raise ReferenceUnavailable(
                f"cannot build the reference's venv in {venv} ({said}); set ODYSSEY_REFERENCE_PYTHON to an "
                f"interpreter that has {', '.join(_requirements())}"
            )
        stamp.write_text(wanted)
    return python


def game_files(game: str, tree: Path) -> tuple[Path, Path]:
    """A reference game's world definition and initial env config inside the unpacked wheel."""
    if game not in GAMES:
        raise ValueError(f"unknown reference game {game!r}; its games are {', '.join(GAMES)}")
    where = "base" if game == "base" else f"generated/{game}"
    return (
        tree / "assets" / "world_definitions" / where / "default.json",
        tree / "assets" / "env_configs" / where / "initial.json",
    )


def _child_env(tree: Path, hash_seed: str) -> dict[str, str]:
    env = {key: os.environ[key] for key in _ENV_KEPT if key in os.environ}
    env["PYTHONPATH"] = os.pathsep.join([str(tree), str(DRIVERS)])
    env["PYTHONHASHSEED"] = hash_seed
    env["ODYSSEY_REFERENCE_TREE"] = str(tree)
    return env


def run_driver(
    script: str | Path,
    args: Sequence[str] = (),
    *,
    wheel: str | Path | None = None,
    cache: Path | None = None,
    timeout: float | None = None,
    hash_seed: str = "0",
) -> subprocess.CompletedProcess[str]:
    """Run ``script args...`` with the reference's interpreter, in its unpacked wheel; stdout and stderr captured.

    A fresh process each call (so each measurement starts cold, as the comparison asks). Raises
    :class:`ReferenceUnavailable` when the reference cannot be set up, ``subprocess.CalledProcessError``
    (stderr attached) when the driver fails, ``subprocess.TimeoutExpired`` past ``timeout``.
    """
    tree = ensure_tree(wheel, cache)
    python = ensure_python(cache)
    return subprocess.run(
        [str(python), str(Path(script).resolve()), *map(str, args)],
        cwd=tree,
        env=_child_env(tree, hash_seed),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )


def parse_result(stdout: str) -> object:
    """The object a driver emitted (the last line that starts with :data:`RESULT_PREFIX`)."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX) :])
    raise ValueError("the driver printed no result line (refgame.emit)")


def run_json(script: str | Path, args: Sequence[str] = (), **kwargs: object) -> object:
    """:func:`run_driver`, then the object the driver emitted."""
    return parse_result(run_driver(script, args, **kwargs).stdout)  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Prepare the reference engine and step each of its games once.")
    parser.add_argument("--wheel", help="a local copy of the agentodyssey 0.1.0 wheel (offline use)")
    parser.add_argument("--cache", type=Path, help="cache folder (default: ODYSSEY_REFERENCE_CACHE or ~/.cache/...)")
    parser.add_argument("games", nargs="*", default=list(GAMES))
    args = parser.parse_args(argv)
    try:
        tree = ensure_tree(args.wheel, args.cache)
        print(f"reference {NAME} {VERSION}: {tree}")
        print(f"interpreter: {ensure_python(args.cache)}")
        for game in args.games:
            result = run_json(DRIVERS / "throughput.py", [game, "20", "0"], wheel=args.wheel, cache=args.cache)
            print(f"{game}: 20 random steps in {result['cpu_s'] * 1000:.1f} ms CPU")  # type: ignore[index]
    except ReferenceUnavailable as exc:
        print(f"reference.py: {exc}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as exc:
        last = (exc.stderr or "").strip().splitlines()[-1:] or ["no output"]
        print(f"reference.py: the driver failed: {last[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
