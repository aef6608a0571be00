"""The static allow-list over generated rules.py: escape attempts are refused with their line, honest rules pass."""

from __future__ import annotations

import textwrap

import pytest

from odyssey_gen.validate.static import check_source

GOOD = '''
"""Tides: a verb to bail water and a step rule that floods the lowest area at night."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.rules import ActionRule, Fact, StepRule, action_rule, predicate, step_rule
from odyssey_env.world import add, carried_count, take_carried

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.turn import Turn

FLOOD_HOUR = 2


@action_rule
class Bail(ActionRule):
    verb = "bail"
    params = (("area_name", "area"),)
    description = "Bail water out of a flooded neighbouring area with a bucket in hand."

    def apply(self, turn: Turn, target: str) -> None:
        memory = turn.state.rule_data.setdefault("tides", {"flooded": []})
        if target not in memory["flooded"] or target not in turn.area.exits:
            return turn.fail(f"Cannot bail {target}: it is not a flooded neighbouring area.")
        memory["flooded"].remove(target)
        turn.say(f"I bailed {target} dry.")
        turn.emit("area_bailed", area=target)

    def candidates(self, turn: Turn):
        memory = turn.state.rule_data.get("tides", {"flooded": []})
        for name in sorted(turn.area.exits):
            if name in memory["flooded"]:
                yield f"bail {name}"

    def facts(self, game):
        yield Fact("tides", "What does bailing do?", "dries a flooded area", ("nothing", "floods it"))


@step_rule
class Tides(StepRule):
    name = "tides"
    after = ("respawn",)
    description = "At night the lowest area floods; its neighbours may bail it out."

    @dataclass(frozen=True)
    class Params:
        hour: int = FLOOD_HOUR

        def __post_init__(self) -> None:
            if not 0 <= self.hour < 24:
                raise ValueError(f"hour: {self.hour} is not an hour of the day")

    def apply(self, engine: Engine) -> None:
        memory = engine.state.rule_data.setdefault(self.name, {"flooded": []})
        if (engine.state.minute // 60) % 24 != self.settings.hour:
            return
        lowest = min(engine.state.areas.values(), key=lambda a: (a.level, a.name))
        if lowest.name not in memory["flooded"] and engine.rng.random() < math.sqrt(0.25):
            memory["flooded"].append(lowest.name)
            add(lowest.objects, "coin", 1)
            for agent_id in engine.state.agents:
                engine.say(agent_id, f"Water rises in {lowest.name}.")


@predicate("holds_two")
def holds_two(engine, agent, object: str) -> bool:
    return carried_count(engine.game, engine.state, agent, object) >= 2
'''


def test_honest_rules_pass():
    assert check_source(GOOD) == []


ESCAPES = [
    ("import os", "import os"),
    ("import subprocess", "import subprocess"),
    ("import sys", "import sys"),
    ("import socket", "import socket"),
    ("import builtins", "import builtins"),
    ("import ctypes", "import ctypes"),
    ("import importlib", "import importlib"),
    ("from importlib import import_module", "from importlib import"),
    ("from os import system", "from os import"),
    ("from os.path import join", "from os.path import"),
    ("import random", "import random"),
    ("from random import choice", "from random import"),
    ("from math import *", "import *"),
    ("from . import x", "relative imports"),
    ("import odyssey_env.world as w", "import odyssey_env.world"),
    ("from odyssey_env import world", "from odyssey_env import"),
    ("from odyssey_env.game import GAMES_DIR", "from odyssey_env.game import GAMES_DIR"),
    ("from odyssey_env.trust import trust", "from odyssey_env.trust import"),
    ("def f():\n    __import__('os').system('x')", "'__import__'"),
    ("def f():\n    eval('1 + 1')", "'eval'"),
    ("def f():\n    exec('x = 1')", "'exec'"),
    ("def f():\n    compile('1', 'f', 'eval')", "'compile'"),
    ("def f():\n    open('/etc/passwd').read()", "'open'"),
    ("def f(x):\n    getattr(x, 'cl' + 'ass')", "'getattr'"),
    ("def f(x):\n    setattr(x, 'a', 1)", "'setattr'"),
    ("def f(x):\n    delattr(x, 'a')", "'delattr'"),
    ("def f():\n    globals()['x'] = 1", "'globals'"),
    ("def f():\n    locals()", "'locals'"),
    ("def f(x):\n    vars(x)", "'vars'"),
    ("def f(x):\n    dir(x)", "'dir'"),
    ("def f():\n    breakpoint()", "'breakpoint'"),
    ("def f():\n    input()", "'input'"),
    ("def f():\n    type('X', (), {})", "'type'"),
    ("def f(x):\n    return id(x)", "'id'"),
    ("def f(x):\n    return hash(x)", "'hash'"),
    ("def f():\n    return __builtins__", "'__builtins__'"),
    ("def f():\n    return __loader__", "'__loader__'"),
    ("def f(x):\n    return x.__class__", ".__class__"),
    ("def f(x):\n    return x.__class__.__mro__[1].__subclasses__()", ".__subclasses__"),
    ("def f():\n    return ().__class__.__base__.__subclasses__()", ".__class__"),
    ("def f():\n    return (lambda: 0).__globals__", ".__globals__"),
    ("def f(x):\n    return x.__dict__", ".__dict__"),
    ("def f(x):\n    return x._private", "._private"),
    ("def f():\n    g = (i for i in [])\n    return g.gi_frame.f_globals['os']", ".gi_frame"),
    ("def f(x):\n    return x.f_back", ".f_back"),
    ("def f(x):\n    return type_of.mro()", ".mro"),
    ("def f(x):\n    return '{0.__class__}'.format(x)", "'{0.__class__}'"),
    ("def f(x):\n    return '{0.a}'.format(x)", ".format"),
    ("def f(x):\n    return '{0}'.format_map(x)", ".format_map"),
    ("def f(x):\n    return f'{x.__class__.__init__}'", ".__class__"),
    ("def f(x):\n    return x['__builtins__']", "'__builtins__'"),
    ("def f(turn):\n    turn.game.path.write_text('owned')", ".path"),
    ("def f(turn):\n    return turn.engine.save_state()", ".save_state"),
    ("def f(x):\n    return x.system('ls')", ".system"),
    ("def f(x):\n    return x.popen('ls')", ".popen"),
    ("x = 0\ndef f():\n    global x\n    x = 1", "global"),
    ("def f():\n    x = 0\n    def g():\n        nonlocal x\n        x = 1", "nonlocal"),
    ("async def f():\n    pass", "asyncfunctiondef"),
    ("class M(type):\n    pass", "class M(type)"),
    ("class X(metaclass=abc):\n    pass", "metaclass"),
    ("class X(object):\n    pass", "class X(object)"),
    ("class X:\n    def __init__(self):\n        pass", "def __init__"),
    ("class X:\n    def __getattr__(self, name):\n        pass", "def __getattr__"),
    ("while True:\n    pass", "while at module level"),
    ("for i in range(10**9):\n    pass", "for at module level"),
    ("print('hi')", "expr at module level"),
    ("X = [0] * 10**10", "a call at module level") if False else ("X = sorted(range(10))", "a call at module level"),
    ("try:\n    import os\nexcept ImportError:\n    pass", "try at module level"),
    ("def f():\n    open = 1\n    return open", "'open'"),
    ("def f(x):\n    return x.__getattribute__('a')", ".__getattribute__"),
    ("def f():\n    return memoryview(b'x')", "'memoryview'"),
    ("def f():\n    return exit()", "'exit'"),
    ("def f():\n    return super().apply", "'super'"),
    ("def f(engine):\n    return engine.rules.predicates['did'].__code__", ".__code__"),
    ("x = '\u00e9'", "printable ASCII"),
    ("def f(:\n    pass", "does not parse"),
]


@pytest.mark.parametrize(("source", "expected"), ESCAPES, ids=[s.split("\n")[-1][:40] for s, _ in ESCAPES])
def test_escape_attempts_are_refused_with_their_line(source, expected):
    found = check_source(textwrap.dedent(source))
    text = "\n".join(str(r) for r in found)
    assert found, f"accepted: {source!r}"
    assert expected in text, text
    assert all(str(r).startswith("rules.py line ") for r in found)


def test_a_rejection_names_the_line_and_the_construct():
    source = "from odyssey_env.rules import StepRule\n\n\ndef f(x):\n    return x.__class__\n"
    (rejection,) = check_source(source)
    assert rejection.line == 5 and ".__class__" in rejection.construct
    assert str(rejection) == (
        "rules.py line 5: the attribute .__class__ is not allowed: private and dunder attributes are off limits"
    )


def test_a_step_rule_with_a_priority_is_refused_with_the_way_to_place_it():
    source = GOOD.replace('    after = ("respawn",)\n', "    priority = 45\n")
    (rejection,) = check_source(source)
    assert source.splitlines()[rejection.line - 1] == "    priority = 45"
    assert "step rules have no priority: place one with after = (...) / before = (...)" in str(rejection)


def test_names_the_file_defines_may_be_used_as_attributes():
    source = GOOD + "\n\ndef helper(rule):\n    return rule.settings.hour + FLOOD_HOUR\n"
    assert check_source(source) == []
    assert check_source("def f(x):\n    return x.undefined_thing\n")  # neither API nor defined here
