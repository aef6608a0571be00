"""Rendering dependency graphs: filters by verb pair, Mermaid, SVG, and the command line."""

from __future__ import annotations

import json

import pytest

from odyssey_eval.depgraph import arc_diagram_html, filter_graph, load_graph, main, pair_counts, to_mermaid, to_svg

GRAPH = {
    "format": 1,
    "game": "mossfall",
    "nodes": [
        {"id": 0, "step": 0, "agent": None, "kind": "world", "name": "world"},
        {"id": 1, "step": 1, "agent": "ada", "kind": "action", "name": "pick up", "command": "pick up wood_log"},
        {"id": 2, "step": 3, "agent": "ada", "kind": "action", "name": "craft", "command": "craft 1 wooden_club"},
        {"id": 3, "step": 8, "agent": "bo", "kind": "action", "name": "pick up", "command": "pick up wooden_club"},
        {"id": 4, "step": 9, "agent": "bo", "kind": "action", "name": "attack", "command": "attack rat_1"},
    ],
    "edges": [
        {"src": 0, "dst": 1, "object": "wood_log", "how": "move", "units": 1},
        {"src": 0, "dst": 2, "object": "workbench", "how": "use", "units": 1},
        {"src": 1, "dst": 2, "object": "wood_log", "how": "consume", "units": 1},
        {"src": 2, "dst": 3, "object": "wooden_club", "how": "move", "units": 1},
        {"src": 3, "dst": 4, "object": "wooden_club", "how": "use", "units": 1},
    ],
}


def test_pairs_and_filters():
    assert pair_counts(GRAPH) == {
        "craft -> pick up": 1,
        "pick up -> attack": 1,
        "pick up -> craft": 1,
        "world -> craft": 1,
        "world -> pick up": 1,
    }
    plain = filter_graph(GRAPH)
    assert [e["src"] for e in plain["edges"]] == [1, 2, 3] and [n["id"] for n in plain["nodes"]] == [1, 2, 3, 4]
    only = filter_graph(GRAPH, include=["pick up->craft", " craft -> pick up "])
    assert [(e["src"], e["dst"]) for e in only["edges"]] == [(1, 2), (2, 3)]
    assert [(e["src"], e["dst"]) for e in filter_graph(GRAPH, exclude=["pick up -> craft"])["edges"]] == [
        (2, 3),
        (3, 4),
    ]
    assert len(filter_graph(GRAPH, include_world=True)["edges"]) == 5
    assert [(e["src"], e["dst"]) for e in filter_graph(GRAPH, agent="bo")["edges"]] == [(2, 3), (3, 4)]


def test_mermaid_svg_and_html():
    text = to_mermaid(filter_graph(GRAPH))
    assert text.splitlines()[0] == "flowchart LR" and '["pick up"]' in text and "-->|1|" in text
    svg = to_svg(filter_graph(GRAPH))
    assert svg.startswith("<svg") and svg.count("<path data-pair=") == 3
    assert "pick up wooden_club @8 -&gt; attack rat_1 @9 (bo): use 1 wooden_club" in svg
    fragment = arc_diagram_html(filter_graph(GRAPH), "g 1")
    assert "id='g_1'" in fragment and fragment.count("type='checkbox'") == 3
    assert "No dependencies" in arc_diagram_html(filter_graph(GRAPH, include=[]), "x")
    long = {**GRAPH, "edges": GRAPH["edges"] * 3}
    assert "arcs not drawn" in to_svg(long, max_arcs=4)


def test_command_line(tmp_path, capsys):
    (tmp_path / "dependency_graph.json").write_text(json.dumps(GRAPH))
    assert main([str(tmp_path)]) == 0
    assert "pick up -> craft" in capsys.readouterr().out
    svg = tmp_path / "g.svg"
    assert main([str(tmp_path), "--format", "svg", "--include", "pick up -> attack", "-o", str(svg)]) == 0
    assert (tmp_path / "g.svg").read_text().count("<path data-pair=") == 1
    assert main([str(tmp_path / "nowhere")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a dependency graph"):
        load_graph(tmp_path / "bad.json")
