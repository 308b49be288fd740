"""Fig. 8: |correlation| of chosen metrics on each criterion's top-k systems, k decreasing."""

from storyeval.io import log_to, read_table
from storyeval.plots import save_figure, topk_lines

log = log_to(snakemake.log[0])
topk = read_table(snakemake.input.topk, ["criterion", "k", "metric", "abs_r"])
registry = read_table(snakemake.input.registry, ["slug", "label"])
topk["metric"] = topk["metric"].map(dict(zip(registry["slug"], registry["label"])))
title = f"System-level |{snakemake.params.coefficient.capitalize()}| on the top-k systems of each criterion"
save_figure(topk_lines(topk, title), snakemake.output.pdf, snakemake.output.png, dpi=snakemake.params.dpi)
log.info("%d points", len(topk))
