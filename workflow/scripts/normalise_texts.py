"""A text dataset (config entry: kind and its file) -> the cleaned text table, its human scores and ratings."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

import pandas as pd

from storyeval.io import log_to, write_csv, write_parquet
from storyeval.text.fit import load_fitted

log = log_to(snakemake.log[0])
name = snakemake.wildcards.textset
dataset, notes = load_fitted(snakemake.params.dataset, name, list(snakemake.input))
for note in notes:
    log.info("%s: %s", name, note)
texts, human = dataset.texts, dataset.human_scores
ratings = (
    dataset.ratings
    if dataset.ratings is not None
    else pd.DataFrame(columns=["story_id", "criterion", "worker", "rating"])
)
write_parquet(texts, snakemake.output.texts)
write_csv(
    human if human is not None else texts.iloc[:0, :0].assign(story_id=[], criterion=[], score=[]),
    snakemake.output.text_human,
    float_format=None,  # system means compare these for ties: every bit
)
write_csv(ratings[ratings["story_id"].isin(texts["story_id"])], snakemake.output.text_ratings)
log.info(
    "%s: %d stories, %d human scores, %d rater ratings",
    name,
    len(texts),
    0 if human is None else len(human),
    len(ratings),
)
