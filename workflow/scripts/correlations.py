"""Criteria x criteria, metric x criterion and metric x metric correlations at each level."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.analysis import constant_columns, correlation_float_format, correlation_table
from storyeval.data.load import load_cubes, needs_exact_means
from storyeval.io import log_to, write_csv

log = log_to(snakemake.log[0])
params = snakemake.params
human, metrics = load_cubes(snakemake.input, params.reference_system,
                            needs_exact_means(params.system_ties, params.system_coefficients))
constant = constant_columns(metrics)
if constant:
    log.warning("%d metric(s) constant on this dataset, so their correlations are NaN: %s", len(constant),
                ", ".join(constant))
table = correlation_table(human, metrics, params.levels, params.coefficients, params.system_ties,
                          system_backend=params.system_coefficients)
write_csv(table, snakemake.output[0], correlation_float_format(params.system_coefficients))
log.info("%d correlations over %d systems and %d prompts", len(table), len(metrics.systems), len(metrics.prompts))
