"""Stories (story_id, prompt_id, system), human scores and per-rater ratings of a text dataset, in the
analysis layout.

A dataset without both prompts and systems (WP200, SCARY200, a user's file without one of them) becomes one
prompt (0) whose stories are the items (storyeval.data.scoreset.analysis_stories).
"""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.data.scoreset import analysis_stories
from storyeval.io import log_to, read_table, write_csv

log = log_to(snakemake.log[0])
texts = read_table(snakemake.input.texts, ["story_id", "prompt_id", "system"])
stories = analysis_stories(texts)
# Who wrote each story, also where the stories form one group (each its own "system"): the within-system
# correlations of the confounds table group by it.
written = texts["writer"] if "writer" in texts else texts["system"]  # storyeval.text.fit keeps the writer
stories["writer"] = written.fillna(texts["story_id"])
# the prompt as the data have it (empty: none), for the design: its given id where the analyses numbered it
stories["given_prompt"] = texts["prompt_label"] if "prompt_label" in texts else texts["prompt_id"]
write_csv(stories, snakemake.output.stories)
human = read_table(snakemake.input.text_human, ["story_id", "criterion", "score"], round_trip=True)
write_csv(human, snakemake.output.human, float_format=None)  # every bit: system means compare these for ties
ratings = read_table(snakemake.input.text_ratings, ["story_id", "criterion", "worker", "rating"])
write_csv(ratings.rename(columns={"worker": "rater"}), snakemake.output.ratings)
flat = int(texts[["prompt_id", "system"]].isna().any(axis=1).sum())
log.info("%d stories, %d without prompt and system, %d rater ratings", len(stories), flat, len(ratings))
