"""Pairwise accuracy and soft pairwise accuracy of the system rankings of every metric and LLM judge."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.io import log_to, write_csv
from storyeval.stats.meta import load_meta, one_blas_thread, pairwise_accuracy_table

log = log_to(snakemake.log[0])
one_blas_thread()
meta = load_meta(snakemake.input, snakemake.params.reference_system)
table = pairwise_accuracy_table(meta, snakemake.params.meta["n_permutations"], snakemake.params.meta["seed"])
write_csv(table, snakemake.output[0])
log.info("%d rows", len(table))
