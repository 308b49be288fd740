"""Kemeny consensus of the rankings Borda aggregates, with Borda's Kemeny score beside it."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.analysis import metric_criterion_table, with_labels
from storyeval.io import log_to, read_table, write_csv
from storyeval.stats.kemeny import kemeny_table

log = log_to(snakemake.log[0])
correlations = read_table(snakemake.input.correlations, ["kind", "level", "coefficient", "x", "y", "r"])
registry = read_table(snakemake.input.registry, ["slug", "label", "order", "direction"])
levels = {"story": ["story"], "system": ["system"], "global": ["story", "system"]}
levels = {name: members for name, members in levels.items() if set(members) <= set(correlations["level"])}
consensus, summary = kemeny_table(metric_criterion_table(correlations, registry), levels,
                                  snakemake.params.kemeny["dp_limit"], snakemake.params.kemeny["ilp_time_limit"],
                                  snakemake.params.orientation)
write_csv(with_labels(consensus, registry), snakemake.output.consensus)
write_csv(summary, snakemake.output.summary)
log.info("%s", summary.to_string())
