"""The scripts in examples/ run as documented (small settings, seconds)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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


def _run_example(name: str, *args: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=600, cwd="/"
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.splitlines()


def test_maskable_ppo_example_trains_and_compares_with_masked_random():
    pytest.importorskip("sb3_contrib", reason='needs the "sb3" extra')
    lines = _run_example(
        "sb3_maskable_ppo.py", "--n-envs", "2", "--timesteps", "128", "--n-steps", "64", "--episode-steps", "20",
        "--eval-episodes", "1", "--action-features",
    )  # fmt: skip
    assert lines[1].startswith("masked random  return") and lines[2].startswith("MaskablePPO    return")
    assert "invalid 0)" in lines[1] and "invalid 0)" in lines[2]  # masks keep both agents to valid commands
    assert lines[-1].startswith("MaskablePPO/random return:") and "after 128 steps" in lines[-1]


def test_torchrl_example_rolls_out_trains_and_compares():
    pytest.importorskip("torchrl", reason='needs the "torchrl" extra')
    lines = _run_example(
        "torchrl_ppo.py", "--n-envs", "2", "--frames", "256", "--frames-per-batch", "256", "--episode-steps", "20"
    )
    assert lines[-3].startswith("masked random  return") and lines[-2].startswith("TorchRL PPO    return")
    assert lines[-1].startswith("PPO/random return:") and "after 256 frames" in lines[-1]
