"""Gather a dataset's metric files (and its LLM judges' score files) into one long score table and its metric
registry."""

import pandas as pd

from storyeval.io import log_to, read_table, write_csv, write_parquet
from storyeval.metrics import catalog
from storyeval.metrics.merge import merge_scores

log = log_to(snakemake.log[0])
judges = [read_table(path, ["slug", "label", "judge", "criterion"]) for path in snakemake.input.judge_registries]
directions = catalog.resolve_directions(snakemake.params.metric_directions)
judged = pd.concat(judges, ignore_index=True) if judges else None
scores, registry = merge_scores(list(snakemake.input.scores) + list(snakemake.input.judge_scores),
                                catalog.registry_rows(directions), judged)
write_parquet(scores, snakemake.output.scores)
write_csv(registry, snakemake.output.registry)
log.info("%d metric columns over %d stories", len(registry), scores["story_id"].nunique())
