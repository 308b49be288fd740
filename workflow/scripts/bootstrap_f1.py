"""Paired bootstrap over prompts: weighted F1 of each metric's system-pair labels against each criterion's."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.data.load import load_cubes
from storyeval.io import log_to, read_table, write_csv
from storyeval.stats.bootstrap import bootstrap_f1

log = log_to(snakemake.log[0])
params = snakemake.params
human, metrics = load_cubes(snakemake.input, params.reference_system)
registry = read_table(snakemake.input.registry, ["slug", "direction"]).set_index("slug")
directions = registry.loc[metrics.names, "direction"].tolist()
table = bootstrap_f1(human.values, metrics.values, directions, metrics.names, human.names,
                     params.n_resamples, params.seed, params.confidence, params.orient)
write_csv(table, snakemake.output[0])
log.info("%d resamples, seed %d, oriented %s; best mean F1: %s", params.n_resamples, params.seed, params.orient,
         table.groupby("metric")["f1"].mean().idxmax())
