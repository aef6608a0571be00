"""The trajectory file: one JSON line per step, appended and flushed as the run goes.

Line 0 is the reset (the first observation); line ``t`` is step ``t``: the command, what the agent
said about it, and what came back (observation, reward breakdown, invalid/failed flags, events,
area and game time after the step). ``tutorial`` says whether the command was chosen inside the
tutorial; metrics leave those steps out and report them apart. Lines are sparse (see
:func:`step_record`). Nothing here holds the world state: lines stay small and the file grows
linearly with the number of steps.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from odyssey_agents.base import Decision

__all__ = [
    "FORMAT",
    "JsonlWriter",
    "Trajectory",
    "TrajectoryError",
    "json_bytes",
    "read_trajectory",
    "reset_record",
    "step_record",
]

FORMAT = 1
# The reward breakdown of a step that earned nothing: odyssey_env.rewards.COMPONENTS, written out so that
# reading trajectories does not import the env (a test keeps the two equal; were they to differ, steps
# would only take the slower path to the same line).
_NO_REWARD = dict.fromkeys(("quest", "side_quest", "exploration", "craft", "defeat", "trade", "death"), 0)


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _make_dumps() -> Callable[[Any], str]:
    """Compact JSON, as ``json.dumps(obj, separators=(",", ":"))`` writes it, as cheaply as possible.

    Encoding is most of the runner's cost per step, so: ASCII escaping (json's C fast path; the text
    is printable ASCII anyway), no circular-reference bookkeeping (lines are trees), and json's C
    encoder called directly, without the Python wrapper around it, where this Python has it.
    """
    from json import encoder

    plain = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
    make_encoder = getattr(encoder, "c_make_encoder", None)  # private, so not in typeshed; None without the C part
    if make_encoder is None:
        return plain
    try:
        c_encode = make_encoder(None, _not_json, encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
        if "".join(c_encode({"a": [1, 2.5, "x\n"]}, 0)) != plain({"a": [1, 2.5, "x\n"]}):
            return plain
    except TypeError:  # a Python whose private encoder takes other arguments
        return plain
    return lambda obj: "".join(c_encode(obj, 0))


_dumps = _make_dumps()


def _json_line(record: Mapping[str, Any], observation: str | None = None) -> bytes:
    if observation is not None:
        record = {**record, "observation": observation}
    return (_dumps(record) + "\n").encode("ascii")


def _make_line_encoder() -> Any:
    """One JSON line as bytes: orjson where it is installed (the ``eval`` extra, several times faster),
    the json module otherwise, and for any line orjson would write with another value.

    Both encoders write the same values, and readers (``json.loads``, orjson, pandas) get the same line
    from either; the bytes differ only in form: orjson writes text that is not ASCII as UTF-8 (json:
    ``\\u`` escapes) and some floats without json's exponent padding (``1e-5`` for json's ``1e-05``).
    Keeping json's bytes exactly cost about a quarter of the runner's own work per step (the tiny
    ``decision_time`` of a fast agent handed over pre-written, scans of every line for floats and
    non-ASCII bytes), so the one guarantee kept is the one readers see: the values.

    What orjson would write as another value, or refuses, goes to json: NaN and infinities (orjson
    writes ``null``: a line with ``null`` anywhere outside its observation is written by json, a false
    alarm costing only the slower encoder), integers beyond 64 bits, keys that are not strings (json
    writes ``1e-05`` for the key 1e-05, orjson would write ``1e-5``), subclasses of str, int, dict and
    list (enums, say), dataclasses and datetimes (json refuses these two as it refuses any other type).

    A step's observation, most of its line's bytes, is put in the record as its last key for the one
    call to orjson, and taken out again: no copy of the record is made, and the whole line is one buffer
    (an observation encoded apart and joined on cost the runner more than the encoding itself). Being
    one string, it needs no scan: a ``null`` written by orjson would be at least ``len(observation) + 4``
    bytes before the end of the line (the observation's quotes, the closing brace, the newline).
    """
    try:
        import orjson
    except ImportError:
        return _json_line
    dumps, refused = orjson.dumps, orjson.JSONEncodeError
    option = (
        orjson.OPT_PASSTHROUGH_DATACLASS
        | orjson.OPT_PASSTHROUGH_DATETIME
        | orjson.OPT_PASSTHROUGH_SUBCLASS
        | orjson.OPT_APPEND_NEWLINE
    )

    def encode(record: Mapping[str, Any], observation: str | None = None) -> bytes:
        if observation is None:
            try:
                data = dumps(record, option=option)
            except refused:
                return _json_line(record)
            return data if data.find(b"null") < 0 else _json_line(record)
        if record.__class__ is not dict or observation.__class__ is not str or "observation" in record:
            return _json_line(record, observation)
        record["observation"] = observation  # put back as it was below
        line: bytes | None
        try:
            line = dumps(record, option=option)
        except refused:
            line = None
        finally:
            del record["observation"]
        if line is None or line.find(b"null", 0, len(line) - len(observation) - 4) >= 0:
            return _json_line(record, observation)
        return line

    return encode


_encode_line = _make_line_encoder()


def _make_document_encoder() -> Any:
    """A whole JSON file as bytes, exactly as ``json.dumps(obj, separators=(",", ":"))`` writes it:
    orjson where it is installed, the json module for any document orjson would write otherwise.

    For the files a run writes once (``results.json`` holds a float per window of play: writing their
    shortest decimal forms is most of what the json module spends on a long run's results). Floats
    json writes differently (below 1e-4, NaN and infinities) are handed to orjson already written by
    json, each counted for the ``e-`` it brings; the rest is checked on the output as for lines.
    """
    try:
        import orjson
    except ImportError:
        return lambda obj: _dumps(obj).encode("ascii")
    dumps, refused, fragment = orjson.dumps, orjson.JSONEncodeError, orjson.Fragment
    option = (
        orjson.OPT_NON_STR_KEYS
        | orjson.OPT_PASSTHROUGH_DATACLASS
        | orjson.OPT_PASSTHROUGH_DATETIME
        | orjson.OPT_PASSTHROUGH_SUBCLASS
    )
    inf = float("inf")
    json_float = json.encoder.JSONEncoder(allow_nan=True).iterencode  # json's text for any float

    def exact(value: Any, written: list[int]) -> Any:
        cls = value.__class__
        if cls is dict:
            return {k: exact(v, written) for k, v in value.items()}
        if cls is list or cls is tuple:
            return [v if v.__class__ is float and 1e-4 <= abs(v) < inf else exact(v, written) for v in value]
        if cls is float and not (1e-4 <= abs(value) < inf or value == 0.0):
            text = "".join(json_float(value))
            written[0] += text.count("e-")
            return fragment(text.encode("ascii"))
        return value

    def encode(obj: Any) -> bytes:
        written = [0]  # the "e-" of the floats written as json writes them
        try:
            data = dumps(exact(obj, written), option=option)
        except refused:
            data = None
        if data is None or not (
            data.isascii() and 127 not in data and data.find(b"0.0000") < 0 and data.count(b"e-") == written[0]
        ):
            return _dumps(obj).encode("ascii")
        return data

    return encode


#: ``json.dumps(obj, separators=(",", ":")).encode()``, computed faster where orjson is installed.
json_bytes = _make_document_encoder()


#: The largest trajectory read (a 5,000-step run of a chatty model is well under 100 MB).
MAX_TRAJECTORY_BYTES = 2 * 2**30


class TrajectoryError(ValueError):
    """A trajectory file that cannot be read (truncated line, wrong format, missing reset line)."""


def reset_record(game: str, seed: int, observation: str, info: Mapping[str, Any]) -> dict[str, Any]:
    record = {
        "format": FORMAT,
        "step": 0,
        "reset": True,
        "game": game,
        "seed": seed,
        "observation": observation,
        "area": info["area"],
        "time": info["time"],
        "in_tutorial": bool(info.get("in_tutorial", False)),
    }
    if "quest" in info:
        record["quest"] = info["quest"]
    return record


def step_record(
    decision: Decision,
    tutorial: bool,
    observation: str | None,
    terminated: bool,
    info: Mapping[str, Any],
    seconds: float,
    quest_changed: bool = True,
) -> dict[str, Any]:
    """The line of one step. ``tutorial``: the command was chosen inside the tutorial.

    Lines are sparse: flags (``tutorial``, ``invalid``, ``failed``, ``terminated``, ``malformed``) appear
    only when true, ``reward`` lists only the components that are not zero, ``events`` and ``tokens``
    only when there are some, ``train`` only on the steps a learning agent trained before acting,
    and main-quest progress (``quest``) only on the steps where it changed
    (``quest_changed``). Encoding dominates the runner's cost per step, and most steps have little
    to say; a reader takes a missing key as false, zero or empty.

    ``observation`` None leaves it out: the runner hands it to :meth:`JsonlWriter.write` instead, which
    writes it as the line's last key, where this function would have put it, and keeps only the rest.
    """
    record: dict[str, Any] = {"step": info["step"], "action": decision.action}
    if tutorial:
        record["tutorial"] = True
    reward = info["reward_breakdown"]
    if reward != _NO_REWARD:  # most steps earn nothing: one comparison in C says so
        earned = {k: v for k, v in reward.items() if v}
        if earned:
            record["reward"] = earned
    if info["invalid_action"]:
        record["invalid"] = True
    if info["action_failed"]:
        record["failed"] = True
    if info["events"]:
        record["events"] = info["events"]
    record["area"] = info["area"]
    record["time"] = info["time"]
    if terminated:
        record["terminated"] = True
    usage = decision.usage
    if usage.calls:
        record["tokens"] = [usage.input_tokens, usage.output_tokens]
        record["calls"] = usage.by_purpose()
    record["decision_time"] = round(seconds * 1_000_000) / 1_000_000  # microseconds; cheaper than round(x, 6)
    if decision.reasoning:
        record["reasoning"] = decision.reasoning
    if decision.malformed:
        record["malformed"] = True
    if decision.raw is not None:
        record["raw"] = decision.raw
    if decision.training:
        record["train"] = decision.training
    if decision.memory:
        record["memory"] = decision.memory
    if quest_changed and "quest" in info:
        record["quest"] = info["quest"]
    if observation is not None:
        record["observation"] = observation
    return record


class JsonlWriter:
    """Appends one JSON line per record (``trajectory.jsonl``, ``qa.jsonl``), straight to the OS
    (unbuffered: one write call per line), so a killed process loses at most the line in flight.

    ``truncate_to``: the bytes of an existing file to keep (what a checkpoint had seen); the rest is
    cut off and writing continues from there.
    """

    def __init__(self, path: Path, *, truncate_to: int = 0):
        self.path = Path(path)
        mode = "r+b" if self.path.exists() else "w+b"
        self._file = open(self.path, mode, buffering=0)  # noqa: SIM115 - held open for the whole run
        self._file.truncate(truncate_to)
        self._file.seek(truncate_to)

    def write(self, record: Mapping[str, Any], observation: str | None = None) -> None:
        """Write ``record`` as one line; ``observation``, if given, as its last key (``record`` must
        not hold one): a step's line without building a second dict that holds it."""
        data = _encode_line(record, observation)
        written = self._file.write(data)
        while written < len(data):  # a short write is rare on files, but legal
            written += self._file.write(data[written:])

    def tell(self) -> int:
        return self._file.tell()

    def close(self) -> None:
        self._file.close()


@dataclass
class Trajectory:
    """A read trajectory: the reset line and the step lines, in order."""

    reset: dict[str, Any]
    steps: list[dict[str, Any]]

    @property
    def play(self) -> list[dict[str, Any]]:
        """Steps chosen outside the tutorial: what metrics are computed on."""
        return [s for s in self.steps if not s.get("tutorial")]

    @property
    def tutorial(self) -> list[dict[str, Any]]:
        return [s for s in self.steps if s.get("tutorial")]

    def decisions(self) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        """``(before, step)`` pairs: the line the agent acted on and the line its command produced."""
        before = self.reset
        for step in self.steps:
            yield before, step
            before = step


def read_trajectory(path: str | Path, *, limit_bytes: int | None = None) -> Trajectory:
    """Read ``trajectory.jsonl``; a partial last line (a run killed mid-write) is ignored."""
    from odyssey_env.safeio import MAX_JSON_DEPTH, check_depth, read_regular

    path = Path(path)
    try:
        data = read_regular(path, MAX_TRAJECTORY_BYTES)
    except (OSError, ValueError) as exc:  # missing, unreadable, not a regular file, too large
        raise TrajectoryError(f"cannot read {path}: {exc}") from None
    if limit_bytes is not None:
        data = data[:limit_bytes]
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:
        lines.pop()  # no newline at the end: the line was still being written
    records = []
    for n, line in enumerate(lines, 1):
        if check_depth(line, MAX_JSON_DEPTH) is not None:
            raise TrajectoryError(f"{path}:{n}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TrajectoryError(f"{path}:{n}: not a JSON line ({exc.msg})") from None
        except (ValueError, RecursionError) as exc:  # not UTF-8, an absurd number
            raise TrajectoryError(f"{path}:{n}: not a JSON line ({str(exc).splitlines()[0][:120]})") from None
        if not isinstance(record, dict):
            raise TrajectoryError(f"{path}:{n}: not a JSON object")
        records.append(record)
    if not records or not records[0].get("reset"):
        raise TrajectoryError(f"{path}: the first line must be the reset record")
    if records[0].get("format") != FORMAT:
        raise TrajectoryError(f"{path}: trajectory format {records[0].get('format')!r}, expected {FORMAT}")
    steps = records[1:]
    first = records[0].get("step")
    if not isinstance(first, int) or isinstance(first, bool):
        raise TrajectoryError(f"{path}:1: the reset record has no step number")
    for i, s in enumerate(steps, 1):
        if s.get("step") != records[0]["step"] + i:
            raise TrajectoryError(f"{path}:{i + 1}: expected step {records[0]['step'] + i}, found {s.get('step')}")
    return Trajectory(records[0], steps)
