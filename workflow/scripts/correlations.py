"""Criteria x criteria, metric x criterion and metric x metric correlations at each level."""

from storyeval.analysis import correlation_table
from storyeval.data.load import load_cubes
from storyeval.io import log_to, write_csv

log = log_to(snakemake.log[0])
human, metrics = load_cubes(snakemake.input, snakemake.params.reference_system)
table = correlation_table(human, metrics, snakemake.params.levels, snakemake.params.coefficients)
write_csv(table, snakemake.output[0])
log.info("%d correlations over %d systems and %d prompts", len(table), len(metrics.systems), len(metrics.prompts))
