"""GPU smoke test of the learning paradigms: each plays a few steps with a real model on the GPU.

    python benchmarks/gpu_smoke.py                                  # the embedded SmolLM2-135M, on CUDA
    python benchmarks/gpu_smoke.py --model Qwen/Qwen3-0.6B --steps 6 # any local folder or cached hub id
    python benchmarks/gpu_smoke.py --release /models/memoryllm-8b-chat --release /models/mplus-8b

Without a CUDA GPU it prints why it skipped and exits 0. With one, for ``lora_sft``, ``rl_lora``,
``kv_window``, ``memoryllm`` and ``mplus`` it checks that ``device=auto`` put the model on the GPU, that
the agent learned (updates made / memory written, LoRA weights on the GPU and changed), that a
checkpoint written on the GPU reloads to the same state, and it reports seconds per update and peak
GPU memory; then it runs two GRPO steps (``odyssey train grpo``). ``--release FOLDER`` (repeatable) adds a
released MemoryLLM / M+ checkpoint the user downloaded (``YuWangX/memoryllm-8b-chat``, ``YuWangX/mplus-8b``):
it loads as data (no code from the download runs), plays with its trained memory at the checkpoint's
sizes, and is asked, after being told where a key is hidden, where the key is. Exit status 1 if any
check fails.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SETTINGS: dict[str, dict[str, Any]] = {
    "lora_sft": {"train_every": 2, "learning_rate": 1e-4},
    "rl_lora": {"update_every": 2, "horizon": 0, "learning_rate": 1e-4},
    "kv_window": {"pool_size": 1024},
    "memoryllm": {"pool_size": 1024, "update_tokens": 256},
    "mplus": {"pool_size": 512, "update_tokens": 256, "long_term_size": 1024, "retrieve_tokens": 128},
}


DEVICE = {"request": "auto", "expect": "cuda"}  # --cpu: the same checks on the CPU (to check this script)


def llm_config(model: str) -> dict[str, Any]:
    if model == "embedded":
        return {"name": "embedded", "device": DEVICE["request"], "threads": 1 if DEVICE["expect"] == "cpu" else None}
    return {
        "name": "hf",
        "model": model,
        "device": DEVICE["request"],
        "max_tokens": 128,
        "guided_json": True,
        "constrain_starts": True,
        "enable_thinking": False,
    }


def _pool(agent: Any) -> Any:
    """The first layer of an agent's latent memory (kv_window: keys; memoryllm, mplus: memory tokens)."""
    pool = agent.pool
    return pool.keys[0] if hasattr(pool, "keys") else pool.stm[0]


def recall(agent: Any) -> list[str]:
    """A released memory model told where a key is hidden, asked where it is (trained memory should know)."""
    from odyssey_agents.memory import StepRecord

    said = "The old farmer whispers: the silver key is hidden in the barn, under the hay."
    for step in range(2):  # two updates: the fact, then a step after it
        agent._write(StepRecord(step, f"Current Location: farm, yard\n{said}" if not step else "I wait.", "", "wait"))
    choices = ["the kitchen", "the barn", "the cellar", "the tower"]
    answer = agent.answer("Where is the silver key hidden?", choices)
    print(f"  recall: answered {choices[answer.index] if answer.index is not None else None!r} ({answer.raw!r})")
    return [] if answer.index == 1 else [f"{agent.name} (release): did not recall where the key was"]


def smoke(
    name: str, model: str, steps: int, settings: dict[str, Any] | None = None
) -> tuple[dict[str, Any], list[str]]:
    import torch

    from odyssey_agents.base import Task
    from odyssey_env.env import OdysseyEnv
    from odyssey_eval.factory import build_agent

    problems: list[str] = []
    cuda = DEVICE["expect"] == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    settings = SETTINGS[name] if settings is None else settings
    agent = build_agent({"name": name, **settings}, llm_config(model), seed=0)
    env = OdysseyEnv("mossfall")
    obs, info = env.reset(seed=0)
    agent.reset(Task("mossfall", env.game.title, tuple(env.verbs()), 0))
    device = next(agent.llm.model.parameters()).device
    if device.type != DEVICE["expect"]:
        problems.append(f"{name}: device={DEVICE['request']} put the model on {device}, not {DEVICE['expect']}")
    before = agent.adapter.weights() if hasattr(agent, "adapter") else None
    learn: list[float] = []
    start = time.perf_counter()
    for _ in range(steps):
        decision = agent.act(obs, info)
        learn += [c.seconds for c in decision.usage.calls if c.purpose in ("train", "memorise")]
        obs, _, terminated, _, info = env.step(decision.action)
        if terminated:
            break
    seconds = time.perf_counter() - start
    if not learn:
        problems.append(f"{name}: no update in {steps} steps")
    if before is not None:
        after = agent.adapter.weights()
        if any(v.device.type != DEVICE["expect"] for v in after.values()):
            problems.append(f"{name}: the adapter is not on {DEVICE['expect']}")
        if all(torch.equal(before[k], after[k]) for k in before):
            problems.append(f"{name}: the LoRA weights did not change")
    with tempfile.TemporaryDirectory() as folder:
        agent.save(folder)
        twin = build_agent({"name": name, **settings}, llm_config(model), seed=0)
        twin.reset(agent.task)
        twin.load(folder)
        if before is not None:
            if any(
                not torch.equal(a, b)
                for a, b in zip(agent.adapter.weights().values(), twin.adapter.weights().values(), strict=True)
            ):
                problems.append(f"{name}: the reloaded adapter differs")
        elif not torch.equal(_pool(agent), _pool(twin)):
            problems.append(f"{name}: the reloaded pool differs")
    released = getattr(agent, "released", None)
    if released is not None:
        if len(agent.pool) != int(released.memory.shape[1]):
            problems.append(f"{name}: the pool holds {len(agent.pool)} tokens, the release {released.memory.shape[1]}")
        problems += recall(agent)
    row = {
        "name": name,
        "updates": len(learn),
        "update_s": sum(learn) / max(1, len(learn)),
        "step_s": seconds / steps,
        "peak_gb": torch.cuda.max_memory_allocated() / 2**30 if cuda else 0.0,
        "device": str(device),
    }
    del agent, twin
    if cuda:
        torch.cuda.empty_cache()
    return row, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="embedded", help="embedded, a model folder or a cached hub id")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--grpo-steps", type=int, default=2)
    parser.add_argument("--cpu", action="store_true", help="run the same checks on the CPU (checks this script)")
    parser.add_argument(
        "--release", action="append", default=[], help="a released MemoryLLM / M+ checkpoint folder (repeatable)"
    )
    args = parser.parse_args()
    try:
        import torch
    except ModuleNotFoundError:
        print('gpu_smoke: skipped: torch is not installed (pip install "odyssey-gym[train]")')
        return 0
    if args.cpu:
        DEVICE.update(request="cpu", expect="cpu")
    elif not torch.cuda.is_available():
        print("gpu_smoke: skipped: no CUDA GPU on this machine (the paradigms' CPU tests are in tests/agents)")
        return 0
    where = "CPU (--cpu)" if args.cpu else torch.cuda.get_device_name(0)
    print(f"gpu_smoke: {where}, model {args.model}, {args.steps} steps per paradigm")
    problems: list[str] = []
    print(f"{'paradigm':<16}{'updates':>8}{'s/update':>10}{'s/step':>8}{'peak GB':>9}  device")
    runs = [(name, args.model, None) for name in SETTINGS]
    for folder in args.release:
        from odyssey_agents.latent.checkpoint import ARCHITECTURES, CheckpointError, released_config, released_source

        try:
            config = released_config(released_source(folder))  # a folder, or a downloaded hub id
        except CheckpointError as exc:
            problems.append(str(exc))
            continue
        if config is None:
            problems.append(f"{folder}: not a MemoryLLM / M+ checkpoint (config.json architectures)")
            continue
        kind = next(ARCHITECTURES[a] for a in config["architectures"] if a in ARCHITECTURES)
        runs.append((kind, folder, {}))  # the checkpoint's own sizes
    for name, model, settings in runs:
        row, found = smoke(name, model, args.steps, settings)
        problems += found
        print(
            f"{row['name']:<16}{row['updates']:>8}{row['update_s']:>10.3f}{row['step_s']:>8.2f}"
            f"{row['peak_gb']:>9.2f}  {row['device']}"
        )
    if args.grpo_steps:
        from odyssey_agents.training.grpo import GRPOSettings, train_grpo

        with tempfile.TemporaryDirectory() as out:
            summary = train_grpo(
                GRPOSettings(
                    model=args.model,
                    steps=args.grpo_steps,
                    states=8,
                    num_generations=4,
                    batch_size=4,
                    max_completion_length=64,
                    output_dir=out,
                    device=DEVICE["request"],
                ),
                log=lambda _: None,
            )
        if summary["device"] != DEVICE["expect"] or summary["steps"] != args.grpo_steps:
            problems.append(f"grpo: ran {summary['steps']} steps on {summary['device']}")
        peak = torch.cuda.max_memory_allocated() / 2**30 if DEVICE["expect"] == "cuda" else 0.0
        print(
            f"{'grpo':<16}{summary['steps']:>8}{summary['seconds_per_step']:>10.3f}{'':>8}{peak:>9.2f}  "
            f"{summary['device']}"
        )
    for p in problems:
        print(f"FAILED: {p}")
    print("gpu_smoke: ok" if not problems else f"gpu_smoke: {len(problems)} check(s) failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
