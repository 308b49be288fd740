"""Correlations of every metric and LLM judge with its criteria, by grouping and Kendall variant."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.io import log_to, write_csv
from storyeval.stats.meta import correlation_table, load_meta, one_blas_thread

log = log_to(snakemake.log[0])
one_blas_thread()
meta = load_meta(snakemake.input, snakemake.params.reference_system)
p = snakemake.params.meta
table = correlation_table(meta, p["groupings"], p["coefficients"], p["calibrate_none"])
write_csv(table, snakemake.output[0])
log.info("%d rows: %d columns x %d criteria", len(table), len(meta.metrics.names), len(meta.human.names))
