"""Train an LLM to play an AgentOdyssey game with GRPO (TRL) and a LoRA adapter (peft): plain user code.

    pip install "odyssey-gym[train]"
    python examples/grpo_lora.py --model HuggingFaceTB/SmolLM2-135M-Instruct --steps 50   # any chat model
    python examples/grpo_lora.py --model Qwen/Qwen3-4B --steps 500 --generations 8        # on a GPU

Prompts are game states reached by short random walks (saved with ``save_state``); the reward restores
a completion's state through ``reset(options={"state": ...})``, plays its command and sums the step's
reward components. ``odyssey train grpo`` does the same with the agents' JSON prompt and more settings.
"""

import argparse
import json
import random

import gymnasium as gym
import torch
from datasets import Dataset
from peft import LoraConfig
from trl import GRPOConfig, GRPOTrainer

import odyssey_env  # noqa: F401 - registers Odyssey/<Name>-v0

parser = argparse.ArgumentParser()
parser.add_argument("--game", default="Mossfall")
parser.add_argument("--model", required=True)
parser.add_argument("--steps", type=int, default=50)
parser.add_argument("--states", type=int, default=32)
parser.add_argument("--generations", type=int, default=4)
parser.add_argument("--out", default="runs/grpo_example")
args = parser.parse_args()

env = gym.make(f"Odyssey/{args.game}-v0", valid_actions=True)
system = "You play a text adventure game. Reply with exactly one command, nothing else. Commands:\n" + "\n".join(
    env.unwrapped.verbs()
)
rng = random.Random(0)
rows = []
for i in range(args.states):  # states reached by random walks of 0-10 valid commands
    obs, info = env.reset(seed=i)
    for _ in range(rng.randint(0, 10)):
        obs, _, done, _, info = env.step(rng.choice([c for cs in info["valid_actions"].values() for c in cs]))
        if done:
            break
    rows.append(
        {
            "prompt": [{"role": "system", "content": system}, {"role": "user", "content": obs}],
            "state": json.dumps(env.unwrapped.save_state()),
        }
    )


def play(prompts, completions, state, **_):
    """Restore each completion's state, play its first line as the command, score the step."""
    scores = []
    for completion, saved in zip(completions, state, strict=True):
        env.reset(options={"state": json.loads(saved)})
        command = (completion[-1]["content"].strip().splitlines() or ["wait"])[0]
        _, _, _, _, info = env.step(command)
        r = info["reward_breakdown"]
        scores.append(sum(r.values()) - 2 * r["death"] - 0.1 * info["invalid_action"])
    return scores


config = GRPOConfig(
    output_dir=args.out,
    max_steps=args.steps,
    per_device_train_batch_size=args.generations,
    num_generations=args.generations,
    max_completion_length=24,
    learning_rate=1e-5,
    logging_steps=1,
    report_to=[],
    save_strategy="no",
    disable_tqdm=True,
    gradient_checkpointing=False,
    use_cpu=not torch.cuda.is_available(),
    bf16=torch.cuda.is_available(),
)  # TRL defaults to bf16
trainer = GRPOTrainer(
    model=args.model,
    reward_funcs=play,
    args=config,
    train_dataset=Dataset.from_list(rows),
    peft_config=LoraConfig(
        r=16, lora_alpha=32, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"], task_type="CAUSAL_LM"
    ),
)
trainer.train()
trainer.save_model(args.out)
rewards = [log["reward"] for log in trainer.state.log_history if "reward" in log]
print(f"mean reward: first step {rewards[0]:.3f}, last step {rewards[-1]:.3f}; adapter saved in {args.out}")
