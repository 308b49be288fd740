"""A built-in dataset's printed numbers recomputed by its paper's own recipe (storyeval.datasets.paper_recipes)."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.datasets import paper_recipes
from storyeval.io import log_to, write_csv

log = log_to(snakemake.log[0])
name = snakemake.wildcards.dataset
table = paper_recipes(snakemake.params.dataset, name, list(snakemake.input))
write_csv(table, snakemake.output[0])
log.info("%s: %d numbers by the paper's recipes", name, len(table))
