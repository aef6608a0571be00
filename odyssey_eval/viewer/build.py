"""Building and writing viewer pages: a run's data, its dependency graph when it saved one, one HTML file.

Apart from the package ``__init__`` (which only names the public API) and from the command line
(:mod:`odyssey_eval.viewer.cli`), so that the server and the report import the builder, not the package.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path

from odyssey_agents.errors import OdysseyError
from odyssey_env.safeio import UnsafeFile, write_atomic
from odyssey_eval.depgraph import TOGGLE_SCRIPT, arc_diagram_html, filter_graph, load_graph
from odyssey_eval.rundir import DEPENDENCY_GRAPH, slug
from odyssey_eval.viewer.data import ViewError, resolve_run, view_data
from odyssey_eval.viewer.page import render_page

__all__ = ["PAGE", "build_page", "default_output", "write_view", "write_views"]

#: The file name ``odyssey view`` writes into the run directory unless told otherwise.
PAGE = "view.html"


def _depgraph(root: Path) -> tuple[str, str] | None:
    """The arc diagram's HTML fragment and script for the cell at ``root``, or None when it saved none."""
    path = root / DEPENDENCY_GRAPH
    if not path.is_file():
        return None
    try:
        graph = filter_graph(load_graph(path))
    except (ValueError, KeyError, TypeError) as exc:  # a damaged graph spoils its section, not the page
        return f"<p class='muted'>{html.escape(f'{path} cannot be drawn: {exc}')}</p>", ""
    note = (
        "<p class='faint'>Edges from the generated world and from the tutorial are left out; "
        "<code>python -m odyssey_eval.depgraph RUN_DIR</code> renders other selections.</p>"
    )
    return note + arc_diagram_html(graph, "depgraph"), TOGGLE_SCRIPT


def build_page(run_dir: str | Path) -> str:
    """The viewer page of the run at ``run_dir`` (a run directory, a multi-agent cell, or one agent's
    folder of one), as HTML text."""
    data = view_data(run_dir)
    graph = _depgraph(Path(data["run"]["path"]))
    return render_page(data, depgraph_html=graph[0] if graph else None, depgraph_script=graph[1] if graph else None)


def default_output(run_dir: str | Path) -> Path:
    root, _ = resolve_run(run_dir)
    return root / PAGE


def write_view(run_dir: str | Path, output: str | Path | None = None, *, root: str | Path | None = None) -> Path:
    """Write the page of ``run_dir`` to ``output`` (default: ``view.html`` in the run directory).

    Written through a fresh temporary file and renamed (:func:`odyssey_env.safeio.write_atomic`): a link
    planted at the output, or at a folder between ``root`` (default: the output's folder) and it, is
    refused, never written through."""
    page = build_page(run_dir)
    out = Path(output) if output is not None else default_output(run_dir)
    try:
        if root is None:
            out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, page, root=root)
    except UnsafeFile as exc:
        raise ViewError(f"cannot write {out}: {exc}") from None
    except OSError as exc:
        raise ViewError(f"cannot write {out}: {exc.strerror or exc}; choose another place with -o FILE") from None
    return out


def write_views(cells: Sequence[Path], folder: Path, *, root: Path | None = None) -> tuple[dict[Path, Path], list[str]]:
    """One page per cell directory into ``folder`` (``odyssey report`` links them): ``({cell: page},
    [one line per cell that could not be viewed])``. Pages are named after the cells' paths below their
    common folder, so a report's views do not collide."""
    cells = sorted(dict.fromkeys(Path(c) for c in cells))
    if not cells:
        return {}, []
    common = Path(os.path.commonpath([c.resolve() for c in cells]))
    pages: dict[Path, Path] = {}
    problems: list[str] = []
    used: set[str] = set()
    for cell in cells:
        rel = cell.resolve().relative_to(common)
        name = slug("_".join(rel.parts) or cell.resolve().name)
        stem, n = name, 1
        while name in used:
            n += 1
            name = f"{stem}_{n}"
        used.add(name)
        try:
            pages[cell] = write_view(cell, folder / f"{name}.html", root=root if root is not None else folder)
        except OdysseyError as exc:
            problems.append(f"{cell}: no viewer ({exc})")
    return pages, problems
