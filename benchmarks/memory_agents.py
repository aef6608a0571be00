"""Memory cost per step of the retrieval paradigms as their memory grows: steps 100, 1,000 and 5,000.

Each paradigm (vanilla_rag, mem0, raptor, voyager; reflection off, no add-ons) plays the same game on
the scripted backend. What is timed is the paradigm's memory work at each step, ``_prepare``: storing
the previous step (embedding, index insertion, RAPTOR's tree update, Mem0's fact update, Voyager's
critic and skills) and retrieving for the current one, in CPU time of this process, with the scripted
backend's own time subtracted. Tokens are those of the memory's calls (everything but ``act``):
embedding word pieces, and the prompts and replies of extract/update/summarise/curriculum/critique/
skill calls, in the scripted backend's tokenizer (words and punctuation).

The structures are measured with the model-free ``hashing`` embedder (feature hashing, 384 dims), so
5,000 steps take minutes rather than hours on a CPU; the embedding model's own cost is a constant per
embedded text, measured apart on all-MiniLM-L6-v2 when it is installed, and added in the last column
(texts per step x ms per text). ``--embedder minilm`` runs everything on MiniLM instead (slow).

    python benchmarks/memory_agents.py [--steps 100,1000,5000] [--window 50] [--game mossfall] [--embedder hashing]
                                       [--threads 1]

Target (issue 10): VanillaRAG and RAPTOR stay flat or logarithmic in the step count, never linear:
the growth column is the ratio of the cost at the last checkpoint to the cost at the first; a linear
cost would show the ratio of the step counts (50x for 100 -> 5,000), a logarithmic one about 1.8x.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

from timed_llm import Timed

from odyssey_agents.base import Task, Usage
from odyssey_agents.llm.scripted import ScriptedLLM
from odyssey_env.env import OdysseyEnv
from odyssey_env.game import available_games

NAMES = ("vanilla_rag", "mem0", "raptor", "voyager")


def measure(name: str, embedder: Any, game: str, checkpoints: list[int], window: int, seed: int) -> dict[str, Any]:
    from odyssey_agents.registry import agent_class

    llm = Timed(ScriptedLLM(seed=seed))
    agent = agent_class(name)(llm, embedder=embedder)
    env = OdysseyEnv(game)
    obs, info = env.reset(seed=seed)
    agent.reset(Task(game, game, tuple(env.verbs()), seed))
    cost: list[float] = []
    memory_tokens: list[int] = []
    texts: list[int] = []
    original = agent._prepare

    def timed_prepare(observation: str, usage: Usage) -> None:
        before_llm, before_texts = llm.seconds, agent.ledger.texts
        start = time.process_time()
        original(observation, usage)
        cost.append(time.process_time() - start - (llm.seconds - before_llm))
        texts.append(agent.ledger.texts - before_texts)

    agent._prepare = timed_prepare
    episodes = 0
    wall = time.perf_counter()
    for step in range(max(checkpoints)):
        decision = agent.act(obs, info)
        memory_tokens.append(sum(c.input_tokens + c.output_tokens for c in decision.usage.calls if c.purpose != "act"))
        obs, _, terminated, _, info = env.step(decision.action)
        if terminated:  # a new episode of the game; the agent's memory goes on
            episodes += 1
            obs, info = env.reset(seed=seed + episodes)
        if step + 1 in checkpoints:
            print(f"  {name}: {step + 1} steps ({time.perf_counter() - wall:.0f} s)", file=sys.stderr, flush=True)
    rows = {}
    for c in checkpoints:
        lo = max(0, c - window)
        rows[c] = {
            "ms": 1e3 * statistics.fmean(cost[lo:c]),
            "tokens": statistics.fmean(memory_tokens[lo:c]),
            "texts": statistics.fmean(texts[lo:c]),
        }
    return {"name": name, "rows": rows, "stats": agent.stats()}


def minilm_ms_per_text(game: str, seed: int, threads: int | None) -> float | None:
    """Milliseconds MiniLM spends per embedded step record (records of this game, batches of two)."""
    try:
        from odyssey_agents.retrieval.embedder import Embedder

        embedder = Embedder(threads=threads)
    except ImportError:
        return None
    env = OdysseyEnv(game)
    obs, _ = env.reset(seed=seed)
    sample = []
    for cmd in ("wait", "enter reed_marsh", "wait", "enter hearth_square") * 5:
        obs, *_ = env.step(cmd)
        sample.append(f"Action: {cmd}\nReasoning: trying {cmd} to learn more.\nObservation: {obs}")
    embedder.embed(sample[:2])  # warm up
    start = time.process_time()
    for i in range(0, len(sample), 2):
        embedder.embed(sample[i : i + 2])
    return 1e3 * (time.process_time() - start) / len(sample)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    games = available_games()
    parser.add_argument("--game", default="mossfall", choices=games)
    parser.add_argument("--steps", default="100,1000,5000", help="checkpoints, comma-separated")
    parser.add_argument("--window", type=int, default=50, help="steps averaged before each checkpoint")
    parser.add_argument("--embedder", default="hashing", choices=("hashing", "minilm"))
    parser.add_argument("--agents", default=",".join(NAMES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads for MiniLM (default: torch's)")
    args = parser.parse_args(argv)
    checkpoints = sorted(int(x) for x in args.steps.split(","))
    if checkpoints[0] < args.window:
        parser.error("the first checkpoint must be at least --window steps")
    from odyssey_agents.retrieval.embedder import Embedder, HashingEmbedder

    embedder = HashingEmbedder() if args.embedder == "hashing" else Embedder(threads=args.threads)
    per_text = minilm_ms_per_text(args.game, args.seed, args.threads) if args.embedder == "hashing" else 0.0
    print(
        f"game {args.game}, scripted backend, embedder {args.embedder}, seed {args.seed}; memory work per step "
        f"(CPU ms, backend time subtracted) and memory-call tokens, mean of the {args.window} steps before each "
        "checkpoint"
    )
    if args.embedder == "hashing":
        print(
            "MiniLM per embedded step record: "
            + (f"{per_text:.1f} ms" if per_text is not None else 'not installed (pip install "odyssey-gym[rag]")')
        )
    head = f"{'agent':<12} {'step':>6} {'ms/step':>9} {'tokens/step':>12} {'texts/step':>11}"
    if args.embedder == "hashing" and per_text is not None:
        head += f" {'+MiniLM ms':>11}"
    print(head)
    print("-" * len(head))
    results = []
    for name in args.agents.split(","):
        r = measure(name, embedder, args.game, checkpoints, args.window, args.seed)
        results.append(r)
        for c, row in r["rows"].items():
            line = f"{name:<12} {c:>6} {row['ms']:>9.3f} {row['tokens']:>12.1f} {row['texts']:>11.2f}"
            if args.embedder == "hashing" and per_text is not None:
                line += f" {row['ms'] + row['texts'] * per_text:>11.1f}"
            print(line)
    first, last = checkpoints[0], checkpoints[-1]
    print(
        f"\ngrowth from step {first} to step {last} ({last / first:.0f}x the steps; linear would be "
        f"{last / first:.0f}x the cost):"
    )
    for r in results:
        a, b = r["rows"][first], r["rows"][last]
        print(f"  {r['name']:<12} ms x{b['ms'] / a['ms']:.2f}   tokens x{b['tokens'] / max(a['tokens'], 1e-9):.2f}")
    for r in results:
        s = r["stats"]
        extra = {
            k: s[k]
            for k in (
                "raptor_summaries",
                "layers",
                "max_nodes_touched",
                "facts_size",
                "facts_add",
                "facts_update",
                "facts_delete",
                "skills_size",
                "tasks_completed",
                "tasks_abandoned",
                "episodes_size",
                "nodes_size",
            )
            if k in s
        }
        print(f"  {r['name']:<12} {extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
