"""Raw HANNA annotations (one row per rating, with Worker ID) -> judges A/B/C as the authors laid them out."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.criteria import CRITERIA
from storyeval.data.csvfile import read_csv_strings
from storyeval.io import log_to, write_csv
from storyeval.stats.icc import judge_ratings

log = log_to(snakemake.log[0])
annotations = read_csv_strings(snakemake.input[0], numbers=["Story ID", *CRITERIA])
ratings = judge_ratings(annotations, story="Story ID", worker="Worker ID")
write_csv(ratings, snakemake.output[0])
log.info(
    "%d ratings of %d stories by %d workers",
    len(ratings),
    ratings["story_id"].nunique(),
    annotations["Worker ID"].nunique(),
)
