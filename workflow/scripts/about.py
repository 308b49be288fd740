"""What a score set holds, from its data: the paragraph of the report's landing page and a page of its own."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from pathlib import Path

from storyeval.io import log_to, read_table
from storyeval.judges.gaps import LEFT_OUT, left_out_note
from storyeval.judges.pairwise import BIAS_P
from storyeval.plots.pages import about_text, write_about_page
from storyeval.stats.design import infer_design

log = log_to(snakemake.log[0])
out, wildcards = snakemake.output, snakemake.wildcards
text = about_text(
    wildcards.dataset,
    wildcards.scoreset,
    read_table(snakemake.input.stories, ["story_id", "prompt_id", "system"]),
    read_table(snakemake.input.human, []),
    read_table(snakemake.input.ratings, []),
    read_table(snakemake.input.registry, ["slug", "label"]),
    snakemake.params.reference_system,
    snakemake.params.facts["levels"],
)
ratings = read_table(snakemake.input.ratings, [])
design = infer_design(read_table(snakemake.input.stories, ["story_id", "prompt_id", "system"]),
                      ratings if "rater" in ratings else None, snakemake.params.layout, snakemake.params.groups,
                      snakemake.params.reference_system)
text = text.rstrip("\n") + f" Design: {design.describe()}.\n"
if snakemake.params.gaps:  # a table's ratings nobody gave, counted per criterion when it was read
    text = text.rstrip("\n") + f" Human ratings: {snakemake.params.gaps}.\n"
for path in snakemake.input.left_out:  # judge columns without enough ratings (storyeval.judges.gaps)
    note = left_out_note(read_table(path, LEFT_OUT))
    text = text.rstrip("\n") + (f" {note}\n" if note else "\n")
for path in snakemake.input.pairwise:  # pairwise judges' position bias (storyeval.judges.pairwise)
    biased = read_table(path, ["judge", "template", "criterion", "first_p", "position"])
    said = "; ".join(f"{row.judge} {row.criterion} ({row.template}) {row.position}"
                     for row in biased[biased["first_p"] < BIAS_P].itertuples())
    text = text.rstrip("\n") + (f" Pairwise judges with a position bias: {said}.\n" if said else "\n")
for path in snakemake.input.warnings:  # metric jobs' documented fallbacks (ROUGE's 0 for a script it cannot read)
    warned = read_table(path, ["metric", "warning"])
    if len(warned):
        said = "; ".join(f"{row.metric}: {row.warning}" for row in warned.itertuples())
        text = text.rstrip("\n") + f" Metric warnings: {said}.\n"
Path(out.text).write_text(text, encoding="utf-8")
write_about_page(out.page, out.text, f"{wildcards.dataset}, {wildcards.scoreset} scores: the data")
log.info("%s", text.strip())
