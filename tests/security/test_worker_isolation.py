"""Issue 23 item 4: the validation worker is a boundary: model-written code runs only under OS isolation,
and the verdict is computed by the parent from bounded, untrusted replies.

The code under test here skips the static check (``checks=SANDBOXED``): the point is what the worker's
isolation does with code that got past it.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from pathlib import Path

import pytest

from odyssey_gen.procedural import ProceduralAuthor
from odyssey_gen.spec import GameSpec, ValidationSettings
from odyssey_gen.validate import sandbox, validate
from tests.kit import bwrap_works

from .conftest import CORPUS

SANDBOXED = ("load", "execution", "reachability", "solvability")
SMALL = ValidationSettings(seeds=1, random_steps=40, oracle_budget=300, timeout=90, cpu_seconds=60, memory_mb=1024)


needs_bwrap = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap (bwrap) is not usable here; .ci/run installs it")


def _game(tmp_path: Path, rules: str) -> Path:
    folder = tmp_path / "tide"
    folder.mkdir()
    spec = GameSpec(theme="a drowned cathedral city", name="tide", seed=0, tutorial=False)
    for name, text in ProceduralAuthor(spec).files().items():
        (folder / name).write_text(text)
    (folder / "rules.py").write_text(rules)
    return folder


def _alive_with(marker: str) -> list[str]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        found.append(entry.name)
            except OSError:
                pass
    return found


@needs_bwrap
def test_code_under_test_cannot_write_out_read_secrets_connect_or_outlive_the_worker(tmp_path, sentinel, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent-secret-do-not-leak")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    accepted: list[bytes] = []
    stop = threading.Event()

    def listen() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append(conn.recv(100))
            conn.close()

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    orphan = f"odyssey-orphan-{uuid.uuid4().hex}"
    rules = (
        (CORPUS / "worker" / "escape_everything.txt")
        .read_text()
        .replace("@SENTINEL@", str(sentinel))
        .replace("@PORT@", str(server.getsockname()[1]))
        .replace("@ORPHAN@", orphan)
    )
    try:
        result = validate(_game(tmp_path, rules), SMALL, checks=SANDBOXED)
    finally:
        stop.set()
        thread.join(5)
        server.close()
    text = "\n".join(p.message + p.detail for p in result.problems)
    assert "NOTES" in text, text  # the payload ran, inside the sandbox, and said what it saw
    assert not sentinel.exists(), "wrote outside its temporary directory"
    assert "write refused" in text
    assert "sk-parent-secret" not in text, "read the parent's environment"
    assert "OPENAI_API_KEY" not in text
    assert accepted == [] and "connected" not in text.replace("connect refused", "")
    assert _alive_with(orphan) == [], "a child outlived the worker"
    assert not result.ok


@needs_bwrap
def test_a_forged_result_never_validates_a_game_whose_verb_always_raises(tmp_path):
    rules = (CORPUS / "worker" / "forged_result.txt").read_text()
    result = validate(_game(tmp_path, rules), SMALL, checks=SANDBOXED)
    assert not result.ok, "a forged result was believed"
    assert any("validation process" in p.message for p in result.problems), result.problems


@needs_bwrap
def test_what_is_read_from_the_worker_is_bounded(tmp_path):
    result = validate(_game(tmp_path, (CORPUS / "worker" / "flood.txt").read_text()), SMALL, checks=SANDBOXED)
    assert not result.ok
    assert any(f"{sandbox.MAX_REPLY_BYTES:,} bytes" in p.message for p in result.problems), result.problems


def test_without_isolation_model_written_code_is_refused_in_one_line(tmp_path, sentinel, monkeypatch):
    monkeypatch.setenv(sandbox.BWRAP_ENV, str(tmp_path / "no-bwrap-here"))
    rules = (CORPUS / "folders" / "pyc_payload.txt").read_text().replace("@SENTINEL@", str(sentinel))
    with pytest.raises(sandbox.SandboxUnavailable) as info:
        validate(_game(tmp_path, rules), SMALL, checks=SANDBOXED)
    message = str(info.value)
    assert "\n" not in message and "apt-get install bubblewrap" in message and "nothing was executed" in message
    assert not sentinel.exists()


def test_generate_refuses_before_any_model_call_without_isolation(tmp_path, monkeypatch, capsys):
    from odyssey_gen.cli import main

    monkeypatch.setenv(sandbox.BWRAP_ENV, str(tmp_path / "no-bwrap-here"))
    replay = tmp_path / "replies.json"
    replay.write_text("[]")
    code = main(
        [
            "a drowned city",
            "--name",
            "tide",
            "--out",
            str(tmp_path / "tide"),
            "--author",
            "llm",
            "--code",  # Python from a model: without --code it writes rules.json, which needs no isolation
            "--replay",
            str(replay),
            "--action-rules",
            "1",
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "bubblewrap" in err, err
    assert not (tmp_path / "tide").exists()


def test_data_only_candidates_need_no_isolation(tmp_path, monkeypatch):
    monkeypatch.setenv(sandbox.BWRAP_ENV, str(tmp_path / "no-bwrap-here"))
    folder = _game(tmp_path, "")
    (folder / "rules.py").unlink()
    assert validate(folder, SMALL).ok
