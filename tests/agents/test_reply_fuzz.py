"""Whatever a model writes, the reply parser ends with an action or a reason, never an exception.

Hypothesis writes replies from the pieces that break parsers (braces, quotes, escapes, Python
literals, thinking tags, deep nesting, huge numbers) and from real JSON; the time bound lives in
``benchmarks/reply_parsing.py``, not here.
"""

from __future__ import annotations

import json
import re

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from odyssey_agents.llm.thinking import split_thinking
from odyssey_agents.prompting.reply import MAX_ACTION_CHARS, parse_choice, parse_reply

PIECES = st.sampled_from(
    [
        "{",
        "}",
        "[",
        "]",
        "(",
        ")",
        '"',
        "'",
        "\\",
        ":",
        ",",
        " ",
        "\n",
        "“",
        "”",
        '"action"',
        '"reasoning"',
        "'action'",
        '"look"',
        "look",
        "true",
        "null",
        "None",
        "1e999",
        "9" * 5000,
        "<think>",
        "</think>",
        "<THINK>",
        "[1]",
        "{1, 2}",
        "(1, 2)",
        "b'x'",
        "...",
        "\x00",
        "é",
        "🙂",
        '{"action": "wait"}',
        "{'action': 'wait',}",
        '"action": "enter reed_marsh"',
    ]
)
SOUP = st.lists(PIECES | st.text(max_size=8), max_size=60).map("".join)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def _check(text: str) -> None:
    reply = parse_reply(text)
    if reply.ok:
        assert isinstance(reply.action, str) and 0 < len(reply.action) <= MAX_ACTION_CHARS
        assert reply.action == " ".join(reply.action.split())
    else:
        assert isinstance(reply.error, str) and reply.error and reply.action == ""
    for key in ("reasoning", "action", "memory"):
        assert isinstance(reply.text(key), str)
    choice = parse_choice(text, 4, ["a", "b", "c", "d"])
    assert choice is None or 0 <= choice < 4


@settings(max_examples=400, deadline=None)
@given(SOUP)
def test_any_soup_of_parser_breakers_ends_as_an_action_or_a_reason(text):
    _check(text)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=5), SOUP, SOUP)
def test_any_json_object_with_prose_around_it(obj, before, after):
    _check(before + json.dumps(obj) + after)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40).filter(lambda a: a.strip()), SOUP)
def test_a_clean_object_gives_its_action_whatever_follows(action, after):
    text = json.dumps({"reasoning": "r", "action": action}) + after
    reply = parse_reply(text)
    if len(" ".join(action.split())) <= MAX_ACTION_CHARS and reply.ok:
        assert reply.action  # cleaned (quotes, bullets) but never lost
    assert reply.ok or reply.error


def test_replies_that_used_to_raise():
    """Each of these raised (TypeError, RecursionError) before; each now ends as an action."""
    for text in (
        '{"reasoning":"ok","action":"look",[1]:2}',  # unhashable key through ast.literal_eval
        '{"action": "look", "r": ' + "[" * 100_000 + "]" * 100_000 + "}",  # nesting past the recursion limit
        "{'action': 'look', 'reasoning': {(1, 2): 3}}",  # a key JSON cannot hold
        "{'action': 'look', 'reasoning': {1, 2}}",  # a set
        '{"action": "look", "n": 1' + "0" * 5000 + "}",  # an integer over Python's digit limit
    ):
        reply = parse_reply(text)
        assert reply.ok and reply.action == "look", (text[:60], reply.error)
        assert isinstance(reply.text("reasoning"), str)


def _split_thinking_by_regex(text: str) -> tuple[str, str | None]:
    """The former regex implementation (quadratic on many unclosed tags): the walk must agree with it."""
    block = re.compile(r"<think>(.*?)</think>", re.DOTALL | re.IGNORECASE)
    thoughts = [m.strip() for m in block.findall(text)]
    answer = block.sub("", text)
    close = re.search(r"</think>", answer, re.IGNORECASE)
    if close:
        thoughts.insert(0, answer[: close.start()].strip())
        answer = answer[close.end() :]
    opened = re.search(r"<think>", answer, re.IGNORECASE)
    if opened:
        thoughts.append(answer[opened.end() :].strip())
        answer = answer[: opened.start()]
    if not thoughts:
        return text, None
    return answer.strip(), "\n".join(t for t in thoughts if t)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(["<think>", "</think>", "<Think>", "a", " b ", "\n", "{}", "<", "think>"]), max_size=12
    ).map("".join)
)
def test_split_thinking_agrees_with_the_regex_version(text):
    # Where removing a block joins its neighbours into a tag that the reply never had
    # ('<<think></think>think>'), the regex version reads that new tag; the walk reads the reply as written.
    block, tag = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE), re.compile(r"</?think>", re.IGNORECASE)
    assume(len(tag.findall(block.sub("", text))) == len(tag.findall(block.sub("\x00", text))))
    assert split_thinking(text) == _split_thinking_by_regex(text)


def test_split_thinking_reads_tags_as_written():
    assert split_thinking("<<think></think>think>") == ("<think>", "")
