"""HANNA Tab. 4 numbers: per system and criterion, the mean rating with its t interval over the configured unit."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.analysis import system_means
from storyeval.io import log_to, read_table, write_csv

log = log_to(snakemake.log[0])
params = snakemake.params
stories = read_table(snakemake.input.stories, ["story_id", "system"])
ratings = read_table(snakemake.input.ratings, ["story_id", "criterion", "rater", "rating"])
means = system_means(stories, ratings, params.confidence, params.unit, params.scale)
write_csv(means, snakemake.output[0])
log.info("interval unit: %s; criteria: %s", params.unit, ", ".join(dict.fromkeys(means["criterion"])))
log.info("best per criterion: %s", dict(zip(means.loc[means.best, "criterion"], means.loc[means.best, "system"])))
