"""Render one correlation heatmap (criteria, metric x criteria or metric x metric)."""

from storyeval.analysis import correlation_matrix
from storyeval.data.registry import resolve_metrics
from storyeval.io import log_to, read_table
from storyeval.plots import correlation_heatmap, save_figure

log = log_to(snakemake.log[0])
spec = snakemake.params.spec
kind = snakemake.params.kind
correlations = read_table(snakemake.input.correlations, ["kind", "level", "coefficient", "x", "y", "r"])
registry = read_table(snakemake.input.registry, ["slug", "label", "order"])
subset = resolve_metrics(snakemake.params.representative, registry, "config.yaml figures.representative_metrics") if spec["subset"] else None
matrix = correlation_matrix(correlations, kind, spec["level"], spec["coefficient"], registry, subset)
what = {"criteria": "criteria", "metric_criterion": "metrics x criteria", "metric_metric": "metrics x metrics"}[kind]
title = f"{spec['level'].capitalize()}-level |{spec['coefficient'].capitalize()}| (%): {what}"
figure = correlation_heatmap(matrix, title, lower_triangle=kind != "metric_criterion", average_row=kind == "metric_criterion")
save_figure(figure, snakemake.output.pdf, snakemake.output.png, dpi=snakemake.params.dpi)
log.info("%s: %d x %d cells", snakemake.wildcards.fig, *matrix.shape)
