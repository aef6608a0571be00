"""RL training on the env with TRL's GRPOTrainer: the entry point runs end to end on CPU with a tiny model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")

from odyssey_agents.train import main
from odyssey_agents.training.grpo import GRPOSettings, TrainConfigError, collect_states, env_reward, parse_settings
from odyssey_env.env import OdysseyEnv


def test_the_reward_plays_each_completion_from_its_own_state():
    rows = collect_states("mossfall", 3, rollout_steps=4, seed=0)
    assert len({r["state"] for r in rows}) == 3  # three seeds, three states
    assert rows[0]["prompt"][0]["role"] == "system" and "My Current Observation:" in rows[0]["prompt"][1]["content"]
    env = OdysseyEnv("mossfall", valid_actions=True)
    env.reset(options={"state": json.loads(rows[0]["state"])})
    enter = env.valid_actions()["enter"][0]
    reward = env_reward("mossfall", GRPOSettings(invalid_penalty=0.25))

    def reply(action):
        return [{"role": "assistant", "content": json.dumps({"reasoning": "", "action": action})}]

    completions = [
        reply(enter),
        reply(enter),
        reply("wait"),
        reply("fly to the moon"),
        [{"role": "assistant", "content": "no json here"}],
    ]
    scores = reward([rows[0]["prompt"]] * 5, completions, [rows[0]["state"]] * 5)
    # the same first visit pays twice: each completion starts from the saved state, not from the last one
    assert scores == [1.0, 1.0, 0.0, -0.25, -0.5]


def test_the_grpo_entry_point_trains_two_steps_on_cpu(tiny_models, tmp_path, capsys):
    out = tmp_path / "grpo"
    code = main(
        [
            "grpo",
            "game=mossfall",
            f"model={tiny_models['llama']}",
            "steps=2",
            "states=4",
            "rollout_steps=3",
            "num_generations=2",
            "batch_size=2",
            "max_completion_length=6",
            "lora_r=4",
            f"output_dir={out}",
            "device=cpu",
        ]
    )
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 2 and summary["device"] == "cpu" and summary["seconds_per_step"] > 0
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert [line["step"] for line in log] == [1, 2] and all("reward" in line for line in log)
    assert (out / "adapter" / "adapter_model.safetensors").is_file()
    printed = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("step ") for line in printed) == 2


def test_training_settings_are_checked_in_one_line():
    with pytest.raises(TrainConfigError, match="did you mean steps"):
        parse_settings(["stepz=3"])
    with pytest.raises(TrainConfigError, match="multiple of num_generations"):
        parse_settings(["batch_size=3", "num_generations=2"])
    with pytest.raises(TrainConfigError, match="reward_weights has unknown"):
        parse_settings(["reward_weights={gold: 1}"])
    s = parse_settings(
        [
            "lora_target_modules=[q_proj,v_proj]",
            "reward_weights={exploration: 2}",
            "beta=0.04",
            "enable_thinking=null",
            "tutorial=true",
        ]
    )
    assert s.lora_target_modules == ("q_proj", "v_proj") and s.reward_weights == {"exploration": 2.0}
    assert s.beta == 0.04 and s.enable_thinking is None and s.tutorial is True
    done = subprocess.run(
        [sys.executable, "-m", "odyssey_agents.train", "grpo", "steps=zero"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "odyssey train: steps=zero: invalid literal for int() with base 10: 'zero'"
    ]


def test_the_example_script_trains_two_steps(tiny_models, tmp_path):
    script = Path(__file__).resolve().parents[2] / "examples" / "grpo_lora.py"
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            "--model",
            str(tiny_models["qwen3"]),
            "--steps",
            "2",
            "--states",
            "4",
            "--generations",
            "2",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1].startswith("mean reward: first step ")
    assert (tmp_path / "out" / "adapter_model.safetensors").is_file()
