"""Fig. 7 (representative subset) and Fig. 26 (all metrics): weighted F1 of pairwise system comparison."""

from storyeval.data.registry import resolve_metrics
from storyeval.io import log_to, read_table
from storyeval.plots import f1_heatmap, save_figure

log = log_to(snakemake.log[0])
f1 = read_table(snakemake.input.f1, ["metric", "criterion", "f1"])
registry = read_table(snakemake.input.registry, ["slug", "label", "order"]).sort_values("order")
subset = snakemake.wildcards.fig.endswith("_subset")
order = resolve_metrics(snakemake.params.representative, registry, "figures.representative_metrics") if subset else list(registry["slug"])
frame = f1.set_index("metric").loc[order].reset_index()
frame["metric"] = frame["metric"].map(dict(zip(registry["slug"], registry["label"])))
title = "Weighted F1 (%) of paired-bootstrap system comparisons: metric vs criterion"
save_figure(f1_heatmap(frame, title), snakemake.output.pdf, snakemake.output.png, dpi=snakemake.params.dpi)
log.info("%s: %d metrics", snakemake.wildcards.fig, len(order))
