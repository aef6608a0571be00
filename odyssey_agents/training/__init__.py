"""Agents that learn in their weights while they play (paper §4 and Experiment 2), and RL training.

* :mod:`~odyssey_agents.training.lora_sft` — ``agent=lora_sft``: online LoRA supervised fine-tuning on
  the agent's own recent steps (by default the paper's target: each step's observation-reasoning-action
  text, every token; the reply alone, with the prompt masked, is a variant).
* :mod:`~odyssey_agents.training.rl_lora` — ``agent=rl_lora``: test-time reinforcement learning of a
  LoRA adapter from the env's rewards on the agent's single, non-resettable stream.
* :mod:`~odyssey_agents.training.grpo` — ``python -m odyssey_agents.train grpo``: ordinary RL training
  (resets allowed) of an LLM policy on the Gymnasium env with TRL's GRPOTrainer.

The shared machinery: :mod:`~odyssey_agents.training.adapter` (a LoRA adapter and its optimizer on the
``hf`` backend's model, checkpointed bit-exactly), :mod:`~odyssey_agents.training.sequences` (step
texts and chat examples as token ids, each token's role known, batched log-probabilities) and
:mod:`~odyssey_agents.training.agent` (the ReAct agent that trains before it acts and records each
update in the trajectory).

Everything here needs the ``train`` extra (torch, peft, trl); nothing imports it until one of these
agents or commands is chosen.
"""

from types import ModuleType

from odyssey_env.extras import install_command

EXTRA = "train"
INSTALL = install_command(EXTRA)  # as this copy was installed (see odyssey_env.extras)


def require_train(module: str, what: str) -> ModuleType:
    """Import ``module`` or stop with one line naming the ``train`` extra (nothing here is imported
    until a training agent or command is chosen, so this is where a missing extra shows)."""
    import importlib

    from odyssey_agents.llm.protocol import MissingExtra

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise MissingExtra(f"{what} needs the Python package {exc.name!r}: {install_command(EXTRA)}") from exc
