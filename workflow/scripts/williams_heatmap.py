"""Fig. 27-38: Williams-test p-values (%) for one level and criterion, metric A (rows) beating metric B (columns)."""

from storyeval.data.registry import resolve_metrics
from storyeval.io import log_to, read_table
from storyeval.plots import pvalue_heatmap, save_figure

log = log_to(snakemake.log[0])
level, criterion, subset = snakemake.params.spec
williams = read_table(snakemake.input.williams, ["level", "criterion", "metric_a", "metric_b", "p"])
registry = read_table(snakemake.input.registry, ["slug", "label", "order"]).sort_values("order")
order = resolve_metrics(snakemake.params.representative, registry, "figures.representative_metrics") if subset else list(registry["slug"])
rows = williams[(williams["level"] == level) & (williams["criterion"] == criterion)]
matrix = rows.pivot(index="metric_a", columns="metric_b", values="p").reindex(index=order, columns=order)
labels = dict(zip(registry["slug"], registry["label"]))
matrix = matrix.rename(index=labels, columns=labels)
title = f"Williams test p-values (%), {level} level, {criterion}: row metric > column metric (Pearson)"
save_figure(pvalue_heatmap(matrix, title), snakemake.output.pdf, snakemake.output.png, dpi=snakemake.params.dpi)
log.info("%s: %d significant of %d", snakemake.wildcards.fig, int((matrix < 0.05).sum().sum()), int(matrix.notna().sum().sum()))
