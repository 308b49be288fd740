"""The evaluation side by side (issue 7): one panel per (dataset, measure), methods as rows.

Computed values are filled dots with their bootstrap 95 % CI as a bar; StoryER's published rows are hollow
diamonds without a bar (reported, not recomputed). Rows keep the table's order of first appearance.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from storyeval.learned.evaluate import EVALUATION_COLUMNS
from storyeval.plots.base import check_range, new_figure, require_columns, save_figure, white_style

PANEL_ORDER = [("storyer-heldout-pairs", "accuracy"), ("wp200", "spearman"), ("wp200", "kendall"),
               ("scary200", "spearman"), ("scary200", "kendall")]


def evaluation_figure(table: pd.DataFrame, pdf_path: str | Path, png_path: str | Path, *,
                      methods: list[str] | None = None, dpi: int = 200) -> None:
    """Dot-and-interval panels of `table` (EVALUATION_COLUMNS); `methods` restricts and orders the computed rows."""
    require_columns(table, EVALUATION_COLUMNS, "evaluation_figure")
    check_range(table[["value", "ci_low", "ci_high"]], -1, 1, "values and CI bounds", "evaluation_figure")
    if methods is not None:
        table = table[table["method"].isin(methods) | (table["source"] == "published")]
    panels = [(data, metric) for data, metric in PANEL_ORDER
              if ((table["dataset"] == data) & (table["metric"] == metric)).any()]
    with white_style():
        figure = new_figure(3.0 * len(panels), 0.35 * table["method"].nunique() + 1.2)
        axes = figure.subplots(1, len(panels), sharey=True, squeeze=False)[0]
        rows = list(dict.fromkeys(table["method"]))
        position = {method: len(rows) - 1 - index for index, method in enumerate(rows)}
        for ax, (data, metric) in zip(axes, panels):
            cell = table[(table["dataset"] == data) & (table["metric"] == metric)]
            computed, published = cell[cell["source"] == "computed"], cell[cell["source"] == "published"]
            y = computed["method"].map(position)
            ax.errorbar(computed["value"], y, xerr=[computed["value"] - computed["ci_low"],
                                                    computed["ci_high"] - computed["value"]],
                        fmt="o", color="C0", ecolor="C0", capsize=2, markersize=4, label="computed (95 % CI)")
            ax.scatter(published["value"], published["method"].map(position), marker="D", facecolors="none",
                       edgecolors="C3", label="published (StoryER Tab. 3)", zorder=3)
            ax.axvline(0.5 if metric == "accuracy" else 0.0, color="0.6", linewidth=0.8, linestyle="--")
            ax.set_title(f"{data}\n{metric}", fontsize=9)
            ax.set_yticks(range(len(rows)), rows[::-1], fontsize=8)
            ax.tick_params(axis="x", labelsize=8)
        axes[0].legend(loc="lower left", bbox_to_anchor=(0, 1.15), fontsize=7, frameon=False, ncol=2)
        save_figure(figure, pdf_path, png_path, dpi=dpi)
