"""Top metrics per criterion (Tab. 5, 8, 9) and Borda counts (Tab. 6) from the correlations, and from the design's
answer (level design)."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.analysis import rankings
from storyeval.io import log_to, read_table, write_csv
from storyeval.stats.confounds import flagged

log = log_to(snakemake.log[0])
correlations = read_table(snakemake.input.correlations, ["kind", "level", "coefficient", "x", "y", "r", "n"],
                          round_trip=True)
registry = read_table(snakemake.input.registry, ["slug", "label", "order", "degenerate_release", "direction"])
p = snakemake.params
has_answer = "answer" in snakemake.input.keys()  # a set without ratings has no design's answer
answer = read_table(snakemake.input.answer, ["level", "criterion", "metric", "r"]) if has_answer else None
top, counts = rankings(correlations, registry, p.top_k, p.borda_ties, p.orientation, answer)
confounds = read_table(snakemake.input.confounds, ["coefficient", "metric", "criterion", "length", "confound"])
top = flagged(top, confounds, {"coefficient": "coefficient", "metric": "metric", "criterion": "criterion"},
              top["level"] == "story", system=snakemake.params.pooled)
write_csv(top, snakemake.output.top)
write_csv(counts, snakemake.output.borda)
log.info("ranked by %s", "r after orientation (lower-is-better metrics negated)" if p.orientation == "oriented"
         else "|r| (HANNA)")
log.info("Borda top: %s", counts.groupby("level").head(1)[["level", "label", "borda"]].to_dict("records"))
