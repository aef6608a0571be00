"""``odyssey paper import [--from PATH] [--out DIR] [--game NAME]`` and ``odyssey paper status [--out DIR]``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from odyssey_eval.paper import release as rel
from odyssey_eval.paper.importer import GAMES, digest, import_release

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    from odyssey_env.userdir import games_dir

    p = argparse.ArgumentParser(
        prog="odyssey paper",
        description="The paper's own games: convert the reference release (agentodyssey 0.1.0) into odyssey games.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    imp = sub.add_parser("import", help="convert the release's seven games (never runs its code)")
    imp.add_argument(
        "--from",
        dest="source",
        help="a wheel, sdist or checkout of agentodyssey 0.1.0 (default: $ODYSSEY_REFERENCE_WHEEL, the cached "
        "download, or pip download from PyPI)",
    )
    imp.add_argument("--out", type=Path, default=None, help=f"where the game folders go (default: {games_dir()})")
    imp.add_argument("--game", action="append", choices=GAMES, help="only this game (repeatable)")
    st = sub.add_parser("status", help="which paper games are imported, from which release, with their sizes")
    st.add_argument("--out", type=Path, default=None, help=f"the games folder (default: {games_dir()})")
    st.add_argument("--json", action="store_true")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    from odyssey_env.userdir import games_dir, provenance, stale_import

    args = _parser().parse_args(argv)
    out = args.out or games_dir()
    if args.command == "import":
        source = args.source or rel.cached_wheel() or rel.download()
        release = rel.open_release(source)
        written = import_release(release, out, tuple(args.game or GAMES))
        for folder in written:
            record = provenance(folder) or {}
            sizes = record.get("sizes", {})
            print(
                f"{folder.name:14s} {record.get('env_id', ''):32s} {sizes.get('areas', 0):3d} areas "
                f"{sizes.get('object_types', 0):3d} objects {sizes.get('npc_types', 0):3d} NPCs "
                f"{sizes.get('stages', 0):3d} stages  {len(record.get('differences', []))} differences noted"
            )
        print(f"imported from {release.source} (sha256 {release.sha256 or release.folder_digest()}) into {out}")
        return 0
    rows: list[dict[str, Any]] = []  # what --json prints
    for game in GAMES:
        folder = out / game
        stamp = provenance(folder) if folder.is_dir() else None
        rows.append(
            {
                "game": game,
                "imported": stamp is not None,
                "env_id": stamp["env_id"] if stamp else None,
                "from": stamp["summary"] if stamp else None,
                "sizes": stamp.get("sizes") if stamp else None,
                "digest": digest(folder) if stamp else None,
                "format": stamp.get("format") if stamp else None,
                "stale": stale_import(folder) if stamp else None,
            }
        )
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        if r["stale"]:
            print(f"{r['game']:14s} {r['stale']}")
        elif r["imported"]:
            s = r["sizes"]
            print(
                f"{r['game']:14s} {r['env_id']:32s} {s['areas']:3d}/{s['object_types']}/{s['npc_types']}/{s['stages']}"
                f"  {r['from']}"
            )
        else:
            print(f"{r['game']:14s} not imported (odyssey paper import)")
    return 0
