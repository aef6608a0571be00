"""Every user mistake is one line and a non-zero exit, never a traceback: a user's mistake must
name what to fix, and a traceback names only where the code broke.

The commands run as a user types them, in a subprocess, so the exit code and everything printed are
what a person would see. Keys given in configs are refused without being repeated or written.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from odyssey_agents.errors import ConfigError, OdysseyError
from odyssey_agents.llm import LLMConfigError, LLMError, MissingExtra
from odyssey_agents.paradigms import AgentConfigError
from odyssey_agents.registry import AgentUnavailable
from odyssey_eval.rundir import RunDirError
from odyssey_eval.runner import RunError, run_cell

from .conftest import cell, quiet

SECRET = "sk-test-DO-NOT-LEAK-0123456789"
QUICK = ["max_steps=3", "eval.qa.enabled=false", "eval.progress=false"]


def odyssey(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    full.update({"HF_HUB_OFFLINE": "1", **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "odyssey_eval.cli", *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
    )


def one_line(done: subprocess.CompletedProcess, command: str = "run") -> str:
    """The single line a failed command printed (stdout may hold progress lines, never a traceback)."""
    assert done.returncode not in (0, 1), (done.returncode, done.stderr[-2000:])  # 1: Hydra's own error exit
    assert "Traceback" not in done.stderr + done.stdout, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"odyssey {command}: "), lines[0]
    return lines[0]


def test_every_config_error_shares_one_base_class():
    for cls in (LLMConfigError, AgentConfigError):
        assert issubclass(cls, ConfigError)
    from odyssey_eval.factory import ConfigError as EvalConfigError

    assert EvalConfigError is ConfigError
    for cls in (ConfigError, LLMError, MissingExtra, AgentUnavailable, RunDirError, RunError):
        assert issubclass(cls, OdysseyError)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once the socket is closed


CASES = {
    "agent without llm": (["agent=long_context"], "this agent needs a language model"),
    "seed=abc": (["seed=abc"], "seed must be a whole number, got 'abc'"),
    "memory_size=0": (
        ["agent=short_term_memory", "llm=scripted", "agent.memory_size=0"],
        "memory_size must be at least 1, got 0",
    ),
    "+llm.bogus": (["agent=no_memory", "llm=scripted", "+llm.bogus=1"], "has no option(s) bogus"),
    "max_step": (["max_step=5"], "there is no setting max_step (did you mean max_steps?)"),
    "agent.memory_sz": (["agent=short_term_memory", "agent.memory_sz=3"], "did you mean agent.memory_size?"),
    "agent=nope": (["agent=randon"], "there is no agent config 'randon' (did you mean agent=random?)"),
    "tutorial=maybe": (["tutorial=maybe"], "tutorial must be true or false"),
    "max_steps=0": (["max_steps=0"], "max_steps must be at least 1"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_config_mistakes_are_one_line(tmp_path, case):
    args, expected = CASES[case]
    line = one_line(odyssey("run", *QUICK, *args, cwd=tmp_path))
    assert expected in line
    assert not (tmp_path / "runs" / "mossfall").exists()  # a refused cell leaves nothing behind


def test_openai_without_a_key(tmp_path):
    pytest.importorskip("openai")
    line = one_line(odyssey("run", "agent=no_memory", "llm=openai", *QUICK, cwd=tmp_path))
    assert "no API key: set OPENAI_API_KEY" in line


def test_openai_without_the_openai_package(tmp_path, monkeypatch):
    from odyssey_env.extras import install_command

    fake = tmp_path / "no_openai"
    fake.mkdir()
    (fake / "openai.py").write_text("raise ModuleNotFoundError(\"No module named 'openai'\", name='openai')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(fake), os.environ.get("PYTHONPATH", "")]), "OPENAI_API_KEY": "x"}
    line = one_line(odyssey("run", "agent=no_memory", "llm=openai", *QUICK, cwd=tmp_path, env=env))
    monkeypatch.chdir(tmp_path)  # the install command is worded for where the user stands
    assert "needs the Python package 'openai'" in line and install_command("api") in line


def test_an_unreachable_server_is_one_line_after_its_retries_and_the_cell_resumes(tmp_path):
    pytest.importorskip("openai")
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    args = [
        "agent=no_memory",
        "llm=openai",
        f"llm.base_url={url}",
        "llm.max_retries=1",
        "llm.timeout=5",
        "max_steps=3",
        "eval.progress=false",
    ]
    line = one_line(odyssey("run", *args, cwd=tmp_path))
    assert re.search(r"failed \d+ times in \d+ s", line) and url in line
    assert "run the same command again to resume from step 0" in line
    (cell_json,) = (tmp_path / "runs").rglob("cell.json")  # started (the before-play QA asked the model)
    assert not (cell_json.parent / "results.json").exists()


def test_an_output_dir_that_cannot_be_written(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    line = one_line(odyssey("run", *QUICK, f"eval.output_dir={blocker}/runs", cwd=tmp_path))
    assert "cannot write" in line and "eval.output_dir" in line


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="permissions do not bind root")
@pytest.mark.parametrize("what", ["output dir", "run dir"])
def test_a_read_only_output_or_run_directory(tmp_path, what):
    runs = tmp_path / "runs"
    if what == "run dir":  # an unfinished cell's own directory made read-only
        run_dir = runs / "mossfall" / "random" / "none" / "seed_0"
        run_dir.mkdir(parents=True)
        run_dir.chmod(0o555)
    else:
        runs.mkdir()
        runs.chmod(0o555)
    try:
        line = one_line(odyssey("run", *QUICK, cwd=tmp_path))
    finally:
        for p in (runs, runs / "mossfall" / "random" / "none" / "seed_0"):
            if p.exists():
                p.chmod(0o755)
    assert "cannot write" in line and "Permission denied" in line


def test_unwritable_places_are_one_line_in_python_too(tmp_path, monkeypatch):
    """The same conversion without relying on file permissions (tests may run as root)."""
    import odyssey_eval.rundir as rundir

    real = rundir.os.open

    def refuse(path, *args, **kwargs):  # only the run directory: the game's files are read with os.open too
        if str(path).startswith(str(tmp_path)):
            raise PermissionError(13, "Permission denied", str(tmp_path / "runs"))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(rundir.os, "open", refuse)
    with pytest.raises(RunDirError, match=r"cannot write .*: Permission denied; choose another eval\.output_dir"):
        run_cell(cell(tmp_path, max_steps=3, qa={"enabled": False}), log=quiet)


def test_a_bug_keeps_its_traceback(tmp_path):
    """Only user errors are shortened: anything else must stay debuggable."""
    code = (
        "import sys; import odyssey_eval.report as r\n"
        "r.main = lambda argv: 1 / 0\n"
        "from odyssey_eval.cli import main; sys.exit(main(['report', '.']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "ZeroDivisionError" in done.stderr and "Traceback" in done.stderr


# ---------------------------------------------------------------------------- odyssey challenge
def _finished_runs(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    run_cell(cell(runs, max_steps=5, qa={"enabled": False}), log=quiet)
    run_cell(
        cell(
            runs,
            game={"name": "quiet_bell", "path": None},
            agent={"name": "random", "seed": 3},
            max_steps=5,
            qa={"enabled": False},
            eval={"tag": "other"},
        ),
        log=quiet,
    )
    return runs


def test_challenge_with_an_unknown_game_is_an_error(tmp_path):
    runs = _finished_runs(tmp_path)
    line = one_line(odyssey("challenge", str(runs), "--games", "nope", cwd=tmp_path), "challenge")
    assert "no game 'nope'" in line and "the runs played: mossfall, quiet_bell" in line


def test_challenge_does_not_rank_agents_without_runs_of_the_games(tmp_path):
    runs = _finished_runs(tmp_path)
    done = odyssey("challenge", str(runs), "--games", "quiet_bell", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [t["submission"] for t in out["ranking"]] == ["random [other]"]
    assert out["unranked"] == ["random"]
    done = odyssey("challenge", str(runs), "--games", "quiet_bell", cwd=tmp_path)
    assert "not ranked: random (no runs of quiet_bell)" in done.stdout
    rows = [line for line in done.stdout.splitlines() if re.match(r"\s*\d+\s\s", line)]
    assert len(rows) == 1 and "random [other]" in rows[0]


# ---------------------------------------------------------------------------- keys (item 2)
def test_a_key_on_the_command_line_is_refused_unprinted_and_unwritten(tmp_path):
    for args in (
        ["agent=no_memory", "llm=scripted", f"+llm.api_key={SECRET}"],
        ["-m", "agent=no_memory", "llm=scripted", f"+llm.api_key={SECRET}", "seed=0,1"],
        ["agent=no_memory", "llm=scripted", f"+llm.extra_body.token={SECRET}"],
    ):
        done = odyssey("run", *QUICK, *args, cwd=tmp_path)
        line = one_line(done)
        assert "api_key_env" in line and "keys are not taken from configs" in line
        assert SECRET not in done.stdout + done.stderr
        assert not (tmp_path / "runs").exists()


def test_a_key_in_a_config_file_is_refused_before_anything_is_written(tmp_path):
    conf = tmp_path / "conf" / "llm"
    conf.mkdir(parents=True)
    (conf / "mine.yaml").write_text(f"name: scripted\napi_key: {SECRET}\n")
    for flag, seeds in (([], "seed=0"), (["-m"], "seed=0,1")):
        done = odyssey(
            "run",
            *flag,
            "--config-dir",
            str(tmp_path / "conf"),
            "agent=no_memory",
            "llm=mine",
            seeds,
            *QUICK,
            cwd=tmp_path,
        )
        line = one_line(done)
        assert "llm.api_key" in line and SECRET not in done.stdout + done.stderr
        written = [p for p in tmp_path.rglob("*") if p.is_file() and SECRET in p.read_text(errors="replace")]
        assert written == [conf / "mine.yaml"]


def test_a_key_given_to_run_cell_is_refused_before_the_run_directory_is_touched(tmp_path):
    first = run_cell(
        cell(tmp_path, agent={"name": "no_memory"}, llm={"name": "scripted"}, max_steps=3, qa={"enabled": False}),
        log=quiet,
    )
    before = {p: p.read_bytes() for p in first.path.rglob("*") if p.is_file()}
    with pytest.raises(LLMConfigError) as info:  # this cell's directory exists: no "different run" echo either
        run_cell(
            cell(
                tmp_path,
                agent={"name": "no_memory"},
                llm={"name": "scripted", "password": SECRET},
                max_steps=3,
                qa={"enabled": False},
            ),
            log=quiet,
        )
    assert SECRET not in str(info.value) and "llm.password" in str(info.value)
    assert {p: p.read_bytes() for p in first.path.rglob("*") if p.is_file()} == before


def test_key_like_names_and_harmless_names():
    from odyssey_agents.llm.factory import secret_settings

    cfg = {
        "name": "openai",
        "api_key": "a",
        "apikey": "b",
        "hf_token": "c",
        "client_secret": "d",
        "password": "e",
        "extra_body": {"Authorization": "f", "key": "g"},
        "api_key_env": "MY_VAR",
        "max_tokens": 5,
        "token_param": "auto",
        "json_keys": ["x"],
        "monkey": 1,
        "base_url": "http://x",
    }
    assert sorted(secret_settings(cfg)) == [
        "llm.api_key",
        "llm.apikey",
        "llm.client_secret",
        "llm.extra_body.Authorization",
        "llm.extra_body.key",
        "llm.hf_token",
        "llm.password",
    ]


def test_a_failed_cell_of_a_sweep_is_named_and_the_others_run(tmp_path):
    done = odyssey("run", "-m", "agent=random,long_context", *QUICK, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    ours = [line for line in done.stderr.splitlines() if line.startswith("odyssey run: ")]
    assert len(ours) == 2
    assert ours[0].startswith("odyssey run: cell agent=long_context") and "needs a language model" in ours[0]
    assert "the sweep did not complete" in ours[1]
    assert (tmp_path / "runs" / "mossfall" / "random" / "none" / "seed_0" / "results.json").is_file()
