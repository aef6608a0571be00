"""Turning an ``llm`` config group into a backend.

``name`` picks the backend; every other key is a constructor argument, checked against the
backend's signature so that a misspelt option is an error, not a silent default. The cell seed is
the sampling seed unless the group sets its own.

Keys never come from a config: a config is written to the run directory (``cell.json``,
``config.yaml``), echoed in messages and shared with results, so a setting named like a credential
(``api_key``, ``token``, ``secret``, ``password``, ...) is refused, without repeating its value, in
favour of ``api_key_env``, the name of the environment variable that holds the key. The same holds of
a URL that carries credentials (``http://user:secret@host/v1``, ``...?api_key=...``): refused, never
repeated, wherever it appears in a config.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Mapping
from typing import Any

from odyssey_agents.errors import ConfigError
from odyssey_agents.llm.protocol import LLM
from odyssey_agents.options import keyword_options

__all__ = [
    "BACKENDS",
    "TRANSPORT_SETTINGS",
    "LLMConfigError",
    "build_llm",
    "identity",
    "refuse_secrets",
    "secret_settings",
    "url_has_credentials",
]

#: Backend name -> "module:Class" (imported only when used).
BACKENDS: dict[str, str] = {
    "openai": "odyssey_agents.llm.openai_compat:OpenAIChat",
    "vllm": "odyssey_agents.llm.openai_compat:OpenAIChat",
    "hf": "odyssey_agents.llm.transformers_local:TransformersLLM",
    "transformers": "odyssey_agents.llm.transformers_local:TransformersLLM",
    "embedded": "odyssey_agents.llm.embedded:EmbeddedLLM",
    "scripted": "odyssey_agents.llm.scripted:ScriptedLLM",
}

DEFAULT_VLLM_URL = "http://127.0.0.1:8000/v1"

#: Settings of an ``llm`` group that say how to reach the model, not which model answers or how it
#: samples: a cell is the same cell whatever they are, so a sweep stopped by ``429``s can be rerun with
#: lower limits or a longer timeout and resume. Run directories leave them out of the cell's identity.
TRANSPORT_SETTINGS: frozenset[str] = frozenset(
    {"timeout", "max_retries", "rate_limit_patience", "requests_per_minute", "tokens_per_minute", "max_in_flight"}
)


def identity(llm: Mapping[str, Any]) -> dict[str, Any]:
    """An ``llm`` group without its :data:`TRANSPORT_SETTINGS`."""
    return {k: v for k, v in dict(llm).items() if k not in TRANSPORT_SETTINGS}


class LLMConfigError(ConfigError):
    """An ``llm`` group that names no known backend or passes options it does not take."""


#: The last word of a setting that holds a credential (``api_key``, ``hf_token``, ``client_secret``...);
#: ``max_tokens``, ``token_param`` or ``api_key_env`` (a variable's name) end otherwise.
_SECRET_WORD = re.compile(
    r"(?:^|[_\-.])(?:key|apikey|token|secret|password|passwd|passphrase|credentials?|"
    r"authorization|auth|bearer|cookie)$",
    re.IGNORECASE,
)


_URL = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.\-]*://")


def url_has_credentials(value: Any) -> bool:
    """Whether ``value`` is a URL with a user or password in it, or a query parameter named like a key."""
    if not isinstance(value, str) or not _URL.match(value):
        return False
    from urllib.parse import parse_qsl, urlsplit

    try:
        parts = urlsplit(value.strip())
        if parts.username or parts.password or "@" in parts.netloc:
            return True
        return any(_SECRET_WORD.search(k) for k, _ in parse_qsl(parts.query, keep_blank_values=True))
    except ValueError:  # a malformed URL (a bad port...): refuse it rather than guess
        return "@" in value


def secret_settings(cfg: Any, prefix: str = "llm") -> list[str]:
    """Dotted names of the settings in ``cfg`` (nested mappings and lists included) named like a
    credential, or whose value is a URL carrying credentials."""
    found: list[str] = []
    if isinstance(cfg, Mapping):
        for key, value in cfg.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            named = _SECRET_WORD.search(str(key)) and value not in (None, "")
            if named or url_has_credentials(value):
                found.append(name)
            found += secret_settings(value, name)
    elif isinstance(cfg, list | tuple):
        for i, value in enumerate(cfg):
            name = f"{prefix}[{i}]"
            if url_has_credentials(value):
                found.append(name)
            found += secret_settings(value, name)
    return found


def refuse_secrets(cfg: Any, prefix: str = "llm") -> None:
    """Raise :class:`LLMConfigError` if ``cfg`` carries a credential (see the module docstring)."""
    found = secret_settings(cfg, prefix)
    if found:
        raise LLMConfigError(
            f"{', '.join(found)}: keys are not taken from configs, nor from URLs in them (user:password@ or "
            "?key=: configs are written to run directories and printed); put the key in an environment variable "
            "and name it with llm.api_key_env=VARIABLE (default OPENAI_API_KEY)"
        )


def build_llm(cfg: Mapping[str, Any], *, seed: int = 0) -> LLM:
    """Build the backend an ``llm`` config group describes (see module docstring)."""
    refuse_secrets(cfg)
    params = {k: v for k, v in dict(cfg).items() if v is not None}  # null in YAML: the backend's default
    name = params.pop("name", None)
    if name in (None, "none"):
        raise LLMConfigError(
            "this agent needs a language model: pick one with llm=embedded, llm=openai, "
            "llm=vllm, llm=hf or llm=scripted"
        )
    target = BACKENDS.get(name)
    if target is None:
        raise LLMConfigError(f"unknown llm backend {name!r}; known: {', '.join(sorted(BACKENDS))}")
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    accepted = keyword_options(cls)
    if name in ("openai", "vllm"):
        params.setdefault("backend", name)
    if name == "vllm":
        params.setdefault("base_url", os.environ.get("VLLM_BASE_URL", DEFAULT_VLLM_URL))
    if "seed" in accepted and "seed" not in params and name != "openai":
        params["seed"] = seed
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise LLMConfigError(
            f"llm backend {name!r} has no option(s) {', '.join(unknown)}; "
            f"it takes: {', '.join(sorted(accepted - {'backend'}))}"
        )
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:  # a value the backend refuses (max_tokens=0, ...)
        if isinstance(exc, ConfigError):
            raise
        raise LLMConfigError(f"cannot build llm backend {name!r}: {exc}") from exc
