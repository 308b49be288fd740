"""Which LLM judge and which metric agree best with the human ratings: r with its BOOT-BOTH interval (Deutsch,
Dror & Roth 2021) per criterion and grouping, the members of the best's significance cluster filled (WMT)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from storyeval.plots.base import first_seen, new_figure, require_columns, white_style
from storyeval.plots.pages import COEFFICIENTS

COLOURS = {"metric": "#4c72b0", "LLM judge": "#dd8452"}
COLUMNS = ["grouping", "criterion", "kind", "label", "r", "ci_low", "ci_high", "rank"]


def best_agreement(frame: pd.DataFrame, coefficient: str, dpi: int = 200) -> Figure:
    """One panel per criterion (rows) and grouping (columns): the best metrics and LLM judges of meta_best.

    `dpi`: the PNG's. The layout is measured at it: hinted 6 pt labels are wider in pixels at 200 dpi than at
    the default 100, and a layout made at 100 clipped the longest labels of the PNG."""
    require_columns(frame, COLUMNS, "best_agreement")
    criteria, groupings = first_seen(frame["criterion"]), first_seen(frame["grouping"])
    rows = frame.groupby(["criterion", "grouping"]).size().max()
    shown = {kind: colour for kind, colour in COLOURS.items() if kind in set(frame["kind"])}  # the legend's kinds
    with white_style():
        # At most 11.5 inches wide: the report's page fits the figure to the window (pages.FIT_INCHES).
        width = min(4.2 * len(groupings), 11.5)
        figure = new_figure(width, 0.22 * rows * len(criteria) + 1.0, layout="constrained", dpi=dpi)
        axes = figure.subplots(len(criteria), len(groupings), squeeze=False, sharex=True)
        for (i, criterion), (j, grouping) in ((a, b) for a in enumerate(criteria) for b in enumerate(groupings)):
            ax, panel = axes[i, j], frame[(frame["criterion"] == criterion) & (frame["grouping"] == grouping)]
            panel = panel.sort_values("r", kind="stable").reset_index(drop=True)
            for kind, colour in shown.items():
                part = panel[panel["kind"] == kind]
                # a line from low to high: a percentile bootstrap interval need not hold its own r
                ax.hlines(part.index, part["ci_low"], part["ci_high"], colors=colour, linewidth=1)
                for best, face in ((True, colour), (False, "white")):
                    chosen = part[(part["rank"] == 1) == best]
                    ax.scatter(
                        chosen["r"],
                        chosen.index,
                        s=18,
                        color=face,
                        edgecolors=colour,
                        zorder=3,
                        label=f"{kind}{', best cluster' if best else ''}" if i == j == 0 else None,
                    )
            ax.set_yticks(panel.index, panel["label"], fontsize=6)
            ax.set_ylim(-0.5, len(panel) - 0.5)  # half a row around each: an undefined r (NaN) set no data limit
            ax.axvline(0, color="#999", linewidth=0.5)
            ax.set_title(f"{criterion}, grouping {grouping}", fontsize=8)
            ax.tick_params(axis="x", labelsize=7)
        for ax in axes[-1]:
            ax.set_xlabel(f"{COEFFICIENTS.get(coefficient, coefficient)} with the human ratings", fontsize=8)
        figure.legend(loc="outside lower center", ncols=4, fontsize=7, frameon=False)
    return figure
