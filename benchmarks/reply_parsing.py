"""Reply parsing scales linearly: run ``python benchmarks/reply_parsing.py``.

A model reply is untrusted text of any length. For each family of replies built to hurt a parser
(braces that never close, unclosed strings and thinking tags, deep nesting, thousands of objects,
seeded random soups of the same pieces) this times ``parse_reply`` and ``parse_choice`` on replies of
n, 2n, 4n... characters and prints the seconds, the microseconds per character and the fitted
exponent k of time ~ n^k over all sizes: about 1 when the work is linear, about 2 when it is
quadratic (the first version took 12.6 s on ``'{"a' * 8000``).

Each time is the median of ``--repeats`` runs (the machine is shared and noisy). The script exits
with status 1 when a family's exponent exceeds ``--max-exponent`` or it spends more than
``--max-us-per-char`` microseconds per character at the largest size: the time bound of the parser's
fuzz test, kept here rather than in the test suite.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections.abc import Callable

from odyssey_agents.prompting.reply import parse_choice, parse_reply

PIECES = [
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    "\\",
    ":",
    ",",
    " ",
    '"action"',
    '"reasoning"',
    "look",
    "<think>",
    "</think>",
    "(",
    ")",
    "true",
    "1e9",
]


def _soup(seed: int) -> Callable[[int], str]:
    def make(n: int) -> str:
        rng = random.Random(f"{seed}:{n}")
        out: list[str] = []
        size = 0
        while size < n:
            piece = rng.choice(PIECES)
            out.append(piece)
            size += len(piece)
        return "".join(out)[:n]

    return make


def _repeat(unit: str, tail: str = "") -> Callable[[int], str]:
    return lambda n: unit * max(1, (n - len(tail)) // len(unit)) + tail


FAMILIES: dict[str, Callable[[int], str]] = {
    'unclosed keys {"a': _repeat('{"a'),
    "open braces {": _repeat("{"),
    "unclosed thinking <think>": _repeat("<think>"),
    "unclosed string": lambda n: '{"reasoning": "r", "action": "' + "x" * n,
    "python nesting {'a': [": _repeat("{'a': ["),
    'json nesting {"a": [1,': _repeat('{"a": [1,'),
    'many objects {"a": 1}': _repeat('{"a": 1} '),
    'salvage keys "action": "': _repeat('"action": "'),
    "trailing commas , ": _repeat(",   ", "}"),
    'escapes "\\\\': _repeat('"\\\\{'),
    "random soup (seed 0)": _soup(0),
    "random soup (seed 1)": _soup(1),
    "random soup (seed 2)": _soup(2),
}


def _time(text: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        parse_reply(text)
        parse_reply(text, keys=("reasoning", "memory", "action"))
        parse_choice(text, 4, ["a", "b", "c", "d"])
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _exponent(sizes: list[int], seconds: list[float]) -> float:
    """Least-squares slope of log(time) against log(size)."""
    xs = [math.log(n) for n in sizes]
    ys = [math.log(max(s, 1e-9)) for s in seconds]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--start", type=int, default=8_000, help="smallest reply, characters")
    ap.add_argument("--doublings", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-exponent", type=float, default=1.4, help="of time ~ n^k, fitted over all sizes")
    ap.add_argument("--max-us-per-char", type=float, default=20.0)
    args = ap.parse_args(argv)
    sizes = [args.start * 2**i for i in range(args.doublings + 1)]
    print(f"{'family':30} " + " ".join(f"{n:>10,}" for n in sizes) + "   us/char  exponent")
    failed = []
    for name, make in FAMILIES.items():
        seconds = [_time(make(n), args.repeats) for n in sizes]
        per_char = seconds[-1] / sizes[-1] * 1e6
        exponent = _exponent(sizes, seconds)
        flag = ""
        # tiny times are all noise: judge growth only where the largest reply takes a measurable time
        if (seconds[-1] > 0.02 and exponent > args.max_exponent) or per_char > args.max_us_per_char:
            flag = "  <-- superlinear or slow"
            failed.append(name)
        print(f"{name:30} " + " ".join(f"{s:10.4f}" for s in seconds) + f"   {per_char:7.2f}  {exponent:8.2f}{flag}")
    print(f"\nseconds per reply (parse_reply twice + parse_choice), median of {args.repeats}")
    if failed:
        print(f"FAILED: {', '.join(failed)}")
        return 1
    print("all families linear")
    return 0


if __name__ == "__main__":
    sys.exit(main())
