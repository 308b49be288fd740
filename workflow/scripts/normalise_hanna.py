"""Released HANNA score files -> tidy stories, ratings, long scores and the metric registry."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.data.hanna import read_rater_ratings, read_released_scores
from storyeval.io import log_to, write_csv, write_parquet
from storyeval.metrics.catalog import resolve_directions

log = log_to(snakemake.log[0])
released = read_released_scores(snakemake.input.scores, resolve_directions(snakemake.params.metric_directions))
ratings = read_rater_ratings(snakemake.input.raters, released.human_scores)
write_csv(released.stories, snakemake.output.stories)
write_csv(released.human_scores, snakemake.output.human, float_format=None)  # ties are compared: every bit
write_csv(ratings, snakemake.output.ratings)
write_parquet(released.scores, snakemake.output.scores)
write_csv(released.registry, snakemake.output.registry)
log.info(
    "%d stories, %d metrics, %d rater ratings", len(released.stories), len(released.registry), len(ratings)
)
