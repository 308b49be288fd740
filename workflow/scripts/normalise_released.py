"""The scores a built-in dataset's authors released beside its texts (metric outputs, LLM judges) -> long scores
and their registry, on the story ids of the dataset's texts (storyeval.datasets.released_scores)."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.datasets import released_scores
from storyeval.io import log_to, read_parquet, write_csv, write_parquet

log = log_to(snakemake.log[0])
name = snakemake.wildcards.dataset
texts = read_parquet(snakemake.input.texts)
scores, registry = released_scores(snakemake.params.dataset, name, list(snakemake.input.files), texts,
                                   snakemake.params.metric_directions)
write_parquet(scores, snakemake.output.scores)
write_csv(registry, snakemake.output.registry)
log.info("%s: %d released metric or judge columns, %d scores of %d stories", name, len(registry), len(scores),
         scores["story_id"].nunique())
