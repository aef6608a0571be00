"""``odyssey view``: the command line of the viewer (see the package docstring for what the page shows)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from odyssey_env.extras import install_command
from odyssey_env.safeio import printable
from odyssey_eval.viewer.build import PAGE, write_view
from odyssey_eval.viewer.data import ViewError
from odyssey_eval.viewer.serve import serve

__all__ = ["main"]


def _require_layout() -> None:
    try:
        import networkx  # noqa: F401
    except ModuleNotFoundError:
        raise ViewError(f"odyssey view needs the 'eval' extra (networkx): {install_command('eval')}") from None


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
    print(printable(f"view: {out}"))
    if args.serve:
        try:
            serve(args.run_dir, port=args.port, open_browser=args.open)
        except KeyboardInterrupt:
            print()
        return 0
    if args.open:
        import webbrowser

        webbrowser.open(out.resolve().as_uri())
    return 0
