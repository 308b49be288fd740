"""BOOT-BOTH confidence intervals of every metric's and LLM judge's correlation, one grouping."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.io import log_to, write_csv
from storyeval.stats.meta import boot_both_table, load_meta, one_blas_thread

log = log_to(snakemake.log[0])
one_blas_thread()
meta = load_meta(snakemake.input, snakemake.params.reference_system)
p = snakemake.params.meta
table = boot_both_table(
    meta, snakemake.wildcards.grouping, p["coefficient"], p["n_resamples"], p["seed"], p["confidence"]
)
write_csv(table, snakemake.output[0])
log.info("%d intervals", len(table))
