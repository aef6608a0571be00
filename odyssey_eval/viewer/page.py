"""Assembling the viewer page: one HTML file with its style, script and data inline.

The file needs nothing else: no server, no network, no fonts (system fonts only). Its Content Security
Policy says so to the browser too: nothing may be fetched (``default-src 'none'``), and only the page's
own scripts run (allowed by their SHA-256, not by being inline), so even a flaw in escaping could not
run a script a model wrote into its reasoning. The run's data travels as a JSON block that the browser
never executes, with ``<``, ``>`` and ``&`` written as ``\\u003c``... so no text in it can close the block.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["embed_json", "render_page"]

_DEPGRAPH_HANDLER = re.compile(r"""onchange="(odysseyPair\('[A-Za-z0-9_-]+',this\))\"""")


@cache
def _asset(name: str) -> str:
    return resources.files("odyssey_eval.viewer").joinpath("static", name).read_text(encoding="utf-8")


def embed_json(data: Any) -> str:
    """JSON safe to place inside ``<script type="application/json">``: nothing in it can end the element
    or start markup, and the parsed value is unchanged."""
    try:
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:  # NaN or infinity somewhere (a metric of an odd run): JSON has no such numbers
        text = json.dumps(_finite(data), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _finite(value: Any) -> Any:
    """``value`` with every NaN and infinity replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def render_page(
    data: Mapping[str, Any], *, depgraph_html: str | None = None, depgraph_script: str | None = None
) -> str:
    """The page for ``data`` (:func:`odyssey_eval.viewer.data.view_data`), with the action-dependency
    graph's HTML fragment and its script when the run saved one."""
    script = _asset("viewer.js")
    sources = [_sha256(script)]
    extra = ""
    if depgraph_html is not None:
        handlers = sorted(set(_DEPGRAPH_HANDLER.findall(depgraph_html)))  # the legend's checkboxes
        if handlers:
            sources = ["'unsafe-hashes'", *sources, *(_sha256(h) for h in handlers)]
        extra = f'<template id="depgraph-template">{depgraph_html}</template>'
        if depgraph_script:
            body = depgraph_script.removeprefix("<script>").removesuffix("</script>")
            sources.append(_sha256(body))
            extra += f"<script>{body}</script>"
    policy = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; "
        f"script-src {' '.join(sources)}"
    )
    run = data["run"]
    title = f"{run['title']} · seed {run['seed']} — odyssey view"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="odyssey view">'
        f"<title>{html.escape(title)}</title><style>{_asset('viewer.css')}</style></head><body>"
        f"{_asset('body.html')}{extra}"
        f'<script type="application/json" id="odyssey-data">{embed_json(data)}</script>'
        f"<script>{script}</script></body></html>\n"
    )
