"""Top metrics per criterion (Tab. 5, 8, 9) and Borda counts (Tab. 6) from the correlations."""

from storyeval.analysis import BORDA_LEVELS, metric_criterion_table
from storyeval.io import log_to, read_table, write_csv
from storyeval.stats.ranking import borda, top_metrics

log = log_to(snakemake.log[0])
correlations = read_table(snakemake.input.correlations, ["kind", "level", "coefficient", "x", "y", "r", "n"])
registry = read_table(snakemake.input.registry, ["slug", "label", "order", "degenerate_release"])
table = metric_criterion_table(correlations, registry)
# A released column flagged degenerate (plain-Sinkhorn underflow) keeps its rank but is marked in tables.
labels = registry.set_index("slug").apply(lambda row: row["label"] + ("†" if row.get("degenerate_release") else ""), axis=1)
top = top_metrics(table, snakemake.params.top_k)
top.insert(top.columns.get_loc("metric") + 1, "label", top["metric"].map(labels))
write_csv(top, snakemake.output.top)
counts = borda(table, {name: levels for name, levels in BORDA_LEVELS.items() if set(levels) <= set(table["level"])})
counts.insert(counts.columns.get_loc("metric") + 1, "label", counts["metric"].map(labels))
write_csv(counts, snakemake.output.borda)
log.info("Borda top: %s", counts.groupby("level").head(1)[["level", "label", "borda"]].to_dict("records"))
