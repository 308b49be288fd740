"""Judges computed here beside the same judges' ratings in HANNA's TACL 2024 release, on the stories both hold."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

import pandas as pd

from storyeval.io import log_to, read_parquet, read_table, write_csv
from storyeval.judges.validation import validation_table

log = log_to(snakemake.log[0])
computed = pd.concat([read_parquet(path).melt(id_vars="story_id", var_name="metric", value_name="value")
                      for path in snakemake.input.scores], ignore_index=True)
registry = pd.concat([read_table(path, ["slug", "judge", "criterion", "task", "template"])
                      for path in snakemake.input.registries], ignore_index=True)
released = read_table(snakemake.input.released, ["story_id", "metric", "value"])
released_registry = read_table(snakemake.input.released_registry, ["slug", "judge", "criterion", "task"])
table = validation_table(computed, registry, released, released_registry, snakemake.params.released)
write_csv(table, snakemake.output[0])
log.info("\n%s", table.to_string())
