"""Rendering action-dependency graphs (``dependency_graph.json``, see ``odyssey_env.provenance``).

    python -m odyssey_eval.depgraph RUN_DIR --format svg -o graph.svg --include "pick up -> craft"
    python -m odyssey_eval.depgraph RUN_DIR --format mermaid
    python -m odyssey_eval.depgraph RUN_DIR --format pairs

Two views, both filtered by *verb pair* (``"pick up -> craft"``: an edge from a pick-up to a craft):

* an **arc diagram** (SVG): every action on a time axis, an arc from the action that produced or last
  moved an object to the action that used or consumed it, so long-range dependencies are long arcs
  (paper Fig. 4); in HTML, a legend with one checkbox per verb pair shows and hides them;
* a **Mermaid** flowchart of the pairs themselves (verb -> verb, labelled with the number of edges),
  as text to paste into any Mermaid renderer (nothing here fetches a script).

Everything is computed from the JSON alone: no game code runs.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["arc_diagram_html", "filter_graph", "load_graph", "main", "pair_counts", "to_mermaid", "to_svg"]

#: The largest dependency_graph.json read.
MAX_GRAPH_BYTES = 256 * 2**20
#: Arcs drawn at most; beyond it the longest-range ones are kept (they are what the diagram is for).
MAX_ARCS = 4000
_PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#637939",
    "#8c6d31",
    "#843c39",
    "#7b4173",
    "#3182bd",
)


def load_graph(path: str | Path) -> dict[str, Any]:
    """A graph from a ``dependency_graph.json`` file or a run directory holding one."""
    from odyssey_env.safeio import parse_json, read_regular

    p = Path(path)
    if p.is_dir():
        p = p / "dependency_graph.json"
    try:
        graph = parse_json(read_regular(p, MAX_GRAPH_BYTES), p)
    except FileNotFoundError:
        raise FileNotFoundError(f"{p} does not exist (run with eval.dependency_graph=true to save one)") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{p} is not a dependency graph ({str(exc).replace(f'{p}: ', '')})") from None
    if not isinstance(graph, dict) or not {"nodes", "edges"} <= set(graph):
        raise ValueError(f"{p} is not a dependency graph (no nodes and edges)")
    wrong = _shape_problem(graph)
    if wrong:
        raise ValueError(f"{p} is not a dependency graph ({wrong})")
    return graph


def _shape_problem(graph: Mapping[str, Any]) -> str | None:
    """What makes ``graph`` unfit to draw (a file from a run directory is untrusted data), or None."""

    def integer(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    nodes, edges = graph["nodes"], graph["edges"]
    if not isinstance(nodes, list) or not isinstance(edges, list):
        return "nodes and edges must be lists"
    ids = set()
    for i, n in enumerate(nodes):
        if not (isinstance(n, dict) and integer(n.get("id")) and isinstance(n.get("name"), str)):
            return f"nodes[{i}] needs an integer id and a name"
        if not isinstance(n.get("kind"), str):
            return f"nodes[{i}].kind must be text"
        if not integer(n.get("step")):
            return f"nodes[{i}].step must be an integer, not {type(n.get('step')).__name__}"
        for key in ("agent", "command"):
            if n.get(key) is not None and not isinstance(n[key], str):
                return f"nodes[{i}].{key} must be text"
        ids.add(n["id"])
    for i, e in enumerate(edges):
        if not (isinstance(e, dict) and e.get("src") in ids and e.get("dst") in ids):
            return f"edges[{i}] must join two of the nodes"
    return None


def _pair(names: Mapping[int, Mapping[str, Any]], edge: Mapping[str, Any]) -> str:
    return f"{names[edge['src']]['name']} -> {names[edge['dst']]['name']}"


def pair_counts(graph: Mapping[str, Any]) -> dict[str, int]:
    """Edges per verb pair, most frequent first (ties by name)."""
    names = {n["id"]: n for n in graph["nodes"]}
    counts: dict[str, int] = {}
    for e in graph["edges"]:
        pair = _pair(names, e)
        counts[pair] = counts.get(pair, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _norm(pair: str) -> str:
    return " -> ".join(part.strip() for part in re.split(r"\s*->\s*", pair.strip()))


def filter_graph(
    graph: Mapping[str, Any],
    *,
    include: Iterable[str] | None = None,
    exclude: Iterable[str] = (),
    include_world: bool = False,
    agent: str | None = None,
) -> dict[str, Any]:
    """The edges whose verb pair is in ``include`` (all when None) and not in ``exclude``; edges from
    the generated world (node 0) only with ``include_world``; only ``agent``'s actions' edges when given."""
    wanted = {_norm(p) for p in include} if include is not None else None
    unwanted = {_norm(p) for p in exclude}
    names = {n["id"]: n for n in graph["nodes"]}
    edges = []
    for e in graph["edges"]:
        src, dst = names[e["src"]], names[e["dst"]]
        if not include_world and src["kind"] == "world":
            continue
        if agent is not None and agent not in (src.get("agent"), dst.get("agent")):
            continue
        pair = _pair(names, e)
        if (wanted is None or pair in wanted) and pair not in unwanted:
            edges.append(e)
    used = {e["src"] for e in edges} | {e["dst"] for e in edges}
    return {**graph, "nodes": [n for n in graph["nodes"] if n["id"] in used], "edges": edges}


def to_mermaid(graph: Mapping[str, Any]) -> str:
    """A Mermaid flowchart of verb pairs: one box per verb or rule, one arrow per pair with its count."""
    ids: dict[str, str] = {}
    lines = ["flowchart LR"]
    for pair, n in pair_counts(graph).items():
        a, b = pair.split(" -> ")
        for name in (a, b):
            if name not in ids:
                ids[name] = f"n{len(ids)}"
                lines.append(f'    {ids[name]}["{name}"]')
        lines.append(f"    {ids[a]} -->|{n}| {ids[b]}")
    return "\n".join(lines) + "\n"


def _arcs(graph: Mapping[str, Any], max_arcs: int) -> tuple[list[tuple[int, int, str, str]], int]:
    """``(src step, dst step, pair, tooltip)`` per edge, longest first when over ``max_arcs``."""
    names = {n["id"]: n for n in graph["nodes"]}
    arcs = []
    for e in graph["edges"]:
        src, dst = names[e["src"]], names[e["dst"]]
        who = f" ({dst['agent']})" if dst.get("agent") else ""
        tip = (
            f"{src.get('command') or src['name']} @{src['step']} -> {dst.get('command') or dst['name']} "
            f"@{dst['step']}{who}: {e['how']} {e['units']} {e['object']}"
        )
        arcs.append((src["step"], dst["step"], _pair(names, e), tip))
    dropped = max(0, len(arcs) - max_arcs)
    if dropped:
        arcs = sorted(arcs, key=lambda a: (a[0] - a[1], a[0]))[:max_arcs]
    return arcs, dropped


def to_svg(
    graph: Mapping[str, Any], *, width: int = 1100, max_arcs: int = MAX_ARCS, colors: Mapping[str, str] | None = None
) -> str:
    """The arc diagram as a standalone SVG document (arcs carry ``data-pair``; hover shows the edge)."""
    arcs, dropped = _arcs(graph, max_arcs)
    colors = dict(colors or _colors(pair_counts(graph)))
    last = max([b for _, b, _, _ in arcs] + [1])
    first = min([a for a, _, _, _ in arcs] + [0])
    span = max(1, last - first)
    margin, height = 30, 340
    base = height - 30
    scale = (width - 2 * margin) / span
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
        f'font-family="sans-serif" font-size="11" role="img">',
        f'<line x1="{margin}" y1="{base}" x2="{width - margin}" y2="{base}" stroke="#999"/>',
    ]
    ticks = _ticks(first, last)
    for t in ticks:
        x = margin + (t - first) * scale
        out.append(
            f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 5}" stroke="#999"/>'
            f'<text x="{x:.1f}" y="{base + 17}" text-anchor="middle" fill="#555">{t}</text>'
        )
    out.append(f'<text x="{width - margin}" y="{height - 2}" text-anchor="end" fill="#555">step</text>')
    for a, b, pair, tip in arcs:
        x1, x2 = margin + (a - first) * scale, margin + (b - first) * scale
        r = max((x2 - x1) / 2, 1.5)
        h = min(r, base - 10)
        out.append(
            f'<path data-pair="{html.escape(pair)}" d="M{x1:.1f},{base} A{r:.1f},{h:.1f} 0 0 1 '
            f'{x1 + 2 * r:.1f},{base}" fill="none" stroke="{colors.get(pair, "#888")}" '
            f'stroke-opacity="0.55"><title>{html.escape(tip)}</title></path>'
        )
    if dropped:
        out.append(
            f'<text x="{margin}" y="14" fill="#8a4b00">{dropped} shorter arcs not drawn (over {max_arcs})</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def _ticks(first: int, last: int, n: int = 10) -> list[int]:
    step = max(1, round((last - first) / n))
    magnitude = 10 ** (len(str(step)) - 1)
    step = max(1, round(step / magnitude) * magnitude)
    return list(range(first - first % step, last + 1, step))


def _colors(counts: Mapping[str, int]) -> dict[str, str]:
    return {pair: _PALETTE[i % len(_PALETTE)] for i, pair in enumerate(counts)}


def arc_diagram_html(graph: Mapping[str, Any], ident: str, *, max_arcs: int = MAX_ARCS) -> str:
    """An HTML fragment: the arc diagram and a legend with one checkbox per verb pair (inline script,
    no network), plus the Mermaid text of the pairs. ``ident`` must be unique within the page."""
    counts = pair_counts(graph)
    if not counts:
        return "<p class='note'>No dependencies were recorded.</p>"
    colors = _colors(counts)
    box = re.sub(r"[^A-Za-z0-9_-]", "_", ident)
    legend = "".join(
        f"<label style='margin-right:.8rem;white-space:nowrap'><input type='checkbox' checked "
        f'data-pair="{html.escape(pair)}" onchange="odysseyPair(\'{box}\',this)">'
        f"<span style='color:{colors[pair]}'>&#9632;</span> {html.escape(pair)} ({n})</label> "
        for pair, n in counts.items()
    )
    nodes = len(graph["nodes"])
    return (
        f"<div id='{box}' class='depgraph'><p class='note'>{len(graph['edges'])} dependencies between "
        f"{nodes} actions and rule applications; an arc joins the action that produced or last moved an "
        "object to the one that used or consumed it. Untick a verb pair to hide it.</p>"
        f"<div style='font-size:.8rem'>{legend}</div>{to_svg(graph, max_arcs=max_arcs, colors=colors)}"
        f"<details><summary>Mermaid (verb pairs)</summary><pre>{html.escape(to_mermaid(graph))}</pre></details>"
        "</div>"
    )


#: The one script a page of arc diagrams needs (add it once).
TOGGLE_SCRIPT = (
    "<script>function odysseyPair(box,cb){var p=cb.getAttribute('data-pair');"
    "document.getElementById(box).querySelectorAll('path[data-pair]').forEach(function(e){"
    "if(e.getAttribute('data-pair')===p){e.style.display=cb.checked?'':'none';}});}</script>"
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m odyssey_eval.depgraph", description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", help="a run directory or a dependency_graph.json")
    parser.add_argument("--format", choices=("svg", "mermaid", "pairs", "html"), default="pairs")
    parser.add_argument(
        "--include",
        action="append",
        metavar="PAIR",
        help='keep only this verb pair, e.g. "pick up -> craft" (repeatable)',
    )
    parser.add_argument("--exclude", action="append", default=[], metavar="PAIR", help="drop this verb pair")
    parser.add_argument("--agent", help="only the edges touching this agent's actions")
    parser.add_argument("--world", action="store_true", help="keep the edges from the generated world")
    parser.add_argument("-o", "--output", type=Path, help="write here instead of printing")
    args = parser.parse_args(argv)
    try:
        graph = load_graph(args.graph)
    except (FileNotFoundError, ValueError) as exc:
        print(f"depgraph: {exc}", file=sys.stderr)
        return 2
    graph = filter_graph(graph, include=args.include, exclude=args.exclude, include_world=args.world, agent=args.agent)
    if args.format == "pairs":
        text = "".join(f"{n:6d}  {pair}\n" for pair, n in pair_counts(graph).items())
    elif args.format == "mermaid":
        text = to_mermaid(graph)
    elif args.format == "svg":
        text = to_svg(graph)
    else:
        text = (
            f"<!doctype html><html><head><meta charset='utf-8'><title>dependency graph</title></head><body>"
            f"{arc_diagram_html(graph, 'g')}{TOGGLE_SCRIPT}</body></html>"
        )
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
