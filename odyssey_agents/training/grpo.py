"""RL training of an LLM policy on a game with TRL's GRPOTrainer and a LoRA adapter (resets allowed).

    python -m odyssey_agents.train grpo game=mossfall model=embedded steps=50
    odyssey train grpo game=tallowmere model=Qwen/Qwen3-4B steps=500 num_generations=8 batch_size=8

This is ordinary RL training, not test-time learning: the env is reset and restored at will.

* **States.** ``states`` game states are drawn before training: the env is reset with seed
  ``seed + i`` and walked ``0 .. rollout_steps`` random valid steps (the seeded random agent), and
  each state is saved (``env.save_state()``).
* **Prompts.** Each state becomes the ReAct act prompt the agents use (the game's verbs, the strict
  JSON format, the current observation), so an adapter trained here plugs into ``agent=...`` runs
  with the same prompt.
* **Reward.** For each completion the reward function restores the state in a Gymnasium env
  (``reset(options={"state": ...})``), plays the completion's action and scores the step:
  ``sum(reward_weights[k] * reward_breakdown[k])`` minus ``invalid_penalty`` for a command the engine
  refused, or ``-malformed_penalty`` when the reply holds no usable action.
* **GRPO.** TRL samples ``num_generations`` completions per prompt and pushes up those that score
  above their group's mean (its default loss, ``beta`` for a KL to the base model). Only the LoRA
  adapter trains.

The run folder (``output_dir``, default ``runs/train/<game>/<model>/grpo_seed_<seed>``) gets the
adapter (``adapter/``, loadable with ``peft.PeftModel.from_pretrained``), ``log.jsonl`` (TRL's logs,
one line per step) and ``summary.json`` (settings, rewards, seconds per step).
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from odyssey_agents.errors import ConfigError
from odyssey_agents.training import require_train
from odyssey_agents.training.adapter import DEFAULT_TARGETS

__all__ = ["GRPOSettings", "TrainConfigError", "collect_states", "env_reward", "parse_settings", "train_grpo"]


class TrainConfigError(ConfigError):
    """A training setting that is unknown or cannot be used."""


def _default_weights() -> dict[str, float]:
    from odyssey_env.rewards import COMPONENTS

    return {k: (-1.0 if k == "death" else 1.0) for k in COMPONENTS}


@dataclass
class GRPOSettings:
    """Every ``key=value`` the command takes (see the module docstring)."""

    game: str = "mossfall"  # a shipped game or a game folder
    model: str = "embedded"  # "embedded" (SmolLM2-135M, offline), a hub id or a model folder
    output_dir: str | None = None
    seed: int = 0
    steps: int = 100  # optimizer steps
    states: int = 64  # prompts: game states to train from
    rollout_steps: int = 20  # random steps walked from a reset to reach a state (at most)
    tutorial: bool = False
    num_generations: int = 4  # completions per prompt (the GRPO group)
    batch_size: int = 4  # completions per optimizer step (a multiple of num_generations)
    max_completion_length: int = 96
    temperature: float = 1.0
    learning_rate: float = 1e-5
    beta: float = 0.0  # KL coefficient to the base model (TRL's default: none)
    lora_r: int = 16
    lora_alpha: float = 32.0
    lora_dropout: float = 0.0
    lora_target_modules: tuple[str, ...] = DEFAULT_TARGETS
    reward_weights: dict[str, float] = field(default_factory=_default_weights)
    invalid_penalty: float = 0.1
    malformed_penalty: float = 0.5
    device: str = "auto"  # auto: CUDA when available
    gradient_checkpointing: bool = False
    enable_thinking: bool | None = False  # Qwen3's template switch (None: the template's default)

    def __post_init__(self) -> None:
        from odyssey_env.rewards import COMPONENTS

        positive = ("steps", "states", "num_generations", "batch_size", "max_completion_length", "lora_r")
        for key in positive:
            if int(getattr(self, key)) < 1:
                raise TrainConfigError(f"{key} must be at least 1, got {getattr(self, key)}")
        if self.rollout_steps < 0:
            raise TrainConfigError(f"rollout_steps must be at least 0, got {self.rollout_steps}")
        if self.num_generations < 2:
            raise TrainConfigError("num_generations must be at least 2: GRPO compares completions of one prompt")
        if self.batch_size % self.num_generations:
            raise TrainConfigError(
                f"batch_size ({self.batch_size}) must be a multiple of num_generations ({self.num_generations})"
            )
        unknown = sorted(set(self.reward_weights) - set(COMPONENTS))
        if unknown:
            raise TrainConfigError(
                f"reward_weights has unknown component(s) {', '.join(unknown)}; the components "
                f"are {', '.join(COMPONENTS)}"
            )
        if self.device not in ("auto", "cpu") and not self.device.startswith("cuda"):
            raise TrainConfigError(f"device must be auto, cpu or cuda[:N], got {self.device!r}")


def _coerce(name: str, kind: Any, raw: str) -> Any:
    """A command-line value as the setting's type."""
    text = raw.strip()
    kind = str(kind)
    try:
        if text.lower() in ("null", "none") and ("None" in kind):
            return None
        if kind.startswith("bool"):
            if text.lower() not in ("true", "false"):
                raise ValueError("expected true or false")
            return text.lower() == "true"
        if kind.startswith("int"):
            return int(text)
        if kind.startswith("float"):
            return float(text)
        if kind.startswith("tuple"):
            return tuple(v.strip() for v in text.strip("[]").split(",") if v.strip())
        if kind.startswith("dict"):
            out = {}
            for part in text.strip("{}").split(","):
                if part.strip():
                    key, sep, value = part.partition(":")
                    if not sep:
                        raise ValueError("expected {component: weight, ...}")
                    out[key.strip()] = float(value)
            return out
    except ValueError as exc:
        raise TrainConfigError(f"{name}={raw}: {exc}") from None
    return text


def parse_settings(args: Sequence[str]) -> GRPOSettings:
    """``key=value`` arguments as settings; an unknown key or a bad value is one clear line."""
    fields = {f.name: f.type for f in dataclasses.fields(GRPOSettings)}
    values: dict[str, Any] = {}
    for arg in args:
        key, sep, raw = arg.partition("=")
        key = key.strip().lstrip("+")
        if not sep:
            raise TrainConfigError(f"expected key=value, got {arg!r} (e.g. game=mossfall model=embedded steps=50)")
        if key not in fields:
            import difflib

            close = difflib.get_close_matches(key, fields, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise TrainConfigError(f"there is no setting {key}{hint}; the settings are: {', '.join(fields)}")
        values[key] = _coerce(key, fields[key], raw)
    try:
        return GRPOSettings(**values)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise TrainConfigError(str(exc)) from None


# ---------------------------------------------------------------------------------------------- data
def collect_states(
    game: str, count: int, rollout_steps: int, seed: int, tutorial: bool = False
) -> list[dict[str, Any]]:
    """``count`` rows ``{"prompt": [system, user], "state": json}``: states reached by seeded random walks."""
    from odyssey_agents.base import Task
    from odyssey_agents.prompting.prompt import PromptBuilder
    from odyssey_agents.random_agent import RandomAgent
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game, valid_actions=True, tutorial=tutorial)
    prompts = PromptBuilder(env.verbs())
    walk = random.Random(f"odyssey:grpo-states:{seed}")
    rows = []
    for i in range(count):
        obs, info = env.reset(seed=seed + i)
        agent = RandomAgent(seed=seed + i)
        agent.reset(Task(env.game.name, env.game.title, tuple(env.verbs()), seed + i))
        for _ in range(walk.randint(0, rollout_steps)):
            obs, _, terminated, _, info = env.step(agent.act(obs, info).action)
            if terminated:
                break
        rows.append({"prompt": prompts.act([], obs), "state": json.dumps(env.save_state(), separators=(",", ":"))})
    return rows


def env_reward(game: str, settings: GRPOSettings, tutorial: bool = False) -> Callable[..., list[float]]:
    """TRL's reward function: restore each completion's state, play its action, score the step."""
    from odyssey_agents.prompting.prompt import ACT_KEYS
    from odyssey_agents.prompting.reply import parse_reply
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game, tutorial=tutorial)
    weights = dict(settings.reward_weights)

    def odyssey_env_reward(
        prompts: Sequence[Any], completions: Sequence[Any], state: Sequence[str], **_extra: Any
    ) -> list[float]:
        rewards = []
        for completion, saved in zip(completions, state, strict=True):
            text = completion[-1]["content"] if isinstance(completion, list) else str(completion)
            reply = parse_reply(text, ACT_KEYS)
            if not reply.ok:
                rewards.append(-settings.malformed_penalty)
                continue
            env.reset(options={"state": json.loads(saved)})
            _, _, _, _, info = env.step(reply.action)
            r = sum(w * float(info["reward_breakdown"].get(k, 0)) for k, w in weights.items())
            rewards.append(r - (settings.invalid_penalty if info["invalid_action"] else 0.0))
        return rewards

    return odyssey_env_reward


# ---------------------------------------------------------------------------------------------- training
def _model_source(name: str) -> str:
    if name == "embedded":
        from odyssey_agents.llm.embedded import embedded_model_dir

        return str(embedded_model_dir())
    return name


def default_output(settings: GRPOSettings) -> Path:
    model = Path(settings.model).name or settings.model.replace("/", "-")
    game = Path(settings.game).name
    return Path("runs") / "train" / game / model / f"grpo_seed_{settings.seed}"


def train_grpo(settings: GRPOSettings, *, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Train and save (see the module docstring); returns the summary written to ``summary.json``."""
    torch = require_train("torch", "GRPO training")
    trl = require_train("trl", "GRPO training")
    peft = require_train("peft", "GRPO training")
    datasets = require_train("datasets", "GRPO training")
    transformers = require_train("transformers", "GRPO training")
    out = Path(settings.output_dir) if settings.output_dir else default_output(settings)
    out.mkdir(parents=True, exist_ok=True)
    cuda = settings.device.startswith("cuda") or (settings.device == "auto" and torch.cuda.is_available())
    source = _model_source(settings.model)
    log(
        f"odyssey train grpo: {settings.states} states of {settings.game}, model {source}, "
        f"{'GPU' if cuda else 'CPU'}, {settings.steps} steps -> {out}"
    )
    rows = collect_states(settings.game, settings.states, settings.rollout_steps, settings.seed, settings.tutorial)
    transformers.set_seed(settings.seed)
    from odyssey_agents.llm.transformers_local import quiet_loading

    try:
        with quiet_loading(transformers):
            tokenizer = transformers.AutoTokenizer.from_pretrained(source)
            model = transformers.AutoModelForCausalLM.from_pretrained(
                source, dtype=torch.bfloat16 if cuda else torch.float32
            )
    except OSError as exc:
        raise TrainConfigError(f"cannot load model {settings.model!r}: {str(exc).strip().splitlines()[0]}") from None
    if tokenizer.chat_template is None:
        raise TrainConfigError(f"the tokenizer of {settings.model!r} has no chat template; give a chat model")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    lora = peft.LoraConfig(
        r=settings.lora_r,
        lora_alpha=settings.lora_alpha,
        lora_dropout=settings.lora_dropout,
        target_modules=list(settings.lora_target_modules),
        bias="none",
        task_type="CAUSAL_LM",
    )
    # transformers 5.24 renamed gradient checkpointing to activation checkpointing (the old name warns)
    checkpointing = (
        "activation_checkpointing"
        if "activation_checkpointing" in {f.name for f in dataclasses.fields(trl.GRPOConfig)}
        else "gradient_checkpointing"
    )
    config = trl.GRPOConfig(
        output_dir=str(out / "trainer"),
        max_steps=settings.steps,
        per_device_train_batch_size=settings.batch_size,
        num_generations=settings.num_generations,
        max_completion_length=settings.max_completion_length,
        temperature=settings.temperature,
        learning_rate=settings.learning_rate,
        beta=settings.beta,
        seed=settings.seed,
        data_seed=settings.seed,
        use_cpu=not cuda,
        bf16=cuda,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        disable_tqdm=True,
        **{checkpointing: settings.gradient_checkpointing},
        chat_template_kwargs=(
            None if settings.enable_thinking is None else {"enable_thinking": settings.enable_thinking}
        ),
    )
    lines: list[dict[str, Any]] = []
    start = time.perf_counter()

    class Progress(transformers.TrainerCallback):  # type: ignore[name-defined]  # a base class from the lazily imported module: mypy needs a static one
        def on_log(
            self, args: Any, state: Any, control: Any, logs: Mapping[str, Any] | None = None, **kwargs: Any
        ) -> None:
            if logs and "reward" in logs:
                line = {
                    "step": state.global_step,
                    **{k: float(v) for k, v in logs.items() if isinstance(v, (int, float))},
                }
                lines.append(line)
                log(
                    f"step {state.global_step}/{settings.steps}: reward {line['reward']:.3f} "
                    f"(std {line.get('reward_std', 0.0):.3f}), loss {line.get('loss', 0.0):.4f}, "
                    f"{line.get('step_time', 0.0):.2f} s"
                )

    try:
        trainer = trl.GRPOTrainer(
            model=model,
            reward_funcs=env_reward(settings.game, settings, settings.tutorial),
            args=config,
            train_dataset=datasets.Dataset.from_list(rows),
            processing_class=tokenizer,
            peft_config=lora,
            callbacks=[Progress()],
        )
    except ValueError as exc:
        raise TrainConfigError(f"cannot set up GRPO: {str(exc).strip().splitlines()[0]}") from None
    trainer.remove_callback(transformers.PrinterCallback)  # Progress prints one line a step instead
    trainer.train()
    seconds = time.perf_counter() - start
    trainer.model.save_pretrained(str(out / "adapter"))
    with (out / "log.jsonl").open("w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    rewards = [line["reward"] for line in lines]
    summary = {
        "settings": {**dataclasses.asdict(settings), "lora_target_modules": list(settings.lora_target_modules)},
        "model_source": source,
        "device": "cuda" if cuda else "cpu",
        "steps": len(lines),
        "reward_first": rewards[0] if rewards else None,
        "reward_last": rewards[-1] if rewards else None,
        "seconds": round(seconds, 3),
        "seconds_per_step": round(seconds / max(1, len(lines)), 3),
        "adapter": str(out / "adapter"),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    log(f"done: {len(lines)} steps in {seconds:.1f} s; adapter in {out / 'adapter'}")
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    """``grpo key=value ...``"""
    train_grpo(parse_settings(list(sys.argv[1:] if argv is None else argv)))
    return 0
