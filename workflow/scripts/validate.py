"""Computed vs released values on the stories both have (HANNA's human stories in hanna-llm)."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.io import log_to, read_table, write_csv
from storyeval.metrics.validation import validation_table

log = log_to(snakemake.log[0])
computed = read_table(snakemake.input.computed, ["story_id", "metric", "value"])
released = read_table(snakemake.input.released, ["story_id", "metric", "value"])
table = validation_table(computed, released)
write_csv(table, snakemake.output[0])
log.info("\n%s", table.to_string())
