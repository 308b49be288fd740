"""Which metric agrees with the humans, answered with the statistic the study's design calls for, with baselines,
the human ceiling and certainty (storyeval.stats.design, storyeval.stats.answer): of one score set with its page,
or of all a dataset's rated score sets on the stories they share (storyeval.data.joined), the benchmark's cell."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from pathlib import Path

from storyeval.data.joined import joined_score_sets
from storyeval.io import log_to, read_table, write_csv, write_markdown
from storyeval.plots.answer import answer_text, rows_view
from storyeval.plots.pages import caption_html, write_table_page
from storyeval.stats.answer import Settings, design_answer
from storyeval.stats.design import analysed_stories, infer_design, rater_groups, story_blocks

log = log_to(snakemake.log[0])
out, params, wildcards = snakemake.output, snakemake.params, snakemake.wildcards
stories = read_table(snakemake.input.stories, ["story_id", "prompt_id", "system"])
human = read_table(snakemake.input.human, ["story_id", "criterion", "score"], round_trip=True)
ratings = read_table(snakemake.input.ratings, ["story_id", "criterion", "rater", "rating"])
paths = [[given] if isinstance(given, str) else list(given) for given in (snakemake.input.scores,
                                                                          snakemake.input.registry)]
scores, registry, shared = joined_score_sets([
    (name, read_table(scores, ["story_id", "metric", "value"]),
     read_table(registry, ["slug", "label", "family", "direction"]))
    for name, scores, registry in zip(params.scoresets, *paths, strict=True)])
if len(params.scoresets) > 1:  # the stories every set scores, and their ratings
    stories = stories[stories["story_id"].isin(shared)]
    ratings = ratings[ratings["story_id"].isin(shared)]
design = infer_design(stories, ratings, params.layout, params.groups, params.reference_system)
stories, writers = analysed_stories(stories, params.reference_system)
ratings = ratings if len(ratings) else None
settings = Settings(seed=params.seed, resamples=params.resamples, splits=params.splits, confidence=params.confidence)
groups = rater_groups(ratings) if design.groups and ratings is not None else {}
rows, summary = design_answer(stories, human, ratings, scores, registry, design,
                              story_blocks(stories, ratings, design), writers, groups, settings)
origin = registry[["slug", "scoreset", "source_slug", "item", "item_label"]].rename(columns={"slug": "metric"})
write_csv(rows.merge(origin, on="metric", how="left", validate="m:1"), out.rows)
write_csv(summary, out.summary)
if "landing" in out.keys():  # a score set's own answer: its page, and its paragraph on the landing page
    name = f"{wildcards.dataset}, {wildcards.scoreset} scores"
    Path(out.landing).write_text(answer_text(summary, name, design.describe()), encoding="utf-8")
    title = f"{wildcards.dataset}: which metric agrees with the humans ({design.describe()})"
    shown = rows_view(rows)
    write_markdown(shown, out.md, title)
    caption = caption_html(snakemake.input.caption, wildcards) + caption_html(out.landing, wildcards)  # the answer
    write_table_page(out.page, shown, title, [out.rows, out.summary, out.md], caption, ["Level", "Criterion"])
log.info("design: %s", design.describe())
for row in summary.itertuples():
    log.info("%s level, %s (%s): %s", row.level, row.criterion, row.statistic, row.verdict)
