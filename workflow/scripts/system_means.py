"""HANNA Tab. 4 numbers: per system and criterion, mean rater score with its t interval."""

from storyeval.analysis import system_means
from storyeval.io import log_to, read_table, write_csv

log = log_to(snakemake.log[0])
stories = read_table(snakemake.input.stories, ["story_id", "system"])
ratings = read_table(snakemake.input.ratings, ["story_id", "criterion", "rater", "rating"])
means = system_means(stories, ratings, snakemake.params.confidence)
write_csv(means, snakemake.output[0])
log.info("best per criterion: %s", dict(zip(means.loc[means.best, "criterion"], means.loc[means.best, "system"])))
