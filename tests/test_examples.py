"""The scripts in examples/ run as documented (small settings, seconds)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_masked_random_agent_runs_and_never_plays_an_invalid_action():
    out = subprocess.run(
        [
            sys.executable,
            str(EXAMPLES / "masked_random_agent.py"),
            "--num-envs",
            "2",
            "--steps",
            "20",
            "--updates",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("random agent:") and lines[1].startswith("after 3 REINFORCE updates:")
    assert all(" 0 invalid actions" in line for line in lines[:2]), out.stdout


def test_masked_random_agent_learns_the_same_with_parallel_sub_envs():
    runs = [
        subprocess.run(
            [
                sys.executable,
                str(EXAMPLES / "masked_random_agent.py"),
                "--num-envs",
                "3",
                "--steps",
                "20",
                "--updates",
                "2",
                *extra,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        for extra in ([], ["--asynchronous"])
    ]
    for out in runs:
        assert out.returncode == 0, out.stderr
    sync, parallel = (out.stdout.splitlines()[:2] for out in runs)  # the last line is the wall time
    assert sync == parallel
