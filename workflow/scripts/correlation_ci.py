"""Percentile bootstrap CIs (prompts resampled) of every metric-criterion correlation."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.data.load import load_cubes
from storyeval.io import log_to, write_csv
from storyeval.stats.correlation_ci import correlation_intervals

log = log_to(snakemake.log[0])
params = snakemake.params
human, metrics = load_cubes(snakemake.input, params.reference_system)
table = correlation_intervals(
    human, metrics, params.levels, params.coefficients, params.n_resamples, params.seed, params.confidence
)
write_csv(table, snakemake.output[0])
log.info("%d intervals from %d resamples (seed %d)", len(table), params.n_resamples, params.seed)
