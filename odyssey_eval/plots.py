"""Figures for reports (matplotlib, drawn off-screen): one panel per quantity, one line per agent.

Runs of the same agent configuration (all seeds) are averaged step by step; a run that ended early
(quest complete) keeps its final value, and the band shows the lowest and highest run.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

__all__ = ["PANELS", "TITLES", "UNIT_PANELS", "figure_png", "literal", "mean_band", "plotting_available"]

PANELS = ("main", "supplementary", "combined", "diversity", "tokens")
TITLES = {
    "main": "Cumulative main reward (quest stages)",
    "supplementary": "Cumulative supplementary reward",
    "combined": "Normalized combined reward",
    "diversity": "Action diversity (window of 100)",
    "tokens": "Cumulative tokens",
}


def plotting_available() -> bool:
    """Whether matplotlib can be imported. This module imports it only when drawing, so that reports
    (tables, JSON, HTML without figures) work from an install without the ``eval`` extra."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def literal(text: str) -> str:
    """``text`` as matplotlib should show it, verbatim: an unescaped ``$`` starts mathtext (and a label
    like ``tag $x^$`` makes drawing fail), and a legend hides labels that start with ``_``."""
    text = text.replace("$", r"\$")
    return " " + text if text.startswith("_") else text


def mean_band(curves: Sequence[Sequence[float]]) -> tuple[list[float], list[float], list[float]]:
    """Step-wise mean, min and max of curves of different lengths (short ones hold their last value)."""
    kept = [list(c) for c in curves if len(c)]
    if not kept:
        return [], [], []
    n = max(len(c) for c in kept)
    padded = [c + [c[-1]] * (n - len(c)) for c in kept]
    cols = list(zip(*padded, strict=True))
    return [sum(c) / len(c) for c in cols], [min(c) for c in cols], [max(c) for c in cols]


#: Panels whose values lie in [0, 1] by definition: drawn on that axis, so a nearly flat curve looks flat
#: instead of filling a ±0.04 axis.
UNIT_PANELS = ("combined", "diversity")


def figure_png(
    title: str,
    series: Mapping[str, Sequence[Sequence[float]]],
    *,
    x_offset: int = 1,
    ylabel: str = "",
    unit: bool = False,
) -> bytes:
    """A PNG of one panel: ``series`` maps a label to the curves of its runs; ``unit`` draws the y axis
    over [0, 1] (for quantities normalized to it), else from 0 up (every panel counts up from 0)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    try:
        for label in sorted(series):
            mean, lo, hi = mean_band(series[label])
            if not mean:
                continue
            xs = list(range(x_offset, x_offset + len(mean)))
            (line,) = ax.plot(xs, mean, label=literal(f"{label} (n={len(series[label])})"), linewidth=1.6)
            if len(series[label]) > 1:
                ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.15, linewidth=0)
        ax.set_title(literal(title), fontsize=11)
        ax.set_xlabel("play step")
        if ylabel:
            ax.set_ylabel(literal(ylabel))
        if unit:
            ax.set_ylim(-0.02, 1.02)
        else:
            ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=8, loc="best")
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        return buf.getvalue()
    finally:
        plt.close(fig)
