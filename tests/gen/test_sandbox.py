"""Validation of generated code in the sandbox: limits stop runaway rules, every failure is reported.

Each test writes a small procedural game plus a hand-written ``rules.py`` (the kind of thing a model
might produce) and runs the checks on it. The static allow-list is skipped here where the point is
what the sandbox does with code that got past it.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from odyssey_gen.spec import ValidationSettings
from odyssey_gen.validate import validate

from .conftest import build, needs_bwrap, spec

pytestmark = needs_bwrap  # model-written code runs only under OS isolation

HEADER = """
from dataclasses import dataclass

from odyssey_env.rules import ActionRule, StepRule, action_rule, step_rule
from odyssey_env.world import add
"""

SMALL = ValidationSettings(seeds=1, random_steps=150, oracle_budget=400, timeout=60, cpu_seconds=30, memory_mb=512)
SANDBOXED = ("load", "execution", "reachability", "solvability")


@pytest.fixture
def game(tmp_path) -> Path:
    folder = tmp_path / "tide"
    folder.mkdir()
    for name, text in build(spec(seed=0, tutorial=False)).items():
        (folder / name).write_text(text)
    return folder


def with_rules(folder: Path, body: str) -> Path:
    (folder / "rules.py").write_text(HEADER + body)
    return folder


def step_rule(body: str, name: str = "surge") -> str:
    return f'''
@step_rule
class Surge(StepRule):
    name = "{name}"
    after = ("respawn",)
    description = "The tide surges."

    def apply(self, engine):
{body}
'''


def test_an_endless_loop_is_stopped_by_the_cpu_limit(game):
    with_rules(game, step_rule("        while True:\n            pass"))
    settings = ValidationSettings(seeds=1, random_steps=50, cpu_seconds=2, timeout=60)
    start = time.perf_counter()
    result = validate(game, settings, checks=SANDBOXED)
    assert time.perf_counter() - start < 30
    (problem,) = result.problems
    assert problem.check == "execution" and "CPU-time limit of 2 s" in problem.message
    assert problem.owner == "rules"


def test_an_endless_loop_is_stopped_by_the_wall_clock(game):
    with_rules(game, step_rule("        while True:\n            pass"))
    settings = ValidationSettings(seeds=1, random_steps=50, cpu_seconds=600, timeout=3)
    start = time.perf_counter()
    result = validate(game, settings, checks=SANDBOXED)
    assert time.perf_counter() - start < 20
    (problem,) = result.problems
    assert "wall-clock limit of 3 s" in problem.message and problem.check == "execution"


def test_a_memory_bomb_is_stopped_by_the_memory_limit(game):
    with_rules(game, step_rule("        hoard = []\n        while True:\n            hoard.append('x' * 10_000_000)"))
    settings = ValidationSettings(seeds=1, random_steps=50, memory_mb=400, timeout=60)
    result = validate(game, settings, checks=SANDBOXED)
    (problem,) = result.problems
    assert "memory limit" in problem.message and problem.check == "execution"


def test_a_rule_that_raises_is_reported_with_its_traceback(game):
    with_rules(game, step_rule("        if engine.state.step == 7:\n            raise KeyError('tide table')"))
    result = validate(game, SMALL, checks=SANDBOXED)
    (problem,) = result.problems
    assert problem.check == "execution" and problem.owner == "rules"
    assert "seed 0, step 6" in problem.message and "KeyError: 'tide table'" in problem.message
    assert "rules.py" in problem.detail and "Traceback" in problem.detail


def test_a_rule_that_breaks_the_state_is_caught(game):
    with_rules(game, step_rule("        engine.state.areas[engine.state.spawn].npcs.append('ghost_of_nobody')"))
    result = validate(game, SMALL, checks=SANDBOXED)
    (problem,) = result.problems
    assert problem.message.startswith("invalid state (seed 0, step 0") and "ghost_of_nobody" in problem.message


def test_runaway_growth_is_caught(game):
    with_rules(
        game,
        step_rule(
            "        for area in engine.state.areas.values():\n"
            "            for name in list(area.objects)[:1]:\n"
            "                add(area.objects, name, 5)"
        ),
    )
    result = validate(game, ValidationSettings(seeds=1, random_steps=300, timeout=60), checks=SANDBOXED)
    assert any("runaway world growth" in p.message for p in result.problems), result.problems


UNSOUND_VERB = """
@action_rule
class Chant(ActionRule):
    verb = "chant"
    description = "Chant to the tide."

    def apply(self, turn):
        return turn.fail("The tide does not listen.")

    def candidates(self, turn):
        yield "chant"
"""

HIDDEN_VERB = """
@action_rule
class Chant(ActionRule):
    verb = "chant"
    description = "Chant to the tide."

    def apply(self, turn):
        turn.say("I chant.")

    def candidates(self, turn):
        return ()
"""


def test_a_valid_action_that_fails_is_unsound(game):
    result = validate(with_rules(game, UNSOUND_VERB), SMALL, checks=SANDBOXED)
    (problem,) = result.problems
    assert "unsound valid action" in problem.message and "'chant'" in problem.message
    assert problem.detail.startswith("The tide does not listen.") and problem.owner == "rules"


def test_new_rules_must_be_reachable(game):
    body = HIDDEN_VERB + step_rule("        return None", name="idle_tide")
    result = validate(with_rules(game, body), SMALL, checks=SANDBOXED)
    messages = [p.message for p in result.problems]
    assert all(p.check == "reachability" for p in result.problems)
    assert any("new verb 'chant' never appeared among the valid actions" in m for m in messages)
    assert any("new step rule 'idle_tide' never changed anything" in m for m in messages)


def test_reachable_new_rules_pass_and_are_reported(game):
    body = """
@action_rule
class Chant(ActionRule):
    verb = "chant"
    description = "Chant to the tide; it answers with a coin now and then."

    def apply(self, turn):
        turn.say("I chant.")
        turn.emit("chanted")

    def candidates(self, turn):
        yield "chant"
""" + step_rule(
        "        if engine.state.step % 10 == 0:\n"
        "            for agent in engine.state.agents:\n"
        "                engine.say(agent, 'The tide surges.')"
    )
    result = validate(with_rules(game, body), SMALL)
    assert result.ok, result.problems
    assert result.stats["new_rules"] == {"verbs": ["chant"], "step_rules": ["surge"], "predicates": []}
    assert result.stats["execution"]["new_step_rules_fired"]["surge"] >= 1


def test_the_sandbox_runs_with_a_clean_environment_and_its_own_folder(game, monkeypatch):
    """The worker sees no variable of ours, and a copy of the game, not the folder itself."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-do-not-leak")
    body = step_rule("        raise RuntimeError(repr(sorted(engine.game.spec.game.name)))")
    result = validate(with_rules(game, body), SMALL, checks=SANDBOXED)
    (problem,) = result.problems
    assert "sk-secret" not in problem.detail + problem.message
    from odyssey_gen.validate import sandbox

    env_seen = {}

    class Spy:
        def __init__(self, *args, env=None, cwd=None, **kwargs):
            env_seen.update(env=env, cwd=cwd)
            raise OSError("stop here")

    monkeypatch.setattr(sandbox.subprocess, "Popen", Spy)
    with pytest.raises(OSError):
        sandbox.run_checks(game, ["load"], SMALL)
    assert "OPENAI_API_KEY" not in env_seen["env"] and env_seen["env"]["PYTHONHASHSEED"] == "0"
    assert Path(env_seen["cwd"]) != game.parent and not str(env_seen["cwd"]).startswith(str(game))


def test_the_static_check_runs_first_and_nothing_else_runs(game):
    with_rules(game, "import os\n" + step_rule("        os.system('touch /tmp/odyssey-pwned')"))
    result = validate(game, SMALL)
    assert result.ran == ["static"]
    assert result.problems[0].message.startswith("rules.py line 6: import os is not allowed")


def test_the_sandbox_works_from_a_checkout_that_lives_under_tmp(game, tmp_path):
    """The sandbox's own ``/tmp`` must not hide a checkout or venv kept there (a CI clone under /tmp did)."""
    import shutil
    import subprocess
    import sys

    from odyssey_gen.validate import sandbox

    checkout = tmp_path / "checkout"
    for name in sandbox.PACKAGES:
        shutil.copytree(sandbox.ROOT / name, checkout / name, ignore=shutil.ignore_patterns("__pycache__"))
    with_rules(game, step_rule("        pass"))
    script = (
        "import sys\nfrom odyssey_gen.validate import sandbox, validate\n"
        "from odyssey_gen.spec import ValidationSettings\n"
        f"assert str(sandbox.ROOT) == {str(checkout)!r}, sandbox.ROOT\n"
        "settings = ValidationSettings(seeds=1, random_steps=20, oracle_budget=400, timeout=60, cpu_seconds=30)\n"
        f"result = validate({str(game)!r}, settings, checks=('load', 'execution'))\n"
        "print([(p.check, p.message[:300]) for p in result.problems]); sys.exit(0 if result.ok else 1)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(checkout)}
    run = [sys.executable, "-c", script]
    done = subprocess.run(run, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
