"""What a cell's model calls cost, from a price table the user gives (``eval.prices``).

A price table maps a model to its prices per million tokens: ``input``, ``cached_input`` (what a
hosted API bills for input its prompt cache served; the input price where not given) and ``output``::

    currency: USD                 # optional, only a label
    gpt-5-mini: {input: 0.25, cached_input: 0.025, output: 2.00}
    Qwen/Qwen3-4B: {input: 0, output: 0}

``eval.prices`` is the path of such a YAML or JSON file, or the table itself. A cell's cost counts
every model call it made, tutorial steps and QA rounds included (they are billed too), and is written
to ``results.json`` as ``cost``: ``total`` bills the input the server said it served from its cache
(``cached_tokens``, counted for the play steps only: the tutorial's and QA's cached input is billed at
the input price, so ``total`` is an upper bound where the server caches them) at the cached price and
the rest at the input price; ``total_if_prefix_cached`` is what it would be if
every cacheable prefix of the play steps (``cacheable_prefix_tokens``, an estimate) were billed cached:
the two bound what a prompt cache saves. Local backends (scripted, embedded, hf) cost nothing unless the
table lists their model; an API model the table lacks is an error, before the cell calls it.

Prices are not part of what a cell is (a new table re-prices finished cells in the report).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from odyssey_agents.errors import ConfigError

__all__ = ["FREE_BACKENDS", "PriceError", "Prices", "cell_cost", "load_prices", "sweep_cost"]

#: Backends that run on this machine: no bill unless the table says otherwise.
FREE_BACKENDS = frozenset({"scripted", "embedded", "hf", "transformers", "none"})
_FIELDS = ("input", "cached_input", "output")


class PriceError(ConfigError):
    """A price table that cannot be read, or that lacks a model a cell calls."""


class Prices:
    """A checked price table (see the module docstring); ``where`` names it in messages."""

    def __init__(self, table: Mapping[str, Any], where: str = "eval.prices"):
        if not isinstance(table, Mapping):
            raise PriceError(f"{where}: a price table maps model names to prices, not {type(table).__name__}")
        self.where = where
        self.currency = str(table.get("currency", "USD"))
        self.models: dict[str, dict[str, float]] = {}
        for model, row in table.items():
            if model == "currency":
                continue
            if not isinstance(row, Mapping):
                raise PriceError(f"{where}: {model}: give input, output (and cached_input) per million tokens")
            unknown = sorted(set(row) - set(_FIELDS))
            if unknown:
                raise PriceError(f"{where}: {model}: unknown price field(s) {', '.join(map(str, unknown))}")
            prices: dict[str, float] = {}
            for name in _FIELDS:
                value = row.get(name, row.get("input") if name == "cached_input" else None)
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                    raise PriceError(f"{where}: {model}.{name} must be a number (per million tokens), got {value!r}")
                if value < 0:
                    raise PriceError(f"{where}: {model}.{name} must not be negative, got {value}")
                prices[name] = float(value)
            self.models[str(model)] = prices

    def of(self, llm: Mapping[str, Any]) -> dict[str, float] | None:
        """The prices of the model an ``llm`` group names; None for a local backend the table lacks."""
        model = llm.get("model")
        if model is not None and str(model) in self.models:
            return self.models[str(model)]
        if llm.get("name", "none") in FREE_BACKENDS:
            return None
        raise PriceError(
            f"{self.where}: no prices for model {model!r} (llm={llm.get('name')}); add it to the table "
            "(0 for a model that costs nothing per token)"
        )


def load_prices(setting: Any) -> Prices | None:
    """``eval.prices``: None, a path to a YAML/JSON table, or the table itself."""
    if setting in (None, "", "null"):
        return None
    if not isinstance(setting, (str, Path)):
        return Prices(setting)  # the table itself (a mapping, or an error naming what it is)
    path = Path(str(setting)).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PriceError(f"eval.prices: cannot read {path}: {exc.strerror or exc}") from None
    try:
        if path.suffix.lower() == ".json":
            table = json.loads(text)
        else:
            import yaml

            table = yaml.safe_load(text)
    except Exception as exc:  # a syntax error of either format: one line naming the file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PriceError(f"{path}: not a valid price table ({first})") from None
    return Prices(table if table is not None else {}, str(path))


def cell_cost(results: Mapping[str, Any], prices: Prices) -> dict[str, Any] | None:
    """The ``cost`` entry of a cell's ``results.json`` (None for a local model the table does not price)."""
    row = prices.of(results.get("llm") or {})
    if row is None:
        return None
    metrics = results.get("metrics") or {}
    qa_in = sum(int(r.get("tokens", (0, 0))[0]) for r in results.get("qa") or [])
    qa_out = sum(int(r.get("tokens", (0, 0))[1]) for r in results.get("qa") or [])
    tutorial = metrics.get("tutorial") or {}  # the metrics count play steps; the tutorial's calls are billed too
    input_tokens = int(metrics.get("input_tokens", 0)) + int(tutorial.get("input_tokens", 0)) + qa_in
    output_tokens = int(metrics.get("output_tokens", 0)) + int(tutorial.get("output_tokens", 0)) + qa_out
    cached = min(input_tokens, int(metrics.get("cached_tokens", 0)))
    cacheable = min(input_tokens, max(cached, int(metrics.get("cacheable_prefix_tokens", 0))))

    def bill(cached_tokens: int) -> float:
        paid = (input_tokens - cached_tokens) * row["input"] + cached_tokens * row["cached_input"]
        return round((paid + output_tokens * row["output"]) / 1e6, 6)

    return {
        "model": (results.get("llm") or {}).get("model"),
        "currency": prices.currency,
        "prices_per_million": dict(row),
        "input_tokens": input_tokens,
        "cached_tokens": cached,
        "output_tokens": output_tokens,
        "total": bill(cached),
        "total_if_prefix_cached": bill(cacheable),
    }


def sweep_cost(costs: list[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """The cells' costs added up (None when no cell was priced); one currency, or an error."""
    priced = [c for c in costs if c]
    if not priced:
        return None
    currencies = sorted({str(c["currency"]) for c in priced})
    if len(currencies) > 1:
        raise PriceError(f"the cells were priced in different currencies ({', '.join(currencies)}): not added up")
    return {
        "currency": currencies[0],
        "cells": len(priced),
        "total": round(sum(float(c["total"]) for c in priced), 6),
        "total_if_prefix_cached": round(sum(float(c["total_if_prefix_cached"]) for c in priced), 6),
        "input_tokens": sum(int(c["input_tokens"]) for c in priced),
        "cached_tokens": sum(int(c["cached_tokens"]) for c in priced),
        "output_tokens": sum(int(c["output_tokens"]) for c in priced),
    }
