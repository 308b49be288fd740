"""Gather a dataset's metric files into one long score table and its metric registry."""

from storyeval.io import log_to, write_csv, write_parquet
from storyeval.metrics import catalog
from storyeval.metrics.merge import merge_scores

log = log_to(snakemake.log[0])
scores, registry = merge_scores(list(snakemake.input.scores), catalog.registry_rows())
write_parquet(scores, snakemake.output.scores)
write_csv(registry, snakemake.output.registry)
log.info("%d metric columns over %d stories", len(registry), scores["story_id"].nunique())
