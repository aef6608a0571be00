"""``odyssey report RUN_DIR...``: a results table on the terminal and an HTML report with plots.

    odyssey report runs/                         # every finished run below runs/
    odyssey report runs/mossfall runs/tallowmere --html out.html --json summary.json

Each argument is a run directory or a folder holding run directories. Metrics are recomputed from
the trajectories; the normalized combined reward is computed across all the given runs of a game
(paper §3.4), so it depends on which runs are reported together, as in the paper.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import math
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from odyssey_env.extras import install_command
from odyssey_env.safeio import UnsafeFile, entry_kind, printable, write_atomic
from odyssey_eval.collect import Run, load_runs
from odyssey_eval.cost import PriceError, sweep_cost
from odyssey_eval.depgraph import TOGGLE_SCRIPT, arc_diagram_html, filter_graph, load_graph
from odyssey_eval.gameorigin import origin_text
from odyssey_eval.metrics import WINDOW, WORK_PURPOSES, normalized_combined
from odyssey_eval.plots import PANELS, TITLES, UNIT_PANELS, figure_png, plotting_available
from odyssey_eval.qa.contamination import DEFAULT_MARGIN, contamination_report
from odyssey_eval.rundir import RunDirError

__all__ = ["COLUMNS", "GLOSSARY", "build_rows", "format_table", "main", "write_html"]

#: (key, header, format) of the table columns.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("game", "game", "s"),
    ("agent", "agent", "s"),
    ("seed", "seed", "s"),
    ("play_steps", "steps", "d"),
    ("main", "main", "g"),
    ("sup", "sup", "g"),
    ("combined", "comb", ".3f"),
    ("object_exploration", "OE", ".3f"),
    ("action_exploration", "AE", ".3f"),
    ("action_diversity", "AD", ".3f"),
    ("action_diversity_window_mean", "AD100", ".3f"),
    ("invalid_action_rate", "invalid", ".1%"),
    ("failed_action_rate", "failed", ".1%"),
    ("tokens_per_step", "tok/step", ".0f"),  # the model cost: tokens of model calls only
    ("total_tokens", "tokens", ".0f"),
    ("training_tokens", "train tok", ".0f"),  # work that is not a model call, each kind apart
    ("embedding_tokens", "embed tok", ".0f"),
    ("memory_write_tokens", "mem tok", ".0f"),
    ("decision_ms", "ms/step", ".2f"),
    ("wk_before", "WK pre", ".2f"),
    ("wk_after", "WK post", ".2f"),
    ("em_after", "EM", ".2f"),
)
NUMERIC = [k for k, _, f in COLUMNS if f != "s"]

#: The terminal's one-line key to the abbreviations (the HTML report has the full legend).
LEGEND_LINE = (
    "OE object exploration · AE action exploration · AD action diversity (AD100: over windows of 100) · "
    "WK world-knowledge QA · EM episodic-memory QA · invalid/failed: commands rejected by the parser / "
    "refused by the world (the HTML report defines every column)"
)

#: What each column means, shown as the report's legend and as each header's tooltip. The wording
#: follows the paper's definitions (§3.4, A3.1) and says where odyssey counts differently.
GLOSSARY: dict[str, str] = {
    "game": "the game played",
    "agent": "the agent configuration (paradigm, add-ons, model, tag); runs that differ only in seed are averaged",
    "seed": "the run's seed (n=: the number of runs averaged)",
    "play_steps": "play steps: commands chosen after the tutorial (tutorial steps are reported apart)",
    "main": "main reward: main-quest stages completed (paper §3.4)",
    "sup": "supplementary reward: side quests + new areas explored + new object types crafted + new NPC types "
    "defeated, each counted the first time (paper §3.4)",
    "combined": "normalized combined reward at the last step: ½ (main / M_main + sup / M_sup), with M the largest "
    "value reached by any run of this game in this report (paper §3.4)",
    "object_exploration": "OE, object exploration: object types the agent acquired (picked up, taken, received or "
    "bought) / carryable object types of the game (paper §3.4)",
    "action_exploration": "AE, action exploration: verbs used in well-formed commands / verbs of the game; a command "
    "the world refused still tried its verb (paper §3.4)",
    "action_diversity": "AD, action diversity: normalized entropy of the verbs used over the whole run, "
    "−Σ p_i log p_i / log N with N the verbs of the game; 0 = always the same verb, 1 = every verb equally often "
    "(paper §3.4)",
    "action_diversity_window_mean": "AD100: action diversity over each window of 100 consecutive commands (the "
    "paper's curves), averaged over the run; one window for runs shorter than 100 commands",
    "invalid_action_rate": "invalid-action rate: commands the parser rejected (unknown verb, wrong argument count, "
    "bad amount) / play steps; the turn passes as a wait (paper A3.1)",
    "failed_action_rate": "failed-action rate: well-formed commands the world refused with corrective feedback "
    "(e.g. 'Cannot take anything out of coins') / play steps; the paper counts these in no metric",
    "tokens_per_step": "input + output tokens of model calls (every purpose) per play step: the model cost",
    "total_tokens": "input + output tokens of model calls over the play steps",
    "training_tokens": "tokens read by training updates (all epochs): not model calls, not in the model cost",
    "embedding_tokens": "word pieces read by an embedding model: not model calls, not in the model cost",
    "memory_write_tokens": "tokens a latent memory read to write itself: not model calls, not in the model cost",
    "decision_ms": "mean time the agent took to choose a command, in milliseconds",
    "wk_before": "World-Knowledge QA accuracy before play: multiple-choice questions built from the game's data "
    "(recipes, where objects are, which areas connect, the rules' facts)",
    "wk_after": "World-Knowledge QA accuracy after play: the same kind of questions, asked when the run ends",
    "em_after": "EM, Episodic-Memory QA accuracy after play: multiple-choice questions about the agent's own "
    "trajectory (areas visited, objects acquired, crafted or dropped, NPCs defeated, the order of its actions)",
}


def build_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """One row per run, with the normalized combined reward computed per game over these runs."""
    combined: dict[int, float] = {}
    for game in sorted({r.game for r in runs}):
        members = [r for r in runs if r.game == game]
        curves = normalized_combined([(r.main_curve, r.sup_curve) for r in members])
        for r, c in zip(members, curves, strict=True):
            combined[id(r)] = c[-1] if c else 0.0
    rows = []
    for r in sorted(runs, key=lambda r: (r.game, r.label, r.results["seed"])):
        m = r.metrics
        rows.append(
            {
                "game": r.game,
                "agent": r.label,
                "seed": str(r.results["seed"]),
                "path": str(r.path),
                "play_steps": m["play_steps"],
                "main": m["main_reward"],
                "sup": m["supplementary_reward"],
                "combined": combined[id(r)],
                "object_exploration": m["object_exploration"],
                "action_exploration": m["action_exploration"],
                "action_diversity": m["action_diversity"],
                "action_diversity_window_mean": m["action_diversity_window_mean"],
                "invalid_action_rate": m["invalid_action_rate"],
                "failed_action_rate": m.get("failed_action_rate"),  # None in runs reported from stored metrics
                "tokens_per_step": m["tokens_per_step"],
                "total_tokens": m["total_tokens"],
                **{key: m.get(key, 0) for key in WORK_PURPOSES.values()},
                "decision_ms": 1000 * m["decision_time_mean"],
                "wk_before": r.qa_accuracy("world_knowledge", "before"),
                "wk_after": r.qa_accuracy("world_knowledge", "after"),
                "em_after": r.qa_accuracy("episodic", "after"),
                "tutorial_steps": m["tutorial"]["steps"],
                "end_reason": r.results.get("end_reason"),
                "top_actions": [list(pair) for pair in r.top_actions],
            }
        )
    return rows


def total_cost(runs: Sequence[Run]) -> tuple[dict[str, Any] | None, str]:
    """The runs' costs added up (``cost`` in their ``results.json``, written when a price table was
    given: ``eval.prices``) and the line that says it; ``(None, "")`` when no run was priced."""
    try:
        total = sweep_cost([r.results.get("cost") for r in runs])
    except PriceError as exc:  # priced in two currencies: said, not added up
        return None, f"cost: {exc}"
    if total is None:
        return None, ""
    unpriced = len(runs) - total["cells"]
    line = (
        f"cost: {total['total']:.4f} {total['currency']} for {total['cells']} priced run(s) "
        f"({total['input_tokens']} input tokens, {total['cached_tokens']} cached, {total['output_tokens']} output; "
        f"{total['total_if_prefix_cached']:.4f} if every cacheable prefix were billed cached)"
    )
    if unpriced:
        line += f"; {unpriced} run(s) not priced"
    return total, line


def mean_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows averaged over seeds per (game, agent); ``seed`` becomes the number of runs."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["game"], row["agent"]), []).append(row)
    out = []
    for (game, agent), members in sorted(groups.items()):
        mean: dict[str, Any] = {"game": game, "agent": agent, "seed": f"n={len(members)}"}
        for key in NUMERIC:
            values = [m[key] for m in members if m[key] is not None]
            mean[key] = statistics.fmean(values) if values else None
        out.append(mean)
    return out


def _fmt(value: Any, spec: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if spec == "s":
        return str(value)
    if not isinstance(value, int | float) or isinstance(value, bool):
        return str(value)
    if spec == "d":
        return str(round(value))
    text = format(value, spec)
    if text.startswith("-") and not any(c in "123456789" for c in text):
        return text[1:]  # -0.000: a tiny negative rounded to zero is zero
    return text


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str, str]] = COLUMNS) -> str:
    """The table as text for a terminal: every cell has its control characters escaped (names come from
    run directories, which anyone may have written)."""
    header = [h for _, h, _ in columns]
    body = [[printable(_fmt(row.get(k), f)) for k, _, f in columns] for row in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(header)]
    numeric = [f != "s" for _, _, f in columns]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True))

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(b) for b in body)])


# ---------------------------------------------------------------------------- HTML
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1200px;
color:#222;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
th,td{padding:.25rem .5rem;border-bottom:1px solid #eee;text-align:right}
th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}
th{background:#f6f6f6}.plots{display:flex;flex-wrap:wrap;gap:.5rem}.plots img{max-width:590px;width:100%}
th[title]{cursor:help;text-decoration:underline dotted}.legend{font-size:.85rem;margin:.5rem 0}
.legend dl{display:grid;grid-template-columns:max-content 1fr;gap:.15rem .75rem;margin:.5rem 0}
.legend dt{font-weight:600}.legend dd{margin:0}ul.top{font-size:.85rem;margin-top:0}
.warn{color:#8a4b00}.note{color:#666;font-size:.85rem}code{background:#f3f3f3;padding:0 .2rem}
"""


def _html_table(rows: Sequence[dict[str, Any]], views: dict[str, str] | None = None) -> str:
    """The table; with ``views`` (row path -> link to its viewer page), a last column links each run."""
    head = "".join(f"<th title='{html.escape(GLOSSARY[k])}'>{html.escape(h)}</th>" for k, h, _ in COLUMNS) + (
        "<th title='this run step by step (odyssey view)'>view</th>" if views else ""
    )

    def link(r: dict[str, Any]) -> str:
        href = (views or {}).get(r.get("path", ""))
        return f'<td><a href="{html.escape(href)}">view</a></td>' if href else "<td></td>"

    body = "".join(
        "<tr>"
        + "".join(f"<td>{html.escape(_fmt(r.get(k), f))}</td>" for k, _, f in COLUMNS)
        + (link(r) if views else "")
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _legend() -> str:
    """The columns' definitions, once on the page (the headers carry the same text as tooltips)."""
    items = "".join(
        f"<dt>{html.escape(h)}</dt><dd>{html.escape(GLOSSARY[k])}</dd>" for k, h, _ in COLUMNS if k not in _PLAIN
    )
    return f"<details class='legend' open><summary>What the columns mean</summary><dl>{items}</dl></details>"


_PLAIN = frozenset({"game", "agent", "seed"})  # columns that need no legend line (they keep their tooltip)


def _top_actions_html(runs: Sequence[Run]) -> str:
    """One line per run: what the agent mostly did (its most frequent commands, with their share)."""
    items = []
    for r in sorted(runs, key=lambda r: (r.label, r.results["seed"])):
        steps = r.metrics.get("play_steps") or 0
        if not r.top_actions or not steps:
            continue
        shares = " · ".join(
            f"<code>{html.escape(cmd)}</code> {count / steps:.0%} ({count})" for cmd, count in r.top_actions
        )
        items.append(f"<li>{html.escape(r.label)}, seed {html.escape(str(r.results['seed']))}: {shares}</li>")
    if not items:
        return ""
    return (
        "<p class='note'>What each run mostly did (its most frequent commands, share of play steps):</p>"
        f"<ul class='top'>{''.join(items)}</ul>"
    )


#: Panels whose curves are rewards: all zero, they are replaced by a line that says so.
_REWARD_PANELS = ("main", "supplementary", "combined")


def _write_views(runs: Sequence[Run], report: Path) -> tuple[dict[str, str], list[str]]:
    """Each cell's viewer page (``odyssey view``) in ``<report name>_views/`` beside the report, and the
    link of each run's row to it (an agent of a multi-agent cell opens with that agent selected)."""
    from urllib.parse import quote

    from odyssey_eval.viewer.build import write_views

    pages, problems = write_views(
        [r.cell_path or r.path for r in runs], report.parent / f"{report.stem}_views", root=report.parent
    )
    links = {}
    for r in runs:
        page = pages.get(r.cell_path or r.path)
        if page is not None:
            href = quote(page.relative_to(report.parent).as_posix())
            if r.cell_path is not None and r.cell_path != r.path:
                href += f"#agent={quote(r.path.name)}"
            links[str(r.path)] = href
    return links, problems


def _panels(runs: Sequence[Run]) -> dict[str, dict[str, list[Sequence[float]]]]:
    """Per panel: label -> the runs' curves."""
    panels: dict[str, dict[str, list[Sequence[float]]]] = {p: {} for p in PANELS}
    combined = normalized_combined([(r.main_curve, r.sup_curve) for r in runs])
    for r, comb in zip(runs, combined, strict=True):
        panels["main"].setdefault(r.label, []).append(r.main_curve)
        panels["supplementary"].setdefault(r.label, []).append(r.sup_curve)
        panels["combined"].setdefault(r.label, []).append(comb)
        panels["diversity"].setdefault(r.label, []).append(r.metrics["action_diversity_windows"])
        panels["tokens"].setdefault(r.label, []).append(r.token_curve)
    return panels


def write_html(
    runs: Sequence[Run],
    path: Path,
    unfinished: Sequence[Path] = (),
    *,
    margin: float = DEFAULT_MARGIN,
    views: bool = True,
) -> Path:
    """A single self-contained HTML file (plots embedded as PNG), readable offline; with ``views``, each
    run's row links its trajectory viewer (``odyssey view``), written beside the report."""
    kind = entry_kind(path)
    if kind not in (None, "regular file"):  # refused before anything is written beside it
        raise UnsafeFile(f"{path} is a {kind}, not a regular file: refused (writes never follow links)")
    rows = build_rows(runs)
    links, view_problems = _write_views(runs, path) if views else ({}, [])
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>odyssey report</title>"
        f"<style>{_CSS}</style></head><body><h1>odyssey report</h1>",
        f"<p class='note'>{len(runs)} finished run(s). Metrics are recomputed from the trajectories; "
        "play steps only (tutorial steps are reported apart). comb = normalized combined reward at the "
        "last step (paper §3.4), normalized over the runs of this report. Hover a column's header for its "
        "definition.</p>",
        _legend(),
    ]
    if unfinished:
        items = "".join(f"<li><code>{html.escape(str(p))}</code></li>" for p in unfinished)
        parts.append(f"<p class='warn'>Unfinished run directories (rerun the command to resume):</p><ul>{items}</ul>")
    parts.append("<h2>Summary (mean over seeds)</h2>" + _html_table(mean_rows(rows)))
    cost_line = total_cost(runs)[1]
    if cost_line:
        parts.append(f"<p class='note cost'>{html.escape(cost_line)}</p>")
    plotting = plotting_available()
    for game in sorted({r.game for r in runs}):
        members = [r for r in runs if r.game == game]
        parts.append(f"<h2>{html.escape(game)}</h2>")
        origin = next((t for r in members if (t := origin_text(r.results.get("game_origin")))), None)
        if origin:  # the paper's game, or odyssey's own of the same name: said beside the name
            parts.append(f"<p class='note origin'>{html.escape(origin)}</p>")
        if not plotting:
            parts.append(f"<p class='warn'>Plots need matplotlib: {html.escape(install_command('eval'))}</p>")
        else:
            imgs = []
            x_offsets = {"diversity": WINDOW}  # the first window ends at its last command
            panels = _panels(members)
            flat = [p for p in _REWARD_PANELS if not any(v for curves in panels[p].values() for c in curves for v in c)]
            if flat:
                what = "no reward in this run" if len(members) == 1 else f"no reward in any of its {len(members)} runs"
                kinds = ", ".join(TITLES[p].lower() for p in flat)
                parts.append(
                    f"<p class='note noreward'>{what.capitalize()}: {html.escape(kinds)} stayed 0, so "
                    "they are not plotted.</p>"
                )
            for panel, series in panels.items():
                if panel in flat:
                    continue
                if panel == "tokens" and not any(c and c[-1] for curves in series.values() for c in curves):
                    continue  # no agent here used a model
                if panel == "diversity" and not any(len(c) > 1 for curves in series.values() for c in curves):
                    parts.append(
                        f"<p class='note'>No runs here are longer than one window of {WINDOW} commands: "
                        "their action diversity is in the table (AD100), not plotted.</p>"
                    )
                    continue  # one value per run: a plot of single points would look empty
                png = figure_png(TITLES[panel], series, x_offset=x_offsets.get(panel, 1), unit=panel in UNIT_PANELS)
                imgs.append(
                    f"<img alt='{html.escape(TITLES[panel])}' "
                    f"src='data:image/png;base64,{base64.b64encode(png).decode()}'>"
                )
            parts.append("<div class='plots'>" + "".join(imgs) + "</div>")
        parts.append(_html_table([row for row in rows if row["game"] == game], links))
        parts.append(_top_actions_html(members))
    verdicts = contamination_report([{**q, "game": r.game} for r in runs for q in r.qa], margin=margin)
    if verdicts:
        parts.append(
            "<h2>World-Knowledge QA before/after play (contamination filter)</h2><table><thead><tr>"
            "<th>game</th><th>before</th><th>after</th><th>gain</th><th>chance</th><th>flag limit</th>"
            "<th>known before play?</th></tr></thead><tbody>"
        )
        for game, v in verdicts.items():
            cells = [game] + [_fmt(v[k], ".2f") for k in ("before", "after", "gain", "chance", "limit")]
            cells.append("FLAGGED" if v["flagged"] else "no")
            parts.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
        parts.append("</tbody></table>")
    parts.extend(_graph_sections(runs))
    warnings = [(r.path, w) for r in runs for w in r.warnings] + [(path, w) for w in view_problems]
    if warnings:
        parts.append(
            "<h2>Warnings</h2><ul>"
            + "".join(
                f"<li class='warn'><code>{html.escape(str(p))}</code>: {html.escape(w)}</li>" for p, w in warnings
            )
            + "</ul>"
        )
    parts.append("</body></html>")
    write_atomic(path, "\n".join(parts))  # never through a link planted in a run directory
    return path


def _graph_sections(runs: Sequence[Run]) -> list[str]:
    """One arc diagram per cell that saved an action-dependency graph (once for a multi-agent cell)."""
    cells: dict[Path, Run] = {}
    for r in sorted(runs, key=lambda r: (r.game, r.label, r.results["seed"])):
        if r.dependency_graph is not None:
            cells.setdefault(r.dependency_graph, r)
    if not cells:
        return []
    parts = [
        "<h2>Action-dependency graphs</h2><p class='note'>From <code>dependency_graph.json</code> "
        "(<code>eval.dependency_graph=true</code>): edges from the generated world and from the tutorial "
        "are left out. <code>python -m odyssey_eval.depgraph RUN_DIR</code> renders one with other "
        "filters.</p>"
    ]
    for i, (graph_path, r) in enumerate(cells.items()):
        team = (r.results.get("multiagent") or {}).get("agents")
        title = f"{r.game} / {','.join(team) if team else r.label} / seed {r.results['seed']}"
        try:
            graph = filter_graph(load_graph(graph_path))
        except ValueError as exc:
            parts.append(f"<h3>{html.escape(title)}</h3><p class='warn'>{html.escape(str(exc))}</p>")
            continue
        parts.append(f"<h3>{html.escape(title)}</h3>" + arc_diagram_html(graph, f"depgraph{i}"))
    parts.append(TOGGLE_SCRIPT)
    return parts


def _default_html(paths: Sequence[str]) -> Path:
    first = Path(paths[0])
    base = first if first.is_dir() else first.parent
    return base / "report.html"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="odyssey report", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="run directories or folders that hold them")
    parser.add_argument("--html", type=Path, help="where to write the HTML report (default: <first path>/report.html)")
    parser.add_argument("--no-html", action="store_true", help="print the table only")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument("--per-run", action="store_true", help="print one row per run, not means over seeds")
    parser.add_argument(
        "--no-views", action="store_true", help="do not write each run's trajectory viewer next to the HTML report"
    )
    parser.add_argument(
        "--margin",
        type=float,
        default=DEFAULT_MARGIN,
        help="contamination flag: before-play WK accuracy above chance + MARGIN",
    )
    args = parser.parse_args(argv)
    try:
        runs, unfinished = load_runs(args.paths)
    except (FileNotFoundError, RunDirError) as exc:  # a path that is not there, a damaged run directory
        print(printable(f"odyssey report: {exc}"), file=sys.stderr)
        return 2
    if not runs:
        print(printable(f"odyssey report: no finished runs under {', '.join(args.paths)}"), file=sys.stderr)
        return 1
    rows = build_rows(runs)
    print(format_table(rows if args.per_run else mean_rows(rows)))  # every cell escaped by format_table
    print(LEGEND_LINE)
    cost, cost_line = total_cost(runs)
    if cost_line:
        print(printable(cost_line))
    for p in unfinished:
        print(printable(f"unfinished: {p} (rerun its command to resume)"))
    for r in runs:
        for w in r.warnings:
            print(printable(f"warning: {r.path}: {w}"))
    for game, v in contamination_report(
        [{**q, "game": r.game} for r in runs for q in r.qa], margin=args.margin
    ).items():
        if v["flagged"]:
            print(
                printable(
                    f"warning: {game}: World-Knowledge accuracy before play {v['before']:.2f} exceeds "
                    f"{v['limit']:.2f} (chance {v['chance']:.2f} + margin): the model may already know this game"
                )
            )
    try:
        if args.json:
            summary: dict[str, Any] = {"runs": rows, "means": mean_rows(rows)}
            if cost is not None:  # only when a run was priced: no zeros standing for "not priced"
                summary["cost"] = cost
            write_atomic(args.json, json.dumps(summary, indent=1))
        if not args.no_html:
            html_path = args.html or _default_html(args.paths)
            html_path.parent.mkdir(parents=True, exist_ok=True)
            out = write_html(runs, html_path, unfinished, margin=args.margin, views=not args.no_views)
            views = "" if args.no_views else f" (a trajectory viewer per run in {out.stem}_views/)"
            print(printable(f"report: {out}{views}"))
    except (UnsafeFile, OSError) as exc:
        print(printable(f"odyssey report: cannot write: {exc}"), file=sys.stderr)
        return 2
    return 0
