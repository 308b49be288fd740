"""The Williams tests with Benjamini-Hochberg adjusted p-values (one family per level and criterion), as Chhun,
Suchanek & Clavel (2024) report them."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.io import log_to, read_table, write_csv
from storyeval.stats.fdr import with_bh

log = log_to(snakemake.log[0])
table = with_bh(read_table(snakemake.input[0], ["level", "criterion", "p"]), "p", ["level", "criterion"])
write_csv(table, snakemake.output[0])
log.info(
    "%d tests, %d with p < 0.05, %d with p_bh < 0.05",
    len(table),
    (table["p"] < 0.05).sum(),
    (table["p_bh"] < 0.05).sum(),
)
