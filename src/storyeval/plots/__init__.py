"""Figures of the workflow: functions return matplotlib Figures (Agg canvas); save_figure writes PDF + PNG."""

from storyeval.plots.base import save_figure
from storyeval.plots.heatmaps import correlation_heatmap, f1_heatmap, pvalue_heatmap, rank_heatmap
from storyeval.plots.panels import ranking_comparison, rating_violins, topk_lines

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
