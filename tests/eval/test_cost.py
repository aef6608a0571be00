"""Price tables and what a cell's (and a sweep's) model calls cost."""

from __future__ import annotations

import json

import pytest

from odyssey_eval.cost import PriceError, cell_cost, load_prices, sweep_cost

TABLE = {
    "currency": "USD",
    "gpt-x": {"input": 2.0, "cached_input": 0.5, "output": 8.0},
    "free-m": {"input": 0, "output": 0},
}


def results(model="gpt-x", name="openai", **metrics):
    base = {"input_tokens": 1_000_000, "output_tokens": 100_000, "cached_tokens": 0, "cacheable_prefix_tokens": 0}
    return {
        "llm": {"name": name, "model": model},
        "metrics": {**base, **metrics},
        "qa": [{"tokens": [200_000, 1_000]}, {"tokens": [300_000, 1_000]}],
    }


def test_a_cell_is_billed_for_play_and_qa_calls_with_cached_input_at_its_price():
    cost = cell_cost(results(cached_tokens=500_000, cacheable_prefix_tokens=1_200_000), load_prices(TABLE))
    assert cost["input_tokens"] == 1_500_000 and cost["output_tokens"] == 102_000 and cost["cached_tokens"] == 500_000
    assert cost["total"] == pytest.approx((1_000_000 * 2.0 + 500_000 * 0.5 + 102_000 * 8.0) / 1e6)
    assert cost["total_if_prefix_cached"] == pytest.approx((300_000 * 2.0 + 1_200_000 * 0.5 + 102_000 * 8.0) / 1e6)
    assert cost["currency"] == "USD" and cost["prices_per_million"]["cached_input"] == 0.5


def test_cached_input_defaults_to_the_input_price():
    table = load_prices({"m": {"input": 1.0, "output": 1.0}})
    assert table.models["m"]["cached_input"] == 1.0


def test_local_backends_cost_nothing_unless_listed_and_an_api_model_must_be_listed():
    prices = load_prices(TABLE)
    assert cell_cost(results(model="explore", name="scripted"), prices) is None
    assert cell_cost(results(model="free-m", name="vllm"), prices)["total"] == 0.0
    with pytest.raises(PriceError, match=r"no prices for model 'gpt-y' \(llm=openai\)"):
        cell_cost(results(model="gpt-y"), prices)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"m": {"input": -1, "output": 1}}, r"m\.input must not be negative"),
        ({"m": {"input": "cheap", "output": 1}}, r"m\.input must be a number"),
        ({"m": {"input": 1}}, r"m\.output must be a number"),
        ({"m": {"input": 1, "output": 1, "output_price": 2}}, "unknown price field"),
        ({"m": 3}, "give input, output"),
        ([1, 2], "maps model names to prices"),
    ],
)
def test_bad_tables_are_one_line_errors_naming_the_field(table, message):
    with pytest.raises(PriceError, match=message):
        load_prices(table)


def test_tables_are_read_from_yaml_and_json_files(tmp_path):
    (tmp_path / "p.yaml").write_text("gpt-x: {input: 2, output: 8}\n", encoding="utf-8")
    (tmp_path / "p.json").write_text(json.dumps(TABLE), encoding="utf-8")
    assert load_prices(str(tmp_path / "p.yaml")).models["gpt-x"]["output"] == 8.0
    assert load_prices(str(tmp_path / "p.json")).models["free-m"]["input"] == 0.0
    (tmp_path / "bad.yaml").write_text("gpt-x: {input: [\n", encoding="utf-8")
    with pytest.raises(PriceError, match=r"bad\.yaml: not a valid price table"):
        load_prices(str(tmp_path / "bad.yaml"))
    with pytest.raises(PriceError, match="cannot read"):
        load_prices(str(tmp_path / "missing.yaml"))
    assert load_prices(None) is None


def test_a_sweeps_cost_adds_up_its_priced_cells():
    prices = load_prices(TABLE)
    costs = [cell_cost(results(), prices), cell_cost(results(), prices), None]
    total = sweep_cost(costs)
    assert total["cells"] == 2 and total["total"] == pytest.approx(2 * costs[0]["total"])
    assert sweep_cost([None]) is None
    with pytest.raises(PriceError, match="different currencies"):
        sweep_cost([costs[0], {**costs[0], "currency": "EUR"}])
