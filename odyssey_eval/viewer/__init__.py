"""``odyssey view RUN_DIR``: a run's trajectory as one self-contained, interactive HTML file.

    odyssey view runs/mossfall/random/none/seed_0                 # writes runs/mossfall/random/none/seed_0/view.html
    odyssey view runs/mossfall/multi/oracle--random/none/seed_0 -o /tmp/cell.html
    odyssey view RUN_DIR --serve                              # also serve it on 127.0.0.1 (reload: fresh data)

The page shows the world graph of areas with the agent's path, a timeline and step slider, each step's
observation, reasoning, action, feedback, reward breakdown, inventory and stats, the quest's progress,
the QA rounds, the action-dependency graph when the run saved one, and filters (invalid actions,
deaths, quest stages, rewards, a verb, a text search); a multi-agent cell has an agent selector. It
needs no network and no server, and reading the run executes nothing from it (see
:mod:`odyssey_eval.viewer.data`).
"""

from __future__ import annotations

import argparse
import html
import sys
from collections.abc import Sequence
from pathlib import Path

from odyssey_agents.errors import OdysseyError
from odyssey_eval.viewer.data import ViewError, resolve_run, view_data

__all__ = ["ViewError", "build_page", "main", "view_data", "write_view", "write_views"]

#: The file name ``odyssey view`` writes into the run directory unless told otherwise.
PAGE = "view.html"


def _depgraph(root: Path) -> tuple[str, str] | None:
    """The arc diagram's HTML fragment and script for the cell at ``root``, or None when it saved none."""
    from odyssey_eval.depgraph import TOGGLE_SCRIPT, arc_diagram_html, filter_graph, load_graph
    from odyssey_eval.rundir import DEPENDENCY_GRAPH

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
    from odyssey_eval.viewer.page import render_page

    data = view_data(run_dir)
    graph = _depgraph(Path(data["run"]["path"]))
    return render_page(data, depgraph_html=graph[0] if graph else None, depgraph_script=graph[1] if graph else None)


def default_output(run_dir: str | Path) -> Path:
    root, _ = resolve_run(run_dir)
    return root / PAGE


def write_view(run_dir: str | Path, output: str | Path | None = None) -> Path:
    """Write the page of ``run_dir`` to ``output`` (default: ``view.html`` in the run directory)."""
    page = build_page(run_dir)
    out = Path(output) if output is not None else default_output(run_dir)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(page, encoding="utf-8")
        tmp.replace(out)
    except OSError as exc:
        raise ViewError(f"cannot write {out}: {exc.strerror or exc}; choose another place with -o FILE") from None
    return out


def write_views(cells: Sequence[Path], folder: Path) -> tuple[dict[Path, Path], list[str]]:
    """One page per cell directory into ``folder`` (``odyssey report`` links them): ``({cell: page},
    [one line per cell that could not be viewed])``. Pages are named after the cells' paths below their
    common folder, so a report's views do not collide."""
    import os

    from odyssey_eval.rundir import slug

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
            pages[cell] = write_view(cell, folder / f"{name}.html")
        except OdysseyError as exc:
            problems.append(f"{cell}: no viewer ({exc})")
    return pages, problems


def _require_layout() -> None:
    try:
        import networkx  # noqa: F401
    except ModuleNotFoundError:
        raise ViewError("odyssey view needs the 'eval' extra (networkx): pip install \"odyssey-gym[eval]\"") from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="odyssey view",
        description="Write a run's trajectory as one "
        "self-contained, interactive HTML file (no network, no server needed).",
    )
    parser.add_argument("run_dir", help="a run directory (or a multi-agent cell, or one agent's folder of one)")
    parser.add_argument("-o", "--output", type=Path, help=f"where to write the page (default: RUN_DIR/{PAGE})")
    parser.add_argument(
        "--serve",
        action="store_true",
        help="also serve the page on 127.0.0.1 until Ctrl-C; each reload reads the run again",
    )
    parser.add_argument("--port", type=int, default=0, help="port for --serve (default: any free port)")
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")
    args = parser.parse_args(argv)
    _require_layout()
    out = write_view(args.run_dir, args.output)
    print(f"view: {out}")
    if args.serve:
        from odyssey_eval.viewer.serve import serve

        try:
            serve(args.run_dir, port=args.port, open_browser=args.open)
        except KeyboardInterrupt:
            print()
        return 0
    if args.open:
        import webbrowser

        webbrowser.open(out.resolve().as_uri())
    return 0


if __name__ == "__main__":  # python -m odyssey_eval.viewer RUN_DIR
    try:
        sys.exit(main())
    except OdysseyError as exc:
        print(f"odyssey view: {exc}", file=sys.stderr)
        sys.exit(2)
