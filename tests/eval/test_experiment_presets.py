"""The repository's experiment presets (conf/experiment/) compose through ``odyssey run`` into valid cells."""

from __future__ import annotations

import pytest

pytest.importorskip("hydra")

from odyssey_eval.run import CONFIG_DIR, REPO_CONFIG_DIR, _with_repo_presets, main

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
        paths.add(cell_path(cfg))
        if variant != "rag":  # the agent builds with these settings (on a tiny model instead of Qwen3-4B)
            agent = build_agent(cfg["agent"], {**cfg["llm"], **tiny_hf_llm}, seed=0)
            labels.add(agent.label)
    assert len(paths) >= 6
    assert {"lora_sft", "lora_sft+short_term_memory", "lora_sft+reflection", "lora_sft+summarisation",
            "long_context", "short_term_memory"} <= labels


@pytest.fixture(scope="module")
def tiny_hf_llm(tmp_path_factory):
    pytest.importorskip("peft")
    from agents.conftest import build_tiny_model  # the suite's tiny chat models (tests/agents/conftest.py)

    return {"model": str(build_tiny_model(tmp_path_factory.mktemp("tiny") / "llama", "llama")), "device": "cpu"}
