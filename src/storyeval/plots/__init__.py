"""Figures of the workflow: functions return matplotlib Figures (Agg canvas); save_figure writes PDF + PNG.

The names load on first use (PEP 562), so that storyeval.plots.pages, which the workflow reads when it parses,
does not bring matplotlib and seaborn (2 s) with it. The imports below are not run; they say where each name
lives, to readers, type checkers and storyeval.sources (a rule's rerun trigger).
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from storyeval.plots.base import save_figure
    from storyeval.plots.heatmaps import correlation_heatmap, f1_heatmap, pvalue_heatmap, rank_heatmap
    from storyeval.plots.panels import ranking_comparison, rating_violins, topk_lines

MODULES = ["base", "heatmaps", "panels"]
__all__ = [
    "correlation_heatmap",
    "f1_heatmap",
    "pvalue_heatmap",
    "rank_heatmap",
    "ranking_comparison",
    "rating_violins",
    "save_figure",
    "topk_lines",
]


def __getattr__(name: str):
    if name in __all__:
        for module in MODULES:
            home = import_module(f"storyeval.plots.{module}")
            if hasattr(home, name):
                return getattr(home, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
