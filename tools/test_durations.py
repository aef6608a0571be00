"""Measure how long each test takes and keep it in ``tests/durations.json``, which picks the quick subset.

``python -m pytest -m quick`` runs the tests that took at most ``QUICK_LIMIT`` seconds (setup, call and
teardown together) when last measured, and every test not measured yet (tests/conftest.py marks them).
Re-measure after adding slow tests::

    python tools/test_durations.py                  # the whole suite, then merge (slowest time wins)
    python tools/test_durations.py -m quick         # the quick subset: costs a fixture moves onto the
                                                    # tests that remain are found and moved out
    python tools/test_durations.py --fresh          # forget the old figures first

A session fixture's cost lands on the first test that uses it, so a subset can make another test slow;
measuring the subset itself (the second line) finds those. Figures are merged by their maximum, so a
quick run on a busy machine never makes a slow test look quick.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "tests" / "durations.json"
LINE = re.compile(r"^(\d+(?:\.\d+)?)s (setup|call|teardown)\s+(.+?)\s*$")


def parse(output: str) -> dict[str, float]:
    """Seconds per test (setup + call + teardown) from pytest's ``--durations`` report."""
    out: dict[str, float] = {}
    for line in output.splitlines():
        m = LINE.match(line)
        if m:
            out[m.group(3)] = out.get(m.group(3), 0.0) + float(m.group(1))
    return out


def merge(old: dict[str, float], new: dict[str, float]) -> dict[str, float]:
    merged = dict(old)
    for node, seconds in new.items():
        merged[node] = max(seconds, merged.get(node, 0.0))
    return {k: round(merged[k], 2) for k in sorted(merged)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fresh", action="store_true", help="forget the figures measured before")
    parser.add_argument("--from-log", type=Path, help="read a saved pytest --durations=0 report instead of running")
    args, pytest_args = parser.parse_known_args(argv)
    if args.from_log:
        output = args.from_log.read_text(encoding="utf-8")
    else:
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--durations=0",
            "--durations-min=0.1",
            *pytest_args,
        ]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        output = done.stdout
        print(output.strip().splitlines()[-1] if output.strip() else done.stderr)
    measured = parse(output)
    if not measured:
        print("test_durations: no durations in the report", file=sys.stderr)
        return 1
    old = {} if args.fresh or not FILE.is_file() else json.loads(FILE.read_text(encoding="utf-8"))
    # only what matters is kept: tests of at least 0.1 s (a test not listed counts as quick)
    merged = {k: v for k, v in merge(old, measured).items() if v >= 0.1}
    FILE.write_text(json.dumps(merged, indent=0) + "\n", encoding="utf-8")
    print(f"test_durations: {len(measured)} measured, {len(merged)} kept in {FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
